"""Values as the language has them, not as Python's equalities would have them.

- ``True`` and ``1`` (``False`` and ``0``) are different values (``is`` tells them apart), so two states that
  differ only there are two states, wherever the value lives: a global, a local, a tuple (nested), an array
  element, a field, a thread's argument, a call's pending result, a loop's sequence.
- ``choose(seq)`` chooses among the elements of a list, a tuple or a range, as ``random.choice`` does.
- Reading a local before its first assignment is a runtime error, as Python's ``UnboundLocalError``.
- Compile-time rejections for what the language does not have (function values, impure invariants,
  special methods), and the bounds on value sizes that keep one step from running for minutes.

Each property holds under every reduction.
"""

from __future__ import annotations

import textwrap

import pytest

import movers

REDUCTIONS = ["none", "static-por", "optimistic", "transactions"]


def check(src: str, reduction: str = "none", **kw):
    return movers.check(textwrap.dedent(src).lstrip("\n") + "\n", reduction=reduction, **kw)


def kinds(r) -> list[str]:
    return [v.kind for v in r.violations]


# -- True is not 1 --------------------------------------------------------------------------------------------

ISSUE_MODEL = """
x = 0
def a():
    global x
    x = True
def b():
    global x
    x = 1
    assert x is not True
Thread(target=a).start()
Thread(target=b).start()
"""

# One model per place a value can live: the choice makes two successors that differ only in True/1 (or
# False/0); a state store that merged them would never explore the second and miss the failed assert.
PLACES = {
    "global": """
        x = 0
        def t():
            global x
            x = choose(1, True)
            assert x is not True
        Thread(target=t).start()
        """,
    "global-false": """
        x = 1
        def t():
            global x
            x = choose(0, False)
            assert x is not False
        Thread(target=t).start()
        """,
    "local": """
        def t():
            v = choose(1, True)
            assert v is not True
        Thread(target=t).start()
        """,
    "tuple": """
        x = None
        def t():
            global x
            x = (0, choose(1, True))
            assert x[1] is not True
        Thread(target=t).start()
        """,
    "nested-tuple": """
        def t():
            v = ((choose(1, True),), 2)
            assert v[0][0] is not True
        Thread(target=t).start()
        """,
    "array-element": """
        a = [0, 0]
        def t():
            a[1] = choose(1, True)
            assert a[1] is not True
        Thread(target=t).start()
        """,
    "field": """
        class Box:
            def __init__(self):
                self.f = 0
        o = Box()
        def t():
            o.f = choose(1, True)
            assert o.f is not True
        Thread(target=t).start()
        """,
    "thread-argument": """
        def child(v):
            assert v is not True
        def t():
            c = Thread(target=child, args=(choose(1, True),))
            c.start()
        Thread(target=t).start()
        """,
    "pending-call-result": """
        def g():
            return choose(1, True)
        def h():
            return 0
        def t():
            v = (g(), h())
            assert v[0] is not True
        Thread(target=t).start()
        """,
    "loop-sequence": """
        def t():
            for v in choose((1, 2), (True, 2)):
                assert v is not True
        Thread(target=t).start()
        """,
    "parameter": """
        def g(v):
            assert v is not True
        def t():
            g(choose(1, True))
        Thread(target=t).start()
        """,
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_the_issue_model_is_a_violation(reduction: str) -> None:
    r = check(ISSUE_MODEL, reduction)
    assert r.verdict == "violation" and kinds(r) == ["assertion"], (r.verdict, r.error)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("place", sorted(PLACES))
def test_true_and_1_are_different_states(place: str, reduction: str) -> None:
    r = check(textwrap.dedent(PLACES[place]), reduction)
    assert r.verdict == "violation" and kinds(r) == ["assertion"], (r.verdict, r.error)


def test_true_and_1_state_counts() -> None:
    """The full state space of the issue's model: both orders of the two writes, and the assert (8 states
    with the assert's failure explored to the end)."""
    src = ISSUE_MODEL.replace("assert x is not True", "y = x is True")
    assert check(src).stats.states == 8
    # Equal values of the language are still one state: True written twice is one value.
    same = ISSUE_MODEL.replace("x = 1\n", "x = True\n").replace("assert x is not True", "pass")
    assert check(same).stats.states == 4


def test_booleans_still_compute_as_python_does() -> None:
    r = check("""
        def t():
            v = True
            assert v == 1 and v + 1 == 2 and (v, 0) == (1, False) and v in (1, 2)
            a = [True, 0]
            assert a[0] == 1 and not a[1] and a[0] is True and 1 in a
            assert [x for x in (1,)] if False else True
        Thread(target=t).start()
        """.replace("            assert [x for x in (1,)] if False else True\n", ""))
    assert r.verdict == "ok", (r.error, r.violations)


# -- choose over a sequence -----------------------------------------------------------------------------------

CHOOSE = {
    "list-literal": "x = choose([1, 2, 3])",
    "tuple-literal": "x = choose((1, 2, 3))",
    "tuple-variable": "s = (1, 2, 3)\n    x = choose(s)",
    "array": "x = choose(arr)",
    "range": "x = choose(range(1, 4))",
    "values": "x = choose(1, 2, 3)",
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("how", sorted(CHOOSE))
def test_choose_explores_every_element(how: str, reduction: str) -> None:
    src = f"""
arr = [1, 2, 3]
def t():
    {CHOOSE[how]}
    assert x != 2
Thread(target=t).start()
"""
    r = check(src, reduction)
    assert r.verdict == "violation" and kinds(r) == ["assertion"], (r.verdict, r.error)


@pytest.mark.parametrize("arg", ["5", "[]", "()", "None"])
def test_choose_of_one_non_sequence_or_empty_is_a_runtime_error(arg: str) -> None:
    r = check(f"""
        def t():
            x = choose({arg})
        Thread(target=t).start()
        """)
    assert kinds(r) == ["runtime-error"], (r.verdict, r.error)


@pytest.mark.parametrize("expr, ok", [("min(arr) == 1", True), ("max((4, 9, 2)) == 9", True),
                                      ("min(arr) == 2", False)])
def test_min_and_max_of_a_sequence(expr: str, ok: bool) -> None:
    r = check(f"""
        arr = [3, 1, 2]
        def t():
            assert {expr}
        Thread(target=t).start()
        """)
    assert r.verdict == ("ok" if ok else "violation"), (r.error, r.violations)


def test_empty_list_is_false() -> None:
    r = check("""
        e = [0] * 0
        f = [0]
        def t():
            assert not e and f and bool(f) and not bool(e)
            if e:
                assert False
        Thread(target=t).start()
        """)
    assert r.verdict == "ok", (r.error, r.violations)


# -- unbound locals -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_reading_a_local_before_assignment_is_a_runtime_error(reduction: str) -> None:
    r = check("""
        g = 0
        def t():
            if g == 1:
                v = 1
            assert v == 1
        Thread(target=t).start()
        """, reduction)
    assert kinds(r) == ["runtime-error"], (r.verdict, r.error)
    assert "'v' referenced before assignment" in r.violations[0].message


def test_a_local_assigned_none_is_bound() -> None:
    r = check("""
        def t():
            v = None
            assert v is None
        Thread(target=t).start()
        """)
    assert r.verdict == "ok", (r.error, r.violations)


# -- what the language does not have --------------------------------------------------------------------------


@pytest.mark.parametrize("src, message", [
    ("t = (1,)\nx = KeyError(*t)\n", "*args in a call of a built-in"),
    ("class C:\n    pass\nx = C\n", "classes are not values"),
    ("class C:\n    def __eq__(self, o):\n        return True\n", "special method '__eq__'"),
    ("class C:\n    @staticmethod\n    def m(a):\n        return a\n", "unsupported decorator"),
    ("x = 0\n@invariant\ndef inv():\n    global x\n    x = 1\n    return True\n", "must not change"),
    ("a = [0]\n@invariant\ndef inv():\n    a[0] = 1\n    return True\n", "must not change"),
    ("x = 0\n@invariant\ndef inv():\n    assert x < 2\n    return True\n", "use 'return'"),
    ("x = 0\n@invariant\ndef inv():\n    assume(x < 2)\n    return True\n", "use 'return'"),
    ("x = 0\n@invariant\ndef inv():\n    return choose(1, 2) > x\n", "nondeterministic choice"),
    ("m = Lock()\n@invariant\ndef inv():\n    m.acquire()\n    return True\n", "synchronisation"),
    ("x = 0\ndef helper():\n    global x\n    x = 2\n    return 1\n@invariant\ndef inv():\n    return helper() > 0\n",
     "must not change"),
    ("x = " + "9" * 5000 + "\n", "integer literal too large"),
])
def test_rejected_at_compile_time(src: str, message: str) -> None:
    r = movers.check(src)
    assert r.verdict == "error" and message in (r.error or ""), r.error
    # file:line:col with 1-based positions
    line, col = (r.error or "").split(":")[1:3]
    assert int(line) >= 1 and int(col) >= 1, r.error


@pytest.mark.parametrize("expr, message", [
    ("10 ** 10 ** 8", "integer too large"),
    ("2 ** -1", "negative exponent"),
    ("1 << 10 ** 9", "integer too large"),
    ("(10 ** 40000) * (10 ** 40000)", "integer too large"),
    ("(0,) * 10 ** 9", "tuple too long"),
    ("[0] * 10 ** 9", "array of"),
])
def test_value_sizes_are_bounded(expr: str, message: str) -> None:
    """One step cannot run for minutes inside CPython's arithmetic, where no time limit can stop it."""
    r = check(f"""
        def t():
            v = {expr}
        Thread(target=t).start()
        """)
    assert kinds(r) == ["runtime-error"] and message in r.violations[0].message, (r.error, r.violations)


def test_runtime_messages_do_not_leak_python_internals() -> None:
    r = check("""
        class C:
            pass
        def t():
            v = C() + None
        Thread(target=t).start()
        """)
    msg = r.violations[0].message
    assert "Ref" not in msg and "NoneType" not in msg, msg
    r = check("""
        x = 0
        def t():
            global x
            x = 2 ** 60000
            assert x < 0
        Thread(target=t).start()
        """)
    assert r.verdict == "violation"
    shown = " ".join(" ".join(s.changes.values()) for s in r.violations[0].trace)
    assert "digits" in shown and "set_int_max_str_digits" not in shown


# -- whole-array reads under every reduction ------------------------------------------------------------------

WHOLE_ARRAY = {
    "in": ("""
        a = [0, 0]
        def r():
            assert 1 not in a
        def w():
            a[0] = 1
        Thread(target=r).start()
        Thread(target=w).start()
        """, "assertion"),
    "unpack": ("""
        a = [0, 0]
        def r():
            x, y = a
            assert x == 0
        def w():
            a[0] = 1
        Thread(target=r).start()
        Thread(target=w).start()
        """, "assertion"),
    "for": ("""
        a = [0, 0]
        def r():
            for v in a:
                assert v == 0
        def w():
            a[1] = 1
        Thread(target=r).start()
        Thread(target=w).start()
        """, "assertion"),
    "deadlock": ("""
        a = [0, 0]
        m = Lock()
        def r():
            m.acquire()
            if 1 in a:
                wait_until(False)
            m.release()
        def w():
            a[0] = 1
        Thread(target=r).start()
        Thread(target=w).start()
        """, "deadlock"),
    "spin-until-seen": ("""
        a = [0, 0]
        done = 0
        def r():
            global done
            k = 0
            while 1 not in a:
                k = (k + 1) % 3
            done = 1
        def w():
            a[0] = 1
            assert done == 0
        Thread(target=r).start()
        Thread(target=w).start()
        """, "assertion"),
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", sorted(WHOLE_ARRAY))
def test_whole_array_reads_are_seen_by_every_reduction(name: str, reduction: str) -> None:
    """Item 5 of the hardening issue: `static-por` missed all of these, `transactions` the last one."""
    src, kind = WHOLE_ARRAY[name]
    r = check(src, reduction, time_limit=60)
    assert r.verdict == "violation" and kinds(r) == [kind], (r.verdict, r.error, r.limit)


# An ``@invariant`` is judged as ``if`` judges its value (an empty container is false: before, any object was
# true, and this model was verified), and an exception it does not catch is its failure, not a crash of movers.
_INVARIANTS = {
    "empty_list": ("return xs", "invariant ok() is false"),
    "empty_dict": ("return d", "invariant ok() is false"),
    "raises": ("if xs == []:\n        raise ValueError('empty')\n    return True",
               "invariant ok() fails: uncaught exception: ValueError: empty"),
}


@pytest.mark.parametrize("fast", [True, False], ids=["generated", "closures"])
@pytest.mark.parametrize("granularity", ["access", "statement"])
@pytest.mark.parametrize("case", sorted(_INVARIANTS))
def test_an_invariants_value_is_judged_as_python_does(case: str, granularity: str, fast: bool,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from movers.semantics import system

    body, message = _INVARIANTS[case]
    src = f"""
from movers.lang import *

xs = [1]
d = {{1: 2}}


@invariant
def ok():
    {body}


def w():
    xs.pop()
    d.pop(1)


Thread(target=w).start()
"""
    monkeypatch.setattr(system, "FAST_PATH", fast)
    r = movers.check(src, granularity=granularity)
    assert r.verdict == "violation" and r.violations[0].kind == "invariant", r.error
    assert r.violations[0].message == message
    untouched = src.replace("    xs.pop()\n    d.pop(1)\n", "    pass\n")
    assert movers.check(untouched, granularity=granularity).verdict == "ok"
