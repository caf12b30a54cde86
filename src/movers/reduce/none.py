"""``--reduction none``: every interleaving of steps. The baseline every reduction is checked against."""

from __future__ import annotations

from movers.reduce.base import Capabilities, Move, ReductionBase
from movers.semantics.state import State
from movers.semantics.system import TransitionSystem

ALL_KINDS = frozenset({"assertion", "deadlock", "invariant", "discipline", "atomicity", "runtime-error"})


class NoReduction(ReductionBase):
    name = "none"
    capabilities = Capabilities(atomicity=frozenset({"commit", "reduction", "auto"}), symmetry=True, workers=True,
                                plain=True, races=True, liveness=True)
    stores_all = True  # store() is always True: the search may skip asking
    preserves = ALL_KINDS

    def __init__(self, ts: TransitionSystem) -> None:
        self.ts = ts
        # One call fewer per state on the full search's hot path.
        self.moves = ts.steps  # type: ignore[method-assign, assignment]  # an Outcome is a Move

    def moves(self, state: State) -> list[Move]:
        # An Outcome is a one-step move already (steps, state, violation).
        return self.ts.steps(state)  # type: ignore[return-value]

    def store(self, state: State) -> bool:
        return True
