"""Summarises bench/kernels/run.sh's raw kernel run times.

usage: report.py RAW_CSV OUT_DIR

Prints a table of median run times (seconds of each kernel's timed section) with the
ratios crossmpi/peer, then the issue's target for kernels -- no slower than Open MPI
at 2 and 4 ranks -- as met / NOT met per kernel, and writes OUT_DIR/kernels-summary.csv
and, when matplotlib is available, OUT_DIR/kernels.png.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import paired  # noqa: E402  (bench/lib, beside this script's folder)

try:  # the plot is optional: Debian's python3-matplotlib
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

MPIS = ["crossmpi", "openmpi", "mpich"]
PEERS = ["openmpi", "mpich"]
KERNEL_ORDER = ["cg", "fft3d", "isort", "mg", "wavefront"]
COLORS = {"crossmpi": "C3", "openmpi": "C0", "mpich": "C2"}
TARGET_RANKS = [2, 4]  # "no slower than Open MPI at 2 and 4 ranks"


def load(path):
    """(mode, kernel, ranks) -> mpi -> (successful times, failed count, {repeat: time})"""
    cells = defaultdict(lambda: defaultdict(lambda: ([], [0], {})))
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            times, failed, by_repeat = cells[(row["mode"], row["kernel"], int(row["ranks"]))][row["mpi"]]
            if row["seconds"] == "fail":
                failed[0] += 1
            else:
                times.append(float(row["seconds"]))
                by_repeat[row["repeat"]] = float(row["seconds"])
    return cells


def order(key):
    mode, kernel, ranks = key
    rank_of_kernel = KERNEL_ORDER.index(kernel) if kernel in KERNEL_ORDER else len(KERNEL_ORDER)
    return (mode != "shm", mode, rank_of_kernel, kernel, ranks)


def summarise(cells):
    rows = []
    for key in sorted(cells, key=order):
        mode, kernel, ranks = key
        row = {"mode": mode, "kernel": kernel, "ranks": ranks}
        for mpi in MPIS:
            times, failed, _ = cells[key][mpi] if mpi in cells[key] else ([], [0], {})
            row[mpi] = statistics.median(times) if times else None
            row[mpi + "_best"] = min(times) if times else None
            row[mpi + "_fails"] = failed[0]
            if mpi not in cells[key]:
                row[mpi + "_text"] = "-"
            elif not times:
                row[mpi + "_text"] = "fail"
            else:
                row[mpi + "_text"] = f"{row[mpi]:.4f}" + (f" ({failed[0]}x fail)" if failed[0] else "")
        for peer in PEERS:
            x, p = row["crossmpi"], row[peer]
            row["x/" + peer] = x / p if x is not None and p else None
        # Other work on a shared machine only ever adds time: the best runs' ratio
        # shows what is left of the difference without it.
        x, p = row["crossmpi_best"], row["openmpi_best"]
        row["best x/openmpi"] = x / p if x is not None and p else None
        if row["crossmpi"] is not None and row["openmpi"] is not None:
            row["paired"], row["paired_text"] = paired.compare(cells[key]["crossmpi"][2],
                                                               cells[key]["openmpi"][2])
        else:
            row["paired"], row["paired_text"] = None, "-"
        rows.append(row)
    return rows


def aligned(lines, left_columns):
    """The rows of a text table: the first `left_columns` columns left-aligned, the
    others right-aligned, a rule under the header."""
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    cells = [[c.ljust(w) if i < left_columns else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))]
             for line in lines]
    cells.insert(1, ["-" * w for w in widths])
    return ["  ".join(line) for line in cells]


def print_table(rows):
    ratios = ["x/" + p for p in PEERS] + ["best x/openmpi"]
    lines = [["mode", "kernel", "ranks"] + MPIS + ratios + ["paired with Open MPI"]]
    for r in rows:
        lines.append([r["mode"], r["kernel"], str(r["ranks"])] + [r[m + "_text"] for m in MPIS] +
                     ["-" if r[c] is None else f"{r[c]:.2f}" for c in ratios] +
                     [f"{r['paired'] or '-'} ({r['paired_text']})"])
    print("\n".join(aligned(lines, 2)))
    print("seconds of the timed section (slowest rank), median over the repeats;\n"
          "x/peer = crossmpi / peer: below 1 means crossmpi is faster;\n"
          "best x/openmpi = the same for the fastest runs (other work on the machine left out);\n"
          "paired = sign test over the repeats, each run beside Open MPI's (bench/lib/paired.py):\n"
          f"slower / faster when crossmpi lost / won significantly many (p < {paired.LEVEL}), else tie.")


def print_targets(rows):
    print("\ntarget: kernels no slower than Open MPI at 2 and 4 ranks (crossmpi median <= Open MPI median):")
    for mode in sorted({r["mode"] for r in rows}, key=lambda m: (m != "shm", m)):
        for ranks in TARGET_RANKS:
            verdicts, all_met, any_data, slower = [], True, False, False
            for r in rows:
                if r["mode"] != mode or r["ranks"] != ranks:
                    continue
                if r["crossmpi"] is None or r["openmpi"] is None:
                    verdicts.append(f"{r['kernel']} no data")
                    all_met = False
                    continue
                any_data = True
                met = r["crossmpi"] <= r["openmpi"]
                all_met = all_met and met
                slower = slower or r["paired"] == "slower"
                verdicts.append(f"{r['kernel']} {r['x/openmpi']:.2f}x {'met' if met else 'NOT met'}"
                                f" (paired: {r['paired']})")
            overall = "met" if all_met and any_data else ("no data" if not any_data else "NOT met")
            sign = "none significantly slower" if not slower else "some significantly slower"
            print(f"  {mode} {ranks} ranks: {overall}, {sign} ({'; '.join(verdicts) or 'not run'})")


def write_csv(rows, path):
    """The table's numbers (not its text cells), one row per mode, kernel and rank count."""
    fields = [k for k in rows[0] if not k.endswith("_text")] if rows else ["mode", "kernel", "ranks"]
    with open(path, "w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        out.writeheader()
        out.writerows(rows)


def plot(rows, path):
    if plt is None:
        print(f"report: matplotlib missing, no plot ({path})", file=sys.stderr)
        return
    modes = sorted({r["mode"] for r in rows}, key=lambda m: (m != "shm", m))
    kernels = sorted({r["kernel"] for r in rows}, key=lambda k: order(("shm", k, 0)))
    fig, axes = plt.subplots(len(modes), len(kernels), figsize=(3.6 * len(kernels), 3.8 * len(modes)),
                             squeeze=False)
    for i, mode in enumerate(modes):
        for j, kernel in enumerate(kernels):
            ax = axes[i][j]
            mine = [r for r in rows if r["mode"] == mode and r["kernel"] == kernel]
            ranks = [r["ranks"] for r in mine]
            width = 0.8 / len(MPIS)
            for m, mpi in enumerate(MPIS):
                xs = [k + (m - 1) * width for k, r in enumerate(mine) if r[mpi] is not None]
                ys = [r[mpi] for r in mine if r[mpi] is not None]
                if ys:
                    ax.bar(xs, ys, width, color=COLORS[mpi], label=mpi)
            ax.set_xticks(range(len(ranks)))
            ax.set_xticklabels([str(n) for n in ranks])
            ax.set_xlabel("ranks (2 cores)")
            ax.set_ylabel("seconds")
            ax.set_title(f"{mode}: {kernel}")
            ax.grid(True, axis="y", alpha=0.3)
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


def main():
    try:
        raw, out_dir = sys.argv[1:]
    except ValueError:
        sys.exit("usage: report.py RAW_CSV OUT_DIR")
    rows = summarise(load(raw))
    print_table(rows)
    print_targets(rows)
    summary = os.path.join(out_dir, "kernels-summary.csv")
    write_csv(rows, summary)
    print(f"csv: {raw} (raw), {summary} (medians)")
    plot(rows, os.path.join(out_dir, "kernels.png"))


if __name__ == "__main__":
    main()
