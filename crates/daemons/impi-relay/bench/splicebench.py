"""Bandwidth through relays with real MPI ranks: copy, splice and encryption.

    python3 splicebench.py PREFIX [REPEATS]

On the relay lab grid (examples/lab/grid-relay.toml, WAN unshaped, 0 ms), one rank in
each of two clusters runs bench/impi/wanbench.c `bandwidth` (MB/s from rank 0 to 1,
windows of 64 sends) PC-GC (one relay) and PC-PC (two relays), with the relays copying
(CROSSMPI_RELAY_SPLICE=0) or splicing (=1), and PC-PC with both relays encrypting
(-encrypt, a random IMPI_AUTH_KEY). The cases are interleaved REPEATS (default 5) times;
prints the median MB/s per case and message size and the ratios splice / copy and
encrypted / copy. A benchmark: it asserts nothing.
"""

import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "impi"))
sys.path.insert(0, HERE)

from gridjob import GridJobs, grid_lab  # noqa: E402
from relayjob import LAB_FILE, wanbench_results  # noqa: E402

SIZES = [65536, 1048576, 4194304]
CASES = [
    ("PC-GC copy", [("p", 1, True), ("g", 1, False)], "0", None),
    ("PC-GC splice", [("p", 1, True), ("g", 1, False)], "1", None),
    ("PC-PC copy", [("p", 1, True), ("q", 1, True)], "0", None),
    ("PC-PC splice", [("p", 1, True), ("q", 1, True)], "1", None),
    ("PC-PC -encrypt", [("p", 1, True), ("q", 1, True)], "0", "key"),
]


def one_run(jobs, wanbench, clusters, splice, key):
    key = int.from_bytes(os.urandom(8), "big") if key else None
    found = wanbench_results(jobs, clusters, wanbench, "bandwidth", env={"CROSSMPI_RELAY_SPLICE": splice}, key=key)
    return [found[s] for s in SIZES]


def main(argv):
    prefix = os.path.abspath(argv[1]) if len(argv) > 1 else os.path.join(ROOT, "build", "install")
    repeats = int(argv[2]) if len(argv) > 2 else 5
    work = os.path.join("/tmp", f"splice-bench-{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    wanbench = os.path.join(work, "wanbench")
    subprocess.run([f"{prefix}/bin/mpicc", "-O2", "-o", wanbench, os.path.join(ROOT, "bench", "impi", "wanbench.c")],
                   check=True)
    runs = {name: [] for name, *_ in CASES}
    with grid_lab(LAB_FILE, 0.0, f"sb{os.getpid() % 10000}") as lab:
        jobs = GridJobs(lab, prefix, work)
        for _ in range(repeats):
            for name, clusters, splice, key in CASES:
                runs[name].append(one_run(jobs, wanbench, clusters, splice, key))
    med = {name: [statistics.median(r[i] for r in rs) for i in range(len(SIZES))] for name, rs in runs.items()}
    print(f"median MB/s, rank 0 to rank 1, {repeats} interleaved runs, lab grid-relay.toml, 0 ms")
    print(f"{'case':<22}" + "".join(f"{s // 1024:>10} KiB" for s in SIZES))
    for name in med:
        print(f"{name:<22}" + "".join(f"{v:>14.1f}" for v in med[name]))
    for label, a, b in [("PC-GC splice/copy", "PC-GC splice", "PC-GC copy"),
                        ("PC-PC splice/copy", "PC-PC splice", "PC-PC copy"),
                        ("PC-PC encrypted/copy", "PC-PC -encrypt", "PC-PC copy")]:
        print(f"{label:<22}" + "".join(f"{x / y:>14.2f}" for x, y in zip(med[a], med[b])))


if __name__ == "__main__":
    main(sys.argv)
