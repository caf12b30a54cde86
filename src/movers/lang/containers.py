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
from movers.lang.runtime_ops import MAX_SEQUENCE, _eq, too_big


def dict_class(line: int) -> ClassInfo:
    """The dict class of one allocation site."""
    return ClassInfo("dict", builtin="dict", line=line)


def is_dict(o: tuple) -> bool:
    return o[0].builtin == "dict"


def _check_key(ctx: Ctx, k: Any) -> None:
    if type(k) is Ref:
        cls = ctx.heap[k.i][0]
        if cls.is_list or cls.builtin == "dict":
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
    heap = ctx.heap
    if type(heap) is tuple:
        heap = ctx.heap = list(heap)
    heap[r.i] = (*o, None, None)
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
    heap = ctx.heap
    if type(heap) is tuple:
        heap = ctx.heap = list(heap)
    heap[r.i] = o[:j] + o[j + 2:]
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
    heap = ctx.heap
    if type(heap) is tuple:
        heap = ctx.heap = list(heap)
    heap[r.i] = o[:2]
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
    _read_all(ctx, r, o)
    return (len(o) - 2) // 2


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
        return dict_new(ctx, copy_cls, list(dict_items(ctx, r)))
    other = vals[0]
    if type(other) is not Ref or not is_dict(ctx.heap[other.i]):
        raise ModelError(f"dict.update() needs a dict, got {show(other)}")
    for k, v in dict_items(ctx, other):
        dict_set(ctx, r, k, v)
    return None
