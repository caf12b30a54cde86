"""``concurrent.futures`` modelled as model source (issue 24, item 5): ``ThreadPoolExecutor``, ``Future`` and
``as_completed`` are written once, close to CPython's Lib/concurrent/futures, in
``lang/library/futures_model.py``, and compiled into the models that use them.

Each program checks under ``--reduction none`` and every reduction gives the same verdict; each ok program has
a bug twin every reduction finds; deterministic programs run under ``python3`` too and must agree. The loops
over ``as_completed`` and ``map`` wait for each item only when they reach it, as CPython's generators do.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from differential import run_differential
from test_footprints import all_uncovered
from test_py_queue import program, python3

import movers
from movers.lang.errors import ModelSyntaxError
from movers.reduce import REDUCTIONS

ALL = tuple(REDUCTIONS)


def agree(src: str, verdict: str, kind: str | None = None) -> dict[str, movers.Result]:
    """Every reduction agrees with ``none``, which reports ``verdict`` (and ``kind``)."""
    results = run_differential(src, ALL, max_states=200_000)
    for name, r in results.items():
        assert r.verdict == verdict, (name, r.verdict, [(v.kind, v.message) for v in r.violations], r.error)
        if kind is not None:
            assert r.violations[0].kind == kind, (name, r.violations[0].kind, r.violations[0].message)
    return results


# -- submit and result ---------------------------------------------------------------------------------------------

SUBMIT = program("""
    from concurrent.futures import ThreadPoolExecutor

    results = []


    def square(x):
        results.append(x)
        return x * x


    with ThreadPoolExecutor(max_workers=2) as pool:
        f = pool.submit(square, 2)
        g = pool.submit(square, 3)
        WAIT
        assert sorted(results) == [2, 3], results
    assert f.result() == 4 and g.result() == 9
    assert f.done() and not f.running() and not f.cancelled()
""")


def test_result_waits_for_the_task_under_every_reduction() -> None:
    agree(SUBMIT.replace("WAIT", "f.result()\n    g.result()"), "ok")


def test_reading_what_the_tasks_write_before_result_is_found() -> None:
    agree(SUBMIT.replace("WAIT", "pass"), "violation", "assertion")


def test_leaving_with_shuts_the_pool_down_and_waits_for_its_tasks() -> None:
    src = program("""
        from concurrent.futures import ThreadPoolExecutor

        done = []


        def record(n):
            done.append(n)


        with ThreadPoolExecutor(max_workers=2) as pool:
            for n in (1, 2):
                pool.submit(record, n)
        assert sorted(done) == [1, 2], done
    """)
    agree(src, "ok")
    agree(src.replace("with ThreadPoolExecutor(max_workers=2) as pool:", "pool = ThreadPoolExecutor(max_workers=2)\n"
                      "if True:").replace("assert sorted", "pool.shutdown(wait=False)\nassert sorted"),
          "violation", "assertion")


# -- exceptions ----------------------------------------------------------------------------------------------------

RAISING = program("""
    from concurrent.futures import ThreadPoolExecutor


    def parse(n):
        if n < 0:
            raise ValueError(f"bad record: {n}")
        return n * 2


    with ThreadPoolExecutor(max_workers=2) as pool:
        good = pool.submit(parse, 4)
        bad = pool.submit(parse, -1)
        assert good.result() == 8
        HANDLE
""")


def test_result_raises_the_tasks_exception_again(tmp_path: Path) -> None:
    src = RAISING.replace("HANDLE", "try:\n        bad.result()\n    except ValueError as e:\n"
                                    "        assert str(e) == 'bad record: -1'\n"
                                    "    assert isinstance(bad.exception(), ValueError)\n"
                                    "    assert good.exception() is None\n    print('caught')")
    agree(src, "ok")
    r = python3(src, tmp_path)
    assert r.returncode == 0 and r.stdout == "caught\n", r.stderr


def test_an_uncaught_exception_from_result_kills_the_main_thread() -> None:
    results = agree(RAISING.replace("HANDLE", "bad.result()"), "violation", "runtime-error")
    assert "ValueError: bad record: -1" in results["none"].violations[0].message


def test_an_exception_nobody_asks_for_stays_in_its_future() -> None:
    """CPython keeps a task's exception, a failed assert included, in its future: nothing reports it."""
    agree(RAISING.replace("HANDLE", "pass"), "ok")
    src = program("""
        from concurrent.futures import ThreadPoolExecutor


        def check(n):
            assert n > 0, "not positive"


        with ThreadPoolExecutor(max_workers=1) as pool:
            f = pool.submit(check, -1)
            CHECK
    """)
    agree(src.replace("CHECK", "pass"), "ok")
    results = agree(src.replace("CHECK", "f.result()"), "violation", "assertion")
    assert "not positive" in results["none"].violations[0].message


def test_submit_after_shutdown_is_cpythons_runtime_error(tmp_path: Path) -> None:
    src = program("""
        from concurrent.futures import ThreadPoolExecutor



        def task():
            return 1


        pool = ThreadPoolExecutor(max_workers=1)
        pool.shutdown()
        try:
            pool.submit(task)
        except RuntimeError as e:
            assert str(e) == "cannot schedule new futures after shutdown", str(e)
            print("refused")
    """)
    agree(src, "ok")
    r = python3(src, tmp_path)
    assert r.returncode == 0 and r.stdout == "refused\n", r.stderr


def test_max_workers_must_be_positive(tmp_path: Path) -> None:
    src = program("""
        from concurrent.futures import ThreadPoolExecutor

        try:
            ThreadPoolExecutor(max_workers=0)
        except ValueError as e:
            assert str(e) == "max_workers must be greater than 0"
            print("refused")
    """)
    assert movers.check(source=src).verdict == "ok"
    assert python3(src, tmp_path).stdout == "refused\n"


# -- as_completed and map: each item when the loop reaches it -------------------------------------------------------

COMPLETED = program("""
    from concurrent.futures import ThreadPoolExecutor, as_completed


    def load(n):
        return n * 10


    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {pool.submit(load, 1): "a", pool.submit(load, 2): "b"}
        order = []
        for f in as_completed(futures):
            BODY
            order.append(futures[f])
    CHECK
""")


def test_as_completed_yields_every_future_once() -> None:
    agree(COMPLETED.replace("BODY", "assert f.done()").replace("CHECK", "assert sorted(order) == ['a', 'b']"),
          "ok")


def test_as_completed_yields_in_the_order_the_tasks_finish() -> None:
    agree(COMPLETED.replace("BODY", "pass").replace("CHECK", "assert order == ['a', 'b'], order"),
          "violation", "assertion")


def test_as_completed_does_not_wait_for_every_task_before_the_first() -> None:
    body = "assert all(g.done() for g in futures), 'a task is still running'"
    agree(COMPLETED.replace("BODY", body).replace("CHECK", "pass"), "violation", "assertion")


MAP = program("""
    from concurrent.futures import ThreadPoolExecutor

    finished = []


    def work(n):
        finished.append(n)
        return n + 1


    with ThreadPoolExecutor(max_workers=2) as pool:
        USE
""")


def test_map_gives_the_results_in_call_order(tmp_path: Path) -> None:
    src = MAP.replace("USE", "assert list(pool.map(work, [1, 2, 3])) == [2, 3, 4]\n    print('in order')")
    agree(src, "ok")
    assert python3(src, tmp_path).stdout == "in order\n"


def test_map_over_two_iterables_zips_them(tmp_path: Path) -> None:
    src = program("""
        from concurrent.futures import ThreadPoolExecutor


        def add(a, b):
            return a + b


        with ThreadPoolExecutor(max_workers=2) as pool:
            total = sum(pool.map(add, [1, 2, 3], [10, 20]))
        assert total == 33, total
        print(total)
    """)
    agree(src, "ok")
    assert python3(src, tmp_path).stdout == "33\n"


def test_a_loop_over_map_runs_while_later_calls_still_run() -> None:
    use = "for r in pool.map(work, [1, 2]):\n        assert len(finished) == 2, 'a call is still running'"
    agree(MAP.replace("USE", use), "violation", "assertion")
    agree(MAP.replace("USE", "for r in pool.map(work, [1, 2]):\n        assert r - 1 in finished"), "ok")


@pytest.mark.parametrize("use", ["it = pool.map(work, [1])", "x = next(as_completed([pool.submit(work, 1)]))"])
def test_other_uses_of_the_iterators_are_refused(use: str) -> None:
    src = MAP.replace("from concurrent.futures import ThreadPoolExecutor",
                      "from concurrent.futures import ThreadPoolExecutor, as_completed").replace("USE", use)
    with pytest.raises(ModelSyntaxError, match=r"is only supported where a loop consumes it"):
        movers.load(source=src)


# -- cancel and callbacks -------------------------------------------------------------------------------------------

CANCEL = program("""
    import threading
    from concurrent.futures import CancelledError, ThreadPoolExecutor

    go = threading.Event()


    def first_task():
        go.wait()


    def second_task():
        return None


    with ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(first_task)
        second = pool.submit(second_task)
        cancelled = second.cancel()
        go.set()
        CHECK
""")


@pytest.mark.parametrize("outcome", ["cancelled", "not cancelled"])
def test_cancel_of_a_queued_task_succeeds_and_its_result_raises_cancelled_error(outcome: str) -> None:
    check = ("if cancelled:\n        try:\n            second.result()\n        except CancelledError:\n"
             "            assert second.cancelled() and second.done()\n    else:\n        assert second.result() "
             "is None")
    agree(CANCEL.replace("CHECK", check), "ok")
    # One worker is busy with the first task, so the second is still queued: cancel() succeeds.
    wrong = "assert not cancelled" if outcome == "cancelled" else "assert cancelled"
    expected = "violation" if outcome == "cancelled" else "ok"
    agree(CANCEL.replace("CHECK", wrong), expected, "assertion" if expected == "violation" else None)


def test_done_callbacks_run_once_the_future_is_done() -> None:
    src = program("""
        from concurrent.futures import ThreadPoolExecutor

        seen = []


        def cube(n):
            return n * n * n


        with ThreadPoolExecutor(max_workers=1) as pool:
            f = pool.submit(cube, 2)
            f.add_done_callback(lambda fut: seen.append(fut.result()))
        assert seen == [8], seen
    """)
    agree(src, "ok")


# -- the pool's threads ------------------------------------------------------------------------------------------

def test_a_pool_never_shut_down_is_no_deadlock_and_its_work_is_done() -> None:
    """CPython joins the workers at exit after they ran what is queued: they are daemons in movers, which
    still run what is queued after the main thread's end (the checker waits for both tasks)."""
    src = program("""
        import threading
        from concurrent.futures import ThreadPoolExecutor

        out = []
        both = threading.Event()


        def work(n):
            out.append(n)
            if len(out) == 2:
                both.set()


        def checker():
            both.wait()
            assert sorted(out) == EXPECTED, out


        threading.Thread(target=checker).start()
        pool = ThreadPoolExecutor(max_workers=2)
        pool.submit(work, 1)
        pool.submit(work, 2)
    """)
    agree(src.replace("EXPECTED", "[1, 2]"), "ok")
    agree(src.replace("EXPECTED", "[1]"), "violation", "assertion")


def test_every_access_of_the_pool_is_in_its_footprints() -> None:
    for src in (SUBMIT.replace("WAIT", "f.result()"), COMPLETED.replace("BODY", "pass").replace("CHECK", "pass")):
        assert all_uncovered(movers.load(source=src)) == []


def test_the_trace_shows_the_users_lines_for_the_pools_steps() -> None:
    r = movers.check(source=SUBMIT.replace("WAIT", "pass"))
    trace = r.violations[0].trace
    n_lines = len(SUBMIT.splitlines())
    mine = [st for st in trace if st.who == "MainThread"]
    assert mine and all(1 <= st.line <= n_lines for st in mine), [(st.line, st.source) for st in mine]
    # A worker's own steps (taking an item off the queue) are in no line of the model's file: line 0.
    workers = [st for st in trace if st.who != "MainThread"]
    assert all(0 <= st.line <= n_lines for st in workers), [(st.line, st.source) for st in workers]
    assert any(st.line == 0 for st in workers) and any(st.line > 0 for st in workers)
    assert any(st.source.startswith("(in concurrent.futures.ThreadPoolExecutor.submit)") for st in mine)


def test_a_model_may_define_its_own_future_and_map() -> None:
    src = program("""
        from concurrent.futures import ThreadPoolExecutor


        class Future:
            def __init__(self):
                self.value = 1

            def map(self, f):
                return f(self.value)


        def make():
            return Future()


        with ThreadPoolExecutor(max_workers=1) as pool:
            f = pool.submit(make)
            assert f.result().map(lambda v: v + 1) == 2
    """)
    assert movers.check(source=src).verdict == "ok"


def test_submit_passes_keyword_arguments(tmp_path: Path) -> None:
    src = program("""
        from concurrent.futures import ThreadPoolExecutor


        def greet(name, greeting="hello"):
            return f"{greeting} {name}"


        with ThreadPoolExecutor(max_workers=1) as pool:
            f = pool.submit(greet, "ann", greeting="hi")
        r = f.result()
        assert r == "hi ann", r
        print(r)
    """)
    agree(src, "ok")
    assert python3(src, tmp_path).stdout == "hi ann\n"
