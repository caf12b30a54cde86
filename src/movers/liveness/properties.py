"""The liveness properties of ``--liveness``: which fair cycles each one forbids (docs/liveness.md).

A property is what the fair-cycle search (search/fair_cycles.py) needs to know of it: a Büchi automaton to
take the product with and the labels its atoms read (``ltl``; the one-state automaton otherwise), the
*targets* (each a restriction of the product graph: which nodes and edges a forbidden cycle may use, which
acceptance sets it must meet) and the message of a violation. Any fair cycle of a target is a violation:

- ``termination``: any fair cycle but the stutter loop of a state where every thread has terminated (a
  deadlocked state's stutter loop is reported as a deadlock before);
- ``starvation``: for each thread t, a fair cycle in which t is *waiting* at every state (alive, its next
  node has a guard: an acquire, a wait, a join...) and moves on no edge: t is the starved thread;
- ``ltl``: for each ``ltl(...)`` formula of the model, a product cycle that is fair and meets every acceptance
  set of the Büchi automaton of the negated formula (liveness/buchi.py), whose atoms are the model's
  ``@predicate`` functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from movers.semantics.state import State

STUTTER = -1  # the thread of a stutter self-loop: no thread moves


class Automaton(Protocol):
    """A Büchi automaton as the product reads it (``liveness/buchi.py``'s ``Buchi``)."""

    @property
    def initial(self) -> tuple[int, ...]: ...

    @property
    def acceptance(self) -> tuple[frozenset[int], ...]: ...

    @property
    def atoms(self) -> frozenset[str]: ...

    def successors(self, q: int, true_atoms: frozenset[str]) -> tuple[int, ...]: ...


class Trivial:
    """The one-state automaton that accepts every run: the product with it is the program's graph."""

    initial: tuple[int, ...] = (0,)
    acceptance: tuple[frozenset[int], ...] = ()
    atoms: frozenset[str] = frozenset()

    def successors(self, q: int, true_atoms: frozenset[str]) -> tuple[int, ...]:
        return (0,)


@dataclass(frozen=True)
class Target:
    """What a forbidden cycle may use, over the product graph's nodes (numbers): ``keep_node(n)``,
    ``keep_edge(n, thread, m)`` (None: every one), and the acceptance sets (of automaton states) it must meet;
    ``starved``: the thread it starves, if any."""

    keep_node: Callable[[int], bool] | None = None
    keep_edge: Callable[[int, int, int], bool] | None = None
    acceptance: tuple[frozenset[int], ...] = ()
    starved: int | None = None


Nodes = Sequence[tuple[State, int]]  # the product graph's nodes: (program state, automaton state)


def waiting(ts: Any, s: State, t: int) -> bool:
    """Whether thread ``t`` is *waiting* at ``s``: alive, at a node with a guard (an acquire, a wait, a join…)."""
    if t >= len(s[2]) or not s[2][t]:
        return False
    node = ts.next_node(s, t)
    return node is not None and node.guard is not None


def fairness_text(fairness: str) -> str:
    return "without fairness" if fairness == "none" else f"under {fairness} fairness"


def _threads_text(ts: Any, mask: int) -> str:
    """``thread 0 moves``, ``thread 0, thread 1 move``."""
    ids = [t for t in range(mask.bit_length()) if mask >> t & 1]
    if not ids:
        return "no thread moves"
    return ", ".join(f"thread {t}" for t in ids) + (" moves" if len(ids) == 1 else " move")


class Property:
    """What every property is to the search: the one-state automaton, no labels, and ``targets``."""

    name = "property"
    automaton: Automaton = Trivial()
    label: Callable[[State], frozenset[str]] | None = None
    # The ``@predicate`` names its labels read: a reduction must keep the steps that may change them visible.
    atoms: frozenset[str] = frozenset()
    # It reads whether a thread is waiting, and whether a waiting thread moves: a reduction must keep the step
    # of a thread at a guarded node visible (docs/reductions.md, "Liveness").
    observes_waiting = False

    def __init__(self, ts: Any) -> None:
        self.ts = ts

    def targets(self, nodes: Nodes, done: Sequence[bool]) -> Iterator[Target]:
        """The restrictions of the graph (``done[n]``: every thread has terminated at node ``n``) in which any
        fair cycle is a violation."""
        raise NotImplementedError

    def message(self, entry: State, moved: int, target: Target, fairness: str) -> str:
        """A violation's message: ``entry`` is the cycle's first state, ``moved`` a bit per thread moving in it."""
        raise NotImplementedError

    def _where(self, s: State, t: int) -> str:
        """Where thread ``t`` is at ``s``, as ``line 12 `with lock:```."""
        from movers.ir.program import call_line

        node = self.ts.next_node(s, t)
        if node is None:
            return "terminated"
        return f"line {call_line(s[2][t], node)} `{node.source}`"


class Termination(Property):
    name = "termination"

    def targets(self, nodes: Nodes, done: Sequence[bool]) -> Iterator[Target]:
        # Every edge but the stutter loop of a state where every thread has terminated.
        yield Target(keep_edge=lambda n, t, m: t != STUTTER or not done[n])

    def message(self, entry: State, moved: int, target: Target, fairness: str) -> str:
        s = entry
        alive = sum(1 << t for t, th in enumerate(s[2]) if th)
        still = alive & ~moved
        text = (f"the program does not terminate {fairness_text(fairness)}: a cycle that repeats forever, in which "
                f"{_threads_text(self.ts, moved & alive)}")
        if still:
            text += "; " + "; ".join(f"thread {t} never moves (at {self._where(s, t)})"
                                     for t in range(still.bit_length()) if still >> t & 1)
        return text


class Starvation(Property):
    name = "starvation"
    observes_waiting = True

    def targets(self, nodes: Nodes, done: Sequence[bool]) -> Iterator[Target]:
        count = max((len(s[2]) for s, _ in nodes), default=0)
        for t in range(count):
            waiting = [self._waiting(s, t) for s, _ in nodes]
            if not any(waiting):
                continue
            yield Target(keep_node=waiting.__getitem__, keep_edge=lambda n, u, m, t=t: u != t,  # type: ignore[misc]
                         starved=t)

    def _waiting(self, s: State, t: int) -> bool:
        return waiting(self.ts, s, t)

    def message(self, entry: State, moved: int, target: Target, fairness: str) -> str:
        t = target.starved
        assert t is not None
        s = entry
        return (f"thread {t} starves: waiting at {self._where(s, t)}, {fairness_text(fairness)}, while "
                f"{_threads_text(self.ts, moved)} forever")


class Accepting(Property):
    """A product with a Büchi automaton (``ltl``: the automaton of the negated formula, whose atoms ``label``
    gives): a violation is a fair cycle of the product that meets every acceptance set, stutter loops of ended
    programs included (a finite run is its last state forever)."""

    name = "ltl"

    def __init__(self, ts: Any, automaton: Automaton, label: Callable[[State], frozenset[str]], what: str) -> None:
        super().__init__(ts)
        self.automaton = automaton
        self.label = label
        self.what = what
        self.atoms = automaton.atoms

    def targets(self, nodes: Nodes, done: Sequence[bool]) -> Iterator[Target]:
        yield Target(keep_node=lambda n: nodes[n][1] >= 0, acceptance=self.automaton.acceptance)

    def message(self, entry: State, moved: int, target: Target, fairness: str) -> str:
        return (f"{self.what} fails {fairness_text(fairness)}: a run that repeats a cycle forever, in which "
                f"{_threads_text(self.ts, moved)}")


def ltl_properties(ts: Any) -> list[Property]:
    """``--liveness ltl``: one product per ``ltl(...)`` declaration of the model, in the order written, each
    with the Büchi automaton of its negated formula (liveness/buchi.py) over the model's ``@predicate``
    functions (``TransitionSystem.atoms``)."""
    from movers.liveness.buchi import translate
    from movers.liveness.ltl import Not, parse

    return [Accepting(ts, translate(Not(parse(d.formula))), ts.atoms, f"ltl {d.name} `{d.formula}` (line {d.line})")
            for d in ts.program.ltl_formulas]


# The properties by name (``--liveness``): each gives the properties one run checks, one after the other.
PROPERTIES: dict[str, Callable[[Any], list[Property]]] = {
    "termination": lambda ts: [Termination(ts)], "starvation": lambda ts: [Starvation(ts)], "ltl": ltl_properties}


def unavailable(name: str) -> str | None:
    """Why ``--liveness name`` cannot run in this build (the one place that says so), or None."""
    if name not in PROPERTIES:
        return f"--liveness {name}: not part of this build"
    return None


def make_properties(name: str | None, ts: Any) -> list[Property]:
    assert name is not None and name in PROPERTIES, unavailable(str(name))
    return PROPERTIES[name](ts)


__all__ = ["PROPERTIES", "STUTTER", "Accepting", "Automaton", "Property", "Starvation", "Target", "Termination",
           "Trivial", "fairness_text", "ltl_properties", "make_properties", "unavailable", "waiting"]
