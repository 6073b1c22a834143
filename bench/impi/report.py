"""Summarises bench/impi/run.sh's raw results.

usage: report.py RAW_CSV OUT_DIR

Prints three tables of medians over the repeats -- point to point (IMPI against
crossmpi's own TCP), collectives (the four variants) and kernels (two clusters
against one) -- with the issue's targets as met / NOT met next to the figures, and
writes OUT_DIR/impi-{p2p,coll,kernels}-summary.csv and, when matplotlib is available,
OUT_DIR/impi-{p2p,coll,kernels}.png.
"""
import csv
import importlib.util
import os
import statistics
import sys
from collections import defaultdict

try:  # the plots are optional: Debian's python3-matplotlib
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

# bench/lib/report.py's size labels (1K, 64K, 1M), so every benchmark writes sizes alike.
_lib = importlib.util.spec_from_file_location(
    "bench_lib_report", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib", "report.py"))
_lib_report = importlib.util.module_from_spec(_lib)
_lib.loader.exec_module(_lib_report)
human = _lib_report.human

COLLS = ["barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "gather", "scatter"]
COLL_VARIANTS = ["magpie", "impispec", "flat", "openmpi"]
COLORS = {"impi": "C3", "tcp": "C0", "magpie": "C3", "impispec": "C1", "flat": "C0", "openmpi": "C2",
          "one": "C0"}
# The targets.
P2P_ZERO_EXTRA_US = 2.0      # IMPI at 0 B: at most 2 us more than crossmpi's TCP
P2P_LARGE_RATIO = 0.05       # at 64 KiB and above: within 5 %
P2P_LARGE_FROM = 64 << 10
COLL_SPEEDUP = 2.0           # at 10 ms, every collective >= 2x faster than Open MPI flat
COLL_TARGET_DELAY = 10
KERNEL_RATIO = 1.10          # two clusters at 0 ms within 10 % of one cluster


def medians(path, key_of):
    """The raw CSV at `path` as {key_of(row): median of its values} and the set of keys
    with a failed run ("fail"); a key whose every run failed has no median."""
    values, failed = defaultdict(list), set()
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = key_of(row)
            if row["value"] == "fail":
                failed.add(key)
            else:
                values[key].append(float(row["value"]))
    return {k: statistics.median(v) for k, v in values.items()}, failed


def write_csv(out, name, header, rows):
    """A summary CSV in `out`; None cells are left empty."""
    with open(os.path.join(out, name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows([["" if v is None else v for v in r] for r in rows])


def load(path):
    """{(part, variant, delay, layout, bench, bytes): median} and the failed keys."""
    return medians(path, lambda row: (row["part"], row["variant"], int(row["delay_ms"]), row["layout"],
                                      row["bench"], int(row["bytes"])))


def cell(med, failed, key, fmt="{:10.2f}"):
    return fmt.format(med[key]) if key in med else ("      fail" if key in failed else "         -")


class Targets:
    def __init__(self):
        self.met = self.missed = 0

    def note(self, text, ok):
        """'text: met' / 'text: NOT met', counted; None (not measured) -> 'text: not measured'."""
        if ok is None:
            return f"{text}: not measured"
        self.met, self.missed = self.met + ok, self.missed + (not ok)
        return f"{text}: {'met' if ok else 'NOT met'}"


def p2p_target(bench, size, impi, tcp):
    """(text, met) of the issue's point-to-point target for one cell, or None."""
    if impi is None or tcp is None:
        return None
    if bench == "latency" and size == 0:
        return f"<= TCP + {P2P_ZERO_EXTRA_US:g} us ({tcp + P2P_ZERO_EXTRA_US:.2f})", impi <= tcp + P2P_ZERO_EXTRA_US
    if size >= P2P_LARGE_FROM and bench == "latency":
        return f"<= TCP x {1 + P2P_LARGE_RATIO:g}", impi <= tcp * (1 + P2P_LARGE_RATIO)
    if size >= P2P_LARGE_FROM and bench == "bandwidth":
        return f">= TCP x {1 - P2P_LARGE_RATIO:g}", impi >= tcp * (1 - P2P_LARGE_RATIO)
    return None


def p2p_table(med, failed, targets, out):
    keys = sorted({(k[2], k[4], k[5]) for k in list(med) + list(failed) if k[0] == "p2p"})
    if not keys:
        return []
    print("(a) point to point a1 <-> b1: IMPI job vs crossmpi's TCP (one mpirun); latency us, bandwidth MB/s")
    print(f"{'delay':>5} {'bench':9} {'bytes':>6} {'impi':>10} {'tcp':>10} {'impi-tcp':>9} {'impi/tcp':>8}  target")
    rows = []
    for delay, bench, size in keys:
        impi, tcp = (med.get(("p2p", v, delay, "1+1", bench, size)) for v in ("impi", "tcp"))
        diff = f"{impi - tcp:9.2f}" if impi is not None and tcp is not None else "        -"
        ratio = f"{impi / tcp:8.3f}" if impi is not None and tcp else "       -"
        t = p2p_target(bench, size, impi, tcp)
        note = targets.note(t[0], t[1]) if t else ""
        print(f"{delay:>3}ms {bench:9} {human(size):>6} {cell(med, failed, ('p2p', 'impi', delay, '1+1', bench, size))} "
              f"{cell(med, failed, ('p2p', 'tcp', delay, '1+1', bench, size))} {diff} {ratio}  {note}")
        rows.append([delay, bench, size, impi, tcp, note])
    write_csv(out, "impi-p2p-summary.csv", ["delay_ms", "bench", "bytes", "impi", "tcp", "target"], rows)
    return keys


def coll_table(med, failed, targets, out):
    keys = sorted({(k[2], k[3], k[4], k[5]) for k in list(med) + list(failed) if k[0] == "coll"},
                  key=lambda k: (k[0], k[1], COLLS.index(k[2]), k[3]))
    if not keys:
        return []
    print("\n(b) collectives across 2 clusters, us per call (mean over ranks)")
    print(f"{'delay':>5} {'ranks':5} {'collective':10} {'bytes':>6} " + " ".join(f"{v:>10}" for v in COLL_VARIANTS)
          + f" {'ompi/magpie':>11}  target")
    rows = []
    for delay, layout, coll, size in keys:
        vals = {v: med.get(("coll", v, delay, layout, coll, size)) for v in COLL_VARIANTS}
        m, o = vals["magpie"], vals["openmpi"]
        speedup = f"{o / m:11.2f}" if m and o is not None else "          -"
        note = ""
        if delay == COLL_TARGET_DELAY:
            ok = None if m is None or o is None else o >= COLL_SPEEDUP * m
            note = targets.note(f"magpie >= {COLL_SPEEDUP:g}x faster than Open MPI flat", ok)
        cells = " ".join(cell(med, failed, ("coll", v, delay, layout, coll, size)) for v in COLL_VARIANTS)
        print(f"{delay:>3}ms {layout:5} {coll:10} {human(size):>6} {cells} {speedup}  {note}")
        rows.append([delay, layout, coll, size] + [vals[v] for v in COLL_VARIANTS] + [note])
    write_csv(out, "impi-coll-summary.csv",
              ["delay_ms", "layout", "coll", "bytes"] + [f"{v}_us" for v in COLL_VARIANTS] + ["target"], rows)
    return keys


def kernel_table(med, failed, targets, out):
    keys = sorted({(k[3], k[4]) for k in list(med) + list(failed) if k[0] == "kernels"})
    if not keys:
        return []
    print("\n(c) application kernels at 0 ms, seconds of the timed section (slowest rank)")
    print(f"{'ranks':5} {'kernel':10} {'2 clusters':>10} {'1 cluster':>10} {'ratio':>6}  target")
    rows = []
    for layout, kernel in keys:
        impi, one = (med.get(("kernels", v, 0, layout, kernel, 0)) for v in ("impi", "one"))
        ok = None if impi is None or one is None else impi <= KERNEL_RATIO * one
        note = targets.note(f"<= {KERNEL_RATIO:g} x one cluster", ok)
        ratio = f"{impi / one:6.2f}" if impi is not None and one else "     -"
        print(f"{layout:5} {kernel:10} {cell(med, failed, ('kernels', 'impi', 0, layout, kernel, 0), '{:10.4f}')} "
              f"{cell(med, failed, ('kernels', 'one', 0, layout, kernel, 0), '{:10.4f}')} {ratio}  {note}")
        rows.append([layout, kernel, impi, one, note])
    write_csv(out, "impi-kernels-summary.csv", ["layout", "kernel", "two_clusters_s", "one_cluster_s", "target"], rows)
    return keys


def series(med, part, variant, delay, bench):
    return sorted((k[5], v) for k, v in med.items() if k[:3] == (part, variant, delay) and k[4] == bench)


def draw_sizes(ax, curves, colors, title, ylabel, legend_size=7):
    """One log-log panel over message sizes: `curves` maps a label to its (bytes, value)
    points, `colors` a label to its colour."""
    for label, pts in curves.items():
        if pts:
            ax.plot(*zip(*pts), "o-", color=colors[label], label=label, markersize=3)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("bytes")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=legend_size)


def plot_p2p(med, keys, out):
    delays = sorted({k[0] for k in keys})
    fig, axes = plt.subplots(2, len(delays), figsize=(4 * len(delays), 6), squeeze=False)
    for j, d in enumerate(delays):
        for i, bench in enumerate(("latency", "bandwidth")):
            # 0 B drawn at 0.5
            curves = {v: [(max(s, 0.5), y) for s, y in series(med, "p2p", v, d, bench)] for v in ("impi", "tcp")}
            draw_sizes(axes[i][j], curves, COLORS, f"{bench}, {d} ms one-way", "us" if bench == "latency" else "MB/s")
    save(fig, out, "impi-p2p.png")


def plot_coll(med, keys, out):
    delays = sorted({k[0] for k in keys})
    fig, axes = plt.subplots(len(delays), len(COLLS), figsize=(3 * len(COLLS), 3 * len(delays)), squeeze=False)
    for i, d in enumerate(delays):
        for j, c in enumerate(COLLS):
            curves = {v: [(max(s, 1), y) for s, y in series(med, "coll", v, d, c)] for v in COLL_VARIANTS}
            draw_sizes(axes[i][j], curves, COLORS, f"{c}, {d} ms", "us", legend_size=6)
    save(fig, out, "impi-coll.png")


def plot_kernels(med, keys, out):
    fig, ax = plt.subplots(figsize=(7, 3.5))
    names = [f"{k[1]} ({k[0]})" for k in keys]
    for off, v, label in ((-0.2, "impi", "2 clusters (IMPI)"), (0.2, "one", "1 cluster")):
        ys = [med.get(("kernels", v, 0, layout, kernel, 0), 0) for layout, kernel in keys]
        ax.bar([i + off for i in range(len(keys))], ys, width=0.4, color=COLORS[v], label=label)
    ax.set_xticks(range(len(keys)), names)
    ax.set_ylabel("seconds")
    ax.set_title("kernels at 0 ms")
    ax.legend(fontsize=7)
    save(fig, out, "impi-kernels.png")


def save(fig, out, name):
    fig.tight_layout()
    fig.savefig(os.path.join(out, name), dpi=90)
    plt.close(fig)
    print(f"wrote {os.path.join(out, name)}")


def main():
    raw, out = sys.argv[1], sys.argv[2]
    med, failed = load(raw)
    targets = Targets()
    p2p_keys = p2p_table(med, failed, targets, out)
    coll_keys = coll_table(med, failed, targets, out)
    kernel_keys = kernel_table(med, failed, targets, out)
    print(f"\ntargets: {targets.met} met, {targets.missed} not met")
    if plt is None:
        print("matplotlib missing: no plots")
        return
    for keys, plot in ((p2p_keys, plot_p2p), (coll_keys, plot_coll), (kernel_keys, plot_kernels)):
        if keys:
            plot(med, keys, out)


if __name__ == "__main__":
    main()
