"""``--all-violations`` / ``--max-violations N``: the depth-first search goes on after a violation and reports
each distinct one (by kind and message) with its own trace, as SPIN's -e and TLC's -continue do."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES
from hypothesis import HealthCheck, given, note, settings

import movers
from movers.trail import replay

try:
    from strategies import models
except ImportError:  # tests/ imported as a package
    from tests.strategies import models

THREE = """
from movers.lang import *
x = 0
m1 = Lock()
m2 = Lock()
def a():
    global x
    t = x
    x = t + 1
    assert x != 1, "a saw one"
    with m1:
        with m2:
            pass
def b():
    global x
    t = x
    x = t + 2
    assert x != 2, "b saw two"
    with m2:
        with m1:
            pass
Thread(target=a).start()
Thread(target=b).start()
"""


def _replays(text: str, tmp_path: Path, v: movers.Violation) -> bool:
    f = tmp_path / "m.py"
    f.write_text(text)
    again = replay(f, {"movers_trail": 1, "steps": [[t, list(c)] for t, c in v.steps], "kind": v.kind,
                       "options": {"granularity": "access"}})
    return again.verdict == "violation" and again.violations[0].kind == v.kind


@pytest.mark.parametrize("reduction", ["none", "optimistic", "static-por", "dwyer-da"])
def test_every_distinct_violation_with_its_own_trace(reduction: str, tmp_path: Path) -> None:
    r = movers.check(source=THREE, max_violations=10**9, reduction=reduction)
    kinds = sorted(v.kind for v in r.violations)
    assert r.verdict == "violation" and "deadlock" in kinds and kinds.count("assertion") == 2, r.violations
    assert {v.message.split(" (")[0] for v in r.violations if v.kind == "assertion"} == {"a saw one", "b saw two"}
    for v in r.violations:
        assert _replays(THREE, tmp_path, v), v
    first = movers.check(source=THREE, reduction=reduction)
    assert (r.violations[0].kind, r.violations[0].message) == (first.violations[0].kind, first.violations[0].message)


def test_max_violations_bounds_them() -> None:
    r = movers.check(source=THREE, max_violations=2)
    assert len(r.violations) == 2
    assert len(movers.check(source=THREE).violations) == 1


def test_a_model_without_violations_and_the_limits() -> None:
    r = movers.check(EXAMPLES / "peterson.py", max_violations=5)
    assert r.verdict == "ok" and not r.violations
    r = movers.check(source=THREE, max_violations=10**9, max_states=3)
    assert r.verdict in ("violation", "incomplete")


def test_refused_combinations() -> None:
    for kw in ({"search": "bfs"}, {"workers": 2}, {"reduction": "transactions"}):
        r = movers.check(source=THREE, max_violations=3, **kw)
        assert r.verdict == "error" and "--max-violations" in r.error, kw
    assert movers.check(source=THREE, max_violations=0).verdict == "error"


def test_the_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import json

    from movers.cli import main

    f = tmp_path / "m.py"
    f.write_text(THREE)
    assert main(["check", str(f), "--all-violations", "--json"]) == 1
    assert len(json.loads(capsys.readouterr().out)["violations"]) == 3
    assert main(["check", str(f), "--max-violations", "2", "--json"]) == 1
    assert len(json.loads(capsys.readouterr().out)["violations"]) == 2


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=models())
def test_random_models_every_violation_is_real(text: str, tmp_path: Path) -> None:
    note(text)
    r = movers.check(source=text, max_violations=10**9, max_states=20_000, time_limit=10)
    one = movers.check(source=text, max_states=20_000, time_limit=10)
    if "incomplete" in (r.verdict, one.verdict):
        return
    assert r.verdict == one.verdict
    if r.violations:
        assert (r.violations[0].kind, r.violations[0].message) == (one.violations[0].kind, one.violations[0].message)
        assert len({(v.kind, v.message) for v in r.violations}) == len(r.violations)
        for v in r.violations[:5]:
            assert _replays(text, tmp_path, v), v
