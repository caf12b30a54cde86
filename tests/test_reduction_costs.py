"""Per-state work the reductions skip (issue 25, "reductions that win in time"): each shortcut is checked to
change nothing but time (the search with it and without it agree state for state, on examples and random
models) and to be taken (it is there)."""

from __future__ import annotations

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
from movers.reduce import ample
from movers.reduce.ample import Ample
from movers.reduce.locking import LockingAmple
from movers.reduce.static_por import StaticPOR
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


SHORTCUTS = {
    "transactions": [_guards_checked_each_time],
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
