"""States: immutable, hashable, canonical.

A state is the tuple ``(globals, heap, threads)``:

- ``globals``: a tuple of values, one per global slot;
- ``heap``: a tuple of objects, each a tuple ``(class, monitor, *fields)`` (see ``ir.program``);
- ``threads``: a tuple indexed by thread id; a thread is a tuple of frames, bottom first, and ``()`` once it
  has terminated; a frame is ``(code, pc, *locals)``.

Values are ints, bools, None, tuples of values, ``Ref`` and ``Func``; all compare exactly, so Python's own
tuple hashing and equality are the state store's. Successors share every unchanged part with their parent.

The heap is canonical: objects are numbered in the order a breadth-first walk first meets them, first from
the globals (in slot order), then from each thread's frames (bottom first, locals in slot order), and
objects the walk does not meet are garbage and dropped. Two states that differ only in allocation order or
garbage are therefore one state (heap symmetry, docs/language.md 8.6): any fixed walk order is a canonical
labelling, so which one is used changes object numbers, never which states are one.

The globals come first so that the walk can be skipped where it cannot change anything. It runs after steps
that changed the heap's shape (an allocation, a reference stored into or overwritten in a global or a field:
``Ctx.reshaped``). A step that only moved references among frames (a local assigned an object, a call or a
return with references) changes nothing when every object is reachable from the globals before it
(``globals_cover``): the walk from the globals, which numbers every object, is the same after the step, and
nothing becomes garbage. That is the common case (objects hang off global lists), and it saved three walks
in four (benchmarks/README.md).
"""

from __future__ import annotations

from typing import Any

from movers.ir.program import Ref, ref

State = tuple[tuple, tuple, tuple]


def canonical(state: State) -> State:
    return canonical_order(state)[0]


def canonical_order(state: State) -> tuple[State, list[int] | None]:
    """The canonical state, and how it renumbered the heap: object k of the result is object ``order[k]`` of
    ``state`` (objects missing from ``order`` were garbage); None when nothing moved."""
    g, heap, threads = state
    if not heap:
        return state, None
    # Module-level helpers, not nested recursive functions: a closure that calls itself is a reference cycle,
    # and the search runs with the cycle collector off, so every call would leak its closures (about 1 KB a
    # state on the replicated workers).
    index: dict[int, int] = {}
    order: list[int] = []
    for v in g:
        _mark(v, index, order)
    k = _walk(heap, 0, index, order)
    for th in threads:
        for frame in th:
            for v in frame[2:]:
                _mark(v, index, order)
    _walk(heap, k, index, order)
    if len(order) == len(heap) and all(i == j for i, j in enumerate(order)):
        return state, None
    new_heap = tuple(heap[i][:2] + tuple([_remap(x, index) for x in heap[i][2:]]) for i in order)
    new_g = tuple([_remap(x, index) for x in g])
    new_threads = tuple(tuple(f[:2] + tuple([_remap(x, index) for x in f[2:]]) for f in th) for th in threads)
    return (new_g, new_heap, new_threads), order


def _mark(v: Any, index: dict[int, int], order: list[int]) -> None:
    t = type(v)
    if t is Ref:
        if v.i not in index:
            index[v.i] = len(order)
            order.append(v.i)
    elif t is tuple:
        for x in v:
            _mark(x, index, order)


def _walk(heap: tuple, k: int, index: dict[int, int], order: list[int]) -> int:
    while k < len(order):
        for v in heap[order[k]][2:]:
            t = type(v)
            if t is Ref or t is tuple:
                _mark(v, index, order)
        k += 1
    return k


def _remap(v: Any, index: dict[int, int]) -> Any:
    t = type(v)
    if t is Ref:
        return ref(index[v.i])
    if t is tuple:
        return tuple([_remap(x, index) for x in v])
    return v


def globals_cover(g: tuple, heap: tuple | list) -> bool:
    """Whether every heap object is reachable from the globals (the case where steps that only move references
    among frames need no canonicalisation; see the module docstring)."""
    return not heap or len(reachable((g, heap, ()), list(g))) == len(heap)


# ``globals_cover``'s answers by value: it depends only on where the references are, and a reference equals
# only itself (interned ``Ref``s, identity equality), so equal (globals, heap) pairs get the same answer. A
# step that moves no reference (a lock's owner, a counter) makes a new heap with an old one's answer: hashing
# the pair runs in C, the walk in Python. Cleared when full: a cache, never a store.
_covers: dict[tuple[tuple, tuple], bool] = {}
_COVERS_MAX = 1 << 16


def forget_covers() -> None:
    """Drop the memo: its keys hold states, whose objects hold their classes and through them a whole compiled
    program, so a process that checks many models (a test run) would keep thousands of them alive."""
    _covers.clear()


def globals_cover_memo(g: tuple, heap: tuple) -> bool:
    """``globals_cover``, remembered by value."""
    key = (g, heap)
    try:
        return _covers[key]
    except KeyError:
        pass
    except TypeError:  # something unhashable in the state: no memo
        return globals_cover(g, heap)
    covered = globals_cover(g, heap)
    if len(_covers) >= _COVERS_MAX:
        _covers.clear()
    _covers[key] = covered
    return covered


def reachable(state: tuple[Any, ...], roots: list[Any], avoid: set[int] | frozenset[int] = frozenset()) -> set[int]:
    """Heap objects (by index) reachable from the given root values, along paths through no object of
    ``avoid`` (Dwyer et al.'s domination: what a thread reaches without passing a locked object)."""
    heap = state[1]
    seen: set[int] = set(avoid)
    work = list(roots)
    while work:
        v = work.pop()
        t = type(v)
        if t is Ref:
            if v.i not in seen:
                seen.add(v.i)
                work.extend(heap[v.i][2:])
        elif t is tuple:
            work.extend(v)
    return seen - avoid if avoid else seen
