"""docs/language.md section 8: what one step is. One thread doing k steps from the initial state has k+1 states
(the last one terminated), so state counts measure the granularity exactly.

The first tests pin ``--granularity statement`` (one statement, one step: the papers' semantics); the last
section tests ``--granularity access``, the default (a step makes at most one access to shared memory:
lang/granularity.py)."""

from __future__ import annotations

import textwrap

import pytest
from conftest import run, states

STATEMENT = {"granularity": "statement"}


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
    assert states(one_thread(body), **STATEMENT) == steps + 1


def test_choose_explores_every_value() -> None:
    # 1 initial + 3 successors of the choice
    assert states(one_thread("x = choose(range(3))"), **STATEMENT) == 4
    assert states(one_thread("x = choose(range(1, 3))\ny = x"), **STATEMENT) == 1 + 2 + 2


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
    assert states(src, **STATEMENT) == 4
    r = run(src, search="bfs", **STATEMENT)
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
    assert states(src, **STATEMENT) == 5


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
    assert states(src, **STATEMENT) == 4
    r = run(textwrap.dedent(src) + "\n@invariant\ndef fine():\n    return x == 0 or x == 2\n", **STATEMENT)
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
    assert states(src, **STATEMENT) == 7


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
    assert states(src, **STATEMENT) == 5


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
    r = run(src, **STATEMENT)
    assert r.verdict == "ok"
    # A waiter that never gets notified is a deadlock, reported with what it waits for.
    r = run(src.replace("c.notify()", "pass"), **STATEMENT)
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
    assert states(src, **STATEMENT) == 4


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
    assert states(src, **STATEMENT) == 2


def test_main_guard_is_initialisation() -> None:
    src = """
    def main():
        global x
        x = 1

    x = 0
    if __name__ == "__main__":
        Thread(target=main).start()
    """
    assert states(src, **STATEMENT) == 2


# -- access granularity (the default): a step makes at most one access to shared memory ---------------------

# ``other`` is never started: its writes make x, y, z, counter, o.g and the lists' elements and lengths shared
# memory. K is a module constant and o.f a field only __init__ sets: reading them is no access.
SHARED = """
K = 5

class C:
    def __init__(self):
        self.f = 1
        self.g = 2

x = 0
y = 0
z = 0
counter = 0
a = [0, 1]
o = C()

def other():
    global x, y, z, counter
    x = 1
    y = 1
    z = 1
    counter = 1
    o.g = 3
    a[0] = 1
    a.append(2)
"""


def access_steps(body: str, args: tuple = (0, 1), **kw) -> int:
    """The steps of one thread ``main(i, j)`` running ``body`` after ``x = 1`` (one step: a thread that
    starts with local work takes a first step of that work alone), at access granularity."""
    lines = "\n".join("    " + ln for ln in ("x = 1\n" + body.strip("\n")).splitlines())
    src = (f"{SHARED}\ndef main(i, j):\n    global x, y, z, counter\n{lines}\n\n"
           f"Thread(target=main, args={args!r}).start()\n")
    return states(src, **kw) - 2


@pytest.mark.parametrize(
    ("body", "steps"),
    [
        ("counter += 1", 2),  # read counter, write counter: another thread may write in between
        ("x = y + z", 3),  # read y, read z, write x
        ("x = y", 2),
        ("t = y", 1),  # a local target: the only read is the step
        ("t = y + z", 2),  # read y; then read z and assign t (the last read stays in the statement)
        ("t = 1\nu = t * 2 + i", 0),  # locals, constants, arithmetic: glue, part of the step before
        ("if x > 0:\n    t = 1", 1),
        ("if i > 0:\n    t = 1", 0),
        ("if x > y:\n    t = 1", 2),
        ("a[i] = a[j] + 1", 2),  # read a[j], write a[i]
        ("a[x] = 0", 2),  # read x (the index), write a[x]
        ("a[i] += 1", 2),
        ("t = K + 1", 0),  # a module constant: no access
        ("x = K", 1),
        ("t = o.f + 1", 0),  # a field written only in __init__: no access
        ("t = o.f + o.g", 1),
        ("t = o.g + y", 2),
        ("t = 1 in a", 1),  # membership: one access, however many elements it compares
        ("t = y in a", 2),
        ("t = len(a)", 1),  # the model appends: the length is shared
        ("if a:\n    t = 1", 1),  # a list's truth reads its length
        ("if len(a):\n    t = 1", 1),  # the truth of the int read is local work (DISAGREEMENTS.md 5)
        ("if not i:\n    t = 1", 0),  # a parameter given ints is never a list: its truth reads nothing
        ("t = 1 if i and j else 2", 0),
        ("t = y\nif not t:\n    x = 2", 2),  # read y; write x (t holds an int)
        ("assert y == 0 or z == 0", 1),  # short-circuit: z is read only when y != 0
        ("assert y == 1 or z == 0", 2),
        ("print(y, z)", 0),  # print evaluates nothing
        ("assume(i == 0)", 0),
        ("assume(y == 0)", 1),
        ("wait_until(i == 0)", 1),  # synchronisation: always a step
        ("t = choose(1, 2)", 1),  # a choice: always a step
    ],
)
def test_access_step_counts(body: str, steps: int) -> None:
    assert access_steps(body) == steps


def test_statement_granularity_keeps_one_step_a_statement() -> None:
    for body in ("counter += 1", "x = y + z", "a[i] = a[j] + 1"):
        assert access_steps(body, **STATEMENT) == 1, body


def test_local_work_at_the_entry_is_a_step_of_its_own() -> None:
    src = f"{SHARED}\ndef main():\n    global x\n    t = 1\n    x = t\n\nThread(target=main).start()\n"
    assert states(src) == 3  # the local work; the write
    assert states(src, **STATEMENT) == 3


def test_short_circuit_reads_a_later_operand_only_when_python_does() -> None:
    # `a[i]` with i out of range would raise: it is read only if `i < len(a)`, as in Python.
    body = "if i < len(a) and a[i] > 0:\n    y = 1"
    assert run(f"{SHARED}\ndef main(i):\n    global y\n{textwrap.indent(body, '    ')}\n\n"
               "Thread(target=main, args=(5,)).start()\n").verdict == "ok"
    assert access_steps(body, (5, 0)) == 1  # len(a) only
    assert access_steps(body, (1, 0)) == 3  # len(a), a[1], then y = 1 (a[1] is 1)


def test_while_condition_is_read_again_at_every_test() -> None:
    body = "while x + y < 3:\n    y += 1"
    # x = 1, y = 0: three tests of two reads each, two increments of a read and a write
    assert access_steps(body) == 3 * 2 + 2 * 2
    assert access_steps(body, **STATEMENT) == 3 + 2


RACE = """
counter = 0
m = Lock()

def inc():
    global counter
    for i in range(2):
        counter += 1

t1 = Thread(target=inc)
t2 = Thread(target=inc)
t1.start()
t2.start()

def main():
    t1.join()
    t2.join()
    assert counter == 4

Thread(target=main).start()
"""


def test_unlocked_increments_lose_an_update_at_access_granularity() -> None:
    r = run(RACE)
    assert r.verdict == "violation" and r.violations[0].kind == "assertion"
    # the lost update: both threads read counter before either writes what it read
    pending: set[int] = set()
    for step in r.violations[0].trace:
        if "read counter" in step.source:
            pending.add(step.thread)
            if len(pending) == 2:
                break
        elif "write counter" in step.source:
            pending.discard(step.thread)
    assert len(pending) == 2, [(s.name, s.source) for s in r.violations[0].trace]
    assert run(RACE, **STATEMENT).verdict == "ok"


def test_locked_increments_are_verified_at_both_granularities() -> None:
    locked = RACE.replace("        counter += 1", "        with m:\n            counter += 1")
    assert locked != RACE
    assert run(locked).verdict == "ok"
    assert run(locked, **STATEMENT).verdict == "ok"


def test_dead_temporaries_do_not_tell_states_apart() -> None:
    # reader: read x, read a[x % 2] (x's value is dead from here), write y. The states where the reader is
    # about to write differ only in what x was: one state each, not two (the naive explorer counts 14).
    src = """
    x = 0
    y = 0
    a = [0, 0]

    def reader():
        global y
        y = a[x % 2] + 1

    def writer():
        global x
        x = 1
        a[0] = 0

    Thread(target=reader).start()
    Thread(target=writer).start()
    """
    assert states(src) == 14
    assert states(src, **STATEMENT) == 6


def test_comparing_values_that_are_not_lists_is_local_work() -> None:
    # The model has a list whose elements are written, but `t == u` compares ints: no access, no step.
    body = "t = y\nu = z\nif t == u:\n    x = 2"
    src = f"{SHARED}\ndef main():\n    global x\n{textwrap.indent(body, '    ')}\n\nThread(target=main).start()\n"
    assert states(src) == 4  # read y; read z (the comparison is glue); write x


def test_the_truth_of_a_parameter_that_may_be_a_list_is_an_access() -> None:
    # `f(a)` and `f(0)` share f's parameter (the analysis is context-insensitive): `if p:` may read a's length.
    body = "f(0)\nf(a)"
    src = (f"{SHARED}\ndef f(p):\n    if p:\n        t = 1\n\ndef main():\n{textwrap.indent(body, '    ')}\n\n"
           "Thread(target=main).start()\n")
    assert states(src) == 4  # local work to the first test; the test of 0; the test of a
    assert states(src.replace("f(a)", "f(1)")) == 2  # never a list: one step of local work


def test_a_truth_test_taken_as_plain_that_may_be_a_container_is_a_contradiction() -> None:
    from movers.lang.compiler import resolve_truths

    lists, ints = frozenset({("local", 0)}), frozenset({("local", 1)})

    def sites(code, av):
        return {("main", 1, 0, "list")} if av == lists else set()

    tested = [(None, lists, (3, 4)), (None, ints, (5, 6)), (None, frozenset(), (7, 8))]
    assert resolve_truths(sites, tested, frozenset()) == (frozenset({(5, 6), (7, 8)}), False)
    assert resolve_truths(sites, tested, frozenset({(5, 6)})) == (frozenset({(5, 6), (7, 8)}), False)
    assert resolve_truths(sites, tested, frozenset({(3, 4)}))[1]


def test_a_contradicted_second_compilation_is_compiled_again_with_every_truth_test_a_read(monkeypatch) -> None:
    """The safety net of ``compile_model``: when the second compilation's analysis contradicts the first's,
    the program is the one where every truth test reads a length (as before the tests were decided)."""
    from movers.lang import compiler

    body = "t = y\nif not t:\n    x = 2"
    src = f"{SHARED}\ndef main():\n    global x\n{textwrap.indent(body, '    ')}\n\nThread(target=main).start()\n"
    assert states(src) == 3  # read y; write x
    decide = compiler.resolve_truths
    monkeypatch.setattr(compiler, "resolve_truths", lambda sites, tested, plain_at: (
        decide(sites, tested, plain_at)[0], bool(plain_at)))
    assert states(src) == 4  # the test of t a step of its own


def test_a_while_condition_cut_at_its_accesses_keeps_its_value_until_tested() -> None:
    # Peterson's entry protocol: `while flag[j] and turn == j` is cut into reads (a short-circuit) whose
    # temporary must still hold the condition's value when the loop tests it (a temporary cleared too early
    # let both threads into the critical section).
    from conftest import EXAMPLES

    import movers

    assert movers.check(EXAMPLES / "peterson.py").verdict == "ok"
    r = run("""
    x = 1
    y = 1
    def main():
        global x, y
        n = 0
        while x > 0 and y > 0:
            n += 1
            if n == 3:
                x = 0
        assert n == 3, "the loop ran its three rounds"
    Thread(target=main).start()
    """)
    assert r.verdict == "ok", r.violations


def test_comparing_elements_of_a_list_is_no_access_of_its_own() -> None:
    # `a[0] == a[0]` reads two elements (two accesses); comparing the two ints read is local work. The
    # abstract values once could not tell a list's element from a tuple's item (the list itself), so the
    # comparison was a step of its own: 81 states where the naive explorer, and the rule, give 64.
    from naive_explorer import naive_explore

    src = ("from movers.lang import *\nx = 0\ny = 0\na = [0, 0]\nm0 = Lock()\n"
           "def worker(i):\n    global x\n    a[0] = (x + 0) % 3\n    x = (x + 0) % 3\n"
           "    assert x == 0 and a[0] == a[0]\n"
           "Thread(target=worker, args=(0,)).start()\nThread(target=worker, args=(1,)).start()\n")
    assert states(src) == naive_explore(src).states == 64


def test_a_local_while_loop_rests_at_its_head_in_the_naive_explorer_too() -> None:
    # worker_1's while loop goes round through local work alone: both the engine and the naive explorer make
    # its head a step boundary (the naive one once took it as glue: 14 states against the engine's 30).
    from naive_explorer import naive_explore

    src = ("from movers.lang import *\nx = 0\ny = 0\nm0 = Lock()\n"
           "def worker_0():\n    global x\n    x = (x + 0) % 3\n    x = (x + 0) % 3\n    x += 1\n"
           "def worker_1():\n    t0 = (x + 0) % 3\n    c0 = 0\n    while c0 < 1:\n        t0 += 1\n        c0 += 1\n"
           "Thread(target=worker_0).start()\nThread(target=worker_1).start()\n")
    assert states(src) == naive_explore(src).states == 30


# -- a container's truth tested inside an expression is an access (tests/DISAGREEMENTS.md 6) ----------------------

TRUTH = """
import threading

a = [1]

def worker():
    t = USE

threading.Thread(target=worker).start()
threading.Thread(target=worker).start()
"""


@pytest.mark.parametrize("use", ["a.pop() if a else 0", "a and a.pop()", "0 if not a else a.pop()",
                                 "(len(a) > 5 or a) and a.pop()"])
def test_the_truth_of_a_list_inside_an_expression_is_cut_from_the_pop(use: str) -> None:
    """CPython tests the list's length, then pops: two threads can both find it non-empty."""
    import movers

    r = movers.check(TRUTH.replace("USE", use))
    assert r.verdict == "violation" and r.violations[0].kind == "runtime-error", (use, r.verdict)
    assert movers.check(TRUTH.replace("USE", use), granularity="statement").verdict == "ok"
