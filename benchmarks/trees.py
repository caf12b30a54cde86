"""Two source trees against each other on benchmarks/shapes.py's models: the CPU of a plain full search
(``--reduction none``), before and after a change to the engine.

Each run is a fresh process with one tree's ``src`` first on ``PYTHONPATH``; the two trees alternate, ``--repeat``
times. A process compiles the model once unmeasured, then checks it ``--inner`` times and reports the least CPU
(``time.process_time``) of a whole check (compiling included): on a shared machine the least of a few is
steadier than one run. The figure per tree is the median over its processes, and the table gives after ÷
before. States, transitions and verdict must be the same in every run (the script stops if not).

    python benchmarks/trees.py BEFORE_SRC AFTER_SRC [--shapes filter,monitor] [--granularity access,statement]
                               [--size small|large] [--repeat 3] [--inner 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import shapes  # noqa: E402  (benchmarks/shapes.py: the models)

MARKER = "@@TREES@@"
CHILD = r"""
import sys, time, movers
model, granularity, inner = sys.argv[1], sys.argv[2], int(sys.argv[3])
movers.check(model, reduction="none", granularity=granularity, max_states=1)  # imports: not measured
best = None
for _ in range(inner):
    c0 = time.process_time()
    r = movers.check(model, reduction="none", granularity=granularity)
    cpu = time.process_time() - c0
    best = cpu if best is None else min(best, cpu)
print(MARKER, best, r.stats.states, r.stats.transitions, r.verdict)
""".replace("MARKER", repr(MARKER))


def once(src: str, model: Path, granularity: str, inner: int) -> tuple[float, tuple[str, ...]]:
    env = dict(os.environ, PYTHONPATH=src)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(model), granularity, str(inner)],
                          capture_output=True, text=True, env=env)
    lines = [x for x in proc.stdout.splitlines() if x.startswith(MARKER)]
    if not lines:
        raise SystemExit(f"{model.name} on {src} crashed:\n{proc.stderr[-2000:]}")
    fields = lines[0].split()
    return float(fields[1]), tuple(fields[2:])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", help="the src directory of the tree before the change")
    ap.add_argument("after", help="the src directory of the tree after it")
    ap.add_argument("--shapes", default="filter,monitor,counter,invariant,phil_locals")
    ap.add_argument("--granularity", default="access,statement")
    ap.add_argument("--size", choices=["small", "large"], default="large")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--inner", type=int, default=3)
    args = ap.parse_args(argv)
    print("| shape | granularity | states | before (s) | after (s) | after ÷ before |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.shapes.split(","):
            size = shapes.SHAPES[name][4 if args.size == "small" else 5]
            model = Path(tmp) / f"shape_{name}.py"
            model.write_text(shapes.SHAPES[name][2](*size))
            for granularity in args.granularity.split(","):
                cpu: dict[str, list[float]] = {"before": [], "after": []}
                graphs = set()
                for _ in range(args.repeat):
                    for which in ("before", "after"):
                        t, graph = once(getattr(args, which), model, granularity, args.inner)
                        cpu[which].append(t)
                        graphs.add(graph)
                if len(graphs) != 1:
                    raise SystemExit(f"{name} at {granularity} granularity: the trees differ: {sorted(graphs)}")
                b, a = statistics.median(cpu["before"]), statistics.median(cpu["after"])
                states = int(next(iter(graphs))[0])
                print(f"| {name} {size} | {granularity} | {states:,} | {b:.3f} | {a:.3f} | {a / b:.3f} |",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
