"""The LTL-X parser (SPIN's syntax and precedence, errors with their column, next refused), the operations on
formulas, and the reference semantics on lassos that tests/test_buchi.py checks the automata against."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from movers.liveness.ltl import (
    And,
    Atom,
    FalseF,
    Formula,
    FormulaError,
    Not,
    Or,
    Release,
    TrueF,
    Until,
    always,
    atoms,
    eventually,
    holds_on_lasso,
    negation_normal_form,
    parse,
    show,
)

p, q, r = Atom("p"), Atom("q"), Atom("r")
NAMES = ("p", "q", "r")


def formulas(names: tuple[str, ...] = NAMES, depth: int = 4) -> st.SearchStrategy[Formula]:
    """Formulas over ``names`` of nesting depth at most ``depth`` (every operator, sugar included)."""
    leaves = st.one_of(st.sampled_from([Atom(n) for n in names]), st.just(TrueF()), st.just(FalseF()))
    if depth == 0:
        return leaves
    sub = formulas(names, depth - 1)
    return st.one_of(
        leaves, st.builds(Not, sub), st.builds(eventually, sub), st.builds(always, sub),
        *(st.builds(op, sub, sub) for op in (And, Or, Until, Release)))


def letters(names: tuple[str, ...] = NAMES) -> st.SearchStrategy[frozenset[str]]:
    return st.frozensets(st.sampled_from(names))


def lassos(names: tuple[str, ...] = NAMES) -> st.SearchStrategy[tuple[list[frozenset[str]], list[frozenset[str]]]]:
    return st.tuples(st.lists(letters(names), max_size=3), st.lists(letters(names), min_size=1, max_size=3))


# ------------------------------------------------------------------------------------------------ parsing

@pytest.mark.parametrize("text, expected", [
    ("p", p),
    ("true", TrueF()),
    ("false", FalseF()),
    ("!p", Not(p)),
    ("[]p", always(p)),
    ("<>p", eventually(p)),
    ("[] <> p", always(eventually(p))),
    ("<>[]p", eventually(always(p))),
    ("p U q", Until(p, q)),
    ("p R q", Release(p, q)),
    ("p V q", Release(p, q)),
    ("p W q", Release(q, Or(p, q))),
    ("p /\\ q", And(p, q)),
    ("p \\/ q", Or(p, q)),
    ("p -> q", Or(Not(p), q)),
    ("p <-> q", Or(And(p, q), And(Not(p), Not(q)))),
    # unary binds tightest
    ("!p U q", Until(Not(p), q)),
    ("[]p U q", Until(always(p), q)),
    ("!p && q", And(Not(p), q)),
    ("![]p", Not(always(p))),
    # U before &&, && before ||, || before ->, -> before <->
    ("p && q U r", And(p, Until(q, r))),
    ("p U q && r", And(Until(p, q), r)),
    ("p || q && r", Or(p, And(q, r))),
    ("p && q || r", Or(And(p, q), r)),
    ("p || q -> r", Or(Not(Or(p, q)), r)),
    ("p -> q <-> r", parse("(p -> q) <-> r")),
    ("p <-> q -> r", parse("p <-> (q -> r)")),
    # associativity: U left (as SPIN), -> right
    ("p U q U r", Until(Until(p, q), r)),
    ("p -> q -> r", Or(Not(p), Or(Not(q), r))),
    ("(p -> q) -> r", Or(Not(Or(Not(p), q)), r)),
    ("[](req -> <>ack)", always(Or(Not(Atom("req")), eventually(Atom("ack"))))),
    # words: an operator only as a whole word; atoms are Python identifiers
    ("Up U Rq", Until(Atom("Up"), Atom("Rq"))),
    ("_x1 && état", And(Atom("_x1"), Atom("état"))),
    ("p&&q", And(p, q)),
    ("  ( ( p ) )  ", p),
])
def test_parse(text: str, expected: Formula) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize("text, column, words", [
    ("", 0, "expected a formula"),
    ("p &&", 4, "expected a formula"),
    ("p && && q", 5, "found '&&'"),
    ("(p || q", 7, "expected ')'"),
    ("(p q)", 3, "expected ')'"),
    ("p)", 1, "unexpected ')'"),
    ("p q", 2, "unexpected 'q'"),
    ("p # q", 2, "unexpected character '#'"),
    ("p & q", 2, "unexpected character '&'"),
    ("p U", 3, "expected a formula"),
    ("[]", 2, "expected a formula"),
    ("1p", 0, "unexpected character '1'"),
])
def test_errors_have_columns(text: str, column: int, words: str) -> None:
    with pytest.raises(FormulaError) as e:
        parse(text)
    assert e.value.column == column
    assert words in e.value.message


@pytest.mark.parametrize("text, column", [("X p", 0), ("p U X q", 4), ("[](p -> X q)", 8)])
def test_next_is_refused(text: str, column: int) -> None:
    with pytest.raises(FormulaError) as e:
        parse(text)
    assert e.value.column == column
    assert "next" in e.value.message and "stutter" in e.value.message


def test_an_atom_may_contain_x() -> None:
    assert parse("Xp || pX") == Or(Atom("Xp"), Atom("pX"))


@given(formulas())
def test_show_parses_back(f: Formula) -> None:
    assert parse(show(f)) == f


def test_show_uses_spin_sugar() -> None:
    assert show(parse("[](p -> <>q)")) == "[](!p || <>q)"
    assert show(parse("p U (q R r)")) == "p U (q R r)"


def test_atoms() -> None:
    assert atoms(parse("[](p -> <>q) && true U false")) == {"p", "q"}


# ---------------------------------------------------------------------------------------- the semantics

def nnf_ok(f: Formula) -> bool:
    """Negation only on atoms."""
    match f:
        case Not(a):
            return isinstance(a, Atom)
        case And(a, b) | Or(a, b) | Until(a, b) | Release(a, b):
            return nnf_ok(a) and nnf_ok(b)
    return True


@settings(max_examples=200)
@given(formulas(), lassos())
def test_negation_normal_form(f: Formula, lasso: tuple[list[frozenset[str]], list[frozenset[str]]]) -> None:
    g = negation_normal_form(f)
    assert nnf_ok(g)
    assert nnf_ok(negation_normal_form(Not(f)))
    assert holds_on_lasso(g, *lasso) == holds_on_lasso(f, *lasso)
    assert holds_on_lasso(negation_normal_form(Not(f)), *lasso) != holds_on_lasso(f, *lasso)


P, N = frozenset({"p"}), frozenset()
PQ, Q = frozenset({"p", "q"}), frozenset({"q"})


@pytest.mark.parametrize("text, stem, cycle, expected", [
    ("p", [P], [N], True),
    ("p", [N], [P], False),
    ("[]p", [], [P], True),
    ("[]p", [P, N], [P], False),
    ("[]p", [P], [P, N], False),
    ("<>p", [N, N], [N, P], True),
    ("<>p", [P], [N], True),
    ("<>p", [N], [N], False),
    ("[]<>p", [N], [N, P], True),
    ("[]<>p", [P, P], [N], False),
    ("<>[]p", [N], [P], True),
    ("<>[]p", [P], [P, N], False),
    ("p U q", [P, P], [Q], True),
    ("p U q", [Q], [N], True),
    ("p U q", [P, N], [Q], False),
    ("p U q", [], [P], False),  # q never comes
    ("p R q", [], [Q], True),  # q forever
    ("p R q", [Q], [PQ, N], True),
    ("p R q", [Q, P], [Q], False),  # released too late: q fails before p holds with it
    ("!(p U q)", [], [P], True),
    ("[](p -> <>q)", [P], [N, Q], True),
    ("[](p -> <>q)", [N], [P, N], False),
    ("p W q", [], [P], True),
    ("p W q", [P], [N], False),
])
def test_known_values(text: str, stem: list[frozenset[str]], cycle: list[frozenset[str]], expected: bool) -> None:
    assert holds_on_lasso(parse(text), stem, cycle) == expected


@settings(max_examples=200)
@given(formulas(), lassos())
def test_lasso_is_a_word(f: Formula, lasso: tuple[list[frozenset[str]], list[frozenset[str]]]) -> None:
    """A lasso stands for its infinite word: unrolling the cycle once, doubling it, or rotating its first
    letter into the stem gives the same word, so the same verdict."""
    stem, cycle = lasso
    v = holds_on_lasso(f, stem, cycle)
    assert holds_on_lasso(f, stem + cycle, cycle) == v
    assert holds_on_lasso(f, stem, cycle + cycle) == v
    assert holds_on_lasso(f, stem + cycle[:1], cycle[1:] + cycle[:1]) == v


@settings(max_examples=200)
@given(formulas(depth=2), formulas(depth=2), lassos())
def test_fixpoints_agree_with_the_expansion_laws(
        a: Formula, b: Formula, lasso: tuple[list[frozenset[str]], list[frozenset[str]]]) -> None:
    """The least fixpoint of until and the greatest of release against each other (duality) and against
    ``a U b = b || (a && X(a U b))`` read on the word shifted by one letter."""
    stem, cycle = lasso
    shifted = (stem[1:], cycle) if stem else ([], cycle[1:] + cycle[:1])
    now = (lambda g: holds_on_lasso(g, stem, cycle))
    nxt = (lambda g: holds_on_lasso(g, *shifted))
    assert now(Release(a, b)) == (not now(Until(Not(a), Not(b))))
    assert now(Until(a, b)) == (now(b) or (now(a) and nxt(Until(a, b))))
    assert now(Release(a, b)) == (now(b) and (now(a) or nxt(Release(a, b))))


def test_empty_cycle_is_refused() -> None:
    with pytest.raises(ValueError):
        holds_on_lasso(p, [P], [])


@pytest.mark.parametrize("text", ["!" * 5000 + "p", "(" * 5000 + "p" + ")" * 5000, "[]" * 3000 + "p"])
def test_deep_nesting_is_an_error_not_a_crash(text: str) -> None:
    with pytest.raises(FormulaError) as e:
        parse(text)
    assert "nests" in e.value.message


def test_nesting_within_the_limit_parses() -> None:
    assert negation_normal_form(parse("!" * 90 + "p")) == p
    assert parse("(" * 90 + "p" + ")" * 90) == p
