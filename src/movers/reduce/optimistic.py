"""``--reduction optimistic``: Stoller & Cohen's optimistic synchronization-based reduction.

Paper: S. D. Stoller and E. Cohen, *Optimistic Synchronization-Based State-Space Reduction*, TACAS 2003
(``papers/000``; slides ``papers/001``). Vocabulary as in the paper:

- A step (transition) of thread i is **visible** if it may access an *unprotected* location or may change
  an *exclusive access predicate* (section 4): here, synchronisation steps (lock operations, ``wait``,
  ``notify``, ``start``, ``join``, ``wait_until``: every step with a guard), steps that access an
  unprotected location, and steps that write a location an exclusive access predicate reads. Other steps
  are **invisible** (u_i); they access only unshared and protected locations.
- The reduced system's transition of thread i is N_i = v_i u_i* p_i (formula (4)): one visible step, then
  the maximal run of invisible steps of the same thread, ending where the thread's next step is visible
  (p_i) or the thread has terminated. Only the states between moves, the **visible states** (every thread at
  a visible step or terminated), are stored.
- The discipline flag q (section 4.1) is checked on every step the reduced system executes, invisible ones
  included: an access to a protected location by a thread whose predicate is false, or two threads'
  declared predicates true at once. The reduction theorem (19) says a violation reachable in the full
  system is reachable in the reduced one, so checking it here is enough. A violated *guess* refines the
  classification and restarts the search (section 8, see ``classify``); a violated *declaration* is a
  violation of kind ``discipline`` with the fine-grained trace that reaches it.

How the implementation meets the well-formedness conditions of section 4:

- WFinitVis (the initial state is visible): a thread's first step (its frame at its entry) is visible, so
  the initial state, and every state right after a ``start``, is visible. (Running the threads' invisible
  prefixes first instead would be unsound: another thread's first, visible step may read what such a prefix
  writes, and that access, which the discipline forbids, would never be executed, so the wrong guess
  would never be refined.)
- WFsep: visibility is decided per state and thread by executing the thread's next step (all resolutions
  of its choices; the step is visible if any resolution is), so a thread's next step is either visible or
  invisible in a given state.
- WFfiniteInvis: an invisible run that comes back to a state it has passed ends there, and that state is
  stored, so a thread looping forever on local data does not hang the search; so does a run of
  ``base.MOVE_LIMIT`` steps (a thread counting forever never comes back to a state).
- WFinitExcl, disjointness and WFendExcl for declared predicates are checked after every visible step.
- Invariants: locations an invariant reads are unprotected (so steps writing them are visible), and
  invariants are also checked in the intermediate states of every move.
"""

from __future__ import annotations

from typing import Any

from movers.analysis.classify import Classification
from movers.reduce.base import Capabilities, Move, ReductionBase, thread_moves
from movers.semantics.locality import local_thread, remember, replay, stays_local
from movers.semantics.state import State
from movers.semantics.system import Outcome

ALL_BUT_ATOMICITY = frozenset({"assertion", "deadlock", "invariant", "discipline", "runtime-error"})
CACHE_LIMIT = 100_000


class Optimistic(ReductionBase):
    name = "optimistic"
    capabilities = Capabilities(atomicity=frozenset({"commit", "reduction", "auto"}), checks_discipline=True,
                                classifies=True)
    preserves = ALL_BUT_ATOMICITY

    def __init__(self, ts: Any, classification: Classification | None = None) -> None:
        self.ts = ts
        self.cls = classification or Classification(ts.program)
        self._cache: dict[tuple[State, int], tuple[list[Outcome], bool]] = {}
        # Thread i's step by (classification, i, thread count, its stack, globals, heap): see ``step``.
        self._local: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._no_local = bool(self.cls.declared) or getattr(ts, "quiet", None) is not None
        self._cut: set[State] = set()
        self._initial: State | None = None
        if getattr(ts, "quiet", None) is not None:
            # On an instrumentation whose visibility depends on the state (commit-atomicity's ``quiet``), a
            # thread that was visible can become invisible when another moves, so the search can reach
            # states that are not stored, and cycles of them: asking for the search stack makes a
            # depth-first search treat a state on it as visited (without it, a random looping model was
            # explored along one path hundreds of thousands of states deep). Every enabled thread moves
            # from every state, so closing a cycle there ignores no thread.
            self.needs_stack = True

    def reset(self) -> None:
        """Forget everything derived from the classification (after a refinement)."""
        self._cache.clear()
        self._local.clear()
        self._cut.clear()
        self._initial = None

    # -- visibility -------------------------------------------------------------------------------------------

    def step(self, state: State, i: int) -> tuple[list[Outcome], bool]:
        """Thread i's next step from ``state``, every resolution, discipline-checked, and its visibility.

        Remembered per thread where that is exact (``_local_key``): the same stack of thread i over the same
        globals and heap steps the same way whatever the other threads are doing, so the step is executed and
        classified once for all of their combinations (the per-state work that made this reduction slower
        than ``none`` where every step is inside a lock)."""
        lk, made = self._remembered(state, i)
        if made is not None:
            return replay(made[0], made[2], state[2], i), made[1]
        return self._fresh(state, i, lk)

    def _remembered(self, state: State, i: int) -> tuple[tuple[Any, ...] | None, tuple[Any, ...] | None]:
        """Thread i's key in the per-thread memo (None where there is none) and what it holds (None: not yet)."""
        lk = self._local_key(state, i)
        return lk, (self._local.get(lk) if lk is not None else None)

    def _fresh(self, state: State, i: int, lk: tuple[Any, ...] | None) -> tuple[list[Outcome], bool]:
        """``step`` where the per-thread memo has nothing: the state's own entry, else execute and classify."""
        k = (state, i)
        hit = self._cache.get(k)
        if hit is not None:
            return hit
        outs, visible = self._step(state, i)
        if lk is not None and stays_local(outs, state[2], i):
            if len(self._local) >= CACHE_LIMIT:
                self._local.clear()
            self._local[lk] = (remember(outs, i), visible, outs)
            return outs, visible
        if len(self._cache) >= CACHE_LIMIT:
            self._cache.clear()
        self._cache[k] = (outs, visible)
        return outs, visible

    def _local_key(self, state: State, i: int) -> tuple[Any, ...] | None:
        """The key of thread i's step in the per-thread memo (``semantics/locality.py``), or None where the
        step may depend on more than thread i's stack, the globals and the heap; also None with declared
        predicates (checked across all threads) and on instrumented states (ghost parts, commit-atomicity's
        ``quiet``)."""
        if len(state) != 3 or self._no_local:
            return None
        th = local_thread(state, i)
        if th is None:
            return None
        return (self.cls.version, len(self.cls.refinements), i, len(state[2]), th, state[0], state[1])

    def _step(self, state: State, i: int) -> tuple[list[Outcome], bool]:
        ts = self.ts
        node = ts.next_node(state, i)
        outs = ts.execute(state, i, True)
        # An assume is visible like a guard: an invisible step must always be enabled (hypothesis (17)),
        # and a pruned invisible run would otherwise hide the other threads' steps.
        visible = node.guard is not None or node.is_sync or node.kind == "assume"
        cls = self.cls
        predicates_may_change = False
        for o in outs:
            eff = o.effect
            if eff is None:
                continue
            vis, bad = cls.check_access(ts, state, i, eff.reads, eff.writes)
            if bad is not None and o.violation is None:
                o.violation = ("discipline", bad)
                o.state = None
            visible = visible or vis or bool(eff.started)
            # Declared predicates read lock owners and the support locations (a visible write): only such
            # steps, and thread starts, can change them.
            predicates_may_change = predicates_may_change or vis or bool(
                eff.acquired or eff.released or eff.started or eff.allocated
            )
        # On an instrumented system (commit-atomicity), a step that moves the instrumentation's shared part
        # (the shadow store, or a thread's phase in or out of a block) is visible too (``quiet``).
        quiet = getattr(ts, "quiet", None)
        if not visible and quiet is not None and not quiet(state, i, outs):
            visible = True
        if predicates_may_change and cls.declared:
            for o in outs:
                if o.state is not None and o.violation is None:
                    bad = cls.check_declared(ts, state, o.state, i, o.effect.renumbered if o.effect else None)
                    if bad is not None:
                        o.violation = ("discipline", bad)
                        o.state = None
        return outs, visible

    def visible_thread(self, state: State, i: int) -> bool:
        """p_i: thread i has terminated or its next step is visible."""
        if not state[2][i]:
            return True
        th = state[2][i]
        if len(th) == 1 and th[0][1] == th[0][0].entry:
            return True  # a thread's first step is visible (WFinitVis): see the module docstring
        node = th[-1][0].nodes[th[-1][1]]
        if node.guard is not None or node.is_sync or node.kind == "assume":
            return True  # visible whatever it accesses; a blocked step is never executed to find out
        lk, made = self._remembered(state, i)
        if made is not None:
            return made[1]  # type: ignore[no-any-return]  # visibility alone: nothing to replay
        return self._fresh(state, i, lk)[1]

    def is_visible_state(self, state: State) -> bool:
        return all(self.visible_thread(state, i) for i in range(len(state[2])))

    # -- the reduced system -----------------------------------------------------------------------------------

    def store(self, state: State) -> bool:
        if self._initial is None:
            self._initial = state
            return True
        return state is self._initial or state in self._cut or self.is_visible_state(state)

    def moves(self, state: State) -> list[Move]:
        ts = self.ts
        n = len(state[2])
        if state is self._initial and self.cls.declared:
            bad = self.cls.check_declared(ts, state, state, -1)  # WFinitExcl
            if bad is not None:
                return [Move((), None, ("discipline", bad))]
        bad = self.cls.check_guards(ts, state)
        if bad is not None:
            return [Move((), None, ("discipline", bad))]
        # Every enabled thread moves, from visible states (the only ones moves end in) and, conservatively,
        # from any other state.
        out: list[Move] = []
        for i in range(n):
            if ts.enabled(state, i):
                out.extend(self._runs(state, i))
        return out

    def _runs(self, state: State, i: int) -> list[Move]:
        """Every N_i from ``state``: thread i's next step, then its maximal invisible run (a tree when the
        invisible steps make choices). An invisible loop (WFfiniteInvis fails) ends where it repeats."""
        return thread_moves(
            self.ts, state, i,
            step=lambda s: self.step(s, i)[0],
            ends=lambda s: self.visible_thread(s, i),
            cut=self._cut,
        )
