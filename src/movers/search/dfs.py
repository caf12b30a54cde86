"""The general depth-first search: a stack of states with their moves, for every reduction.

It asks the reduction for the moves from a state (``Reduction.moves``) and whether a state is stored
(``Reduction.store``). A reduction with a cycle proviso (Dwyer et al.'s C3, papers/002: a state whose moves
are reduced must not close a cycle on the stack) gets ``on_stack``, which under ``--symmetry threads`` answers
for a state's representative, as the visited store does (Bošnački, Dams & Holenderski: the ample set is
computed on the state as met, the proviso against the orbits on the stack); one that wants to know how it got to a
state (their DA: the unstored run so far) gets ``arrived``, the move before it is asked for the state's moves.
The counterexample's steps are the moves on the stack. The bookkeeping is ``base.py``'s; ``plain.py`` is the
same search, hand-inlined, for the full search.
"""

from __future__ import annotations

from typing import Any

from movers.search.base import Found, Step, Stop, Strategy
from movers.semantics.state import State


class DepthFirst(Strategy):
    def explore(self) -> Found | None:
        bad = self._start()
        if bad is not None:
            return bad
        self._loop()
        return None

    def _start(self) -> Found | None:
        """Store the initial state and set up the loop; what the initial state shows, if anything."""
        search, red = self.search, self.red
        init, bad = search.initial()
        store_ = search.new_store()
        search._store = store_
        self.visited = store_.keys  # the hot loop adds keys (store.py) to this plain set
        self.key, self.find = search.keys(store_)
        self.full = search.counter()
        if red.store(init):
            self.full(init)
            self.visited.add(self.key(init))
        self.stats.states = len(self.visited)
        if bad:
            return bad
        # Reductions with a cycle proviso ask whether a state is on the stack.
        # Under thread symmetry, by representative (``SearchBase.stack_set``), as the visited store.
        self.on_stack: set[State] = search.stack_set(store_)
        self.track_stack = red.needs_stack
        if self.track_stack:
            red.on_stack = self.on_stack.__contains__  # type: ignore[attr-defined]
            self.on_stack.add(init)
        # The stack holds, per state on the current path, its moves and the index of the next to try.
        moves0 = red.moves(init)
        dead = self.ts.deadlock(init) if not moves0 else None
        if dead:
            return Found("deadlock", dead, [], init)
        self.stack: list[list[Any]] = [[init, moves0, 0, None]]
        # A reduction that wants to know how it got to a state (Dwyer et al.'s DA: the unstored run so far,
        # and the thread that moved last) is told the move before it is asked for the state's moves.
        self.track_arrival = red.needs_arrival
        if self.track_arrival:
            red.arrived = None  # type: ignore[attr-defined]
        return None

    def _loop(self) -> None:
        search, ts, red, stats = self.search, self.ts, self.red, self.stats
        max_states = search.limits.max_states
        max_depth = search.limits.max_depth
        stack, visited, key, find, full = self.stack, self.visited, self.key, self.find, self.full
        on_stack, track_stack, track_arrival = self.on_stack, self.track_stack, self.track_arrival
        record, path, tick = search.record, self._path, search.tick
        expanded = 0
        check_every = search.CHECK_EVERY
        store, moves_of = red.store, red.moves
        check_state = None if getattr(ts.check_state, "checks_nothing", False) else ts.check_state
        # A lossy store (fingerprints.py) answers and records in one call, ``seen``, as in plain.py: its
        # ``add``, ``in`` and ``len`` are Python methods where a set's are C.
        seen = getattr(visited, "seen", None)
        cap = max_states if max_states is not None else float("inf")
        visit = visited.add if seen is None else seen
        stores_all = red.stores_all
        # Counters live in locals on this hot loop and are written back at every tick and at the end.
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
                    record(Found(m.violation[0], m.violation[1], path(stack) + list(m.steps)))
                    continue
                s = m.state
                if s is None:
                    continue
                if stores_all:
                    k = key(s)
                    if seen is None:
                        # One hash instead of two: add, then compare sizes.
                        n0 = len(visited)
                        visit(k)
                        new = len(visited) > n0
                    else:
                        new = not seen(k)
                        n0 = visited.n - 1
                    if not new:
                        continue
                    if n0 >= cap:
                        visited.discard(k)  # --max-states N stores N states, never N + 1
                        raise Stop("max-states")
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
                            raise Stop("max-states")
                        # Its key is ``k`` when its parts were all interned (``find`` is ``key`` then; a
                        # fingerprint 0 is only worked out again).
                        visit(k or key(s))
                depth = len(stack)
                if depth > max_d:
                    max_d = depth
                if check_state is not None:
                    v = check_state(s)
                    if v is not None:
                        record(Found(v[0], v[1], path(stack) + list(m.steps), s))
                        continue
                if track_arrival:
                    red.arrived = m  # type: ignore[attr-defined]
                if max_depth is not None and depth >= max_depth:
                    if moves_of(s):
                        search.truncated = True
                    continue
                if track_stack:
                    on_stack.add(s)
                succ = moves_of(s)
                if not succ:
                    on_stack.discard(s)
                    dead = ts.deadlock(s)
                    if dead:
                        record(Found("deadlock", dead, path(stack) + list(m.steps), s))
                    continue
                stack.append([s, succ, 0, m])
                expanded += 1
                if expanded % check_every == 0:
                    stats.transitions, stats.moves, stats.max_depth = transitions, nmoves, max_d
                    tick(len(visited))
        finally:
            stats.transitions, stats.moves, stats.max_depth = transitions, nmoves, max_d

    @staticmethod
    def _path(stack: list[list[Any]]) -> list[Step]:
        """The steps of the moves on the stack: the path from the initial state to its top."""
        steps: list[Step] = []
        for entry in stack:
            m = entry[3]
            if m is not None:
                steps.extend(m.steps)
        return steps
