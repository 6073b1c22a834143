"""`kind = "grid"`: 2-4 clusters joined by a WAN.

Per cluster: compute hosts on a LAN switch (`sw-C`), 1-8 front-ends with a private
interface on that LAN and a global one on the cluster's border switch (`edge-C`),
and one WAN uplink from the border switch to the WAN core (`wan`), which carries the
WAN rate, half the one-way delay and half the loss (so any two clusters are the
configured delay apart). An "internet" host (`inet`) sits on the WAN core, to test
what an outsider can reach. In a private-address cluster the front-ends masquerade
outgoing traffic and drop every connection opened from outside; in a global-address
cluster they only route.
"""

import ipaddress

from .fields import host_addr, plain
from .model import Link, Node, Topology

PRIVATE_DEFAULT = "10.0.0.0/24"
WAN_DEFAULT = "198.51.100.0/24"
# Room before the first compute host: front-ends take .1-.8 of a cluster's LAN.
FIRST_HOST = 11
INET_INDEX = 254


# A private-address cluster's front-end: masquerade what leaves through wan0 and
# forward nothing that was opened from outside. The chain may not be called `fwd`
# (an nft keyword).
FIREWALL = """table ip crossmpi_lab {
  chain filt_fwd {
    type filter hook forward priority 0; policy drop;
    ct state established,related accept
    iifname "priv0" oifname "wan0" accept
  }
  chain nat_post {
    type nat hook postrouting priority 100;
    oifname "wan0" masquerade
  }
}
"""


def read_clusters(fields, wan_net):
    clusters = fields.tables("cluster")
    if not 2 <= len(clusters) <= 4:
        fields.fail("cluster", f"{len(clusters)} clusters", "a grid has 2 to 4 [[cluster]] tables")
    spec = []
    for ci, c in enumerate(clusters, start=1):
        cname = c.name("name", max_len=4)
        addressing = c.choice("addressing", "private", ("private", "global"))
        default_net = PRIVATE_DEFAULT if addressing == "private" else f"203.0.113.{64 * (ci - 1)}/26"
        hosts = c.number("hosts", 2, 1, 32, integer=True)
        fes = c.number("frontends", 1, 1, 8, integer=True)
        lan = c.subnet("subnet", default_net, FIRST_HOST + hosts + 1)
        spec.append(dict(name=cname, addressing=addressing, hosts=hosts, frontends=fes, lan=lan,
                         fe_mbit=c.number("frontend_mbit", None, 0.001, 100000),
                         host_mbit=c.number("host_mbit", None, 0.001, 100000),
                         # Optional per-cluster uplink, for sites at different distances:
                         # two clusters are then the sum of their uplinks apart.
                         uplink_mbit=c.number("uplink_mbit", None, 0.001, 100000),
                         uplink_delay_ms=c.number("uplink_delay_ms", None, 0, 25),
                         uplink_loss_percent=c.number("uplink_loss_percent", None, 0, 100)))
        c.finish()
        if any(s["name"] == cname for s in spec[:-1]):
            c.fail("name", cname, "is used by another cluster")
        # Private ranges may repeat; a routed (global) range must be unique.
        clashes = [s["name"] for s in spec[:-1]
                   if s["lan"].overlaps(lan) and "global" in (s["addressing"], addressing)]
        if lan.overlaps(wan_net):
            c.fail("subnet", str(lan), "overlaps the WAN subnet")
        if clashes:
            c.fail("subnet", str(lan), f"overlaps cluster {clashes[0]}, and a global-address range must be unique")
    return spec


def pick(override, default):
    return default if override is None else override


def expand(fields, name):
    wan = fields.table("wan")
    wan_net = wan.subnet("subnet", WAN_DEFAULT, 256)
    wan_mbit = wan.number("mbit", None, 0.001, 100000)
    delay = wan.number("delay_ms", 0, 0, 50)
    loss = wan.number("loss_percent", 0, 0, 100)
    wan.finish()
    spec = read_clusters(fields, wan_net)
    # Each uplink takes half the delay and the loss that, applied twice, gives the
    # configured one-way loss between two clusters.
    half_loss = 100.0 * (1.0 - (1.0 - loss / 100.0) ** 0.5)
    nodes = {"wan": Node("wan", "wan", bridges=["br0"])}
    links = []
    inet_routes = []
    for ci, s in enumerate(spec, start=1):
        cname, lan, private = s["name"], s["lan"], s["addressing"] == "private"
        sw, edge = f"sw-{cname}", f"edge-{cname}"
        nodes[sw] = Node(sw, "switch", cname, bridges=["br0"])
        nodes[edge] = Node(edge, "switch", cname, bridges=["br0"])
        for k in range(1, s["frontends"] + 1):
            fe = f"{cname}-fe{k}"
            nodes[fe] = Node(fe, "frontend" if private else "router", cname, forwarding=True,
                             nft=FIREWALL if private else None)
            links.append(Link(fe, "priv0", sw, f"p-fe{k}", a_addr=host_addr(lan, k), b_master="br0",
                              mbit=s["fe_mbit"], kind="frontend"))
            links.append(Link(fe, "wan0", edge, f"p-fe{k}", a_addr=host_addr(wan_net, 10 * ci + k),
                              b_master="br0", mbit=s["fe_mbit"], kind="frontend"))
        for i in range(1, s["hosts"] + 1):
            h = f"{cname}{i}"
            gw = plain(lan, (i - 1) % s["frontends"] + 1)
            nodes[h] = Node(h, "compute", cname, routes=[["default", gw]])
            links.append(Link(h, "eth0", sw, f"p-h{i}", a_addr=host_addr(lan, FIRST_HOST + i - 1),
                              b_master="br0", mbit=s["host_mbit"], kind="lan"))
        links.append(Link(edge, "up0", "wan", f"p-{cname}", a_master="br0", b_master="br0",
                          mbit=pick(s["uplink_mbit"], wan_mbit),
                          delay_ms=pick(s["uplink_delay_ms"], delay / 2.0),
                          loss_percent=pick(s["uplink_loss_percent"], half_loss), kind="wan"))
        if not private:
            # Everyone on the WAN reaches a global-address cluster through its first
            # front-end.
            s["route"] = [str(lan), plain(wan_net, 10 * ci + 1)]
            inet_routes.append(s["route"])
    for s in spec:
        for k in range(1, s["frontends"] + 1):
            nodes[f"{s['name']}-fe{k}"].routes = [o["route"] for o in spec if o is not s and "route" in o]
    nodes["inet"] = Node("inet", "outside", routes=inet_routes)
    links.append(Link("inet", "eth0", "wan", "p-inet", a_addr=host_addr(wan_net, INET_INDEX), b_master="br0",
                      kind="wan"))
    params = {
        "wan": {"subnet": str(wan_net), "mbit": wan_mbit, "delay_ms": delay, "loss_percent": loss},
        "clusters": [{k: (str(v) if isinstance(v, ipaddress.IPv4Network) else v) for k, v in s.items() if k != "route"}
                     for s in spec],
    }
    return Topology(name, "grid", nodes, links, params=params)
