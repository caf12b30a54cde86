"""Flanagan's commit-atomicity benchmarks (papers/003, section 5, Figure 1): movers beside the paper.

    python benchmarks/atomicity.py [--models NAME ...] [--repeat 3] [--time-limit 300]
                                   [--out benchmarks/results/atomicity.md]

For each benchmark ``examples/atomicity_<name>.py`` at each thread count of Figure 1 (made by rewriting
its module-level line ``THREADS = n``), runs in a fresh process each:

- the standard search (``--reduction none``, no atomicity checking): the paper's left columns;
- the instrumented search (``--atomicity commit``): the paper's right columns;
- the instrumented search under each reduction that runs it (``INSTRUMENTED``), and ``--atomicity auto``
  under ``optimistic`` (reduction where it proves a block, the shadow store for the others): the smallest
  complete one is the "instrumented, best" column, and the last column says whether it stores fewer states
  than the standard ``none`` search (issue 9's goal: atomicity checking should cost nothing);
- the standard search under other reductions, for the "best reduction (standard)" column.

States are deterministic; seconds are CPU seconds (``time.process_time``), the median of ``--repeat``
runs. Writes a Markdown report (printed too).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXAMPLES = ROOT / "examples"
RESULTS = HERE / "results"
sys.path[:0] = [str(ROOT / "src"), str(HERE)]

from run import child_env  # noqa: E402

MARKER = "@@atomicity@@"
CHILD = """
import json, sys, time
from movers.checker import check
path, reduction, atomicity, limit = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
t0 = time.process_time()
r = check(path, reduction=reduction, atomicity=None if atomicity == "-" else atomicity, time_limit=limit)
cpu = time.process_time() - t0
out = r.to_json()
out["cpu"] = cpu
print(MARKER + json.dumps(out), flush=True)
""".replace("MARKER", repr(MARKER))

# Figure 1 of papers/003: (benchmark, threads) -> (standard states, instrumented states or None where SPIN
# ran out of memory).
PAPER: dict[tuple[str, int], tuple[int, int | None]] = {
    ("dekker", 2): (3104, 3601),
    ("acquire1", 2): (135, 278), ("acquire1", 3): (468, 1795), ("acquire1", 4): (4361, 20935),
    ("acquire1", 5): (16369, 118242), ("acquire1", 6): (62806, 658038), ("acquire1", 7): (299952, None),
    ("acquire2", 2): (3335, 8278), ("acquire2", 3): (12864, 58795), ("acquire2", 4): (153854, 714359),
    ("acquire2", 5): (541601, None),
    ("transaction", 2): (836, 4730), ("transaction", 3): (25557, 532457), ("transaction", 4): (826627, None),
    ("bluetooth", 2): (91, 116), ("bluetooth", 3): (568, 1187), ("bluetooth", 4): (4762, 16383),
    ("bluetooth", 5): (47163, 271111), ("bluetooth", 6): (527668, None),
}
# The buggy bluetooth goes wrong (the paper found the bug this way); the fixed one is its Figure 1 row.
FILES = {"dekker": "dekker", "acquire1": "acquire1", "acquire2": "acquire2", "transaction": "transaction",
         "bluetooth": "bluetooth_fixed"}
REDUCTIONS = ("optimistic", "transactions", "dwyer-da")
INSTRUMENTED = (("optimistic", "commit"), ("transactions", "commit"), ("dwyer-da", "commit"), ("optimistic", "auto"))


def variant(name: str, threads: int) -> Path:
    src_path = EXAMPLES / f"atomicity_{FILES[name]}.py"
    src = src_path.read_text()
    src, n = re.subn(r"^THREADS\s*=\s*\d+\s*$", f"THREADS = {threads}", src, count=1, flags=re.M)
    if n != 1:
        raise SystemExit(f"{src_path}: no module-level line 'THREADS = <int>' to rewrite")
    out = RESULTS / "models"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"atomicity_{FILES[name]}_T{threads}.py"
    path.write_text(src)
    return path


def run_once(model: Path, reduction: str, atomicity: str | None, limit: float, timeout: float) -> dict[str, Any]:
    argv = [sys.executable, "-c", CHILD, str(model), reduction, atomicity or "-", str(limit)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=child_env())
    except subprocess.TimeoutExpired:
        return {"verdict": "crash", "error": f"timed out after {timeout:g}s"}
    for line in proc.stdout.splitlines():
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):])
    tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
    return {"verdict": "crash", "error": f"exit {proc.returncode}: {tail}"}


def measure(model: Path, reduction: str, atomicity: str | None, args: argparse.Namespace) -> dict[str, Any]:
    runs = [run_once(model, reduction, atomicity, args.time_limit, args.time_limit * 2 + 60)
            for _ in range(args.repeat)]
    ok = [r for r in runs if "stats" in r]
    if not ok:
        return runs[0]
    row = dict(ok[0])
    row["cpu"] = statistics.median(r["cpu"] for r in ok)
    return row


def cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return ""
    if "stats" not in row:
        return f"{row.get('verdict')}: {row.get('error', '')}"
    states = f"{row['stats']['states']:,}"
    if row["verdict"] == "incomplete":
        return f">{states} (incomplete: {row.get('limit')})"
    if row["verdict"] == "violation":
        return f"{states} (violation: {row['violations'][0]['kind']})"
    if row["verdict"] == "error":
        return f"refused: {row.get('error', '')[:60]}"
    return states


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = sorted(FILES)
    ap.add_argument("--models", nargs="+", choices=names, default=names, metavar="NAME")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=300.0, help="seconds per run (default 300)")
    ap.add_argument("--max-threads", type=int, default=99, help="skip rows with more threads than this")
    ap.add_argument("--out", type=Path, default=RESULTS / "atomicity.md")
    args = ap.parse_args(argv)
    lines = [
        "# Commit-atomicity benchmarks: movers beside Figure 1 of papers/003",
        "",
        f"Generated by `python benchmarks/atomicity.py --repeat {args.repeat}` on {time.strftime('%Y-%m-%d %H:%M')}:"
        f" every run in a fresh process, CPU seconds are the median of {args.repeat}, time limit "
        f"{args.time_limit:g} s per run. The paper's numbers are SPIN's (states; '-' where SPIN ran out of "
        "memory).",
        "",
        "| benchmark | threads | paper standard | paper instrumented | movers `none` | movers `--atomicity commit` "
        "| instrumented / standard | instrumented, best | < `none`? | best reduction (standard) | CPU s: none / "
        "commit / instrumented best / standard best |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|---|---|",
    ]
    for name in args.models:
        for (bench, threads), (p_std, p_ins) in PAPER.items():
            if bench != name or threads > args.max_threads:
                continue
            model = variant(name, threads)
            print(f"{name} {threads} ...", file=sys.stderr, flush=True)
            std = measure(model, "none", None, args)
            ins = measure(model, "none", "commit", args)
            expected = ins.get("verdict") if ins.get("verdict") in ("ok", "violation") else None
            fast: tuple[str, dict[str, Any]] | None = None
            for red, mode in INSTRUMENTED:
                r = measure(model, red, mode, args)
                if r.get("verdict") in ("ok", "violation") and (expected is None or r["verdict"] == expected) and (
                        fast is None or r["stats"]["states"] < fast[1]["stats"]["states"]):
                    fast = (f"{mode}, {red}", r)
            best: tuple[str, dict[str, Any]] | None = None
            for red in REDUCTIONS:
                r = measure(model, red, None, args)
                if r.get("verdict") == std.get("verdict") and "stats" in r and (
                        best is None or r["stats"]["states"] < best[1]["stats"]["states"]):
                    best = (red, r)
            ratio = ""
            if ("stats" in std and "stats" in ins and std["stats"]["states"]
                    and ins["verdict"] not in ("error", "incomplete") and std["verdict"] != "incomplete"):
                ratio = f"{ins['stats']['states'] / std['stats']['states']:.2f}"
            below = ""
            if fast is not None and std.get("verdict") in ("ok", "violation"):
                below = "yes" if fast[1]["stats"]["states"] < std["stats"]["states"] else "**no**"
            cpu = " / ".join(f"{r['cpu']:.2f}" if "cpu" in r else ""
                             for r in (std, ins, fast[1] if fast else {}, best[1] if best else {}))
            lines.append(
                f"| {name} | {threads} | {p_std:,} | {f'{p_ins:,}' if p_ins else '-'} | {cell(std)} | {cell(ins)} "
                f"| {ratio} | {f'{cell(fast[1])} ({fast[0]})' if fast else ''} | {below} "
                f"| {f'`{best[0]}` {cell(best[1])}' if best else ''} | {cpu} |"
            )
    buggy = EXAMPLES / "atomicity_bluetooth.py"
    if buggy.exists():
        r = measure(buggy, "none", "commit", args)
        lines += ["", f"The buggy bluetooth (`examples/atomicity_bluetooth.py`) under `--atomicity commit`: {cell(r)}"
                  + (f": {r['violations'][0]['message']}" if r.get("violations") else ""), ""]
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
