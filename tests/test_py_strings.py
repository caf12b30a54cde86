"""Strings as values (issue 24, item 2; lang/strings.py): every operation gives CPython's value, or raises
CPython's exception with CPython's message; strings in the state are found racing like any other value, in
traces, JSON and trails; f-strings and joins are cut at their accesses like any expression."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

import movers
from movers.cli import main
from movers.ir.machine import ModelError
from movers.lang import strings
from movers.lang.compiler import compile_model
from movers.reduce import REDUCTIONS
from movers.semantics import system
from movers.trail import read_trail, replay, write_trail

try:
    from cpython_runs import run_source
    from differential import run_differential
    from naive_explorer import naive_explore
except ImportError:  # tests/ imported as a package
    from tests.cpython_runs import run_source
    from tests.differential import run_differential
    from tests.naive_explorer import naive_explore

# The values the expressions below see, in the model (locals of main) and in CPython (eval's namespace).
SETUP = """s = " Hello, World "
w = "a,b,,c"
n = 7
t = ("x", 1, None, True)
e = ""
u = "naïve"
words = ["ab", "cd"]
nested = [1, ("q", [2, "r"])]
"""

EXPRESSIONS = [
    '"abc"', "s", "e", "u", '"a" + "b"', "s + w", '"ab" * 3', '3 * "ab"', '"ab" * 0', '"ab" * -2', '"" * 5',
    '"a" == "a"', '"a" == "b"', '"a" != "b"', '1 == "1"', '"1" != 1', '"1" == 1', '"a" < "b"', '"ab" < "a"',
    '"B" < "a"', '"a" <= "a"', '"b" > "abc"', '"b" >= "c"', '("a", 1) < ("a", 2)', '("b",) > ("a", 9)',
    '"ell" in s', '"xyz" in s', '"" in e', '"a" not in w', '"x" in t', '"ab" in words',
    "len(s)", "len(e)", "len(u)", "s[0]", "s[-1]", "s[3]", "u[3]", "s[1:6]", "s[::-1]", "s[::2]", "s[-3:]",
    "s[:100]", "s[100:]", "s[5:1]", "s[5:1:-1]", "t[1:]", "t[::-1]", "t[:0]", "w[True:]",
    'f"{n} and {n!r} {n:>3}|{s!r}|{w}"', 'f"{t}"', 'f"{words}"', 'f"{nested!r}"', 'f"{None}{True}{e!r}"',
    'f"{n:05d}|{n:x}|{n:<4}|{w:^10}|{w:>{n}}"', 'f"{u!a}"', 'f"{-n:+d}"', 'f"{n*n}"', 'f""', 'f"{{}}"',
    "str(n)", "str(s)", "str(t)", "str(words)", "str(nested)", "str(None)", "str(True)", "str()", "str(-0)",
    "repr(s)", "repr(n)", "repr(t)", "repr(words)", "repr(u)", 'repr("it\'s")', "repr(False)",
    'int("42")', 'int(" -17 ")', 'int("1_000")', 'int("ff", 16)', 'int("0b101", 0)', "int(True)", "int(n)",
    "w.split(',')", "s.split()", 'w.split(",", 1)', "w.split(',', maxsplit=2)", "w.rsplit(',', 1)",
    '"a\\nb\\n".splitlines()', '"-".join(words)', '"".join(("a", "b", "c"))', '", ".join("xyz")', '"-".join(())',
    "s.strip()", "s.lstrip()", "s.rstrip()", 'w.strip("ac")', 's.startswith(" H")', 's.startswith("H")',
    'w.startswith(("x", "a"))', 's.startswith("H", 1)', 's.endswith(" ")', 'w.endswith("c")', "s.upper()",
    "s.lower()", "u.upper()", 'w.replace(",", ";")', 'w.replace(",", "", 2)', 'w.replace("", "|")',
    's.find("o")', 's.find("z")', 's.find("o", 6)', 'w.count(",")', 'w.count("")', 's.count("l", 0, 5)',
    '"{} and {}".format(1, "b")', '"{1}{0}".format("a", "b")', '"{x}-{y!r}".format(x=1, y="z")',
    '"{:>5}|{:.2}".format("ab", "xyz")', '"{}".format(words)', '"{0}{0}".format(t)', '"{:{}}".format("a", 3)',
    '"123".isdigit()', '"12a".isdigit()', 'e.isdigit()', '"abc".isalpha()', '"ab1".isalpha()', 'u.isalpha()',
    '"%s-%d" % ("a", 3)', '"%r" % (s,)', '"%5s|%-3d|" % (n, n)', '"%s" % (t,)', '"%s" % words', '"%d%%" % n',
    '"no 1234567: %d" % n', '"no 1234567: {}".format(n)',
    '"a b".title()', '"ab".center(6, "*")', '"7".zfill(3)', '"a=b=c".partition("=")', '"abc".index("c")',
    '"aXbXc".rpartition("X")', '"  ".isspace()', "bool(e)", "bool(s)", "not e", "e or w", "s and n",
]


def _expected(expr: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(SETUP, namespace)  # noqa: S102  (the test's own text)
    return eval(expr, namespace)  # noqa: S307


def _program(lines: list[str]) -> str:
    body = textwrap.indent(SETUP + "\n".join(lines), "    ")
    return f"from movers.lang import *\n\ndef main():\n{body}\n\nThread(target=main).start()\n"


def _assertion(expr: str) -> str:
    v = _expected(expr)
    # `is` for booleans and None: `1 == True` would let a wrong type through
    op = "is" if v is None or type(v) is bool else "=="
    return f"assert ({expr}) {op} {v!r}, {expr!r}"


def test_every_operation_gives_cpythons_value() -> None:
    src = _program([_assertion(x) for x in EXPRESSIONS])
    r = movers.check(src)
    assert r.verdict == "ok", (r.error, [(v.message) for v in r.violations])
    # CPython runs the same file (with the shim) and agrees.
    outcomes, ended = run_source(src, "<strings>")
    assert ended and outcomes == []


@pytest.mark.parametrize("expr", ['"ab" * 3', 's[::-1]', 'f"{n:>3}"', "w.split(',')", "str(words)"])
def test_a_wrong_expected_value_is_a_violation(expr: str) -> None:
    v = _expected(expr)
    wrong = v[:-1] if v else "?"
    r = movers.check(_program([f"assert ({expr}) == {wrong!r}"]))
    assert r.verdict == "violation" and r.violations[0].kind == "assertion"


ERRORS = [
    ('"a" + 1', "TypeError"), ('1 + "a"', "TypeError"), ('"a" + None', "TypeError"), ('"a" * "b"', "TypeError"),
    ('"a" * None', "TypeError"), ('"a" < 1', "TypeError"), ('1 >= "a"', "TypeError"), ('("a",) < (1,)', "TypeError"),
    ('1 in "abc"', "TypeError"), ('"abc"[5]', "IndexError"), ('w[e]', "TypeError"), ('"abc"[1:"x"]', "TypeError"),
    ('"abc"[::0]', "ValueError"), ('int("x")', "ValueError"), ('int("")', "ValueError"), ('int("1.5")', "ValueError"),
    ('int(None)', "TypeError"), ('int(5, 10)', "TypeError"), ('"-".join(("a", 1))', "TypeError"),
    ('"-".join(5)', "TypeError"), ('"{}{}".format(1)', "IndexError"), ('"{x}".format(y=1)', "KeyError"),
    ('"{:d}".format("a")', "ValueError"), ('f"{n:s}"', "ValueError"), ('f"{t:>3}"', "TypeError"),
    ('"%d" % "a"', "TypeError"), ('"%s %s" % (1,)', "TypeError"), ('"abc".index("z")', "ValueError"),
    ('"a".upper(1)', "TypeError"), ('"a".split(1)', "TypeError"), ('"a".startswith(1)', "TypeError"),
    ('n.upper()', "AttributeError"), ('"ab".replace("a")', "TypeError"),
    ('"a".strip(chars="a")', "TypeError"), ('"ab".center(4, "xy")', "TypeError"), ('len(n)', None),
]


@pytest.mark.parametrize(("expr", "exc"), ERRORS)
def test_errors_are_cpythons(expr: str, exc: str | None) -> None:
    with pytest.raises(Exception) as info:
        _expected(expr)
    r = movers.check(_program([f"x = {expr}"]))
    assert r.verdict == "violation" and r.violations[0].kind == "runtime-error", (r.error, r.verdict)
    if exc is not None:  # the exception is CPython's, and so is its message
        assert type(info.value).__name__ == exc
        assert r.violations[0].message == str(info.value)


def test_the_exceptions_are_named_for_try_except() -> None:
    for f, args, exc in [(strings.concat, ("a", 1), "TypeError"), (strings.to_int, ("x",), "ValueError"),
                         (strings.char_at, ("a", 3), "IndexError"), (strings.sliced, ("a", 0, 1, 0), "ValueError"),
                         (strings.contains, ("a", 1), "TypeError"), (strings.repeat, ("a", None), "TypeError")]:
        with pytest.raises(ModelError) as info:
            f(*args)
        assert info.value.exc == exc


def test_strings_are_bounded() -> None:
    for expr in ['"ab" * 60000', 's * 100000', 'f"{n:>200000}"', '"{:>200000}".format(1)', 'w.replace("", s * 9000)',
                 '"x".zfill(200000)']:
        r = movers.check(_program([f"x = {expr}"]))
        assert r.verdict == "violation" and "string too long" in r.violations[0].message, expr
    r = movers.check(_program(['x = ("," * 100000).split(",")']))
    assert r.verdict == "violation" and "list too long" in r.violations[0].message
    doubling = _program(["x = 'ab'", "while True:", "    x = x + x"])
    r = movers.check(doubling)
    assert r.verdict == "violation" and "string too long" in r.violations[0].message


def test_iteration_and_strings_in_containers() -> None:
    src = _program([
        "out = []",
        "for ch in s.strip():",
        "    if ch.isalpha():",
        "        out.append(ch.upper())",
        'assert "".join(out) == "HELLOWORLD", out',
        'pairs = [("b", 2), ("a", 1)]',
        'assert min(pairs) == ("a", 1) and max(words) == "cd"',
        'assert ("x" if e else "y") == "y" and (e or "d") == "d"',
        'k = 0',
        'for part in w.split(","):',
        '    k += len(part)',
        'assert k == 3',
    ])
    assert movers.check(src).verdict == "ok"
    assert run_source(src, "<strings>") == ([], True)


# -- strings in shared memory --------------------------------------------------------------------------------------

LOG = """
from movers.lang import *

log = ""
m = Lock()

def worker(c):
    global log
    {body}

def main():
    t1 = Thread(target=worker, args=("a",))
    t2 = Thread(target=worker, args=("b",))
    t1.start()
    t2.start()
    t1.join()
    t2.join()
    assert len(log) == 2 and sorted_ok(log), f"lost update: log is {{log!r}}"

def sorted_ok(x):
    return x in ("ab", "ba")

Thread(target=main).start()
"""
RACY = LOG.format(body="log += c")
LOCKED = LOG.format(body="with m:\n        log += c")


def _accepted(src: str) -> list[tuple[str, movers.Result]]:
    """The result of every reduction (each accepts these models: none may answer with an error)."""
    out = [(name, movers.check(src, reduction=name)) for name in REDUCTIONS]
    for name, r in out:
        assert r.verdict != "error", (name, r.error)
    return out


def test_a_lost_update_of_a_shared_string_is_found_by_every_reduction() -> None:
    base = movers.check(RACY, reduction="none")
    assert base.verdict == "violation" and "lost update: log is '" in base.violations[0].message
    results = _accepted(RACY)
    assert len(results) >= 8
    for name, r in results:
        assert r.verdict == "violation" and r.violations[0].kind == "assertion", (name, r.verdict, r.error)


def test_a_locked_shared_string_is_verified_by_every_reduction() -> None:
    for name, r in _accepted(LOCKED):
        assert r.verdict == "ok", (name, r.verdict, r.error, [v.message for v in r.violations])


def test_a_shared_string_is_the_same_search_without_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = [movers.check(src) for src in (RACY, LOCKED)]
    monkeypatch.setattr(system, "FAST_PATH", False)
    slow = [movers.check(src, max_violations=1) for src in (RACY, LOCKED)]
    assert [(r.verdict, r.stats.states) for r in fast] == [(r.verdict, r.stats.states) for r in slow]


def test_strings_in_the_trace_and_the_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    r = movers.check(RACY)
    changes = [c for s in r.violations[0].trace for c in s.changes.values()]
    assert "'a'" in changes or "'b'" in changes
    f = tmp_path / "racy.py"
    f.write_text(RACY)
    assert main(["check", str(f), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    trace = out["violations"][0]["trace"]
    assert any(v in ("'a'", "'b'") for step in trace for v in step["changes"].values())
    assert out["violations"][0]["state"]["globals"]["log"] in ("'a'", "'b'")
    html = tmp_path / "r.html"
    assert main(["check", str(f), "--html", str(html), "--quiet"]) == 1
    assert "&#x27;a&#x27;" in html.read_text() or "'a'" in html.read_text()


def test_a_trail_of_a_model_with_string_state_replays(tmp_path: Path) -> None:
    f = tmp_path / "racy.py"
    f.write_text(RACY)
    r = movers.check(f)
    trail = tmp_path / "t.trail"
    write_trail(trail, r, RACY, str(f))
    again = replay(f, read_trail(trail))
    assert again.verdict == "violation" and again.violations[0].message == r.violations[0].message
    assert [(s.thread, s.line, s.changes) for s in again.violations[0].trace] == [
        (s.thread, s.line, s.changes) for s in r.violations[0].trace]


# -- granularity: building a string is local work; reading what it is built from is not -----------------------------

TORN = """
from movers.lang import *

a = "0"
b = "0"

def writer():
    global a, b
    a = "1"
    b = "1"

def reader():
    s = {expr}
    assert s != {torn!r}, "a torn read: " + s

Thread(target=writer).start()
Thread(target=reader).start()
"""


@pytest.mark.parametrize(("expr", "torn"), [('f"{a}{b}"', "01"), ('"".join((a, b))', "01"),
                                             ("str(a) + str(b)", "01"), ('"{}{}".format(a, b)', "01"),
                                             ('"%s%s" % (a, b)', "01")])
def test_each_read_of_a_shared_string_is_its_own_step(expr: str, torn: str) -> None:
    src = TORN.format(expr=expr, torn=torn)
    for name, r in [("none", movers.check(src)), *_accepted(src)]:
        assert r.verdict == "violation", (name, expr)
    # Under statement granularity the expression is one step: it cannot see the write half done.
    assert movers.check(src, granularity="statement").verdict == "ok"


def test_string_work_on_locals_is_glue() -> None:
    program = compile_model(textwrap.dedent("""
    from movers.lang import *
    g = 0
    def f():
        global g
        x = "a,b"
        y = x.split(",")
        z = f"{x}-{len(y)}" + x.upper()[0:1] + "-".join(("p", x))
        g = len(z)
    Thread(target=f).start()
    """))
    code = program.functions["f"]
    costly = [n.line for n in code.nodes if n.costly]
    assert costly == [9], costly  # only the write of g starts a step


def test_a_formatted_list_is_read() -> None:
    """``str(xs)`` and ``f"{xs}"`` read the list's elements: a write of one conflicts with them."""
    src = textwrap.dedent("""
    from movers.lang import *
    xs = [0, 0]
    def w():
        xs[1] = 1
    def r():
        fmt = "%s"
        s = {expr}
        assert s != "[0, 1]" or True
        assert s == "[0, 0]"
    Thread(target=w).start()
    Thread(target=r).start()
    """)
    for expr in ("str(xs)", 'f"{xs}"', "repr(xs)", '"{}".format(xs)', '"%s" % xs', 'fmt % xs'):
        for name, r in [("none", movers.check(src.format(expr=expr))), *_accepted(src.format(expr=expr))]:
            assert r.verdict == "violation", (name, expr)


def test_a_model_method_of_a_string_methods_name_is_still_called() -> None:
    src = textwrap.dedent("""
    from movers.lang import *
    class Box:
        def __init__(self):
            self.v = 1
        def count(self, k):
            return self.v + k
        def upper(self):
            return "B"
    def main():
        b = Box()
        assert b.count(2) == 3 and b.upper() == "B"
        assert "aXa".count("a") == 2 and "x".upper() == "X"
    Thread(target=main).start()
    """)
    assert movers.check(src).verdict == "ok"
    assert run_source(src, "<strings>") == ([], True)


def test_messages_and_print_keep_working() -> None:
    src = textwrap.dedent("""
    from movers.lang import *
    name = "bob"
    def main():
        print("hello", name, f"{name!r}")
        assert name == "alice", f"wrong name {name} ({name!r}) {len(name):>3}"
    Thread(target=main).start()
    """)
    r = movers.check(src)
    assert r.verdict == "violation"
    assert r.violations[0].message.startswith("wrong name bob ('bob')   3")


def test_a_method_lists_and_strings_share_takes_the_receivers_type(monkeypatch: pytest.MonkeyPatch) -> None:
    """``x.count(…)`` may be a list's method as well as a string's (once lists have it, in
    ``BUILTIN_METHODS``): a string receiver still gets ``str.count``, whatever the arity lists take."""
    from movers.lang import expressions

    monkeypatch.setattr(expressions, "BUILTIN_METHODS", expressions.BUILTIN_METHODS | {"count", "index"})
    src = textwrap.dedent("""
    from movers.lang import *
    class Box:
        def index(self, k):
            return k
    def main():
        assert "aXa".count("a") == 2 and "abcabc".count("c", 3) == 1
        assert "abc".index("c") == 2 and Box().index(5) == 5
    Thread(target=main).start()
    """)
    r = movers.check(src)
    assert r.verdict == "ok", (r.error, [v.message for v in r.violations])


# -- random string models: every reduction agrees with the full search --------------------------------------------

_WORDS = ('""', '"a"', '"b"', '"ab"', '"ba"')
_STR_EXPRS = ("s", "u", "t0", '"a"', "s + u", "u + s", 'f"{s}{u}"', "s.upper().lower()", 's.replace("a", "b")',
              '"".join((u, s))', "s[::-1]", 's.strip("a")', "str(len(s))", '"%s%s" % (u, s)', '"{}b".format(s)')
_CONDS = ('"a" in s', 's == u', 's < u', 's.startswith("b")', 'len(s) > 1', 'not s', 's != "ab"', 'u.endswith("a")')


@st.composite
def string_models(draw: st.DrawFn, loops: bool = True) -> str:
    """Two or three threads over string globals ``s`` and ``u`` (every value cut to two characters, so the
    state space is finite), a lock, assertions that can fail, and (``loops``) ``for`` over a string."""
    lines = ["from movers.lang import *", "", f"s = {draw(st.sampled_from(_WORDS))}",
             f"u = {draw(st.sampled_from(_WORDS))}", "m = Lock()"]
    n = draw(st.integers(2, 3))
    for k in range(n):
        body = ["t0 = s"]
        for _ in range(draw(st.integers(1, 3))):
            target = draw(st.sampled_from(("s", "u", "t0")))
            value = f"({draw(st.sampled_from(_STR_EXPRS))})[:2]"
            kind = draw(st.sampled_from((0, 1, 2, 3, 4) if loops else (0, 1, 2, 4)))
            if kind == 0:
                body += ["with m:", f"    {target} = {value}"]
            elif kind == 1:
                body += [f"if {draw(st.sampled_from(_CONDS))}:", f"    {target} = {value}", "else:",
                         f"    {target} = {draw(st.sampled_from(_WORDS))}"]
            elif kind == 2:
                body += [f"assert {draw(st.sampled_from(_CONDS))} or {draw(st.sampled_from(_CONDS))}"]
            elif kind == 3:
                body += ["for ch in t0:", f"    {target} = ({target} + ch)[-2:]"]
            else:
                body += [f"{target} = {value}"]
        lines += ["", f"def worker_{k}():", "    global s, u", *("    " + x for x in body)]
    lines.append("")
    lines += [f"Thread(target=worker_{k}).start()" for k in range(n)]
    return "\n".join(lines) + "\n"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(string_models())
def test_random_string_models_reductions_agree_with_none(src: str) -> None:
    note(src)
    run_differential(src, [r for r in REDUCTIONS if r != "none"], compare_kinds=False)


def test_a_join_of_a_literal_is_a_strings_even_as_a_statement() -> None:
    src = textwrap.dedent("""
    from movers.lang import *
    def main():
        ", ".join(("a", "b"))
        "a note in the middle of a function"
        assert "-".join(("a", "b")) == "a-b"
    Thread(target=main).start()
    """)
    assert movers.check(src).verdict == "ok"
    assert movers.check(src, granularity="statement").verdict == "ok"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(string_models(loops=False), st.sampled_from(("access", "statement")))
def test_random_string_models_agree_with_the_naive_explorer(src: str, granularity: str) -> None:
    """The naive explorer evaluates the model's expressions with CPython's ``eval``: the same verdict and, when
    nothing fails, the same number of states (the same steps, the same values)."""
    note(src)
    r = movers.check(src, granularity=granularity, max_states=50000)
    naive = naive_explore(src, max_states=50000, granularity=granularity)
    assume(r.verdict != "incomplete" and naive.complete)
    assert r.verdict == naive.verdict
    assert {v.kind for v in r.violations} <= naive.kinds
    if r.verdict == "ok":
        assert r.stats.states == naive.states


@pytest.mark.parametrize("expr", ['"%s" % xs', "str(xs)", 'f"{xs}"', '"{}".format(xs)', 'repr(xs)'])
def test_formatting_a_list_is_an_access_of_its_own(expr: str) -> None:
    """``g + str(xs)`` reads ``g``, then the elements of ``xs``: two steps, between which a thread can write
    both (``g`` first), as under CPython."""
    src = textwrap.dedent(f"""
    from movers.lang import *
    xs = [0, 0]
    g = "a"
    def w():
        global g
        g = "b"
        xs[1] = 1
    def r():
        s = g + {expr}
        assert s != "a[0, 1]", s
    Thread(target=w).start()
    Thread(target=r).start()
    """)
    for name, r in [("none", movers.check(src)), *_accepted(src)]:
        assert r.verdict == "violation", (name, expr)
    assert movers.check(src, granularity="statement").verdict == "ok"
