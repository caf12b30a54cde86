"""What a thread may know about itself: ``threading.current_thread()``, ``get_ident()`` and ``local()``.

CPython gives every thread a Thread object (``current_thread()``), a number unique among the live threads
(``get_ident()``) and, through ``threading.local()``, attributes that each thread sees on its own.

movers keeps no extra state for them:

- ``current_thread()`` is the Thread object the running thread was started from (the heap object whose
  ``_tid`` is the thread's id: a read of that field), or ``MAIN_THREAD``, an immutable value standing for the
  module's own thread (``MainThread``). Its ``.name`` is the ``name=`` given to ``Thread``, else CPython's
  ``Thread-N (target)`` (``Thread-N`` for a subclass), with N the thread's number among the threads started
  from Thread objects, from 1: CPython counts the unnamed Thread objects as they are created, movers the
  threads as they are started, so the two agree when the threads are started in the order they were created
  and none of them is named.
- ``get_ident()`` is the thread's number in movers; the main thread's is -1, before and after it starts
  threads (its number in movers changes when it becomes a thread of its own: system.py).
- a ``local()`` object holds one field, ``$data``: a sorted tuple of ``(ident, name, value)``, so that the
  attributes of one thread are in the state keyed by that thread, and two states with the same attributes
  per thread are one state. Every access to one reads or writes ``$data`` (an over-approximation: no other
  thread can see the entries, but the reductions need not know that).

All three let a thread see its own number, so a model using them gets no thread symmetry
(semantics/symmetry.py).
"""

from __future__ import annotations

from typing import Any

from movers.ir.machine import Ctx, ModelError, show
from movers.ir.program import LOCK, RLOCK, THREAD, ClassInfo, Ref, box, ref, unbox
from movers.lang import runtime_ops

LOCAL = ClassInfo("local", ["$data"], builtin="local")
LOCAL.finish()
DATA = 2  # the index of ``$data`` in a local object
OWNER = LOCK.field_index["owner"]
# The hidden fields of a Thread subclass's objects when some ``super().__init__(name=..., daemon=...)`` may set
# them (lang/compiler.py); None until set.
SUBCLASS_FIELDS = ("$name", "$daemon")
# The calls that let a thread see its own number (symmetry.py).
SELF_AWARE = frozenset({"current_thread", "get_ident", "local"})


class _MainThread:
    """``current_thread()`` in the module's own thread: it has no Thread object in the model."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<_MainThread(MainThread)>"

    def __reduce__(self) -> str:
        return "MAIN_THREAD"


MAIN_THREAD = _MainThread()
_UNKNOWN = object()


def is_main(ctx: Ctx) -> bool:
    """Whether ctx runs the module's code: before its first ``start()`` (no thread id yet) or after (its
    bottom frame is still the module's)."""
    if ctx.tid < 0:
        return True
    bottom = ctx.frames[0][0] if ctx.frames else ctx.code
    return bottom is not None and bottom.name == "<module>"


def ident(ctx: Ctx) -> int:
    return -1 if is_main(ctx) else ctx.tid


def current_thread(ctx: Ctx) -> Any:
    if is_main(ctx):
        return MAIN_THREAD
    tid = ctx.tid
    for i, o in enumerate(ctx.heap):
        if o[0].is_thread and o[2] == tid:
            r = ref(i)
            if ctx.track:
                ctx.reads.append((r, 2))
            return r
    raise ModelError("current_thread() in a thread whose Thread object nothing refers to any more is not "
                     "supported: keep a reference to the Thread (in a list or a variable)")


def thread_name(ctx: Ctx, r: Any) -> str:
    """``t.name`` of a Thread object (module docstring)."""
    if r is MAIN_THREAD:
        return "MainThread"
    o = ctx.heap[r.i]
    if ctx.track:
        ctx.reads.append((r, 2))
        if o[0] is THREAD:
            ctx.reads.append((r, 3))
    given = getattr(o[3], "thread_name", None) if o[0] is THREAD else None
    if given is not None:
        return given
    if o[0] is THREAD:
        args = o[4]
        if len(args) >= 2 and type(args[-2]) is str and args[-2] == runtime_ops.THREAD_NAME:
            if ctx.track:
                ctx.reads.append((r, 4))
            return args[-1]
    k = o[0].field_index.get("$name")  # a subclass's ``super().__init__(name=...)``
    if k is not None and o[k] is not None:
        if ctx.track:
            ctx.reads.append((r, k))
        return o[k]
    if o[2] is None:
        raise ModelError("the name of a thread not started yet is not modelled: movers numbers threads as "
                         "they start; give Thread(name=...)")
    n = _number(ctx, o[2])
    if o[0] is THREAD:
        target = o[3]
        label = getattr(target, "name", None) or getattr(getattr(target, "code", None), "name", None)
        if label is None and type(target) is tuple and target and hasattr(target[0], "name"):
            label = target[0].name
        return f"Thread-{n} ({label})" if label else f"Thread-{n}"
    return f"Thread-{n}"


def _number(ctx: Ctx, tid: int) -> int:
    """CPython's N of thread ``tid``: its number among the threads started from Thread objects, from 1; the
    main thread has a number in movers (the next free one when it first waits: ``main_tid``, which
    semantics/system.py records on every code of the program) but no Thread object."""
    main = getattr(ctx.code, "main_tid", _UNKNOWN)
    if main is _UNKNOWN:  # the module's code before it becomes a thread: every thread so far started there
        return tid + 1
    return tid + 1 if main is None or tid < main else tid  # type: ignore[operator]  # an int here


def thread_init(ctx: Ctx, r: Ref, name: Any, daemon: Any) -> None:
    """``super().__init__(name=..., daemon=...)`` in a Thread subclass: CPython keeps ``str(name)``."""
    if name is not None:
        if type(name) is not str:
            raise ModelError(f"Thread name {show(name)} is not a string: give a str", exc="TypeError")
        ctx.set_field(r, r_index(ctx, r, "$name"), name)
    if daemon is not None:
        ctx.set_field(r, r_index(ctx, r, "$daemon"), bool(daemon))


def r_index(ctx: Ctx, r: Ref, field: str) -> int:
    return ctx.heap[r.i][0].field_index[field]


def lock_locked(ctx: Ctx, r: Any) -> bool:
    """``m.locked()`` of a Lock (CPython 3.11's RLock has no ``locked``): whether some thread holds it."""
    if type(r) is not Ref or ctx.heap[r.i][0] is not LOCK:
        what = "'_thread.RLock'" if type(r) is Ref and ctx.heap[r.i][0] is RLOCK else show(r)
        raise ModelError(f"{what} object has no attribute 'locked'", exc="AttributeError")
    if ctx.track:
        ctx.reads.append((r, OWNER))  # as reading m.owner records it
    return ctx.heap[r.i][OWNER] is not None


def new_local(ctx: Ctx) -> Ref:
    return ctx.alloc((LOCAL, None, ()))


def local_get(ctx: Ctx, r: Ref, name: str) -> Any:
    me = ident(ctx)
    if ctx.track:
        ctx.reads.append((r, DATA))
    for t, n, v in ctx.heap[r.i][DATA]:
        if t == me and n == name:
            return unbox(v)
    raise ModelError(f"'_thread._local' object has no attribute '{name}'", exc="AttributeError")


def local_set(ctx: Ctx, r: Ref, name: str, v: Any) -> None:
    me = ident(ctx)
    if ctx.track:
        ctx.reads.append((r, DATA))
    entries = [e for e in ctx.heap[r.i][DATA] if e[0] != me or e[1] != name]
    entries.append((me, name, box(v)))
    entries.sort(key=lambda e: (e[0], e[1]))
    ctx.set_field(r, DATA, tuple(entries))


def store_attribute(ctx: Ctx, r: Ref, name: str, v: Any) -> None:
    """``obj.name = v``: a model object's field, or the running thread's attribute of a local()."""
    if ctx.heap[r.i][0] is LOCAL:
        local_set(ctx, r, name, v)
    else:
        ctx.set_field(r, runtime_ops.writable_field(ctx.heap[r.i], name), v)


def store_facts(facts: Any, has_local: bool) -> None:
    """An attribute store in a model with local() objects may be one: it reads and writes their ``$data``."""
    if has_local:
        facts.fields_read.add("$data")
        facts.fields_written.add("$data")


__all__ = ["DATA", "LOCAL", "MAIN_THREAD", "SELF_AWARE", "SUBCLASS_FIELDS", "current_thread", "ident", "is_main",
           "local_get", "local_set", "lock_locked", "new_local", "store_attribute", "store_facts",
           "thread_init", "thread_name"]
