"""The plain full search: ``dfs.py``'s depth-first search hand-inlined for the case where only the states
matter, the fast path of ``--reduction none``.

It applies (``applies``) where every state is stored, there is no depth limit, and the system can give a
state's successors as bare states (``TransitionSystem.successors``, the generated code's); state properties
(invariants) are checked on each state it stores, where ``dfs.py`` checks them. It visits the same states in
the same order as ``dfs.py``, and finds the same counterexample; its stack keeps states rather than moves,
and the steps of a counterexample are found again from the states on the stack (``_steps_between``). Its
loop stays inlined: it is where the time of a full search goes. A successor that is its parent, the very
object (a self-loop: a busy wait whose test holds, ``TransitionSystem.successors``), counts as a transition
and is skipped before any key work: the parent was stored before it was expanded, in every store. A thread's
step is looked up by its short vector before it is run (the transition cache, transition_cache.py), and each
successor comes with its numbers in the store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from movers.search.base import Found, SearchBase, Step, Stop, Strategy
from movers.search.fingerprints import make_store
from movers.search.transition_cache import cached_successors
from movers.semantics.state import State


def applies(search: SearchBase) -> bool:
    """Whether the search is the plain full one, where only the states matter: every state stored
    (``none``), no depth limit, and successors the system can give as bare states."""
    red, ts = search.red, search.ts
    return (red.capabilities.plain and red.stores_all
            and search.limits.max_depth is None
            and getattr(type(ts), "successors", None) is not None  # its own, not an instrumentation's inner
            and not red.needs_stack and not red.needs_arrival)


class PlainDepthFirst(Strategy):
    """``dfs.py``'s search with successors as bare states wherever the generated code runs every step of a
    state, and the Outcomes of ``steps`` elsewhere. A stack entry is [state, its numbers in the store, its
    successors, their numbers (None: each is numbered when it is met: under symmetry, or from ``steps``), next
    index]. Without symmetry the successors and their numbers come from the transition cache
    (transition_cache.py), which numbers only the parts a step made anew."""

    self_loops = 0  # successors that were their parent (``TransitionSystem.successors``), skipped unlooked-up

    def explore(self) -> Found | None:
        bad = self._start()
        if bad is not None:
            return bad
        self._loop()
        return None

    def by_steps(self, s: State) -> tuple[list[Any], None]:
        """Where some step is not on the generated code. A violation stays an Outcome (the loop reports it
        where ``dfs.py`` would); an assume that pruned the step is None."""
        return [o if o.violation is not None else o.state for o in self.ts.steps(s)], None

    def _start(self) -> Found | None:
        """Store the initial state and set up the loop; what the initial state shows, if anything."""
        search, ts = self.search, self.ts
        init, bad = search.initial()
        store_ = make_store(search.store_kind, search.bits)
        search._store = store_
        self.store = store_
        k0 = search.keys(store_)[0](init)
        store_.keys.add(k0)
        self.stats.states = 1
        if bad:
            return bad
        k0 = store_.numbers(init)
        self.expand = self._expansion()
        both = self.expand(init, k0)
        succ0, kls0 = both if both is not None else self.by_steps(init)
        if not succ0:
            dead = ts.deadlock(init)
            if dead:
                return Found("deadlock", dead, [], init)
        self.stack: list[list[Any]] = [[init, k0, succ0, kls0, 0]]
        return None

    def _expansion(self) -> Callable[[State, Any], Any]:
        """``expand(state, numbers)``: a state's successors and their numbers, through the transition cache
        (transition_cache.py) where the system's successors are the program's bare ones and a state's numbers are
        its own (no symmetry); else the successors alone (under symmetry each is numbered as its
        representative)."""
        bare = self.ts.bare_system
        if not self.search.symmetry and bare is not None:
            return cached_successors(bare, self.store)
        successors = self.ts.successors

        def expand(s: State, _: Any) -> Any:
            both = successors(s)
            return None if both is None else (both[0], None)

        return expand

    def _loop(self) -> None:
        search, ts, stats, store_, stack = self.search, self.ts, self.stats, self.store, self.stack
        max_states, visited = search.limits.max_states, store_.keys
        expand, by_steps = self.expand, self.by_steps
        record, steps_between, tick = search.record, self._steps_between, search.tick
        visit = visited.add
        check_state = None if getattr(ts.check_state, "checks_nothing", False) else ts.check_state
        numbers = self._numbers()
        seen = getattr(visited, "seen", None)
        packs, expanded, check_every = store_.packs, 0, search.CHECK_EVERY
        transitions = max_d = loops = 0
        cap = max_states if max_states is not None else float("inf")
        try:
            while stack:
                entry = stack[-1]
                parent, pk, succ, kls, i = entry
                n = len(succ)
                while i < n:
                    s = succ[i]
                    i += 1
                    transitions += 1
                    if s is parent:
                        # A self-loop (a busy wait whose test holds): the parent was stored before it was
                        # expanded, so its key needs no work and the store no lookup.
                        loops += 1
                        continue
                    if kls is not None:  # numbered by the expansion (transition_cache.py)
                        kl = kls[i - 1]
                    else:
                        if type(s) is not tuple:
                            if s is None:
                                continue
                            record(Found(s.violation[0], s.violation[1], steps_between(stack) + list(s.steps)))
                            continue
                        kl = numbers(s)
                    if seen is None:
                        k = packs[len(kl)](*kl)
                        if k in visited:
                            continue
                        if len(visited) >= cap:
                            raise Stop("max-states")  # --max-states N stores N states, never N + 1
                        visit(k)
                    else:
                        k = hash(tuple(kl))
                        if seen(k):
                            continue
                        if visited.n > cap:
                            visited.discard(k)
                            raise Stop("max-states")
                    depth = len(stack)
                    if depth > max_d:
                        max_d = depth
                    if check_state is not None:
                        v = check_state(s)
                        if v is not None:
                            self._record_at(s, v[0], v[1])
                            continue
                    both = expand(s, kl)
                    nxt, nkls = both if both is not None else by_steps(s)
                    if not nxt:
                        dead = ts.deadlock(s)
                        if dead:
                            self._record_at(s, "deadlock", dead)
                        continue
                    entry[4] = i
                    stack.append([s, kl, nxt, nkls, 0])
                    expanded += 1
                    if expanded % check_every == 0:
                        stats.transitions, stats.moves, stats.max_depth = transitions, transitions, max_d
                        tick(len(visited))
                    break
                else:
                    stack.pop()
        finally:
            stats.transitions, stats.moves, stats.max_depth = transitions, transitions, max_d
            self.self_loops = loops

    def _numbers(self) -> Callable[[State], Any]:
        """A state's numbers in the store (under thread symmetry, its representative's), for the successors
        the expansion did not number. The exact store packs the numbers (store.py's ``encode``) into a set; a
        lossy one takes their hash (fingerprints.py) and answers and records it in one call, ``seen``."""
        store_ = self.store
        if not self.search.symmetry:
            return store_.numbers
        from movers.semantics.symmetry import representative

        return lambda s: store_.numbers(representative(s, store_.number))

    def _record_at(self, s: State, kind: str, detail: Any) -> None:
        """A violation found at ``s``, the successor of the state on top of the stack."""
        self.stack.append([s])
        f = Found(kind, detail, self._steps_between(self.stack), s)
        self.stack.pop()
        self.search.record(f)

    def _steps_between(self, stack: list[list[Any]]) -> list[Step]:
        """The steps from each state on the stack to the next: a step of the first state whose successor is the
        second (if several threads' steps lead there, the first in thread order: an equally real run)."""
        out: list[Step] = []
        for a, b in zip(stack, stack[1:], strict=False):
            nxt = b[0]
            o = next(o for o in self.ts.steps(a[0]) if o.violation is None and o.state == nxt)
            out.extend(o.steps)
        return out
