"""`crossmpi lab exec` keeps the launch-agent contract mpirun relies on (the same as
`ssh HOST COMMAND...`): optional `--`, the command runs in the host's namespace in
the caller's directory, stdio is forwarded, the exit status comes back, and a signal
to the agent ends the command."""

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import example

LAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def lab():
    with example("grid-gc.toml", prefix="x") as lab:
        yield lab


def agent(lab, *words, **kwargs):
    env = dict(os.environ, PYTHONPATH=LAB_DIR, CROSSMPI_LAB=lab.name)
    return [sys.executable, "-m", "crossmpi_lab", "exec", *words], env


def run_agent(lab, *words, **kwargs):
    argv, env = agent(lab, *words)
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30, **kwargs)


def test_runs_inside_the_host_with_or_without_double_dash(lab):
    for words in (["a2", "ip", "-o", "-4", "addr", "show", "dev", "eth0"],
                  ["a2", "--", "ip", "-o", "-4", "addr", "show", "dev", "eth0"]):
        p = run_agent(lab, *words)
        assert p.returncode == 0 and f"inet {lab.ip('a2')}/" in p.stdout, p.stderr


def test_lab_chosen_explicitly(lab):
    argv, env = agent(lab)
    env.pop("CROSSMPI_LAB")
    p = subprocess.run([*argv, f"--lab={lab.name}", "b1", "printenv", "CROSSMPI_LAB_HOST"], env=env,
                       capture_output=True, text=True)
    assert p.stdout == "b1\n", p.stderr


def test_exit_status_stdio_cwd_and_env(lab, tmp_path):
    p = run_agent(lab, "b1", "env", "GREETING=hello world", "sh", "-c",
                  'read line; echo "$GREETING $line $(pwd)"; echo oops >&2; exit 7',
                  input="from stdin\n", cwd=tmp_path)
    assert p.returncode == 7
    assert p.stdout == f"hello world from stdin {tmp_path}\n"
    assert p.stderr == "oops\n"


def test_one_word_command_line_goes_through_a_shell_like_ssh(lab):
    p = run_agent(lab, "a1", "echo $CROSSMPI_LAB_HOST; exit 4")
    assert (p.returncode, p.stdout) == (4, "a1\n")


def test_unknown_host_and_missing_program(lab):
    p = run_agent(lab, "nohost", "true")
    assert p.returncode == 255 and "no host 'nohost'" in p.stderr
    p = run_agent(lab, "a1", "/no/such/program")
    assert p.returncode != 0 and "cannot run '/no/such/program'" in p.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_to_the_agent_ends_the_command(lab, sig):
    argv, env = agent(lab, "a1", "sleep", "30")
    p = subprocess.Popen(argv, env=env)
    # The agent becomes the command: wait until it has, then signal the agent's PID.
    for _ in range(200):
        with open(f"/proc/{p.pid}/cmdline", "rb") as f:
            if f.read().startswith(b"sleep"):
                break
        time.sleep(0.01)
    t0 = time.monotonic()
    p.send_signal(sig)
    assert p.wait(timeout=5) == -sig
    assert time.monotonic() - t0 < 2


def test_status_lists_hosts_addresses_links_and_processes(lab):
    env = dict(os.environ, PYTHONPATH=LAB_DIR)
    p = subprocess.run([sys.executable, "-m", "crossmpi_lab", "status", "--lab", lab.name], env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert f"lab {lab.name}: grid, ready, delay emulation: {lab.state.data['delay_mode']}" in p.stdout
    assert f"eth0={lab.ip('b3')}/26" in p.stdout
    assert "edge-a:up0 -- wan:p-a  wan  500 Mbit/s, 2.5 ms" in p.stdout
    n = len(lab.state.data["processes"])
    assert f"processes ({n} alive of {n})" in p.stdout


def test_no_lab_is_a_launch_failure(lab):
    argv, env = agent(lab, "a1", "true")
    env["CROSSMPI_LAB"] = "nolab"
    p = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert p.returncode == 255 and "no lab named 'nolab'" in p.stderr
