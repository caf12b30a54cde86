"""Comprehensions that take steps: a list, set or dict comprehension, or a generator expression consumed by a
builtin (``sum``, ``any``, ``all``, ``min``, ``max``, ``sorted``, ``list``, ``tuple``, ``set``), whose element,
condition or iterable calls a function or method of the model (``[pool.submit(load, n) for n in names]``,
``all(f.done() for f in futures)``, ``{f(k): k for k in keys}``) or asks ``t.is_alive()``.

CPython runs a comprehension as a loop of its own (its variables do not leak, PEP 709 inlines the loop in
3.12 without changing that): each call is a call, between whose steps other threads run. A comprehension
evaluated in one go (``IterationCompiler.comprehension``) cannot contain one, so such a comprehension becomes
that loop, as the access granularity's lowering cuts one (``granularity._Cut._comprehension``): what its
statement evaluates before it goes first, into hidden temporaries, in Python's order; then
``$c = ()`` / ``for $x in it: if cond: $c = $c + (elt,)``, its variables renamed to hidden locals; then the
statement, using ``list($c)`` (``set($c)``, ``dict($c)`` of the ``(key, value)`` pairs, a later key
overwriting an earlier one). ``any`` and ``all`` stop at the first item that decides, as CPython's do; the other
builtins consume every item.

Under ``--granularity access`` the lowering does this for every statement of a function and of the main thread's
code. ``desugar`` does it, before anything else, where that lowering does not run (``--granularity statement``,
the module's code before it starts a thread: its statement is then cut at its accesses as under ``access``,
a finer granularity that CPython has too) and where ``TimeoutCompiler.hoist`` would have to move ``t.is_alive()``
out of a comprehension, which it cannot. A comprehension that calls nothing of the model stays an expression,
evaluated in the step of its statement, as before.

A list comprehension that is a statement of its own (``[t.start() for t in threads]``) is the ``for`` loop it
stands for: CPython builds a list nobody reads.
"""

from __future__ import annotations

import ast
from typing import Any, Protocol

from movers.lang.granularity import Lowering, _clears, _Renamed
from movers.lang.syntax import SYNC_METHODS, evaluated_here, walked


class _Compiler(Protocol):
    """What the desugaring asks of the function's compiler (``compiler.FunctionCompiler``)."""

    mc: Any
    code: Any

    def hidden(self, prefix: str) -> int: ...

    def lowering(self, shared: bool = True) -> Lowering: ...

    def value_call(self, e: ast.AST) -> bool: ...

    def _is_model_call(self, c: ast.Call) -> bool: ...


COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class Desugar:
    """The pass over one function's (or the module's) statements; ``lowered_later``: the access lowering runs
    on them afterwards (it then cuts every comprehension but those that ask ``is_alive()``)."""

    def __init__(self, fc: _Compiler, lowered_later: bool) -> None:
        self.fc = fc
        self.lowered_later = lowered_later
        self._low: Lowering | None = None

    def block(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in body:
            out.extend(self.stmt(s))
        return out

    # -- which comprehensions -----------------------------------------------------------------------------------

    def _calls(self, c: ast.AST) -> list[ast.Call]:
        """The calls in ``c`` that are steps: of the model's functions and methods, and synchronisations (a
        ``join`` with no argument or as the element of a comprehension statement: ``sep.join(items)`` is a
        string's)."""
        top = c.elt if isinstance(c, ast.ListComp) else None
        return [n for n in evaluated_here(c) if isinstance(n, ast.Call) and (
            self.fc._is_model_call(n) or (isinstance(n.func, ast.Attribute) and n.func.attr in SYNC_METHODS and (
                n.func.attr != "join" or n is top or not (n.args or n.keywords))
                and not isinstance(n.func.value, ast.Constant)))]

    def _needy(self, s: ast.stmt) -> list[ast.expr]:
        """The comprehensions the statement evaluates itself (not in its blocks, lambdas or nested functions)
        that call something of the model."""
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return []
        out: list[ast.expr] = []
        for x in ast.iter_child_nodes(s):
            if isinstance(x, ast.expr):
                out.extend(n for n in evaluated_here(x) if isinstance(n, COMPREHENSIONS) and self._calls(n))
        return out

    # -- statements -------------------------------------------------------------------------------------------

    def stmt(self, s: ast.stmt) -> list[ast.stmt]:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return [s]  # a function of its own, compiled (and desugared) on its own
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.ListComp) and self._calls(s.value):
            return self.block(self._as_loop(s.value, s))
        needy = self._needy(s)
        if needy and (not self.lowered_later or any(self.fc.value_call(c) for n in needy for c in self._calls(n))):
            if isinstance(s, (ast.If, ast.For, ast.While)) and not (isinstance(s, ast.While) and s.orelse):
                return self._cut_header(s)
            if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Assert, ast.Return)):
                return self.lowering().stmt(s)
        for field in ("body", "orelse", "finalbody"):
            part = getattr(s, field, None)
            if isinstance(part, list) and part and isinstance(part[0], ast.stmt):
                setattr(s, field, self.block(part))
        for h in getattr(s, "handlers", None) or ():
            h.body = self.block(h.body)
        for c in getattr(s, "cases", None) or ():
            c.body = self.block(c.body)
        return [s]

    def _cut_header(self, s: ast.If | ast.For | ast.While) -> list[ast.stmt]:
        """``if``/``while``/``for`` whose test or iterable holds such a comprehension: the header cut as the
        lowering cuts it (its blocks set aside, then desugared on their own)."""
        body, orelse = self.block(s.body), self.block(s.orelse)
        s.body, s.orelse = [], []
        out = self.lowering().stmt(s)
        head = out[-1] if isinstance(s, ast.While) else s
        if isinstance(s, ast.For):
            head = next(x for x in out if x is s)
        assert isinstance(head, (ast.If, ast.For, ast.While))
        head.body = head.body + body
        if not isinstance(s, ast.While):
            head.orelse = head.orelse + orelse
        if not head.body:
            head.body = [ast.copy_location(ast.Pass(), s)]
        return out

    def _as_loop(self, e: ast.ListComp, s: ast.Expr) -> list[ast.stmt]:
        """``[elt for x in it if c]`` as a statement: ``for $x in it: if c: elt``, ``$x`` cleared after it."""
        names: dict[str, str] = {}
        for g in e.generators:
            if g.is_async:
                raise self.fc.mc.error(g, "unsupported construct: async comprehension")
            g.iter = _Renamed(names).visit(g.iter)
            for n in ast.walk(g.target):
                if isinstance(n, ast.Name):
                    names[n.id] = self.fc.code.locals[self.fc.hidden("c")]
            g.target = _Renamed(names).visit(g.target)
            g.ifs = [_Renamed(names).visit(c) for c in g.ifs]
        item = ast.copy_location(ast.Expr(_Renamed(names).visit(e.elt)), s)
        item.movers_text = self.fc.mc.text(s)  # type: ignore[attr-defined]
        body: list[ast.stmt] = [item]
        for g in reversed(e.generators):
            for c in reversed(g.ifs):
                body = [ast.copy_location(ast.If(test=c, body=body, orelse=[]), s)]
            body = [ast.copy_location(ast.For(target=g.target, iter=g.iter, body=body, orelse=[]), s)]
        return [ast.fix_missing_locations(body[0]), *_clears(list(names.values()), s)]

    def lowering(self) -> Lowering:
        """The access lowering, a call of ``is_alive()`` (and the other synchronisation methods that give a
        value) counted as a step as it is one (``lang/timeouts.py``)."""
        if self._low is None:
            low = self.fc.lowering(shared=False)
            plain = low.model_call
            value_call = self.fc.value_call
            low.model_call = lambda c: plain(c) or value_call(c)
            self._low = low
        return self._low


def desugar(fc: _Compiler, body: list[ast.stmt], lowered_later: bool) -> list[ast.stmt]:
    """``body`` with its comprehensions that call the model turned into loops where needed (module docstring)."""
    if not any(isinstance(n, COMPREHENSIONS) for s in body for n in walked(s)):
        return body
    return Desugar(fc, lowered_later).block(body)
