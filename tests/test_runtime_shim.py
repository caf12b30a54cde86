"""The runtime shim (``movers.lang.runtime``): each construct under CPython threads, and the smoke run of
the example models with ``python model.py``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import movers.lang as lang
from movers.lang import (
    Condition,
    Lock,
    RLock,
    Semaphore,
    Thread,
    assume,
    atomic,
    choose,
    commit,
    exclusive,
    guarded_by,
    indivisible,
    invariant,
    notify,
    notify_all,
    runtime,
    synchronized,
    thread_local,
    tid,
    wait,
    wait_until,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SRC = ROOT / "src"


def run_all(threads: list[Thread], timeout: float = 10.0) -> None:
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), "thread did not finish"


@pytest.fixture(autouse=True)
def no_thread_failures():
    """A failure recorded by the shim would make the pytest process exit with status 1: fail the test."""
    runtime._failures.clear()
    yield
    failures = list(runtime._failures)
    runtime._failures.clear()
    assert not failures


def test_package_exports_the_shim():
    assert set(lang.__all__) == set(runtime.__all__)
    for name in runtime.__all__:
        assert getattr(lang, name) is getattr(runtime, name)


# -- threads and ids --------------------------------------------------------------------------------------


def test_thread_target_args_start_join():
    out = [0, 0]

    def f(i, v):
        out[i] = v

    run_all([Thread(target=f, args=(0, 5)), Thread(target=f, args=(1, 7))])
    assert out == [5, 7]


def test_thread_subclass_run_and_tid_order():
    seen: dict[str, int] = {}

    class T(Thread):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.label = name

        def run(self) -> None:
            seen[self.label] = tid()

    ts = [T("a"), T("b"), T("c")]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    base = seen["a"]
    assert base >= 0
    assert [seen["a"], seen["b"], seen["c"]] == [base, base + 1, base + 2]
    assert [t.movers_tid for t in ts] == [base, base + 1, base + 2]


def test_tid_starts_at_zero_after_reset_and_main_is_minus_one():
    runtime._reset_tids()
    got = []
    ts = [Thread(target=lambda: got.append(tid())) for _ in range(3)]
    for t in ts:  # sequential, so that append order is start order
        t.start()
        t.join()
    assert got == [0, 1, 2]
    assert tid() == -1


def test_uncaught_exception_makes_exit_status_1(tmp_path):
    model = tmp_path / "bad.py"
    model.write_text(
        "from movers.lang import *\ndef f():\n    assert 1 == 2, 'boom'\nThread(target=f).start()\n"
    )
    r = run_model(model)
    assert r.returncode == 1
    assert "AssertionError: boom" in r.stderr


# -- locks ------------------------------------------------------------------------------------------------


def test_threads_increment_under_lock():
    m = Lock()
    box = [0]

    def inc():
        for _ in range(2000):
            with m:
                tmp = box[0]
                time.sleep(0) if tmp % 500 == 0 else None
                box[0] = tmp + 1

    run_all([Thread(target=inc) for _ in range(4)])
    assert box[0] == 8000


def test_lock_owner_and_release_by_other_thread():
    m = Lock()
    assert m.owner is None and not m.locked()
    got = []
    release_errors = []

    def holder():
        m.acquire()
        got.append((m.owner, tid()))

    def other():
        try:
            m.release()
        except RuntimeError as e:
            release_errors.append(str(e))

    t = Thread(target=holder)
    run_all([t])
    assert got == [(t.movers_tid, t.movers_tid)]
    assert m.owner == t.movers_tid and m.locked()
    run_all([Thread(target=other)])
    assert release_errors and "held by thread" in release_errors[0]
    assert not m.acquire(blocking=False)
    with pytest.raises(RuntimeError):
        Lock().release()


def test_rlock_reentrancy_and_owner():
    r = RLock()
    got = []

    def f():
        with r:
            with r:
                got.append((r.owner, r.count))
            got.append((r.owner, r.count))
        got.append((r.owner, r.count))

    t = Thread(target=f)
    run_all([t])
    me = t.movers_tid
    assert got == [(me, 2), (me, 1), (None, 0)]
    with pytest.raises(RuntimeError):
        r.release()


def test_condition_wait_notify():
    lock = Lock()
    cv = Condition(lock)
    state = {"full": False, "slot": 0, "taken": []}

    def producer():
        for k in range(1, 21):
            with cv:
                while state["full"]:
                    cv.wait()
                state["slot"] = k
                state["full"] = True
                cv.notify_all()

    def consumer():
        for _ in range(20):
            with cv:
                while not state["full"]:
                    cv.wait()
                assert cv.owner == tid()
                state["taken"].append(state["slot"])
                state["full"] = False
                cv.notify()

    run_all([Thread(target=producer), Thread(target=consumer)])
    assert state["taken"] == list(range(1, 21))
    assert lock.owner is None


def test_condition_over_rlock_held_twice():
    cv = Condition()  # an RLock by default
    ready = threading.Event()
    done = []

    def waiter():
        with cv:
            with cv:
                ready.set()
                cv.wait()
                done.append(cv.owner == tid())

    def waker():
        ready.wait(5)
        with cv:  # possible only because wait() released both levels
            cv.notify()

    run_all([Thread(target=waiter), Thread(target=waker)])
    assert done == [True]


def test_semaphore_bounds_concurrency():
    s = Semaphore(2)
    assert s.owner is None
    inside = [0]
    peak = [0]
    m = Lock()

    def f():
        for _ in range(50):
            with s:
                with m:
                    inside[0] += 1
                    peak[0] = max(peak[0], inside[0])
                time.sleep(0)
                with m:
                    inside[0] -= 1

    run_all([Thread(target=f) for _ in range(4)])
    assert 1 <= peak[0] <= 2
    assert s.acquire() and s.acquire() and not s.acquire(blocking=False)


# -- Java monitors ----------------------------------------------------------------------------------------


class Counter:
    def __init__(self) -> None:
        self.n = 0

    @synchronized
    def inc(self) -> None:
        tmp = self.n
        time.sleep(0) if tmp % 300 == 0 else None
        self.n = tmp + 1

    @synchronized
    def inc_twice(self) -> None:
        self.inc()  # re-entrant
        self.inc()


def test_synchronized_method_and_reentrancy():
    c = Counter()

    def f():
        for _ in range(500):
            c.inc_twice()

    run_all([Thread(target=f) for _ in range(3)])
    assert c.n == 3000
    assert Counter.inc.__name__ == "inc"


def test_synchronized_block_on_list_and_object():
    arr = [0]
    obj = Counter()

    def f():
        for _ in range(1000):
            with synchronized(arr):
                arr[0] += 1
            with synchronized(obj):
                with synchronized(obj):
                    obj.n += 1

    run_all([Thread(target=f) for _ in range(3)])
    assert arr[0] == 3000 and obj.n == 3000


class Box:
    def __init__(self) -> None:
        self.value: int | None = None

    @synchronized
    def put(self, v: int) -> None:
        while self.value is not None:
            wait(self)
        self.value = v
        notify_all(self)

    @synchronized
    def get(self) -> int:
        while self.value is None:
            wait(self)
        v = self.value
        self.value = None
        notify(self)
        return v


def test_wait_notify_on_monitor():
    b = Box()
    out: list[int] = []
    run_all(
        [
            Thread(target=lambda: [b.put(k) for k in range(30)]),
            Thread(target=lambda: [out.append(b.get()) for _ in range(30)]),
        ]
    )
    assert out == list(range(30))


def test_wait_without_monitor_is_an_error():
    b = Box()
    with pytest.raises(RuntimeError, match="without holding"):
        wait(b)
    with pytest.raises(RuntimeError, match="without holding"):
        notify_all(b)


# -- verification primitives ------------------------------------------------------------------------------


def test_choose():
    for _ in range(200):
        assert choose(range(3)) in (0, 1, 2)
        assert choose(4, 5) in (4, 5)
        assert choose([1, 2, 3]) in (1, 2, 3)
        assert choose((7, 8)) in (7, 8)
    assert {choose([1, 2, 3]) for _ in range(300)} == {1, 2, 3}
    assert {choose(range(3)) for _ in range(300)} == {0, 1, 2}
    with pytest.raises(TypeError):
        choose(9)  # one argument is a sequence, as for random.choice: the checker agrees
    with pytest.raises(ValueError):
        choose(range(0))


def test_assume_ends_thread_quietly():
    got = []

    def f(v):
        assume(v > 0)
        got.append(v)

    run_all([Thread(target=f, args=(0,)), Thread(target=f, args=(1,))])
    assert got == [1]
    assert not runtime._failures
    with pytest.raises(SystemExit) as e:  # in the main thread: exit status 0
        assume(False)
    assert e.value.code == 0


def test_wait_until():
    wait_until(True)
    with pytest.raises(RuntimeError, match="cannot wait"):
        wait_until(1 == 2)
    flag = [False]

    def setter():
        time.sleep(0.01)
        flag[0] = True

    t = Thread(target=setter)
    t.start()
    wait_until(lambda: flag[0])
    t.join()


def test_indivisible_blocks_are_mutually_atomic():
    box = [0]

    def f():
        for _ in range(1000):
            with indivisible():
                tmp = box[0]
                time.sleep(0) if tmp % 250 == 0 else None
                box[0] = tmp + 1

    run_all([Thread(target=f) for _ in range(3)])
    assert box[0] == 3000
    with indivisible():
        with indivisible():  # re-entrant
            pass


def test_specification_constructs_are_no_ops():
    m = Lock()
    x = [0, 1]
    assert exclusive(x[0], lambda t: m.owner == t) is None
    assert guarded_by(x, m) is None
    assert thread_local(x[1], 1) is None
    with atomic():
        commit()

    def inv() -> bool:
        return True

    assert invariant(inv) is inv


# -- the examples under CPython -----------------------------------------------------------------------------


def run_model(path: Path, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT
    )


# expected verdict of `movers check` (from the header) and how the smoke run is judged:
#   "pass"  -- must exit with 0
#   "racy"  -- a violation that needs an unlucky schedule: exit 0, or 1 with an AssertionError
#   "hang"  -- may deadlock: exit 0 within a short timeout, or time out
#   "skip"  -- not runnable under CPython (wait_until on a value)
EXAMPLES_SMOKE = {
    "sc_example.py": ("violation (deadlock)", "skip"),
    "fq_counter.py": ("violation (assertion)", "racy"),
    "fq_counter_nolock.py": ("violation (assertion)", "racy"),
    "bounded_buffer.py": ("ok", "pass"),
    "dining_philosophers.py": ("violation (deadlock)", "hang"),
    "dining_philosophers_ordered.py": ("ok", "pass"),
    "racy_counter.py": ("violation (assertion)", "racy"),
    "symmetric_workers.py": ("ok", "pass"),
    "symmetric_local_work.py": ("ok", "pass"),
    "symmetric_local_work_bug.py": ("violation (assertion)", "racy"),
    "condition_queue.py": ("ok", "pass"),
    "peterson.py": ("ok", "pass"),
    "counter_bench.py": ("ok", "pass"),
    "dwyer_independent_work1.py": ("ok", "pass"),
    "dwyer_independent_work2.py": ("ok", "pass"),
    "dwyer_deadlock.py": ("ok", "pass"),
    "dwyer_readers_writers.py": ("ok", "pass"),
    "dwyer_replicated_workers.py": ("ok", "pass"),
    "dwyer_independent_work1_bug.py": ("violation (assertion)", "racy"),
    "dwyer_independent_work2_bug.py": ("violation (assertion)", "racy"),
    "dwyer_deadlock_bug.py": ("violation (deadlock)", "hang"),
    "dwyer_readers_writers_bug.py": ("violation (deadlock)", "hang"),
    "dwyer_replicated_workers_bug.py": ("violation (deadlock)", "hang"),
    "ldlock_figure6.py": ("ok", "hang"),
    "dwyer_bounded_buffer.py": ("ok", "hang"),
    "dwyer_bounded_buffer_bug.py": ("violation (runtime-error)", "skip"),
    "atomicity_acquire1.py": ("ok", "hang"),
    "atomicity_acquire2.py": ("ok", "hang"),
    "atomicity_dekker.py": ("ok", "hang"),
    "atomicity_transaction.py": ("ok", "hang"),
    "atomicity_bluetooth.py": ("ok", "skip"),
    "atomicity_bluetooth_fixed.py": ("ok", "skip"),
    "atomicity_locked_increment.py": ("ok", "pass"),
    "atomicity_unlocked_increment.py": ("ok", "pass"),
    "atomicity_two_sections.py": ("ok", "pass"),
    "atomicity_check_then_act.py": ("ok", "pass"),
    "atomicity_wait_notify.py": ("ok", "pass"),
    "atomicity_nested.py": ("ok", "pass"),
    "atomicity_loop.py": ("ok", "hang"),
    "atomicity_commit_last.py": ("ok", "pass"),
    "bank_transfer.py": ("ok", "pass"),
    "bank_transfer_deadlock.py": ("violation (deadlock)", "hang"),
    "liveness_peterson.py": ("ok", "pass"),
    "liveness_spinlock.py": ("ok", "pass"),
    "liveness_polite.py": ("ok", "hang"),
    "liveness_philosophers.py": ("ok", "hang"),
    "liveness_philosophers_arbiter.py": ("ok", "pass"),
    "liveness_producer_consumer.py": ("ok", "hang"),
}
# The examples written as plain Python (the module's code is the main thread; no movers.lang): they import
# only what a Python developer's threading code imports.
PLAIN = {"bank_transfer.py", "bank_transfer_deadlock.py", "racy_counter.py", "condition_queue.py",
         "dining_philosophers.py", "dining_philosophers_ordered.py", "peterson.py", "symmetric_workers.py",
         "symmetric_local_work.py", "symmetric_local_work_bug.py",
         "counter_bench.py", "liveness_peterson.py", "liveness_spinlock.py", "liveness_polite.py",
         "liveness_philosophers.py", "liveness_philosophers_arbiter.py", "liveness_producer_consumer.py"}


def header(path: Path) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        m = re.match(r"# (Source|Expected|Smoke test): (.*)", line)
        if m:
            fields[m.group(1)] = m.group(2)
    return fields


def test_every_example_is_classified_and_documented():
    files = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert files == sorted(EXAMPLES_SMOKE)
    readme = (EXAMPLES / "README.md").read_text()
    for name, (expected, smoke) in EXAMPLES_SMOKE.items():
        path = EXAMPLES / name
        h = header(path)
        assert h.get("Source"), name
        assert h.get("Expected") == expected, name
        assert h.get("Smoke test", "").startswith("no" if smoke in ("skip", "hang") else "yes"), name
        assert f"`{name}`" in readme, name
        code = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
        imports = [ln for ln in code if ln.startswith(("import ", "from "))]
        if name in PLAIN:
            assert imports and all(ln.split()[1] in ("threading", "dataclasses", "queue") for ln in imports), name
        else:
            assert code[0] == "from movers.lang import *", name
            assert imports == [code[0]], name


def test_counter_bench_keeps_the_substitution_lines():
    lines = (EXAMPLES / "counter_bench.py").read_text().splitlines()
    assert lines.count("K = 3") == 1 and lines.count("L = 4") == 1


@pytest.mark.parametrize("name", [n for n, (_, s) in EXAMPLES_SMOKE.items() if s != "skip"])
def test_example_runs_under_cpython(name):
    expected, smoke = EXAMPLES_SMOKE[name]
    path = EXAMPLES / name
    if smoke == "hang":
        try:
            r = run_model(path, timeout=5)
        except subprocess.TimeoutExpired:
            return  # it deadlocked, as the checker says it can
        assert r.returncode == 0, r.stderr
        return
    r = run_model(path)
    if smoke == "pass":
        assert r.returncode == 0, r.stderr
        assert r.stderr == ""
    else:
        assert r.returncode in (0, 1), r.stderr
        if r.returncode == 1:
            assert "AssertionError" in r.stderr, r.stderr


def test_wait_until_model_fails_loudly():
    r = run_model(EXAMPLES / "sc_example.py")
    assert r.returncode in (0, 1), r.stderr  # 0 only if both increments ran before either wait_until
    if r.returncode == 1:
        assert "cannot wait" in r.stderr, r.stderr
