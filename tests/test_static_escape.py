"""The static escape analysis (analysis/static_escape.py: Dwyer et al., section 5.1 and appendix A).

Two kinds of test. Per route: a small model for each way an object can escape its thread (a global, a
field of a shared object, an array element, ``Thread(args=…)``, a started Thread subclass, a return value,
a parameter, an object nested in an escaping one, a method's ``self``, a condition's lock) and for each
way it stays local, with the site's verdict and the reason. Differential: over every reachable state of the
full search of the examples and of random heap-sharing models, a node the analysis calls thread-local never
accesses an object another thread can reach, nor a global some thread writes. The accesses are attributed
node by node (a step runs several nodes), from the Effects the machine records while it runs them.
"""

from __future__ import annotations

import textwrap
from collections import deque
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from movers.analysis import static_escape
from movers.analysis.static_escape import StaticLocality, analyse
from movers.checker import load
from movers.ir.machine import AssertionFailed, Ctx, Pruned
from movers.ir.program import Code, Program
from movers.semantics.system import RUNTIME_ERRORS, TransitionSystem

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def compile_src(src: str) -> Program:
    # The steps these tests name are statements.
    return load(source="from movers.lang import *\n" + textwrap.dedent(src), granularity="statement")


def site(a: StaticLocality, cls: str, code: str | None = None) -> tuple[Any, ...]:
    found = [s for s in a.sites if s[3] == cls and (code is None or s[0] == code)]
    assert len(found) == 1, (cls, code, sorted(a.sites))
    return found[0]


def step(program: Program, code_name: str, source: str) -> tuple[Code, int]:
    """The costly node of ``code_name`` whose source text is ``source``."""
    code = program.init if code_name == "<module>" else next(c for c in program.codes() if c.name == code_name)
    pcs = [pc for pc, n in enumerate(code.nodes) if n.costly and n.source == source]
    assert pcs, (source, [n.source for n in code.nodes])
    return code, pcs[0]


BOX = """
class Box:
    def __init__(self):
        self.f = None
        self.v = 0
"""


# -- escape routes -------------------------------------------------------------------------------------------

ROUTES = {
    "global store": ("""
        g = None
        def worker():
            global g
            b = Box()
            g = b
        Thread(target=worker).start()
        """, "stored in global g"),
    "field of a shared object": ("""
        shared = Box()
        def worker():
            b = Box()
            shared.f = b
        Thread(target=worker).start()
        """, "field f of the escaping Box"),
    "array element": ("""
        arr = [None, None]
        def worker():
            b = Box()
            arr[1] = b
        Thread(target=worker).start()
        """, "an element of the escaping list"),
    "Thread args": ("""
        def reader(x):
            x.v = 1
        def worker():
            b = Box()
            Thread(target=reader, args=(0, b)).start()
            b.v = 2
        Thread(target=worker).start()
        """, "field _args of the escaping Thread"),
    "Thread subclass field": ("""
        class P(Thread):
            def __init__(self):
                self.b = Box()
            def run(self):
                self.b.v = 1
        def worker():
            p = P()
            p.start()
        Thread(target=worker).start()
        """, "field b of the escaping P"),
    "return value": ("""
        g = None
        def make():
            return Box()
        def worker():
            global g
            g = make()
        Thread(target=worker).start()
        """, "stored in global g"),
    "parameter": ("""
        g = None
        def put(x):
            global g
            g = x
        def worker():
            b = Box()
            put(b)
        Thread(target=worker).start()
        """, "stored in global g"),
    "method self": ("""
        class Pub:
            def publish(self):
                global g
                g = self
        g = None
        def worker():
            p = Pub()
            p.publish()
            b = Box()
        Thread(target=worker).start()
        """, None),
    "nested objects": ("""
        g = None
        def worker():
            global g
            outer = [None]
            inner = Box()
            outer[0] = inner
            g = outer
        Thread(target=worker).start()
        """, "an element of the escaping list"),
    "tuple in a field": ("""
        shared = Box()
        def worker():
            b = Box()
            shared.f = (1, (2, b))
        Thread(target=worker).start()
        """, "field f of the escaping Box"),
    "unpacked from a shared list": ("""
        arr = [None, None]
        def worker():
            b = Box()
            c = [b, 1]
            x, y = c
            arr[0] = x
        Thread(target=worker).start()
        """, "an element of the escaping list"),
}


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_escape_route_makes_the_object_escape(route: str) -> None:
    src, why = ROUTES[route]
    program = compile_src(BOX + textwrap.dedent(src))
    a = analyse(program)
    if route == "method self":
        s = site(a, "Pub")
        assert a.escaping[s] == "stored in global g"
        assert not a.escapes(site(a, "Box"))
        return
    s = site(a, "Box", None if route != "field of a shared object" and route != "tuple in a field" else "worker")
    assert a.escapes(s), a.describe()
    assert why in a.escaping[s], a.escaping[s]


def test_a_started_thread_subclass_and_module_level_objects_escape() -> None:
    program = compile_src(BOX + textwrap.dedent("""
        class P(Thread):
            def run(self):
                self.v = 1
        shared = Box()
        def worker():
            p = P()
            p.start()
        Thread(target=worker).start()
        """))
    a = analyse(program)
    assert a.escaping[site(a, "P")] == "a started thread object"
    assert a.escaping[site(a, "Box")] == "allocated by module-level code"
    code, pc = step(program, "P.run", "self.v = 1")
    assert not a.node_local(code, pc)


def test_a_local_condition_over_a_shared_lock_is_not_thread_local() -> None:
    program = compile_src("""
        m = Lock()
        def worker():
            c = Condition(m)
            c.acquire()
            c.release()
            d = Condition(Lock())
            d.acquire()
            d.release()
        Thread(target=worker).start()
        Thread(target=worker).start()
        """)
    a = analyse(program)
    assert not a.node_local(*step(program, "worker", "c.acquire()"))
    assert "Lock allocated at line 3" in (a.why_not_local(*step(program, "worker", "c.acquire()")) or "")
    assert a.node_local(*step(program, "worker", "d.acquire()"))


# -- what stays local ----------------------------------------------------------------------------------------

LOCAL = BOX + """
g = 0
K = 2
shared = Box()

def touch(x):
    x.v = (x.v + 1) % 2
    return x

class Cell:
    def __init__(self, x):
        self.x = x
    def get(self):
        return self.x

def worker(i):
    a = Box()
    l = [None, a]
    a.f = Box()
    a.f.v = i
    l[0] = a.f
    b = touch(l[1])
    c = Cell(b)
    d = c.get()
    d.v = K
    for e in l:
        e.v = 1
    x, y = l
    with synchronized(a):
        wait_until(a.v == 1)
    shared.v = 1
    a.v = g

Thread(target=worker, args=(0,)).start()
Thread(target=worker, args=(1,)).start()
"""


def test_objects_kept_in_locals_fields_elements_and_helpers_stay_local() -> None:
    program = compile_src(LOCAL)
    a = analyse(program)
    for cls in ("Cell", "list"):
        assert not a.escapes(site(a, cls)), a.describe()
    assert not any(a.escapes(s) for s in a.sites if s[0] == "worker"), a.describe()
    for src in ("a = Box()", "l = [None, a]", "a.f = Box()", "a.f.v = i", "l[0] = a.f", "b = touch(l[1])",
                "c = Cell(b)", "d = c.get()", "d.v = K", "for e in l", "e.v = 1", "x, y = l", "with synchronized(a):",
                "wait_until(a.v == 1)"):
        assert a.node_local(*step(program, "worker", src)), (src, a.why_not_local(*step(program, "worker", src)))
    for src in ("x.v = (x.v + 1) % 2", "return x"):
        assert a.node_local(*step(program, "touch", src)), src
    # Accesses to a shared object, and reads of a global that some thread writes, are not thread-local.
    assert not a.node_local(*step(program, "worker", "shared.v = 1"))


def test_globals_written_by_a_thread_are_shared_constants_are_not() -> None:
    program = compile_src("""
        K = 3
        g = 0
        def worker():
            global g
            x = K + 1
            y = g
            g = 1
        Thread(target=worker).start()
        """)
    a = analyse(program)
    assert a.node_local(*step(program, "worker", "x = K + 1"))
    assert not a.node_local(*step(program, "worker", "y = g"))
    assert not a.node_local(*step(program, "worker", "g = 1"))


def test_start_and_join_are_never_thread_local() -> None:
    program = compile_src("""
        def f():
            pass
        def worker():
            t = Thread(target=f)
            t.start()
            t.join()
        Thread(target=worker).start()
        """)
    a = analyse(program)
    assert a.node_local(*step(program, "worker", "t = Thread(target=f)"))
    assert not a.node_local(*step(program, "worker", "t.start()"))
    assert not a.node_local(*step(program, "worker", "t.join()"))


def test_independent_work_version_1_is_local_and_version_2_escapes() -> None:
    p1 = load(EXAMPLES / "dwyer_independent_work1.py", granularity="statement")
    a1 = analyse(p1)
    assert not a1.escapes(site(a1, "Node"))
    run1 = next(c for c in p1.codes() if c.name == "Process.run")
    assert all(a1.node_local(run1, pc) for pc, n in enumerate(run1.nodes) if n.costly), a1.describe()
    p2 = load(EXAMPLES / "dwyer_independent_work2.py", granularity="statement")
    a2 = analyse(p2)
    assert "field head of the escaping Process" in a2.escaping[site(a2, "Node")]
    run2 = next(c for c in p2.codes() if c.name == "Process.run")
    assert not a2.node_local(*step(p2, "Process.run", "p.x = p.x + 1"))
    assert not any(a2.node_local(run2, pc) for pc, n in enumerate(run2.nodes) if n.uses)


def test_describe_names_sites_reasons_and_steps() -> None:
    a = analyse(load(EXAMPLES / "dwyer_independent_work2.py", granularity="statement"))
    text = a.describe()
    assert "Node allocated at line" in text and "escapes (field head of the escaping Process" in text
    assert "Process.run: 1 of 5 steps statically thread-local" in text


# -- differential: no node called local ever touches what another thread reaches ------------------------------


def node_accesses(ts: TransitionSystem, state: tuple, t: int, choices: tuple[int, ...]) -> list[tuple[Code, int, list]]:
    """Run thread t's step from ``state`` node by node (as ``TransitionSystem._run`` does) and return, for
    each node run, its accesses: ("global", slot, is_write) and ("object", pre-state index, is_write); the
    guard's reads count for the first node. Objects the step itself allocated are left out."""
    g, heap, threads = state
    ctx = Ctx(g, heap, threads, t, True, threads[t], choices)
    n0 = len(heap)
    out: list[tuple[Code, int, list]] = []
    pending: list[tuple[Any, bool]] = [(loc, False) for loc in ts.guard_reads(state, t)]
    marks = [0, 0, 0, 0]

    def collect() -> list:
        got = list(pending)
        pending.clear()
        for k, lst in enumerate((ctx.reads, ctx.writes, ctx.acquired, ctx.released)):
            got += [((x, 1) if k >= 2 else x, k != 0) for x in lst[marks[k]:]]
            marks[k] = len(lst)
        return [("global", loc, w) if type(loc) is int else ("object", loc[0].i, w)
                for loc, w in got if type(loc) is int or loc[0].i < n0]

    first = True
    try:
        while ctx.code is not None:
            code, pc = ctx.code, ctx.pc
            if not first and code.nodes[pc].costly and not ctx.atomic:
                break
            first = False
            try:
                code.nodes[pc].run(ctx)
            finally:
                out.append((code, pc, collect()))
    except (AssertionFailed, Pruned, *RUNTIME_ERRORS):
        pass
    return out


def local_violations(program: Program, a: StaticLocality | None = None, max_states: int = 4000) -> list[str]:
    """Explore the full state space (breadth-first, up to ``max_states`` states) and report every access,
    by a node the analysis calls thread-local, to an object another live thread can reach (from its frames
    or the globals) or to a global some step of the exploration writes."""
    a = a or analyse(program)
    ts = TransitionSystem(program, track=True)
    init = ts.initial()
    seen = {init}
    todo = deque([init])
    found: list[str] = []
    global_reads: list[tuple[str, int]] = []
    written: set[int] = set()
    while todo:
        s = todo.popleft()
        threads = s[2]
        for t in range(len(threads)):
            if not threads[t] or not ts.enabled(s, t):
                continue
            others: set[int] | None = None
            for o in ts.execute(s, t, True):
                if o.effect is not None:
                    written.update(x for x in o.effect.writes if type(x) is int)
                for code, pc, accesses in node_accesses(ts, s, t, o.choices):
                    if not accesses or not a.node_local(code, pc):
                        continue
                    what = f"{code.name} line {code.nodes[pc].line} '{code.nodes[pc].source}'"
                    for kind, x, write in accesses:
                        if kind == "global":
                            if write:
                                found.append(f"{what}: writes global {program.globals[x]}")
                            else:
                                global_reads.append((what, x))
                            continue
                        if others is None:
                            others = set()
                            for u in range(len(threads)):
                                if u != t and threads[u]:
                                    others |= ts.reachable_from_thread(s, u)
                        if x in others:
                            found.append(f"{what}: object {x} ({s[1][x][0].name}) reachable by another thread")
                if o.state is not None and o.state not in seen and len(seen) < max_states:
                    seen.add(o.state)
                    todo.append(o.state)
    found += [f"{what}: reads global {program.globals[x]}, which a step writes" for what, x in global_reads
              if x in written]
    return found


EXAMPLE_FILES = sorted(EXAMPLES.glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_every_example_local_nodes_touch_only_thread_local_objects(path: Path) -> None:
    assert local_violations(load(path), max_states=3000) == []


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_every_route_model_local_nodes_touch_only_thread_local_objects(route: str) -> None:
    assert local_violations(compile_src(BOX + textwrap.dedent(ROUTES[route][0]))) == []


def test_the_local_model_local_nodes_touch_only_thread_local_objects() -> None:
    assert local_violations(compile_src(LOCAL)) == []


def test_an_indivisible_block_is_never_statically_thread_local() -> None:
    program = compile_src(BOX + textwrap.dedent("""
        def worker():
            a = Box()
            with indivisible():
                a.v = 1
        Thread(target=worker).start()
        """))
    a = analyse(program)
    assert a.node_local(*step(program, "worker", "a = Box()"))
    assert not a.node_local(*step(program, "worker", "with indivisible():"))


# -- random heap-sharing models ------------------------------------------------------------------------------

HEAP_PRELUDE = """\
from movers.lang import *

class Box:
    def __init__(self):
        self.f = None
        self.v = 0
    def put(self, x):
        self.f = x
    def take(self):
        return self.f

g = None
c = 0
arr = [None, None]
shared = Box()

def reader(x):
    if x is not None:
        x.v = (x.v + 1) % 2
"""

HELPERS = (
    ["return x"],
    ["return Box()"],
    ["global g", "g = x", "return x"],
    ["if x is not None:", "    x.v = 1", "return x"],
)


def _heap_statement(draw: Any) -> list[str]:
    """One statement over the worker's locals a, b (objects or None) and l (a local list)."""
    x, y = draw(st.sampled_from("ab")), draw(st.sampled_from("ab"))
    k = draw(st.integers(0, 1))
    guarded = [
        f"{x}.v = ({x}.v + 1) % 2",
        f"{x}.f = {y}",
        f"{y} = {x}.f",
        f"{x}.put({y})",
        f"{y} = {x}.take()",
        f"arr[{k}] = {x}",
        f"shared.f = {x}",
        f"with synchronized({x}):\n        {x}.v = 1",
        f"t = {x}.v + c",
    ]
    plain = [
        f"l[{k}] = {x}",
        f"{x} = l[{k}]",
        f"g = {x}",
        f"{x} = g",
        f"{x} = shared.f",
        f"{x} = arr[{k}]",
        f"{x} = helper({y})",
        f"{x} = Box()",
        "c = (c + 1) % 2",
        f"Thread(target=reader, args=({x},)).start()",
        "for e in l:\n    if e is not None:\n        e.v = 1",
        f"q, r = l\n{x} = r",
    ]
    if draw(st.booleans()):
        return [f"if {x} is not None:", *("    " + ln for ln in draw(st.sampled_from(guarded)).split("\n"))]
    return draw(st.sampled_from(plain)).split("\n")


@st.composite
def heap_models(draw: Any) -> str:
    lines = [HEAP_PRELUDE, "def helper(x):", *("    " + ln for ln in draw(st.sampled_from(HELPERS)))]
    n = draw(st.integers(2, 3))
    for w in range(n):
        body = ["global g, c", "a = Box()", "b = Box()", "l = [None, a]"]
        for _ in range(draw(st.integers(2, 5 if n == 2 else 3))):
            body += _heap_statement(draw)
        lines += ["", f"def worker_{w}():", *("    " + ln for ln in body)]
    lines += [""] + [f"Thread(target=worker_{w}).start()" for w in range(n)]
    return "\n".join(lines) + "\n"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(heap_models())
def test_random_heap_models_local_nodes_touch_only_thread_local_objects(src: str) -> None:
    program = load(source=src)
    assert local_violations(program, max_states=1500) == [], src


def test_the_random_models_can_tell_a_weakened_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    """The differential oracle has teeth: without the escape closure along fields, it finds a local node
    touching a shared object (and the per-route tests fail: see the module docstring)."""
    src = HEAP_PRELUDE + textwrap.dedent("""
        def helper(x):
            return x

        def worker_0():
            global g
            a = Box()
            b = Box()
            a.f = b
            g = a
            b.v = 1

        def worker_1():
            x = g
            if x is not None:
                y = x.f
                if y is not None:
                    y.v = 2

        Thread(target=worker_0).start()
        Thread(target=worker_1).start()
        """)
    program = load(source=src)
    assert local_violations(program) == []
    no_fields = static_escape._escaping

    def shallow(solver: Any) -> Any:
        saved = solver.pts
        solver.pts = {k: v for k, v in saved.items() if k[0] != "field"}
        try:
            return no_fields(solver)
        finally:
            solver.pts = saved

    monkeypatch.setattr(static_escape, "_escaping", shallow)
    assert any("b.v = 1" in v for v in local_violations(program))
