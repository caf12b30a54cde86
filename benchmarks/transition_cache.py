"""How often a thread's step repeats its short vector: what a transition cache would save (issue 25).

LTSmin's PINS layer caches each transition group by its *short vector*, the parts of the state the group reads
and writes. For a movers thread step those are the thread, the globals, the heap and the thread's own stack (a
step that reads another thread's stack, ``join`` or ``is_alive``, would need that stack too). This script runs a
full search of a model over ``TransitionSystem.successors`` (the plain search's hot path) and counts, over all
transitions, how many short vectors are distinct and how often a step's short vector was met before: the hit
rate a cache of thread steps by short vector would have, and its size.

    python benchmarks/transition_cache.py [--shapes filter,monitor] [--granularity access,statement]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import shapes  # noqa: E402  (benchmarks/shapes.py: the models)

from movers.checker import compile_source  # noqa: E402
from movers.semantics.system import TransitionSystem  # noqa: E402


def short_vectors(source: str, granularity: str) -> dict[str, int]:
    """The full search's states and transitions, the distinct short vectors of its thread steps, the steps whose
    vector was met before, and the transitions whose moving thread is unknown (a step that changed others)."""
    ts = TransitionSystem(compile_source(source, "model.py", granularity))
    s0 = ts.initial()
    seen, todo = {s0}, [s0]
    vectors: set[tuple] = set()
    transitions = hits = unknown = 0
    while todo:
        s = todo.pop()
        both = ts.successors(s)
        pairs = list(zip(both[0], both[1], strict=True)) if both is not None else [(o.state, None) for o in ts.steps(s)]
        for x, t in pairs:
            if x is None:
                continue
            transitions += 1
            if t is None:
                unknown += 1
            else:
                v = (t, s[0], s[1], s[2][t])
                if v in vectors:
                    hits += 1
                else:
                    vectors.add(v)
            if x not in seen:
                seen.add(x)
                todo.append(x)
    return {"states": len(seen), "transitions": transitions, "vectors": len(vectors), "hits": hits,
            "unknown": unknown}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="filter,monitor")
    ap.add_argument("--granularity", default="access,statement")
    args = ap.parse_args()
    print("| shape | granularity | states | transitions | distinct short vectors | hit rate |")
    print("|---|---|---:|---:|---:|---:|")
    for name in args.shapes.split(","):
        size = shapes.SHAPES[name][5]
        for g in args.granularity.split(","):
            r = short_vectors(shapes.SHAPES[name][2](*size), g)
            rate = r["hits"] / r["transitions"] if r["transitions"] else 0.0
            print(f"| {name} {size} | {g} | {r['states']:,} | {r['transitions']:,} | {r['vectors']:,} | {rate:.2f} |")


if __name__ == "__main__":
    main()
