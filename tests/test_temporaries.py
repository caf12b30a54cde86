"""Hidden temporaries share their slots statement by statement (lang/granularity.py's ``Lowering``, the call
results of ``FunctionCore.simple``), and an exception caught in a frame drops those of the statements it
interrupted (``FunctionCore.dropped_temps``, ``ir/exceptions.unwind``; docs/language.md section 8.1).

Sharing is a representation: every search stores the same states as when each temporary had a slot of its
own (``function.SHARE_TEMPORARIES`` off, the compilation before), on every example and corpus program, at
both granularities, with and without reductions. The one change is where a statement raised part-way and a
handler of the same frame caught the exception: its temporaries used to keep the values read before the
raise for ever; now they are None, as CPython's value stack is unwound to the handler's depth, and the state
counts are those of the independent naive explorer (tests/naive_explorer.py), which drops them too."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT

import movers
from movers.checker import compile_source
from movers.lang import function
from movers.semantics import system
from movers.semantics.system import TransitionSystem

try:
    from naive_explorer import naive_explore
except ImportError:  # tests/ imported as a package
    from tests.naive_explorer import naive_explore

sys.path.insert(0, str(ROOT / "benchmarks"))
import shapes  # noqa: E402

EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
CORPUS = sorted((ROOT / "tests" / "corpus").glob("*.py"))
GRANULARITIES = ("access", "statement")


def _summary(r: movers.Result) -> tuple[object, ...]:
    return (r.verdict, r.stats.states, r.stats.transitions, r.stats.max_depth,
            tuple((v.kind, v.message, len(v.trace)) for v in r.violations))


def _check(model: str | Path, share: bool, monkeypatch: pytest.MonkeyPatch, **kw: object) -> movers.Result:
    kw.setdefault("time_limit", 60)
    src = model.read_text() if isinstance(model, Path) else textwrap.dedent(model).lstrip("\n")
    with monkeypatch.context() as m:
        m.setattr(function, "SHARE_TEMPORARIES", share)
        return movers.check(source=src, filename=getattr(model, "name", "model.py"), **kw)  # type: ignore[arg-type]


def _frames(src: str, granularity: str = "access") -> dict[str, int]:
    """Each function's and method's frame width."""
    program = compile_source(textwrap.dedent(src).lstrip("\n"), "model.py", granularity)
    return {c.name: len(c.locals) for c in program.codes()}


# -- the reuse ----------------------------------------------------------------------------------------------


def test_the_filter_lock_holds_one_statements_temporaries() -> None:
    # 4 rounds of the filter lock: 44 temporaries ($v1..$v44) were 44 slots of proc's frame. The widest
    # statement, the while test `(level[a] >= 1 or level[b] >= 1) and victim[1] == i`, needs 3 at once: the
    # and's value, the or's, and one read (each short-circuit operand's reads are over once it is evaluated).
    frames = _frames(shapes.filter_model(3, 4))
    assert frames["proc"] <= 3 + 3, frames


def test_the_monitors_call_results_share_a_slot() -> None:
    # `a = cell.take()` four times: one call result at a time, one slot ($t1), not four.
    src = shapes.monitor_model(2, 4)
    program = compile_source(src, "model.py", "access")
    for code in program.codes():
        assert sum(n.startswith("$t") for n in code.locals) <= 1, (code.name, code.locals)
    assert any(n.startswith("$t") for c in program.codes() for n in c.locals)


@pytest.mark.parametrize(("name", "function_name", "width"), [
    ("atomicity_acquire2.py", "worker", 3),  # 100 statements' temporaries
    ("dwyer_replicated_workers.py", None, 67),
    ("dwyer_readers_writers.py", None, 44),
    ("bounded_buffer.py", None, 21),
])
def test_examples_frames_are_narrower(name: str, function_name: str | None, width: int) -> None:
    program = compile_source((ROOT / "examples" / name).read_text(), name, "access")
    codes = [c for c in program.codes() if function_name is None or c.name == function_name]
    assert codes
    assert sum(len(c.locals) for c in codes) <= width, {c.name: c.locals for c in codes}


def test_a_loops_bounds_stay_reserved_below_its_body() -> None:
    # lo and hi are read into temporaries held for the loop's life; the body's statements take the slots above.
    src = """
    from movers.lang import *

    lo = 0
    hi = 2
    x = 0
    y = 0

    def worker():
        global x
        for i in range(lo, hi):
            x = x + y
            x = y + x

    def other():
        global lo, hi, y
        lo = 1
        hi = 3
        y = 1

    Thread(target=worker).start()
    Thread(target=other).start()
    """
    program = compile_source(textwrap.dedent(src).lstrip("\n"), "model.py", "access")
    worker = program.functions["worker"]
    temps = [n for n in worker.locals if n.startswith("$v")]
    # 2 bounds, then the two reads of each statement of the body, in the same 2 slots
    assert temps == ["$v1", "$v2", "$v3", "$v4"], worker.locals


def test_while_else_flag_stays_reserved_below_its_body(monkeypatch: pytest.MonkeyPatch) -> None:
    # The loop's else block breaks the loop around it: a hidden flag says, after the inner loop, whether its
    # test was false; the test's and the body's temporaries go above it.
    src = """
    from movers.lang import *

    x = 0
    y = 0

    def worker():
        global x
        for k in range(2):
            while x + y < 2:
                x = x + y + 1
            else:
                break

    def other():
        global y
        y = 1

    Thread(target=worker).start()
    Thread(target=other).start()
    """
    assert _summary(_check(src, True, monkeypatch)) == _summary(_check(src, False, monkeypatch))
    program = compile_source(textwrap.dedent(src).lstrip("\n"), "model.py", "access")
    worker = program.functions["worker"]
    assert [n for n in worker.locals if n.startswith("$v")] == ["$v1", "$v2", "$v3"], worker.locals


# -- the same searches ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize("path", EXAMPLES + CORPUS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_same_search_as_one_slot_per_temporary(path: Path, granularity: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    kw = {"granularity": granularity, "max_states": 10_000}
    assert _summary(_check(path, True, monkeypatch, **kw)) == _summary(_check(path, False, monkeypatch, **kw))


@pytest.mark.parametrize("reduction", ["static-por", "optimistic", "dwyer-sda", "dwyer-ld+wsldom"])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_same_reduced_search_as_one_slot_per_temporary(path: Path, reduction: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    kw = {"reduction": reduction, "max_states": 20_000}
    assert _summary(_check(path, True, monkeypatch, **kw)) == _summary(_check(path, False, monkeypatch, **kw))


def test_the_frames_are_narrower_over_all_examples() -> None:
    widths = []
    for share in (True, False):
        function.SHARE_TEMPORARIES = share
        try:
            widths.append(sum(len(c.locals) for p in EXAMPLES
                              for c in compile_source(p.read_text(), p.name, "access").codes()))
        finally:
            function.SHARE_TEMPORARIES = True
    assert widths[0] < widths[1] * 0.8, widths


RETURN_IN_FINALLY = """
from movers.lang import *

x = 0
y = 0
log = [0, 0]

def get():
    try:
        return x + y          # $v1 = x; the return reads y: $v1 is still set while the finally runs
    finally:
        log[0] = log[1] + 1   # its temporaries go above $v1

def writer():
    global x, y
    x = 1
    y = 1

def reader():
    v = get()

Thread(target=writer).start()
Thread(target=reader).start()
"""


def test_a_finally_block_does_not_reuse_a_returns_temporaries(monkeypatch: pytest.MonkeyPatch) -> None:
    # x + y is 1 for x = 1, y = 0 and for x = 0, y = 1: only the return's leftover $v1 tells them apart while
    # the finally block runs (28 states); a finally block reusing $v1 would merge them.
    shared = _check(RETURN_IN_FINALLY, True, monkeypatch)
    assert _summary(shared) == _summary(_check(RETURN_IN_FINALLY, False, monkeypatch))
    assert shared.stats.states == 28


# -- an exception caught part-way through a statement ----------------------------------------------------------


# reader's `t = x + a[1]` reads x into a temporary, then a[1] raises IndexError: it passes through the with
# block's release and the finally block, to the except clause of the same frame.
CAUGHT = """
from movers.lang import *

x = 0
a = [0]
m = Lock()

def writer():
    global x
    x = 1
    x = 2

def reader():
    try:
        try:
            with m:
                t = x + a[1]
        finally:
            a[0] = 5
    except IndexError:
        pass
    a[0] = 6

Thread(target=writer).start()
Thread(target=reader).start()
"""

# The same through calls: two()'s result waits in a temporary while fail() raises into reader's try.
CAUGHT_FROM_A_CALL = """
from movers.lang import *

x = 0
y = 0

def two():
    return x

def fail():
    raise ValueError()

def writer():
    global x
    x = 1
    x = 2

def reader():
    global y
    try:
        t = two() + fail()
    except ValueError:
        pass
    y = 1

Thread(target=writer).start()
Thread(target=reader).start()
"""


def test_a_caught_exception_drops_the_temporaries_of_the_statement_it_interrupted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Kept, the value of x read before the raise told apart 3 versions of every later state of reader: the
    # release, the finally block, the handler, a[0] = 6 (33 states). Dropped, as CPython and the naive
    # explorer do: 24.
    naive = naive_explore(textwrap.dedent(CAUGHT))
    dropped = _check(CAUGHT, True, monkeypatch)
    kept = _check(CAUGHT, False, monkeypatch)
    assert dropped.verdict == kept.verdict == naive.verdict == "ok"
    assert dropped.stats.states == naive.states == 24
    assert kept.stats.states == 33
    # Under statement granularity nothing is cut: no temporary, nothing to drop.
    statement = {"granularity": "statement"}
    assert _check(CAUGHT, True, monkeypatch, **statement).stats.states == \
        _check(CAUGHT, False, monkeypatch, **statement).stats.states == \
        naive_explore(textwrap.dedent(CAUGHT), granularity="statement").states


@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_a_callee_raising_into_its_callers_try_drops_the_callers_temporaries(
        granularity: str, monkeypatch: pytest.MonkeyPatch) -> None:
    dropped = _check(CAUGHT_FROM_A_CALL, True, monkeypatch, granularity=granularity)
    kept = _check(CAUGHT_FROM_A_CALL, False, monkeypatch, granularity=granularity)
    assert dropped.verdict == kept.verdict == "ok"
    assert dropped.stats.states < kept.stats.states
    # Past the handler, no temporary of reader's frame holds anything.
    left = _leftovers(CAUGHT_FROM_A_CALL, "reader", "y = 1", granularity)
    assert left == {None}, left


def _leftovers(src: str, function_name: str, source: str, granularity: str) -> set[object]:
    """The values of ``function_name``'s hidden temporaries in every reachable state where its frame is at the
    statement ``source``."""
    program = compile_source(textwrap.dedent(src).lstrip("\n"), "model.py", granularity)
    code = program.functions[function_name]
    pcs = {k for k, n in enumerate(code.nodes) if n.source == source}
    temps = [i for i, n in enumerate(code.locals) if n[:2] in ("$v", "$t")]
    assert pcs and temps
    ts = TransitionSystem(program)
    seen = {ts.initial()}
    work = list(seen)
    out: set[object] = set()
    while work:
        succ = ts.successors(work.pop())
        for s in succ[0] if succ is not None else ():
            if s not in seen:
                seen.add(s)
                work.append(s)
            for thread in s[2]:
                for frame in thread:
                    if frame[0] is code and frame[1] in pcs:
                        out |= {frame[2 + i] for i in temps}
    return out


@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize("model", [CAUGHT, CAUGHT_FROM_A_CALL, RETURN_IN_FINALLY])
def test_the_fast_path_drops_them_as_the_closures_do(model: str, granularity: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _summary(_check(model, True, monkeypatch, granularity=granularity))
    with monkeypatch.context() as m:
        m.setattr(system, "FAST_PATH", False)
        slow = _summary(_check(model, True, monkeypatch, granularity=granularity))
    assert fast == slow


def test_a_handler_inside_a_loop_keeps_the_loops_bounds() -> None:
    # The loop's bounds ($v1, $v2) are the for statement's, around the try: a caught exception drops only the
    # temporaries above them, those of the statements inside the try.
    src = """
    from movers.lang import *

    lo = 0
    hi = 2
    x = 0
    a = [0]

    def worker():
        for i in range(lo, hi):
            try:
                t = x + a[i + 1]
            except IndexError:
                a[0] = i

    def other():
        global lo, hi, x
        lo = 1
        hi = 3
        x = 1

    Thread(target=worker).start()
    Thread(target=other).start()
    """
    program = compile_source(textwrap.dedent(src).lstrip("\n"), "model.py", "access")
    worker = program.functions["worker"]
    (_, _, _, _, dropped), = worker.handlers
    assert {worker.locals[i] for i in dropped} == {"$v3"}, worker.locals
    assert movers.check(source=textwrap.dedent(src).lstrip("\n")).verdict == "ok"
