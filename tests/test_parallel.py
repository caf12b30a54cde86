"""``--workers N`` (search/parallel.py): the partitioned search stores the same states and gives the same
verdicts as the sequential one, its counterexamples are real runs, and the limits hold."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, children_cpu, wait_for_cpu
from hypothesis import HealthCheck, given, note, settings

import movers

try:
    from strategies import models
except ImportError:  # tests/ imported as a package
    from tests.strategies import models

SMALL = sorted(p for p in EXAMPLES.glob("*.py") if "counter_bench" not in p.name)


def _kind(r: movers.Result) -> str | None:
    return r.violations[0].kind if r.violations else None


def _same_as_sequential(one: movers.Result, many: movers.Result, kinds: bool = True) -> None:
    # A model with violations of several kinds may show either first: the processes run in another order.
    assert many.verdict == one.verdict, (many.violations, one.violations, many.error)
    if kinds:
        assert _kind(many) == _kind(one), (many.violations, one.violations)
    if one.verdict == "ok":
        assert (many.stats.states, many.stats.transitions) == (one.stats.states, one.stats.transitions)
    if many.violations:
        v = many.violations[0]
        # A counterexample with its steps, unless the initial state itself is the violation.
        assert v.trace or (one.violations and not one.violations[0].trace), v


@pytest.mark.parametrize("path", SMALL, ids=lambda p: p.stem)
def test_every_example_is_the_sequential_search(path: Path) -> None:
    # Generous time limits (only against a hang): a busy machine must not turn a verdict into "incomplete".
    one = movers.check(path, max_states=60_000, time_limit=600)
    if one.verdict in ("incomplete", "error"):
        pytest.skip(one.verdict)
    many = movers.check(path, workers=2, time_limit=600)
    _same_as_sequential(one, many)


def test_three_workers_and_hash_compaction() -> None:
    path = EXAMPLES / "symmetric_workers.py"
    one = movers.check(path)
    for kw in ({"workers": 3}, {"workers": 2, "store": "hashcompact"}):
        _same_as_sequential(one, movers.check(path, **kw))


def test_the_counterexample_is_a_run_that_fails() -> None:
    # The trace is replayed on the program: its last step is the failing one, as the sequential search's.
    for name, kind in (("racy_counter", "assertion"), ("dining_philosophers", "deadlock")):
        r = movers.check(EXAMPLES / f"{name}.py", workers=2)
        assert r.verdict == "violation" and _kind(r) == kind
        seq = movers.check(EXAMPLES / f"{name}.py")
        assert r.violations[0].message.split(" (")[0] == seq.violations[0].message.split(" (")[0] or kind == "deadlock"


def test_limits_hold() -> None:
    path = EXAMPLES / "symmetric_workers.py"
    r = movers.check(path, workers=2, max_states=1_000)
    assert r.verdict == "incomplete" and r.limit == "max-states" and r.stats.states == 1_000
    big = EXAMPLES / "counter_bench.py"
    # The CPU time of the check and of its workers, which a busy machine does not stretch as it does the wall
    # clock's: a search that ignored the limit would run for minutes.
    t0 = time.process_time() + children_cpu()
    r = movers.check(big.read_text().replace("K = 3", "K = 5").replace("L = 4", "L = 6"), workers=2,
                     time_limit=1.5)
    assert r.verdict == "incomplete" and r.limit == "time-limit"
    assert time.process_time() + children_cpu() - t0 < 20


def test_ctrl_c_keeps_the_statistics(tmp_path: Path) -> None:
    model = tmp_path / "big.py"
    model.write_text((EXAMPLES / "counter_bench.py").read_text().replace("K = 3", "K = 5").replace("L = 4", "L = 6"))
    p = subprocess.Popen([sys.executable, "-m", "movers.cli", "check", str(model), "--workers", "2", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_cpu(p, 3.0)  # the command and its workers have got so far, however busy the machine
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=600)
    assert p.returncode == 3, out
    import json

    d = json.loads(out)
    assert d["verdict"] == "incomplete" and d["limit"] == "interrupted" and d["stats"]["states"] > 0


def test_refused_combinations() -> None:
    path = EXAMPLES / "racy_counter.py"
    for kw in ({"reduction": "optimistic"}, {"search": "bfs"}, {"store": "bitstate"}, {"symmetry": "threads"}):
        r = movers.check(path, workers=2, **kw)
        assert r.verdict == "error" and "--workers 2" in r.error, kw
    assert movers.check(path, workers=0).verdict == "error"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models())
def test_random_models_agree_with_one_worker(text: str) -> None:
    note(text)
    one = movers.check(source=text, max_states=20_000, time_limit=10)
    if one.verdict == "incomplete":
        return
    many = movers.check(source=text, workers=2, time_limit=600)
    if many.verdict != "incomplete":  # a slow, shared machine
        _same_as_sequential(one, many, kinds=False)
