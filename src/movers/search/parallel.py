"""``--workers N``: the partitioned search (TLC's workers, DiVinE), for the full search (``--reduction none``).

N processes each *own* a share of the states, chosen by a hash of the state (``owner``). A process keeps
the states it owns in its own visited store, expands them, keeps the successors it owns on its own stack and
sends the others, in batches, to their owners. Each state is stored by exactly one process, so with the
exact store the states and transitions are the sequential search's, whatever the order.

**Which process owns a state.** Sending a state costs about as much as expanding one (pickling and
unpickling, docs/scaling.md), so the owner is a hash of the first two threads' stacks rather than of the
whole state: only their steps can move a state to another process, and the other threads' steps stay home.

**In the sequential order.** A violation the sequential depth-first search finds after a few states must
not cost the processes thousands. Each process searches depth-first as the sequential search does (a stack
of iterators, the first successor first, a state stored when it is reached), and every state carries its
*place* in the sequential order: the positions, among each state's successors, on the path that reached
it, compared as strings.

- *The token phase* (the first ``TOKEN_PHASE`` expansions): only the process holding the token searches.
  When it reaches a state another process owns, it sends the state with the token, and its owner goes
  down into it as the sequential search would; a holder whose first work comes after another process's
  (the token carries each one's first place) hands the token over. The order is then exactly the
  sequential one, whatever the machine does: the same states, up to the same violation.
- *Then* every process searches at once: a state another process sends goes into the receiver's stack at
  its place, so the work the sequential search would do first is done first wherever it was found; a
  state for a process that has nothing to do is sent at once; batches wait for at most a 1,024th of the
  expansions made (or until full), the inbox is read every 1 to 64 expansions likewise; and no process
  makes more than a quarter more expansions, plus 16, than another that has work (twice as many after the
  first 65,536), so that a process the machine runs less is waited for (idle, a process keeps pace).

**When it ends.** A shared counter C holds the number of busy processes plus the number of states in
flight. A process adds a batch's size to C before it sends the batch, adds one when it wakes up with work,
subtracts a batch's size once its states are on its stack, and subtracts one when its stack is empty and
everything it had to send is sent. C is zero exactly when no process has work and nothing is in flight.

**Violations and their paths.** The first violation a process finds (a failed step, a state property, a
deadlock) stops every process, and is reported whatever the limits say after it. Each process keeps, per
state it stored, its parent's global number (owner and index) and its position among the parent's
successors: 12 bytes a state, as TLC keeps a parent fingerprint per state. After the stop the processes
stay to follow those pointers back from the reported state, each as far as its own states go (``_serve``);
the parent then makes the states of that path again from the initial state, one expansion per step
(``_rebuild``), and the trace is replayed as always.

**Limits.** The parent owns the time limit, ``--max-memory`` (the processes' resident memory added up),
Ctrl-C and the progress line; ``--max-states`` is a shared count of stored states that no process passes.
A process dies with the parent, whatever signal killed it (``_die_with_parent``).

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
import sys
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from movers.ir.program import ClassInfo, Code, Func, ref
from movers.search.base import Found, Outcome
from movers.search.fingerprints import make_store
from movers.search.limits import LimitReached, poll, settle
from movers.search.options import Options
from movers.search.stats import Stats
from movers.semantics.state import State

BATCH = 512  # states per message
PR_SET_PDEATHSIG = 1  # linux/prctl.h
NEVER = 1 << 62
# Expansions of the token phase (module docstring): the processes search one at a time, in the sequential order.
# Each state that crosses to another process then costs a message and a wake-up (about 0.1 ms): a few tenths
# of a second in all, against seconds to hours for a search that needs the processes.
TOKEN_PHASE = 4096
SYNC_SHIFT = 10
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


def encode(states: list[Any]) -> bytes:
    buf = io.BytesIO()
    p = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    p.dispatch_table = _TABLE  # type: ignore[assignment]
    p.dump(states)
    return buf.getvalue()


def decode(data: bytes) -> list[Any]:
    return pickle.loads(data)  # noqa: S301  (our own processes' messages)


def owner(s: State, n: int) -> int:
    """The process that owns ``s`` (module docstring)."""
    threads = s[2]
    return hash(threads[:2]) % n


def _expander(ts: Any) -> Callable[[State], list[Any]]:
    """A state's successors in the order the search takes them, as the sequential plain search has them: bare
    states from the system's own generated code where it runs every step of the state, else one entry per
    outcome of ``steps``: the state, the Outcome itself for a failed step, None where an assume pruned it.
    (An instrumentation's ``successors`` would be its inner system's, which skips what it adds: its steps
    then.) The workers and the rebuilding of a counterexample must take them alike (``_rebuild``)."""
    steps = ts.steps
    fast = ts.successors if getattr(type(ts), "successors", None) is not None else None

    def by_steps(s: State) -> list[Any]:
        return [o if o.violation is not None else o.state for o in steps(s)]

    if fast is None:
        return by_steps

    def expand(s: State) -> list[Any]:
        both = fast(s)
        return both[0] if both is not None else by_steps(s)

    return expand


_PLACES = [i.to_bytes(2, "big") for i in range(1024)]


def _place(i: int) -> bytes:
    """The successor's position, as a part of its place in the sequential order: fixed-width, so that places
    compare as the sequential depth-first search takes them (a position past 65,535 counts as that)."""
    return _PLACES[i] if i < 1024 else min(i, 0xFFFF).to_bytes(2, "big")


def _pending(entry: list[Any]) -> bytes:
    """The place of the next state a stack entry leads to: its own, before it is expanded; then its next
    successor's."""
    return entry[4] if entry[2] is None else entry[4] + _place(entry[3])


def _pace_limit(other: int) -> int:
    """How many expansions a process may have made while another that has work has made ``other``: a quarter
    more, plus 64, in the first 65,536 (where the sequential search's order matters most: module docstring);
    twice as many after, where the shares of the processes may differ more than that."""
    return 16 + (other + (other >> 2) if other < 1 << 16 else 2 * other)


def _die_with_parent(ppid: int) -> None:
    """A worker never outlives the checker, whatever killed it (SIGKILL included): on Linux the kernel sends
    the worker SIGKILL when its parent dies (PR_SET_PDEATHSIG); elsewhere the worker's loops watch
    ``os.getppid()``. The worker's stdout is /dev/null: the report is the parent's, and a worker must never
    keep a reader of the parent's output from seeing its end."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.close(fd)
    if os.getppid() != ppid:  # the parent died before the request above
        os._exit(0)


class _Worker:
    """One process of the partitioned search (module docstring). ``run`` searches, then serves the parent's
    requests for a counterexample's path (``_serve``)."""

    def __init__(self, w: int, n: int, ts: Any, kind: str, shared: _Shared) -> None:
        self.w, self.n, self.kind = w, n, kind
        self.inboxes, self.status, self.busy, self.stored = shared.inboxes, shared.status, shared.busy, shared.stored
        self.hungry, self.pace, self.stop, self.ppid = shared.hungry, shared.pace, shared.stop, shared.ppid
        self.max_states = shared.max_states
        self.store = make_store(kind)
        self.visited, self.key = self.store.keys, self.store.key
        # Per state stored here, by its index: its parent's global number (-1: the initial state) and its
        # position among the parent's successors (``_expander``): the counterexample's path (module docstring).
        # A state's global number is index * n + w.
        self.parent_of = array("q")
        self.position = array("I")
        # A stack entry is [state, its global number, its successors (None: not expanded yet), next index, its
        # place in the sequential order]. The stack is kept in that order, the first on top (``enter``).
        self.stack: list[list[Any]] = []
        self.out: list[list[tuple[State, int, int, bytes]]] = [[] for _ in range(n)]
        self.inbox = self.inboxes[w]
        self.expand, self.deadlock = _expander(ts), ts.deadlock
        self.check_state = None if getattr(ts.check_state, "checks_nothing", False) else ts.check_state
        self.since = [NEVER] * n  # when (in expansions) each batch got its first state
        self.requests: list[Any] = []
        # The token phase (module docstring): only the holder of the token searches; ``places`` has each
        # process's first work in the sequential order (None: none), ``count`` the expansions made so far by all.
        self.holder = self.free = False
        self.places: list[bytes | None] = [None] * n
        self.count = 0
        # ``clock``: the expansions made, counting the time spent idle as keeping pace (``ahead``).
        self.transitions = self.expanded = self.reported = self.next_sync = self.clock = 0
        self.working = False

    def run(self) -> None:
        _die_with_parent(self.ppid)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C does
        gc.disable()  # as in the sequential search: states are acyclic, and the collector would rescan them
        try:
            self.search()
        except BaseException as e:  # noqa: BLE001  (a bug in a worker must reach the parent, never hang it)
            self.status.put(("error", f"internal error in worker {self.w} (a bug in movers): {type(e).__name__}: {e}"))
            self.stop.set()
        if self.max_states is None:
            self.stored[self.w] = len(self.visited)
        report_ = getattr(self.store, "report", None)
        self.status.put(("stats", self.w, self.transitions, report_() if report_ is not None else {"kind": self.kind}))
        _serve(self.w, self.n, self.inboxes, self.status, self.parent_of, self.position, self.ppid, self.requests)

    # -- the shared counter, the batches, the stores -------------------------------------------------------------

    def add(self, delta: int) -> int:
        with self.busy.get_lock():
            self.busy.value += delta
            return int(self.busy.value)

    def send(self, o: int) -> None:
        batch = self.out[o]
        if batch:
            self.add(len(batch))
            self.inboxes[o].put(encode(batch))
            self.hungry[o] = 0  # it has work coming: keep pace with it (``ahead``) until it has done it
            self.out[o] = []
            self.since[o] = NEVER

    def admit(self, s: State, parent: int, pos: int) -> int:
        """Store ``s`` if it is new: its global number, or -1 if it was stored already; past --max-states (a
        count all processes share), stop and say -2. (The answer saves asking the shared ``stop`` event, a
        lock, per state.)"""
        visited = self.visited
        k = self.key(s)
        n0 = len(visited)
        visited.add(k)
        if len(visited) == n0:
            return -1
        if self.max_states is not None:
            with self.stored.get_lock():
                if sum(self.stored) >= self.max_states:
                    visited.discard(k)
                    self.status.put(("max-states",))
                    self.stop.set()
                    return -2
                self.stored[self.w] += 1
        self.parent_of.append(parent)
        self.position.append(pos)
        return (len(self.parent_of) - 1) * self.n + self.w

    def enter(self, entry: list[Any]) -> None:
        """Put a state another process sent where the sequential order puts it among this one's work."""
        stack = self.stack
        place = entry[4]
        top = len(stack)
        if not top or place < _pending(stack[-1]):
            stack.append(entry)
            return
        lo = 0
        while lo < top:
            mid = (lo + top) // 2
            if _pending(stack[mid]) > place:
                lo = mid + 1
            else:
                top = mid
        stack.insert(lo, entry)

    def take(self, data: bytes) -> bool:
        batch = decode(data)
        for s, parent, pos, place in batch:
            number = self.admit(s, parent, pos)
            if number == -2:
                return False
            if number >= 0:
                self.enter([s, number, None, 0, place])
        self.add(-len(batch))
        return True

    # -- messages and the token ----------------------------------------------------------------------------------

    def receive(self, msg: Any) -> bool:
        """Take a message: a batch of states, the token (with a state or none), the end of the token phase, or
        the parent's request for a path come before this process saw the stop. False past --max-states."""
        if type(msg) is bytes:
            return self.take(msg)
        if msg[0] == "token":
            _, self.places, self.count, data = msg
            self.holder = True
            return self.take(data) if data is not None else True
        if msg[0] == "free":
            self.free = True
            self.clock = max(self.clock, msg[1])  # the expansions of the token phase, all processes' together
            self.pace[self.w] = self.clock
            return True
        self.requests.append(msg)
        return True

    def hand_over(self, mine: bytes | None, to: int = -1, data: bytes | None = None) -> bool:
        """Token phase: give the token to the process with the first work in the sequential order, ``mine``
        being this process's first, or to ``to`` with the state sent (``data``), which is then the first;
        False if this process keeps it."""
        w, places = self.w, self.places
        if data is None:
            first = mine
            for o in range(self.n):
                p = places[o]
                if o != w and p is not None and (first is None or p < first):
                    to, first = o, p
            if to < 0:
                return False
        else:
            self.add(1)
        places[w] = mine
        self.inboxes[to].put(("token", places, self.count, data))
        self.holder = False
        return True

    def ahead(self, mine: int) -> bool:
        w, hungry, pace = self.w, self.hungry, self.pace
        for o in range(self.n):
            if o != w and not hungry[o] and mine > _pace_limit(pace[o]):
                return True
        return False

    def report(self, kind_: str, message: str, state: State, number: int, step: Any) -> None:
        """The first violation this process finds: to the parent, and every process stops."""
        self.status.put(("violation", kind_, message, encode([state]), number, step))
        self.stop.set()

    # -- the search ----------------------------------------------------------------------------------------------

    def search(self) -> None:
        # The shared ``stop`` event is a lock to ask: it is asked when idle and every 64 expansions, not per state.
        stack = self.stack
        while True:
            if not stack or not (self.free or self.holder):  # nothing to do, or waiting for the token
                if not self._wait():
                    break
                continue
            entry = stack[-1]
            if self.holder and self.hand_over(_pending(entry)):  # another process has earlier work
                continue
            if entry[2] is None:  # first time on top: expand it
                go = self._expand(entry)
                if go is None:
                    break
                if go:
                    continue
            if self._successors(entry):
                break

    def _wait(self) -> bool:
        """Nothing to do (or waiting for the token): say so, and take the next message; False to stop."""
        if self.stop.is_set():
            return False
        w = self.w
        if not self.stack:
            if self.holder and self.hand_over(None):
                return True
            for o in range(self.n):
                self.send(o)
            if self.working:
                self.working = False
                if self.add(-1) == 0:
                    self.status.put(("done",))
            self.hungry[w] = 1
            # Idle, it keeps pace with the others: once it has work, it is compared from where they are.
            self.clock = max(self.clock, *self.pace)
            self.pace[w] = self.clock
        try:
            msg = self.inbox.get(timeout=0.05)
        except queue.Empty:
            if os.getppid() != self.ppid:
                os._exit(0)
            return True
        self.hungry[w] = 0
        if not self.working:
            self.working = True
            self.add(1)
        return self.receive(msg)

    def _expand(self, entry: list[Any]) -> bool | None:
        """Expand the state on top: None to stop (a violation), True to look at the stack again (it changed,
        or the messages were read), False to go on with its successors."""
        s, number = entry[0], entry[1]
        if self.check_state is not None:
            v = self.check_state(s)
            if v is not None:
                self.report(v[0], v[1], s, number, None)
                return None
        succ = self.expand(s)
        if not succ:
            self.stack.pop()
            dead = self.deadlock(s)
            if dead:
                self.report("deadlock", dead, s, number, None)
                return None
            return True
        entry[2] = succ
        self.expanded += 1
        self.clock += 1
        if self.holder:
            self.count += 1
            if self.count >= TOKEN_PHASE:
                self._end_token_phase()
        if self.max_states is None and len(self.visited) - self.reported >= 1024:  # for the progress line
            self.reported = self.stored[self.w] = len(self.visited)
        if self.expanded >= self.next_sync:
            return self._sync()
        return False

    def _end_token_phase(self) -> None:
        for o in range(self.n):
            if o != self.w:
                self.inboxes[o].put(("free", self.count))
        self.holder, self.free = False, True
        self.clock = max(self.clock, self.count)

    def _sync(self) -> bool | None:
        """Early on, after every expansion: the sequential order is kept closest where a violation takes few
        states to find; later every 64 (asking costs a lock). A batch is sent once it waited for more than a
        1,024th of the expansions made, or is full: a violation costs about that much more work than
        sequentially per crossing of its path (module docstring). None to stop, else True."""
        expanded = self.expanded
        self.next_sync = expanded + min(64, 1 + (expanded >> SYNC_SHIFT))
        if self.stop.is_set() or os.getppid() != self.ppid:
            return None
        old = expanded - max(1, expanded >> SYNC_SHIFT)
        for o in range(self.n):
            if self.since[o] <= old:
                self.send(o)
        # Take what arrived meanwhile, so that senders' batches do not pile up.
        try:
            while True:
                if not self.receive(self.inbox.get_nowait()):
                    break
        except queue.Empty:
            pass
        self.pace[self.w] = self.clock
        # Never far ahead of a process that has work (module docstring): wait for it, taking what it sends.
        while self.free and self.ahead(self.clock):
            if self.stop.is_set() or os.getppid() != self.ppid:
                break
            try:
                self.receive(self.inbox.get(timeout=0.002))
            except queue.Empty:
                pass
        return True

    def _successors(self, entry: list[Any]) -> bool:
        """Go on with the successors of the state on top, from its next index: down into the first new one this
        process owns, sending the others to their owners. True to stop."""
        s, number, succ, i, place = entry
        w, n, out, since, hungry = self.w, self.n, self.out, self.since, self.hungry
        home = s[2][:2]
        two = len(home) == 2
        n_succ = len(succ)
        halt = pushed = False
        transitions = self.transitions
        while i < n_succ:
            s2 = succ[i]
            i += 1
            transitions += 1
            if type(s2) is not tuple:
                if s2 is None:  # an assume pruned the step
                    continue
                # A failed step, reported where the sequential search meets it: after the subtrees of the
                # successors before it.
                self.report(s2.violation[0], s2.violation[1], s, number, (s2.thread, s2.choices))
                halt = True
                break
            if len(s2[1]) >= MAX_HEAP:
                self.status.put(("error", f"--workers: a heap of more than {MAX_HEAP:,} objects"))
                self.stop.set()
                halt = True
                break
            h = s2[2]
            # A step of a thread after the first two leaves them as they are: the state stays home.
            o = w if two and h[0] is home[0] and h[1] is home[1] else owner(s2, n)
            if o == w:
                number2 = self.admit(s2, number, i - 1)
                if number2 >= 0:  # new: go down into it, as the sequential search does
                    self.stack.append([s2, number2, None, 0, place + _place(i - 1)])
                    pushed = True
                    break
                if number2 == -2:
                    halt = True
                    break
            elif self.holder:
                # The sequential search goes down into it now: so does its owner, with the token. (If it was
                # stored already, the owner gives the token back at once.)
                entry[3] = i
                self.hand_over(place + _place(i), o, encode([(s2, number, i - 1, place + _place(i - 1))]))
                pushed = True
                break
            else:
                batch = out[o]
                if not batch:
                    since[o] = self.expanded
                batch.append((s2, number, i - 1, place + _place(i - 1)))
                # An idle owner gets the state at once: the sequential search would go down into it now.
                if len(batch) >= BATCH or hungry[o]:
                    self.send(o)
        self.transitions = transitions
        if halt:
            return True
        if pushed:
            entry[3] = i
        else:
            self.stack.pop()
        return False


@dataclass
class _Shared:
    """What the processes share: their inboxes, the parent's status queue, the counter of busy processes and
    states in flight, the states each stored, who is idle, how far each got, --max-states, the stop."""

    inboxes: list[Any]
    status: Any
    busy: Any
    stored: Any
    hungry: Any
    pace: Any
    max_states: int | None
    stop: Any
    ppid: int


def _worker(w: int, n: int, ts: Any, kind: str, shared: _Shared) -> None:
    _Worker(w, n, ts, kind, shared).run()


def _serve(w: int, n: int, inboxes: list[Any], status: Any, parent_of: Any, position: Any, ppid: int,
           requests: list[Any]) -> None:
    """After the search: answer the parent's requests for the path to a state (``_chain``) until it says
    "quit". Each request follows the parent pointers stored here, sends the positions met on the way to the
    parent process and passes the request on to the owner of the next state up (module docstring)."""
    inbox = inboxes[w]
    while True:
        try:
            msg = requests.pop(0) if requests else inbox.get(timeout=0.1)
        except queue.Empty:
            if os.getppid() != ppid:
                break
            continue
        if type(msg) is bytes or msg[0] in ("token", "free"):  # sent before the stop
            continue
        if msg[0] == "quit":
            break
        _, number, hop = msg
        segment = []
        while number >= 0 and number % n == w:
            i = number // n
            number = parent_of[i]
            if number >= 0:
                segment.append(position[i])
        status.put(("segment", hop, segment, number))
        if number >= 0:
            inboxes[number % n].put(("trace", number, hop + 1))
    # What the parent needs is delivered (it asked for nothing more): do not wait at exit for a reader.
    for q in inboxes:
        q.cancel_join_thread()


def parallel_search(ts: Any, options: Options, progress: Callable[[Stats], None] | None = None) -> Outcome:
    """Search ``ts`` with ``options.workers`` processes (module docstring)."""
    workers, limits, store = options.workers, options.limits, options.store
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
    stored: Any = ctx.Array("q", workers)
    # Read and written without a lock: each process's "my stack is empty" and its expansions so far.
    hungry = ctx.Array("b", workers, lock=False)
    pace = ctx.Array("q", workers, lock=False)
    stop = ctx.Event()
    shared = _Shared(inboxes, status, busy, stored, hungry, pace, limits.max_states, stop, os.getpid())
    procs = [ctx.Process(target=_worker, args=(w, workers, ts, store, shared), daemon=True) for w in range(workers)]
    for p in procs:
        p.start()
    inboxes[owner(init, workers)].put(("token", [None] * workers, 0, encode([(init, -1, 0, b"")])))
    end = _End()
    try:
        _watch(end, shared, procs, limits, progress, stats, start)
        # The search is over: what it found is reported whatever the limits say now (a violation is never
        # turned into "incomplete" while its path is rebuilt).
        settle()
        stop.set()
        _collect(end, status, procs, workers)
        if end.error is not None:
            raise RuntimeError(end.error)
        found = _found(ts, end.violation, workers, inboxes, status, procs)
    finally:
        stop.set()
        for q in inboxes:
            q.put(("quit",))
        for p in procs:
            p.join(timeout=1)
            if p.is_alive():
                p.kill()
                p.join(timeout=1)
        for q in (*inboxes, status):
            q.cancel_join_thread()
    stats.states = sum(stored)
    stats.transitions = stats.moves = end.transitions
    stats.seconds = time.perf_counter() - start
    out = Outcome(found, stats, end.limit)
    out.split = list(stored)  # type: ignore[attr-defined]  # the states each process stored, for the note
    out.store = _store_report(store, end.reports, out.split)  # type: ignore[attr-defined]
    return out


@dataclass
class _End:
    """How the parallel search ended, as the parent learns it: the first violation reported (the worker's
    message), the limit that stopped it, a worker's error, and the processes' statistics."""

    violation: tuple[Any, ...] | None = None
    limit: str | None = None
    error: str | None = None
    transitions: int = 0
    reports: list[dict[str, Any]] = field(default_factory=list)

    def heard(self, msg: Any) -> bool:
        """Take a worker's message during the search; True once the search is over."""
        if msg[0] == "done":
            return True
        if msg[0] == "violation":
            self.violation = msg
            return True
        if msg[0] == "max-states":
            self.limit = "max-states"
            return True
        if msg[0] == "error":
            self.error = msg[1]
            return True
        if msg[0] == "stats":  # a worker ended early (after a stop)
            self.transitions += msg[2]
            self.reports.append(msg[3])
        return False


def _watch(end: _End, shared: _Shared, procs: list[Any], limits: Any, progress: Callable[[Stats], None] | None,
           stats: Stats, start: float) -> None:
    """The parent during the search: the workers' messages, its budget (the time limit, --max-memory, Ctrl-C),
    the workers' health and the progress line, until the search is over (``end`` says how)."""
    last = time.perf_counter()
    try:
        while True:
            try:
                msg = shared.status.get(timeout=0.05)
            except queue.Empty:
                msg = None
            if msg is not None and end.heard(msg):
                return
            poll()  # the time limit, --max-memory and Ctrl-C of the parent's budget
            dead = [p for p in procs if not p.is_alive()]
            if dead:  # killed from outside (the out-of-memory killer): the others would wait for it forever
                end.error = (f"--workers: process {procs.index(dead[0])} ended during the search (exit code "
                             f"{dead[0].exitcode})")
                return
            _memory_check(procs, limits)
            now = time.perf_counter()
            if progress is not None and now - last >= 0.5:
                last = now
                stats.states, stats.seconds = sum(shared.stored), now - start
                progress(stats)
    except LimitReached as e:
        end.limit = e.why
    except KeyboardInterrupt:
        end.limit = "interrupted"
    except MemoryError:
        end.limit = "memory"


def _collect(end: _End, status: Any, procs: list[Any], workers: int) -> None:
    """After the stop: every process's statistics (for at most 30 s), and a violation or an error that came
    as the search stopped."""
    deadline = time.perf_counter() + 30
    while len(end.reports) < workers and time.perf_counter() < deadline:
        try:
            msg = status.get(timeout=0.05)
        except queue.Empty:
            if not all(p.is_alive() for p in procs):
                break
            continue
        if msg[0] == "stats":
            end.transitions += msg[2]
            end.reports.append(msg[3])
        elif msg[0] == "violation" and end.violation is None:  # found as a limit stopped the search: kept
            end.violation = msg
        elif msg[0] == "error" and end.error is None:
            end.error = msg[1]


def _found(ts: Any, violation: tuple[Any, ...] | None, workers: int, inboxes: list[Any], status: Any,
           procs: list[Any]) -> Found | None:
    """The violation a worker reported, with the steps of its path (``_chain``, ``_rebuild``)."""
    if violation is None:
        return None
    _, kind, message, data, number, step = violation
    state = decode(data)[0]
    steps = _rebuild(ts, _chain(number, workers, inboxes, status, procs), state)
    # A failed step is reported after the path to the state it starts from; a deadlock or a state property
    # shows in the state itself (as the sequential search reports them).
    return Found(kind, message, steps + [step], None) if step is not None else Found(kind, message, steps, state)


def _store_report(kind: str, reports: list[dict[str, Any]], split: list[int]) -> dict[str, Any]:
    """The result's ``store`` field, as the sequential search gives it, from the processes' own stores. A
    fingerprint collision can only hide a state from its owner, within one process's store: the probability
    that one did is the sum over the processes (each n_w(n_w - 1)/2^65), below that of one store of them all."""
    if not reports:
        return {"kind": kind}
    merged = dict(reports[0])
    if "collision_probability" in merged:
        merged["collision_probability"] = (sum(r["collision_probability"] for r in reports)
                                           if len(reports) == len(split)
                                           else sum(k * (k - 1) for k in split) / 2.0**65)
    return merged


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


def _chain(number: int, n: int, inboxes: list[Any], status: Any, procs: list[Any]) -> list[int]:
    """The positions, among each state's successors, on the path from the initial state to the state numbered
    ``number``: the workers' parent pointers, followed back from that state (``_serve``)."""
    inboxes[number % n].put(("trace", number, 0))
    segments: dict[int, list[int]] = {}
    last: int | None = None
    while last is None or len(segments) <= last:
        try:
            msg = status.get(timeout=0.5)
        except queue.Empty:
            if not all(p.is_alive() for p in procs):
                raise RuntimeError("--workers: a process ended before the counterexample was rebuilt") from None
            continue
        if msg[0] != "segment":  # what the workers said as they stopped
            continue
        _, hop, segment, up = msg
        segments[hop] = segment
        if up < 0:
            last = hop
    positions = [p for hop in range(last + 1) for p in segments[hop]]
    positions.reverse()
    return positions


def _rebuild(ts: Any, positions: list[int], target: State) -> list[Any]:
    """The steps of the path that takes, from each state, the successor at the given position: the states are
    made again from the initial state (one expansion per step, as TLC rebuilds a trace from its fingerprints),
    and each step is the first in thread order that leads to the next state (an equally real run)."""
    expand, steps = _expander(ts), ts.steps
    s = ts.initial()
    out: list[Any] = []
    for p in positions:
        nxt = expand(s)[p]
        o = next(o for o in steps(s) if o.violation is None and o.state == nxt)
        out.extend(o.steps)
        s = nxt
    if s != target:
        raise RuntimeError("--workers: the path rebuilt does not reach the state a process reported (a bug in movers)")
    return out


__all__ = ["decode", "encode", "owner", "parallel_search"]
