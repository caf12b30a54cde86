"""A deliberately naive check of ``--liveness ltl``: the test oracle for movers' product of the program with the
Büchi automaton of a negated formula (/work/liveness_spec.md, issue 26; docs/liveness.md).

It shares no code with movers' search or its translation (``src/movers/liveness/buchi.py``, the tableau of
Gerth, Peled, Vardi and Wolper): only the parser ``movers.liveness.ltl.parse`` and its dataclasses are read.
The automaton is the classic one of Vardi and Wolper ("An automata-theoretic approach to automatic program
verification", LICS 1986; Vardi, "An automata-theoretic approach to linear temporal logic", 1996, section
2.3), written plainly:

- the formula is rewritten with until, negation and the boolean operators only (``a R b = !(!a U !b)``);
- its *closure* is its subformulas and their negations; a state of the automaton is an *elementary set* of
  the closure, a maximal consistent one: given by the truth of each subformula that is not a negation, where
  ``!a``, ``a && b``, ``a || b``, ``true``, ``false`` are true as logic says, and an until ``a U b`` is true
  when ``b`` is and implies ``a || b``;
- a state A reads the letter whose atoms are exactly A's true atoms, and goes to B when every until keeps the
  expansion law ``a U b`` in A iff ``b`` in A or (``a`` in A and ``a U b`` in B);
- the initial states are those where the formula is true; there is one acceptance set per until ``a U b``:
  the states where it is false or ``b`` is true (a promise is not put off forever).

The product with the naive graph (``tests/naive_liveness.py``, stutter loops included) follows the spec: node
(s, A), an edge (s, A) -> (s', B) for each edge s -> s' when A reads s's label and B is a successor of A;
and a violation is a reachable product cycle that is fair by its program component and meets every acceptance
set, found by ``naive_liveness.has_fair_cycle``.
"""

from __future__ import annotations

from collections import deque
from itertools import product

from naive_liveness import FAIRNESS, Graph, Verdict, build_graph, decide, has_fair_cycle

from movers.liveness.ltl import And, Atom, FalseF, Formula, Not, Or, Release, TrueF, Until, parse


def core(f: Formula) -> Formula:
    """``f`` with until, negation, and, or only (release rewritten), no double negation."""
    match f:
        case Release(a, b):
            return _not(Until(_not(core(a)), _not(core(b))))
        case Not(a):
            return _not(core(a))
        case And(a, b):
            return And(core(a), core(b))
        case Or(a, b):
            return Or(core(a), core(b))
        case Until(a, b):
            return Until(core(a), core(b))
    return f


def _not(f: Formula) -> Formula:
    return f.arg if isinstance(f, Not) else Not(f)


def _subformulas(f: Formula, out: list[Formula]) -> list[Formula]:
    """The subformulas of ``f``, each once, the smaller before the bigger."""
    for child in (f.arg,) if isinstance(f, Not) else (f.left, f.right) if isinstance(f, And | Or | Until) else ():
        _subformulas(child, out)
    if f not in out:
        out.append(f)
    return out


class Automaton:
    """The Vardi-Wolper automaton of a formula: ``states[i]`` the set of the subformulas true in state i."""

    def __init__(self, formula: Formula) -> None:
        self.formula = core(formula)
        subs = _subformulas(self.formula, [])
        self.atoms = [g.name for g in subs if isinstance(g, Atom)]
        self.untils = [g for g in subs if isinstance(g, Until)]
        self.states: list[frozenset[Formula]] = []
        for bits in product((False, True), repeat=len(self.atoms) + len(self.untils)):
            free = dict(zip([Atom(a) for a in self.atoms] + self.untils, bits, strict=True))
            true = {g for g in subs if self._value(g, free)}
            if all((u in true) == (u.right in true or (u in true and u.left in true)) for u in self.untils):
                self.states.append(frozenset(true))
        self.initial = [i for i, a in enumerate(self.states) if self.formula in a]
        self.acceptance = [frozenset(i for i, a in enumerate(self.states) if u not in a or u.right in a)
                           for u in self.untils]

    def _value(self, g: Formula, free: dict[Formula, bool]) -> bool:
        match g:
            case TrueF():
                return True
            case FalseF():
                return False
            case Not(a):
                return not self._value(a, free)
            case And(a, b):
                return self._value(a, free) and self._value(b, free)
            case Or(a, b):
                return self._value(a, free) or self._value(b, free)
        return free[g]

    def reads(self, i: int, letter: frozenset[str]) -> bool:
        """Whether state i reads ``letter`` (its true atoms are the letter's)."""
        return all((Atom(a) in self.states[i]) == (a in letter) for a in self.atoms)

    def step(self, i: int, j: int) -> bool:
        """Whether j may follow i: the expansion law of every until."""
        a, b = self.states[i], self.states[j]
        return all((u in a) == (u.right in a or (u.left in a and u in b)) for u in self.untils)


def violated(graph: Graph, formula: Formula, fairness: str) -> bool:
    """Whether the graph (with its ``labels``) has a reachable fair run that is a model of ``!formula``: a
    fair product cycle meeting every acceptance set of the automaton of the negation."""
    aut = Automaton(Not(formula))
    reads = [[i for i in range(len(aut.states)) if aut.reads(i, graph.labels[s])] for s in range(graph.states)]
    number: dict[tuple[int, int], int] = {}
    nodes: list[tuple[int, int]] = []
    edges: list[tuple[int, int, int]] = []
    out: dict[int, list[tuple[int, int]]] = {}
    for s, t, s2 in graph.edges:
        out.setdefault(s, []).append((t, s2))
    todo = deque((0, q) for q in aut.initial if q in reads[0])
    for node in todo:
        number[node] = len(nodes)
        nodes.append(node)
    while todo:
        s, q = todo.popleft()
        for t, s2 in out.get(s, ()):
            for q2 in reads[s2]:
                if aut.step(q, q2):
                    if (s2, q2) not in number:
                        number[s2, q2] = len(nodes)
                        nodes.append((s2, q2))
                        todo.append((s2, q2))
                    edges.append((number[s, q], t, number[s2, q2]))
    product_graph = Graph(edges, [graph.enabled[s] for s, _ in nodes], threads=graph.threads)

    def accepting(comp: set[int]) -> bool:
        return all(any(nodes[n][1] in acc for n in comp) for acc in aut.acceptance)

    return has_fair_cycle(product_graph, range(len(nodes)), edges, fairness, accepting)


def check_ltl(source: str, fairness: str = "weak", granularity: str = "access", max_states: int = 20_000) -> Verdict:
    """The verdict of ``--liveness ltl`` under ``fairness`` for ``source``: a safety violation met while
    building the graph first, then a violation when some ``ltl(...)`` formula has a fair counterexample."""
    if fairness not in FAIRNESS:
        raise ValueError(f"unknown fairness {fairness!r}")
    return decide_ltl(build_graph(source, granularity, max_states), fairness)


def decide_ltl(graph: Graph, fairness: str) -> Verdict:
    """``check_ltl`` on a graph already built."""
    if graph.safety:
        return decide(graph, "termination", fairness)  # the safety verdict, as for every property
    if any(violated(graph, parse(f), fairness) for f in graph.formulas):
        return Verdict("violation", "liveness", states=graph.states)
    return Verdict("ok", states=graph.states)
