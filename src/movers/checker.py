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
from movers.ir.program import Program
from movers.lang.compiler import compile_model
from movers.lang.errors import ModelSyntaxError
from movers.reduce import REDUCTIONS, checks_discipline, make_reduction
from movers.reduce.transactions import second_condition_violations
from movers.report.result import Result, Stats, Violation
from movers.report.trace import violation
from movers.search.explore import Limits, Search, thaw
from movers.search.fingerprints import BITS_RANGE, STORES
from movers.search.limits import LimitReached, current, enforce, poll, problems, settle, stop_reason
from movers.semantics.system import InitError, TransitionSystem

SEARCHES = ("dfs", "bfs")


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
            best = (d, node.lineno, node.col_offset)
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


def compile_source(source: str, filename: str) -> Program:
    """Compile model text; nesting too deep for Python's recursion is a ModelSyntaxError, not a crash."""
    if "\0" in source:
        i = source.index("\0")
        line = source.count("\n", 0, i) + 1
        raise ModelSyntaxError(filename, line, i - (source.rfind("\n", 0, i) + 1) + 1,
                               "the model contains a null character")
    try:
        return compile_model(source, filename)
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
    model: str | os.PathLike[str] | None = None, filename: str | None = None, *, source: str | None = None
) -> Program:
    """Compile a model and return its program: ``model`` is a path (see ``is_source_text`` for the one
    exception), ``source=`` is source text. Raises ModelSyntaxError (``file:line:col: message``) for a model
    that is wrong, OSError for a file that cannot be read, ValueError for arguments that name no model."""
    problem = _model_problem(model, source)
    if problem:
        raise ValueError(problem)
    if source is not None:
        return compile_source(source, filename or "<model>")
    assert model is not None
    if is_source_text(model):
        return compile_source(str(model), filename or "<model>")
    name = filename or os.fspath(model)
    return compile_source(read_model(model, name), name)


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


def peak_memory_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


ATOMICITY = ("commit", "reduction", "auto")
# The reductions that run the commit-atomicity instrumentation: each treats a step that moves the shadow store
# or a phase as visible (``CommitSystem.quiet``; a non-mover of P# for transactions); docs/reductions.md
# argues why that is enough.
COMMIT_REDUCTIONS = ("none", "optimistic", "transactions", "dwyer-d", "dwyer-s", "dwyer-da", "dwyer-sda", "dwyer-wsl",
                     "dwyer-wsldom", "dwyer-ld", "dwyer-ld+wsldom")


@dataclass
class Checker:
    """A configured check of one program: ``Checker(program, reduction="none").run()``.

    ``refine``: with an automatic classification (optimistic and later reductions), a violated guess
    refines the classification and restarts the search (Stoller & Cohen, section 8); with
    ``refine=False`` the violation is reported instead.
    """

    program: Program
    reduction: str = "none"
    search: str = "dfs"
    limits: Limits = field(default_factory=Limits)
    progress: Callable[[Stats], None] | None = None
    refine: bool = True
    infer_locks: bool = True
    # Checking `with atomic():` blocks: "commit" (Flanagan's commit-atomicity, papers/003, a shadow store),
    # "reduction" (every block R* N? L* with movers, papers/004), "auto" (reduction where it proves a block,
    # the shadow store for the others), or None.
    atomicity: str | None = None
    # For --atomicity auto's second search: the blocks the first proved reducible (they run without a shadow
    # phase of their own, instrument/commit.py), and the classification their movers were proved with.
    atomicity_proved: frozenset[int] = frozenset()
    proved_with: Classification | None = field(default=None, repr=False)
    # The depth-first visited store: "exact", "hashcompact" (64-bit fingerprints) or "bitstate" (2^bits bits),
    # search/fingerprints.py.
    store: str = "exact"
    bits: int = 26
    # "threads": remember states up to a renaming of the threads (semantics/symmetry.py), where the model
    # cannot observe thread numbers; "off".
    symmetry: str = "off"
    # Processes of the partitioned search (search/parallel.py); 1: the sequential search.
    workers: int = 1
    # Distinct violations to find before stopping (--max-violations; --all-violations: no bound).
    max_violations: int = 1
    # Set by system(): the movers' classification of the atomicity instrumentation, and the system searched.
    atomicity_classification: Classification | None = field(default=None, init=False, repr=False)
    last_system: Any = field(default=None, init=False, repr=False)

    def system(self, classification: Classification | None = None) -> Any:
        """The transition system to search: the program with its properties, instrumented for atomicity
        when asked. ``classification``: the reduction's, which the movers of atomic blocks then share (one
        guess, refined once, for both)."""
        own = checks_discipline(self.reduction)
        ts = instrument(TransitionSystem(self.program), disciplines=not own)
        if self.atomicity in ("commit", "reduction", "proof"):
            self.atomicity_classification = classification or self.proved_with or Classification(
                self.program, refine=self.refine, infer=self.infer_locks)
        if self.atomicity == "commit":
            from movers.instrument.commit import CommitSystem

            ts = CommitSystem(ts, self.atomicity_classification, self.atomicity_proved)
        elif self.atomicity in ("reduction", "proof"):
            from movers.instrument.reducible import ReducibleSystem

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
            with enforce(self.limits.budget()):  # within movers.check, the budget that began at compile time
                result = self._run()
        except (LimitReached, KeyboardInterrupt, MemoryError) as e:
            result = self._stopped(stop_reason(e))
        finally:
            if outer is not None:
                outer.paused = paused
            thaw()
        result.search = self.search
        return result

    def _stopped(self, why: str) -> Result:
        search = getattr(self, "last_search", None)
        stats = search.stats if search is not None else Stats()
        if self.reduction == "transactions":
            stats.transactions = stats.moves
        if search is not None:
            stats.states = len(search.stored)
        stats.seconds = round(time.perf_counter() - self._start, 4)
        stats.peak_memory_mb = round(peak_memory_mb(), 1)
        return Result("incomplete", self.reduction, stats, limit=why, model=self.program.filename)

    def _run(self) -> Result:
        if self.search not in SEARCHES:
            return Result("error", self.reduction, error=f"unknown search '{self.search}' (dfs or bfs)")
        problem = self._store_problem()
        if problem:
            return Result("error", self.reduction, error=problem)
        if self.atomicity is not None:
            problem = self._atomicity_problem()
            if problem:
                return Result("error", self.reduction, error=problem)
            if self.atomicity == "auto":
                return self._run_auto()
        options: dict[str, Any] = {}
        if checks_discipline(self.reduction):
            # Over the atomicity instrumentation a failed guess restarts (reduce/transactions.py says why).
            incremental = bool(getattr(REDUCTIONS[self.reduction], "incremental", False)) and self.atomicity is None
            options["classification"] = self.proved_with or Classification(
                self.program, refine=self.refine, incremental=incremental, infer=self.infer_locks
            )
        ts = self.system(options.get("classification"))
        if getattr(REDUCTIONS.get(self.reduction), "infers_disciplines", False):
            options["refine"] = self.refine  # Dwyer et al.'s locking disciplines, guessed per class
        if self.reduction == "transactions":
            bad = second_condition_violations(self.program)
            if bad:
                return Result("error", self.reduction, error=(
                    "--reduction transactions needs exclusive access predicates that hold for one thread at a "
                    "time and that no other thread can give or take away (Flanagan & Qadeer, section 4.1, "
                    "conditions (i) and (ii)); these may not: "
                    + "; ".join(bad) + ". Use --reduction optimistic, which needs only that no thread takes "
                    "access away (WFendExcl)"))
        try:
            red = make_reduction(self.reduction, ts, **options)
        except ValueError as e:
            return Result("error", self.reduction, error=str(e))
        # A reduction may run on an instrumentation of the system (transactions: P#, with phases).
        ts = getattr(red, "system", ts)
        try:
            ts.initial()
        except InitError as e:
            settle()
            v = init_violation(e)
            st = Stats(peak_memory_mb=round(peak_memory_mb(), 1))
            return Result("violation", red.name, st, [v], model=self.program.filename)
        if self.workers > 1:
            return self._run_parallel(ts, red)
        notes: list[str] = []
        symmetric = self.symmetry == "threads"
        if symmetric:
            from movers.semantics.symmetry import symmetry_problem

            why = symmetry_problem(self.program)
            if why:
                symmetric = False
                notes.append(f"--symmetry threads not applied (the search ran without it): {why}")
        start = time.perf_counter()
        self.last_reduction = red
        while True:
            search = Search(ts, red, self.limits, self.progress, self.store, self.bits, symmetric,
                            self.max_violations)
            self.last_search = search
            try:
                out = search.run(self.search)
                break
            except Refine as r:
                refined = getattr(red, "refined", None)
                if refined is not None and getattr(r, "discipline", None) is not None:
                    # The reduction keeps its own guesses (Dwyer et al.'s disciplines): it revises them.
                    notes.append(refined(r))
                    poll()
                    continue
                # Section 8: revise the guess and start again; the classification only ever weakens. The time
                # limit covers every restart: the budget is the check's, not the search's.
                cls = options.get("classification") or self.atomicity_classification
                cls.apply(r)
                for part in (red, ts):
                    reset = getattr(part, "reset", None)
                    if reset is not None:
                        reset()
                notes.append(f"refined: {r.message}; now {r.new.describe(self.program)} (search restarted)")
                poll()
        deadlock_search = (out.found is None and out.limit is None and "deadlock" not in red.preserves
                           and self._can_block())
        if not deadlock_search:
            settle()  # the verdict is known: replaying its trace is not cut short by the limits
        stats = out.stats
        if red.name == "transactions":
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
        result.notes = notes
        result.store = search.store_report()
        result.symmetry = "threads" if symmetric else "off"
        if "classification" in options:
            result.classification = options["classification"].report()
            result.locks = options["classification"].protecting_locks()
        elif hasattr(red, "disciplines"):
            result.classification = red.disciplines.report()
        return result

    def _run_parallel(self, ts: Any, red: Any) -> Result:
        """``--workers N``: the partitioned search (search/parallel.py); deadlocks are preserved (it is the full
        search), so no second search is needed."""
        from movers.search.parallel import parallel_search

        start = time.perf_counter()
        out = parallel_search(ts, self.workers, self.limits, self.progress, self.store)
        settle()
        result = self._result(ts, red.name, out)
        result.stats.peak_memory_mb = round(peak_memory_mb(), 1)
        result.stats.seconds = round(time.perf_counter() - start, 4)
        result.store = {"kind": self.store}
        split = " / ".join(f"{k:,}" for k in getattr(out, "split", []))
        result.notes = [f"searched by {self.workers} processes (--workers; states stored by each: {split}); max "
                        "depth is not measured there"]
        return result

    def _store_problem(self) -> str | None:
        if type(self.max_violations) is not int or self.max_violations < 1:
            return f"--max-violations must be a positive number (got {self.max_violations!r})"
        if self.max_violations > 1:
            passes = bool(getattr(REDUCTIONS.get(self.reduction), "incremental", False))
            why = [w for w, bad in (("--search bfs", self.search != "dfs"), (f"--workers {self.workers}",
                                    self.workers > 1), (f"--reduction {self.reduction}", passes)) if bad]
            if why:
                return ("--all-violations / --max-violations: with the depth-first search only, not with "
                        + ", ".join(why))
        if type(self.workers) is not int or self.workers < 1:
            return f"--workers must be a positive number (got {self.workers!r})"
        if self.workers > 1:
            why = [w for w, bad in (
                (f"--reduction {self.reduction}", self.reduction != "none"),
                ("--search bfs", self.search != "dfs"), ("--atomicity", self.atomicity is not None),
                ("--symmetry threads", self.symmetry != "off"), ("--store bitstate", self.store == "bitstate"),
                ("--max-depth", self.limits.max_depth is not None)) if bad]
            if why:
                return (f"--workers {self.workers}: the parallel search is the full search (--reduction none, "
                        f"depth-first, exact or hashcompact store) for now, not with {', '.join(why)}")
        if self.symmetry not in ("threads", "off"):
            return f"unknown --symmetry '{self.symmetry}' (threads or off)"
        if self.symmetry == "threads":
            if self.reduction != "none":
                return (f"--symmetry threads: only with --reduction none for now (--reduction {self.reduction} "
                        "classifies locations by the thread that touches them, which renaming threads changes)")
            if self.search != "dfs":
                return "--symmetry threads needs --search dfs (the breadth-first search keeps every state)"
            if self.atomicity is not None:
                return "--symmetry threads: not with --atomicity (its phases are per thread)"
        if self.store == "exact":
            return None
        if self.store not in STORES:
            return f"unknown --store '{self.store}' (known: {', '.join(STORES)})"
        if self.search != "dfs":
            return (f"--store {self.store} needs --search dfs: a breadth-first search keeps every state for its "
                    "counterexample paths, so a lossy store would save nothing")
        if getattr(REDUCTIONS.get(self.reduction), "incremental", False):
            return (f"--store {self.store}: not with --reduction {self.reduction}, whose passes re-expand every "
                    "stored state (it needs the states themselves)")
        if self.store == "bitstate" and not (BITS_RANGE[0] <= self.bits <= BITS_RANGE[1]):
            return (f"--bits {self.bits}: the bit array has 2^bits bits; give {BITS_RANGE[0]} to {BITS_RANGE[1]} "
                    f"({2 ** BITS_RANGE[1] // 8 // 2**20:,} MB at most)")
        return None

    def _atomicity_problem(self) -> str | None:
        if self.atomicity not in ATOMICITY and self.atomicity != "proof":
            return f"unknown --atomicity '{self.atomicity}' (known: {', '.join(ATOMICITY)})"
        allowed = COMMIT_REDUCTIONS if self.atomicity == "commit" else ("none", "optimistic")
        if self.reduction not in allowed:
            names = (f"{allowed[0]} or {allowed[1]}" if len(allowed) == 2 else
                     ", ".join(r for r in allowed if not r.startswith("dwyer-")) + " or the dwyer-* strategies")
            return (f"--atomicity {self.atomicity}: only with --reduction {names} for now; no other reduction is "
                    f"shown yet to preserve atomicity violations (--reduction {self.reduction} refused)")
        if not self.program.atomic_blocks:
            return "--atomicity commit: the model has no 'with atomic():' block to check"
        return None

    def _run_auto(self) -> Result:
        """``--atomicity auto``: a first search proves blocks atomic by reduction (R* N? L*); when it proves
        them all, no shadow store is needed; otherwise a second search checks commit-atomicity (every block
        on the shadow store: see below)."""
        first = replace(self, atomicity="proof")
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
        second = replace(self, atomicity="commit", atomicity_proved=frozenset(b.ident for b in proved),
                         proved_with=first.atomicity_classification).run()
        second.notes = result.notes + notes + second.notes
        return second

    def _can_block(self) -> bool:
        return any(n.guard is not None for c in self.program.codes() for n in c.nodes)

    def _deadlock_check(self, result: Result, notes: list[str]) -> Result:
        """A reduction that does not preserve deadlocks (transactions) gets deadlock freedom checked by
        another sound route: an optimistic search."""
        # Run within this check's budget: the time limit covers both searches.
        other = Checker(self.program, "optimistic", self.search, self.limits, None, self.refine,
                        self.infer_locks).run()
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
                violations.append(violation(system, f.kind, message, f.steps))
            return Result("violation", name, stats, violations, model=self.program.filename)
        if out.limit is not None:
            return Result("incomplete", name, stats, limit=out.limit, model=self.program.filename)
        return Result("ok", name, stats, model=self.program.filename)


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
    (semantics/symmetry.py; otherwise the search runs without it, and a note says why).
    """
    name = str(reduction)
    problem = arguments_problem(model, source, reduction, search, max_states=max_states,
                                time_limit=time_limit, max_depth=max_depth, max_memory=max_memory)
    if problem:
        return Result("error", name, error=problem)
    limits = Limits(max_states, time_limit, max_depth, max_memory)
    start = time.perf_counter()
    where = filename or ("<model>" if source is not None or is_source_text(model) else os.fspath(model))  # type: ignore[arg-type]
    try:
        with enforce(limits.budget()):
            try:
                program = load(model, filename, source=source)
            except ModelSyntaxError as e:
                return Result("error", name, error=str(e))
            except OSError as e:
                return Result("error", name, error=f"{where}: cannot read the model: {e.strerror or e}")
            return Checker(program, name, search, limits, progress, refine, infer_locks, atomicity,
                           store=store, bits=bits, symmetry=symmetry, workers=workers,
                           max_violations=max_violations).run()
    except (LimitReached, KeyboardInterrupt, MemoryError) as e:
        # Stopped while reading, compiling or setting up: no search has run, so the statistics are empty.
        st = Stats(seconds=round(time.perf_counter() - start, 4), peak_memory_mb=round(peak_memory_mb(), 1))
        return Result("incomplete", name, st, limit=stop_reason(e), model=where)


def arguments_problem(
    model: object, source: object, reduction: object, search: object, **limits: Any
) -> str | None:
    """What is wrong with the arguments of ``check`` (the message of its error Result), or None."""
    problem = _model_problem(model, source)
    if problem:
        return problem
    if reduction not in REDUCTIONS:
        return f"unknown reduction '{reduction}' (known: {', '.join(REDUCTIONS)})"
    if search not in SEARCHES:
        return f"unknown search '{search}' (dfs or bfs)"
    bad = problems(**limits)
    return f"{bad[0][0]} {bad[0][1]}" if bad else None
