"""Runtime operations on ``collections.deque``, as CPython's C deque (``Modules/_collectionsmodule.c``) behaves.

A deque is a heap object ``(cls, monitor, maxlen, stamp, *elements)``, its elements boxed like a list's, from
the left end to the right; each allocation site has its own class (``deque_class``), as lists do. ``maxlen`` is
an int or None and never changes (the class's one field: ``d.maxlen`` reads it as any field). Every method is C
code run under the GIL, so each one is one access; its dynamic Effect over-approximates as a dict's does
(``lang/containers.py``): it reads every slot and the slot past the end (so it depends on every change of the
length), and a change writes every slot from the first one that changes to the slot past the end.

``stamp`` is how iteration sees a mutation. CPython's deque counts its mutations (``deque->state``: every
append, pop, extend, rotate, clear, remove, insert and ``del d[i]``; not ``d[i] = v``, ``reverse`` or the
reading methods) and an iterator raises ``RuntimeError: deque mutated during iteration`` when the count moved
since it was made, even after its last item. An unbounded counter would make every producer/consumer loop an
infinite state space, so the state holds only what an iterator can observe: ``iter(d)`` stores a fresh token
object in ``stamp`` (or shares the one there: iterators made with no mutation in between are invalidated
together), every mutation drops it (``stamp = None``), and ``next`` checks that ``stamp`` is still its token.
Storing a token when there is none is not recorded as a write: it changes nothing another step can observe
(an iterator whose token was dropped fails whatever stamp is), and two ``iter(d)`` give the same state in
either order; a mutation conflicts with ``iter(d)`` through the elements anyway.
"""

from __future__ import annotations

from typing import Any

from movers.ir.machine import Ctx, ModelError
from movers.ir.program import ClassInfo, Ref, box, unbox
from movers.lang import runtime_ops, strings
from movers.lang.runtime_ops import MAX_SEQUENCE, _eq, too_big

MAXLEN, STAMP, FIRST = 2, 3, 4
# What CPython's messages call the type.
NAME = "collections.deque"
# The marker of a deque iterator's state in a for loop's hidden slot, ``(ITER, deque, length, token)`` (as
# ``iteration.iter_next`` tells a dict's), and the class of the tokens.
ITER = ClassInfo("deque_iterator", builtin="deque_iterator")
TOKEN = ClassInfo("deque_iterator", builtin="deque_iterator")


def deque_class(line: int) -> ClassInfo:
    cls = ClassInfo(NAME, ["maxlen"], builtin="deque", line=line)
    cls.finish()
    return cls


def is_deque(o: tuple) -> bool:
    return o[0].builtin == "deque"


def _read_all(ctx: Ctx, r: Ref, o: tuple) -> None:
    if ctx.track:
        ctx.reads.extend((r, j) for j in range(STAMP, len(o) + 1))


def _store(ctx: Ctx, r: Ref, o: tuple, items: tuple | list, mutates: bool = True) -> None:
    """Replace deque ``r``'s elements by ``items`` (unboxed values); a mutation in CPython's sense (``mutates``)
    drops the iterators' token."""
    new = [box(x) if type(x) is bool or type(x) is tuple else x for x in items]
    old = o[FIRST:]
    start = next((k for k, (x, y) in enumerate(zip(old, new, strict=False)) if x is not y and x != y or
                  type(x) is not type(y)), min(len(old), len(new)))
    stamp = None if mutates else o[STAMP]
    if ctx.track:
        if len(old) != len(new) or start < len(old):
            ctx.writes.extend((r, FIRST + k) for k in range(start, max(len(old), len(new)) + 1))
        if stamp is not o[STAMP]:
            ctx.writes.append((r, STAMP))
    ctx.put_object(r, (*o[:STAMP], stamp, *new))
    if stamp is not o[STAMP] or any(type(x) is Ref or type(x) is tuple for x in old[start:]) or any(
            type(x) is Ref or type(x) is tuple for x in new[start:]):
        ctx.dirty = ctx.reshaped = True  # references stored, moved or dropped


def _maxlen_of(v: Any) -> int | None:
    if v is None:
        return None
    if type(v) is not int and type(v) is not bool:
        raise ModelError("an integer is required", exc="TypeError")
    if v < 0:
        raise ModelError("maxlen must be non-negative", exc="ValueError")
    return int(v)


def _trimmed(items: tuple | list, maxlen: int | None, left: bool = False) -> tuple | list:
    """A bounded deque keeps its last ``maxlen`` items (its first, after appends on the left)."""
    if maxlen is None or len(items) <= maxlen:
        return items
    return items[:maxlen] if left else items[len(items) - maxlen:]


def _bounded(n: int) -> None:
    if n > MAX_SEQUENCE:
        raise too_big("deque too long")


def deque_new(ctx: Ctx, cls: ClassInfo, items: tuple, maxlen: Any = None) -> Ref:
    """``deque(iterable, maxlen)``: the items (already read by the caller) in order, the last ``maxlen`` kept."""
    n = _maxlen_of(maxlen)
    items = tuple(_trimmed(items, n))
    _bounded(len(items))
    return ctx.alloc((cls, None, n, None, *items))


def items(ctx: Ctx, r: Ref) -> tuple:
    """Every element, from the left, each read (``list(d)``, ``x in d``, ``sum(d)``, ``str(d)``)."""
    o = ctx.heap[r.i]
    _read_all(ctx, r, o)
    return tuple([unbox(x) for x in o[FIRST:]])


def length(ctx: Ctx, r: Ref, o: tuple) -> int:
    _read_all(ctx, r, o)
    return len(o) - FIRST


def equal(ctx: Ctx, a: Ref, oa: tuple, b: Ref, ob: tuple) -> bool:
    """``a == b`` on two deques: the same length, then equal elements in order (``maxlen`` plays no part)."""
    _read_all(ctx, a, oa)
    _read_all(ctx, b, ob)
    if len(oa) != len(ob):
        return False
    return all(x is y or _eq(ctx, unbox(x), unbox(y)) for x, y in zip(oa[FIRST:], ob[FIRST:], strict=True))


def _position(o: tuple, i: Any) -> int:
    """The slot of ``d[i]``: CPython's messages for an index that is no int, or out of range."""
    if type(i) is not int and type(i) is not bool:
        raise ModelError(f"sequence index must be integer, not '{strings.type_name(i)}'", exc="TypeError")
    n = len(o) - FIRST
    k = i + n if i < 0 else int(i)
    if not 0 <= k < n:
        raise ModelError("deque index out of range", exc="IndexError")
    return FIRST + k


def get_item(ctx: Ctx, r: Ref, i: Any) -> Any:
    """``d[i]``."""
    o = ctx.heap[r.i]
    _read_all(ctx, r, o)
    return unbox(o[_position(o, i)])


def set_item(ctx: Ctx, r: Ref, i: Any, v: Any) -> None:
    """``d[i] = v``: no mutation for an iterator (CPython's ``deque_ass_item`` leaves ``state`` alone)."""
    o = ctx.heap[r.i]
    _read_all(ctx, r, o)
    j = _position(o, i)
    ctx.set_field(r, j, v)


def del_item(ctx: Ctx, r: Ref, i: Any) -> None:
    """``del d[i]``."""
    o = ctx.heap[r.i]
    _read_all(ctx, r, o)
    j = _position(o, i)
    xs = [unbox(x) for x in o[FIRST:]]
    del xs[j - FIRST]
    _store(ctx, r, o, xs)


def _iterable(ctx: Ctx, v: Any) -> tuple:
    from movers.lang.runtime_ops import as_tuple
    got = as_tuple(ctx, v)
    if type(got) is str:
        return tuple(got)
    if type(got) is not tuple:
        raise ModelError(f"'{strings.type_name(v, ctx)}' object is not iterable", exc="TypeError")
    return got


def _int(v: Any) -> int:
    if type(v) is not int and type(v) is not bool:
        raise ModelError(f"'{strings.type_name(v)}' object cannot be interpreted as an integer", exc="TypeError")
    return int(v)


# name -> (min args, max args), as CPython's deque methods take them.
DEQUE_METHODS: dict[str, tuple[int, int]] = {
    "append": (1, 1), "appendleft": (1, 1), "pop": (0, 0), "popleft": (0, 0), "extend": (1, 1),
    "extendleft": (1, 1), "clear": (0, 0), "remove": (1, 1), "count": (1, 1), "index": (1, 3),
    "insert": (2, 2), "rotate": (0, 1), "reverse": (0, 0), "copy": (0, 0),
}
# Those that change the deque.
DEQUE_CHANGING = {"append", "appendleft", "pop", "popleft", "extend", "extendleft", "clear", "remove", "insert",
                  "rotate", "reverse"}
# Deque-only method names (the others are lists' or dicts' too).
DEQUE_ONLY = {"appendleft", "popleft", "extendleft", "rotate"}


def _arity(method: str, n: int) -> None:
    lo, hi = DEQUE_METHODS[method]
    if lo <= n <= hi:
        return
    if lo == hi == 0:
        raise ModelError(f"deque.{method}() takes no arguments ({n} given)", exc="TypeError")
    if lo == hi == 1:
        raise ModelError(f"deque.{method}() takes exactly one argument ({n} given)", exc="TypeError")
    if method == "rotate":
        raise ModelError(f"deque.rotate expected at most 1 argument, got {n}", exc="TypeError")
    if lo == hi:
        raise ModelError(f"{method}() takes exactly {lo} arguments ({n} given)", exc="TypeError")
    raise ModelError(f"{method}() takes {'at least' if n < lo else 'at most'} {lo if n < lo else hi} "
                     f"argument{'s' if (lo if n < lo else hi) != 1 else ''} ({n} given)", exc="TypeError")


def method(ctx: Ctx, r: Ref, name: str, vals: list[Any], copy_cls: ClassInfo) -> Any:
    """``d.name(*vals)`` for a deque ``r``: one access."""
    _arity(name, len(vals))
    o = ctx.heap[r.i]
    _read_all(ctx, r, o)
    xs = [unbox(x) for x in o[FIRST:]]
    n = len(xs)
    maxlen = o[MAXLEN]
    if name in ("append", "appendleft"):
        if maxlen == 0:
            _store(ctx, r, o, [])  # CPython appends and trims: nothing kept, but a mutation for iterators
            return None
        _bounded(n + 1)
        new = [*xs, vals[0]] if name == "append" else [vals[0], *xs]
        _store(ctx, r, o, _trimmed(new, maxlen, left=name == "appendleft"))
        return None
    if name in ("pop", "popleft"):
        if not n:
            raise ModelError("pop from an empty deque", exc="IndexError")
        x = xs.pop() if name == "pop" else xs.pop(0)
        _store(ctx, r, o, xs)
        return x
    if name in ("extend", "extendleft"):
        more = _iterable(ctx, vals[0])
        if not more or maxlen == 0:
            return None
        _bounded(n + len(more))
        new = [*xs, *more] if name == "extend" else [*reversed(more), *xs]
        _store(ctx, r, o, _trimmed(new, maxlen, left=name == "extendleft"))
        return None
    if name == "clear":
        if n:
            _store(ctx, r, o, [])
        return None
    if name in ("remove", "count", "index"):
        x = vals[0]
        lo, hi = 0, n
        if name == "index" and len(vals) > 1:
            lo, hi = (_int(v) for v in (*vals[1:], n)[:2])
            lo, hi = max(0, lo + n if lo < 0 else lo), max(0, hi + n if hi < 0 else hi)
        hits = [k for k in range(lo, min(hi, n)) if xs[k] is x or _eq(ctx, xs[k], x)]
        if name == "count":
            return len(hits)
        if not hits:
            raise ModelError(f"{strings.to_repr(ctx, x)} is not in deque", exc="ValueError")
        if name == "index":
            return hits[0]
        del xs[hits[0]]
        _store(ctx, r, o, xs)
        return None
    if name == "insert":
        i, x = _int(vals[0]), vals[1]
        if maxlen is not None and n >= maxlen:
            raise ModelError("deque already at its maximum size", exc="IndexError")
        _bounded(n + 1)
        xs.insert(i, x)
        _store(ctx, r, o, xs)
        return None
    if name == "rotate":
        k = _int(vals[0]) if vals else 1
        if n > 1:
            k %= n
            _store(ctx, r, o, xs[n - k:] + xs[:n - k])  # a mutation even when k is a multiple of n
        return None
    if name == "reverse":
        _store(ctx, r, o, xs[::-1], mutates=False)
        return None
    return ctx.alloc((copy_cls, None, maxlen, None, *o[FIRST:]))


def arithmetic(ctx: Ctx, cls: ClassInfo, r: Ref, other: Any, add: bool) -> Ref:
    """``d + e`` of two deques and ``d * n``: a new deque with ``d``'s maxlen, as CPython makes it."""
    o = ctx.heap[r.i]
    if add:
        if type(other) is not Ref or not is_deque(ctx.heap[other.i]):
            raise ModelError(f'can only concatenate deque (not "{strings.type_name(other, ctx)}") to deque',
                             exc="TypeError")
        new = items(ctx, r) + items(ctx, other)
    else:
        if type(other) is not int and type(other) is not bool:
            raise ModelError(f"can't multiply sequence by non-int of type '{strings.type_name(other, ctx)}'",
                             exc="TypeError")
        xs = items(ctx, r)
        if len(xs) * other > MAX_SEQUENCE:
            raise too_big("deque too long")
        new = xs * other
    return deque_new(ctx, cls, new, o[MAXLEN])


def in_place(add: bool) -> ModelError:
    """``d += xs`` and ``d *= n`` change the deque in place in CPython; movers does not model that yet."""
    return ModelError(f"'{'+=' if add else '*='}' on a deque (in place) is not supported yet; write "
                      f"{'d.extend(xs)' if add else 'the items with d.extend(…)'}")


# -- iteration -------------------------------------------------------------------------------------------------


def iter_start(ctx: Ctx, r: Ref) -> tuple:
    """``iter(d)``: ``(ITER, d, its length, the token)``; the token is stored in the deque if none is there."""
    o = ctx.heap[r.i]
    _read_all(ctx, r, o)
    token = o[STAMP]
    if token is None:
        token = ctx.alloc((TOKEN, None))
        ctx.put_object(r, (*o[:STAMP], token, *o[FIRST:]))  # not a write: see the module docstring
    return (ITER, r, len(o) - FIRST, token)


def iter_next(ctx: Ctx, it: tuple, i: int, reverse: bool = False) -> Any:
    """The ``i``-th item of the iterator ``it`` (from the right when ``reverse``), or None past the end:
    ``RuntimeError`` first when the deque was mutated since ``it`` was made, as ``dequeiter_next`` checks."""
    r, n, token = it[1], it[2], it[3]
    o = ctx.heap[r.i]
    if ctx.track:
        ctx.reads.append((r, STAMP))
    if o[STAMP] is not token:
        raise ModelError("deque mutated during iteration", exc="RuntimeError")
    if i >= n:
        return None
    k = FIRST + (n - 1 - i if reverse else i)
    if ctx.track:
        ctx.reads.append((r, k))
    return (unbox(o[k]),)


def text(ctx: Ctx, r: Ref, o: tuple, seen: frozenset[int]) -> str:
    """``repr(d)``: ``deque([1, 2])``, ``deque([1], maxlen=3)``; a deque inside itself is ``[...]``."""
    if r.i in seen:
        return "[...]"
    inner = strings._joined(ctx, items(ctx, r), seen | {r.i})
    return f"deque([{inner}])" if o[MAXLEN] is None else f"deque([{inner}], maxlen={o[MAXLEN]})"


# The generic operations (``runtime_ops``: len, truth, ==, ``in``, iteration; ``strings``: repr) reach deques
# through these, installed when this module is imported (it builds on both, so they cannot import it).
runtime_ops.deque_len = length
runtime_ops.deque_eq = equal
runtime_ops.deque_items = items
strings.deque_text = text
strings.read_deque = items
