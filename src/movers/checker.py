"""The Python API: ``movers.check(model, …) -> Result``, and ``Checker`` for more control.

A check is: compile the model, build its transition system, add the property instrumentation, choose the
reduction, run an explorer, and turn what it found into a ``Result`` (the ``--json`` contract) with a
step-granularity trace.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from movers.instrument.properties import instrument
from movers.ir.program import Program
from movers.lang.compiler import compile_model
from movers.lang.errors import ModelSyntaxError
from movers.reduce import REDUCTIONS, checks_discipline, make_reduction
from movers.reduce.classify import Classification, Refine
from movers.reduce.transactions import second_condition_violations
from movers.report.result import Result, Stats, Violation
from movers.report.trace import replay
from movers.search.explore import Limits, Search
from movers.semantics.system import InitError, TransitionSystem


def load(model: str | os.PathLike[str], filename: str | None = None) -> Program:
    """Compile a model given as a path or as source text (a string with a newline)."""
    if isinstance(model, os.PathLike) or ("\n" not in model and model.endswith(".py")):
        path = Path(model)
        source = path.read_text(encoding="utf-8")
        return compile_model(source, filename or str(model))
    return compile_model(model, filename or "<model>")


def peak_memory_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


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

    def system(self) -> Any:
        own = checks_discipline(self.reduction)
        return instrument(TransitionSystem(self.program), disciplines=not own)

    def run(self) -> Result:
        if self.search not in ("dfs", "bfs"):
            return Result("error", self.reduction, error=f"unknown search '{self.search}' (dfs or bfs)")
        ts = self.system()
        options: dict[str, Any] = {}
        if checks_discipline(self.reduction):
            incremental = bool(getattr(REDUCTIONS[self.reduction], "incremental", False))
            options["classification"] = Classification(
                self.program, refine=self.refine, incremental=incremental, infer=self.infer_locks
            )
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
            where = f" (line {e.line})" if e.line else ""
            v = Violation(e.kind, f"during module initialisation{where}: {e.message}", [], e.line)
            st = Stats(peak_memory_mb=round(peak_memory_mb(), 1))
            return Result("violation", red.name, st, [v], model=self.program.filename)
        notes: list[str] = []
        start = time.perf_counter()
        self.last_reduction = red
        limits = self.limits
        while True:
            search = Search(ts, red, limits, self.progress)
            self.last_search = search
            try:
                out = search.run(self.search)
                break
            except Refine as r:
                # Section 8: revise the guess and start again; the classification only ever weakens.
                cls = options["classification"]
                cls.apply(r)
                red.reset()  # type: ignore[attr-defined]
                notes.append(f"refined: {r.message}; now {r.new.describe(self.program)} (search restarted)")
                if limits.time_limit is not None:
                    left = self.limits.time_limit - (time.perf_counter() - start)  # type: ignore[operator]
                    if left <= 0:
                        out = search.run_result_after_stop("time-limit")
                        break
                    limits = Limits(limits.max_states, left, limits.max_depth)
        stats = out.stats
        if red.name == "transactions":
            stats.transactions = stats.moves
        passes = getattr(search, "passes", 1)
        if passes > 1:
            notes.append(f"the inferred classification weakened during the search: {passes} passes over the "
                         "stored states (no restart)")
        result = self._result(ts, red.name, out)
        if result.verdict == "ok" and "deadlock" not in red.preserves and self._can_block():
            result = self._deadlock_check(result, notes)
        stats.peak_memory_mb = round(peak_memory_mb(), 1)
        stats.seconds = round(time.perf_counter() - start, 4)
        result.notes = notes
        if "classification" in options:
            result.classification = options["classification"].report()
            result.locks = options["classification"].protecting_locks()
        return result

    def _can_block(self) -> bool:
        return any(n.guard is not None for c in self.program.codes() for n in c.nodes)

    def _deadlock_check(self, result: Result, notes: list[str]) -> Result:
        """A reduction that does not preserve deadlocks (transactions) gets deadlock freedom checked by
        another sound route: an optimistic search."""
        limits = self.limits
        if limits.time_limit is not None:
            left = max(limits.time_limit - result.stats.seconds, 0.001)
            limits = Limits(limits.max_states, left, limits.max_depth)
        other = Checker(self.program, "optimistic", self.search, limits, None, self.refine,
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
            f = out.found
            trace = replay(ts, f.steps)
            line = trace[-1].line if trace else 0
            v = Violation(f.kind, f.message, trace, line)
            return Result("violation", name, stats, [v], model=self.program.filename)
        if out.limit is not None:
            return Result("incomplete", name, stats, limit=out.limit, model=self.program.filename)
        return Result("ok", name, stats, model=self.program.filename)


def check(
    model: str | os.PathLike[str],
    *,
    reduction: str = "none",
    search: str = "dfs",
    max_states: int | None = None,
    time_limit: float | None = None,
    max_depth: int | None = None,
    progress: Callable[[Stats], None] | None = None,
    filename: str | None = None,
    refine: bool = True,
    infer_locks: bool = True,
) -> Result:
    """Check a model (a path, or source text) and return its Result (the fields of ``--json``).

    A model that does not compile gives verdict "error" with the ``file:line:col`` message in ``error``.
    """
    try:
        program = load(model, filename)
    except ModelSyntaxError as e:
        return Result("error", reduction, error=str(e))
    except OSError as e:
        return Result("error", reduction, error=f"{model}: cannot read the model: {e.strerror or e}")
    limits = Limits(max_states, time_limit, max_depth)
    return Checker(program, reduction, search, limits, progress, refine, infer_locks).run()
