"""The fast back end (lang/codegen.py): steps as generated Python functions.

A fast function decides nothing on its own (where it returns a successor it must agree with the closures;
elsewhere it hands the step back to them), so every test compares the search with and without it, and the
generated text is checked to hold nothing of the model's."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import movers
from movers.checker import compile_source
from movers.lang import codegen
from movers.semantics import system

try:
    from strategies import models, value_models
except ImportError:  # tests/ imported as a package
    from tests.strategies import models, value_models

EXAMPLES = sorted(p for p in (Path(__file__).parent.parent / "examples").glob("*.py"))
CHECKER = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

COUNTER = """
from movers.lang import *

m = Lock()
count = 0
done = False

def worker():
    global count, done
    for i in range(2):
        with m:
            t = count
            count = t + 1
    done = not done and count >= 0

def checker():
    a.join()
    b.join()
    with m:
        assert count == 4, "lost update"

a = Thread(target=worker)
b = Thread(target=worker)
a.start(); b.start()
Thread(target=checker).start()
"""

# Statements of the fast shapes whose values leave them: None compared with <, division by zero, a bool
# stored and read back, an unbound local, a global overwritten with a tuple then an int, an assertion.
LEAVING = """
from movers.lang import *

x = None
y = 0
flag = True
pair = (1, 2)

def worker():
    global x, y, flag, pair
    flag = not flag
    y = y + 1
    if flag:
        pair = 3
    else:
        pair = (y, flag)
    if y == 1:
        z = 1
    w = z + 1
    assert y < 2, "second"
    q = x < 1

Thread(target=worker).start()
Thread(target=worker).start()
"""

DIVIDE = """
from movers.lang import *

n = 1

def worker():
    global n
    n = n - 1
    r = 10 // n

Thread(target=worker).start()
"""


def _summary(r: movers.Result) -> tuple[object, ...]:
    return (r.verdict, r.stats.states, r.stats.transitions, r.stats.max_depth,
            tuple((v.kind, v.message, len(v.trace)) for v in r.violations))


def _both(source: str, monkeypatch: pytest.MonkeyPatch, **kw: object) -> tuple[tuple[object, ...], ...]:
    kw.setdefault("time_limit", 60)
    fast = _summary(movers.check(source, **kw))  # type: ignore[arg-type]
    with monkeypatch.context() as m:
        m.setattr(system, "FAST_PATH", False)
        slow = _summary(movers.check(source, **kw))  # type: ignore[arg-type]
    return fast, slow


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_is_the_same_search_without_the_fast_path(path: Path, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    fast, slow = _both(path.read_text(), monkeypatch, max_states=150_000)
    assert fast == slow


@pytest.mark.parametrize("source", [COUNTER, LEAVING, DIVIDE], ids=["counter", "leaving", "divide"])
def test_steps_that_leave_the_fast_shapes_are_the_closures(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = _both(source, monkeypatch)
    assert fast == slow


def test_the_leaving_steps_are_reported_as_the_closures_report_them() -> None:
    r = movers.check(DIVIDE)
    assert r.verdict == "violation" and r.violations[0].kind == "runtime-error"
    assert "division" in r.violations[0].message or "zero" in r.violations[0].message
    r = movers.check(LEAVING)
    assert r.verdict == "violation"


def test_the_fast_path_runs_and_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    hits = {"n": 0}
    run = system._run_fast

    def counted(*a: object) -> object:
        out = run(*a)  # type: ignore[arg-type]
        hits["n"] += out is not None
        return out

    monkeypatch.setattr(system, "_run_fast", counted)
    movers.check(COUNTER)
    assert hits["n"] > 100
    hits["n"] = 0
    monkeypatch.setattr(system, "FAST_PATH", False)
    movers.check(COUNTER)
    assert hits["n"] == 0


def test_a_wrong_fast_function_would_be_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # The comparisons above can fail: a back end whose + subtracts makes other states.
    monkeypatch.setitem(codegen._BINOPS, ast.Add, "-")
    fast, slow = _both(COUNTER, monkeypatch)
    assert fast != slow


# -- what the generated text is made of ----------------------------------------------------------------------

# The names generated code may use: its parameters and temporaries, the helpers, Python's keywords and type.
_OWN = {"def", "return", "if", "else", "is", "not", "and", "or", "type", "int", "bool", "tuple", "None", "True",
        "False", "g", "heap", "loc", "t", "pc", "_r", "_i", "_o", "_lo", "_hi", "i", "is_list", "is_thread",
        "len", *codegen.HELPERS}
_TEMP = re.compile(r"_\d+|_n\d+")


def _generated(source: str) -> list[str]:
    return [c.fast_source for c in compile_source(source, "model.py").codes() if c.fast_source]


def _assert_own_text(text: str) -> None:
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.NAME:
            assert tok.string in _OWN or _TEMP.fullmatch(tok.string), tok.string
        elif tok.type == tokenize.NUMBER:
            assert re.fullmatch(r"-?\d+", tok.string), tok.string
        else:
            assert tok.type in (tokenize.OP, tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT,
                                tokenize.ENDMARKER, tokenize.COMMENT) and tok.type != tokenize.COMMENT, tok


EVIL = '''
from movers.lang import *

__import__ = 0
os = 1
exec_ = 2

def worker():
    global __import__, os
    eval = 3
    __import__ = __import__ + eval
    os = 10 ** 30 + 1
    open = 99999999999999999999999999
    assert os > 0, "\\"); import os; os.system('echo pwned'); (\\""
    assert __import__ != -1, """'); __import__('os').system('x') #"""

Thread(target=worker).start()
'''


@pytest.mark.parametrize("source", [EVIL, COUNTER, LEAVING, *(p.read_text() for p in EXAMPLES)],
                         ids=["evil", "counter", "leaving", *(p.stem for p in EXAMPLES)])
def test_generated_source_holds_no_model_text(source: str) -> None:
    texts = _generated(source)
    for text in texts:
        _assert_own_text(text)


def test_the_evil_model_gets_fast_functions_and_runs_as_the_closures(monkeypatch: pytest.MonkeyPatch) -> None:
    assert any("def _n" in t for t in _generated(EVIL))
    fast, slow = _both(EVIL, monkeypatch)
    assert fast == slow and fast[0] == "ok"


# -- random models -------------------------------------------------------------------------------------------


@CHECKER
@given(st.one_of(models(), value_models()))
def test_random_models_are_the_same_search_without_the_fast_path(src: str) -> None:
    """The shared strategy's models, and its value models (booleans and ints mixed, None, tuples, ``is``)."""
    note(src)
    with pytest.MonkeyPatch.context() as mp:
        fast, slow = _both(src, mp, max_states=20_000)
    assert fast == slow
