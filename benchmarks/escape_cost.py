"""The per-state cost of dynamic escape analysis (Dwyer et al., papers/002, section 5.2 and section 8:
"dynamic escape analysis in Bogor is so cheap ...").

For each model, the states the full search stores are taken as a sample; for each state we time

- ``scan``: the whole reachability scan ``escape.Locality`` can do in a state (the objects reachable from
  the globals, then from every thread's frames), which bounds what Algorithm 3 pays per state;
- ``expand``: the full search's work per state (``ts.steps``: every enabled thread's next step),

and print microseconds per state and their ratio. Run: ``python benchmarks/escape_cost.py [model.py ...]``
(default: the examples, and Independent Work-like models at 3 and 5 threads).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from movers.analysis.escape import Locality  # noqa: E402
from movers.checker import Checker, load  # noqa: E402
from movers.search.options import Limits, Options  # noqa: E402
from movers.semantics.system import TransitionSystem  # noqa: E402


def sample(program: Any, limit: int = 5000) -> list[Any]:
    checker = Checker(program, Options("none", "dfs", Limits(max_states=limit)))
    checker.run()
    return list(checker.last_search.stored)[:limit]


def per_state(fn: Any, states: list[Any], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for s in states:
            fn(s)
        best = min(best, time.perf_counter() - t0)
    return best / max(len(states), 1) * 1e6


def measure(name: str, source: str) -> tuple[str, int, float, float, float]:
    program = load(source=source)
    ts = TransitionSystem(program)
    states = sample(program)

    def scan(s: Any) -> None:
        loc = Locality(ts, s)
        loc.shared  # noqa: B018 (the walk from the globals)
        for t in range(len(s[2])):
            if s[2][t]:
                loc.private(t)

    heap = sum(len(s[1]) for s in states) / max(len(states), 1)
    return name, len(states), heap, per_state(scan, states), per_state(ts.steps, states)


def main(argv: list[str]) -> None:
    from test_ample import independent_work

    models: list[tuple[str, str]] = []
    if argv:
        models = [(Path(a).name, Path(a).read_text()) for a in argv]
    else:
        models = [(p.name, p.read_text()) for p in sorted((ROOT / "examples").glob("*.py"))]
        models += [(f"independent_work({n}, 3)", independent_work(n, 3)) for n in (3, 5)]
    print("| model | states sampled | mean heap objects | scan µs/state | expand µs/state | scan/expand |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, source in models:
        n, count, heap, scan, expand = measure(name, source)
        print(f"| {n} | {count} | {heap:.1f} | {scan:.1f} | {expand:.1f} | {scan / expand:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
