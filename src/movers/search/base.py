"""What every sequential search strategy shares: the bookkeeping around its loop.

A strategy (``dfs.py``, ``plain.py``, ``bfs.py``, ``incremental.py``; chosen by ``explore.py``) only walks the
state graph. This module keeps the rest, once: the limits and their ``Outcome`` (``--max-states`` counted as
program states, the time and memory budget, Ctrl-C, ``MemoryError``), the statistics and the progress tick,
what was found (``Found``; ``record`` keeps the distinct violations for ``--all-violations`` /
``--max-violations`` and says when there are enough), the visited store and its report, and the garbage
collector, off during a search and frozen after it.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from movers.reduce.base import Reduction
from movers.search.fingerprints import make_store, store_report
from movers.search.limits import LimitReached, enforce, poll
from movers.search.options import Limits, Options
from movers.search.stats import Stats
from movers.semantics.state import State

Step = tuple[int, tuple[int, ...]]


@dataclass
class Found:
    """A violation and the steps from the initial state that reach it."""

    kind: str
    message: str
    steps: list[Step] = field(default_factory=list)
    state: State | None = None  # the state in which it shows (deadlocks, invariants)
    # A liveness violation's lasso: the index in ``steps`` of the cycle's first step (search/fair_cycles.py).
    cycle_start: int | None = None


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


class Stop(Exception):
    """A strategy stops early: a limit (``why``) it watches itself, such as --max-states."""

    def __init__(self, why: str) -> None:
        self.why = why


class Enough(Exception):
    """``--max-violations`` violations are found (``SearchBase.record``): the search ends with ``found``."""

    def __init__(self, found: Found) -> None:
        self.found = found


class Strategy:
    """One way of walking the state graph, over the bookkeeping of ``search``. ``explore`` returns the
    violation that ends the search, or None once every state to visit was visited; it may raise ``Stop`` or
    ``Enough``, and any limit of ``movers.search.limits``."""

    def __init__(self, search: SearchBase) -> None:
        self.search = search
        self.ts = search.ts
        self.red = search.red
        self.stats = search.stats

    def explore(self) -> Found | None:
        raise NotImplementedError


class SearchBase:
    """One run of a search strategy (``strategy``). ``progress(stats)`` is called about twice a second on
    long runs."""

    CHECK_EVERY = 512  # expansions between looks at the clock
    PROGRESS_EVERY = 0.5  # seconds between progress reports

    def __init__(
        self, ts: Any, reduction: Reduction, options: Options | None = None,
        progress: Callable[[Stats], None] | None = None,
    ) -> None:
        options = options or Options()
        self.ts = ts
        self.red = reduction
        self.limits: Limits = options.limits
        self.progress = progress
        # The depth-first visited store (search/fingerprints.py): exact, hashcompact or bitstate (2^bits bits).
        self.store_kind = options.store
        self.bits = options.bits
        # Thread symmetry (semantics/symmetry.py): states are remembered by a representative of their orbit.
        self.symmetry = options.symmetry == "threads"
        # --all-violations / --max-violations N: the depth-first search goes on after a violation, keeping
        # one per kind and message (SPIN's -e, TLC's -continue); ``found_all`` holds them in the order found.
        self.max_violations = options.max_violations
        # --liveness: the property the fair-cycle search (fair_cycles.py) looks for, under --fairness.
        self.liveness = options.liveness
        self.fairness = options.fairness_mode
        self.found_all: list[Found] = []
        self.stats = Stats()
        self.truncated = False
        self._start = 0.0
        self._last_progress = 0.0
        self._store: Any = ()

    def strategy(self, name: str) -> Strategy:
        """The strategy that ``run(name)`` runs (``explore.py`` chooses)."""
        raise NotImplementedError

    # -- what was found -----------------------------------------------------------------------------------------

    def _enough(self, f: Found) -> bool:
        """Keep ``f`` if it is a violation not seen yet (by kind and message); whether to stop searching."""
        if all((g.kind, g.message) != (f.kind, f.message) for g in self.found_all):
            self.found_all.append(f)
        return len(self.found_all) >= self.max_violations

    def record(self, f: Found) -> None:
        """Keep ``f`` (``_enough``); raise ``Enough`` once there are --max-violations of them."""
        if self._enough(f):
            raise Enough(f)

    def initial(self) -> tuple[State, Found | None]:
        """The initial state, and the violation of a state property it shows, if any."""
        init = self.ts.initial()
        v = self.ts.check_state(init)
        return init, (Found(v[0], v[1], [], init) if v else None)

    # -- the visited store ------------------------------------------------------------------------------------

    def new_store(self) -> Any:
        """The visited store of ``--store`` (a swarm member's is seeded: search/swarm.py)."""
        return make_store(self.store_kind, self.bits)

    def keys(self, store: Any) -> tuple[Callable[[State], Any], Callable[[State], Any]]:
        """The store's ``key`` and ``find``; under thread symmetry, of the state's representative."""
        if not self.symmetry:
            return store.key, store.find
        from movers.semantics.symmetry import representative

        key, find, number = store.key, store.find, store.number
        return (lambda s: key(representative(s, number))), (lambda s: find(representative(s, number)))

    def stack_set(self, store: Any) -> set[State]:
        """The set of states on the search stack that a reduction's cycle proviso asks about (``on_stack``).
        Under thread symmetry it answers for the representative, as the visited store does (``OrbitSet``):
        a successor whose orbit is on the stack closes a cycle of the quotient graph the search walks."""
        if not self.symmetry:
            return set()
        from movers.semantics.symmetry import representative

        number = store.number
        return OrbitSet(lambda s: representative(s, number))

    def counter(self) -> Callable[[State], bool]:
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

    def store_report(self) -> dict[str, Any]:
        """Which visited store the search used and, for a lossy one, how much it may have missed (with every
        field of its kind even when the search stopped before its store existed)."""
        report = getattr(self._store, "report", None)
        return report() if report is not None else store_report(self.store_kind, 0, self.bits)

    # -- the clock ----------------------------------------------------------------------------------------------

    def tick(self, stored: int) -> None:
        """Every ``CHECK_EVERY`` expansions: the statistics, the budget, and the progress report when due."""
        now = time.perf_counter()
        self.stats.seconds = now - self._start
        self.stats.states = stored
        # The timer of the budget raises on its own on the main thread; elsewhere this look is the only one.
        poll()
        if self.progress is not None and now - self._last_progress >= self.PROGRESS_EVERY:
            self._last_progress = now
            self.progress(self.stats)

    # -- one run ------------------------------------------------------------------------------------------------

    def run(self, strategy: str = "dfs") -> Outcome:
        self._start = self._last_progress = time.perf_counter()
        self._store = ()
        explorer = self.strategy(strategy)
        # States are acyclic tuples: the cyclic garbage collector would only rescan the growing visited set
        # over and over (a third of the run time on large searches), so it is off while we search.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            found, limit = self._explore(explorer)
        finally:
            if gc_was_enabled:
                # Without the freeze, the first collection after the search would scan every state stored
                # (seconds for millions): that would overshoot a time limit and slow every end of search.
                # The checker thaws them (``thaw``) once its result is built.
                gc.freeze()
                gc.enable()
        self.stats.seconds = time.perf_counter() - self._start
        self.stats.states = self._distinct_states()
        if found is None and self.found_all:  # the search ended before --max-violations, or a limit stopped it
            found = self.found_all[0]
        if found is None and limit is None and self.truncated:
            limit = "max-depth"
        out = Outcome(found, self.stats, limit)
        out.all_found = list(self.found_all) or ([found] if found is not None else [])
        return out

    def _explore(self, explorer: Strategy) -> tuple[Found | None, str | None]:
        """What ``explorer`` found and why it stopped early (None: it did not): within the budget, with every
        way out of a search turned into an outcome."""
        try:
            with enforce(self.limits.budget()):
                try:
                    return explorer.explore(), None
                except Enough as e:
                    return e.found, None
        except (Stop, LimitReached) as s:
            # Violations found before a limit are reported (the verdict is a violation); the limit too.
            return (self.found_all[0] if self.found_all else None), s.why
        except KeyboardInterrupt:
            return None, "interrupted"
        except MemoryError:
            return None, "memory"


class OrbitSet(set[State]):
    """States up to a renaming of the threads: each is kept, looked up and removed as its representative
    (semantics/symmetry.py). Bošnački, Dams & Holenderski's proviso for partial-order reduction under
    symmetry ("Symmetric Spin", STTT 2002): the cycle proviso is checked against the stored representatives,
    not the states as met. A set subclass, so that the depth-first loop calls ``add``, ``discard`` and ``in``
    unchanged, and pays for the representative only when symmetry is on."""

    __slots__ = ("rep",)

    def __init__(self, rep: Callable[[State], State]) -> None:
        super().__init__()
        self.rep = rep

    def add(self, s: State) -> None:
        set.add(self, self.rep(s))

    def discard(self, s: object) -> None:
        set.discard(self, self.rep(s))  # type: ignore[arg-type]

    def __contains__(self, s: object) -> bool:
        return set.__contains__(self, self.rep(s))  # type: ignore[arg-type]


__all__ = ["Enough", "Found", "Limits", "OrbitSet", "Outcome", "SearchBase", "Step", "Stop", "Strategy", "thaw"]
