"""What a reduction is to the search: given a state, the moves to explore, and whether to store a state.

A *move* is a sequence of steps of one thread explored as one transition (length 1 for plain interleaving).
It carries the steps (thread, choices) so that the search can replay them into a counterexample at step
granularity, whatever the reduction explored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from movers.semantics.state import State


@dataclass(slots=True)
class Move:
    steps: tuple[tuple[int, tuple[int, ...]], ...]  # (thread, choices) per atomic step
    state: State | None  # None when the move ends in a violation or is pruned by assume
    violation: tuple[str, str] | None = None

    @property
    def size(self) -> int:
        """Atomic steps in this move (transitions, for the statistics)."""
        return len(self.steps)


class Reduction(Protocol):
    name: str
    # Which violation kinds this reduction preserves; the checker refuses or warns for the others.
    preserves: frozenset[str]

    def moves(self, state: State) -> list[Move]: ...

    def store(self, state: State) -> bool: ...


def thread_moves(
    ts: Any,
    state: State,
    t: int,
    step: Callable[[State], list[Any]],
    ends: Callable[[State], bool | None],
    cut: set[State],
) -> list[Move]:
    """The moves of thread ``t`` from ``state``: its next step, then its following steps for as long as
    ``ends`` says False; a tree when the steps make choices. ``ends(s)`` is True where a move ends, False
    to go on, None for a dead end (the branch is dropped). ``step(s)`` gives the outcomes of the thread's
    next step from ``s``. A run that comes back to a state it has passed ends there, and that state is
    added to ``cut`` (to be stored: it breaks the cycle)."""
    out: list[Move] = []
    work = [(o, ((t, o.choices),)) for o in reversed(step(state))]
    seen = {state}
    while work:
        o, steps = work.pop()
        if o.violation is not None:
            out.append(Move(steps, None, o.violation))
            continue
        s = o.state
        if s is None:
            continue  # an assume pruned this path
        bad = ts.check_state(s)
        if bad is not None:
            out.append(Move(steps, None, bad))
            continue
        end = ends(s)
        if end is None:
            continue
        if end:
            out.append(Move(steps, s))
            continue
        if s in seen:
            cut.add(s)
            out.append(Move(steps, s))
            continue
        seen.add(s)
        for o2 in reversed(step(s)):
            work.append((o2, steps + ((t, o2.choices),)))
    return out
