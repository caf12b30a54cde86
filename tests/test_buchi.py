"""The LTL to Büchi translation (GPVW 1995): the automaton of a formula accepts exactly the lasso words that
satisfy it under the reference semantics (``holds_on_lasso``), with the interface's convention that a run
q0 q1 ... over w0 w1 ... has q(i+1) in ``successors(q(i), w(i))``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pytest
from hypothesis import given, settings
from test_ltl import formulas, lassos

from movers.liveness.buchi import Buchi, translate
from movers.liveness.ltl import Atom, Formula, Not, holds_on_lasso, parse

Letter = frozenset[str]
Vertex = tuple[int, int]  # (automaton state, position in the lasso)


def accepts(b: Buchi, stem: Sequence[Letter], cycle: Sequence[Letter]) -> bool:
    """Whether ``b`` accepts the word ``stem cycle cycle ...``: in the product of ``b`` with the positions
    of the lasso, a reachable strongly connected component with an edge inside it that meets every
    acceptance set."""
    word = [*stem, *cycle]
    succ = [i + 1 if i + 1 < len(word) else len(stem) for i in range(len(word))]

    def post(v: Vertex) -> list[Vertex]:
        q, i = v
        return [(t, succ[i]) for t in b.successors(q, word[i])]

    def closure(start: Iterable[Vertex]) -> set[Vertex]:
        todo = list(start)
        seen = set(todo)
        while todo:
            for w in post(todo.pop()):
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        return seen

    for v in closure((q, 0) for q in b.initial):
        after = closure(post(v))  # reachable in one step or more
        if v not in after:
            continue
        component = {u for u in after if v in closure(post(u))}
        if all(any(q in f for q, _ in component) for f in b.acceptance):
            return True
    return False


P, N = frozenset({"p"}), frozenset()
PQ, Q = frozenset({"p", "q"}), frozenset({"q"})


@pytest.mark.parametrize("text, stem, cycle, expected", [
    # the letter of position 0 is read on the first edge
    ("p", [P], [N], True),
    ("p", [N], [P], False),
    ("!p", [N], [P], True),
    ("!p", [P], [N], False),
    ("[]p", [], [P], True),
    ("[]p", [P, N], [P], False),
    ("[]p", [P], [P, P, N], False),
    ("<>[]p", [N, P, N], [P], True),
    ("<>[]p", [P], [P, N], False),
    ("[]<>p", [P], [N, N, P], True),
    ("[]<>p", [P, P], [N], False),
    ("p U q", [P, P], [Q], True),
    ("p U q", [], [P], False),
    ("p U q", [P, N], [Q], False),
    ("!(p U q)", [], [P], True),
    ("!(p U q)", [P], [Q], False),
    ("[](p -> <>q)", [P], [N, Q], True),
    ("[](p -> <>q)", [N], [P, N], False),
    ("[](p -> <>q)", [P, Q], [N], True),
    ("true", [], [N], True),
    ("false", [], [PQ], False),
])
def test_known_formulas(text: str, stem: list[Letter], cycle: list[Letter], expected: bool) -> None:
    f = parse(text)
    assert holds_on_lasso(f, stem, cycle) == expected  # the table itself is right
    assert accepts(translate(f), stem, cycle) == expected


def test_interface() -> None:
    b = translate(parse("[](p -> <>q)"))
    assert b.atoms == {"p", "q"}
    assert len(b.initial) >= 1 and len(b.acceptance) == 1
    assert all(0 <= q < b.size for f in b.acceptance for q in f)
    for q in range(b.size):
        # atoms it does not read change nothing
        assert b.successors(q, P) == b.successors(q, P | {"other"})
        assert all(0 <= t < b.size for t in b.successors(q, P))


def test_acceptance_sets_one_per_until() -> None:
    assert translate(parse("[]p")).acceptance == ()  # a safety property: every infinite run accepts
    assert len(translate(parse("<>p && <>q")).acceptance) == 2
    assert len(translate(parse("[]<>p && []<>q")).acceptance) == 2
    assert len(translate(Not(parse("[]p"))).acceptance) == 1  # !([]p) = true U !p


def test_translation_is_reproducible() -> None:
    f = parse("[](p -> <>q) && (r U !p)")
    assert translate(f) == translate(f)


@settings(max_examples=300, deadline=None)
@given(formulas(), lassos())
def test_accepts_exactly_the_models(f: Formula, lasso: tuple[list[Letter], list[Letter]]) -> None:
    """On random formulas over three atoms (depth at most four) and random lassos, the automata of the
    formula and of its negation (what the checker translates) agree with the reference semantics."""
    expected = holds_on_lasso(f, *lasso)
    assert accepts(translate(f), *lasso) == expected
    assert accepts(translate(Not(f)), *lasso) == (not expected)


@settings(max_examples=100, deadline=None)
@given(formulas(("p", "q"), depth=3), lassos(("p", "q", "other")))
def test_ignores_other_atoms(f: Formula, lasso: tuple[list[Letter], list[Letter]]) -> None:
    """Letters carry every predicate of the model; the automaton reads only its own atoms."""
    assert accepts(translate(f), *lasso) == holds_on_lasso(f, *lasso)


def test_atoms_of_a_formula_without_any() -> None:
    assert translate(parse("true U false")).atoms == frozenset()
    assert translate(Atom("p")).atoms == {"p"}


def test_contradictions_are_dropped() -> None:
    """A tableau node with a literal and its negation is dropped while expanding (no letter could enter it),
    which keeps the product with the model small."""
    assert translate(parse("p && !p")).size == 1
    assert translate(parse("[]p && []!p")).size == 1
