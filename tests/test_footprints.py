"""The static facts of every step cover what the step does when it executes.

Reductions decide from two sources that must agree: the static footprint of a step (``analysis/footprint``,
from the facts the compiler records on each node) and the accesses the step's execution records in its
Effect. A construct whose accesses appear in neither (``v in a``, ``x, y = a``, ``for v in a`` once did) is
invisible to every reduction, which then misses violations. So, for every construct of the language and
every reachable state of the examples and of random models: each location the step's Effect records is in
its static footprint, and each whole-array read is recorded in the Effect.
"""

from __future__ import annotations

import textwrap
from collections import deque
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from movers.analysis.footprint import LOCK_KINDS, Footprint, Footprints
from movers.checker import load
from movers.ir.program import MON, Program
from movers.semantics.system import TransitionSystem

try:
    from strategies import models
except ImportError:  # tests/ imported as a package
    from tests.strategies import models

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def uncovered(program: Program, ts: TransitionSystem, fps: Footprints, state: tuple, t: int) -> list[str]:
    """The accesses of thread t's next step from ``state`` that its static footprint does not cover."""
    th = state[2][t]
    node = th[-1][0].nodes[th[-1][1]]
    fp: Footprint = fps.step(th)
    heap = state[1]
    missing: list[str] = []
    for o in ts.execute(state, t, track=True):
        eff = o.effect
        assert eff is not None
        for loc, written in [(x, False) for x in eff.reads] + [(x, True) for x in eff.writes]:
            what = f"line {node.line} '{node.source}': {'write' if written else 'read'} of "
            if type(loc) is int:
                name = program.globals[loc]
                if name not in (fp.writes if written else fp.reads):
                    missing.append(what + f"global {name}")
                continue
            r, idx = loc
            if r.i >= len(heap):
                continue  # an object this very step allocated: nobody else can have seen it
            obj = heap[r.i]
            cls = obj[0]
            if idx == MON:
                if not (fp.locks or "owner" in fp.fields_read or node.kind in LOCK_KINDS):
                    missing.append(what + "lock state")
            elif cls.is_list or cls.builtin in ("dict", "set") or (cls.builtin == "deque" and idx > 2):
                if not (fp.elements_written if written else fp.elements_read):
                    missing.append(what + ("an array element" if cls.is_list else f"an entry of a {cls.builtin}"))
            else:
                name = cls.fields[idx - 2]
                if name not in (fp.fields_written if written else fp.fields_read):
                    missing.append(what + f"field {cls.name}.{name}")
        if (eff.acquired or eff.released) and not fp.locks:
            missing.append(f"line {node.line} '{node.source}': a lock operation")
    return missing


def all_uncovered(program: Program, max_states: int = 3000) -> list[str]:
    """Explore (breadth-first, up to ``max_states``) and collect every access a footprint misses."""
    ts = TransitionSystem(program, track=True)
    fps = Footprints(program)
    init = ts.initial()
    seen = {init}
    todo = deque([init])
    missing: list[str] = []
    while todo and len(seen) < max_states:
        s = todo.popleft()
        for t in range(len(s[2])):
            if not s[2][t] or not ts.enabled(s, t):
                continue
            missing.extend(uncovered(program, ts, fps, s, t))
            for o in ts.execute(s, t):
                if o.state is not None and o.state not in seen:
                    seen.add(o.state)
                    todo.append(o.state)
    return sorted(set(missing))


def compile_src(src: str) -> Program:
    return load(textwrap.dedent(src).lstrip("\n") + "\n")


# One model per construct that reads or writes shared data; each reads or writes a global, an array or a
# field in that construct's own way, in a thread that another thread races with.
CONSTRUCTS = {
    "in": "assert 1 not in a",
    "not-in": "b = 2 in a",
    "in-tuple-of-list": "b = 1 in (a[0], a[1])",
    "unpack": "x, y = a",
    "unpack-nested": "(x, y), z = (a[0], a[1]), g",
    "for-list": "for v in a:\n        g = v",
    "for-tuple-global": "for v in t:\n        g = v",
    "for-range-global": "for i in range(g):\n        a[i % 2] = i",
    "choose-list": "g = choose(a)",
    "choose-tuple": "g = choose((a[0], g))",
    "min-list": "g = min(a)",
    "max-args": "g = max(a[0], g)",
    "len": "g = len(a) + g",
    "subscript": "g = a[g % 2]",
    "augassign-element": "a[1] += g",
    "augassign-global": "g += 1",
    "augassign-field": "o.f += 1",
    "field-read": "g = o.f",
    "field-write": "o.f = g",
    "is": "b = g is True",
    "bool": "b = bool(a)",
    "not": "b = not a[0]",
    "ifexp": "g = a[0] if g else a[1]",
    "and-or": "b = (a[0] and g) or a[1]",
    "if": "if 1 in a:\n        g = 2",
    "while": "while g < 2 and 1 not in a:\n        g += 1",
    "assert": "assert a[0] == 0 or g == 0",
    "assume": "assume(1 not in a)",
    "wait_until": "wait_until(1 in a or g >= 0)",
    "indivisible": "with indivisible():\n        g = a[0]\n        a[1] = g",
    "call": "g = f(a[0])",
    "method": "g = o.get()",
    "constructor": "p = Box(a[1])\n    g = p.f",
    "lock": "with m:\n        g = a[0]",
    "owner": "b = m.owner is None",
    "tuple-global": "t2 = t\n    g = t2[0]",
}


def construct_model(body: str) -> str:
    return f"""
from movers.lang import *

class Box:
    def __init__(self, v):
        self.f = v
    def get(self):
        return self.f

g = 0
b = False
t = (1, 2)
a = [0, 0]
o = Box(0)
m = Lock()

def f(v):
    return v + a[1] + o.f

def reader():
    global g, b
    {body}

def writer():
    global g, t
    a[0] = 1
    o.f = 2
    g = 1
    t = (3, 4)
    with m:
        a[1] = 1

Thread(target=reader).start()
Thread(target=writer).start()
"""


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_every_construct_footprint_covers_its_accesses(name: str) -> None:
    program = compile_src(construct_model(CONSTRUCTS[name]))
    assert all_uncovered(program) == []


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.stem)
def test_every_example_footprint_covers_its_accesses(path: Path) -> None:
    assert all_uncovered(load(path), max_states=1500) == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models())
def test_random_models_footprint_covers_accesses(src: str) -> None:
    assert all_uncovered(load(src), max_states=400) == []


@pytest.mark.parametrize("body, count", [
    ("assert 1 not in a", 2),  # every element is an access
    ("x, y = a", 2),
    ("g = choose(a)", 2),
    ("g = min(a)", 2),
])
def test_whole_array_reads_are_tracked(body: str, count: int) -> None:
    """The Effect of a whole-array read records every element, so that dynamic reductions see it."""
    program = compile_src(construct_model(body))
    ts = TransitionSystem(program, track=True)
    s = ts.initial()
    (o,) = ts.execute(s, 0, track=True)[:1]
    elements = [loc for loc in o.effect.reads if type(loc) is tuple and s[1][loc[0].i][0].is_list]
    assert len(elements) >= count
