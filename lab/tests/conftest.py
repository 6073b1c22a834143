"""Shared fixtures: labs built from inline topology tables with unique names, and a
table of measured fidelity figures printed at the end of the run."""

import itertools
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from crossmpi_lab import Lab, topology  # noqa: E402

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "lab")
_counter = itertools.count(1)
FIDELITY = []


def unique_name(prefix="t"):
    return f"{prefix}{os.getpid() % 100000}x{next(_counter)}"[:10]


def lab_from(table, prefix="t"):
    """A Lab (not yet up) from a topology table, under a name no other run uses."""
    return Lab(topology.from_table(table, "test topology", unique_name(prefix)))


def example(name, prefix="e"):
    return Lab(topology.load(os.path.join(EXAMPLES, name), unique_name(prefix)))


def record(row):
    """Adds one measured row to the fidelity table."""
    FIDELITY.append(row)


def pytest_terminal_summary(terminalreporter):
    if not FIDELITY:
        return
    terminalreporter.section("crossmpi lab fidelity (measured)")
    for row in FIDELITY:
        terminalreporter.write_line(row)


@pytest.fixture(scope="session", autouse=True)
def need_root():
    if os.geteuid() != 0:
        pytest.skip("crossmpi lab needs root (network namespaces)")
