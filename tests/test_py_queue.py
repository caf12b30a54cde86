"""The standard library modelled as model source (issue 24, item 5): ``queue.Queue``, ``LifoQueue`` and
``SimpleQueue`` are written once, close to CPython's Lib/queue.py, in ``lang/library/queue_model.py`` and
compiled into the models that use them like the models' own classes.

Each program checks under ``--reduction none`` and every reduction gives the same verdict
(``differential.run_differential``: the library's accesses are ordinary accesses every reduction sees); each
has a bug twin every reduction finds; deterministic single-thread programs run under ``python3`` too and must
agree. Traces show a library step at the line of the user's call, labelled with the library's method.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from differential import run_differential
from test_footprints import all_uncovered

import movers
from movers.instrument.races import race_note
from movers.lang.errors import ModelSyntaxError
from movers.lang.library import HERE
from movers.reduce import REDUCTIONS

ALL = tuple(REDUCTIONS)
SRC = Path(__file__).resolve().parent.parent / "src"


def program(src: str) -> str:
    return textwrap.dedent(src).lstrip("\n")


def agree(src: str, verdict: str, kind: str | None = None) -> dict[str, movers.Result]:
    """Every reduction agrees with ``none``, which reports ``verdict`` (and ``kind``)."""
    results = run_differential(src, ALL, max_states=50_000)
    for name, r in results.items():
        assert r.verdict == verdict, (name, r.verdict, [(v.kind, v.message) for v in r.violations], r.error)
        if kind is not None:
            assert r.violations[0].kind == kind, (name, r.violations[0].kind, r.violations[0].message)
    return results


def python3(src: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "model.py"
    path.write_text(src)
    env = dict(os.environ, PYTHONPATH=str(SRC))
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60, env=env)


def outcome(r: movers.Result) -> str:
    return " / ".join(f"{v.kind}: {v.message}" for v in r.violations) or r.verdict


# -- producer and consumer: task_done and join ---------------------------------------------------------------------

TASKS = program("""
    import queue
    import threading

    q = queue.Queue()
    results = []


    def worker():
        while True:
            item = q.get()
            results.append(item * 10)
            DONE


    threading.Thread(target=worker, daemon=True).start()
    q.put(1)
    q.put(2)
    q.join()
    assert results == [10, 20], results
""")


def test_task_done_and_join_are_ok_under_every_reduction() -> None:
    agree(TASKS.replace("DONE", "q.task_done()"), "ok")


def test_a_missing_task_done_leaves_main_blocked_in_join() -> None:
    results = agree(TASKS.replace("DONE", "pass"), "violation", "deadlock")
    message = results["none"].violations[0].message
    assert "MainThread, line 18 (in queue.Queue.join): waits for a notify on q.all_tasks_done" in message


def test_task_done_too_early_lets_join_return_before_the_work() -> None:
    early = TASKS.replace("        results.append(item * 10)\n        DONE",
                          "        q.task_done()\n        results.append(item * 10)")
    agree(early, "violation", "assertion")


def test_task_done_called_too_many_times_is_cpythons_value_error(tmp_path: Path) -> None:
    src = program("""
        import queue

        q = queue.Queue()
        q.put(1)
        q.get()
        q.task_done()
        q.task_done()
    """)
    r = movers.check(source=src)
    assert r.verdict == "violation" and r.violations[0].kind == "runtime-error"
    assert r.violations[0].message.endswith("(line 7): uncaught exception: ValueError: task_done() called too many "
                                            "times"), outcome(r)
    assert "ValueError: task_done() called too many times" in python3(src, tmp_path).stderr


# -- get_nowait and Empty ------------------------------------------------------------------------------------------

DRAIN = program("""
    import queue
    import threading

    jobs = queue.Queue()
    jobs.put(1)
    done = []


    def worker():
        CHECK
        try:
            done.append(jobs.get_nowait())
        except queue.Empty:
            done.append(0)


    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(done) == [0, 1], done
""")


def test_get_nowait_on_an_empty_queue_raises_empty_which_the_model_catches() -> None:
    agree(DRAIN.replace("CHECK", "pass"), "ok")


def test_without_the_handler_empty_kills_the_worker_at_its_call() -> None:
    racy = DRAIN.replace("CHECK", "pass").replace(
        "    try:\n        done.append(jobs.get_nowait())\n    except queue.Empty:\n        done.append(0)",
        "    done.append(jobs.get_nowait())")
    results = agree(racy, "violation", "runtime-error")
    message = results["none"].violations[0].message
    assert message == "thread worker died: Empty (line 11, in queue.Queue.get)", message


# -- timeouts: both outcomes -----------------------------------------------------------------------------------------

TIMED = program("""
    import queue
    import threading

    q = queue.Queue()
    got = []


    def producer():
        q.put(1)


    def consumer():
        try:
            got.append(q.get(timeout=0.5))
        except queue.Empty:
            got.append(None)


    threads = [threading.Thread(target=producer), threading.Thread(target=consumer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert CHECK, got
""")


@pytest.mark.parametrize("check", ["got == [1]", "got == [None]"])
def test_get_with_a_timeout_may_get_the_item_or_time_out(check: str) -> None:
    # Each assertion is broken by the other outcome: both are explored, under every reduction.
    agree(TIMED.replace("CHECK", check), "violation", "assertion")


def test_get_with_a_timeout_has_no_third_outcome() -> None:
    agree(TIMED.replace("CHECK", "got == [1] or got == [None]"), "ok")


def test_a_timeout_of_zero_never_waits(tmp_path: Path) -> None:
    src = program("""
        import queue

        q = queue.Queue(maxsize=1)
        try:
            q.get(timeout=0)
            got = "item"
        except queue.Empty:
            got = "empty"
        q.put(1, timeout=0.0)
        try:
            q.put(2, True, 0.0)
            put = "put"
        except queue.Full:
            put = "full"
        assert got == "empty" and put == "full"
        try:
            q.get(timeout=-1.0)
            negative = "accepted"
        except ValueError:
            negative = "ValueError"
        assert negative == "ValueError"
    """)
    assert movers.check(source=src).verdict == "ok", outcome(movers.check(source=src))
    assert python3(src, tmp_path).returncode == 0


# -- LifoQueue, bounded queues, SimpleQueue ----------------------------------------------------------------------

LIFO = program("""
    import queue

    stack = queue.LifoQueue()
    for item in (1, 2, 3):
        stack.put(item)
    n = stack.qsize()
    out = [stack.get(), stack.get(), stack.get_nowait()]
    assert n == 3
    assert out == EXPECTED, out
    assert stack.empty()
""")


@pytest.mark.parametrize(("expected", "verdict"), [("[3, 2, 1]", "ok"), ("[1, 2, 3]", "violation")])
def test_lifo_order_agrees_with_python3(tmp_path: Path, expected: str, verdict: str) -> None:
    src = LIFO.replace("EXPECTED", expected)
    agree(src, verdict, "assertion" if verdict == "violation" else None)
    assert (python3(src, tmp_path).returncode == 0) == (verdict == "ok")


def test_fifo_order_agrees_with_python3(tmp_path: Path) -> None:
    src = LIFO.replace("LifoQueue", "Queue").replace("EXPECTED", "[1, 2, 3]")
    agree(src, "ok")
    assert python3(src, tmp_path).returncode == 0


BOUNDED = program("""
    import queue
    import threading

    q = queue.Queue(maxsize=1)
    seen = []


    def consumer():
        for _ in range(2):
            seen.append(q.get())


    CONSUMER
    q.put("a")
    full = q.full()
    q.put("b")
    CONSUMER_JOIN
    assert seen == ["a", "b"], seen
""")


def test_put_on_a_full_bounded_queue_blocks_until_a_get() -> None:
    src = BOUNDED.replace("CONSUMER_JOIN", "t.join()").replace(
        "CONSUMER", "t = threading.Thread(target=consumer)\nt.start()")
    agree(src, "ok")


def test_a_put_no_get_will_make_room_for_blocks_forever() -> None:
    src = program("""
        import queue
        import threading

        q = queue.Queue(maxsize=1)
        t = threading.Thread(target=lambda: q.get())
        t.start()
        q.put("a")
        q.put("b")
        q.put("c")
        t.join()
    """)
    results = agree(src, "violation", "deadlock")
    assert results["none"].violations[0].message == ("a thread is blocked forever\n  MainThread, line 9 (in "
                                                     "queue.Queue.put): waits for a notify on q.not_full")


def test_a_put_on_a_full_queue_before_any_thread_starts_blocks_the_initialisation() -> None:
    results = agree(BOUNDED.replace("CONSUMER_JOIN", "").replace("CONSUMER", ""), "violation", "runtime-error")
    message = results["none"].violations[0].message
    assert message.startswith("during module initialisation (line 16): ") and "would block for ever" in message


def test_put_nowait_on_a_full_queue_raises_full(tmp_path: Path) -> None:
    src = program("""
        import queue

        q = queue.Queue(1)
        q.put_nowait("a")
        try:
            q.put_nowait("b")
            outcome = "put"
        except queue.Full:
            outcome = "full"
        assert outcome == "full" and q.maxsize == 1
        assert q.get_nowait() == "a"
    """)
    agree(src, "ok")
    assert python3(src, tmp_path).returncode == 0


def test_simple_queue_hands_items_over() -> None:
    src = program("""
        import queue
        import threading

        q = queue.SimpleQueue()
        got = []


        def consumer():
            got.append(q.get())
            got.append(q.get())


        t = threading.Thread(target=consumer)
        t.start()
        q.put(1)
        q.put(2)
        t.join()
        n = q.qsize()
        assert got == CHECK and n == 0, got
    """)
    agree(src.replace("CHECK", "[1, 2]"), "ok")
    agree(src.replace("CHECK", "[2, 1]"), "violation", "assertion")


# -- the library is ordinary model code ----------------------------------------------------------------------------


SIMPLE_GET = program("""
    import queue
    import threading

    q = QUEUE


    def consumer():
        x = q.get()
        y = q.get()


    q.put(1)
    q.put(2)
    threading.Thread(target=consumer).start()
""")

# ``SimpleQueue.get``'s body in a class of the model: the library is compiled as this is.
OWN_SIMPLE_QUEUE = program("""
    class SQ:
        def __init__(self):
            self._queue = []
            self._count = threading.Semaphore(0)

        def put(self, item, block=True, timeout=None):
            self._queue.append(item)
            self._count.release()

        def get(self, block=True, timeout=None):
            if not block:
                got = self._count.acquire(blocking=False)
            elif timeout is None:
                got = self._count.acquire()
            elif timeout < 0:
                raise ValueError("'timeout' must be a non-negative number")
            elif timeout == 0:
                got = self._count.acquire(blocking=False)
            else:
                got = self._count.acquire(timeout=1)
            if not got:
                raise queue.Empty
            return self._queue.pop(0)
""")


def test_a_simple_queue_get_is_two_steps_as_the_same_code_of_the_model() -> None:
    """docs/language.md 8.1: ``if not block:`` and ``if not got:`` test values that are never containers, so
    they are local work, in the library as in the model's own code; a ``get`` is its acquire and its pop (one
    thread, two gets: 4 steps after its first, 6 states). They were steps of their own: 10 states."""
    library = SIMPLE_GET.replace("QUEUE", "queue.SimpleQueue()")
    own = SIMPLE_GET.replace("q = QUEUE", OWN_SIMPLE_QUEUE + "\n\nq = SQ()")
    assert movers.check(library).stats.states == movers.check(own).stats.states == 6
    assert movers.check(library, granularity="statement").stats.states == 13


def test_every_access_of_the_library_is_in_its_footprints() -> None:
    for src in (TASKS.replace("DONE", "q.task_done()"), TIMED.replace("CHECK", "True"),
                BOUNDED.replace("CONSUMER_JOIN", "t.join()").replace("CONSUMER", "t = threading.Thread("
                                                                                 "target=consumer)\nt.start()")):
        assert all_uncovered(movers.load(source=src)) == []


def test_library_nodes_are_marked_and_numbered_after_the_models_lines() -> None:
    src = TASKS.replace("DONE", "q.task_done()")
    p = movers.load(source=src)
    n_lines = len(src.splitlines()) + 1
    cls = p.classes["queue.Queue"]
    nodes = [n for code in cls.methods.values() for n in code.nodes]
    assert nodes and all(n.library.startswith("queue.Queue.") for n in nodes)
    assert all(n.line > n_lines for n in nodes if n.line)  # (glue has no line)
    assert not any(n.library for code in p.functions.values() for n in code.nodes)
    put = cls.methods["put"]
    assert put.name == "queue.Queue.put"
    where = p.library_line(put.nodes[0])
    assert where is not None and where[0] == str(HERE / "queue_model.py")
    source_line = (HERE / "queue_model.py").read_text().splitlines()[where[1] - 1]
    assert source_line.strip() == "with self.not_full:" == put.nodes[0].source


def test_the_trace_shows_library_steps_at_the_users_call() -> None:
    r = movers.check(source=TASKS.replace("DONE", "pass"))
    trace = r.violations[0].trace
    n_lines = len(TASKS.splitlines())
    assert all(1 <= st.line <= n_lines for st in trace)
    inside = [st for st in trace if st.source.startswith("(in queue.")]
    assert inside
    puts = [st for st in trace if st.source.startswith("(in queue.Queue.put) ")]
    assert {st.line for st in puts} == {16, 17}, [(st.line, st.source) for st in puts]
    first = trace.index(puts[0])
    assert trace[first - 1].source == "q.put(1)" and trace[first - 1].line == 16
    assert any(st.source == "(in queue.Queue._put) self.queue.append(item)" for st in trace)


def test_the_race_note_leaves_the_librarys_own_writes_out() -> None:
    p = movers.load(source=TASKS.replace("DONE", "q.task_done()").replace("results.append(item * 10)", "pass")
                    .replace("assert results == [10, 20], results", ""))
    assert race_note(p) is None


# -- names ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("imports", "make"), [("import queue", "queue.Queue()"), ("import queue as qu", "qu.Queue()"),
                                               ("from queue import Queue", "Queue()"),
                                               ("from queue import Queue as Q", "Q()")])
def test_the_spellings_of_the_import(imports: str, make: str) -> None:
    src = f"{imports}\n\nq = {make}\nq.put(1)\nx = q.get()\nassert x == 1\n"
    r = movers.check(source=src)
    assert r.verdict == "ok", outcome(r)


def test_a_class_of_the_model_named_queue_and_a_subclass_of_queue_queue(tmp_path: Path) -> None:
    src = program("""
        import queue


        class Queue:
            def __init__(self):
                self.items = queue.Queue()


        class Stack(queue.Queue):
            def _get(self):
                return self.queue.pop()


        mine = Queue()
        mine.items.put(1)
        s = Stack()
        s.put(1)
        s.put(2)
        x = s.get()
        y = mine.items.get()
        assert x == 2 and y == 1
    """)
    assert movers.check(source=src).verdict == "ok", outcome(movers.check(source=src))
    assert python3(src, tmp_path).returncode == 0


def test_a_missing_argument_is_cpythons_type_error(tmp_path: Path) -> None:
    src = "import queue\n\nq = queue.Queue()\nq.put()\n"
    r = movers.check(source=src)
    assert r.violations[0].message.endswith("(line 4): Queue.put() missing 1 required positional argument: 'item'")
    assert "TypeError: Queue.put() missing 1 required positional argument: 'item'" in python3(src, tmp_path).stderr


@pytest.mark.parametrize(("src", "where", "needle"), [
    ("import queue\n\n\ndef len(x):\n    return 0\n\n\nq = queue.Queue()\n", 4,
     "'len' is defined by the model, but movers' model of queue.Queue uses the built-in 'len': rename it"),
    ("import queue\n\n\nclass Condition:\n    pass\n\n\nq = queue.LifoQueue()\n", 4,
     "'Condition' is defined by the model, but movers' model of queue.Queue uses the built-in 'Condition'"),
    ("import queue\n\n\nclass Gate:\n    def wait(self):\n        pass\n\n\nq = queue.Queue()\n", 5,
     "a method named wait() in a model that uses queue.Queue is not supported"),
])
def test_names_the_library_relies_on_are_refused_at_the_models_definition(src: str, where: int, needle: str) -> None:
    with pytest.raises(ModelSyntaxError) as e:
        movers.load(source=src)
    assert e.value.line == where and needle in e.value.message, str(e.value)


def test_a_model_without_the_library_compiles_as_before() -> None:
    src = "import threading\n\nx = 0\n\n\ndef w():\n    global x\n    x = 1\n\n\nthreading.Thread(target=w).start()\n"
    p = movers.load(source=src)
    assert p.library_files == () and set(p.classes) == set()
    assert not any(isinstance(n, ast.ClassDef) for n in ast.walk(ast.parse(src)))


def test_the_model_source_is_python_that_behaves_as_cpythons_queue(tmp_path: Path) -> None:
    """queue_model.py runs under python3 too, with the results of CPython's own classes."""
    src = program("""
        import importlib.util
        import queue
        import threading

        spec = importlib.util.spec_from_file_location("queue_model", MODEL)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        for mod in (queue, m):
            q = mod.Queue(maxsize=1)
            out = []
            t = threading.Thread(target=lambda: [out.append(q.get()) or q.task_done() for _ in range(3)])
            t.start()
            for i in range(3):
                q.put(i)
            q.join()
            t.join()
            assert out == [0, 1, 2] and q.empty() and not q.full()
            try:
                q.task_done()
            except ValueError as e:
                assert str(e) == "task_done() called too many times"
            s = mod.LifoQueue()
            s.put(1)
            s.put(2)
            assert [s.get_nowait(), s.get(timeout=0)] == [2, 1]
            raised = 0
            for bad in (lambda: s.get(timeout=0.01), lambda: s.get(False), lambda: mod.SimpleQueue().get_nowait()):
                try:
                    bad()
                except queue.Empty:
                    raised += 1
            assert raised == 3
            sq = mod.SimpleQueue()
            sq.put(3)
            assert sq.qsize() == 1 and sq.get() == 3 and sq.empty()
        print("same")
    """).replace("MODEL", repr(str(HERE / "queue_model.py")))
    r = python3(src, tmp_path)
    assert r.returncode == 0 and r.stdout == "same\n", r.stderr


# -- the text report folds a library call's steps into the call's row -----------------------------------------------

def test_the_text_report_folds_a_calls_library_steps_and_library_steps_unfolds_them(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from movers.cli import main

    path = tmp_path / "tasks.py"
    path.write_text(TASKS.replace("DONE", "pass"))
    assert main(["check", str(path)]) == 1
    folded = capsys.readouterr().out
    assert main(["check", str(path), "--library-steps"]) == 1
    each = capsys.readouterr().out
    # q.put(1) at line 16 and its steps inside queue.Queue.put are one row, with what they changed together.
    row = next(line for line in folded.splitlines() if "q.put(1)" in line)
    assert re.search(r"^\s*\d+-\d+ .*q\.put\(1\)\s+\[\d+ steps, in queue\.Queue\.put", row), row
    assert "q.queue[0] = 1" in folded and "(in queue.Queue._put) self.queue.append(item)" not in folded
    assert "(in queue.Queue._put) self.queue.append(item)" in each
    assert not re.search(r"^\s*\d+-\d+ ", each, re.M)
    assert len(each.splitlines()) > len(folded.splitlines())
