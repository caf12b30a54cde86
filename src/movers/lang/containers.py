"""Runtime operations on dicts, as CPython's ``dict`` behaves.

A dict is a heap object ``(cls, monitor, k1, v1, k2, v2, ...)``: its entries flattened, in insertion order,
keys and values boxed like any field (``ir.program.box``), so that the state's canonicalisation, symmetry
and reachability walk the references inside it as they walk a list's elements. Each allocation site has its
own class (``ClassInfo("dict", builtin="dict")``), as lists do.

Keys are compared with Python's equality (``1`` and ``True`` are one key; the first key inserted is kept,
as CPython keeps it); lists and dicts are unhashable (``TypeError: unhashable type: 'list'``). A missing key
raises ``KeyError`` with CPython's message.

Every operation is one access. Its dynamic Effect over-approximates: looking a key up reads every slot of
the dict and the slot past its end (so it depends on every insertion and deletion, as a list's length
does: ``runtime_ops._read_length``); storing into an existing key writes the value's slot; inserting writes
the two new slots past the end; deleting writes every slot from the deleted entry to the end.
"""

from __future__ import annotations

from typing import Any

from movers.ir.machine import Ctx, ModelError, show
from movers.ir.program import ClassInfo, Ref, unbox
from movers.lang import runtime_ops, strings
from movers.lang.runtime_ops import MAX_SEQUENCE, _eq, too_big


def dict_class(line: int, factory: str = "") -> ClassInfo:
    """The dict class of one allocation site; ``factory``: a defaultdict's (``int``, ``list``, ``set``)."""
    cls = ClassInfo("dict" if not factory else "defaultdict", builtin="dict", line=line)
    cls.factory = factory  # type: ignore[attr-defined]
    if factory:
        cls.made = (ClassInfo("list", builtin="list", is_list=True, line=line, grows=True)  # type: ignore[attr-defined]
                    if factory == "list" else set_class(line))
    return cls


def _default(ctx: Ctx, cls: ClassInfo) -> Any:
    """A defaultdict's default value: ``int()``, ``list()`` or ``set()``."""
    f = cls.factory  # type: ignore[attr-defined]
    if f == "int":
        return 0
    return ctx.alloc((cls.made, None))  # type: ignore[attr-defined]


def is_dict(o: tuple) -> bool:
    return o[0].builtin == "dict"


def _check_key(ctx: Ctx, k: Any) -> None:
    if type(k) is Ref:
        cls = ctx.heap[k.i][0]
        if cls.is_list or cls.builtin == "dict" or cls.builtin == "deque":
            raise ModelError(f"unhashable type: '{cls.name}'", exc="TypeError")
    elif type(k) is tuple:
        for x in k:
            _check_key(ctx, x)


def _key_text(k: Any) -> str:
    return repr(k) if type(k) is str else show(k)


def _dict_of(ctx: Ctx, r: Any, what: str) -> tuple:
    if type(r) is not Ref:
        raise ModelError(f"{what} on {show(r)}")
    o = ctx.heap[r.i]
    if not is_dict(o):
        raise ModelError(f"{what} on a {o[0].name} object")
    return o


def _read_all(ctx: Ctx, r: Ref, o: tuple) -> None:
    if ctx.track:
        ctx.reads.extend((r, j) for j in range(2, len(o) + 1))


def _find(ctx: Ctx, o: tuple, k: Any) -> int:
    """The slot of key ``k`` in dict object ``o``, or -1."""
    deep = type(k) is tuple or type(k) is Ref
    for j in range(2, len(o), 2):
        x = unbox(o[j])
        if x is k:
            return j
        if deep or type(x) is tuple or type(x) is Ref:
            if _eq(ctx, x, k):
                return j
        elif x == k:
            return j
    return -1


def dict_new(ctx: Ctx, cls: ClassInfo, pairs: list[tuple[Any, Any]]) -> Ref:
    """``{k: v, ...}``: later duplicates overwrite the value and keep the first key, as CPython."""
    r = ctx.alloc((cls, None))
    for k, v in pairs:
        dict_set(ctx, r, k, v)
    return r


def dict_get(ctx: Ctx, r: Any, k: Any, default: Any = None, missing_raises: bool = True) -> Any:
    """``d[k]`` (``missing_raises``) or ``d.get(k, default)``."""
    o = _dict_of(ctx, r, "key lookup")
    _check_key(ctx, k)
    _read_all(ctx, r, o)
    j = _find(ctx, o, k)
    if j < 0:
        if missing_raises:
            if o[0].factory:  # type: ignore[attr-defined]
                v = _default(ctx, o[0])
                dict_set(ctx, r, k, v)
                return v
            raise ModelError(f"KeyError: {_key_text(k)}", exc="KeyError")
        return default
    return unbox(o[j + 1])


def dict_set(ctx: Ctx, r: Any, k: Any, v: Any) -> None:
    """``d[k] = v``."""
    o = _dict_of(ctx, r, "item assignment")
    _check_key(ctx, k)
    _read_all(ctx, r, o)
    j = _find(ctx, o, k)
    if j >= 0:
        ctx.set_field(r, j + 1, v)
        return
    n = len(o)
    if (n - 2) // 2 >= MAX_SEQUENCE:
        raise too_big("dict too large")
    ctx.put_object(r, (*o, None, None))
    ctx.set_field(r, n, k)
    ctx.set_field(r, n + 1, v)


def dict_delete(ctx: Ctx, r: Any, k: Any, default: Any = None, missing_raises: bool = True) -> Any:
    """``del d[k]`` and ``d.pop(k[, default])``: remove the entry, return its value."""
    o = _dict_of(ctx, r, "item deletion")
    _check_key(ctx, k)
    _read_all(ctx, r, o)
    j = _find(ctx, o, k)
    if j < 0:
        if missing_raises:
            raise ModelError(f"KeyError: {_key_text(k)}", exc="KeyError")
        return default
    if ctx.track:
        ctx.writes.extend((r, m) for m in range(j, len(o)))
    v = o[j + 1]
    ctx.put_object(r, o[:j] + o[j + 2:])
    if any(type(x) is Ref or type(x) is tuple for x in o[j:]):
        ctx.dirty = ctx.reshaped = True  # references moved or dropped
    return unbox(v)


def dict_setdefault(ctx: Ctx, r: Any, k: Any, default: Any = None) -> Any:
    o = _dict_of(ctx, r, "setdefault()")
    _check_key(ctx, k)
    _read_all(ctx, r, o)
    j = _find(ctx, o, k)
    if j >= 0:
        return unbox(o[j + 1])
    dict_set(ctx, r, k, default)
    return default


def dict_clear(ctx: Ctx, r: Any) -> None:
    o = _dict_of(ctx, r, "clear()")
    _read_all(ctx, r, o)
    if ctx.track:
        ctx.writes.extend((r, m) for m in range(2, len(o)))
    ctx.put_object(r, o[:2])
    if len(o) > 2:
        ctx.dirty = ctx.reshaped = True


def dict_keys(ctx: Ctx, r: Ref) -> tuple:
    """The keys in insertion order (``for k in d``, ``list(d)``), every slot read."""
    o = ctx.heap[r.i]
    _read_all(ctx, r, o)
    return tuple(unbox(o[j]) for j in range(2, len(o), 2))


def dict_values(ctx: Ctx, r: Ref) -> tuple:
    o = ctx.heap[r.i]
    _read_all(ctx, r, o)
    return tuple(unbox(o[j]) for j in range(3, len(o), 2))


def dict_items(ctx: Ctx, r: Ref) -> tuple:
    o = ctx.heap[r.i]
    _read_all(ctx, r, o)
    return tuple((unbox(o[j]), unbox(o[j + 1])) for j in range(2, len(o), 2))


def dict_len(ctx: Ctx, r: Ref, o: tuple) -> int:
    """The length of a dict or a set (a set has one slot per element)."""
    _read_all(ctx, r, o)
    return (len(o) - 2) // 2 if o[0].builtin == "dict" else len(o) - 2


def dict_eq(ctx: Ctx, a: Ref, oa: tuple, b: Ref, ob: tuple) -> bool:
    """Python's ``a == b`` on two dicts: the same keys, with equal values, whatever the order."""
    _read_all(ctx, a, oa)
    _read_all(ctx, b, ob)
    if len(oa) != len(ob):
        return False
    for j in range(2, len(oa), 2):
        m = _find(ctx, ob, unbox(oa[j]))
        if m < 0 or not _eq(ctx, unbox(oa[j + 1]), unbox(ob[m + 1])):
            return False
    return True


# Methods of dicts, compiled in ``ExpressionCompiler.builtin_method``: name -> (min args, max args).
DICT_METHODS: dict[str, tuple[int, int]] = {
    "get": (1, 2), "setdefault": (1, 2), "pop": (1, 2), "keys": (0, 0), "values": (0, 0), "items": (0, 0),
    "clear": (0, 0), "update": (1, 1), "copy": (0, 0),
}
# Those that change the dict.
DICT_CHANGING = {"setdefault", "pop", "clear", "update"}


def dict_method(ctx: Ctx, r: Ref, method: str, vals: list[Any], copy_cls: ClassInfo) -> Any:
    """``d.method(*vals)`` for a dict ``r``."""
    lo, hi = DICT_METHODS[method]
    if not lo <= len(vals) <= hi:
        raise ModelError(f"dict.{method}() takes {lo if lo == hi else f'{lo} to {hi}'} arguments, "
                         f"{len(vals)} given", exc="TypeError")
    if method == "get":
        return dict_get(ctx, r, vals[0], vals[1] if len(vals) > 1 else None, missing_raises=False)
    if method == "setdefault":
        return dict_setdefault(ctx, r, *vals)
    if method == "pop":
        return dict_delete(ctx, r, vals[0], vals[1] if len(vals) > 1 else None, missing_raises=len(vals) == 1)
    if method == "keys":
        return dict_keys(ctx, r)
    if method == "values":
        return dict_values(ctx, r)
    if method == "items":
        return dict_items(ctx, r)
    if method == "clear":
        return dict_clear(ctx, r)
    if method == "copy":
        if ctx.heap[r.i][0].factory:  # type: ignore[attr-defined]
            copy_cls = ctx.heap[r.i][0]  # a defaultdict's copy is one, with the same factory
        return dict_new(ctx, copy_cls, list(dict_items(ctx, r)))
    other = vals[0]
    if type(other) is not Ref or not is_dict(ctx.heap[other.i]):
        raise ModelError(f"dict.update() needs a dict, got {show(other)}")
    for k, v in dict_items(ctx, other):
        dict_set(ctx, r, k, v)
    return None


# -- sets ------------------------------------------------------------------------------------------------------
#
# A set is a heap object ``(cls, monitor, e1, e2, ...)``, its elements boxed and kept sorted by a total order
# on values (``_order_key``: None, then bools, ints, strings, tuples, then references): two sets with the same
# elements are one state, whatever order they were built in. Iteration follows that order. (CPython
# iterates a set in hash order, which for small non-negative ints is ascending too, but in general differs.)
# References cannot be ordered by their heap numbers (the canonical heap renumbers them), so they sort last,
# among themselves in insertion order: a set of objects is then as canonical as its insertion history allows.


def set_class(line: int) -> ClassInfo:
    return ClassInfo("set", builtin="set", line=line)


def is_set(o: tuple) -> bool:
    return o[0].builtin == "set"


def _order_key(v: Any) -> tuple:
    t = type(v)
    if v is None:
        return (0, 0)
    if t is bool:
        return (1, int(v))
    if t is int:
        return (2, v)
    if t is str:
        return (3, v)
    if t is tuple:
        return (4, tuple(_order_key(x) for x in v))
    return (5, 0)


def _set_of(ctx: Ctx, r: Any, what: str) -> tuple:
    if type(r) is not Ref:
        raise ModelError(f"{what} on {show(r)}")
    o = ctx.heap[r.i]
    if not is_set(o):
        raise ModelError(f"{what} on a {o[0].name} object")
    return o


def _set_find(ctx: Ctx, o: tuple, k: Any) -> int:
    deep = type(k) is tuple or type(k) is Ref
    for j in range(2, len(o)):
        x = unbox(o[j])
        if x is k or ((_eq(ctx, x, k)) if deep or type(x) is tuple or type(x) is Ref else x == k):
            return j
    return -1


def _replace(ctx: Ctx, r: Ref, o: tuple) -> None:
    ctx.put_object(r, o)


def set_new(ctx: Ctx, cls: ClassInfo, items: Any) -> Ref:
    r = ctx.alloc((cls, None))
    for x in items:
        set_add(ctx, r, x)
    return r


def set_add(ctx: Ctx, r: Any, k: Any) -> None:
    """``s.add(k)``: the element goes where the order puts it; the later ones move up (each written)."""
    o = _set_of(ctx, r, "add()")
    _check_key(ctx, k)
    _read_all(ctx, r, o)
    if _set_find(ctx, o, k) >= 0:
        return
    if len(o) - 2 >= MAX_SEQUENCE:
        raise too_big("set too large")
    key = _order_key(k)
    j = 2
    while j < len(o) and _order_key(unbox(o[j])) <= key:
        j += 1
    if ctx.track:
        ctx.writes.extend((r, m) for m in range(j, len(o) + 1))
    _replace(ctx, r, (*o[:j], None, *o[j:]))
    ctx.dirty = ctx.reshaped = True  # elements moved
    track, ctx.track = ctx.track, False  # the write is recorded above
    try:
        ctx.set_field(r, j, k)
    finally:
        ctx.track = track


def set_remove(ctx: Ctx, r: Any, k: Any, missing_raises: bool) -> None:
    """``s.remove(k)`` (KeyError when absent) and ``s.discard(k)``."""
    o = _set_of(ctx, r, "remove()")
    _check_key(ctx, k)
    _read_all(ctx, r, o)
    j = _set_find(ctx, o, k)
    if j < 0:
        if missing_raises:
            raise ModelError(f"KeyError: {_key_text(k)}", exc="KeyError")
        return
    if ctx.track:
        ctx.writes.extend((r, m) for m in range(j, len(o)))
    _replace(ctx, r, o[:j] + o[j + 1:])
    ctx.dirty = ctx.reshaped = True


def set_pop(ctx: Ctx, r: Any) -> Any:
    """``s.pop()``: removes and returns the first element in the set's order."""
    o = _set_of(ctx, r, "pop()")
    _read_all(ctx, r, o)
    if len(o) == 2:
        raise ModelError("KeyError: 'pop from an empty set'", exc="KeyError")
    x = unbox(o[2])
    set_remove(ctx, r, x, True)
    return x


def set_items(ctx: Ctx, r: Ref) -> tuple:
    o = ctx.heap[r.i]
    _read_all(ctx, r, o)
    return tuple(unbox(x) for x in o[2:])


def set_contains(ctx: Ctx, r: Ref, k: Any) -> bool:
    o = ctx.heap[r.i]
    _check_key(ctx, k)
    _read_all(ctx, r, o)
    return _set_find(ctx, o, k) >= 0


def set_eq(ctx: Ctx, a: Ref, oa: tuple, b: Ref, ob: tuple) -> bool:
    _read_all(ctx, a, oa)
    _read_all(ctx, b, ob)
    return len(oa) == len(ob) and all(_set_find(ctx, ob, unbox(x)) >= 0 for x in oa[2:])


def set_binop(ctx: Ctx, cls: ClassInfo, a: Any, b: Any, op: str) -> Ref:
    """``a | b``, ``a & b``, ``a - b`` on two sets: a new set."""
    _set_of(ctx, a, f"'{op}'")
    _set_of(ctx, b, f"'{op}'")
    xs, ys = set_items(ctx, a), set_items(ctx, b)
    ob = ctx.heap[b.i]
    if op == "|":
        items: Any = xs + ys
    elif op == "&":
        items = [x for x in xs if _set_find(ctx, ob, x) >= 0]
    else:
        items = [x for x in xs if _set_find(ctx, ob, x) < 0]
    return set_new(ctx, cls, items)


SET_METHODS: dict[str, tuple[int, int]] = {
    "add": (1, 1), "discard": (1, 1), "remove": (1, 1), "pop": (0, 0), "clear": (0, 0), "copy": (0, 0),
}
SET_CHANGING = {"add", "discard", "remove", "pop", "clear"}


def set_method(ctx: Ctx, r: Ref, method: str, vals: list[Any], copy_cls: ClassInfo) -> Any:
    lo, hi = SET_METHODS[method]
    if not lo <= len(vals) <= hi:
        raise ModelError(f"set.{method}() takes {lo if lo == hi else f'{lo} to {hi}'} arguments, "
                         f"{len(vals)} given", exc="TypeError")
    if method == "add":
        return set_add(ctx, r, vals[0])
    if method in ("discard", "remove"):
        return set_remove(ctx, r, vals[0], method == "remove")
    if method == "pop":
        return set_pop(ctx, r)
    if method == "clear":
        o = ctx.heap[r.i]
        _read_all(ctx, r, o)
        if ctx.track:
            ctx.writes.extend((r, m) for m in range(2, len(o)))
        _replace(ctx, r, o[:2])
        ctx.dirty = ctx.reshaped = True
        return None
    return set_new(ctx, copy_cls, set_items(ctx, r))


# -- list methods ----------------------------------------------------------------------------------------------
#
# A list is ``(cls, monitor, *elements)`` (``runtime_ops``: ``append``, ``pop``, indexing). The methods below
# read the length and every element they look at, and write every slot whose element changes (those after
# an inserted or removed element move, and the slot past the end changes with the length), as
# ``list_append``/``list_pop`` do.

LIST_METHODS: dict[str, tuple[int, int]] = {
    "insert": (2, 2), "remove": (1, 1), "extend": (1, 1), "index": (1, 1), "count": (1, 1), "sort": (0, 0),
    "reverse": (0, 0), "clear": (0, 0), "copy": (0, 0),
}
LIST_CHANGING = {"insert", "remove", "extend", "sort", "reverse", "clear"}


def _list_read_all(ctx: Ctx, r: Ref, o: tuple) -> None:
    if ctx.track:
        ctx.reads.extend((r, j) for j in range(2, len(o) + 1))


def _list_write(ctx: Ctx, r: Ref, o: tuple, new: tuple, start: int) -> None:
    """Replace list ``r``'s object ``o`` by ``new``, every slot from ``start`` on written."""
    if ctx.track:
        ctx.writes.extend((r, j) for j in range(start, max(len(o), len(new)) + 1))
    _replace(ctx, r, new)
    if any(type(x) is Ref or type(x) is tuple for x in o[start:]) or any(
            type(x) is Ref or type(x) is tuple for x in new[start:]):
        ctx.dirty = ctx.reshaped = True


def _sorted(ctx: Ctx, items: list[Any]) -> list[Any]:
    from functools import cmp_to_key

    from movers.lang.runtime_ops import _order
    try:
        if all(type(x) is int or type(x) is bool or type(x) is str for x in items):
            return sorted(items)
    except TypeError:
        pass
    return sorted(items, key=cmp_to_key(lambda a, b: -1 if _order(ctx, a, b, "<") else
                                        1 if _order(ctx, b, a, "<") else 0))


def list_method(ctx: Ctx, r: Ref, method: str, vals: list[Any], copy_cls: ClassInfo) -> Any:
    """``xs.method(*vals)`` for a list ``r`` (``append`` and ``pop`` are ``runtime_ops``')."""
    from movers.lang.runtime_ops import as_tuple, list_append
    lo, hi = LIST_METHODS[method]
    if not lo <= len(vals) <= hi:
        raise ModelError(f"list.{method}() takes {lo if lo == hi else f'{lo} to {hi}'} arguments, "
                         f"{len(vals)} given", exc="TypeError")
    o = ctx.heap[r.i]
    _list_read_all(ctx, r, o)
    items = [unbox(x) for x in o[2:]]
    n = len(items)
    if method in ("index", "remove", "count"):
        x = vals[0]
        hits = [k for k, y in enumerate(items) if y is x or _eq(ctx, y, x)]
        if method == "count":
            return len(hits)
        if not hits:
            if method == "index":
                raise ModelError(f"{show(x)} is not in list", exc="ValueError")
            raise ModelError("list.remove(x): x not in list", exc="ValueError")
        if method == "index":
            return hits[0]
        k = hits[0] + 2
        _list_write(ctx, r, o, o[:k] + o[k + 1:], k)
        return None
    if method == "insert":
        i, x = vals
        if type(i) is not int and type(i) is not bool:
            raise ModelError(f"'{show(i)}' object cannot be interpreted as an integer", exc="TypeError")
        k = max(0, min(n, i + n if i < 0 else i)) + 2
        if n >= MAX_SEQUENCE:
            raise too_big("list too long")
        _list_write(ctx, r, o, (*o[:k], None, *o[k:]), k)
        track, ctx.track = ctx.track, False  # recorded above
        try:
            ctx.set_field(r, k, x)
        finally:
            ctx.track = track
        return None
    if method == "extend":
        more = as_tuple(ctx, vals[0])
        if type(more) is not tuple:
            raise ModelError(f"'{show(vals[0])}' object is not iterable", exc="TypeError")
        for x in more:
            list_append(ctx, r, x)
        return None
    if method in ("sort", "reverse"):
        new = _sorted(ctx, items) if method == "sort" else items[::-1]
        _list_write(ctx, r, o, o[:2], 2)  # every slot written
        _replace(ctx, r, o[:2] + (None,) * n)
        track, ctx.track = ctx.track, False
        try:
            for k, x in enumerate(new):
                ctx.set_field(r, k + 2, x)
        finally:
            ctx.track = track
        return None
    if method == "clear":
        _list_write(ctx, r, o, o[:2], 2)
        return None
    return ctx.alloc((copy_cls, None, *o[2:]))


# The generic operations (``runtime_ops``: len, truth, ==, iteration; ``strings``: repr) reach dicts and sets
# through these, which this module installs when it is imported (it builds on both, so they cannot import it).
runtime_ops.dict_len = dict_len
runtime_ops.dict_eq = dict_eq
runtime_ops.set_eq = set_eq
runtime_ops.dict_keys = dict_keys
runtime_ops.set_items = set_items
strings.read_dict_items = dict_items
strings.read_set_items = set_items
