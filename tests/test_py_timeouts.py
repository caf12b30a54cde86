"""Timeouts and sleep (issue 24, item 6): ``acquire(blocking=False)``, ``acquire(timeout=x)``, ``e.wait(timeout)``,
``c.wait(timeout)``, ``c.wait_for(pred, timeout)``, ``t.join(timeout)``, ``t.is_alive()`` and ``time.sleep(x)``.

A timeout is a nondeterministic outcome (succeed when it can, or time out): each model checks under
``--reduction none`` and every reduction agrees (``differential.run_differential``); each construct has a bug
twin, found only on the timeout path, that every reduction finds. Deterministic single-thread programs run
under CPython too (through the ``movers.lang`` shim) and must agree.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from differential import run_differential
from test_footprints import all_uncovered, compile_src

import movers
from movers.reduce import REDUCTIONS

ALL = tuple(REDUCTIONS)
SRC = Path(__file__).resolve().parent.parent / "src"


def model(src: str) -> str:
    return "from movers.lang import *\n" + textwrap.dedent(src).lstrip("\n")


def agree(src: str, verdict: str, kind: str | None = None, **kw: object) -> dict[str, movers.Result]:
    """Every reduction agrees with ``none``, which reports ``verdict`` (and ``kind``)."""
    results = run_differential(src, ALL, **kw)
    for name, r in results.items():
        assert r.verdict == verdict, (name, r.verdict, r.violations, r.error)
        if kind is not None:
            assert {v.kind for v in r.violations} == {kind}, (name, r.violations)
    return results


def message(r: movers.Result) -> str:
    return " / ".join(v.message for v in r.violations)


def cpython(src: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "model.py"
    path.write_text(src)
    env = dict(os.environ, PYTHONPATH=str(SRC))
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60, env=env)


# -- a lost wakeup, hidden by a timeout loop ----------------------------------------------------------------------

LOST_WAKEUP = model("""
    import time

    c = Condition()
    ready = False

    def consumer():
        while not ready:        # checked without the lock: the notify may come first
            with c:
                c.wait(0.1)

    def producer():
        global ready
        ready = True
        with c:
            c.notify()

    def main():
        a = Thread(target=consumer)
        b = Thread(target=producer)
        a.start()
        b.start()
        a.join()
        b.join()
        assert ready

    Thread(target=main).start()
""")


def test_a_timeout_loop_survives_a_lost_wakeup() -> None:
    agree(LOST_WAKEUP, "ok")


def test_without_the_timeout_the_lost_wakeup_deadlocks() -> None:
    agree(LOST_WAKEUP.replace("c.wait(0.1)", "c.wait()"), "violation", "deadlock")


def test_the_timeout_path_is_explored() -> None:
    # The wait may time out before the producer runs at all: its value says so.
    src = LOST_WAKEUP.replace("c.wait(0.1)", "ok = c.wait(0.1)\n            assert ok, 'timed out'")
    results = agree(src, "violation", "assertion")
    assert "timed out" in message(results["none"])


NOTIFIED_YET_FALSE = model("""
    c = Condition()
    ready = False

    def consumer():
        with c:
            if not ready:
                ok = c.wait(timeout=0.5)
                assert ok or not ready, "notified, yet timed out"

    def producer():
        global ready
        with c:
            ready = True
            c.notify()

    Thread(target=consumer).start()
    Thread(target=producer).start()
""")


def test_a_notified_timed_wait_may_still_time_out() -> None:
    # CPython's waiter may time out just before the notify picks it: wait() returns False though it was
    # notified (and the notify wakes nobody else). A choice of the re-acquire step, in its static facts.
    results = agree(NOTIFIED_YET_FALSE, "violation", "assertion")
    assert "notified, yet timed out" in message(results["none"])
    program = compile_src(NOTIFIED_YET_FALSE)
    reacquires = [n for c in program.codes() for n in c.nodes if n.kind == "reacquire"]
    assert reacquires and all(n.chooses for n in reacquires)


def test_wait_without_timeout_is_always_notified() -> None:
    agree(NOTIFIED_YET_FALSE.replace("c.wait(timeout=0.5)", "c.wait()"), "ok")
    agree(NOTIFIED_YET_FALSE.replace("c.wait(timeout=0.5)", "c.wait(None)"), "ok")


# -- try-lock -------------------------------------------------------------------------------------------------

TRY_LOCK = model("""
    m = Lock()
    taken = 0
    skipped = 0

    def worker():
        global taken, skipped
        if m.acquire(blocking=False):
            taken += 1
            m.release()
        else:
            skipped += 1

    def main():
        a = Thread(target=worker)
        b = Thread(target=worker)
        a.start()
        b.start()
        a.join()
        b.join()
        with m:
            assert taken + skipped == 2
            assert taken >= 1          # a free lock is always taken: both cannot give up
            CHECK

    Thread(target=main).start()
""")


@pytest.mark.parametrize("call", ["m.acquire(blocking=False)", "m.acquire(False)", "m.acquire(timeout=0.5)",
                                  "m.acquire(True, 0.5)", "m.acquire(timeout=0)"])
def test_both_branches_of_a_try_lock_are_explored(call: str) -> None:
    src = TRY_LOCK.replace("m.acquire(blocking=False)", call)
    agree(src.replace("CHECK", "pass"), "ok")
    results = agree(src.replace("CHECK", "assert skipped == 0, 'gave up'"), "violation", "assertion")
    assert "gave up" in message(results["none"])
    results = agree(src.replace("CHECK", "assert taken == 1, 'took it twice'"), "violation", "assertion")
    assert "took it twice" in message(results["none"])


def test_a_blocking_acquire_used_as_a_value_is_true() -> None:
    for call in ("m.acquire()", "m.acquire(True)", "m.acquire(timeout=-1)", "m.acquire(blocking=True, timeout=-1)"):
        src = TRY_LOCK.replace("m.acquire(blocking=False)", call)
        agree(src.replace("CHECK", "assert taken == 2"), "ok")


TIMEOUT_BUG = model("""
    m = Lock()
    inside = 0

    @invariant
    def mutual_exclusion():
        return inside <= 1

    def worker():
        global inside
        got = m.acquire(timeout=0.5)
        inside += 1                 # the bug: in the critical section even when the acquire timed out
        inside -= 1
        if got:
            m.release()

    Thread(target=worker).start()
    Thread(target=worker).start()
""")


def test_the_timeout_branch_breaking_an_invariant_is_found() -> None:
    results = agree(TIMEOUT_BUG, "violation", "invariant")
    assert "mutual_exclusion" in message(results["none"])
    fixed = TIMEOUT_BUG.replace("    inside += 1                 # the bug: in the critical section even when the "
                                "acquire timed out\n    inside -= 1\n    if got:\n",
                                "    if got:\n        inside += 1\n        inside -= 1\n")
    agree(fixed, "ok")


def test_a_thread_that_can_time_out_is_no_deadlock() -> None:
    src = model("""
        m = Lock()

        def holder():
            m.acquire()            # never released

        def poller():
            while not m.acquire(timeout=1):
                pass               # polls for ever once the holder has it: no deadlock, it can time out
            m.release()

        Thread(target=holder).start()
        Thread(target=poller).start()
    """)
    agree(src, "ok")
    agree(src.replace("m.acquire(timeout=1)", "m.acquire()"), "violation", "deadlock")


def test_rlock_and_semaphore_try_acquire(tmp_path: Path) -> None:
    src = model("""
        r = RLock()
        s = Semaphore(1)
        b = BoundedSemaphore(1)
        c = Condition(Lock())

        def main():
            assert r.acquire(blocking=False)
            assert r.acquire(timeout=0.5)         # re-entrant: its owner takes it again
            r.release()
            r.release()
            assert s.acquire(blocking=False)
            assert not s.acquire(blocking=False)  # the value is 0
            assert not s.acquire(timeout=0.01)
            assert not s.acquire(timeout=-1)      # a Semaphore's -1 has expired; a Lock's means no timeout
            s.release()
            assert s.acquire(timeout=0.01)
            assert b.acquire(False)
            b.release()
            assert c.acquire(False)               # a Condition's acquire is its lock's
            assert not c.acquire(False)
            c.release()
            assert c.acquire(timeout=-1)
            c.release()
    """)
    runnable = src + "\nmain()\n"
    assert cpython(runnable, tmp_path).returncode == 0
    agree(src + "\nThread(target=main).start()\n", "ok")
    bug = src.replace("assert not s.acquire(blocking=False)  # the value is 0", "assert s.acquire(blocking=False)")
    assert cpython(bug + "\nmain()\n", tmp_path).returncode != 0
    agree(bug + "\nThread(target=main).start()\n", "violation", "assertion")


@pytest.mark.parametrize("call, exc, text", [
    ("m.acquire(False, 1)", "ValueError", "can't specify a timeout for a non-blocking call"),
    ("m.acquire(timeout=-2)", "ValueError", "timeout value must be positive"),
    ("m.acquire(timeout=None)", "TypeError", "'NoneType' object cannot be interpreted as an integer"),
    ("s.acquire(False, 1)", "ValueError", "can't specify timeout for non-blocking acquire"),
])
def test_bad_acquire_arguments_raise_what_cpython_raises(call: str, exc: str, text: str, tmp_path: Path) -> None:
    src = model(f"""
        m = Lock()
        s = Semaphore(1)

        def main():
            {call}

        Thread(target=main).start()
    """)
    r = movers.check(src, reduction="none")
    assert r.verdict == "violation" and r.violations[0].kind == "runtime-error", r.violations
    assert text in r.violations[0].message
    run = cpython(src.replace("Thread(target=main).start()", "main()"), tmp_path)
    assert exc in run.stderr and text in run.stderr


# -- Event.wait(timeout), wait_for(pred, timeout) -----------------------------------------------------------------

EVENT_POLL = model("""
    e = Event()
    x = 0

    def setter():
        global x
        x = 1
        e.set()

    def poller():
        while not e.wait(0.1):
            pass
        assert x == 1

    Thread(target=setter).start()
    Thread(target=poller).start()
""")


def test_event_wait_with_a_timeout() -> None:
    agree(EVENT_POLL, "ok")
    results = agree(EVENT_POLL.replace("while not e.wait(0.1):\n        pass",
                                       "assert e.wait(timeout=0.5), 'the event timed out'"), "violation", "assertion")
    assert "the event timed out" in message(results["none"])


WAIT_FOR = model("""
    c = Condition()
    ready = False

    def consumer():
        with c:
            ok = c.wait_for(lambda: ready, 0.5)
            assert ok == ready
            CHECK

    def producer():
        global ready
        with c:
            ready = True
            c.notify_all()

    Thread(target=consumer).start()
    Thread(target=producer).start()
""")


def test_wait_for_with_a_timeout() -> None:
    agree(WAIT_FOR.replace("CHECK", "pass"), "ok")
    results = agree(WAIT_FOR.replace("CHECK", "assert ok, 'gave up waiting'"), "violation", "assertion")
    assert "gave up waiting" in message(results["none"])
    agree(WAIT_FOR.replace("c.wait_for(lambda: ready, 0.5)", "c.wait_for(lambda: ready)")
          .replace("CHECK", "assert ok"), "ok")


# -- join(timeout) and is_alive() -----------------------------------------------------------------------------

JOIN = model("""
    done = 0

    def worker():
        global done
        done = 1

    def main():
        t = Thread(target=worker)
        assert not t.is_alive()     # not started yet
        t.start()
        t.join(0.5)
        if not t.is_alive():
            assert done == 1
        CHECK
        t.join()
        assert not t.is_alive()

    Thread(target=main).start()
""")


def test_join_with_a_timeout_then_is_alive() -> None:
    agree(JOIN.replace("CHECK", "pass"), "ok")
    results = agree(JOIN.replace("CHECK", "assert not t.is_alive(), 'join timed out'"), "violation", "assertion")
    assert "join timed out" in message(results["none"])
    # The end of a thread comes after its last write: alive with done == 1 is a state CPython can be in.
    agree(JOIN.replace("CHECK", "assert t.is_alive() or done == 1\n    assert not t.is_alive() or done == 0"),
          "violation", "assertion")


@pytest.mark.parametrize("check", ["assert alive, 'the worker ended first'",
                                   "assert not alive, 'the worker is still running'"])
def test_is_alive_against_a_worker_that_touches_nothing_shared(check: str) -> None:
    # The worker's only step is its end: every reduction must still see both orders of that end and the
    # question (its end writes its Thread object, which the worker reaches as current_thread() would).
    src = model(f"""
        def worker():
            k = 0
            k = k + 1

        def main():
            t = Thread(target=worker)
            t.start()
            t.join(0.5)
            alive = t.is_alive()
            {check}

        Thread(target=main).start()
    """)
    agree(src, "violation", "assertion")


def test_is_alive_at_statement_granularity() -> None:
    agree(JOIN.replace("CHECK", "pass"), "ok", granularity="statement")
    agree(JOIN.replace("CHECK", "assert not t.is_alive()"), "violation", "assertion", granularity="statement")


# -- sleep --------------------------------------------------------------------------------------------------------

CHECK_THEN_ACT = model("""
    import time

    balance = 1

    def withdraw():
        global balance
        LOCK
        if balance >= 1:
            time.sleep(0.1)        # makes the race likely under CPython; in movers, only a step boundary
            balance -= 1
        UNLOCK

    def main():
        a = Thread(target=withdraw)
        b = Thread(target=withdraw)
        a.start()
        b.start()
        a.join()
        b.join()
        assert balance >= 0, "overdrawn"

    Thread(target=main).start()
""")


def unlocked(src: str) -> str:
    return src.replace("    LOCK\n", "").replace("    UNLOCK\n", "")


def locked(src: str) -> str:
    return src.replace("balance = 1\n", "balance = 1\nm = Lock()\n").replace("LOCK\n", "m.acquire()\n", 1) \
        .replace("UNLOCK\n", "m.release()\n")


def without_sleep(src: str) -> str:
    return src.replace("        time.sleep(0.1)        # makes the race likely under CPython; in movers, only a "
                       "step boundary\n", "")


@pytest.mark.parametrize("variant", [lambda s: s, without_sleep], ids=["sleep", "no-sleep"])
def test_sleep_does_not_change_verdicts(variant) -> None:  # noqa: ANN001
    results = agree(variant(unlocked(CHECK_THEN_ACT)), "violation", "assertion")
    assert "overdrawn" in message(results["none"])
    agree(variant(locked(CHECK_THEN_ACT)), "ok")


def test_sleep_is_a_step_boundary_that_changes_nothing() -> None:
    src = unlocked(CHECK_THEN_ACT)
    with_sleep = movers.check(src, reduction="none")
    without = movers.check(without_sleep(src), reduction="none")
    assert with_sleep.stats.states > without.stats.states  # another thread may run at the sleep
    trace = [step.source for step in with_sleep.violations[0].trace]
    assert any("time.sleep(0.1)" in s for s in trace), trace
    program = compile_src(src)
    sleeps = [n for c in program.codes() for n in c.nodes if "sleep" in n.source]
    assert sleeps and all(n.costly and n.kind == "yield" and not (n.reads or n.writes or n.fields_written)
                          for n in sleeps)


@pytest.mark.parametrize("header, call", [("import time", "time.sleep(delay)"),
                                          ("from time import sleep", "sleep(0.5)"),
                                          ("", "sleep(1)"), ("import time", "time.sleep(0)")])
def test_the_spellings_of_sleep(header: str, call: str) -> None:
    src = model(f"""
        {header}
        delay = 1
        x = 0

        def w():
            global x
            x = 1
            {call}
            x = 2

        def r():
            assert x != 1, "saw the sleeper's first write"

        Thread(target=w).start()
        Thread(target=r).start()
    """)
    agree(src, "violation", "assertion")


def test_sleep_evaluates_its_argument() -> None:
    src = model("""
        delay = 0

        def w():
            global delay
            delay = -1

        def s():
            sleep(delay)

        Thread(target=w).start()
        Thread(target=s).start()
    """)
    r = movers.check(src, reduction="none")
    assert r.verdict == "violation" and "sleep length must be non-negative" in message(r)


def test_floats_are_timeouts_only() -> None:
    r = movers.check(model("""
        def w():
            x = 0.5

        Thread(target=w).start()
    """))
    assert r.verdict == "error" and "unsupported value 0.5" in (r.error or "")


# -- static facts -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("src", [LOST_WAKEUP, NOTIFIED_YET_FALSE, TRY_LOCK.replace("CHECK", "pass"), TIMEOUT_BUG,
                                 EVENT_POLL, WAIT_FOR.replace("CHECK", "pass"), JOIN.replace("CHECK", "pass"),
                                 unlocked(CHECK_THEN_ACT)],
                         ids=["lost-wakeup", "notified", "try-lock", "timeout-bug", "event", "wait-for", "join",
                              "sleep"])
def test_footprints_cover_the_timed_operations(src: str) -> None:
    assert all_uncovered(compile_src(src)) == []


def test_a_try_acquire_is_a_lock_operation_that_never_blocks() -> None:
    program = compile_src(TRY_LOCK.replace("CHECK", "pass"))
    tries = [n for c in program.codes() for n in c.nodes if n.kind == "try_acquire"]
    assert len(tries) == 1 and tries[0].guard is None and tries[0].lock_name == "m" and tries[0].is_sync


def test_no_race_is_reported_on_what_try_locks_and_is_alive_order() -> None:
    # A try-acquire that succeeds protects like an acquire; is_alive() orders like join (CPython synchronises
    # both): --races reports no race on them, and still reports one on unprotected data.
    for src in (TRY_LOCK.replace("CHECK", "pass"), JOIN.replace("CHECK", "pass")):
        r = movers.check(src, races=True)
        assert r.verdict == "ok", message(r)
    racy = model("""
        m = Lock()
        hits = 0

        def worker():
            global hits
            if m.acquire(blocking=False):
                m.release()
            hits += 1              # outside the lock

        Thread(target=worker).start()
        Thread(target=worker).start()
    """)
    r = movers.check(racy, races=True)
    assert r.verdict == "violation" and r.violations[0].kind == "race" and "hits" in message(r)


def test_module_level_code_may_use_them_too() -> None:
    src = model("""
        import time

        m = Lock()
        x = 0
        if m.acquire(blocking=False):   # free: taken
            x = 1
            m.release()
        time.sleep(0.1)

        def w():
            assert x == 1

        Thread(target=w).start()
    """)
    agree(src, "ok")
    agree(src.replace("x = 0\n", "x = 0\nm.acquire()\n"), "violation", "assertion")  # held: not taken


@pytest.mark.parametrize("granularity", ["access", "statement"])
def test_a_try_lock_is_one_statement_as_the_naive_explorer_counts(granularity: str) -> None:
    # The hoisting of the acquire out of the `if` adds no step: the state counts are those of an explorer
    # written independently of movers (tests/naive_explorer.py), at both granularities.
    from naive_explorer import naive_explore

    src = model("""
        m = Lock()
        x = 0
        y = 0

        def worker():
            global x, y
            if m.acquire(blocking=False):
                x += 1
                m.release()
            else:
                y += 1

        Thread(target=worker).start()
        Thread(target=worker).start()
    """)
    r = movers.check(src, reduction="none", granularity=granularity)
    naive = naive_explore(src, granularity=granularity)
    assert r.verdict == "ok" and not naive.kinds
    assert r.stats.states == naive.states


@pytest.mark.parametrize("line, text", [
    ("y = g + m.acquire(False)", "5:13: acquire() after a read of g in the same expression"),
    ("y = 1 if g else m.acquire(False)", "5:21: acquire() inside a conditional expression"),
    ("y = m.acquire(timeout=d)", "5:27: acquire(): timeout must be a constant"),
    ("y = [m.acquire() for k in (1, 2)]", "5:10: acquire() inside a comprehension"),
])
def test_where_a_value_call_would_change_python_s_order_it_is_refused(line: str, text: str) -> None:
    # Moved before its statement, the call must not overtake what Python evaluates first, nor run where
    # Python would not run it.
    src = f"from movers.lang import *\nm = Lock()\ng = 0\ndef w(d):\n    {line}\nThread(target=w, args=(1,)).start()\n"
    r = movers.check(src)
    assert r.verdict == "error" and text in (r.error or ""), r.error
    ok = src.replace(line, line.replace("g + m.acquire(False)", "m.acquire(False) + g"))
    if ok != src:
        assert movers.check(ok).verdict == "ok"
