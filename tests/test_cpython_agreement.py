"""A model means in movers what it means in CPython: values compared as Python compares them (lists by their
contents, recursively; objects by identity), and, differentially, every assertion outcome CPython observes
on a run of a model (under the shim, ``movers.lang.runtime``) is one movers finds.

The differential half runs each model under CPython on schedules CPython takes (``tests/cpython_runs.py``:
real threads, a short switch interval, and, for the random families, also the threads one after another
in start order) and checks each run's outcomes against movers: an assertion CPython saw fail is a
violation movers reports (the same ``assert`` statement), an exception is a runtime error movers reports;
for the sequential schedule, which is the only execution of the model rewritten to call the thread
functions in turn, the outcomes must be exactly movers' (a model that passes there under CPython must pass
under movers: the `data == [6, 6]` of issue 21).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import EXAMPLES, ROOT, run
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import movers
from movers.ir.program import Program
from movers.lang.compiler import compile_model
from movers.reduce import REDUCTIONS

try:
    from cpython_runs import Outcome, run_source
    from strategies import list_models, models, value_models
except ImportError:  # tests/ imported as a package
    from tests.cpython_runs import Outcome, run_source
    from tests.strategies import list_models, models, value_models


# -- the meaning of comparisons ----------------------------------------------------------------------------------

COMPARISONS = """
from movers.lang import *

class C:
    def __init__(self):
        self.v = 1

data = [0, 0]
nested = [[1, 2], (3, [4])]

def w(i):
    data[i] = 6

def main():
    t0 = Thread(target=w, args=(0,))
    t1 = Thread(target=w, args=(1,))
    t0.start()
    t1.start()
    t0.join()
    t1.join()
    a = [6, 6]
    o = C()
    p = C()
    assert data == [6, 6]
    assert data == a and not (data != a) and data is not a
    assert (data, 1) == (a, 1) and [data] == [a] and [[data]] == [[a]]
    assert data != [6, 7] and data != [6] and data != (6, 6)
    assert data in ([6, 6],) and [6, 6] in [data] and (6, 6) not in [data]
    assert nested == [[1, 2], (3, [4])] and nested != [[1, 2], (3, [5])]
    assert data < [6, 7] and [6] < data and data <= a and data >= a and not data > a
    assert [1, [2, 3]] < [1, [2, 4]] and (1, [2]) < (1, [2, 0]) and [] < [0]
    assert max(data, [1, 2]) is data and min([data, [6, 6, 0]]) is data and max(a, data) is a
    assert o == o and o != p and o not in [p] and o in (p, o) and [o] == [o] and [o] != [p]
    assert 1 == True and [1] == [True] and (1,) == (True,) and [None] != [0]
    assert not ([] or None) and [0] and (0,) and not ()
    assert -7 // 2 == -4 and -7 % 2 == 1 and 7 % -2 == -1 and True + True == 2
    assert max(True, 1) is True and min(0, False) == 0
    e = []
    assert e == [] and not e and e != [0]
    b = [1, 2]
    b[0] = b
    assert b == b and b in [b]

Thread(target=main).start()
"""


def test_lists_compare_by_their_contents_as_in_cpython() -> None:
    r = movers.check(COMPARISONS)
    assert r.verdict == "ok", [(v.kind, v.message) for v in r.violations]
    outcomes, ended = run_source(COMPARISONS, "<comparisons>")
    assert ended and outcomes == []


def test_lists_compare_by_contents_on_the_fast_path_too(monkeypatch: pytest.MonkeyPatch) -> None:
    import movers.semantics.system as system

    monkeypatch.setattr(system, "FAST_PATH", False)
    assert movers.check(COMPARISONS).verdict == "ok"


@pytest.mark.parametrize("expr, message", [
    ("[1, None] < [1, 2]", "'<' not supported between instances of None and 'int'"),
    ("C() < C()", "'<' not supported between instances of 'C' and 'C'"),
    ("[1] < (1,)", "'<' not supported between instances of 'list' and 'tuple'"),
    ("[1] >= 3", "'>=' not supported between instances of 'list' and 'int'"),
    ("cyc == cyc2", "maximum recursion depth exceeded in comparison"),
])
def test_comparisons_python_refuses_are_runtime_errors(expr: str, message: str) -> None:
    src = f"""
    from movers.lang import *
    class C:
        def __init__(self):
            self.v = 1
    cyc = [0]
    cyc[0] = cyc
    cyc2 = [0]
    cyc2[0] = cyc2
    def main():
        assert {expr}
    Thread(target=main).start()
    """
    r = run(src)
    assert r.verdict == "violation" and r.violations[0].kind == "runtime-error", r.error
    assert r.violations[0].message == message
    outcomes, _ = run_source(textwrap.dedent(src), "<refused>")
    assert [o.kind for o in outcomes] == ["runtime-error"]


def test_a_list_that_holds_itself_shows_as_in_python() -> None:
    r = run("""
    from movers.lang import *
    cyc = [0, 1]
    cyc[0] = cyc
    def main():
        x = C()
        assert cyc[1] == 2
    class C:
        def __init__(self):
            self.v = 0
    Thread(target=main).start()
    """)
    assert r.verdict == "violation", r.error  # not an internal error while the trace is written
    assert r.violations[0].kind == "assertion"
    assert r.violations[0].state["globals"]["cyc[0]"] == "[[...], 1]"


# A comparison reads the elements of the lists it compares: the static facts say so when two lists may meet
# there (and only then), so that a reduction that trusts them does not take it for independent of a write
# (without ``compiler.resolve_comparisons``, dwyer-s and dwyer-sda say ok here).
RACE = """
from movers.lang import *
a = [0]
b = [0]
def writer():
    b[0] = 1
def reader():
    r = a == b
    assert r
Thread(target=writer).start()
Thread(target=reader).start()
"""


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_a_comparison_of_lists_conflicts_with_a_write_of_their_elements(reduction: str) -> None:
    r = movers.check(RACE, reduction=reduction)
    assert r.verdict == "violation", (reduction, r.error)


def _nodes(program: Program, line: int) -> list:
    return [n for code in [program.init, *program.codes()] for n in code.nodes if n.line == line]


def test_comparisons_of_values_that_are_never_lists_read_no_element() -> None:
    program = compile_model(textwrap.dedent("""
    from movers.lang import *
    a = [0, 1]
    x = 0
    y = (0, 1)
    def f():
        global x
        x = x + 1
        assert x == a[0] or y == (x, 1)
        assert a == [x, 1]
    Thread(target=f).start()
    """), granularity="statement")  # one node per statement
    scalar, = _nodes(program, 9)
    lists, = _nodes(program, 10)
    assert scalar.elements_read  # a[0]
    assert not any(term[0] == "reach" for u in scalar.uses for term in u)
    assert lists.elements_read and any(term[0] == "reach" for u in lists.uses for term in u)


def test_a_comparison_with_a_list_inside_another_uses_both_for_the_escape_analysis() -> None:
    from movers.analysis.static_escape import analyse

    program = compile_model(textwrap.dedent("""
    from movers.lang import *
    shared = [0]
    def f():
        mine = [shared]
        assert mine == [[0]]
    Thread(target=f).start()
    Thread(target=f).start()
    """))
    node, = [n for n in _nodes(program, 6) if n.kind == "assert"]
    code = program.functions["f"]
    # The list f allocates does not escape, but comparing it reads `shared`, which does.
    assert not analyse(program).node_local(code, code.nodes.index(node))


# -- differential: CPython's outcomes are outcomes movers finds ---------------------------------------------------


def _assert_key(tree: ast.Module, line: int) -> str | None:
    """The text of the ``assert`` statement at ``line`` (identical statements are one violation for movers,
    which tells violations apart by kind and message)."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Assert) and n.lineno == line:
            return ast.unparse(n)
    return None


def _check(source: str, max_violations: int = 100) -> movers.Result:
    return movers.check(source, max_violations=max_violations, max_states=200_000, time_limit=60)


def _explains(source: str, outcomes: list[Outcome], first: movers.Result | None = None) -> list[Outcome]:
    """The outcomes of a CPython run that movers does not report; movers searches for every violation only
    when its first does not explain them all (a search for all of them walks the whole state space)."""
    result = first if first is not None else _check(source, max_violations=1)
    assert result.verdict in ("ok", "violation"), (result.verdict, result.error)
    missing = _unexplained(source, result, outcomes)
    if missing and result.verdict == "violation":
        result = _check(source)
        assert result.verdict == "violation", (result.verdict, result.error)
        missing = _unexplained(source, result, outcomes)
    return missing


def _unexplained(source: str, result: movers.Result, outcomes: list[Outcome]) -> list[Outcome]:
    """The outcomes of a CPython run that are not violations ``result`` reports."""
    tree = ast.parse(source)
    found = {(v.kind, _assert_key(tree, v.line)) for v in result.violations}
    kinds = {v.kind for v in result.violations}
    missing = []
    for o in outcomes:
        if o.kind == "assertion" and ("assertion", _assert_key(tree, o.line)) not in found:
            missing.append(o)
        elif o.kind == "runtime-error" and "runtime-error" not in kinds:
            missing.append(o)
    return missing


def _cpython_example(path: Path) -> tuple[list[Outcome], bool]:
    """One run of an example under CPython, in a process of its own (a deadlock or a loop without end
    cannot be stopped otherwise): the short switch interval interleaves its threads."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])])
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "cpython_runs.py"), "0.0001", "1.5", str(path)],
                       capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    return [Outcome(*o) for o in data["outcomes"]], data["ended"]


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_example_outcomes_under_cpython_are_outcomes_movers_finds(name: str) -> None:
    path = EXAMPLES / name
    source = path.read_text()
    outcomes, _ = _cpython_example(path)
    if not any(o.kind in ("assertion", "runtime-error") for o in outcomes):
        return  # nothing failed on this run: every verdict allows that (the full search has this schedule)
    assert not _explains(source, outcomes), outcomes


def sequential(source: str) -> str:
    """The model with its threads run one after another: the module's ``Thread(target=f, args=(…)).start()``
    lines become calls ``f(…)`` in one thread, in start order (the only execution: a schedule of the original
    that CPython can take too)."""
    calls: list[str] = []
    body: list[str] = []
    for line in source.splitlines():
        if line.startswith("Thread(target="):
            call = ast.parse(line).body[0].value.func.value  # type: ignore[attr-defined]
            target = ast.unparse(next(k.value for k in call.keywords if k.arg == "target"))
            args = next((k.value for k in call.keywords if k.arg == "args"), None)
            calls.append(f"{target}({', '.join(ast.unparse(a) for a in args.elts) if args is not None else ''})")
        else:
            body.append(line)
    assert calls
    return "\n".join([*body, "def sequential_main():", *(f"    {c}" for c in calls),
                      "Thread(target=sequential_main).start()", ""])


def differential(source: str) -> None:
    """The checks of the module docstring on one random model."""
    note(source)
    first = _check(source, max_violations=1)
    for switch in (0.005, 0.000001):
        outcomes, ended = run_source(source, "<model>", switch=switch, timeout=20)
        # No generated model blocks by itself; but a thread that dies of a failed assert between acquire and
        # release keeps its lock, and then the others wait for ever, in CPython as in movers.
        assert ended or outcomes
        assert not _explains(source, outcomes, first), outcomes
    seq = sequential(source)
    note(seq)
    outcomes, ended = run_source(seq, "<sequential>", timeout=20)
    assert ended
    r = _check(seq)  # one thread: every violation is cheap to find
    assert r.verdict in ("ok", "violation"), (r.verdict, r.error)
    assert not _unexplained(seq, r, outcomes), (outcomes, r.violations)
    if "choose(" not in seq:  # one execution: its outcome is the only one
        tree = ast.parse(seq)
        assert [(v.kind, _assert_key(tree, v.line)) for v in r.violations] == [
            (o.kind, _assert_key(tree, o.line)) for o in outcomes], (outcomes, r.violations)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(list_models(), value_models(), models(blocking=False)))
def test_random_model_outcomes_under_cpython_are_outcomes_movers_finds(source: str) -> None:
    differential(source)


def test_sequential_rewrites_the_starts() -> None:
    src = ("from movers.lang import *\ndef f(i):\n    pass\n"
           "Thread(target=f, args=(1,)).start()\nThread(target=f).start()\n")
    assert sequential(src).endswith("def sequential_main():\n    f(1)\n    f()\n"
                                    "Thread(target=sequential_main).start()\n")
