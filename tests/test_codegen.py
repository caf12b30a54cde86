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
from differential import search_summary
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import movers
from movers.checker import compile_source
from movers.lang import codegen, codegen_calls, codegen_sync
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




def _both(source: str, monkeypatch: pytest.MonkeyPatch, **kw: object) -> tuple[tuple[object, ...], ...]:
    kw.setdefault("time_limit", 60)
    fast = search_summary(movers.check(source, **kw))  # type: ignore[arg-type]
    with monkeypatch.context() as m:
        m.setattr(system, "FAST_PATH", False)
        slow = search_summary(movers.check(source, **kw))  # type: ignore[arg-type]
    return fast, slow


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_is_the_same_search_without_the_fast_path(path: Path, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    fast, slow = _both(path.read_text(), monkeypatch, max_states=150_000)
    assert fast == slow


# The reductions run the tracked variants (their Effects must be the closures', or classifications differ).
@pytest.mark.parametrize("reduction", ["optimistic", "static-por", "transactions", "dwyer-sda", "dwyer-ld+wsldom"])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_is_the_same_reduced_search_without_the_fast_path(
    path: Path, reduction: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = _both(path.read_text(), monkeypatch, max_states=20_000, reduction=reduction)
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


def test_the_counter_runs_on_whole_steps_and_generated_guards() -> None:
    program = compile_source(COUNTER, "model.py")
    worker = program.functions["worker"]
    costly = [n for n in worker.nodes if n.costly]
    assert costly and all(n.fast_step is not None for n in costly)
    assert [n.fast_guard is not None for n in worker.nodes if n.guard is not None] == [True]
    checker = program.functions["checker"]
    assert all(n.fast_guard is not None for n in checker.nodes if n.guard is not None)
    # The guarded steps also have the one-call form (guard and step together), and the whole steps keep the
    # frame's locals in variables, not in a list.
    assert all(n.fast_succ is not None for n in worker.nodes if n.guard is not None)
    assert "_l0" in worker.fast_source and "loc = list(top[2:])" not in worker.fast_source.split("def _s")[1]


def test_locals_stay_a_list_where_a_line_holds_a_string() -> None:
    # The rewrite of ``loc[i]`` into ``_l{i}`` is textual, so it leaves a function whose lines hold a string
    # literal on the list (where a message could spell ``loc[0]``).
    from movers.ir.program import Code

    code = Code("f", [], ["a"])
    assert codegen._step_body(code, ["loc[0] = 1", "pc = 1"], False)[0].strip().startswith("_c, pc, _l0")
    assert codegen._step_body(code, ["_m = 'loc[0]'", "loc[0] = 1", "pc = 1"], False)[0].strip() == \
        "loc = list(top[2:])"
    assert codegen._step_body(code, ["_f(loc)", "pc = 1"], False)[0].strip() == "loc = list(top[2:])"


def test_the_fast_path_runs_and_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each step on the closures builds a Ctx: on the fast path the counter's steps build none.
    made = {"n": 0}
    real = system.Ctx

    def counted(*a: object, **k: object) -> object:
        made["n"] += 1
        return real(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(system, "Ctx", counted)
    r = movers.check(COUNTER)
    fast = made["n"]
    made["n"] = 0
    monkeypatch.setattr(system, "FAST_PATH", False)
    movers.check(COUNTER)
    assert fast < 20 and made["n"] >= r.stats.transitions


def test_a_wrong_fast_function_would_be_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # The comparisons above can fail: a back end whose + subtracts makes other states.
    monkeypatch.setitem(codegen._BINOPS, ast.Add, "-")
    fast, slow = _both(COUNTER, monkeypatch)
    assert fast != slow


# -- what the generated text is made of ----------------------------------------------------------------------

# The names generated code may use: its parameters and temporaries, the helpers, Python's keywords and type.
_OWN = {"def", "return", "if", "else", "is", "not", "and", "or", "type", "int", "bool", "tuple", "None", "True",
        "False", "len", "g", "heap", "loc", "t", "pc", "eff", "_r", "_i", "_o", "_lo", "_hi", "_value", "i",
        "is_list", "is_thread", "reads", "writes", "acquired", "released", "append", "for", "in", "top", "th",
        "threads", "_v", "_w", "_c", "_code", "list", "field_index", "get", "builtin", "break", *codegen.HELPERS,
        "elif", "value", "_f", "_a", "nodes", "entry", "costly",
        *codegen_sync.NAMES, *codegen_calls.NAMES}
_TEMP = re.compile(r"_\d+|_[ntsgaxlr]\d+")


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
@given(st.one_of(models(), value_models()),
       st.sampled_from(["none", "optimistic", "static-por", "transactions", "dwyer-sda"]))
def test_random_models_are_the_same_search_without_the_fast_path(src: str, reduction: str) -> None:
    """The shared strategy's models, and its value models (booleans and ints mixed, None, tuples, ``is``)."""
    note(src)
    with pytest.MonkeyPatch.context() as mp:
        fast, slow = _both(src, mp, max_states=20_000, reduction=reduction)
    assert fast == slow


# -- invariants, compiled like guards -----------------------------------------------------------------------

INVARIANTS = """
from movers.lang import *

m = Lock()
count = 0
flag = False

@invariant
def bounded():
    "A docstring is no statement."
    return count <= 3 and not (flag and count == 0)

@invariant
def divides():
    return 6 // (3 - count) >= 0

def worker():
    global count, flag
    with m:
        count = count + 1
        flag = True

for i in range(3):
    Thread(target=worker).start()
"""


@pytest.mark.parametrize("variant", ["fails", "false", "holds"])
def test_invariants_on_the_fast_path_are_the_closures(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    source = {"fails": INVARIANTS,  # divides() divides by zero once count is 3
              "false": INVARIANTS.replace("count <= 3", "count <= 2"),
              "holds": INVARIANTS.replace("6 // (3 - count)", "6 // (4 - count)")}[variant]
    fast, slow = _both(source, monkeypatch)
    assert fast == slow
    expected = {"fails": "invariant divides() fails", "false": "invariant bounded() is false", "holds": None}
    r = movers.check(source)
    if expected[variant] is None:
        assert r.verdict == "ok"
    else:
        assert r.violations[0].kind == "invariant" and expected[variant] in r.violations[0].message


def test_an_invariant_of_one_return_is_generated_code() -> None:
    program = compile_source(INVARIANTS, "model.py")
    assert program.functions["bounded"].fast_value is not None
    assert program.functions["worker"].fast_value is None
    _assert_own_text(program.functions["bounded"].fast_source)
    g0 = tuple(None for _ in program.globals)
    with pytest.raises(Exception):  # noqa: B017, PT011  (unset globals: not its shape, whatever it raises)
        program.functions["bounded"].fast_value(g0, ())  # type: ignore[misc]


def test_a_tracked_variant_that_forgets_reads_would_be_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # Effects matter to the reductions: without the reads of globals, optimistic classifies otherwise.
    monkeypatch.setattr(codegen._Source, "record", lambda self, line: None)
    fast, slow = _both(COUNTER, monkeypatch, reduction="optimistic")
    assert fast != slow


# -- shapes CPython refuses ---------------------------------------------------------------------------------

DEEP = "from movers.lang import *\nx = 0\ndef f():\n    global x\n    x = " + " + ".join(["1"] * 400) + \
       "\n    assert x == 400\nThread(target=f).start()\n"


def test_a_deep_expression_stays_on_the_closures(monkeypatch: pytest.MonkeyPatch) -> None:
    # 400 additions need no parenthesis in the model; the generated text would nest 400 (CPython allows 200).
    fast, slow = _both(DEEP, monkeypatch)
    assert fast == slow and fast[0] == "ok"


def test_source_cpython_refuses_leaves_the_code_on_its_closures(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the depth bound, the compile fails: the code keeps its closures instead of the check failing.
    monkeypatch.setattr(codegen, "MAX_DEPTH", 10**6)
    program = compile_source(DEEP, "model.py")
    assert all(n.fast is None for n in program.functions["f"].nodes)
    assert movers.check(DEEP).verdict == "ok"


def test_lock_methods_on_plain_locks_are_generated() -> None:
    program = compile_source((EXAMPLES[0].parent / "fq_counter.py").read_text(), "fq_counter.py")
    calls = [n for c in program.codes() for n in c.nodes
             if n.source.endswith((".acquire()", ".release()")) and n.costly]
    assert calls and all(n.fast is not None for n in calls)
    assert all(n.fast_guard is not None for n in calls if n.kind == "acquire")


# -- references in locals, the main thread's code, invariants over module constants ---------------------------

# Lock references kept in locals (dining philosophers, shape 4 of issue 25): copied from a list, swapped,
# taken with ``with`` and with ``acquire()``/``release()``, a field read and written through a local reference,
# a local overwritten with another reference; and (``box``) an object only a local reaches, where the globals
# do not cover the heap and the closures walk it.
LOCAL_REFS = """
import threading

N = 3
forks = [threading.Lock() for _ in range(N)]
counters = [None] * N
eating = [False] * N


class Counter:
    def __init__(self):
        self.n = 0


for k in range(N):
    counters[k] = Counter()


def philosopher(i):
    first = forks[i]
    second = forks[(i + 1) % N]
    if i == N - 1:
        first, second = second, first
    mine = counters[i]
    with first:
        with second:
            eating[i] = True
            mine.n = mine.n + 1
            eating[i] = False
    first = forks[0]
    first.acquire()
    mine.n = mine.n + 1
    first.release()
    BOX


a = threading.Thread(target=philosopher, args=(0,))
b = threading.Thread(target=philosopher, args=(1,))
c = threading.Thread(target=philosopher, args=(2,))
a.start()
b.start()
c.start()
a.join()
b.join()
c.join()
assert counters[0].n == 2
"""
BOX = """box = Counter()
    other = box
    box = forks[1]
    with box:
        other.n = 1"""


def _closure_steps(source: str, **kw: object) -> tuple[int, int, int]:
    """How many steps of a search ran on the closures, how many states ``successors`` gave up on (their
    successors computed twice), and how many invariant checks ran a frame."""
    ts = system.TransitionSystem
    n = [0, 0, 0]
    real_closures, real_given_up, real_run = ts._run_closures, ts.given_up_successors, system._run_to_completion

    def closures(self: object, *a: object) -> object:
        n[0] += 1
        return real_closures(self, *a)  # type: ignore[arg-type]

    def given_up(self: object, *a: object) -> object:
        # False: the state's successors are given up (``successors`` gives None, the plain search's
        # transition cache too), and ``steps`` computes them again.
        ok = real_given_up(self, *a)  # type: ignore[arg-type]
        n[1] += not ok
        return ok

    def run(ctx: object, limit: object, what: str, *a: object) -> object:
        # A model function run to completion outside any thread: an invariant (``holds``) or ``call``, not
        # the module's initialisation.
        n[2] += what != "module initialisation"
        return real_run(ctx, limit, what, *a)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ts, "_run_closures", closures)
        mp.setattr(ts, "given_up_successors", given_up)
        mp.setattr(system, "_run_to_completion", run)
        movers.check(source, **kw)  # type: ignore[arg-type]
    return n[0], n[1], n[2]


@pytest.mark.parametrize("reduction", ["none", "optimistic", "static-por", "transactions", "dwyer-sda"])
@pytest.mark.parametrize("granularity", ["access", "statement"])
@pytest.mark.parametrize("box", [False, True], ids=["covered", "box"])
def test_references_in_locals_are_the_closures(box: bool, granularity: str, reduction: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    source = LOCAL_REFS.replace("BOX", BOX if box else "pass")
    fast, slow = _both(source, monkeypatch, reduction=reduction, granularity=granularity)
    assert fast == slow and fast[0] == "ok"


def test_references_in_locals_run_on_the_generated_code() -> None:
    # Every step of the philosophers, and of the main thread that joins them, is generated code: no state has
    # its successors computed twice. Where only a local reaches an object (the box), the steps that move or
    # drop references fall back, as they must (the closures walk the heap there).
    source = LOCAL_REFS.replace("BOX", "pass")
    for granularity in ("access", "statement"):
        assert _closure_steps(source, granularity=granularity)[:2] == (0, 0)
        program = compile_source(source, "model.py")
        philosopher = program.functions["philosopher"]
        assert all(n.fast is not None for n in philosopher.nodes)
        assert all(n.fast_guard is not None for n in philosopher.nodes if n.guard is not None)
    assert _closure_steps(LOCAL_REFS.replace("BOX", BOX))[0] > 0


def test_without_the_cover_check_the_box_would_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    # The box's object is reached from a local only: storing references there without the closures' walk
    # makes other states (or other Effects), which the comparison catches.
    monkeypatch.setattr(codegen, "_cover", lambda g, heap: True)
    monkeypatch.setitem(codegen.HELPERS, "_cover", lambda g, heap: True)
    source = LOCAL_REFS.replace("BOX", BOX)
    fast, slow = _both(source, monkeypatch, reduction="dwyer-sda")
    fast_none, slow_none = _both(source, monkeypatch)
    assert fast != slow or fast_none != slow_none


CONSTANT_INVARIANT = """
import threading
from movers.lang import invariant

K = 2
L = 2
DEBUG = False
m = threading.Lock()
count = 0
fin = 0


@invariant
def total():
    return fin < K or count == K * L or DEBUG


def worker():
    global count, fin
    for i in range(L):
        with m:
            count += 1
    with m:
        fin += 1


w0 = threading.Thread(target=worker)
w1 = threading.Thread(target=worker)
w0.start()
w1.start()
w0.join()
w1.join()
"""


@pytest.mark.parametrize("variant", ["holds", "false", "reassigned", "late", "local"])
def test_invariants_over_module_constants_are_the_closures(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    last = "    with m:\n        fin += 1\n"
    source = {
        "holds": CONSTANT_INVARIANT,
        "false": CONSTANT_INVARIANT.replace("count += 1", "count += 2"),
        # L assigned by a function: no constant (folded as 2, the invariant would hold at the end).
        "reassigned": CONSTANT_INVARIANT.replace("global count, fin", "global count, fin, L")
                                        .replace(last, "    L = 3\n" + last),
        # K assigned only after the threads start: no constant either (unbound in the first states).
        "late": CONSTANT_INVARIANT.replace("K = 2\n", "").replace("w0.join()", "K = 2\nw0.join()"),
        # a local of the same name elsewhere: the count is conservative, and the answer the same.
        "local": CONSTANT_INVARIANT.replace(last, "    K = 0\n" + last),
    }[variant]
    fast, slow = _both(source, monkeypatch)
    assert fast == slow
    assert fast[0] == ("ok" if variant in ("holds", "local") else "violation")


@pytest.mark.parametrize(("source", "expected"), [
    ("K = 3\nB = True\nN = None\nS = 'x'\nH = 2 ** 70\nW = 10 ** 30\n", {"K": 3, "B": True}),
    ("K = 3\ndef f():\n    global K\n    K = 4\n", {}),
    ("K = 3\ndef f():\n    global K\n", {}),
    ("K = 3\ndef f():\n    K = 4\n", {}),
    ("K = 3\nK = 4\n", {}),
    ("K = 3\nfor K in range(2):\n    pass\n", {}),
    ("K = 3\ndef f(K):\n    pass\n", {}),
    ("K = 3\nimport K\n", {}),
    ("K = 3\ndel K\n", {}),
    ("K = 3\ndef K():\n    pass\n", {}),
    ("K = 3\ntry:\n    pass\nexcept E as K:\n    pass\n", {}),
    ("if True:\n    K = 3\n", {}),
    ("K: int = 3\n", {}),
    ("K, L = 3, 4\n", {}),
])
def test_module_constants_are_names_bound_once_to_a_literal(source: str, expected: dict[str, object]) -> None:
    tree = ast.parse(source)
    assert codegen.module_constants(tree, tree.body) == expected


def test_module_constants_are_bound_before_the_first_thread_starts() -> None:
    tree = ast.parse("K = 3\nL = 4\n")
    assert codegen.module_constants(tree, tree.body[:1]) == {"K": 3}
    program = compile_source(CONSTANT_INVARIANT.replace("K = 2\n", "").replace("w0.join()", "K = 2\nw0.join()"),
                             "model.py")
    assert program.functions["total"].fast_value is None  # K * L, K not folded: the product stays on the closures


def test_an_invariant_over_module_constants_is_generated_code() -> None:
    # ``K * L`` (a product the generated code leaves to the closures) folds to a literal: the invariant is
    # generated code, and the search never evaluates it on the closures.
    program = compile_source(CONSTANT_INVARIANT, "model.py")
    assert program.functions["total"].fast_value is not None
    _assert_own_text(program.functions["total"].fast_source)
    assert _closure_steps(CONSTANT_INVARIANT) == (0, 0, 0)
    assert _closure_steps(CONSTANT_INVARIANT.replace("K * L", "K * fin"))[2] > 0  # fin is no constant


@pytest.mark.parametrize("variant", ["holds", "false", "fails", "races"])
def test_the_plain_search_checks_invariants_as_dfs_does(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # With invariants the plain search (search/plain.py) applies, and checks each state it stores where
    # dfs.py does: same states, transitions, violations and traces.
    from movers.search import plain

    source = {"holds": CONSTANT_INVARIANT, "false": CONSTANT_INVARIANT.replace("count += 1", "count += 2"),
              "fails": INVARIANTS, "races": COUNTER}[variant]
    kw: dict[str, object] = {"races": True} if variant == "races" else {}
    chosen: list[bool] = []
    real = plain.applies
    monkeypatch.setattr(plain, "applies", lambda search: chosen.append(real(search)) or chosen[-1])
    fast = movers.check(source, **kw)  # type: ignore[arg-type]
    assert chosen and all(chosen)
    monkeypatch.setattr(plain, "applies", lambda search: False)
    slow = movers.check(source, **kw)  # type: ignore[arg-type]
    assert search_summary(fast) == search_summary(slow)
    assert [v.trace for v in fast.violations] == [v.trace for v in slow.violations]
    assert fast.verdict == ("ok" if variant == "holds" else "violation")


# -- monitors, conditions, events, calls and returns (lang/codegen_sync.py, lang/codegen_calls.py) -----------

MONITOR = """
from movers.lang import *


class Buffer:
    def __init__(self, b):
        self.bound = b
        self.items = [0] * b
        self.head = 0
        self.tail = b - 1

    @synchronized
    def add(self, o):
        while self.tail == self.head:
            wait(self)
        self.items[self.head] = o
        self.head = (self.head + 1) % self.bound
        notify_all(self)

    @synchronized
    def take(self):
        while self.head == (self.tail + 1) % self.bound:
            wait(self)
        self.tail = (self.tail + 1) % self.bound
        notify_all(self)
        return self.last()

    def last(self):
        return self.items[self.tail]


def item(k, base):
    return base + k


buf = Buffer(3)


def producer(base):
    for k in range(1):
        x = item(k, base)
        buf.add(x)


def consumer():
    last = 0
    for k in range(2):
        v = buf.take()
        assert v > last - SLACK, "items out of order"
        last = v


SLACK = 100
Thread(target=producer, args=(1,)).start()
Thread(target=producer, args=(10,)).start()
Thread(target=consumer).start()
"""

SYNCHRONIZED_BLOCK = """
from movers.lang import *


class Box:
    def __init__(self):
        self.full = False
        self.value = 0


class Holder:
    def __init__(self, b):
        self.box = b

    def get(self):
        return self.box


box = Box()
holder = Holder(box)


def put(v):
    with synchronized(box):
        while box.full:
            wait(box)
        box.value = v
        box.full = True
        notify(box)


def take():
    b = holder.get()
    holder.get()
    with synchronized(b):
        while not b.full:
            wait(b)
        assert b.value != BAD
        b.full = False
        notify_all(b)


BAD = 0
Thread(target=put, args=(1,)).start()
Thread(target=put, args=(2,)).start()
Thread(target=take).start()
Thread(target=take).start()
"""

CONDITION = """
import threading

cv = threading.Condition(LOCK)
ready = 0
done = 0


def waiter():
    global done
    with cv:
        while ready == 0:
            cv.wait()
        done += 1
        cv.notify()


def setter():
    global ready
    with cv:
        ready = 1
        cv.notify_all()


def checker():
    with cv:
        cv.wait_for(lambda: done >= 2)
    assert done == 2


threading.Thread(target=waiter).start()
threading.Thread(target=waiter).start()
threading.Thread(target=setter).start()
threading.Thread(target=checker).start()
"""

EVENT = """
import threading

go = threading.Event()
x = 0


def waiter():
    go.wait()
    assert x == 1


def setter():
    global x
    x = 1
    go.set()


threading.Thread(target=waiter).start()
threading.Thread(target=waiter).start()
threading.Thread(target=setter).start()
"""

SYNC_MODELS = {
    "monitor": MONITOR,
    "monitor-bug": MONITOR.replace("SLACK = 100", "SLACK = 0"),
    "synchronized-block": SYNCHRONIZED_BLOCK,
    "synchronized-block-bug": SYNCHRONIZED_BLOCK.replace("BAD = 0", "BAD = 2"),
    "condition-lock": CONDITION.replace("LOCK", "threading.Lock()"),
    "condition-rlock": CONDITION.replace("LOCK", "threading.RLock()"),
    "event": EVENT,
    "event-bug": EVENT.replace("    x = 1\n    go.set()", "    go.set()\n    x = 1"),
}


@pytest.mark.parametrize("granularity", ["access", "statement"])
@pytest.mark.parametrize("reduction", ["none", "optimistic", "static-por", "transactions", "dwyer-sda",
                                       "dwyer-ld+wsldom"])
@pytest.mark.parametrize("name", sorted(SYNC_MODELS))
def test_monitors_conditions_events_and_calls_are_the_same_search_without_the_fast_path(
    name: str, reduction: str, granularity: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = _both(SYNC_MODELS[name], monkeypatch, max_states=20_000, reduction=reduction,
                       granularity=granularity)
    assert fast == slow
    assert fast[0] == ("violation" if name.endswith("-bug") else "ok")


def _closure_kinds(source: str, monkeypatch: pytest.MonkeyPatch, **kw: object) -> set[str]:
    """The kinds of the nodes whose steps ran on the closures (the fast path gave them up)."""
    kinds: set[str] = set()
    real = system.TransitionSystem._run_closures

    def counted(self: system.TransitionSystem, state: tuple, t: int, choices: tuple, track: bool) -> object:
        top = state[2][t][-1]
        kinds.add(top[0].nodes[top[1]].kind)
        return real(self, state, t, choices, track)

    monkeypatch.setattr(system.TransitionSystem, "_run_closures", counted)
    movers.check(source, **kw)  # type: ignore[arg-type]
    return kinds


@pytest.mark.parametrize("reduction", ["none", "optimistic"])
@pytest.mark.parametrize("name", ["monitor", "synchronized-block"])
def test_monitor_programs_run_every_step_on_the_generated_code(name: str, reduction: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # Entering and leaving monitors, wait, its re-acquire, notify_all, notify without waiters, calls with
    # arguments, returns of ints and references, out of a synchronized method or not: none on the closures.
    # A notify() with waiters chooses the one it wakes (a choice point): the closures' business.
    allowed = {"notify"} if name == "synchronized-block" else set()
    assert _closure_kinds(SYNC_MODELS[name], monkeypatch, reduction=reduction) <= allowed


def test_condition_and_event_steps_run_on_the_generated_code(monkeypatch: pytest.MonkeyPatch) -> None:
    # A notify() that chooses among waiters is still the closures'; ``with cv:`` on a Condition of a Lock or
    # an RLock, wait and its re-acquire, wait_for's check, notify_all, notify() without waiters, an Event's
    # wait() and set() are not.
    for name in ("condition-lock", "condition-rlock"):
        assert _closure_kinds(SYNC_MODELS[name], monkeypatch) <= {"notify"}
    assert _closure_kinds(SYNC_MODELS["event"], monkeypatch) == set()
    program = compile_source(SYNC_MODELS["condition-rlock"], "model.py")
    nodes = [n for c in program.codes() for n in c.nodes if n.kind in ("wait", "reacquire", "notify")]
    assert nodes and all(n.fast is not None for n in nodes)
    assert all(n.fast_guard is not None for n in nodes if n.kind == "reacquire")


def test_a_call_passes_its_frame_and_value_through_the_driver() -> None:
    program = compile_source(MONITOR, "model.py")
    producer = program.functions["producer"]
    # The call of item(k, base) and of buf.add(x), and their continuations, are generated functions.
    calls = [n for n in producer.nodes if n.source.startswith(("x = item(", "buf.add("))]
    assert len(calls) == 4 and all(n.fast is not None for n in calls)
    take = program.classes["Buffer"].methods["take"]
    assert all(n.fast is not None for n in take.nodes if n.kind in ("acquire", "release", "return", "notify"))


def test_a_wrong_notify_all_would_be_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # The comparisons above can fail: a notify_all that wakes nobody makes other states.
    real = codegen_sync.notify

    def deaf(*a: object) -> codegen.FragmentMaker | None:
        make = real(*a)  # type: ignore[arg-type]
        if make is None:
            return None

        def wrong() -> codegen.Fragment:
            frag = make()
            frag.lines = [line for line in frag.lines if not line.startswith("if _ws:")]
            return frag

        return wrong

    monkeypatch.setattr(codegen_sync, "notify", deaf)
    fast, slow = _both(MONITOR, monkeypatch)
    assert fast != slow


INDIVISIBLE = """
from movers.lang import *

count = 0
flag = False


class Gate:
    def __init__(self):
        self.open = False

    def is_open(self):
        return self.open


gate = Gate()


def bump(k):
    global count
    count = count + k
    return count


def enough():
    return count >= 2


def ready():
    return enough()


def worker():
    global flag
    with indivisible():
        wait_until(count < 3)
        v = bump(1)
        flag = v > 1
        BLOCK
    if ready():
        with atomic():
            gate.open = True
    if gate.is_open():
        assert count >= LEAST


LEAST = 1
Thread(target=worker).start()
Thread(target=worker).start()
Thread(target=worker).start()
"""

INDIVISIBLE_MODELS = {
    "indivisible": INDIVISIBLE.replace("BLOCK", "pass"),
    "indivisible-bug": INDIVISIBLE.replace("BLOCK", "pass").replace("LEAST = 1", "LEAST = 3"),
    "indivisible-blocks": INDIVISIBLE.replace("BLOCK", "wait_until(count > 1)"),
}


@pytest.mark.parametrize("granularity", ["access", "statement"])
@pytest.mark.parametrize("reduction", ["none", "optimistic", "static-por", "transactions", "dwyer-sda"])
@pytest.mark.parametrize("name", sorted(INDIVISIBLE_MODELS))
def test_indivisible_blocks_and_called_conditions_are_the_same_search_without_the_fast_path(
    name: str, reduction: str, granularity: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = _both(INDIVISIBLE_MODELS[name], monkeypatch, max_states=20_000, reduction=reduction,
                       granularity=granularity)
    assert fast == slow
    assert fast[0] == ("ok" if name == "indivisible" else "violation")


def test_an_indivisible_block_runs_on_the_generated_code(monkeypatch: pytest.MonkeyPatch) -> None:
    # The block (its guard, a call and a return inside it), ``if f():`` and the exit of ``with atomic():``:
    # no step on the closures in a plain search.
    assert _closure_kinds(INDIVISIBLE_MODELS["indivisible"], monkeypatch) == set()
    program = compile_source(INDIVISIBLE_MODELS["indivisible"], "model.py")
    entry = next(n for n in program.functions["worker"].nodes if n.source == "with indivisible():")
    assert entry.fast is not None and entry.fast_guard is not None


def test_a_guard_that_fails_inside_an_indivisible_block_is_the_closures(monkeypatch: pytest.MonkeyPatch) -> None:
    r = movers.check(INDIVISIBLE_MODELS["indivisible-blocks"])
    assert r.violations and "would block inside" in r.violations[0].message


def _effect(o: system.Outcome) -> tuple[object, ...]:
    e = o.effect
    assert e is not None
    return (o.state, o.violation, e.reads, e.writes, e.acquired, e.released, e.allocated, e.started, e.renumbered,
            e.blocks, e.walked)


@pytest.mark.parametrize("granularity", ["access", "statement"])
@pytest.mark.parametrize("name", sorted({**SYNC_MODELS, **INDIVISIBLE_MODELS}))
def test_every_step_and_its_effect_is_the_closures(name: str, granularity: str) -> None:
    # State by state over the whole graph: the successors of the plain search, and each thread's tracked step
    # with its Effect (what the reductions classify), on the generated code and on the closures.
    source = {**SYNC_MODELS, **INDIVISIBLE_MODELS}[name]
    ts = system.TransitionSystem(compile_source(source, "model.py", granularity))
    s0 = ts.initial()
    seen, todo = {s0}, [s0]
    while todo:
        s = todo.pop()
        ts.fast_path = False
        slow = [o.state for o in ts.steps(s)]
        ts.fast_path = True
        assert [o.state for o in ts.steps(s)] == slow
        plain = ts.successors(s)
        assert plain is None or plain[0] == [x for x in slow if x is not None]
        for t, th in enumerate(s[2]):
            if th and ts.enabled(s, t):
                assert _effect(ts._run(s, t, (), True)) == _effect(ts._run_closures(s, t, (), True))
        for x in slow:
            if x is not None and x not in seen:
                seen.add(x)
                todo.append(x)
