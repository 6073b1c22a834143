"""Teardown leaves no namespace, interface, bridge, qdisc, process or file behind, on
every exit path: `down`, an exception, SIGTERM, Ctrl-C, and a killed `up`."""

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import example, unique_name

from crossmpi_lab import netns, state

LAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(LAB_DIR, "..", "examples", "lab")


def root_snapshot():
    """What the lab must never change in the root namespace."""
    links = netns.run(["ip", "-o", "link", "show"]).stdout
    qdiscs = netns.run(["tc", "qdisc", "show"]).stdout
    return sorted(line.split(":")[1].strip() for line in links.splitlines()), qdiscs


def lab_leftovers(name):
    """Namespaces, processes and files that still belong to lab `name`."""
    spaces = [ns for ns in netns.list_namespaces() if ns.startswith(name + "-")]
    procs = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if f"{name}-" in cmd or f"crossmpi-lab/{name}/" in cmd:
                procs.append(cmd)
    files = os.path.exists(state.lab_dir(name))
    return spaces, procs, files


def assert_clean(name, before):
    assert lab_leftovers(name) == ([], [], False)
    assert root_snapshot() == before


@pytest.mark.parametrize("file", ["grid-pc.toml", "grid-gc.toml", "fullmesh.toml", "leafspine.toml"])
def test_down_removes_everything(file):
    before = root_snapshot()
    lab = example(file)
    lab.up()
    spaces, procs, files = lab_leftovers(lab.name)
    assert len(spaces) == len(lab.topo.nodes) and files
    # Delay lines (grid) or the private ovsdb-server/ovs-vswitchd (leafspine) run.
    assert len(procs) == len(lab.state.data["processes"])
    assert [q for q in netns.run(["tc", "-n", spaces[0], "qdisc", "show"]).stdout.splitlines()]
    lab.down()
    assert_clean(lab.name, before)


def test_exception_inside_the_context_tears_down():
    before = root_snapshot()
    lab = example("grid-gc.toml")
    with pytest.raises(ZeroDivisionError):
        with lab:
            assert lab_leftovers(lab.name)[0]
            1 / 0
    assert_clean(lab.name, before)


HOLDER = """
import sys, time
sys.path.insert(0, {lab_dir!r})
from crossmpi_lab import Lab, topology
with Lab(topology.load({file!r}, {name!r})):
    print("up", flush=True)
    time.sleep(60)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_to_the_holder_tears_down(sig):
    before = root_snapshot()
    name = unique_name("s")
    code = HOLDER.format(lab_dir=LAB_DIR, file=os.path.join(EXAMPLES, "grid-pc.toml"), name=name)
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    assert holder.stdout.readline().strip() == "up", holder.stderr.read()
    assert lab_leftovers(name)[0]
    holder.send_signal(sig)
    assert holder.wait(timeout=30) != 0
    assert_clean(name, before)


def test_down_after_a_killed_up():
    before = root_snapshot()
    name = unique_name("k")
    env = dict(os.environ, PYTHONPATH=LAB_DIR)
    up = subprocess.Popen([sys.executable, "-m", "crossmpi_lab", "up", "--name", name,
                           os.path.join(EXAMPLES, "grid-pc.toml")], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    # Kill it part-way through building (or just after, if it was quick).
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(lab_leftovers(name)[0]) < 6:
        time.sleep(0.005)
    up.kill()
    up.wait()
    assert lab_leftovers(name)[0]
    down = subprocess.run([sys.executable, "-m", "crossmpi_lab", "down", "--lab", name], env=env,
                          capture_output=True, text=True)
    assert down.returncode == 0, down.stderr
    assert_clean(name, before)
