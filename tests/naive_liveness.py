"""A deliberately naive liveness checker: the test oracle for ``termination`` and ``starvation`` under the
fairness assumptions ``none``, ``weak`` and ``strong`` (/work/liveness_spec.md, issue 26; docs/liveness.md).

It shares no code with movers' search (``src/movers/search/fair_cycles.py``): the state graph comes from the
independent interpreter ``tests/naive_explorer.py``, and the fair cycles are found the slow, obvious way. The
whole reachable graph is built first (each edge labelled with the thread that moves; a state from which no
thread can move gets a self-loop labelled ``STUTTER``, SPIN's stutter extension). A fair cycle exists in a
subgraph iff one of its strongly connected components, each computed here as a set of mutually reachable
states (quadratic, fine for small models), contains a fair cycle:

- ``none``: a component with an edge.
- ``weak`` (justice): a component with an edge where every thread moves on one of its edges or is disabled at
  one of its states (a bigger cycle is never less weakly fair, so the whole component is the cycle to test).
- ``strong`` (compassion): a component where every thread moves or is disabled at every state. A thread
  that moves on no edge of the component moves on no edge of any smaller cycle in it either, so the states
  where such a thread is enabled cannot be on a strongly fair cycle: they are removed and the components of
  what is left are examined again (the Emerson-Lei refinement for Streett conditions).

``termination`` searches the whole graph without the stutter loops of the states where every thread has
terminated; ``starvation`` of thread t searches the states where t is *waiting* (resting at a blocking
instruction, ``NaiveModel.waiting``) with the edges where t does not move. A safety violation met while
building the graph (assertion, runtime error, deadlock) is the verdict, as the safety search would report it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from naive_explorer import NaiveModel, _typed_state

STUTTER = -1  # the label of a terminal state's self-loop: no thread moves
PROPERTIES = ("termination", "starvation")
FAIRNESS = ("none", "weak", "strong")
_SAFETY_ORDER = ("assertion", "runtime-error", "deadlock")


@dataclass
class Graph:
    """The reachable states (numbered, 0 the initial one) and labelled edges of a model."""

    edges: list[tuple[int, int, int]] = field(default_factory=list)  # (source, thread or STUTTER, target)
    enabled: list[frozenset[int]] = field(default_factory=list)  # the threads with a step at each state
    waiting: list[frozenset[int]] = field(default_factory=list)  # the threads waiting at each state
    done: list[bool] = field(default_factory=list)  # every thread has terminated
    threads: int = 0
    safety: set[str] = field(default_factory=set)  # the kinds of safety violation met
    labels: list[frozenset[str]] = field(default_factory=list)  # the @predicates true at each state
    formulas: list[str] = field(default_factory=list)  # the model's ltl("...") formulas

    @property
    def states(self) -> int:
        return len(self.enabled)


@dataclass
class Verdict:
    verdict: str  # "ok" or "violation"
    kind: str | None = None  # "liveness" or the kind of safety violation
    starved: frozenset[int] = frozenset()  # starvation: every thread that can starve
    states: int = 0


def build_graph(source: str, granularity: str = "access", max_states: int = 20_000) -> Graph:
    """Every reachable state of ``source`` at ``granularity`` with its steps, by breadth-first search."""
    model = NaiveModel(source, granularity)
    n_threads = len(model.initial[4])
    graph = Graph(threads=n_threads, formulas=list(model.formulas))
    index: dict[object, int] = {}
    order: list[tuple] = []

    def number(state: tuple) -> int:
        key = _typed_state(state)
        if key not in index:
            if len(index) >= max_states:
                raise RuntimeError(f"more than {max_states} states")
            index[key] = len(order)
            order.append(state)
        return index[key]

    number(model.initial)
    i = 0
    while i < len(order):
        state = order[i]
        steps, kinds = model.steps(state)
        graph.safety |= kinds
        graph.enabled.append(frozenset(t for t, _ in steps))
        graph.waiting.append(frozenset(t for t in range(n_threads) if model.waiting(state, t)))
        graph.done.append(all(pc < 0 for pc, _ in state[4]))
        graph.labels.append(frozenset(p for p in model.predicates if model.holds(state, p)))
        for t, succ in steps:
            if succ:
                graph.edges.append((i, t, number(succ)))
        if not steps:
            graph.edges.append((i, STUTTER, i))
        i += 1
    return graph


def _reach(start: int, succ: dict[int, list[int]]) -> set[int]:
    seen = {start}
    todo = deque([start])
    while todo:
        for v in succ.get(todo.popleft(), ()):
            if v not in seen:
                seen.add(v)
                todo.append(v)
    return seen


def components(states: Iterable[int], edges: list[tuple[int, int, int]]) -> list[tuple[set[int], list]]:
    """The strongly connected components of the subgraph on ``states`` (with the ``edges`` between them) that
    contain a cycle, each with its edges: u and v are in one component when each reaches the other."""
    inside = set(states)
    sub = [e for e in edges if e[0] in inside and e[2] in inside]
    succ: dict[int, list[int]] = {}
    for u, _, v in sub:
        succ.setdefault(u, []).append(v)
    reach = {v: _reach(v, succ) for v in inside}
    out: list[tuple[set[int], list]] = []
    placed: set[int] = set()
    for v in sorted(inside):
        if v in placed:
            continue
        comp = {u for u in reach[v] if v in reach[u]}
        placed |= comp
        comp_edges = [e for e in sub if e[0] in comp and e[2] in comp]
        if comp_edges:
            out.append((comp, comp_edges))
    return out


def _idle(graph: Graph, comp: set[int], comp_edges: list) -> set[int]:
    """The threads that move on no edge of the component."""
    return set(range(graph.threads)) - {t for _, t, _ in comp_edges}


def has_fair_cycle(graph: Graph, states: Iterable[int], edges: list[tuple[int, int, int]], fairness: str,
                   accepting: Callable[[set[int]], bool] | None = None) -> bool:
    """Whether the subgraph on ``states`` with ``edges`` has a cycle that is fair under ``fairness`` and, with
    ``accepting`` (a Büchi condition: whether a cycle through exactly these states meets it, which more states
    never break), an accepting one: a component is the biggest cycle through its states, so it is tested
    whole, as for fairness."""
    accepts = accepting or (lambda comp: True)
    for comp, comp_edges in components(states, edges):
        if fairness == "none":
            if accepts(comp):
                return True
            continue
        idle = _idle(graph, comp, comp_edges)
        if fairness == "weak":
            if all(any(t not in graph.enabled[s] for s in comp) for t in idle) and accepts(comp):
                return True
            continue
        # strong: drop the states where an idle thread is enabled, look again at what is left
        keep = {s for s in comp if not (idle & graph.enabled[s])}
        if keep == comp:
            if accepts(comp):
                return True
            continue
        if keep and has_fair_cycle(graph, keep, comp_edges, fairness, accepting):
            return True
    return False


def termination_cycle(graph: Graph, fairness: str) -> bool:
    """A fair cycle other than the stutter loop of a state where every thread has terminated."""
    edges = [e for e in graph.edges if not (e[1] == STUTTER and graph.done[e[0]])]
    return has_fair_cycle(graph, range(graph.states), edges, fairness)


def starving(graph: Graph, fairness: str) -> frozenset[int]:
    """The threads t with a fair cycle where t waits at every state and moves on no edge."""
    out = set()
    for t in range(graph.threads):
        states = [s for s in range(graph.states) if t in graph.waiting[s]]
        edges = [e for e in graph.edges if e[1] != t]
        if has_fair_cycle(graph, states, edges, fairness):
            out.add(t)
    return frozenset(out)


def check_liveness(source: str, prop: str, fairness: str = "weak", granularity: str = "access",
                   max_states: int = 20_000) -> Verdict:
    """The verdict of ``prop`` ("termination" or "starvation") under ``fairness`` for ``source``."""
    if prop not in PROPERTIES or fairness not in FAIRNESS:
        raise ValueError(f"unknown property or fairness: {prop!r}, {fairness!r}")
    graph = build_graph(source, granularity, max_states)
    return decide(graph, prop, fairness)


def decide(graph: Graph, prop: str, fairness: str) -> Verdict:
    """The verdict of ``prop`` under ``fairness`` on a graph already built."""
    if graph.safety:
        kind = next(k for k in (*_SAFETY_ORDER, *sorted(graph.safety)) if k in graph.safety)
        return Verdict("violation", kind, states=graph.states)
    check: Callable[[Graph, str], object] = termination_cycle if prop == "termination" else starving
    found = check(graph, fairness)
    if not found:
        return Verdict("ok", states=graph.states)
    starved = found if isinstance(found, frozenset) else frozenset()
    return Verdict("violation", "liveness", starved, graph.states)


def graph_of(n_threads: int, edges: list[tuple[int, int, int]], enabled: list[set[int]],
             waiting: list[set[int]] | None = None, done: list[bool] | None = None) -> Graph:
    """A hand-made graph (tests): ``enabled[s]`` the threads with a step at s, stutter loops added where
    no thread is enabled."""
    n = len(enabled)
    all_edges = list(edges) + [(s, STUTTER, s) for s in range(n) if not enabled[s]]
    return Graph(all_edges, [frozenset(e) for e in enabled],
                 [frozenset(w) for w in (waiting or [set()] * n)], list(done or [False] * n), n_threads)
