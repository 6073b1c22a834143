"""Summarises bench/run.sh's raw point-to-point results.

usage: report.py RAW_CSV OUT_DIR

Prints one table of medians over the repeats with the ratios crossmpi/peer, writes
OUT_DIR/p2p-summary.csv and, when matplotlib is available, OUT_DIR/p2p.png.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

MPIS = ["crossmpi", "openmpi", "mpich"]
PEERS = ["openmpi", "mpich"]
UNITS = {"latency": "us", "bandwidth": "MB/s", "ring": "us", "pairwise": "us", "testloop": "us"}
BENCH_ORDER = ["latency", "bandwidth", "ring", "pairwise", "testloop"]
COLORS = {"crossmpi": "C3", "openmpi": "C0", "mpich": "C2"}

# The targets: (description, mode, bench, sizes, test(crossmpi, {peer: median}))
# where test returns (met, what crossmpi was compared with).
TARGETS = [
    ("shm latency 0-8 B <= the better peer", "shm", "latency", [0, 1, 2, 4, 8],
     lambda x, p: (x <= min(p.values()), min(p.values()))),
    ("shm latency 1 MiB <= 0.6 x the better peer", "shm", "latency", [1 << 20],
     lambda x, p: (x <= 0.6 * min(p.values()), 0.6 * min(p.values()))),
    ("shm bandwidth 4 MiB >= 15000 MB/s", "shm", "bandwidth", [4 << 20], lambda x, p: (x >= 15000, 15000)),
    ("tcp latency 8 B <= 6 us", "tcp", "latency", [8], lambda x, p: (x <= 6, 6)),
    ("tcp bandwidth 4 MiB >= 6500 MB/s", "tcp", "bandwidth", [4 << 20], lambda x, p: (x >= 6500, 6500)),
    ("shm 4-rank ring <= 1.5 x Open MPI", "shm", "ring", [8, 1024, 65536, 1 << 20],
     lambda x, p: (x <= 1.5 * p["openmpi"], 1.5 * p["openmpi"])),
    ("shm 4-rank pairwise <= 1.5 x Open MPI", "shm", "pairwise", [8, 1024, 65536, 1 << 20],
     lambda x, p: (x <= 1.5 * p["openmpi"], 1.5 * p["openmpi"])),
    ("shm 4-rank test loops <= 1.5 x Open MPI", "shm", "testloop", [8, 1024, 65536, 1 << 20],
     lambda x, p: (x <= 1.5 * p["openmpi"], 1.5 * p["openmpi"])),
]


def human(nbytes):
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    return str(nbytes)


def load(path):
    """(mode, bench, bytes) -> mpi -> (successful values, failed count)"""
    cells = defaultdict(lambda: defaultdict(lambda: ([], [0])))
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            values, failed = cells[(row["mode"], row["bench"], int(row["bytes"]))][row["mpi"]]
            if row["value"] == "fail":
                failed[0] += 1
            else:
                values.append(float(row["value"]))
    return cells


def cell_text(median, values, failed):
    if not values:
        return "fail" if failed else "-"
    text = f"{median:.2f}" if median < 100 else f"{median:.0f}"
    return text + (f" ({failed}x fail)" if failed else "")


def summarise(cells):
    rows = []
    modes = sorted({k[0] for k in cells}, key=lambda m: (m != "shm", m))
    for mode in modes:
        for bench in BENCH_ORDER:
            for nbytes in sorted(k[2] for k in cells if k[0] == mode and k[1] == bench):
                per_mpi = cells[(mode, bench, nbytes)]
                row = {"mode": mode, "bench": bench, "bytes": nbytes, "unit": UNITS[bench]}
                medians = {}
                for mpi in MPIS:
                    values, failed = per_mpi[mpi] if mpi in per_mpi else ([], [0])
                    med = statistics.median(values) if values else None
                    medians[mpi] = med
                    row[mpi] = med
                    row[mpi + "_text"] = cell_text(med, values, failed[0]) if mpi in per_mpi else "-"
                    row[mpi + "_fails"] = failed[0]
                for peer in PEERS:
                    x, p = medians["crossmpi"], medians[peer]
                    row["x/" + peer] = x / p if x is not None and p else None
                rows.append(row)
    return rows


def print_table(rows):
    header = ["mode", "bench", "bytes", "unit"] + MPIS + ["x/openmpi", "x/mpich"]
    lines = [header]
    for r in rows:
        ratios = [f"{r['x/' + p]:.2f}" if r["x/" + p] is not None else "-" for p in PEERS]
        lines.append([r["mode"], r["bench"], human(r["bytes"]), r["unit"]] + [r[m + "_text"] for m in MPIS] + ratios)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for i, line in enumerate(lines):
        print("  ".join(c.rjust(w) if j >= 2 else c.ljust(w) for j, (c, w) in enumerate(zip(line, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print("x/peer = crossmpi median / peer median: below 1 is better for us, above 1 for MB/s.")


def print_targets(rows):
    by_key = {(r["mode"], r["bench"], r["bytes"]): r for r in rows}
    print("\ntargets (crossmpi median against the bound):")
    for desc, mode, bench, sizes, test in TARGETS:
        verdicts = []
        for size in sizes:
            r = by_key.get((mode, bench, size))
            peers = {p: r[p] for p in PEERS if r is not None and r[p] is not None}
            if r is None or r["crossmpi"] is None or ("openmpi" in desc and "openmpi" not in peers) or not peers:
                verdicts.append(f"{human(size)}: no data")
                continue
            met, bound = test(r["crossmpi"], peers)
            verdicts.append(f"{human(size)}: {r['crossmpi']:.3g} vs {bound:.3g} {'met' if met else 'NOT met'}")
        print(f"  {desc}: " + "; ".join(verdicts))


def write_csv(rows, path):
    fields = ["mode", "bench", "bytes", "unit"] + MPIS + [m + "_fails" for m in MPIS] + ["x/openmpi", "x/mpich"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def plot(rows, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"report: matplotlib missing, no plot ({path})", file=sys.stderr)
        return
    modes = sorted({r["mode"] for r in rows}, key=lambda m: (m != "shm", m))
    panels = [("latency", "latency (us, log)"), ("bandwidth", "bandwidth (MB/s)"), ("exchange", "4-rank exchange (us, log)")]
    fig, axes = plt.subplots(len(modes), len(panels), figsize=(15, 4.5 * len(modes)), squeeze=False)
    for i, mode in enumerate(modes):
        for j, (panel, title) in enumerate(panels):
            ax = axes[i][j]
            benches = ["ring", "pairwise", "testloop"] if panel == "exchange" else [panel]
            for bench in benches:
                for mpi in MPIS:
                    # 0 B cannot sit on a log axis: it is drawn at 0.5 B
                    pts = [(r["bytes"] or 0.5, r[mpi]) for r in rows
                           if r["mode"] == mode and r["bench"] == bench and r[mpi] is not None]
                    if pts:
                        style = {"pairwise": "--", "testloop": ":"}.get(bench, "-")
                        ax.plot(*zip(*pts), style, marker="o", markersize=3, color=COLORS[mpi],
                                label=mpi if len(benches) == 1 else f"{mpi} {bench}")
            ax.set_xscale("log", base=2)
            if panel != "bandwidth":
                ax.set_yscale("log")
            ax.set_title(f"{mode}: {title}")
            ax.set_xlabel("message size (bytes; 0 B drawn at 0.5)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: report.py RAW_CSV OUT_DIR")
    rows = summarise(load(sys.argv[1]))
    print_table(rows)
    print_targets(rows)
    summary = os.path.join(sys.argv[2], "p2p-summary.csv")
    write_csv(rows, summary)
    print(f"csv: {sys.argv[1]} (raw), {summary} (medians)")
    plot(rows, os.path.join(sys.argv[2], "p2p.png"))


if __name__ == "__main__":
    main()
