"""Thread symmetry under the ample-set reductions (issue 27, item 4): states stored and CPU time of ``none``,
``dwyer-d``, ``--symmetry threads`` alone and ``--symmetry threads`` with ``dwyer-d``, on the symmetric examples.

    python benchmarks/symmetry.py [--repeat 3] [--out benchmarks/results/symmetry.md]

Models: ``examples/symmetric_workers.py`` (four identical workers under one lock), ``symmetric_local_work.py``
(four identical workers with thread-local lists) and its bug twin. CPU seconds are ``time.process_time``
around ``movers.check`` (after a warm-up run of each model: compiled code is cached), each the median of
``--repeat`` rounds; within a round every model runs under every configuration once, in a rotating order, so
that they share the machine's load alike. Writes a Markdown table (printed too).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

import movers  # noqa: E402

MODELS = ("symmetric_workers", "symmetric_local_work", "symmetric_local_work_bug")
# (column, reduction, symmetry)
CONFIGS = (("none", "none", "off"), ("dwyer-d", "dwyer-d", "off"), ("symmetry", "none", "threads"),
           ("symmetry + dwyer-d", "dwyer-d", "threads"))


def measure(path: Path, reduction: str, symmetry: str) -> tuple[float, int, str]:
    t = time.process_time()
    r = movers.check(path, reduction=reduction, symmetry=symmetry)
    assert r.symmetry == symmetry, r.notes
    verdict = r.verdict + (f" ({r.violations[0].kind})" if r.violations else "")
    return time.process_time() - t, r.stats.states, verdict


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "symmetry.md")
    args = ap.parse_args()
    paths = {name: ROOT / "examples" / f"{name}.py" for name in MODELS}
    cpu: dict[tuple[str, str], list[float]] = {}
    states: dict[tuple[str, str], int] = {}
    verdicts: dict[tuple[str, str], str] = {}
    for path in paths.values():  # warm up: the first check of a model compiles it
        measure(path, "none", "off")
    for k in range(args.repeat):
        for name, path in paths.items():
            for col, red, sym in CONFIGS[k % len(CONFIGS):] + CONFIGS[:k % len(CONFIGS)]:
                secs, n, verdict = measure(path, red, sym)
                cpu.setdefault((name, col), []).append(secs)
                states[name, col], verdicts[name, col] = n, verdict
    lines = ["| model | verdict | " + " | ".join(f"{c[0]} states | {c[0]} CPU s" for c in CONFIGS) + " |",
             "|---|---|" + "---|---|" * len(CONFIGS)]
    for name in MODELS:
        assert len({verdicts[name, c[0]] for c in CONFIGS}) == 1, name
        cells = [f"{states[name, c[0]]:,} | {statistics.median(cpu[name, c[0]]):.3f}" for c in CONFIGS]
        lines.append(f"| {name} | {verdicts[name, 'none']} | " + " | ".join(cells) + " |")
    text = ("# Thread symmetry under the ample-set reductions\n\n"
            f"`python benchmarks/symmetry.py --repeat {args.repeat}`: access granularity, depth-first, exact store; "
            f"CPU is the median of {args.repeat} rounds (`time.process_time` around `movers.check`).\n\n"
            + "\n".join(lines) + "\n")
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
