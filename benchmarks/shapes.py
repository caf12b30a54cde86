"""Movers against bare searches on shapes of model it was not tuned to (issue 25, item 5).

For each shape the script writes a movers model (``<shape>_model``, small or large) and holds a *bare twin*
per granularity: a hand-written pure-Python successor function over flat tuples that encodes exactly the
state graph of movers' ``--reduction none`` search of that model (docs/language.md section 8), as
``baseline.py`` does for the counter at statement granularity. Each twin takes an ``access`` flag: every
shape's two granularities are two graphs at the sizes measured (the monitor's would be one with a single call
per thread; ``tests/test_bench_shapes.py`` checks that they differ). Before anything is timed, both
searches run once and must store the same number of states (the script stops if not). Then both run in
fresh processes, interleaved, ``--repeat`` times; time is CPU time (``time.process_time``), each figure a
median, and the table gives movers states/s ÷ bare states/s (1.0 = as fast as the hand-written search).

The shapes (issue 25's table, plus a dict model from the Python issue):

1. ``filter``: flags and busy waiting, Peterson's filter lock for N threads (R rounds unrolled, an unlocked
   ``count += 1`` as critical section); ``phil_index``: dining philosophers (forks taken in a global order,
   so no deadlock cuts the search), ``with forks[a]: with forks[b]:`` indexing the lock list, R rounds
   unrolled;
2. ``counter``: baseline.py's unrolled lock-protected counter with its checker thread;
3. ``invariant``: the same counter without a checker, an ``@invariant`` ``fin < K or count == K * L``;
4. ``phil_locals``: the philosophers keeping their forks in locals (``first = forks[a]; with first:``);
5. ``monitor``: a one-slot cell with ``@synchronized`` ``put``/``take``, ``wait``/``notify_all``, called
   by K producers and K consumers (locals, arguments and return values);
6. ``dict``: plain Python (``import threading``): K workers counting into a shared dict under a lock,
   ``hits[k] = hits.get(k, 0) + 1``, each inserting its own key (insertion order is part of the state);
   ``queue``: plain Python, K producers ``q.put(v)`` and K consumers ``x = q.get()`` on a ``queue.SimpleQueue``
   (the library's model source: its steps are the calling thread's).

The peers (``--peer minicheck=PYTHON --peer musil=PYTHON``, each installed for its own interpreter, never
a dependency of movers): shape 3 at statement granularity written in each peer's own modelling API
(``peer_model``), checked to store movers' number of states, timed the same way; the table gives
movers ÷ peer. SPIN (``--spin 3,4,5``, Debian's ``spin`` and gcc): examples/counter_bench.py in Promela,
with and without partial order, beside movers' reductions on counter_bench; each tool's own states.

    python benchmarks/shapes.py [--shapes a,b] [--size small|large] [--granularity access,statement]
                                [--repeat 3] [--markdown OUT] [--check-only]
                                [--peer NAME=PYTHON ...] [--peer-size K,L]
                                [--spin K,K,...] [--spin-L L] [--spin-reductions a,b] [--spin-granularity G]
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import baseline  # noqa: E402  (benchmarks/baseline.py: the counter's model and statement twin)
import run  # noqa: E402  (benchmarks/run.py: the fresh-process runner)

MARKER = "@@SHAPES@@"
GRANULARITIES = ("access", "statement")

Succ = Callable[[tuple], list[tuple]]


def _put(t: tuple, i: int, v: Any) -> tuple:
    return t[:i] + (v,) + t[i + 1 :]


# -- 2. the counter (baseline.py's model) ------------------------------------------------------------------


def counter_model(K: int, L: int) -> str:
    return baseline.model_source(K, L)


def counter_statement(K: int, L: int) -> tuple[tuple, Succ]:
    init = ((0,) * (K + 1), (None,) * K, 0, None, 0)
    return init, lambda s: baseline.successors(s, K, L)


def counter_access(K: int, L: int) -> tuple[tuple, Succ]:
    """The workers' steps are statement granularity's (acquire, read ``count`` into ``t``, write, release);
    the checker's ``for`` header and ``k`` are local work: a first step runs it up to ``workers[0].join()``
    (the list is written by module code only: a constant), each join runs on to the next, the last one to
    the acquire. The checker's pc: 0 first step, 1 join workers[ck], 2 acquire, 3 assert, 4 release, 5 done."""
    end = 4 * L
    total = K * L

    def succ(s: tuple) -> list[tuple]:
        pcs, ts, count, owner, ck = s
        out: list[tuple] = []
        for t in range(K):
            pc = pcs[t]
            if pc == end:
                continue
            r = pc & 3
            if r == 0:
                if owner is None:
                    out.append((_put(pcs, t, pc + 1), ts, count, t, ck))
            elif r == 1:
                out.append((_put(pcs, t, pc + 1), _put(ts, t, count), count, owner, ck))
            elif r == 2:
                out.append((_put(pcs, t, pc + 1), ts, ts[t] + 1, owner, ck))
            elif pc + 1 < end:
                out.append((_put(pcs, t, pc + 1), ts, count, None, ck))
            else:
                out.append((_put(pcs, t, end), _put(ts, t, None), count, None, ck))
        pc = pcs[K]
        if pc == 0:
            out.append((pcs[:K] + (1,), ts, count, owner, 0))
        elif pc == 1:
            if pcs[ck] == end:
                out.append((pcs[:K] + (1,), ts, count, owner, ck + 1) if ck + 1 < K else
                           (pcs[:K] + (2,), ts, count, owner, ck))
        elif pc == 2:
            if owner is None:
                out.append((pcs[:K] + (3,), ts, count, K, ck))
        elif pc == 3:
            assert count == total, "lost update"
            out.append((pcs[:K] + (4,), ts, count, owner, ck))
        elif pc == 4:
            out.append((pcs[:K] + (5,), ts, count, None, ck))
        return out

    return ((0,) * (K + 1), (None,) * K, 0, None, 0), succ


# -- 3. the counter with an @invariant ---------------------------------------------------------------------


def invariant_model(K: int, L: int) -> str:
    body = "".join("    with m:\n        t = count\n        count = t + 1\n" for _ in range(L))
    return (
        "# Generated by benchmarks/shapes.py: the unrolled counter with an invariant instead of a checker.\n"
        "from movers.lang import *\n\n"
        f"K = {K}\nL = {L}\nm = Lock()\ncount = 0\nfin = 0\n\n\n"
        "@invariant\ndef total():\n    return fin < K or count == K * L\n\n\n"
        f"def worker():\n    global count, fin\n{body}    with m:\n        fin += 1\n\n\n"
        "for k in range(K):\n    Thread(target=worker).start()\n"
    )


def invariant_twin(K: int, L: int, access: bool) -> tuple[tuple, Succ]:
    """s = (pcs, ts, tmps, count, fin, owner). A worker's pc is 4*j + 0 (acquire), 1 (t = count), 2
    (count = t + 1), 3 (release) for its j-th increment; then 4L acquire; statement: 4L+1 ``fin += 1``,
    4L+2 release; access: 4L+1 read ``fin`` (held in tmps), 4L+2 write it, 4L+3 release; then ended (no
    frame: t is gone). Every new state must satisfy the invariant, as movers checks every state."""
    base = 4 * L
    end = base + (4 if access else 3)
    total = K * L

    def succ(s: tuple) -> list[tuple]:
        pcs, ts, tmps, count, fin, owner = s
        out: list[tuple] = []
        for t in range(K):
            pc = pcs[t]
            if pc == end:
                continue
            npcs = _put(pcs, t, pc + 1)
            if pc < base:
                r = pc & 3
                if r == 0:
                    if owner is None:
                        out.append((npcs, ts, tmps, count, fin, t))
                elif r == 1:
                    out.append((npcs, _put(ts, t, count), tmps, count, fin, owner))
                elif r == 2:
                    out.append((npcs, ts, tmps, ts[t] + 1, fin, owner))
                else:
                    out.append((npcs, ts, tmps, count, fin, None))
            elif pc == base:
                if owner is None:
                    out.append((npcs, ts, tmps, count, fin, t))
            elif pc + 1 == end:
                out.append((npcs, _put(ts, t, None), tmps, count, fin, None))
            elif not access:
                out.append((npcs, ts, tmps, count, fin + 1, owner))
            elif pc == base + 1:
                out.append((npcs, ts, _put(tmps, t, fin), count, fin, owner))
            else:
                out.append((npcs, ts, _put(tmps, t, None), count, tmps[t] + 1, owner))
        for n in out:
            if not (n[4] < K or n[3] == total):
                raise AssertionError("invariant total() violated")
        return out

    return ((0,) * K, (None,) * K, (None,) * K, 0, 0, None), succ


# -- 1 and 4. dining philosophers ----------------------------------------------------------------------------


def _phil_pairs(N: int) -> list[tuple[int, int]]:
    """Philosopher i takes its lower fork first: the forks are taken in a global order, no deadlock."""
    return [(i, i + 1) for i in range(N - 1)] + [(0, N - 1)]


def phil_model(N: int, R: int, in_locals: bool) -> str:
    if in_locals:
        head = "    first = forks[a]\n    second = forks[b]\n"
        rnd = "    with first:\n        with second:\n            meals += 1\n"
    else:
        head = ""
        rnd = "    with forks[a]:\n        with forks[b]:\n            meals += 1\n"
    starts = "".join(f"Thread(target=philosopher, args=({a}, {b})).start()\n" for a, b in _phil_pairs(N))
    return (
        "# Generated by benchmarks/shapes.py: dining philosophers, forks in a global order, rounds unrolled.\n"
        "from movers.lang import *\n\n"
        f"forks = [{', '.join(['Lock()'] * N)}]\nmeals = 0\n\n\n"
        f"def philosopher(a, b):\n    global meals\n{head}{rnd * R}\n\n{starts}"
    )


def phil_twin(N: int, R: int, in_locals: bool, access: bool) -> tuple[tuple, Succ]:
    """s = (pcs, tmps, owners, meals). After ``pre`` opening steps (the two assignments of the locals under
    statement granularity; under access granularity one step of local work, the thread's first), a
    round is: acquire a, acquire b, ``meals += 1`` (access: read into tmps, then write), release b,
    release a; the last release ends the thread."""
    pairs = _phil_pairs(N)
    pre = (1 if access else 2) if in_locals else 0
    per = 6 if access else 5
    end = pre + per * R

    def succ(s: tuple) -> list[tuple]:
        pcs, tmps, owners, meals = s
        out: list[tuple] = []
        for t in range(N):
            pc = pcs[t]
            if pc == end:
                continue
            npcs = _put(pcs, t, pc + 1)
            if pc < pre:
                out.append((npcs, tmps, owners, meals))
                continue
            r = (pc - pre) % per
            a, b = pairs[t]
            if r == 0:
                if owners[a] is None:
                    out.append((npcs, tmps, _put(owners, a, t), meals))
            elif r == 1:
                if owners[b] is None:
                    out.append((npcs, tmps, _put(owners, b, t), meals))
            elif r == 2:
                if access:
                    out.append((npcs, _put(tmps, t, meals), owners, meals))
                else:
                    out.append((npcs, tmps, owners, meals + 1))
            elif r == 3 and access:
                out.append((npcs, _put(tmps, t, None), owners, tmps[t] + 1))
            elif r == per - 2:
                out.append((npcs, tmps, _put(owners, b, None), meals))
            else:
                out.append((npcs, tmps, _put(owners, a, None), meals))
        return out

    return ((0,) * N, (None,) * N, (None,) * N, 0), succ


# -- 1 (again). flags and busy waiting: the filter lock ---------------------------------------------------------


def filter_model(N: int, R: int) -> str:
    """Peterson's filter lock for N threads (levels 1..N-1), R rounds unrolled, busy waiting on shared
    flags; the critical section is an unlocked ``count += 1``. The wait condition names the other threads
    (``a``, ``b``, ... are arguments), so that it is one expression: no ``any(...)`` loop."""
    others = [chr(ord("a") + j) for j in range(N - 1)]
    rnd = ""
    for lv in range(1, N):
        cond = " or ".join(f"level[{o}] >= {lv}" for o in others)
        rnd += (f"    level[i] = {lv}\n    victim[{lv}] = i\n"
                f"    while ({cond}) and victim[{lv}] == i:\n        pass\n")
    rnd += "    count += 1\n    level[i] = 0\n"
    starts = "".join(
        f"Thread(target=proc, args=({', '.join(map(str, [i] + [k for k in range(N) if k != i]))},)).start()\n"
        for i in range(N))
    return (
        "# Generated by benchmarks/shapes.py: the filter lock (busy waiting on flags), rounds unrolled.\n"
        "from movers.lang import *\n\n"
        f"level = [0] * {N}\nvictim = [0] * {N}\ncount = 0\n\n\n"
        f"def proc(i, {', '.join(others)}):\n    global count\n{rnd * R}\n\n{starts}"
    )


SET_LEVEL, SET_VICTIM, WAIT_ALL, READ_LEVEL, READ_VICTIM, INC, READ_COUNT, WRITE_COUNT = range(8)


def filter_twin(N: int, R: int, access: bool) -> tuple[tuple, Succ]:
    """s = (pcs, tmps, level, victim, count). Each thread runs a table of operations, one per pc: under
    statement granularity the ``while`` test is one step (true: the thread stays, a self-loop); under access
    granularity it reads ``level[o]`` for each other thread o, in order, up to the first at least the level
    (then ``victim``: the same thread again means round again), and ``count += 1`` is a read into tmps and a
    write. The last ``level[i] = 0`` ends the thread."""
    progs = []
    for i in range(N):
        others = tuple(k for k in range(N) if k != i)
        prog: list[tuple] = []
        for _ in range(R):
            for lv in range(1, N):
                prog += [(SET_LEVEL, lv), (SET_VICTIM, lv)]
                if access:
                    first = len(prog)
                    last = first + len(others)  # the pc of the victim's read
                    prog += [(READ_LEVEL, lv, o, last, first + j + 1 if j + 1 < len(others) else last + 1)
                             for j, o in enumerate(others)]
                    prog.append((READ_VICTIM, lv, first))
                else:
                    prog.append((WAIT_ALL, lv, others))
            prog += [(READ_COUNT,), (WRITE_COUNT,)] if access else [(INC,)]
            prog.append((SET_LEVEL, 0))
        progs.append(tuple(prog))
    end = len(progs[0])

    def succ(s: tuple) -> list[tuple]:
        pcs, tmps, level, victim, count = s
        out: list[tuple] = []
        for t in range(N):
            pc = pcs[t]
            if pc == end:
                continue
            op = progs[t][pc]
            kind = op[0]
            if kind == SET_LEVEL:
                out.append((_put(pcs, t, pc + 1), tmps, _put(level, t, op[1]), victim, count))
            elif kind == SET_VICTIM:
                out.append((_put(pcs, t, pc + 1), tmps, level, _put(victim, op[1], t), count))
            elif kind == WAIT_ALL:
                lv = op[1]
                if any(level[o] >= lv for o in op[2]) and victim[lv] == t:
                    out.append(s)
                else:
                    out.append((_put(pcs, t, pc + 1), tmps, level, victim, count))
            elif kind == READ_LEVEL:
                nxt = op[3] if level[op[2]] >= op[1] else op[4]
                out.append((_put(pcs, t, nxt), tmps, level, victim, count))
            elif kind == READ_VICTIM:
                nxt = op[2] if victim[op[1]] == t else pc + 1
                out.append((_put(pcs, t, nxt), tmps, level, victim, count))
            elif kind == INC:
                out.append((_put(pcs, t, pc + 1), tmps, level, victim, count + 1))
            elif kind == READ_COUNT:
                out.append((_put(pcs, t, pc + 1), _put(tmps, t, count), level, victim, count))
            else:
                out.append((_put(pcs, t, pc + 1), _put(tmps, t, None), level, victim, tmps[t] + 1))
        return out

    return ((0,) * N, (None,) * N, (0,) * N, (0,) * N, 0), succ


# -- 5. a monitor --------------------------------------------------------------------------------------------


def monitor_model(K: int, L: int) -> str:
    return (
        "# Generated by benchmarks/shapes.py: a one-slot monitor, K producers and K consumers, L calls each.\n"
        "from movers.lang import *\n\n\n"
        "class Cell:\n"
        "    def __init__(self):\n        self.full = False\n        self.value = 0\n\n"
        "    @synchronized\n    def put(self, v):\n        while self.full:\n            wait(self)\n"
        "        self.value = v\n        self.full = True\n        notify_all(self)\n\n"
        "    @synchronized\n    def take(self):\n        while not self.full:\n            wait(self)\n"
        "        self.full = False\n        notify_all(self)\n        return self.value\n\n\n"
        "cell = Cell()\n\n\n"
        "def producer(v):\n" + "    cell.put(v)\n" * L + "\n\n"
        "def consumer():\n" + "    a = cell.take()\n" * L + "\n\n"
        f"for k in range({K}):\n    Thread(target=producer, args=(k + 1,)).start()\n"
        f"for k in range({K}):\n    Thread(target=consumer).start()\n"
    )


# The monitor twin's operations, one per program counter of a call.
PUSH, ENTER, TEST_PUT, TEST_TAKE, WAIT, REACQUIRE, SET_VALUE, SET_FULL, CLEAR_FULL, NOTIFY_ALL, RETURN, LEAVE = \
    range(12)


def monitor_twin(K: int, L: int, access: bool) -> tuple[tuple, Succ]:
    """s = (pcs, waits, rets, locs, full, value, owner). Threads 0..K-1 produce ``k + 1``, K..2K-1 consume.
    A call under statement granularity is: the caller's statement (push the frame), enter the monitor, the
    ``while`` test, ``wait`` (release and join the wait set; re-acquire once notified and free, back to the
    test), the body's statements one step each, ``return self.value`` (the value waits in ``rets``), and
    leaving the monitor, which delivers the value to ``a`` (``locs``) and ends the thread after the last
    call. Under access granularity the call is local work (the thread's first step runs up to the first
    enter, each leave runs on to the next enter) and every statement of the bodies is one access.
    ``waits``: 0 not waiting, 1 in the wait set, 2 notified."""
    put = ([] if access else [PUSH]) + [ENTER, TEST_PUT, WAIT, REACQUIRE, SET_VALUE, SET_FULL, NOTIFY_ALL, LEAVE]
    take = ([] if access else [PUSH]) + [ENTER, TEST_TAKE, WAIT, REACQUIRE, CLEAR_FULL, NOTIFY_ALL, RETURN, LEAVE]
    pre = [PUSH] if access else []
    progs = [tuple(pre + put * L)] * K + [tuple(pre + take * L)] * K
    end = len(progs[0])
    n = 2 * K

    def succ(s: tuple) -> list[tuple]:
        pcs, waits, rets, locs, full, value, owner = s
        out: list[tuple] = []
        for t in range(n):
            pc = pcs[t]
            if pc == end:
                continue
            op = progs[t][pc]
            if op == PUSH:
                out.append((_put(pcs, t, pc + 1), waits, rets, locs, full, value, owner))
            elif op == ENTER:
                if owner is None:
                    out.append((_put(pcs, t, pc + 1), waits, rets, locs, full, value, t))
            elif op == TEST_PUT or op == TEST_TAKE:
                must_wait = full if op == TEST_PUT else not full
                out.append((_put(pcs, t, pc + (1 if must_wait else 3)), waits, rets, locs, full, value, owner))
            elif op == WAIT:
                out.append((_put(pcs, t, pc + 1), _put(waits, t, 1), rets, locs, full, value, None))
            elif op == REACQUIRE:
                if waits[t] == 2 and owner is None:
                    out.append((_put(pcs, t, pc - 2), _put(waits, t, 0), rets, locs, full, value, t))
            elif op == SET_VALUE:
                out.append((_put(pcs, t, pc + 1), waits, rets, locs, full, t + 1, owner))
            elif op == SET_FULL:
                out.append((_put(pcs, t, pc + 1), waits, rets, locs, True, value, owner))
            elif op == CLEAR_FULL:
                out.append((_put(pcs, t, pc + 1), waits, rets, locs, False, value, owner))
            elif op == NOTIFY_ALL:
                out.append((_put(pcs, t, pc + 1), tuple(2 if w == 1 else w for w in waits), rets, locs, full,
                            value, owner))
            elif op == RETURN:
                out.append((_put(pcs, t, pc + 1), waits, _put(rets, t, value), locs, full, value, owner))
            elif t < K:  # LEAVE, a producer
                out.append((_put(pcs, t, pc + 1), waits, rets, locs, full, value, None))
            else:  # LEAVE, a consumer: deliver the value (the frame goes with the last call)
                a = rets[t] if pc + 1 < end else None
                out.append((_put(pcs, t, pc + 1), waits, _put(rets, t, None), _put(locs, t, a), full, value,
                            None))
        return out

    return ((0,) * n, (0,) * n, (None,) * n, (None,) * n, False, 0, None), succ


# -- 6. a dict, plain Python ---------------------------------------------------------------------------------


def dict_model(K: int, L: int) -> str:
    body = "    with lock:\n        hits[k] = hits.get(k, 0) + 1\n" * L
    starts = "".join(f"threading.Thread(target=worker, args=({k},)).start()\n" for k in range(K))
    return (
        "# Generated by benchmarks/shapes.py: K workers counting into a shared dict, plain Python.\n"
        "import threading\n\nhits = {}\nlock = threading.Lock()\n\n\n"
        f"def worker(k):\n{body}\n\n{starts}"
    )


def dict_twin(K: int, L: int, access: bool) -> tuple[tuple, Succ]:
    """s = (pcs, tmps, hits, owner), ``hits`` flat in insertion order (k1, v1, k2, v2, ...), as movers lays
    a dict out. An increment is acquire, the assignment (access granularity: ``hits.get`` read into tmps,
    then the store), release; worker k's last release ends it."""
    per = 4 if access else 3
    end = per * L

    def store(hits: tuple, k: int, v: int) -> tuple:
        for i in range(0, len(hits), 2):
            if hits[i] == k:
                return hits[: i + 1] + (v,) + hits[i + 2 :]
        return hits + (k, v)

    def get(hits: tuple, k: int) -> int:
        for i in range(0, len(hits), 2):
            if hits[i] == k:
                return hits[i + 1]
        return 0

    def succ(s: tuple) -> list[tuple]:
        pcs, tmps, hits, owner = s
        out: list[tuple] = []
        for t in range(K):
            pc = pcs[t]
            if pc == end:
                continue
            npcs = _put(pcs, t, pc + 1)
            r = pc % per
            if r == 0:
                if owner is None:
                    out.append((npcs, tmps, hits, t))
            elif r == per - 1:
                out.append((npcs, tmps, hits, None))
            elif not access:
                out.append((npcs, tmps, store(hits, t, get(hits, t) + 1), owner))
            elif r == 1:
                out.append((npcs, _put(tmps, t, get(hits, t)), hits, owner))
            else:
                out.append((npcs, _put(tmps, t, None), store(hits, t, tmps[t] + 1), owner))
        return out

    return ((0,) * K, (None,) * K, (), None), succ


# -- 6 (again). a queue, plain Python -------------------------------------------------------------------------


def queue_model(K: int, L: int) -> str:
    return (
        "# Generated by benchmarks/shapes.py: K producers and K consumers on a queue.SimpleQueue, plain Python.\n"
        "import queue\nimport threading\n\nq = queue.SimpleQueue()\n\n\n"
        "def producer(v):\n" + "    q.put(v)\n" * L + "\n\n"
        "def consumer():\n" + "    x = q.get()\n" * L + "\n\n"
        f"for k in range({K}):\n    threading.Thread(target=producer, args=(k + 1,)).start()\n"
        f"for k in range({K}):\n    threading.Thread(target=consumer).start()\n"
    )


Q_PUSH, Q_PUT, Q_TEST, Q_ACQUIRE, Q_POP = range(5)


def queue_twin(K: int, L: int, access: bool) -> tuple[tuple, Succ]:
    """s = (pcs, xs, items, permits): the library's SimpleQueue (src/movers/lang/library/queue_model.py) is
    a list and a Semaphore counting its items. ``put`` is one ``with indivisible():`` step; ``get`` acquires a
    permit, then pops the first item, which the return delivers to ``x`` (gone with the thread's last call).
    Under statement granularity the caller's statement (push the frame) and ``get``'s three ``if`` tests
    on its arguments and on ``got`` are steps too; under access granularity they are local work (a first
    step of the thread runs up to its first put or acquire)."""
    put = [Q_PUT] if access else [Q_PUSH, Q_PUT]
    get = [Q_ACQUIRE, Q_POP] if access else [Q_PUSH, Q_TEST, Q_TEST, Q_ACQUIRE, Q_TEST, Q_POP]
    pre = [Q_PUSH] if access else []
    progs = [tuple(pre + put * L)] * K + [tuple(pre + get * L)] * K
    ends = tuple(len(p) for p in progs)
    n = 2 * K

    def succ(s: tuple) -> list[tuple]:
        pcs, xs, items, permits = s
        out: list[tuple] = []
        for t in range(n):
            pc = pcs[t]
            if pc == ends[t]:
                continue
            op = progs[t][pc]
            if op == Q_PUSH or op == Q_TEST:
                out.append((_put(pcs, t, pc + 1), xs, items, permits))
            elif op == Q_PUT:
                out.append((_put(pcs, t, pc + 1), xs, items + (t + 1,), permits + 1))
            elif op == Q_ACQUIRE:
                if permits:
                    out.append((_put(pcs, t, pc + 1), xs, items, permits - 1))
            else:
                x = items[0] if pc + 1 < ends[t] else None
                out.append((_put(pcs, t, pc + 1), _put(xs, t, x), items[1:], permits))
        return out

    return ((0,) * n, (None,) * n, (), 0), succ


# -- the peers: the counter with its invariant, in minicheck's and musil's own modelling APIs -------------------


def peer_counter_step(K: int, L: int) -> tuple[tuple, Callable[[tuple, int], tuple | None]]:
    """Shape 3 at statement granularity as a peer's user writes it: s = (pcs, ts, count, fin, owner) and
    one deterministic step per worker (None when it is disabled); the same graph as ``invariant_twin``."""
    base = 4 * L
    end = base + 3

    def step(s: tuple, t: int) -> tuple | None:
        pcs, ts, count, fin, owner = s
        pc = pcs[t]
        if pc == end:
            return None
        npcs = pcs[:t] + (pc + 1,) + pcs[t + 1 :]
        r = pc & 3 if pc < base else pc - base
        if r == 0:
            return (npcs, ts, count, fin, t) if owner is None else None
        if pc + 1 == end:
            return (npcs, ts[:t] + (None,) + ts[t + 1 :], count, fin, None)
        if pc >= base:
            return (npcs, ts, count, fin + 1, owner)
        if r == 1:
            return (npcs, ts[:t] + (count,) + ts[t + 1 :], count, fin, owner)
        if r == 2:
            return (npcs, ts, ts[t] + 1, fin, owner)
        return (npcs, ts, count, fin, None)

    return ((0,) * K, (None,) * K, 0, 0, None), step


def peer_model(peer: str, K: int, L: int) -> tuple[Callable[[], int], Any]:
    """The peer's model of the counter and a function that checks it and returns the states it stored.
    Imported only in the peer's own interpreter: the peers are not movers' dependencies."""
    init, step = peer_counter_step(K, L)
    total = K * L
    if peer == "minicheck":
        import minicheck

        def transitions(s: tuple) -> list[tuple[str, tuple]]:
            return [(f"w{t}", n) for t in range(K) if (n := step(s, t)) is not None]

        model = minicheck.Protocol(
            name="counter", candidate=False, fields=("pcs", "ts", "count", "fin", "owner"), initial=init,
            transitions=transitions, invariants={"total": lambda d: d["fin"] < K or d["count"] == total},
        )

        def check_minicheck() -> int:
            r = minicheck.check_safety(model, max_states=10**9)
            assert r["exhaustive"] and r["properties"]["total"]["holds"], r
            return int(r["reachable_states"])

        return check_minicheck, minicheck
    if peer == "musil":
        import musil

        end = 4 * L + 3
        actions = [musil.Action(f"w{t}", (lambda s, t=t: step(s, t) is not None), (lambda s, t=t: step(s, t)))
                   for t in range(K)]
        mmodel = musil.Model(init=[init], actions=actions,  # a tuple would be several initial states
                             invariants={"total": lambda s: s[3] < K or s[2] == total},
                             terminal=lambda s: all(pc == end for pc in s[0]))

        def check_musil() -> int:
            r = musil.check(mmodel, max_states=10**9)
            assert r.ok and not r.truncated, r
            return int(r.states_explored)

        return check_musil, musil
    raise ValueError(f"unknown peer {peer!r}: minicheck or musil")


def explore_peer(peer: str, size: tuple) -> dict[str, Any]:
    """One peer's check of the counter, measured (run in a fresh process of the peer's interpreter)."""
    check, module = peer_model(peer, *size)
    gc.collect()
    start = time.process_time()
    states = check()
    cpu = time.process_time() - start
    version = getattr(module, "__version__", None)
    return {"states": states, "cpu_seconds": cpu, "python": sys.version.split()[0], "version": version}


# -- SPIN beside it: examples/counter_bench.py in Promela ---------------------------------------------------


def promela_counter(K: int, L: int) -> str:
    """examples/counter_bench.py in Promela: K workers, each ``for i in range(L): with m: count += 1``,
    and the main process waits for them (``fin == K``, where movers joins each) and asserts under the lock.
    SPIN's steps are its own (the loop counter is a local, which its partial-order reduction skips over),
    so its state counts are given beside movers', not compared."""
    runs = "".join("\t\trun worker();\n" for _ in range(K))
    return (
        "/* Generated by benchmarks/shapes.py: examples/counter_bench.py in Promela. */\n"
        "byte count = 0;\nbyte fin = 0;\nbit m = 0;\n\n"
        "proctype worker() {\n\tbyte i = 0;\n\tdo\n"
        f"\t:: i < {L} ->\n\t\tatomic {{ m == 0 -> m = 1 }};\n\t\tcount = count + 1;\n\t\tm = 0;\n\t\ti++\n"
        "\t:: else -> break\n\tod;\n\tfin++\n}\n\n"
        f"init {{\n\tatomic {{\n{runs}\t}};\n\tfin == {K};\n\tatomic {{ m == 0 -> m = 1 }};\n"
        f"\tassert(count == {K * L});\n\tm = 0\n}}\n"
    )


def spin_once(K: int, L: int, por: bool, work: Path) -> dict[str, Any]:
    """``spin -a``, ``gcc -O2 -DSAFETY`` (``-DNOREDUCE`` without partial order), then ``./pan``: only pan's
    CPU time is measured (the children's ``ru_utime + ru_stime``). ``-m1000000``: a search depth far above
    the counter's, not so far that allocating the stack costs more than the search."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "counter.pml").write_text(promela_counter(K, L))
    subprocess.run(["spin", "-a", "counter.pml"], cwd=work, check=True, capture_output=True)
    flags = ["-DSAFETY"] + ([] if por else ["-DNOREDUCE"])
    subprocess.run(["gcc", "-O2", *flags, "-o", "pan", "pan.c"], cwd=work, check=True, capture_output=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(["./pan", "-m1000000"], cwd=work, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = proc.stdout
    if "errors: 0" not in out or "depth too small" in out:
        raise SystemExit(f"SPIN found errors or failed on the counter K={K} L={L}:\n{out}{proc.stderr}")
    states = int(next(line.split()[0] for line in out.splitlines() if "states, stored" in line))
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {"states": states, "cpu_seconds": cpu}


def measure_spin(Ks: list[int], L: int, reductions: list[str], granularity: str, repeat: int,
                 timeout: float) -> list[dict[str, Any]]:
    """SPIN with and without partial order beside movers' reductions on counter_bench, interleaved."""
    rows = []
    for K in Ks:
        path = run.counter_variant(K, L)
        spins: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
        ours: dict[str, list[dict[str, Any]]] = {r: [] for r in reductions}
        for _ in range(repeat):
            for por in (False, True):
                spins[por].append(spin_once(K, L, por, run.RESULTS / "spin" / f"K{K}_L{L}_{'por' if por else 'nr'}"))
            for red in reductions:
                r = run.run_once(path, red, "dfs", None, None, timeout, granularity)
                if "crash" in r:
                    raise SystemExit(f"movers --reduction {red} on counter K={K} crashed: {r['crash']}")
                ours[red].append({"states": r["stats"]["states"], "cpu_seconds": r["measure"]["cpu_seconds"],
                                  "verdict": r["verdict"]})
        row: dict[str, Any] = {"K": K, "L": L, "granularity": granularity, "repeat": repeat}
        for por in (False, True):
            key = "spin_por" if por else "spin_noreduce"
            row[key] = {"states": spins[por][0]["states"],
                        "cpu_seconds": statistics.median(x["cpu_seconds"] for x in spins[por])}
        row["movers"] = {red: {"states": rs[0]["states"], "verdict": rs[0]["verdict"],
                               "cpu_seconds": statistics.median(x["cpu_seconds"] for x in rs)}
                         for red, rs in ours.items()}
        rows.append(row)
        print(f"SPIN counter K={K} L={L}: {row}", flush=True)
    return rows


def spin_markdown(rows: list[dict[str, Any]]) -> str:
    reds = list(rows[0]["movers"]) if rows else []
    lines = [
        "",
        f"SPIN ({_spin_version()}) beside movers on examples/counter_bench.py (K workers, L locked increments; "
        "Promela in `promela_counter`): `spin -a`, `gcc -O2 -DSAFETY` (`-DNOREDUCE`: no partial order), pan's CPU "
        f"time; movers at `--granularity {rows[0]['granularity'] if rows else ''}`, CPU of the check. States are "
        "each tool's own (SPIN's steps are not movers'). **× SPIN POR** is movers' CPU over SPIN's with partial "
        "order.",
        "",
        "| K | L | SPIN no POR: states, CPU s | SPIN POR: states, CPU s | "
        + " | ".join(f"movers `{r}`: states, CPU s, **× SPIN POR**" for r in reds) + " |",
        "|---|---|---:|---:|" + "---:|" * len(reds),
    ]
    for r in rows:
        nr, por = r["spin_noreduce"], r["spin_por"]
        cells = [str(r["K"]), str(r["L"]), f"{nr['states']:,}, {nr['cpu_seconds']:.3f}",
                 f"{por['states']:,}, {por['cpu_seconds']:.3f}"]
        for red in reds:
            m = r["movers"][red]
            ratio = m["cpu_seconds"] / por["cpu_seconds"] if por["cpu_seconds"] > 0 else float("inf")
            verdict = "" if m["verdict"] == "ok" else f" ({m['verdict']})"
            cells.append(f"{m['states']:,}, {m['cpu_seconds']:.3f}, **{ratio:.1f}**{verdict}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _spin_version() -> str:
    proc = subprocess.run(["spin", "-V"], capture_output=True, text=True)
    return proc.stdout.strip() or "spin"


# -- the shapes, and the runs ----------------------------------------------------------------------------------

# name: (the number, what it is, model(size), twin(size, access), small size, large size)
SHAPES: dict[str, tuple[int, str, Callable[..., str], Callable[..., tuple[tuple, Succ]], tuple, tuple]] = {
    "counter": (2, "lock-protected counter, checker thread (baseline.py)", counter_model,
                lambda K, L, access: (counter_access if access else counter_statement)(K, L), (2, 2), (4, 3)),
    "invariant": (3, "the counter with `@invariant fin < K or count == K * L`", invariant_model, invariant_twin,
                  (2, 2), (4, 2)),
    "filter": (1, "filter lock, busy waiting on `level`/`victim` flags", filter_model, filter_twin, (2, 2), (3, 4)),
    "phil_index": (1, "dining philosophers, `with forks[a]:`", lambda N, R: phil_model(N, R, False),
                   lambda N, R, access: phil_twin(N, R, False, access), (3, 1), (5, 2)),
    "phil_locals": (4, "dining philosophers, `first = forks[a]; with first:`", lambda N, R: phil_model(N, R, True),
                    lambda N, R, access: phil_twin(N, R, True, access), (3, 1), (5, 2)),
    "monitor": (5, "`@synchronized` put/take, `wait`/`notify_all`, K producers and K consumers", monitor_model,
                monitor_twin, (1, 2), (2, 4)),
    "dict": (6, "plain Python: K workers, `hits[k] = hits.get(k, 0) + 1` under a lock", dict_model, dict_twin,
             (3, 2), (4, 4)),
    "queue": (6, "plain Python: K producers and K consumers on a `queue.SimpleQueue`", queue_model, queue_twin,
              (1, 2), (2, 4)),
}
ORDER = ["filter", "phil_index", "counter", "invariant", "phil_locals", "monitor", "dict", "queue"]


def bare_search(name: str, size: tuple, access: bool) -> int:
    """The bare twin's state count (no measurement): what the tests compare with movers."""
    init, succ = SHAPES[name][3](*size, access)
    visited = {init}
    stack = [init]
    while stack:
        for n in succ(stack.pop()):
            if n not in visited:
                visited.add(n)
                stack.append(n)
    return len(visited)


def explore(name: str, size: tuple, access: bool) -> dict[str, Any]:
    """The bare search, measured as baseline.explore measures the counter's (run in a fresh process)."""
    init, succ = SHAPES[name][3](*size, access)
    rss_before = baseline._rss()
    baseline._reset_peak()
    gc.collect()
    start = time.process_time()
    visited = {init}
    stack = [init]
    while stack:
        for n in succ(stack.pop()):
            if n not in visited:
                visited.add(n)
                stack.append(n)
    cpu = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"states": len(visited), "cpu_seconds": cpu, "bytes_per_state": (peak - rss_before) / len(visited)}


def write_model(name: str, size: tuple) -> Path:
    path = run.RESULTS / "models" / f"shape_{name}_{'_'.join(map(str, size))}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SHAPES[name][2](*size))
    return path


def bare_once(name: str, size: tuple, access: bool) -> dict[str, Any]:
    code = (f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import shapes; "
            f"print({MARKER!r} + json.dumps(shapes.explore({name!r}, {size!r}, {access!r})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=run.child_env())
    lines = [x for x in proc.stdout.splitlines() if x.startswith(MARKER)]
    if not lines:
        raise SystemExit(f"bare search of {name} crashed:\n{proc.stderr}")
    return dict(json.loads(lines[0][len(MARKER):]))


def movers_once(path: Path, granularity: str, timeout: float) -> dict[str, Any]:
    r = run.run_once(path, "none", "dfs", None, None, timeout, granularity)
    if "crash" in r:
        raise SystemExit(f"movers run of {path.name} crashed: {r['crash']}")
    m = r["measure"]
    states = r["stats"]["states"]
    growth = m["peak_rss_bytes"] - m["rss_before_bytes"]
    return {"states": states, "cpu_seconds": m["cpu_seconds"], "verdict": r["verdict"],
            "bytes_per_state": growth / states if growth >= run.MIN_GROWTH_MB * 2**20 else None}


def measure(name: str, size: tuple, granularity: str, repeat: int, timeout: float) -> dict[str, Any]:
    """Interleaved fresh-process runs of the bare twin and movers; refuses to time two different graphs."""
    path = write_model(name, size)
    access = granularity == "access"
    bare, ours = [], []
    for i in range(repeat):
        bare.append(bare_once(name, size, access))
        ours.append(movers_once(path, granularity, timeout))
        if i == 0 and (bare[0]["states"] != ours[0]["states"] or ours[0]["verdict"] != "ok"):
            raise SystemExit(f"{name} {size} at {granularity} granularity: not the same state graph: bare "
                             f"{bare[0]['states']:,} states, movers {ours[0]['states']:,} ({ours[0]['verdict']})")

    def rate(rows: list[dict[str, Any]]) -> float:
        return rows[0]["states"] / statistics.median(r["cpu_seconds"] for r in rows)

    per_state = [r["bytes_per_state"] for r in ours if r["bytes_per_state"] is not None]
    return {
        "shape": name, "number": SHAPES[name][0], "size": list(size), "granularity": granularity,
        "repeat": repeat, "states": ours[0]["states"], "bare_states_per_s": rate(bare),
        "movers_states_per_s": rate(ours), "ratio": rate(ours) / rate(bare),
        "movers_bytes_per_state": statistics.median(per_state) if per_state else None,
    }


def peer_once(peer: str, python: str, size: tuple) -> dict[str, Any]:
    code = (f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import shapes; "
            f"print({MARKER!r} + json.dumps(shapes.explore_peer({peer!r}, {size!r})))")
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True)
    lines = [x for x in proc.stdout.splitlines() if x.startswith(MARKER)]
    if not lines:
        raise SystemExit(f"{peer} ({python}) crashed:\n{proc.stderr}")
    return dict(json.loads(lines[0][len(MARKER):]))


def measure_peers(peers: dict[str, str], size: tuple, repeat: int, timeout: float) -> list[dict[str, Any]]:
    """The counter with its invariant (shape 3, statement granularity: the peers' steps are statements) in
    each peer's own API, interleaved with movers on the same graph; refuses different state counts."""
    path = write_model("invariant", size)
    runs: dict[str, list[dict[str, Any]]] = {p: [] for p in peers}
    ours = []
    for i in range(repeat):
        for p, python in peers.items():
            runs[p].append(peer_once(p, python, size))
        ours.append(movers_once(path, "statement", timeout))
        for p in peers:
            if i == 0 and runs[p][0]["states"] != ours[0]["states"]:
                raise SystemExit(f"{p}: not the same state graph: {runs[p][0]['states']:,} states, movers "
                                 f"{ours[0]['states']:,}")
    m_rate = ours[0]["states"] / statistics.median(r["cpu_seconds"] for r in ours)
    out = []
    for p, rows in runs.items():
        rate = rows[0]["states"] / statistics.median(r["cpu_seconds"] for r in rows)
        out.append({"peer": p, "version": rows[0]["version"], "python": rows[0]["python"], "size": list(size),
                    "repeat": repeat, "states": ours[0]["states"], "peer_states_per_s": rate,
                    "movers_states_per_s": m_rate, "ratio": m_rate / rate})
    return out


def peers_markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "",
        "The peers on the counter with its invariant (shape 3, statement granularity: a peer's step is what its "
        "user writes), each in its own modelling API (`peer_model`), run by its own interpreter; same state "
        "count as movers (checked). **movers ÷ peer** is movers' states/s over the peer's (above 1: movers is "
        "faster).",
        "",
        "| peer | Python | size | states | peer states/s | movers states/s | **movers ÷ peer** |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['peer']} {r['version'] or ''} | {r['python']} | {','.join(map(str, r['size']))} "
                     f"| {r['states']:,} | {r['peer_states_per_s']:,.0f} | {r['movers_states_per_s']:,.0f} "
                     f"| **{r['ratio']:.2f}** |")
    return "\n".join(lines) + "\n"


def markdown(rows: list[dict[str, Any]], command: str) -> str:
    lines = [
        f"`{command}`",
        "",
        f"`--reduction none`, median of {rows[0]['repeat'] if rows else 0} runs of each search, each in a fresh "
        "process, the two interleaved; CPU time (`time.process_time`). Both searches stored the same number of "
        "states (checked before timing). **movers ÷ bare** is movers' states/s over the bare search's (1.0: as "
        "fast as the hand-written successor function; the issue asks for at least 0.5).",
        "",
        "| # | shape | size | granularity | states | bare states/s | movers states/s | **movers ÷ bare** "
        "| movers bytes/state |",
        "|---|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        bps = "-" if r["movers_bytes_per_state"] is None else f"{r['movers_bytes_per_state']:,.0f}"
        lines.append(
            f"| {r['number']} | {r['shape']}: {SHAPES[r['shape']][1]} | {','.join(map(str, r['size']))} "
            f"| {r['granularity']} | {r['states']:,} | {r['bare_states_per_s']:,.0f} "
            f"| {r['movers_states_per_s']:,.0f} | **{r['ratio']:.2f}** | {bps} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=",".join(ORDER), help=f"comma-separated (default: {','.join(ORDER)})")
    ap.add_argument("--size", choices=["small", "large"], default="large")
    ap.add_argument("--granularity", default="access,statement")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1800, help="kill a movers run after this many seconds")
    ap.add_argument("--markdown", type=Path, metavar="OUT", help="also write the table to OUT")
    ap.add_argument("--peer", action="append", default=[], metavar="NAME=PYTHON",
                    help="also time a peer (minicheck, musil) installed for the interpreter PYTHON")
    ap.add_argument("--peer-size", default="4,3", help="K,L of the peers' counter (default 4,3)")
    ap.add_argument("--spin", metavar="K,K,...", help="also run SPIN on counter_bench at these K (e.g. 3,4,5)")
    ap.add_argument("--spin-L", type=int, default=4, help="L of SPIN's counter (default 4)")
    ap.add_argument("--spin-reductions", default="none,optimistic,transactions",
                    help="movers' reductions beside SPIN (default none,optimistic,transactions)")
    ap.add_argument("--spin-granularity", default="access", help="movers' granularity beside SPIN (default access)")
    ap.add_argument("--check-only", action="store_true", help="only compare the state counts, in this process")
    args = ap.parse_args(argv)
    names = args.shapes.split(",") if args.shapes else []
    grans = args.granularity.split(",")
    for n in names:
        if n not in SHAPES:
            ap.error(f"unknown shape {n!r}: one of {', '.join(ORDER)}")
    for g in grans:
        if g not in GRANULARITIES:
            ap.error(f"unknown granularity {g!r}")

    def size_of(name: str) -> tuple:
        return SHAPES[name][4] if args.size == "small" else SHAPES[name][5]

    if args.check_only:
        import movers

        for n in names:
            size = size_of(n)
            for g in grans:
                b = bare_search(n, size, g == "access")
                m = movers.check(write_model(n, size), reduction="none", granularity=g).stats.states
                print(f"{n} {size} {g}: bare {b:,}, movers {m:,}: {'same' if b == m else 'DIFFERENT'}")
                if b != m:
                    return 1
        return 0
    peers = dict(p.split("=", 1) for p in args.peer)
    rows = []
    for n in names if args.shapes else []:
        for g in grans:
            r = measure(n, size_of(n), g, args.repeat, args.timeout)
            rows.append(r)
            print(f"{r['number']} {n} {tuple(r['size'])} {g}: {r['states']:,} states, bare "
                  f"{r['bare_states_per_s']:,.0f}/s, movers {r['movers_states_per_s']:,.0f}/s, "
                  f"movers ÷ bare {r['ratio']:.2f}", flush=True)
    command = "python benchmarks/shapes.py " + " ".join(sys.argv[1:] if argv is None else argv)
    table = markdown(rows, command.strip()) if rows else f"`{command.strip()}`\n"
    if peers:
        peer_rows = measure_peers(peers, tuple(int(x) for x in args.peer_size.split(",")), args.repeat,
                                  args.timeout)
        table += peers_markdown(peer_rows)
    if args.spin:
        spin_rows = measure_spin([int(k) for k in args.spin.split(",")], args.spin_L,
                                 args.spin_reductions.split(","), args.spin_granularity, args.repeat, args.timeout)
        table += spin_markdown(spin_rows)
    print(table)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
