"""Item 4: an MPI job of 2 clusters x 4 ranks in the lab, started exactly as users
start one on real machines: mpirun --host ... --launch-agent "crossmpi lab exec".

mpirun itself runs on host a1 (inside the lab, like a user logged in to a cluster
node), so the ranks on b1..b4 connect back to it across the emulated WAN; lab host
names do not resolve, so mpirun is told its address (CROSSMPI_MPIRUN_ADDR).
Needs PREFIX (CROSSMPI_PREFIX) with crossmpi installed."""

import os
import re
import subprocess

import pytest
from conftest import example

PREFIX = os.environ.get("CROSSMPI_PREFIX", os.path.join(os.path.dirname(__file__), "..", "..", "build", "install"))
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
HOSTS = [f"{c}{i}" for c in "ab" for i in range(1, 5)]


@pytest.fixture(scope="module")
def ring(tmp_path_factory):
    mpicc = os.path.join(PREFIX, "bin", "mpicc")
    if not os.access(mpicc, os.X_OK):
        pytest.fail(f"{mpicc} is missing: install crossmpi first (make install)")
    out = str(tmp_path_factory.mktemp("mpi") / "ring")
    p = subprocess.run([mpicc, "-O2", os.path.join(ROOT, "examples", "ring.c"), "-o", out], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    return out


def test_ring_on_two_clusters_of_four(ring, tmp_path):
    crossmpi = os.path.join(PREFIX, "bin", "crossmpi")
    with example("grid-gc.toml", prefix="m") as lab:
        env = dict(os.environ, CROSSMPI_MPIRUN_ADDR=lab.ip("a1"))
        argv = [os.path.join(PREFIX, "bin", "mpirun"), "--host", ",".join(HOSTS),
                "--launch-agent", f"{crossmpi} lab exec", "-n", "8", ring]
        p = lab.run("a1", argv, env=env, cwd=str(tmp_path), timeout=120)
        assert p.returncode == 0, f"mpirun failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
        lines = p.stdout.splitlines()
        assert "ring of 8 ranks: token = 28 (expected 28) OK" in lines, p.stdout
        # Ranks are placed round-robin on the hosts, each reporting its lab host name.
        done = dict(m.groups() for m in map(re.compile(r"rank (\d+) of 8 on (\S+): ring done").match, lines) if m)
        assert sorted(done) == [str(r) for r in range(8)], p.stdout
        assert sorted(done.values()) == sorted(HOSTS), p.stdout
