"""The Python API: `Lab` builds a topology, runs commands in its hosts and removes
exactly what it built.

    with Lab("examples/lab/grid-gc.toml") as lab:
        print(lab.cmd("a1", f"ping -c1 {lab.ip('b1')}"))

The context manager tears the lab down on every exit path: normal end, exceptions,
Ctrl-C, and SIGTERM/SIGHUP (turned into an exception while the lab is up).
"""

import os
import signal
import subprocess
import sys
import threading
import time

from . import delayline, netns, topology
from .model import Topology
from .ovs import Ovs
from .state import State

# Per-namespace TCP buffer limits: the default 4 MB maximum caps one stream at about
# 2.7 Gbit/s at 10 ms of RTT, far below what the emulated links carry.
TCP_MEM = ("net.ipv4.tcp_wmem=4096 16384 33554432", "net.ipv4.tcp_rmem=4096 131072 33554432")
# CROSSMPI_LAB_SEED: base seed of the delay lines' loss generators (reproducible runs).
SEED_ENV = "CROSSMPI_LAB_SEED"


# CROSSMPI_LAB_DELAY_RTPRIO: real-time (SCHED_FIFO) priority of the delay lines, 0
# for normal scheduling. They sleep most of the time, but when a frame arrives or is
# due they must run at once, also while compilers and the test's own iperf3 keep the
# two cores busy: with normal scheduling a 10 ms link then measured up to 0.3 ms late
# per crossing. The kernel's real-time throttling still leaves 5 % to everyone else.
RTPRIO_ENV = "CROSSMPI_LAB_DELAY_RTPRIO"


def env_int(name, default, lo, hi):
    value = os.environ.get(name, str(default))
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or not lo <= number <= hi:
        raise ValueError(f"{name}={value!r}: must be an integer from {lo} to {hi}")
    return number


def raise_priority():
    prio = env_int(RTPRIO_ENV, 10, 0, 99)
    if prio > 0:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(prio))
        except OSError:
            pass  # not permitted here (e.g. a container): normal scheduling still works


class LabSignal(BaseException):
    """Raised in the main thread when SIGTERM or SIGHUP arrives while a lab is up."""


class Lab:
    def __init__(self, source, name=None):
        self.topo = source if isinstance(source, Topology) else topology.load(source, name)
        self.name = self.topo.name
        self.state = None

    @classmethod
    def attach(cls, name):
        """A lab that is already up (started by `crossmpi lab up` or another process)."""
        state = State.load(name)
        lab = cls(Topology.from_dict(state.data["topology"]))
        lab.state = state
        return lab

    # ---- life cycle -------------------------------------------------------------
    def __enter__(self):
        self._old_handlers = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGHUP):
                self._old_handlers[sig] = signal.signal(sig, self._on_signal)
        try:
            self.up()
        except BaseException:
            self._restore_handlers()
            raise
        return self

    def __exit__(self, *exc):
        # A second signal must not interrupt the teardown itself.
        for sig in self._old_handlers:
            signal.signal(sig, signal.SIG_IGN)
        old_int = signal.signal(signal.SIGINT, signal.SIG_IGN) if self._old_handlers else None
        try:
            self.down()
        finally:
            if old_int is not None:
                signal.signal(signal.SIGINT, old_int)
            self._restore_handlers()
        return False

    def _on_signal(self, signum, frame):
        raise LabSignal(f"signal {signum}")

    def _restore_handlers(self):
        for sig, handler in self._old_handlers.items():
            signal.signal(sig, handler)
        self._old_handlers = {}

    def up(self):
        if os.geteuid() != 0:
            raise PermissionError("crossmpi lab: building a lab needs root (network namespaces, TAPs, nftables)")
        self.state = State.create(self.name, self.topo)
        try:
            self._build()
        except BaseException:
            self.down()
            raise
        self.state.data["ready"] = True
        self.state.save()
        return self

    def down(self):
        """Stops the processes and deletes the namespaces this lab recorded (which
        removes their interfaces, bridges and qdiscs), then its run directory."""
        if self.state is None:
            return
        self.state.stop_processes()
        for ns in reversed(self.state.data["namespaces"]):
            netns.delete_namespace(ns)
        self.state.remove()
        self.state = None

    # ---- building ---------------------------------------------------------------
    def ns(self, node):
        return f"{self.name}-{node}"

    def _build(self):
        topo = self.topo
        self.delay_mode = delayline.mode() if any(link.delayed() for link in topo.links) else None
        self.state.data["delay_mode"] = self.delay_mode
        for node in topo.nodes.values():
            ns = self.ns(node.name)
            self.state.record_namespace(ns)
            netns.add_namespace(ns)
            netns.sysctl(ns, "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1",
                         "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
                         f"net.ipv4.ip_forward={int(node.forwarding)}", *TCP_MEM)
            for br in node.bridges:
                netns.add_bridge(ns, br)
        self.ovs = {}
        for node in topo.nodes.values():
            if node.ovs_bridges:
                ovs = Ovs(self.state, self.ns(node.name))
                ovs.start()
                for br, dpid in node.ovs_bridges:
                    ovs.add_bridge(br, dpid)
                self.ovs[node.name] = ovs
        seed = env_int(SEED_ENV, 1, 0, 2**63)
        env_int(RTPRIO_ENV, 10, 0, 99)  # checked here, where the error can be reported
        for link in topo.links:
            self._add_link(link)
        delay_lines = [(link, seed + index) for index, link in enumerate(topo.links)
                       if link.delayed() and self.delay_mode == "tapdelay"]
        if delay_lines:
            self._start_delay_lines(delay_lines)
        for node in topo.nodes.values():
            for dst, via in node.routes:
                netns.ip(self.ns(node.name), "route", "add", dst, "via", via)
            if node.nft:
                netns.load_nft(self.ns(node.name), node.nft)
        for node_name, ovs in self.ovs.items():
            for br, _ in topo.nodes[node_name].ovs_bridges:
                if topo.controller == "static":
                    ovs.add_flows(br, topo.flows.get(br, []))
                else:
                    ovs.set_controller(br, topo.controller)

    def _add_link(self, link):
        na, nb = self.ns(link.a), self.ns(link.b)
        taps = link.delayed() and self.delay_mode == "tapdelay"
        if taps:
            netns.add_tap(na, link.a_if)
            netns.add_tap(nb, link.b_if)
        else:
            netns.add_veth(na, link.a_if, nb, link.b_if)
        for node, ifname, addr, master, mac in ((link.a, link.a_if, link.a_addr, link.a_master, link.a_mac),
                                                (link.b, link.b_if, link.b_addr, link.b_master, link.b_mac)):
            ns = self.ns(node)
            if mac:
                netns.ip(ns, "link", "set", ifname, "address", mac)
            if addr:
                netns.ip(ns, "addr", "add", addr, "dev", ifname)
            if master and not master.startswith("ovs:"):
                netns.ip(ns, "link", "set", ifname, "master", master)
            netns.ip(ns, "link", "set", ifname, "up")
            if master and master.startswith("ovs:"):
                _, bridge, port = master.split(":")
                self.ovs[node].add_port(bridge, ifname, int(port))
            if link.delayed() and self.delay_mode == "netem":
                netns.netem(ns, ifname, link.delay_ms, link.loss_percent)
                if link.shaped():
                    netns.tbf(ns, ifname, link.mbit, parent="1:")
            elif link.shaped():
                netns.tbf(ns, ifname, link.mbit)

    def _start_delay_lines(self, links):
        """One delay-line process for all delayed links of the lab: a frame crossing
        two of them (cluster to cluster: both WAN uplinks) is read by the second one
        as soon as the first hands it to the kernel, whereas a second process would
        first have to wake up (about 30 us per crossing on this VM)."""
        argv = [delayline.tapdelay_binary()]
        taps = []
        for i, (link, seed) in enumerate(links):
            na, nb = self.ns(link.a), self.ns(link.b)
            argv += ["--link"] if i else []
            argv += [f"{na}:{link.a_if}", f"{nb}:{link.b_if}", "--delay-us", str(round(link.delay_ms * 1000)),
                     "--loss", repr(link.loss_percent), "--seed", str(seed), "--vnet"]
            taps += [(na, link.a_if), (nb, link.b_if)]
        log_path = self.state.path("tapdelay.log")
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                                    preexec_fn=raise_priority)
        self.state.record_process(proc.pid, f"tapdelay ({len(links)} links)")
        # The TAPs have no carrier until the delay line attaches; wait for it so the
        # lab is usable as soon as `up` returns.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                with open(log_path) as f:
                    raise RuntimeError(f"delay line {' '.join(argv)} exited: {f.read().strip()}")
            if all("LOWER_UP" in netns.ip(ns, "-o", "link", "show", "dev", ifname).stdout for ns, ifname in taps):
                return
            time.sleep(0.01)
        raise RuntimeError(f"delay line {' '.join(argv)} did not attach to its TAPs within 5 s")

    # ---- using ------------------------------------------------------------------
    def _argv(self, host, argv):
        """The command line that runs argv in `host` the way `crossmpi lab exec`
        does (same code path, so the API and the CLI behave alike)."""
        if host not in self.topo.nodes:
            raise KeyError(f"lab {self.name} has no host {host!r} (hosts: {', '.join(self.topo.nodes)})")
        if isinstance(argv, str):
            argv = ["/bin/sh", "-c", argv]
        return [sys.executable, "-m", "crossmpi_lab", "exec", f"--lab={self.name}", host, "--", *argv]

    def _env(self, env):
        env = dict(env or os.environ)
        package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        return env

    def popen(self, host, argv, **kwargs):
        """subprocess.Popen of `argv` (a list, or a shell command string) inside `host`."""
        return subprocess.Popen(self._argv(host, argv), env=self._env(kwargs.pop("env", None)), **kwargs)

    def run(self, host, argv, timeout=60, **kwargs):
        """subprocess.run inside `host`, capturing text output by default."""
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        return subprocess.run(self._argv(host, argv), timeout=timeout, env=self._env(kwargs.pop("env", None)),
                              **kwargs)

    def cmd(self, host, command, timeout=60):
        """Runs a shell command in `host` and returns its output (like Mininet's
        `host.cmd`); raises if it fails."""
        p = self.run(host, command, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"{host}: `{command}` failed ({p.returncode}): {p.stderr.strip()}")
        return p.stdout

    def ip(self, host, ifname=None):
        """The address of `host` (on `ifname`, or its first interface)."""
        for name, addr in self.topo.addresses(host):
            if ifname in (None, name):
                return addr.split("/")[0]
        raise KeyError(f"lab {self.name}: host {host!r} has no address" + (f" on {ifname}" if ifname else ""))

    @property
    def hosts(self):
        return self.topo.hosts()
