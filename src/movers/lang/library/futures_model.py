"""movers' model of ``concurrent.futures``: ``ThreadPoolExecutor``, ``Future`` and ``as_completed``.

This file is model source, as ``queue_model.py`` is: movers never imports it; a model that names one of these
gets the classes it needs compiled into it (``lang/library/__init__.py``), so the executor's worker threads are
threads of the model and every access the executor makes (its work queue, each future's condition, state and
result) is one every reduction sees. It is also plain Python that runs under ``python3``.

It follows CPython's Lib/concurrent/futures/_base.py and thread.py (3.11, 3.12) statement for statement where it
matters to the interleavings:

- ``submit`` takes ``_shutdown_lock``, refuses after ``shutdown`` (RuntimeError), makes a ``Future`` and a work
  item, puts the item on a ``queue.SimpleQueue`` and, unless an idle worker's semaphore can be taken at once,
  starts a new worker while there are fewer than ``max_workers``.
- A worker takes items off the queue and runs them: the future goes RUNNING, then FINISHED with the result
  or with the exception the call raised (any ``BaseException``, a failed ``assert`` included: CPython keeps it
  in the future, where ``result()`` raises it again and ``exception()`` returns it; nobody sees it otherwise).
  It then releases the idle semaphore. A ``None`` on the queue is ``shutdown``'s wake-up: the worker passes
  it on and ends.
- ``shutdown(wait=True)`` (and leaving ``with``) sets the flag under the lock, puts the ``None`` and joins every
  worker; ``cancel_futures=True`` first cancels the futures still queued.
- ``Future``: ``result``, ``exception``, ``done``, ``running``, ``cancelled``, ``cancel``,
  ``add_done_callback``, ``set_result``/``set_exception``, all under the future's ``Condition``.
- ``map(fn, *iterables)`` submits every call at once and returns an iterator of the results in order, each
  waited for when the iterator reaches it; ``as_completed(fs)`` yields the futures already done, then each
  other one as it finishes (a waiter that each future tells when it finishes).

It differs in:

- Iterators. ``map`` and ``as_completed`` are generators in CPython; here they return an iterator object whose
  ``_next()`` gives ``(True, item)`` or ``(False, None)`` at the end, and the compiler turns ``for x in
  as_completed(fs)`` and ``list(pool.map(f, xs))`` into loops over it (``library/__init__.py``,
  ``library_loops``), so each item is still waited for only when the loop reaches it.
- The futures already done when ``as_completed`` is called are yielded in the order given (CPython's set order
  is its hash order, which no program can rely on).
- ``max_workers=None`` means 32 (CPython's ``min(32, os.cpu_count() + 4)`` on a machine with 28 CPUs or more):
  a pool never starts more workers than it is given tasks, so this is the most concurrency any machine gives.
- Worker threads are daemon threads: CPython joins them at exit (``threading._register_atexit``), after
  they have run what is queued; in movers a daemon thread blocked on the empty queue at the end is not a
  deadlock, and one that still has work runs it.
- Timeouts are outcomes, as everywhere in movers (docs/language.md section 6.1): ``result(timeout=t)`` with
  ``t`` not None may raise ``TimeoutError`` whenever the future is not done yet.
- Workers are not named (``thread_name_prefix`` is accepted and not used): a trace shows them as
  ``ThreadPoolExecutor._worker``.
- Not modelled: ``ProcessPoolExecutor``, ``wait()``, ``initializer``, ``chunksize``, the interpreter-shutdown
  and broken-pool paths.
"""

from queue import Empty, SimpleQueue
from threading import Event, Semaphore, Thread

from movers.lang import indivisible

# A Future's states are CPython's strings: PENDING, RUNNING, CANCELLED, CANCELLED_AND_NOTIFIED, FINISHED (the
# library's module-level names are only its classes and functions, so they are written out).


class CancelledError(Exception):
    """The future was cancelled."""


class InvalidStateError(Exception):
    """The operation is not allowed in this state."""


class Future:
    """The result of a call that runs in a worker: PENDING, RUNNING, then FINISHED (or CANCELLED).

    CPython touches a future's fields only under its condition's lock; here each such block is one step
    (``with indivisible():``), and ``_done`` is set when the future is done (CPython's ``notify_all``)."""

    def __init__(self):
        self._state = "PENDING"
        self._result = None
        self._exception = None
        self._waiters = []
        self._done_callbacks = []
        self._done = Event()

    def _invoke_callbacks(self, callbacks):
        for callback in callbacks:
            try:
                callback(self)
            except Exception:
                pass  # CPython logs it and goes on

    def cancel(self):
        with indivisible():
            if self._state in ("RUNNING", "FINISHED"):
                return False
            if self._state in ("CANCELLED", "CANCELLED_AND_NOTIFIED"):
                return True
            self._state = "CANCELLED"
            self._done.set()
            callbacks = list(self._done_callbacks)
        self._invoke_callbacks(callbacks)
        return True

    def cancelled(self):
        with indivisible():
            return self._state in ("CANCELLED", "CANCELLED_AND_NOTIFIED")

    def running(self):
        with indivisible():
            return self._state == "RUNNING"

    def done(self):
        with indivisible():
            return self._state in ("CANCELLED", "CANCELLED_AND_NOTIFIED", "FINISHED")

    def add_done_callback(self, fn):
        with indivisible():
            if self._state not in ("CANCELLED", "CANCELLED_AND_NOTIFIED", "FINISHED"):
                self._done_callbacks.append(fn)
                return
        try:
            fn(self)
        except Exception:
            pass  # CPython logs it and goes on

    def _outcome(self, want_result):
        """``(True, what result() (exception()) gives)`` once the future is done, ``(False, None)`` before."""
        with indivisible():
            if self._state in ("CANCELLED", "CANCELLED_AND_NOTIFIED"):
                raise CancelledError()
            if self._state != "FINISHED":
                return False, None
            if not want_result:
                return True, self._exception
            if self._exception is not None:
                raise self._exception
            return True, self._result

    def _wait(self, timeout, want_result):
        done, value = self._outcome(want_result)
        if done:
            return value
        # CPython waits once on the condition, which is notified when the future is done or cancelled. A
        # timeout is an outcome (the module docstring): the wait may end before that.
        if timeout is None:
            self._done.wait()
        elif timeout > 0:
            self._done.wait(1)
        done, value = self._outcome(want_result)
        if done:
            return value
        raise TimeoutError()

    def result(self, timeout=None):
        return self._wait(timeout, True)

    def exception(self, timeout=None):
        return self._wait(timeout, False)

    def set_running_or_notify_cancel(self):
        with indivisible():
            if self._state == "CANCELLED":
                self._state = "CANCELLED_AND_NOTIFIED"
                for waiter in self._waiters:
                    waiter.add(self)
                return False
            elif self._state == "PENDING":
                self._state = "RUNNING"
                return True
            else:
                raise RuntimeError("Future in unexpected state")

    def _finish(self, result, exception):
        with indivisible():
            if self._state in ("CANCELLED", "CANCELLED_AND_NOTIFIED", "FINISHED"):
                raise InvalidStateError(f"{self._state}: {self!r}")
            self._result = result
            self._exception = exception
            self._state = "FINISHED"
            for waiter in self._waiters:
                waiter.add(self)
            self._done.set()
            callbacks = list(self._done_callbacks)
        self._invoke_callbacks(callbacks)

    def set_result(self, result):
        self._finish(result, None)

    def set_exception(self, exception):
        self._finish(None, exception)


class _WorkItem:
    """A submitted call and its future."""

    def __init__(self, future, fn, args, kwargs):
        self.future = future
        self.fn = fn
        self.args = args
        self.kwargs = kwargs

    def run(self):
        if not self.future.set_running_or_notify_cancel():
            return
        try:
            result = self.fn(*self.args, **self.kwargs)
        except BaseException as exc:
            self.future.set_exception(exc)
        else:
            self.future.set_result(result)


class ThreadPoolExecutor:
    """A pool of at most ``max_workers`` threads that run submitted calls."""

    def __init__(self, max_workers=None, thread_name_prefix=""):
        if max_workers is None:
            max_workers = 32  # the module docstring says why
        if max_workers <= 0:
            raise ValueError("max_workers must be greater than 0")
        self._max_workers = max_workers
        self._work_queue = SimpleQueue()
        self._idle_semaphore = Semaphore(0)
        self._threads = []
        self._shutdown = False

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.shutdown(wait=True)
        return False

    def _worker(self):
        while True:
            work_item = self._work_queue.get(block=True)
            if work_item is not None:
                work_item.run()
                self._idle_semaphore.release()
                continue
            # Only shutdown() puts None here, after setting _shutdown (CPython also ends a worker whose
            # executor was collected or whose interpreter shuts down): pass the wake-up on to the next worker.
            self._work_queue.put(None)
            return

    def _adjust_thread_count(self):
        # An idle worker will take the item: start no new thread.
        if self._idle_semaphore.acquire(timeout=0):
            return
        num_threads = len(self._threads)
        if num_threads < self._max_workers:
            t = Thread(target=self._worker, daemon=True)
            t.start()
            self._threads.append(t)

    def submit(self, fn, /, *args, **kwargs):
        # CPython holds _shutdown_lock here: one step.
        with indivisible():
            if self._shutdown:
                raise RuntimeError("cannot schedule new futures after shutdown")
            f = Future()
            w = _WorkItem(f, fn, args, kwargs)
            self._work_queue.put(w)
            self._adjust_thread_count()
            return f

    def map(self, fn, *iterables, timeout=None, chunksize=1):
        # CPython: [self.submit(fn, *args) for args in zip(*iterables)].
        columns = [list(it) for it in iterables]
        fs = []
        for i in range(min(len(c) for c in columns)):
            fs.append(self.submit(fn, *[c[i] for c in columns]))
        return _ResultIterator(fs, timeout)

    def shutdown(self, wait=True, *, cancel_futures=False):
        # CPython holds _shutdown_lock here: one step.
        with indivisible():
            self._shutdown = True
            if cancel_futures:
                while True:
                    try:
                        work_item = self._work_queue.get_nowait()
                    except Empty:
                        break
                    if work_item is not None:
                        work_item.future.cancel()
            # Wake a worker blocked on the queue; each one passes it on.
            self._work_queue.put(None)
        if wait:
            for t in self._threads:
                t.join()


class _ResultIterator:
    """What ``map`` returns: each result in the order of the calls, waited for when it is reached."""

    def __init__(self, fs, timeout):
        self._fs = fs
        self._timeout = timeout

    def _next(self):
        if not self._fs:
            return False, None
        return True, self._fs.pop(0).result(self._timeout)


class _Waiter:
    """Told by each future ``as_completed`` waits for when it finishes (CPython's ``_AsCompletedWaiter``)."""

    def __init__(self):
        self.event = Event()
        self.finished_futures = []

    def add(self, future):
        with indivisible():
            self.finished_futures.append(future)
            self.event.set()


class _AsCompleted:
    """What ``as_completed`` returns: the futures already done, then each other one as it finishes."""

    def __init__(self, fs):
        self._pending = []
        for f in fs:
            if f not in self._pending:
                self._pending.append(f)
        self._waiter = _Waiter()
        self._finished = []
        for f in self._pending:
            with indivisible():
                if f._state in ("CANCELLED_AND_NOTIFIED", "FINISHED"):
                    self._finished.append(f)
                else:
                    f._waiters.append(self._waiter)
        for f in self._finished:
            self._pending.remove(f)

    def _next(self):
        if not self._finished:
            if not self._pending:
                return False, None
            self._waiter.event.wait()
            with indivisible():
                self._finished = self._waiter.finished_futures
                self._waiter.finished_futures = []
                self._waiter.event.clear()
            for f in self._finished:
                self._pending.remove(f)
        return True, self._finished.pop(0)


def as_completed(fs, timeout=None):
    """The futures of ``fs`` as they finish (``timeout`` is not modelled)."""
    return _AsCompleted(fs)
