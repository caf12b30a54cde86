"""The runtime shim: run a movers model under plain CPython threads, as a smoke test.

A model starts with ``from movers.lang import *``. The checker ignores that line (it parses the model and
never imports it); ``python model.py`` imports this module instead, so that the model runs, once, on real
threads, with one arbitrary schedule and random choices. That finds typos and gross errors quickly; it
verifies nothing.

What each construct does here:

- ``Thread``: a ``threading.Thread`` (``Thread(target=f, args=(...))`` or a subclass defining ``run``).
  ``start()`` gives it the next movers thread id, 0, 1, 2, ... in the order of ``start()`` calls, as the
  checker does. A thread ended by ``assume(False)`` ends quietly. Any other uncaught exception in a shim
  thread (a failed ``assert``) is printed as usual and makes the process exit with status 1 once all threads
  have finished (CPython alone would exit with 0), so a smoke test sees it.
- ``Lock``, ``RLock``, ``Condition``, ``Semaphore``: the ``threading`` primitives, plus ``.owner``: the movers
  id of the holding thread, or ``None``. Releasing a ``Lock`` or ``RLock`` held by another thread raises
  ``RuntimeError`` (a model error in the checker; ``threading.Lock`` would allow it).
- ``tid()``: the current thread's movers id.
- ``choose(a, b, ...)``, ``choose(range(n))``: a random choice (the checker explores every value).
- ``assume(cond)``: when ``cond`` is false, ends the current thread quietly (a private ``SystemExit``
  subclass, caught by the thread; in the main thread it exits the module-level code with status 0).
- ``wait_until(cond)``: see the limits.
- ``with indivisible():``: holds one global re-entrant lock, so indivisible blocks are atomic with respect to
  each other (not to code outside such blocks; in the checker they are one step, atomic w.r.t. everything).
- ``with atomic():``, ``commit()``, ``@invariant``, ``@predicate``, ``ltl(...)``, ``exclusive``,
  ``guarded_by``, ``thread_local``, ``self_locking``, ``lock_protected``: no-ops
  (specifications, checked only by ``movers check``).
- ``@synchronized`` on a method, ``with synchronized(obj):``, ``wait(obj)``, ``notify(obj)``,
  ``notify_all(obj)``: Java monitors, one re-entrant lock and one condition per object, created lazily.

Limits (what the checker accepts but the shim cannot do):

- ``wait_until(cond)`` receives the *value* of ``cond``, computed once before the call, so it cannot wait for
  it to become true. If it is true, ``wait_until`` returns; if it is false, it raises ``RuntimeError``
  (a loud failure, not a hang). For hand-written smoke tests it also accepts a zero-argument callable,
  ``wait_until(lambda: y == 2)``, which it polls; the checker's language does not have that form.
  Models that block in ``wait_until`` are therefore not smoke-testable; write a busy-wait ``while`` loop or
  use a ``Condition`` when a model should run under CPython.
- ``m.owner`` works on the shim's ``Lock``, ``RLock`` and ``Condition`` only. On an arbitrary object (its
  Java monitor) it cannot be supported: model objects are plain Python objects. ``Semaphore.owner`` is
  always ``None``: a counting semaphore has no owner.
- ``tid()`` is ``-1`` in the main thread (module-level code, which the checker runs as initialisation, not
  as a thread) and in any thread not started through the shim's ``Thread``.
- Ids follow the real order of ``start()`` calls. The checker runs module-level code atomically, so the
  threads it starts come first; under CPython a started thread may start another one before module-level
  code has started all of its threads, and then the ids differ from the checker's.
- One run explores one schedule: a model that can deadlock may or may not hang, and a racy model usually
  passes. ``choose`` is uniform random, not exhaustive.
- Declarations that name a class field, ``exclusive(Account.balance, ...)``, evaluate ``Account.balance``
  and so fail under CPython unless the class has an attribute of that name.
"""

from __future__ import annotations

import atexit
import os
import random
import sys
import threading
import time
import weakref
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from functools import wraps
from types import FunctionType, TracebackType
from typing import Any, ParamSpec, TypeVar, overload

__all__ = [
    "Barrier",
    "Condition",
    "Event",
    "Lock",
    "RLock",
    "Semaphore",
    "BoundedSemaphore",
    "Thread",
    "defaultdict",
    "deque",
    "assume",
    "atomic",
    "choose",
    "commit",
    "exclusive",
    "guarded_by",
    "indivisible",
    "invariant",
    "lock_protected",
    "ltl",
    "notify",
    "notify_all",
    "predicate",
    "self_locking",
    "synchronized",
    "thread_local",
    "tid",
    "wait",
    "wait_until",
]

P = ParamSpec("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

MAIN_TID = -1
"""``tid()`` of the main thread and of threads not started through the shim's ``Thread``."""


# -- threads ----------------------------------------------------------------------------------------------

_tid_lock = threading.Lock()
_next_tid = 0
_failures: list[BaseException] = []


class _Pruned(SystemExit):
    """Raised by ``assume(False)``: ends the current thread quietly (exit status 0 in the main thread)."""

    def __init__(self) -> None:
        super().__init__(0)


def _reset_tids() -> None:
    """Restart thread ids at 0 (for tests that run several models in one process)."""
    global _next_tid
    with _tid_lock:
        _next_tid = 0


def _exit_on_failure() -> None:
    # atexit handlers run after the interpreter has joined all non-daemon threads.
    if _failures:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


atexit.register(_exit_on_failure)


class Thread(threading.Thread):
    """``threading.Thread`` whose ``start()`` assigns the movers thread id (0, 1, 2, ... in start order)."""

    _movers_tid: int = MAIN_TID

    def start(self) -> None:
        global _next_tid
        with _tid_lock:
            self._movers_tid = _next_tid
            _next_tid += 1
        body = self.run  # a subclass's run(), or threading's (which calls target(*args))

        def run() -> None:
            try:
                body()
            except _Pruned:
                pass
            except BaseException as e:
                _failures.append(e)
                raise

        self.run = run  # type: ignore[method-assign]
        super().start()

    @property
    def movers_tid(self) -> int:
        """The movers id given by ``start()`` (-1 before it)."""
        return self._movers_tid


def tid() -> int:
    """The current thread's movers id; -1 in the main thread (module-level code) and foreign threads."""
    return getattr(threading.current_thread(), "_movers_tid", MAIN_TID)


# -- locks ------------------------------------------------------------------------------------------------


class Lock:
    """A non-reentrant mutex (``threading.Lock``) that knows its owner."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holder: threading.Thread | None = None  # not the ident: idents of ended threads are reused
        self._owner: int | None = None

    @property
    def owner(self) -> int | None:
        """The movers id of the holding thread, or ``None`` when free."""
        return self._owner

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        ok = self._lock.acquire(blocking, timeout)
        if ok:
            self._holder = threading.current_thread()
            self._owner = tid()
        return ok

    def release(self) -> None:
        if self._holder is None:
            raise RuntimeError("release of an unlocked Lock")
        if self._holder is not threading.current_thread():
            raise RuntimeError(f"thread {tid()} releases a Lock held by thread {self._owner}")
        self._holder = None
        self._owner = None
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def _is_owned(self) -> bool:  # used by threading.Condition
        return self._holder is threading.current_thread()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


class RLock:
    """A re-entrant mutex that knows its owner and count (usable under ``threading.Condition``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holder: threading.Thread | None = None
        self._owner: int | None = None
        self._count = 0

    @property
    def owner(self) -> int | None:
        """The movers id of the holding thread, or ``None`` when free."""
        return self._owner

    @property
    def count(self) -> int:
        """How many times the owner holds it (0 when free)."""
        return self._count

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        me = threading.current_thread()
        if self._holder is me:
            self._count += 1
            return True
        if not self._lock.acquire(blocking, timeout):
            return False
        self._holder, self._owner, self._count = me, tid(), 1
        return True

    def release(self) -> None:
        if self._holder is not threading.current_thread():
            raise RuntimeError(f"thread {tid()} releases an RLock it does not hold (owner: {self._owner})")
        self._count -= 1
        if self._count == 0:
            self._holder = self._owner = None
            self._lock.release()

    # The protocol threading.Condition uses to release a re-entrant lock fully while waiting.
    def _is_owned(self) -> bool:
        return self._holder is threading.current_thread()

    def _release_save(self) -> int:
        count = self._count
        self._holder, self._owner, self._count = None, None, 0
        self._lock.release()
        return count

    def _acquire_restore(self, count: int) -> None:
        self._lock.acquire()
        self._holder, self._owner, self._count = threading.current_thread(), tid(), count

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


class Condition:
    """A condition variable over a shim ``Lock`` or ``RLock`` (a new ``RLock`` by default)."""

    def __init__(self, lock: Lock | RLock | None = None) -> None:
        self._lock: Lock | RLock = RLock() if lock is None else lock
        self._cond = threading.Condition(self._lock)  # type: ignore[arg-type]

    @property
    def owner(self) -> int | None:
        """The owner of the condition's lock."""
        return self._lock.owner

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()

    def wait(self, timeout: float | None = None) -> bool:
        return self._cond.wait(timeout)

    def wait_for(self, predicate: Callable[[], Any], timeout: float | None = None) -> Any:
        return self._cond.wait_for(predicate, timeout)

    def notify(self, n: int = 1) -> None:
        self._cond.notify(n)

    def notify_all(self) -> None:
        self._cond.notify_all()

    def __enter__(self) -> bool:
        return self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


# Events and barriers have no owner: threading's own serve.
Event = threading.Event
Barrier = threading.Barrier


class Semaphore:
    """A counting semaphore (``threading.Semaphore``). Its ``owner`` is always ``None``."""

    def __init__(self, value: int = 1) -> None:
        self._sem = threading.Semaphore(value)

    @property
    def owner(self) -> None:
        """A counting semaphore has no owner."""
        return None

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        return self._sem.acquire(blocking, timeout)

    def release(self, n: int = 1) -> None:
        self._sem.release(n)

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


# -- verification primitives --------------------------------------------------------------------------------


def choose(*values: Any) -> Any:
    """A random one of ``values``; with one argument, a random element of it (a list, a tuple or a range),
    as ``random.choice`` does: the checker explores every element."""
    if len(values) == 1:
        if not isinstance(values[0], (range, list, tuple)):
            raise TypeError("choose(x) with one argument needs a list, a tuple or a range")
        pool: Iterable[Any] = values[0]
    else:
        pool = values
    pool = list(pool)
    if not pool:
        raise ValueError("choose() with no values")
    return random.choice(pool)


def assume(cond: object) -> None:
    """End the current thread quietly when ``cond`` is false (the checker prunes that path)."""
    if not cond:
        raise _Pruned()


def wait_until(cond: bool | Callable[[], object], poll: float = 0.001) -> None:
    """Return when ``cond`` holds. A false *value* cannot be waited on under CPython: it raises.

    ``cond`` may also be a zero-argument callable (shim only), polled every ``poll`` seconds.
    """
    if callable(cond):
        while not cond():
            time.sleep(poll)
        return
    if not cond:
        raise RuntimeError(
            "wait_until(cond) under CPython: cond was evaluated once, before the call, and is false, so the "
            "shim cannot wait for it to become true. Check this model with `movers check`, or, for a smoke "
            "test, use a busy-wait `while` loop, a Condition, or the shim-only form wait_until(lambda: cond)."
        )


_indivisible_lock = threading.RLock()


def indivisible() -> AbstractContextManager[bool]:
    """``with indivisible():`` holds one global re-entrant lock: such blocks are atomic among themselves."""
    return _indivisible_lock


def atomic() -> AbstractContextManager[None]:
    """``with atomic():`` is an atomicity specification; it does nothing at run time."""
    return nullcontext()


def commit() -> None:
    """Marks the commit point of an ``atomic()`` block; does nothing at run time."""


def invariant(f: F) -> F:
    """``@invariant``: the function is checked in every state by the checker; unchanged here."""
    return f


def predicate(f: F) -> F:
    """``@predicate``: the function names an atomic proposition of ``ltl(...)`` formulas, evaluated in every
    state by the checker (``--liveness ltl``); unchanged here."""
    return f


def ltl(formula: str, name: str | None = None) -> None:
    """Declares a linear temporal logic property over the ``@predicate`` functions (checked by the checker
    only, with ``--liveness ltl``)."""


def exclusive(loc: object, pred: Callable[..., object]) -> None:
    """Declares an exclusive access predicate (checked by the checker only)."""


def guarded_by(loc: object, lock: object) -> None:
    """Declares that ``lock`` protects ``loc`` (checked by the checker only)."""


def thread_local(loc: object, k: int) -> None:
    """Declares that only thread ``k`` accesses ``loc`` (checked by the checker only)."""


def self_locking(cls: type) -> None:
    """Declares that instances of ``cls`` follow the weak self-locking discipline (checked by the checker
    only, under the ``dwyer-wsl*`` reductions)."""


def lock_protected(cls: type) -> None:
    """Declares that instances of ``cls`` are protected by a common lock after initialisation (Stoller's
    locking discipline; checked by the checker only, under the ``dwyer-ld*`` reductions)."""


# -- Java monitors ------------------------------------------------------------------------------------------



class BoundedSemaphore(Semaphore):
    """``threading.BoundedSemaphore``: releasing it past its initial value raises ``ValueError``."""

    def __init__(self, value: int = 1) -> None:
        self._sem = threading.BoundedSemaphore(value)

class _Monitor:
    """An object's intrinsic monitor: a re-entrant lock and its wait set."""

    __slots__ = ("lock", "cond")

    def __init__(self) -> None:
        self.lock = RLock()
        self.cond = threading.Condition(self.lock)  # type: ignore[arg-type]

    def __enter__(self) -> None:
        self.lock.acquire()

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.lock.release()


_monitors: dict[int, _Monitor] = {}  # by id(obj)
_keep_alive: list[object] = []  # objects without weak references: kept so that their id stays theirs
_monitors_lock = threading.Lock()


def _monitor_of(obj: object) -> _Monitor:
    key = id(obj)
    with _monitors_lock:
        mon = _monitors.get(key)
        if mon is None:
            mon = _monitors[key] = _Monitor()
            try:
                weakref.finalize(obj, _monitors.pop, key, None)
            except TypeError:  # lists, tuples, ints: no weak references
                _keep_alive.append(obj)
        return mon


def _held_monitor(obj: object, what: str) -> _Monitor:
    mon = _monitor_of(obj)
    if not mon.lock._is_owned():
        raise RuntimeError(f"thread {tid()} calls {what}() without holding the object's monitor")
    return mon


@overload
def synchronized(arg: Callable[P, R]) -> Callable[P, R]: ...
@overload
def synchronized(arg: object) -> AbstractContextManager[None]: ...
def synchronized(arg: Any) -> Any:
    """``@synchronized`` on a method (holds ``self``'s monitor during each call) or ``with synchronized(o):``.

    A plain function argument means the decorator form; anything else is the object whose monitor to hold.
    """
    if isinstance(arg, FunctionType):
        method = arg

        @wraps(method)
        def locked_method(self: Any, *args: Any, **kwargs: Any) -> Any:
            with _monitor_of(self):
                return method(self, *args, **kwargs)

        return locked_method
    return _monitor_of(arg)


def wait(obj: object) -> None:
    """Java ``obj.wait()``: release ``obj``'s monitor (fully), wait for a notify, re-acquire it."""
    _held_monitor(obj, "wait").cond.wait()


def notify(obj: object) -> None:
    """Java ``obj.notify()``: wake one thread waiting on ``obj``'s monitor."""
    _held_monitor(obj, "notify").cond.notify()


def notify_all(obj: object) -> None:
    """Java ``obj.notifyAll()``: wake every thread waiting on ``obj``'s monitor."""
    _held_monitor(obj, "notify_all").cond.notify_all()
