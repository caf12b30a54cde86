"""Thread symmetry (``--symmetry threads``): states that differ only in which thread is which are one.

Bogor's base configuration has process symmetry (Dwyer et al., papers/002, Table 1 column B). In movers a
thread is a number, its index in the state's thread tuple, and that number also appears in the heap: as the
owner of a lock, an RLock or a monitor, in the wait sets of conditions and monitors, and as the ``_tid`` of
a Thread object. If the program can never *observe* a thread's number, renaming the threads (permuting the
thread tuple and renaming every number in the heap the same way) maps the state graph onto itself: every
step of thread i in one state is the step of thread π(i) in the renamed one, with the renamed successor.
(New threads get the next free number in both.) Assertions, deadlocks and runtime errors are then the same
up to renaming, so the search needs to visit one state per orbit: it explores the states it meets as they
are (so counterexamples are real runs), but remembers each by a *representative* of its orbit
(``representative``), and skips a state whose representative it has seen.

**When the number is observable** (``symmetry_problem``, a static check of the model's source; when in
doubt, no symmetry): ``tid()`` returns it; reading ``.owner`` (of a lock, an RLock, a condition or a
monitor) returns it; declared exclusive access predicates (``exclusive(x, lambda t: ...)``) are functions
of it, and so are some reductions' classifications (``optimistic``'s first thread to touch a location owns
it), so symmetry runs only with the reductions that declare it (``Capabilities.symmetry``: ``none``,
``static-por`` and the ample sets of Dwyer et al., whose conditions never mention a thread's number; the
search asks their cycle proviso about orbits, Emerson, Jha & Peled and Bošnački, Dams & Holenderski,
docs/reductions.md "Symmetry with ample sets"); and the atomicity instrumentation keeps per-thread phases,
so it is refused there too. Thread numbers in messages (a runtime error, a deadlock) are not the program
observing them: a violation found is reported as the run that found it.

**The representative**: the threads sorted by the number of their interned part (the store numbers each
distinct thread tuple once, in the order the search meets them), except threads whose Thread object the
heap holds (they are named by it, and keep their places), the heap renamed to match, and then put back in
canonical order (``state.canonical``: objects that only threads' locals reach are numbered in
thread order). Any such function is sound as long as it returns a state that is a renaming of the one it
is given: two states with the same representative are renamings of each other. It is not always the same
for every state of an orbit (two threads with equal frames but different locks held keep their order;
frames that hold references to thread-local objects are numbered by thread order before sorting): then
fewer states are merged, never wrong ones.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from movers.ir.program import BARRIER, CONDITION, LOCK, RLOCK, Program
from movers.semantics.state import State, canonical, globals_cover

# Calls that let a thread see its own number (lang/threadinfo.py).
_SELF_AWARE = frozenset({"current_thread", "get_ident", "local"})


def symmetry_problem(program: Program) -> str | None:
    """Why renaming threads could change what the program does (module docstring), or None."""
    try:
        tree = ast.parse(program.source)
    except SyntaxError:  # compiled already: cannot happen, but then no symmetry
        return "the model's source cannot be read again"
    for node in ast.walk(tree):
        where = f"{program.filename}:{getattr(node, 'lineno', 0)}:{getattr(node, 'col_offset', 0) + 1}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "tid":
            return f"{where}: tid() lets a thread see its own number"
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in _SELF_AWARE:
            return f"{where}: current_thread(), get_ident() and local() let a thread see its own number"
        if isinstance(node, ast.keyword) and node.arg == "daemon":
            return f"{where}: daemon threads are recorded by their numbers"
        if (isinstance(node, ast.Attribute) and node.attr == "name" and isinstance(node.ctx, ast.Load)
                and "Thread" in program.source):
            return f"{where}: a thread's default name ('Thread-N') shows its number"
        if isinstance(node, ast.Attribute) and node.attr in ("owner", "locked"):
            return f"{where}: reading '.owner' lets a thread see another's number"
    if program.exclusives:
        d = program.exclusives[0]
        return f"{program.filename}:{d.line}: declared exclusive access predicates are functions of the thread"
    return None


def _renamer(pi: list[int]) -> Callable[[Any], Any]:
    n = len(pi)

    def rename(x: Any) -> Any:
        return pi[x] if type(x) is int and 0 <= x < n else x

    return rename


def rename_heap(heap: tuple, pi: list[int]) -> tuple:
    """The heap with every thread number t replaced by pi[t] (lock, RLock and monitor owners, wait sets, the
    ``_tid`` of Thread objects); wait sets stay sorted, as the semantics keeps them."""
    rename = _renamer(pi)
    out = list(heap)
    for k, o in enumerate(heap):
        cls, mon = o[0], o[1]
        new = o
        if mon is not None:
            new = (cls, (rename(mon[0]), mon[1], tuple(sorted(map(rename, mon[2])))), *o[2:])
        if cls is LOCK or cls is RLOCK or cls.is_thread:
            if type(new[2]) is int:
                new = (*new[:2], rename(new[2]), *new[3:])
        elif (cls is CONDITION or cls is BARRIER) and new[3]:  # their waiters
            new = (*new[:3], tuple(sorted(map(rename, new[3]))), *new[4:])
        if new is not o:
            out[k] = new
    return tuple(out)


def representative(state: State, number: Callable[[Any], int]) -> State:
    """The state remembered for ``state``'s orbit (module docstring). ``number(part)``: the store's number of
    a thread tuple (interning it if new)."""
    g, heap, threads = state[0], state[1], state[2]
    # A thread whose Thread object the heap holds is named by it (``t0.join()``, a list of workers): renamed,
    # the object would say another number, a state no run reaches. Such threads keep their places, which is
    # still a renaming (of the others), and spares the sort where every thread is named.
    named = {o[2] for o in heap if o[0].is_thread and type(o[2]) is int} if heap else ()
    free = [i for i in range(len(threads)) if i not in named]
    if len(free) < 2:
        return state
    nums = [number(threads[i]) for i in free]
    ranked = [free[j] for j in sorted(range(len(free)), key=nums.__getitem__)]
    if ranked == free:
        return state
    pi = list(range(len(threads)))
    for new, old in zip(free, ranked, strict=True):
        pi[old] = new
    order = list(range(len(threads)))
    for new, old in zip(free, ranked, strict=True):
        order[new] = old
    renamed = (g, rename_heap(heap, pi) if heap else heap, tuple(threads[old] for old in order))
    if not heap or globals_cover(g, heap):
        return renamed  # the numbering of the heap does not depend on the order of the threads
    return canonical(renamed)


__all__ = ["rename_heap", "representative", "symmetry_problem"]
