"""What a reduction is to the search: given a state, the moves to explore, and whether to store a state.

A *move* is a sequence of steps of one thread explored as one transition (length 1 for plain interleaving).
It carries the steps (thread, choices) so that the search can replay them into a counterexample at step
granularity, whatever the reduction explored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from movers.semantics.state import State


@dataclass(slots=True)
class Move:
    steps: tuple[tuple[int, tuple[int, ...]], ...]  # (thread, choices) per atomic step
    state: State | None  # None when the move ends in a violation or is pruned by assume
    violation: tuple[str, str] | None = None
    # False: the search explores ``state`` but does not store it (Dwyer et al.'s DA, ``ample.py``), and
    # ``run`` counts the unstored states in a row on the path that ends here.
    keep: bool = True
    run: int = 0

    @property
    def size(self) -> int:
        """Atomic steps in this move (transitions, for the statistics)."""
        return len(self.steps)


STORES = frozenset({"exact", "hashcompact", "bitstate"})


@dataclass(frozen=True)
class Capabilities:
    """What a reduction supports, declared on its class: the checker's refusals are generated from these
    (``reduce.refusal``), and nothing outside ``reduce/`` asks a reduction for its name."""

    # The ``--atomicity`` modes it runs with: each needs the reduction to keep a step that moves the shadow
    # store or a phase visible (docs/reductions.md argues it for each).
    atomicity: frozenset[str] = frozenset()
    # The visited stores of the depth-first search it can run on (an incremental search needs the states).
    stores: frozenset[str] = STORES
    symmetry: bool = False  # --symmetry threads (its decisions do not depend on thread numbers)
    workers: bool = False  # --workers N (the partitioned search is the full search)
    all_violations: bool = True  # --all-violations / --max-violations N
    # --races: it reaches a state where two conflicting accesses are both next whenever the full search does
    # (docs/reductions.md argues it for each reduction that claims it).
    races: bool = False
    # The search re-expands its stored states whenever the reduction's predicates weaken (``version``), until a
    # pass changes nothing (search/incremental.py): instead of restarting, as a ``Refine`` does elsewhere.
    incremental: bool = False
    # It checks the model's declared exclusive access predicates itself (with a ``Classification`` the
    # checker gives it), so the property instrumentation leaves them out.
    checks_discipline: bool = False
    # It guesses Dwyer et al.'s locking disciplines per class and refines them itself (``refined``).
    infers_disciplines: bool = False
    # Its moves are the system's steps and every state is stored: the search may run its plain loop over
    # bare successor states (search/plain.py).
    plain: bool = False
    # Its statistics count moves as transactions (Flanagan & Qadeer).
    counts_transactions: bool = False
    # Where it does not preserve deadlocks, the reduction whose search checks deadlock freedom instead.
    deadlock_search: str | None = None
    # It classifies locations (optimistic, transactions): --show-classification, --no-refine and
    # --no-infer-locks mean something with it.
    classifies: bool = False
    # --liveness: a fair cycle of the forbidden shape is in its graph whenever one is in the full graph, under
    # every --fairness (search/fair_cycles.py builds the graph from its moves; docs/reductions.md, "Liveness",
    # argues it for each reduction that claims it). One that is not ``plain`` implements ``observe``.
    liveness: bool = False
    # Why it refuses a model (a message), where its theory needs more of the model than the language gives.
    refuses_model: Callable[[Any], str | None] | None = None


class ReductionBase:
    """What every reduction is to the search and the checker, declared with its defaults: everything the
    search and the checker ask of a reduction is here, so that neither probes for attributes.

    The search tells the reduction what it keeps, where the reduction asks for it (``needs_*``): ``on_stack``
    (depth-first: is a state on the search stack, for the cycle proviso C3), ``stored`` (breadth-first: was a
    state stored) and ``arrived`` (the move that led to the state about to be expanded: Dwyer et al.'s DA)."""

    name = "reduction"
    capabilities = Capabilities()
    # Which violation kinds it preserves (``preserves``; the checker refuses or warns for the others).
    preserves: frozenset[str] = frozenset()
    # store() is always True: the search may skip asking.
    stores_all = False
    needs_stack = False
    needs_stored = False
    needs_arrival = False
    on_stack: Callable[[State], bool] | None = None
    stored: Callable[[State], bool] | None = None
    arrived: Move | None = None

    def __init__(self, ts: Any) -> None:
        self.ts = ts

    @property
    def system(self) -> Any:
        """The transition system the search runs on (an instrumentation of the checker's, for some)."""
        return self.ts

    def moves(self, state: State) -> list[Move]:
        raise NotImplementedError

    def store(self, state: State) -> bool:
        return True

    def reset(self) -> None:
        """Forget what was derived from a guess that a refinement has revised (the search restarts)."""

    def refined(self, r: Any) -> str | None:
        """Revise a guess of the reduction's own (``r``: a ``Refine`` it raised) and say how, or None where the
        guess is the classification's, which the checker revises."""
        return None

    def version(self) -> int:
        """For ``capabilities.incremental``: changes whenever the reduction's predicates weaken."""
        return 0

    def begin_pass(self, reuse: bool, first: bool = False) -> Any:
        """For ``capabilities.incremental``: a pass begins (``first``: the search's first); a snapshot to go back
        to (``redo_pass``) where the reduction answers ``again`` for some states in it, else None."""
        return None

    def redo_pass(self, snapshot: Any) -> None:
        """Back to ``begin_pass``'s snapshot: the pass weakened the predicates, it runs again without reuse."""

    def again(self, state: State) -> tuple[int, int] | None:
        """(transitions, moves) of expanding ``state`` in this pass, known to be what ``moves`` would give,
        with every state they lead to already found; None: ask ``moves``."""
        return None

    def observe(self, atoms: frozenset[str], waiting: bool = False) -> None:
        """--liveness: the ``@predicate`` functions named ``atoms`` are propositions of the property (ltl), and with
        ``waiting`` so is each thread's being at a guarded node and staying there (starvation); every step that
        may change one must be visible from now on. A reduction that explores every step needs nothing."""
        if self.capabilities.liveness and not self.capabilities.plain:
            raise NotImplementedError(f"{self.name} claims liveness but does not say which steps are visible")

    def classification_report(self) -> dict[str, str] | None:
        """What the reduction guessed about the program (disciplines per class), for the report, or None."""
        return None


# The interface every reduction implements (its declared defaults are ``ReductionBase``'s).
Reduction = ReductionBase


# Steps after which a move ends even though the reduction would go on (see ``thread_moves``).
MOVE_LIMIT = 1000


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
    next step from ``s``.

    Two things end a move early, at a state that is then added to ``cut`` (to be stored, and expanded like
    any stored state): a run that comes back to a state it has passed (it breaks the cycle), and a run of
    ``MOVE_LIMIT`` steps (a thread counting forever on local data never repeats a state, and would hold the
    search, its limits and Ctrl-C inside one move). Ending a move early is sound: the cut state is a state
    of the program, the thread's run goes on from it in a move of its own, and the other threads may also
    move from it, which only adds interleavings of the real system (optimistic: the rest of the invisible
    run is explored as well; transactions: a cut state is not in N, so only ``t`` moves from it, and the
    transaction goes on unchanged). 1,000 steps keeps the cut states of a long but finite local computation
    to one per thousand steps, and a move's cost (each step is executed and classified) to milliseconds
    between two looks at the limits.

    The steps of a run are kept as parent pointers, ``(steps so far, (t, choices))``, and turned into a
    tuple once per move: copying a growing tuple at every step would be quadratic in the run's length."""
    out: list[Move] = []
    work: list[tuple[Any, Any, int]] = [(o, (None, (t, o.choices)), 1) for o in reversed(step(state))]
    seen = {state}
    while work:
        o, path, length = work.pop()
        if o.violation is not None:
            out.append(Move(_steps(path), None, o.violation))
            continue
        s = o.state
        if s is None:
            continue  # an assume pruned this path
        bad = ts.check_state(s)
        if bad is not None:
            out.append(Move(_steps(path), None, bad))
            continue
        end = ends(s)
        if end is None:
            continue
        if end:
            out.append(Move(_steps(path), s))
            continue
        if s in seen or length >= MOVE_LIMIT:
            cut.add(s)
            out.append(Move(_steps(path), s))
            continue
        seen.add(s)
        for o2 in reversed(step(s)):
            work.append((o2, (path, (t, o2.choices)), length + 1))
    return out


def _steps(path: Any) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """The steps of a run kept as parent pointers, first step first."""
    out = []
    while path is not None:
        path, st = path
        out.append(st)
    out.reverse()
    return tuple(out)
