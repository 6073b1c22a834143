"""Topology files: the examples load, expansions follow the documented address plan,
and bad input is rejected with the key and the value named."""

import glob
import os

import pytest
from conftest import EXAMPLES

from crossmpi_lab import TopologyError, topology


def grid(**cluster_overrides):
    c = {"name": "a", "addressing": "private", "hosts": 2, "frontends": 2}
    c.update(cluster_overrides)
    return {"kind": "grid", "wan": {"mbit": 100, "delay_ms": 10, "loss_percent": 4},
            "cluster": [c, {"name": "b", "addressing": "global", "hosts": 1}]}


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(EXAMPLES, "*.toml"))))
def test_examples_load(path):
    topo = topology.load(path)
    assert topo.hosts()


def test_grid_address_plan_and_wan_split():
    topo = topology.from_table(grid(), "t", "x")
    assert topo.addresses("a-fe2") == [("priv0", "10.0.0.2/24"), ("wan0", "198.51.100.12/24")]
    assert topo.addresses("a2") == [("eth0", "10.0.0.12/24")]
    assert topo.addresses("b1") == [("eth0", "203.0.113.75/26")]
    # Hosts are spread over the front-ends; a private front-end masquerades.
    assert topo.nodes["a1"].routes == [["default", "10.0.0.1"]]
    assert topo.nodes["a2"].routes == [["default", "10.0.0.2"]]
    assert "masquerade" in topo.nodes["a-fe1"].nft and topo.nodes["b-fe1"].nft is None
    # Everyone reaches the global cluster through its first front-end.
    assert topo.nodes["a-fe1"].routes == [["203.0.113.64/26", "198.51.100.21"]]
    wan = [link for link in topo.links if link.kind == "wan" and link.a.startswith("edge")]
    assert [(w.delay_ms, w.mbit) for w in wan] == [(5.0, 100), (5.0, 100)]
    # Two uplinks that each lose p lose 4 % together.
    p = wan[0].loss_percent / 100
    assert abs(1 - (1 - p) ** 2 - 0.04) < 1e-9


def test_fullmesh_links_every_pair_once():
    topo = topology.load(os.path.join(EXAMPLES, "fullmesh.toml"))
    p2p = [link for link in topo.links if link.kind == "p2p"]
    assert len(p2p) == 6
    assert {frozenset((link.a, link.b)) for link in p2p} == {
        frozenset((f"n{i}", f"n{j}")) for i in range(1, 5) for j in range(i + 1, 5)}
    n1n2 = next(link for link in p2p if {link.a, link.b} == {"n1", "n2"})
    assert n1n2.mbit == 200 and all(link.mbit == 100 for link in p2p if link is not n1n2)
    assert all(topo.nodes[f"n{i}"].forwarding for i in range(1, 5))


def test_leafspine_static_flows_cover_every_host():
    topo = topology.load(os.path.join(EXAMPLES, "leafspine.toml"))
    assert [b for b, _ in topo.nodes["ovs"].ovs_bridges] == ["leaf1", "leaf2", "spine1", "spine2"]
    leaf1 = topo.flows["leaf1"]
    assert "priority=100,ip,nw_dst=10.20.0.12,actions=output:2" in leaf1
    # Remote leaf 2 is reached through spine 2 (port hosts_per_leaf + 2).
    assert "priority=50,ip,nw_dst=10.20.0.21,actions=output:4" in leaf1
    assert "priority=100,arp,arp_tpa=10.20.0.22,actions=output:2" in topo.flows["spine1"]


@pytest.mark.parametrize("table, words", [
    ({"kind": "ring"}, ["kind", "'ring'"]),
    (grid(frontends=9), ["cluster[0].frontends", "9", "between 1 and 8"]),
    (grid(addressing="public"), ["cluster[0].addressing", "'public'"]),
    (grid(hosts="4"), ["cluster[0].hosts", "'4'", "integer"]),
    (grid(subnet="10.0.0.0/30"), ["cluster[0].subnet", "10.0.0.0/30"]),
    (grid(colour="red"), ["unknown key", "colour", "cluster[0]"]),
    (dict(grid(), wan={"delay_ms": 80}), ["wan.delay_ms", "80", "between 0 and 50"]),
    (dict(grid(), cluster=[{"name": "a"}]), ["2 to 4"]),
    ({"kind": "fullmesh", "fullmesh": {"nodes": 9}}, ["fullmesh.nodes", "9"]),
    ({"kind": "fullmesh", "fullmesh": {"link": [{"between": ["n1", "n9"]}]}}, ["between", "n9"]),
    ({"kind": "leafspine", "leafspine": {"controller": "6653"}}, ["leafspine.controller", "'6653'"]),
])
def test_bad_input_names_key_and_value(table, words):
    with pytest.raises(TopologyError) as e:
        topology.from_table(table, "bad.toml", "x")
    message = str(e.value)
    assert message.startswith("bad.toml"), message
    for w in words:
        assert w in message, message


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(TopologyError, match="cannot read topology file"):
        topology.load(str(tmp_path / "none.toml"))
    bad = tmp_path / "bad.toml"
    bad.write_text("kind = \n")
    with pytest.raises(TopologyError, match="not valid TOML"):
        topology.load(str(bad))
    with pytest.raises(TopologyError, match="lab name"):
        topology.from_table(grid(), "t", "Bad-Name")


def test_draw_writes_a_png_of_every_node_and_link(tmp_path):
    from crossmpi_lab import draw

    topo = topology.load(os.path.join(EXAMPLES, "grid-pc.toml"))
    dot = draw.to_dot(topo)
    for name in topo.nodes:
        assert f'"{name}" [label="{name}' in dot
    assert dot.count(" -- ") == len(topo.links)
    assert '"edge-a" -- "wan" [label="300 Mbit/s, 5 ms"' in dot
    out = tmp_path / "grid.png"
    draw.draw(topo, str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_global_ranges_must_not_clash():
    table = grid(addressing="global", subnet="203.0.113.64/26")
    # b's default range (the second /26) is the one a took.
    with pytest.raises(TopologyError, match=r"cluster\[1\].subnet = '203.0.113.64/26': overlaps cluster a"):
        topology.from_table(table, "t", "x")
    with pytest.raises(TopologyError, match="overlaps the WAN"):
        topology.from_table(grid(subnet="198.51.100.0/24"), "t", "x")
    # Private ranges may repeat (grid-pc uses 10.0.0.0/24 twice).
    topology.from_table(dict(grid(), cluster=[grid()["cluster"][0], dict(grid()["cluster"][0], name="c")]), "t", "x")


def test_per_cluster_uplinks_override_the_wan():
    table = grid()
    table["cluster"][1].update(uplink_delay_ms=20, uplink_mbit=50, uplink_loss_percent=1)
    topo = topology.from_table(table, "t", "x")
    up = {link.a: link for link in topo.links if link.a_if == "up0"}
    assert (up["edge-a"].delay_ms, up["edge-a"].mbit) == (5.0, 100)
    assert (up["edge-b"].delay_ms, up["edge-b"].mbit, up["edge-b"].loss_percent) == (20, 50, 1)
