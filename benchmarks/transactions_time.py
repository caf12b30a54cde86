"""``--reduction transactions`` against ``none`` in time, and against an older build of itself.

    python benchmarks/transactions_time.py --before ../base [--repeat 3] [--reductions transactions,optimistic]

For each model (the unrolled counter of ``baseline.py``, ``dwyer_replicated_workers`` and its scaled
variants of ``reductions_time.py``), in fresh processes, interleaved, median of ``--repeat``: the CPU time of
``movers.check`` (``fallbacks.py``'s ``timed``: compilation not measured) under ``none`` with this tree's
``src/``, and under each reduction with the ``src/`` of the working tree ``--before`` (e.g. ``git worktree
add --detach ../base main``) and with this tree's. The two builds must store the same number of states. The
ratio to ``none`` below 1: the reduction reaches its verdict in less CPU than ``none``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from dwyer import variant  # noqa: E402
from fallbacks import timed  # noqa: E402
from reductions_time import UNROLLED  # noqa: E402
from run import EXAMPLES  # noqa: E402

HERE = Path(__file__).resolve().parent


def models() -> list[Path]:
    out = [UNROLLED] if UNROLLED.exists() else []
    out.append(EXAMPLES / "dwyer_replicated_workers.py")
    out.append(variant(EXAMPLES / "dwyer_replicated_workers.py", {"WORKERS": 3}))
    out.append(variant(EXAMPLES / "dwyer_readers_writers.py", {"READERS": 3}))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--before", type=Path, required=True, help="the working tree to compare with")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--reductions", default="transactions")
    ap.add_argument("--granularity", default="access")
    args = ap.parse_args(argv)
    mine, old = HERE.parent / "src", args.before.resolve() / "src"
    reductions = args.reductions.split(",")
    print("| model | none: states, CPU s | reduction | states | before: CPU s (÷ none) | after: CPU s (÷ none) |")
    print("|---|---:|---|---:|---:|---:|")
    for model in args.models or models():
        runs: dict[tuple[str, Path], list[float]] = {("none", mine): []}
        for r in reductions:
            runs[(r, old)] = []
            runs[(r, mine)] = []
        states: dict[str, set[int]] = {}
        for _ in range(args.repeat):
            for (r, src), times in runs.items():
                t, n = timed(model, src, r, args.granularity)
                times.append(t)
                states.setdefault(r, set()).add(n)
        med = {k: statistics.median(v) for k, v in runs.items()}
        base, none_states = med[("none", mine)], min(states["none"])
        for r in reductions:
            if len(states[r]) != 1:
                raise SystemExit(f"{model}: the two builds store different numbers of states: {states[r]}")
            b, a = med[(r, old)], med[(r, mine)]
            print(f"| {model.stem} | {none_states:,}, {base:.2f} | {r} | {min(states[r]):,} | {b:.2f} ({b / base:.2f}) "
                  f"| {a:.2f} ({a / base:.2f}) |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
