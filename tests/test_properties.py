"""Properties always checked (issue item 4): assertions, deadlock, invariants, runtime errors, disciplines."""

from __future__ import annotations

import pytest
from conftest import run


def kind(src: str, **kw) -> str:
    r = run(src, **kw)
    assert r.verdict == "violation", (r.verdict, r.error)
    return r.violations[0].kind


def test_assertion_with_trace() -> None:
    r = run("""
    x = 0
    def w():
        global x
        t = x
        x = t + 1
    def check():
        wait_until(x == 2)
        assert x == 3, "never"
    Thread(target=w).start()
    Thread(target=w).start()
    Thread(target=check).start()
    """)
    v = r.violations[0]
    assert v.kind == "assertion" and "never" in v.message
    assert [s.source for s in v.trace][-1] == 'assert x == 3, "never"'
    assert v.trace[-2].source == "wait_until(x == 2)"


def test_deadlock_names_who_waits_on_what() -> None:
    r = run("""
    a, b = Lock(), Lock()
    def p():
        with a:
            with b:
                pass
    def q():
        with b:
            with a:
                pass
    Thread(target=p).start()
    Thread(target=q).start()
    """)
    v = r.violations[0]
    assert v.kind == "deadlock"
    # One line per thread, named by its function; the search's own message said "thread 0".
    assert v.message.splitlines()[1:] == ["  p, line 4: waits to acquire b (held by q)",
                                          "  q, line 8: waits to acquire a (held by p)"]


def test_terminated_threads_are_not_a_deadlock() -> None:
    assert run("x = 0\ndef f():\n    pass\nThread(target=f).start()\n").verdict == "ok"


def test_join_blocks_until_termination() -> None:
    r = run("""
    x = 0
    def w():
        global x
        x = 1
    def main():
        t = Thread(target=w)
        t.start()
        t.join()
        assert x == 1
    Thread(target=main).start()
    """)
    assert r.verdict == "ok"


def test_invariant() -> None:
    src = """
    x = 0
    @invariant
    def small():
        return x < LIMIT
    def w():
        global x
        x += 1
    Thread(target=w).start()
    Thread(target=w).start()
    """
    assert run(src.replace("LIMIT", "3")).verdict == "ok"
    r = run(src.replace("LIMIT", "2"))
    assert r.violations[0].kind == "invariant" and "small" in r.violations[0].message
    assert len(r.violations[0].trace) == 4  # each x += 1 is a read and a write


def test_invariant_in_initial_state() -> None:
    r = run("x = 5\n@invariant\ndef inv():\n    return x == 0\n")
    assert r.violations[0].kind == "invariant"


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("a = [1, 2]\n    a[2] = 0", "out of range"),
        ("n = None\n    n.f = 1", "of None"),
        ("m = Lock()\n    m.release()", "does not hold"),
        ("z = 0\n    z = 1 // z", "division by zero"),
        ("z = None + 1", "unsupported operand"),
        ("c = Condition(Lock())\n    c.wait()", "without holding"),
        ("t = Thread(target=f)\n    t.join()", "not started"),
        ("t = Thread(target=f)\n    t.start()\n    t.start()", "only once"),
    ],
)
def test_runtime_errors(body: str, needle: str) -> None:
    lines = "\n".join("    " + ln.strip() for ln in body.splitlines())
    r = run(f"def f():\n    pass\ndef main():\n{lines}\nThread(target=main).start()\n")
    assert r.verdict == "violation", r.error
    v = r.violations[0]
    assert v.kind == "runtime-error"
    assert needle in v.message


def test_discipline_guarded_by() -> None:
    src = """
    m = Lock()
    x = 0
    guarded_by(x, m)
    def w():
        global x
        with m:
            x += 1
        BAD
    Thread(target=w).start()
    Thread(target=w).start()
    """
    assert run(src.replace("BAD", "pass")).verdict == "ok"
    r = run(src.replace("BAD", "x = 0"))
    v = r.violations[0]
    assert v.kind == "discipline"
    assert "accesses x without exclusive access" in v.message


def test_discipline_array_element_and_fields() -> None:
    src = """
    x = [0, 0]
    thread_local(x[1], 1)
    class Acc:
        def __init__(self):
            self.lock = Lock()
            self.bal = 0
    exclusive(Acc.bal, lambda t, self: self.lock.owner == t)
    a = Acc()
    def w(i):
        x[i] = 1
        with a.lock:
            a.bal += 1
        BAD
    Thread(target=w, args=(0,)).start()
    Thread(target=w, args=(1,)).start()
    """
    assert run(src.replace("BAD", "pass")).verdict == "ok"
    assert kind(src.replace("BAD", "a.bal = 0")) == "discipline"
    assert kind(src.replace("x[i] = 1", "x[1 - i] = 1").replace("BAD", "pass")) == "discipline"


def test_discipline_sc_example_predicates_hold() -> None:
    from conftest import EXAMPLES

    import movers

    assert movers.check(EXAMPLES / "sc_example.py", granularity="statement").verdict == "ok"


def test_assume_prunes_without_deadlock() -> None:
    r = run("""
    x = 0
    def w():
        global x
        x = choose(0, 1)
        assume(x == 1)
        assert x == 1
    Thread(target=w).start()
    """)
    assert r.verdict == "ok"


def test_wait_until_deadlock() -> None:
    r = run("x = 0\ndef w():\n    wait_until(x == 1)\nThread(target=w).start()\n")
    assert r.violations[0].kind == "deadlock"
    assert "waits until x == 1" in r.violations[0].message


def test_init_failure_is_reported() -> None:
    r = run("a = [0]\nb = a[3]\n")
    assert r.verdict == "violation" and r.violations[0].kind == "runtime-error"
    assert "initialisation" in r.violations[0].message
