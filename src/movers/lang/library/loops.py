"""Loops over the library's iterators: ``for f in as_completed(fs)`` and ``list(pool.map(fn, xs))``.

In CPython, ``concurrent.futures.as_completed`` and ``Executor.map`` return generators: each item is waited for
when the loop asks for it, so the loop's body runs while later tasks still run. A model has no generators (a
suspended frame the state does not hold), so movers' library (``futures_model.py``) returns an iterator object
whose ``_next()`` gives ``(True, item)``, or ``(False, None)`` at the end, and this pass rewrites the loops
that consume one, before compilation, into loops that call it, keeping CPython's order of evaluation:

    for x in ITER:                    $it = ITER
        body                ==>       while True:
                                          $ok, $item = $it._next()
                                          if not $ok:
                                              break
                                          x = $item
                                          body

and a call ``list(ITER)`` (``tuple``, ``sorted``, ``set``, ``sum``, ``min``, ``max``, ``any``, ``all``) in an
assignment, an expression statement, a ``return``, an ``assert`` or an ``if`` test becomes such a loop, before
the statement, that appends to a hidden list, and the call is made on that list. CPython would evaluate
whatever comes before the call in the statement first (``assert x == list(pool.map(f, xs))`` reads ``x``
first): movers evaluates it after the loop. For ``any``/``all`` the loop stops where they
stop reading.

``ITER`` is a call of ``as_completed`` (after lang/imports.py, ``concurrent.futures.as_completed``) or of
``.map`` on anything when the model uses ``ThreadPoolExecutor`` and no class of the model defines ``map``.
Other uses of these iterators (``next(it)``, ``zip(as_completed(fs), ...)``) are refused with a message saying
to loop over them.
"""

from __future__ import annotations

import ast
import itertools

from movers.lang.errors import at

AS_COMPLETED = "concurrent.futures.as_completed"
EXECUTOR = "concurrent.futures.ThreadPoolExecutor"
# The builtins whose whole argument may be a library iterator (they consume it).
CONSUMERS = frozenset({"list", "tuple", "sorted", "set", "sum", "min", "max", "any", "all"})


class _Loops(ast.NodeTransformer):
    def __init__(self, filename: str, with_map: bool) -> None:
        self.filename = filename
        self.with_map = with_map
        self.counter = itertools.count()
        self.allowed: set[int] = set()  # ids of the iterator calls this pass rewrote

    def is_iterator(self, e: ast.expr) -> bool:
        if not isinstance(e, ast.Call):
            return False
        f = e.func
        if isinstance(f, ast.Name) and f.id == AS_COMPLETED:
            return True
        return self.with_map and isinstance(f, ast.Attribute) and f.attr == "map"

    def loop(self, it: ast.expr, target: ast.expr, body: list[ast.stmt], at_node: ast.AST) -> list[ast.stmt]:
        k = next(self.counter)
        self.allowed.add(id(it))
        it_name, ok, item = f"$it{k}", f"$ok{k}", f"$item{k}"

        def name(n: str, ctx: ast.expr_context) -> ast.Name:
            return ast.Name(id=n, ctx=ctx)

        get = ast.Assign(targets=[ast.Tuple(elts=[name(ok, ast.Store()), name(item, ast.Store())], ctx=ast.Store())],
                         value=ast.Call(func=ast.Attribute(value=name(it_name, ast.Load()), attr="_next",
                                                           ctx=ast.Load()), args=[], keywords=[]))
        stop = ast.If(test=ast.UnaryOp(op=ast.Not(), operand=name(ok, ast.Load())), body=[ast.Break()], orelse=[])
        bind = ast.Assign(targets=[target], value=name(item, ast.Load()))
        out: list[ast.stmt] = [
            ast.Assign(targets=[name(it_name, ast.Store())], value=it),
            ast.While(test=ast.Constant(True), body=[get, stop, bind, *body], orelse=[]),
        ]
        # The new nodes are at the loop's line; the body keeps its own.
        for s in (*out, get, stop, bind):
            ast.copy_location(s, at_node)
        for s in out:
            ast.fix_missing_locations(s)
        return out

    def consumer(self, e: ast.expr) -> bool:
        return (isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in CONSUMERS
                and len(e.args) == 1 and not e.keywords and self.is_iterator(e.args[0]))

    def consumers(self, exprs: list[ast.expr | None]) -> list[ast.Call]:
        """The consumer calls in ``exprs``, in evaluation order, outside lambdas and comprehensions (whose
        code runs elsewhere, or more than once)."""
        out: list[ast.Call] = []

        def walk(e: ast.AST) -> None:
            if isinstance(e, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                return
            if isinstance(e, ast.expr) and self.consumer(e):
                out.append(e)  # type: ignore[arg-type]
                return
            for c in ast.iter_child_nodes(e):
                walk(c)

        for e in exprs:
            if e is not None:
                walk(e)
        return out

    def visit_For(self, node: ast.For) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        if not self.is_iterator(node.iter):
            return node
        if node.orelse:
            raise at(self.filename, node, "for … else over as_completed() or map() is not supported: set a flag "
                     "before 'break' and test it after the loop")
        return self.loop(node.iter, node.target, node.body, node)

    def _consume(self, node: ast.stmt, calls: list[ast.Call]) -> list[ast.stmt]:
        """Each of ``calls`` (``list(ITER)``...) on a hidden list that a loop before ``node`` fills."""
        out: list[ast.stmt] = []
        for value in calls:
            k = next(self.counter)
            items, var = f"$items{k}", f"$x{k}"
            append = ast.Expr(ast.Call(func=ast.Attribute(value=ast.Name(id=items, ctx=ast.Load()), attr="append",
                                                          ctx=ast.Load()), args=[ast.Name(id=var, ctx=ast.Load())],
                                       keywords=[]))
            start = ast.Assign(targets=[ast.Name(id=items, ctx=ast.Store())], value=ast.List(elts=[], ctx=ast.Load()))
            ast.copy_location(start, node)
            ast.copy_location(append, node)
            ast.fix_missing_locations(start)
            ast.fix_missing_locations(append)
            body: list[ast.stmt] = [append]
            if value.func.id in ("any", "all"):  # type: ignore[attr-defined]
                # Stop waiting where CPython's any()/all() stop reading.
                found: ast.expr = ast.Name(id=var, ctx=ast.Load())
                if value.func.id == "all":  # type: ignore[attr-defined]
                    found = ast.UnaryOp(op=ast.Not(), operand=found)
                stop = ast.copy_location(ast.If(test=found, body=[ast.Break()], orelse=[]), node)
                body.append(ast.fix_missing_locations(stop))
            out += [start, *self.loop(value.args[0], ast.Name(id=var, ctx=ast.Store()), body, node)]
            value.args[0] = ast.copy_location(ast.Name(id=items, ctx=ast.Load()), value)
        return [*out, node]

    def visit_simple(self, node: ast.stmt, exprs: list[ast.expr | None]) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        calls = self.consumers(exprs)
        return self._consume(node, calls) if calls else node

    def visit_Assign(self, node: ast.Assign) -> ast.AST | list[ast.stmt]:
        return self.visit_simple(node, [node.value, *node.targets])

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | list[ast.stmt]:
        return self.visit_simple(node, [node.value, node.target])

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST | list[ast.stmt]:
        return self.visit_simple(node, [node.target, node.value])

    def visit_Expr(self, node: ast.Expr) -> ast.AST | list[ast.stmt]:
        return self.visit_simple(node, [node.value])

    def visit_Return(self, node: ast.Return) -> ast.AST | list[ast.stmt]:
        return self.visit_simple(node, [node.value])

    def visit_Assert(self, node: ast.Assert) -> ast.AST | list[ast.stmt]:
        return self.visit_simple(node, [node.test, node.msg])

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt]:
        return self.visit_simple(node, [node.test])


def library_loops(tree: ast.Module, filename: str, user_methods: set[str]) -> None:
    """Rewrite the loops over library iterators in ``tree`` (the module docstring); raise ModelSyntaxError for
    another use of one."""
    uses = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    with_map = EXECUTOR in uses and "map" not in user_methods
    if AS_COMPLETED not in uses and not with_map:
        return
    loops = _Loops(filename, with_map)
    loops.visit(tree)
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and loops.is_iterator(n) and id(n) not in loops.allowed:
            what = "as_completed()" if isinstance(n.func, ast.Name) else "map()"
            raise at(filename, n, f"{what} is only supported where a loop consumes it: 'for x in {what}:' or "
                     f"list({what}) in an assignment, expression statement, return, assert or if test; write a "
                     "for loop over it")


__all__ = ["library_loops"]
