"""What a transition system is to the rest of movers: the questions the searches, the reductions, the checker
and the reports ask of one (``System``).

Two kinds of object answer them: the program's own ``semantics.system.TransitionSystem``, and the
instrumentations in ``instrument/`` that wrap a system and are one themselves (``Checked`` adds invariants
and disciplines, ``PhaseSystem`` the phases of P#, ``CommitSystem`` and ``ReducibleSystem`` the atomicity
checks). A wrapper's states are its inner system's followed by ghost components, so a state here is a
tuple of any length whose first three components are the program state ``(globals, heap, threads)``.

Each wrapper implements every member explicitly (most by binding its inner system's method in its
constructor, which costs no call on the hot path), so that what a system offers is written down and checked
by mypy rather than forwarded by ``__getattr__``.

Three members are optional, ``None`` where a system has nothing to say, and the search reads them as such:

- ``successors``: the bare successor states, the plain full search's fast path. A wrapper never has it: its
  steps add what bare states would skip (invariants, disciplines, ghost state);
- ``program_state``: how to see the instrumented system's state through its ghost part, for counting states
  as program states (P#, whose phases are stored per state);
- ``quiet``: whether a thread's step leaves the instrumentation's shared part alone, which a reduction needs
  to know for its visibility (commit-atomicity's shadow store and phases).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from movers.ir.program import Node, Program
from movers.semantics.system import Outcome

# A state of some system: the program state (globals, heap, threads), then any ghost components.
SystemState = tuple[Any, ...]
# One step of a counterexample: (thread, the choices its step made).
Step = tuple[int, tuple[int, ...]]
# ``System.successors``: the successor states and the thread that moved to each (None where more than its stack
# changed), or None (``steps`` decides).
Successors = Callable[[Any], "tuple[list[Any], list[int | None]] | None"]
# ``System.quiet``: does thread t's step (every resolution) leave the instrumentation's shared part alone?
Quiet = Callable[[Any, int, list[Outcome]], bool]


class System(Protocol):
    """A transition system as the search and the reductions use it (module docstring)."""

    @property
    def program(self) -> Program:
        """The compiled program whose states these are."""
        ...

    @property
    def initial_names(self) -> dict[int, str]:
        """The names (``Thread(name=...)``) of the threads module-level code started, once ``initial`` ran."""
        ...

    @property
    def replay_system(self) -> System:
        """The system counterexamples are replayed and shown on (an atomicity instrumentation's: the program's
        own states)."""
        ...

    @property
    def successors(self) -> Successors | None:
        """The bare successors of a state (the fast path of the plain full search), or None when the system has
        none (module docstring)."""
        ...

    @property
    def bare_system(self) -> Any:
        """The program's own ``TransitionSystem`` where this system's ``successors`` are that system's bare
        successors (the plain search then runs its threads' steps one by one, through the transition cache:
        search/transition_cache.py), else None."""
        ...

    @property
    def program_state(self) -> Callable[[Any], Any] | None:
        """The program part of a state, where ghost components would count one program state several times."""
        ...

    @property
    def quiet(self) -> Quiet | None:
        """Whether a thread's step leaves the instrumentation's shared part alone (None: every step does)."""
        ...

    def initial(self) -> Any:
        """The initial state."""
        ...

    def enabled(self, state: Any, t: int) -> bool:
        """Can thread ``t`` take its next step from ``state``?"""
        ...

    def next_node(self, state: Any, t: int) -> Node | None:
        """The node thread ``t`` executes next, or None if it has terminated."""
        ...

    def guard_reads(self, state: Any, t: int) -> list[Any]:
        """The locations thread ``t``'s guard reads in ``state``."""
        ...

    def evaluate_predicate(self, state: Any, pred: Any, t: int, obj: Any = None) -> bool:
        """An exclusive access predicate of thread ``t`` (and object ``obj``) in ``state``."""
        ...

    def ended(self, state: Any) -> bool:
        """Whether the program has ended: every thread but daemon threads has (CPython exits then)."""
        ...

    def deadlock(self, state: Any) -> str | None:
        """Who waits on what, when no thread can move and some have not terminated; else None."""
        ...

    def check_state(self, state: Any) -> tuple[str, str] | None:
        """A violated state property (kind, message), or None. ``TransitionSystem.check_state`` carries the
        mark ``checks_nothing``, which the search reads to skip the call; wrappers that add no property bind
        their inner system's method, keeping the mark."""
        ...

    def steps(self, state: Any) -> list[Outcome]:
        """Every enabled thread's next step from ``state``, every resolution, in thread order."""
        ...

    def execute(self, state: Any, t: int, track: bool | None = None) -> list[Outcome]:
        """Thread ``t``'s next step under every resolution of its choices."""
        ...

    def execute_choice(self, state: Any, t: int, choices: tuple[int, ...], track: bool = True) -> Outcome:
        """One resolution of thread ``t``'s next step (replaying counterexamples)."""
        ...

    def reset(self) -> None:
        """Forget what was remembered about steps (a new pass of the incremental search)."""
        ...


__all__ = ["Quiet", "Step", "Successors", "System", "SystemState"]
