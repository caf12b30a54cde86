"""``--workers N``: the partitioned search (TLC's workers, DiVinE), for the full search (``--reduction none``).

N processes each *own* a share of the states, chosen by a hash of the state (``owner``). A process keeps
the states it owns in its own visited store, expands them, keeps the successors it owns on its own stack and
sends the others, in batches, to their owners. Each state is stored by exactly one process, so with the
exact store the states and transitions are the sequential search's, whatever the order.

**Which process owns a state.** Sending a state costs about as much as expanding one (pickling and
unpickling, docs/scaling.md), so the owner is a hash of the first two threads' stacks rather than of the
whole state: only their steps can move a state to another process, and the other threads' steps stay home.

**When it ends.** A shared counter C holds the number of busy processes plus the number of states in
flight. A process adds a batch's size to C before it sends the batch, adds one when it wakes up with work,
subtracts a batch's size once its states are on its stack, and subtracts one when its stack is empty and
everything it had to send is sent. C is zero exactly when no process has work and nothing is in flight.

**Violations and limits.** The first violation a process finds (a failed step, a state property, a
deadlock) stops every process; its counterexample is the path from the initial state to that state, found
again by a sequential depth-first search that stops there, then replayed as always. The parent owns the
time limit, ``--max-memory`` (the processes' resident memory added up), Ctrl-C and the progress line;
``--max-states`` is a shared count of stored states that no process passes.

The processes are forked from the checker once the program is compiled and its initial state built, so
they share its code objects: those travel between processes as numbers (``_static``).
"""

from __future__ import annotations

import gc
import io
import multiprocessing as mp
import os
import pickle
import queue
import signal
import time
from collections.abc import Callable
from typing import Any

from movers.ir.program import ClassInfo, Code, Func, ref
from movers.report.result import Stats
from movers.search.explore import Found, Outcome
from movers.search.fingerprints import make_store
from movers.search.limits import poll
from movers.semantics.state import State

BATCH = 512  # states per message
# References are interned objects whose hash is their address: made before the fork, they hash alike in every
# process, which ``owner`` needs. A heap larger than this is refused.
MAX_HEAP = 1 << 14

_STATICS: list[Any] = []
_INDEX: dict[int, int] = {}


def _static(i: int) -> Any:
    return _STATICS[i]


def _reduce_static(obj: Any) -> tuple[Any, tuple[int]]:
    return _static, (_INDEX[id(obj)],)


def _register_statics() -> None:
    """Number every code, class and function object (made at compile time, before the fork). Done afresh for
    each search, so that the programs of earlier checks in the same process are not kept alive."""
    _STATICS.clear()
    _INDEX.clear()
    for o in gc.get_objects():
        if type(o) in (Code, ClassInfo, Func):
            _INDEX[id(o)] = len(_STATICS)
            _STATICS.append(o)
    ref(MAX_HEAP)


_TABLE = {Code: _reduce_static, ClassInfo: _reduce_static, Func: _reduce_static}


def encode(states: list[State]) -> bytes:
    buf = io.BytesIO()
    p = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    p.dispatch_table = _TABLE  # type: ignore[assignment]
    p.dump(states)
    return buf.getvalue()


def decode(data: bytes) -> list[State]:
    return pickle.loads(data)  # noqa: S301  (our own processes' messages)


def owner(s: State, n: int) -> int:
    """The process that owns ``s`` (module docstring)."""
    threads = s[2]
    return hash(threads[:2]) % n


def _worker(w: int, n: int, ts: Any, kind: str, inboxes: list[Any], status: Any, busy: Any, stored: Any,
            max_states: int | None, stop: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C does
    gc.disable()  # as in the sequential search: states are acyclic, and the collector would rescan them
    store = make_store(kind)
    visited, key = store.keys, store.key
    stack: list[State] = []
    out: list[list[State]] = [[] for _ in range(n)]
    inbox = inboxes[w]
    steps, deadlock = ts.steps, ts.deadlock
    # Bare successors from the system's own generated code; an instrumentation's (properties, disciplines)
    # would be its inner system's, which skips what it adds: then its steps.
    successors = ts.successors if getattr(type(ts), "successors", None) is not None else (lambda s: None)
    check_state = None if getattr(ts.check_state, "checks_nothing", False) else ts.check_state
    transitions = expanded = reported = 0
    working = False

    def add(delta: int) -> int:
        with busy.get_lock():
            busy.value += delta
            return int(busy.value)

    def send(o: int) -> None:
        batch = out[o]
        if batch:
            add(len(batch))
            inboxes[o].put(encode(batch))
            out[o] = []

    def admit(s: State) -> bool:
        """Store ``s`` if it is new and push it; past --max-states (a count all processes share), stop and
        say False. (The answer saves asking the shared ``stop`` event, a lock, per state.)"""
        k = key(s)
        n0 = len(visited)
        visited.add(k)
        if len(visited) == n0:
            return True
        if max_states is not None:
            with stored.get_lock():
                if sum(stored) >= max_states:
                    visited.discard(k)
                    status.put(("max-states",))
                    stop.set()
                    return False
                stored[w] += 1
        stack.append(s)
        return True

    def take(data: bytes) -> None:
        states = decode(data)
        for s in states:
            if not admit(s):
                return
        add(-len(states))

    def report(kind_: str, message: str, state: State, step: Any) -> None:
        status.put(("violation", kind_, message, encode([state]), step))
        stop.set()

    try:
        # The shared ``stop`` event is a lock to ask: it is asked when idle and every 64 expansions, not per state.
        while True:
            if not stack:
                if stop.is_set():
                    break
                for o in range(n):
                    send(o)
                if working:
                    working = False
                    if add(-1) == 0:
                        status.put(("done",))
                try:
                    data = inbox.get(timeout=0.05)
                except queue.Empty:
                    continue
                working = True
                add(1)
                take(data)
                continue
            s = stack.pop()
            if check_state is not None:
                v = check_state(s)
                if v is not None:
                    report(v[0], v[1], s, None)
                    break
            both = successors(s)
            if both is not None:
                succ = both[0]
            else:
                succ = []
                outs = steps(s)
                transitions += len(outs) - len([o for o in outs if o.state is not None and o.violation is None])
                for o in outs:
                    if o.violation is not None:
                        report(o.violation[0], o.violation[1], s, (o.thread, o.choices))
                        break
                    if o.state is not None:
                        succ.append(o.state)
                if stop.is_set():
                    break
            if not succ:
                dead = deadlock(s)
                if dead:
                    report("deadlock", dead, s, None)
                    break
            transitions += len(succ)
            home = s[2][:2]
            for s2 in succ:
                if len(s2[1]) >= MAX_HEAP:
                    status.put(("error", f"--workers: a heap of more than {MAX_HEAP:,} objects"))
                    stop.set()
                    break
                h = s2[2]
                # A step of a thread after the first two leaves them as they are: the state stays home.
                o = w if len(home) == 2 and h[0] is home[0] and h[1] is home[1] else owner(s2, n)
                if o == w:
                    if not admit(s2):
                        break
                else:
                    batch = out[o]
                    batch.append(s2)
                    if len(batch) >= BATCH:
                        send(o)
            expanded += 1
            if max_states is None and len(visited) - reported >= 1024:  # for the progress line
                reported = stored[w] = len(visited)
            if expanded % 64 == 0:  # take what arrived meanwhile, so that senders' batches do not pile up
                if stop.is_set():
                    break
                try:
                    while True:
                        take(inbox.get_nowait())
                except queue.Empty:
                    pass
    except BaseException as e:  # noqa: BLE001  (a bug in a worker must reach the parent, never hang it)
        status.put(("error", f"internal error in worker {w} (a bug in movers): {type(e).__name__}: {e}"))
        stop.set()
    finally:
        if max_states is None:
            stored[w] = len(visited)
        status.put(("stats", w, transitions))


def parallel_search(ts: Any, workers: int, limits: Any, progress: Callable[[Stats], None] | None = None,
                    store: str = "exact") -> Outcome:
    """Search ``ts`` with ``workers`` processes (module docstring)."""
    _register_statics()
    ctx = mp.get_context("fork")
    init = ts.initial()
    stats = Stats()
    start = time.perf_counter()
    v = ts.check_state(init)
    if v is not None:
        return Outcome(Found(v[0], v[1], [], init), stats, None)
    inboxes = [ctx.Queue() for _ in range(workers)]
    status = ctx.Queue()
    busy = ctx.Value("q", 1)  # the initial state, in flight
    stored = ctx.Array("q", workers)
    stop = ctx.Event()
    procs = [ctx.Process(target=_worker, args=(w, workers, ts, store, inboxes, status, busy, stored,
                                                limits.max_states, stop), daemon=True)
             for w in range(workers)]
    for p in procs:
        p.start()
    inboxes[owner(init, workers)].put(encode([init]))
    found: Found | None = None
    limit: str | None = None
    error: str | None = None
    transitions = 0
    reported = 0
    last = time.perf_counter()
    try:
        while True:
            try:
                msg = status.get(timeout=0.05)
            except queue.Empty:
                msg = None
            if msg is not None:
                if msg[0] == "done":
                    break
                if msg[0] == "violation":
                    _, kind, message, data, step = msg
                    found = Found(kind, message, [step] if step is not None else [], decode(data)[0])
                    break
                if msg[0] == "max-states":
                    limit = "max-states"
                    break
                if msg[0] == "error":
                    error = msg[1]
                    break
                if msg[0] == "stats":  # a worker ended early (after a stop)
                    transitions += msg[2]
                    reported += 1
            poll()  # the time limit, --max-memory and Ctrl-C of the parent's budget
            _memory_check(procs, limits)
            now = time.perf_counter()
            if progress is not None and now - last >= 0.5:
                last = now
                stats.states, stats.seconds = sum(stored), now - start
                progress(stats)
    except BaseException as e:
        from movers.search.limits import LimitReached

        if isinstance(e, LimitReached):
            limit = e.why
        elif isinstance(e, KeyboardInterrupt):
            limit = "interrupted"
        elif isinstance(e, MemoryError):
            limit = "memory"
        else:
            raise
    finally:
        stop.set()
        deadline = time.perf_counter() + 5
        while reported < workers and time.perf_counter() < deadline:
            try:
                msg = status.get(timeout=0.05)
            except queue.Empty:
                continue
            if msg[0] == "stats":
                transitions += msg[2]
                reported += 1
        for p in procs:
            p.join(timeout=1)
            if p.is_alive():
                p.kill()
        for q in (*inboxes, status):
            q.cancel_join_thread()
    if error is not None:
        raise RuntimeError(error)
    stats.states = sum(stored)
    stats.transitions = stats.moves = transitions
    stats.seconds = time.perf_counter() - start
    split = list(stored)
    if found is not None:
        # A failed step is reported after the path to the state it starts from; a deadlock or a state property
        # shows in the state itself (as the sequential search reports them).
        failed_step = bool(found.steps)
        found.steps = path_to(ts, found.state) + found.steps  # type: ignore[arg-type]
        if failed_step:
            found.state = None
    out = Outcome(found, stats, limit)
    out.split = split  # type: ignore[attr-defined]  # the states each process stored, for the note
    return out


def _memory_check(procs: list[Any], limits: Any) -> None:
    """``--max-memory`` covers the worker processes too: their resident memory added up."""
    cap = getattr(limits, "max_memory", None)
    if not cap:
        return
    total = 0
    for p in procs:
        try:
            with open(f"/proc/{p.pid}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            pass
    if total / 2**20 >= cap:
        raise MemoryError


def path_to(ts: Any, target: State) -> list[Any]:
    """The steps of a path from the initial state to ``target``: a sequential depth-first search that stops
    there (the counterexample of a violation a worker found)."""
    init = ts.initial()
    if init == target:
        return []
    seen = {init}
    stack: list[tuple[State, list[Any], int, Any]] = [(init, ts.steps(init), 0, None)]
    while stack:
        s, outs, i, step = stack[-1]
        if i >= len(outs):
            stack.pop()
            continue
        stack[-1] = (s, outs, i + 1, step)
        o = outs[i]
        n = o.state
        if n is None or o.violation is not None or n in seen:
            continue
        if n == target:
            return [e[3] for e in stack[1:]] + [(o.thread, o.choices)]
        seen.add(n)
        stack.append((n, ts.steps(n), 0, (o.thread, o.choices)))
    raise RuntimeError("--workers: the state a worker reported is not reachable (a bug in movers)")


__all__ = ["decode", "encode", "owner", "parallel_search", "path_to"]
