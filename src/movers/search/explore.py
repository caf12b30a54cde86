"""The explorers: depth-first (the default, with the search stack) and breadth-first (shortest
counterexamples), over an exact visited set of states.

The search knows nothing of reductions: it asks the reduction for the moves from a state and whether a state
must be stored, and it keeps, for a violation, the moves that reach it (their steps become the trace).
"""

from __future__ import annotations

import gc
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from movers.options import Limits, Options
from movers.reduce.base import Move, Reduction
from movers.report.result import Stats
from movers.search.fingerprints import make_store, store_report
from movers.search.limits import LimitReached, enforce, poll
from movers.search.store import StateStore
from movers.semantics.state import State

Step = tuple[int, tuple[int, ...]]

__all__ = ["Found", "Limits", "Outcome", "Search", "Step", "thaw"]  # Limits: its home is movers.options


@dataclass
class Found:
    """A violation and the steps from the initial state that reach it."""

    kind: str
    message: str
    steps: list[Step] = field(default_factory=list)
    state: State | None = None  # the state in which it shows (deadlocks, invariants)


@dataclass
class Outcome:
    found: Found | None
    stats: Stats
    limit: str | None  # why the search stopped early, if it did
    # Every distinct violation found (more than one with --all-violations / --max-violations).
    all_found: list[Found] = field(default_factory=list)


def thaw() -> None:
    """Give the objects frozen at the end of searches back to the garbage collector (the states themselves
    are freed by reference counting once the search is dropped; cycles need the collector)."""
    gc.unfreeze()


class _Stop(Exception):
    def __init__(self, why: str) -> None:
        self.why = why


class Search:
    """One run of an explorer. ``progress(stats)`` is called about twice a second on long runs."""

    CHECK_EVERY = 512  # expansions between looks at the clock
    PROGRESS_EVERY = 0.5  # seconds between progress reports

    def __init__(
        self, ts: Any, reduction: Reduction, options: Options | None = None,
        progress: Callable[[Stats], None] | None = None,
    ) -> None:
        options = options or Options()
        self.ts = ts
        self.red = reduction
        self.limits = options.limits
        self.progress = progress
        # The depth-first visited store (search/fingerprints.py): exact, hashcompact or bitstate (2^bits bits).
        self.store_kind = options.store
        self.bits = options.bits
        # Thread symmetry (semantics/symmetry.py): states are remembered by a representative of their orbit.
        self.symmetry = options.symmetry == "threads"
        # --all-violations / --max-violations N: the depth-first search goes on after a violation, keeping
        # one per kind and message (SPIN's -e, TLC's -continue); ``found_all`` holds them in the order found.
        self.max_violations = options.max_violations
        self.found_all: list[Found] = []
        self.stats = Stats()
        self.truncated = False
        self._start = 0.0
        self._last_progress = 0.0
        self._store: Any = ()

    def _keys(self, store: Any) -> tuple[Callable[[State], Any], Callable[[State], Any]]:
        """The store's ``key`` and ``find``; under thread symmetry, of the state's representative."""
        if not self.symmetry:
            return store.key, store.find
        from movers.semantics.symmetry import representative

        key, find, number = store.key, store.find, store.number
        return (lambda s: key(representative(s, number))), (lambda s: find(representative(s, number)))

    def _enough(self, f: Found) -> bool:
        """Keep ``f`` if it is a violation not seen yet (by kind and message); whether to stop searching."""
        if all((g.kind, g.message) != (f.kind, f.message) for g in self.found_all):
            self.found_all.append(f)
        return len(self.found_all) >= self.max_violations

    def store_report(self) -> dict[str, Any]:
        """Which visited store the search used and, for a lossy one, how much it may have missed (with every
        field of its kind even when the search stopped before its store existed)."""
        report = getattr(self._store, "report", None)
        return report() if report is not None else store_report(self.store_kind, 0, self.bits)

    def _tick(self, stored: int) -> None:
        now = time.perf_counter()
        self.stats.seconds = now - self._start
        self.stats.states = stored
        # The timer of the budget raises on its own on the main thread; elsewhere this look is the only one.
        poll()
        if self.progress is not None and now - self._last_progress >= self.PROGRESS_EVERY:
            self._last_progress = now
            self.progress(self.stats)

    def run(self, strategy: str = "dfs") -> Outcome:
        self._start = self._last_progress = time.perf_counter()
        self._store: Any = ()
        # States are acyclic tuples: the cyclic garbage collector would only rescan the growing visited set
        # over and over (a third of the run time on large searches), so it is off while we search.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            with enforce(self.limits.budget()):
                if getattr(self.red, "incremental", False):
                    found = self._incremental(strategy)
                elif strategy == "dfs":
                    found = self._dfs_plain() if self._plain() else self._dfs()
                    if found is None and self.found_all:  # the search ended before --max-violations
                        found = self.found_all[0]
                else:
                    found = self._bfs()
            limit = None
        except (_Stop, LimitReached) as s:
            # Violations found before a limit are reported (the verdict is a violation); the limit too.
            found, limit = (self.found_all[0] if self.found_all else None), s.why
        except KeyboardInterrupt:
            found, limit = None, "interrupted"
        except MemoryError:
            found, limit = None, "memory"
        finally:
            if gc_was_enabled:
                # Without the freeze, the first collection after the search would scan every state stored
                # (seconds for millions): that would overshoot a time limit and slow every end of search.
                # The checker thaws them (``thaw``) once its result is built.
                gc.freeze()
                gc.enable()
        self.stats.seconds = time.perf_counter() - self._start
        self.stats.states = self._distinct_states()
        if found is None and self.found_all:  # stopped (a limit, Ctrl-C) after some violations
            found = self.found_all[0]
        if found is None and limit is None and self.truncated:
            limit = "max-depth"
        out = Outcome(found, self.stats, limit)
        out.all_found = list(self.found_all) or ([found] if found is not None else [])
        return out

    def _counter(self) -> Callable[[State], bool]:
        """``full(s)``: would storing ``s`` exceed --max-states? Counted as ``states`` is (program states, see
        ``_distinct_states``), so that a model with exactly N states completes under --max-states N."""
        n = self.limits.max_states
        project = getattr(self.ts, "program_state", None)
        if n is None:
            return lambda s: False
        if project is None:
            return lambda s: len(self._store) >= n
        seen: set[Any] = set()

        def full(s: State) -> bool:
            p = project(s)
            if p in seen:
                return False
            if len(seen) >= n:
                return True
            seen.add(p)
            return False

        return full

    def _distinct_states(self) -> int:
        """How many states were stored, as states of the program: an instrumentation that adds ghost state
        (transactions' phases) says how to see through it, so that ``states`` means the same in every row
        (a program state stored under two phase vectors, in two passes of an incremental search, is one)."""
        project = getattr(self.ts, "program_state", None)
        if project is None or self.store_kind != "exact":  # a lossy store keeps no states to project
            return len(self._store)
        return len({project(s) for s in self._store})

    @property
    def stored(self) -> Any:
        """The states the search stored (a set for DFS, the BFS tree's keys for BFS)."""
        return self._store

    def _initial(self) -> tuple[State, Found | None]:
        init = self.ts.initial()
        v = self.ts.check_state(init)
        return init, (Found(v[0], v[1], [], init) if v else None)

    def _dead(self, state: State, moves: list[Move]) -> str | None:
        return self.ts.deadlock(state) if not moves else None

    # -- depth-first ------------------------------------------------------------------------------------------

    def _dfs(self) -> Found | None:
        ts, red, stats = self.ts, self.red, self.stats
        max_states = self.limits.max_states
        max_depth = self.limits.max_depth
        init, bad = self._initial()
        store_ = make_store(self.store_kind, self.bits)
        self._store = store_
        visited = store_.keys  # the hot loop below adds keys (store.py) to this plain set
        key, find = self._keys(store_)
        full = self._counter()
        if red.store(init):
            full(init)
            visited.add(key(init))
        stats.states = len(visited)
        if bad:
            return bad
        # Reductions with a cycle proviso ask whether a state is on the stack.
        on_stack: set[State] = set()
        track_stack = hasattr(red, "on_stack")
        if track_stack:
            red.on_stack = on_stack.__contains__  # type: ignore[attr-defined]
            on_stack.add(init)
        # The stack holds, per state on the current path, its moves and the index of the next to try.
        moves0 = red.moves(init)
        dead = self._dead(init, moves0)
        if dead:
            return Found("deadlock", dead, [], init)
        stack: list[list[Any]] = [[init, moves0, 0, None]]
        expanded = 0
        check_every = self.CHECK_EVERY
        store = red.store
        moves_of = red.moves
        check_state = ts.check_state
        if getattr(check_state, "checks_nothing", False):
            check_state = None
        visit = visited.add
        stores_all = getattr(red, "stores_all", False)
        # A reduction that wants to know how it got to a state (Dwyer et al.'s DA: the unstored run so far,
        # and the thread that moved last) is told the move before it is asked for the state's moves.
        track_arrival = hasattr(red, "arrived")
        if track_arrival:
            red.arrived = None  # type: ignore[attr-defined]
        # Counters live in locals on this hot loop and are written back to stats at every tick.
        transitions = nmoves = max_d = 0
        try:
            while stack:
                top = stack[-1]
                moves = top[1]
                i = top[2]
                if i >= len(moves):
                    stack.pop()
                    if track_stack:
                        on_stack.discard(top[0])
                    continue
                top[2] = i + 1
                m = moves[i]
                transitions += m.size
                nmoves += 1
                if m.violation is not None:
                    f = Found(m.violation[0], m.violation[1], self._path(stack) + list(m.steps))
                    if self._enough(f):
                        return f
                    continue
                s = m.state
                if s is None:
                    continue
                if stores_all:
                    # One hash instead of two: add, then compare sizes.
                    k = key(s)
                    n0 = len(visited)
                    visit(k)
                    if len(visited) == n0:
                        continue
                    if max_states is not None and n0 >= max_states:
                        visited.discard(k)  # --max-states N stores N states, never N + 1
                        raise _Stop("max-states")
                else:
                    k = find(s)
                    if k is not None and k in visited:
                        continue
                    # A state on the stack is being expanded: it counts as visited even when it is not stored,
                    # so that a cycle of unstored states is never followed forever.
                    if track_stack and s in on_stack:
                        continue
                    # ``keep`` False: explore the state without storing it (Outcome objects have no such
                    # attribute: they are always kept).
                    if m.keep and store(s):
                        if full(s):
                            raise _Stop("max-states")
                        visit(key(s))
                depth = len(stack)
                if depth > max_d:
                    max_d = depth
                if check_state is not None:
                    v = check_state(s)
                    if v is not None:
                        f = Found(v[0], v[1], self._path(stack) + list(m.steps), s)
                        if self._enough(f):
                            return f
                        continue
                if track_arrival:
                    red.arrived = m  # type: ignore[attr-defined]
                if max_depth is not None and depth >= max_depth:
                    if moves_of(s):
                        self.truncated = True
                    continue
                if track_stack:
                    on_stack.add(s)
                succ = moves_of(s)
                if not succ:
                    on_stack.discard(s)
                    dead = ts.deadlock(s)
                    if dead:
                        f = Found("deadlock", dead, self._path(stack) + list(m.steps), s)
                        if self._enough(f):
                            return f
                    continue
                stack.append([s, succ, 0, m])
                expanded += 1
                if expanded % check_every == 0:
                    stats.transitions, stats.moves, stats.max_depth = transitions, nmoves, max_d
                    self._tick(len(visited))
        finally:
            stats.transitions, stats.moves, stats.max_depth = transitions, nmoves, max_d
        return None

    # -- the plain full search ---------------------------------------------------------------------------------

    def _plain(self) -> bool:
        """Whether the search is the plain full one, where only the states matter: every state stored
        (``none``), no state property, no depth limit, and successors the system can give as bare states."""
        red, ts = self.red, self.ts
        return (getattr(red, "name", None) == "none" and getattr(red, "stores_all", False)
                and self.limits.max_depth is None
                and getattr(type(ts), "successors", None) is not None  # its own, not an instrumentation's inner
                and getattr(ts.check_state, "checks_nothing", False)
                and not hasattr(red, "on_stack") and not hasattr(red, "arrived"))

    def _dfs_plain(self) -> Found | None:
        """``_dfs`` for the plain full search: the same states in the same order, with successors as bare
        states (``TransitionSystem.successors``) wherever the generated code runs every step of a state, and
        the Outcomes of ``steps`` elsewhere. A stack entry is [state, key, successors, the thread each
        successor moved (None: not known), next index]; the steps of a counterexample are found again from
        the states on the stack (``_steps_between``)."""
        ts, stats = self.ts, self.stats
        max_states = self.limits.max_states
        init, bad = self._initial()
        store_ = make_store(self.store_kind, self.bits)
        self._store = store_
        visited = store_.keys
        key = self._keys(store_)[0]
        k0 = key(init)
        visited.add(k0)
        stats.states = 1
        if bad:
            return bad
        successors, steps = ts.successors, ts.steps

        def by_steps(s: State) -> tuple[list[Any], None]:
            # Where some step is not on the generated code. A violation stays an Outcome (the loop reports it
            # where _dfs would); an assume that pruned the step is None.
            return [o if o.violation is not None else o.state for o in steps(s)], None

        both = successors(init)
        succ0, moved0 = both if both is not None else by_steps(init)
        if not succ0:
            dead = ts.deadlock(init)
            if dead:
                return Found("deadlock", dead, [], init)
        stack: list[list[Any]] = [[init, k0, succ0, moved0, 0]]
        visit = visited.add
        # The exact store's key, in line (store.py's ``key``): the lookups run in C, and a part never seen
        # before (KeyError) goes through ``key``, which interns it. Where the thread that moved is known, only
        # the parts that are new objects are looked up: the successor shares every other part with its parent.
        inline = type(store_) is StateStore and not self.symmetry
        number = store_.parts.__getitem__
        expanded = 0
        check_every = self.CHECK_EVERY
        transitions = max_d = 0
        cap = max_states if max_states is not None else float("inf")
        try:
            while stack:
                entry = stack[-1]
                parent, pk, succ, moved, i = entry
                pg, ph = parent[0], parent[1]
                n = len(succ)
                while i < n:
                    s = succ[i]
                    i += 1
                    transitions += 1
                    if moved is not None and inline:
                        # Successors from the generated code: bare states, each from one thread's step.
                        try:
                            t = moved[i - 1]
                            kl = [*pk]
                            if s[0] is not pg:
                                kl[0] = number(s[0])
                            if s[1] is not ph:
                                kl[1] = number(s[1])
                            kl[t + 2] = number(s[2][t])
                            k = tuple(kl)
                        except KeyError:
                            k = key(s)
                    else:
                        if type(s) is not tuple:
                            if s is None:
                                continue
                            f = Found(s.violation[0], s.violation[1], self._steps_between(stack) + list(s.steps))
                            if self._enough(f):
                                return f
                            continue
                        if inline:
                            try:
                                k = (number(s[0]), number(s[1]), *map(number, s[2]))
                            except KeyError:
                                k = key(s)
                        else:
                            k = key(s)
                    if k in visited:
                        continue
                    if len(visited) >= cap:
                        raise _Stop("max-states")  # --max-states N stores N states, never N + 1
                    visit(k)
                    depth = len(stack)
                    if depth > max_d:
                        max_d = depth
                    both = successors(s)
                    nxt, nmoved = both if both is not None else by_steps(s)
                    if not nxt:
                        dead = ts.deadlock(s)
                        if dead:
                            stack.append([s])
                            f = Found("deadlock", dead, self._steps_between(stack), s)
                            stack.pop()
                            if self._enough(f):
                                return f
                        continue
                    entry[4] = i
                    stack.append([s, k, nxt, nmoved, 0])
                    expanded += 1
                    if expanded % check_every == 0:
                        stats.transitions, stats.moves, stats.max_depth = transitions, transitions, max_d
                        self._tick(len(visited))
                    break
                else:
                    stack.pop()
        finally:
            stats.transitions, stats.moves, stats.max_depth = transitions, transitions, max_d
        return None

    def _steps_between(self, stack: list[list[Any]]) -> list[Step]:
        """The steps from each state on the stack to the next: a step of the first state whose successor is the
        second (if several threads' steps lead there, the first in thread order: an equally real run)."""
        out: list[Step] = []
        for a, b in zip(stack, stack[1:], strict=False):
            nxt = b[0]
            o = next(o for o in self.ts.steps(a[0]) if o.violation is None and o.state == nxt)
            out.extend(o.steps)
        return out

    @staticmethod
    def _path(stack: list[list[Any]]) -> list[Step]:
        steps: list[Step] = []
        for entry in stack:
            m = entry[3]
            if m is not None:
                steps.extend(m.steps)
        return steps

    # -- breadth-first ----------------------------------------------------------------------------------------

    def _bfs(self) -> Found | None:
        ts, red, stats = self.ts, self.red, self.stats
        max_depth = self.limits.max_depth
        init, bad = self._initial()
        # parent[s] = (predecessor, move): the BFS tree, for shortest counterexamples.
        parent: dict[State, tuple[State | None, Move | None]] = {init: (None, None)}
        # Every state reached is kept for the paths, but only those the reduction stores are counted.
        stored: set[State] = set()
        self._store = stored
        full = self._counter()
        if red.store(init):
            full(init)
            stored.add(init)
        if hasattr(red, "stored"):
            red.stored = stored.__contains__  # type: ignore[attr-defined]
        stats.states = len(stored)
        if bad:
            return bad
        dead = ts.deadlock(init)
        if dead:
            return Found("deadlock", dead, [], init)
        queue: deque[tuple[State, int]] = deque([(init, 0)])
        expanded = 0
        track_arrival = hasattr(red, "arrived")
        while queue:
            s, depth = queue.popleft()
            if track_arrival:
                red.arrived = parent[s][1]  # type: ignore[attr-defined]
            if max_depth is not None and depth >= max_depth:
                if red.moves(s):
                    self.truncated = True
                continue
            moves = red.moves(s)
            for m in moves:
                stats.transitions += len(m.steps)
                stats.moves += 1
                if m.violation is not None:
                    return Found(m.violation[0], m.violation[1], self._bfs_path(parent, s) + list(m.steps))
                n = m.state
                if n is None or n in parent:
                    continue
                parent[n] = (s, m)
                if m.keep and red.store(n):
                    if full(n):
                        raise _Stop("max-states")
                    stored.add(n)
                if depth + 1 > stats.max_depth:
                    stats.max_depth = depth + 1
                v = ts.check_state(n)
                if v is not None:
                    return Found(v[0], v[1], self._bfs_path(parent, n), n)
                # A deadlock is seen when its state is generated, as violations of moves are: every violation
                # on level d+1 is then found while level d is expanded, before any on a deeper level, so the
                # counterexample is a shortest one whatever its kind.
                dead = ts.deadlock(n)
                if dead:
                    return Found("deadlock", dead, self._bfs_path(parent, n), n)
                queue.append((n, depth + 1))
            expanded += 1
            if expanded % self.CHECK_EVERY == 0:
                self._tick(len(stored))
        return None

    # -- incremental passes (reductions whose predicates weaken during the search) ------------------------------

    def _incremental(self, strategy: str) -> Found | None:
        """Explore; whenever the reduction's classification weakened during a pass, re-expand every stored
        state with the weaker one, keeping what was found, until a pass changes nothing. This computes the
        least fixpoint of Flanagan & Qadeer's rules with lock inference (section 6) without restarting."""
        ts, red, stats = self.ts, self.red, self.stats
        max_depth = self.limits.max_depth
        init, bad = self._initial()
        parent: dict[State, tuple[State | None, Move | None]] = {init: (None, None)}
        depth_of: dict[State, int] = {init: 0}
        stored: dict[State, None] = {}
        self._store = stored
        full = self._counter()
        if red.store(init):
            full(init)
            stored[init] = None
        if bad:
            return bad
        dead = ts.deadlock(init)
        if dead:
            return Found("deadlock", dead, [], init)
        roots = [init]
        self.passes = 0
        transitions = nmoves = 0
        try:
            while True:
                self.passes += 1
                before = red.version()  # type: ignore[attr-defined]
                work: deque[State] = deque(reversed(roots) if strategy == "dfs" else roots)
                take = work.pop if strategy == "dfs" else work.popleft
                expanded = 0
                while work:
                    s = take()
                    d = depth_of[s]
                    if max_depth is not None and d >= max_depth:
                        if red.moves(s):
                            self.truncated = True
                        continue
                    moves = red.moves(s)
                    for m in moves:
                        transitions += len(m.steps)
                        nmoves += 1
                        if m.violation is not None:
                            return Found(m.violation[0], m.violation[1], self._bfs_path(parent, s) + list(m.steps))
                        n = m.state
                        if n is None or n in parent:
                            continue
                        parent[n] = (s, m)
                        depth_of[n] = d + 1
                        if d + 1 > stats.max_depth:
                            stats.max_depth = d + 1
                        if red.store(n):
                            if full(n):
                                raise _Stop("max-states")
                            stored[n] = None
                        v = ts.check_state(n)
                        if v is not None:
                            return Found(v[0], v[1], self._bfs_path(parent, n), n)
                        # As in _bfs: deadlocks are seen on generation, so that bfs gives a shortest trace.
                        dead = ts.deadlock(n)
                        if dead:
                            return Found("deadlock", dead, self._bfs_path(parent, n), n)
                        work.append(n)
                    expanded += 1
                    # A state here expands whole transactions: look at the clock more often.
                    if expanded % 16 == 0:
                        stats.transitions, stats.moves = transitions, nmoves
                        self._tick(len(stored))
                if red.version() == before:  # type: ignore[attr-defined]
                    return None
                # The predicates weakened: what was expanded under the stronger ones is expanded again.
                roots = list(stored)
                red.reset()  # type: ignore[attr-defined]
        finally:
            stats.transitions, stats.moves = transitions, nmoves

    @staticmethod
    def _bfs_path(parent: dict[State, tuple[State | None, Move | None]], s: State) -> list[Step]:
        chunks: list[tuple[Step, ...]] = []
        cur: State | None = s
        while cur is not None:
            prev, m = parent[cur]
            if m is not None:
                chunks.append(m.steps)
            cur = prev
        return [st for chunk in reversed(chunks) for st in chunk]
