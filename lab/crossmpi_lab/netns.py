"""Thin wrappers over ip/tc/nft/sysctl inside named network namespaces. Every
command's failure raises with the command line and its error output."""

import os
import subprocess


class CommandError(RuntimeError):
    pass


def run(argv, input=None, check=True):
    p = subprocess.run(argv, input=input, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise CommandError(f"`{' '.join(argv)}` failed ({p.returncode}): {p.stderr.strip()}")
    return p


def ns_path(ns):
    return f"/run/netns/{ns}"


def in_ns(ns, argv):
    """argv run inside namespace `ns` (network namespace only, unlike `ip netns
    exec`, which also remounts /sys)."""
    return ["nsenter", f"--net={ns_path(ns)}", "--", *argv]


def ip(ns, *args):
    return run(["ip", "-n", ns, *args])


def add_namespace(ns):
    run(["ip", "netns", "add", ns])
    ip(ns, "link", "set", "lo", "up")


def delete_namespace(ns):
    return run(["ip", "netns", "del", ns], check=False).returncode == 0


def list_namespaces():
    out = run(["ip", "netns", "list"]).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def sysctl(ns, *settings):
    run(in_ns(ns, ["sysctl", "-qw", *settings]))


def add_bridge(ns, name):
    ip(ns, "link", "add", name, "type", "bridge")
    # No STP (the lab's LANs are loop-free) and no forwarding delay: ports forward at
    # once instead of after 15 s of listening/learning.
    ip(ns, "link", "set", name, "type", "bridge", "stp_state", "0", "forward_delay", "0")
    ip(ns, "link", "set", name, "up")


def add_veth(ns_a, if_a, ns_b, if_b):
    ip(ns_a, "link", "add", if_a, "type", "veth", "peer", "name", if_b, "netns", ns_b)


def add_tap(ns, name):
    ip(ns, "tuntap", "add", "dev", name, "mode", "tap")
    # The default of 1000 frames drops packets at high bandwidth-delay products.
    ip(ns, "link", "set", name, "txqueuelen", "10000")


def tbf(ns, dev, mbit, parent=None):
    """Shapes egress of `dev` to `mbit` (L2 bytes, like a NIC of that speed). The burst
    is two kernel ticks (HZ=250) of traffic and at least 15000 bytes, which keeps TBF
    exact up to 1 Gbit/s; 20 ms of queue is a common router buffer."""
    burst = max(15000, int(mbit * 1e6 / 8 / 250 * 2))
    where = ["parent", parent, "handle", "10:"] if parent else ["root"]
    run(["tc", "-n", ns, "qdisc", "replace", "dev", dev, *where, "tbf", "rate", f"{mbit}mbit",
         "burst", str(burst), "latency", "20ms"])


def netem(ns, dev, delay_ms, loss_percent):
    run(["tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", "handle", "1:", "netem",
         "delay", f"{int(delay_ms * 1000)}us", "loss", f"{loss_percent}%", "limit", "100000"])


def load_nft(ns, ruleset):
    run(in_ns(ns, ["nft", "-f", "-"]), input=ruleset)


def netem_available():
    """True when this kernel has netem (probed in a scratch namespace)."""
    probe = f"crossmpi-lab-probe{os.getpid()}"
    try:
        add_namespace(probe)
        return run(["tc", "-n", probe, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"],
                   check=False).returncode == 0
    finally:
        delete_namespace(probe)
