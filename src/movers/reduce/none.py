"""``--reduction none``: every interleaving of steps. The baseline every reduction is checked against."""

from __future__ import annotations

from movers.reduce.base import Move
from movers.semantics.state import State
from movers.semantics.system import TransitionSystem

ALL_KINDS = frozenset({"assertion", "deadlock", "invariant", "discipline", "atomicity", "runtime-error"})


class NoReduction:
    name = "none"
    preserves = ALL_KINDS

    def __init__(self, ts: TransitionSystem) -> None:
        self.ts = ts

    def moves(self, state: State) -> list[Move]:
        ts = self.ts
        out: list[Move] = []
        for t in range(len(state[2])):
            if ts.enabled(state, t):
                for o in ts.execute(state, t):
                    out.append(Move(((t, o.choices),), o.state, o.violation))
        return out

    def store(self, state: State) -> bool:
        return True
