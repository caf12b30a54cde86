"""Stoller & Cohen's optimistic reduction (papers/000): the section 7 example, the reduction theorem's
conclusion on random models, and one test per side condition of section 4."""

from __future__ import annotations

import textwrap

import pytest
from conftest import EXAMPLES, agrees_with_none, search_summary
from differential import run_differential
from hypothesis import HealthCheck, given, note, settings
from strategies import models, single_kind_models

import movers
from movers.checker import Checker, load
from movers.reduce.none import NoReduction
from movers.search.options import Options
from movers.semantics.system import TransitionSystem

FILES = sorted(EXAMPLES.glob("*.py"))


def opt(src: str, **kw):
    return movers.check(textwrap.dedent(src).lstrip("\n"), reduction="optimistic", **kw)


def test_section_7_example_stores_62_states() -> None:
    r = movers.check(EXAMPLES / "sc_example.py", granularity="statement", reduction="optimistic")
    assert r.verdict == "ok"
    assert r.stats.states == 62
    assert movers.check(EXAMPLES / "sc_example.py", granularity="statement").stats.states == 106


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_examples_agree_with_none(path) -> None:
    agrees_with_none(path, "optimistic")


# -- the reduction theorem on random models ------------------------------------------------------------------

RANDOM = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@RANDOM
@given(single_kind_models())
def test_random_models_same_verdict_and_kind(case: tuple[str, str]) -> None:
    src, _ = case
    note(src)
    run_differential(src, ["optimistic"])


@RANDOM
@given(models())
def test_random_models_same_verdict(src: str) -> None:
    note(src)
    run_differential(src, ["optimistic"], compare_kinds=False)


def all_states(program) -> set:
    ts = TransitionSystem(program)
    red = NoReduction(ts)
    init = ts.initial()
    seen = {init}
    work = [init]
    while work:
        s = work.pop()
        for m in red.moves(s):
            if m.state is not None and m.state not in seen:
                seen.add(m.state)
                work.append(m.state)
    return seen


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(asserts=False, blocking=False))
def test_stored_states_are_the_visible_states_of_the_full_system(src: str) -> None:
    """Reachable in S iff reachable in R(S), for visible states (slides, 'A Simple Traditional Reduction
    Theorem'); the initial state is visible (WFinitVis: a thread's first step is visible)."""
    note(src)
    program = load(src)
    checker = Checker(program, Options("optimistic"))
    r = checker.run()
    assert r.verdict == "ok", (r.verdict, r.violations)
    red = checker.last_reduction
    stored = set(checker.last_search.stored)
    # Judge visibility in the full system with the final classification, refinement off: a guess the
    # reduced system validated must hold in every state of the full system too (the optimistic theorem).
    red.cls.refine = False
    red.reset()
    full = all_states(program)
    init = TransitionSystem(program).initial()
    visible = {s for s in full if red.is_visible_state(s)}
    for s in full:
        for i in range(len(s[2])):
            if s[2][i]:
                outs, _ = red.step(s, i)
                assert all(o.violation is None or o.violation[0] != "discipline" for o in outs), outs
    assert init in visible
    assert stored == visible


# -- side conditions (section 4) -------------------------------------------------------------------------------


def test_wf_init_vis_first_steps_are_visible() -> None:
    # Both threads start with steps on locals; a thread's first step is visible, so the initial state is.
    # Each move: the first step, then the invisible `b = a + 1`, ending before the visible `x = b`.
    r = opt("""
    x = 0
    def w():
        global x
        a = 1
        b = a + 1
        x = b
    Thread(target=w).start()
    Thread(target=w).start()
    """)
    assert r.verdict == "ok"
    # each thread: at its start, before `x = b`, terminated: a 3 x 3 grid of visible states
    assert r.stats.states == 9


def test_wf_init_vis_another_threads_first_step_reads_the_prefix() -> None:
    # Thread 2's steps look unshared, but thread 0's first step (a guard) reads x in the initial state:
    # running thread 2's invisible prefix first would hide that access and the assertion failure.
    r = opt("""
    x = 1
    def w0():
        global x
        wait_until(x == 1)
        x = (x + 0) % 3
        assert x == 0
    def w2():
        global x
        x = (x + 0) % 3
        x += 1
    Thread(target=w0).start()
    Thread(target=w2).start()
    """)
    assert r.verdict == "violation" and r.violations[0].kind == "assertion"


def test_wf_finite_invis_local_infinite_loop_does_not_hang() -> None:
    r = opt("""
    x = 0
    def spin():
        i = 0
        while True:
            i = (i + 1) % 3
    def w():
        global x
        x = 1
    Thread(target=spin).start()
    Thread(target=w).start()
    """)
    assert r.verdict == "ok"
    assert r.stats.states < 20


def test_declared_predicate_violation_is_reported_not_refined() -> None:
    r = opt("""
    m = Lock()
    x = 0
    guarded_by(x, m)
    def w():
        global x
        with m:
            x += 1
        x = 5
    Thread(target=w).start()
    Thread(target=w).start()
    """)
    v = r.violations[0]
    assert v.kind == "discipline" and "without exclusive access" in v.message
    assert v.trace[-1].source == "x = 5"


def test_disjointness_of_declared_predicates_is_checked() -> None:
    r = opt("""
    y = 0
    x = 0
    exclusive(x, lambda t: y == 1)
    def w():
        global y
        y = 1
    Thread(target=w).start()
    Thread(target=w).start()
    """)
    v = r.violations[0]
    assert v.kind == "discipline" and "at once" in v.message


def test_wf_end_excl_taking_access_away_is_reported() -> None:
    r = opt("""
    y = 0
    x = 0
    exclusive(x, lambda t: y == t)
    def w():
        global y
        y = 1
    Thread(target=w).start()
    Thread(target=w).start()
    """)
    v = r.violations[0]
    assert v.kind == "discipline" and "WFendExcl" in v.message


def test_wrong_guess_is_refined_and_the_search_restarts() -> None:
    src = """
    m = Lock()
    x = 0
    def w():
        global x
        with m:
            x += 1
    Thread(target=w).start()
    Thread(target=w).start()
    """
    r = opt(src)
    assert r.verdict == "ok"
    assert any("refined" in n for n in r.notes)
    assert r.classification["x"] == "protected by m"
    # Without refinement, guesses that keep some protection are still adopted; a race is reported.
    assert opt(src, refine=False).verdict == "ok"
    r = opt(src.replace("        with m:\n            x += 1", "        x += 1"), refine=False)
    assert r.verdict == "violation" and r.violations[0].kind == "discipline"
    assert "--no-refine" in r.violations[0].message and "no lock protects" in r.violations[0].message


def test_missing_lock_found_as_the_lost_update() -> None:
    r = opt("""
    m = Lock()
    x = 0
    def w():
        global x
        t = x
        x = t + 1
    def main():
        a, b = Thread(target=w), Thread(target=w)
        a.start()
        b.start()
        a.join()
        b.join()
        assert x == 2
    Thread(target=main).start()
    """)
    assert r.verdict == "violation" and r.violations[0].kind == "assertion"
    assert r.classification["x"] == "unprotected"


def test_invariant_locations_are_unprotected() -> None:
    src = """
    m = Lock()
    x = 0
    guarded_by(x, m)
    @invariant
    def small():
        return x < 2
    def w():
        global x
        with m:
            x += 1
            x -= 1
    Thread(target=w).start()
    Thread(target=w).start()
    """
    assert opt(src).verdict == "ok"
    r = opt(src.replace("x -= 1", "x += 0"))
    assert r.verdict == "violation" and r.violations[0].kind == "invariant"


def test_constructor_accesses_are_initialisation() -> None:
    r = opt("""
    class Box:
        def __init__(self):
            self.v = 0
            self.lock = Lock()
    shared = None
    def w():
        global shared
        b = Box()
        with b.lock:
            b.v = 1
        shared = b
    def r():
        wait_until(shared is not None)
        with shared.lock:
            assert shared.v == 1
    Thread(target=w).start()
    Thread(target=r).start()
    """)
    assert r.verdict == "ok"
    assert r.classification["Box.v"].startswith("protected by")


GUARD = """
x = 0
done = False
def writer():
    global x, done
    a = 0
    x = 1
    x = 0
    done = True
def waiter():
    wait_until(done or x == 1)
    assert done, "saw the intermediate value"
Thread(target=writer).start()
Thread(target=waiter).start()
"""


@pytest.mark.parametrize("reduction", ["optimistic", "transactions"])
def test_guard_reads_are_accesses(reduction: str) -> None:
    # x == 1 holds only inside the writer's run of steps. A guard that reads x is an access to x even
    # while it blocks; otherwise x would look unshared by the writer and the waiter, scheduled only before
    # or after the writer's run, would never see x == 1.
    base = movers.check(GUARD)
    r = movers.check(GUARD, reduction=reduction)
    assert base.verdict == r.verdict == "violation"
    assert r.violations[0].kind == "assertion"


@pytest.mark.parametrize("lock", ["Lock()", "RLock()"])
@pytest.mark.parametrize("reduction", ["optimistic", "transactions"])
def test_reading_lock_state_is_an_unprotected_access(reduction: str, lock: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # m.owner changes with every thread's acquire and release: reading it is never a protected access. For
    # transactions, lock operations then stop being movers (an acquire does not commute with the read): the
    # reduction finds the violation itself, not the optimistic search for deadlocks (made to fail here),
    # which once hid that it did not.
    def refuse(self: Checker, result: object, notes: object) -> object:
        raise AssertionError("the optimistic search for deadlock freedom ran")

    monkeypatch.setattr(Checker, "_deadlock_check", refuse)
    src = """
    m = LOCK
    def holder():
        with m:
            a = 1
    def watcher():
        b = 0
        seen = m.owner
        assert seen is None, "m was held"
    Thread(target=holder).start()
    Thread(target=watcher).start()
    """
    src = textwrap.dedent(src).replace("LOCK", lock)
    base = movers.check(src)
    r = movers.check(src, reduction=reduction)
    assert base.verdict == r.verdict == "violation"
    assert "m was held" in r.violations[0].message


@pytest.mark.parametrize("reduction", ["optimistic", "transactions"])
def test_blocked_guard_on_declared_data_watches_it(reduction: str) -> None:
    # The waiter's guard reads x, which only the writer may access. Blocked, that is no violation (the full
    # search reports none unless the guard lets the step run), but x == 1 holds only inside the writer's
    # run: the reduction must make the writer's accesses to x visible so that the waiter can run then.
    src = textwrap.dedent(GUARD).replace("x = 0\n", "x = 0\nthread_local(x, 0)\n", 1)
    base = movers.check(src)
    r = movers.check(src, reduction=reduction)
    assert base.verdict == "violation" and base.violations[0].kind == "discipline"
    assert r.verdict == "violation" and r.violations[0].kind == "discipline"
    never = src.replace("wait_until(done or x == 1)", "wait_until(done or x == 5)")
    assert movers.check(never).verdict == movers.check(never, reduction=reduction).verdict == "ok"


# -- the per-thread memo of steps (reduce/optimistic.py's ``_local_key``) and of guard checks -----------------


def _without_memos(monkeypatch: pytest.MonkeyPatch) -> None:
    from movers.analysis import classify
    from movers.reduce import optimistic

    monkeypatch.setattr(optimistic.Optimistic, "_local_key", lambda self, state, i: None)
    real = classify.Classification.check_guards

    def unmemoised(self: classify.Classification, ts: object, state: tuple) -> str | None:
        self._guards_checked.clear()
        return real(self, ts, state)

    monkeypatch.setattr(classify.Classification, "check_guards", unmemoised)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_memos_change_nothing_but_time(path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A step is remembered per (thread, its stack, globals, heap) and replayed onto other states: the search
    # must be the one that executes and classifies every step anew, state for state.
    memo = search_summary(movers.check(path, reduction="optimistic", max_states=30_000))
    _without_memos(monkeypatch)
    assert memo == search_summary(movers.check(path, reduction="optimistic", max_states=30_000))


@RANDOM
@given(models())
def test_random_models_the_memos_change_nothing(src: str) -> None:
    note(src)
    memo = search_summary(movers.check(src, reduction="optimistic", max_states=5_000))
    with pytest.MonkeyPatch.context() as mp:
        _without_memos(mp)
        assert memo == search_summary(movers.check(src, reduction="optimistic", max_states=5_000))


def test_steps_that_read_other_threads_are_not_remembered() -> None:
    # join reads another thread, start adds one, notify picks among the waiters, and a constructor's accesses
    # depend on whether the object escaped to another thread: none of them has a per-thread key.
    from movers.reduce.optimistic import Optimistic

    src = textwrap.dedent("""
        from movers.lang import *

        class Box:
            def __init__(self):
                self.v = 0

        cv = Condition()
        x = 0

        def child():
            global x
            x = 1

        def main():
            global x
            b = Box()
            t = Thread(target=child)
            t.start()
            t.join()
            with cv:
                cv.notify()
            x = 2

        Thread(target=main).start()
    """)
    ts = TransitionSystem(load(source=src))
    red = Optimistic(ts)
    kinds: dict[str, bool] = {}
    state = ts.initial()
    for _ in range(40):  # main's steps, one at a time, noting which got a key
        th = state[2][0]
        if not th:
            break
        node = ts.next_node(state, 0)
        kinds.setdefault(node.kind, red._local_key(state, 0) is not None)
        if th[-1][0].name.endswith(".__init__"):
            assert red._local_key(state, 0) is None
        nxt = [o for o in ts.execute(state, 0, True) if o.state is not None]
        if not nxt:
            break
        state = nxt[0].state
    assert kinds.get("start") is False and kinds.get("join") is False and kinds.get("notify") is False
    assert kinds.get("stmt") is True
