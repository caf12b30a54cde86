"""The command line: ``movers check MODEL.py`` and ``movers compare MODEL.py``.

Exit codes: 0 verified, 1 violation, 2 the model or the command line is wrong, 3 incomplete (a limit was
hit, or Ctrl-C), with the statistics so far.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable

from rich.console import Console
from rich.live import Live
from rich.text import Text

from movers.checker import check, load
from movers.lang.errors import ModelSyntaxError
from movers.reduce import REDUCTIONS
from movers.report.result import Result, Stats
from movers.report.text import print_compare, print_result


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="movers", description="Model checker for multithreaded Python models.")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="explore every interleaving of a model")
    c.add_argument("model", help="the model file (.py)")
    c.add_argument("--reduction", default="none", help=f"one of: {', '.join(REDUCTIONS)} (default none)")
    c.add_argument("--search", choices=("dfs", "bfs"), default="dfs",
                   help="depth-first (default) or breadth-first (shortest counterexample)")
    c.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    c.add_argument("--max-states", type=int, metavar="N", help="stop after storing N states")
    c.add_argument("--time-limit", type=float, metavar="SECONDS", help="stop after this many seconds")
    c.add_argument("--max-depth", type=int, metavar="N", help="do not explore paths longer than N moves")
    c.add_argument("--atomicity", choices=("commit", "reduction"), help="check 'with atomic():' blocks")
    c.add_argument("--quiet", action="store_true", help="no progress line")
    c.add_argument("--no-refine", action="store_true",
                   help="report a violated automatic classification instead of refining it and restarting")
    c.add_argument("--show-classification", action="store_true",
                   help="print how each location was classified (optimistic, transactions)")
    c.add_argument("--show-locks", action="store_true",
                   help="print the inferred protecting lock of each location (optimistic, transactions)")
    c.add_argument("--infer-locks", action=argparse.BooleanOptionalAction, default=True,
                   help="infer the classification of undeclared locations (default); with --no-infer-locks "
                        "they are unprotected")
    k = sub.add_parser("compare", help="one row per reduction on the same model")
    k.add_argument("model")
    k.add_argument("--reductions", default=",".join(REDUCTIONS), help="comma-separated reduction names")
    k.add_argument("--search", choices=("dfs", "bfs"), default="dfs")
    k.add_argument("--max-states", type=int, metavar="N")
    k.add_argument("--time-limit", type=float, metavar="SECONDS")
    k.add_argument("--json", action="store_true")
    return p


def _progress(console: Console, enabled: bool) -> tuple[Callable[[Stats], None] | None, Callable[[], None]]:
    """A live progress line that appears once a run has lasted a second."""
    if not enabled:
        return None, lambda: None
    start = time.perf_counter()
    live: list[Live] = []

    def update(s: Stats) -> None:
        if time.perf_counter() - start < 1.0:
            return
        rate = s.states / s.seconds if s.seconds else 0
        line = Text(f"exploring: {s.states:,} states, {s.transitions:,} transitions, depth {s.max_depth}, "
                    f"{s.seconds:.0f} s, {rate:,.0f} states/s  (Ctrl-C stops and keeps the statistics)")
        if not live:
            live.append(Live(line, console=console, transient=True, auto_refresh=False))
            live[0].start()
        live[0].update(line, refresh=True)

    def stop() -> None:
        if live:
            live[0].stop()

    return update, stop


def _bad(message: str) -> int:
    print(f"movers: error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    for name in ("max_states", "time_limit", "max_depth"):
        v = getattr(args, name, None)
        if v is not None and v <= 0:
            return _bad(f"--{name.replace('_', '-')} must be positive")
    # Piped output is not cut to 80 columns: counterexample tables stay readable in logs.
    out = Console() if sys.stdout.isatty() else Console(width=160)
    err = Console(stderr=True)
    if args.command == "check":
        if args.reduction not in REDUCTIONS:
            return _bad(f"unknown reduction '{args.reduction}' (known: {', '.join(REDUCTIONS)})")
        if args.atomicity:
            return _bad("--atomicity is not implemented yet (atomic blocks are parsed and recorded only)")
        show = not args.quiet and not args.json and sys.stdout.isatty()
        progress, stop = _progress(out, show)
        try:
            r = check(args.model, reduction=args.reduction, search=args.search, max_states=args.max_states,
                      time_limit=args.time_limit, max_depth=args.max_depth, progress=progress,
                      refine=not args.no_refine, infer_locks=args.infer_locks)
        finally:
            stop()
        if args.json:
            print(json.dumps(r.to_json()))
        elif r.verdict == "error":
            err.print(Text(r.error or "error"), soft_wrap=True, highlight=False)
        else:
            infers = args.reduction not in ("none", "static-por")
            print_result(r, out, args.model, show_classification=args.show_classification and infers,
                         show_locks=args.show_locks and infers)
            if (args.show_locks or args.show_classification) and not infers:
                out.print(f"(--reduction {args.reduction} infers no classification: use optimistic or "
                          "transactions)")
        return r.exit_code
    names = [n.strip() for n in args.reductions.split(",") if n.strip()]
    unknown = [n for n in names if n not in REDUCTIONS]
    if unknown:
        return _bad(f"unknown reduction '{unknown[0]}' (known: {', '.join(REDUCTIONS)})")
    try:
        load(args.model)
    except (ModelSyntaxError, OSError) as e:
        # The model itself is wrong: no row can be computed.
        msg = str(e) if isinstance(e, ModelSyntaxError) else f"{args.model}: cannot read the model: {e}"
        if args.json:
            print(json.dumps({"error": msg}))
        else:
            err.print(Text(msg), soft_wrap=True, highlight=False)
        return 2
    rows: list[Result] = []
    for n in names:
        r = check(args.model, reduction=n, search=args.search, max_states=args.max_states,
                  time_limit=args.time_limit)
        rows.append(r)  # a reduction that refuses this model shows its reason in its row
    if args.json:
        base = next((r for r in rows if r.reduction == "none"), None)
        print(json.dumps([
            dict(r.to_json(), ratio=(r.stats.states / base.stats.states
                                     if base and base.stats.states and r.verdict != "error" else None))
            for r in rows
        ]))
    else:
        print_compare(rows, out, args.model)
    return max((r.exit_code for r in rows if r.verdict != "error"), default=2)


def run() -> None:
    """The console script: ``main``, quiet when the reader of our output goes away (``| head``)."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)


if __name__ == "__main__":
    run()
