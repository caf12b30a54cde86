"""Whole steps on the generated code (lang/codegen.py's ``_s{k}``/``_x{k}``): through branching glue (a
busy-wait's test under access granularity), from a thread's entry, into a call, on through a call into local
work (``codegen_calls._resume``) and a return into the caller (its continuation's ``_r{k}``), over wide frames; and
``globals_cover`` remembered by value. Each is the closures' search, state for state, and runs without the
general driver (``semantics/system._run_fast``) where it applies."""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT
from differential import search_summary

import movers
from movers.checker import compile_source
from movers.ir.program import ref
from movers.lang import codegen
from movers.semantics import state as state_module
from movers.semantics import system

sys.path.insert(0, str(ROOT / "benchmarks"))
import shapes  # noqa: E402  (benchmarks/shapes.py: the models of issue 25's shapes)

# A call into a function whose first statement is local work (under access granularity its entry is not a
# step's end: the pushed frame runs on, on the general driver), a value returned into a caller, and a frame
# of more than eight locals whose writes must reach the successor.
CALLS = """
from movers.lang import *

x = 0
m = Lock()


def bump(d):
    global x
    k = d + 1
    with m:
        x = x + k
    return k


def worker():
    a = 0
    b = 1
    c = 2
    d = 3
    e = 4
    f = 5
    h = 6
    r = bump(a)
    r = bump(r)
    assert x <= 6


Thread(target=worker).start()
Thread(target=worker).start()
"""

# ``with indivisible():`` blocks in whole steps: through a guarded node inside (the driver's) and a return
# inside; and ``get(timeout=0)`` on an empty queue, the branch into ``raise Empty`` that has no generated form.
BLOCKS = """
import queue
import threading

from movers.lang import indivisible

q = queue.SimpleQueue()
m = threading.Lock()
x = 0


def inc():
    global x
    with indivisible():
        x = x + 1
        with m:
            x = x + 1


def peek():
    with indivisible():
        return x


def producer():
    inc()
    q.put(peek())


def consumer():
    try:
        y = q.get(timeout=0)
    except queue.Empty:
        y = -1
    assert y == -1 or y % 2 == 0


threading.Thread(target=producer).start()
threading.Thread(target=consumer).start()
threading.Thread(target=producer).start()
"""

MODELS = {
    "blocks": BLOCKS,
    "filter": shapes.filter_model(3, 1),
    "monitor": shapes.monitor_model(1, 2),
    "phil_locals": shapes.phil_model(3, 1, True),
    "calls": CALLS,
    "queue": shapes.queue_model(1, 2),
}




@pytest.mark.parametrize("reduction", ["none", "optimistic"])
@pytest.mark.parametrize("granularity", ["access", "statement"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_whole_steps_are_the_closures_search(name: str, granularity: str, reduction: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    kw = {"granularity": granularity, "reduction": reduction, "time_limit": 60}
    fast = search_summary(movers.check(MODELS[name], **kw))  # type: ignore[arg-type]
    monkeypatch.setattr(system, "FAST_PATH", False)
    assert fast == search_summary(movers.check(MODELS[name], **kw))  # type: ignore[arg-type]


@pytest.mark.parametrize("granularity", ["access", "statement"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_state_has_the_closures_successors(name: str, granularity: str) -> None:
    ts = system.TransitionSystem(compile_source(MODELS[name], "model.py", granularity))
    s0 = ts.initial()
    seen, todo = {s0}, [s0]
    while todo:
        s = todo.pop()
        ts.fast_path = False
        slow = [o.state for o in ts.steps(s)]
        ts.fast_path = True
        plain = ts.successors(s)
        assert plain is None or plain[0] == [x for x in slow if x is not None]
        for x in slow:
            if x is not None and x not in seen:
                seen.add(x)
                todo.append(x)


def _driven(source: str, granularity: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The functions whose steps ran on the general driver (``_run_fast``) in a plain search."""
    names: list[str] = []
    real = system._run_fast

    def counted(node: object, g: object, heap: object, threads: object, t: int, th: object, top: tuple,
                *a: object) -> object:
        names.append(top[0].name)
        return real(node, g, heap, threads, t, th, top, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(system, "_run_fast", counted)
    movers.check(source, granularity=granularity)
    monkeypatch.undo()
    return names


def test_a_busy_wait_is_one_generated_call_per_step(monkeypatch: pytest.MonkeyPatch) -> None:
    # Under access granularity ``while (level[a] >= 1 or level[b] >= 1) and victim[1] == i: pass`` is a read
    # followed by glue that branches (to the next read, or back): every path is written out in the step.
    assert _driven(MODELS["filter"], "access", monkeypatch) == []
    code = compile_source(MODELS["filter"], "model.py", "access").functions["proc"]
    assert "if pc == " in code.fast_source


def test_a_thread_starts_on_a_whole_step(monkeypatch: pytest.MonkeyPatch) -> None:
    # The philosophers' first step (``first = forks[a]; second = forks[b]``, local work) starts at a node
    # that is not costly: the function's entry.
    assert _driven(MODELS["phil_locals"], "access", monkeypatch) == []


def test_a_call_pushes_its_frame_in_the_whole_step(monkeypatch: pytest.MonkeyPatch) -> None:
    # ``cell.put(v)`` under statement granularity: the callee's first node (entering the monitor) is a step's
    # end; only the returns into the callers go through the driver.
    driven = _driven(MODELS["monitor"], "statement", monkeypatch)
    assert "producer" not in driven and "consumer" not in driven


@pytest.mark.parametrize("granularity", ["access", "statement"])
def test_returns_and_calls_into_local_work_stay_off_the_driver(granularity: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # ``return k`` into ``r = bump(a)``, ``bump``'s first statement local work (access granularity), and the
    # monitor's returns from ``@synchronized`` methods: the whole step goes on in the caller's continuation
    # (``_r{k}``) where it ends in a return into a caller, and hands over to ``_resume`` where it ends in a call
    # whose callee starts with local work; the general driver never runs the step again from its start.
    for name in ("calls", "monitor"):
        assert _driven(MODELS[name], granularity, monkeypatch) == []
    # ``x = q.get()``: the call into ``get`` (``if not block:`` first) and the return of the item.
    # ``x = q.get()`` and ``q.put(v)``: the call into ``get`` (``if not block:`` first, and a branch into
    # ``raise Empty``, which has no generated form) and the return of the item; ``put``'s indivisible block.
    assert _driven(MODELS["queue"], granularity, monkeypatch) == []


def test_wide_frames_take_only_the_locals_they_name() -> None:
    # The filter lock's proc with 6 more parameters: wider than a whole frame (its temporaries share 3 slots).
    wide = shapes.filter_model(3, 2).replace("def proc(i, a, b):", "def proc(i, a, b, c0=0, c1=0, c2=0, c3=0, c4=0, "
                                                                   "c5=0):")
    code = compile_source(wide, "model.py", "access").functions["proc"]
    assert code.nlocals > codegen._WHOLE_FRAME
    step = code.fast_source[code.fast_source.index("def _s2("):].split("\ndef ")[0]
    assert "_f = [*top]" in step and "= top[" in step and "= top\n" not in step


def test_no_op_lines_are_left_out_and_reads_of_pc_kept() -> None:
    lines = ["_1 = None", "if type(_1) is bool: _1 = TRUE if _1 else FALSE", "loc[3] = _1", "pc = 4",
             "_2 = 5", "if type(_2) is not int: _2 = _2.value if type(_2) is Bool else _val(_2)", "pc = 5",
             "pc = 6 if _2 else 7", "if pc == 6:", "    pc = 8", "    _3 = 1", "    pc = 9", "pc = 10"]
    assert codegen._simplified(lines) == [
        "_1 = None", "loc[3] = _1", "_2 = 5", "pc = 6 if _2 else 7", "if pc == 6:", "    _3 = 1", "    pc = 9",
        "pc = 10"]


def test_globals_cover_is_remembered_by_value(monkeypatch: pytest.MonkeyPatch) -> None:
    walks = {"n": 0}
    real = state_module.globals_cover

    def counted(g: tuple, heap: tuple) -> bool:
        walks["n"] += 1
        return real(g, heap)

    monkeypatch.setattr(state_module, "globals_cover", counted)
    monkeypatch.setattr(state_module, "_covers", {})
    heap = ((None, None, ref(1)), (None, None, 0), (None, None, 5))
    for g, covered in (((ref(0),), False), ((ref(0), (1, ref(2))), True), ((0, 1, 2), False)):
        assert state_module.globals_cover_memo(g, heap) is covered
        # An equal pair (new tuples) answers without a walk: a reference equals only itself.
        assert state_module.globals_cover_memo(tuple(g), tuple(tuple(o) for o in heap)) is covered
    assert walks["n"] == 3
