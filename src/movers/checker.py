"""The Python API: ``movers.check(model, …) -> Result``, and ``Checker`` for more control.

A check is: compile the model, build its transition system, add the property instrumentation, choose the
reduction, run an explorer, and turn what it found into a ``Result`` (the ``--json`` contract) with a
step-granularity trace.
"""

from __future__ import annotations

import ast
import codecs
import errno
import io
import os
import resource
import select
import stat
import time
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from movers.analysis.classify import Classification, Refine
from movers.instrument.properties import instrument
from movers.instrument.races import race_note
from movers.ir.program import Program
from movers.lang.compiler import compile_model
from movers.lang.errors import ModelSyntaxError
from movers.reduce import Capabilities, capabilities, make_reduction
from movers.report.result import Result, Stats, Violation
from movers.report.trace import violation
from movers.search.explore import Search, thaw
from movers.search.fingerprints import BITS_RANGE, STORE_FIELDS, STORES, lossy_verdict, store_report
from movers.search.limits import (
    Budget,
    LimitReached,
    current,
    enforce,
    high_water_mb,
    poll,
    rss_mb,
    settle,
    stop_reason,
)
from movers.search.options import Limits, Options
from movers.semantics.system import InitError, TransitionSystem


def is_source_text(model: str | os.PathLike[str]) -> bool:
    """The rule of ``movers.check(model)`` and ``movers.load(model)``: a ``str`` containing a newline is
    the model's source text; any other ``str`` and every ``os.PathLike`` (``pathlib.Path``) is a path.
    ``source=`` passes source text explicitly, whatever it contains."""
    return isinstance(model, str) and "\n" in model


def read_model(path: str | os.PathLike[str], filename: str | None = None) -> str:
    """A model file's text, decoded as Python decodes a module (PEP 263: a UTF-8 BOM or a coding line gives
    the encoding; UTF-8 otherwise). Undecodable bytes are a ModelSyntaxError at their line and column."""
    name = filename or os.fspath(path)
    data = _read_bytes(path, name)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as e:
        if data.startswith(codecs.BOM_UTF8) and "encoding problem" in e.msg:
            raise ModelSyntaxError(name, 1, 1, "cannot decode the model: it starts with a UTF-8 byte order mark "
                                   "but declares another encoding") from None
        if "invalid or missing encoding declaration" not in e.msg:  # an unknown encoding
            raise ModelSyntaxError(name, 1, 1, f"cannot decode the model: {e.msg}") from None
        encoding = "utf-8"  # the first lines are not UTF-8: decoding says where
    try:
        text = data.decode(encoding)  # "utf-8-sig" drops the BOM
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise ModelSyntaxError(name, line, col, f"cannot decode the model as {encoding}: byte "
                               f"0x{data[e.start]:02x} is invalid (save the file as UTF-8, or declare its "
                               "encoding in a '# -*- coding: …' line)") from None
    return text


# A model larger than this is not a model (a device such as /dev/zero would otherwise fill the memory).
MAX_MODEL_BYTES = 64 * 2**20


def _read_bytes(path: str | os.PathLike[str], name: str) -> bytes:
    """The bytes of a model file. A pipe (``movers check <(gen-model)``) is read as it comes, but one with
    no writer is an error rather than a wait forever; devices and other special files are refused."""
    st = os.stat(path)
    if stat.S_ISREG(st.st_mode):
        if st.st_size > MAX_MODEL_BYTES:
            raise ModelSyntaxError(name, 1, 1, f"the model file is too large ({st.st_size:,} bytes)")
        return Path(path).read_bytes()
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", os.fspath(path))
    if not stat.S_ISFIFO(st.st_mode):
        raise ModelSyntaxError(name, 1, 1, "the model is not a regular file (a device or a socket?)")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                select.select([fd], [], [], 0.1)  # a writer that has not written yet: wait for it
                continue
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_MODEL_BYTES:
                raise ModelSyntaxError(name, 1, 1, f"the model is too large (over {MAX_MODEL_BYTES:,} bytes)")
    finally:
        os.close(fd)
    if not chunks:
        raise ModelSyntaxError(name, 1, 1, "the model is a pipe that gave nothing (no writer?)")
    return b"".join(chunks)


def _deepest(tree: ast.AST) -> tuple[int, int, int]:
    """(depth, line, column) of the most deeply nested node, found without recursion."""
    best = (0, 1, 0)
    todo: list[tuple[ast.AST, int]] = [(tree, 0)]
    while todo:
        node, d = todo.pop()
        if d > best[0] and hasattr(node, "lineno"):
            best = (d, node.lineno, getattr(node, "col_offset", 0))
        todo.extend((c, d + 1) for c in ast.iter_child_nodes(node))
    return best


def _unparsable_statement(source: str) -> int:
    """The first line of the first top-level statement that Python's parser cannot take alone (1 if none)."""
    lines = source.splitlines(keepends=True)
    starts = [i for i, ln in enumerate(lines) if ln[:1] not in ("", " ", "\t", "\n", "\r", "#", ")", "]", "}")]
    starts.append(len(lines))
    for a, b in zip(starts, starts[1:], strict=False):
        try:
            ast.parse("".join(lines[a:b]))
        except (RecursionError, MemoryError):
            return a + 1
        except (SyntaxError, ValueError):
            continue  # a chunk cut inside a statement (elif, else, a continuation line): not the culprit
    return 1


def _too_deep(source: str, filename: str) -> ModelSyntaxError:
    """The error for a model nested beyond what the parser or the compiler can recurse through."""
    try:
        tree = ast.parse(source)
    except (RecursionError, MemoryError, SyntaxError, ValueError):
        line = _unparsable_statement(source)
        return ModelSyntaxError(filename, line, 1, "too deeply nested: this statement nests expressions or "
                                "'elif' branches more deeply than Python's parser allows; split it up")
    depth, line, col = _deepest(tree)
    return ModelSyntaxError(filename, line, col + 1, f"too deeply nested ({depth} levels of nested "
                            "expressions or statements down to here); split the expression or the 'elif' "
                            "chain up")


# Python's parser needs up to about 900 bytes of memory per character of source (measured on `a;a;a;…`, the
# densest; `x = 1` lines take 400) and cannot be interrupted: a timer's signal waits until it returns.
PARSE_BYTES_PER_CHAR = 1024


def _too_large(source: str, filename: str) -> ModelSyntaxError | None:
    """Under a memory limit, the error for a model whose parse alone could exceed what the limit leaves
    free: 1 KB of memory per character, so that a model is refused before the parser starts rather than
    stopped long after the limit was passed."""
    budget = current()
    if budget is None or budget.max_memory_mb is None or budget.paused:
        return None
    free = budget.max_memory_mb - rss_mb()
    if free <= 0:
        raise LimitReached("memory")
    allowed = int(free * 2**20 / PARSE_BYTES_PER_CHAR)
    if len(source) <= allowed:
        return None
    return ModelSyntaxError(
        filename, 1, 1, f"the model is too large to parse within --max-memory {budget.max_memory_mb:g} MB: "
        f"{len(source):,} characters, and Python's parser, which no limit can interrupt, may need "
        f"{PARSE_BYTES_PER_CHAR:,} bytes per character; the {free:,.0f} MB the limit leaves free fit "
        f"{allowed:,} characters (give more --max-memory, or split the model)")


def compile_source(source: str, filename: str, granularity: str = "access") -> Program:
    """Compile model text; nesting too deep for Python's recursion is a ModelSyntaxError, not a crash. Under a
    memory limit, a model too large to parse within it is refused first (``_too_large``)."""
    problem = _too_large(source, filename)
    if problem is not None:
        raise problem
    if "\0" in source:
        i = source.index("\0")
        line = source.count("\n", 0, i) + 1
        raise ModelSyntaxError(filename, line, i - (source.rfind("\n", 0, i) + 1) + 1,
                               "the model contains a null character")
    try:
        source.encode("utf-8")
    except UnicodeEncodeError as e:
        # Only text given as a str can hold one (a file is decoded strictly); CPython refuses it too.
        line = source.count("\n", 0, e.start) + 1
        raise ModelSyntaxError(filename, line, e.start - (source.rfind("\n", 0, e.start) + 1) + 1,
                               f"the model contains a lone surrogate (U+{ord(source[e.start]):04X}), which is "
                               "not a character: it cannot be encoded as UTF-8") from None
    try:
        return compile_model(source, filename, granularity)
    except RecursionError:
        pass
    except MemoryError:
        # Deep nesting can exhaust the parser's stack too; a model that is merely large is a memory limit.
        if _nesting(source) < DEEP:
            raise
    raise _too_deep(source, filename)


# A nesting depth that only a generated or pathological model reaches (Python's parser stops near 200 for
# brackets and at about 1,000 levels of recursion).
DEEP = 100


def _nesting(source: str) -> int:
    """The nesting depth of the model's syntax tree (a large number if Python cannot even parse it)."""
    try:
        return _deepest(ast.parse(source))[0]
    except (RecursionError, MemoryError):
        return 10**9
    except (SyntaxError, ValueError):
        return 0


def load(
    model: str | os.PathLike[str] | None = None, filename: str | None = None, *, source: str | None = None,
    granularity: str = "access",
) -> Program:
    """Compile a model and return its program: ``model`` is a path (see ``is_source_text`` for the one
    exception), ``source=`` is source text. Raises ModelSyntaxError (``file:line:col: message``) for a model
    that is wrong, OSError for a file that cannot be read, ValueError for arguments that name no model."""
    problem = _model_problem(model, source)
    if problem:
        raise ValueError(problem)
    if source is not None:
        return compile_source(source, filename or "<model>", granularity)
    assert model is not None
    if is_source_text(model):
        return compile_source(str(model), filename or "<model>", granularity)
    name = filename or os.fspath(model)
    return compile_source(read_model(model, name), name, granularity)


def _model_problem(model: object, source: object) -> str | None:
    if source is not None:
        if model is not None:
            return "give either a model path or source=, not both"
        return None if isinstance(source, str) else "source= must be a str"
    if model is None:
        return "no model: give a path or source="
    if not isinstance(model, (str, os.PathLike)):
        return f"the model must be a path or source text, not {type(model).__name__}"
    if isinstance(model, str) and model == "":
        return "the model path is empty"
    return None


def init_violation(e: InitError) -> Violation:
    """A violation during module initialisation, as the check and ``movers replay`` report it."""
    where = f" (line {e.line})" if e.line else ""
    return Violation(e.kind, f"during module initialisation{where}: {e.message}", [], e.line)


def peak_memory_mb(budget: Budget | None = None) -> float:
    """``Stats.peak_memory_mb``: this process's peak resident memory during the run of ``budget`` (by default
    the current check's; ``Budget.peak_mb``), or, outside a check, the process's peak so far."""
    b = budget or current()
    if b is not None:
        return b.peak_mb()
    high = high_water_mb()
    return high if high is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def forget_memos() -> None:
    """After a check: drop the memos of the hot path that hold states. They are caches, never stores, and a
    state holds its objects' classes and through them its whole compiled program: a process that checks
    many models in turn (a test run, a benchmark) kept gigabytes of old programs alive through them."""
    from movers.analysis.escape import forget_memos as escape_memos
    from movers.lang.codegen import forget_cover
    from movers.lang.codegen_calls import forget_memos as call_memos
    from movers.semantics.state import forget_covers

    forget_covers()
    forget_cover()
    escape_memos()
    call_memos()


def build_system(source: str, filename: str, options: Options) -> tuple[Program, Any]:
    """The program and the system that ``Checker._run`` searches with ``options`` (the full search of
    ``--workers``), made from the model's source: each actor of ``--backend ray`` makes its own."""
    program = compile_source(source, filename, options.granularity)
    ts = make_reduction(options.reduction, Checker(program, options).system()).system
    ts.initial()
    return program, ts


@dataclass
class Checker:
    """A configured check of one program: ``Checker(program, Options(reduction="optimistic")).run()``.

    ``options.refine``: with an automatic classification (optimistic and later reductions), a violated guess
    refines the classification and restarts the search (Stoller & Cohen, section 8); with ``refine=False`` the
    violation is reported instead.
    """

    program: Program
    options: Options = field(default_factory=Options)
    progress: Callable[[Stats], None] | None = None
    # For --atomicity auto's second search: the blocks the first proved reducible (they run without a shadow
    # phase of their own, instrument/commit.py), and the classification their movers were proved with.
    atomicity_proved: frozenset[int] = frozenset()
    proved_with: Classification | None = field(default=None, repr=False)
    # Set by system(): the movers' classification of the atomicity instrumentation, and the system searched.
    atomicity_classification: Classification | None = field(default=None, init=False, repr=False)
    last_system: Any = field(default=None, init=False, repr=False)

    # The options read most, by their names (the options object stays the one place that holds them).
    @property
    def reduction(self) -> str:
        return self.options.reduction

    @property
    def search(self) -> str:
        return self.options.search

    @property
    def limits(self) -> Limits:
        return self.options.limits

    @property
    def atomicity(self) -> str | None:
        return self.options.atomicity

    @property
    def capabilities(self) -> Capabilities:
        return capabilities(self.options.reduction)

    def system(self, classification: Classification | None = None) -> Any:
        """The transition system to search: the program with its properties, instrumented for atomicity
        when asked. ``classification``: the reduction's, which the movers of atomic blocks then share (one
        guess, refined once, for both)."""
        own = self.capabilities.checks_discipline
        ts = instrument(TransitionSystem(self.program), disciplines=not own, races=self.options.races)
        if self.atomicity in ("commit", "reduction", "proof"):
            self.atomicity_classification = classification or self.proved_with or Classification(
                self.program, refine=self.options.refine, infer=self.options.infer_locks)
        if self.atomicity == "commit":
            from movers.instrument.commit import CommitSystem

            ts = CommitSystem(ts, self.atomicity_classification, self.atomicity_proved)
        elif self.atomicity in ("reduction", "proof"):
            from movers.instrument.reducible import ReducibleSystem

            assert self.atomicity_classification is not None
            ts = ReducibleSystem(ts, self.atomicity_classification, report=self.atomicity == "reduction")
        self.last_system = ts
        return ts

    def run(self) -> Result:
        """Check the program; a limit reached, Ctrl-C or running out of memory anywhere gives an incomplete
        result with the statistics so far (never an exception)."""
        self._start = time.perf_counter()
        # Nested in another check (``--atomicity auto``'s passes, transactions' deadlock search), this check's
        # ``settle()`` pauses the shared budget: that ends with this check, so that the rest of the outer
        # check stays within its limits (a second pass once ran unlimited after the first had settled).
        outer = current()
        paused = outer.paused if outer is not None else 0
        try:
            with enforce(self.limits.budget()) as budget:  # within movers.check, the one that began at compile time
                self._budget = budget
                result = self._run()
        except (LimitReached, KeyboardInterrupt, MemoryError) as e:
            result = self._stopped(stop_reason(e))
        finally:
            if outer is not None:
                outer.paused = paused
            thaw()
        result.search = self.search
        if self.options.simulate or self.options.swarm is not None:
            result.search = "simulate" if self.options.simulate else "swarm"
        result.granularity = self.program.granularity
        if self.options.store != "exact" and result.verdict != "error" and result.hunt is None:
            self._lossy(result)
        return result

    def _lossy(self, result: Result) -> None:
        """A lossy store's report, whole, and the verdict it allows: a search that may have missed more than
        MAX_OMISSION proves nothing (``incomplete``, reason ``coverage``). A report that lacks its kind's fields
        (a search stopped before its store existed, the parallel search) gets them from the states counted:
        for stores split among processes that overstates what was missed, never understates it."""
        store, kind = result.store, self.options.store
        if store.get("kind") != kind or any(f not in store for f in STORE_FIELDS.get(kind, ())):
            result.store = store_report(kind, result.stats.states, self.options.bits)
        verdict, limit = lossy_verdict(result.verdict, result.store)
        if verdict != result.verdict:
            result.verdict, result.limit = verdict, limit

    def _stopped(self, why: str) -> Result:
        search = getattr(self, "last_search", None)
        stats = search.stats if search is not None else Stats()
        if self.capabilities.counts_transactions:
            stats.transactions = stats.moves
        if search is not None:
            stats.states = len(search.stored)
        stats.seconds = round(time.perf_counter() - self._start, 4)
        stats.peak_memory_mb = round(peak_memory_mb(getattr(self, "_budget", None)), 1)
        return Result("incomplete", self.reduction, stats, limit=why, model=self.program.filename)

    def _run(self) -> Result:
        problem = self.options.problem()
        if self.atomicity is not None and not problem:
            problem = self._atomicity_problem()
        if self.options.liveness == "ltl" and not problem and not self.program.ltl_formulas:
            problem = ("--liveness ltl: the model declares no formula: write ltl(\"[] (p -> <> q)\") at module "
                       "level, its atoms @predicate functions (docs/liveness.md)")
        if problem is None and self.capabilities.refuses_model is not None:
            problem = self.capabilities.refuses_model(self.program)
        if problem:
            return Result("error", self.reduction, error=problem, refused=True)
        if self.atomicity == "auto":
            return self._run_auto()
        caps, options = self.capabilities, self.options
        made: dict[str, Any] = {}
        if caps.checks_discipline:
            # Over the atomicity instrumentation a failed guess restarts (reduce/transactions.py says why).
            incremental = caps.incremental and self.atomicity is None
            made["classification"] = self.proved_with or Classification(
                self.program, refine=options.refine, incremental=incremental, infer=options.infer_locks
            )
        ts = self.system(made.get("classification"))
        if caps.infers_disciplines:
            made["refine"] = options.refine  # Dwyer et al.'s locking disciplines, guessed per class
        try:
            red = make_reduction(self.reduction, ts, **made)
        except ValueError as e:
            return Result("error", self.reduction, error=str(e), refused=True)
        # A reduction may run on an instrumentation of the system (transactions: P#, with phases).
        ts = red.system
        try:
            ts.initial()
        except InitError as e:
            settle()
            v = init_violation(e)
            st = Stats(peak_memory_mb=round(peak_memory_mb(), 1))
            return Result("violation", red.name, st, [v], model=self.program.filename)
        if options.simulate or options.swarm is not None:
            return self._run_hunt(ts, red, made.get("classification"))
        if options.workers > 1 or options.backend == "ray":
            return self._run_parallel(ts, red)
        notes: list[str] = []
        symmetric = options.symmetry == "threads"
        if symmetric:
            from movers.semantics.symmetry import symmetry_problem

            why = symmetry_problem(self.program)
            if why:
                symmetric = False
                notes.append(f"--symmetry threads not applied (the search ran without it): {why}")
        start = time.perf_counter()
        self.last_reduction = red
        search, out = self._search(ts, red, options if symmetric else options.but(symmetry="off"),
                                   made.get("classification"), notes)
        deadlock_search = (out.found is None and out.limit is None and "deadlock" not in red.preserves
                           and self._can_block())
        if not deadlock_search:
            settle()  # the verdict is known: replaying its trace is not cut short by the limits
        stats = out.stats
        if caps.counts_transactions:
            stats.transactions = stats.moves
        passes = getattr(search, "passes", 1)
        if passes > 1:
            notes.append(f"the inferred classification weakened during the search: {passes} passes over the "
                         "stored states (no restart)")
        result = self._result(ts, red.name, out)
        if deadlock_search:
            result = self._deadlock_check(result, notes)
            settle()
        stats.peak_memory_mb = round(peak_memory_mb(), 1)
        stats.seconds = round(time.perf_counter() - start, 4)
        if self.atomicity == "commit":
            for b in self.program.atomic_blocks:
                if b.outer < 0 and not b.has_commit:
                    notes.append(f"atomic block at line {b.line}: no commit(), so its commit point is its first "
                                 "step that is not a right mover (a non-mover or a lock release)")
        if (result.verdict == "ok" and not options.races and self.atomicity is None
                and self.program.granularity == "access"):
            note = race_note(self.program)
            if note is not None:
                notes.append(note)
        result.notes = notes
        result.store = search.store_report()
        result.symmetry = "threads" if symmetric else "off"
        if "classification" in made:
            result.classification = made["classification"].report()
            result.locks = made["classification"].protecting_locks()
        else:
            result.classification = red.classification_report() or {}
        return result

    def _search(self, ts: Any, red: Any, options: Options, cls: Classification | None,
                notes: list[str]) -> tuple[Search, Any]:
        """Run the search until no guess of the classification is refuted: each ``Refine`` revises the guess
        and restarts it (Stoller & Cohen, section 8), with a note."""
        while True:
            search = Search(ts, red, options, self.progress)
            self.last_search = search
            try:
                return search, search.run(self.search)
            except Refine as r:
                own = red.refined(r)
                if own is not None:
                    # The reduction keeps its own guesses (Dwyer et al.'s disciplines): it revised them.
                    notes.append(own)
                    poll()
                    continue
                # Section 8: revise the guess and start again; the classification only ever weakens. The time
                # limit covers every restart: the budget is the check's, not the search's.
                guess = cls or self.atomicity_classification
                assert guess is not None  # a Refine comes from a classification
                guess.apply(r)
                red.reset()
                ts.reset()
                notes.append(f"refined: {r.message}; now {r.new.describe(self.program)} (search restarted)")
                poll()

    def _run_parallel(self, ts: Any, red: Any) -> Result:
        """``--workers N``: the partitioned search (search/parallel.py); deadlocks are preserved (it is the full
        search), so no second search is needed."""
        from movers.search.parallel import parallel_search

        start = time.perf_counter()
        if self.options.backend == "ray":  # the same partitioned search, on Ray actors
            from movers.search.ray_backend import ClusterUnavailable, ray_search

            try:
                out = ray_search(ts, self.program, self.options, build_system, self.progress)
            except ClusterUnavailable as e:
                return Result("error", red.name, error=str(e))
        else:
            out = parallel_search(ts, self.options, self.progress)
        settle()
        result = self._result(ts, red.name, out)
        result.stats.peak_memory_mb = round(peak_memory_mb(), 1)
        result.stats.seconds = round(time.perf_counter() - start, 4)
        result.store = getattr(out, "store", {"kind": self.options.store})
        split = " / ".join(f"{k:,}" for k in getattr(out, "split", []))
        result.notes = [f"searched by {self.options.workers} processes (--workers; states stored by each: {split}); "
                        "max depth is not measured there"]
        if self.options.backend == "ray":
            result.notes = [f"searched by {self.options.workers} Ray actors (--backend ray; states stored by each: "
                            f"{split}); max depth is not measured there"]
            lost = getattr(out, "lost", None)
            if lost:
                result.notes.append(f"{lost}; the states counted are those stored until the last round")
        return result

    def _run_hunt(self, ts: Any, red: Any, classification: Classification | None) -> Result:
        """``--simulate`` (search/simulate.py) or ``--swarm N`` (search/swarm.py): bug hunting, never a proof; the
        result says which ran, with its seed and coverage (``hunt``)."""
        options, notes = self.options, []
        if options.symmetry == "threads":
            from movers.semantics.symmetry import symmetry_problem

            why = symmetry_problem(self.program)
            if why:
                options = options.but(symmetry="off")
                notes.append(f"--symmetry threads not applied (the search ran without it): {why}")
        start = time.perf_counter()
        hunt: dict[str, Any]
        if options.simulate:
            from movers.search.simulate import simulate, walks_note

            out, walks = simulate(ts, red, options, self.progress)
            hunt = walks.report()
            notes.append(walks_note(walks, out.found is not None))
            store: dict[str, Any] = {"kind": "exact"}
        else:
            from movers.search.swarm import swarm_notes, swarm_search

            out, hunt = swarm_search(ts, red, options, self.progress, classification)
            notes += swarm_notes(hunt, out.found is not None)
            # The fullest member's bit array: the lowest hash factor, the least coverage.
            reports = [m["store"] for m in sorted(hunt["members"], key=lambda m: -m["states"]) if m["store"]]
            store = reports[0] if reports else store_report("bitstate", 0, options.bits)
        settle()  # the verdict is known: replaying its trace is not cut short by the limits
        result = self._result(ts, red.name, out)
        result.stats.peak_memory_mb = round(peak_memory_mb(), 1)
        result.stats.seconds = round(time.perf_counter() - start, 4)
        result.notes = notes
        result.store = store
        result.symmetry = options.symmetry
        result.hunt = hunt
        return result

    def _atomicity_problem(self) -> str | None:
        """What the model refuses of ``--atomicity`` (``options_problem`` has checked the rest)."""
        if not self.program.atomic_blocks:
            return "--atomicity commit: the model has no 'with atomic():' block to check"
        return None

    def _run_auto(self) -> Result:
        """``--atomicity auto``: a first search proves blocks atomic by reduction (R* N? L*); when it proves
        them all, no shadow store is needed; otherwise a second search checks commit-atomicity (every block
        on the shadow store: see below)."""
        first = replace(self, options=self.options.but(atomicity="proof"))
        result = first.run()
        outer = [b for b in self.program.atomic_blocks if b.outer < 0]
        broken = getattr(first.last_system, "broken", {})
        notes = []
        proved_ids = [b for b in outer if b.ident not in broken and not b.has_commit]
        for b in outer:
            if b.has_commit:
                notes.append(f"atomic block at line {b.line}: commit() marks its commit point; checked by "
                             "commit-atomicity there")
            elif b.ident in broken:
                why = broken[b.ident].split("; ")[0]
                notes.append(f"atomic block at line {b.line}: not proved by reduction ({why}); checked by "
                             "commit-atomicity")
            else:
                notes.append(f"atomic block at line {b.line}: proved atomic by reduction (R* N? L*)"
                             + ("" if len(proved_ids) == len(outer) else
                                "; it runs as one transaction (no other thread moves while it can)"))
        proved = proved_ids
        if result.verdict != "ok" or len(proved) == len(outer):
            result.notes = result.notes + notes
            return result
        # The others by commit-atomicity; the proved blocks run alone, as one transaction in both stores
        # (instrument/commit.py, "Blocks proved by reduction"), with the movers they were proved with. (Run
        # as plain code instead, a proved block would take its locks on the shadow store at once, where the
        # serial run of another block would then find them held: a false alarm.)
        second = replace(self, options=self.options.but(atomicity="commit"),
                         atomicity_proved=frozenset(b.ident for b in proved),
                         proved_with=first.atomicity_classification).run()
        second.notes = result.notes + notes + second.notes
        return second

    def _can_block(self) -> bool:
        return any(n.guard is not None for c in self.program.codes() for n in c.nodes)

    def _deadlock_check(self, result: Result, notes: list[str]) -> Result:
        """A reduction that does not preserve deadlocks (transactions) gets deadlock freedom checked by
        another sound route: an optimistic search."""
        # Run within this check's budget: the time limit covers both searches.
        o = self.options
        other = Checker(self.program, Options(reduction=self.capabilities.deadlock_search or "none", search=o.search,
                                              limits=o.limits, refine=o.refine, infer_locks=o.infer_locks)).run()
        if other.verdict == "ok":
            notes.append(f"deadlock freedom checked by an optimistic search ({other.stats.states:,} states), "
                         "since transactions do not preserve deadlocks")
            return result
        if other.verdict == "violation":
            notes.append("found by the optimistic search run to check deadlock freedom (transactions do not "
                         "preserve deadlocks)")
            return Result("violation", result.reduction, result.stats, other.violations, model=result.model)
        notes.append("the optimistic search for deadlock freedom did not complete")
        return Result("incomplete", result.reduction, result.stats, limit=other.limit, model=result.model)

    def _result(self, ts: Any, name: str, out: Any) -> Result:
        stats = out.stats
        if out.found is not None:
            violations = []
            for f in getattr(out, "all_found", None) or [out.found]:
                system = getattr(ts, "replay_system", ts)
                message = f.message
                if f.kind == "atomicity" and hasattr(ts, "serial_order"):
                    order = ts.serial_order(f.steps)
                    message += ("; the shadow store ran, serially: " + ", then ".join(order)) if order else ""
                v = violation(system, f.kind, message, f.steps)
                v.cycle_start = f.cycle_start
                violations.append(v)
            return Result("violation", name, stats, violations, model=self.program.filename)
        if out.limit is not None:
            return Result("incomplete", name, stats, limit=out.limit, model=self.program.filename)
        result = Result("ok", name, stats, model=self.program.filename)
        if self.options.liveness is not None:
            mode = self.options.fairness_mode
            result.headline = (f"verified: no fair cycle violates {self.options.liveness} "
                               f"({'every cycle counts: no fairness' if mode == 'none' else mode + ' fairness'})")
        return result


def check(
    model: str | os.PathLike[str] | None = None,
    *,
    source: str | None = None,
    reduction: str = "none",
    search: str = "dfs",
    max_states: int | None = None,
    time_limit: float | None = None,
    max_depth: int | None = None,
    max_memory: float | None = None,
    progress: Callable[[Stats], None] | None = None,
    filename: str | None = None,
    refine: bool = True,
    infer_locks: bool = True,
    atomicity: str | None = None,
    store: str = "exact",
    bits: int = 26,
    symmetry: str = "off",
    workers: int = 1,
    max_violations: int = 1,
    granularity: str = "access",
    races: bool = False,
    liveness: str | None = None,
    fairness: str | None = None,
    simulate: bool = False,
    swarm: int | None = None,
    seed: int | None = None,
    options: Options | None = None,
    backend: str = "processes",
    address: str | None = None,
) -> Result:
    """Check a model and return its Result (the fields of ``--json``); never raises for bad input.

    ``model`` is a path (a ``str`` containing a newline is source text, see ``is_source_text``); ``source=``
    passes source text. Bad arguments (an unknown reduction or search, a limit that is not positive and
    finite, an unreadable or undecodable file) and a model that does not compile give verdict "error" with
    the message in ``error``. ``time_limit`` (seconds) and ``max_memory`` (MB; None: 75% of the machine's
    memory) cover everything from reading the model on; reaching one gives verdict "incomplete".
    ``atomicity="commit"`` also checks the model's ``with atomic():`` blocks (commit-atomicity, papers/003).
    ``store``: the visited store of the depth-first search, "exact", "hashcompact" (64-bit fingerprints) or
    "bitstate" (a bit array of 2^``bits`` bits); see search/fingerprints.py. ``symmetry="threads"``
    remembers states up to a renaming of the threads where the model cannot observe thread numbers
    (semantics/symmetry.py; otherwise the search runs without it, and a note says why). ``liveness``
    ("termination", "starvation") checks a liveness property under ``fairness`` ("weak" by default, "strong",
    "none"): search/fair_cycles.py. ``simulate=True`` runs random walks (search/simulate.py) and ``swarm=N``
    N diversified bitstate searches in processes (search/swarm.py), from ``seed``: bug hunting, never a proof
    (verdict "incomplete" when they find nothing).
    """
    name = str(reduction)
    problem = _model_problem(model, source)
    if problem:
        return Result("error", name, error=problem, refused=True)
    if options is None:
        options = Options(reduction, search, Limits(max_states, time_limit, max_depth, max_memory), store=store,
                          bits=bits, symmetry=symmetry, workers=workers, atomicity=atomicity,
                          max_violations=max_violations, refine=refine, infer_locks=infer_locks,
                          granularity=granularity, races=races, liveness=liveness, fairness=fairness,
                          simulate=simulate, swarm=swarm, seed=seed, backend=backend, address=address)
    name = str(options.reduction)
    problem = options.problem()
    if problem:
        return Result("error", name, error=problem, refused=True)
    start = time.perf_counter()
    where = filename or ("<model>" if source is not None or is_source_text(model) else os.fspath(model))  # type: ignore[arg-type]
    budget = options.limits.budget()
    try:
        with enforce(budget):
            try:
                program = load(model, filename, source=source, granularity=options.granularity)
            except ModelSyntaxError as e:
                return Result("error", name, error=str(e))
            except OSError as e:
                return Result("error", name, error=f"{where}: cannot read the model: {e.strerror or e}")
            return Checker(program, options, progress).run()
    except (LimitReached, KeyboardInterrupt, MemoryError) as e:
        # Stopped while reading, compiling or setting up: no search has run, so the statistics are empty.
        st = Stats(seconds=round(time.perf_counter() - start, 4), peak_memory_mb=round(peak_memory_mb(budget), 1))
        result = Result("incomplete", name, st, limit=stop_reason(e), model=where)
        bits = options.bits
        if options.store in STORES and type(bits) is int and BITS_RANGE[0] <= bits <= BITS_RANGE[1]:
            result.store = store_report(options.store, 0, options.bits)  # what the search would have used
        return result
    finally:
        forget_memos()
