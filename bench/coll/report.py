"""Summarises bench/coll/run.sh's raw collective latencies.

usage: report.py RAW_CSV OUT_DIR

Prints one table of medians over the repeats (us) with the ratios crossmpi/peer and the
issue's targets as met / NOT met, writes OUT_DIR/coll-summary.csv and, when matplotlib
is available, OUT_DIR/coll.png (latency against size, one panel per collective and rank
count).
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import paired  # noqa: E402  (bench/lib, beside this script's folder)

MPIS = ["crossmpi", "openmpi", "mpich"]
COLLS = ["barrier", "bcast", "allreduce", "alltoall", "allgather"]
COLORS = {"crossmpi": "C3", "openmpi": "C0", "mpich": "C2"}
# The issue's figures for Open MPI 4.1 at 2 ranks (8 B, 1 MiB), quoted next to ours.
ISSUE_OMPI = {"allreduce": (0.28, 151), "alltoall": (0.24, 129), "bcast": (0.20, 98)}


def human(nbytes):
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    return str(nbytes)


def load(path):
    """The medians and the values by repeat of each (mpi, mode, ranks, coll, bytes), and
    the keys with a failed run."""
    values = defaultdict(dict)
    failed = set()
    with open(path) as f:
        for row in csv.DictReader(f):
            key = (row["mpi"], row["mode"], int(row["ranks"]), row["coll"], int(row["bytes"]))
            if row["value"] == "fail":
                failed.add(key)
            else:
                values[key][row["repeat"]] = float(row["value"])
    medians = {k: statistics.median(v.values()) for k, v in values.items()}
    return medians, values, failed


def targets(med, values, mode, ranks, coll, size):
    """(target text, met by the medians, paired verdict) for one cell, or None when the
    issue sets none. The paired verdict compares the repeats one by one against the same
    bound (bench/lib/paired.py)."""
    x = med.get(("crossmpi", mode, ranks, coll, size))
    o = med.get(("openmpi", mode, ranks, coll, size))
    if x is None or o is None:
        return None
    mine, theirs = values[("crossmpi", mode, ranks, coll, size)], values[("openmpi", mode, ranks, coll, size)]
    if ranks == 2 and size in (0, 8, 1 << 20):
        bound, text = 1.0, f"<= Open MPI ({o:.2f})"
    elif ranks in (4, 8):
        bound, text = 1.25, f"<= 1.25x Open MPI ({1.25 * o:.2f})"
    else:
        return None
    verdict, detail = paired.compare(mine, theirs, bound)
    return (text, x <= bound * o, f"{verdict}: {detail}")


def main():
    raw, out = sys.argv[1], sys.argv[2]
    med, values, failed = load(raw)
    keys = sorted({(k[1], k[2], k[3], k[4]) for k in list(med) + list(failed)},
                  key=lambda k: (k[0], k[1], COLLS.index(k[2]), k[3]))
    rows = []
    header = f"{'mode':4} {'n':>2} {'collective':10} {'bytes':>6} " + " ".join(f"{m:>10}" for m in MPIS) \
        + f" {'x/ompi':>7} {'x/mpich':>7}  target"
    print(header)
    met = missed = slower = 0
    for mode, ranks, coll, size in keys:
        cells = []
        for m in MPIS:
            k = (m, mode, ranks, coll, size)
            cells.append(f"{med[k]:10.2f}" if k in med else ("      fail" if k in failed else "         -"))
        x = med.get(("crossmpi", mode, ranks, coll, size))
        ratios = []
        for peer in ("openmpi", "mpich"):
            p = med.get((peer, mode, ranks, coll, size))
            ratios.append(f"{x / p:7.2f}" if x is not None and p else "      -")
        t = targets(med, values, mode, ranks, coll, size)
        note = ""
        if t:
            note = f"{t[0]}: {'met' if t[1] else 'NOT met'} (paired {t[2]})"
            met, missed = met + t[1], missed + (not t[1])
            slower += t[2].startswith("slower")
        if ranks == 2 and coll in ISSUE_OMPI and size in (8, 1 << 20):
            note += f" [issue: Open MPI {ISSUE_OMPI[coll][0 if size == 8 else 1]} us]"
        print(f"{mode:4} {ranks:>2} {coll:10} {human(size):>6} " + " ".join(cells) + " " + " ".join(ratios) + "  " + note)
        rows.append([mode, ranks, coll, size] + [med.get((m, mode, ranks, coll, size), "") for m in MPIS] + [note])
    print(f"targets: {met} met, {missed} not met by the medians; {slower} significantly missed by the paired"
          f" repeats (sign test, p < {paired.LEVEL}: bench/lib/paired.py), the others are ties or better")
    with open(os.path.join(out, "coll-summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mode", "ranks", "coll", "bytes"] + [f"{m}_us" for m in MPIS] + ["target"])
        w.writerows(rows)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no coll.png")
        return
    rank_counts = sorted({k[1] for k in keys})
    colls = [c for c in COLLS if c != "barrier"]
    fig, axes = plt.subplots(len(rank_counts), len(colls), figsize=(4 * len(colls), 3 * len(rank_counts)),
                             squeeze=False)
    for i, n in enumerate(rank_counts):
        for j, c in enumerate(colls):
            ax = axes[i][j]
            for m in MPIS:
                pts = sorted((k[4], v) for k, v in med.items() if k[0] == m and k[2] == n and k[3] == c
                             and k[1] == "shm")
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=COLORS[m], label=m)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{c}, {n} ranks (shm)")
            ax.set_xlabel("bytes")
            ax.set_ylabel("us")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "coll.png"), dpi=90)
    print(f"wrote {os.path.join(out, 'coll.png')}")


if __name__ == "__main__":
    main()
