"""Dwyer et al.'s ample-set search (papers/002): conditions C0-C3, dynamic escape analysis (D), storage
avoidance (DA) and its termination rule, checked against the full search."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
from conftest import EXAMPLES
from differential import run_differential
from hypothesis import HealthCheck, given, note, settings
from strategies import models, single_kind_models, value_models

import movers
from movers.analysis.escape import Locality, ThreadLocal
from movers.checker import Checker, load
from movers.reduce.ample import Ample, StepView
from movers.reduce.dwyer import DwyerDA, DwyerS, DwyerSDA
from movers.search.explore import Search
from movers.search.options import Limits, Options
from movers.semantics.system import TransitionSystem

REDUCTIONS = ("dwyer-d", "dwyer-da")
FILES = sorted(EXAMPLES.glob("*.py"))


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def check(text: str, reduction: str = "dwyer-da", **kw: Any) -> Any:
    return movers.check(src(text), reduction=reduction, **kw)


def stored(program: Any, reduction: str, search: str = "dfs", **limits: Any) -> tuple[Any, Any]:
    """The verdict and the set of states a search stored."""
    checker = Checker(program, Options(reduction, search, Limits(**limits)))
    result = checker.run()
    return result, set(checker.last_search.stored)


def stores_reachable_states(source: str, reduction: str, search: str = "dfs") -> None:
    """When the full search completes with ok, every state the reduction stores is one of its states. (One
    compiled program for both: states hold its code objects.)"""
    program = load(source=source)
    full, every = stored(program, "none", search, max_states=20000)
    if full.verdict != "ok":
        return
    r, some = stored(program, reduction, search, max_states=20000)
    assert r.verdict == "ok"
    assert some <= every, f"{reduction} stores {len(some - every)} states the full search never reaches"


# -- (1) differential ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("search", ["dfs", "bfs"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_examples_agree_with_none(path, search: str) -> None:
    source = path.read_text()
    run_differential(source, REDUCTIONS, search=search, max_states=20000)
    for name in REDUCTIONS:
        stores_reachable_states(source, name, search)


RANDOM = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@RANDOM
@given(single_kind_models())
def test_random_models_same_verdict_and_kind(case: tuple[str, str]) -> None:
    source, kind = case
    note(source)
    run_differential(source, REDUCTIONS)
    for name in REDUCTIONS:
        stores_reachable_states(source, name)


@RANDOM
@given(models())
def test_random_models_same_verdict(source: str) -> None:
    run_differential(source, REDUCTIONS, compare_kinds=False)


@RANDOM
@given(value_models())
def test_random_value_models(source: str) -> None:
    run_differential(source, REDUCTIONS)
    stores_reachable_states(source, "dwyer-da", "bfs")


# Heap-heavy random-ish models: each worker builds a private list, then publishes it or not.
PUBLISH = """
class Cell:
    def __init__(self, v):
        self.v = v
        self.next = None

shared = None
m = Lock()

def worker(i):
    global shared
    head = None
    k = 0
    while k < 2:
        c = Cell(k)
        c.next = head
        head = c
        k += 1
    if i == {publisher}:
        with m:
            shared = head
    else:
        with m:
            s = shared
        if s is not None:
            s.v = s.v + 1
            assert s.v < {bound}, "saw the published cell"
    head.v = 5

Thread(target=worker, args=(0,)).start()
Thread(target=worker, args=(1,)).start()
Thread(target=worker, args=(2,)).start()
"""


@pytest.mark.parametrize("publisher", [0, 1, 2])
@pytest.mark.parametrize("bound", [2, 3])
def test_escaping_lists_agree_with_none(publisher: int, bound: int) -> None:
    source = PUBLISH.format(publisher=publisher, bound=bound)
    run_differential(source, REDUCTIONS)
    for name in REDUCTIONS:
        stores_reachable_states(source, name)


# -- (2) one test per condition ---------------------------------------------------------------------------------


def test_c0_a_thread_whose_steps_are_all_pruned_is_not_ample() -> None:
    # p's step is thread-local, but its assume prunes it: {p} would be an empty ample set while q is enabled.
    r = check("""
    x = 0
    def p():
        k = 0
        assume(k == 1)
    def q():
        global x
        x = 1
        assert x == 0, "q ran"
    Thread(target=p).start()
    Thread(target=q).start()
    """)
    assert r.verdict == "violation" and "q ran" in r.violations[0].message


def test_c1_a_shared_access_is_not_independent() -> None:
    r = check("""
    class Box:
        def __init__(self):
            self.v = 0
    b = Box()
    def p():
        o = b
        o.v = 1
        o.v = 0
    def q():
        o = b
        assert o.v == 0, "saw p's write"
    Thread(target=p).start()
    Thread(target=q).start()
    """, "dwyer-d")
    assert r.verdict == "violation" and "saw p's write" in r.violations[0].message


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_c1_a_step_another_thread_can_disable_is_not_ample(reduction: str) -> None:
    # p's acquire touches only its own Box (L is a constant global), but the lock it takes is shared: q can
    # take L first and keep it (q ends holding it), which blocks p forever. Section 5.1's note: p's acquire
    # may be disabled by q, so {p} is not an ample set.
    r = check("""
    class Box:
        def __init__(self, lock):
            self.lock = lock
    L = Lock()
    def p():
        b = Box(L)
        with b.lock:
            k = 1
    def q():
        L.acquire()
    Thread(target=p).start()
    Thread(target=q).start()
    """, reduction)
    assert r.verdict == "violation" and r.violations[0].kind == "deadlock"


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_c1_starts_in_two_threads_do_not_commute(reduction: str) -> None:
    # Each start is on a thread object only its starter reaches, but the new thread's id depends on which
    # start comes first, and tid() shows it.
    r = check("""
    def child_a():
        assert tid() == 2, "b's child started first"
    def child_b():
        k = 0
    def p():
        c = Thread(target=child_a)
        c.start()
    def q():
        c = Thread(target=child_b)
        c.start()
    Thread(target=p).start()
    Thread(target=q).start()
    """, reduction)
    assert r.verdict == "violation" and "first" in r.violations[0].message


class DisjointGlobals:
    """A test-only checkC1: a step is independent when it touches no object and only globals that no other
    thread touches (sound for the model below, where each thread has its own global)."""

    name = "disjoint-globals"

    def __init__(self, owner: dict[int, int]) -> None:
        self.owner = owner  # global slot -> the only thread that touches it

    def check_c1(self, view: StepView) -> bool:
        return not view.objects and all(self.owner.get(g) == view.thread for g in view.globals)


def run_with(source: str, independence: Any, avoid_storage: bool = False, search: str = "dfs") -> Any:
    from movers.instrument.properties import instrument

    program = load(source=source)
    ts = instrument(TransitionSystem(program))
    red = Ample(ts, independence, avoid_storage)
    return Search(ts, red).run(search)


def test_c2_a_step_that_changes_an_invariant_is_visible() -> None:
    # p and q are independent (disjoint globals), so one order would do for C1; the invariant sees a and b
    # both 1 only when they interleave: their steps are visible (C2) and the states fully expanded.
    source = src("""
    a = 0
    b = 0
    @invariant
    def not_both():
        return not (a == 1 and b == 1)
    def p():
        global a
        a = 1
        a = 0
    def q():
        global b
        b = 1
        b = 0
    Thread(target=p).start()
    Thread(target=q).start()
    """)
    out = run_with(source, DisjointGlobals({0: 0, 1: 1}))
    assert out.found is not None and out.found.kind == "invariant"


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_c2_an_access_under_a_declared_predicate_is_visible(reduction: str) -> None:
    # p's cell is thread-local, so its access is independent of q; but the declared predicate of Cell.f reads
    # the global flag, which q sets: the access is visible, and the order q-then-p breaks the discipline.
    r = check("""
    class Cell:
        def __init__(self):
            self.f = 0
    flag = 0
    exclusive(Cell.f, lambda t, self: flag == 0)
    def p():
        c = Cell()
        c.f = 1
    def q():
        global flag
        flag = 1
    Thread(target=p).start()
    Thread(target=q).start()
    """, reduction)
    assert r.verdict == "violation" and r.violations[0].kind == "discipline"


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("search", ["dfs", "bfs"])
def test_c3_no_step_is_ignored_forever(reduction: str, search: str) -> None:
    # spin's steps are thread-local and cycle: without C3, {spin} would be ample around the cycle and w would
    # never run.
    r = check("""
    def spin():
        k = 0
        while True:
            k = (k + 1) % 2
    def w():
        assert False, "w ran"
    Thread(target=spin).start()
    Thread(target=w).start()
    """, reduction, search=search)
    assert r.verdict == "violation" and "w ran" in r.violations[0].message


def test_da_a_cycle_of_unstored_states_is_not_followed_again() -> None:
    # One thread, all steps thread-local: nothing after the initial state is stored. The search stops where
    # the loop comes back to a state on its stack (not after STORE_AFTER steps).
    r = check("""
    def spin():
        k = 0
        while True:
            k = (k + 1) % 3
    Thread(target=spin).start()
    """, time_limit=60)
    assert r.verdict == "ok"
    assert r.stats.states == 1 and r.stats.max_depth < 10


def test_da_a_long_unstored_run_is_cut_at_a_back_edge() -> None:
    # Never repeats a state: only the bounded unstored run stores states, so --max-states stops it.
    r = check("""
    def count():
        k = 0
        while True:
            k = k + 1
    Thread(target=count).start()
    """, max_states=3, time_limit=60)
    assert r.verdict == "incomplete" and r.limit == "max-states"


def test_da_stores_every_state_under_bfs() -> None:
    source = src("""
    def spin():
        k = 0
        while k < 5:
            k = k + 1
    Thread(target=spin).start()
    """)
    full = movers.check(source).stats.states
    assert full > 2
    assert movers.check(source, reduction="dwyer-da", search="bfs").stats.states == full
    assert movers.check(source, reduction="dwyer-da").stats.states == 2


# -- (3) Independent Work --------------------------------------------------------------------------------------


def independent_work(threads: int, length: int, in_constructor: bool = False) -> str:
    """Figure 2 of the paper, rebuilt: main starts the Process threads; each builds a linked list of Nodes
    (in run(), or, version 2, in its constructor run by main) and traverses it incrementing each x."""
    build = """
        head = None
        i = 0
        while i < LEN:
            n = Node()
            n.next = head
            head = n
            i += 1
"""
    if in_constructor:
        ctor = "    def __init__(self):\n" + textwrap.indent(textwrap.dedent(build), " " * 8) + \
            "        self.head = head\n"
        first = "        p = self.head\n"
    else:
        ctor = ""
        first = textwrap.indent(textwrap.dedent(build), " " * 8) + "        p = head\n"
    return f"""from movers.lang import *

N = {threads}
LEN = {length}

class Node:
    def __init__(self):
        self.x = 0
        self.next = None

class Process(Thread):
{ctor}    def run(self):
{first}        while p is not None:
            p.x = p.x + 1
            p = p.next

def main():
    i = 0
    while i < N:
        p = Process()
        p.start()
        i += 1

Thread(target=main).start()
"""


@pytest.mark.parametrize("in_constructor", [False, True], ids=["v1", "v2"])
@pytest.mark.parametrize("length", [3, 20])
@pytest.mark.parametrize("threads", [3, 5, 8])
def test_independent_work_is_two_states_under_da(threads: int, length: int, in_constructor: bool) -> None:
    r = movers.check(independent_work(threads, length, in_constructor), reduction="dwyer-da")
    assert r.verdict == "ok" and r.stats.states == 2


def test_thread_local_work_is_far_smaller_under_d() -> None:
    # Statement steps: at access granularity the local statements are already glue, and the gain is 7x.
    source = independent_work(2, 2)
    full = movers.check(source, granularity="statement")
    d = movers.check(source, reduction="dwyer-d", granularity="statement")
    assert full.verdict == d.verdict == "ok"
    assert d.stats.states * 10 < full.stats.states


# -- S and SDA against a stand-in for the static analysis --------------------------------------------------------


class FakeStatic:
    """Stands in for ``static_escape.analyse``: nodes of the named codes are thread-local."""

    def __init__(self, codes: set[str]) -> None:
        self.codes = codes
        self.asked = 0

    def node_local(self, code: Any, pc: int) -> bool:
        self.asked += 1
        return code.name in self.codes


def run_static(source: str, cls: Any, codes: set[str]) -> tuple[Any, FakeStatic]:
    from movers.instrument.properties import instrument

    fake = FakeStatic(codes)
    ts = instrument(TransitionSystem(load(source=source)))
    return Search(ts, cls(ts, fake)).run(), fake


def test_sda_skips_the_heap_scan_where_the_static_analysis_says_local(monkeypatch) -> None:
    source = independent_work(3, 3)
    run_name = [c.name for c in load(source=source).codes() if c.name.endswith("run")]
    scans = []
    real = ThreadLocal.check_c1
    monkeypatch.setattr(ThreadLocal, "check_c1", lambda self, v: scans.append(1) or real(self, v))
    out, fake = run_static(source, DwyerSDA, set(run_name))
    assert out.found is None and out.stats.states == 2 and fake.asked > 0
    with_static = len(scans)
    scans.clear()
    out2, _ = run_static(source, DwyerSDA, set())
    assert out2.stats.states == 2
    assert with_static < len(scans)


def test_s_reduces_only_where_the_static_analysis_says_local() -> None:
    source = independent_work(2, 2)
    full = movers.check(source)
    run_name = {c.name for c in load(source=source).codes() if c.name.endswith("run")}
    out, _ = run_static(source, DwyerS, run_name)
    none_local, _ = run_static(source, DwyerS, set())
    assert out.found is None and out.stats.states < none_local.stats.states <= full.stats.states


# -- the Locality helper -------------------------------------------------------------------------------------------


def test_locality_reachability() -> None:
    source = src("""
    class Cell:
        def __init__(self):
            self.next = None
    g = Cell()
    g.next = Cell()
    def p():
        a = Cell()
        b = Cell()
        a.next = b
        b.next = g
        assume(False)
    Thread(target=p).start()
    Thread(target=p).start()
    """)
    ts = TransitionSystem(load(source=source, granularity="statement"))  # one statement a step
    s = ts.initial()
    while "assume" not in ts.next_node(s, 0).source:
        s = ts.execute(s, 0)[0].state
    loc = Locality(ts, s)
    heap = s[1]
    frame = s[2][0][-1]
    a = frame[2 + frame[0].locals.index("a")].i
    b = heap[a][2].i
    gi = s[0][0].i
    inner = heap[gi][2].i
    assert loc.shared == {gi, inner}
    assert loc.private(0) == {a, b} and loc.private(1) == set()
    assert not loc.reachable_by_others(0, {a, b}) and loc.reachable_by_others(1, {a})
    assert loc.reachable_by_others(0, {gi})
    assert loc.owners(a) == {0} and loc.owners(gi) == {0, 1}
    assert loc.reachable_avoiding(1, {inner}, set()) and not loc.reachable_avoiding(1, {inner}, {gi})
    assert loc.reachable_avoiding(0, {b}, {a})  # its local b leads there directly
    assert not loc.reachable_avoiding(1, {a}, set())
    assert Locality.of(ts, s) is Locality.of(ts, s)


def test_da_keeps_violations_and_deadlocks_states() -> None:
    # A deadlock state (no thread enabled) is stored even when reached by an independent step.
    r = check("""
    def p():
        m = Lock()
        m.acquire()
        m.acquire()
    Thread(target=p).start()
    """)
    assert r.verdict == "violation" and r.violations[0].kind == "deadlock"


def test_registered_names() -> None:
    from movers.reduce import REDUCTIONS as ALL

    assert ALL["dwyer-d"].preserves == ALL["dwyer-da"].preserves
    assert "atomicity" not in ALL["dwyer-d"].preserves
    assert DwyerDA.name == "dwyer-da"
