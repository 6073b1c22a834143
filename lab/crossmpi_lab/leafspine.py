"""`kind = "leafspine"`: leaf and spine Open vSwitch bridges on the userspace datapath
(no OVS kernel module here), all run by one ovs-vswitchd inside node `ovs`.

Host hLH (leaf L, host H) has eth0 = 10.20.0.(10*L+H)/24 and MAC 02:00:00:00:LL:HH.
Leaf ports 1..H are its hosts, ports H+1..H+S its spines; spine port L is leaf L.
With `controller = "static"` the lab installs forwarding by destination address
itself (remote leaf L goes through spine ((L-1) mod S)+1); otherwise every bridge
connects to the given OpenFlow controller (e.g. os-ken at tcp:127.0.0.1:6653, started
by the caller inside node `ovs` with `crossmpi lab exec ovs ...`).
"""

import re

from .model import Link, Node, Topology


def host_ip(leaf, h):
    return f"10.20.0.{10 * leaf + h}"


def static_flows(leaves, spines, per_leaf):
    flows = {}
    for leaf in range(1, leaves + 1):
        rules = []
        for other in range(1, leaves + 1):
            for h in range(1, per_leaf + 1):
                ip = host_ip(other, h)
                port = h if other == leaf else per_leaf + (other - 1) % spines + 1
                prio = 100 if other == leaf else 50
                rules.append(f"priority={prio},ip,nw_dst={ip},actions=output:{port}")
                rules.append(f"priority={prio},arp,arp_tpa={ip},actions=output:{port}")
        flows[f"leaf{leaf}"] = rules
    for s in range(1, spines + 1):
        flows[f"spine{s}"] = [
            f"priority=100,{proto},{field}={host_ip(leaf, h)},actions=output:{leaf}"
            for leaf in range(1, leaves + 1)
            for h in range(1, per_leaf + 1)
            for proto, field in (("ip", "nw_dst"), ("arp", "arp_tpa"))
        ]
    return flows


def expand(fields, name):
    ls = fields.table("leafspine")
    leaves = ls.number("leaves", 2, 2, 8, integer=True)
    spines = ls.number("spines", 2, 2, 8, integer=True)
    per_leaf = ls.number("hosts_per_leaf", 2, 1, 9, integer=True)
    host_mbit = ls.number("host_mbit", None, 0.001, 100000)
    fabric_mbit = ls.number("fabric_mbit", None, 0.001, 100000)
    controller = ls.text("controller", "static")
    if controller != "static" and not re.fullmatch(r"(tcp|ssl|unix):\S+", controller):
        ls.fail("controller", controller, 'must be "static" or an OpenFlow target like tcp:127.0.0.1:6653')
    ls.finish()
    ovs = Node("ovs", "ovs")
    ovs.ovs_bridges = [[f"leaf{i}", f"{0x10 + i:016x}"] for i in range(1, leaves + 1)]
    ovs.ovs_bridges += [[f"spine{i}", f"{0x20 + i:016x}"] for i in range(1, spines + 1)]
    nodes = {"ovs": ovs}
    links = []
    for leaf in range(1, leaves + 1):
        for h in range(1, per_leaf + 1):
            host = f"h{leaf}{h}"
            nodes[host] = Node(host, "compute", cluster=f"leaf{leaf}")
            links.append(Link(host, "eth0", "ovs", host, a_addr=f"{host_ip(leaf, h)}/24",
                              a_mac=f"02:00:00:00:{leaf:02x}:{h:02x}", b_master=f"ovs:leaf{leaf}:{h}",
                              mbit=host_mbit, kind="lan"))
        for s in range(1, spines + 1):
            links.append(Link("ovs", f"l{leaf}s{s}", "ovs", f"s{s}l{leaf}",
                              a_master=f"ovs:leaf{leaf}:{per_leaf + s}", b_master=f"ovs:spine{s}:{leaf}",
                              mbit=fabric_mbit, kind="fabric"))
    flows = static_flows(leaves, spines, per_leaf) if controller == "static" else {}
    params = {"leaves": leaves, "spines": spines, "hosts_per_leaf": per_leaf, "host_mbit": host_mbit,
              "fabric_mbit": fabric_mbit, "controller": controller}
    return Topology(name, "leafspine", nodes, links, controller=controller, flows=flows, params=params)
