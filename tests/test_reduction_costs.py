"""Per-state work the reductions skip (issue 25, "reductions that win in time"): each shortcut is checked to
change nothing but time (the search with it and without it agree state for state, on examples and random
models) and to be taken (it is there)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from conftest import EXAMPLES, search_summary
from hypothesis import HealthCheck, given, note, settings
from strategies import models

import movers
from movers.analysis import escape
from movers.analysis.classify import Classification
from movers.analysis.escape import StaticThreadLocal
from movers.analysis.footprint import EMPTY, Footprints
from movers.reduce import ample, phases, transactions
from movers.reduce.ample import Ample
from movers.reduce.base import MOVE_LIMIT, Move, thread_moves
from movers.reduce.locking import LockingAmple
from movers.reduce.phases import PhaseSystem
from movers.reduce.static_por import StaticPOR
from movers.reduce.transactions import Transactions
from movers.semantics import locality
from movers.semantics.system import TransitionSystem as SYSTEM

# Examples with deadlocks, guards, monitors and heap objects; small enough to run twice per test.
SOME = [EXAMPLES / f"{n}.py" for n in ("dining_philosophers", "dining_philosophers_ordered", "dwyer_deadlock_bug",
                                       "dwyer_readers_writers", "dwyer_bounded_buffer", "bounded_buffer",
                                       "condition_queue", "bank_transfer_deadlock", "fq_counter")]

class _Plain(set):
    def add(self, n: object) -> None:
        pass  # P#'s length (4) is never added


def _guards_checked_each_time(mp: pytest.MonkeyPatch) -> None:
    real = Classification.__init__

    def init(self: Classification, *a: object, **kw: object) -> None:
        real(self, *a, **kw)
        self.guard_memo_lengths = _Plain({3})

    mp.setattr(Classification, "__init__", init)


def _views_built_again(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(LockingAmple, "view", Ample.view)


class _Forgetful(dict):
    def get(self, key: object, default: object = None) -> object:
        return default


def _reachability_not_remembered(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(escape, "_SHARED", _Forgetful())
    mp.setattr(escape, "_PRIVATE", _Forgetful())


def _static_refusals_executed_tracked(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(StaticThreadLocal, "rejects", None)


def _persistent_sets_computed_each_time(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(StaticPOR, "_select", lambda self, state, alive, enabled: self._persistent(state, alive, enabled))

    def future(self: Footprints, thread: tuple) -> object:
        fp = EMPTY
        for frame in thread:
            fp = fp | self.future_at(frame[0], frame[1])
        return fp

    mp.setattr(Footprints, "future", future)


def _transactions_through_thread_moves(mp: pytest.MonkeyPatch) -> None:
    # The transaction loop as it was: ``base.thread_moves`` asking ``in_N`` at every state.
    def transaction(self: Transactions, state: Any, t: int) -> list[Any]:
        def ends(s: Any) -> bool | None:
            if self.in_N(s, t):
                return True
            return False if self.ts.enabled(s, t) else None

        return thread_moves(self.ts, state, t, step=lambda s: self.ts.step(s, t)[0], ends=ends, cut=self._cut)

    mp.setattr(Transactions, "_transaction", transaction)


def _steps_replayed_through_locality(mp: pytest.MonkeyPatch) -> None:
    # P#'s per-thread memo as it was: ``locality.local_thread`` for the key, ``locality.replay`` for the states.
    def local_key(self: PhaseSystem, state: Any, t: int) -> Any:
        if self._no_local or len(state) != 4:
            return None
        th = locality.local_thread(state, t)
        if th is None:
            return None
        cls = self.cls
        return (cls.version, len(cls.refinements), cls.lock_state_observed, t, len(state[2]), th, state[3][t],
                state[0], state[1])

    def replay(made: Any, state: Any, t: int) -> list[Any]:
        ph = state[-1]
        extra = [((*ph[:t], p, *ph[t + 1:]),) for p in made[3]]
        return locality.replay(made[0], made[2], state[2], t, extra)

    mp.setattr(PhaseSystem, "_local_key", local_key)
    mp.setattr(phases, "_replay", replay)


def _closure_through_run_generator(mp: pytest.MonkeyPatch) -> None:
    # The right-mover closure as it was: thread t's runs from a generator, each taken as it is yielded.
    def runs(self: Transactions, state: Any, t: int, budget: list[int]) -> Any:
        work: list[Any] = [(state, ())]
        seen = {state}
        while work:
            budget[0] -= 1
            if budget[0] < 0:
                raise transactions._GiveUp
            s, steps = work.pop()
            if len(steps) >= MOVE_LIMIT or not self.ts.enabled(s, t):
                continue
            if steps and not self._guard_ahead(s, t):
                continue
            for o in self.ts.step(s, t)[0]:
                s2 = o.state
                if o.violation is not None or s2 is None or s2[-1][t] is not True or s2 in seen:
                    continue
                seen.add(s2)
                run = (*steps, (t, o.choices))
                yield s2, run
                work.append((s2, run))

    def search(self: Transactions, s: Any, t: int, steps: tuple, budget: list[int]) -> Any:
        if t == len(s[2]):
            dead = self.ts.deadlock(s) if steps else None
            return Move(steps, None, ("deadlock", dead)) if dead else None
        for s2, more in itertools.chain(((s, ()),), runs(self, s, t, budget)):
            if not self._may_stay_blocked(s2, t):
                continue
            found = search(self, s2, t + 1, steps + more, budget)
            if found is not None:
                return found
        return None

    mp.setattr(Transactions, "_closure_search", search)


def _every_pass_expanded_again(mp: pytest.MonkeyPatch) -> None:
    # Nothing recorded, nothing reused: every pass of the incremental search expands every state it stored.
    mp.setattr(Transactions, "begin_pass", lambda self, reuse, first=False: None)


SHORTCUTS = {
    "transactions": [_guards_checked_each_time, _transactions_through_thread_moves, _steps_replayed_through_locality,
                     _every_pass_expanded_again, _closure_through_run_generator],
    "dwyer-wsl": [_views_built_again, _reachability_not_remembered],
    "dwyer-ld+wsldom": [_views_built_again, _reachability_not_remembered],
    "dwyer-da": [_reachability_not_remembered],
    "dwyer-s": [_static_refusals_executed_tracked],
    "static-por": [_persistent_sets_computed_each_time],
}


def _agree(model: object, reduction: str, max_states: int) -> None:
    fast = search_summary(movers.check(model, reduction=reduction, max_states=max_states))
    with pytest.MonkeyPatch.context() as mp:
        for off in SHORTCUTS[reduction]:
            off(mp)
        assert fast == search_summary(movers.check(model, reduction=reduction, max_states=max_states))


@pytest.mark.parametrize("reduction", list(SHORTCUTS))
@pytest.mark.parametrize("path", SOME, ids=lambda p: p.stem)
def test_the_shortcuts_change_nothing_but_time(path, reduction: str) -> None:
    _agree(path, reduction, 20_000)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(asserts=False, blocking=True, assumes=False, max_threads=3))
def test_random_deadlocking_models_the_guard_memo_changes_nothing(src: str) -> None:
    note(src)
    _agree(src, "transactions", 5_000)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models())
def test_random_models_the_shortcuts_change_nothing(src: str) -> None:
    note(src)
    for reduction in ("transactions", "dwyer-ld+wsldom", "dwyer-s", "static-por"):
        _agree(src, reduction, 5_000)


def test_guard_checks_are_remembered_on_the_phase_states(monkeypatch: pytest.MonkeyPatch) -> None:
    # A thread's guard is checked once per (its stack, globals, heap): not again for every phase vector and
    # position of the other threads.
    calls: list[int] = []
    real = SYSTEM.guard_reads

    def counted(self: Any, state: Any, t: int) -> Any:
        calls.append(t)
        return real(self, state, t)

    monkeypatch.setattr(SYSTEM, "guard_reads", counted)
    path = EXAMPLES / "dining_philosophers_ordered.py"
    movers.check(path, reduction="transactions")
    remembered = len(calls)
    calls.clear()
    _guards_checked_each_time(monkeypatch)
    movers.check(path, reduction="transactions")
    assert remembered < len(calls)


def test_the_locking_strategies_build_each_view_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every step of this model has one resolution: the ample search reuses the discipline check's views.
    built: list[int] = []
    real = ample.view_of

    def counted(*a: object, **kw: object) -> object:
        built.append(1)
        return real(*a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(ample, "view_of", counted)
    r = movers.check(EXAMPLES / "dwyer_readers_writers.py", reduction="dwyer-wsl")
    assert r.verdict == "ok" and built == []


def test_reachability_is_remembered_by_the_parts_of_the_state() -> None:
    from movers.ir.program import ref

    cls = type("C", (), {"is_thread": False})()
    heap = ((cls, None, None), (cls, None, ref(0)))
    g = (ref(0),)
    th = ((None, 0, ref(1)),)
    s1 = (g, heap, (th, ((None, 0),)))
    s2 = (g, heap, (th, ((None, 1),)))
    one, two = escape.Locality(None, s1), escape.Locality(None, s2)
    assert one.shared == {0} and one.private(0) == {1}
    assert two.shared is one.shared and two.private(0) is one.private(0)
    assert two.private(1) == set() and not two.reachable_by_others(0, (1,))


def _tracked_steps(monkeypatch: pytest.MonkeyPatch, path: object, reduction: str) -> int:
    calls: list[int] = []
    real = SYSTEM.execute

    def counted(self: Any, state: Any, t: int, track: Any = None) -> Any:
        if track:
            calls.append(t)
        return real(self, state, t, track)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SYSTEM, "execute", counted)
        movers.check(path, reduction=reduction)
    return len(calls)


def test_dwyer_s_executes_statically_refused_steps_untracked(monkeypatch: pytest.MonkeyPatch) -> None:
    # No step of the replicated workers is statically thread-local at access granularity: (S) refuses every
    # candidate from its position alone, and nothing needs tracking.
    path = EXAMPLES / "dwyer_replicated_workers.py"
    assert _tracked_steps(monkeypatch, path, "dwyer-s") == 0
    with pytest.MonkeyPatch.context() as mp:
        _static_refusals_executed_tracked(mp)
        assert _tracked_steps(monkeypatch, path, "dwyer-s") > 0


def test_static_por_computes_a_persistent_set_once_per_positions(monkeypatch: pytest.MonkeyPatch) -> None:
    computed: list[int] = []
    real = StaticPOR._persistent

    def counted(self: Any, *a: Any) -> Any:
        computed.append(1)
        return real(self, *a)

    monkeypatch.setattr(StaticPOR, "_persistent", counted)
    path = EXAMPLES / "dwyer_readers_writers.py"
    movers.check(path, reduction="static-por")
    remembered = len(computed)
    computed.clear()
    with pytest.MonkeyPatch.context() as mp:
        _persistent_sets_computed_each_time(mp)
        movers.check(path, reduction="static-por")
    assert 0 < remembered < len(computed)


# A random model (tests/strategies.py) whose second pass weakens the classification again: three passes.
WEAKENS_IN_PASS_TWO = """\
from movers.lang import *

x = 1
y = 0
a = [2, 1]
m0 = Lock()
m1 = Lock()

def worker(i):
    global x, y
    if m1.acquire(blocking=False):
        y = i
        y += 1
        m1.release()
    else:
        if i > x:
            x = (x + 2) % 3
        else:
            x = (x + a[y % 2]) % 3

Thread(target=worker, args=(0,)).start()
Thread(target=worker, args=(1,)).start()
"""

COUNTER = """\
from movers.lang import *

m = Lock()
count = 0

def worker():
    global count
    with m:
        t = count
        count = t + 1
    with m:
        t = count
        count = t + 1

for k in range(3):
    Thread(target=worker).start()
"""


def _spy(mp: pytest.MonkeyPatch, name: str) -> list[Any]:
    calls: list[Any] = []
    real = getattr(Transactions, name)

    def spy(self: Transactions, *a: Any) -> Any:
        out = real(self, *a)
        calls.append(out)
        return out

    mp.setattr(Transactions, name, spy)
    return calls


def _without_reuse(model: str, **kw: Any) -> tuple:
    with pytest.MonkeyPatch.context() as mp:
        _every_pass_expanded_again(mp)
        return search_summary(movers.check(model, reduction="transactions", **kw))


@pytest.mark.parametrize("search", ["dfs", "bfs"])
@pytest.mark.parametrize("limit", [None, 5_000])
def test_the_second_pass_reuses_the_first_ones_expansions(limit: int | None, search: str) -> None:
    # The counter's only weakening is at its first state: every later expansion of the first pass is
    # reused in the second (their numbers only), which then finds nothing new; the same run as without.
    with pytest.MonkeyPatch.context() as mp:
        again = _spy(mp, "again")
        fast = search_summary(movers.check(COUNTER, reduction="transactions", max_states=limit, search=search))
    assert sum(a is not None for a in again) > 0
    assert fast == _without_reuse(COUNTER, max_states=limit, search=search)


@pytest.mark.parametrize("search", ["dfs", "bfs"])
def test_a_pass_that_weakens_again_runs_again_without_reuse(search: str) -> None:
    with pytest.MonkeyPatch.context() as mp:
        redone = _spy(mp, "redo_pass")
        fast = movers.check(WEAKENS_IN_PASS_TWO, reduction="transactions", search=search)
    assert redone, "the second pass weakened the classification: it is run again from its snapshot"
    assert any("3 passes" in n for n in fast.notes)
    assert search_summary(fast) == _without_reuse(WEAKENS_IN_PASS_TWO, search=search)


def test_no_reuse_under_max_depth() -> None:
    # A state at --max-depth is not expanded, so a later pass could not reuse what it led to.
    with pytest.MonkeyPatch.context() as mp:
        again = _spy(mp, "again")
        fast = search_summary(movers.check(COUNTER, reduction="transactions", max_depth=6))
    assert not again
    assert fast == _without_reuse(COUNTER, max_depth=6)


def test_the_first_pass_of_a_search_reuses_nothing() -> None:
    # After a Refine the checker restarts the search with the same reduction: what it expanded before is not
    # in the new search's tree, so the new search's first pass must expand everything.
    with pytest.MonkeyPatch.context() as mp:
        moved = []
        real = Transactions.moves

        def moves(self: Transactions, state: Any) -> Any:
            moved.append((self, state))
            return real(self, state)

        mp.setattr(Transactions, "moves", moves)
        movers.check(COUNTER, reduction="transactions")
    red, state = moved[-1]
    red.begin_pass(True)
    red.moves(state)
    assert red.begin_pass(True) is not None and red.again(state) is not None  # the next pass reuses it
    red.begin_pass(True)
    red.moves(state)
    assert red.begin_pass(True, first=True) is None and red.again(state) is None
