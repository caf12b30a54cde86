"""Property tests on randomly generated models (``tests/strategies.py``).

The first tests check the generator itself (valid Python, the violations each family promises) with the
naive explorer of ``tests/naive_explorer.py``; the others check ``movers.check``: every generated model
compiles, DFS and BFS agree, and the full search agrees with the naive explorer.

Every reduction is compared against ``none`` (``MOVERS_REDUCTIONS=static-por,optimistic`` narrows the set).

The comparisons with the naive explorer and with ``none`` run at both granularities (``--granularity access``,
the default, and ``statement``); the second with fewer examples (``SECOND``) to keep the suite's time.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, note, settings

try:
    from differential import run_differential, violation_kinds
    from naive_explorer import naive_explore
    from strategies import models, single_kind_models, value_models
except ImportError:  # tests/ imported as a package
    from tests.differential import run_differential, violation_kinds
    from tests.naive_explorer import naive_explore
    from tests.strategies import models, single_kind_models, value_models

__all__ = ["run_differential"]

CHECKER = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SECOND = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GENERATOR = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MAX_STATES = 20000


def _check(src: str, **kw: Any) -> Any:
    import movers

    kw.setdefault("max_states", MAX_STATES)
    r = movers.check(src, **kw)
    note(f"{kw}: {r.verdict} {violation_kinds(r)} states={r.stats.states} error={r.error}")
    return r


# -- the generator ---------------------------------------------------------------------------------------


class _FakeLock:
    """Never blocks (threads run one after another); counts so that a release matches an acquire."""

    def __init__(self) -> None:
        self.count = 0

    def acquire(self) -> None:
        self.count += 1

    def release(self) -> None:
        assert self.count > 0, "release of a lock not held"
        self.count -= 1

    def __enter__(self) -> None:
        self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


class _FakeThread:
    def __init__(self, target: Any, args: tuple = ()) -> None:
        self.target, self.args = target, args

    def start(self) -> None:
        try:
            self.target(*self.args)
        except AssertionError as e:
            if "release of a lock not held" in str(e):
                raise


@pytest.mark.slow  # checks the generator the other tests use, not movers: nightly (README)
@GENERATOR
@given(models())
def test_generated_models_are_valid_python(src: str) -> None:
    note(src)
    first, rest = src.split("\n", 1)
    assert first == "from movers.lang import *"
    env = {
        "__name__": "model",
        "Lock": _FakeLock,
        "Thread": _FakeThread,
        "wait_until": lambda cond: None,
        "assume": lambda cond: None,
    }
    # Runs every thread to completion one after another: NameError, UnboundLocalError, IndexError… fail.
    exec(compile("\n" + rest, "<model>", "exec"), env)


@GENERATOR
@given(single_kind_models())
def test_generated_families_have_the_promised_violations(case: tuple[str, str]) -> None:
    src, kind = case
    note(src)
    r = naive_explore(src, max_states=50000)
    assert r.kinds <= {kind}


@GENERATOR
@given(models())
def test_generated_models_cannot_raise_runtime_errors(src: str) -> None:
    note(src)
    assert "runtime-error" not in naive_explore(src, max_states=50000).kinds


# -- the checker -----------------------------------------------------------------------------------------


@CHECKER
@given(models())
def test_every_generated_model_compiles(src: str) -> None:
    note(src)
    r = _check(src)
    assert r.verdict != "error", r.error


@CHECKER
@given(single_kind_models())
def test_dfs_and_bfs_agree(case: tuple[str, str]) -> None:
    src, kind = case
    note(src)
    dfs = _check(src, search="dfs")
    bfs = _check(src, search="bfs")
    assume("incomplete" not in (dfs.verdict, bfs.verdict))
    assert dfs.verdict == bfs.verdict
    if dfs.verdict == "violation":
        assert violation_kinds(dfs) == violation_kinds(bfs) == [kind]
    if dfs.verdict == "ok":
        assert dfs.stats.states == bfs.stats.states


@CHECKER
@given(models())
def test_dfs_and_bfs_agree_on_verdict(src: str) -> None:
    """Any generated model: several kinds of violation may be reachable, so only verdicts are compared."""
    note(src)
    dfs = _check(src, search="dfs")
    bfs = _check(src, search="bfs")
    assume("incomplete" not in (dfs.verdict, bfs.verdict))
    assert dfs.verdict == bfs.verdict
    if dfs.verdict == "ok":
        assert dfs.stats.states == bfs.stats.states


def _agrees_with_naive(src: str, granularity: str) -> None:
    """Same verdict as the naive explorer; every kind reported is one it reaches; and, when neither finds a
    violation, the same number of states: the two state representations correspond one to one, so a
    difference means the checker merges states the language tells apart (or splits states it does not), or
    that its steps are not those of ``granularity``."""
    note(src)
    r = _check(src, granularity=granularity)
    naive = naive_explore(src, max_states=50000, granularity=granularity)
    note(f"naive: {naive}")
    assume(r.verdict != "incomplete" and naive.complete)
    assert r.verdict == naive.verdict
    assert set(violation_kinds(r)) <= naive.kinds
    if r.verdict == "ok":
        assert r.stats.states == naive.states


@CHECKER
@given(models(assumes=False))
def test_full_search_agrees_with_the_naive_explorer(src: str) -> None:
    """Models without ``assume``: whether a state whose only steps are failing ``assume``s is a deadlock is
    a choice of the semantics that the naive explorer need not share."""
    _agrees_with_naive(src, "access")


@SECOND
@given(models(assumes=False))
def test_full_search_agrees_with_the_naive_explorer_by_statement(src: str) -> None:
    _agrees_with_naive(src, "statement")


@CHECKER
@given(value_models())
def test_values_agree_with_the_naive_explorer(src: str) -> None:
    """Booleans and ints mixed, None, tuples, fields and ``is``: the naive explorer keeps types in its keys,
    so a checker whose state store took ``1 == True`` at Python's word would lose states (and bugs)."""
    _agrees_with_naive(src, "access")


@SECOND
@given(value_models())
def test_values_agree_with_the_naive_explorer_by_statement(src: str) -> None:
    _agrees_with_naive(src, "statement")


@CHECKER
@given(value_models())
def test_values_reductions_agree_with_none(src: str) -> None:
    note(src)
    run_differential(src, ("static-por", "optimistic", "transactions"), compare_kinds=False)


@SECOND
@given(value_models())
def test_values_reductions_agree_with_none_by_statement(src: str) -> None:
    note(src)
    run_differential(src, ("static-por", "optimistic", "transactions"), compare_kinds=False,
                     granularity="statement")


# Every reduction, by default; MOVERS_REDUCTIONS=name,name narrows the set (e.g. to debug one).
_REDUCTIONS = [name for name in os.environ.get("MOVERS_REDUCTIONS", "").split(",") if name] or [
    "static-por", "optimistic", "transactions"]


@CHECKER
@given(single_kind_models())
def test_reductions_agree_with_none(case: tuple[str, str]) -> None:
    src, _ = case
    note(src)
    run_differential(src, _REDUCTIONS)


@SECOND
@given(single_kind_models())
def test_reductions_agree_with_none_by_statement(case: tuple[str, str]) -> None:
    src, _ = case
    note(src)
    run_differential(src, _REDUCTIONS, granularity="statement")
