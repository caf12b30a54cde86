"""movers' model of the standard library's ``queue`` module: ``Queue``, ``LifoQueue`` and ``SimpleQueue``.

This file is model source. movers never imports it: when a model uses one of these classes, the compiler
parses this file and compiles the classes it needs into the model, as it compiles the model's own classes
(``lang/library/__init__.py``), the way Java PathFinder runs its model classes in place of the JDK's. Their
steps are steps of the model's threads, and every access they make (the list of items, the counters, the
lock and the conditions) is one every reduction sees. It is also plain Python, which runs under ``python3``.

It follows CPython's Lib/queue.py (3.11, 3.12) statement for statement: one ``mutex`` shared by three
conditions (``not_empty``, ``not_full``, ``all_tasks_done``), ``unfinished_tasks``, ``put`` and ``get`` with
``block`` and ``timeout``, ``put_nowait`` and ``get_nowait``, ``task_done`` (ValueError when called more times
than items were put), ``join``, ``qsize``, ``empty``, ``full`` and ``maxsize``, and the hooks ``_init``,
``_qsize``, ``_put`` and ``_get`` that ``LifoQueue`` overrides. It differs in:

- Timeouts. A model has no clock. CPython computes an end time and, while the queue is full (empty for
  ``get``), raises Full (Empty) once the remaining time has run out, else waits at most the remaining time.
  Here the wait may time out at any moment (``Condition.wait(timeout)``, lang/timeouts.py); after a wait,
  timed out or not, the loop checks the queue again, as CPython's does: Full (Empty) when it is still full
  (empty) and the time is out, else the item goes in (comes out), which CPython does too when a notify and
  the timeout cross. So the length of a timeout is not modelled, only whether it is None, zero (no wait at
  all: CPython's time is out at the first check) or negative (ValueError).
- The items are held in a list, not a ``collections.deque`` (``q.queue`` is a list).
- ``SimpleQueue``: CPython's is a C class (``_queue.SimpleQueue``) whose methods are atomic under the GIL.
  Here ``put`` is one step (``with indivisible():``, which under ``python3`` is a global lock) that appends
  the item and adds a permit to a semaphore; ``get`` takes a permit (waiting while there is none, or timing
  out), then the first item: two steps, between which the item is still counted by ``qsize()`` but no other
  ``get`` can take it. ``block`` and ``timeout`` mean what they mean in C.
- Not modelled: ``PriorityQueue`` and ``shutdown()`` (3.13).
"""

from queue import Empty, Full
from threading import Condition, Lock, Semaphore

from movers.lang import indivisible


class Queue:
    """A FIFO queue; ``maxsize <= 0`` means no bound."""

    def __init__(self, maxsize=0):
        self.maxsize = maxsize
        self._init(maxsize)
        # mutex is held while the queue changes; the three conditions share it.
        self.mutex = Lock()
        self.not_empty = Condition(self.mutex)
        self.not_full = Condition(self.mutex)
        self.all_tasks_done = Condition(self.mutex)
        self.unfinished_tasks = 0

    def task_done(self):
        with self.all_tasks_done:
            unfinished = self.unfinished_tasks - 1
            if unfinished <= 0:
                if unfinished < 0:
                    raise ValueError("task_done() called too many times")
                self.all_tasks_done.notify_all()
            self.unfinished_tasks = unfinished

    def join(self):
        with self.all_tasks_done:
            while self.unfinished_tasks:
                self.all_tasks_done.wait()

    def qsize(self):
        with self.mutex:
            return self._qsize()

    def empty(self):
        with self.mutex:
            return not self._qsize()

    def full(self):
        with self.mutex:
            return 0 < self.maxsize <= self._qsize()

    def put(self, item, block=True, timeout=None):
        with self.not_full:
            if self.maxsize > 0:
                if not block:
                    if self._qsize() >= self.maxsize:
                        raise Full
                elif timeout is None:
                    while self._qsize() >= self.maxsize:
                        self.not_full.wait()
                elif timeout < 0:
                    raise ValueError("'timeout' must be a non-negative number")
                else:
                    # The wait's length is not modelled (the module docstring): any constant will do.
                    time_is_out = timeout == 0
                    while self._qsize() >= self.maxsize:
                        if time_is_out:
                            raise Full
                        time_is_out = not self.not_full.wait(1)
            self._put(item)
            self.unfinished_tasks += 1
            self.not_empty.notify()

    def get(self, block=True, timeout=None):
        with self.not_empty:
            if not block:
                if not self._qsize():
                    raise Empty
            elif timeout is None:
                while not self._qsize():
                    self.not_empty.wait()
            elif timeout < 0:
                raise ValueError("'timeout' must be a non-negative number")
            else:
                time_is_out = timeout == 0
                while not self._qsize():
                    if time_is_out:
                        raise Empty
                    time_is_out = not self.not_empty.wait(1)
            item = self._get()
            self.not_full.notify()
            return item

    def put_nowait(self, item):
        return self.put(item, block=False)

    def get_nowait(self):
        return self.get(False)

    # The hooks a subclass overrides (called with mutex held).

    def _init(self, maxsize):
        self.queue = []

    def _qsize(self):
        return len(self.queue)

    def _put(self, item):
        self.queue.append(item)

    def _get(self):
        return self.queue.pop(0)


class LifoQueue(Queue):
    """A LIFO queue: the last item put is the first one got."""

    def _init(self, maxsize):
        self.queue = []

    def _qsize(self):
        return len(self.queue)

    def _put(self, item):
        self.queue.append(item)

    def _get(self):
        return self.queue.pop()


class SimpleQueue:
    """An unbounded FIFO queue without task tracking (CPython's C class: each method is atomic)."""

    def __init__(self):
        self._queue = []
        # One permit per item: a get takes one before it takes an item, so it waits while there is none,
        # as the C code waits on its lock, and no other get can take that item meanwhile.
        self._count = Semaphore(0)

    def put(self, item, block=True, timeout=None):
        with indivisible():
            self._queue.append(item)
            self._count.release()

    def put_nowait(self, item):
        return self.put(item, block=False)

    def get(self, block=True, timeout=None):
        if not block:
            got = self._count.acquire(blocking=False)
        elif timeout is None:
            got = self._count.acquire()
        elif timeout < 0:
            raise ValueError("'timeout' must be a non-negative number")
        elif timeout == 0:
            got = self._count.acquire(blocking=False)
        else:
            # The wait's length is not modelled (the module docstring): any constant will do.
            got = self._count.acquire(timeout=1)
        if not got:
            raise Empty
        return self._queue.pop(0)

    def get_nowait(self):
        return self.get(False)

    def empty(self):
        return len(self._queue) == 0

    def qsize(self):
        return len(self._queue)
