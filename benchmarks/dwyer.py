"""Dwyer et al.'s benchmarks (papers/002, section 8, Tables 1-2): movers' numbers beside the paper's.

    python benchmarks/dwyer.py [--models NAME ...] [--sizes default,paper,scaled] [--repeat 1]
                               [--granularity statement,access] [--time-limit 120] [--timeout 900]
                               [--out benchmarks/results/dwyer.md]

For each example ``examples/dwyer_*.py`` (at its default size and at the sizes listed in BENCHMARKS,
made by rewriting its module-level constants), runs ``none`` and every Dwyer strategy that is
registered in ``movers.reduce.REDUCTIONS`` (the others are skipped with a note, so the script works
while they land), at each ``--granularity`` (statement, the papers' steps, and access), each in a
fresh process through benchmarks/run.py's machinery, and writes a Markdown report to
benchmarks/results/dwyer.md (and prints it): states and CPU time per column beside the paper's states,
the paper's base/best factor and ours, and why a factor is or is not comparable. The bug twins
(``*_bug.py``) are run too: each strategy must report the kind that ``none`` reports.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "src"), str(HERE)]

from run import EXAMPLES, RESULTS, run_once, summarise  # noqa: E402

# The paper's columns, in its order, and the movers reduction that implements each one (issue 8).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("(B)", "none"),
    ("(S)", "dwyer-s"),
    ("(D)", "dwyer-d"),
    ("(DA)", "dwyer-da"),
    ("(SDA)", "dwyer-sda"),
    ("(WSL)", "dwyer-wsl"),
    ("(WSL^dom)", "dwyer-wsldom"),
    ("(LD)", "dwyer-ld"),
    ("(LD+WSL^dom)", "dwyer-ld+wsldom"),
)
STRATEGIES = tuple(name for _, name in COLUMNS)

GRANULARITY = (
    "Bogor's (B) counts bytecode-level transitions, so a statement such as `head = (head + 1) % bound` "
    "is several transitions, each field access an interleaving point; but it already aggregates the "
    "transitions that touch only local variables (the paper's reference [7]), and it has process "
    "symmetry. At `--granularity statement`, `none` takes one step per statement (shared accesses "
    "coarser than bytecode) and takes each statement as a step even where it touches only locals "
    "(local steps finer than (B)), with heap symmetry only: where the paper's saving comes from "
    "thread-local steps (Independent Work, Deadlock) our none/best factor is larger than the paper's, "
    "where it comes from lock-protected shared accesses (Bounded Buffer, Readers-Writers, Replicated "
    "Workers) it is smaller. `--granularity access` is close to (B) in both directions: a step performs "
    "at most one shared access (an interleaving point at each field, element or global access, as in "
    "bytecode), and statements that touch only locals run inside the step before them (Bogor's "
    "aggregation). It still has no process symmetry, and our models are rebuilt from the text, so "
    "absolute state counts compare only where the result is structural (Independent Work's 2 states "
    "under (DA) and (SDA)), and the factors in direction and order of magnitude."
)

LOCKING = (
    "`dwyer-ld` and `dwyer-ld+wsldom` sit in the paper's (LD) and (LD+WSL^dom) rows, but they are not the "
    "paper's strategies: the paper's LD is Stoller's, with a static set of unshared objects (appendix D, "
    "section 6.1), while ours runs on top of the dynamic escape analysis and the storage avoidance of "
    "`dwyer-da`, as WSL does. On every example below that verifies, `dwyer-ld` stores exactly the states "
    "of `dwyer-wsl`, and `dwyer-ld+wsldom` those of `dwyer-wsldom`, where the paper's (LD) stores 2-4 times "
    "more than its (WSL): compare the (LD) rows with the paper's only as a variant beside it. And a "
    "locking strategy can store more states than `dwyer-da` alone: on the paper's Figure 6 as published "
    "(`examples/ldlock_figure6.py`, the lock handed to the constructor), `movers compare` gives 5 states "
    "for `dwyer-da` and 16 for each of `dwyer-wsl`, `dwyer-wsldom`, `dwyer-ld` and `dwyer-ld+wsldom` "
    "(38 for `none`). docs/reductions.md, \"Known weaknesses of the locking strategies\", says why."
)


@dataclass(frozen=True)
class Size:
    """One configuration of a model: its module-level constants rewritten to ``consts``."""

    label: str  # "default", "paper" or "scaled"
    consts: dict[str, int]
    threads: int  # threads of the model, main included (the paper's "Threads")
    only: tuple[str, ...] = ()  # run only these strategies (sizes where `none` would not finish)
    note: str = ""


@dataclass(frozen=True)
class Benchmark:
    title: str  # the paper's row
    file: str  # examples/<file>; its twin is <stem>_bug.py
    paper_threads: int
    paper: dict[str, int]  # the paper's states per column (columns it does not report are absent)
    sizes: tuple[Size, ...]
    note: str = ""
    comparable: str = "no: step granularity (see above)"


SCALED = "the paper's text: (DA) stays at 2 states for any number of threads and list length"

# Tables 1-2 (states; the paper's "<", "same as the column to the left", resolved).
BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark(
        "Independent Work 1", "dwyer_independent_work1.py", 3,
        {"(B)": 6670, "(S)": 565, "(D)": 230, "(DA)": 2, "(SDA)": 2},
        (
            Size("default", {}, 3),
            Size("paper", {"LENGTH": 9}, 3, note="lists of 9 nodes: about the paper's 22 objects"),
            Size("scaled", {"THREADS": 4, "LENGTH": 9}, 5, ("dwyer-da", "dwyer-sda"), SCALED),
            Size("scaled", {"THREADS": 7, "LENGTH": 20}, 8, ("dwyer-da", "dwyer-sda"), SCALED),
        ),
        note="The paper ran no locking strategy here (no locks). The text of section 2.3 gives 6770 states "
        "for version 2 under (B), Table 1 gives 6670 for version 1 and 5810 for version 2.",
        comparable="(DA), (SDA): yes, 2 states; factors: no (step granularity)",
    ),
    Benchmark(
        "Independent Work 2", "dwyer_independent_work2.py", 3,
        {"(B)": 5810, "(S)": 5810, "(D)": 230, "(DA)": 2, "(SDA)": 2},
        (
            Size("default", {}, 3),
            Size("paper", {"LENGTH": 9}, 3, note="lists of 9 nodes"),
            Size("scaled", {"THREADS": 4, "LENGTH": 9}, 5, ("dwyer-da", "dwyer-sda"), SCALED),
            Size("scaled", {"THREADS": 7, "LENGTH": 20}, 8, ("dwyer-da", "dwyer-sda"), SCALED),
        ),
        note="(S) gets nothing: the lists are built by main and traversed by the Process.",
        comparable="(DA), (SDA): yes, 2 states; factors: no (step granularity)",
    ),
    Benchmark(
        "Deadlock", "dwyer_deadlock.py", 3,
        {"(B)": 142, "(S)": 142, "(D)": 113, "(DA)": 36, "(SDA)": 36},
        (Size("default", {}, 3), Size("paper", {"ROUNDS": 1}, 3, note="one round per thread")),
        note="The paper's program locks in opposite orders and deadlocks (Bogor counted its full state space); "
        "movers stops at the first violation, so the table is for the deadlock-free variant (same lock "
        "operations, one order) and the deadlock is the twin. The paper reports no locking strategy here.",
        comparable="no: a different program (deadlock-free) and step granularity",
    ),
    Benchmark(
        "Bounded Buffer", "dwyer_bounded_buffer.py", 3,
        {"(B)": 4641, "(S)": 4641, "(D)": 3713, "(DA)": 2473, "(SDA)": 2473,
         "(WSL)": 140, "(WSL^dom)": 81, "(LD)": 341, "(LD+WSL^dom)": 81},
        (Size("default", {}, 3, note="Figure 3 as published"),),
    ),
    Benchmark(
        "Readers Writers", "dwyer_readers_writers.py", 5,
        {"(B)": 313331, "(S)": 313331, "(D)": 103638, "(DA)": 79554, "(SDA)": 79554,
         "(WSL)": 20826, "(WSL^dom)": 18924, "(LD)": 86499, "(LD+WSL^dom)": 18924},
        (
            Size("default", {}, 4, note="2 readers, 1 writer"),
            Size("paper", {"WRITERS": 2}, 5, note="2 readers, 2 writers"),
        ),
        note="Rebuilt from the text (Lea's specific notification); one request per thread.",
    ),
    Benchmark(
        "Replicated Workers", "dwyer_replicated_workers.py", 4,
        {"(B)": 4594721, "(S)": 1344215, "(D)": 827763, "(DA)": 231219, "(SDA)": 231219,
         "(WSL)": 49354, "(WSL^dom)": 49354, "(LD)": 200947, "(LD+WSL^dom)": 36724},
        (
            Size("default", {}, 3, note="2 workers, 3 work items"),
            Size("paper", {"WORKERS": 3, "ITEMS": 2, "DEPTH": 0}, 4, note="3 workers, 2 work items"),
        ),
        note="A small version of the framework (our own Vector); far fewer states than the paper's.",
    ),
)


# -- models ------------------------------------------------------------------------------------------------


def variant(path: Path, consts: dict[str, int], out_dir: Path = RESULTS / "models") -> Path:
    """``path`` with its module-level lines ``NAME = <int>`` rewritten to ``consts`` (written to out_dir);
    ``path`` itself when there is nothing to rewrite."""
    if not consts:
        return path
    src = path.read_text()
    for name, value in consts.items():
        src, count = re.subn(rf"^{name}\s*=\s*\d+\s*$", f"{name} = {value}", src, count=1, flags=re.M)
        if count != 1:
            raise SystemExit(f"{path}: no module-level line '{name} = <int>' to rewrite")
    out_dir.mkdir(parents=True, exist_ok=True)
    tag = "_".join(f"{k}{v}" for k, v in sorted(consts.items()))
    out = out_dir / f"{path.stem}_{tag}.py"
    out.write_text(src)
    return out


def registered() -> list[str]:
    from movers.reduce import REDUCTIONS

    return [s for s in STRATEGIES if s in REDUCTIONS]


# -- running -----------------------------------------------------------------------------------------------


@dataclass
class Run:
    """The rows of one model at one size and granularity: reduction -> the row of benchmarks/run.py's
    ``summarise``."""

    bench: Benchmark
    size: Size
    granularity: str
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)


def measure(path: Path, reduction: str, args: argparse.Namespace, granularity: str) -> dict[str, Any]:
    runs = [
        run_once(path, reduction, "dfs", None, args.time_limit, args.timeout, granularity)
        for _ in range(args.repeat)
    ]
    return summarise(path, reduction, "dfs", runs, granularity)


def complete_ok(row: dict[str, Any] | None) -> bool:
    return bool(row) and row["verdict"] == "ok"


def factor(base: int | None, best: int | None) -> float | None:
    return base / best if base and best else None


def ours_best(rows: dict[str, dict[str, Any]]) -> tuple[str | None, int | None]:
    """The Dwyer strategy that stored fewest states on a complete, verified run."""
    done = [(r["states"], name) for name, r in rows.items() if name != "none" and complete_ok(r)]
    if not done:
        return None, None
    states, name = min(done)
    return name, states


def paper_best(bench: Benchmark) -> tuple[str, int]:
    # The last column with the fewest states: the paper names the combined strategy best on ties.
    column, states = min(reversed(list(bench.paper.items())), key=lambda kv: kv[1])
    return column, states


# -- output ------------------------------------------------------------------------------------------------


def states_cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return ""
    if row["verdict"] == "ok":
        return f"{row['states']:,}"
    if row["verdict"] == "incomplete":
        return f"> {row['states']:,} (incomplete)"
    if row["verdict"] == "violation":
        return f"{row['states']:,} (violation: {', '.join(row.get('kinds', []))})"
    return row["verdict"]


def num(v: float | None, fmt: str) -> str:
    return "" if v is None else format(v, fmt)


def size_text(size: Size) -> str:
    consts = ", ".join(f"{k}={v}" for k, v in size.consts.items()) or "as in the file"
    return f"{size.label}: {consts}" + (f" ({size.note})" if size.note else "")


def summary_table(results: list[Run]) -> list[str]:
    out = [
        "| example | size | granularity | threads (ours / paper) | paper (B) | paper best | paper factor "
        "| our `none` | our best | our factor | best's CPU / `none`'s | comparable |",
        "|---|---|---|---|---:|---|---:|---:|---|---:|---:|---|",
    ]
    for run in results:
        b = run.bench
        column, pbest = paper_best(b)
        base = run.rows.get("none")
        name, best = ours_best(run.rows)
        ours = factor(base["states"] if complete_ok(base) else None, best)
        cpu = cpu_ratio(run.rows.get(name) if name else None, base)
        # The paper measured one size: its numbers sit beside the default and paper sizes only.
        paper = (
            f"{b.paper['(B)']:,} | {pbest:,} {column} | {factor(b.paper['(B)'], pbest):,.1f}x"
            if run.size.label != "scaled" else "| | "
        )
        out.append(
            f"| {b.title} | {size_text(run.size)} | {run.granularity} | {run.size.threads} / {b.paper_threads} "
            f"| {paper} | {states_cell(base) or 'not run'} | {num(best, ',')} {('`' + name + '`') if name else ''} "
            f"| {num(ours, ',.1f')}{'x' if ours else ''} | {num(cpu, '.2f')} | {b.comparable} |"
        )
    return out


def cpu_ratio(row: dict[str, Any] | None, base: dict[str, Any] | None) -> float | None:
    """The row's CPU seconds relative to ``none``'s (time to verdict; below 1 the reduction is faster)."""
    if not row or not base or not complete_ok(row) or not complete_ok(base) or not base.get("cpu_seconds"):
        return None
    return float(row["cpu_seconds"]) / float(base["cpu_seconds"])


def detail_table(run: Run, strategies: list[str]) -> list[str]:
    b = run.bench
    out = [
        f"### {b.title}: `{b.file}`, {size_text(run.size)}, {run.granularity} granularity",
        "",
        "| paper column | reduction | paper states | our states | transitions | seconds | CPU s | CPU / `none` |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for column, name in COLUMNS:
        row = run.rows.get(name)
        if name not in strategies:
            ours = "not registered"
        elif row is None:
            ours = "not run at this size"
        else:
            ours = states_cell(row)
        paper = b.paper.get(column)
        transitions, seconds = (row.get("transitions"), row.get("seconds")) if row else (None, None)
        cpu = row.get("cpu_seconds") if row else None
        out.append(
            f"| {column} | `{name}` | {num(paper, ',') or 'not reported'} | {ours} "
            f"| {num(transitions, ',')} | {num(seconds, '.2f')} | {num(cpu, '.3f')} "
            f"| {num(cpu_ratio(row, run.rows.get('none')), '.2f')} |"
        )
    for r in run.rows.values():
        if r.get("error"):
            out.append(f"\n`{r['reduction']}`: {r['error']}")
    if b.note:
        out += ["", b.note]
    return out + [""]


def twin_table(twins: dict[tuple[str, str], dict[str, dict[str, Any]]], strategies: list[str]) -> list[str]:
    out = [
        "| twin | granularity | " + " | ".join(f"`{s}`" for s in strategies) + " | same kind as `none` |",
        "|---|---|" + "---|" * len(strategies) + "---|",
    ]
    for (name, granularity), rows in twins.items():
        kinds = {s: tuple(rows[s].get("kinds", [])) for s in strategies if s in rows}
        cells = [f"{rows[s]['verdict']} ({', '.join(kinds[s])}), {rows[s].get('states', 0):,} states"
                 if s in rows else "" for s in strategies]
        same = all(rows[s]["verdict"] == rows["none"]["verdict"] and kinds[s] == kinds["none"] for s in kinds)
        out.append(f"| `{name}` | {granularity} | " + " | ".join(cells) + f" | {'yes' if same else '**no**'} |")
    return out


def report(results: list[Run], twins: dict[tuple[str, str], dict[str, dict[str, Any]]], strategies: list[str],
           args: argparse.Namespace) -> str:
    missing = [s for s in STRATEGIES if s not in strategies]
    lines = [
        "# Dwyer et al.'s benchmarks: movers beside the paper",
        "",
        f"Generated by `python benchmarks/dwyer.py` on {time.strftime('%Y-%m-%d %H:%M')}: every run in a fresh "
        f"process (benchmarks/run.py), median of {args.repeat}, DFS, time limit {args.time_limit:g} s per run, "
        f"granularity {args.granularity}. The paper's numbers are Tables 1-2 of papers/002 (Bogor, states "
        "stored). CPU is the check's `time.process_time`; a ratio to `none` is taken within the same "
        "granularity, below 1 the strategy reaches its verdict sooner.",
        "",
    ]
    if missing:
        lines += [f"Not registered in this tree, skipped: {', '.join(f'`{s}`' for s in missing)}.", ""]
    lines += ["## Summary", "", *summary_table(results), "", "**Granularity.** " + GRANULARITY, "",
              "**The LD rows.** " + LOCKING, "",
              "## Per example", ""]
    for run in results:
        lines += detail_table(run, strategies)
    if twins:
        lines += ["## Bug twins (default size)", "", *twin_table(twins, strategies), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = [b.file.removeprefix("dwyer_").removesuffix(".py") for b in BENCHMARKS]
    ap.add_argument("--models", nargs="+", choices=names, default=names, metavar="NAME",
                    help=f"examples to run (default: all of {', '.join(names)})")
    ap.add_argument("--sizes", default="default,paper,scaled",
                    help="comma-separated size labels to run (default: default,paper,scaled)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per model and reduction (default: 1)")
    ap.add_argument("--time-limit", type=float, default=120, help="per run, passed to movers.check (seconds)")
    ap.add_argument("--timeout", type=float, default=900, help="kill a run after this many seconds")
    ap.add_argument("--granularity", default="statement,access",
                    help="comma-separated: statement, access or both (default: statement,access)")
    ap.add_argument("--no-twins", action="store_true", help="do not run the *_bug.py twins")
    ap.add_argument("--out", type=Path, default=RESULTS / "dwyer.md", help="the Markdown report")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    labels = {s.strip() for s in args.sizes.split(",") if s.strip()}
    granularities = [g.strip() for g in args.granularity.split(",") if g.strip()]
    if not granularities or any(g not in ("access", "statement") for g in granularities):
        ap.error(f"--granularity wants statement, access or both, got {args.granularity!r}")
    strategies = registered()
    results: list[Run] = []
    twins: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for bench in BENCHMARKS:
        if bench.file.removeprefix("dwyer_").removesuffix(".py") not in args.models:
            continue
        for size in bench.sizes:
            if size.label not in labels:
                continue
            path = variant(EXAMPLES / bench.file, size.consts)
            for g in granularities:
                run = Run(bench, size, g)
                for s in strategies:
                    if size.only and s not in size.only:
                        continue
                    print(f"{bench.title} [{size_text(size)}] / {g} / {s} ...", file=sys.stderr, flush=True)
                    run.rows[s] = measure(path, s, args, g)
                results.append(run)
        twin = EXAMPLES / bench.file.replace(".py", "_bug.py")
        if not args.no_twins and twin.exists():
            for g in granularities:
                print(f"{twin.name} / {g} ...", file=sys.stderr, flush=True)
                twins[twin.name, g] = {s: measure(twin, s, args, g) for s in strategies}
    text = report(results, twins, strategies, args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")
    print(text)
    crashed = any(r["verdict"] == "crash" for run in results for r in run.rows.values())
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
