"""``--reduction static-por``: the traditional partial-order baseline, persistent sets from static
independence, as in SPIN and VeriSoft.

Godefroid, *Partial-Order Methods for the Verification of Concurrent Systems* (LNCS 1032, 1996), as used
by Stoller & Cohen for comparison (papers/000, section 7: "selective search using the conditional stubborn
set algorithm"). In each state we explore the enabled steps of a *persistent set* of threads T, built as a
stubborn set from a seed thread:

- if a thread p in T is enabled, every thread whose *future* may conflict with p's next step joins T
  (the "might be the first to interfere" closure, with static footprints: ``analysis/footprint.py``);
- if p is disabled, every thread that may enable its next step joins T: for a lock acquire, the threads
  that operate on that lock; for ``wait_until``, those that may write what its condition reads; for a
  ``join`` or a re-acquire after ``wait``, every thread.

Of the stubborn sets from each enabled seed we take one with the fewest enabled threads, as section 7 does
("a minimum-size persistent set"). Static footprints make that choice a function of the threads' positions
(each frame's code and pc) and of which threads are enabled: it is remembered by those, so a search computes
it once per such combination rather than once per state. Two provisos keep the selective search sound for
safety properties:

- C2 (invariants): if T contains a step that may write what an ``@invariant`` reads, T is all enabled
  threads, since invariants are global predicates that persistent sets do not preserve by themselves;
- C3 (cycles): if a step of T leads back to a state on the depth-first stack (breadth-first: to a state
  already stored), every enabled thread is expanded, so that no step is ignored forever around a cycle.

Deadlocks, assertion failures and runtime errors (which are local to a step) are preserved; steps that
access a location with a declared exclusive access predicate are given the predicate's reads as well, so
discipline violations are preserved too. Sleep sets are not implemented: they would cut transitions, not
states.
"""

from __future__ import annotations

from typing import Any

from movers.analysis.footprint import Footprint, Footprints, declared_support
from movers.reduce.base import Capabilities, Move, ReductionBase
from movers.reduce.optimistic import ALL_BUT_ATOMICITY
from movers.semantics.state import State


class StaticPOR(ReductionBase):
    name = "static-por"
    # Races: a persistent set that holds one of two conflicting next steps holds the other (docs/reductions.md).
    # Symmetry: its footprints are the threads' code positions, never their numbers (docs/reductions.md).
    capabilities = Capabilities(races=True, symmetry=True)
    stores_all = True  # store() is always True: the search may skip asking
    needs_stack = needs_stored = True  # the cycle proviso
    preserves = ALL_BUT_ATOMICITY

    def __init__(self, ts: Any) -> None:
        self.ts = ts
        program = ts.program
        self.fp = Footprints(program, declared_support(program))
        inv = Footprint()
        for _, code in program.invariants:
            w = self.fp.whole(code)
            inv = inv | Footprint(reads=w.reads, fields_read=w.fields_read, elements_read=w.elements_read)
        self.invariant_reads = inv
        self._selected: dict[Any, set[int] | None] = {}  # ``_select``'s memo

    def store(self, state: State) -> bool:
        return True

    def _closure(self, state: State, seed: int, alive: list[int], enabled: set[int],
                 futures: dict[int, Footprint] | None = None) -> set[int] | None:
        """The stubborn set from ``seed``, or None when it must be every thread. ``futures``: the threads'
        future footprints so far in this state (shared by the seeds)."""
        threads = state[2]
        fp = self.fp
        T = {seed}
        work = [seed]
        if futures is None:
            futures = {}

        def future(q: int) -> Footprint:
            f = futures.get(q)
            if f is None:
                f = futures[q] = fp.future(threads[q])
            return f

        while work:
            p = work.pop()
            node = self.ts.next_node(state, p)
            if p in enabled:
                step = fp.step(threads[p])
                for q in alive:
                    if q not in T and step.conflicts(future(q)):
                        T.add(q)
                        work.append(q)
            else:
                if node.kind in ("join", "reacquire", "wait"):
                    return None
                need = fp.node(threads[p][-1][0], threads[p][-1][1])
                enablers = Footprint(writes=need.reads, fields_written=need.fields_read,
                                     elements_written=need.elements_read, locks=need.locks)
                for q in alive:
                    if q not in T and enablers.conflicts(future(q)):
                        T.add(q)
                        work.append(q)
        return T

    def moves(self, state: State) -> list[Move]:
        ts = self.ts
        threads = state[2]
        alive = [t for t in range(len(threads)) if threads[t]]
        enabled = {t for t in alive if ts.enabled(state, t)}
        if not enabled:
            return []
        chosen = self._select(state, alive, enabled) if len(enabled) > 1 else None
        selected = sorted(chosen) if chosen is not None else sorted(enabled)
        out = self._expand(state, selected)
        if chosen is not None and (self._proviso_fails(out) or all(
            m.state is None and m.violation is None for m in out
        )):
            # C3; or every step of T was pruned by an assume, so T held no really enabled step (a failing
            # assume acts as a disabled step, and its enablers are in T already: no smaller set is safe).
            out = self._expand(state, sorted(enabled))
        return out

    def _select(self, state: State, alive: list[int], enabled: set[int]) -> set[int] | None:
        """The persistent set's enabled threads before C3 (None: every enabled thread). The stubborn sets,
        C2 and the choice read the threads' positions (footprints of their frames' code and pc) and which
        threads are enabled, nothing else of the state: remembered by those."""
        key = (tuple(tuple((f[0], f[1]) for f in th) for th in state[2]), frozenset(enabled))
        memo = self._selected
        if key in memo:
            return memo[key]
        if len(memo) > 100_000:
            memo.clear()
        chosen = memo[key] = self._persistent(state, alive, enabled)
        return chosen

    def _persistent(self, state: State, alive: list[int], enabled: set[int]) -> set[int] | None:
        threads = state[2]
        chosen: set[int] | None = None
        best: tuple[int, set[int]] | None = None
        futures: dict[int, Footprint] = {}
        for seed in sorted(enabled):
            T = self._closure(state, seed, alive, enabled, futures)
            if T is None:
                best = None
                break
            size = len(T & enabled)
            if best is None or size < best[0]:
                best = (size, T)
            if size == 1:
                break
        if best is not None and best[0] < len(enabled):
            chosen = best[1] & enabled
            # C2: a step that may change what an invariant reads is visible: expand everything.
            inv = self.invariant_reads
            if any(fp_writes(self.fp.step(threads[t]), inv) for t in chosen):
                chosen = None
        return chosen

    def _expand(self, state: State, threads: list[int]) -> list[Move]:
        out: list[Move] = []
        for t in threads:
            for o in self.ts.execute(state, t):
                out.append(Move(((t, o.choices),), o.state, o.violation))
        return out

    def _proviso_fails(self, moves: list[Move]) -> bool:
        """C3: a reduced expansion must not close a cycle (or, breadth-first, reach a stored state)."""
        check = self.on_stack if self.on_stack is not None else self.stored
        if check is None:
            return True
        return any(m.state is not None and check(m.state) for m in moves)


def fp_writes(step: Footprint, reads: Footprint) -> bool:
    return bool(
        step.writes & reads.reads
        or step.fields_written & reads.fields_read
        or (step.elements_written and reads.elements_read)
    )
