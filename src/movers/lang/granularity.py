"""Access granularity: a step performs at most one access to shared memory (docs/language.md section 8).

Stoller and Cohen (papers/000, section 7) note that source-line granularity can miss errors and run their JPF
implementation at bytecode granularity too; Java PathFinder schedules before every access to shared data and
lets partial-order reduction remove the interleavings that do not matter. CPython does the same to a
Python program: ``counter += 1`` is a ``LOAD`` and a ``STORE``, and a thread switch between them loses an
update. Under ``--granularity access`` (the default) movers cuts statements the same way, before they are
compiled: ``Lowering`` rewrites a function's statements so that each performs at most one *access* (a read
or write of a global variable, a field, a list element or a growing list's length; ``x in a`` is one read of
several elements) into hidden temporaries (``$v1``...), in Python's order of evaluation:

    counter += 1         ->   $v1 = counter            (a step: the read)
                              counter = $v1 + 1        (a step: the write)
                              $v1 = None               (local: part of the write's step)

The function compiler then makes a node costly (a step starts there) only when it accesses shared memory,
makes a nondeterministic choice or synchronises (``is_step``): purely local work (locals, constants,
arithmetic, calls and returns that touch nothing shared) is glue, run in the step of the access before it.

A location that no thread writes after the module's initialisation is not shared memory in this sense:
reading it commutes with everything (the final-field rule of ``reduce/ample.py``), so it is no access
(``Finals``): a global no function assigns, a field only constructors assign on ``self`` before ``self``
escapes, the elements of lists when no function writes one. Nor is testing the truth of a value that is never
a list, dict, set or deque (``if not block:`` on a parameter callers give bools, ``if not got:`` on an
``acquire``'s result): only a container's truth reads its length. Which values may be containers is known
once every flow is, so ``compiler.compile_model`` compiles twice: the second compilation counts as accesses
only the truth tests (``Finals.truths_plain_at``) and comparisons (``Finals.plain``, ``Finals.compared_at``)
that the first one's points-to analysis found may touch containers. The modelled library (lang/library) is
model code and follows the same rule.

Left whole, as under ``--granularity statement``: synchronisation statements (``with lock:``, ``acquire``,
``wait``, ``wait_until``… evaluate their operands in their own step), ``with indivisible():`` blocks,
statements that ``choose`` or call a synchronisation method, the module's initialisation and invariants.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from movers.lang.strings import READ_LISTS, STR_METHODS
from movers.lang.syntax import (
    BUILTIN_METHODS,
    CHANGING_METHODS,
    DEQUE_CHANGING_METHODS,
    DICT_CHANGING_METHODS,
    LIST_CHANGING_METHODS,
    SYNC_METHODS,
    children,
    fix_locations,
    walked,
)

GRANULARITIES = ("access", "statement")
DEFAULT_GRANULARITY = "access"

# Calls after which the statement is left whole (a synchronisation or a choice inside an expression).
_WHOLE_CALLS = {"choose", "wait_until", "assume", "commit", "super"}


@dataclass(frozen=True)
class Finals:
    """What no thread writes after the module's initialisation: reading it is not an access."""

    globals: frozenset[str]
    fields: frozenset[str]
    elements: bool
    # Comparisons (pairs of abstract values, ``Facts.compared``) that a first compilation's points-to
    # analysis found never compare two lists (``compiler.resolve_comparisons``): they read no element.
    plain: frozenset[tuple[Any, Any]] = frozenset()
    # Where (line, column) the comparisons are that may compare two containers (``==`` of lists, dicts, sets,
    # deques reads their elements): each is an access of its own for the lowering (``Lowering.own_events``).
    compared_at: frozenset[tuple[int, int]] = frozenset()
    # Where (line, column) the expressions are whose truth a first compilation's points-to analysis found is
    # never a container's (``compiler.resolve_truths``: a parameter ``block=True``, the result of ``acquire``):
    # testing it reads no length, so it is local work, as a bool's truth is.
    truths_plain_at: frozenset[tuple[int, int]] = frozenset()

    def shared(self, info: dict[str, Any]) -> bool:
        """Whether a node with these static facts (``function.Facts.info``) accesses shared memory."""
        if (info.get("reads", frozenset()) | info.get("writes", frozenset())) - self.globals:
            return True
        if (info.get("fields_read", frozenset()) | info.get("fields_written", frozenset())) - self.fields:
            return True
        if info.get("elements_written"):
            return True
        compares_lists = any(pair not in self.plain for pair in info.get("compared", ()))
        return bool(info.get("elements_read") or compares_lists) and not self.elements


def finals(global_names: Iterable[str], bodies: list[tuple[ast.FunctionDef, bool]]) -> Finals:
    """The final locations of a module whose functions and methods are ``bodies`` (each with whether it is
    a constructor, ``__init__``)."""
    written: set[str] = set()
    fields_written: set[str] = set()
    constructor_fields: set[str] = set()
    elements = True
    for fn, is_init in bodies:
        nodes = walked(fn)
        declared = {n for s in nodes if isinstance(s, ast.Global) for n in s.names}
        escapes = is_init and _self_escapes(fn, nodes)
        for n in nodes:
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and n.id in declared:
                written.add(n.id)
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
                on_self = isinstance(n.value, ast.Name) and n.value.id == "self"
                (constructor_fields if is_init and on_self and not escapes else fields_written).add(n.attr)
            elif isinstance(n, ast.Subscript) and isinstance(n.ctx, (ast.Store, ast.Del)):
                elements = False
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                  and n.func.attr in ("append", "pop", *DICT_CHANGING_METHODS, *LIST_CHANGING_METHODS,
                                      *DEQUE_CHANGING_METHODS)):
                elements = False
    return Finals(frozenset(set(global_names) - written), frozenset(constructor_fields - fields_written), elements)


def _self_escapes(init: ast.FunctionDef, nodes: list[ast.AST]) -> bool:
    """Whether a constructor lets ``self`` be seen before it returns: any use of ``self`` but as the object
    of a field access (or passed to a base class's ``__init__``) might publish it. ``nodes``: its nodes."""
    allowed: set[int] = set()
    for n in nodes:
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
            allowed.add(id(n.value))
        elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"
              and n.args and isinstance(n.args[0], ast.Name)):
            allowed.add(id(n.args[0]))
    for n in nodes:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                and n.func.value.id == "self":
            return True  # a method called on self may publish it
        if isinstance(n, (ast.FunctionDef, ast.Lambda)) and n is not init:
            return True  # a closure made here may set self's fields later, from any thread
    return any(isinstance(n, ast.Name) and n.id == "self" and isinstance(n.ctx, ast.Load) and id(n) not in allowed
               for n in nodes)


class _Whole(Exception):
    """The statement is left whole (see the module docstring)."""


class Lowering:
    """Cut one function's statements at shared accesses. ``is_global(name)`` says whether a name read in
    the function is a module global; ``temp_name(k)`` names the hidden local of the k-th temporary live at
    once (1, 2, ...); ``text(node)`` its source.

    The temporaries are allocated as a stack (``depth``): a statement's own start above those its enclosing
    statements hold for their whole body (a ``for`` loop's bounds, a ``while`` loop's ``else`` flag) and are
    all None again when it ends (``_clears``), so the next statement reuses their slots. A frame then holds
    as many as one statement needs at once, not one per temporary of the function: a state is a tuple of the
    frame's slots, rebuilt and hashed at every step. ``depth`` is also written on each ``try`` and ``with``
    (``movers_temps``): the temporaries above it are those of the statements inside, dropped when an
    exception is caught there (``FunctionCore.finish``, ``ir/exceptions.unwind``)."""

    def __init__(self, finals: Finals, is_global: Callable[[str], bool], temp_name: Callable[[int], str],
                 text: Callable[[ast.AST], str], model_calls: Callable[[ast.Call], bool], lists_grow: bool,
                 container_arith: bool = False) -> None:
        self.finals = finals
        self.is_global = is_global
        self.temp_name = temp_name
        self.text = text
        self.model_call = model_calls
        self.lists_grow = lists_grow
        self.container_arith = container_arith
        self.depth = 0  # the temporaries live where the statement being lowered starts
        self.peak = 0  # the most live at once in the region being lowered (``_try``)

    def temp(self) -> str:
        """A hidden temporary above every one live here."""
        self.depth += 1
        self.peak = max(self.peak, self.depth)
        return self.temp_name(self.depth)

    # -- statements -------------------------------------------------------------------------------------------

    def block(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in body:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s: ast.stmt) -> list[ast.stmt]:
        base = self.depth
        try:
            return self._stmt(s)
        finally:
            self.depth = base  # the statement's temporaries are None again once it is over

    def _stmt(self, s: ast.stmt) -> list[ast.stmt]:
        if isinstance(s, ast.If):
            return self._if(s)
        if isinstance(s, ast.While):
            return self._while(s)
        if isinstance(s, ast.For):
            return self._for(s)
        if isinstance(s, ast.With):
            s.movers_temps = self.depth  # type: ignore[attr-defined]
            if any(_is_call_to(i.context_expr, "indivisible") for i in s.items):
                return [s]
            s.body = self.block(s.body)
            return [s]
        if isinstance(s, ast.Try):
            return self._try(s)
        if isinstance(s, ast.Raise) and (s.exc is not None or s.cause is not None) and self._events(s) > 1:
            # raise X from Y: X and Y evaluated into temporaries first, their accesses a step each.
            pre: list[ast.stmt] = []
            for attr in ("exc", "cause"):
                v = getattr(s, attr)
                if v is not None:
                    t = self.temp()
                    pre.extend(self.stmt(fix_locations(ast.copy_location(
                        ast.Assign(targets=[ast.copy_location(ast.Name(t, ast.Store()), v)], value=v), s))))
                    setattr(s, attr, ast.copy_location(ast.Name(t, ast.Load()), v))
            return [*pre, s]
        if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Assert, ast.Return)):
            try:
                return self._simple(s)
            except _Whole:
                return [s]
        if isinstance(s, ast.FunctionDef):
            return self._def(s)
        return [s]

    def _try(self, s: ast.Try) -> list[ast.stmt]:
        s.movers_temps = self.depth  # type: ignore[attr-defined]
        outer, self.peak = self.peak, self.depth
        s.body, s.orelse = self.block(s.body), self.block(s.orelse)
        for h in s.handlers:
            h.body = self.block(h.body)
        # ``return`` in the body or a handler runs the finally block with its own temporaries still set (the
        # frame ends just after): the block's go above every one of them.
        self.depth = self.peak
        s.finalbody = self.block(s.finalbody)
        self.peak = max(outer, self.peak)
        return [s]

    def _def(self, s: ast.FunctionDef) -> list[ast.stmt]:
        """A nested ``def`` evaluates its defaults where it is made (its body is a function of its own)."""
        ds = [d for d in [*s.args.defaults, *s.args.kw_defaults] if d is not None]
        if sum(self._expr_events(d) for d in ds) <= 1 or any(_has_whole_call(d) for d in ds):
            return [s]
        cut = _Cut(self, s)
        s.args.defaults = [cut.value(d) for d in s.args.defaults]
        s.args.kw_defaults = [None if d is None else cut.value(d) for d in s.args.kw_defaults]
        return cut.finish(s)

    def _simple(self, s: ast.stmt) -> list[ast.stmt]:
        if isinstance(s, ast.Expr) and _whole_statement(s.value):
            raise _Whole
        if _has_whole_call(s):
            raise _Whole
        if self._events(s) <= 1:
            return [s]
        cut = _Cut(self, s)
        final = cut.statement(s)
        return cut.finish(final)

    def _if(self, s: ast.If) -> list[ast.stmt]:
        s.body, s.orelse = self.block(s.body), self.block(s.orelse)
        if _has_whole_call(s.test) or self._expr_events(s.test, truth=True) <= 1:
            return [s]
        cut = _Cut(self, s)
        test = cut.value(s.test, keep_last=True)
        temps = cut.temps
        s.test = _described(test, s.test, self.text(s.test))
        s.body = _clears(temps, s) + s.body
        s.orelse = _clears(temps, s) + s.orelse
        return cut.dead_cleared([s.test]) + [s]

    def _while(self, s: ast.While) -> list[ast.stmt]:
        if _has_whole_call(s.test) or self._expr_events(s.test, truth=True) <= 1:
            s.body, s.orelse = self.block(s.body), self.block(s.orelse)
            return [s]
        # while test: body [else: tail]  ->  while True: <pre>; if test': <clear> else: <clear>; tail; break; body
        # (the else block runs when the test is false, and a break in the body skips it, as in CPython). A
        # tail that breaks or continues the loop around this one runs after the loop, under a hidden flag,
        # which the test and the body (lowered above it) must not reuse; the tail runs with it cleared.
        s.orelse = self.block(s.orelse)
        flag = self.temp() if _leaves_loop(s.orelse) else None
        s.body = self.block(s.body)
        cut = _Cut(self, s)
        test = _described(cut.value(s.test, keep_last=True), s.test, self.text(s.test))
        leave = ast.copy_location(ast.Break(), s)
        tail = s.orelse if flag is None else [_set(flag, True, s)]
        check = ast.copy_location(ast.If(test=test, body=_clears(cut.temps, s) or [ast.copy_location(ast.Pass(), s)],
                                         orelse=_clears(cut.temps, s) + tail + [leave]), s)
        pre = cut.dead_cleared([test])  # the test as cut: the temporaries it reads stay live
        loop = ast.copy_location(ast.While(test=ast.copy_location(ast.Constant(True), s), body=pre + [check]
                                           + s.body, orelse=[]), s)
        if flag is None:
            return [loop]
        after = ast.copy_location(ast.If(test=ast.copy_location(ast.Name(flag, ast.Load()), s),
                                         body=_clears([flag], s) + s.orelse, orelse=_clears([flag], s)), s)
        return [_set(flag, False, s), loop, fix_locations(after)]

    def _for(self, s: ast.For) -> list[ast.stmt]:
        it = s.iter
        # The iterable (or range's bounds) is evaluated once, by the first header, which (over a list) also
        # reads the first element: hoist what it reads when that makes more than one access.
        is_range = isinstance(it, ast.Call) and _is_call_to(it, "range")
        operands = list(it.args) if isinstance(it, ast.Call) and is_range else [it]
        if _has_whole_call(s.iter) or sum(self._expr_events(a) for a in operands) + (0 if is_range else 1) <= 1:
            s.body, s.orelse = self.block(s.body), self.block(s.orelse)
            return [s]
        cut = _Cut(self, s)
        if isinstance(it, ast.Call) and is_range:
            it.args = [cut.value(a) for a in it.args]
        else:
            s.iter = cut.value(it)
        # The temporaries hold the bounds for the loop's life; they are cleared after it. The blocks' own
        # go above them.
        s.body, s.orelse = self.block(s.body), self.block(s.orelse)
        return cut.dead_cleared([s.iter]) + [s] + _clears(cut.temps, s)

    # -- counting accesses ------------------------------------------------------------------------------------

    def _events(self, s: ast.stmt) -> int:
        """How many accesses and model calls the statement makes (an upper bound)."""
        n = 0
        if isinstance(s, ast.Assign):
            n = self._expr_events(s.value) + sum(self._target_events(t) for t in s.targets)
            if any(isinstance(t, (ast.Tuple, ast.List)) for t in s.targets) and n > 1:
                return 2
            if len(s.targets) > 1:
                return max(n, 2)
        elif isinstance(s, ast.AnnAssign):
            n = (self._expr_events(s.value) if s.value else 0) + self._target_events(s.target)
        elif isinstance(s, ast.AugAssign):
            n = self._expr_events(s.value) + 2 * self._target_events(s.target) + self._expr_events(s.target, inner=True)
        elif isinstance(s, ast.Expr):
            n = self._expr_events(s.value)
        elif isinstance(s, ast.Assert):
            n = self._expr_events(s.test, truth=True)
        elif isinstance(s, ast.Return) and s.value is not None:
            n = self._expr_events(s.value)
        elif isinstance(s, ast.Delete):  # each target one access (lang/deletion.py), its operands apart
            n = sum(self._target_events(t) for t in s.targets)
        return n

    def _target_events(self, t: ast.expr) -> int:
        if isinstance(t, ast.Name):
            return int(self.is_global(t.id) and t.id not in self.finals.globals)
        if isinstance(t, (ast.Tuple, ast.List)):
            return sum(self._target_events(x) for x in t.elts)
        if isinstance(t, ast.Starred):
            return self._target_events(t.value)
        if isinstance(t, ast.Attribute):
            return self._expr_events(t.value) + int(t.attr not in self.finals.fields)
        if isinstance(t, ast.Subscript):
            return self._expr_events(t.value) + self._expr_events(t.slice) + 1
        return 1

    def _expr_events(self, e: ast.expr, truth: bool = False, inner: bool = False) -> int:
        """Accesses and model calls ``e`` may make; ``truth``: evaluated for its truth (a list's length);
        ``inner``: only its operands (for an assignment target)."""
        if inner:
            if isinstance(e, ast.Attribute):
                return self._expr_events(e.value)
            if isinstance(e, ast.Subscript):
                return self._expr_events(e.value) + self._expr_events(e.slice)
            return 0
        n = 0
        for node in _evaluation_order(e):
            n += self.own_events(node)
        if truth and self.lists_grow and not isinstance(e, (ast.Compare, ast.UnaryOp, ast.BoolOp, ast.Constant)) \
                and not self.plain_truth(e):
            n += 1
        elif truth and isinstance(e, ast.BoolOp):
            n += self.truth_read(e.values[-1])  # the last operand's truth is the statement's test
        return n

    def truth_read(self, e: ast.expr) -> int:
        """Whether testing ``e``'s truth may read a list's (dict's, set's, deque's) length: an access, in a
        model whose containers change size, unless ``e`` is certainly a bool or a lowering's temporary."""
        return int(self.lists_grow and not is_boolean(e) and not isinstance(e, (ast.Compare, ast.Constant))
                   and not (isinstance(e, ast.Name) and e.id.startswith("$")) and not self.plain_truth(e))

    def plain_truth(self, e: ast.expr) -> bool:
        """Whether ``e``'s value is never a container (``Finals.truths_plain_at``): its truth reads no length."""
        return (getattr(e, "lineno", None), getattr(e, "col_offset", None)) in self.finals.truths_plain_at

    def own_events(self, node: ast.AST) -> int:
        """The accesses (or model calls) ``node`` makes itself, its operands apart."""
        if (isinstance(node, ast.BinOp) and isinstance(node.op, _CONTAINER_OPERATORS) and self.container_arith
                and not self.finals.elements and container_operands(node) and not getattr(node, "movers_local", False)):
            return 1  # `a + b` of lists, `s | t` of sets read their elements (lang/containers.py)
        # The truth an expression tests of its operands (``x if a else y``, ``a and b``, ``not a``): a list's
        # length, read where CPython reads it.
        if isinstance(node, ast.IfExp):
            return self.truth_read(node.test)
        if isinstance(node, ast.BoolOp):
            return sum(self.truth_read(v) for v in node.values[:-1])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return self.truth_read(node.operand)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            return int(self.is_global(node.id) and node.id not in self.finals.globals)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            return int(node.attr not in self.finals.fields)
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            return int(not self.finals.elements)
        if isinstance(node, ast.Compare):
            if self.finals.elements:
                return 0
            contents = (getattr(node, "lineno", None), getattr(node, "col_offset", None)) in self.finals.compared_at
            return sum(1 for op in node.ops if isinstance(op, (ast.In, ast.NotIn))
                       or (contents and not isinstance(op, (ast.Is, ast.IsNot))))
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant)
                and isinstance(node.left.value, str)):
            return int(not self.finals.elements)  # "%s" % xs reads a list's elements
        if isinstance(node, ast.JoinedStr):
            # An f-string may format lists, reading their elements: one access for all of them.
            return int(any(isinstance(v, ast.FormattedValue) for v in node.values) and not self.finals.elements)
        if isinstance(node, ast.Call):
            if self.model_call(node):
                return 1
            f = node.func
            if isinstance(f, ast.Attribute) and (f.attr in BUILTIN_METHODS or f.attr == "locked"):
                return 1  # `m.locked()` reads the lock's owner (lang/threadinfo.py)
            if isinstance(f, ast.Attribute) and f.attr in STR_METHODS:
                # Local work on a string, but for a list it formats or joins (its elements read).
                return int(f.attr in READ_LISTS and not self.finals.elements)
            if isinstance(f, ast.Name) and f.id in ("str", "repr") and node.args:
                return int(not self.finals.elements)  # str(xs) reads a list's elements
            if isinstance(f, ast.Name) and f.id == "len":
                return int(self.lists_grow)
            if isinstance(f, ast.Name) and f.id in ("list", "set", "dict", "deque") and node.args:
                if getattr(node.args[0], "movers_tuple", False):
                    return 0  # the items a comprehension gathered in a hidden tuple (``_Cut._comprehension``)
                return int(not self.finals.elements)  # a copy reads every element of its argument
            if isinstance(f, ast.Name) and f.id in ("min", "max") and len(node.args) == 1:
                return int(not self.finals.elements)
            if isinstance(f, ast.Name) and f.id in _CONSUMERS[:6]:
                # a builtin that reads every element of a list at once (in C, under the GIL)
                return int(not self.finals.elements)
        if isinstance(node, ast.Starred) and isinstance(node.ctx, ast.Load):
            return int(not self.finals.elements)  # f(*xs) reads a list's elements
        if isinstance(node, ast.keyword):
            # f(**d) reads a dict's items, in the step that pushes the call (the other accesses are hoisted)
            return int(not self.finals.elements)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            # its own loop: cut into statements (``_Cut._comprehension``) when it reads shared memory
            parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            inner = [n for part in [*parts, *node.generators] for n in _evaluation_order(part) if n is not node]
            reads = any(not _is_call_to(g.iter, "range") for g in node.generators) and not self.finals.elements
            return 2 if reads or any(self.own_events(n) for n in inner) else 0
        return 0


class _Cut:
    """The cutting of one statement: the statements hoisted before it (``pre``) and their temporaries."""

    def __init__(self, low: Lowering, s: ast.stmt) -> None:
        self.low = low
        self.s = s
        self.pre: list[ast.stmt] = []
        self.temps: list[str] = []
        # (the text of an access, the temporary that holds what it read): a failed assertion shows those values
        self.reads: list[tuple[str, str]] = []
        self.stmt_text = low.text(s)

    def hoist(self, e: ast.expr, what: str = "") -> ast.Name:
        """``$v = e`` before the statement; ``e`` its value from now on."""
        name = self.low.temp()
        self.temps.append(name)
        a = ast.copy_location(ast.Assign(targets=[ast.copy_location(ast.Name(name, ast.Store()), e)], value=e), e)
        fix_locations(a)
        a.end_lineno, a.end_col_offset = getattr(e, "end_lineno", None), getattr(e, "end_col_offset", None)
        a.movers_text = f"{self.stmt_text}  ({what})" if what else self.stmt_text  # type: ignore[attr-defined]
        self.pre.append(a)
        if what.startswith("read "):
            self.reads.append((what[5:], name))
        return _load(name, e)

    def value(self, e: ast.expr, keep_last: bool = False) -> ast.expr:
        """``e`` with every access and call hoisted in evaluation order; with ``keep_last``, the last access
        stays in place when it is the last thing ``e`` does that is not local."""
        events = [n for n in _evaluation_order(e) if self.low.own_events(n)]
        last = events[-1] if keep_last and events else None
        if last is not None and isinstance(last, ast.Call):
            last = None
        return self._walk(e, last)

    def _walk(self, e: ast.expr, keep: ast.AST | None) -> ast.expr:
        low = self.low
        if isinstance(e, ast.Lambda):
            # Its body runs when it is called (a function of its own); its defaults are evaluated here.
            e.args.defaults = [self._walk(d, keep) for d in e.args.defaults]
            e.args.kw_defaults = [None if d is None else self._walk(d, keep) for d in e.args.kw_defaults]
            return e
        if isinstance(e, (ast.BoolOp, ast.IfExp)) and self._later_events(e):
            return self._short_circuit(e)
        if isinstance(e, (ast.ListComp, ast.SetComp, ast.DictComp)) or (
                isinstance(e, ast.GeneratorExp) and getattr(e, "movers_consumed", False)):
            if low.own_events(e):
                return self._comprehension(e)
            return e
        if isinstance(e, ast.GeneratorExp):
            return e  # consumed by nothing: refused as it is (its variables are its own, nothing to hoist)
        if isinstance(e, ast.Call) and _consumes(e):
            for a in e.args[:1]:
                if isinstance(a, ast.GeneratorExp):
                    a.movers_consumed = True  # type: ignore[attr-defined]
            if (isinstance(e.func, ast.Name) and e.func.id in ("any", "all") and len(e.args) == 1 and not e.keywords
                    and isinstance(e.args[0], ast.GeneratorExp) and low.own_events(e.args[0])):
                return self._comprehension(e.args[0], e.func.id)
        if isinstance(e, ast.Starred):
            # f(*xs): the items of a list are read at once, as tuple(xs) would (a step of its own); a tuple's
            # are local work.
            e.value = self._walk(e.value, keep)
            if low.own_events(e):
                e.value = self.hoist(ast.copy_location(ast.Call(func=ast.copy_location(
                    ast.Name(id="tuple", ctx=ast.Load()), e), args=[e.value], keywords=[]), e))
            return e
        if isinstance(e, ast.Call):
            if isinstance(e.func, ast.Attribute):
                e.func.value = self._walk(e.func.value, keep)
            e.args = [self._walk(a, keep) for a in e.args]
            for kw in e.keywords:
                kw.value = self._walk(kw.value, keep)
            fields: list[tuple[str, Any]] = []
        else:
            fields = list(ast.iter_fields(e))
        for field, old in fields:
            if isinstance(old, ast.expr):
                setattr(e, field, self._walk(old, keep))
            elif isinstance(old, list):
                setattr(e, field, [self._walk(x, keep) if isinstance(x, ast.expr) else x for x in old])
        if e is keep or not low.own_events(e) or isinstance(e, ast.Lambda):
            return e
        return self.hoist(e, self._describe(e))

    def _comprehension(self, e: ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp,
                       decides: str = "") -> ast.expr:
        """A comprehension as CPython runs it, its own loop, as statements before the one that uses it: each
        element it reads from a list is one access (a ``for`` header). The items gather in a hidden tuple
        (local work; a dict comprehension's ``(key, value)`` pairs, the key evaluated first as in CPython 3.8+);
        its variables are hidden temporaries, so they do not leak. The statement then makes the list, set or
        dict of that tuple (local work too: the new container is not yet shared). With ``decides`` (``any``
        or ``all``) the loop stops at the first item that decides, as those builtins do."""
        acc = self._fresh()
        names: dict[str, str] = {}
        gens = e.generators
        for g in gens:
            g.iter = _Renamed(names).visit(g.iter)
            for n in ast.walk(g.target):
                if isinstance(n, ast.Name):
                    names[n.id] = self._fresh()
            g.target = _Renamed(names).visit(g.target)
            g.ifs = [_Renamed(names).visit(c) for c in g.ifs]
        if isinstance(e, ast.DictComp):
            elt: ast.expr = ast.copy_location(ast.Tuple([_Renamed(names).visit(e.key), _Renamed(names).visit(e.value)],
                                                         ast.Load()), e)
        else:
            elt = _Renamed(names).visit(e.elt)

        def assign(v: ast.expr) -> ast.stmt:
            a = ast.copy_location(ast.Assign(targets=[_store(acc, e)], value=v), e)
            a.movers_text = self.stmt_text  # type: ignore[attr-defined]
            return fix_locations(a)

        def const(v: Any) -> ast.expr:
            return ast.copy_location(ast.Constant(v), e)

        if decides:
            hit = elt if decides == "any" else ast.copy_location(ast.UnaryOp(ast.Not(), elt), e)
            inner: list[ast.stmt] = [ast.copy_location(ast.If(test=hit, body=[assign(const(decides == "any")),
                                                                              ast.copy_location(ast.Break(), e)],
                                                         orelse=[]), e)]
            start = const(decides != "any")
        else:
            item = ast.copy_location(ast.Tuple([elt], ast.Load()), e)
            grow = ast.copy_location(ast.BinOp(_load(acc, e), ast.Add(), item), e)
            grow.movers_local = True  # type: ignore[attr-defined]  # a tuple grows: no list is read
            inner = [assign(grow)]
            start = ast.copy_location(ast.Tuple([], ast.Load()), e)
        body = inner
        for k in range(len(gens) - 1, -1, -1):
            g = gens[k]
            for c in reversed(g.ifs):
                body = [ast.copy_location(ast.If(test=c, body=body, orelse=[]), e)]
            loop = ast.copy_location(ast.For(target=g.target, iter=g.iter, body=body, orelse=[]), e)
            body = [loop]
            if decides and k > 0:
                # the inner loop's break ends only it: the outer ones stop once the result is decided
                done = _load(acc, e) if decides == "any" else ast.copy_location(
                    ast.UnaryOp(ast.Not(), _load(acc, e)), e)
                stop: list[ast.stmt] = [ast.copy_location(ast.Break(), e)]
                body.append(ast.copy_location(ast.If(test=done, body=stop, orelse=[]), e))
        self.pre.append(assign(start))
        for s in body:
            fix_locations(s)
            self.pre.extend(self.low.stmt(s))
        if decides:
            return _load(acc, e)
        if isinstance(e, ast.GeneratorExp):
            n = _load(acc, e)
            n.movers_tuple = True  # type: ignore[attr-defined]
            return n
        n = _load(acc, e)
        n.movers_tuple = True  # type: ignore[attr-defined]
        kind = "dict" if isinstance(e, ast.DictComp) else "set" if isinstance(e, ast.SetComp) else "list"
        return fix_locations(ast.copy_location(ast.Call(ast.copy_location(ast.Name(kind, ast.Load()), e),
                                                                    [n], []), e))

    def _later_events(self, e: ast.BoolOp | ast.IfExp) -> bool:
        later = e.values[1:] if isinstance(e, ast.BoolOp) else [e.body, e.orelse]
        return any(self.low.own_events(n) for x in later for n in _evaluation_order(x))

    def _short_circuit(self, e: ast.BoolOp | ast.IfExp) -> ast.expr:
        """``a and b`` (``or``, ``x if c else y``) whose later operands access memory: as statements, so that
        they are evaluated only when Python would evaluate them."""
        name = self.low.temp()
        self.temps.append(name)

        def assign(v: ast.expr) -> ast.stmt:
            a = ast.copy_location(ast.Assign(targets=[ast.copy_location(ast.Name(name, ast.Store()), e)], value=v), e)
            a.movers_text = self.stmt_text  # type: ignore[attr-defined]
            return fix_locations(a)

        def sub(v: ast.expr) -> list[ast.stmt]:
            outer, depth = self.pre, self.low.depth
            self.pre = []
            v2 = self._walk(v, None)
            body = self.pre + [assign(v2)]
            self.pre = outer
            # The operand's own temporaries are read by the branch's last statement and cleared in the branch
            # (``_clear_dead``): what the statement evaluates next reuses their slots.
            self.low.depth = depth
            return body

        boolean = is_boolean(e)  # then so is the temporary: its truth reads no list's length

        def load() -> ast.Name:
            n = _load(name, e)
            n.movers_boolean = boolean  # type: ignore[attr-defined]
            return n

        if isinstance(e, ast.IfExp):
            test = self._walk(e.test, None)
            self.pre.append(fix_locations(ast.copy_location(
                ast.If(test=test, body=sub(e.body), orelse=sub(e.orelse)), e)))
            return load()
        self.pre.extend(sub(e.values[0]))
        for v in e.values[1:]:
            cond: ast.expr = load()
            if isinstance(e.op, ast.Or):
                cond = ast.copy_location(ast.UnaryOp(ast.Not(), cond), e)
            self.pre.append(fix_locations(ast.copy_location(ast.If(test=cond, body=sub(v), orelse=[]), e)))
        return load()

    def _describe(self, e: ast.expr) -> str:
        if isinstance(e, ast.Call):
            return ""
        return f"read {self.low.text(e) or ast.unparse(e)}"

    def target(self, t: ast.expr) -> ast.expr:
        """An assignment target with its operands hoisted (the store itself stays)."""
        if isinstance(t, ast.Attribute):
            t.value = self.value(t.value)
        elif isinstance(t, ast.Subscript):
            t.value = self.value(t.value)
            t.slice = self.value(t.slice)
        return t

    def statement(self, s: ast.stmt) -> ast.stmt:
        """The statement that stays, its operands hoisted."""
        low = self.low
        if isinstance(s, ast.AugAssign):
            t = self.target(s.target)
            load = _as_load(t)
            current = self.hoist(load, f"read {low.text(s.target)}") if low.own_events(load) else load
            value = self.value(s.value)
            binop = ast.copy_location(ast.BinOp(current, s.op, value), s)
            binop.movers_inplace = True  # type: ignore[attr-defined]  # `d += xs` extends a deque in place
            final: ast.stmt = ast.Assign(targets=[_as_store(t)], value=binop)
            final = ast.copy_location(final, s)
            return self._final(final, t)
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            assert s.value is not None
            stores = sum(low._target_events(t) for t in targets)
            value = self.value(s.value, keep_last=stores == 0)
            if len(targets) == 1 and not isinstance(targets[0], (ast.Tuple, ast.List)):
                t = self.target(targets[0])
                final = ast.copy_location(ast.Assign(targets=[t], value=value), s)
                return self._final(final, t)
            # Several targets, or unpacking: the value in a temporary, then one store per target, in order.
            if not isinstance(value, ast.Name):
                value = self.hoist(value)
            for t in targets:
                if isinstance(t, (ast.Tuple, ast.List)):
                    names = [_store(self._fresh(), x) for x in t.elts]
                    # ``a, *rest = v``: the starred temporary receives the new list.
                    elts: list[ast.expr] = [ast.copy_location(ast.Starred(n, ast.Store()), x)
                                            if isinstance(x, ast.Starred) else n for x, n in zip(t.elts, names,
                                                                                                  strict=True)]
                    unpack = ast.copy_location(ast.Assign(targets=[ast.copy_location(
                        ast.Tuple(elts, ast.Store()), t)], value=_load(value.id, t)), t)
                    unpack.movers_text = self.stmt_text  # type: ignore[attr-defined]
                    self.pre.append(fix_locations(unpack))
                    for x, n in zip(t.elts, names, strict=True):
                        self._store_from(x.value if isinstance(x, ast.Starred) else x, n.id)
                else:
                    self._store_from(t, value.id)
            last = self.pre.pop()
            return last
        if isinstance(s, ast.Expr):
            s.value = self.value(s.value, keep_last=True)
            return s
        if isinstance(s, ast.Assert):
            s.test = _described(self.value(s.test, keep_last=True), s.test, low.text(s.test))
            return s
        if isinstance(s, ast.Delete):
            # `del a[i], b[j]`: each target's operands, then its deletion, left to right.
            for t in s.targets[:-1]:
                self.pre.append(ast.copy_location(ast.Delete(targets=[self.target(t)]), s))
            s.targets = [self.target(s.targets[-1])]
            return s
        if isinstance(s, ast.Return):
            assert s.value is not None
            s.value = self.value(s.value, keep_last=True)
            return s
        raise _Whole

    def _fresh(self) -> str:
        name = self.low.temp()
        self.temps.append(name)
        return name

    def _store_from(self, t: ast.expr, name: str) -> None:
        t = self.target(t)
        a = ast.copy_location(ast.Assign(targets=[t], value=_load(name, t)), t)
        a.movers_text = f"{self.stmt_text}  (write {self.low.text(t) or ast.unparse(t)})"  # type: ignore[attr-defined]
        self.pre.append(fix_locations(a))

    def _final(self, final: ast.stmt, target: ast.expr) -> ast.stmt:
        final = fix_locations(final)
        final.end_lineno, final.end_col_offset = self.s.end_lineno, self.s.end_col_offset
        if self.low._target_events(target):
            final.movers_text = f"{self.stmt_text}  (write {self.low.text(target) or ast.unparse(target)})"  # type: ignore[attr-defined]
        else:
            final.movers_text = self.stmt_text  # type: ignore[attr-defined]
        return final

    def finish(self, final: ast.stmt) -> list[ast.stmt]:
        final.movers_reads = tuple(self.reads)  # type: ignore[attr-defined]
        if isinstance(final, ast.Return):
            return self.dead_cleared([final]) + [final]
        return self.dead_cleared([final]) + [final] + _clears(self.temps, self.s)

    def dead_cleared(self, final: list[ast.AST]) -> list[ast.stmt]:
        """The hoisted statements, each temporary cleared right after the one that uses it last (unless the
        final statement, ``final``, uses it): a dead temporary kept until the end of the statement would tell
        apart states that differ only in a value the thread no longer needs (``$v1 = y; $v2 = a[$v1];
        $v3 = z; x = $v2 + $v3``: ``$v1`` dies in the read of ``a[$v1]``, before the step that reads ``z``)."""
        return _clear_dead(self.pre, _temps_used(final, set(self.temps)), set(self.temps), self.s)


def break_local_cycles(nodes: list[dict[str, Any]], while_heads: set[int]) -> list[int]:
    """The while-loop heads that must end a step: those of loops that can go around without an access.

    A step runs glue until the next costly node; a ``while`` loop of local work only would be one step that
    never ends (``while True: k = (k + 1) % 2``), where CPython runs the thread forever and the others beside
    it. So, as Java PathFinder ends a transition that grows too long, the head of such a loop is a step
    boundary: the thread rests there each time round, and the search meets the repeated state. ``nodes``: each
    node's ``costly`` and ``succ``; the loops are found as the cycles of free nodes (strongly connected
    components), each broken at its first while head, until none is left. ``for`` loops always end."""
    costly = [bool(n.get("costly")) for n in nodes]
    marked: list[int] = []
    while True:
        found = [min(h for h in comp if h in while_heads) for comp in _free_cycles(nodes, costly)
                 if any(h in while_heads for h in comp)]
        if not found:
            return marked
        for h in found:
            costly[h] = True
            marked.append(h)


def _free_cycles(nodes: list[dict[str, Any]], costly: list[bool]) -> list[list[int]]:
    """The strongly connected components of the free nodes that contain a cycle (Tarjan's algorithm,
    iterative)."""
    n = len(nodes)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0

    def succs(v: int) -> list[int]:
        return [w for w in nodes[v]["succ"] if 0 <= w < n and not costly[w]]

    for root in range(n):
        if costly[root] or index[root] >= 0:
            continue
        work = [(root, iter(succs(root)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, iter(succs(w))))
                    advanced = True
                    break
                if on_stack[w]:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in succs(v):
                    out.append(comp)
    return out


# -- helpers ----------------------------------------------------------------------------------------------------


# The builtins that take an iterable: the first six read a list whole; the iterators read it lazily (in the
# for header that advances them, or in the builtin that consumes them).
_CONSUMERS = ("sum", "sorted", "list", "tuple", "any", "all", "enumerate", "zip", "reversed")


def _consumes(e: ast.Call) -> bool:
    """A call of a builtin that takes an iterable, which may be a generator expression."""
    return isinstance(e.func, ast.Name) and e.func.id in (*_CONSUMERS, "min", "max", "set")


class _Renamed(ast.NodeTransformer):
    """A comprehension's variables renamed to hidden temporaries (they do not leak, as in Python 3)."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, n: ast.Name) -> ast.Name:
        if n.id in self.names:
            return ast.copy_location(ast.Name(self.names[n.id], n.ctx), n)
        return n


def _evaluation_order(e: ast.AST) -> list[ast.AST]:
    """The nodes of ``e`` in the order Python finishes evaluating them (operands before operations); an
    assertion's message and a lambda's body are not evaluated here."""
    out: list[ast.AST] = []

    def visit(n: ast.AST) -> None:
        if isinstance(n, ast.Lambda):
            for d in [*n.args.defaults, *n.args.kw_defaults]:  # evaluated where the lambda is made
                if d is not None:
                    visit(d)
            return
        if isinstance(n, ast.Call):
            # A method's name is not a field read: the receiver, then the arguments, then the call.
            if isinstance(n.func, ast.Attribute):
                visit(n.func.value)
            for arg in n.args:
                visit(arg)
            for kw in n.keywords:
                visit(kw.value)
                if kw.arg is None:
                    out.append(kw)  # f(**d): reading d's items
        else:
            for child in children(n):
                visit(child)
        out.append(n)

    visit(e)
    return out


def _load(name: str, at: ast.AST) -> ast.Name:
    n = ast.Name(name, ast.Load())
    return fix_locations(ast.copy_location(n, at))


def _store(name: str, at: ast.AST) -> ast.Name:
    n = ast.Name(name, ast.Store())
    return fix_locations(ast.copy_location(n, at))


def _as_load(t: ast.expr) -> ast.expr:
    return _with_ctx(t, ast.Load())


def _as_store(t: ast.expr) -> ast.expr:
    return _with_ctx(t, ast.Store())


def _with_ctx(t: ast.expr, ctx: ast.expr_context) -> ast.expr:
    """A shallow copy of target ``t`` that loads or stores (its operands are shared with ``t``)."""
    c = copy.copy(t)
    c.ctx = ctx  # type: ignore[attr-defined]
    return c


def _clears(temps: list[str], at: ast.AST) -> list[ast.stmt]:
    """``$v = None`` for each temporary: a value the thread no longer needs must not tell states apart."""
    out: list[ast.stmt] = []
    for name in temps:
        none = ast.copy_location(ast.Constant(None), at)
        a = ast.copy_location(ast.Assign(targets=[_store(name, at)], value=none), at)
        a.movers_text = ""  # type: ignore[attr-defined]
        out.append(fix_locations(a))
    return out


def _set(name: str, v: bool, at: ast.AST) -> ast.stmt:
    """``$v = True`` (or False): a hidden flag, local work."""
    a = ast.copy_location(ast.Assign(targets=[_store(name, at)], value=ast.copy_location(ast.Constant(v), at)), at)
    a.movers_text = ""  # type: ignore[attr-defined]
    return fix_locations(a)


def _temps_used(nodes: Sequence[ast.AST], temps: set[str]) -> set[str]:
    return {n.id for s in nodes for n in walked(s) if isinstance(n, ast.Name) and n.id in temps}


def _clear_dead(stmts: list[ast.stmt], live_after: set[str], temps: set[str], at: ast.AST) -> list[ast.stmt]:
    """``stmts`` with ``$v = None`` right after the last use of each temporary that is not ``live_after``; a
    temporary that dies in the test of an ``if`` (a short-circuit, ``_Cut._short_circuit``) is cleared at the
    start of both branches."""
    out: list[ast.stmt] = []
    # What each statement uses, found before any is changed, and the temporaries live after each (one backward
    # pass: a hoisted statement's temporaries are read by the few after it, so rescanning the rest for each
    # statement was quadratic in a long cut statement).
    used = [_temps_used([s], temps) for s in stmts]
    live = [live_after] * (len(stmts) + 1)
    for i in range(len(stmts) - 1, -1, -1):
        live[i] = live[i + 1] | used[i]
    for i, s in enumerate(stmts):
        later = live[i + 1]
        if isinstance(s, ast.If):
            dying = sorted(_temps_used([s.test], temps) - later - _temps_used(s.body + s.orelse, temps))
            s.body = _clears(dying, at) + _clear_dead(s.body, later, temps, at)
            s.orelse = _clears(dying, at) + _clear_dead(s.orelse, later, temps, at)
            out.append(s)
        else:
            out.append(s)
            out.extend(_clears(sorted(used[i] - later), at))
    return out


def _described(e: ast.expr, original: ast.expr, text: str) -> ast.expr:
    if e is not original:
        e.movers_text = text  # type: ignore[attr-defined]
        for a in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            setattr(e, a, getattr(original, a, None))
    return e


def is_boolean(e: ast.AST) -> bool:
    """Whether ``e``'s value is certainly a bool (a comparison, ``not``, ``and``/``or``/``if else`` of such, a
    short-circuit's temporary of such): testing its truth reads no list's length."""
    if isinstance(e, ast.Compare) or (isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not)):
        return True
    if isinstance(e, ast.Constant):
        return isinstance(e.value, bool)
    if isinstance(e, ast.BoolOp):
        return all(is_boolean(v) for v in e.values)
    if isinstance(e, ast.IfExp):
        return is_boolean(e.body) and is_boolean(e.orelse)
    return bool(getattr(e, "movers_boolean", False))


# Operators that may read a list's or a set's elements (``a + b``, ``a * n``, ``s | t``, ``s & t``, ``s - t``).
_CONTAINER_OPERATORS = (ast.Add, ast.Mult, ast.BitOr, ast.BitAnd, ast.Sub)


def container_operands(node: ast.BinOp) -> bool:
    """Whether ``node`` may operate on lists, sets or deques, reading their elements: a constant operand rules
    that out (CPython's TypeError), but for ``xs * 2`` and ``2 * xs``."""
    left, right = isinstance(node.left, ast.Constant), isinstance(node.right, ast.Constant)
    if isinstance(node.op, ast.Mult):
        return not (left and right)
    return not (left or right)


def _is_call_to(e: ast.AST, name: str) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == name


def _whole_statement(e: ast.expr) -> bool:
    """A call statement compiled as a whole: a synchronisation, a statement-level builtin."""
    if not isinstance(e, ast.Call):
        return False
    f = e.func
    if isinstance(f, ast.Name):
        return f.id in _WHOLE_CALLS or f.id == "print"
    return isinstance(f, ast.Attribute) and (f.attr in SYNC_METHODS or f.attr == "wait_for") and not (
        f.attr == "join" and isinstance(f.value, ast.Constant) and isinstance(f.value.value, str))


def _str_join(c: ast.Call, s: ast.AST) -> bool:
    """Whether ``c``, a call of a method ``join``, joins strings (``sep.join(items)``, inside an expression) rather
    than joining a thread (``t.join()``, a statement of its own)."""
    f = c.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Constant) and isinstance(f.value.value, str):
        return True  # ", ".join(…)
    return len(c.args) == 1 and not c.keywords and not (isinstance(s, ast.Expr) and s.value is c)


def _evaluated(s: ast.AST) -> list[ast.AST]:
    """The nodes of ``s`` evaluated where it runs: not the bodies of its lambdas (functions of their own)."""
    out: list[ast.AST] = []
    work = [s]
    while work:
        n = work.pop()
        out.append(n)
        if isinstance(n, ast.Lambda):
            work.extend(d for d in [*n.args.defaults, *n.args.kw_defaults] if d is not None)
        else:
            work.extend(children(n))
    return out


def _leaves_loop(body: list[ast.stmt]) -> bool:
    """Whether ``body`` has a ``break`` or ``continue`` of its own (not one of a loop inside it)."""
    def walk(n: ast.AST) -> bool:
        if isinstance(n, (ast.Break, ast.Continue)):
            return True
        if isinstance(n, (ast.For, ast.While)):
            return any(walk(x) for x in n.orelse)
        if isinstance(n, (ast.FunctionDef, ast.Lambda, ast.ClassDef)):
            return False
        return any(walk(c) for c in children(n))

    return any(walk(b) for b in body)


def _has_whole_call(s: ast.AST) -> bool:
    for n in _evaluated(s):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name) and f.id in _WHOLE_CALLS:
                return True
            if isinstance(f, ast.Attribute) and (f.attr in SYNC_METHODS or f.attr == "wait_for"
                                                 or f.attr in CHANGING_METHODS - {"append", "pop"}) \
                    and not _str_join(n, s):
                return True
    return False

