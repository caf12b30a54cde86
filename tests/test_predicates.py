"""``@predicate`` and ``ltl(...)``: the model language's side of liveness properties (issue 26).

A predicate names an atomic proposition (a pure function of the state, like an ``@invariant``); ``ltl`` declares
a formula over them. Both are harmless under CPython (the runtime shim); the compiler records them in
``Program.predicates`` and ``Program.ltl_formulas`` and refuses misuse at ``file:line:col``;
``TransitionSystem.atoms`` gives the predicates true at a state.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT

import movers.lang as lang
from movers.instrument.properties import instrument
from movers.ir.program import LtlDeclaration
from movers.lang import runtime
from movers.lang.compiler import compile_model
from movers.lang.errors import ModelSyntaxError
from movers.semantics.system import PredicateError, TransitionSystem

SRC = ROOT / "src"

MUTEX = """\
from movers.lang import *
import threading

m = threading.Lock()
trying = [False, False]
critical = [False, False]
x = 0

def worker(i):
    global x
    trying[i] = True
    with m:
        critical[i] = True
        x += 1
        critical[i] = False
    trying[i] = False

@predicate
def trying0():
    return trying[0]

@predicate
def critical0():
    return critical[0]

@predicate
def both():
    return x == 2

ltl("[] (trying0 -> <> critical0)")
ltl("<> both", name="done")

threading.Thread(target=worker, args=(0,)).start()
threading.Thread(target=worker, args=(1,)).start()
"""


def compile_src(src: str) -> object:
    return compile_model(textwrap.dedent(src).lstrip("\n"), "m.py")


def refusal(src: str) -> str:
    with pytest.raises(ModelSyntaxError) as e:
        compile_src(src)
    return str(e.value)


# -- the runtime shim ---------------------------------------------------------------------------------------


def test_exported_and_harmless() -> None:
    assert {"predicate", "ltl"} <= set(runtime.__all__)
    assert lang.predicate is runtime.predicate and lang.ltl is runtime.ltl

    def p() -> bool:
        return True

    assert lang.predicate(p) is p
    assert lang.ltl("[] p") is None
    assert lang.ltl("<> p", name="eventually") is None


def test_model_runs_under_cpython(tmp_path: Path) -> None:
    path = tmp_path / "mutex.py"
    path.write_text(MUTEX + "print('ran', x, trying0(), both())\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    # The threads may not have finished when the last line runs: only that it ran matters.
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ran ")


# -- what the compiler records ------------------------------------------------------------------------------


def test_predicates_and_formulas_recorded() -> None:
    p = compile_model(MUTEX, "m.py")
    assert list(p.predicates) == ["trying0", "critical0", "both"]
    assert p.predicates["both"] is p.functions["both"]
    assert p.invariants == []  # a predicate is not an invariant
    assert p.ltl_formulas == [
        LtlDeclaration("ltl_1", "[] (trying0 -> <> critical0)", 30, 1),
        LtlDeclaration("done", "<> both", 31, 1),
    ]


def test_default_names_follow_the_declarations_order() -> None:
    p = compile_src("""
        from movers.lang import *
        ltl("<> true", name="first")
        ltl("[] true")
        ltl("true U false")
    """)
    assert [(d.name, d.formula, d.line) for d in p.ltl_formulas] == [  # type: ignore[attr-defined]
        ("first", "<> true", 2), ("ltl_2", "[] true", 3), ("ltl_3", "true U false", 4)]


def test_ltl_is_no_step_of_the_module() -> None:
    """A declaration, like ``guarded_by``: the module's code has no node for it."""
    with_ltl = compile_model(MUTEX, "m.py")
    without = compile_model(MUTEX.replace('ltl("[] (trying0 -> <> critical0)")', "")
                            .replace('ltl("<> both", name="done")', ""), "m.py")
    assert len(with_ltl.init.nodes) == len(without.init.nodes)
    assert not any("ltl" in n.source for n in with_ltl.init.nodes)


def test_predicate_is_also_an_invariant_when_both() -> None:
    p = compile_src("""
        from movers.lang import *
        x = 0
        @predicate
        @invariant
        def small():
            return x < 3
    """)
    assert list(p.predicates) == ["small"]  # type: ignore[attr-defined]
    assert [n for n, _ in p.invariants] == ["small"]  # type: ignore[attr-defined]


# -- misuse: file:line:col ----------------------------------------------------------------------------------


def test_ltl_inside_a_function() -> None:
    msg = refusal("""
        from movers.lang import *
        def f():
            ltl("<> p")
    """)
    assert msg.startswith("m.py:3:5: ltl(") and "top level" in msg


def test_ltl_as_a_value() -> None:
    msg = refusal("""
        from movers.lang import *
        x = ltl("<> p")
    """)
    assert msg.startswith("m.py:2:5: ltl(") and "top level" in msg


def test_ltl_formula_not_a_literal() -> None:
    msg = refusal("""
        from movers.lang import *
        f = "<> p"
        ltl(f)
    """)
    assert msg.startswith("m.py:3:5: ltl(…): the formula must be a string literal")
    assert 'ltl("' in msg  # says what to write


@pytest.mark.parametrize(("call", "col", "what"), [
    ('ltl("<> p", name=n)', 18, "name= must be a non-empty string literal"),
    ('ltl("<> p", name="")', 18, "name= must be a non-empty string literal"),
    ('ltl("<> p", "n")', 1, "takes one formula and an optional name="),
    ("ltl()", 1, "takes one formula and an optional name="),
    ('ltl("<> p", label="x")', 1, "takes one formula and an optional name="),
    ('ltl("  ")', 5, "the formula is empty"),
    ('ltl(f"<> {n}")', 5, "the formula must be a string literal"),
])
def test_ltl_arguments(call: str, col: int, what: str) -> None:
    msg = refusal(f"""
        from movers.lang import *
        n = "p"
        {call}
    """)
    assert msg.startswith(f"m.py:3:{col}: ") and what in msg, msg


def test_ltl_names_are_unique() -> None:
    msg = refusal("""
        from movers.lang import *
        ltl("<> p", name="live")
        ltl("[] p", name="live")
    """)
    assert msg.startswith("m.py:3:1: the property 'live' is declared twice (first at line 2)")
    msg = refusal("""
        from movers.lang import *
        ltl("<> p", name="ltl_2")
        ltl("[] p")
    """)
    assert "'ltl_2' is declared twice" in msg


def test_predicate_with_arguments() -> None:
    msg = refusal("""
        from movers.lang import *
        x = 0
        @predicate
        def above(k):
            return x > k
    """)
    assert msg.startswith("m.py:4:1: an @predicate takes no arguments")


@pytest.mark.parametrize(("body", "why"), [
    ("global x\n            x = 1\n            return True", "a write to the state"),
    ("assert x == 0\n            return True", "'assert'"),
    ("return choose(2) == 0", "a nondeterministic choice"),
    ("m.acquire()\n            return True", "a synchronisation operation"),
])
def test_impure_predicate(body: str, why: str) -> None:
    msg = refusal(f"""
        from movers.lang import *
        x = 0
        m = Lock()
        @predicate
        def p():
            {body}
    """)
    assert msg.startswith("m.py:") and "the @predicate p() must not change the state or block" in msg, msg
    assert why in msg


def test_impure_through_a_call() -> None:
    msg = refusal("""
        from movers.lang import *
        x = 0
        def bump():
            global x
            x += 1
            return x
        @predicate
        def p():
            return bump() > 0
    """)
    assert msg.startswith("m.py:5:5: the @predicate p() must not change the state")


def test_cli_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_text("from movers.lang import *\nf = '<> p'\nltl(f)\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    r = subprocess.run([sys.executable, "-m", "movers", "check", str(path)], capture_output=True, text=True,
                       timeout=120, env=env, cwd=ROOT)
    assert r.returncode == 2
    assert f"{path}:3:5: ltl(…): the formula must be a string literal" in r.stdout + r.stderr
    assert "Traceback" not in r.stderr


# -- atoms(state) -------------------------------------------------------------------------------------------


def reachable(ts: TransitionSystem) -> list[tuple]:
    first = ts.initial()
    seen = {first}
    order = [first]
    for s in order:
        for o in ts.steps(s):
            if o.state is not None and o.state not in seen:
                seen.add(o.state)
                order.append(o.state)
    return order


def direct_atoms(ts: TransitionSystem, state: tuple) -> frozenset[str]:
    """The predicates computed from the globals themselves, not through the model's functions."""
    names = ts.program.globals
    g = dict(zip(names, state[0], strict=True))
    heap = state[1]

    def element(name: str, i: int) -> bool:
        v = heap[g[name].i][2 + i]  # a list's elements follow its class and monitor
        return bool(v.value)

    true = set()
    if element("trying", 0):
        true.add("trying0")
    if element("critical", 0):
        true.add("critical0")
    if g["x"] == 2:
        true.add("both")
    return frozenset(true)


@pytest.mark.parametrize("fast", [True, False])
def test_atoms_on_every_reachable_state(fast: bool) -> None:
    ts = TransitionSystem(compile_model(MUTEX, "m.py"))
    ts.fast_path = fast
    states = reachable(ts)
    assert len(states) > 10
    letters = {ts.atoms(s) for s in states}
    for s in states:
        assert ts.atoms(s) == direct_atoms(ts, s)
    # Every combination the model can reach shows up, and none it cannot.
    assert frozenset({"trying0", "critical0"}) in letters
    assert frozenset() in letters
    assert frozenset({"both"}) in letters
    assert not any("critical0" in w and "trying0" not in w for w in letters)


def test_atoms_through_generated_code_and_closures_agree() -> None:
    src = """
        from movers.lang import *
        x = 0
        y = 0
        def w():
            global x
            x = 1
            x = 2
        def v():
            global y
            y = 1
        @predicate
        def pos():
            return x > 0
        @predicate
        def big():
            return x == 2 and y == 1
        Thread(target=w).start()
        Thread(target=v).start()
    """
    p = compile_src(src)
    assert p.predicates["pos"].fast_value is not None  # type: ignore[attr-defined]
    fast, slow = TransitionSystem(p), TransitionSystem(p)  # type: ignore[arg-type]
    slow.fast_path = False
    got = {s[0]: fast.atoms(s) for s in reachable(fast)}
    assert got == {(0, 0): frozenset(), (0, 1): frozenset(), (1, 0): {"pos"}, (1, 1): {"pos"},
                   (2, 0): {"pos"}, (2, 1): {"pos", "big"}}
    assert got == {s[0]: slow.atoms(s) for s in reachable(slow)}
    assert instrument(fast).atoms(fast.initial()) == frozenset()  # type: ignore[attr-defined]


def test_no_predicates_no_atoms() -> None:
    ts = TransitionSystem(compile_src("""
        x = 0
        def f():
            return x == 0
    """))  # type: ignore[arg-type]
    assert ts.atoms(ts.initial()) == frozenset()


@pytest.mark.parametrize(("body", "message"), [
    ("return x", "predicate p() returns 0, not a bool"),
    ("return None", "predicate p() returns None, not a bool"),
    ("return 1 // x == 0", "predicate p() fails: division by zero"),
    ("return xs[5]", "predicate p() fails: "),
    ('raise ValueError("no")', "predicate p() fails: uncaught exception: ValueError: no"),
])
def test_a_failing_predicate_is_reported(body: str, message: str) -> None:
    ts = TransitionSystem(compile_src(f"""
        from movers.lang import *
        x = 0
        xs = [1]
        @predicate
        def p():
            {body}
    """))  # type: ignore[arg-type]
    with pytest.raises(PredicateError) as e:
        ts.atoms(ts.initial())
    assert str(e.value).startswith(message), str(e.value)
    assert e.value.predicate == "p"
