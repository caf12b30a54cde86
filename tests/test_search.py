"""Search (issue item 5): DFS and BFS over an exact visited set, limits, and interruption."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES, run

import movers

PHILOSOPHERS = EXAMPLES / "dining_philosophers.py"
COUNTER = (EXAMPLES / "counter_bench.py").read_text()


@pytest.mark.parametrize("f", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.stem)
def test_dfs_and_bfs_agree_on_examples(f: Path) -> None:
    d, b = movers.check(f), movers.check(f, search="bfs")
    assert d.verdict == b.verdict, f
    if d.verdict == "ok":
        assert d.stats.states == b.stats.states, f
        assert d.stats.transitions == b.stats.transitions, f
    else:
        assert d.violations[0].kind == b.violations[0].kind, f


def test_bfs_gives_a_shortest_counterexample() -> None:
    d, b = movers.check(PHILOSOPHERS), movers.check(PHILOSOPHERS, search="bfs")
    assert len(b.violations[0].trace) <= len(d.violations[0].trace)
    # each of 3 philosophers must take its first fork: 3 steps each (it reads forks[i] and forks[(i + 1) % N], its
    # for header is local work, then it acquires)
    assert len(b.violations[0].trace) == 9


def test_counterexample_replays_to_the_violation() -> None:
    r = movers.check(EXAMPLES / "racy_counter.py")
    v = r.violations[0]
    assert v.kind == "assertion"
    # The two reads happen before the two writes: the lost update.
    sources = [s.source for s in v.trace]
    assert sources.count("tmp = count") == 2
    assert sources.index("count = tmp + 1") > 1


def test_max_states_gives_incomplete() -> None:
    r = movers.check(COUNTER, max_states=100)
    assert r.verdict == "incomplete" and r.limit == "max-states"
    assert r.stats.states == 100 and r.exit_code == 3


def test_time_limit_gives_incomplete() -> None:
    r = movers.check(COUNTER.replace("L = 4", "L = 60"), time_limit=0.3)
    assert r.verdict == "incomplete" and r.limit == "time-limit"
    assert r.stats.states > 0


@pytest.mark.parametrize("search", ["dfs", "bfs"])
def test_max_depth_gives_incomplete(search: str) -> None:
    r = movers.check(COUNTER, max_depth=5, search=search)
    assert r.verdict == "incomplete" and r.limit == "max-depth"
    assert r.stats.max_depth <= 5


@pytest.mark.parametrize("search", ["dfs", "bfs"])
def test_interrupt_keeps_statistics(search: str) -> None:
    calls = []

    def progress(stats: movers.Stats) -> None:
        calls.append(stats.states)
        raise KeyboardInterrupt

    import movers.search.explore as ex

    old = ex.Search.CHECK_EVERY, ex.Search.PROGRESS_EVERY
    ex.Search.CHECK_EVERY, ex.Search.PROGRESS_EVERY = 1, 0.0
    try:
        r = movers.check(COUNTER, progress=progress, search=search)
    finally:
        ex.Search.CHECK_EVERY, ex.Search.PROGRESS_EVERY = old
    assert r.verdict == "incomplete" and r.limit == "interrupted"
    assert r.stats.states > 0 and calls


def test_state_counts_are_deterministic() -> None:
    counts = {movers.check(COUNTER).stats.states for _ in range(3)}
    assert len(counts) == 1


def test_deadlock_in_initial_state() -> None:
    r = run("s = Semaphore(0)\ndef w():\n    s.acquire()\nThread(target=w).start()\n")
    assert r.violations[0].kind == "deadlock" and r.violations[0].trace == []


@pytest.mark.parametrize(("reduction", "search", "strategy"), [
    ("none", "dfs", "PlainDepthFirst"), ("none", "bfs", "BreadthFirst"), ("static-por", "dfs", "DepthFirst"),
    ("static-por", "bfs", "BreadthFirst"), ("transactions", "dfs", "Incremental"),
    ("transactions", "bfs", "Incremental"),
])
def test_each_search_runs_its_strategy(reduction: str, search: str, strategy: str, monkeypatch) -> None:
    # One strategy per file (search/explore.py chooses): the fast loop for the plain full search, passes for a
    # reduction whose predicates weaken, else the order asked for.
    import movers.search.explore as ex

    ran = []
    make = ex.Search.strategy

    def spy(self: ex.Search, name: str) -> object:
        s = make(self, name)
        ran.append(type(s).__name__)
        return s

    monkeypatch.setattr(ex.Search, "strategy", spy)
    r = movers.check(COUNTER, reduction=reduction, search=search)
    assert r.verdict == "ok" and ran and set(ran) == {strategy}
    if reduction == "none":  # the full search: every order stores every state
        assert r.stats.states == movers.check(COUNTER, reduction=reduction, search="dfs").stats.states
