"""Incremental passes, for reductions whose predicates weaken during the search (``incremental``).

Explore (depth-first or breadth-first order, over a tree of parents as ``bfs.py`` keeps); whenever the
reduction's classification weakened during a pass (its ``version`` changed), re-expand every stored state
with the weaker one, keeping what was found, until a pass changes nothing. This computes the least fixpoint
of Flanagan & Qadeer's rules with lock inference (section 6) without restarting. ``passes`` counts them.
"""

from __future__ import annotations

from collections import deque

from movers.search.base import Found, SearchBase, Stop, Strategy
from movers.search.bfs import Parents, tree_path
from movers.semantics.state import State


class Incremental(Strategy):
    """``order`` is the order of a pass: "dfs" (the last state found first) or "bfs"."""

    def __init__(self, search: SearchBase, order: str) -> None:
        super().__init__(search)
        self.order = order

    def explore(self) -> Found | None:
        search, ts, red = self.search, self.ts, self.red
        init, bad = search.initial()
        self.parent: Parents = {init: (None, None)}
        self.depth_of: dict[State, int] = {init: 0}
        self.stored: dict[State, None] = {}
        search._store = self.stored
        self.full = search.counter()
        if red.store(init):
            self.full(init)
            self.stored[init] = None
        if bad:
            return bad
        dead = ts.deadlock(init)
        if dead:
            return Found("deadlock", dead, [], init)
        roots = [init]
        search.passes = 0  # type: ignore[attr-defined]
        self.transitions = self.nmoves = 0
        try:
            while True:
                search.passes += 1  # type: ignore[attr-defined]
                before = red.version()  # type: ignore[attr-defined]
                found = self._pass(roots)
                if found is not None:
                    return found
                if red.version() == before:  # type: ignore[attr-defined]
                    return None
                # The predicates weakened: what was expanded under the stronger ones is expanded again.
                roots = list(self.stored)
                red.reset()  # type: ignore[attr-defined]
        finally:
            self.stats.transitions, self.stats.moves = self.transitions, self.nmoves

    def _pass(self, roots: list[State]) -> Found | None:
        """One pass from ``roots``: the violation it met first, if any."""
        search, ts, red, stats = self.search, self.ts, self.red, self.stats
        max_depth = search.limits.max_depth
        parent, depth_of, stored, full = self.parent, self.depth_of, self.stored, self.full
        dfs = self.order == "dfs"
        work: deque[State] = deque(reversed(roots) if dfs else roots)
        take = work.pop if dfs else work.popleft
        expanded = 0
        while work:
            s = take()
            d = depth_of[s]
            if max_depth is not None and d >= max_depth:
                if red.moves(s):
                    search.truncated = True
                continue
            moves = red.moves(s)
            for m in moves:
                self.transitions += len(m.steps)
                self.nmoves += 1
                if m.violation is not None:
                    return Found(m.violation[0], m.violation[1], tree_path(parent, s) + list(m.steps))
                n = m.state
                if n is None or n in parent:
                    continue
                parent[n] = (s, m)
                depth_of[n] = d + 1
                if d + 1 > stats.max_depth:
                    stats.max_depth = d + 1
                if red.store(n):
                    if full(n):
                        raise Stop("max-states")
                    stored[n] = None
                v = ts.check_state(n)
                if v is not None:
                    return Found(v[0], v[1], tree_path(parent, n), n)
                # As in bfs.py: deadlocks are seen on generation, so that bfs gives a shortest trace.
                dead = ts.deadlock(n)
                if dead:
                    return Found("deadlock", dead, tree_path(parent, n), n)
                work.append(n)
            expanded += 1
            # A state here expands whole transactions: look at the clock more often.
            if expanded % 16 == 0:
                stats.transitions, stats.moves = self.transitions, self.nmoves
                search.tick(len(stored))
        return None
