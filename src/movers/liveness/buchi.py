"""LTL to generalized Büchi automata: the tableau construction of Gerth, Peled, Vardi and Wolper, "Simple
on-the-fly automatic verification of linear temporal logic" (PSTV 1995), section 3, in its vocabulary.

The formula is put in negation normal form; a *node* of the tableau has ``Incoming`` (the nodes with an edge
to it; ``init`` for the initial ones), ``New`` (the formulas still to process), ``Old`` (those processed,
which must hold where the node is) and ``Next`` (those that must hold at the next position). ``expand``
takes a formula out of ``New`` and either records it in ``Old`` (a literal: a contradiction drops the node),
adds its conjuncts (``&&``), or splits the node in two by the expansion laws
``a U b = b || (a && X(a U b))`` and ``a R b = b && (a || X(a R b))`` (``||``: one alternative each). A node
with ``New`` empty is merged with a stored node with the same ``Old`` and ``Next`` (their ``Incoming``
joined), or stored, and a fresh node for its ``Next`` is expanded. There is one acceptance set per until
subformula ``a U b``: the nodes whose ``Old`` has ``b`` or has not ``a U b`` (the promise is kept there).

The labels. In the paper a node is labelled by its literals (``Old`` ∩ literals), which must hold at the
*position where the node is*: the node sequence n0 n1 n2 ... is a run over w0 w1 w2 ... when ``init`` is in
``Incoming(n0)``, n_i is in ``Incoming(n_(i+1))``, and w_i satisfies n_i's literals. The interface here
(issue 26's, which the fair-cycle search uses) reads the letter on the edge: a run q0 q1 q2 ... over the
same word has q_(i+1) in ``successors(q_i, w_i)``. A fresh initial state 0 (the paper's ``init``) bridges
the two: the run is 0 n0 n1 n2 ..., and ``successors(q, w)`` are the nodes n with q in ``Incoming(n)``
whose literals hold in w (the edge into a node reads the letter of that node's position). The state 0 is
visited once, so the acceptance sets (of tableau nodes) mean what they mean in the paper.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from movers.liveness.ltl import (
    And,
    Atom,
    FalseF,
    Formula,
    Not,
    Or,
    Release,
    TrueF,
    Until,
    negation_normal_form,
    show,
)

INIT = 0  # the fresh initial state, ``init`` in the paper's Incoming sets


@dataclass(frozen=True)
class Buchi:
    """A generalized Büchi automaton. States are ``0 .. size-1``; an edge into a state reads a letter (the
    set of atoms true there) and is enabled when every atom of ``positive[q']`` is true and none of
    ``negative[q']`` is. A run is accepting when it visits every set of ``acceptance`` infinitely often
    (``()``: every infinite run is accepting)."""

    atoms: frozenset[str]
    initial: tuple[int, ...]
    acceptance: tuple[frozenset[int], ...]
    edges: tuple[tuple[int, ...], ...]  # per state q, the states with q in their Incoming
    positive: tuple[frozenset[str], ...]
    negative: tuple[frozenset[str], ...]
    _memo: dict[tuple[int, frozenset[str]], tuple[int, ...]] = field(
        default_factory=dict, compare=False, repr=False)

    @property
    def size(self) -> int:
        return len(self.positive)

    def successors(self, q: int, true_atoms: frozenset[str]) -> tuple[int, ...]:
        """The states q' with an edge q -> q' on the letter where exactly ``true_atoms`` (∩ ``atoms``)
        hold."""
        key = (q, true_atoms)
        out = self._memo.get(key)
        if out is None:
            out = tuple(t for t in self.edges[q]
                        if self.positive[t] <= true_atoms and not self.negative[t] & true_atoms)
            self._memo[key] = out
        return out


@dataclass
class _Node:
    incoming: set[int]
    new: set[Formula]
    old: set[Formula]
    next: set[Formula]

    def copy(self) -> _Node:
        return _Node(set(self.incoming), set(self.new), set(self.old), set(self.next))


def _split(node: _Node, eta: Formula) -> list[_Node]:
    """The nodes that replace ``node`` once ``eta`` (taken out of its New) is processed (the paper's
    ``expand``, one step)."""
    match eta:
        case FalseF():
            return []
        case Atom() | Not(Atom()) | TrueF():
            if negation_normal_form(Not(eta)) in node.old:
                return []
            node.old.add(eta)
            return [node]
        case And(a, b):
            node.new |= {a, b} - node.old
            node.old.add(eta)
            return [node]
        case Or(a, b):
            now1, now2, later = {a}, {b}, False
        case Until(a, b):
            now1, now2, later = {a}, {b}, True
        case Release(a, b):
            now1, now2, later = {b}, {a, b}, True
        case _:
            raise TypeError(f"not in negation normal form: {show(eta)}")
    second = node.copy()
    for n, now in ((node, now1), (second, now2)):
        n.new |= now - n.old
        n.old.add(eta)
    if later:
        node.next.add(eta)
    return [second, node]


def _tableau(f: Formula) -> list[_Node]:
    """The stored nodes of the tableau of ``f`` (in negation normal form); node i is state i + 1."""
    stored: list[_Node] = []
    index: dict[tuple[frozenset[Formula], frozenset[Formula]], int] = {}
    work = [_Node({INIT}, {f}, set(), set())]
    while work:
        node = work.pop()
        if node.new:
            eta = min(node.new, key=show)  # any choice is correct; a fixed one numbers states reproducibly
            node.new.remove(eta)
            work.extend(_split(node, eta))
            continue
        key = (frozenset(node.old), frozenset(node.next))
        if key in index:
            stored[index[key]].incoming |= node.incoming
        else:
            index[key] = len(stored)
            stored.append(node)
            work.append(_Node({len(stored)}, set(node.next), set(), set()))
    return stored


def _subformulas(f: Formula) -> set[Formula]:
    match f:
        case Not(a):
            return {f} | _subformulas(a)
        case And(a, b) | Or(a, b) | Until(a, b) | Release(a, b):
            return {f} | _subformulas(a) | _subformulas(b)
    return {f}


def translate(formula: Formula) -> Buchi:
    """A generalized Büchi automaton whose language is the set of words (over the atoms of ``formula``) that
    satisfy ``formula``."""
    f = negation_normal_form(formula)
    nodes = _tableau(f)
    states = range(len(nodes) + 1)
    out: list[list[int]] = [[] for _ in states]
    for i, n in enumerate(nodes):
        for source in n.incoming:
            out[source].append(i + 1)
    untils = sorted((g for g in _subformulas(f) if isinstance(g, Until)), key=show)
    acceptance = tuple(
        frozenset(i + 1 for i, n in enumerate(nodes) if u not in n.old or u.right in n.old) for u in untils)
    literals = [n.old for n in nodes]
    return Buchi(
        atoms=frozenset(g.name for g in _subformulas(f) if isinstance(g, Atom)),
        initial=(INIT,),
        acceptance=acceptance,
        edges=tuple(tuple(sorted(o)) for o in out),
        positive=(frozenset(), *(frozenset(g.name for g in old if isinstance(g, Atom)) for old in literals)),
        negative=(frozenset(), *(frozenset(g.arg.name for g in old if isinstance(g, Not)
                                           and isinstance(g.arg, Atom)) for old in literals)),
    )
