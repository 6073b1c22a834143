"""Summarises the relay benchmark's raw results (run.sh calls it).

usage: relayreport.py RAW_CSV OUT_DIR

Prints tables of medians over the repeats -- (a) latency through 0, 1, 2 relays and the
latency each relay hop adds, (a') what one hop adds forwarded by the kernel, by a plain
user-space forwarder and by impi-relay, (b) bandwidth vs size through 0, 1, 2 relays on
a shaped and an unshaped WAN, (c) all-to-all bandwidth and kernel times vs trunk count,
(d) the kernels' performance relative to GC-GC vs WAN delay -- with the issue's targets
as met / NOT met, and writes
OUT_DIR/relay-{latency,floor,bandwidth,trunks,delays}-summary.csv and
OUT_DIR/relay-{latency,bandwidth,trunks,delays}.png.
"""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "bench", "impi"))

from report import Targets, draw_sizes, human, medians, plt, save, write_csv  # noqa: E402  (bench/impi/report.py)

CASES = ["GC-GC", "PC-GC", "PC-PC"]
RELAYS = {"GC-GC": 0, "PC-GC": 1, "PC-PC": 2}  # relays on the path: the raw rows' `trunks` of (a) and (b)
COLORS = {"GC-GC": "C0", "PC-GC": "C1", "PC-PC": "C3"}
# The targets.
HOP_US = 10.0            # added one-way latency per relay hop
TWO_RELAYS_BW = 0.95     # large-message bandwidth through two relays vs the direct path
LARGE_FROM = 1 << 20
TRUNK_SCALING = 0.9      # all-to-all with N trunks >= 0.9 N x one trunk
KERNEL_RELATIVE = 0.9    # kernels through 4 trunks at 10 ms >= 0.9 x GC-GC performance
KERNEL_TARGET_DELAY = 10.0
KERNEL_TARGET_TRUNKS = 4
LATENCY_ROWS = [0, 64, 4096, 65536, 1 << 20, 4 << 20]
BANDWIDTH_ROWS = [1024, 65536, 262144, 1 << 20, 4 << 20]


def load(path):
    """{(part, case, trunks, delay, wan, bench, bytes): median}; keys whose every run
    failed count as None."""
    med, failed = medians(path, lambda row: (row["part"], row["case"], int(row["trunks"]), float(row["delay_ms"]),
                                             float(row["wan_mbit"]), row["bench"], int(row["bytes"])))
    return {k: med.get(k) for k in med.keys() | failed}


def fmt(v, spec="{:9.1f}"):
    return spec.format(v) if v is not None else " " * (len(spec.format(0.0)) - 4) + "fail"


def ratio(a, b):
    return a / b if a is not None and b else None


def latency(med, targets, out):
    keys = sorted({k[6] for k in med if k[0] == "latency"})
    if not keys:
        return None
    get = {c: {n: med.get(("latency", c, RELAYS[c], 0.0, 0.0, "latency", n)) for n in keys} for c in CASES}
    print("(a) half round trip, 1+1 ranks, grid-relay.toml unshaped, 0 ms; us")
    print(f"{'bytes':>6} {'GC-GC':>9} {'PC-GC':>9} {'PC-PC':>9} {'hop (1 relay)':>14} {'hop (2 relays)':>15}  target")
    rows = []
    for n in keys:
        g, p1, p2 = (get[c][n] for c in CASES)
        one = p1 - g if None not in (p1, g) else None
        two = (p2 - g) / 2 if None not in (p2, g) else None
        note = ""
        if n == 0:
            note = "; ".join(targets.note(f"{label} <= {HOP_US:g} us", None if v is None else v <= HOP_US)
                             for label, v in (("1 relay", one), ("2 relays", two)))
        if n in LATENCY_ROWS:
            print(f"{human(n):>6} {fmt(g)} {fmt(p1)} {fmt(p2)} {fmt(one, '{:14.1f}')} {fmt(two, '{:15.1f}')}  {note}")
        rows.append([n, g, p1, p2, one, two, note])
    write_csv(out, "relay-latency-summary.csv", ["bytes", "gc_gc_us", "pc_gc_us", "pc_pc_us", "added_us_one_relay",
                                                 "added_us_per_hop_two_relays", "target"], rows)
    return get


def floor(med, out):
    """(a') what one hop through p's front-end adds with the kernel, a plain user-space
    forwarder and impi-relay forwarding (relayjob.FLOOR_CASES); no target of its own."""
    keys = sorted({k[6] for k in med if k[0] == "floor"} & {0, 64})
    if not keys:
        return
    cases = [("GC-PC nat", 0), ("GC-PC plain", 0), ("GC-PC relay", 1)]
    print("\n(a') the floor of a user-space hop: p joins second, its rank connecting out through its front-end; us")
    print(f"{'bytes':>6} {'NAT':>9} {'plain fwd':>9} {'relay':>9} {'plain - NAT':>12} {'relay - NAT':>12} "
          f"{'relay - plain':>14}")
    rows = []
    for n in keys:
        nat, plain, relay = (med.get(("floor", c, r, 0.0, 0.0, "latency", n)) for c, r in cases)
        diff = [b - a if None not in (a, b) else None for a, b in ((nat, plain), (nat, relay), (plain, relay))]
        print(f"{human(n):>6} {fmt(nat)} {fmt(plain)} {fmt(relay)} {fmt(diff[0], '{:12.1f}')} "
              f"{fmt(diff[1], '{:12.1f}')} {fmt(diff[2], '{:14.1f}')}")
        rows.append([n, nat, plain, relay, *diff])
    write_csv(out, "relay-floor-summary.csv", ["bytes", "nat_us", "plain_forwarder_us", "relay_us",
                                               "plain_minus_nat_us", "relay_minus_nat_us", "relay_minus_plain_us"],
              rows)


def bandwidth(med, targets, out):
    wans = sorted({k[4] for k in med if k[0] == "bandwidth"}, reverse=True)
    if not wans:
        return None
    curves = {}
    rows = []
    print("\n(b) bandwidth rank 0 -> rank 1 (windows of 64), 1+1 ranks, grid-relay.toml, 0 ms; MB/s")
    print(f"{'WAN':>9} {'bytes':>6} {'GC-GC':>9} {'PC-GC':>9} {'PC-PC':>9} {'PC-GC/GC':>9} {'PC-PC/GC':>9}  target")
    for wan in wans:
        sizes = sorted({k[6] for k in med if k[0] == "bandwidth" and k[4] == wan})
        curve = {c: {n: med.get(("bandwidth", c, RELAYS[c], 0.0, wan, "bandwidth", n))
                     for n in sizes} for c in CASES}
        curves[wan] = curve
        label = f"{wan:g} Mbit" if wan else "unshaped"
        for n in sizes:
            g, p1, p2 = (curve[c][n] for c in CASES)
            r1, r2 = ratio(p1, g), ratio(p2, g)
            note = ""
            if wan and n >= LARGE_FROM:  # the fair comparison: the same shaped bottleneck
                note = targets.note(f"PC-PC >= {TWO_RELAYS_BW:g} x GC-GC", None if r2 is None else r2 >= TWO_RELAYS_BW)
            if n in BANDWIDTH_ROWS:
                print(f"{label:>9} {human(n):>6} {fmt(g)} {fmt(p1)} {fmt(p2)} {fmt(r1, '{:9.2f}')} "
                      f"{fmt(r2, '{:9.2f}')}  {note}")
            rows.append([wan, n, g, p1, p2, r1, r2, note])
    write_csv(out, "relay-bandwidth-summary.csv", ["wan_mbit", "bytes", "gc_gc_mbs", "pc_gc_mbs", "pc_pc_mbs",
                                                   "pc_gc_over_gc_gc", "pc_pc_over_gc_gc", "target"], rows)
    return curves


def trunks(med, targets, out):
    ks = sorted({k[2] for k in med if k[0] == "alltoall"})
    kernels = sorted({k[5] for k in med if k[0] == "kernels" and k[3] == 0.0})
    if not ks and not kernels:
        return None
    # The WAN of (c)'s lab: its all-to-all's, else that of its kernel runs through one
    # trunk (only (c) runs one).
    wan = next((k[4] for k in med if k[0] == "alltoall"),
               next((k[4] for k in med if k[0] == "kernels" and k[3] == 0.0 and k[2] == 1), None))
    if wan is None:
        return None
    print(f"\n(c) PC-GC through 1, 2, 4 trunks, 4+4 ranks, front-ends the bottleneck, WAN {wan:g} Mbit/s, 0 ms")
    rows = []
    base = med.get(("alltoall", "PC-GC", 1, 0.0, wan, "crossbw", 1 << 20))
    if ks:
        print("all-to-all (crossbw.c, 1 MiB per pair of ranks, bytes crossing both ways per second)")
        print(f"{'trunks':>6} {'MB/s':>7} {'/(N x 1)':>8}  {'WAN byte shares fe1..fe4':<24}  target")
        for k in ks:
            mbs = med.get(("alltoall", "PC-GC", k, 0.0, wan, "crossbw", 1 << 20))
            shares = [med.get(("alltoall", "PC-GC", k, 0.0, wan, f"share_fe{i}", 1 << 20)) for i in range(1, 5)]
            scale = ratio(mbs, k * base) if base else None
            note = targets.note(f">= {TRUNK_SCALING:g} x {k} x one trunk", None if scale is None else
                                scale >= TRUNK_SCALING) if k > 1 else ""
            print(f"{k:>6} {fmt(mbs, '{:7.1f}')} {fmt(scale, '{:8.2f}')}  "
                  + f"{' '.join(fmt(s, '{:.2f}') for s in shares):<24}  {note}")
            rows.append(["alltoall_mbs", k, mbs, scale, note])
    if kernels:
        print("kernels: seconds of the timed section (slowest rank); GC-GC / N trunks in brackets")
        print(f"{'kernel':>8} " + " ".join(f"{f'{k} trunk(s)':>11}" for k in kernel_trunks(med)) + f" {'GC-GC':>9}")
        for name in kernels:
            gc = med.get(("kernels", "GC-GC", 0, 0.0, wan, name, 0))
            cells = []
            for k in kernel_trunks(med):
                t = med.get(("kernels", "PC-GC", k, 0.0, wan, name, 0))
                cells.append(f"{fmt(t, '{:5.2f}')} ({fmt(ratio(gc, t), '{:.2f}')})")
                rows.append([name, k, t, ratio(gc, t), ""])
            rows.append([name, 0, gc, 1.0, ""])
            print(f"{name:>8} " + " ".join(f"{c:>11}" for c in cells) + f" {fmt(gc, '{:9.2f}')}")
    write_csv(out, "relay-trunks-summary.csv", ["what", "trunks", "value", "scaling_or_gc_gc_over_relayed", "target"],
              rows)
    return wan


def kernel_trunks(med):
    """Trunk counts of the PC-GC kernel runs at 0 ms."""
    return sorted({k[2] for k in med if k[0] == "kernels" and k[1] == "PC-GC" and k[3] == 0.0})


def delays(med, targets, out):
    # The sweep's trunk counts: those of PC-GC kernel runs at a delay above 0.
    swept = {k[2] for k in med if k[0] == "kernels" and k[1] == "PC-GC" and k[3] > 0}
    sweep = sorted({(k[2], k[5]) for k in med if k[0] == "kernels" and k[1] == "PC-GC" and k[2] in swept})
    if not sweep:
        return None
    # The WAN of (d)'s labs: that of the sweep's runs at a delay above 0 (at 0 ms (c) may
    # have run the kernels on a faster WAN too).
    wan = next((k[4] for k in med if k[0] == "kernels" and k[3] > 0),
               next(k[4] for k in med if k[0] == "kernels"))
    ds = sorted({k[3] for k in med if k[0] == "kernels" and k[4] == wan})
    print("\n(d) kernels PC-GC through N trunks vs GC-GC by WAN one-way delay, 4+4 ranks; seconds, "
          "relative performance = GC-GC time / PC-GC time")
    print(f"{'kernel':>8} {'trunks':>6} {'delay':>6} {'GC-GC':>8} {'PC-GC':>8} {'relative':>8}  target")
    rows, curves = [], defaultdict(list)
    for k, name in sweep:
        for d in ds:
            gc = med.get(("kernels", "GC-GC", 0, d, wan, name, 0))
            pc = med.get(("kernels", "PC-GC", k, d, wan, name, 0))
            if gc is None and pc is None:
                continue
            rel = ratio(gc, pc)
            note = ""
            if d == KERNEL_TARGET_DELAY and k == KERNEL_TARGET_TRUNKS:
                note = targets.note(f">= {KERNEL_RELATIVE:g} of GC-GC", None if rel is None else rel >= KERNEL_RELATIVE)
            print(f"{name:>8} {k:>6} {d:>4g}ms {fmt(gc, '{:8.2f}')} {fmt(pc, '{:8.2f}')} {fmt(rel, '{:8.2f}')}  {note}")
            rows.append([name, k, d, gc, pc, rel, note])
            if rel is not None:
                curves[f"{name}, {k} trunks"].append((d, rel))
    write_csv(out, "relay-delays-summary.csv", ["kernel", "trunks", "delay_ms", "gc_gc_s", "pc_gc_s",
                                                "relative_performance", "target"], rows)
    return curves


def plot_curves(curves, title, ylabel, name, out):
    """curves: {panel title: {case: {bytes: value}}}, one log-log panel each."""
    fig, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 3.8), squeeze=False)
    for ax, (panel, by_case) in zip(axes[0], curves.items()):
        # 0 B drawn at 0.5
        points = {c: [(max(n, 0.5), v) for n, v in sorted(pts.items()) if v is not None] for c, pts in by_case.items()}
        draw_sizes(ax, points, COLORS, f"{title}, {panel}", ylabel)
    save(fig, out, name)


def plot_trunks(med, wan, out):
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    ks = sorted({k[2] for k in med if k[0] == "alltoall"})
    ys = [med.get(("alltoall", "PC-GC", k, 0.0, wan, "crossbw", 1 << 20)) or 0 for k in ks]
    a.bar([str(k) for k in ks], ys, color="C1", label="measured")
    if ks and ys[0]:
        a.plot([str(k) for k in ks], [k * ys[0] * TRUNK_SCALING for k in ks], "k--", label=f"{TRUNK_SCALING:g} N x 1")
    a.set_xlabel("trunks")
    a.set_ylabel("MB/s")
    a.set_title("all-to-all across the clusters", fontsize=9)
    a.legend(fontsize=7)
    kernels = sorted({k[5] for k in med if k[0] == "kernels" and k[3] == 0.0})
    for i, name in enumerate(kernels):
        ts = kernel_trunks(med)
        b.plot(ts, [med.get(("kernels", "PC-GC", k, 0.0, wan, name, 0)) for k in ts], "o-", color=f"C{i}",
               label=f"{name} PC-GC")
        gc = med.get(("kernels", "GC-GC", 0, 0.0, wan, name, 0))
        if gc is not None:
            b.axhline(gc, color=f"C{i}", linestyle=":", label=f"{name} GC-GC")
    b.set_xticks([1, 2, 4])
    b.set_xlabel("trunks")
    b.set_ylabel("seconds")
    b.set_title("kernels, 0 ms", fontsize=9)
    b.legend(fontsize=7)
    save(fig, out, "relay-trunks.png")


def plot_delays(curves, out):
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for label, pts in curves.items():
        ax.plot(*zip(*pts), "o-", label=label)
    ax.axhline(KERNEL_RELATIVE, color="k", linestyle="--", label=f"target {KERNEL_RELATIVE:g}")
    ax.set_xlabel("WAN one-way delay (ms)")
    ax.set_ylabel("GC-GC time / PC-GC time")
    ax.set_title("relative performance vs GC-GC", fontsize=9)
    ax.legend(fontsize=7)
    save(fig, out, "relay-delays.png")


def main():
    raw, out = sys.argv[1], sys.argv[2]
    med = load(raw)
    targets = Targets()
    lat = latency(med, targets, out)
    floor(med, out)
    bw = bandwidth(med, targets, out)
    wan = trunks(med, targets, out)
    sweep = delays(med, targets, out)
    print(f"\ntargets: {targets.met} met, {targets.missed} not met")
    if plt is None:
        print("matplotlib missing: no plots")
        return
    if lat:
        plot_curves({"0 ms, unshaped": lat}, "half round trip", "us", "relay-latency.png", out)
    if bw:
        plot_curves({(f"WAN {w:g} Mbit/s" if w else "unshaped"): c for w, c in bw.items()}, "bandwidth", "MB/s",
                    "relay-bandwidth.png", out)
    if wan is not None:
        plot_trunks(med, wan, out)
    if sweep:
        plot_delays(sweep, out)


if __name__ == "__main__":
    main()
