"""The machine's synchronisation instructions: locks, re-entrant locks, semaphores, conditions, monitors,
thread start and join.

Each blocking instruction comes as a pair: a guard (may the thread do it now?) and the operation. Lock
state lives on the heap, so that locks can be fields of objects and two states with the same owners are the
same state:

- ``Lock``: ``(LOCK, mon, owner)``; ``RLock``: ``(RLOCK, mon, owner, count)``;
- ``Semaphore``: ``(SEMAPHORE, mon, value)``, a ``BoundedSemaphore`` ``(SEMAPHORE, mon, value, bound)``;
  ``Condition``: ``(CONDITION, mon, lock, waiters)``;
- every object's intrinsic monitor (Java's ``synchronized``) is its slot ``mon``: ``None`` when free and
  nobody waits, else ``(owner, count, waiters)``;
- ``Event``: ``(EVENT, mon, flag)``; ``Barrier``: ``(BARRIER, mon, parties, waiters)``.

Events and barriers are not locks: their state is data that every thread may read and write, so their
operations record it in the step's Effect (``set_field`` and ``reads``) like any access to a shared field,
and the reductions see them as accesses to unprotected data (never movers). A barrier keeps the threads
waiting at it, not a count: the thread whose arrival completes the party empties the set, and a waiter
passes once it is no longer in it. So the state stays bounded however many generations pass, and a thread
of the next generation cannot be confused with one still leaving the last.

``waiters`` is a sorted tuple of thread ids; ``notify`` wakes any one of them (a choice point), which is
what Java promises and more than CPython's FIFO order, so every real schedule is covered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from movers.ir.machine import Ctx, ModelError, new_object, show
from movers.ir.program import BARRIER, CONDITION, EVENT, LOCK, MON, RLOCK, SEMAPHORE, Ref, unbox


def _obj(ctx: Ctx, r: Any, what: str) -> tuple:
    if type(r) is not Ref:
        raise ModelError(f"{what}: expected a lock or object, got {show(r)}", exc="AttributeError")
    return ctx.heap[r.i]


# -- Lock, RLock, Semaphore, Condition (as its lock) ----------------------------------------------------------


def lock_of(ctx: Ctx, r: Any) -> tuple[Ref, tuple]:
    """The lock object behind ``r`` (a Condition stands for its lock)."""
    o = _obj(ctx, r, "acquire")
    if o[0] is CONDITION:
        r = o[2]
        o = ctx.heap[r.i]
    return r, o


def can_acquire(ctx: Ctx, r: Any) -> bool:
    if type(r) is not Ref:
        return True  # the operation reports the error
    o = ctx.heap[r.i]
    if o[0] is LOCK:  # the common case first
        return o[2] is None
    r, o = lock_of(ctx, r)
    c = o[0]
    if c is LOCK:
        return o[2] is None
    if c is RLOCK:
        return o[2] is None or o[2] == ctx.tid
    if c is SEMAPHORE:
        return o[2] > 0
    return True


def acquire(ctx: Ctx, r: Any) -> None:
    if type(r) is Ref:
        o = ctx.heap[r.i]
        if o[0] is LOCK:  # the common case first
            ctx.put_object(r, (LOCK, o[1], ctx.tid))
            if ctx.track:
                ctx.acquired.append(r)
            return
    r, o = lock_of(ctx, r)
    c = o[0]
    if c is LOCK:
        ctx.put_object(r, (c, o[1], ctx.tid))
    elif c is RLOCK:
        ctx.put_object(r, (c, o[1], ctx.tid, o[3] + 1))
    elif c is SEMAPHORE:
        ctx.put_object(r, (c, o[1], o[2] - 1, *o[3:]))
    else:
        raise ModelError(f"acquire on {c.name} object, which is not a lock", exc="AttributeError")
    if ctx.track:
        ctx.acquired.append(r)


def try_acquire(ctx: Ctx, r: Any) -> bool:
    """``acquire(blocking=False)`` and ``acquire(timeout=x)``: take the lock if it is free now (True), else
    give up (False). A timed acquire that waits and then gets the lock is this step scheduled later, and one
    that times out is this step taken while the lock is held, so one step covers every outcome CPython can
    give (docs/language.md section 6). Its outcome reads the lock's state as data: recorded, so that the
    reductions stop treating lock operations as movers (``classify.lock_state_observed``)."""
    if type(r) is not Ref:
        raise ModelError(f"acquire: expected a lock or object, got {show(r)}")
    lr, o = lock_of(ctx, r)
    if ctx.track:
        ctx.reads.append((lr, MON))
    if o[0] is not LOCK and o[0] is not RLOCK and o[0] is not SEMAPHORE:
        raise ModelError(f"acquire on {o[0].name} object, which is not a lock")
    if not can_acquire(ctx, r):
        return False
    acquire(ctx, r)
    return True


def release(ctx: Ctx, r: Any) -> None:
    if type(r) is Ref:
        o = ctx.heap[r.i]
        if o[0] is LOCK and o[2] == ctx.tid:  # the common case first
            ctx.put_object(r, (LOCK, o[1], None))
            if ctx.track:
                ctx.released.append(r)
            return
    r, o = lock_of(ctx, r)
    c = o[0]
    if c is LOCK:
        if o[2] != ctx.tid:
            raise ModelError(f"thread {ctx.tid} releases a lock it does not hold (owner: {show(o[2])})",
                             exc="RuntimeError")
        ctx.put_object(r, (c, o[1], None))
    elif c is RLOCK:
        if o[2] != ctx.tid:
            raise ModelError(f"thread {ctx.tid} releases an RLock it does not hold (owner: {show(o[2])})",
                             exc="RuntimeError")
        n = o[3] - 1
        ctx.put_object(r, (c, o[1], ctx.tid if n else None, n))
    elif c is SEMAPHORE:
        if len(o) > 3 and o[2] >= o[3]:  # a BoundedSemaphore keeps its initial value as its bound
            raise ModelError(f"BoundedSemaphore released too many times (its value is already {o[3]})",
                             exc="ValueError")
        ctx.put_object(r, (c, o[1], o[2] + 1, *o[3:]))
    else:
        raise ModelError(f"release on {c.name} object, which is not a lock", exc="AttributeError")
    if ctx.track:
        ctx.released.append(r)


def owner(ctx: Ctx, r: Any) -> Any:
    """``m.owner``: the holder of a lock, of a condition's lock, or of an object's monitor."""
    o = _obj(ctx, r, ".owner")
    c = o[0]
    if c is LOCK or c is RLOCK:
        return o[2]
    if c is CONDITION:
        return owner(ctx, o[2])
    mon = o[MON]
    return mon[0] if mon else None


class ReportCtx(Ctx):
    """A Ctx that describes a state to users (report/trace.py): it names an object by its path in the state
    (``forks[1]``, where the blocked statement says ``second``) and a thread by its name (``worker#1``)."""

    __slots__ = ("ref_name", "thread_name")

    ref_name: Callable[[Ref], str | None]
    thread_name: Callable[[int], str]


def ref_text(ctx: Ctx, r: Any, text: str) -> str:
    """How a message names object ``r``, which the model's source calls ``text``."""
    if type(ctx) is ReportCtx and type(r) is Ref:
        return ctx.ref_name(r) or text
    return text


def thread_text(ctx: Ctx, t: Any) -> str:
    """How a message names thread ``t``."""
    if type(ctx) is ReportCtx and type(t) is int:
        return ctx.thread_name(t)
    return f"thread {t}"


def acquire_text(ctx: Ctx, r: Any, name: str) -> str:
    """What a thread blocked acquiring ``r`` (``name`` in the source) waits for."""
    return f"waits to acquire {ref_text(ctx, r, name)} {lock_holder_text(ctx, r)}".strip()


def lock_holder_text(ctx: Ctx, r: Any) -> str:
    if type(r) is not Ref:
        return ""
    o = ctx.heap[r.i]
    if o[0] is SEMAPHORE:
        return "(value 0)"
    own = owner(ctx, r)
    return "" if own is None else f"(held by {thread_text(ctx, own)})"


# -- Intrinsic monitors (synchronized) -----------------------------------------------------------------------


def can_enter(ctx: Ctx, r: Any) -> bool:
    if type(r) is not Ref:
        return True
    mon = ctx.heap[r.i][MON]
    return mon is None or mon[0] is None or mon[0] == ctx.tid


def enter(ctx: Ctx, r: Any) -> None:
    o = _obj(ctx, r, "synchronized")
    mon = o[MON]
    if mon is None:
        mon = (ctx.tid, 1, ())
    else:
        mon = (ctx.tid, mon[1] + 1, mon[2])
    ctx.put_object(r, (o[0], mon, *o[2:]))
    if ctx.track:
        ctx.acquired.append(r)


def exit_(ctx: Ctx, r: Any) -> None:
    o = _obj(ctx, r, "synchronized")
    mon = o[MON]
    if mon is None or mon[0] != ctx.tid:
        raise ModelError(f"thread {ctx.tid} leaves a monitor it does not hold")
    n = mon[1] - 1
    new = (ctx.tid, n, mon[2]) if n else ((None, 0, mon[2]) if mon[2] else None)
    ctx.put_object(r, (o[0], new, *o[2:]))
    if ctx.track:
        ctx.released.append(r)


# -- wait / notify ------------------------------------------------------------------------------------------


def wait(ctx: Ctx, r: Any, monitor: bool) -> int:
    """Release the lock (all of a re-entrant one) and join the wait set; returns the count to restore."""
    o = _obj(ctx, r, "wait")
    t = ctx.tid
    if ctx.track:
        ctx.reads.append((r, MON))  # the wait set: an access to the object, for the reductions
    if monitor:
        mon = o[MON]
        if mon is None or mon[0] != t:
            raise ModelError(f"thread {t} calls wait() without holding the object's monitor")
        ctx.put_object(r, (o[0], (None, 0, tuple(sorted((*mon[2], t)))), *o[2:]))
        if ctx.track:
            ctx.released.append(r)
        return mon[1]
    if o[0] is not CONDITION:
        raise ModelError(f"wait() on a {o[0].name}: use a Condition, or wait(obj) for a monitor", exc="AttributeError")
    lr = o[2]
    lo = ctx.heap[lr.i]
    if lo[2] != t:
        raise ModelError(f"thread {t} calls wait() without holding the condition's lock", exc="RuntimeError")
    count = lo[3] if lo[0] is RLOCK else 1
    if lo[0] is RLOCK:
        ctx.put_object(lr, (lo[0], lo[1], None, 0))
    else:
        ctx.put_object(lr, (lo[0], lo[1], None))
    if ctx.track:
        ctx.released.append(lr)
    ctx.put_object(r, (o[0], o[1], lr, tuple(sorted((*o[3], t)))))
    return count


def can_reacquire(ctx: Ctx, r: Any, monitor: bool) -> bool:
    o = ctx.heap[r.i]
    t = ctx.tid
    if monitor:
        mon = o[MON]
        return mon is None or (t not in mon[2] and mon[0] is None)
    if t in o[3]:
        return False
    return ctx.heap[o[2].i][2] is None


def reacquire(ctx: Ctx, r: Any, monitor: bool, count: int) -> None:
    o = ctx.heap[r.i]
    t = ctx.tid
    if monitor:
        mon = o[MON]
        ctx.put_object(r, (o[0], (t, count, mon[2] if mon else ()), *o[2:]))
        if ctx.track:
            ctx.acquired.append(r)
        return
    lr = o[2]
    lo = ctx.heap[lr.i]
    if lo[0] is RLOCK:
        ctx.put_object(lr, (lo[0], lo[1], t, count))
    else:
        ctx.put_object(lr, (lo[0], lo[1], t))
    if ctx.track:
        ctx.acquired.append(lr)


def can_reacquire_timed(ctx: Ctx, r: Any) -> bool:
    """The guard of the second step of ``c.wait(timeout)``: notified or not (the timeout may fire at any
    time), the thread goes on once the condition's lock is free."""
    return ctx.heap[ctx.heap[r.i][2].i][2] is None


def reacquire_timed(ctx: Ctx, r: Any, count: int) -> bool:
    """The second step of ``c.wait(timeout)``: re-acquire the lock; True when notified, False when timed out.
    A thread still in the wait set timed out and leaves it. A notified one may have timed out too, just
    before the notify chose it (CPython's ``Condition.wait`` then returns False, the notify spent): a choice."""
    o = ctx.heap[r.i]
    t = ctx.tid
    if t in o[3]:
        ctx.put_object(r, (o[0], o[1], o[2], tuple(w for w in o[3] if w != t)))
        woken = False
    else:
        woken = ctx.choose(2) == 0
    reacquire(ctx, r, False, count)
    return woken


def notify(ctx: Ctx, r: Any, monitor: bool, everyone: bool) -> None:
    o = _obj(ctx, r, "notify")
    t = ctx.tid
    if ctx.track:
        ctx.reads.append((r, MON))  # the wait set: an access to the object, for the reductions
    if monitor:
        mon = o[MON]
        if mon is None or mon[0] != t:
            raise ModelError(f"thread {t} calls notify() without holding the object's monitor")
        waiters = mon[2]
    else:
        if o[0] is not CONDITION:
            raise ModelError(f"notify() on a {o[0].name}: use a Condition, or notify(obj) for a monitor",
                             exc="AttributeError")
        if owner(ctx, r) != t:
            raise ModelError(f"thread {t} calls notify() without holding the condition's lock", exc="RuntimeError")
        waiters = o[3]
    if not waiters:
        return
    if everyone:
        rest: tuple = ()
    else:
        k = ctx.choose(len(waiters))
        rest = waiters[:k] + waiters[k + 1:]
    if monitor:
        ctx.put_object(r, (o[0], (mon[0], mon[1], rest), *o[2:]))
    else:
        ctx.put_object(r, (o[0], o[1], o[2], rest))


# -- Event and Barrier --------------------------------------------------------------------------------------


def _of(ctx: Ctx, r: Any, cls: Any, method: str) -> tuple:
    if type(r) is not Ref:
        raise ModelError(f"method '{method}' called on {show(r)}", exc="AttributeError")
    o = ctx.heap[r.i]
    if o[0] is not cls:
        raise ModelError(f"{o[0].name} object has no method '{method}'", exc="AttributeError")
    return o


def event_is_set(ctx: Ctx, r: Any) -> bool:
    o = _of(ctx, r, EVENT, "is_set")
    if ctx.track:
        ctx.reads.append((r, 2))
    return unbox(o[2])


def event_set(ctx: Ctx, r: Any, flag: bool) -> None:
    _of(ctx, r, EVENT, "set" if flag else "clear")
    ctx.set_field(r, 2, flag)


def barrier_arrive(ctx: Ctx, r: Any) -> None:
    """The first half of ``b.wait()``: join the waiters, or, as the last of the party, release them all."""
    o = _of(ctx, r, BARRIER, "wait")
    if ctx.track:
        ctx.reads.extend(((r, 2), (r, 3)))
    waiters = o[3]
    if len(waiters) + 1 >= o[2]:
        ctx.set_field(r, 3, ())
    else:
        ctx.set_field(r, 3, tuple(sorted((*waiters, ctx.tid))))


def barrier_can_pass(ctx: Ctx, r: Any) -> bool:
    """The guard of the second half of ``b.wait()``: the party this thread arrived in is complete."""
    if ctx.track:
        ctx.reads.append((r, 3))
    return ctx.tid not in ctx.heap[r.i][3]


# -- constructors -------------------------------------------------------------------------------------------


def new_lock(ctx: Ctx) -> Ref:
    return ctx.alloc((LOCK, None, None))


def new_rlock(ctx: Ctx) -> Ref:
    return ctx.alloc((RLOCK, None, None, 0))


def new_semaphore(ctx: Ctx, value: int = 1, bounded: bool = False) -> Ref:
    if type(value) is bool:
        value = int(value)  # as threading.Semaphore(True): a counter, never a boolean in the state
    if type(value) is not int or value < 0:
        raise ModelError(f"Semaphore value must be a non-negative int, got {show(value)}", exc="ValueError")
    return ctx.alloc((SEMAPHORE, None, value, value) if bounded else (SEMAPHORE, None, value))


def new_condition(ctx: Ctx, lock: Any = None) -> Ref:
    if lock is None:
        lock = new_rlock(ctx)
    elif type(lock) is not Ref or ctx.heap[lock.i][0] not in (LOCK, RLOCK):
        raise ModelError("Condition(lock): lock must be a Lock or an RLock")
    return ctx.alloc((CONDITION, None, lock, ()))


def new_event(ctx: Ctx) -> Ref:
    return ctx.alloc((EVENT, None, False))


def new_barrier(ctx: Ctx, parties: Any) -> Ref:
    if type(parties) is not int or parties < 1:
        raise ModelError(f"Barrier(parties): parties must be a positive int, got {show(parties)}", exc="ValueError")
    return ctx.alloc((BARRIER, None, parties, ()))


__all__ = [
    "acquire", "can_acquire", "release", "owner", "can_enter", "enter", "exit_", "wait", "can_reacquire",
    "reacquire", "notify", "new_lock", "new_rlock", "new_semaphore", "new_condition", "new_object",
    "event_is_set", "event_set", "try_acquire", "can_reacquire_timed", "reacquire_timed",
    "barrier_arrive", "barrier_can_pass", "new_event", "new_barrier",
]
