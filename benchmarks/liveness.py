"""Liveness under the ample-set reductions (issue 26): states stored and CPU time of ``--liveness`` with
``dwyer-d`` and ``dwyer-s``, as ratios of ``--reduction none``'s in the same round.

    python benchmarks/liveness.py [--repeat 3] [--out benchmarks/results/liveness.md]

Models: each ``examples/liveness_*.py`` under the property its header lists first and weak fairness, and
``local_work`` (below): three threads that compute on their own lists between critical sections, with an LTL
response formula. CPU seconds are ``time.process_time`` around ``movers.check`` (after a warm-up run of each
model: compiled code is cached), each the median of ``--repeat`` rounds; within a round every model runs under
every reduction once, in a rotating order, so that the three share the machine's load alike. Writes a
Markdown table (printed too).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

import movers  # noqa: E402

REDUCTIONS = ("none", "dwyer-d", "dwyer-s")

# Each worker fills a list of its own (steps the ample set takes alone), then enters the critical section; the
# formula asks that a worker who wants the lock eventually gets it.
LOCAL_WORK = """
from movers.lang import *
import threading

m = threading.Lock()
want = [False, False, False]
inside = False

def worker(me):
    global inside
    for _ in range(2):
        work = []
        for i in range(ROUNDS):
            work.append(i * i % 7)
        want[me] = True
        with m:
            inside = True
            want[me] = False
            inside = False

@predicate
def someone_wants():
    return want[0] or want[1] or want[2]

@predicate
def someone_inside():
    return inside

ltl("[] (someone_wants -> <> someone_inside)")
for i in range(3):
    threading.Thread(target=worker, args=(i,)).start()
"""


def models() -> list[tuple[str, str, str]]:
    """(name, source, property)."""
    out = []
    for path in sorted((ROOT / "examples").glob("liveness_*.py")):
        text = path.read_text()
        prop = re.search(r"^# Liveness (\w+):", text, re.M)
        assert prop is not None
        out.append((path.stem, text, prop.group(1)))
    out.append(("local_work", LOCAL_WORK.replace("ROUNDS", "6"), "ltl"))
    return out


def measure(source: str, prop: str, reduction: str) -> tuple[float, int, str]:
    t = time.process_time()
    r = movers.check(source, liveness=prop, fairness="weak", reduction=reduction)
    return time.process_time() - t, r.stats.states, r.verdict


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "liveness.md")
    args = ap.parse_args()
    table = models()
    cpu: dict[tuple[str, str], list[float]] = {}
    states: dict[tuple[str, str], int] = {}
    verdicts: dict[tuple[str, str], str] = {}
    for _name, source, prop in table:  # warm up: the first check of a model compiles it
        measure(source, prop, "none")
    for k in range(args.repeat):
        for name, source, prop in table:
            for red in REDUCTIONS[k % len(REDUCTIONS):] + REDUCTIONS[:k % len(REDUCTIONS)]:
                secs, n, verdict = measure(source, prop, red)
                cpu.setdefault((name, red), []).append(secs)
                states[name, red], verdicts[name, red] = n, verdict
    lines = ["| model | property | verdict | none states | none CPU s | "
             + " | ".join(f"{r} states (ratio) | {r} CPU (ratio)" for r in REDUCTIONS[1:]) + " |",
             "|---|---|---|---|---|" + "---|---|" * (len(REDUCTIONS) - 1)]
    for name, _, prop in table:
        base_n, base_t = states[name, "none"], statistics.median(cpu[name, "none"])
        cells = []
        for red in REDUCTIONS[1:]:
            assert verdicts[name, red] == verdicts[name, "none"], (name, red)
            n, t = states[name, red], statistics.median(cpu[name, red])
            cells.append(f"{n} ({n / base_n:.2f}) | {t:.3f} ({t / base_t:.2f})")
        lines.append(f"| {name} | {prop} | {verdicts[name, 'none']} | {base_n} | {base_t:.3f} | "
                     + " | ".join(cells) + " |")
    text = ("# Liveness under the ample-set reductions\n\n"
            f"`python benchmarks/liveness.py --repeat {args.repeat}`: weak fairness; CPU is the median of "
            f"{args.repeat} rounds, each ratio against `none` in the same rounds.\n\n" + "\n".join(lines) + "\n")
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
