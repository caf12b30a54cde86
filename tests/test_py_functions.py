"""Functions and classes as Python developers write them (issue 24): keyword arguments and defaults,
lambdas and nested functions (closures) as values, callbacks and thread targets, @dataclass classes,
isinstance and tuple unpacking. Each program checks ok and agrees with CPython where it runs alone; each bug
twin is found under none and under every reduction (tests/differential.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from differential import run_differential
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st
from hypothesis.strategies import DrawFn
from naive_explorer import naive_explore
from strategies import models

import movers
from movers.reduce import REDUCTIONS

SRC = str(Path(__file__).resolve().parents[1] / "src")


def cpython(src: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``src`` under python3 (movers.lang importable, for the models that use its declarations)."""
    f = tmp_path / "model.py"
    f.write_text(src)
    env = dict(os.environ, PYTHONPATH=SRC)
    return subprocess.run([sys.executable, str(f)], capture_output=True, text=True, env=env, timeout=60)


def agree(src: str, tmp_path: Path, verdict: str = "ok") -> None:
    """movers gives ``verdict``; CPython runs the single-threaded ``src`` without an error iff it is ok."""
    r = movers.check(src)
    assert r.verdict == verdict, (r.error, r.violations)
    p = cpython(src, tmp_path)
    assert (p.returncode == 0) == (verdict == "ok"), p.stderr


def every_reduction(src: str, verdict: str) -> None:
    res = run_differential(src, list(REDUCTIONS), max_states=50000)
    assert res["none"].verdict == verdict, (res["none"].error, res["none"].violations)
    for name, r in res.items():
        assert r.verdict in (verdict, "error") if name != "none" else True


# -- keyword arguments and defaults ------------------------------------------------------------------------------

KEYWORDS = textwrap.dedent("""\
    class Account:
        def __init__(self, owner, balance=0, *, limit=-5):
            self.owner = owner
            self.balance = balance
            self.limit = limit

        def deposit(self, amount=1, note=None):
            self.balance += amount
            return self.balance

    def f(a, b=1, *, c=2):
        return a * 100 + b * 10 + c

    def g(x, y=(1, 2), z=True):
        return x + y[0] + y[1] + (1 if z else 0)

    r1 = f(1)
    r2 = f(1, 2)
    r3 = f(1, c=5, b=3)
    r4 = f(a=4)
    r5 = g(1, z=False)
    acc = Account(7, limit=-9)
    r6 = acc.deposit()
    r7 = acc.deposit(amount=5)
    r8 = acc.deposit(3, note=True)
    assert (r1, r2, r3, r4, r5, r6, r7, r8) == EXPECTED
    assert acc.limit == -9 and acc.owner == 7
    """)


def test_keywords_and_defaults_agree_with_cpython(tmp_path: Path) -> None:
    agree(KEYWORDS.replace("EXPECTED", "(112, 122, 135, 412, 4, 1, 6, 9)"), tmp_path)
    agree(KEYWORDS.replace("EXPECTED", "(112, 122, 135, 412, 5, 1, 6, 9)"), tmp_path, "violation")


@pytest.mark.parametrize("src, where, message", [
    ("def f(a, b=1):\n    return a\nx = f(1, 2, 3)\n", "3:5", "f() takes 2 positional arguments but 3 were given"),
    ("def f(a, b=1):\n    return a\nx = f(b=2)\n", "3:5", "f() missing 1 required positional argument: 'a'"),
    ("def f(a, b=1):\n    return a\nx = f(1, a=2)\n", "3:5", "f() got multiple values for argument 'a'"),
    ("def f(a, *, k=1):\n    return a\nx = f(1, z=2)\n", "3:5", "f() got an unexpected keyword argument 'z'"),
    ("class C:\n    def __init__(self, a):\n        self.a = a\nc = C(1, 2)\n", "4:5",
     "C.__init__() takes 2 positional arguments but 3 were given"),
    ("def f(a, b=[]):\n    return a\n", "1:12", "mutable default value for 'b'"),
    ("N = 1\ndef f(a, b=N):\n    return a\n", "2:12", "must be a constant"),
    ("t = (1,)\nx = ValueError(*t)\n", "2:16", "*args in a call of a built-in"),
    ("def main():\n    fs = []\n    for i in range(3):\n        fs.append(lambda: i)\n", "4:19",
     "the closure reads 'i', which changes after the closure is made"),
    ("def main():\n    n = 0\n    def w():\n        return n\n    n = 1\n", "3:5", "the closure reads 'n'"),
    ("def main():\n    def w():\n        return n\n    n = 1\n", "2:5", "assigned only after the closure is made"),
    ("class C:\n    count = 0\n", "2:5", "class attributes are not supported"),
    ("def f():\n    nonlocal x\n    x = 1\n", "2:5", "nonlocal is only allowed in a nested function"),
    ("def f():\n    def g():\n        nonlocal zz\n        zz = 1\n", "2:5", "no binding for nonlocal 'zz' found"),
    ("def main():\n    def f(n):\n        return f(n - 1) if n else 0\n    return f(3)\n", "2:5",
     "the nested function 'f' calls itself"),
    ("from dataclasses import dataclass\n@dataclass(order=True)\nclass P:\n    x: int\n", "2:2",
     "@dataclass(order=True) is not supported"),
    ("from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int = 0\n    y: int\n", "3:1",
     "non-default argument 'y' follows default argument"),
])
def test_refused_forms(src: str, where: str, message: str, tmp_path: Path) -> None:
    r = movers.check(src)
    assert r.verdict == "error" and message in (r.error or ""), r.error
    assert (r.error or "").split(":")[1:3] == where.split(":"), r.error
    f = tmp_path / "m.py"
    f.write_text(src)
    p = subprocess.run([sys.executable, "-m", "movers", "check", str(f)], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=SRC), timeout=60)
    assert p.returncode == 2 and f"{f}:{where}:" in p.stderr + p.stdout and "Traceback" not in p.stderr


def test_method_keywords_bound_by_the_receivers_class() -> None:
    src = textwrap.dedent("""\
        from movers.lang import *
        class A:
            def m(self, x, y=1):
                return x * 10 + y
        class B:
            def m(self, y, x=2):
                return x * 10 + y
        def main():
            objs = [A(), B()]
            got = objs[0].m(y=3, x=4) * 1000 + objs[1].m(y=3, x=4)
            assert got == 43043
            assert objs[1].m(5) == 25
            objs[0].m(1, 2, 3)
        Thread(target=main).start()
        """)
    r = movers.check(src)
    assert r.verdict == "violation"
    assert "A.m() takes 3 positional arguments but 4 were given" in r.violations[0].message


# -- lambdas, nested functions, function values ---------------------------------------------------------------------

CLOSURES = textwrap.dedent("""\
    from movers.lang import *

    count = 0
    lock = Lock()

    def work(k, step=1):
        global count
        with lock:
            count += k * step

    def make(n):
        def worker():
            work(n)
        return worker

    def main():
        ts = [Thread(target=lambda: work(1)), Thread(target=make(2)), Thread(target=work, args=(3,))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        f = make(10)
        f()
        g = lambda a, b=5: a + b
        assert g(1) == 6 and g(1, b=2) == 3
        assert count == 16

    Thread(target=main).start()
    """)


def test_closures_as_thread_targets() -> None:
    every_reduction(CLOSURES, "ok")
    bug = CLOSURES.replace("    with lock:\n        count += k * step", "    c = count\n    count = c + k * step")
    assert bug != CLOSURES
    every_reduction(bug, "violation")


CAPTURED_OBJECT = textwrap.dedent("""\
    from movers.lang import *

    class Box:
        def __init__(self):
            self.n = 0

    def main():
        box = Box()
        items = [0]
        m = Lock()
        def bump(k=1):
            with m:
                v = box.n
                box.n = v + k
            items.append(k)
        t1 = Thread(target=bump)
        t2 = Thread(target=lambda: bump(2))
        t1.start()
        t2.start()
        t1.join()
        t2.join()
        assert box.n == 3
        assert len(items) == 3

    Thread(target=main).start()
    """)


def test_a_closure_shares_the_objects_it_captures() -> None:
    """The captured object is shared by the threads through the closures: every escape analysis sees it."""
    every_reduction(CAPTURED_OBJECT, "ok")
    bug = CAPTURED_OBJECT.replace("        with m:\n            v = box.n\n            box.n = v + k",
                                  "        v = box.n\n        box.n = v + k")
    assert bug != CAPTURED_OBJECT
    every_reduction(bug, "violation")


CALLBACKS = textwrap.dedent("""\
    def double(x):
        return 2 * x

    def offset(k):
        return lambda x, y=0: x + k + y

    def apply_all(fs, v):
        total = 0
        for f in fs:
            total += f(v)
        return total

    handlers = [double, offset(3), lambda x: x * x]
    r = apply_all(handlers, 4)
    h = handlers[1]
    s = h(1, y=10)
    same = handlers[0] == double
    assert (r, s, same) == EXPECTED
    """)


def test_function_values_as_callbacks_agree_with_cpython(tmp_path: Path) -> None:
    agree(CALLBACKS.replace("EXPECTED", "(31, 14, True)"), tmp_path)
    agree(CALLBACKS.replace("EXPECTED", "(31, 14, False)"), tmp_path, "violation")


def test_calling_a_value_that_is_not_a_function() -> None:
    r = movers.check("from movers.lang import *\ndef main():\n    f = 3\n    f()\nThread(target=main).start()\n")
    assert r.verdict == "violation" and "'int' object is not callable" in r.violations[0].message


# -- dataclasses -------------------------------------------------------------------------------------------------

DATACLASSES = textwrap.dedent("""\
    from dataclasses import dataclass, field


    @dataclass
    class Point:
        x: int
        y: int = 0


    @dataclass
    class Point3(Point):
        z: int = 7


    @dataclass
    class Bag:
        n: int
        items: list = field(default_factory=list)


    @dataclass(frozen=True)
    class Key:
        a: int
        b: int = 2


    class Plain:
        def __init__(self, x):
            self.x = x


    p = Point(1)
    q = Point(1, y=0)
    r = Point(2, 3)
    b = Bag(1)
    b.items.append(5)
    c = Bag(1)
    c.items.append(5)
    k = Key(1)
    k2 = Key(1, 2)
    p3 = Point3(1, 0)
    eqs = (p == q, p == r, p != r, b == c, k == k2, Plain(1) == Plain(1), p3 == p, p3.z)
    assert eqs == EXPECTED
    """)


def test_dataclasses_agree_with_cpython(tmp_path: Path) -> None:
    agree(DATACLASSES.replace("EXPECTED", "(True, False, True, True, True, False, False, 7)"), tmp_path)
    agree(DATACLASSES.replace("EXPECTED", "(True, False, True, True, True, True, False, 7)"), tmp_path, "violation")


FROZEN = textwrap.dedent("""\
    from dataclasses import dataclass
    from movers.lang import *

    @dataclass(frozen=True)
    class Key:
        a: int

    def main():
        k = Key(1)
        k.a = 2

    Thread(target=main).start()
    """)


def test_frozen_dataclass_refuses_assignment(tmp_path: Path) -> None:
    r = movers.check(FROZEN)
    assert r.verdict == "violation" and "cannot assign to field 'a'" in r.violations[0].message
    assert "FrozenInstanceError: cannot assign to field 'a'" in cpython(FROZEN, tmp_path).stderr


SHARED_RECORDS = textwrap.dedent("""\
    from dataclasses import dataclass
    from movers.lang import *

    @dataclass
    class Pair:
        a: int
        b: int

    p = Pair(0, 0)
    r = Pair(1, 0)
    m = Lock()

    def writer():
        with m:
            p.a = 1
            p.b = 1

    def reader():
        with m:
            half = p == r
        assert not half

    t1 = Thread(target=writer)
    t2 = Thread(target=reader)
    t1.start()
    t2.start()
    """)


def test_dataclass_equality_reads_the_fields_under_every_reduction() -> None:
    """``p == r`` reads p's fields: without the writer's lock, one interleaving sees the pair half
    written, under every reduction (the comparison is an access to the fields, statically and dynamically)."""
    every_reduction(SHARED_RECORDS, "ok")
    bug = SHARED_RECORDS.replace("    with m:\n        p.a = 1\n        p.b = 1", "    p.a = 1\n    p.b = 1")
    assert bug != SHARED_RECORDS
    every_reduction(bug, "violation")


# -- isinstance and unpacking ------------------------------------------------------------------------------------

ISINSTANCE = textwrap.dedent("""\
    class A:
        pass

    class B(A):
        pass

    a = A()
    b = B()
    r = (isinstance(a, A), isinstance(b, A), isinstance(a, B), isinstance(1, int), isinstance(True, int),
         isinstance(1, bool), isinstance((1, 2), tuple), isinstance([1], list), isinstance(a, (B, int)))
    x, y = 1, 2
    x, y = y, x
    for i, (p, q) in ((0, (1, 2)), (1, (3, 4))):
        x = x + i * p * q
    assert (r, x, y) == EXPECTED
    """)


def test_isinstance_and_unpacking_agree_with_cpython(tmp_path: Path) -> None:
    agree(ISINSTANCE.replace("EXPECTED", "((True, True, False, True, True, False, True, True, False), 14, 1)"),
          tmp_path)
    agree(ISINSTANCE.replace("EXPECTED", "((True, True, True, True, True, False, True, True, False), 14, 1)"),
          tmp_path, "violation")


LAMBDA_DEFAULTS = textwrap.dedent("""\
    from movers.lang import *

    a = 0
    b = 0

    def setter():
        global a, b
        a = 1
        b = 1

    def main():
        f = lambda x=a, y=b: (x, y)
        v = f()
        assert v != (0, 1)

    t = Thread(target=setter)
    t.start()
    Thread(target=main).start()
    """)


def test_a_lambdas_defaults_are_accesses_in_pythons_order() -> None:
    """``lambda x=a, y=b: …`` reads a, then b, where it is made: two accesses, so a write can come between
    them (the lambda's body is not evaluated there)."""
    every_reduction(LAMBDA_DEFAULTS, "violation")
    every_reduction(LAMBDA_DEFAULTS.replace("v != (0, 1)", "v != (2, 0)"), "ok")


STARRED = textwrap.dedent("""\
    from movers.lang import *

    def split(t):
        first, *rest = t
        return first, rest

    def main():
        a, rest = split((1, 2, 3))
        *init, last = [4, 5, 6]
        x, *mid, z = (7, 8)
        rest.append(9)
        got = (a, rest == [2, 3, 9], init == [4, 5], last, mid == [], x, z)
        assert got == EXPECTED

    Thread(target=main).start()
    """)


def test_starred_unpacking_agrees_with_cpython(tmp_path: Path) -> None:
    agree(STARRED.replace("EXPECTED", "(1, True, True, 6, True, 7, 8)"), tmp_path)
    agree(STARRED.replace("EXPECTED", "(1, True, True, 6, False, 7, 8)"), tmp_path, "violation")


STARRED_GLOBALS = textwrap.dedent("""\
    from movers.lang import *

    a = 0
    rest = [0]
    t = (1, 2, 3)

    def reader():
        x = a
        y = len(rest)
        assert not (x == 1 and y == 1)

    def writer():
        global a, rest
        a, *rest = t

    Thread(target=reader).start()
    Thread(target=writer).start()
    """)


def test_starred_unpacking_stores_one_target_at_a_time() -> None:
    """``a, *rest = t`` writes a, then rest, as CPython's bytecode does: a reader can see one but not the other."""
    every_reduction(STARRED_GLOBALS, "violation")
    every_reduction(STARRED_GLOBALS.replace("y == 1)", "y == 3)"), "ok")


def test_refused_starred_forms() -> None:
    r = movers.check("def f():\n    *a, *b = (1, 2)\n")
    assert r.verdict == "error" and "multiple starred expressions" in (r.error or "")


def test_a_nested_defs_defaults_are_accesses_in_pythons_order() -> None:
    src = LAMBDA_DEFAULTS.replace("    f = lambda x=a, y=b: (x, y)\n", "    def f(x=a, y=b):\n        return (x, y)\n")
    assert src != LAMBDA_DEFAULTS
    every_reduction(src, "violation")
    every_reduction(src.replace("v != (0, 1)", "v != (2, 0)"), "ok")


# -- random models whose threads start through lambdas, closures and keyword arguments ----------------------------

_START = re.compile(r"^Thread\(target=(\w+)(?:, args=\((\d+),\))?\)\.start\(\)$", re.M)


@st.composite
def closure_models(draw: DrawFn) -> tuple[str, str]:
    """``(original, variant)``: a model of ``strategies.models()`` and the same model whose threads start
    through a lambda, a closure made by a function, or a lambda's default, calling the worker by keyword:
    the two mean the same, so they must get the same verdict."""
    src = draw(models(max_threads=3))
    forms = []

    def rewrite(m: re.Match[str]) -> str:
        fn, arg = m.group(1), m.group(2)
        call = f"{fn}(i={arg})" if arg is not None else f"{fn}()"
        form = draw(st.sampled_from(["lambda", "closure", "default"]))
        forms.append(form)
        if form == "lambda" or arg is None:
            return f"Thread(target=lambda: {call}).start()"
        if form == "closure":
            k = len(forms)
            return f"run_{k} = make_start({fn}, {arg})\nThread(target=run_{k}).start()"
        return f"Thread(target=lambda v={arg}: {fn}(i=v)).start()"

    variant = _START.sub(rewrite, src)
    helper = "def make_start(f, v):\n    def run():\n        f(i=v)\n    return run\n\n"
    head, _, starts = variant.rpartition("\n\n")
    return src, head + "\n\n" + helper + starts


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(closure_models())
def test_random_models_started_through_closures_agree(case: tuple[str, str]) -> None:
    original, variant = case
    note(variant)
    base = movers.check(original, max_states=20000)
    results = run_differential(variant, list(REDUCTIONS), max_states=20000, compare_kinds=False)
    r = results["none"]
    assume(base.verdict != "incomplete" and r.verdict != "incomplete")
    assert r.verdict == base.verdict, (r.error, base.violations, r.violations)
    naive = naive_explore(original, max_states=50000)
    assume(naive.complete)
    assert r.verdict == naive.verdict


FIELD_CALLBACKS = textwrap.dedent("""\
    from movers.lang import *

    class Button:
        def __init__(self, on_click):
            self.on_click = on_click
            self.clicks = 0

        def click(self, n):
            self.clicks += 1
            return self.on_click(n)

    def main():
        b = Button(lambda n: n * 3)
        r = b.click(2)
        b.on_click = lambda n: n + 100
        s = b.on_click(1)
        assert (r, s, b.clicks) == EXPECTED

    Thread(target=main).start()
    """)


def test_function_values_in_fields_agree_with_cpython(tmp_path: Path) -> None:
    agree(FIELD_CALLBACKS.replace("EXPECTED", "(6, 101, 1)"), tmp_path)
    agree(FIELD_CALLBACKS.replace("EXPECTED", "(6, 100, 1)"), tmp_path, "violation")


SHARED_CALLBACK = textwrap.dedent("""\
    from movers.lang import *

    class Holder:
        def __init__(self):
            self.cb = lambda v: v

    h = Holder()
    out = [0, 0]

    def swapper():
        h.cb = lambda v: v + 1

    def user(i):
        out[i] = h.cb(10)

    def main():
        t = Thread(target=swapper)
        u = Thread(target=user, args=(0,))
        t.start()
        u.start()
        t.join()
        u.join()
        assert out[0] == 11

    Thread(target=main).start()
    """)


def test_a_callback_swapped_by_another_thread() -> None:
    """Which function ``h.cb(10)`` calls depends on when it reads the field: found under every reduction."""
    every_reduction(SHARED_CALLBACK, "violation")
    every_reduction(SHARED_CALLBACK.replace("out[0] == 11", "out[0] == 10 or out[0] == 11"), "ok")


NONLOCAL = textwrap.dedent("""\
    from movers.lang import *

    def main():
        count = 0
        lock = Lock()

        def worker(k=1):
            nonlocal count
            with lock:
                count += k

        def peek():
            return count

        ts = [Thread(target=worker), Thread(target=lambda: worker(2))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        seen = peek()
        assert count == 3 and seen == 3

    Thread(target=main).start()
    """)


def test_nonlocal_variables_are_shared_cells() -> None:
    """``nonlocal count``: the function and its closures share the variable (a cell, as CPython's); a closure
    that only reads it sees its later values; unlocked, the lost update is found under every reduction."""
    every_reduction(NONLOCAL, "ok")
    bug = NONLOCAL.replace("        with lock:\n            count += k", "        count += k")
    assert bug != NONLOCAL
    every_reduction(bug, "violation")


NONLOCAL_VALUES = textwrap.dedent("""\
    def counter(start):
        n = start

        def bump(by=1):
            nonlocal n
            n += by
            return n

        def get():
            return n

        return bump, get

    bump, get = counter(10)
    a = bump()
    b = bump(by=5)
    c = get()

    def outer():
        x = 1

        def middle():
            def inner():
                nonlocal x
                x = x * 7
            inner()
            return x

        return middle() + x

    d = outer()
    assert (a, b, c, d) == EXPECTED
    """)


def test_nonlocal_agrees_with_cpython(tmp_path: Path) -> None:
    agree(NONLOCAL_VALUES.replace("EXPECTED", "(11, 16, 16, 14)"), tmp_path)
    agree(NONLOCAL_VALUES.replace("EXPECTED", "(11, 16, 10, 14)"), tmp_path, "violation")


# -- a default_factory field is a parameter with a default (CPython's dataclass) -----------------------------------

FACTORY = textwrap.dedent("""
    import threading
    from dataclasses import dataclass, field


    @dataclass
    class Inventory:
        stock: dict = field(default_factory=dict)
        lock: threading.Lock = field(default_factory=threading.Lock)
        n: int = 0


    given = Inventory({"apple": 1})
    fresh = Inventory()
    other = Inventory(n=3)
    assert given.stock == {"apple": 1} and fresh.stock == {} and other.n == 3
    assert fresh.stock is not other.stock and fresh.lock is not other.lock
    fresh.stock["pear"] = 2
    assert other.stock == {}, other.stock
    print(given.stock, fresh.stock, other.n)
""").lstrip()


def test_a_default_factory_field_may_be_passed_as_in_cpython(tmp_path: Path) -> None:
    r = movers.check(source=FACTORY)
    assert r.verdict == "ok", [(v.kind, v.message) for v in r.violations]
    path = tmp_path / "m.py"
    path.write_text(FACTORY)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60)
    assert out.stdout == "{'apple': 1} {'pear': 2} 3\n", out.stderr
    twin = FACTORY.replace('assert other.stock == {}, other.stock', 'assert other.stock == {"pear": 2}, other.stock')
    r = movers.check(source=twin)
    assert r.verdict == "violation" and "line 18): {} (assertion failed" in r.violations[0].message
