"""What the atomicity instrumentations share: a transition system over ``inner`` whose states are the
program state ``(globals, heap, threads)`` followed by ghost components (``ghost``, their initial values
for the initial state's threads). Enabledness, deadlock and state properties are the program's; traces are
replayed on the program alone (``replay_system``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from movers.ir.program import Program
from movers.semantics.interface import System
from movers.semantics.system import Outcome


class GhostSystem:
    """A ``System`` over ``inner`` (module docstring). The questions about the program go straight to the
    inner system's methods, bound here, so that they cost no call of their own."""

    # Its states carry ghost components after the program's, and what its steps are depends on a
    # classification: a reduction over it (transactions) does not make the arguments that need the plain
    # program's states.
    ghost_state = True
    # Its steps add ghost state: no bare successors; it stores every ghost vector (``System``).
    successors = None
    bare_system = None
    program_state: Any = None

    def __init__(self, inner: System) -> None:
        self.inner = inner
        self.program: Program = inner.program
        self.enabled: Callable[[Any, int], bool] = inner.enabled
        self.deadlock = inner.deadlock
        self.ended = inner.ended
        self.next_node = inner.next_node
        self.check_state = inner.check_state
        self.guard_reads = inner.guard_reads
        self.evaluate_predicate = inner.evaluate_predicate
        self._initial: Any = None

    @property
    def replay_system(self) -> System:
        """Counterexamples are shown on the program's own states: replay them there."""
        return self.inner

    @property
    def initial_names(self) -> dict[int, str]:
        return self.inner.initial_names

    def reset(self) -> None:
        """Nothing remembered here: the ghost state is part of the state."""

    def ghost(self, threads: int) -> tuple:
        """The ghost components of the initial state."""
        raise NotImplementedError

    def initial(self) -> tuple:
        if self._initial is None:
            s = self.inner.initial()
            self._initial = (s[0], s[1], s[2], *self.ghost(len(s[2])))
        return self._initial

    @staticmethod
    def program_part(state: tuple) -> tuple:
        return state[0], state[1], state[2]

    def execute(self, state: tuple, t: int, track: bool | None = None) -> list[Outcome]:
        raise NotImplementedError

    def steps(self, state: tuple) -> list[Outcome]:
        out: list[Outcome] = []
        for t in range(len(state[2])):
            if state[2][t] and self.inner.enabled(state, t):
                out.extend(self.execute(state, t))
        return out

    def execute_choice(self, state: tuple, t: int, choices: tuple[int, ...], track: bool = True) -> Outcome:
        for o in self.execute(state, t):
            if o.choices == choices:
                return o
        return self.inner.execute_choice(self.program_part(state), t, choices, track)


__all__ = ["GhostSystem"]
