"""Properties checked on every run, as an instrumentation of the transition system.

``Checked`` wraps a transition system and is one itself: every explorer and reduction works on it unchanged.
It adds two kinds of violations to the plain semantics (which already reports assertion failures, runtime
errors and, through the search, deadlocks):

- ``invariant``: an ``@invariant`` function is false (or fails) in a reached state;
- ``discipline``: a step accesses a location declared with ``exclusive``/``guarded_by``/``thread_local``
  while the accessing thread's exclusive access predicate is false in the state before the step;
- ``race`` (with ``--races`` only): two threads' next steps access the same location, one of them a write,
  neither a synchronisation operation (``instrument/races.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from movers.analysis.declarations import declarations_at, location_name
from movers.instrument.races import find_race
from movers.ir.machine import show
from movers.ir.program import Exclusive
from movers.semantics.interface import System
from movers.semantics.state import State
from movers.semantics.system import RUNTIME_ERRORS, Outcome, TransitionSystem, runtime_message


def discipline_violation(
    ts: System,
    state: State,
    t: int,
    locs: list[Any],
    decls: tuple[dict[Any, list[Exclusive]], list[Exclusive]] | None = None,
) -> str | None:
    """The message for the first access in ``locs`` that thread ``t`` makes without its predicate."""
    program = ts.program
    by_loc, fields = decls if decls is not None else declarations_at(program, state)
    heap = state[1]
    seen: set[Any] = set()
    for loc in locs:
        if loc in seen:
            continue
        seen.add(loc)
        governing = list(by_loc.get(loc, ()))
        obj = None
        if type(loc) is tuple and fields:
            r, idx = loc
            if r.i < len(heap):
                cls = heap[r.i][0]
                for d in fields:
                    c, f = d.target[1], d.target[2]
                    if cls.is_subclass_of(c) and c.field_index[f] == idx:
                        governing.append(d)
                        obj = r
        for d in governing:
            try:
                ok = ts.evaluate_predicate(state, d.pred, t, obj)
            except RUNTIME_ERRORS as e:
                return f"the exclusive access predicate of line {d.line} fails: {runtime_message(e)}"
            if not ok:
                return (f"thread {t} accesses {location_name(program, state, loc)} without exclusive access "
                        f"({d.text}, line {d.line})")
    return None


class Checked:
    """A transition system with invariants and declared disciplines checked: a ``System`` over the program's
    own (``inner``), whose questions about the program go straight to the inner system's methods, bound
    here."""

    # No ghost state; no shared part of its own (``System``).
    program_state = None
    quiet = None

    def __init__(self, inner: TransitionSystem, disciplines: bool = True, races: bool = False) -> None:
        self.inner = inner
        self.races = races
        self.program = inner.program
        self.invariants = inner.program.invariants
        self.disciplines = disciplines and bool(inner.program.exclusives)
        if self.disciplines:
            inner.track = True
        self.track = inner.track
        # The questions reductions ask most go straight to the plain system.
        self.enabled = inner.enabled
        self.deadlock = inner.deadlock
        self.ended = inner.ended
        self.initial = inner.initial
        self.next_node = inner.next_node
        self.guard_reads = inner.guard_reads
        self.evaluate_predicate = inner.evaluate_predicate
        self.atoms = inner.atoms  # the letter of a state, for ltl(...) properties
        self.reset = inner.reset
        self._decl_state: Any = None
        self._decls: Any = None

    @property
    def initial_names(self) -> dict[int, str]:
        return self.inner.initial_names

    @property
    def replay_system(self) -> Checked:
        """Counterexamples are replayed with the properties checked, so that the violation is met again."""
        return self

    def _declarations(self, state: State) -> Any:
        # All threads' steps from one state share its concrete declarations.
        if state is not self._decl_state:
            self._decl_state = state
            self._decls = declarations_at(self.program, state)
        return self._decls

    def check_state(self, state: State) -> tuple[str, str] | None:
        for name, code in self.invariants:
            try:
                ok = self.inner.holds(state, code)
            except RUNTIME_ERRORS as e:
                return ("invariant", f"invariant {name}() fails: {runtime_message(e)}")
            if not ok:
                return ("invariant", f"invariant {name}() is false")
        if self.races:
            return find_race(self.inner, state)
        return None

    def execute(self, state: State, t: int, track: bool | None = None) -> list[Outcome]:
        outs = self.inner.execute(state, t, track)
        if self.disciplines:
            self._check_disciplines(state, outs)
        return outs

    def _check_disciplines(self, state: State, outs: list[Outcome]) -> None:
        for o in outs:
            eff = o.effect
            if o.violation is None and eff is not None and (eff.reads or eff.writes):
                decls = self._declarations(state)
                by_loc = decls[0]
                # Most steps touch no declared location: a dictionary probe per access settles it.
                if not decls[1] and not any(x in by_loc for x in eff.reads) and not any(
                    x in by_loc for x in eff.writes
                ):
                    continue
                msg = discipline_violation(self.inner, state, o.thread, eff.reads + eff.writes, decls)
                if msg is not None:
                    o.violation = ("discipline", msg)
                    o.state = None

    def successors(self, state: State) -> tuple[list[State], list[int | None]] | None:
        """The inner system's bare successors, where no step has a discipline to check (then steps decide):
        invariants and races are properties of a state, which the search checks on every state it stores."""
        return None if self.disciplines else self.inner.successors(state)

    @property
    def bare_system(self) -> TransitionSystem | None:
        return None if self.disciplines else self.inner.bare_system

    def steps(self, state: State) -> list[Outcome]:
        # The plain system's one-pass successors (the full search's fast path), then the disciplines.
        outs = self.inner.steps(state)
        if self.disciplines:
            self._check_disciplines(state, outs)
        return outs

    def execute_choice(self, state: State, t: int, choices: tuple[int, ...], track: bool = True) -> Outcome:
        o = self.inner.execute_choice(state, t, choices, True)
        if self.disciplines and o.violation is None and o.effect is not None:
            msg = discipline_violation(self.inner, state, t, o.effect.reads + o.effect.writes)
            if msg is not None:
                o.violation = ("discipline", msg)
                o.state = None
        return o


def instrument(ts: TransitionSystem, disciplines: bool = True, races: bool = False) -> System:
    """Wrap ``ts`` only when the program declares something to check or races are asked for, keeping the
    plain path fast. ``disciplines=False`` leaves declared predicates to a reduction that checks them itself."""
    p = ts.program
    if p.invariants or (disciplines and p.exclusives) or races:
        return Checked(ts, disciplines, races)
    return ts


if TYPE_CHECKING:
    _: type[System] = Checked  # mypy checks that it is one


__all__ = ["Checked", "instrument", "discipline_violation", "show"]
