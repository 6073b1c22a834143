"""Inter-cluster all-to-all bandwidth through 1, 2 and 4 trunked IMPI relays.

    python3 trunkbench.py PREFIX [REPEATS] [MODE] [WAN_MBIT] [BYTES]

A lab grid (built here, name unique to this run): private cluster p, 4 hosts and 4
front-ends whose NICs run at 100 Mbit/s, and global cluster g, 4 hosts; a 400 Mbit/s
WAN (each cluster's uplink); 0 ms delay; hosts unshaped. One front-end NIC is then the
bottleneck of a single relay, and four together match the WAN. Each job is
bench/crossbw.c with one rank per host (4+4): every rank exchanges 1 MiB with every
rank of the other cluster, 4 timed rounds; its figure counts the bytes crossing both
ways per second. Runs with K = 1, 2, 4 relays for p (MODE: destination, the default, or
source) are interleaved, REPEATS (default 3) times; the table gives the median MB/s
per K, its ratio to K times the one-trunk median (the target is 0.9 or more), and the
median share of the bytes each front-end's WAN interface carried. Then a CSV of every
run. A benchmark: it asserts nothing.
"""

import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "impi"))
sys.path.insert(0, HERE)

from gridjob import GridJobs, Lab, topology  # noqa: E402
from relayjob import run_relayed, wan_bytes  # noqa: E402

TRUNKS = [1, 2, 4]
FRONTENDS = 4
# Bytes each rank sends each rank of the other cluster per round (crossbw.c's size).
MESSAGE_BYTES = 1 << 20


def trunk_table(delay_ms=0, fe_mbit=100, wan_mbit=400, reference=False):
    """The lab grid: p with FRONTENDS front-ends at fe_mbit, g global, a WAN of wan_mbit
    with delay_ms one way; with `reference`, a second global cluster h of 4 hosts for
    GC-GC jobs. Global clusters' front-ends (routers) stay unshaped, so GC-GC meets the
    WAN as its only bottleneck."""
    clusters = [{"name": "p", "addressing": "private", "hosts": 4, "frontends": FRONTENDS, "frontend_mbit": fe_mbit},
                {"name": "g", "addressing": "global", "hosts": 4, "frontends": 1}]
    if reference:
        clusters.append({"name": "h", "addressing": "global", "hosts": 4, "frontends": 1})
    return {
        "kind": "grid",
        "description": f"relay trunks: p with {FRONTENDS} front-ends at {fe_mbit} Mbit/s, "
                       f"{wan_mbit} Mbit/s WAN, {delay_ms} ms",
        "wan": {"mbit": wan_mbit, "delay_ms": delay_ms},
        "cluster": clusters,
    }


def one_run(jobs, crossbw, trunks, mode, msg_bytes=MESSAGE_BYTES):
    lab = jobs.lab
    fes = [f"p-fe{k}" for k in range(1, FRONTENDS + 1)]
    before = [wan_bytes(lab, fe) for fe in fes]
    job = run_relayed(jobs, [("p", 4, trunks), ("g", 4, 0)], [crossbw, "4", str(msg_bytes), "4"], timeout=300,
                      trunk_mode=mode)
    if not job.ok or "OK crossbw" not in job.stdout:
        raise RuntimeError(f"{trunks} trunks failed\n{job.describe()}")
    line = next(ln for ln in job.stdout.splitlines() if ln.startswith("RESULT crossbw"))
    moved = [wan_bytes(lab, fe) - b for fe, b in zip(fes, before)]
    total = sum(moved) or 1
    return float(line.split()[3]), [m / total for m in moved]


def main(argv):
    prefix = os.path.abspath(argv[1]) if len(argv) > 1 else os.path.join(ROOT, "build", "install")
    repeats = int(argv[2]) if len(argv) > 2 else 3
    mode = argv[3] if len(argv) > 3 else "destination"
    wan_mbit = int(argv[4]) if len(argv) > 4 else 400
    msg_bytes = int(argv[5]) if len(argv) > 5 else MESSAGE_BYTES
    work = os.path.join("/tmp", f"trunk-bench-{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    crossbw = os.path.join(work, "crossbw")
    subprocess.run([f"{prefix}/bin/mpicc", "-O2", "-o", crossbw, os.path.join(HERE, "crossbw.c")], check=True)
    runs = []
    name = f"tb{os.getpid() % 100000}"
    with Lab(topology.from_table(trunk_table(wan_mbit=wan_mbit), "trunkbench.py", name)) as lab:
        jobs = GridJobs(lab, prefix, work)
        for r in range(repeats):
            for k in TRUNKS:
                mbs, shares = one_run(jobs, crossbw, k, mode, msg_bytes)
                runs.append((k, r, mbs, shares))
                print(f"# run {r} trunks {k}: {mbs:.1f} MB/s, front-end shares "
                      + " ".join(f"{s:.2f}" for s in shares), flush=True)
    base = statistics.median(m for k, _, m, _ in runs if k == 1)
    print(f"\nPC-GC all-to-all through p's relays ({mode} mode), {wan_mbit} Mbit/s WAN, 4+4 ranks, "
          f"medians of {repeats}")
    print(f"{'trunks':>6}  {'MB/s':>7}  {'vs K x 1 trunk':>14}  front-end shares of the WAN bytes")
    for k in TRUNKS:
        mine = [(m, s) for kk, _, m, s in runs if kk == k]
        med = statistics.median(m for m, _ in mine)
        shares = [statistics.median(s[i] for _, s in mine) for i in range(FRONTENDS)]
        print(f"{k:>6}  {med:7.1f}  {med / (k * base):14.2f}  " + " ".join(f"{s:.2f}" for s in shares))
    print("\ncsv:mode,trunks,repeat,mbytes_per_s," + ",".join(f"fe{i + 1}_share" for i in range(FRONTENDS)))
    for k, r, m, s in runs:
        print(f"csv:{mode},{k},{r},{m:.1f}," + ",".join(f"{x:.3f}" for x in s))


if __name__ == "__main__":
    main(sys.argv)
