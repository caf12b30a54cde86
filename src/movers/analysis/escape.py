"""Thread-locality by dynamic escape analysis: Dwyer, Hatcliff, Robby & Ranganath (papers/002), section 5
and 5.2 (Algorithm 3), with the justification of appendix C.1.1.

The paper approximates "visible to several threads" by *reachability along object references*: an object is
*reachable from a thread t* at state s when some local variable of some frame of t (``self`` included)
leads to it, or some global (static field) does; it is *thread-local to t at s* when it is reachable from t
only. A transition of t is *thread-local at s* when it accesses no global and every object it accesses is
thread-local to t at s. Definition 3 makes such a transition independent at s of every transition of
every other thread: no other thread can reach what it touches, and (Preservation of Independence) only t
itself can make those objects escape.

``Locality(ts, s)`` answers the reachability questions for one state. The heap walk is movers' canonical
one (``semantics.state.reachable``): the objects reachable from the globals (shared with everyone) are
computed once, then, per thread and on demand, the objects reachable from its frames and not from the
globals. ``Locality.of`` keeps the last state's answers, since the ample search asks about one state many
times in a row (one question per candidate thread, and the locking strategies' further ones); both sets are
also remembered by the identity of the parts of the state they are computed from (``_SHARED``,
``_PRIVATE``), which successive states of a search share where a step left them alone.

``ThreadLocal`` is the paper's (D) ``checkC1``; ``StaticThreadLocal`` is (S) (Algorithm 2, from a static
analysis's per-node verdict) and ``Sda`` is (SDA): a statically thread-local step skips the heap scan,
any other step gets the dynamic one.
"""

from __future__ import annotations

from typing import Any, Protocol

from movers.ir.program import Code, Ref, ref
from movers.semantics.state import State, reachable


class StepFacts(Protocol):
    """What the checkC1 strategies read of a step (``reduce/ample.py``'s ``StepView`` is one): the state,
    the thread, the global slots and the pre-state objects it accesses, and the state's ``Locality``."""

    @property
    def state(self) -> State: ...

    @property
    def thread(self) -> int: ...

    @property
    def globals(self) -> frozenset[int]: ...

    @property
    def objects(self) -> frozenset[int]: ...

    @property
    def locality(self) -> Any: ...


# The sets above by the identity of the parts of the state they come from, since a search's successive states
# share the parts a step left alone (another thread's frames, an unchanged heap): (globals, heap) -> objects
# reachable from the globals; (thread, its frames, globals, heap) -> that thread's private objects. Each entry
# keeps its parts alive (so their ids stay theirs) and is checked by identity; the sets are never changed.
_SHARED: dict[tuple[int, int], tuple[Any, Any, set[int]]] = {}
_PRIVATE: dict[tuple[int, int, int, int, bool], tuple[Any, Any, Any, set[int]]] = {}
MEMO_LIMIT = 4096


def forget_memos() -> None:
    """Drop both memos (their entries keep states, and so compiled programs, alive): after a check."""
    _SHARED.clear()
    _PRIVATE.clear()



class Locality:
    """Reachability facts of one state (section 5: reachability along object references)."""

    __slots__ = ("state", "_shared", "_private", "_ends")

    _last: Locality | None = None

    def __init__(self, ts: Any, state: State) -> None:
        self.state = state
        self._shared: set[int] | None = None
        self._private: dict[int, set[int]] = {}
        # Where a thread's end is observed (``t.is_alive()``), the end writes the thread's own Thread object
        # (lang/timeouts.py): a thread reaches it, as ``threading.current_thread()`` does in CPython.
        program = getattr(ts, "program", None)
        self._ends = bool(getattr(program, "ends_observed", False))

    @classmethod
    def of(cls, ts: Any, state: State) -> Locality:
        """The Locality of ``state``, reused while the same state object is asked about."""
        last = cls._last
        if last is None or last.state is not state:
            last = cls._last = cls(ts, state)
        return last

    @property
    def shared(self) -> set[int]:
        """Objects reachable from the globals: reachable from every thread."""
        if self._shared is None:
            g, heap = self.state[0], self.state[1]
            key = (id(g), id(heap))
            hit = _SHARED.get(key)
            if hit is not None and hit[0] is g and hit[1] is heap:
                self._shared = hit[2]
            else:
                self._shared = reachable(self.state, list(g))
                if len(_SHARED) >= MEMO_LIMIT:
                    _SHARED.clear()
                _SHARED[key] = (g, heap, self._shared)
        return self._shared

    def private(self, t: int) -> set[int]:
        """Objects thread ``t`` reaches from its frames and that are not reachable from the globals."""
        p = self._private.get(t)
        if p is None:
            frames, g, heap = self.state[2][t], self.state[0], self.state[1]
            key = (t, id(frames), id(g), id(heap), self._ends)
            hit = _PRIVATE.get(key)
            if hit is not None and hit[0] is frames and hit[1] is g and hit[2] is heap:
                p = self._private[t] = hit[3]
                return p
            shared = self.shared
            p = set()
            work: list[Any] = [v for frame in self.state[2][t] for v in frame[2:]]
            if self._ends:
                work.extend(ref(i) for i, o in enumerate(heap) if o[0].is_thread and o[2] == t)
            while work:
                v = work.pop()
                ty = type(v)
                if ty is Ref:
                    i = v.i
                    if i not in p and i not in shared:
                        p.add(i)
                        work.extend(heap[i][2:])
                elif ty is tuple:
                    work.extend(v)
            self._private[t] = p
            if len(_PRIVATE) >= MEMO_LIMIT:
                _PRIVATE.clear()
            _PRIVATE[key] = (frames, g, heap, p)
        return p

    def reachable_by_others(self, t: int, objs: Any) -> bool:
        """Can a thread other than ``t`` reach one of ``objs``? (Algorithm 3, lines 6-7.)"""
        if not objs:
            return False
        shared = self._shared if self._shared is not None else self.shared
        for o in objs:
            if o in shared:
                return True
        threads = self.state[2]
        private = self._private
        for u in range(len(threads)):
            if u != t and threads[u]:
                p = private.get(u)
                if p is None:
                    p = self.private(u)
                for o in objs:
                    if o in p:
                        return True
        return False

    def thread_local(self, t: int, objs: Any) -> bool:
        return not self.reachable_by_others(t, objs)

    def owners(self, obj: int) -> frozenset[int]:
        """The live threads that can reach ``obj`` (every live thread when the globals lead to it)."""
        threads = self.state[2]
        live = [u for u in range(len(threads)) if threads[u]]
        if obj in self.shared:
            return frozenset(live)
        return frozenset(u for u in live if obj in self.private(u))

    def reachable_avoiding(self, t2: int, objs: Any, blockers: Any) -> bool:
        """Can thread ``t2`` reach one of ``objs`` (from the globals or its frames) along a path that passes
        through no object of ``blockers``? (Section 6.3: objects reachable only through a weak self-locking
        object's fields are dominated by it.) A blocker is neither reached nor walked through."""
        want = set(objs)
        if not want:
            return False
        heap = self.state[1]
        seen: set[int] = set()
        work: list[Any] = list(self.state[0])
        for frame in self.state[2][t2]:
            work.extend(frame[2:])
        while work:
            v = work.pop()
            ty = type(v)
            if ty is Ref:
                i = v.i
                if i in seen or i in blockers:
                    continue
                if i in want:
                    return True
                seen.add(i)
                work.extend(heap[i][2:])
            elif ty is tuple:
                work.extend(v)
        return False


# -- checkC1 strategies ------------------------------------------------------------------------------------------


class ThreadLocal:
    """(D): Algorithm 3. Thread t's current transitions are independent when they access no global (G is
    empty) and no object another thread can reach (O is thread-local to t)."""

    name = "thread-local"

    def check_c1(self, view: StepFacts) -> bool:
        if view.globals:
            return False
        return not view.locality.reachable_by_others(view.thread, view.objects)


class StaticLocality(Protocol):
    """What the static escape analysis (``static_escape.analyse``) answers."""

    def node_local(self, code: Code, pc: int) -> bool: ...


def step_nodes(thread: tuple) -> list[tuple[Code, int]]:
    """The nodes thread ``thread``'s next step may run: its next node, the free glue after it (nodes that
    are not costly, up to the next costly one), and, when the glue returns, the caller's glue (not the code
    the glue calls: ``StaticThreadLocal`` never calls a calling step local). Over-approximates, as a static
    verdict has to cover every resolution of the step (the paper's "all transitions of t at its control point")."""
    out: list[tuple[Code, int]] = []
    frames = list(thread)
    while frames:
        code, pc = frames[-1][0], frames[-1][1]
        returns = _glue(code, pc, out)
        frames.pop()
        if not returns or not frames or frames[-1][0].nodes[frames[-1][1]].costly:
            break
    return out


def _glue(code: Code, pc: int, out: list[tuple[Code, int]]) -> bool:
    """Add ``(code, pc)`` and the glue after it to ``out``; True when the glue may return."""
    returns = False
    seen = {pc}
    work = [pc]
    first = True
    while work:
        p = work.pop()
        n = code.nodes[p]
        if not first and n.costly:
            continue
        first = False
        out.append((code, p))
        if not n.succ:
            returns = True
        for q in n.succ:
            if q < len(code.nodes) and q not in seen:
                seen.add(q)
                work.append(q)
    return returns


class StaticThreadLocal:
    """(S): Algorithm 2's checkC1. Every node the step may run is statically thread-local, and none calls
    a function (a call's glue in the callee is not covered by the caller's verdict)."""

    name = "static-thread-local"

    def __init__(self, static: StaticLocality) -> None:
        self.static = static
        self._memo: dict[tuple[Any, ...], bool] = {}

    def statically_local(self, thread: tuple) -> bool:
        key = tuple((f[0], f[1]) for f in thread)
        v = self._memo.get(key)
        if v is None:
            nodes = step_nodes(thread)
            v = all(self.static.node_local(c, p) and not c.nodes[p].calls for c, p in nodes)
            if len(self._memo) > 100_000:
                self._memo.clear()
            self._memo[key] = v
        return v

    def check_c1(self, view: StepFacts) -> bool:
        return self.statically_local(view.state[2][view.thread])

    def rejects(self, state: State, t: int) -> bool:
        """checkC1 is False for thread t's step whatever it does (the verdict is static): the ample search
        need not execute it with tracking nor build its view (``reduce/ample.py``)."""
        return not self.statically_local(state[2][t])


class Sda:
    """(SDA): a statically thread-local step needs no heap scan; any other gets Algorithm 3's."""

    name = "static+dynamic thread-local"

    def __init__(self, static: StaticLocality) -> None:
        self.static = StaticThreadLocal(static)
        self.dynamic = ThreadLocal()

    def check_c1(self, view: StepFacts) -> bool:
        return self.static.check_c1(view) or self.dynamic.check_c1(view)


__all__ = ["Locality", "ThreadLocal", "StaticThreadLocal", "Sda", "StaticLocality", "StepFacts", "step_nodes"]
