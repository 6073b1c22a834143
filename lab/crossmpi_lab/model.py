"""The generic topology model every kind of topology expands into.

A lab is a set of nodes (one network namespace each) joined by links (a veth pair,
or a TAP pair bridged by a delay line when the link has delay or loss). Linux
bridges and Open vSwitch bridges live inside nodes; a link end may be enslaved to
one. Keeping this model small and explicit is what lets `down` remove exactly what
`up` made and `status`/`draw` describe any topology the same way.
"""

from dataclasses import asdict, dataclass, field


@dataclass
class Node:
    name: str
    # compute | frontend | router | switch | wan | outside | ovs | node
    role: str
    cluster: str | None = None
    forwarding: bool = False
    # (destination prefix or "default", gateway address)
    routes: list = field(default_factory=list)
    # nftables ruleset loaded into the node (NAT and firewall of a front-end)
    nft: str | None = None
    bridges: list = field(default_factory=list)
    # Open vSwitch bridges: [name, datapath id]
    ovs_bridges: list = field(default_factory=list)


@dataclass
class Link:
    a: str
    a_if: str
    b: str
    b_if: str
    a_addr: str | None = None
    b_addr: str | None = None
    # A Linux bridge name in the end's node, or "ovs:BRIDGE:OFPORT".
    a_master: str | None = None
    b_master: str | None = None
    a_mac: str | None = None
    b_mac: str | None = None
    mbit: float | None = None
    delay_ms: float = 0.0
    loss_percent: float = 0.0
    # lan | frontend | wan | p2p | mgmt | fabric (for status and drawings)
    kind: str = "lan"

    def shaped(self):
        return self.mbit is not None

    def delayed(self):
        return self.delay_ms > 0 or self.loss_percent > 0


@dataclass
class Topology:
    name: str
    kind: str
    nodes: dict
    links: list
    # Open vSwitch controller target ("tcp:IP:PORT"), or "static" for flows the lab
    # installs itself, or None when the topology has no OVS.
    controller: str | None = None
    # static OpenFlow rules per OVS bridge: {bridge: [flow, ...]}
    flows: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)

    def to_dict(self):
        return {
            "name": self.name,
            "kind": self.kind,
            "nodes": {n: asdict(v) for n, v in self.nodes.items()},
            "links": [asdict(link) for link in self.links],
            "controller": self.controller,
            "flows": self.flows,
            "params": self.params,
        }

    @staticmethod
    def from_dict(d):
        return Topology(
            name=d["name"],
            kind=d["kind"],
            nodes={n: Node(**v) for n, v in d["nodes"].items()},
            links=[Link(**link) for link in d["links"]],
            controller=d.get("controller"),
            flows=d.get("flows", {}),
            params=d.get("params", {}),
        )

    def addresses(self, node):
        """[(interface, address/prefix)] of a node, in link order."""
        out = []
        for link in self.links:
            if link.a == node and link.a_addr:
                out.append((link.a_if, link.a_addr))
            if link.b == node and link.b_addr:
                out.append((link.b_if, link.b_addr))
        return out

    def hosts(self):
        """Nodes a user runs programs on (not switches or the WAN core)."""
        return [n for n, v in self.nodes.items() if v.role not in ("switch", "wan", "ovs")]
