"""docs/language.md section 8: what one step is. One thread doing k steps from the initial state has k+1 states
(the last one terminated), so state counts measure the granularity exactly."""

from __future__ import annotations

import textwrap

import pytest
from conftest import run, states


def one_thread(body: str, prelude: str = "") -> str:
    lines = "\n".join("    " + ln for ln in body.strip("\n").splitlines())
    return f"{prelude}\ndef main():\n    global x, y\n{lines}\n\nx = 0\ny = 0\nThread(target=main).start()\n"


@pytest.mark.parametrize(
    ("body", "steps"),
    [
        ("x = 1", 1),
        ("x = 1\ny = 2", 2),
        ("x += 1", 1),  # augmented assignment is one step
        ("pass\nx = 1", 1),  # pass costs nothing
        ('"""doc"""\nx = 1', 1),
        ("if x == 0:\n    y = 1", 2),  # the condition is a step
        ("if True:\n    y = 1", 1),  # a constant condition is not
        ("if x == 1:\n    y = 1\nelse:\n    y = 2", 2),
        ("if x == 1:\n    y = 1\nelif x == 0:\n    y = 2", 3),  # each elif condition is a step
        ("while x < 2:\n    x += 1", 5),  # 3 tests + 2 increments
        ("while True:\n    x += 1\n    if x == 2:\n        break", 4),  # while True costs nothing
        ("for i in range(3):\n    x += i", 7),  # 4 header steps (the last finds it exhausted) + 3
        ("for i in range(0):\n    x += i", 1),
        ("for i in range(1, 7, 3):\n    x += i", 5),  # i = 1, 4
        ("m = Lock()\nwith m:\n    x = 1", 4),  # m = Lock(); acquire; x = 1; release
        ("with indivisible():\n    x = 1\n    y = 2", 1),
        ("with atomic():\n    x = 1\n    y = 2", 2),  # a specification only: no scheduling effect
        ("assert x == 0", 1),
        ("wait_until(x == 0)", 1),
        ("print(x)", 1),
    ],
)
def test_step_counts(body: str, steps: int) -> None:
    assert states(one_thread(body)) == steps + 1


def test_choose_explores_every_value() -> None:
    # 1 initial + 3 successors of the choice
    assert states(one_thread("x = choose(range(3))")) == 4
    assert states(one_thread("x = choose(range(1, 3))\ny = x")) == 1 + 2 + 2


def test_call_is_part_of_the_calling_statement() -> None:
    src = """
    def f(a):
        global x
        x = a
        return a + 1

    def main():
        global y
        y = f(5)

    x = 0
    y = 0
    Thread(target=main).start()
    """
    # steps: `y = f(5)` (pushes the frame), `x = a`, `return a + 1` (delivers and assigns y)
    assert states(src) == 4
    r = run(src, search="bfs")
    assert r.verdict == "ok"


def test_falling_off_the_end_costs_nothing() -> None:
    src = """
    def g():
        global x
        x = 1

    def main():
        g()
        g()

    x = 0
    Thread(target=main).start()
    """
    # g() push; x = 1 (falls off, returns, caller continues); g() push; x = 1 (terminates)
    # the second `x = 1` leaves x unchanged but moves the thread on: all four states differ
    assert states(src) == 5


def test_two_calls_in_one_expression() -> None:
    src = """
    def one():
        return 1

    def main():
        global x
        x = one() + one()

    x = 0
    Thread(target=main).start()
    """
    # x = …: push one; return 1 (continues into the second call); return 1 (assigns x, terminates)
    assert states(src) == 4
    r = run(textwrap.dedent(src) + "\n@invariant\ndef fine():\n    return x == 0 or x == 2\n")
    assert r.verdict == "ok"


def test_return_inside_with_releases_then_delivers() -> None:
    src = """
    m = Lock()
    def f():
        with m:
            return 3

    def main():
        global x
        x = f()
        assert m.owner is None
        assert x == 3

    x = 0
    Thread(target=main).start()
    """
    # x = f(); with m (acquire); return 3; release (delivers x); assert; assert
    assert states(src) == 7


def test_synchronized_method_enters_and_leaves_the_monitor() -> None:
    src = """
    class C:
        def __init__(self):
            self.v = 0
        @synchronized
        def inc(self):
            self.v += 1

    def main():
        c.inc()

    c = C()
    Thread(target=main).start()
    """
    # c.inc() pushes; enter monitor; self.v += 1; leave monitor (falls off: terminates)
    assert states(src) == 5


def test_wait_is_two_steps() -> None:
    src = """
    m = Lock()
    c = Condition(m)
    flag = False

    def waiter():
        with c:
            while not flag:
                c.wait()

    def setter():
        global flag
        with c:
            flag = True
            c.notify()

    Thread(target=waiter).start()
    Thread(target=setter).start()
    """
    r = run(src)
    assert r.verdict == "ok"
    # A waiter that never gets notified is a deadlock, reported with what it waits for.
    r = run(src.replace("c.notify()", "pass"))
    assert r.verdict == "violation" and r.violations[0].kind == "deadlock"
    assert "waits for a notify on c" in r.violations[0].message


def test_thread_terminates_without_extra_step() -> None:
    src = """
    def main():
        global x
        x = 1

    x = 0
    Thread(target=main).start()
    Thread(target=main).start()
    """
    # each thread: one step; states: (0,0) (1,0) (0,1) (1,1) = 4
    assert states(src) == 4


def test_module_level_code_is_initialisation() -> None:
    src = """
    x = 0
    for i in range(5):
        x += i
    assert x == 10

    def main():
        global x
        x = 0

    Thread(target=main).start()
    """
    assert states(src) == 2


def test_main_guard_is_initialisation() -> None:
    src = """
    def main():
        global x
        x = 1

    x = 0
    if __name__ == "__main__":
        Thread(target=main).start()
    """
    assert states(src) == 2
