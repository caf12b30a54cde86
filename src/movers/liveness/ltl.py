"""LTL-X formulas in SPIN's syntax: a parser, the formula dataclasses, and a reference semantics on lassos.

The syntax is SPIN's (``spin -f`` and ``ltl { }``): ``[]`` (always), ``<>`` (eventually), ``U`` (until),
``R`` or ``V`` (release), ``W`` (weak until), ``!``, ``&&`` or ``/\\``, ``||`` or ``\\/``, ``->``, ``<->``,
parentheses, ``true``, ``false``; an atom is a Python identifier (the name of one of the model's
``@predicate`` functions). ``U``, ``R``, ``V``, ``W`` and ``X`` are operators as whole words only: ``Up`` is
an atom. Precedence, tightest first: the unary operators (``!``, ``[]``, ``<>``), then ``U``/``R``/``V``/``W``
(left-associative, as in SPIN), ``&&``, ``||``, ``->`` (right-associative), ``<->``. (SPIN's ``ltl { }``
grammar binds ``U`` tighter than ``[]``, so that ``[] p U q`` there is ``[] (p U q)``; here, as in ``spin -f``
and most tools, it is ``([] p) U q``: write the parentheses.)

Next (``X``) is refused: the partial-order reductions preserve only stuttering-invariant properties
(Peled; Lamport's LTL without next), so a formula with ``X`` could be answered wrongly under a reduction.

Only the core operators are kept; the others are desugared while parsing: ``<>p = true U p``,
``[]p = false R p``, ``p W q = q R (p || q)``, ``a -> b = !a || b``, ``a <-> b = (a && b) || (!a && !b)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache


class FormulaError(Exception):
    """A formula that does not parse. ``column`` is the 0-based offset in the formula's text of the character
    the message is about (``len(text)`` for the end of the text)."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


@dataclass(frozen=True)
class Atom:
    name: str


@dataclass(frozen=True)
class TrueF:
    pass


@dataclass(frozen=True)
class FalseF:
    pass


@dataclass(frozen=True)
class Not:
    arg: Formula


@dataclass(frozen=True)
class And:
    left: Formula
    right: Formula


@dataclass(frozen=True)
class Or:
    left: Formula
    right: Formula


@dataclass(frozen=True)
class Until:
    """``left U right``: ``right`` holds at some position, and ``left`` at every position before it."""

    left: Formula
    right: Formula


@dataclass(frozen=True)
class Release:
    """``left R right``: ``right`` holds up to and including the first position where ``left`` holds (forever
    if there is none); the dual of until, ``a R b = !(!a U !b)``."""

    left: Formula
    right: Formula


Formula = Atom | TrueF | FalseF | Not | And | Or | Until | Release


def eventually(f: Formula) -> Formula:
    return Until(TrueF(), f)


def always(f: Formula) -> Formula:
    return Release(FalseF(), f)


# ---------------------------------------------------------------------------------------------- the lexer

# Longest first where one token is a prefix of another (``<->`` before ``<>``).
_SYMBOLS = ("<->", "[]", "<>", "->", "&&", "||", "/\\", "\\/", "!", "(", ")")
_WORD = re.compile(r"[^\W\d]\w*")
_KEYWORDS = {"true", "false", "U", "R", "V", "W", "X"}


@dataclass(frozen=True)
class _Token:
    kind: str  # a symbol, a keyword, "atom", or "end"
    text: str
    column: int


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        symbol = next((s for s in _SYMBOLS if text.startswith(s, i)), None)
        if symbol is not None:
            out.append(_Token(symbol, symbol, i))
            i += len(symbol)
            continue
        m = _WORD.match(text, i)
        if m is None:
            raise FormulaError(f"unexpected character {text[i]!r} in the formula", i)
        word = m.group()
        if word == "X":
            raise FormulaError(
                "the next operator X is not supported: the reductions preserve only stuttering-invariant "
                "properties, so formulas are LTL without next", i)
        out.append(_Token(word if word in _KEYWORDS else "atom", word, i))
        i = m.end()
    out.append(_Token("end", "", len(text)))
    return out


# --------------------------------------------------------------------------------------------- the parser

_BINARY_TEMPORAL = ("U", "R", "V", "W")
_AND = ("&&", "/\\")
# Deeper formulas are refused rather than left to hit Python's recursion limit here or in the translation.
MAX_NESTING = 100
_OR = ("||", "\\/")


class _Parser:
    """Recursive descent, one method per precedence level, loosest first."""

    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.nesting = 0

    def peek(self) -> _Token:
        return self.toks[self.i]

    def take(self) -> _Token:
        t = self.toks[self.i]
        self.i += 1
        return t

    def equiv(self) -> Formula:
        f = self.implies()
        while self.peek().kind == "<->":
            self.take()
            g = self.implies()
            f = Or(And(f, g), And(Not(f), Not(g)))
        return f

    def implies(self) -> Formula:
        f = self.disjunction()
        if self.peek().kind == "->":
            self.take()
            return Or(Not(f), self.implies())
        return f

    def disjunction(self) -> Formula:
        f = self.conjunction()
        while self.peek().kind in _OR:
            self.take()
            f = Or(f, self.conjunction())
        return f

    def conjunction(self) -> Formula:
        f = self.temporal()
        while self.peek().kind in _AND:
            self.take()
            f = And(f, self.temporal())
        return f

    def temporal(self) -> Formula:
        f = self.unary()
        while self.peek().kind in _BINARY_TEMPORAL:
            op = self.take().kind
            g = self.unary()
            f = Until(f, g) if op == "U" else Release(g, Or(f, g)) if op == "W" else Release(f, g)
        return f

    def unary(self) -> Formula:
        self.nesting += 1
        try:
            return self._unary()
        finally:
            self.nesting -= 1

    def _unary(self) -> Formula:
        t = self.take()
        if self.nesting > MAX_NESTING:
            raise FormulaError(f"the formula nests more than {MAX_NESTING} operators or parentheses", t.column)
        if t.kind == "!":
            return Not(self.unary())
        if t.kind == "[]":
            return always(self.unary())
        if t.kind == "<>":
            return eventually(self.unary())
        if t.kind == "atom":
            return Atom(t.text)
        if t.kind == "true":
            return TrueF()
        if t.kind == "false":
            return FalseF()
        if t.kind == "(":
            f = self.equiv()
            if self.peek().kind != ")":
                raise FormulaError("expected ')' to close an earlier '('", self.peek().column)
            self.take()
            return f
        what = "the end of the formula" if t.kind == "end" else repr(t.text)
        raise FormulaError(f"expected a formula, found {what}", t.column)


def parse(text: str) -> Formula:
    """The formula written ``text`` (SPIN's syntax); raises ``FormulaError`` with the column of the error."""
    p = _Parser(text)
    f = p.equiv()
    t = p.peek()
    if t.kind != "end":
        raise FormulaError(f"unexpected {t.text!r} after a complete formula", t.column)
    return f


# ------------------------------------------------------------------------------------ operations on formulas

def atoms(f: Formula) -> frozenset[str]:
    """The names of the atoms ``f`` reads."""
    match f:
        case Atom(name):
            return frozenset((name,))
        case TrueF() | FalseF():
            return frozenset()
        case Not(a):
            return atoms(a)
        case And(a, b) | Or(a, b) | Until(a, b) | Release(a, b):
            return atoms(a) | atoms(b)
    raise TypeError(f)


def negation_normal_form(f: Formula) -> Formula:
    """``f`` with every negation on an atom (De Morgan, and ``!(a U b) = !a R !b``, ``!(a R b) = !a U !b``);
    ``!true`` and ``!false`` become ``false`` and ``true``."""
    match f:
        case Not(Atom()):
            return f
        case Not(TrueF()):
            return FalseF()
        case Not(FalseF()):
            return TrueF()
        case Not(Not(a)):
            return negation_normal_form(a)
        case Not(And(a, b)):
            return Or(negation_normal_form(Not(a)), negation_normal_form(Not(b)))
        case Not(Or(a, b)):
            return And(negation_normal_form(Not(a)), negation_normal_form(Not(b)))
        case Not(Until(a, b)):
            return Release(negation_normal_form(Not(a)), negation_normal_form(Not(b)))
        case Not(Release(a, b)):
            return Until(negation_normal_form(Not(a)), negation_normal_form(Not(b)))
        case And(a, b):
            return And(negation_normal_form(a), negation_normal_form(b))
        case Or(a, b):
            return Or(negation_normal_form(a), negation_normal_form(b))
        case Until(a, b):
            return Until(negation_normal_form(a), negation_normal_form(b))
        case Release(a, b):
            return Release(negation_normal_form(a), negation_normal_form(b))
    return f


@cache
def show(f: Formula) -> str:
    """``f`` in SPIN's syntax (``parse(show(f)) == f``): binary operators parenthesized, ``true U p`` and
    ``false R p`` written ``<>p`` and ``[]p``."""
    return _show(f, top=True)


def _show(f: Formula, top: bool = False) -> str:
    match f:
        case Atom(name):
            return name
        case TrueF():
            return "true"
        case FalseF():
            return "false"
        case Not(a):
            return "!" + _show(a)
        case Until(TrueF(), a):
            return "<>" + _show(a)
        case Release(FalseF(), a):
            return "[]" + _show(a)
        case And(a, b) | Or(a, b) | Until(a, b) | Release(a, b):
            op = {And: "&&", Or: "||", Until: "U", Release: "R"}[type(f)]
            text = f"{_show(a)} {op} {_show(b)}"
            return text if top else f"({text})"
    raise TypeError(f)


# -------------------------------------------------------------------------------------- reference semantics

def holds_on_lasso(f: Formula, stem: Sequence[frozenset[str]], cycle: Sequence[frozenset[str]]) -> bool:
    """Whether the word ``stem cycle cycle cycle ...`` satisfies ``f`` (each letter the set of atoms true
    there). The suffix of the word from a position depends only on that position of the lasso (``stem``
    then one ``cycle``), so each subformula is evaluated as the set of those positions where it holds:
    ``a U b`` as a least fixpoint (``b`` now, or ``a`` now and ``a U b`` next), ``a R b`` as a greatest one
    (``b`` now, and ``a`` now or ``a R b`` next)."""
    if not cycle:
        raise ValueError("a lasso's cycle is not empty")
    word = [*stem, *cycle]
    n = len(word)
    succ = [i + 1 if i + 1 < n else len(stem) for i in range(n)]

    def positions(g: Formula) -> frozenset[int]:
        match g:
            case Atom(name):
                return frozenset(i for i in range(n) if name in word[i])
            case TrueF():
                return frozenset(range(n))
            case FalseF():
                return frozenset()
            case Not(a):
                return frozenset(range(n)) - positions(a)
            case And(a, b):
                return positions(a) & positions(b)
            case Or(a, b):
                return positions(a) | positions(b)
            case Until(a, b):
                pa, pb = positions(a), positions(b)
                return _fixpoint(frozenset(), lambda s: frozenset(
                    i for i in range(n) if i in pb or (i in pa and succ[i] in s)))
            case Release(a, b):
                pa, pb = positions(a), positions(b)
                return _fixpoint(frozenset(range(n)), lambda s: frozenset(
                    i for i in range(n) if i in pb and (i in pa or succ[i] in s)))
        raise TypeError(g)

    return 0 in positions(f)


def _fixpoint(start: frozenset[int], step: Callable[[frozenset[int]], frozenset[int]]) -> frozenset[int]:
    s = start
    while (t := step(s)) != s:
        s = t
    return s
