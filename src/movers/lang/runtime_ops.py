"""Runtime operations of compiled models: the small functions the compiled closures call as a model runs.

They check values (a reference where an object is needed, list indices, fields), apply the bounded arithmetic
(``MAX_INT_BITS``, ``MAX_SEQUENCE``), read lists and tuples element by element (recording each read), and start
and join threads. The operators of expressions are here too (``BINOPS``; the comparisons ``_eq``, ``_order``
and ``make_in``, which compare lists by their contents, as CPython does). They are on the hot path: keep
them small.

Not to be confused with ``lang/runtime.py``, the shim that runs a model under plain CPython threads.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from movers.ir.machine import Ctx, ModelError, show
from movers.ir.program import THREAD, Bool, Func, Ref, Unbound, unbox
from movers.lang import strings
from movers.lang.functions_model import bind, function_of, signature_of

# The builtin names of the container classes of ``lang/containers.py``.
CONTAINERS = frozenset({"dict", "set"})


def _no_container(*args: Any) -> Any:
    raise AssertionError("lang/containers.py installs this when it is imported, before any dict or set exists")


# The operations on dicts and sets that the generic ones here need (a length, equality, the keys): they belong
# to ``lang/containers.py``, which builds on this module and so installs them here when it is imported (as this
# module installs ``strings.read_list``), before a model can make a dict or a set.
dict_len: Callable[[Ctx, Ref, tuple], int] = _no_container
dict_eq: Callable[[Ctx, Ref, tuple, Ref, tuple], bool] = _no_container
set_eq: Callable[[Ctx, Ref, tuple, Ref, tuple], bool] = _no_container
dict_keys: Callable[[Ctx, Ref], tuple] = _no_container
set_items: Callable[[Ctx, Ref], tuple] = _no_container
# The same for deques, installed by ``lang/deques.py``.
deque_len: Callable[[Ctx, Ref, tuple], int] = _no_container
deque_eq: Callable[[Ctx, Ref, tuple, Ref, tuple], bool] = _no_container
deque_items: Callable[[Ctx, Ref], tuple] = _no_container


def check_ref(v: Any, what: str) -> Ref:
    if type(v) is not Ref:
        if v is None:
            raise ModelError(f"{what} of None", exc="AttributeError")
        raise ModelError(f"{what} of {show(v)}, which is not an object", exc="AttributeError")
    return v


def _index(o: tuple, i: Any) -> int:
    if type(i) is not int and type(i) is not bool:
        raise ModelError(f"list index must be an int, got {show(i)}", exc="TypeError")
    n = len(o) - 2
    if i < 0:
        i += n
    if not 0 <= i < n:
        raise ModelError(f"list index {i} out of range (length {n})", exc="IndexError")
    return i + 2


def _field_index(o: tuple, name: str) -> int:
    idx = o[0].field_index.get(name)
    if idx is None:
        raise ModelError(f"{o[0].name} object has no field '{name}'", exc="AttributeError")
    return idx


def writable_field(o: tuple, name: str) -> int:
    cls = o[0]
    if cls.builtin == "deque" and name == "maxlen":
        raise ModelError("attribute 'maxlen' of 'collections.deque' objects is not writable", exc="AttributeError")
    if cls.builtin or (cls.is_thread and name in THREAD.fields):
        raise ModelError(f"'{name}' of a {cls.name} cannot be assigned", exc="AttributeError")
    return _field_index(o, name)


def _read_length(ctx: Ctx, r: Ref, o: tuple) -> None:
    """Record that the step depends on the length n of a list that may grow (``ClassInfo.grows``).

    A list's length is no location of its own: it is read as slots n + 1 (its last element) and n + 2 (the
    first past its end). Every change of the length writes one of them (``append`` writes slot n + 2, ``pop``
    the slots from the one it removes to n + 1), so a step that reads them depends on every step that
    changes the length, for every reduction, while appends and pops still commute with accesses to elements
    they do not touch."""
    if ctx.track and o[0].grows:
        n = len(o)
        if n > 2:
            ctx.reads.append((r, n - 1))
        ctx.reads.append((r, n))


def length_of(ctx: Ctx, v: Any) -> int:
    if type(v) is Ref:
        o = ctx.heap[v.i]
        if not o[0].is_list:
            if o[0].builtin in CONTAINERS:
                return dict_len(ctx, v, o)
            if o[0].builtin == "deque":
                return deque_len(ctx, v, o)
            raise ModelError(f"len() of a {o[0].name} object", exc="TypeError")
        _read_length(ctx, v, o)
        return len(o) - 2
    if type(v) is tuple or type(v) is str:
        return len(v)
    raise ModelError(f"len() of {show(v)}", exc="TypeError")


def truth_of(ctx: Ctx, v: Any) -> bool:
    """Python's truth of a value: a list is false when empty; any other object is true."""
    if type(v) is Ref:
        o = ctx.heap[v.i]
        if not o[0].is_list:
            if o[0].builtin in CONTAINERS:
                return dict_len(ctx, v, o) > 0
            if o[0].builtin == "deque":
                return deque_len(ctx, v, o) > 0
            return True
        _read_length(ctx, v, o)
        return len(o) > 2
    return bool(v)


def _is(a: Any, b: Any) -> bool:
    if a is None or b is None or type(a) is Ref or type(b) is Ref:
        return a is b
    return type(a) is type(b) and a == b


# Bounds on the size of values, so that one step of a model cannot run for minutes or exhaust memory inside
# CPython's arithmetic, where no time limit can interrupt it (`10 ** 10 ** 8`): a result past them is a
# runtime error of the model. Documented in docs/language.md.
MAX_INT_BITS = 1 << 16
MAX_SEQUENCE = 100_000


def int_like(v: Any) -> bool:
    return type(v) is int or type(v) is bool


def too_big(what: str) -> ModelError:
    return ModelError(f"{what}: the checker bounds integers to {MAX_INT_BITS:,} bits and tuples and arrays "
                      f"to {MAX_SEQUENCE:,} elements")


def _add(a: Any, b: Any) -> Any:
    if type(a) is str or type(b) is str:
        return strings.concat(a, b)
    v = a + b
    if type(v) is tuple and len(v) > MAX_SEQUENCE:
        raise too_big("tuple too long")
    return v


def _mul(a: Any, b: Any) -> Any:
    if type(a) is str or type(b) is str:
        return strings.repeat(a, b)
    if int_like(a) and int_like(b):
        if a.bit_length() + b.bit_length() > MAX_INT_BITS:
            raise too_big("integer too large")
    elif type(a) is tuple and int_like(b) and len(a) * b > MAX_SEQUENCE:
        raise too_big("tuple too long")
    elif type(b) is tuple and int_like(a) and len(b) * a > MAX_SEQUENCE:
        raise too_big("tuple too long")
    return a * b


def _pow(a: Any, b: Any) -> Any:
    if int_like(a) and int_like(b):
        if b < 0:
            raise ModelError(f"{show(a)} ** {show(b)}: a negative exponent gives a fraction; values are ints")
        if b > 1 and (a > 1 or a < -1) and b * (abs(a).bit_length() - 1) > MAX_INT_BITS:
            raise too_big("integer too large")
    return a**b


def _lshift(a: Any, b: Any) -> Any:
    if int_like(a) and int_like(b) and a and b > 0 and a.bit_length() + b > MAX_INT_BITS:
        raise too_big("integer too large")
    return a << b


BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: _add,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: _mul,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: strings.percent(None, a, b) if type(a) is str else a % b,
    ast.Pow: _pow,
    ast.LShift: _lshift,
    ast.RShift: lambda a, b: a >> b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitXor: lambda a, b: a ^ b,
}
# -- comparisons, as CPython makes them -------------------------------------------------------------------------
#
# A list is a reference to a heap object, but Python compares lists by their contents: `==` element by
# element, `<` lexicographically, recursively through lists inside tuples inside lists. These functions do
# that through the heap, recording a read of every element (and length) they look at, in CPython's order
# (``list_richcompare``: for `==` the lengths first, then the elements up to the first that differs). Objects
# of model classes and threading objects have no ``__eq__`` (the compiler refuses special methods): they
# compare by identity, and have no order. Ints, booleans and None are Python's own (`1 == True`). Values
# without references (no ``Ref``, no tuple) take Python's operator at once: the common case stays cheap.

# Deeper than this, CPython would have run out of stack (a list that contains itself, compared with another).
MAX_COMPARE_DEPTH = 200


def _type_name(ctx: Ctx, v: Any) -> str:
    """The name CPython gives ``type(v)`` for a model value."""
    if type(v) is Ref:
        return ctx.heap[v.i][0].name
    return "NoneType" if v is None else type(v).__name__


def _deep(v: Any) -> bool:
    t = type(v)
    return t is Ref or t is tuple


def _elements(ctx: Ctx, r: Ref) -> tuple | None:
    """The heap object of list ``r`` with its length recorded as read; None when ``r`` is no list."""
    o = ctx.heap[r.i]
    if not o[0].is_list:
        return None
    _read_length(ctx, r, o)
    return o


def _eq(ctx: Ctx, a: Any, b: Any, depth: int = 0) -> bool:
    """Python's ``a == b``."""
    if a is b:
        return True  # PyObject_RichCompareBool's identity shortcut; a list equals itself whatever it holds
    ta, tb = type(a), type(b)
    if ta is not Ref and ta is not tuple and tb is not Ref and tb is not tuple:
        return bool(a == b)
    if depth > MAX_COMPARE_DEPTH:
        raise ModelError("maximum recursion depth exceeded in comparison")
    if ta is tuple:
        if tb is not tuple or len(a) != len(b):
            return False
        for x, y in zip(a, b, strict=True):
            if not _eq(ctx, x, y, depth + 1):
                return False
        return True
    if ta is not Ref or tb is not Ref:
        return False
    spec = getattr(ctx.heap[a.i][0], "dataclass", None)
    if spec is not None and spec.eq:
        return dataclass_eq(ctx, a, b, depth)
    oa = _elements(ctx, a)
    ob = _elements(ctx, b) if oa is not None else None
    if oa is None or ob is None:
        da, db = ctx.heap[a.i], ctx.heap[b.i]
        if da[0].builtin == "dict" and db[0].builtin == "dict":
            return dict_eq(ctx, a, da, b, db)
        if da[0].builtin == "set" and db[0].builtin == "set":
            return set_eq(ctx, a, da, b, db)
        if da[0].builtin == "deque" and db[0].builtin == "deque":
            return deque_eq(ctx, a, da, b, db)
        return False  # an object is equal to itself only
    if len(oa) != len(ob):
        return False
    track = ctx.track
    for k in range(2, len(oa)):
        if track:
            ctx.reads.append((a, k))
            ctx.reads.append((b, k))
        x, y = oa[k], ob[k]
        if x is not y and not _eq(ctx, unbox(x), unbox(y), depth + 1):
            return False
    return True


def _ne(ctx: Ctx, a: Any, b: Any) -> bool:
    return not _eq(ctx, a, b)


_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


def _order(ctx: Ctx, a: Any, b: Any, op: str, depth: int = 0) -> bool:
    """Python's ``a < b`` (``op`` one of ``< <= > >=``): sequences of one kind lexicographically, by their
    first items that are not equal, else by their lengths; anything else is Python's own, or its TypeError."""
    cmp = _ORDER[op]
    ta, tb = type(a), type(b)
    if ta is not Ref and ta is not tuple and tb is not Ref and tb is not tuple:
        if (ta is str) is not (tb is str):
            raise ModelError(f"'{op}' not supported between instances of '{strings.type_name(a)}' and "
                             f"'{strings.type_name(b)}'", exc="TypeError")
        return cmp(a, b)
    if depth > MAX_COMPARE_DEPTH:
        raise ModelError("maximum recursion depth exceeded in comparison")
    if ta is tuple and tb is tuple:
        xs: Any = a
        ys: Any = b
        refs = None
    elif ta is Ref and tb is Ref and ctx.heap[a.i][0].builtin == "deque" == ctx.heap[b.i][0].builtin:
        return _order(ctx, deque_items(ctx, a), deque_items(ctx, b), op, depth + 1)  # as CPython, item by item
    else:
        oa = _elements(ctx, a) if ta is Ref else None
        ob = _elements(ctx, b) if tb is Ref and oa is not None else None
        if oa is None or ob is None:
            raise ModelError(f"'{op}' not supported between instances of '{_type_name(ctx, a)}' and "
                             f"'{_type_name(ctx, b)}'", exc="TypeError")
        xs, ys = oa[2:], ob[2:]
        refs = (a, b)
    n = min(len(xs), len(ys))
    for k in range(n):
        if refs is not None:
            if ctx.track:
                ctx.reads.append((refs[0], k + 2))
                ctx.reads.append((refs[1], k + 2))
            x, y = unbox(xs[k]), unbox(ys[k])
        else:
            x, y = xs[k], ys[k]
        if not _eq(ctx, x, y, depth + 1):
            return _order(ctx, x, y, op, depth + 1)
    return cmp(len(xs), len(ys))


def comparison(op: type) -> Callable[[Ctx, Any, Any], bool]:
    """The comparison ``op`` (an ``ast.cmpop`` type) as ``f(ctx, a, b)``."""
    if op is ast.Eq:
        return _eq
    if op is ast.NotEq:
        return _ne
    if op is ast.Is:
        return lambda ctx, a, b: _is(a, b)
    if op is ast.IsNot:
        return lambda ctx, a, b: not _is(a, b)
    symbol = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}[op]
    return lambda ctx, a, b: _order(ctx, a, b, symbol)


def _contains(ctx: Ctx, b: Any, a: Any) -> bool:
    """Python's ``a in b`` for a tuple or a list ``b``: some item is ``a`` or equals it; a substring of a
    string ``b``."""
    if type(b) is str:
        return strings.contains(b, a, ctx)
    items = as_tuple(ctx, b)
    if type(items) is not tuple:
        raise ModelError(f"'in' needs a tuple or a list, got {show(b)}", exc="TypeError")
    if not _deep(a):
        for x in items:
            if not _deep(x) and x == a:
                return True
        return False
    return any(_eq(ctx, x, a) for x in items)


def make_in(neg: bool) -> Callable[[Ctx, Any, Any], bool]:
    if neg:
        return lambda ctx, a, b: not _contains(ctx, b, a)
    return lambda ctx, a, b: _contains(ctx, b, a)


def extremum(ctx: Ctx, items: list[Any] | tuple, op: str, pick: Callable[[Any], Any]) -> Any:
    """``min`` (op ``<``) or ``max`` (op ``>``) of ``items`` as Python's builtins choose: the first item that
    no later one beats."""
    if not any(_deep(x) for x in items):
        return pick(items)
    best = items[0]
    for x in items[1:]:
        if _order(ctx, x, best, op):
            best = x
    return best


# The types of state values that a load must unbox (see ``program.Bool``).
BOXED = frozenset({Bool, tuple, Unbound})


def list_items(ctx: Ctx, r: Ref) -> tuple:
    """Every element of a list, read at once (``v in a``, ``x, y = a``): each element is an access."""
    o = ctx.heap[r.i]
    if ctx.track:
        ctx.reads.extend((r, k) for k in range(2, len(o)))
        _read_length(ctx, r, o)
    return tuple([unbox(x) for x in o[2:]])


strings.read_list = list_items  # str(xs), ", ".join(xs): see ``strings.read_list``


def element_index(ctx: Ctx, r: Ref, o: tuple, i: Any) -> int:
    """``_index`` for ``a[i]`` on list ``r``: whether i is in range, and which element it names when it is
    negative, depend on the length."""
    _read_length(ctx, r, o)
    return _index(o, i)


def _list_of(ctx: Ctx, r: Any, method: str) -> tuple:
    if type(r) is not Ref:
        raise ModelError(f"method '{method}' called on {show(r)}", exc="AttributeError")
    o = ctx.heap[r.i]
    if not o[0].is_list:
        raise ModelError(f"{o[0].name} object has no method '{method}'", exc="AttributeError")
    return o


def list_append(ctx: Ctx, r: Any, v: Any) -> None:
    """``xs.append(v)``: a new list object one element longer (the state is immutable)."""
    o = _list_of(ctx, r, "append")
    if len(o) - 2 >= MAX_SEQUENCE:
        raise too_big("list too long")
    _read_length(ctx, r, o)
    heap = ctx.heap
    if type(heap) is tuple:
        heap = ctx.heap = list(heap)
    heap[r.i] = (*o, None)
    ctx.set_field(r, len(o), v)  # boxes v, marks references, records the write of slot n + 2


def list_pop(ctx: Ctx, r: Any, i: Any = -1) -> Any:
    """``xs.pop()`` / ``xs.pop(i)``: remove and return an element; the later ones move down by one."""
    o = _list_of(ctx, r, "pop")
    _read_length(ctx, r, o)
    if len(o) == 2:
        raise ModelError("pop from empty list", exc="IndexError")
    if type(i) is not int and type(i) is not bool:
        raise ModelError(f"pop index must be an int, got {show(i)}", exc="TypeError")
    n = len(o) - 2
    k = i + n if i < 0 else i
    if not 0 <= k < n:
        raise ModelError(f"pop index {i} out of range (length {n})", exc="IndexError")
    k += 2
    if ctx.track:
        ctx.reads.extend((r, j) for j in range(k, len(o)))
        ctx.writes.extend((r, j) for j in range(k, len(o)))
    x = o[k]
    heap = ctx.heap
    if type(heap) is tuple:
        heap = ctx.heap = list(heap)
    heap[r.i] = o[:k] + o[k + 1:]
    if type(x) is Ref or type(x) is tuple or any(type(y) is Ref or type(y) is tuple for y in o[k + 1:]):
        ctx.dirty = ctx.reshaped = True  # references moved or dropped
    return unbox(x) if type(x) in BOXED else x


def as_tuple(ctx: Ctx, v: Any) -> Any:
    if type(v) is Ref:
        o = ctx.heap[v.i]
        if o[0].is_list:
            return list_items(ctx, v)
        if o[0].builtin == "dict":  # iterating a dict, `k in d`: its keys
            return dict_keys(ctx, v)
        if o[0].builtin == "set":
            return set_items(ctx, v)
        if o[0].builtin == "deque":
            return deque_items(ctx, v)
    return v


def item_at(ctx: Ctx, v: Any, i: int) -> Any:
    if type(v) is tuple:
        return unbox(v[i])
    if type(v) is str:
        return v[i]
    if ctx.track:
        ctx.reads.append((v, i + 2))
    return unbox(ctx.heap[v.i][i + 2])


def range_int(v: Any) -> int:
    # range() takes ints (a bool counts as one, as in Python) and yields ints.
    if type(v) is int:
        return v
    if type(v) is bool:
        return int(v)
    raise ModelError(f"range() needs ints, got {show(v)}", exc="TypeError")


def choice_count(n: Any) -> int:
    if type(n) is not int:
        raise ModelError(f"choose(range(n)) needs an int, got {show(n)}")
    return n


def dataclass_eq(ctx: Ctx, a: Ref, b: Ref, depth: int) -> bool:
    """``a == b`` for an ``@dataclass`` (eq=True): objects of the same class whose fields are equal, in
    order, as the ``__eq__`` CPython generates (it compares the tuples of their fields)."""
    oa, ob = ctx.heap[a.i], ctx.heap[b.i]
    if oa[0] is not ob[0]:
        return False
    track = ctx.track
    for f in oa[0].dataclass.compared:
        k = oa[0].field_index[f]
        if track:
            ctx.reads.append((a, k))
            ctx.reads.append((b, k))
        x, y = oa[k], ob[k]
        if x is not y and not _eq(ctx, unbox(x), unbox(y), depth + 1):
            return False
    return True


# Marks where a Thread's keyword arguments start in its ``_args`` (lang/builtins.b_Thread): a string no model
# can pass by accident.
KWARGS = "\x00movers:kwargs"
THREAD_NAME = "\x00movers:name"
# Thread(target=<a lambda, closure or bound method>, daemon=True): the hidden list of daemons' slot follows this
# marker at the end of the thread's args, before a THREAD_NAME (a named Func carries its own).
DAEMON = "\x00movers:daemon"


def subclass_daemon(ctx: Ctx, r: Ref, tid: int) -> None:
    """At ``start()`` of a subclass's object: a daemon thread joins the hidden list of daemons."""
    o = ctx.heap[r.i]
    k = o[0].field_index.get("$daemon")
    if k is None:
        return
    if ctx.track:
        ctx.reads.append((r, k))
    slot = getattr(o[0], "daemon_slot", None)
    if unbox(o[k]) is True and slot is not None:
        ctx.set_global(slot, (*(unbox(ctx.g[slot]) or ()), tid))


def start_thread(ctx: Ctx, r: Any) -> None:
    if type(r) is not Ref:
        raise ModelError(f"start() on {show(r)}", exc="AttributeError")
    o = ctx.heap[r.i]
    cls = o[0]
    if not cls.is_thread:
        raise ModelError(f"start() on a {cls.name} object, which is not a Thread", exc="AttributeError")
    if o[2] is not None:
        raise ModelError("a thread can be started only once", exc="RuntimeError")
    if ctx.new_threads is None:
        ctx.new_threads = []
    tid = len(ctx.threads) + len(ctx.new_threads)
    if cls is THREAD:
        target, args = o[3], o[4]
        if len(args) >= 2 and type(args[-2]) is str and args[-2] == THREAD_NAME:
            args = args[:-2]  # the name of a lambda's thread (threadinfo.thread_name reads it)
        daemon_slot = target.daemon_slot if type(target) is Func else None
        if len(args) >= 2 and type(args[-2]) is str and args[-2] == DAEMON:
            daemon_slot, args = args[-1], args[:-2]
        kw = next((k for k, x in enumerate(args) if type(x) is str and x == KWARGS), -1)
        if kw >= 0:  # Thread(kwargs={...}): the names, then the values, after the marker
            code, first, fields = function_of(ctx, target)
            frame_locals = code.new_frame_locals(bind(signature_of(code), first, list(args[:kw]), args[kw + 1],
                                                      list(args[kw + 2:]), fields, ctx))
        elif (type(target) is Func and target.code is not None and len(target.code.params) == len(args)
              and signature_of(target.code).npos == len(args)):
            code = target.code
            frame_locals = code.new_frame_locals(list(args))
        else:
            # A lambda, a closure, a function with defaults (lang/functions_model.py).
            code, first, fields = function_of(ctx, target)
            frame_locals = code.new_frame_locals(bind(signature_of(code), first, list(args), (), [], fields, ctx))
        if daemon_slot is not None:
            ctx.set_global(daemon_slot, (*(unbox(ctx.g[daemon_slot]) or ()), tid))
    else:
        code = cls.lookup("run")
        if code is None:
            raise ModelError(f"{cls.name} has no run() method")
        frame_locals = code.new_frame_locals([r])
        if getattr(cls, "daemon_slot", None) is not None:  # super().__init__(daemon=...) may have made it one
            subclass_daemon(ctx, r, tid)
    ctx.set_field(r, 2, tid)
    ctx.new_threads.append(((code, code.entry, *frame_locals),))
    if ctx.track:
        ctx.started.append(tid)
    ctx.dirty = True


def _thread_id(ctx: Ctx, r: Any) -> int:
    if type(r) is not Ref or not ctx.heap[r.i][0].is_thread:
        raise ModelError(f"join() on {show(r)}, which is not a Thread", exc="AttributeError")
    t = ctx.heap[r.i][2]
    if t is None:
        raise ModelError("join() on a thread that was not started", exc="RuntimeError")
    return t


def join_guard(ctx: Ctx, r: Any) -> bool:
    if type(r) is not Ref or not ctx.heap[r.i][0].is_thread or ctx.heap[r.i][2] is None:
        return True  # the operation reports the error
    t = ctx.heap[r.i][2]
    threads = ctx.threads
    return t < len(threads) and threads[t] == ()


def join_op(ctx: Ctx, r: Any) -> None:
    _thread_id(ctx, r)
    if ctx.track:
        ctx.reads.append((r, 2))  # the thread object's id: an access to it, for the reductions


__all__ = [
    "BINOPS", "BOXED", "DAEMON", "KWARGS", "THREAD_NAME", "MAX_COMPARE_DEPTH", "MAX_INT_BITS", "MAX_SEQUENCE",
    "as_tuple",
    "check_ref", "choice_count", "comparison", "element_index", "extremum", "int_like", "item_at", "join_guard",
    "join_op", "length_of", "list_append", "list_items", "list_pop", "make_in", "range_int", "start_thread",
    "too_big", "truth_of", "writable_field",
]
