"""Limits that always hold: a time limit and a memory ceiling end a check wherever its time goes.

The explorers look at the clock every few hundred expansions, which is cheap but not enough: compiling a
large model, module initialisation, one slow step or a reduction's long move can run for minutes between
two looks. So a check runs inside ``enforce(budget)``: on the main thread an interval timer (``SIGALRM``
every ``TICK`` seconds) compares the clock and the resident memory with the budget and raises
``LimitReached`` wherever the interpreter is. Python delivers signals to the main thread only, so a check
started from another thread relies on ``poll()``, which the explorers call between expansions.

``LimitReached`` derives from ``BaseException``, as ``KeyboardInterrupt`` does, so that the handlers of a
model's runtime errors (``except (TypeError, ValueError, …)``) and any ``except Exception`` let it through
to the checker, which turns it into an incomplete result with the statistics so far.
"""

from __future__ import annotations

import math
import os
import resource
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

# Seconds between two looks of the timer: the precision of --time-limit and the cost of watching memory
# (one read of /proc/self/statm per look).
TICK = 0.05
# The default memory ceiling, as a share of the memory the process may use: what is left keeps room for
# the report and for the rest of the machine.
DEFAULT_MEMORY_SHARE = 0.75

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class LimitReached(BaseException):
    """A limit ended the check: ``why`` is ``"time-limit"`` or ``"memory"``."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def rss_mb() -> float:
    """The resident memory of this process now, in MB (the peak so far where /proc is missing)."""
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY)
        try:
            pages = int(os.read(fd, 128).split()[1])
        finally:
            os.close(fd)
        return pages * _PAGE / 2**20
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def high_water_mb() -> float | None:
    """The process's peak resident memory so far (``VmHWM``), in MB; None where /proc is missing. Unlike
    ``ru_maxrss``, it starts afresh at ``exec``: it never counts the memory of the process that started this
    one."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _available_mb() -> float | None:
    """Physical memory, or the container's memory limit (cgroup v2 or v1) if it is lower, in MB."""
    sizes: list[float] = []
    try:
        sizes.append(os.sysconf("SC_PHYS_PAGES") * _PAGE / 2**20)
    except (ValueError, OSError, AttributeError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 2**60:  # "max", or v1's huge number for "no limit"
            sizes.append(int(text) / 2**20)
    return min(sizes) if sizes else None


def default_max_memory_mb() -> float | None:
    """The memory ceiling when none is given: 75% of what the process may use (None if unknown)."""
    avail = _available_mb()
    return None if avail is None else round(avail * DEFAULT_MEMORY_SHARE)


def problems(**values: float | int | None) -> list[tuple[str, str]]:
    """What is wrong with limits given by name (``max_states=…, time_limit=…``): (name, problem) pairs.

    Counts (``max_states``, ``max_depth``) must be positive integers; amounts (``time_limit``,
    ``max_memory``) positive finite numbers, so that NaN or infinity never silently mean "no limit"."""
    out: list[tuple[str, str]] = []
    for name, v in values.items():
        if v is None:
            continue
        if name in ("max_states", "max_depth"):
            if isinstance(v, bool) or not isinstance(v, int):
                out.append((name, "must be a positive integer"))
            elif v <= 0:
                out.append((name, "must be positive"))
        elif isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            out.append((name, "must be a positive finite number"))
        elif v <= 0:
            out.append((name, "must be positive"))
    return out


@dataclass
class Budget:
    """What a check may spend: seconds from ``start`` and resident memory in MB (None: unlimited)."""

    time_limit: float | None = None
    max_memory_mb: float | None = None
    start: float = field(default_factory=time.perf_counter)
    # Positive once the verdict is known (``settle``): nothing is then enforced any more.
    paused: int = 0
    # For ``peak_mb``: the process's peak before the run, and the highest resident memory seen during it.
    high_water_start: float | None = field(default_factory=high_water_mb)
    seen_mb: float = field(default_factory=rss_mb)

    def exceeded(self) -> str | None:
        if self.max_memory_mb is not None:
            now = rss_mb()
            if now > self.seen_mb:
                self.seen_mb = now
            if not self.paused and now >= self.max_memory_mb:
                return "memory"
        if self.paused:
            return None
        if self.time_limit is not None and time.perf_counter() - self.start >= self.time_limit:
            return "time-limit"
        return None

    def peak_mb(self) -> float:
        """This process's peak resident memory during the run (since the budget was made): the process's
        high-water mark when the run raised it (exact), otherwise the most resident memory seen by the
        looks of ``exceeded`` (about 20 a second) and now: memory from before the run, or from the process
        that started this one, is not counted."""
        high = high_water_mb()
        if high is not None and self.high_water_start is not None and high > self.high_water_start:
            return high
        self.seen_mb = max(self.seen_mb, rss_mb())
        return self.seen_mb

    @property
    def watched(self) -> bool:
        return self.time_limit is not None or self.max_memory_mb is not None


_local = threading.local()


def current() -> Budget | None:
    """The budget of the check running on this thread, if any."""
    return getattr(_local, "budget", None)


def poll() -> None:
    """Raise ``LimitReached`` if the current check is over its budget (cheap: call it between expansions)."""
    b = getattr(_local, "budget", None)
    if b is not None:
        why = b.exceeded()
        if why is not None:
            raise LimitReached(why)


def _on_alarm(signum: int, frame: object) -> None:
    b = current()
    if b is None:
        return
    why = b.exceeded()
    if why is not None:
        # One raise only: the checker must be able to build its result without being interrupted again.
        signal.setitimer(signal.ITIMER_REAL, 0)
        raise LimitReached(why)


@contextmanager
def enforce(budget: Budget) -> Iterator[Budget]:
    """Run the body under ``budget``. Nested inside another check (transactions' search for deadlocks,
    the checker inside ``movers.check``), the outer budget rules and this one is ignored."""
    outer = current()
    if outer is not None:
        yield outer
        return
    armed = (budget.watched and hasattr(signal, "setitimer")
             and threading.current_thread() is threading.main_thread())
    old_handler: object = None
    old_timer = (0.0, 0.0)
    if armed:
        old_handler = signal.signal(signal.SIGALRM, _on_alarm)
    _local.budget = budget
    began = time.perf_counter()
    if armed:
        old_timer = signal.setitimer(signal.ITIMER_REAL, TICK, TICK)
    try:
        yield budget
    finally:
        # The budget goes first, so that a tick already on its way finds nothing to enforce.
        _local.budget = None
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            # None: the previous handler was not set from Python; the default is the closest we can restore.
            signal.signal(signal.SIGALRM, old_handler if old_handler is not None else signal.SIG_DFL)  # type: ignore[arg-type]
            if old_timer[0] > 0:  # the caller's own alarm, with the time it had left
                left = max(old_timer[0] - (time.perf_counter() - began), 1e-3)
                signal.setitimer(signal.ITIMER_REAL, left, old_timer[1])


def settle() -> None:
    """The current check's verdict is known: its limits no longer apply (a violation found just before the
    deadline is reported as a violation, not turned into "incomplete" while its trace is replayed)."""
    b = current()
    if b is not None:
        b.paused += 1


def stop_reason(e: BaseException) -> str:
    """The ``limit`` of an incomplete result stopped by ``e``."""
    if isinstance(e, LimitReached):
        return e.why
    if isinstance(e, MemoryError):
        return "memory"
    return "interrupted"
