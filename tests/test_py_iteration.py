"""Iteration builtins, iterators in for loops, comprehensions (issue 24, item 2): values as CPython computes
them, a comprehension's element reads as separate accesses, refusals with their messages."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import run

import movers
from movers.reduce import REDUCTIONS

PRELUDE = "a = [3, 1, 2]\nt = (5, 4)\npairs = [(1, 2), (3, 4)]\nflags = [True, 0, 2]\n"

# Expressions whose values movers must compute as CPython does.
EXPRESSIONS = [
    "sum(a)", "sum(a, 10)", "sum(t, start=1)", "sum(range(5))", "sum(x * x for x in a)",
    "sum(range(2, 11, 3))", "sum(flags)", "sum(pairs, ())", "sum([(1,), (True, None)], start=(0,))",
    "sorted(a)", "sorted(a, reverse=True)", "sorted(pairs, reverse=True)", "sorted(t)", "sorted(range(3))",
    "sorted(x - 2 for x in a)", "sorted([True, 0, 2, False])",
    "list(a)", "list(t)", "list(range(4))", "list(range(5, 0, -2))", "list(enumerate(a))",
    "list(enumerate(t, start=7))", "list(zip(a, t))", "list(zip(a, a, range(9)))", "list(zip())", "list(zip(a))",
    "list(reversed(a))",
    "list(reversed(range(3)))", "list()", "tuple()",
    "tuple(a)", "tuple(range(3))", "tuple(x for x in a if x != 1)",
    "any(a)", "all(a)", "any(x > 2 for x in a)", "all(x > 0 for x in a)", "any([])", "all(())",
    "any(flags)", "all(flags)",
    "min(a)", "max(t)", "min(range(3, 9))", "max(x % 3 for x in a)", "min(pairs)", "max(pairs)",
    "len(t)", "len(range(10))", "len(range(1, 10, 4))",
    "[x * 2 for x in a]", "[x for x in a if x > 1]", "[x + y for x in a for y in t]",
    "[x + y for x in a if x > 1 for y in t if y < 5]", "[(i, v) for i, v in enumerate(a)]",
    "[p * q for p, q in pairs]", "[i + p + q for i, (p, q) in enumerate(pairs)]",
    "[x for x in range(4)]", "[[y for y in range(x)] for x in range(3)]", "[x for x in t]",
]


def python_value(expr: str) -> str:
    out = subprocess.run([sys.executable, "-c", PRELUDE + f"print(repr({expr}))"], capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def model(body: str, shared: bool = False) -> str:
    """``body`` as a thread's code; with ``shared``, some function writes the lists' elements, so that reading
    them is an access (the lowering cuts the comprehensions into loops, granularity.py)."""
    writer = "def unused():\n    a[0] = 3\n    pairs[0] = (0, 0)\n" if shared else ""
    return ("from movers.lang import *\n" + PRELUDE + writer + "\ndef main():\n"
            + textwrap.indent(textwrap.dedent(body), "    ") + "\nThread(target=main).start()\n")


@pytest.mark.parametrize(("granularity", "shared"), [("access", False), ("access", True), ("statement", True)])
@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_values_agree_with_cpython(expr: str, granularity: str, shared: bool) -> None:
    value = python_value(expr)
    ok = movers.check(model(f"v = {expr}\nassert v == {value}, v\n", shared), granularity=granularity)
    assert ok.verdict == "ok", (ok.error, [v.message for v in ok.violations])
    # The bug twin: the same value asserted to differ (so the assertion above can fail).
    bad = movers.check(model(f"v = {expr}\nassert v != {value}, v\n", shared), granularity=granularity)
    assert bad.verdict == "violation" and bad.violations[0].kind == "assertion", bad.error


FOR_LOOPS = """\
s = 0
for i, v in enumerate(a, start=1):
    s += i * v
for x, y in zip(a, t):
    s += x - y
for v in reversed(a):
    s = s * 2 + v
for i, (p, q) in enumerate(zip(a, a)):
    s += i + p * q
for i, (p, q) in enumerate(pairs):
    s += i * p + q
for v in t:
    s += v
for v in reversed(t):
    s = s * 3 - v
for i, v in enumerate(range(3)):
    s += i * v
for x, y, z in zip(a, t, range(10)):
    s += x * y * z
for x in zip():
    s += 1000
for x in reversed([]):
    s += 1000
for x in enumerate(()):
    s += 1000
for v in [x * x for x in a]:
    s += v
w = [2, 1]
while sum(x for x in w) > 0:
    for i, x in enumerate(w):
        if x > 0:
            w[i] = x - 1
            s += 2 * s + i
            break
"""


def test_for_loops_agree_with_cpython() -> None:
    out = subprocess.run([sys.executable, "-c", PRELUDE + FOR_LOOPS + "print(s)"], capture_output=True, text=True,
                         check=True)
    value = int(out.stdout)
    for shared in (False, True):
        assert movers.check(model(FOR_LOOPS + f"assert s == {value}, s\n", shared)).verdict == "ok"
        assert movers.check(model(FOR_LOOPS + f"assert s == {value} + 1, s\n", shared)).verdict == "violation"


def test_comprehension_variable_does_not_leak() -> None:
    src = """\
    from movers.lang import *
    x = 7
    def main():
        b = [x for x in range(3)]
        assert x == 7 and b == [0, 1, 2]
    Thread(target=main).start()
    """
    for g in ("access", "statement"):
        assert run(src, granularity=g).verdict == "ok"


def _all_reductions(src: str, expected: str) -> None:
    base = movers.check(src)
    assert base.verdict == expected, (base.error, [v.message for v in base.violations])
    for r in REDUCTIONS:
        res = movers.check(src, reduction=r)
        if res.verdict == "error":  # the reduction does not accept the model
            continue
        assert res.verdict == expected, (r, res.error)
        if expected == "violation":
            assert res.violations[0].kind == base.violations[0].kind


RACE = """\
from movers.lang import *
a = [1, 1]
lock = Lock()

def mover():
    with lock:
        a[0] -= 1
        a[1] += 1

def reader():
{read}
    assert total <= 2, total

Thread(target=mover).start()
Thread(target=reader).start()
"""


@pytest.mark.parametrize("read", ["    total = sum(x for x in a)", "    total = sum([x for x in a])",
                                  "    total = 0\n    for x in a:\n        total += x",
                                  "    total = sum(x for _, x in enumerate(a))",
                                  "    total = sum(x + y for x, y in zip(a, [0, 0]))",
                                  "    total = max(0, 0 if any(x > 5 for x in a) else sum([x for x in a]))"])
def test_comprehension_reads_each_element_in_its_own_step(read: str) -> None:
    # CPython reads a[0] before the mover's critical section and a[1] after it: 1 + 2.
    _all_reductions(RACE.format(read=read), "violation")
    locked = "    with lock:\n" + textwrap.indent(read, "    ")
    _all_reductions(RACE.format(read=locked), "ok")


def test_builtin_over_a_list_is_one_access() -> None:
    # sum(a) runs in C under the GIL: it sees the list before or after the mover's section, never between.
    _all_reductions(RACE.format(read="    total = sum(a)"), "ok")


def test_short_circuit_runs_the_comprehension_only_when_python_does() -> None:
    src = """\
    from movers.lang import *
    a = [1, 0]
    def writer():
        a[0] = 5
    def reader():
        ok = len(a) == 3 and [10 // x for x in a] == []
        assert not ok
        v = [10 // x for x in a] if len(a) == 3 else 0
        assert v == 0
    Thread(target=writer).start()
    Thread(target=reader).start()
    """
    for g in ("access", "statement"):
        r = run(src, granularity=g)  # 10 // 0 would be a runtime error if the comprehension ran
        assert r.verdict == "ok", [v.message for v in r.violations]
    r = run(src.replace("len(a) == 3 and", "len(a) == 2 and"))
    assert r.verdict == "violation" and "division" in r.violations[0].message, r.violations


def test_any_stops_at_the_deciding_item() -> None:
    src = """\
    from movers.lang import *
    a = [1, 0]
    def writer():
        a[1] = 3
    def reader():
        assert any(10 // x > 5 for x in a)
    Thread(target=writer).start()
    Thread(target=reader).start()
    """
    assert run(src).verdict == "ok"  # 10 // 0 is never evaluated: the first item decides


def test_for_over_enumerate_sees_an_append() -> None:
    src = """\
    from movers.lang import *
    a = [1]
    def appender():
        a.append(2)
    def reader():
        n = 0
        for i, v in enumerate(a):
            n += 1
        assert n == 1, n
    Thread(target=appender).start()
    Thread(target=reader).start()
    """
    _all_reductions(textwrap.dedent(src), "violation")


def test_reversed_reads_the_length_when_created() -> None:
    src = """\
    from movers.lang import *
    a = [1, 2]
    def popper():
        a.pop()
    def reader():
        s = 0
        for v in reversed(a):
            s += v
        assert s != {bad}, s
    Thread(target=popper).start()
    Thread(target=reader).start()
    """
    # listreverseiterator: created when a is [1, 2] (index 1), then the pop: index 1 is out of range, so it
    # stops at once (s == 0), a step apart from its creation. Or the pop first (1), or last (3).
    for bad in (0, 1, 3):
        _all_reductions(textwrap.dedent(src.replace("{bad}", str(bad))), "violation")
    for g in ("access", "statement"):
        r = run(src.replace("s != {bad}", "s in (0, 1, 3)"), granularity=g)
        assert r.verdict == "ok", [v.message for v in r.violations]


@pytest.mark.parametrize(("src", "needle"), [
    ("v = range(3)\n", "range() is only supported where it is consumed"),
    ("v = enumerate(a)\n", "enumerate() is only supported where it is consumed"),
    ("v = zip(a, a)\n", "zip() is only supported where it is consumed"),
    ("v = reversed(a)\n", "reversed() is only supported where it is consumed"),
    ("v = (x for x in a)\n", "a generator expression is only supported as the argument of"),
    ("v = sorted(a, key=abs)\n", "sorted(key=…) is not supported yet"),
    ("v = list(reversed(x for x in a))\n", "'generator' object is not reversible"),
    ("v = min()\n", "min expected at least 1 argument"),
])
def test_refused_with_message(tmp_path, src: str, needle: str) -> None:
    f = tmp_path / "model.py"
    f.write_text("a = [1, 2]\n" + src)
    p = subprocess.run([sys.executable, "-m", "movers", "check", str(f)], capture_output=True, text=True)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    assert "model.py:2:" in p.stderr and needle in p.stderr, p.stderr


@pytest.mark.parametrize(("expr", "exc"), [("sum([None])", "TypeError"), ("min([])", "ValueError"),
                                          ("sorted([None, 1])", "TypeError"), ("list(5)", "TypeError")])
def test_runtime_errors(expr: str, exc: str) -> None:
    r = movers.check(model(f"v = {expr}\n"))
    assert r.verdict == "violation" and r.violations[0].kind == "runtime-error"
    p = subprocess.run([sys.executable, "-c", f"{expr}"], capture_output=True, text=True)
    assert exc in p.stderr


CALLS = """\
from movers.lang import *
a = [1, 2]

def f(x):
    return x * 10

def main():
    b = [f(x) for x in a if f(x) > 10]
    assert b == [{expected}], b
    assert sum(f(x) for x in a) == 30 and any(f(x) == 20 for x in a)

Thread(target=main).start()
"""


def test_model_calls_in_a_comprehension_at_access_granularity() -> None:
    assert movers.check(CALLS.format(expected=20)).verdict == "ok"
    assert movers.check(CALLS.format(expected=30)).verdict == "violation"


def test_model_calls_in_a_comprehension_at_statement_granularity() -> None:
    # A loop of its own (lang/comprehensions.py), as at access granularity.
    assert movers.check(CALLS.format(expected=20), granularity="statement").verdict == "ok"
    assert movers.check(CALLS.format(expected=30), granularity="statement").verdict == "violation"


def test_module_level_comprehensions(tmp_path) -> None:
    src = ("from movers.lang import *\na = [i * i for i in range(4)]\nb = sorted(a, reverse=True)\n"
           "n = sum(x for x in a if x)\ni = 9\nc = [i for i in a]\nassert i == 9 and n == 14 and b == [9, 4, 1, 0]\n"
           "def f():\n    assert a[3] == 9 and len(c) == 4\nThread(target=f).start()\n")
    assert movers.check(src).verdict == "ok"
    assert movers.check(src.replace("n == 14", "n == 15")).verdict == "violation"
    leak = ("from movers.lang import *\na = [x for x in range(4)]\ndef f():\n    assert x == 3\n"
            "Thread(target=f).start()\n")
    r = movers.check(leak)
    assert r.verdict == "error" and "name 'x' is not defined" in r.error


def test_for_over_what_is_not_iterable() -> None:
    for it in ("5", "None", "enumerate(3)", "zip(a, 1)"):
        r = movers.check(model(f"for x in {it}:\n    pass\n"))
        assert r.verdict == "violation" and r.violations[0].kind == "runtime-error", (it, r.error)
        assert "object is not iterable" in r.violations[0].message


@pytest.mark.parametrize("read", ["total = sum(x for x in a)", "total = [x for x in a]",
                                  "total = sum(a)", "total = [i for i, _ in enumerate(a)]"])
def test_races_on_the_elements_a_comprehension_reads(read: str) -> None:
    from movers.reduce import supporting

    racy = RACE.format(read="    " + read).replace("    assert total <= 2, total\n", "")
    locked = RACE.format(read="    with lock:\n        " + read).replace("    assert total <= 2, total\n", "")
    for r in ["none", *supporting(lambda c: c.races)]:
        found = movers.check(racy, reduction=r, races=True)
        assert found.verdict == "violation" and found.violations[0].kind == "race", (r, found.error)
        assert movers.check(locked, reduction=r, races=True).verdict == "ok", r
