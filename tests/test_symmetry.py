"""``--symmetry threads`` (semantics/symmetry.py): states remembered up to a renaming of the threads. Every
test compares with ``--symmetry off``: the same verdict and kind of violation, never more states."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import EXAMPLES
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import movers
from movers.ir.program import CONDITION, LOCK, RLOCK, THREAD
from movers.semantics.symmetry import rename_heap

try:
    from strategies import models
except ImportError:  # tests/ imported as a package
    from tests.strategies import models

FOUR_WORKERS = (EXAMPLES / "symmetric_workers.py").read_text()


def _outcome(r: movers.Result) -> tuple[str, str | None]:
    return r.verdict, (r.violations[0].kind if r.violations else None)


def test_four_identical_workers_store_at_least_six_times_fewer_states() -> None:
    off = movers.check(source=FOUR_WORKERS)
    on = movers.check(source=FOUR_WORKERS, symmetry="threads")
    assert off.verdict == on.verdict == "ok" and on.symmetry == "threads" and off.symmetry == "off"
    assert on.stats.states * 6 <= off.stats.states, (on.stats.states, off.stats.states)


@pytest.mark.parametrize("text, why", [
    (FOUR_WORKERS.replace("import threading", "import threading\nfrom movers.lang import tid")
     .replace("t = count", "t = count + 0 * tid()"), "tid()"),
    (FOUR_WORKERS.replace("t = count", "t = count\n            assert m.owner is not None"), "'.owner'"),
])
def test_models_that_can_see_thread_numbers_run_without_it(text: str, why: str) -> None:
    off = movers.check(source=text)
    on = movers.check(source=text, symmetry="threads")
    assert on.symmetry == "off" and any("not applied" in n and why in n for n in on.notes), on.notes
    assert (on.verdict, on.stats.states) == (off.verdict, off.stats.states)


def test_threads_told_apart_by_their_thread_objects_are_not_merged() -> None:
    # The checker joins t0 and only then t1: the workers look alike, but the Thread objects name them.
    path = EXAMPLES / "racy_counter.py"
    off, on = movers.check(path), movers.check(path, symmetry="threads")
    assert _outcome(on) == _outcome(off) == ("violation", "assertion")


def test_refused_combinations() -> None:
    for kw in ({"reduction": "optimistic"}, {"search": "bfs"}, {"atomicity": "commit"}):
        r = movers.check(source=FOUR_WORKERS, symmetry="threads", **kw)
        assert r.verdict == "error" and "--symmetry threads" in r.error, kw
    assert "unknown --symmetry" in (movers.check(source=FOUR_WORKERS, symmetry="yes").error or "")


def test_rename_heap_renames_every_thread_number() -> None:
    heap = (
        (LOCK, None, 0),
        (RLOCK, None, 2, 1),
        (CONDITION, None, None, (0, 2)),
        (THREAD, None, 1, None, ()),
        (THREAD, None, None, None, ()),  # not started yet
        (LOCK, None, None),
    )
    pi = [2, 0, 1]  # thread 0 becomes 2, 1 becomes 0, 2 becomes 1
    out = rename_heap(heap, pi)
    assert out[0][2] == 2 and out[1][2] == 1 and out[1][3] == 1
    assert out[2][3] == (1, 2)  # renamed, and still sorted
    assert out[3][2] == 0 and out[4][2] is None and out[5] is heap[5]


def test_the_cli(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    import json

    from movers.cli import main

    f = tmp_path / "m.py"
    f.write_text(FOUR_WORKERS)
    assert main(["check", str(f), "--symmetry", "threads", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["symmetry"] == "threads" and d["stats"]["states"] < 5_000


# -- random models ---------------------------------------------------------------------------------------------

OPS = [
    "with m:\n    x = (x + 1) % 3",
    "with m:\n    t = x\nwith m:\n    x = (t + 1) % 3",
    "t = x\nx = (t + 1) % 3",
    "y = (y + 1) % 2",
    "assert x != 2 or y != 1",
    "r.acquire()\nr.acquire()\ny = (y + x) % 2\nr.release()\nr.release()",
    "s.acquire()\nx = (x + 2) % 3\ns.release()",
    "with c:\n    x = (x + 1) % 3\n    c.notify()",
    "with c:\n    if x == 0:\n        c.wait()",
    "wait_until(y == 0)",
    "with m:\n    with c:\n        y = 1",
]


@st.composite
def symmetric_models(draw: Any) -> str:
    """K identical workers (the same body, no arguments or the same ones), sometimes a checker that joins
    them through a list of their Thread objects, sometimes a worker that differs (a different argument): the
    symmetric, and the ones that only look symmetric."""
    k = draw(st.integers(2, 3))
    body = [draw(st.sampled_from(OPS)) for _ in range(draw(st.integers(1, 3)))]
    loop = draw(st.booleans())
    lines = ["from movers.lang import *", "x = 0", "y = 0", "m = Lock()", "r = RLock()", "s = Semaphore(1)",
             "c = Condition(m)" if draw(st.booleans()) else "c = Condition()", "ts = []",
             "def worker(a):", "    global x, y", "    t = a"]
    pad = "    "
    if loop:
        lines += ["    for i in range(2):"]
        pad = "        "
    for op in body:
        lines += [pad + ln for ln in op.split("\n")]
    args = [0] * k
    if draw(st.booleans()):
        args[-1] = 1  # one worker differs
    if draw(st.booleans()):
        # A checker joins the workers through a list of their Thread objects.
        lines[lines.index("ts = []")] = "ts = [" + ", ".join(f"Thread(target=worker, args=({a},))" for a in args) + "]"
        lines += ["def checker():", "    for j in range(len(ts)):", "        ts[j].join()",
                  "    assert x != 1 or y != 1", "for j in range(len(ts)):", "    ts[j].start()",
                  "Thread(target=checker).start()"]
    else:
        lines += [f"Thread(target=worker, args=({a},)).start()" for a in args]
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(symmetric_models(), models()))
def test_random_models_agree_with_symmetry_off(text: str) -> None:
    note(text)
    off = movers.check(source=text, max_states=20_000, time_limit=10)
    on = movers.check(source=text, max_states=20_000, time_limit=10, symmetry="threads")
    if "incomplete" in (off.verdict, on.verdict):
        return
    assert _outcome(on) == _outcome(off), (on.violations, off.violations, on.notes)
    assert on.stats.states <= off.stats.states
