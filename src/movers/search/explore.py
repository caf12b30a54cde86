"""The sequential search: ``Search`` runs the strategy that fits the reduction and the options.

One strategy per file, around the bookkeeping they share (``base.py``: limits, statistics, progress, what was
found, the visited store), as Java PathFinder's search classes and Stateright's ``checker/`` are:

- ``dfs.py``: the general depth-first search (the default), with the search stack;
- ``plain.py``: the same, hand-inlined for the plain full search (``--reduction none``), where it applies;
- ``bfs.py``: breadth-first, for shortest counterexamples;
- ``fair_cycles.py``: the fair-cycle search of ``--liveness``;
- ``incremental.py``: passes until a reduction's weakening predicates settle (the reduction's
  ``incremental``), in either order.

The search knows nothing of reductions: it asks the reduction for the moves from a state and whether a state
must be stored, and it keeps, for a violation, the moves that reach it (their steps become the trace).
``parallel.py`` is the search of ``--workers N``.
"""

from __future__ import annotations

from collections.abc import Callable

from movers.search import plain
from movers.search.base import Enough, Found, Limits, Outcome, SearchBase, Step, Stop, Strategy, thaw
from movers.search.bfs import BreadthFirst
from movers.search.dfs import DepthFirst
from movers.search.fair_cycles import FairCycles
from movers.search.incremental import Incremental
from movers.search.plain import PlainDepthFirst

# The strategies by name; ``Search.choose`` says which runs.
STRATEGIES: dict[str, Callable[[SearchBase, str], Strategy]] = {
    "dfs": lambda search, order: DepthFirst(search),
    "plain": lambda search, order: PlainDepthFirst(search),
    "bfs": lambda search, order: BreadthFirst(search),
    "incremental": Incremental,
    "fair": lambda search, order: FairCycles(search),
}

class Search(SearchBase):
    """One run of a search: ``Search(ts, reduction, options, progress).run("dfs" or "bfs")``."""

    def choose(self, order: str) -> str:
        """The strategy for ``run(order)``: a reduction whose predicates weaken during the search needs passes
        (in that order); the plain full search its fast loop; else the order asked for. ``--liveness``: the
        fair-cycle search."""
        if self.liveness is not None:
            return "fair"
        if self.red.capabilities.incremental:
            return "incremental"
        if order == "dfs":
            return "plain" if self._plain() else "dfs"
        return "bfs"

    def _plain(self) -> bool:
        return plain.applies(self)

    def strategy(self, name: str) -> Strategy:
        return STRATEGIES[self.choose(name)](self, name)


__all__ = ["STRATEGIES", "Enough", "Found", "Limits", "Outcome", "Search", "Step", "Stop", "thaw"]
