"""A leaf-spine whose switches are driven by an os-ken controller the caller starts
inside the lab: nothing forwards before the controller connects, everything after.

Needs a Python with os-ken (PyPI): CROSSMPI_LAB_OSKEN_PYTHON, which
tests/suites/lab.sh sets up in a venv."""

import os
import subprocess
import time

import pytest
from conftest import lab_from
from probe import pings

LAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OSKEN_PYTHON = os.environ.get("CROSSMPI_LAB_OSKEN_PYTHON")


@pytest.mark.skipif(not OSKEN_PYTHON, reason="CROSSMPI_LAB_OSKEN_PYTHON (a Python with os-ken) is not set")
def test_leafspine_under_osken():
    table = {"kind": "leafspine",
             "leafspine": {"leaves": 2, "spines": 2, "hosts_per_leaf": 2, "controller": "tcp:127.0.0.1:6653"}}
    with lab_from(table, prefix="o") as lab:
        targets = [lab.ip(h) for h in ("h12", "h21", "h22")]
        # fail_mode=secure and no controller yet: the fabric drops everything.
        assert not any(pings(lab, "h11", targets).values())
        env = dict(os.environ, PYTHONPATH=LAB_DIR, CROSSMPI_LAB_LEAFSPINE="2,2,2")
        ctl = lab.popen("ovs", [OSKEN_PYTHON, os.path.join(LAB_DIR, "osken", "run_osken.py"),
                                os.path.join(LAB_DIR, "osken", "leafspine_routing.py"),
                                "--ofp-listen-host", "127.0.0.1", "--ofp-tcp-listen-port", "6653"],
                        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            assert ctl.stdout.readline().strip() == "os-ken running"
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not all(pings(lab, "h11", targets).values()):
                time.sleep(0.2)
            assert all(pings(lab, "h11", targets).values())
            assert all(pings(lab, "h22", [lab.ip("h11"), lab.ip("h12")]).values())
        finally:
            ctl.terminate()
            out = ctl.communicate(timeout=10)[0]
        # Each of the four switches connected and got its flows.
        for bridge in ("leaf1", "leaf2", "spine1", "spine2"):
            assert f"{bridge} (dpid" in out, out
