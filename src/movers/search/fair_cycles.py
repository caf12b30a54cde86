"""The fair-cycle search of ``--liveness``: does the state graph have a reachable cycle that is fair and has
the shape a liveness property forbids?

It is the SCC-based emptiness check of generalized Büchi automata with fairness taken as generalized
acceptance, as LTSmin and Spot do it (Couvreur, "On-the-fly verification of linear temporal logic", FM 1999;
for strong fairness the refinement of Lichtenstein & Pnueli, "Checking that finite state concurrent programs
satisfy their linear specification", POPL 1985, and Emerson & Lei, "Modalities for model checking", 1987):

1. the reachable graph is built explicitly, breadth first (so that the stem of a lasso is a shortest path),
   within ``--max-states``, the time limit and the memory ceiling; a node is a program state and a state of
   the property's Büchi automaton (``liveness/properties.py``; the one-state automaton for termination and
   starvation), and a violation met on the way ends the run as the safety search reports it. A state where
   no thread can move gets the stutter self-loop (SPIN's stutter extension), labelled ``STUTTER`` (not a state
   whose every step an assume prunes: no run goes through it);
2. the property restricts the graph (``Target``, liveness/properties.py: which nodes and edges a forbidden
   cycle may use, which acceptance sets it must meet), and Tarjan's algorithm (iterative) splits the rest
   into strongly connected components;
3. a non-trivial component (it has an edge) holds a fair accepting cycle exactly when it meets every
   acceptance set and, for weak fairness (justice), every thread moves on one of its edges or is disabled
   at one of its states; for strong fairness (compassion), every thread enabled somewhere in it moves in
   it. Where that fails under strong fairness, the states where a thread that never moves is enabled cannot
   lie on a fair cycle: they are removed and the components of the rest are searched again. (Under weak
   fairness no sub-cycle can do better: a thread enabled at every state of the component is enabled at
   every state of each of its cycles, and moves on none.)
4. the counterexample is a lasso: the stem is the shortest path to the component; the cycle goes from the
   stem's last state through a witness of each obligation (an edge of each thread that must move, a state
   where each other thread is disabled, a state of each acceptance set) and back.

A node's identity is its state's (tuples equal as the language's values are: ``ir.program.Bool`` boxes
booleans so that ``True`` and ``1`` differ), as in the visited store (search/store.py).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from movers.liveness.properties import STUTTER, Automaton, Property, Target, Trivial, make_properties
from movers.search.base import Found, SearchBase, Step, Stop, Strategy
from movers.search.limits import poll
from movers.semantics.state import State
from movers.semantics.system import PredicateError

Edge = tuple[int, int, tuple[Step, ...]]  # (thread or STUTTER, target node, the steps of the edge)


@dataclass
class Graph:
    """The reachable product graph: node ``n`` is ``nodes[n]`` = (program state, automaton state)."""

    nodes: list[tuple[State, int]] = field(default_factory=list)
    succ: list[list[Edge]] = field(default_factory=list)
    enabled: list[int] = field(default_factory=list)  # a bit per thread enabled at the node's state
    done: list[bool] = field(default_factory=list)  # every thread has terminated
    parent: list[tuple[int, int]] = field(default_factory=list)  # (node, edge index) of the BFS tree
    depth: list[int] = field(default_factory=list)

    def stem(self, n: int) -> list[Step]:
        """The steps of the shortest path from an initial node to ``n``."""
        edges: list[tuple[Step, ...]] = []
        while self.parent[n][0] >= 0:
            p, i = self.parent[n]
            edges.append(self.succ[p][i][2])
            n = p
        return [st for e in reversed(edges) for st in e]


@dataclass
class Lasso:
    stem: list[Step]
    cycle: list[Step]
    entry: int  # the node where the cycle starts and ends
    moved: int  # a bit per thread that moves on the cycle
    component: frozenset[int]


# -- 1. the graph --------------------------------------------------------------------------------------------


def build(ts: Any, automaton: Automaton, label: Callable[[State], frozenset[str]] | None,
          max_states: int | None, tick: Callable[[int], None], g: Graph | None = None,
          red: Any = None) -> Graph | Found:
    """The reachable graph of the product, breadth first (into ``g`` if given, so that a limit that stops it
    leaves what was built to count), or the first safety violation met. Raises ``Stop("max-states")`` past
    ``max_states`` program states.

    ``red``: a reduction that claims liveness and is not the full interleaving (``Capabilities.liveness``):
    a program state's edges are then its moves, asked once per program state, so that every automaton state
    paired with it sees the same ample set (the reduced graph is a fixed subgraph of the program's, and the
    product is taken with it: what Siegel's counterexample to SPIN's scheme lacks). Its cycle proviso asks
    ``stored``: whether a program state was met before, which makes every cycle of the reduced graph pass a
    fully expanded state (docs/reductions.md, "Liveness"). Fairness still reads every enabled thread."""
    g = g if g is not None else Graph()
    index: dict[tuple[State, int], int] = {}
    steps_of: dict[State, tuple[list[Any], int]] = {}
    programs: set[State] = set()
    reduced = red is not None and not red.capabilities.plain
    if reduced:
        red.on_stack, red.stored, red.arrived = None, programs.__contains__, None
    init = ts.initial()

    def add(s: State, q: int, parent: tuple[int, int], depth: int) -> int:
        key = (s, q)
        n = index.get(key)
        if n is None:
            if s not in programs:
                if max_states is not None and len(programs) >= max_states:
                    raise Stop("max-states")
                programs.add(s)
            n = index[key] = len(g.nodes)
            g.nodes.append(key)
            g.parent.append(parent)
            g.depth.append(depth)
        return n

    for q0 in automaton.initial:
        add(init, q0, (-1, -1), 0)
    n = 0
    while n < len(g.nodes):
        s, q = g.nodes[n]
        if s not in steps_of:
            bad = _safety(ts, g, n, s)
            if bad is not None:
                return bad
            mask = 0
            if reduced:
                outs = red.moves(s)
                threads = s[2]
                for t in range(len(threads)):
                    if threads[t] and ts.enabled(s, t):
                        mask |= 1 << t
            else:
                outs = ts.steps(s)
                for o in outs:
                    mask |= 1 << o.thread
            steps_of[s] = (outs, mask)
        outs, mask = steps_of[s]
        ended = ts.ended(s)
        if ended:  # the program has ended (daemon threads stop with it, as in CPython): the run ends here
            outs, mask = [], 0
        g.enabled.append(mask)
        g.done.append(ended)
        # Where the automaton has no move, the program goes on without it (automaton state -1, in no cycle the
        # property looks for): every reachable program state is still met, and its safety checked.
        try:
            letter = label(s) if label is not None and q >= 0 else frozenset()
        except PredicateError as e:  # the model's predicate fails there: a runtime error of the model, at s
            return Found("runtime-error", str(e), g.stem(n), s)
        qs = (-1,) if q < 0 else automaton.successors(q, letter) or (-1,)
        edges: list[Edge] = []
        g.succ.append(edges)
        for o in outs:
            if o.violation is not None:
                return Found(o.violation[0], o.violation[1], g.stem(n) + list(o.steps))
            if o.state is None:
                continue  # an assume pruned it
            steps = o.steps  # a move is one thread's steps (an Outcome makes this tuple on each call)
            for q2 in qs:
                edges.append((steps[0][0], add(o.state, q2, (n, len(edges)), g.depth[n] + 1), steps))
        if not outs:  # no thread can move (a state every step of which an assume prunes has no run through it)
            for q2 in qs:
                edges.append((STUTTER, add(s, q2, (n, len(edges)), g.depth[n] + 1), ()))
        n += 1
        if n % 512 == 0:
            tick(len(g.nodes))
    return g


def _safety(ts: Any, g: Graph, n: int, s: State) -> Found | None:
    """What the safety search would report at ``s``: a state property, or a deadlock."""
    v = ts.check_state(s)
    if v is not None:
        return Found(v[0], v[1], g.stem(n), s)
    dead = ts.deadlock(s)
    if dead:
        return Found("deadlock", dead, g.stem(n), s)
    return None


# -- 2. strongly connected components --------------------------------------------------------------------------


def components(g: Graph, nodes: Iterable[int], inside: set[int] | frozenset[int],
               keep: Callable[[int, int, int], bool] | None) -> list[list[int]]:
    """Tarjan's strongly connected components of the subgraph on ``inside`` (edges kept by ``keep``),
    iteratively: a model's graph can be far deeper than Python's recursion."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on: set[int] = set()
    out: list[list[int]] = []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        work = [(root, 0)]
        while work:
            v, i = work[-1]
            edges = g.succ[v]
            descended = False
            while i < len(edges):
                t, w, _ = edges[i]
                i += 1
                if w not in inside or (keep is not None and not keep(v, t, w)):
                    continue
                if w not in index:
                    work[-1] = (v, i)
                    if len(index) % 4096 == 0:
                        poll()  # the limits, off the main thread, where no timer interrupts
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, 0))
                    descended = True
                    break
                if w in on and index[w] < low[v]:
                    low[v] = index[w]
            if descended:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def _summary(g: Graph, comp: frozenset[int], keep: Callable[[int, int, int], bool] | None
             ) -> tuple[bool, int, int, int]:
    """(has an edge, threads moving on its edges, threads enabled at every state, at some state)."""
    has_edge, moved, every, some = False, 0, -1, 0
    for v in comp:
        en = g.enabled[v]
        every &= en
        some |= en
        for t, w, _ in g.succ[v]:
            if w in comp and (keep is None or keep(v, t, w)):
                has_edge = True
                if t >= 0:
                    moved |= 1 << t
    return has_edge, moved, every, some


def fair_components(g: Graph, target: Target, fairness: str) -> list[frozenset[int]]:
    """The components that hold a fair cycle meeting every acceptance set (step 3 of the module's docstring)."""
    keep_node, keep = target.keep_node, target.keep_edge
    start = [n for n in range(len(g.nodes)) if keep_node is None or keep_node(n)]
    work: list[list[int]] = [start]
    found: list[frozenset[int]] = []
    while work:
        nodes = work.pop()
        inside = set(nodes)
        for c in components(g, nodes, inside, keep):
            comp = frozenset(c)
            has_edge, moved, every, some = _summary(g, comp, keep)
            if not has_edge or not _accepting(g, comp, target.acceptance):
                continue
            if fairness == "weak" and every & ~moved:
                continue
            if fairness == "strong" and some & ~moved:
                bad = some & ~moved
                rest = [v for v in c if not g.enabled[v] & bad]
                if rest:
                    work.append(rest)
                continue
            found.append(comp)
    return found


def _accepting(g: Graph, comp: frozenset[int], acceptance: Sequence[frozenset[int]]) -> bool:
    return all(any(g.nodes[v][1] in acc for v in comp) for acc in acceptance)


# -- 4. the lasso ---------------------------------------------------------------------------------------------


def lasso(g: Graph, comp: frozenset[int], target: Target, fairness: str) -> Lasso:
    """A lasso through ``comp``: the shortest stem to it, and a cycle from its entry through every witness
    the fairness and the acceptance sets ask for."""
    keep = target.keep_edge
    entry = min(comp, key=lambda v: (g.depth[v], v))
    _, moved, every, some = _summary(g, comp, keep)
    if fairness == "weak":
        movers_needed, disabled_needed = every, some & ~every
    elif fairness == "strong":
        movers_needed, disabled_needed = some, 0
    else:
        movers_needed = disabled_needed = 0
    goals: list[Callable[[int], bool]] = []
    edge_goals: list[int] = []
    for t in _bits(movers_needed):
        edge_goals.append(t)
    for t in _bits(disabled_needed):
        goals.append(lambda v, t=t: not g.enabled[v] >> t & 1)  # type: ignore[misc]
    for acc in target.acceptance:
        goals.append(lambda v, acc=acc: g.nodes[v][1] in acc)  # type: ignore[misc]
    path: list[tuple[int, int]] = []  # (node, edge index)
    here = entry
    for t in edge_goals:
        if any(g.succ[v][i][0] == t for v, i in path):
            continue
        here = _walk(g, comp, keep, here, path, lambda v, t=t: _edge_of(g, comp, keep, v, t) is not None)  # type: ignore[misc]
        i = _edge_of(g, comp, keep, here, t)
        assert i is not None
        path.append((here, i))
        here = g.succ[here][i][1]
    for goal in goals:
        if goal(here) or any(goal(v) for v, _ in path):
            continue
        here = _walk(g, comp, keep, here, path, goal)
    if not path and here == entry:  # no obligation: any edge of the component, then back
        i = next(i for i, (t, w, _) in enumerate(g.succ[entry]) if w in comp and (keep is None or keep(entry, t, w)))
        path.append((entry, i))
        here = g.succ[entry][i][1]
    if here != entry:
        _walk(g, comp, keep, here, path, lambda v: v == entry)
    cycle = [st for v, i in path for st in g.succ[v][i][2]]
    moved_on = 0
    for v, i in path:
        if g.succ[v][i][0] >= 0:
            moved_on |= 1 << g.succ[v][i][0]
    return Lasso(g.stem(entry), cycle, entry, moved_on, comp)


def _bits(mask: int) -> list[int]:
    return [t for t in range(mask.bit_length()) if mask >> t & 1]


def _edge_of(g: Graph, comp: frozenset[int], keep: Callable[[int, int, int], bool] | None, v: int, t: int
             ) -> int | None:
    for i, (u, w, _) in enumerate(g.succ[v]):
        if u == t and w in comp and (keep is None or keep(v, u, w)):
            return i
    return None


def _walk(g: Graph, comp: frozenset[int], keep: Callable[[int, int, int], bool] | None, start: int,
          path: list[tuple[int, int]], goal: Callable[[int], bool]) -> int:
    """Extend ``path`` by a shortest path inside ``comp`` from ``start`` to a node where ``goal`` holds (``start``
    itself if it does); the node reached."""
    if goal(start):
        return start
    prev: dict[int, tuple[int, int]] = {start: (-1, -1)}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for i, (t, w, _) in enumerate(g.succ[v]):
            if w not in comp or w in prev or (keep is not None and not keep(v, t, w)):
                continue
            prev[w] = (v, i)
            if goal(w):
                hops = []
                u = w
                while u != start:
                    p, j = prev[u]
                    hops.append((p, j))
                    u = p
                path.extend(reversed(hops))
                return w
            queue.append(w)
    raise AssertionError("a strongly connected component reaches each of its nodes")


# -- the strategy ----------------------------------------------------------------------------------------------


class FairCycles(Strategy):
    """``--liveness``: build the graph, then look for a fair cycle of each of the property's targets."""

    def __init__(self, search: SearchBase) -> None:
        super().__init__(search)
        self.props = make_properties(search.liveness, self.ts)
        self.fairness = search.fairness

    def explore(self) -> Found | None:
        """Each of the run's properties in turn (``ltl``: one per formula), each on its own product graph; the
        statistics are those of the largest graph built (of the one that failed, if one does)."""
        search, stats = self.search, self.stats
        largest: tuple[Any, int, int] | None = None
        for prop in self.props:
            found = self._explore(prop)
            if found is not None:
                return found
            if largest is None or len(search._store) > len(largest[0]):
                largest = (search._store, stats.transitions, stats.max_depth)
        if largest is not None:
            search._store, stats.transitions, stats.max_depth = largest
            stats.moves = stats.transitions
        return None

    def _explore(self, prop: Property) -> Found | None:
        search = self.search
        g = Graph()
        search._store = g.nodes  # the states counted, also when a limit stops the build
        self.red.observe(prop.atoms, prop.observes_waiting)
        try:
            built = build(self.ts, prop.automaton, prop.label, search.limits.max_states, search.tick, g, self.red)
        finally:
            # Steps executed (a stutter loop is none), as the other searches count them.
            self.stats.transitions = self.stats.moves = sum(1 for es in g.succ for e in es if e[0] != STUTTER)
            self.stats.max_depth = max(g.depth, default=0)
        if isinstance(built, Found):
            return built
        for target in prop.targets(g.nodes, g.done):
            comps = fair_components(g, target, self.fairness)
            if comps:
                comp = min(comps, key=lambda c: min(g.depth[v] for v in c))
                lo = lasso(g, comp, target, self.fairness)
                message = prop.message(g.nodes[lo.entry][0], lo.moved, target, self.fairness)
                return Found("liveness", message, lo.stem + lo.cycle, g.nodes[lo.entry][0], len(lo.stem))
        return None


__all__ = ["STUTTER", "Automaton", "FairCycles", "Graph", "Lasso", "Target", "Trivial", "build",
           "components", "fair_components", "lasso"]
