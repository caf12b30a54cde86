"""What a check is asked to do: one frozen ``Options`` built once, from the command line (``cli.py``) or from
the Python API (``movers.check``), validated in one place (``problem``), and passed whole from the command
line to the checker to the search.

The limits are their own small value (``Limits``), since the budget they give (time, memory) is enforced
everywhere the time goes (``search/limits.py``), not only in the search loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from movers.search.limits import Budget, default_max_memory_mb, problems

# The searches (``--search``); search/ has one module per strategy.
SEARCHES = ("dfs", "bfs")
ATOMICITY = ("commit", "reduction", "auto")
SYMMETRY = ("off", "threads")


@dataclass(frozen=True)
class Limits:
    """``max_memory`` is in MB; None means the default ceiling (``limits.default_max_memory_mb``)."""

    max_states: int | None = None
    time_limit: float | None = None
    max_depth: int | None = None
    max_memory: float | None = None

    def budget(self) -> Budget:
        """The time and memory part, enforced wherever the time goes (``movers.search.limits``)."""
        mem = self.max_memory if self.max_memory is not None else default_max_memory_mb()
        return Budget(self.time_limit, mem)

    def problem(self) -> str | None:
        bad = problems(max_states=self.max_states, time_limit=self.time_limit, max_depth=self.max_depth,
                       max_memory=self.max_memory)
        return f"{bad[0][0]} {bad[0][1]}" if bad else None


@dataclass(frozen=True)
class Options:
    """Everything a check is asked to do, but the model. The defaults are the command line's."""

    reduction: str = "none"
    search: str = "dfs"
    limits: Limits = field(default_factory=Limits)
    # The depth-first visited store: "exact", "hashcompact" (64-bit fingerprints) or "bitstate" (2^bits
    # bits), search/fingerprints.py.
    store: str = "exact"
    bits: int = 26
    # "threads": remember states up to a renaming of the threads (semantics/symmetry.py); "off".
    symmetry: str = "off"
    # Processes of the partitioned search (search/parallel.py); 1: the sequential search.
    workers: int = 1
    # Checking ``with atomic():`` blocks: "commit", "reduction", "auto", or None (docs/atomicity.md). The
    # checker also runs "proof", ``auto``'s first search, internally.
    atomicity: str | None = None
    # Distinct violations to find before stopping (--max-violations; --all-violations: no bound).
    max_violations: int = 1
    # With a guessed classification, a violated guess refines it and restarts (Stoller & Cohen, section 8).
    refine: bool = True
    infer_locks: bool = True

    def but(self, **changes: Any) -> Options:
        """A copy with some fields changed (``dataclasses.replace``)."""
        return replace(self, **changes)

    def problem(self) -> str | None:
        """What is wrong with these options (the message of an ``error`` result, or of exit code 2), or None.
        The reductions' refusals come from what each declares it supports (``reduce.refusal``)."""
        from movers.reduce import REDUCTIONS, refusal

        if self.reduction not in REDUCTIONS:
            return f"unknown reduction '{self.reduction}' (known: {', '.join(REDUCTIONS)})"
        if self.search not in SEARCHES:
            return f"unknown search '{self.search}' (dfs or bfs)"
        return self.limits.problem() or refusal(self)
