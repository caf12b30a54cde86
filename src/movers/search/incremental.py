"""Incremental passes, for reductions whose predicates weaken during the search (``incremental``).

Explore (depth-first or breadth-first order, over a tree of parents as ``bfs.py`` keeps); whenever the
reduction's classification weakened during a pass (its ``version`` changed), re-expand every stored state
with the weaker one, keeping what was found, until a pass changes nothing. This computes the least fixpoint
of Flanagan & Qadeer's rules with lock inference (section 6) without restarting. ``passes`` counts them.

A reduction may answer ``again`` for a state it expanded in the last pass under the predicates that are still
current: the pass counts that expansion's transitions and moves without expanding (its states are known). If
such a pass weakens the predicates, it goes back to where it began (the reduction's ``begin_pass`` snapshot,
and the tree, depths and stored states here) and runs again expanding every state, as it would have.
"""

from __future__ import annotations

from collections import deque

from movers.search.base import Found, SearchBase, Stop, Strategy
from movers.search.bfs import Parents, tree_path
from movers.semantics.state import State


class _Weakened(Exception):
    """A pass that reuses expansions weakened the predicates: it runs again without reuse."""


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
        # Reusing a pass needs every state a reused expansion leads to expanded: not with --max-depth (whose
        # cut-off states are not). The --max-states counter needs no going back: a pass run again finds the
        # states the stopped one found, in the same order, before it goes further.
        reuse = search.limits.max_depth is None
        try:
            while True:
                search.passes += 1  # type: ignore[attr-defined]
                before = red.version()  # type: ignore[attr-defined]
                snap = red.begin_pass(reuse, search.passes == 1)  # type: ignore[attr-defined]
                if snap is None:
                    found = self._pass(roots)
                else:
                    back = (dict(self.parent), dict(self.depth_of), dict(self.stored), self.stats.max_depth,
                            self.transitions, self.nmoves)
                    try:
                        found = self._pass(roots, before)
                    except _Weakened:
                        self._go_back(back)
                        red.redo_pass(snap)
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

    def _go_back(self, back: tuple) -> None:
        """To the start of the pass (``explore``'s ``back``), in place: the search holds these dicts."""
        parent, depth_of, stored, self.stats.max_depth, self.transitions, self.nmoves = back
        self.parent.clear()
        self.parent.update(parent)
        self.depth_of.clear()
        self.depth_of.update(depth_of)
        self.stored.clear()
        self.stored.update(stored)

    def _pass(self, roots: list[State], reusing: int | None = None) -> Found | None:
        """One pass from ``roots``: the violation it met first, if any. ``reusing``: the reduction's version
        at the start of a pass in which it answers ``again`` for states expanded before; the pass stops
        (``_Weakened``) when the version changes, since a skipped expansion would then have left answers in
        the reduction's memo that the rest of the pass could use (``Transactions.begin_pass``)."""
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
            if reusing is not None:
                known = red.again(s)  # type: ignore[attr-defined]
                if known is not None:
                    self.transitions += known[0]
                    self.nmoves += known[1]
                    expanded += 1
                    if expanded % 16 == 0:
                        stats.transitions, stats.moves = self.transitions, self.nmoves
                        search.tick(len(stored))
                    continue
            moves = red.moves(s)
            if reusing is not None and red.version() != reusing:  # type: ignore[attr-defined]
                raise _Weakened
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
