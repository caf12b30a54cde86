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
from movers.reduce import checks_discipline, make_reduction
from movers.reduce.classify import Classification, Refine
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

    def system(self) -> Any:
        own = checks_discipline(self.reduction)
        return instrument(TransitionSystem(self.program), disciplines=not own)

    def run(self) -> Result:
        if self.search not in ("dfs", "bfs"):
            return Result("error", self.reduction, error=f"unknown search '{self.search}' (dfs or bfs)")
        ts = self.system()
        options: dict[str, Any] = {}
        if checks_discipline(self.reduction):
            options["classification"] = Classification(self.program, refine=self.refine)
        try:
            red = make_reduction(self.reduction, ts, **options)
        except ValueError as e:
            return Result("error", self.reduction, error=str(e))
        try:
            ts.initial()
        except InitError as e:
            where = f" (line {e.line})" if e.line else ""
            v = Violation(e.kind, f"during module initialisation{where}: {e.message}", [], e.line)
            return Result("violation", red.name, Stats(), [v], model=self.program.filename)
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
        stats.peak_memory_mb = round(peak_memory_mb(), 1)
        stats.seconds = round(time.perf_counter() - start, 4)
        result = self._result(ts, red.name, out)
        result.notes = notes
        if "classification" in options:
            result.classification = options["classification"].report()
        return result

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
    return Checker(program, reduction, search, limits, progress, refine).run()
