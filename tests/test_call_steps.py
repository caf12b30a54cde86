"""Calls and returns in generated whole steps (lang/codegen_calls.py, lang/codegen.py's ``_static_pushes`` and
``return_source``): a call whose callee is known when the text is written (a function; a method whose receiver's
class is tested against every class that has it) pushes the callee's frame in line, its blank locals literals;
a return goes on in the caller's continuation step (``Code.fast_return``); and every other shape (a method two
classes define differently, a builtin receiver, defaults, keywords, ``*args``, a heap the globals do not
reach) falls back to the general path or the closures. Each model is the closures' search, state for
state."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

import pytest
from conftest import ROOT
from differential import search_summary
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import movers
from movers.checker import compile_source
from movers.lang import codegen, codegen_calls
from movers.semantics import system

sys.path.insert(0, str(ROOT / "benchmarks"))
import shapes  # noqa: E402  (benchmarks/shapes.py: the models of issue 25's shapes)

# ``bump`` has two codes (A's, inherited by C, and B's): looked up when the step runs. ``peek`` is A's alone,
# for A's objects and C's: known when the text is written, tested against both classes.
POLY = """
from movers.lang import *


class A:
    def __init__(self):
        self.n = 0

    @synchronized
    def bump(self, k):
        self.n = self.n + k
        return self.n

    def peek(self):
        return self.n > 1


class B:
    def __init__(self):
        self.n = 10

    @synchronized
    def bump(self, k):
        self.n = self.n - k
        return self.n


class C(A):
    pass


a = A()
b = B()
c = C()
objs = [a, b, c]


def worker(i):
    o = objs[i]
    x = o.bump(1)
    y = a.bump(x)
    if c.peek():
        z = c.bump(2)
    p = a.peek()
    assert y != 100


for i in range(3):
    Thread(target=worker, args=(i,)).start()
"""

# Five classes define ``bump``: more than a call's test tries (``codegen_calls._PREDICTED``), so the method is
# looked up when the step runs (``_method``).
MANY = "from movers.lang import *\n\n" + "".join(
    f"class K{i}:\n    def __init__(self):\n        self.n = {i}\n\n    def bump(self, k):\n"
    f"        self.n = self.n + k\n        return self.n\n\n\n" for i in range(5)) + """
objs = [K0(), K1(), K2(), K3(), K4()]


def worker(i):
    o = objs[i]
    x = o.bump(1)
    x = o.bump(x)


Thread(target=worker, args=(0,)).start()
Thread(target=worker, args=(4,)).start()
"""

# ``o.put(v)`` where three classes define ``put`` with defaults: a boolean, an int, None (each class its own
# branch of the call, the defaults as literals), a string (that class is left to the closures), and a
# subclass that inherits one (tested with its base).
DISPATCH = """
from movers.lang import *


class P:
    def __init__(self):
        self.n = 0

    @synchronized
    def put(self, v, flag=True, extra=None):
        if flag and extra is None:
            self.n = self.n + v
        return self.n


class Q:
    def __init__(self):
        self.n = 10

    def put(self, v, k=2):
        self.n = self.n - v * k
        return self.n


class R:
    def __init__(self):
        self.n = 5

    def put(self, v, tag="r"):
        self.n = self.n + len(tag)
        return self.n


class S(P):
    pass


objs = [P(), Q(), R(), S()]


def worker(i):
    o = objs[i]
    x = o.put(1)
    x = o.put(x, False)
    assert x != 99


for i in range(4):
    Thread(target=worker, args=(i,)).start()
"""

# Defaults, a call that fills ``*vs``, keyword arguments: bound when the step runs (``_method``) or on the
# closures.
DEFAULTS = """
from movers.lang import *


class Cell:
    def __init__(self):
        self.v = 0

    @synchronized
    def put(self, v, extra=1):
        self.v = self.v + v + extra
        return self.v

    @synchronized
    def many(self, *vs):
        self.v = self.v + len(vs)

    @synchronized
    def kw(self, *, v):
        self.v = v


def add(a, b=2):
    return a + b


cell = Cell()


def worker():
    r = cell.put(1)
    r = cell.put(1, 2)
    r = cell.put(v=3)
    cell.many(1, 2)
    cell.kw(v=r)
    r = add(r)
    r = add(r, b=1)


Thread(target=worker).start()
Thread(target=worker).start()
"""

# Objects reachable only from a thread's locals (the globals do not reach every object: the closures walk the
# heap after each call and return), passed as arguments from locals and fields (``b.next``), a receiver read from
# a field (``cell.inner``), references returned. A recursive function, ``return f(...)``, a condition that is a
# call, and values boxed on their way (booleans, tuples).
REFS = """
from movers.lang import *


class Box:
    def __init__(self, v):
        self.v = v
        self.next = None


class Cell:
    def __init__(self):
        self.total = 0
        self.inner = None

    @synchronized
    def add(self, b):
        self.total = self.total + b.v
        return b

    def get(self):
        return self.inner

    def pair(self, x):
        return (x, x > 1)


cell = Cell()
cell.inner = Cell()


def rec(n):
    if n <= 0:
        return 0
    return rec(n - 1) + 1


def twice(c, b):
    return c.add(b)


def worker(k):
    b = Box(k)
    b.next = Box(k + 1)
    c = cell.add(b)
    d = cell.add(b.next)
    e = cell.inner.add(d)
    f = cell.get()
    t = cell.pair(k)
    if cell.add(b) is b:
        n = rec(2)
        assert n == 2
    g = twice(cell, b)


Thread(target=worker, args=(1,)).start()
Thread(target=worker, args=(2,)).start()
"""

# A method name a list has too: the receiver's class decides when the step runs (a list's ``pop`` is the
# closures').
LIST_POP = """
from movers.lang import *


class Stack:
    def __init__(self):
        self.n = 3

    def pop(self):
        self.n = self.n - 1
        return self.n


s = Stack()
xs = [1, 2, 3]
m = Lock()


def worker(i):
    with m:
        if i == 0:
            a = s.pop()
        else:
            a = xs.pop()
    assert a >= 0


Thread(target=worker, args=(0,)).start()
Thread(target=worker, args=(1,)).start()
"""

# Calls into local work under access granularity (``begin``'s first statement touches nothing shared), a
# function that returns nothing, and a continuation that stores into a global.
LOCAL_WORK = """
from movers.lang import *

m = Lock()
total = 0


class Counter:
    def __init__(self):
        self.n = 0

    def begin(self, k):
        j = k + 1
        with m:
            self.n = self.n + j
        return j


def note(v):
    global total
    with m:
        total = total + v


counter = Counter()


def worker(k):
    global total
    r = counter.begin(k)
    note(r)
    total = counter.begin(r)


Thread(target=worker, args=(1,)).start()
Thread(target=worker, args=(2,)).start()
"""

# No global reaches the objects, and ``with self.m:`` keeps the lock in a hidden local without a walk (the
# closures walk only where a step moves references in frames): a state's numbering is then not the walk's, and
# a call's step, which the closures do walk after, renumbers more than the new frame's references.
HIDDEN = """
from movers.lang import *


class Box:
    def __init__(self):
        self.a = Box2()
        self.m = Lock()
        self.n = 0

    def work(self):
        with self.m:
            self.n = self.n + 1
            k = self.n
            self.a.poke(k)


class Box2:
    def __init__(self):
        self.v = 0

    def poke(self, k):
        self.v = k


def worker():
    b = Box()
    b.work()
    b.work()


Thread(target=worker).start()
Thread(target=worker).start()
"""

MODELS = {
    "hidden": HIDDEN,
    "poly": POLY,
    "many": MANY,
    "dispatch": DISPATCH,
    "defaults": DEFAULTS,
    "refs": REFS,
    "list_pop": LIST_POP,
    "local_work": LOCAL_WORK,
    "monitor": shapes.monitor_model(2, 1),
}




def _same_successors(source: str, granularity: str) -> int:
    """Every reachable state's successors on the generated code are the closures' (``steps``); the number of
    states whose successors the generated code gave (not None)."""
    ts = system.TransitionSystem(compile_source(source, "model.py", granularity))
    s0 = ts.initial()
    seen, todo, fast = {s0}, [s0], 0
    while todo:
        s = todo.pop()
        ts.fast_path = False
        slow = [o.state for o in ts.steps(s)]
        ts.fast_path = True
        plain = ts.successors(s)
        if plain is not None:
            assert plain[0] == [x for x in slow if x is not None]
            fast += 1
        for x in slow:
            if x is not None and x not in seen:
                seen.add(x)
                todo.append(x)
    return fast


@pytest.mark.parametrize("granularity", ["access", "statement"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_state_has_the_closures_successors(name: str, granularity: str) -> None:
    assert _same_successors(MODELS[name], granularity) > 0


@pytest.mark.parametrize("reduction", ["none", "optimistic", "dwyer-sda"])
@pytest.mark.parametrize("granularity", ["access", "statement"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_same_search_without_the_fast_path(name: str, granularity: str, reduction: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    kw = {"granularity": granularity, "reduction": reduction, "time_limit": 60}
    fast = search_summary(movers.check(MODELS[name], **kw))  # type: ignore[arg-type]
    monkeypatch.setattr(system, "FAST_PATH", False)
    assert fast == search_summary(movers.check(MODELS[name], **kw))  # type: ignore[arg-type]


# -- what the generated text does --------------------------------------------------------------------------------


def _step(source: str, granularity: str, function: str, name: str) -> str:
    code = next(c for c in compile_source(source, "model.py", granularity).codes() if c.name == function)
    text = code.fast_source
    return text[text.index(f"def {name}("):].split("\ndef ")[0]


def test_the_monitors_call_step_pushes_the_frame_in_line() -> None:
    # ``cell.put(v)``: the receiver's class tested against Cell, the frame ``(put, 0, self, v, <blank>)`` built
    # in line with its blank locals as literals; no look-up, no helper but the heap walk's question.
    step = _step(shapes.monitor_model(2, 4), "statement", "producer", "_s0")
    for helper in ("_method(", "_frame(", "_locals(", "_resume("):
        assert helper not in step
    assert ", 0, _1, _2, None, None)" in step and "and not _cover(g, heap): _fail()" in step


def test_a_method_with_two_codes_is_dispatched_by_class() -> None:
    code = compile_source(POLY, "model.py", "statement").functions["worker"]
    steps = code.fast_source.split("\ndef ")
    # ``o.bump(1)``: A's code for objects of A and C, B's for B's, one branch each; ``c.peek()``: A's code for
    # objects of A and of C, tested against both classes. No look-up.
    assert not any("_method(" in s for s in steps)
    assert any(re.search(r"if (_\d+) is _a\d+ or \1 is _a\d+:\n.*\n *elif \1 is _a\d+:\n.*\n *else:\n *_fail\(\)", s)
               for s in steps)
    assert any(re.search(r"if _\d+ is not _a\d+ and _\d+ is not _a\d+: _fail\(\)", s) for s in steps)


def test_defaults_are_literals_in_each_class_branch() -> None:
    code = compile_source(DISPATCH, "model.py", "statement").functions["worker"]
    text = code.fast_source
    assert "_method(" not in text
    # P's (and S's) ``put(v)``: ``flag`` and ``extra`` filled; Q's: ``k``; R's string default: not written.
    assert re.search(r"is _a\d+ or _\d+ is _a\d+:\n *pc = \(_a\d+, \[_\d+, \w+, TRUE, None\]", text)
    assert re.search(r"pc = \(_a\d+, \[_\d+, \w+, 2\]", text)
    assert text.count("elif") >= 1 and "'r'" not in text


def test_a_call_of_a_callee_compiled_later_is_written_once_it_is() -> None:
    # ``producer`` is compiled before the methods of ``Cell``: its text is written once they are
    # (``codegen.deferred``), so the pushed frame's blank locals are known.
    program = compile_source(shapes.monitor_model(1, 1), "model.py", "statement")
    assert "None, None)" in program.functions["producer"].fast_source


def test_deferred_attaches_nothing_when_the_block_raises() -> None:
    code = compile_source(shapes.monitor_model(1, 1), "model.py", "statement").functions["producer"]
    source = code.fast_source
    code.fast_source = ""
    with pytest.raises(RuntimeError), codegen.deferred():
        codegen.attach(code, [], [], {})
        raise RuntimeError
    assert code.fast_source == ""
    code.fast_source = source


def test_returns_hand_over_to_the_callers_continuation() -> None:
    program = compile_source(shapes.monitor_model(1, 1), "model.py", "access")
    consumer = program.functions["consumer"]
    assert any(consumer.fast_return)  # ``a = cell.take()``'s continuation, then the next call
    take = program.classes["Cell"].methods["take"]
    leave = take.fast_source[take.fast_source.index("def _s"):]
    assert "_rf(" in leave and "loc" not in leave.split("\ndef _s8(")[-1].split("\ndef ")[0]


def _counting(monkeypatch: pytest.MonkeyPatch, names: list[str]) -> dict[str, int]:
    counts = dict.fromkeys(names, 0)

    def wrap(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*a: Any) -> Any:
            counts[name] += 1
            return real(*a)
        return counted

    for name in names:
        if name in codegen.HELPERS:
            monkeypatch.setitem(codegen.HELPERS, name, wrap(name, codegen.HELPERS[name]))
    monkeypatch.setattr(system, "drive_frames", wrap("drive_frames", system.drive_frames))
    monkeypatch.setattr(codegen_calls, "drive_frames", wrap("drive_frames", codegen_calls.drive_frames))
    counts["drive_frames"] = 0
    return counts


@pytest.mark.parametrize("granularity", ["access", "statement"])
def test_the_monitors_calls_and_returns_run_no_helper(granularity: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: a look-up (``_method``) and a frame (``_frame``) per call, a hand-over to the driver's loop
    # (``_resume``, ``drive_frames``) per return.
    counts = _counting(monkeypatch, ["_method", "_frame", "_locals", "_resume"])
    r = movers.check(shapes.monitor_model(2, 2), granularity=granularity)
    assert r.verdict == "ok" and r.stats.states > 1000
    assert counts == {"_method": 0, "_frame": 0, "_locals": 0, "_resume": 0, "drive_frames": 0}


@pytest.mark.parametrize("granularity", ["access", "statement"])
def test_the_queues_calls_are_dispatched_without_a_look_up(granularity: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # ``q.put(v)``, ``q.get()``: the queue library's classes define ``put`` and ``get`` twice (Queue's, which
    # LifoQueue inherits, and SimpleQueue's), with defaults. Before: a look-up and a binding per call.
    counts = _counting(monkeypatch, ["_method"])
    r = movers.check(shapes.queue_model(1, 2), granularity=granularity)
    assert r.verdict == "ok" and r.stats.states == shapes.bare_search("queue", (1, 2), granularity == "access")
    assert counts["_method"] == 0


def test_the_shapes_that_fall_back_do_run_the_helpers(monkeypatch: pytest.MonkeyPatch) -> None:
    # The counting above can fail: a method five classes define is looked up; a callee that starts with local
    # work under access granularity goes on in ``_resume``.
    counts = _counting(monkeypatch, ["_method", "_resume"])
    movers.check(MANY, granularity="statement")
    movers.check(LOCAL_WORK, granularity="access")
    assert counts["_method"] > 0 and counts["_resume"] > 0


# -- random models -----------------------------------------------------------------------------------------------

CHECKER = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def _call_models(draw: Any) -> str:
    """A monitor-like class (``@synchronized`` or not) and a plain class, methods reading and writing fields,
    returning ints, booleans, None or tuples, calling one another and a function; two threads calling them
    with constants, locals, globals and fields as arguments, the values returned into locals, globals and
    conditions."""
    sync = draw(st.booleans())
    values = st.sampled_from(["0", "1", "True", "None", "k", "self.n", "(k, 1)", "self.n + k", "k > 1"])
    lines = ["from movers.lang import *", "", "g = 0", "", "", "class Cell:", "    def __init__(self):",
             "        self.n = 0", "        self.f = False", ""]
    for name, params in (("put", "k"), ("get", "k=1"), ("swap", "k")):
        body = []
        if draw(st.booleans()):
            body.append(f"        self.n = {draw(st.sampled_from(['k', 'self.n + 1', '0']))}")
        if name == "swap" and draw(st.booleans()):
            body.append("        self.f = not self.f")
        if draw(st.booleans()):
            body.append(f"        return {draw(values)}")
        head = ["    @synchronized"] if sync else []
        lines += [*head, f"    def {name}(self, {params}):", *(body or ["        pass"]), ""]
    lines += ["", "class Other:", "    def __init__(self):", "        self.n = 5", "",
              "    def put(self, k):", f"        return {draw(st.sampled_from(['k', 'self.n', 'None']))}", "",
              "", "def helper(a, b):", f"    return {draw(st.sampled_from(['a', 'b', 'a + b', 'a == b']))}", "", "",
              "cell = Cell()", "other = Other()", "both = [cell, other]", "", ""]
    calls = st.sampled_from([
        "x = cell.put(k)", "x = cell.get()", "x = cell.get(2)", "x = cell.swap(x)", "cell.put(1)",
        "x = both[k % 2].put(k)", "x = helper(k, 1)", "x = helper(x, cell.n)", "if cell.swap(k): x = 1",
        "x = cell.put(cell.n)", "g = cell.put(k)", "x = other.put(x)", "x = cell.get(k=k)"])
    for t in range(2):
        body = [draw(calls) for _ in range(draw(st.integers(1, 3)))]
        lines += [f"def worker{t}(k):", "    global g", "    x = 0", *(f"    {s}" for s in body), "", ""]
    lines += ["Thread(target=worker0, args=(1,)).start()", "Thread(target=worker1, args=(2,)).start()"]
    return "\n".join(lines) + "\n"


@CHECKER
@given(_call_models(), st.sampled_from(["access", "statement"]))
def test_random_call_models_have_the_closures_successors(src: str, granularity: str) -> None:
    note(src)
    _same_successors(src, granularity)


@CHECKER
@given(_call_models(), st.sampled_from(["none", "optimistic"]), st.sampled_from(["access", "statement"]))
def test_random_call_models_are_the_same_search_without_the_fast_path(src: str, reduction: str,
                                                                      granularity: str) -> None:
    note(src)
    kw = {"granularity": granularity, "reduction": reduction, "time_limit": 60, "max_states": 20_000}
    fast = search_summary(movers.check(src, **kw))  # type: ignore[arg-type]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(system, "FAST_PATH", False)
        assert fast == search_summary(movers.check(src, **kw))  # type: ignore[arg-type]
