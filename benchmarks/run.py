"""The benchmark harness: every model × reduction, each run in a fresh process, medians of N runs.

    python benchmarks/run.py [--models PATH ...] [--reductions none,...] [--repeat 3] [--json OUT]
                             [--counter K,L ...] [--variant NAME ...] [--granularity access,statement]
                             [--search dfs|bfs] [--max-states N] [--time-limit S] [--markdown OUT]

Each run is ``python -c`` in a new process that imports movers, compiles the model with a one-state run,
resets the peak RSS (``/proc/self/clear_refs``), reads its resident set size (``/proc/self/statm``), runs the
real search, and reads its peak RSS (``ru_maxrss``); so peak memory and bytes per state belong to that one
search. See ``benchmarks/README.md``
for the columns. Results go to ``benchmarks/results/latest.json`` and, with ``--json``, to OUT too; with
``--markdown``, a Markdown table of states and CPU time relative to ``none`` goes to OUT.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
COUNTER = EXAMPLES / "counter_bench.py"
RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_COUNTER = ["3,4", "4,4"]  # about 7,000 and 90,000 states with --reduction none
MIN_GROWTH_MB = 1.0  # below this RSS growth, bytes/state is noise: the table shows "-" (the JSON keeps it)
MARKER = "@@MOVERS-BENCH@@"  # prefixes the child's result line, whatever else it prints

# The child process. argv: model path, reduction, search, max_states or "-", time_limit or "-", granularity or
# "-" (the checker's default).
CHILD = r"""
import json, os, resource, sys, time
model, reduction, search, max_states, time_limit, granularity = sys.argv[1:7]
import movers
kw = {"reduction": reduction, "search": search}
if granularity != "-":
    kw["granularity"] = granularity
if max_states != "-":
    kw["max_states"] = int(max_states)
if time_limit != "-":
    kw["time_limit"] = float(time_limit)
movers.check(model, **(kw | {"max_states": 1}))  # import and compile: not measured
try:  # reset the peak RSS (Linux >= 4.0): importing peaks above the RSS that follows it
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    peak_reset = True
except OSError:
    peak_reset = False
with open("/proc/self/statm") as f:
    rss_before = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
t0, c0 = time.perf_counter(), time.process_time()
r = movers.check(model, **kw)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KB on Linux
out = r.to_json()
out["measure"] = {
    "rss_before_bytes": rss_before, "peak_rss_bytes": peak, "peak_reset": peak_reset, "wall_seconds": wall,
    "cpu_seconds": cpu,
}
print(MARKER + json.dumps(out), flush=True)
""".replace("MARKER", repr(MARKER))


# -- models ------------------------------------------------------------------------------------------------


def parse_counter(spec: str) -> tuple[int, int]:
    try:
        k, n = (int(v) for v in spec.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--counter wants K,L (two integers), got {spec!r}") from None
    return k, n


def counter_variant(k: int, n: int, template: Path = COUNTER, out_dir: Path = RESULTS / "models") -> Path:
    """Write ``counter_bench.py`` with its module-level lines ``K = …`` and ``L = …`` replaced."""
    src = template.read_text()
    for name, value in (("K", k), ("L", n)):
        src, count = re.subn(rf"^{name}\s*=\s*\d+\s*$", f"{name} = {value}", src, count=1, flags=re.M)
        if count != 1:
            raise SystemExit(f"{template}: no module-level line '{name} = <int>' to replace")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"counter_bench_K{k}_L{n}.py"
    path.write_text(src)
    return path


# ``--variant NAME``: an example with some lines rewritten, written to results/models/NAME.py. The papers
# take each statement as one step, so their unlocked counters (Stoller & Cohen's barrier ``y++``, Flanagan &
# Qadeer's specification variable ``count``) are races under ``--granularity access`` (a lost update: a
# deadlock at the barrier, a failed assertion in read); these variants make that one statement a step of its
# own again (``with indivisible():``), so the papers' programs can be measured at access granularity too.
VARIANTS: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "sc_example_indivisible": (
        "sc_example.py",
        (("    y += 1\n", "    with indivisible():\n        y += 1\n"),),
    ),
    "fq_counter_indivisible": (
        "fq_counter.py",
        (
            ("    count += 1\n", "    with indivisible():\n        count += 1\n"),
            ("    count -= 1\n", "    with indivisible():\n        count -= 1\n"),
        ),
    ),
    "fq_counter_indivisible_CALLS3": (  # big enough (60,000 states) for CPU ratios that are not noise
        "fq_counter.py",
        (
            ("    count += 1\n", "    with indivisible():\n        count += 1\n"),
            ("    count -= 1\n", "    with indivisible():\n        count -= 1\n"),
            ("\nCALLS = 2\n", "\nCALLS = 3\n"),
        ),
    ),
}


def variant_model(name: str, out_dir: Path = RESULTS / "models") -> Path:
    """Write the example of ``VARIANTS[name]`` with its lines rewritten, to ``out_dir/name.py``."""
    file, edits = VARIANTS[name]
    src = (EXAMPLES / file).read_text()
    for old, new in edits:
        if src.count(old) != 1:
            raise SystemExit(f"{file}: expected one line {old.strip()!r} to rewrite for --variant {name}")
        src = src.replace(old, new)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.py"
    path.write_text(src)
    return path


def model_name(path: Path) -> str:
    m = re.fullmatch(r"counter_bench_K(\d+)_L(\d+)", path.stem)
    return f"counter_bench(K={m[1]},L={m[2]})" if m else path.stem


def collect_models(paths: list[Path] | None, counters: list[tuple[int, int]] | None) -> list[Path]:
    """The models to run: ``paths`` (directories contribute their ``*.py``), or by default every
    ``examples/*.py`` but ``counter_bench.py``; then the counter variants (by default DEFAULT_COUNTER, but
    only when no ``--models`` were given)."""
    out: list[Path] = []
    if paths:
        for p in paths:
            out += sorted(p.glob("*.py")) if p.is_dir() else [p]
    else:
        out += [p for p in sorted(EXAMPLES.glob("*.py")) if p != COUNTER]
    if counters is None and not paths:
        counters = [parse_counter(s) for s in DEFAULT_COUNTER]
    for k, n in counters or []:
        if not COUNTER.exists():
            print(f"warning: {COUNTER} does not exist: no counter variants", file=sys.stderr)
            break
        out.append(counter_variant(k, n))
    return out


# -- running -----------------------------------------------------------------------------------------------


def child_env() -> dict[str, str]:
    """The environment of a run: this working tree's ``src`` first on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
    return env


def run_once(
    model: Path,
    reduction: str,
    search: str,
    max_states: int | None,
    time_limit: float | None,
    timeout: float,
    granularity: str | None = None,
) -> dict[str, Any]:
    """One run in a fresh process: the ``Result.to_json()`` object plus ``measure``, or ``{"crash": msg}``.
    ``granularity`` None: the checker's default."""
    argv = [
        sys.executable,
        "-c",
        CHILD,
        str(model),
        reduction,
        search,
        "-" if max_states is None else str(max_states),
        "-" if time_limit is None else str(time_limit),
        granularity or "-",
    ]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=child_env())
    except subprocess.TimeoutExpired:
        return {"crash": f"timed out after {timeout:g}s"}
    for line in proc.stdout.splitlines():
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER) :])
    tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
    return {"crash": f"exit {proc.returncode}: {tail}"}


def summarise(
    model: Path, reduction: str, search: str, runs: list[dict[str, Any]], granularity: str | None = None
) -> dict[str, Any]:
    """One table row from the runs of one model × reduction: the run of median seconds gives verdict,
    states and transitions; memory figures are medians of their own. ``granularity`` None: the one the
    runs report (the checker's default)."""
    reported = next((r.get("granularity") for r in runs if r.get("granularity")), None)
    row: dict[str, Any] = {
        "model": model_name(model),
        "path": str(model),
        "reduction": reduction,
        "search": search,
        "granularity": granularity or reported,
        "repeat": len(runs),
    }
    crashes = [r["crash"] for r in runs if "crash" in r]
    good = [r for r in runs if "crash" not in r]
    if not good:
        return row | {"verdict": "crash", "error": crashes[0]}
    good.sort(key=lambda r: r["stats"]["seconds"])
    mid = good[len(good) // 2]
    stats = mid["stats"]
    verdicts = sorted({r["verdict"] for r in good})
    states = stats["states"]
    peaks = [r["measure"]["peak_rss_bytes"] for r in good]
    per_state = [
        max(0, r["measure"]["peak_rss_bytes"] - r["measure"]["rss_before_bytes"]) / r["stats"]["states"]
        for r in good
        if r["stats"]["states"] > 0
    ]
    growth = statistics.median(max(0, r["measure"]["peak_rss_bytes"] - r["measure"]["rss_before_bytes"]) for r in good)
    seconds = statistics.median(r["stats"]["seconds"] for r in good)
    row |= {
        "verdict": mid["verdict"] if len(verdicts) == 1 else "mixed:" + "/".join(verdicts),
        "kinds": sorted({v["kind"] for v in mid["violations"]}),
        "states": states,
        "transitions": stats["transitions"],
        "max_depth": stats.get("max_depth", 0),
        "seconds": seconds,
        "seconds_all": [r["stats"]["seconds"] for r in good],
        # CPU time of the check (``time.process_time``): less disturbed by the other work of a shared machine.
        "cpu_seconds": statistics.median(r["measure"].get("cpu_seconds", 0.0) for r in good),
        "states_per_second": states / seconds if seconds > 0 else None,
        "peak_mb": statistics.median(peaks) / 2**20,
        "rss_growth_mb": growth / 2**20,
        "bytes_per_state": statistics.median(per_state) if per_state else None,
        "checker_peak_memory_mb": stats.get("peak_memory_mb"),
        "peak_reset": all(r["measure"].get("peak_reset") for r in good),
        "error": mid.get("error") or (crashes[0] if crashes else None),
    }
    return row


def add_ratios(rows: list[dict[str, Any]]) -> None:
    """``ratio_to_none``: states / the states of ``none`` on the same model at the same granularity, when
    ``none`` ran; ``cpu_to_none``: the same for CPU seconds (a reduction is judged by time to verdict too)."""

    def states(r: dict[str, Any]) -> int | None:
        return r.get("states") if r["verdict"] not in ("error", "crash") else None

    def key(r: dict[str, Any]) -> tuple[str, str | None]:
        return r["model"], r.get("granularity")

    base = {key(r): states(r) for r in rows if r["reduction"] == "none"}
    cpu = {key(r): r.get("cpu_seconds") for r in rows if r["reduction"] == "none" and states(r) is not None}
    for r in rows:
        b, s = base.get(key(r)), states(r)
        r["ratio_to_none"] = s / b if b and s is not None else None
        c, mine = cpu.get(key(r)), r.get("cpu_seconds")
        r["cpu_to_none"] = mine / c if c and mine is not None and s is not None else None


# -- output ------------------------------------------------------------------------------------------------


def _num(v: float | None, fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def print_table(rows: list[dict[str, Any]], repeat: int) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"movers benchmarks (median of {repeat} runs, each in a fresh process)")
    for col in ("model", "granularity", "reduction", "verdict"):
        table.add_column(col)
    for col in ("states", "transitions", "seconds", "CPU s", "states/s", "peak MB", "bytes/state", "vs none",
                "CPU vs none"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            r["model"],
            r.get("granularity") or "-",
            r["reduction"],
            r["verdict"] + (f" ({', '.join(r['kinds'])})" if r.get("kinds") else ""),
            _num(r.get("states"), ","),
            _num(r.get("transitions"), ","),
            _num(r.get("seconds"), ".3f"),
            _num(r.get("cpu_seconds"), ".3f"),
            _num(r.get("states_per_second"), ",.0f"),
            _num(r.get("peak_mb"), ".1f"),
            _num(r.get("bytes_per_state") if (r.get("rss_growth_mb") or 0) >= MIN_GROWTH_MB else None, ",.0f"),
            _num(r.get("ratio_to_none"), ".3f"),
            _num(r.get("cpu_to_none"), ".2f"),
        )
    console = Console()
    if not console.is_terminal:  # piped or redirected: do not squeeze the table into 80 columns
        console = Console(width=200)
    console.print(table)
    for r in rows:
        if r.get("error"):
            console.print(f"[red]{r['model']} / {r['reduction']}: {r['error']}[/red]")


def verdict_text(r: dict[str, Any]) -> str:
    return r["verdict"] + (f" ({', '.join(r['kinds'])})" if r.get("kinds") else "")


def markdown(rows: list[dict[str, Any]], repeat: int, command: str) -> str:
    """One row per model and granularity, one column per reduction: states, then (states relative to
    ``none``; CPU seconds relative to ``none``), both from the same run of this script."""
    reductions = list(dict.fromkeys(r["reduction"] for r in rows))
    cells: dict[tuple[str, str | None], dict[str, dict[str, Any]]] = {}
    for r in rows:
        cells.setdefault((r["model"], r.get("granularity")), {})[r["reduction"]] = r
    lines = [
        f"`{command}`",
        "",
        f"Median of {repeat} runs, each in a fresh process; CPU seconds of the check (`time.process_time`). "
        "`none`: verdict, states and CPU seconds. Each reduction: states (states relative to `none` at the same "
        "granularity; CPU relative to `none`: below 1, the reduction reaches its verdict sooner). A verdict "
        "other than `none`'s is named.",
        "",
        "| model | granularity | " + " | ".join(f"`{red}`" for red in reductions) + " |",
        "|---|---|" + "---:|" * len(reductions),
    ]
    for (model, granularity), by_red in cells.items():
        base = by_red.get("none")
        out = [model, granularity or "-"]
        for red in reductions:
            r = by_red.get(red)
            if r is None:
                out.append("")
            elif r["verdict"] in ("crash", "error"):
                out.append(r["verdict"])
            elif red == "none":
                out.append(f"{verdict_text(r)}: {r['states']:,}, {r['cpu_seconds']:.3f} s")
            else:
                other = "" if base and r["verdict"] == base["verdict"] else f" {verdict_text(r)}"
                out.append(f"{r['states']:,} ({_num(r.get('ratio_to_none'), '.2f')}; "
                           f"**{_num(r.get('cpu_to_none'), '.2f')}**){other}")
        lines.append("| " + " | ".join(out) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--models",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="model files or directories (default: examples/*.py and the counter variants)",
    )
    from movers.reduce import REDUCTIONS

    every = ",".join(REDUCTIONS)
    ap.add_argument("--reductions", default=every, help=f"comma-separated reduction names (default: {every})")
    ap.add_argument("--repeat", type=int, default=3, help="runs per model and reduction (default: 3)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write the rows to OUT")
    ap.add_argument(
        "--counter",
        action="append",
        type=parse_counter,
        metavar="K,L",
        help=f"a size of examples/counter_bench.py; repeatable (default: {' '.join(DEFAULT_COUNTER)})",
    )
    ap.add_argument(
        "--variant",
        action="append",
        choices=sorted(VARIANTS),
        metavar="NAME",
        help=f"a rewritten example, repeatable: {', '.join(sorted(VARIANTS))}",
    )
    ap.add_argument(
        "--granularity",
        default="access",
        help="comma-separated: access, statement or both (each model runs at each; default: access)",
    )
    ap.add_argument("--markdown", type=Path, metavar="OUT", help="also write a Markdown table to OUT")
    ap.add_argument("--search", default="dfs", choices=["dfs", "bfs"])
    ap.add_argument("--max-states", type=int, help="passed to movers.check")
    ap.add_argument("--time-limit", type=float, help="passed to movers.check (seconds)")
    ap.add_argument("--timeout", type=float, default=1800, help="kill a run after this many seconds")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    reductions = [r.strip() for r in args.reductions.split(",") if r.strip()]
    granularities = [g.strip() for g in args.granularity.split(",") if g.strip()]
    if not granularities or any(g not in ("access", "statement") for g in granularities):
        ap.error(f"--granularity wants access, statement or both, got {args.granularity!r}")
    missing = [str(p) for p in args.models or [] if not p.exists()]
    if missing:
        ap.error(f"no such model: {', '.join(missing)}")

    from rich.console import Console

    progress = Console(stderr=True)
    rows: list[dict[str, Any]] = []
    # --variant alone runs only the variants (as --models alone runs only those models)
    only_variants = bool(args.variant) and not args.models
    models = [counter_variant(k, n) for k, n in args.counter or []] if only_variants else collect_models(
        args.models, args.counter
    )
    models += [variant_model(name) for name in args.variant or []]
    for model in models:
        for granularity in granularities:
            for reduction in reductions:
                runs = []
                for i in range(args.repeat):
                    progress.print(
                        f"[dim]{model_name(model)} / {granularity} / {reduction}: run {i + 1}/{args.repeat}[/dim]"
                    )
                    runs.append(
                        run_once(
                            model, reduction, args.search, args.max_states, args.time_limit, args.timeout, granularity
                        )
                    )
                rows.append(summarise(model, reduction, args.search, runs, granularity))
    add_ratios(rows)
    print_table(rows, args.repeat)
    if args.markdown:
        command = "python benchmarks/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(markdown(rows, args.repeat, command))

    RESULTS.mkdir(parents=True, exist_ok=True)
    text = json.dumps(rows, indent=2) + "\n"
    (RESULTS / "latest.json").write_text(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text)
    return 1 if any(r["verdict"] == "crash" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
