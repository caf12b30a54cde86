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
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from rich.console import Console

    from movers.report.registry import View
    from movers.report.result import Result, Stats
    from movers.search.options import Options

EXIT_INCOMPLETE = 3
EXIT_INTERNAL = 4
LIMIT_OPTIONS = {"max_states": "--max-states", "time_limit": "--time-limit", "max_depth": "--max-depth",
                 "max_memory": "--max-memory"}


def _parser_class() -> type[argparse.ArgumentParser]:
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            # Every refusal of the command line says `movers: error:`, the subcommands' too (argparse would
            # say `movers check: error:`).
            self.print_usage(sys.stderr)
            self.exit(2, f"movers: error: {message}\n")

    return Parser


def _parser() -> argparse.ArgumentParser:
    import argparse

    from movers.reduce import REDUCTIONS
    from movers.report.registry import stdout_formats
    from movers.search.fingerprints import STORES
    from movers.search.options import ATOMICITY, SEARCHES, SYMMETRY
    from movers.version import __version__

    p = _parser_class()(prog="movers", description="Model checker for multithreaded Python models.")
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
    _step_options(c)
    c.add_argument("--search", choices=SEARCHES, default="dfs",
                   help="depth-first (default) or breadth-first (shortest counterexample)")
    c.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    _limit_options(c)
    c.add_argument("--max-depth", type=int, metavar="N", help="do not explore paths longer than N moves")
    c.add_argument("--atomicity", nargs="?", const="auto", choices=ATOMICITY,
                   help="check 'with atomic():' blocks: commit (a shadow store), reduction (R* N? L* with movers; "
                        "sound, incomplete) or auto (reduction where it proves a block, the shadow store for the "
                        "rest; the default when --atomicity is given alone); commit with --reduction none, "
                        "optimistic, transactions or a dwyer-* strategy; reduction and auto with none or optimistic")
    c.add_argument("--store", choices=STORES, default="exact",
                   help="the visited store: exact (default); hashcompact (64-bit fingerprints, as TLC and SPIN's "
                        "-DHC: a collision may hide a state, its probability is printed); bitstate (SPIN's "
                        "supertrace: a bit array of 2^BITS bits, 3 hashes, the expected coverage printed). A lossy "
                        "search that finds nothing exits 0 only if it may have missed at most 0.1%%, else 3")
    c.add_argument("--bits", type=int, default=26, metavar="BITS",
                   help="--store bitstate: the bit array has 2^BITS bits (SPIN's -w; default 26, 8 MB; refused if "
                        "larger than --max-memory)")
    c.add_argument("--symmetry", choices=SYMMETRY, default="off",
                   help="threads: remember states up to a renaming of the threads, where the model cannot observe "
                        "thread numbers (no tid(), no .owner, no declared predicates; otherwise a note says why "
                        "it was not applied); with --reduction none, static-por or dwyer-d/-s/-da/-sda")
    _parallel_options(c)  # --workers, --backend, --address
    c.add_argument("--max-violations", type=int, default=1, metavar="N",
                   help="go on after a violation until N distinct ones (by kind and message) are found, each "
                        "with its own trace (default 1)")
    c.add_argument("--all-violations", dest="max_violations", action="store_const", const=10**9,
                   help="go on after every violation: report each distinct one (SPIN's -e, TLC's -continue)")
    c.add_argument("--format", choices=stdout_formats(), default="text",
                   help="the report: text (default), json (as --json), sarif (SARIF 2.1.0, the trace as a code "
                        "flow: GitHub code scanning) or junit (JUnit XML, for CI test tabs)")
    c.add_argument("--library-steps", action="store_true", help="one row per step inside the modelled library")
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
    rp.add_argument("--library-steps", action="store_true", help="one row per step inside the modelled library")
    rp.add_argument("--full-state", action="store_true",
                    help="print the state where the violation shows, and the state after every step")
    rp.add_argument("--html", metavar="FILE", help="also write the report as one self-contained HTML page")
    _limit_options(rp, "where the trail does not fit the model, which is then checked: ")
    k = sub.add_parser("compare", help="one row per reduction on the same model")
    k.add_argument("model", help="the model file (a path, whatever its suffix)")
    k.add_argument("--reductions", default=",".join(REDUCTIONS),
                   help="comma-separated reduction names, one row each (default: all of them)")
    k.add_argument("--search", choices=SEARCHES, default="dfs",
                   help="depth-first (default) or breadth-first, for every row")
    _step_options(k, races=False)
    k.add_argument("--atomicity", nargs="?", const="auto", choices=ATOMICITY,
                   help="also check 'with atomic():' blocks: each row then gives the standard states (no "
                        "atomicity checking) beside the instrumented ones, as Flanagan's Figure 1 does")
    _limit_options(k)
    k.add_argument("--json", action="store_true", help="print the rows as one JSON list on stdout")
    k.add_argument("--html", metavar="FILE",
                   help="also write the comparison as one self-contained HTML page: the table and a bar chart "
                        "of states and seconds per reduction")
    return p


def _parallel_options(c: argparse.ArgumentParser) -> None:
    """``movers check``'s options of the partitioned search: how many workers, and where they run."""
    from movers.search.options import BACKENDS

    c.add_argument("--workers", type=int, default=1, metavar="N",
                   help="search with N processes, the states partitioned among them (--reduction none, "
                        "depth-first); same states and verdict as one (default 1)")
    c.add_argument("--backend", choices=BACKENDS, default="processes",
                   help="where the --workers run: processes (this machine, default) or ray (N Ray actors, on a "
                        "local Ray started for the run or the cluster at --address; needs pip install "
                        "'movers[ray]')")
    c.add_argument("--address", default=None, metavar="ADDR",
                   help="--backend ray: join the Ray cluster at ADDR (host:port, or 'auto') instead of starting "
                        "a local one")


def _step_options(c: argparse.ArgumentParser, races: bool = True) -> None:
    """What a step is, and the races between steps: ``movers check``'s options of the access granularity
    (``compare``: the granularity only, for every row)."""
    from movers.search.options import GRANULARITIES

    c.add_argument("--granularity", choices=GRANULARITIES, default=GRANULARITIES[0],
                   help="what one step is: access (default; at most one read or write of shared memory, as "
                        "CPython interleaves: an unlocked counter += 1 can lose an update) or statement (one "
                        "statement, the papers' granularity); docs/language.md section 8")
    if not races:
        return
    c.add_argument("--races", action="store_true",
                   help="also report data races: a state where two threads' next steps access the same location, "
                        "one a write, neither a synchronisation operation (--granularity access; docs/cli.md)")
    from movers.search.options import FAIRNESS, LIVENESS

    c.add_argument("--liveness", choices=LIVENESS,
                   help="check a liveness property instead of only safety: termination (no fair cycle but the "
                        "end), starvation (no thread waits forever in a fair cycle), ltl (the model's ltl(...)); "
                        "a violation is a lasso, its cycle repeating forever (docs/cli.md)")
    c.add_argument("--fairness", choices=FAIRNESS,
                   help="which cycles count with --liveness: weak (default; a thread enabled at every state of the "
                        "cycle moves in it), strong (a thread enabled at some state moves in it), none (every cycle)")
    _hunt_options(c)  # movers check's own, as --races and --liveness are


def _hunt_options(c: argparse.ArgumentParser) -> None:
    """Bug hunting, not proofs (search/simulate.py, search/swarm.py): ``movers check``'s --simulate, --swarm,
    --seed."""
    c.add_argument("--simulate", action="store_true",
                   help="random walks from the initial state (TLC's simulation mode), each to --max-depth (default "
                        "10,000) or until no thread can move, until a violation, --time-limit, --max-states (steps "
                        "taken) or Ctrl-C; --reduction none; finding nothing is not a proof (exit 3)")
    c.add_argument("--swarm", type=int, metavar="N",
                   help="N diversified depth-first searches over bitstate stores (--bits each), in N processes, each "
                        "with its own hash seed and thread order (SPIN's swarm verification); the first violation "
                        "stops all; finding nothing is not a proof (exit 3)")
    c.add_argument("--seed", type=int, metavar="N",
                   help="--simulate, --swarm: the random seed (default: drawn and printed); the same seed and model "
                        "give the same walks, the same members")


def _limit_options(p: argparse.ArgumentParser, when: str = "") -> None:
    p.add_argument("--max-states", type=int, metavar="N", help=when + "stop after storing N states")
    p.add_argument("--time-limit", type=float, metavar="SECONDS",
                   help=when + "stop after this many seconds, compilation and module initialisation included")
    p.add_argument("--max-memory", type=float, metavar="MB",
                   help=when + "stop when the process uses this much memory (default: 75%% of the machine's)")


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
    import time

    from movers.search.limits import rss_mb

    last = [time.perf_counter()]

    def update(s: Stats) -> None:
        now = time.perf_counter()
        if now - last[0] < LOG_EVERY:
            return
        last[0] = now
        rate = s.states / s.seconds if s.seconds else 0
        mb = rss_mb()  # this process's, now (ru_maxrss would count the memory of the one that started it)
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


def _console() -> Console:
    """The console a text report is rendered into, as a string written at once (one place where writing can
    fail)."""
    import io

    from rich.console import Console

    tty = _stdout_isatty()
    # Piped output is not cut to 80 columns: counterexample tables stay readable in logs.
    return Console(file=io.StringIO(), width=_terminal_width() if tty else 160, force_terminal=tty,
                   color_system="auto" if tty else None)


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


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): the same file only by name
        return os.path.realpath(a) == os.path.realpath(b)


def _output_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the files the command writes (``--trail``, ``--html``): an empty path, or a file
    the command reads (the model, the trail), which writing would destroy."""
    inputs = [("the model", args.model)] + ([("the trail", args.trail)] if args.command == "replay" else [])
    outputs = [(o, v) for o, v in (("--trail", args.trail if args.command == "check" else None),
                                   ("--html", getattr(args, "html", None))) if v is not None]
    for option, path in outputs:
        if path == "":
            return f"{option}: the path is empty"
        for what, source in inputs:
            if source and _same_file(path, source):
                return f"{option} {path} is {what}, which it would overwrite: give another file"
    if len(outputs) == 2 and _same_file(outputs[0][1], outputs[1][1]):
        return f"--trail and --html name the same file ({outputs[0][1]})"
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code. Never raises, except SystemExit for argparse's usage
    errors (code 2) and --help."""
    words = sys.argv[1:] if argv is None else argv
    json_out: bool | str = _early_format(words)
    compare = bool(words) and words[0] == "compare"
    reduction: str | None = None
    try:
        args = _parser().parse_args(argv)
        if getattr(args, "format", "text") == "json":
            args.json = True
        json_out = "json" if args.json else getattr(args, "format", "text")
        compare = args.command == "compare"
        reduction = getattr(args, "reduction", None)
        if args.model == "":
            return _bad("the model path is empty")
        problem = _limit_problem(args) or _output_problem(args)
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

    return {"store": {"kind": "exact"}, "symmetry": "off", "model": "", "search": "dfs", "granularity": None,
            "notes": [],
            "tool": {"name": "movers", "version": __version__}, "schema": 1}


def _early_format(words: list[str]) -> str:
    """The report format the command line asks for, read from its words (for a stop before they are parsed):
    ``json`` for ``--json`` or ``--format json``, ``sarif`` or ``junit``, else ``text``."""
    from movers.report.registry import FORMATS

    if "--json" in words:
        return "json"
    fmt = "text"
    for i, w in enumerate(words):
        value = words[i + 1] if w == "--format" and i + 1 < len(words) else w[9:] if w.startswith("--format=") else ""
        if value in FORMATS and FORMATS[value].machine:
            fmt = value
    return fmt


def _stopped_early(why: str, fmt: bool | str, reduction: str | None, compare: bool = False) -> int:
    """Stopped outside a check (while starting up, say): the report of an incomplete run with no statistics,
    in the format asked for (``fmt``: ``json``, ``sarif``, ``junit`` or ``text``; True means ``json``),
    written without the modules that may not be imported yet (for ``compare``, a table of that one row)."""
    import json

    fmt = "json" if fmt is True else "text" if fmt is False else fmt
    if fmt == "json" or (compare and fmt != "text"):
        row = {"verdict": "incomplete", "reduction": reduction, "stats": ZERO_STATS, "violations": [],
               "error": None, "limit": why, **_envelope()}
        _write(json.dumps([dict(row, ratio=None)] if compare else row) + "\n")
    elif fmt == "sarif":
        run = {"tool": {"driver": {"name": "movers", "rules": []}}, "results": [],
               "invocations": [{"executionSuccessful": False, "toolExecutionNotifications": [
                   {"level": "warning", "message": {"text": f"incomplete: {why}"}}]}]}
        _write(json.dumps({"version": "2.1.0", "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
                           "runs": [run]}) + "\n")
    elif fmt == "junit":
        _write('<?xml version="1.0" encoding="utf-8"?>\n<testsuite name="movers" tests="1" failures="0" errors="0" '
               f'skipped="1" time="0.000"><testcase classname="movers.check" name="{reduction or "none"}" '
               f'time="0.000"><skipped message="incomplete: {why}" /></testcase></testsuite>\n')
    else:
        reason = {"memory": "the memory limit (--max-memory) was reached",
                  "time-limit": "the time limit (--time-limit) was reached"}.get(why, why)
        _write(f"incomplete: {reason}  ({reduction or 'none'} reduction)\n"
               "0 states, 0 transitions, max depth 0, 0.00 s (- states/s), peak memory 0.0 MB\n")
    return EXIT_INCOMPLETE


def _internal_error(e: Exception, json_out: bool | str, reduction: str | None) -> int:
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
    if json_out is True or json_out == "json":
        _write(json.dumps({"verdict": "error", "reduction": reduction, "stats": ZERO_STATS, "violations": [],
                           "error": f"internal error (a bug in movers): {what}", **_envelope()}) + "\n")
    return EXIT_INTERNAL


def options_of(args: argparse.Namespace) -> Options:
    """The one ``Options`` of ``movers check``, built from its command line."""
    from movers.search.options import Limits, Options

    limits = Limits(args.max_states, args.time_limit, args.max_depth, args.max_memory)
    return Options(args.reduction, args.search, limits, store=args.store, bits=args.bits, symmetry=args.symmetry,
                   workers=args.workers, atomicity=args.atomicity, max_violations=args.max_violations,
                   refine=not args.no_refine, infer_locks=args.infer_locks, granularity=args.granularity,
                   races=args.races, liveness=getattr(args, "liveness", None),
                   fairness=getattr(args, "fairness", None),
                   simulate=args.simulate, swarm=args.swarm, seed=args.seed,
                   backend=getattr(args, "backend", "processes"), address=getattr(args, "address", None))


def _check(args: argparse.Namespace) -> int:
    from pathlib import Path

    from movers.checker import check

    options = options_of(args)
    problem = options.problem()
    if problem:
        return _bad(problem)
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
        r = check(Path(args.model), progress=progress, options=options)
    finally:
        stop()
    if args.trail and r.verdict == "violation":
        from movers.checker import read_model
        from movers.lang.errors import ModelSyntaxError
        from movers.trail import write_trail

        try:
            recorded = {"search": args.search, "refine": not args.no_refine, "infer_locks": args.infer_locks,
                        "symmetry": args.symmetry, "store": args.store, "bits": args.bits,
                        "max_depth": args.max_depth, "granularity": args.granularity, "races": args.races,
                        "liveness": args.liveness, "fairness": args.fairness}
            # Decoded as the check decoded it (a coding line), so that replay's hash of the model agrees.
            write_trail(args.trail, r, read_model(args.model), args.model, args.atomicity, recorded)
        except (OSError, ModelSyntaxError) as e:  # the model changed or went away since the check read it
            _say(f"movers: cannot write the trail {args.trail}: {getattr(e, 'strerror', None) or e}")
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

        add_step_states(r, load(Path(model), granularity=r.granularity or "access"), ITEMS if short else None)
    except (ModelSyntaxError, OSError) as e:  # the file changed or went away since the check read it
        _say(f"movers: cannot compute the state after each step: {e}")


def _write_html(path: str, page: str) -> bool:
    try:
        # A model's string may hold a lone surrogate ("\ud800" in a literal), which is no character: the page
        # shows its escape, as the text report does, instead of failing to encode it.
        with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(page)
    except OSError as e:
        _say(f"movers: cannot write the HTML report {path}: {e.strerror or e}")
        return False
    return True


def _replay(args: argparse.Namespace) -> int:
    """``movers replay MODEL TRAIL``: 1 if the trail's violation happens again, 0 if not, 2 if the file is not a
    trail; where the trail does not fit the model, the verdict of checking the model with the trail's options."""
    from movers.trail import TrailError, read_trail, replay

    try:
        trail = read_trail(args.trail)
    except TrailError as e:
        return _bad(str(e))
    show = not args.json and _stdout_isatty()
    stop: Callable[[], None] = lambda: None  # noqa: E731
    progress = None
    if show:
        from rich.console import Console

        progress, stop = _progress(Console(), True)
    elif not _stderr_isatty():
        progress = _log_progress()

    def misfit(where: str) -> None:
        # Said at once: the check that follows may take a while.
        _say(f"movers: {where}; checking the model with the trail's options instead")

    try:
        r = replay(args.model, trail, max_states=args.max_states, time_limit=args.time_limit,
                   max_memory=args.max_memory, progress=progress, misfit=misfit)
    finally:
        stop()
    args.show_classification = args.show_locks = False
    args.reduction = r.reduction
    return _report(r, args)


def _report(r: Result, args: argparse.Namespace) -> int:
    from movers.report.registry import FORMATS

    fmt_name = getattr(args, "format", "text")
    if r.refused:
        # Options the model refuses (found once it is compiled): said as every refusal is; the machine-readable
        # formats still get their object.
        _bad(r.error or "the options are refused")
        if not args.json and fmt_name == "text":
            return r.exit_code
    view = _view(args)
    if getattr(args, "html", None):
        if _write_html(args.html, FORMATS["html"].check(r, view)) and not args.json and r.verdict != "error":
            r.notes.append(f"HTML report written to {args.html}")
    fmt = FORMATS["json" if args.json and fmt_name == "text" else fmt_name]
    if r.verdict == "error" and not fmt.machine:
        _say(r.error or "error")
        return r.exit_code
    # The verdict is known: the report is written whole (long values are shortened, so it is quick), and its
    # exit code is the verdict's; a Ctrl-C now once left an empty report that exited as incomplete.
    _ignore_interrupts()
    _write(fmt.check(r, view))
    return r.exit_code


def _view(args: argparse.Namespace) -> View:
    from movers.reduce import capabilities
    from movers.report.registry import View

    infers = capabilities(args.reduction).classifies
    asked = args.show_locks or args.show_classification
    return View(model=args.model, show_classification=args.show_classification and infers,
                show_locks=args.show_locks and infers, full_state=getattr(args, "full_state", False),
                step_states=args.command == "replay" and args.full_state,
                library_steps=getattr(args, "library_steps", False),
                hint=(f"(--reduction {args.reduction} infers no classification: use optimistic or transactions)"
                      if asked and not infers else ""),
                console=_console)


def _ignore_interrupts() -> None:
    """From here on Ctrl-C does nothing: the JSON object is written whole. Only under ``run`` (the process is
    ours); ``main`` called from Python leaves the caller's handlers alone."""
    if signal.getsignal(signal.SIGINT) is _on_interrupt:
        signal.signal(signal.SIGINT, _ignored_interrupt)


def _compare(args: argparse.Namespace) -> int:
    from movers.reduce import REDUCTIONS

    names = [n.strip() for n in args.reductions.split(",") if n.strip()]
    if not names:
        return _bad(f"--reductions names no reduction (known: {', '.join(REDUCTIONS)})")
    unknown = [n for n in names if n not in REDUCTIONS]
    if unknown:
        return _bad(f"unknown reduction '{unknown[0]}' (known: {', '.join(REDUCTIONS)})")
    first = _compile_first(args, names[0])
    if isinstance(first, int):
        return first
    rows: list[Result] = []
    standard: dict[str, Result] = {}
    if first is not None:
        rows.append(first)
    else:
        _compare_rows(args, names, rows, standard)
    return _compare_report(args, rows, standard)


def _compile_first(args: argparse.Namespace, first: str) -> Result | int | None:
    """The model is compiled once first: a model that is wrong stops the comparison before any row (its exit
    code, the message said); a stop while it compiles is the one row, incomplete; None if it compiles."""
    from pathlib import Path

    from movers.checker import load
    from movers.lang.errors import ModelSyntaxError
    from movers.report.compare import Comparison, Row
    from movers.report.registry import FORMATS, View
    from movers.report.result import Result, Stats
    from movers.search.explore import Limits
    from movers.search.limits import LimitReached, enforce, stop_reason

    limits = Limits(args.max_states, args.time_limit, None, args.max_memory)
    try:
        with enforce(limits.budget()):
            load(Path(args.model))
    except (ModelSyntaxError, OSError) as e:
        msg = str(e) if isinstance(e, ModelSyntaxError) else f"{args.model}: cannot read the model: {e.strerror or e}"
        if args.json:  # the same shape as a comparison: a list of rows, here one row with the error
            row = Row(Result("error", first, error=msg, model=args.model))
            _write(FORMATS["json"].compare(Comparison(args.model, [row]), View(args.model)))
        else:
            _say(msg)
        return 2
    except (LimitReached, KeyboardInterrupt, MemoryError) as e:
        return Result("incomplete", first, Stats(), limit=stop_reason(e), model=args.model)
    return None


def _compare_rows(args: argparse.Namespace, names: list[str], rows: list[Result],
                  standard: dict[str, Result]) -> None:
    """Run each reduction in turn into ``rows`` (with --atomicity, its standard search into ``standard``),
    until the last or a Ctrl-C."""
    from pathlib import Path

    from movers.checker import check

    path = Path(args.model)
    # Progress: a live line while a row runs (a terminal), a line per finished row on stderr (not --json).
    progress, stop = (None, lambda: None)
    if not args.json and _stdout_isatty():
        from rich.console import Console

        progress, stop = _progress(Console(), True)
    elif not _stderr_isatty():
        progress = _log_progress()
    for k, n in enumerate(names, 1):
        if args.atomicity:
            # Figure 1 of papers/003: the standard search beside the instrumented one.
            standard[n] = check(path, reduction=n, search=args.search, max_states=args.max_states,
                                time_limit=args.time_limit, max_memory=args.max_memory, granularity=args.granularity)
            if standard[n].limit == "interrupted":
                rows.append(standard[n])
                break
        reset = _reset_peak_memory()
        r = check(path, reduction=n, search=args.search, max_states=args.max_states,
                  time_limit=args.time_limit, max_memory=args.max_memory, atomicity=args.atomicity,
                  progress=progress, granularity=args.granularity)
        own = _peak_memory_since_reset() if reset else None
        if own is not None:
            r.stats.peak_memory_mb = round(own, 1)  # this row's own peak, not the process's so far
        rows.append(r)  # a reduction that refuses this model shows its reason in its row
        if not args.json:
            stop()
            what = r.verdict if r.verdict != "violation" else f"violation ({r.violations[0].kind})"
            _say(f"movers compare: {r.reduction}: {what}, {r.stats.states:,} states, {r.stats.seconds:.2f} s, "
                 f"{r.stats.peak_memory_mb:.1f} MB  ({k} of {len(names)})")
        if r.limit == "interrupted":
            break  # Ctrl-C stops the comparison, not just this row


def _compare_report(args: argparse.Namespace, rows: list[Result], standard: dict[str, Result]) -> int:
    from movers.report.compare import comparison
    from movers.report.registry import FORMATS, View

    table = comparison(rows, args.model, standard, args.atomicity)
    view = View(args.model, console=_console)
    if args.html:
        _write_html(args.html, FORMATS["html"].compare(table, view))
    fmt = FORMATS["json" if args.json else "text"]
    if fmt.machine:
        _ignore_interrupts()
        _write(fmt.compare(table, view))
    else:
        try:
            _write(fmt.compare(table, view))
        except KeyboardInterrupt:
            _say("movers: interrupted while printing the report")
            return EXIT_INCOMPLETE
    if any(r.limit == "interrupted" for r in rows):
        return EXIT_INCOMPLETE
    return max((r.exit_code for r in rows if r.verdict != "error"), default=2)


_interrupted = False


def _ignored_interrupt(signum: int, frame: Any) -> None:
    # Ctrl-C ignored by a Python handler, not SIG_IGN: a second Ctrl-C that arrives while the first one's handler
    # runs is already pending, and CPython reports a pending signal whose handler became SIG_IGN as an
    # unraisable "Signal 2 ignored due to race condition" on stderr.
    pass


def _on_interrupt(signum: int, frame: Any) -> None:
    # The first Ctrl-C stops the check, which then reports what it has; later ones are ignored, so that
    # they cannot interrupt that report with a traceback.
    global _interrupted
    _interrupted = True
    signal.signal(signal.SIGINT, _ignored_interrupt)
    raise KeyboardInterrupt


def _defer_interrupt(signum: int, frame: Any) -> None:
    # While the checker's modules are imported, a KeyboardInterrupt could be raised inside Python's import
    # machinery, which wraps or swallows it: the Ctrl-C is only noted there, and acted on right after.
    global _interrupted
    _interrupted = True
    signal.signal(signal.SIGINT, _ignored_interrupt)


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
            code = _stopped_early("interrupted", _early_format(words), None, bool(words) and words[0] == "compare")
        else:
            signal.signal(signal.SIGINT, _on_interrupt)
            code = main()
        signal.signal(signal.SIGINT, _ignored_interrupt)  # the report is written: nothing is left to stop
    except KeyboardInterrupt:
        # Ctrl-C on the way into main (before its own handlers) or on the way out: never a traceback.
        signal.signal(signal.SIGINT, _ignored_interrupt)
        _interrupted = True
        if code is None:
            words = sys.argv[1:]
            code = _stopped_early("interrupted", _early_format(words), None, bool(words) and words[0] == "compare")
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
