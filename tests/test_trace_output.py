"""Traces people can act on (issue 12, item 2): condition steps say where they went, a failed assertion shows
the values it read, threads are named (``Thread(name=...)``, else their function), a deadlock names its locks
by path one thread a line, a thread that ends after its loop says so, and a notify names the thread it woke."""

from __future__ import annotations

import json
import textwrap

import pytest
from conftest import EXAMPLES, run

import movers
from movers.cli import main


def _steps(src: str, **kw) -> list:
    r = run(src, **kw)
    assert r.verdict == "violation", (r.verdict, r.error)
    return r.violations[0].trace


# -- 1. conditions show their outcome ---------------------------------------------------------------------------


def test_conditions_show_where_they_went() -> None:
    tr = _steps("""
    x = 0
    def main():
        global x
        for i in range(2):
            x += 1
        if x > 5:
            x = 0
        elif x > 1:
            x = 10
        while x < 11:
            x += 1
        wait_until(x == 11)
        assert x == 0
    Thread(target=main).start()
    """, granularity="statement")  # every condition is a step of its own
    got = [(s.source, s.outcome) for s in tr if s.outcome]
    assert got == [
        ("for i in range(2)", "next"), ("for i in range(2)", "next"), ("for i in range(2)", "done"),
        ("x > 5", "false"), ("x > 1", "true"),
        ("x < 11", "true"), ("x < 11", "false"),
        ("wait_until(x == 11)", "true"),
    ]
    assert all(s.outcome == "" for s in tr if s.source.startswith(("x +=", "x =", "assert")))
    assert tr[5].shown_source() == "x > 5  -> false"
    assert tr[5].to_json()["outcome"] == "false" and "outcome" not in tr[1].to_json()


def test_a_thread_that_ends_after_its_loop_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    # The step that ends the thread is its loop's header: "-> done, thread ends", not a bare header line.
    tr = _steps("""
    x = 0
    def worker():
        global x
        for i in range(1):
            x = x + 1
    def main():
        t = Thread(target=worker)
        t.start()
        t.join()
        assert x == 3
    Thread(target=main).start()
    """, granularity="statement")  # a for header is a step of its own
    end = next(s for s in tr if s.changes.get("thread worker") == "terminated")
    assert end.source == "for i in range(1)" and end.outcome == "done"
    assert end.shown_source() == "for i in range(1)  -> done, thread ends"
    # A condition that does not end the thread says only where it went.
    assert next(s for s in tr if s.outcome == "next").shown_source() == "for i in range(1)  -> next"


# -- 2. a failed assertion shows its values ---------------------------------------------------------------------


def test_a_failed_assert_shows_the_values_it_reads() -> None:
    r = run("""
    class Box:
        def __init__(self):
            self.v = 3
    b = Box()
    xs = [1, 2, 3]
    N = 3
    def main():
        i = 1
        assert b.v + xs[0] == len(xs) and xs[(i + 1) % N] == 0 and i == 2, "values"
    Thread(target=main).start()
    """)
    v = r.violations[0]
    assert v.kind == "assertion"
    # Fields and constant-index elements by their text; an element with a computed index as its whole list,
    # with the index's variables; a called function is not a value.
    assert v.values == {"b.v": "3", "xs[0]": "1", "xs": "[1, 2, 3]", "i": "1", "N": "3"}
    assert v.to_json()["values"] == v.values
    ok = run("x = 1\ndef f():\n    assert x == 1\n    assert x == 2\nThread(target=f).start()\n")
    assert ok.violations[0].values == {"x": "1"}


def test_the_values_are_in_the_text_and_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "racy_counter.py")
    assert main(["check", path]) == 1
    out = capsys.readouterr().out
    assert "assertion: lost update (assertion failed: count == 2)\n  where count = 1\n" in out
    assert main(["check", path, "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["violations"][0]["values"] == {"count": "1"}
    # Other violations have none.
    assert "values" not in movers.check(EXAMPLES / "dining_philosophers.py").violations[0].to_json()


def test_a_failed_assert_shows_what_was_read_before_the_writes() -> None:
    # At access granularity `assert x == y` reads x, then y, in two steps: the values shown are those read,
    # and the failing step is the assertion, even when its step began at local work.
    r = run("""
    x = 0
    y = 0
    def w():
        global x, y
        x = 1
        y = 1
    def r():
        k = 0
        assert x == y, "torn"
    Thread(target=r).start()
    Thread(target=w).start()
    """)
    v = r.violations[0]
    assert v.values == {"x": "0", "y": "1"} or v.values == {"x": "1", "y": "0"}, v.values
    assert v.trace[-1].source == 'assert x == y, "torn"'
    assert [s.source for s in v.trace if s.thread == 0] == [
        "k = 0", 'assert x == y, "torn"  (read x)', 'assert x == y, "torn"']


def test_locals_not_assigned_yet_are_not_shown() -> None:
    # A call shows the callee's parameters, not its other locals, which have no value yet.
    tr = _steps("""
    def inc(k):
        return k + 1
    def twice(k):
        z = inc(k)
        return z * 2
    def main():
        w = twice(3)
        assert w == 0
    Thread(target=main).start()
    """, granularity="statement")
    assert tr[0].source == "w = twice(3)" and tr[0].changes == {"k": "3"}


# -- 3. threads are named -----------------------------------------------------------------------------------------


NAMED = """
m = Lock()
x = 0
def worker():
    global x
    with m:
        x = x + 1
def main():
    a = Thread(target=worker, name="left")
    b = Thread(target=worker, name="right")
    a.start()
    b.start()
    Thread(target=worker).start()
    a.join()
    b.join()
    assert x == 3
Thread(target=main, name="boss").start()
"""


def test_threads_are_named_by_thread_name_else_by_their_function() -> None:
    r = run(NAMED, search="bfs")
    v = r.violations[0]
    names = {s.thread: s.name for s in v.trace}
    assert names[0] == "boss" and names[1] == "left" and names[2] == "right"
    assert names.get(3, "worker") == "worker"
    started = [k for s in v.trace for k, e in s.changes.items() if e == "started"]
    assert started == ["thread left", "thread right", "thread worker"]
    assert any(val == "left" for s in v.trace for k, val in s.changes.items() if k == "m.owner")
    assert [th["name"] for th in v.state["threads"]] == ["boss", "left", "right", "worker"]


def test_a_name_several_threads_share_keeps_their_numbers() -> None:
    tr = movers.check(EXAMPLES / "racy_counter.py").violations[0].trace
    assert {s.name for s in tr} == {"worker#0", "worker#1", "MainThread"}
    assert all(s.name == f"worker#{s.thread}" for s in tr if s.name != "MainThread")
    same = run(NAMED.replace('name="right"', 'name="left"'), search="bfs").violations[0]
    assert {s.name for s in same.trace} >= {"boss", "left#1", "left#2"}


def test_a_thread_subclass_is_named_by_its_class() -> None:
    tr = _steps("""
    class Pinger(Thread):
        def run(self):
            assert False, "ping"
    Pinger().start()
    """)
    assert tr[-1].name == "Pinger"


def test_thread_names_do_not_change_the_states() -> None:
    plain = NAMED.replace(', name="left"', "").replace(', name="right"', "").replace(', name="boss"', "")
    src = NAMED.replace("assert x == 3", "assert x <= 3")
    assert run(src).stats.states == run(plain.replace("assert x == 3", "assert x <= 3")).stats.states


@pytest.mark.parametrize(("value", "col"), [("n", 23), ("1 + 2", 23), ("f'w'", 23)])
def test_a_thread_name_must_be_a_string_literal(value: str, col: int, tmp_path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "bad.py"
    model.write_text(f"from movers.lang import *\nn = 1\ndef f():\n    pass\nThread(target=f, name={value}).start()\n")
    assert main(["check", str(model)]) == 2
    err = capsys.readouterr()
    assert f"bad.py:5:{col}: Thread name must be a string literal" in err.out + err.err
    assert "Traceback" not in err.out + err.err


def test_the_formats_name_threads() -> None:
    from movers.report.formats import to_junit

    r = movers.check(EXAMPLES / "racy_counter.py")
    text = to_junit(r, "racy_counter.py")
    assert "7. MainThread, line 24" in text and "thread worker#0 terminated" in text


# -- 4. deadlocks: objects by path, one thread a line -------------------------------------------------------------


def test_a_deadlock_names_locks_by_path_one_thread_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    r = movers.check(EXAMPLES / "dining_philosophers.py", search="bfs")
    v = r.violations[0]
    lines = v.message.splitlines()
    assert lines[0] == "4 threads are blocked, none can move"
    assert lines[1:] == [f"  philosopher#{i}, line 21: waits to acquire forks[{(i + 1) % 3}] (held by "
                         f"philosopher#{(i + 1) % 3})" for i in range(3)] + [
                         "  MainThread, line 33: waits for philosopher#0 (p0) to finish"]
    # The thread table says the same, in the same words.
    assert [th["waits"] for th in v.state["threads"]] == [ln.split(": ", 1)[1] for ln in lines[1:]]
    assert [th["holds"] for th in v.state["threads"]] == [["forks[0]"], ["forks[1]"], ["forks[2]"], []]
    assert main(["check", str(EXAMPLES / "dining_philosophers.py"), "--search", "bfs"]) == 1
    out = capsys.readouterr().out
    assert "deadlock: 4 threads are blocked, none can move\n  philosopher#0, line 21: waits to acquire forks[1]" in out


def test_deadlock_messages_of_other_waits() -> None:
    r = run("""
    class Box:
        def __init__(self):
            self.v = 0
    boxes = [Box()]
    m = Lock()
    c = Condition(m)
    def hold():
        with synchronized(boxes[0]):
            with m:
                c.wait()
    def enter():
        with synchronized(boxes[0]):
            pass
    def joiner():
        t = Thread(target=enter, name="enterer")
        t.start()
        t.join()
    Thread(target=hold).start()
    Thread(target=joiner).start()
    """, search="bfs")
    v = r.violations[0]
    assert v.kind == "deadlock"
    lines = v.message.splitlines()[1:]
    assert "  hold, line 10: waits for a notify on c" in lines
    assert any(ln.startswith("  joiner, line 17: waits for enterer (t) to finish") for ln in lines)
    assert any("enterer" in ln and "waits for the monitor of boxes[0] (held by hold)" in ln for ln in lines)


# -- 6. a notify names the thread it wakes ------------------------------------------------------------------------


def test_a_notify_names_the_thread_it_wakes() -> None:
    tr = _steps("""
    m = Lock()
    c = Condition(m)
    waiting = 0
    def waiter(k):
        global waiting
        with c:
            waiting += 1
            c.wait()
            assert k == 0, "the second waiter woke"
    def signaller():
        wait_until(waiting == 2)
        with c:
            c.notify()
    Thread(target=waiter, args=(0,)).start()
    Thread(target=waiter, args=(1,)).start()
    Thread(target=signaller).start()
    """, search="bfs")
    step = next(s for s in tr if s.source == "c.notify()")
    # It chose the second waiter (choice 1): the trace names it instead of the index.
    assert step.changes == {"c.waiting": "(waiter#0,)", "thread waiter#1": "woken"}
    assert step.changes_text() == "c.waiting = (waiter#0,), thread waiter#1 woken"
    assert tr[-1].name == "waiter#1"


def test_messages_the_search_writes_name_threads_and_assertions_stay_as_written() -> None:
    released = textwrap.dedent("""
        from movers.lang import *
        m = Lock()
        def worker():
            m.release()
        Thread(target=worker, name="w").start()
    """)
    r = movers.check(released)
    assert r.violations[0].message == "thread w releases a lock it does not hold (owner: None)"
    said = textwrap.dedent("""
        from movers.lang import *
        def worker():
            assert False, "thread 0 broke"
        Thread(target=worker, name="w").start()
    """)
    assert movers.check(said).violations[0].message.startswith("thread 0 broke")
