"""How often the fast path (src/movers/lang/codegen.py) hands a step back to the closures, per model.

    python benchmarks/fallbacks.py [MODEL.py ...] [--shapes] [--reduction none] [--granularity access]

``--shapes`` adds the issue's shapes this script carries (``SHAPES``: dining philosophers keeping lock
references in locals, with ``with first:`` and with ``first.acquire()``; the counter with an ``@invariant``
over module constants, and without it), written to ``benchmarks/results/models/`` (gitignored).

``--time BEFORE`` times each model instead (``--reduction``, at both granularities): CPU time of
``movers.check`` in fresh processes, this tree's ``src/`` against the ``src/`` of the working tree BEFORE
(e.g. ``git worktree add --detach ../base main``), interleaved, median of ``--repeat``; the state counts of
the two must agree.

For each model, one search with the checker's options, counting (by wrapping the transition system's methods
in this process only; the engine itself is not instrumented):

- ``states twice``: states whose ``successors`` (the plain search's one call per thread, all generated code)
  gave up, so that ``steps`` computed their successors again (the issue's "states computed twice");
- ``closure steps``: steps run on the closures (``_run_closures``), per transition of the search;
- ``slow invariants``: invariant evaluations that ran a frame on the closures (``call``), of all checks.

A count is exact, not timed: run it anywhere. Compare two builds by running it with each one's ``src/``
first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import movers
from movers.instrument import properties
from movers.semantics import system

HERE = Path(__file__).resolve().parent

_DINING = """\
import threading

N = 4
ROUNDS = 2
forks = [threading.Lock() for _ in range(N)]
eating = [False] * N


def philosopher(i):
    first = forks[i]
    second = forks[(i + 1) % N]
    if i == N - 1:
        first, second = second, first
    for r in range(ROUNDS):
        BODY


ps = [threading.Thread(target=philosopher, args=(i,)) for i in range(N)]
for k in range(N):
    ps[k].start()
for k in range(N):
    ps[k].join()
assert not any(eating)
"""
_WITH = """with first:
            with second:
                eating[i] = True
                assert not eating[(i + 1) % N] and not eating[(i - 1) % N], "neighbours eat together"
                eating[i] = False"""
_ACQUIRE = """first.acquire()
        second.acquire()
        eating[i] = True
        assert not eating[(i + 1) % N] and not eating[(i - 1) % N], "neighbours eat together"
        eating[i] = False
        second.release()
        first.release()"""

# The shapes 3 and 4 (docs of issue 25), as models.
SHAPES = {
    "dining_locals_with": _DINING.replace("BODY", _WITH),
    "dining_locals_acquire": _DINING.replace("BODY", _ACQUIRE),
    "counter_invariant": """\
import threading
from movers.lang import invariant

K = 5
L = 3
m = threading.Lock()
count = 0
fin = 0


@invariant
def total():
    return fin < K or count == K * L


def worker():
    global count, fin
    for i in range(L):
        with m:
            count += 1
    with m:
        fin += 1


workers = [threading.Thread(target=worker) for k in range(K)]
for k in range(K):
    workers[k].start()
for k in range(K):
    workers[k].join()
""",
}


SHAPES["counter_no_invariant"] = SHAPES["counter_invariant"].replace("@invariant\n", "")


def shape_files() -> list[Path]:
    """``SHAPES`` written to ``benchmarks/results/models/``."""
    out = HERE / "results" / "models"
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in SHAPES.items():
        p = out / f"{name}.py"
        p.write_text(text)
        paths.append(p)
    return paths


def count(model: Path, **kw: Any) -> dict[str, Any]:
    """The counts of one search of ``model`` (``movers.check``'s options in ``kw``)."""
    ts = system.TransitionSystem
    where: dict[str, int] = {}
    n: dict[str, Any] = {"succ": 0, "succ_none": 0, "closures": 0, "inv_calls": 0, "inv_checks": 0}
    real_succ, real_closures, real_call = ts.successors, ts._run_closures, ts.call
    real_check = properties.Checked.check_state

    def successors(self: Any, state: Any) -> Any:
        n["succ"] += 1
        out = real_succ(self, state)
        n["succ_none"] += out is None
        return out

    def closures(self: Any, state: Any, t: int, *a: Any) -> Any:
        n["closures"] += 1
        top = state[2][t][-1]
        where[top[0].nodes[top[1]].source] = where.get(top[0].nodes[top[1]].source, 0) + 1
        return real_closures(self, state, t, *a)

    def call(self: Any, *a: Any) -> Any:
        n["inv_calls"] += 1
        return real_call(self, *a)

    def check_state(self: Any, state: Any) -> Any:
        n["inv_checks"] += len(self.invariants)
        return real_check(self, state)

    check_state.checks_nothing = getattr(real_check, "checks_nothing", False)  # type: ignore[attr-defined]
    ts.successors, ts._run_closures, ts.call = successors, closures, call  # type: ignore[method-assign]
    properties.Checked.check_state = check_state  # type: ignore[method-assign]
    try:
        r = movers.check(model.read_text(), **kw)
    finally:
        ts.successors, ts._run_closures, ts.call = real_succ, real_closures, real_call  # type: ignore[method-assign]
        properties.Checked.check_state = real_check  # type: ignore[method-assign]
    n["states"], n["transitions"] = r.stats.states, r.stats.transitions
    n["verdict"] = r.verdict
    n["where"] = sorted(where.items(), key=lambda kv: -kv[1])
    return n


_CHILD = """
import gc, json, sys, time
import movers
src = open(sys.argv[1]).read()
movers.check(src, max_states=1)  # compilation, not measured
gc.collect()
t = time.process_time()
r = movers.check(src, reduction=sys.argv[2], granularity=sys.argv[3])
print(json.dumps([time.process_time() - t, r.stats.states]))
"""


def timed(model: Path, src: Path, reduction: str, granularity: str) -> tuple[float, int]:
    """CPU seconds and states of one search of ``model`` in a fresh process with ``src`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, "-c", _CHILD, str(model.resolve()), reduction, granularity],
                         capture_output=True, text=True, env=env, check=True)
    t, n = json.loads(out.stdout.strip().splitlines()[-1])
    return t, n


def compare(models: list[Path], before: Path, repeat: int, reduction: str) -> None:
    """The ``--time`` table: before and after, interleaved, per model and granularity."""
    print("| model | granularity | states | before (s) | after (s) | speed-up |")
    print("|---|---|---:|---:|---:|---:|")
    for model in models:
        for gran in ("access", "statement"):
            runs: dict[Path, list[float]] = {before / "src": [], HERE.parent / "src": []}
            states = set()
            for _ in range(repeat):
                for src, times in runs.items():
                    t, n = timed(model, src, reduction, gran)
                    times.append(t)
                    states.add(n)
            if len(states) != 1:
                raise SystemExit(f"{model}: the two builds store different numbers of states: {states}")
            b, a = (statistics.median(v) for v in runs.values())
            print(f"| {model.stem} | {gran} | {states.pop():,} | {b:.2f} | {a:.2f} | {b / a:.2f}x |", flush=True)


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "0/0"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--shapes", action="store_true", help="also the shapes of SHAPES")
    ap.add_argument("--reduction", default="none")
    ap.add_argument("--granularity", default="access")
    ap.add_argument("--max-states", type=int, default=2_000_000)
    ap.add_argument("--nodes", action="store_true", help="also the statements run most on the closures")
    ap.add_argument("--time", type=Path, metavar="BEFORE", help="time against the working tree BEFORE instead")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    models = [*args.models, *(shape_files() if args.shapes else [])]
    if args.time is not None:
        compare(models, args.time, args.repeat, args.reduction)
        return 0
    print("| model | states | verdict | states twice | closure steps | slow invariants |")
    print("|---|---|---|---|---|---|")
    for model in models:
        n = count(model, reduction=args.reduction, granularity=args.granularity, max_states=args.max_states)
        print(f"| {model.stem} | {n['states']} | {n['verdict']} | {_pct(n['succ_none'], n['succ'])} "
              f"| {_pct(n['closures'], n['transitions'])} | {_pct(n['inv_calls'], n['inv_checks'])} |")
        if args.nodes:
            for source, k in n["where"][:6]:
                print(f"    {k:8d}  {source!r}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
