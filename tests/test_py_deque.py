"""``collections.deque`` (``lang/deques.py``): values and errors as CPython computes them, each operation one
access, the mutation check of its iterators, and every reduction seeing its accesses (footprints, escape
through a deque's elements, invariants, the canonical heap) on races through a shared deque."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT
from differential import run_differential
from test_footprints import all_uncovered

import movers
from movers.ir.program import ClassInfo, box, ref
from movers.lang import deques
from movers.lang.errors import ModelSyntaxError
from movers.reduce import REDUCTIONS
from movers.semantics.state import canonical

ALL = tuple(REDUCTIONS)


def python3(src: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=60)


def program(src: str) -> str:
    return textwrap.dedent(src).lstrip("\n")


VALUES = '''
import collections
from collections import deque
from dataclasses import dataclass, field


@dataclass
class Box:
    items: deque = field(default_factory=deque)


d = deque()
d.append(1)
d.appendleft(0)
d.extend([2, 3])
d.extendleft((-1, -2))
assert list(d) == [-2, -1, 0, 1, 2, 3] and len(d) == 6 and d
assert d.pop() == 3 and d.popleft() == -2
assert d[0] == -1 and d[-1] == 2 and 0 in d and 7 not in d
d[1] = 10
d[1] += 1
assert d == deque([-1, 11, 1, 2]) and d != [-1, 11, 1, 2] and d != (-1, 11, 1, 2)
d.rotate()
assert list(d) == [2, -1, 11, 1]
d.rotate(-2)
assert list(d) == [11, 1, 2, -1]
d.rotate(9)
assert list(d) == [-1, 11, 1, 2]
d.remove(11)
d.insert(1, 5)
del d[0]
assert list(d) == [5, 1, 2] and d.count(2) == 1 and d.index(2) == 2 and d.index(5, 0, 1) == 0
d.reverse()
assert list(d) == [2, 1, 5]
c = d.copy()
c.append(9)
assert len(d) == 3 and len(c) == 4 and c.maxlen is None
b = deque([1, 2, 3], maxlen=2)
assert list(b) == [2, 3] and b.maxlen == 2
b.append(4)
assert list(b) == [3, 4]
b.appendleft(9)
assert list(b) == [9, 3]
b.extend([7, 8, 6])
assert list(b) == [8, 6]
b.extendleft([1, 2])
assert list(b) == [2, 1] and b.copy().maxlen == 2
assert str(b) == "deque([2, 1], maxlen=2)" and f"{b}" == "deque([2, 1], maxlen=2)"
assert repr(deque([1, "a", (2,)])) == "deque([1, 'a', (2,)])" and str(deque()) == "deque([])"
z = deque(maxlen=0)
z.append(1)
assert len(z) == 0 and repr(z) == "deque([], maxlen=0)"
e = collections.deque(maxlen=3)
assert e.maxlen == 3 and not e and len(e) == 0 and e == deque() and deque([1]) == deque([1], maxlen=5)
assert deque([1, 2]) < deque([1, 3]) and deque([2]) > deque([1, 5]) and deque([1]) <= deque([1])
t = 0
for x in d:
    t += x
assert t == 8
u = ()
for x in reversed(d):
    u = u + (x,)
assert u == (5, 1, 2)
for k, x in enumerate(d):
    d[k] = x * 2
assert list(d) == [4, 2, 10]
assert sorted(deque([3, 1])) == [1, 3] and sum(d) == 16 and max(d) == 10 and min(d) == 2
assert [x + 1 for x in d] == [5, 3, 11] and tuple(d) == (4, 2, 10) and list(zip(d, d))[0] == (4, 4)
assert list(deque("ab")) == ["a", "b"] and list(deque({1: 2})) == [1] and list(deque(range(3))) == [0, 1, 2]
assert list(deque([1], 2)) == [1] and deque(iterable=[1], maxlen=1).maxlen == 1
assert isinstance(d, deque) and not isinstance([1], deque)
p, q, r = d
f, *rest = d
assert (p, q, r) == (4, 2, 10) and f == 4 and rest == [2, 10]
assert "-".join(deque(["a", "b"])) == "a-b"
assert list(deque([1, 2], maxlen=3) + deque([3, 4])) == [2, 3, 4] and list(deque([1]) * 2) == [1, 1]
d.clear()
assert len(d) == 0 and d == deque() and not d
bx = Box()
bx.items.append(1)
by = Box()
assert by.items == deque() and len(bx.items) == 1 and by.items is not bx.items
'''


def test_single_thread_values_are_cpythons() -> None:
    r = python3(VALUES)
    assert r.returncode == 0, r.stderr
    assert movers.check(source=VALUES).verdict == "ok"
    assert movers.check(source=VALUES, granularity="statement").verdict == "ok"


@pytest.mark.parametrize("old, new", [
    ("assert list(b) == [3, 4]", "assert list(b) == [2, 3, 4]"),  # maxlen drops from the other end
    ("assert list(b) == [9, 3]", "assert list(b) == [9, 3, 4]"),
    ('"deque([2, 1], maxlen=2)" and f"', '"deque([2, 1])" and f"'),
    ("and d != [-1, 11, 1, 2]", "and d == [-1, 11, 1, 2]"),  # a deque is no list
    ("assert list(d) == [2, -1, 11, 1]", "assert list(d) == [11, 1, 2, -1]"),  # rotate() goes right
    ("assert t == 8", "assert t == 9"),
    ("assert u == (5, 1, 2)", "assert u == (2, 1, 5)"),
    ("(p, q, r) == (4, 2, 10)", "(p, q, r) == (4, 10, 2)"),
    ('"-".join(deque(["a", "b"])) == "a-b"', '"-".join(deque(["a", "b"])) == "b-a"'),
])
def test_the_values_are_checked(old: str, new: str) -> None:
    # Twins of the test above: each wrong expectation fails under python3 and is a violation here.
    assert old in VALUES
    src = VALUES.replace(old, new)
    assert python3(src).returncode != 0
    assert movers.check(source=src).verdict == "violation"


@pytest.mark.parametrize("body, exc, message", [
    ("d = deque()\nd.pop()\n", "IndexError", "pop from an empty deque"),
    ("d = deque()\nd.popleft()\n", "IndexError", "pop from an empty deque"),
    ("d = deque([1])\nx = d[1]\n", "IndexError", "deque index out of range"),
    ("d = deque([1])\nd[-2] = 0\n", "IndexError", "deque index out of range"),
    ("d = deque([1, 2])\ndel d[2]\n", "IndexError", "deque index out of range"),
    ("d = deque([1])\nx = d['a']\n", "TypeError", "sequence index must be integer, not 'str'"),
    ("d = deque([1])\nd.remove(2)\n", "ValueError", "2 is not in deque"),
    ("d = deque([1])\nx = d.index(2)\n", "ValueError", "2 is not in deque"),
    ("d = deque(maxlen=-1)\n", "ValueError", "maxlen must be non-negative"),
    ("d = deque(5)\n", "TypeError", "'int' object is not iterable"),
    ("d = deque([1], maxlen=1)\nd.insert(0, 2)\n", "IndexError", "deque already at its maximum size"),
    ("d = deque([1])\nd.pop(0)\n", "TypeError", "deque.pop() takes no arguments (1 given)"),
    ("d = deque([1])\nx = d.index()\n", "TypeError", "index() takes at least 1 argument (0 given)"),
    ("d = deque([1, 2, 3])\nx = d.index(1, 1)\n", "ValueError", "1 is not in deque"),
    ("x = {deque(): 1}\n", "TypeError", "unhashable type: 'collections.deque'"),
    ("d = deque([1])\nd.maxlen = 3\n", "AttributeError",
     "attribute 'maxlen' of 'collections.deque' objects is not writable"),
    ("x = deque([1]) < [2]\n", "TypeError",
     "'<' not supported between instances of 'collections.deque' and 'list'"),
    ("x = deque([1]) + [2]\n", "TypeError", 'can only concatenate deque (not "list") to deque'),
    ("d = deque([1])\nd.rotate('a')\n", "TypeError", "'str' object cannot be interpreted as an integer"),
    ("d = deque([1, 2])\nx = d[0:1]\n", "TypeError", "sequence index must be integer, not 'slice'"),
    # An iterator fails once the deque was mutated, even after its last item, even by rotate(0).
    ("d = deque([1, 2])\nfor x in d:\n    if x == 2:\n        d.append(3)\n", "RuntimeError",
     "deque mutated during iteration"),
    ("d = deque([1, 2])\nfor x in d:\n    d.rotate(0)\n", "RuntimeError", "deque mutated during iteration"),
    ("d = deque([1, 2])\nfor x in reversed(d):\n    d.popleft()\n", "RuntimeError",
     "deque mutated during iteration"),
])
def test_runtime_errors_are_cpythons(body: str, exc: str, message: str) -> None:
    src = "from collections import deque\n" + body
    r = python3(src)
    assert r.stderr.strip().splitlines()[-1] == f"{exc}: {message}", r.stderr
    res = movers.check(source=src)
    assert res.verdict == "violation"
    assert any(message in v.message for v in res.violations), [v.message for v in res.violations]


@pytest.mark.parametrize("change", [
    "d[0] = 5", "d.reverse()", "x = d.count(1)", "e = d.copy()", "d.extend([])", "d.clear()\n    d.extend([1, 2])",
])
def test_what_does_not_mutate_for_an_iterator_is_cpythons(change: str) -> None:
    # d[i] = v, reverse() and the reading methods leave CPython's mutation count alone; an empty extend adds
    # nothing. (clear() then extend() does mutate: the loop fails; the twin of the others.)
    src = f"from collections import deque\nd = deque([1, 2])\nfor x in d:\n    {change}\n"
    ok = python3(src).returncode == 0
    assert ok == ("clear" not in change)
    assert movers.check(source=src).verdict == ("ok" if ok else "violation")


@pytest.mark.parametrize("imports, name", [
    ("from collections import deque as dq", "dq"), ("import collections", "collections.deque"),
    ("import collections as c", "c.deque"), ("from collections import deque", "deque"),
])
def test_every_way_of_importing_deque(imports: str, name: str) -> None:
    src = f"{imports}\nd = {name}([1], maxlen=2)\nd.appendleft(0)\nd.appendleft(5)\nassert list(d) == [5, 0]\n"
    assert python3(src).returncode == 0
    assert movers.check(source=src).verdict == "ok"
    assert movers.check(source=src.replace("[5, 0]", "[5, 0, 1]")).verdict == "violation"


def test_iterating_after_a_mutation_is_fine() -> None:
    # A new iterator after a mutation sees the deque as it is; the token of the old one is dropped.
    src = program("""
        from collections import deque
        d = deque([1])
        for x in d:
            pass
        d.append(2)
        n = 0
        for x in d:
            n += x
        for x in d:
            n += x
        assert n == 6
    """)
    assert python3(src).returncode == 0
    assert movers.check(source=src).verdict == "ok"


def test_a_deque_method_as_a_value_is_refused_with_what_to_write() -> None:
    src = "from collections import deque\nd = deque([1])\nf = d.pop\nx = f()\n"
    assert python3(src).returncode == 0
    res = movers.check(source=src)
    assert "wrap the call in a lambda: lambda: d.pop()" in res.violations[0].message
    assert movers.check(source=src.replace("f = d.pop", "f = lambda: d.pop()")).verdict == "ok"


def test_unsupported_is_refused_with_a_message() -> None:
    with pytest.raises(ModelSyntaxError, match="deque.. got an unexpected keyword argument 'size'"):
        movers.load(source="from collections import deque\nd = deque([], size=2)\n")
    with pytest.raises(ModelSyntaxError, match="deque.. takes at most 2 arguments"):
        movers.load(source="from collections import deque\nd = deque([], 2, 3)\n")


# -- threads ------------------------------------------------------------------------------------------------------

WORK_STEALING = program("""
    import threading
    from collections import deque

    tasks = deque([1, 2, 3])
    results = []


    def owner():
        while True:
            try:
                t = tasks.pop()
            except IndexError:
                return
            results.append(t * 10)


    def thief():
        while True:
            try:
                t = tasks.popleft()
            except IndexError:
                return
            results.append(t * 10)


    a = threading.Thread(target=owner)
    b = threading.Thread(target=thief)
    a.start()
    b.start()
    a.join()
    b.join()
    assert sorted(results) == [10, 20, 30], results
""")
# The bug twin: check, then pop; the other thread may take the last task in between.
CHECK_THEN_POP = WORK_STEALING
for _end in ("pop", "popleft"):
    CHECK_THEN_POP = CHECK_THEN_POP.replace(
        f"        try:\n            t = tasks.{_end}()\n        except IndexError:\n            return",
        f"        if not tasks:\n            return\n        t = tasks.{_end}()")
assert CHECK_THEN_POP.count("if not tasks") == 2

PRODUCER_CONSUMER = program("""
    import threading
    from collections import deque

    items = deque(maxlen=2)
    cv = threading.Condition()
    got = []


    def producer():
        for i in range(3):
            with cv:
                while len(items) == items.maxlen:
                    cv.wait()
                items.append(i)
                cv.notify_all()


    def consumer():
        for _ in range(3):
            with cv:
                while not items:
                    cv.wait()
                got.append(items.popleft())
                cv.notify_all()


    p = threading.Thread(target=producer)
    c = threading.Thread(target=consumer)
    p.start()
    c.start()
    p.join()
    c.join()
    assert got == [0, 1, 2], got
""")
# The bug twin: the producer does not wait for room, the bounded deque silently drops the oldest item, and the
# consumer waits for ever for its third.
NO_ROOM_CHECK = PRODUCER_CONSUMER.replace("""            while len(items) == items.maxlen:
                cv.wait()
""", "")
assert NO_ROOM_CHECK != PRODUCER_CONSUMER

ITERATE = program("""
    import threading
    from collections import deque

    d = deque([1, 2])
    total = []


    def reader():
        for x in SOURCE:
            total.append(x)


    def writer():
        d.append(3)


    r = threading.Thread(target=reader)
    w = threading.Thread(target=writer)
    r.start()
    w.start()
    r.join()
    w.join()
    assert sum(total) in (3, 6)
""")


@pytest.mark.parametrize("src, verdict, kind", [
    (WORK_STEALING, "ok", None),
    (CHECK_THEN_POP, "violation", "runtime-error"),
    (PRODUCER_CONSUMER, "ok", None),
    (NO_ROOM_CHECK, "violation", "deadlock"),
    (ITERATE.replace("SOURCE", "list(d)"), "ok", None),  # a copy, made atomically
    (ITERATE.replace("SOURCE", "d"), "violation", "runtime-error"),  # the append may come mid-loop
], ids=["work-stealing", "check-then-pop", "producer-consumer", "no-room-check", "iterate-copy", "iterate"])
def test_reductions_agree_with_none(src: str, verdict: str, kind: str | None) -> None:
    results = run_differential(src, ALL, max_states=50_000)
    assert results["none"].verdict == verdict
    for r in results.values():
        assert r.verdict == verdict, r
        if kind:
            assert r.violations[0].kind == kind
    if kind != "deadlock":  # CPython's one schedule is a lucky one for the twins (or hangs)
        assert python3(src).returncode == 0


def test_the_check_then_pop_is_cpythons_index_error() -> None:
    r = movers.check(CHECK_THEN_POP, reduction="none")
    assert any("pop from an empty deque" in v.message for v in r.violations)
    r = movers.check(ITERATE.replace("SOURCE", "d"), reduction="none")
    assert any("deque mutated during iteration" in v.message for v in r.violations)


LOST_UPDATE = program("""
    import threading
    from collections import deque

    d = deque([0])


    def w():
        d[0] = d[0] + 1


    a = threading.Thread(target=w)
    b = threading.Thread(target=w)
    a.start()
    b.start()
    a.join()
    b.join()
    assert d[0] == 2
""")


def test_each_operation_is_one_access() -> None:
    # d[0] = d[0] + 1 is a read and a write, as in CPython; one step at statement granularity.
    assert movers.check(LOST_UPDATE, granularity="statement").verdict == "ok"
    results = run_differential(LOST_UPDATE, ALL)
    assert results["none"].verdict == "violation"
    # d.append(d.popleft()) is two accesses too: another thread may see the deque between them.
    src = LOST_UPDATE.replace("d = deque([0])", "d = deque([1, 2])").replace(
        "    d[0] = d[0] + 1", "    d.append(d.popleft())").replace("assert d[0] == 2", "assert list(d) == [1, 2]")
    assert movers.check(src, granularity="statement").verdict == "ok"
    seen = movers.check(src.replace("assert list(d) == [1, 2]", "assert len(d) == 2"))
    assert seen.verdict == "ok"
    results = run_differential(src.replace("    d.append(d.popleft())", "    x = d.popleft()\n    assert len(d) == 1\n"
                                           "    d.append(x)"), ALL)
    assert results["none"].verdict == "violation"


# -- the reductions see a deque's accesses ------------------------------------------------------------------------

# An object handed from one thread to another through a deque: the receiver's update of its field races with
# the sender's, which only the escape analysis's flows through the deque's elements reveal.
HANDOFF = program("""
    import threading
    from collections import deque


    class Job:
        def __init__(self):
            self.n = 0


    d = deque()
    done = []


    def sender():
        job = Job()
        PUT
        job.n = job.n + 1


    def receiver():
        while True:
            try:
                job = TAKE
            except IndexError:
                continue
            job.n = job.n + 1
            done.append(job)
            return


    s = threading.Thread(target=sender)
    r = threading.Thread(target=receiver)
    s.start()
    r.start()
    s.join()
    r.join()
    assert len(d) == 0 and done[0].n == 2
""")


@pytest.mark.parametrize("put, take", [
    ("d.append(job)", "d.popleft()"),
    ("d.appendleft(job)", "d.pop()"),
    ("d.extend([job])", "d[0]\n            d.clear()"),
    ("d.extendleft((job,))", "d[-1]\n            d.remove(job)"),
    ("d.insert(0, job)", "d.copy().pop()\n            d.clear()"),
    ("e = deque([job], maxlen=1)\n    d.extend(e)", "list(d)[0]\n            del d[0]"),
])
def test_an_object_handed_over_through_a_deque_races(put: str, take: str) -> None:
    src = HANDOFF.replace("PUT", put).replace("TAKE", take)
    results = run_differential(src, ALL, max_states=50_000)
    assert results["none"].verdict == "violation"
    assert all(r.verdict == "violation" and r.violations[0].kind == "assertion" for r in results.values())
    assert all_uncovered(movers.load(source=src)) == []
    # The twin: the sender's update before it hands the job over is no race.
    fixed = src.replace(f"    {put}\n    job.n = job.n + 1", f"    job.n = job.n + 1\n    {put}")
    assert fixed != src
    assert run_differential(fixed, ALL, max_states=50_000)["none"].verdict == "ok"


INVARIANT = program("""
    from movers.lang import *
    from collections import deque

    d = deque()

    @invariant
    def small():
        return len(d) <= 1

    def w(i):
        x = 0
        x = x + 1
        d.append(i)
        x = x + 1
        d.popleft()

    Thread(target=w, args=(1,)).start()
    Thread(target=w, args=(2,)).start()
""")


def test_an_invariant_over_a_deque_is_seen_by_every_reduction() -> None:
    results = run_differential(INVARIANT, ALL)
    assert results["none"].verdict == "violation"


def test_every_access_is_in_the_footprints() -> None:
    for src in (WORK_STEALING, CHECK_THEN_POP, PRODUCER_CONSUMER, ITERATE.replace("SOURCE", "d"),
                ITERATE.replace("SOURCE", "reversed(d)"), LOST_UPDATE, INVARIANT):
        assert all_uncovered(movers.load(source=src)) == []


def test_a_deque_holding_objects_is_canonical() -> None:
    # Two threads each append a new object: the heap's numbering depends on who allocated first, the states
    # do not (the canonical walk follows a deque's elements), so every reduction stores no more states.
    src = program("""
        import threading
        from collections import deque


        class C:
            pass


        d = deque(maxlen=3)


        def w():
            d.appendleft(C())


        a = threading.Thread(target=w)
        b = threading.Thread(target=w)
        a.start()
        b.start()
        a.join()
        b.join()
        assert d[0] is not d[1]
    """)
    assert run_differential(src, ALL)["none"].verdict == "ok"


def test_canonical_heap_walks_a_deques_elements_and_token() -> None:
    c = ClassInfo("C", ["v"])
    c.finish()
    dc = deques.deque_class(1)
    # deque([C(1), C(2)]) with an iterator's token, its objects numbered in two orders.
    s1 = ((ref(0),), ((dc, None, None, ref(3), box(ref(1)), box(ref(2))), (c, None, 1), (c, None, 2),
                      (deques.TOKEN, None)), ())
    s2 = ((ref(0),), ((dc, None, None, ref(1), box(ref(3)), box(ref(2))), (deques.TOKEN, None), (c, None, 2),
                      (c, None, 1)), ())
    assert s1 != s2
    assert canonical(s1) == canonical(s2)
    assert canonical(s2)[1][1] == (deques.TOKEN, None)  # the token comes first, then the elements in order
    assert canonical(s2)[1][2] == (c, None, 1)


def test_the_trace_shows_a_deque() -> None:
    v = movers.check(LOST_UPDATE).violations[0]
    assert v.values == {"d[0]": "1"}  # the report reads a deque's item as a list's
    assert v.state["globals"]["d"] == "deque([1])"


def _random_model(rng: random.Random) -> str:
    """Two threads, each a few random deque operations on a shared bounded deque; the main thread checks a
    random claim after joining them (a pop of an empty deque, a mutation during a loop are violations too)."""
    ops = ["d.append({k})", "d.appendleft({k})", "x = d.pop()", "x = d.popleft()", "x = len(d)", "x = {k} in d",
           "d.rotate({k})", "d.extend(({k}, {k}))", "d.extendleft(({k},))", "x = d.count({k})", "d.clear()",
           "d[0] = {k}", "x = d[-1]", "for y in d:\n    x = y", "if d:\n    d.remove(d[0])"]
    bodies = []
    for _ in range(2):
        lines = [rng.choice(ops).format(k=rng.randrange(3)) for _ in range(rng.randrange(1, 4))]
        bodies.append("\n".join("    " + ln.replace("\n", "\n    ") for ln in lines))
    maxlen = rng.choice(["None", "2", "3"])
    return "\n".join([
        "import threading", "from collections import deque", "", f"d = deque([0, 1], maxlen={maxlen})", "", "",
        "def w1():", "    x = 0", bodies[0], "", "", "def w2():", "    x = 0", bodies[1], "", "",
        "a = threading.Thread(target=w1)", "b = threading.Thread(target=w2)", "a.start()", "b.start()",
        "a.join()", "b.join()", f"assert len(d) != {rng.randrange(4)} or {rng.randrange(3)} in d", ""])


@pytest.mark.parametrize("seed", range(12))
def test_random_deque_models_reductions_agree(seed: int) -> None:
    src = _random_model(random.Random(seed))
    run_differential(src, ALL, compare_kinds=False)
    assert all_uncovered(movers.load(source=src)) == []


def test_movers_lang_exports_deque_for_cpython() -> None:
    # A movers.lang model may use deque without importing collections, and still run under python3 (the shim
    # exports CPython's deque, as it does defaultdict).
    src = ("from movers.lang import *\nd = deque([1, 2], maxlen=2)\nd.append(3)\nassert list(d) == [2, 3]\n"
           "assert repr(d) == 'deque([2, 3], maxlen=2)'\n")
    r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=60,
                       env={"PYTHONPATH": str(ROOT / "src")})
    assert r.returncode == 0, r.stderr
    assert movers.check(source=src).verdict == "ok"


@pytest.mark.parametrize("granularity", ["access", "statement"])
@pytest.mark.parametrize("body", [
    "d = deque([1])\nd += [2]\n", "def f():\n    d = deque([1])\n    d += [2]\n\n\nf()\n"])
def test_in_place_concatenation_is_refused_with_what_to_write(body: str, granularity: str) -> None:
    # CPython extends the deque in place (the same object); movers says so rather than rebinding a copy.
    src = "from collections import deque\n" + body
    assert python3(src).returncode == 0
    res = movers.check(source=src, granularity=granularity)
    assert "'+=' on a deque (in place) is not supported yet; write d.extend(xs)" in res.violations[0].message
    assert movers.check(source=src.replace("d += [2]", "d.extend([2])"), granularity=granularity).verdict == "ok"


def test_print_does_not_hide_a_deque_mutation() -> None:
    # print() is not evaluated by movers: a mutation in its arguments would be lost, so it is refused.
    with pytest.raises(ModelSyntaxError, match=r"call d.popleft\(\) in a statement of its own"):
        movers.load(source="from collections import deque\nd = deque([1])\nprint(d.popleft())\n")


# -- random single-thread programs agree with python3 ---------------------------------------------------------------

_OPS = ["d.append({k})", "d.appendleft({k})", "log.append(d.pop())", "log.append(d.popleft())",
        "d.extend([{k}, {j}])", "d.extendleft(({k}, {j}))", "d.rotate({s})", "d.remove({k})",
        "log.append(d.count({k}))", "log.append(d.index({k}))", "d.insert({s}, {k})", "d.reverse()",
        "log.append(d[{s}])", "d[{s}] = {k}", "del d[{s}]", "log.append(len(d))", "log.append({k} in d)",
        "d.clear()", "log.append(list(d.copy()))", "log.append(repr(d))", "log.append(d == deque([{k}, {j}]))",
        "for x in d:\n        log.append(x)\n        INNER"]
_INNER = ["d.append({k})", "d[0] = {k}", "d.reverse()", "log.append(x)"]


def _random_program(rng: random.Random) -> str:
    """A few random deque operations, each in a ``try`` that logs the exception CPython raises."""
    lines = ["from collections import deque",
             f"d = deque([{rng.randrange(3)}, {rng.randrange(3)}], maxlen={rng.choice(['None', '1', '2', '3'])})",
             "log = []"]
    for _ in range(rng.randrange(6, 14)):
        op = rng.choice(_OPS).replace("INNER", rng.choice(_INNER))
        op = op.format(k=rng.randrange(4), j=rng.randrange(4), s=rng.randrange(-3, 3)).replace("{k}", "1")
        lines += ["try:", "    " + op, "except IndexError:", "    log.append('I')", "except ValueError:",
                  "    log.append('V')", "except RuntimeError:", "    log.append('R')"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(20))
def test_random_programs_agree_with_python3(seed: int) -> None:
    src = _random_program(random.Random(seed))
    r = python3(src + "print(repr(d))\nprint(repr(log))\n")
    assert r.returncode == 0, r.stderr
    shown, log = r.stdout.strip().splitlines()
    checked = src + f"assert repr(d) == {shown!r}, repr(d)\nassert log == {log}, log\n"
    res = movers.check(source=checked)
    assert res.verdict == "ok", (checked, [v.message for v in res.violations], res.error)
    wrong = src + f"assert log != {log}\n"  # the twin: the log is really compared
    assert movers.check(source=wrong).verdict == "violation"
