"""Iteration: the builtins that consume an iterable (``sum``, ``sorted``, ``list``, ``tuple``, ``any``, ``all``,
``min``/``max`` of one argument), the iterators ``range``, ``enumerate``, ``zip`` and ``reversed``, the
``for`` loop over them, and list comprehensions and generator expressions.

``IterationCompiler`` is the ``FunctionCompiler`` mixin. It follows CPython:

- A builtin that consumes a list (``sum(a)``, ``sorted(a)``, ``list(a)``, ``list(zip(a, b))``) runs in C under
  the GIL without a thread switch: one step that reads every element (as ``min(a)`` and ``x in a``).
- A ``for`` loop advances its iterator once per header: ``listiter`` reads the length and one element each
  time (``for v in a:`` in ``statements.py``), ``enumerate`` and ``zip`` advance the iterators they wrap, in
  order (``zip`` stops at the first exhausted one without advancing the later ones), ``reversed(a)`` reads the
  length when it is created and at each step checks ``0 <= index < len(a)`` (``listreviter``). Each is an
  *accessor*: from the state the first header keeps in the loop's hidden slot and the position ``i``, the
  next item or ``STOP``. ``for_source`` dispatches on the shape of the ``for``'s iterable; on the runtime
  type of a value, ``iter_start``/``iter_next`` (a loop) and ``items_of`` (a builtin) do: a new kind of
  iterable (strings, dicts, sets) adds its case there.
- A comprehension is its own loop (its variables do not leak, as in Python 3). Evaluated as an expression it
  runs in the step of its statement (``--granularity statement``, the module's initialisation); under
  ``--granularity access`` the lowering (``granularity.py``) first turns it into a loop of statements, so that
  each element read from a shared list is one access, as the bytecode of a comprehension reads them. One that
  calls the model is that loop at either granularity (``comprehensions.py``): a call cannot be part of a
  comprehension evaluated in one go. A dict comprehension gathers ``(key, value)`` pairs, a set comprehension
  its items, into the new dict or set (``lang/containers.py``).
- ``range``, ``enumerate``, ``zip``, ``reversed`` and generator expressions are values only where they are
  consumed (a ``for`` loop, the builtins above, ``len(range(…))``); anywhere else they are refused.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from typing import Any

from movers.ir.machine import Ctx, ModelError
from movers.ir.program import ClassInfo, Ref, box, unbox
from movers.lang import deques
from movers.lang.containers import dict_keys, set_items
from movers.lang.function import AV, NO_VALUE, Fn, FunctionCore
from movers.lang.runtime_ops import (
    MAX_SEQUENCE,
    _add,
    _deep,
    _order,
    _type_name,
    item_at,
    length_of,
    list_items,
    range_int,
    too_big,
    truth_of,
)
from movers.lang.syntax import evaluated_here

# Builtins that take one iterable and may take an iterator or a generator expression as it.
CONSUMERS = ("sum", "sorted", "list", "tuple", "any", "all", "min", "max")
ITERATORS = ("range", "enumerate", "zip", "reversed")
STOP = object()  # an accessor's "no next item"

Accessor = Callable[[Ctx, Any, int], Any]


def _not_iterable(ctx: Ctx, v: Any) -> ModelError:
    return ModelError(f"'{_type_name(ctx, v)}' object is not iterable", exc="TypeError")


def items_of(ctx: Ctx, v: Any) -> tuple:
    """The items of a list (each element read: one access) or a tuple, consumed at once (``sum(a)``…)."""
    if type(v) is tuple:
        return v
    if type(v) is str:
        return tuple(v)  # its characters
    if type(v) is Ref:
        o = ctx.heap[v.i]
        if o[0].is_list:
            return list_items(ctx, v)
        if o[0].builtin == "dict":
            return dict_keys(ctx, v)
        if o[0].builtin == "set":
            return set_items(ctx, v)
        if o[0].builtin == "deque":
            return deques.items(ctx, v)
    raise _not_iterable(ctx, v)


def range_items(lo: Any, hi: Any, step: Any) -> tuple:
    d = range_int(step)
    if d == 0:
        raise ModelError("range() arg 3 must not be zero", exc="ValueError")
    r = range(range_int(lo), range_int(hi), d)
    if len(r) > MAX_SEQUENCE:
        raise too_big("range too long")
    return tuple(r)


def sum_of(ctx: Ctx, items: tuple, start: Any) -> Any:
    """Python's ``sum``: ``start + x0 + x1 …`` on ints and bools, or tuples (concatenated)."""
    total = start
    for x in items:
        tt, tx = type(total), type(x)
        if (tt is int or tt is bool) and (tx is int or tx is bool):
            total = total + x
        elif tt is tuple and tx is tuple:
            total = _add(total, x)
        elif tt is Ref and tx is Ref:
            raise ModelError("sum() of lists is not supported; concatenate them in a for loop")
        else:
            raise ModelError(f"unsupported operand type(s) for +: '{_type_name(ctx, total)}' and "
                             f"'{_type_name(ctx, x)}'", exc="TypeError")
    return total


def sorted_of(ctx: Ctx, items: tuple, reverse: bool) -> list:
    """Python's ``sorted`` (stable; with ``reverse``, stable too: equal items keep their order)."""
    def less(a: Any, b: Any) -> int:
        if _order(ctx, a, b, "<"):
            return -1
        return 1 if _order(ctx, b, a, "<") else 0

    if not any(_deep(x) for x in items):
        try:
            return sorted(items, reverse=reverse)
        except TypeError as ex:
            raise ModelError(str(ex), exc="TypeError") from None
    return sorted(items, key=functools.cmp_to_key(less), reverse=reverse)


def new_list(ctx: Ctx, cls: Any, items: Any) -> Ref:
    if len(items) > MAX_SEQUENCE:
        raise too_big("list too long")
    return ctx.alloc((cls, None, *items))


# -- accessors for the for loop ----------------------------------------------------------------------------------


def iter_next(ctx: Ctx, v: Any, i: int) -> Any:
    """``FOR_ITER`` on the iterator ``iter_start`` made: the item at position ``i``, or ``STOP``. ``listiter``
    and ``tupleiter``: the length, then the element at ``i``, so a loop sees what another thread appended. A
    dict's or a set's iterator (``(class, dict, size)``: a class is never a value of the model, so no tuple
    being iterated looks like one) checks first that the size has not changed, as CPython's does."""
    if type(v) is tuple and v and type(v[0]) is ClassInfo:
        if v[0] is deques.ITER:
            x = deques.iter_next(ctx, v, i)
            return STOP if x is None else x[0]
        return _container_next(ctx, v[1], v[2], i)
    if i < length_of(ctx, v):
        return item_at(ctx, v, i)
    return STOP


def _container_next(ctx: Ctx, r: Ref, n: int, i: int) -> Any:
    o = ctx.heap[r.i]
    if length_of(ctx, r) != n:  # reads every slot of the dict: depends on every change
        what = "dictionary" if o[0].builtin == "dict" else "Set"
        raise ModelError(f"{what} changed size during iteration", exc="RuntimeError")
    if i >= n:
        return STOP
    return unbox(o[2 + 2 * i] if o[0].builtin == "dict" else o[2 + i])


def iter_start(ctx: Ctx, v: Any) -> Any:
    """``GET_ITER``: the state of a fresh iterator over the value ``v`` (for ``iter_next``). With ``items_of``,
    the place where the iterable's runtime type decides; a new kind of iterable adds its case to the three."""
    if type(v) is Ref:
        o = ctx.heap[v.i]
        if o[0].builtin in ("dict", "set"):
            return (o[0], v, length_of(ctx, v))
        if o[0].builtin == "deque":
            return deques.iter_start(ctx, v)
        if not o[0].is_list:
            raise _not_iterable(ctx, v)
    elif type(v) is not tuple and type(v) is not str:
        raise _not_iterable(ctx, v)
    return v


def enumerate_start(s: Any) -> int:
    if type(s) is bool:
        return int(s)
    if type(s) is not int:
        raise ModelError(f"'{type(s).__name__}' object cannot be interpreted as an integer", exc="TypeError")
    return s


def enumerate_accessor(inner: Accessor) -> Accessor:
    def get(ctx: Ctx, state: Any, i: int) -> Any:
        sub, start = state
        x = inner(ctx, sub, i)
        return STOP if x is STOP else (start + i, x)

    return get


def zip_accessor(inners: list[Accessor]) -> Accessor:
    def get(ctx: Ctx, state: Any, i: int) -> Any:
        if not inners:  # zip() is empty
            return STOP
        out = []
        for f, s in zip(inners, state, strict=True):
            x = f(ctx, s, i)
            if x is STOP:
                return STOP
            out.append(x)
        return tuple(out)

    return get


def reversed_accessor(ctx: Ctx, state: Any, i: int) -> Any:
    v, n0 = state
    if type(v) is tuple and v and v[0] is deques.ITER:  # a deque's reverse iterator (``dequereviter``)
        x = deques.iter_next(ctx, v, i, reverse=True)
        return STOP if x is None else x[0]
    j = n0 - 1 - i
    if 0 <= j < length_of(ctx, v):
        return item_at(ctx, v, j)
    return STOP


class IterationCompiler(FunctionCore):
    """``b_X`` for the consuming builtins and the iterators, comprehensions, and ``for_source``."""

    # -- what an iterable argument yields -------------------------------------------------------------------

    def _is_builtin_call(self, e: ast.AST, names: tuple[str, ...]) -> bool:
        return (isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in names
                and e.func.id not in self.slot and e.func.id not in self.mc.functions)

    def iterable(self, e: ast.expr) -> tuple[Fn, AV]:
        """``e`` where an iterable is consumed at once: a function giving its items as a tuple, and the abstract
        value of an item."""
        if self._is_builtin_call(e, ITERATORS):
            assert isinstance(e, ast.Call) and isinstance(e.func, ast.Name)
            return getattr(self, "_items_" + e.func.id)(e)
        if isinstance(e, ast.GeneratorExp):
            return self.comprehension(e, e.elt, e.generators)
        seq = self._expr(e)
        if getattr(e, "movers_tuple", False):  # a comprehension's items, gathered by the lowering
            return (lambda ctx: items_of(ctx, seq(ctx))), self.value(e)
        self.facts.elements_read = True
        self.facts.uses.append(self.value(e))
        return (lambda ctx: items_of(ctx, seq(ctx))), self.value(e) | frozenset({("element", self.value(e))})

    def _items_range(self, e: ast.Call) -> tuple[Fn, AV]:
        if e.keywords or not 1 <= len(e.args) <= 3:
            raise self.mc.error(e, "range() takes 1 to 3 arguments")
        parts = [self._expr(a) for a in e.args]
        if len(parts) == 1:
            hi = parts[0]
            return (lambda ctx: range_items(0, hi(ctx), 1)), NO_VALUE
        lo, hi2 = parts[0], parts[1]
        st = parts[2] if len(parts) == 3 else (lambda ctx: 1)
        return (lambda ctx: range_items(lo(ctx), hi2(ctx), st(ctx))), NO_VALUE

    def _enumerate_args(self, e: ast.Call) -> tuple[ast.expr, Fn]:
        args = list(e.args)
        start: ast.expr | None = args[1] if len(args) == 2 else None
        for k in e.keywords:
            if k.arg != "start" or start is not None:
                raise self.mc.error(k, "enumerate() takes an iterable and start=")
            start = k.value
        if not args or len(args) > 2:
            raise self.mc.error(e, "enumerate() takes an iterable and start=")
        return args[0], self._expr(start) if start is not None else (lambda ctx: 0)

    def _items_enumerate(self, e: ast.Call) -> tuple[Fn, AV]:
        src, start = self._enumerate_args(e)
        inner, av = self.iterable(src)

        def run(ctx: Ctx) -> tuple:
            s = enumerate_start(start(ctx))
            return tuple((s + k, x) for k, x in enumerate(inner(ctx)))

        return run, av

    def _items_zip(self, e: ast.Call) -> tuple[Fn, AV]:
        if e.keywords:
            raise self.mc.error(e, "zip() keyword arguments are not supported")
        inners = [self.iterable(a) for a in e.args]
        fns = [f for f, _ in inners]
        return (lambda ctx: tuple(zip(*(f(ctx) for f in fns), strict=False))), NO_VALUE.union(*(av for _, av in inners))

    def _items_reversed(self, e: ast.Call) -> tuple[Fn, AV]:
        if e.keywords or len(e.args) != 1:
            raise self.mc.error(e, "reversed() takes one argument")
        a = e.args[0]
        if isinstance(a, ast.GeneratorExp) or self._is_builtin_call(a, ("enumerate", "zip")):
            raise self.mc.error(e, f"'{'generator' if isinstance(a, ast.GeneratorExp) else a.func.id}' object "  # type: ignore[attr-defined]
                                "is not reversible; give reversed() a list, a tuple or a range")
        inner, av = self.iterable(a)
        return (lambda ctx: tuple(reversed(inner(ctx)))), av

    # -- the consuming builtins -----------------------------------------------------------------------------

    def _one_iterable(self, e: ast.Call, name: str, keywords: tuple[str, ...] = ()) -> tuple[Fn, AV, dict[str, Fn]]:
        kws: dict[str, Fn] = {}
        for k in e.keywords:
            if k.arg == "key":
                raise self.mc.error(k, f"{name}(key=…) is not supported yet; compare the items themselves "
                                    "(tuples compare item by item)")
            if k.arg is None or k.arg not in keywords:
                raise self.mc.error(k, f"{name}() got an unexpected keyword argument '{k.arg}'")
            kws[k.arg] = self._expr(k.value)
        if len(e.args) != 1:
            raise self.mc.error(e, f"{name}() takes one iterable argument")
        items, av = self.iterable(e.args[0])
        return items, av, kws

    def b_sum(self, e: ast.Call) -> Fn:
        args = list(e.args)
        if len(args) == 2:
            e = ast.Call(func=e.func, args=[args[0]], keywords=[ast.keyword("start", args[1]), *e.keywords])
            ast.copy_location(e, args[0])
        items, _, kws = self._one_iterable(e, "sum", ("start",))
        start = kws.get("start", lambda ctx: 0)
        return lambda ctx: sum_of(ctx, items(ctx), start(ctx))

    def b_sorted(self, e: ast.Call) -> Fn:
        items, av, kws = self._one_iterable(e, "sorted", ("reverse",))
        self.compares(av, av)
        cls = self.list_class(e)  # type: ignore[attr-defined]
        self.facts.allocates = True
        self.note(e, self.new_site(e, "list"))
        self.flow("store", ("element", self.value(e)), av)
        rev = kws.get("reverse", lambda ctx: False)
        return lambda ctx: new_list(ctx, cls, sorted_of(ctx, items(ctx), truth_of(ctx, rev(ctx))))

    def b_list(self, e: ast.Call) -> Fn:
        cls = self.list_class(e)  # type: ignore[attr-defined]
        self.facts.allocates = True
        self.note(e, self.new_site(e, "list"))
        if not e.args and not e.keywords:
            return lambda ctx: ctx.alloc((cls, None))
        items, av, _ = self._one_iterable(e, "list")
        self.flow("store", ("element", self.value(e)), av)
        return lambda ctx: new_list(ctx, cls, items(ctx))

    def b_tuple(self, e: ast.Call) -> Fn:
        if not e.args and not e.keywords:
            return lambda ctx: ()
        items, av, _ = self._one_iterable(e, "tuple")
        self.note(e, av)
        return items

    def b_any(self, e: ast.Call) -> Fn:
        items, av, _ = self._one_iterable(e, "any")
        self._truth_use(av)
        return lambda ctx: any(truth_of(ctx, x) for x in items(ctx))

    def b_all(self, e: ast.Call) -> Fn:
        items, av, _ = self._one_iterable(e, "all")
        self._truth_use(av)
        return lambda ctx: all(truth_of(ctx, x) for x in items(ctx))

    def _truth_use(self, av: AV) -> None:
        """The truth of an item that is a list reads its length (``truth_of``), an access once lists grow."""
        if self.mc.lists_grow and av:
            self.facts.elements_read = True
            self.facts.uses.append(av)

    def _refuse_iterator(self, e: ast.Call) -> Fn:
        name = e.func.id  # type: ignore[attr-defined]
        raise self.mc.error(e, f"{name}() is only supported where it is consumed: in 'for … in {name}(…)' and as "
                            "the argument of list(), tuple(), sum(), sorted(), min(), max(), any(), all(), "
                            f"enumerate(), zip(), reversed(); write list({name}(…)) for a list")

    b_range = b_enumerate = b_zip = b_reversed = _refuse_iterator

    # -- comprehensions -------------------------------------------------------------------------------------

    def e_ListComp(self, e: ast.ListComp) -> Fn:
        items, av = self.comprehension(e, e.elt, e.generators)
        cls = self.list_class(e)  # type: ignore[attr-defined]
        self.facts.allocates = True
        self.note(e, self.new_site(e, "list"))
        self.flow("store", ("element", self.value(e)), av)
        return lambda ctx: new_list(ctx, cls, items(ctx))

    def e_GeneratorExp(self, e: ast.GeneratorExp) -> Fn:
        raise self.mc.error(e, "a generator expression is only supported as the argument of sum(), any(), all(), "
                            "min(), max(), sorted(), list(), tuple() or set(); write a list comprehension "
                            "[… for …]")

    def e_DictComp(self, e: ast.DictComp) -> Fn:
        """``{k: v for …}``: a new dict (``lang/containers.py``) of the pairs, each key evaluated before its value
        (CPython 3.8+), a later equal key overwriting the value (and keeping the first key), as ``dict_new``."""
        pair = ast.copy_location(ast.Tuple([e.key, e.value], ast.Load()), e)
        items, av = self.comprehension(e, pair, e.generators)
        return self.new_dict(e, [], lambda ctx: items(ctx), av_items=av)  # type: ignore[attr-defined]

    def e_SetComp(self, e: ast.SetComp) -> Fn:
        """``{x for …}``: a new set (``lang/containers.py``) of the items."""
        items, av = self.comprehension(e, e.elt, e.generators)
        return self.items_set(e, items, av)

    def items_set(self, e: ast.AST, items: Fn, av: AV) -> Fn:
        f = self.new_set(e, [], items)  # type: ignore[attr-defined]
        self.flow("store", ("element", self.value(e)), av)
        return f

    def b_set(self, e: ast.Call) -> Fn:
        """``set(x for …)``, and the set a dict or set comprehension's lowering gathered (``movers_tuple``); any
        other ``set(…)``: ``BuiltinCompiler.b_set``."""
        if len(e.args) == 1 and not e.keywords and (isinstance(e.args[0], ast.GeneratorExp)
                                                    or getattr(e.args[0], "movers_tuple", False)):
            items, av = self.iterable(e.args[0])
            return self.items_set(e, items, av)
        return super().b_set(e)  # type: ignore[misc]

    def b_dict(self, e: ast.Call) -> Fn:
        """The dict of the ``(key, value)`` pairs a dict comprehension's lowering gathered (``movers_tuple``);
        any other ``dict(…)``: ``BuiltinCompiler.b_dict``."""
        if len(e.args) == 1 and not e.keywords and getattr(e.args[0], "movers_tuple", False):
            items, av = self.iterable(e.args[0])
            return self.new_dict(e, [], lambda ctx: items(ctx), av_items=av)  # type: ignore[attr-defined]
        return super().b_dict(e)  # type: ignore[misc]

    def comprehension(self, e: ast.expr, elt: ast.expr, generators: list[ast.comprehension]) -> tuple[Fn, AV]:
        """The items a comprehension makes, evaluated in one go: each ``for`` over its iterable (the first one's
        is evaluated first, in the enclosing scope), its variables in hidden slots of their own."""
        for n in evaluated_here(e):
            if isinstance(n, ast.Call) and self._is_model_call(n):  # type: ignore[attr-defined]
                # A call is a segment of its statement; in a loop evaluated in one go it cannot be.
                raise self.mc.error(n, "calls of model functions are not supported in a comprehension here (in "
                                    "print(), in a statement that also synchronises, chooses or waits, a with "
                                    "item, a default value or an invariant); assign the comprehension to a "
                                    "variable in a statement of its own, or write a for loop")
        saved = dict(self.slot)
        saved_globals = set(self.global_names)
        loops: list[tuple[Fn, Callable[[Ctx, Any], None], list[Fn]]] = []
        slots: list[int] = []
        try:
            for g in generators:
                if g.is_async:
                    raise self.mc.error(g, "unsupported construct: async comprehension")
                src, av = self.iterable(g.iter)
                store = self._comprehension_target(g.target, av, slots)
                conds = [self.condition(c) for c in g.ifs]  # type: ignore[attr-defined]
                loops.append((src, store, conds))
            value = self._expr(elt)
            item_av = self.value(elt)
        finally:
            self.slot.clear()
            self.slot.update(saved)
            self.global_names.clear()
            self.global_names.update(saved_globals)

        def run(ctx: Ctx) -> tuple:
            out: list[Any] = []

            def loop(k: int) -> None:
                if k == len(loops):
                    out.append(value(ctx))
                    if len(out) > MAX_SEQUENCE:
                        raise too_big("comprehension too long")
                    return
                src, store, conds = loops[k]
                for x in src(ctx):
                    store(ctx, x)
                    if all(c(ctx) for c in conds):
                        loop(k + 1)

            try:
                loop(0)
            finally:
                loc = ctx.loc
                for i in slots:
                    loc[i] = None
            return tuple(out)

        return run, item_av

    def _comprehension_target(self, t: ast.expr, av: AV, slots: list[int]) -> Callable[[Ctx, Any], None]:
        if isinstance(t, ast.Name):
            i = self.hidden("c")
            slots.append(i)
            self.slot[t.id] = i
            self.global_names.discard(t.id)
            self.flow("store", ("local", i), av)
            self.note(t, av)

            def store(ctx: Ctx, v: Any) -> None:
                if type(v) is Ref or type(v) is tuple:
                    ctx.dirty = True
                ctx.loc[i] = box(v)

            return store
        if isinstance(t, (ast.Tuple, ast.List)) and not any(isinstance(x, ast.Starred) for x in t.elts):
            parts = [self._comprehension_target(x, av, slots) for x in t.elts]
            n = len(parts)

            def unpack(ctx: Ctx, v: Any) -> None:
                items = items_of(ctx, v)
                if len(items) != n:
                    raise ModelError(f"{'not enough' if len(items) < n else 'too many'} values to unpack "
                                     f"(expected {n}, got {len(items)})", exc="ValueError")
                for p, x in zip(parts, items, strict=True):
                    p(ctx, x)

            return unpack
        raise self.mc.error(t, "a comprehension's target must be a name or a tuple of names")

    # -- the for loop ---------------------------------------------------------------------------------------

    def for_source(self, e: ast.expr) -> tuple[Fn, Accessor, AV, bool]:
        """``for … in e``: what its first header computes and keeps (the accessor's state), the accessor, the
        abstract value of an item, and whether creating the iterator reads shared memory (``reversed`` reads
        the length): then the first header only creates it, and the next one fetches the first item, as
        CPython's ``GET_ITER`` and ``FOR_ITER`` are two steps. The one dispatch on the iterable's kind."""
        if self._is_builtin_call(e, ("enumerate",)):
            assert isinstance(e, ast.Call)
            src, start = self._enumerate_args(e)
            first, get, av, creates = self.for_source(src)
            return ((lambda ctx: (first(ctx), enumerate_start(start(ctx)))), enumerate_accessor(get), av,
                    creates)
        if self._is_builtin_call(e, ("zip",)):
            assert isinstance(e, ast.Call)
            if e.keywords:
                raise self.mc.error(e, "zip() keyword arguments are not supported")
            parts = [self.for_source(a) for a in e.args]
            firsts = [p[0] for p in parts]
            return ((lambda ctx: tuple(f(ctx) for f in firsts)), zip_accessor([p[1] for p in parts]),
                    NO_VALUE.union(*(p[2] for p in parts)), any(p[3] for p in parts))
        if self._is_builtin_call(e, ("reversed",)) and isinstance(e, ast.Call) and len(e.args) == 1 \
                and not e.keywords and not self._is_builtin_call(e.args[0], ITERATORS) \
                and not isinstance(e.args[0], ast.GeneratorExp):
            seq = self.expr(e.args[0], allow_calls=False)  # type: ignore[attr-defined]
            self._reads_elements(e.args[0])

            def first(ctx: Ctx) -> Any:
                v = iter_start(ctx, seq(ctx))
                return (v, v[2] if type(v) is tuple and v and v[0] is deques.ITER else length_of(ctx, v))

            return first, reversed_accessor, self._element_av(e.args[0]), True
        if self._is_builtin_call(e, ITERATORS) or isinstance(e, ast.GeneratorExp):
            items, av = self.iterable(e)  # a range or nested iterator as a value: local work
            return items, iter_next, av, False
        seq = self.expr(e, allow_calls=False)  # type: ignore[attr-defined]
        self._reads_elements(e)
        return (lambda ctx: iter_start(ctx, seq(ctx))), iter_next, self._element_av(e), False

    def _reads_elements(self, e: ast.expr) -> None:
        self.facts.elements_read = True
        self.facts.uses.append(self.value(e))

    def _element_av(self, e: ast.expr) -> AV:
        return self.value(e) | frozenset({("element", self.value(e))})


