"""Per-state work the reductions skip (issue 25, "reductions that win in time"): each shortcut is checked to
change nothing but time (the search with it and without it agree state for state, on examples and random
models) and to be taken (it is there)."""

from __future__ import annotations

import itertools
import textwrap
from typing import Any

import pytest
from conftest import EXAMPLES, search_summary
from hypothesis import HealthCheck, given, note, settings
from strategies import models

import movers
from movers.analysis import escape
from movers.analysis.classify import Classification
from movers.analysis.mover import LEFT_KINDS, NON_KINDS
from movers.reduce import ample, transactions
from movers.reduce.ample import Ample
from movers.reduce.base import Move
from movers.reduce.locking import LockingAmple
from movers.reduce.transactions import Transactions
from movers.semantics.system import TransitionSystem as SYSTEM

# Examples with deadlocks, guards, monitors and heap objects; small enough to run twice per test.
SOME = [EXAMPLES / f"{n}.py" for n in ("dining_philosophers", "dining_philosophers_ordered", "dwyer_deadlock_bug",
                                       "dwyer_readers_writers", "dwyer_bounded_buffer", "bounded_buffer",
                                       "condition_queue", "bank_transfer_deadlock", "fq_counter")]

COUNTER = textwrap.dedent("""
    from movers.lang import *
    m = Lock()
    count = 0

    def worker():
        global count
        with m:
            count = count + 1
        with m:
            count = count + 1

    def checker():
        for w in workers:
            w.join()
        with m:
            assert count == 6

    workers = [Thread(target=worker) for _ in range(3)]
    for w in workers:
        w.start()
    Thread(target=checker).start()
""")


def _guard_reachable_before(code: Any, start: int) -> bool:
    """``transactions._guard_reachable`` before the shortcut: a run's first step was always taken."""
    seen = {start}
    work = [start]
    while work:
        k = work.pop()
        n = code.nodes[k]
        if n.calls or not n.succ:
            return True
        if k != start:
            if n.guard is not None:
                return True
            if n.kind in LEFT_KINDS or n.kind in NON_KINDS:
                continue
        for j in n.succ:
            if j not in seen and 0 <= j < len(code.nodes):
                seen.add(j)
                work.append(j)
    return False


def _closure_search_before(self: Transactions, s: tuple, t: int, steps: tuple, budget: list[int]) -> Any:
    if t == len(s[2]):
        dead = self.ts.deadlock(s) if steps else None
        return Move(steps, None, ("deadlock", dead)) if dead else None
    for s2, more in itertools.chain((((s, ())),), self._pre_commit_runs(s, t, budget)):
        if not self._may_stay_blocked(s2, t):
            continue
        found = self._closure_search(s2, t + 1, steps + more, budget)
        if found is not None:
            return found
    return None


def _every_run_taken(mp: pytest.MonkeyPatch) -> None:
    """The transactions reduction's deadlock closure as it was: every thread's pre-commit runs taken."""
    mp.setattr(transactions, "_guard_reachable", _guard_reachable_before)
    mp.setattr(Transactions, "_closure_search", _closure_search_before)
    mp.setattr(Transactions, "_deadlock_in_closure", lambda self, state: _in_closure_before(self, state))


def _in_closure_before(self: Transactions, state: tuple) -> Any:
    try:
        return self._closure_search(state, 0, (), [transactions.CLOSURE_LIMIT])
    except transactions._GiveUp:
        self.closure_gave_up = True
        return None


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


SHORTCUTS = {
    "transactions": [_every_run_taken, _guards_checked_each_time],
    "dwyer-wsl": [_views_built_again, _reachability_not_remembered],
    "dwyer-ld+wsldom": [_views_built_again, _reachability_not_remembered],
    "dwyer-da": [_reachability_not_remembered],
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
def test_random_deadlocking_models_the_closure_shortcut_changes_nothing(src: str) -> None:
    note(src)
    _agree(src, "transactions", 5_000)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models())
def test_random_models_the_shortcuts_change_nothing(src: str) -> None:
    note(src)
    for reduction in ("transactions", "dwyer-ld+wsldom"):
        _agree(src, reduction, 5_000)


def test_the_closure_takes_no_run_that_cannot_end_at_a_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every pre-commit run of the counter's threads ends at a release (no guard before it) or is a join
    # (a commit): the deadlock closure has nothing to step through.
    taken: list[int] = []
    real = Transactions._pre_commit_runs

    def runs(self: Transactions, state: tuple, t: int, budget: list[int]):  # type: ignore[no-untyped-def]
        taken.append(t)
        return real(self, state, t, budget)

    monkeypatch.setattr(Transactions, "_pre_commit_runs", runs)
    r = movers.check(COUNTER, reduction="transactions")
    assert r.verdict == "ok"
    assert taken and set(taken) == {3}  # the checker's loop leads to a join, which may block
    # Where a run can end at a guard (the philosophers' second fork) it is still taken, and finds the deadlock.
    r = movers.check(EXAMPLES / "dining_philosophers.py", reduction="transactions")
    assert r.violations[0].kind == "deadlock" and taken


def test_guard_reachability_sees_handlers_and_commits() -> None:
    src = textwrap.dedent("""
        import threading
        a = threading.Lock()
        b = threading.Lock()
        zero = 0

        def first():
            with a:
                try:
                    x = 1 // zero
                except ZeroDivisionError:
                    with b:
                        pass
    """)
    program = movers.checker.compile_source(src, "m.py")
    code = next(c for c in program.codes() if c.name == "first")
    kinds = [n.kind for n in code.nodes]
    acquires = [i for i, k in enumerate(kinds) if k == "acquire"]
    # From `with a:` the division's handler leads to `with b:`: a guard in the pre-commit run.
    assert transactions._guard_reachable(code, acquires[0])
    # From `with b:` the run ends at its release (a commit) with no guard on the way.
    assert not transactions._guard_reachable(code, acquires[1])
    # A release commits at once: there is no pre-commit state after it.
    assert not any(transactions._guard_reachable(code, i) for i, k in enumerate(kinds) if k == "release")


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
