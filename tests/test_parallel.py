"""``--workers N`` (search/parallel.py): the partitioned search stores the same states and gives the same
verdicts as the sequential one, its counterexamples are real runs, and the limits hold."""

from __future__ import annotations

import io
import json
import os
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
BUG_TWINS = sorted(EXAMPLES.glob("*_bug.py"))
# More states than the processes' first exchanges take: Ctrl-C, or a signal, finds them searching.
BIG = (EXAMPLES / "counter_bench.py").read_text().replace("K = 3", "K = 5").replace("L = 4", "L = 6")


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
    # The CPU time of the check and of its workers, which a busy machine does not stretch as it does the wall
    # clock's: a search that ignored the limit would run for minutes.
    t0 = time.process_time() + children_cpu()
    r = movers.check(BIG, workers=2, time_limit=1.5)
    assert r.verdict == "incomplete" and r.limit == "time-limit"
    assert time.process_time() + children_cpu() - t0 < 20


def test_ctrl_c_keeps_the_statistics(tmp_path: Path) -> None:
    model = tmp_path / "big.py"
    model.write_text(BIG)
    p = subprocess.Popen([sys.executable, "-m", "movers.cli", "check", str(model), "--workers", "2", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_cpu(p, 3.0)  # the command and its workers have got so far, however busy the machine
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=600)
    assert p.returncode == 3, out
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


def _replays(path: Path, r: movers.Result) -> None:
    """The trace is a real run: replayed step by step on the program, it ends in the same violation."""
    from movers.trail import replay, trail_of

    v = r.violations[0]
    again = replay(path, trail_of(r, path.read_text(), str(path)))
    assert again.verdict == "violation" and again.violations[0].kind == v.kind, (again.notes, v.steps)
    assert len(again.violations[0].steps) == len(v.steps)


def _comparable(one: movers.Result, many: movers.Result) -> None:
    # The processes search in about the sequential order, so a violation it finds early is found early: by
    # states (not seconds, which a loaded machine stretches).
    assert many.verdict == "violation", (many.verdict, many.limit, many.error)
    assert _kind(many) == _kind(one)
    assert many.stats.states <= 10 * one.stats.states + 1000, (many.stats.states, one.stats.states, many.notes)


@pytest.mark.parametrize("path", BUG_TWINS, ids=lambda p: p.stem)
def test_bug_twins_are_found_within_comparable_work_with_real_traces(path: Path) -> None:
    one = movers.check(path)
    assert one.verdict == "violation"
    many = movers.check(path, workers=2, time_limit=300)
    _comparable(one, many)
    _replays(path, many)


def test_a_violation_deep_in_a_large_space_keeps_its_trace(tmp_path: Path) -> None:
    # Issue 21: the processes found it in 1.7 s, then a sequential search for the path to the reported state,
    # without a bound, ran into the time limit: "incomplete", 0 states. The path now comes from the parent
    # each process stored per state.
    model = tmp_path / "independent_work1_bug3.py"
    model.write_text((EXAMPLES / "dwyer_independent_work1_bug.py").read_text().replace("THREADS = 2", "THREADS = 3"))
    one = movers.check(model)
    many = movers.check(model, workers=2, time_limit=300)
    _comparable(one, many)
    assert many.stats.states > 0 and many.stats.transitions > 0
    _replays(model, many)


# A violation past the processes' token phase (parallel.TOKEN_PHASE expansions), where they search at once:
# the reader must run before the setter's one step, which the sequential search tries only after the whole
# subtree of the setter's step first (6,852 states).
LATE = """
from movers.lang import *

m = Lock()
count = 0
x = 0


def setter():
    global x
    x = 1


def reader():
    assert x == 1, "read before the write"


def worker():
    global count
    for i in range(4):
        with m:
            count += 1


Thread(target=setter).start()
for k in range(3):
    Thread(target=worker).start()
Thread(target=reader).start()
"""


def test_a_violation_past_the_token_phase_costs_about_the_sequential_work(tmp_path: Path) -> None:
    from movers.search.parallel import TOKEN_PHASE

    model = tmp_path / "late.py"
    model.write_text(LATE.lstrip())
    # (statement steps: at access granularity the model has fewer states than the token phase's bound)
    one = movers.check(model, granularity="statement")
    assert one.stats.states > 1.5 * TOKEN_PHASE
    many = movers.check(model, workers=2, time_limit=300, granularity="statement")
    _comparable(one, many)
    _replays(model, many)


def test_hash_compaction_reports_its_store_as_the_sequential_search() -> None:
    from rich.console import Console

    from movers.report.text import print_result

    path = EXAMPLES / "symmetric_workers.py"
    one = movers.check(path, store="hashcompact")
    many = movers.check(path, store="hashcompact", workers=2)
    assert many.verdict == one.verdict and many.stats.states == one.stats.states
    assert set(many.store) == set(one.store) and many.store["kind"] == "hashcompact"
    # Each process's fingerprints collide only among themselves: the chance is below one store's of them all.
    assert 0 < many.store["collision_probability"] <= one.store["collision_probability"]
    assert json.loads(json.dumps(many.to_json()))["store"]["fingerprint_bits"] == 64
    buf = io.StringIO()
    print_result(many, Console(file=buf, width=120, color_system=None), str(path))
    assert "hash compaction" in buf.getvalue()
    assert movers.check(path, workers=2).store == {"kind": "exact"}


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")  # a zombie has ended; only its parent's wait is due


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL, signal.SIGHUP], ids=lambda s: s.name)
def test_the_processes_die_with_the_checker(tmp_path: Path, sig: signal.Signals) -> None:
    model = tmp_path / "big.py"
    model.write_text(BIG)
    p = subprocess.Popen([sys.executable, "-m", "movers.cli", "check", str(model), "--workers", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.1)
            workers = _children(p.pid)
        assert len(workers) >= 2, "the processes never started"
        time.sleep(0.5)
        p.send_signal(sig)
        out, _ = p.communicate(timeout=60)  # EOF on stdout: no process holds it open
        assert p.returncode == -sig
        deadline = time.monotonic() + 60
        while not all(_gone(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(_gone(w) for w in workers), [w for w in workers if not _gone(w)]
    finally:
        if p.poll() is None:
            p.kill()
        for w in workers:
            if not _gone(w):
                os.kill(w, signal.SIGKILL)
