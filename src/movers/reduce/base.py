"""What a reduction is to the search: given a state, the moves to explore, and whether to store a state.

A *move* is a sequence of steps of one thread explored as one transition (length 1 for plain interleaving).
It carries the steps (thread, choices) so that the search can replay them into a counterexample at step
granularity, whatever the reduction explored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from movers.semantics.state import State


@dataclass(slots=True)
class Move:
    steps: tuple[tuple[int, tuple[int, ...]], ...]  # (thread, choices) per atomic step
    state: State | None  # None when the move ends in a violation or is pruned by assume
    violation: tuple[str, str] | None = None


class Reduction(Protocol):
    name: str
    # Which violation kinds this reduction preserves; the checker refuses or warns for the others.
    preserves: frozenset[str]

    def moves(self, state: State) -> list[Move]: ...

    def store(self, state: State) -> bool: ...
