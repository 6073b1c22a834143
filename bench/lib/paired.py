"""Paired comparison of crossmpi with a peer over a benchmark's interleaved repeats.

The benchmark scripts run every MPI in turn within each repeat, so repeat i of crossmpi
and repeat i of the peer saw nearly the same load on the machine. On the 2-core VMs the
benchmarks run on, a cell's median moves by several percent from one run to the next,
so a median ratio of 0.99 or 1.01 says little on its own. A one-sided sign test over
the repeats tells a tie from a difference: crossmpi is *slower* when it lost more of the
paired repeats than a fair coin would plausibly lose (probability below LEVEL), *faster*
in the mirror case, and the cell is a *tie* otherwise. With 5 repeats only 5 of 5 is
significant (1/32 = 0.031); with 9, 8 of 9 (0.020).
"""
from math import comb

LEVEL = 0.05


def tail(k, n):
    """The probability that at least k of n fair coin flips come up heads."""
    return sum(comb(n, i) for i in range(k, n + 1)) / 2**n


def compare(mine, theirs, bound=1.0):
    """Compares crossmpi's values `mine` with `bound` times the peer's `theirs` (both
    {repeat: value}, lower is better) over the repeats both have. Returns (verdict,
    text): verdict is "slower", "faster" or "tie"; text says how many paired repeats
    crossmpi lost and the test's probability, e.g. "4/5 slower, p=0.19"."""
    pairs = [(mine[r], theirs[r]) for r in sorted(mine) if r in theirs]
    slower = sum(1 for x, y in pairs if x > bound * y)
    faster = sum(1 for x, y in pairs if x < bound * y)
    decided = slower + faster  # exact equality counts for neither side
    p_slower = tail(slower, decided) if decided else 1.0
    p_faster = tail(faster, decided) if decided else 1.0
    if p_slower < LEVEL:
        verdict, p = "slower", p_slower
    elif p_faster < LEVEL:
        verdict, p = "faster", p_faster
    else:
        verdict, p = "tie", min(p_slower, p_faster)
    return verdict, f"{slower}/{len(pairs)} slower, p={p:.2f}"


if __name__ == "__main__":
    # Self-check of the test's arithmetic (run: python3 bench/lib/paired.py).
    assert tail(5, 5) == 1 / 32 and tail(0, 5) == 1.0 and abs(tail(8, 9) - 10 / 512) < 1e-12
    assert compare({i: 2.0 for i in range(5)}, {i: 1.0 for i in range(5)})[0] == "slower"
    assert compare({i: 1.0 for i in range(5)}, {i: 2.0 for i in range(5)})[0] == "faster"
    lost4 = {0: 1.1, 1: 1.1, 2: 1.1, 3: 1.1, 4: 0.9}
    assert compare(lost4, {i: 1.0 for i in range(5)}) == ("tie", "4/5 slower, p=0.19")
    assert compare({i: 1.2 for i in range(5)}, {i: 1.0 for i in range(5)}, bound=1.25)[0] == "faster"
    print("paired: ok")
