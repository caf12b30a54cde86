"""Do the reductions win in time? Issue 10's criterion, measured: on every example and scaled example where
``none`` needs more than a second of CPU, ``optimistic`` and ``transactions`` should reach their verdict in
less CPU than ``none``.

    python benchmarks/reductions_time.py                    # every example and the scaled ones, median of 3
    python benchmarks/reductions_time.py --repeat 5 --threshold 0.5
    python benchmarks/reductions_time.py --granularity statement,access   # each model at both

Every ``examples/*.py`` (bug twins included) and the scaled variants below run once under ``none`` in a
fresh process (``run.py``'s ``run_once``); those over ``--threshold`` CPU seconds then run ``--repeat``
times under ``none`` and each of ``--reductions``. The table (CPU seconds, states, and each reduction's CPU
relative to ``none``: below 1 it wins) is printed and written to ``benchmarks/results/reductions_time.md``.
Each model runs at each ``--granularity`` (default ``access``, the checker's default), judged against
``none`` at the same granularity.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from dwyer import variant  # noqa: E402
from run import EXAMPLES, RESULTS, counter_variant, run_once, summarise  # noqa: E402

# Scaled examples: the module-level constants rewritten (dwyer.py's ``variant``), and the counter's sizes.
# (Models whose arrays are written out, such as the philosophers' forks, do not scale by a constant.)
SCALED: list[tuple[str, dict[str, int]]] = [
    ("dwyer_replicated_workers", {"WORKERS": 3}),
    ("dwyer_readers_writers", {"READERS": 3}),
    ("dwyer_bounded_buffer", {"BOUND": 4, "ITEMS": 3}),
    ("fq_counter", {"CALLS": 3}),
    ("symmetric_workers", {}),
]
COUNTERS = [(4, 4), (4, 5)]
UNROLLED = RESULTS / "models" / "counter_unrolled_K4_L3.py"  # baseline.py's model, when it has been written


def models() -> list[Path]:
    out = sorted(p for p in EXAMPLES.glob("*.py"))
    for name, consts in SCALED:
        if consts:
            out.append(variant(EXAMPLES / f"{name}.py", consts))
    out += [counter_variant(k, n) for k, n in COUNTERS]
    if UNROLLED.exists():
        out.append(UNROLLED)
    return out


def cpu(row: dict[str, Any]) -> float:
    return float(row.get("cpu_seconds") or 0.0)


def measure(paths: list[Path], reductions: list[str], repeat: int, threshold: float,
            time_limit: float, granularities: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in paths:
        for g in granularities:
            first = summarise(path, "none", "dfs", [run_once(path, "none", "dfs", None, time_limit, 3 * time_limit, g)],
                              g)
            print(f"{path.stem} ({g}): none {cpu(first):.2f} CPU s", file=sys.stderr)
            if cpu(first) <= threshold:
                continue
            for reduction in ["none", *reductions]:
                runs = [run_once(path, reduction, "dfs", None, time_limit, 3 * time_limit, g) for _ in range(repeat)]
                rows.append(summarise(path, reduction, "dfs", runs, g))
    return rows


def table(rows: list[dict[str, Any]], reductions: list[str], repeat: int, threshold: float) -> str:
    by_model: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for r in rows:
        by_model.setdefault((r["model"], r["granularity"]), {})[r["reduction"]] = r
    head = "| model | granularity | none: states, CPU s | " + " | ".join(reductions) + " |"
    lines = [f"Median of {repeat} runs, fresh processes, CPU seconds of the check (`time.process_time`); the models "
             f"where `none` took more than {threshold:g} CPU s. Each reduction: states, CPU s, and (CPU relative "
             "to `none`): below 1, it reaches its verdict sooner.", "", head,
             "|---|---|---:|" + "---:|" * len(reductions)]
    for (model, granularity), cells in by_model.items():
        base = cells["none"]
        out = [model, granularity, f"{base.get('states', 0):,}, {cpu(base):.2f} s ({base['verdict']})"]
        for red in reductions:
            r = cells.get(red)
            if r is None or r.get("verdict") in ("crash", "error"):
                out.append(r.get("verdict", "-") if r else "-")
                continue
            ratio = cpu(r) / cpu(base) if cpu(base) else float("nan")
            mark = "" if r["verdict"] == base["verdict"] else f" ({r['verdict']})"
            out.append(f"{r.get('states', 0):,}, {cpu(r):.2f} s (**{ratio:.2f}**){mark}")
        lines.append("| " + " | ".join(out) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reductions", default="optimistic,transactions", help="comma-separated, besides none")
    ap.add_argument("--repeat", type=int, default=3, help="runs per model and reduction (default 3)")
    ap.add_argument("--threshold", type=float, default=1.0, help="CPU seconds of none above which a model "
                    "is measured (default 1)")
    ap.add_argument("--time-limit", type=float, default=300.0, help="movers.check's time limit per run")
    ap.add_argument("--granularity", default="access", help="comma-separated: access, statement or both "
                    "(default: access)")
    ap.add_argument("--out", type=Path, default=RESULTS / "reductions_time.md")
    args = ap.parse_args(argv)
    reductions = [r for r in args.reductions.split(",") if r]
    granularities = [g for g in args.granularity.split(",") if g]
    if not granularities or any(g not in ("access", "statement") for g in granularities):
        ap.error(f"--granularity wants access, statement or both, got {args.granularity!r}")
    rows = measure(models(), reductions, args.repeat, args.threshold, args.time_limit, granularities)
    text = table(rows, reductions, args.repeat, args.threshold)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("# Reductions against `none`, in time\n\n`python benchmarks/reductions_time.py`\n\n" + text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
