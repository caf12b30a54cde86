"""The plain full search: ``dfs.py``'s depth-first search hand-inlined for the case where only the states
matter, the fast path of ``--reduction none``.

It applies (``applies``) where every state is stored, there is no depth limit, and the system can give a
state's successors as bare states (``TransitionSystem.successors``, the generated code's); state properties
(invariants) are checked on each state it stores, where ``dfs.py`` checks them. It visits the same states in
the same order as ``dfs.py``, and finds the same counterexample; its stack keeps states rather than moves,
and the steps of a counterexample are found again from the states on the stack (``_steps_between``). Its
loop stays inlined: it is where the time of a full search goes. A successor that is its parent, the very
object (a self-loop: a busy wait whose test holds, ``TransitionSystem.successors``), counts as a transition
and is skipped before any key work: the parent was stored before it was expanded, in every store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from movers.search.base import Found, SearchBase, Step, Stop, Strategy
from movers.search.fingerprints import make_store
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
    state, and the Outcomes of ``steps`` elsewhere. A stack entry is [state, key, successors, the thread each
    successor moved (None: not known; an entry None: that step changed more than its thread's
    stack, and its numbers are worked out whole), next index]."""

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
        both = ts.successors(init)
        succ0, moved0 = both if both is not None else self.by_steps(init)
        if not succ0:
            dead = ts.deadlock(init)
            if dead:
                return Found("deadlock", dead, [], init)
        self.stack: list[list[Any]] = [[init, store_.numbers(init), succ0, moved0, 0]]
        return None

    def _loop(self) -> None:
        search, ts, stats, store_, stack = self.search, self.ts, self.stats, self.store, self.stack
        max_states, visited = search.limits.max_states, store_.keys
        successors, by_steps = ts.successors, self.by_steps
        record, steps_between, tick = search.record, self._steps_between, search.tick
        visit = visited.add
        check_state = None if getattr(ts.check_state, "checks_nothing", False) else ts.check_state
        inline = not search.symmetry  # the numbers worked out in line (``_numbers`` says how)
        number, numbers, flat = store_.parts.__getitem__, self._numbers(), store_.flat
        seen = getattr(visited, "seen", None)
        packs, expanded, check_every = store_.packs, 0, search.CHECK_EVERY
        transitions = max_d = loops = 0
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
                    if s is parent:
                        # A self-loop (a busy wait whose test holds): the parent was stored before it was
                        # expanded, so its key needs no work and the store no lookup.
                        loops += 1
                        continue
                    if moved is not None and inline:
                        # Successors from the generated code: bare states, each from one thread's step.
                        try:
                            t = moved[i - 1]
                            kl: Any = [*pk]
                            if s[0] is not pg:
                                kl[0] = number(s[0])
                            if s[1] is not ph:  # the heap comes last, after the threads (store.py)
                                if flat:
                                    kl[len(s[2]) + 1:] = map(number, s[1])
                                else:
                                    kl[-1] = number(s[1])
                            kl[t + 1] = number(s[2][t])
                        except (KeyError, TypeError):  # TypeError: t is None, the step changed other parts
                            kl = numbers(s)
                    else:
                        if type(s) is not tuple:
                            if s is None:
                                continue
                            record(Found(s.violation[0], s.violation[1], steps_between(stack) + list(s.steps)))
                            continue
                        if inline:
                            try:
                                kl = ([number(s[0]), *map(number, s[2]), *map(number, s[1])] if flat
                                      else [number(s[0]), *map(number, s[2]), number(s[1])])
                            except KeyError:
                                kl = numbers(s)
                        else:
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
                    both = successors(s)
                    nxt, nmoved = both if both is not None else by_steps(s)
                    if not nxt:
                        dead = ts.deadlock(s)
                        if dead:
                            self._record_at(s, "deadlock", dead)
                        continue
                    entry[4] = i
                    stack.append([s, kl, nxt, nmoved, 0])
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
        """A state's numbers in the store (under thread symmetry, its representative's). Without symmetry
        ``_loop`` works them out in line: the lookups run in C, and a part never seen before (KeyError) goes
        through ``numbers``, which interns it. Where the thread that moved is known, only the parts that are
        new objects are looked up: the successor shares every other part with its parent, whose numbers are on
        the stack. The exact store packs the numbers (store.py's ``encode``) into a set; a lossy one takes
        their hash (fingerprints.py) and answers and records it in one call, ``seen``."""
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
