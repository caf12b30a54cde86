"""The command line: ``movers check MODEL.py`` and ``movers compare MODEL.py``.

Exit codes: 0 verified, 1 violation, 2 the model or the command line is wrong, 3 incomplete (a limit was
hit, or Ctrl-C), with the statistics so far, 4 internal error (a bug in movers, never a verdict).

Only the standard library is imported at the top: ``run`` installs the Ctrl-C handler first, and the
checker (and rich) are imported after it, so that no Ctrl-C, however early, prints a traceback.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from rich.console import Console

    from movers.report.result import Result, Stats

EXIT_INCOMPLETE = 3
EXIT_INTERNAL = 4
LIMIT_OPTIONS = {"max_states": "--max-states", "time_limit": "--time-limit", "max_depth": "--max-depth",
                 "max_memory": "--max-memory"}


def _parser() -> argparse.ArgumentParser:
    import argparse

    from movers.reduce import REDUCTIONS
    from movers.version import __version__

    p = argparse.ArgumentParser(prog="movers", description="Model checker for multithreaded Python models.")
    p.add_argument("--version", action="version", version=f"movers {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="explore every interleaving of a model")
    c.add_argument("model", help="the model file (a path, whatever its suffix)")
    def reduction(name: str) -> str:
        if name not in REDUCTIONS:
            raise argparse.ArgumentTypeError(f"unknown reduction '{name}' (known: {', '.join(REDUCTIONS)})")
        return name

    c.add_argument("--reduction", default="none", type=reduction, metavar="{" + ",".join(REDUCTIONS) + "}",
                   help="the reduction (default none); docs/reductions.md says what each explores and preserves")
    c.add_argument("--search", choices=("dfs", "bfs"), default="dfs",
                   help="depth-first (default) or breadth-first (shortest counterexample)")
    c.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    _limit_options(c)
    c.add_argument("--max-depth", type=int, metavar="N", help="do not explore paths longer than N moves")
    c.add_argument("--atomicity", nargs="?", const="auto", choices=("commit", "reduction", "auto"),
                   help="check 'with atomic():' blocks: commit (a shadow store), reduction (R* N? L* with movers; "
                        "sound, incomplete) or auto (reduction where it proves a block, the shadow store for the "
                        "rest; the default when --atomicity is given alone); commit with --reduction none, "
                        "optimistic, transactions or a dwyer-* strategy; reduction and auto with none or optimistic")
    c.add_argument("--store", choices=("exact", "hashcompact", "bitstate"), default="exact",
                   help="the visited store: exact (default); hashcompact (64-bit fingerprints, as TLC and SPIN's "
                        "-DHC: a collision may hide a state, its probability is printed); bitstate (SPIN's "
                        "supertrace: a bit array of 2^BITS bits, 3 hashes, the expected coverage printed)")
    c.add_argument("--bits", type=int, default=26, metavar="BITS",
                   help="--store bitstate: the bit array has 2^BITS bits (SPIN's -w; default 26, 8 MB)")
    c.add_argument("--symmetry", choices=("threads", "off"), default="off",
                   help="threads: remember states up to a renaming of the threads, where the model cannot observe "
                        "thread numbers (no tid(), no .owner, no declared predicates; otherwise a note says why "
                        "it was not applied); --reduction none only")
    c.add_argument("--workers", type=int, default=1, metavar="N",
                   help="search with N processes, the states partitioned among them (--reduction none, "
                        "depth-first); same states and verdict as one (default 1)")
    c.add_argument("--max-violations", type=int, default=1, metavar="N",
                   help="go on after a violation until N distinct ones (by kind and message) are found, each "
                        "with its own trace (default 1)")
    c.add_argument("--all-violations", dest="max_violations", action="store_const", const=10**9,
                   help="go on after every violation: report each distinct one (SPIN's -e, TLC's -continue)")
    c.add_argument("--format", choices=("text", "json", "sarif", "junit"), default="text",
                   help="the report: text (default), json (as --json), sarif (SARIF 2.1.0, the trace as a code "
                        "flow: GitHub code scanning) or junit (JUnit XML, for CI test tabs)")
    c.add_argument("--full-state", action="store_true",
                   help="print the state where the violation shows: globals and heap by path, and per thread its "
                        "status, what it waits for, the locks it holds, its stack and locals (--json has it always; "
                        "with --full-state, --json also has the state after every step, trace[].state)")
    c.add_argument("--html", metavar="FILE",
                   help="also write the report as one self-contained HTML page: the counterexample as swimlanes "
                        "(click a step for the state after it), a deadlock's table of threads, the statistics")
    c.add_argument("--trail", metavar="FILE",
                   help="on a violation, save its steps to FILE (JSON), for 'movers replay MODEL FILE'")
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
    rp = sub.add_parser("replay", help="re-run a saved counterexample (a trail from check --trail)")
    rp.add_argument("model", help="the model file")
    rp.add_argument("trail", help="the trail file")
    rp.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    rp.add_argument("--full-state", action="store_true",
                    help="print the state where the violation shows, and the state after every step")
    rp.add_argument("--html", metavar="FILE", help="also write the report as one self-contained HTML page")
    k = sub.add_parser("compare", help="one row per reduction on the same model")
    k.add_argument("model", help="the model file (a path, whatever its suffix)")
    k.add_argument("--reductions", default=",".join(REDUCTIONS),
                   help="comma-separated reduction names, one row each (default: all of them)")
    k.add_argument("--search", choices=("dfs", "bfs"), default="dfs",
                   help="depth-first (default) or breadth-first, for every row")
    k.add_argument("--atomicity", nargs="?", const="auto", choices=("commit", "reduction", "auto"),
                   help="also check 'with atomic():' blocks: each row then gives the standard states (no "
                        "atomicity checking) beside the instrumented ones, as Flanagan's Figure 1 does")
    _limit_options(k)
    k.add_argument("--json", action="store_true", help="print the rows as one JSON list on stdout")
    k.add_argument("--html", metavar="FILE",
                   help="also write the comparison as one self-contained HTML page: the table and a bar chart "
                        "of states and seconds per reduction")
    return p


def _limit_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-states", type=int, metavar="N", help="stop after storing N states")
    p.add_argument("--time-limit", type=float, metavar="SECONDS",
                   help="stop after this many seconds, compilation and module initialisation included")
    p.add_argument("--max-memory", type=float, metavar="MB",
                   help="stop when the process uses this much memory (default: 75%% of the machine's)")


def _progress(console: Console, enabled: bool) -> tuple[Callable[[Stats], None] | None, Callable[[], None]]:
    """A live progress line that appears once a run has lasted a second."""
    if not enabled:
        return None, lambda: None
    import time

    from rich.live import Live
    from rich.text import Text

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


LOG_EVERY = 10.0  # seconds between progress lines in a log (stderr not a terminal), as SPIN and TLC print


def _log_progress() -> Callable[[Stats], None]:
    """Plain progress lines on stderr, one every ``LOG_EVERY`` seconds, for logs and CI (no live line there)."""
    import resource
    import time

    last = [time.perf_counter()]

    def update(s: Stats) -> None:
        now = time.perf_counter()
        if now - last[0] < LOG_EVERY:
            return
        last[0] = now
        rate = s.states / s.seconds if s.seconds else 0
        mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        _say(f"movers: {s.states:,} states, {s.transitions:,} transitions, depth {s.max_depth}, {s.seconds:.0f} s, "
             f"{rate:,.0f} states/s, {mb:,.0f} MB")

    return update


def _reset_peak_memory() -> bool:
    """Reset the process's peak resident memory (Linux 4.0+), so that each row of ``compare`` measures its own."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_memory_since_reset() -> float | None:
    """The peak resident memory (MB) since ``_reset_peak_memory`` (``VmHWM``)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _stderr_isatty() -> bool:
    try:
        return sys.stderr.isatty()
    except (ValueError, AttributeError, OSError):
        return False


def _say(message: str) -> None:
    """One line on stderr; a stderr that is gone is not worth a traceback. A message may quote the model:
    its control characters are escaped (report/safe.py)."""
    from movers.report.safe import printable

    try:
        print(printable(message, newlines=True), file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def _bad(message: str) -> int:
    _say(f"movers: error: {message}")
    return 2


def _write(text: str) -> None:
    """The report, on stdout. A reader that went away (``| head``) or a full disk (``> /dev/full``) does not
    change the exit code, which is the verdict's: the failure is said on stderr (except for a closed pipe,
    the normal end of ``| head``) and the rest of the output is dropped."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _drop_stdout()
    except OSError as e:
        _drop_stdout()
        _say(f"movers: cannot write the report to standard output: {e.strerror or e}")


def _drop_stdout() -> None:
    """Send what stdout still buffers, and anything later, to /dev/null: the interpreter's last flush at exit
    would otherwise fail again and print 'Exception ignored'."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _console_output(render: Callable[[Console], None]) -> None:
    """Render with rich into a string, then write it at once (one place where writing can fail)."""
    import io

    from rich.console import Console

    tty = _stdout_isatty()
    buf = io.StringIO()
    # Piped output is not cut to 80 columns: counterexample tables stay readable in logs.
    console = Console(file=buf, width=_terminal_width() if tty else 160, force_terminal=tty,
                      color_system="auto" if tty else None)
    render(console)
    _write(buf.getvalue())


def _stdout_isatty() -> bool:
    try:
        return sys.stdout.isatty()
    except (ValueError, AttributeError, OSError):
        return False


def _terminal_width() -> int:
    try:
        columns = os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        columns = 0
    return columns or 80  # a pseudo-terminal may report 0 columns


def _limit_problem(args: argparse.Namespace) -> str | None:
    from movers.search.limits import problems

    values = {name: getattr(args, name, None) for name in LIMIT_OPTIONS}
    bad = problems(**values)
    return f"{LIMIT_OPTIONS[bad[0][0]]} {bad[0][1]}" if bad else None


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code. Never raises, except SystemExit for argparse's usage
    errors (code 2) and --help."""
    words = sys.argv[1:] if argv is None else argv
    json_out = "--json" in words
    compare = bool(words) and words[0] == "compare"
    reduction: str | None = None
    try:
        args = _parser().parse_args(argv)
        if getattr(args, "format", "text") == "json":
            args.json = True
        json_out = args.json
        compare = args.command == "compare"
        reduction = getattr(args, "reduction", None)
        if args.model == "":
            return _bad("the model path is empty")
        problem = _limit_problem(args)
        if problem:
            return _bad(problem)
        if args.command == "check":
            return _check(args)
        if args.command == "replay":
            return _replay(args)
        return _compare(args)
    except (KeyboardInterrupt, MemoryError) as e:
        # Outside a check (which turns them into an incomplete result itself): nothing was measured.
        return _stopped_early("interrupted" if isinstance(e, KeyboardInterrupt) else "memory", json_out, reduction,
                              compare)
    except Exception as e:
        stop = _stop_inside(e)
        if stop is not None:
            # Python wraps an exception raised inside some machinery (a class's __set_name__ while a module
            # is imported): a Ctrl-C or a limit there is still a stop, not a bug.
            return _stopped_early(stop, json_out, reduction, compare)
        return _internal_error(e, json_out, reduction)
    except BaseException as e:
        if type(e).__name__ != "LimitReached":  # not imported yet if Ctrl-C came first
            raise
        return _stopped_early(str(e), json_out, reduction, compare)


def _stop_inside(e: BaseException) -> str | None:
    """The stop (Ctrl-C, a limit) that ``e`` wraps, if any, following its causes and contexts."""
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, KeyboardInterrupt):
            return "interrupted"
        if type(cur).__name__ == "LimitReached":
            return str(cur)
        cur = cur.__cause__ or cur.__context__
    return None


ZERO_STATS = {"states": 0, "transitions": 0, "max_depth": 0, "seconds": 0.0, "peak_memory_mb": 0.0}


def _envelope() -> dict:
    """The fields every JSON object has beyond the verdict (report/result.py's ``to_json``), for the objects
    written before the checker's modules are loaded."""
    from movers.version import __version__

    return {"store": {"kind": "exact"}, "symmetry": "off", "model": "", "search": "dfs", "notes": [],
            "tool": {"name": "movers", "version": __version__}, "schema": 1}


def _stopped_early(why: str, json_out: bool, reduction: str | None, compare: bool = False) -> int:
    """Stopped outside a check (while starting up, say): the report of an incomplete run with no statistics,
    written without the modules that may not be imported yet (for ``compare``, a table of that one row)."""
    import json

    if json_out:
        row = {"verdict": "incomplete", "reduction": reduction, "stats": ZERO_STATS, "violations": [],
               "error": None, "limit": why, **_envelope()}
        _write(json.dumps([dict(row, ratio=None)] if compare else row) + "\n")
    else:
        reason = {"memory": "the memory limit (--max-memory) was reached",
                  "time-limit": "the time limit (--time-limit) was reached"}.get(why, why)
        _write(f"incomplete: {reason}  ({reduction or 'none'} reduction)\n"
               "0 states, 0 transitions, max depth 0, 0.00 s (- states/s), peak memory 0.0 MB\n")
    return EXIT_INCOMPLETE


def _internal_error(e: Exception, json_out: bool, reduction: str | None) -> int:
    """Any exception that escapes the checker is a bug in movers: exit code 4, never a verdict."""
    import json
    import traceback

    what = f"{type(e).__name__}: {e}".splitlines()[0] if str(e) else type(e).__name__
    _say(f"movers: internal error (a bug in movers, please report it): {what}"
         + ("" if os.environ.get("MOVERS_DEBUG") else "  [MOVERS_DEBUG=1 shows the traceback]"))
    if os.environ.get("MOVERS_DEBUG"):
        try:
            traceback.print_exception(e, file=sys.stderr)
        except (OSError, ValueError):
            pass
    if json_out:
        _write(json.dumps({"verdict": "error", "reduction": reduction, "stats": ZERO_STATS, "violations": [],
                           "error": f"internal error (a bug in movers): {what}", **_envelope()}) + "\n")
    return EXIT_INTERNAL


def _check(args: argparse.Namespace) -> int:
    from pathlib import Path

    from movers.checker import check
    from movers.reduce import REDUCTIONS

    if args.reduction not in REDUCTIONS:
        return _bad(f"unknown reduction '{args.reduction}' (known: {', '.join(REDUCTIONS)})")
    show = not args.quiet and not args.json and _stdout_isatty()
    stop: Callable[[], None] = lambda: None  # noqa: E731
    progress = None
    if show:
        from rich.console import Console

        progress, stop = _progress(Console(), True)
    elif not args.quiet and not _stderr_isatty():
        progress = _log_progress()
    try:
        # On the command line the model is always a path, whatever its name: never source text.
        r = check(Path(args.model), reduction=args.reduction, search=args.search, max_states=args.max_states,
                  time_limit=args.time_limit, max_depth=args.max_depth, max_memory=args.max_memory,
                  progress=progress, refine=not args.no_refine, infer_locks=args.infer_locks,
                  atomicity=args.atomicity, store=args.store, bits=args.bits, symmetry=args.symmetry,
                  workers=args.workers, max_violations=args.max_violations)
    finally:
        stop()
    if args.trail and r.verdict == "violation":
        from movers.trail import write_trail

        try:
            write_trail(args.trail, r, Path(args.model).read_text(encoding="utf-8"), args.model, args.atomicity)
        except OSError as e:
            _say(f"movers: cannot write the trail {args.trail}: {e.strerror or e}")
        else:
            if not args.json:
                r.notes.append(f"trail written to {args.trail} (movers replay {args.model} {args.trail})")
    if r.violations and (args.html or (args.full_state and args.json)):
        # Only the HTML page wants them: it shows long lists shortened, so they are not spelt out.
        _add_step_states(r, args.model, short=not (args.full_state and args.json))
    return _report(r, args)


def _add_step_states(r: Result, model: str, short: bool = False) -> None:
    """The state after every step of ``r``'s traces, for ``--html`` and ``--json --full-state``: the check
    keeps none, so the model is compiled again and the traces replayed."""
    from pathlib import Path

    from movers.checker import load
    from movers.lang.errors import ModelSyntaxError
    from movers.report.steps import add_step_states

    try:
        from movers.report.shorten import ITEMS

        add_step_states(r, load(Path(model)), ITEMS if short else None)
    except (ModelSyntaxError, OSError) as e:  # the file changed or went away since the check read it
        _say(f"movers: cannot compute the state after each step: {e}")


def _write_html(path: str, page: str) -> bool:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
    except OSError as e:
        _say(f"movers: cannot write the HTML report {path}: {e.strerror or e}")
        return False
    return True


def _replay(args: argparse.Namespace) -> int:
    """``movers replay MODEL TRAIL``: 1 if the trail's violation happens again, 0 if not, 2 if it does not fit."""
    from movers.trail import TrailError, read_trail, replay

    try:
        r = replay(args.model, read_trail(args.trail))
    except TrailError as e:
        return _bad(str(e))
    args.show_classification = args.show_locks = False
    args.reduction = "none"
    return _report(r, args)


def _report(r: Result, args: argparse.Namespace) -> int:
    import json

    if getattr(args, "html", None):
        from movers.report.html import render_result

        if _write_html(args.html, render_result(r, args.model)) and not args.json and r.verdict != "error":
            r.notes.append(f"HTML report written to {args.html}")
    fmt = getattr(args, "format", "text")
    if fmt in ("sarif", "junit"):
        from movers.report.formats import to_junit, to_sarif

        _ignore_interrupts()
        text = json.dumps(to_sarif(r, args.model), indent=1) if fmt == "sarif" else to_junit(r, args.model)
        _write(text + "\n")
        return r.exit_code
    if args.json:
        # The verdict is known: the one JSON object is written whole, and its exit code is the verdict's.
        _ignore_interrupts()
        _write(json.dumps(r.to_json()) + "\n")
        return r.exit_code
    if r.verdict == "error":
        _say(r.error or "error")
        return r.exit_code
    from movers.report.text import print_result

    infers = args.reduction not in ("none", "static-por")

    def render(out: Console) -> None:
        print_result(r, out, args.model, show_classification=args.show_classification and infers,
                     show_locks=args.show_locks and infers, full_state=getattr(args, "full_state", False))
        if args.command == "replay" and args.full_state:
            from movers.report.steps import print_step_states

            for v in r.violations:
                print_step_states(v, out)
        if (args.show_locks or args.show_classification) and not infers:
            out.print(f"(--reduction {args.reduction} infers no classification: use optimistic or "
                      "transactions)")

    try:
        _console_output(render)
    except KeyboardInterrupt:
        _say("movers: interrupted while printing the report")
        return EXIT_INCOMPLETE
    return r.exit_code


def _ignore_interrupts() -> None:
    """From here on Ctrl-C does nothing: the JSON object is written whole. Only under ``run`` (the process is
    ours); ``main`` called from Python leaves the caller's handlers alone."""
    if signal.getsignal(signal.SIGINT) is _on_interrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _compare(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from movers.checker import check, load
    from movers.lang.errors import ModelSyntaxError
    from movers.reduce import REDUCTIONS
    from movers.report.result import Result, Stats
    from movers.search.explore import Limits
    from movers.search.limits import LimitReached, enforce, stop_reason

    names = [n.strip() for n in args.reductions.split(",") if n.strip()]
    if not names:
        return _bad(f"--reductions names no reduction (known: {', '.join(REDUCTIONS)})")
    unknown = [n for n in names if n not in REDUCTIONS]
    if unknown:
        return _bad(f"unknown reduction '{unknown[0]}' (known: {', '.join(REDUCTIONS)})")
    path = Path(args.model)
    limits = Limits(args.max_states, args.time_limit, None, args.max_memory)
    rows: list[Result] = []
    try:
        # The model is compiled once first: a model that is wrong stops the comparison before any row.
        with enforce(limits.budget()):
            load(path)
    except (ModelSyntaxError, OSError) as e:
        msg = str(e) if isinstance(e, ModelSyntaxError) else f"{args.model}: cannot read the model: {e.strerror or e}"
        if args.json:  # the same shape as a comparison: a list of rows, here one row with the error
            _write(json.dumps([dict(Result("error", names[0], error=msg, model=args.model).to_json(),
                                    ratio=None)]) + "\n")
        else:
            _say(msg)
        return 2
    except (LimitReached, KeyboardInterrupt, MemoryError) as e:
        rows.append(Result("incomplete", names[0], Stats(), limit=stop_reason(e), model=args.model))
    standard: dict[str, Result] = {}
    # Progress: a live line while a row runs (a terminal), a line per finished row on stderr (not --json).
    tty = not args.json and _stdout_isatty()
    progress, stop = (None, lambda: None)
    if tty:
        from rich.console import Console

        progress, stop = _progress(Console(), True)
    elif not _stderr_isatty():
        progress = _log_progress()

    def finished(k: int, r: Result) -> None:
        if not args.json:
            stop()
            what = r.verdict if r.verdict != "violation" else f"violation ({r.violations[0].kind})"
            _say(f"movers compare: {r.reduction}: {what}, {r.stats.states:,} states, {r.stats.seconds:.2f} s, "
                 f"{r.stats.peak_memory_mb:.1f} MB  ({k} of {len(names)})")

    if not rows:
        for k, n in enumerate(names, 1):
            if args.atomicity:
                # Figure 1 of papers/003: the standard search beside the instrumented one.
                standard[n] = check(path, reduction=n, search=args.search, max_states=args.max_states,
                                    time_limit=args.time_limit, max_memory=args.max_memory)
                if standard[n].limit == "interrupted":
                    rows.append(standard[n])
                    break
            reset = _reset_peak_memory()
            r = check(path, reduction=n, search=args.search, max_states=args.max_states,
                      time_limit=args.time_limit, max_memory=args.max_memory, atomicity=args.atomicity,
                      progress=progress)
            own = _peak_memory_since_reset() if reset else None
            if own is not None:
                r.stats.peak_memory_mb = round(own, 1)  # this row's own peak, not the process's so far
            rows.append(r)  # a reduction that refuses this model shows its reason in its row
            finished(k, r)
            if r.limit == "interrupted":
                break  # Ctrl-C stops the comparison, not just this row
    if args.html:
        from movers.report.html import render_compare

        _write_html(args.html, render_compare(rows, args.model, standard or None))
    if args.json:
        _ignore_interrupts()
        base = next((r for r in rows if r.reduction == "none"), None)
        out_rows = []
        for r in rows:
            d = dict(r.to_json(), ratio=(r.stats.states / base.stats.states
                                         if base and base.stats.states and r.verdict != "error" else None))
            if r.reduction in standard:
                d["atomicity"] = args.atomicity
                d["standard_states"] = standard[r.reduction].stats.states
            out_rows.append(d)
        _write(json.dumps(out_rows) + "\n")
    else:
        from movers.report.text import print_compare

        try:
            _console_output(lambda out: print_compare(rows, out, args.model, standard or None))
        except KeyboardInterrupt:
            _say("movers: interrupted while printing the report")
            return EXIT_INCOMPLETE
    if any(r.limit == "interrupted" for r in rows):
        return EXIT_INCOMPLETE
    return max((r.exit_code for r in rows if r.verdict != "error"), default=2)


_interrupted = False


def _on_interrupt(signum: int, frame: Any) -> None:
    # The first Ctrl-C stops the check, which then reports what it has; later ones are ignored, so that
    # they cannot interrupt that report with a traceback.
    global _interrupted
    _interrupted = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def _defer_interrupt(signum: int, frame: Any) -> None:
    # While the checker's modules are imported, a KeyboardInterrupt could be raised inside Python's import
    # machinery, which wraps or swallows it: the Ctrl-C is only noted there, and acted on right after.
    global _interrupted
    _interrupted = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _import_checker() -> None:
    import rich.console  # noqa: F401

    import movers.checker  # noqa: F401
    import movers.report.text  # noqa: F401


def run() -> None:
    """The console script: ``main`` with Ctrl-C handled once, and a stdout that may be closed or full."""
    global _interrupted
    code: int | None = None
    try:
        signal.signal(signal.SIGINT, _defer_interrupt)
        if sys.stdout is None:  # started with stdout closed (``>&-``): the report goes nowhere, the code stays
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        _import_checker()
        if _interrupted:
            words = sys.argv[1:]
            code = _stopped_early("interrupted", "--json" in words, None, bool(words) and words[0] == "compare")
        else:
            signal.signal(signal.SIGINT, _on_interrupt)
            code = main()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the report is written: nothing is left to stop
    except KeyboardInterrupt:
        # Ctrl-C on the way into main (before its own handlers) or on the way out: never a traceback.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _interrupted = True
        if code is None:
            words = sys.argv[1:]
            code = _stopped_early("interrupted", "--json" in words, None, bool(words) and words[0] == "compare")
    try:
        sys.stdout.flush()
    except OSError:
        _drop_stdout()
    if _interrupted:
        # CPython 3.11 remembers a KeyboardInterrupt raised inside exec'd or eval'd code (dataclasses and
        # namedtuples are made so at import time) as "unhandled" even when it was caught, and at exit kills
        # the process with SIGINT instead of returning our code: leave without that last look.
        try:
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
