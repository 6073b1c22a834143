"""`crossmpi lab draw`: a PNG diagram of a topology through graphviz `dot`."""

import subprocess

STYLE = {
    "compute": 'shape=box style=filled fillcolor="#dbe9f6"',
    "node": 'shape=box style=filled fillcolor="#dbe9f6"',
    "frontend": 'shape=box3d style=filled fillcolor="#f6e3c6"',
    "router": 'shape=box3d style=filled fillcolor="#e2f0d9"',
    "switch": 'shape=ellipse style=filled fillcolor="#eeeeee"',
    "wan": 'shape=doublecircle style=filled fillcolor="#fde2e2"',
    "outside": 'shape=octagon style=filled fillcolor="#f2f2f2"',
    "ovs": 'shape=component style=filled fillcolor="#eeeeee"',
}


def link_label(link):
    parts = []
    if link.mbit is not None:
        parts.append(f"{link.mbit:g} Mbit/s")
    if link.delay_ms:
        parts.append(f"{link.delay_ms:g} ms")
    if link.loss_percent:
        parts.append(f"{link.loss_percent:.2g}% loss")
    return ", ".join(parts)


def to_dot(topo):
    lines = [f'graph "{topo.name}" {{', '  graph [rankdir=TB fontname=Helvetica fontsize=11 '
             f'label="crossmpi lab {topo.name} ({topo.kind})"];', "  node [fontname=Helvetica fontsize=10];",
             "  edge [fontname=Helvetica fontsize=8];"]
    # An OVS node holds several bridges: draw each bridge as its own vertex.
    ovs_nodes = {n for n, v in topo.nodes.items() if v.ovs_bridges}
    clusters = {}
    for name, node in topo.nodes.items():
        if name in ovs_nodes:
            vertices = [(f"{name}:{br}", br) for br, _ in node.ovs_bridges]
        else:
            addrs = [a.split("/")[0] for _, a in topo.addresses(name)]
            vertices = [(name, "\\n".join([name, *addrs]))]
        for vid, label in vertices:
            style = STYLE["switch"] if name in ovs_nodes else STYLE.get(node.role, "")
            clusters.setdefault(node.cluster, []).append(f'    "{vid}" [label="{label}" {style}];')
    for cluster, members in clusters.items():
        if cluster is None:
            lines += [m[2:] for m in members]
        else:
            lines.append(f'  subgraph "cluster_{cluster}" {{ label="{cluster}"; style=rounded;')
            lines += members
            lines.append("  }")

    def vertex(node, master):
        return f"{node}:{master.split(':')[1]}" if node in ovs_nodes and master else node

    for link in topo.links:
        a, b = vertex(link.a, link.a_master), vertex(link.b, link.b_master)
        width = {"wan": 2.5, "frontend": 1.5}.get(link.kind, 1.0)
        lines.append(f'  "{a}" -- "{b}" [label="{link_label(link)}" penwidth={width}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def draw(topo, png_path):
    p = subprocess.run(["dot", "-Tpng", "-o", png_path], input=to_dot(topo), capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"dot failed: {p.stderr.strip()}")
