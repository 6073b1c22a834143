"""os-ken application for a crossmpi lab leaf-spine: when a switch connects, it
installs the lab's destination-based forwarding (the flows of `controller =
"static"`, from crossmpi_lab.leafspine, so both modes forward alike), as OpenFlow 1.3
flow mods. The fabric's shape comes from CROSSMPI_LAB_LEAFSPINE="LEAVES,SPINES,HOSTS"
(default 2,2,2); crossmpi_lab must be importable (PYTHONPATH=lab)."""

import os

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, set_ev_cls
from os_ken.ofproto import ofproto_v1_3

from crossmpi_lab.leafspine import static_flows

ETH_TYPES = {"ip": 0x0800, "arp": 0x0806}
FIELDS = {"nw_dst": "ipv4_dst", "arp_tpa": "arp_tpa"}


def bridge_of(dpid):
    """leaf1.. have datapath ids 0x11.., spine1.. 0x21.. (see crossmpi_lab.leafspine)."""
    kind = {1: "leaf", 2: "spine"}.get(dpid >> 4)
    return f"{kind}{dpid & 0xF}" if kind else None


def parse_flow(flow):
    """'priority=P,ip,nw_dst=A,actions=output:N' -> (P, match fields, N)."""
    match, priority, port = {}, 0, None
    for part in flow.split(","):
        key, _, value = part.partition("=")
        if key == "priority":
            priority = int(value)
        elif key in ETH_TYPES:
            match["eth_type"] = ETH_TYPES[key]
        elif key in FIELDS:
            match[FIELDS[key]] = value
        elif key == "actions":
            port = int(value.split(":")[1])
    return priority, match, port


class LeafSpineRouting(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        leaves, spines, hosts = (int(x) for x in os.environ.get("CROSSMPI_LAB_LEAFSPINE", "2,2,2").split(","))
        self.flows = static_flows(leaves, spines, hosts)

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def on_switch(self, ev):
        dp = ev.msg.datapath
        parser = dp.ofproto_parser
        bridge = bridge_of(dp.id)
        for flow in self.flows.get(bridge, []):
            priority, match, port = parse_flow(flow)
            actions = [parser.OFPActionOutput(port)]
            inst = [parser.OFPInstructionActions(dp.ofproto.OFPIT_APPLY_ACTIONS, actions)]
            dp.send_msg(parser.OFPFlowMod(datapath=dp, priority=priority, match=parser.OFPMatch(**match),
                                          instructions=inst))
        print(f"{bridge} (dpid {dp.id:#x}): {len(self.flows.get(bridge, []))} flows", flush=True)
