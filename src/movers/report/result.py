"""The result of a check: verdict, statistics and violations, with the fields of the ``--json`` contract.

``Result.to_json()`` gives exactly the object that docs/cli.md (``--json``) fixes; the dataclasses are what the
Python API (``movers.check``) returns, so tests and notebooks can inspect a run without parsing text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from movers.search.stats import Stats

VERDICTS = ("ok", "violation", "incomplete", "error")
# What a step's changes say of a thread (``{"thread worker#0": "terminated"}``).
THREAD_EVENTS = ("started", "terminated", "woken")
KINDS = ("assertion", "deadlock", "invariant", "discipline", "atomicity", "runtime-error", "race", "liveness")


@dataclass
class TraceStep:
    """One atomic step of a counterexample: who moved, where, and what it changed."""

    thread: int
    line: int
    source: str
    changes: dict[str, str] = field(default_factory=dict)
    # The thread's name: ``Thread(name=...)``, else the function it was started with, with its number when
    # several threads share it (``worker#1``): users know threads by it, not by their number.
    name: str = ""
    # Where a condition step went: "true" or "false" (``if``, ``while``, ``wait_until``), "next" or "done"
    # (a ``for`` header); "" for other steps.
    outcome: str = ""
    # The full state after the step (report/steps.py), when asked for: it costs a replay of the trace.
    state: dict[str, Any] | None = None

    @property
    def who(self) -> str:
        return self.name or f"thread {self.thread}"

    def changes_text(self) -> str:
        """The changes on one line: ``count = 1, thread worker#0 terminated``, long values and long runs of
        elements shortened (report/shorten.py)."""
        from movers.report.shorten import entries_text

        return entries_text(self.changes, THREAD_EVENTS)

    def shown_source(self) -> str:
        """What the step executes, with where a condition went: ``self.v == 0  -> true``. A thread whose
        condition sends it past its last statement ends in that step: ``-> done, thread ends`` says so where
        the line (the loop's header) would not."""
        if not self.outcome:
            return self.source
        ends = self.changes.get(f"thread {self.name}") == "terminated"
        return f"{self.source}  -> {self.outcome}{', thread ends' if ends else ''}"

    def to_json(self) -> dict[str, Any]:
        d = {"thread": self.thread, "name": self.name, "line": self.line, "source": self.source,
             "changes": self.changes}
        if self.outcome:
            d["outcome"] = self.outcome
        if self.state is not None:
            d["state"] = self.state
        return d


@dataclass
class Violation:
    kind: str
    message: str
    trace: list[TraceStep] = field(default_factory=list)
    line: int = 0
    # The atomic steps of the trace as (thread, choices): what a trail file keeps (movers/trail.py).
    steps: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)
    # The state where it shows, in full (report/trace.py's ``full_state``): printed with --full-state.
    state: dict[str, Any] = field(default_factory=dict)
    # A failed assertion: the values its condition reads, where it fails ({"count": "1"}).
    values: dict[str, str] = field(default_factory=dict)
    # A liveness violation (a lasso): the index in ``trace`` where the cycle begins, which then repeats forever
    # (``len(trace)`` when the cycle is a stutter loop: no step); None for every other kind.
    cycle_start: int | None = None

    def to_json(self) -> dict[str, Any]:
        d = {"kind": self.kind, "message": self.message, "trace": [s.to_json() for s in self.trace],
             "cycle_start": self.cycle_start, "state": self.state}
        if self.values:
            d["values"] = self.values
        return d


@dataclass
class Result:
    verdict: str
    reduction: str
    stats: Stats = field(default_factory=Stats)
    violations: list[Violation] = field(default_factory=list)
    error: str | None = None
    # Why a search is incomplete: "max-states", "time-limit", "max-depth", "memory", "interrupted",
    # "coverage" (a lossy store that may have missed more than MAX_OMISSION, search/fingerprints.py),
    # "not-a-proof" (every --swarm member ended without finding a violation), or "worker-lost" (--backend ray:
    # an actor died, search/ray_backend.py).
    limit: str | None = None
    model: str = ""
    # Remarks for users: classification refinements and restarts, warnings about preserved properties.
    notes: list[str] = field(default_factory=list)
    # Final classification of locations (optimistic and later reductions): location -> description.
    classification: dict[str, str] = field(default_factory=dict)
    # Inferred protecting locks: location -> locks (optimistic, transactions).
    locks: dict[str, str] = field(default_factory=dict)
    # The visited store (``--store``): {"kind": "exact"}, or a lossy store with what it may have missed
    # (hashcompact: fingerprint_bits, collision_probability; bitstate: bits, hashes, hash_factor,
    # expected_coverage: fingerprints.STORE_FIELDS).
    store: dict[str, Any] = field(default_factory=lambda: {"kind": "exact"})
    # Thread symmetry as applied: "threads" or "off" (off also when asked for but not sound for the model).
    symmetry: str = "off"
    # The first line of the text report, where the verdict's usual one would mislead (``movers replay``).
    headline: str | None = None
    search: str = "dfs"
    # What one step was ("access" or "statement"); None when no model was compiled.
    granularity: str | None = None
    # An error that refuses the options (for any model, or for this one: ``--atomicity`` without an atomic
    # block), not one of the model: the command line prints it as ``movers: error: …``. Not in the JSON.
    refused: bool = False
    # ``--simulate`` or ``--swarm N``: the seed(s) and what the walks or the members covered (docs/cli.md).
    hunt: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.verdict == "ok"

    @property
    def exit_code(self) -> int:
        return {"ok": 0, "violation": 1, "error": 2, "incomplete": 3}[self.verdict]

    def to_json(self) -> dict[str, Any]:
        d = {
            "verdict": self.verdict,
            "reduction": self.reduction,
            "stats": self.stats.to_json(),
            "violations": [v.to_json() for v in self.violations],
            "error": self.error,
            "store": self.store,
            "symmetry": self.symmetry,
            "model": self.model,
            "search": self.search,
            "granularity": self.granularity,
            "notes": list(self.notes),
            **envelope(),
        }
        if self.verdict == "incomplete":
            d["limit"] = self.limit  # why: only an incomplete run has one
        if self.hunt is not None:
            d["hunt"] = self.hunt
        return d


JSON_SCHEMA_VERSION = 1


def envelope() -> dict[str, Any]:
    """What every JSON object of movers carries: the tool and the version of the object's schema
    (docs/result.schema.json)."""
    from movers.version import __version__

    return {"tool": {"name": "movers", "version": __version__}, "schema": JSON_SCHEMA_VERSION}

