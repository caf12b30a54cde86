"""The language (issue item 2): every construct of docs/language.md compiles and means what Python means."""

from __future__ import annotations

import pytest
from conftest import run

import movers


def ok(src: str) -> None:
    r = run(src)
    assert r.verdict == "ok", (r.error, [(v.kind, v.message) for v in r.violations])


def test_classes_methods_fields_inheritance() -> None:
    ok("""
    class Node:
        def __init__(self, v, nxt):
            self.v = v
            self.next = nxt
        def total(self):
            if self.next is None:
                return self.v
            return self.v + self.next.total()
    class Tagged(Node):
        def __init__(self, v):
            super().__init__(v, None)
            self.tag = 7
    def main():
        n = Node(1, Node(2, Tagged(3)))
        assert n.total() == 6
        assert n.next.next.tag == 7
    Thread(target=main).start()
    """)


def test_recursion_tuples_globals() -> None:
    ok("""
    def fib(n):
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)
    pair = (1, (2, 3))
    def main():
        global pair
        a, b = pair
        c, d = b
        pair = (d, c, a)
        assert fib(6) == 8
        assert pair == (3, 2, 1) and len(pair) == 3 and pair[0] == 3
        assert 2 in pair and 5 not in pair
        assert min(4, 2) == 2 and max(4, 2) == 4 and abs(-3) == 3
        assert (7 if a == 1 else 8) == 7
    Thread(target=main).start()
    """)


def test_lists_are_arrays() -> None:
    ok("""
    a = [0] * 3
    b = [1, 2, 3]
    def main():
        for i in range(len(a)):
            a[i] = b[i] * 2
        s = 0
        for v in a:
            s += v
        assert s == 12 and a[-1] == 6
        i = 0
        while True:
            i += 1
            if i < 3:
                continue
            break
        assert i == 3
    Thread(target=main).start()
    """)


def test_thread_subclass_with_run_and_join() -> None:
    ok("""
    total = 0
    m = Lock()
    class Worker(Thread):
        def __init__(self, k):
            self.k = k
        def run(self):
            global total
            with m:
                total += self.k
    def main():
        a, b = Worker(1), Worker(2)
        a.start()
        b.start()
        a.join()
        b.join()
        assert total == 3
    Thread(target=main).start()
    """)


def test_rlock_semaphore_owner_tid() -> None:
    ok("""
    r = RLock()
    s = Semaphore(1)
    x = 0
    def w():
        global x
        with r:
            with r:
                assert r.owner == tid()
                x += 1
        assert r.owner != tid()
        s.acquire()
        x += 1
        s.release()
    Thread(target=w).start()
    Thread(target=w).start()
    """)


def test_semaphore_blocks() -> None:
    r = run("s = Semaphore(0)\ndef w():\n    s.acquire()\nThread(target=w).start()\n")
    assert r.violations[0].kind == "deadlock"


def test_java_monitors_wait_notify() -> None:
    ok("""
    class Box:
        def __init__(self):
            self.full = False
            self.v = 0
        @synchronized
        def put(self, v):
            while self.full:
                wait(self)
            self.v = v
            self.full = True
            notify_all(self)
        @synchronized
        def take(self):
            while not self.full:
                wait(self)
            self.full = False
            notify_all(self)
            return self.v
    b = Box()
    def producer():
        b.put(1)
        b.put(2)
    def consumer():
        assert b.take() == 1
        assert b.take() == 2
    Thread(target=producer).start()
    Thread(target=consumer).start()
    """)


def test_synchronized_block_and_owner() -> None:
    ok("""
    class C:
        def __init__(self):
            self.n = 0
    c = C()
    def w():
        with synchronized(c):
            assert c.owner == tid()
            c.n += 1
        assert c.owner is None or c.owner != tid()
    Thread(target=w).start()
    Thread(target=w).start()
    """)


def test_notify_wakes_any_single_waiter() -> None:
    # Two waiters, one notify: whichever is woken, the other stays blocked: a deadlock in every schedule
    # where both wait first.
    r = run("""
    m = Lock()
    c = Condition(m)
    go = False
    def waiter():
        with c:
            while not go:
                c.wait()
    def setter():
        global go
        with c:
            go = True
            c.notify()
    Thread(target=waiter).start()
    Thread(target=waiter).start()
    Thread(target=setter).start()
    """)
    assert r.verdict == "violation" and r.violations[0].kind == "deadlock"


def test_indivisible_compare_and_swap() -> None:
    ok("""
    v = 0
    wins = 0
    def cas(old, new):
        global v
        with indivisible():
            if v == old:
                v = new
                return True
        return False
    def w():
        global wins
        if cas(0, 1):
            with indivisible():
                wins += 1
    def main():
        a, b = Thread(target=w), Thread(target=w)
        a.start()
        b.start()
        a.join()
        b.join()
        assert wins == 1
    Thread(target=main).start()
    """)


def test_atomic_and_commit_are_recorded() -> None:
    import movers

    p = movers.load("x = 0\ndef f():\n    global x\n    with atomic():\n        x = 1\n        commit()\n"
                    "        x = 2\nThread(target=f).start()\n")
    assert len(p.atomic_blocks) == 1
    nodes = p.functions["f"].nodes
    assert [n.commit for n in nodes if n.costly] == [False, True]
    assert all(n.atomic_block == 0 for n in nodes if n.costly)


def test_heap_symmetry_and_garbage() -> None:
    # Two threads allocate in either order; states that differ only by allocation order are one state.
    src = """
    class N:
        def __init__(self, v):
            self.v = v
    a = None
    b = None
    def p():
        global a
        a = N(1)
    def q():
        global b
        b = N(2)
    Thread(target=p).start()
    Thread(target=q).start()
    """
    r = run(src)
    assert r.verdict == "ok"
    # p: a = N(1) pushes __init__, self.v = v returns; same for q: 3 x 3 grid of thread positions
    assert r.stats.states == 9
    r = run("""
    class N:
        def __init__(self):
            self.v = 0
    def p():
        for i in range(2):
            n = N()
        n = None
    Thread(target=p).start()
    """)
    assert r.verdict == "ok"


def test_semantic_queries_for_reductions() -> None:
    # The questions reductions ask the semantics: who owns a lock, which objects a thread can reach.
    import movers
    from movers.ir.program import Ref
    from movers.semantics.system import TransitionSystem

    p = movers.load("m = Lock()\nclass N:\n    def __init__(self):\n        self.v = 0\n"
                    "def w():\n    mine = N()\n    with m:\n        pass\nThread(target=w).start()\n",
                    granularity="statement")
    ts = TransitionSystem(p)
    s = ts.initial()
    m = s[0][p.global_slot("m")]
    assert type(m) is Ref and ts.lock_owner(s, m) is None
    s = ts.execute(s, 0)[0].state  # mine = N() pushes __init__
    s = ts.execute(s, 0)[0].state  # self.v = 0 returns
    reach = ts.reachable_from_thread(s, 0)
    assert m.i in reach and len(reach) == 2  # the lock and the thread's own node
    s = ts.execute(s, 0)[0].state  # with m: acquire
    assert ts.lock_owner(s, m) == 0


def test_assertion_messages_in_pythons_habits() -> None:
    # f-strings and % formatting, as Python code writes its assertion messages: formatted when it fails.
    r = run('''
        from movers.lang import *
        x = 5
        flag = True
        def w():
            assert x < 1, f"x is {x}, flag {flag}, {x:03d}!"
        Thread(target=w).start()
    ''')
    assert r.verdict == "violation"
    assert r.violations[0].message == "x is 5, flag True, 005! (assertion failed: x < 1)"
    r = run('''
        from movers.lang import *
        x = 5
        def w():
            assert x < 1, "x=%d and %s" % (x, None)
        Thread(target=w).start()
    ''')
    assert r.violations[0].message == "x=5 and None (assertion failed: x < 1)"
    ok = run('''
        from movers.lang import *
        x = 0
        def w():
            assert x < 1, f"never {x}"
        Thread(target=w).start()
    ''')
    assert ok.verdict == "ok"


KEYWORDS = """
from movers.lang import *
m = Lock()
cv = Condition(lock=m)
s = Semaphore(value=1)
items = 0
def producer():
    global items
    with cv:
        items += 1
        cv.notify()
def consumer():
    global items
    with cv:
        while items == 0:
            cv.wait()
        items -= 1
    with s:
        assert items >= 0
Thread(target=producer).start()
Thread(target=consumer).start()
"""


@pytest.mark.parametrize("reduction", ["none", "optimistic", "static-por", "dwyer-sda", "transactions"])
def test_keyword_arguments_of_the_threading_constructors(reduction: str) -> None:
    # Semaphore(value=1) and Condition(lock=m), as threading writes them: the same model as positionally, for
    # the static analyses too (a Condition's lock given by keyword is its lock).
    positional = KEYWORDS.replace("Condition(lock=m)", "Condition(m)").replace("Semaphore(value=1)", "Semaphore(1)")
    a, b = run(KEYWORDS, reduction=reduction), run(positional, reduction=reduction)
    assert (a.verdict, a.stats.states, a.stats.transitions) == (b.verdict, b.stats.states, b.stats.transitions)


@pytest.mark.parametrize("line, message", [
    ("s = Semaphore(val=2)", "2:15: Semaphore() got an unexpected keyword argument 'val' (it takes value)"),
    ("s = Semaphore(2, value=2)", "2:18: Semaphore() got multiple values for argument 'value'"),
    ("m = Lock(x=1)", "2:10: Lock() got an unexpected keyword argument 'x'"),
])
def test_wrong_keyword_arguments_are_named(line: str, message: str) -> None:
    r = movers.check(source=f"from movers.lang import *\n{line}\n")
    assert r.verdict == "error" and message in r.error, r.error


BOUNDED = """
from movers.lang import *
s = BoundedSemaphore(value=1)
n = 0
def w():
    global n
    with s:
        n += 1
Thread(target=w).start()
Thread(target=w).start()
"""


@pytest.mark.parametrize("reduction", ["none", "optimistic", "transactions", "dwyer-ld+wsldom"])
def test_bounded_semaphore(reduction: str) -> None:
    # threading.BoundedSemaphore: a Semaphore, except that a release past its initial value is an error.
    ok = run(BOUNDED, reduction=reduction)
    plain = run(BOUNDED.replace("BoundedSemaphore", "Semaphore"), reduction=reduction)
    assert (ok.verdict, ok.stats.states) == ("ok", plain.stats.states)
    bad = run(BOUNDED + "def extra():\n    s.release()\nThread(target=extra).start()\n", reduction=reduction)
    assert bad.verdict == "violation" and bad.violations[0].kind in ("runtime-error", "discipline")
    if reduction == "none":
        assert "BoundedSemaphore released too many times" in bad.violations[0].message
    unbounded = run(BOUNDED.replace("BoundedSemaphore", "Semaphore") + "def extra():\n    s.release()\n"
                    "Thread(target=extra).start()\n")
    assert unbounded.verdict == "ok"
