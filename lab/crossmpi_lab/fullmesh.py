"""`kind = "fullmesh"`: 4-8 nodes, each pair joined by its own point-to-point link
(a multi-port NIC per node, interface `to-nJ` on node nI), every node forwarding IP,
plus one shared management switch (`mgmt`, interface `mgmt0`) for management and
broadcast traffic.

Addresses: the link between nI and nJ (I < J) is 10.40.P.0/24 with nI at .I and nJ
at .J, P numbering the pairs from 1; the management LAN is 10.41.0.0/24 with nI at .I.
"""

from itertools import combinations

from .model import Link, Node, Topology


def expand(fields, name):
    mesh = fields.table("fullmesh")
    count = mesh.number("nodes", 4, 4, 8, integer=True)
    mbit = mesh.number("link_mbit", None, 0.001, 100000)
    delay = mesh.number("delay_ms", 0, 0, 50)
    loss = mesh.number("loss_percent", 0, 0, 100)
    mgmt_mbit = mesh.number("mgmt_mbit", None, 0.001, 100000)
    names = [f"n{i}" for i in range(1, count + 1)]
    overrides = {}
    for o in mesh.tables("link"):
        pair = o.array("between")
        if len(pair) != 2 or pair[0] == pair[1] or any(p not in names for p in pair):
            o.fail("between", pair, f"must name two different nodes of {', '.join(names)}")
        overrides[frozenset(pair)] = dict(
            mbit=o.number("mbit", mbit, 0.001, 100000),
            delay_ms=o.number("delay_ms", delay, 0, 50),
            loss_percent=o.number("loss_percent", loss, 0, 100),
        )
        o.finish()
    mesh.finish()
    nodes = {n: Node(n, "node", forwarding=True) for n in names}
    nodes["mgmt"] = Node("mgmt", "switch", bridges=["br0"])
    links = []
    for p, (i, j) in enumerate(combinations(range(1, count + 1), 2), start=1):
        a, b = f"n{i}", f"n{j}"
        params = overrides.get(frozenset((a, b)), dict(mbit=mbit, delay_ms=delay, loss_percent=loss))
        links.append(Link(a, f"to-{b}", b, f"to-{a}", a_addr=f"10.40.{p}.{i}/24", b_addr=f"10.40.{p}.{j}/24",
                          kind="p2p", **params))
    for i, n in enumerate(names, start=1):
        links.append(Link(n, "mgmt0", "mgmt", f"p-{n}", a_addr=f"10.41.0.{i}/24", b_master="br0",
                          mbit=mgmt_mbit, kind="mgmt"))
    params = {"nodes": count, "link_mbit": mbit, "delay_ms": delay, "loss_percent": loss}
    return Topology(name, "fullmesh", nodes, links, params=params)
