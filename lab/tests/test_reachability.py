"""The reachability matrix of each topology is what its file says."""

import ipaddress

from conftest import example, lab_from
from probe import connect, listen, pings

MIXED = {"kind": "grid",
         "wan": {"delay_ms": 1},
         "cluster": [{"name": "p", "addressing": "private", "hosts": 2, "frontends": 2},
                     {"name": "q", "addressing": "private", "hosts": 1},
                     {"name": "g", "addressing": "global", "hosts": 2}]}


def expected_grid_matrix(lab):
    """{(src, addr): reachable} from the topology alone: WAN and global-cluster
    addresses are reachable from every host; a private cluster's LAN addresses only
    from inside that cluster (the others have no route to them)."""
    topo = lab.topo
    private = {c["name"] for c in topo.params["clusters"] if c["addressing"] == "private"}
    matrix = {}
    for src in lab.hosts:
        for dst in lab.hosts:
            for _, cidr in topo.addresses(dst):
                addr = cidr.split("/")[0]
                dst_cluster = topo.nodes[dst].cluster
                on_private_lan = dst_cluster in private and ipaddress.ip_address(addr) in ipaddress.ip_network(
                    cidr, strict=False) and not addr.startswith(topo.params["wan"]["subnet"].rsplit(".", 1)[0])
                if on_private_lan and topo.nodes[src].cluster != dst_cluster:
                    continue  # not addressable from outside: checked by the firewall test
                matrix[(src, addr)] = True
    return matrix


def check_matrix(lab):
    expected = expected_grid_matrix(lab)
    for src in lab.hosts:
        addrs = sorted({a for s, a in expected if s == src})
        got = pings(lab, src, addrs)
        wrong = {a: r for a, r in got.items() if r != expected[(src, a)]}
        assert not wrong, f"{src}: unexpected reachability {wrong}"
    return len(expected)


def check_private_cluster_closed(lab, cluster, fe_count):
    """An outsider that even has a route to a private cluster's LAN cannot open a
    connection to a compute host there, while the front-ends and outgoing
    connections (masqueraded) work."""
    host = f"{cluster}1"
    target = lab.ip(host)
    server = listen(lab, host, 5555)
    inet = listen(lab, "inet", 5556)
    try:
        for k in range(1, fe_count + 1):
            fe_wan = lab.ip(f"{cluster}-fe{k}", "wan0")
            lab.cmd("inet", f"ip route replace {target}/32 via {fe_wan}")
            assert pings(lab, "inet", [target, fe_wan]) == {target: False, fe_wan: True}
            assert connect(lab, "inet", target, 5555) is None
        # The front-end reaches the private host; the host's outgoing connection is
        # masqueraded behind its front-end's global address.
        assert connect(lab, f"{cluster}-fe1", target, 5555) == lab.ip(f"{cluster}-fe1", "priv0")
        seen = connect(lab, host, lab.ip("inet"), 5556)
        assert seen == lab.ip(f"{cluster}-fe1", "wan0")
    finally:
        server.kill()
        inet.kill()
        server.wait()
        inet.wait()
        lab.cmd("inet", f"ip route del {target}/32")


def test_grid_private_clusters_same_range():
    with example("grid-pc.toml") as lab:
        assert lab.ip("a1") == lab.ip("b1") == "10.0.0.11"
        assert check_matrix(lab) > 50
        check_private_cluster_closed(lab, "a", 2)
        check_private_cluster_closed(lab, "b", 2)


def test_grid_mixed_private_and_global_clusters():
    with lab_from(MIXED) as lab:
        check_matrix(lab)
        check_private_cluster_closed(lab, "p", 2)
        # A global-address host is reachable from outside, and sees the real source
        # of a global peer.
        server = listen(lab, "g2", 5557)
        try:
            assert connect(lab, "inet", lab.ip("g2"), 5557) == lab.ip("inet")
            assert connect(lab, "g1", lab.ip("g2"), 5557) == lab.ip("g1")
        finally:
            server.kill()
            server.wait()


def test_fullmesh_pairs_and_management():
    with example("fullmesh.toml") as lab:
        for src in ("n1", "n3"):
            # Every neighbour on its own link, and every node on the management LAN.
            peers = [link.b_addr if link.a == src else link.a_addr for link in lab.topo.links
                     if src in (link.a, link.b) and link.kind == "p2p"]
            mgmt = [lab.ip(n, "mgmt0") for n in ("n1", "n2", "n3", "n4") if n != src]
            addrs = [a.split("/")[0] for a in peers] + mgmt
            assert len(addrs) == 6 and all(pings(lab, src, addrs).values())
            # Another link's subnet is not routed until a route says so.
            assert pings(lab, src, ["10.40.6.4"] if src == "n1" else ["10.40.1.2"]) == {
                "10.40.6.4" if src == "n1" else "10.40.1.2": False}
        # Each pair link is a separate interface with its own subnet.
        assert "10.40.1.1/24" in lab.cmd("n1", "ip -o addr show dev to-n2")
        assert lab.cmd("n2", "sysctl -n net.ipv4.ip_forward").strip() == "1"
        # Forwarding works: n1 reaches n3's n2-n3 address through n2.
        lab.cmd("n1", "ip route add 10.40.4.3/32 via 10.40.1.2")
        lab.cmd("n3", "ip route add 10.40.1.1/32 via 10.40.4.2")
        assert pings(lab, "n1", ["10.40.4.3"]) == {"10.40.4.3": True}
        route = lab.cmd("n1", "ip route get 10.40.4.3")
        assert "via 10.40.1.2 dev to-n2" in route


def test_leafspine_static_routing():
    with example("leafspine.toml") as lab:
        hosts = [h for h in lab.hosts if h.startswith("h")]
        for src in ("h11", "h22"):
            assert all(pings(lab, src, [lab.ip(h) for h in hosts if h != src]).values())
        flows = lab.run("ovs", ["ovs-ofctl", "-O", "OpenFlow13", "dump-flows", "leaf1"],
                        env=dict(__import__("os").environ, OVS_RUNDIR=lab.state.path("ovs"))).stdout
        # Traffic to leaf 2 went through spine 2 (leaf port 4), none through spine 1 for h21/h22.
        assert "nw_dst=10.20.0.21 actions=output:4" in flows
        used = [line for line in flows.splitlines() if "nw_dst=10.20.0.2" in line and "n_packets=0," not in line]
        assert used, flows
