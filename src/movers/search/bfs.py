"""The breadth-first search: level by level over a tree of parents, for shortest counterexamples.

Every state reached is kept in the tree (``parent``: its predecessor and the move from it), for the paths;
only those the reduction stores are counted. A violation of a move, a state property and a deadlock are all
seen when their state is generated, so every violation on level d+1 is found while level d is expanded:
the first found is a shortest counterexample whatever its kind. The search stops at the first.
"""

from __future__ import annotations

from collections import deque

from movers.reduce.base import Move
from movers.search.base import Found, Step, Stop, Strategy
from movers.semantics.state import State

Parents = dict[State, tuple[State | None, Move | None]]


def tree_path(parent: Parents, s: State) -> list[Step]:
    """The steps from the initial state to ``s`` along the tree of parents."""
    chunks: list[tuple[Step, ...]] = []
    cur: State | None = s
    while cur is not None:
        prev, m = parent[cur]
        if m is not None:
            chunks.append(m.steps)
        cur = prev
    return [st for chunk in reversed(chunks) for st in chunk]


class BreadthFirst(Strategy):
    def explore(self) -> Found | None:
        search, ts, red = self.search, self.ts, self.red
        init, bad = search.initial()
        # parent[s] = (predecessor, move): the BFS tree, for shortest counterexamples.
        self.parent: Parents = {init: (None, None)}
        # Every state reached is kept for the paths, but only those the reduction stores are counted.
        self.stored: set[State] = set()
        search._store = self.stored
        self.full = search.counter()
        if red.store(init):
            self.full(init)
            self.stored.add(init)
        if red.needs_stored:
            red.stored = self.stored.__contains__  # type: ignore[attr-defined]
        self.stats.states = len(self.stored)
        if bad:
            return bad
        dead = ts.deadlock(init)
        if dead:
            return Found("deadlock", dead, [], init)
        return self._loop(init)

    def _loop(self, init: State) -> Found | None:
        search, ts, red, stats = self.search, self.ts, self.red, self.stats
        max_depth = search.limits.max_depth
        parent, stored, full = self.parent, self.stored, self.full
        queue: deque[tuple[State, int]] = deque([(init, 0)])
        expanded = 0
        track_arrival = red.needs_arrival
        while queue:
            s, depth = queue.popleft()
            if track_arrival:
                red.arrived = parent[s][1]  # type: ignore[attr-defined]
            if max_depth is not None and depth >= max_depth:
                if red.moves(s):
                    search.truncated = True
                continue
            moves = red.moves(s)
            for m in moves:
                stats.transitions += len(m.steps)
                stats.moves += 1
                if m.violation is not None:
                    return Found(m.violation[0], m.violation[1], tree_path(parent, s) + list(m.steps))
                n = m.state
                if n is None or n in parent:
                    continue
                parent[n] = (s, m)
                if m.keep and red.store(n):
                    if full(n):
                        raise Stop("max-states")
                    stored.add(n)
                if depth + 1 > stats.max_depth:
                    stats.max_depth = depth + 1
                v = ts.check_state(n)
                if v is not None:
                    return Found(v[0], v[1], tree_path(parent, n), n)
                # A deadlock is seen when its state is generated, as violations of moves are: every violation
                # on level d+1 is then found while level d is expanded, before any on a deeper level, so the
                # counterexample is a shortest one whatever its kind.
                dead = ts.deadlock(n)
                if dead:
                    return Found("deadlock", dead, tree_path(parent, n), n)
                queue.append((n, depth + 1))
            expanded += 1
            if expanded % search.CHECK_EVERY == 0:
                search.tick(len(stored))
        return None
