"""A baseline for throughput: the lock-protected counter of ``examples/counter_bench.py`` as a hand-written
successor function over flat tuples, explored by a minimal depth-first search, in pure Python.

This is what the pure-Python checkers on PyPI do (the user writes the successor function by hand), so it
bounds what a pure-Python checker can reach on this machine *in the same run*: movers' states/s is
reported as a ratio to it, which is meaningful on a shared, noisy machine where absolute numbers are not.

    python benchmarks/baseline.py [--counter K,L] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

# Worker program counters: 0 loop header, 1 acquire, 2 count += 1, 3 release, 4 done.
# Checker: 0..K-1 join worker k, K acquire, K+1 assert, K+2 release, K+3 done.


def successors(state: tuple, K: int, L: int) -> list[tuple]:
    pcs, its, count, owner = state[0], state[1], state[2], state[3]
    out = []
    for t in range(K + 1):
        pc = pcs[t]
        if t < K:
            if pc == 0:
                if its[t] < L:
                    out.append((pcs[:t] + (1,) + pcs[t + 1:], its, count, owner))
                else:
                    out.append((pcs[:t] + (4,) + pcs[t + 1:], its, count, owner))
            elif pc == 1 and owner is None:
                out.append((pcs[:t] + (2,) + pcs[t + 1:], its, count, t))
            elif pc == 2:
                out.append((pcs[:t] + (3,) + pcs[t + 1:], its, count + 1, owner))
            elif pc == 3:
                it = its[:t] + (its[t] + 1,) + its[t + 1:]
                out.append((pcs[:t] + (0,) + pcs[t + 1:], it, count, None))
        else:
            if pc < K and pcs[pc] == 4:
                out.append((pcs[:t] + (pc + 1,) + pcs[t + 1:], its, count, owner))
            elif pc == K and owner is None:
                out.append((pcs[:t] + (K + 1,) + pcs[t + 1:], its, count, t))
            elif pc == K + 1:
                assert count == K * L
                out.append((pcs[:t] + (K + 2,) + pcs[t + 1:], its, count, owner))
            elif pc == K + 2:
                out.append((pcs[:t] + (K + 3,) + pcs[t + 1:], its, count, None))
    return out


def explore(K: int, L: int) -> tuple[int, float]:
    init = ((0,) * (K + 1), (0,) * K, 0, None)
    visited = {init}
    stack = [init]
    gc.disable()
    start = time.perf_counter()
    while stack:
        s = stack.pop()
        for n in successors(s, K, L):
            if n not in visited:
                visited.add(n)
                stack.append(n)
    seconds = time.perf_counter() - start
    gc.enable()
    return len(visited), seconds


def movers_run(K: int, L: int) -> tuple[int, float]:
    import movers

    src = (HERE.parent / "examples" / "counter_bench.py").read_text()
    src = src.replace("K = 3", f"K = {K}").replace("L = 4", f"L = {L}")
    r = movers.check(src)
    return r.stats.states, r.stats.seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--counter", default="3,10", help="K,L (default 3,10)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    K, L = (int(x) for x in args.counter.split(","))
    base, ours = [], []
    for _ in range(args.repeat):  # interleaved, so that both see the same machine
        n_b, s_b = explore(K, L)
        n_m, s_m = movers_run(K, L)
        base.append(n_b / s_b)
        ours.append(n_m / s_m)
    b, m = statistics.median(base), statistics.median(ours)
    print(f"counter K={K} L={L}: hand-written baseline {n_b:,} states, {b:,.0f} states/s; "
          f"movers {n_m:,} states, {m:,.0f} states/s; ratio movers/baseline {m / b:.2f} "
          f"(median of {args.repeat}, interleaved)")


if __name__ == "__main__":
    main()
