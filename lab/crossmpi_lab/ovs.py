"""Open vSwitch on the userspace datapath, private to one lab: its own database and
ovs-vswitchd, both running inside the lab's `ovs` node, with state in the lab's
run directory (the machine's OVS, if any, is never touched)."""

import os
import subprocess

from . import netns

SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"


class Ovs:
    def __init__(self, state, ns):
        self.state, self.ns = state, ns
        self.dir = state.path("ovs")
        self.db = f"unix:{self.dir}/db.sock"
        self.env = dict(os.environ, OVS_RUNDIR=self.dir, OVS_LOGDIR=self.dir, OVS_DBDIR=self.dir,
                        OVS_SYSCONFDIR=self.dir)

    def _run(self, argv, input=None):
        p = subprocess.run(argv, input=input, capture_output=True, text=True, env=self.env)
        if p.returncode != 0:
            raise netns.CommandError(f"`{' '.join(argv)}` failed ({p.returncode}): {p.stderr.strip()}")
        return p.stdout

    def vsctl(self, *args):
        return self._run(["ovs-vsctl", f"--db={self.db}", "--timeout=20", *args])

    def _daemon(self, name, argv):
        pidfile = f"{self.dir}/{name}.pid"
        self._run(netns.in_ns(self.ns, [*argv, f"--pidfile={pidfile}", f"--log-file={self.dir}/{name}.log",
                                        "--detach", "--no-chdir"]))
        with open(pidfile) as f:
            self.state.record_process(int(f.read().strip()), name)

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        self._run(["ovsdb-tool", "create", f"{self.dir}/conf.db", SCHEMA])
        self._daemon("ovsdb-server", ["ovsdb-server", f"{self.dir}/conf.db", f"--remote=punix:{self.dir}/db.sock"])
        self.vsctl("--no-wait", "init")
        # Without userspace TSO, TCP through the netdev datapath either stalls (offloads
        # on) or crawls (offloads off); with it, leaf-spine-leaf carries ~4.7 Gbit/s.
        self.vsctl("--no-wait", "set", "Open_vSwitch", ".", "other_config:userspace-tso-enable=true")
        self._daemon("ovs-vswitchd", ["ovs-vswitchd", self.db])

    def add_bridge(self, name, dpid):
        self.vsctl("add-br", name, "--", "set", "bridge", name, "datapath_type=netdev", "fail_mode=secure",
                   "protocols=OpenFlow13", f"other-config:datapath-id={dpid}")

    def add_port(self, bridge, ifname, ofport):
        self.vsctl("add-port", bridge, ifname, "--", "set", "interface", ifname, f"ofport_request={ofport}")

    def add_flows(self, bridge, flows):
        self._run(["ovs-ofctl", "-O", "OpenFlow13", "add-flows", bridge, "-"], input="\n".join(flows) + "\n")

    def set_controller(self, bridge, target):
        # Retry a missing controller every second (OVS backs off to 8 s), so a
        # controller started after `up` takes over at once.
        self.vsctl("--id=@c", "create", "Controller", f"target=\"{target}\"", "max_backoff=1000", "--",
                   "set", "Bridge", bridge, "controller=@c")
