"""The liveness examples (issue 26): the verdicts in each ``examples/liveness_*.py`` header, decided by the
independent naive search ``tests/naive_liveness.py``; the naive search itself on hand-made graphs and tiny
models where the fairness assumptions differ; and, once movers has a liveness search
(``movers.search.fair_cycles``), movers' verdicts against the naive ones."""

from __future__ import annotations

import re
import textwrap
from functools import cache
from pathlib import Path

import pytest
from conftest import EXAMPLES
from naive_explorer import NaiveModel
from naive_liveness import (
    FAIRNESS,
    PROPERTIES,
    STUTTER,
    Graph,
    build_graph,
    check_liveness,
    decide,
    graph_of,
    has_fair_cycle,
)

FILES = sorted(EXAMPLES.glob("liveness_*.py"))
GRANULARITIES = ("access", "statement")


def expected(path: Path) -> dict[tuple[str, str], str]:
    """The header's ``# Liveness <property>: none v, weak v, strong v`` lines, by (property, fairness)."""
    out: dict[tuple[str, str], str] = {}
    for prop in PROPERTIES:
        m = re.search(rf"^# Liveness {prop}: none (ok|violation), weak (ok|violation), strong (ok|violation)$",
                      path.read_text(), re.M)
        assert m, f"{path.name}: no valid '# Liveness {prop}:' line"
        out.update({(prop, f): v for f, v in zip(FAIRNESS, m.groups(), strict=True)})
    return out


# Where the naive explorer's model of a program is coarser than CPython's, and movers': it runs a Queue's get
# as one step, enabled whenever the queue holds an item, where CPython's get waits on a Condition, and a
# notify may wake the other consumer (Python promises no order among waiters: docs/language.md, every choice
# of a notify is explored). Under strong fairness a waiting consumer then starves in movers' model, which the
# example's header gives, and not in the naive one.
NAIVE_MODEL = {("liveness_producer_consumer.py", "starvation", "strong"): "ok"}


def naive_expected(path: Path) -> dict[tuple[str, str], str]:
    """``expected``, but where the naive explorer models the program differently (``NAIVE_MODEL``)."""
    out = expected(path)
    out.update({(p, f): v for (name, p, f), v in NAIVE_MODEL.items() if name == path.name})
    return out


@cache
def graph(name: str, granularity: str) -> Graph:
    return build_graph((EXAMPLES / name).read_text(), granularity)


def test_there_are_liveness_examples() -> None:
    assert {p.name for p in FILES} >= {"liveness_peterson.py", "liveness_spinlock.py", "liveness_polite.py",
                                       "liveness_philosophers.py", "liveness_philosophers_arbiter.py",
                                       "liveness_producer_consumer.py"}


@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_example_header_verdicts(path: Path, granularity: str) -> None:
    want = naive_expected(path)
    g = graph(path.name, granularity)
    got = {(p, f): decide(g, p, f).verdict for p in PROPERTIES for f in FAIRNESS}
    assert got == want


def test_examples_show_each_difference() -> None:
    """Between them the examples separate none from weak and weak from strong, on both properties."""
    verdicts = [expected(p) for p in FILES]
    for prop in PROPERTIES:
        assert any(v[prop, "none"] != v[prop, "weak"] for v in verdicts), prop
        assert any(v[prop, "weak"] != v[prop, "strong"] for v in verdicts), prop


def test_the_starved_threads_are_named() -> None:
    # spinlock: the setter (thread 1) waits at its acquire; producer_consumer: either consumer (1, 2)
    assert decide(graph("liveness_spinlock.py", "access"), "starvation", "weak").starved == {1}
    assert decide(graph("liveness_producer_consumer.py", "access"), "starvation", "weak").starved == {1, 2}


# Hand-made graphs: edges (source, thread, target); enabled[s] the threads with a step at s.

def test_weak_and_strong_differ_on_an_intermittently_enabled_thread() -> None:
    # thread 0 loops between 0 and 1; thread 1 is enabled at 0 only and never moves
    g = graph_of(2, [(0, 0, 1), (1, 0, 0)], [{0, 1}, {0}])
    assert has_fair_cycle(g, range(2), g.edges, "none")
    assert has_fair_cycle(g, range(2), g.edges, "weak")
    assert not has_fair_cycle(g, range(2), g.edges, "strong")


def test_none_and_weak_differ_on_a_thread_enabled_throughout() -> None:
    g = graph_of(2, [(0, 0, 0)], [{0, 1}])
    assert has_fair_cycle(g, [0], g.edges, "none")
    assert not has_fair_cycle(g, [0], g.edges, "weak")
    assert not has_fair_cycle(g, [0], g.edges, "strong")


def test_strong_fairness_looks_inside_a_component() -> None:
    """The component {0, 1, 2} is not strongly fair (thread 1 is enabled at 0 and never moves), but its
    cycle 1 -> 2 -> 1, where thread 1 is disabled throughout, is."""
    g = graph_of(2, [(0, 0, 1), (1, 0, 0), (1, 0, 2), (2, 0, 1)], [{0, 1}, {0}, {0}])
    assert has_fair_cycle(g, range(3), g.edges, "strong")
    without_inner = graph_of(2, [(0, 0, 1), (1, 0, 0), (1, 0, 2), (2, 0, 0)], [{0, 1}, {0}, {0}])
    assert not has_fair_cycle(without_inner, range(3), without_inner.edges, "strong")
    assert has_fair_cycle(without_inner, range(3), without_inner.edges, "weak")


def test_a_thread_that_moves_somewhere_in_the_cycle_is_treated_fairly() -> None:
    g = graph_of(2, [(0, 0, 1), (1, 1, 0)], [{0, 1}, {0, 1}])
    assert has_fair_cycle(g, range(2), g.edges, "strong")
    assert not has_fair_cycle(g, range(2), [(0, 0, 1)], "none")  # no cycle at all


def test_starvation_on_a_hand_made_graph() -> None:
    g = graph_of(2, [(0, 0, 1), (1, 0, 0)], [{0, 1}, {0}], waiting=[{1}, {1}])
    assert decide(g, "starvation", "weak").starved == {1}
    assert decide(g, "starvation", "strong").verdict == "ok"
    not_waiting = graph_of(2, [(0, 0, 1), (1, 0, 0)], [{0, 1}, {0}], waiting=[{1}, set()])
    assert decide(not_waiting, "starvation", "none").verdict == "ok"


def test_the_stutter_loop_of_terminated_threads_is_not_a_termination_violation() -> None:
    g = graph_of(1, [(0, 0, 1)], [{0}, set()], done=[False, True])
    assert (1, STUTTER, 1) in g.edges
    assert decide(g, "termination", "none").verdict == "ok"
    stuck = graph_of(1, [(0, 0, 1)], [{0}, set()], waiting=[set(), {0}], done=[False, False])
    assert decide(stuck, "termination", "strong").verdict == "violation"  # its stutter loop is fair
    assert decide(stuck, "starvation", "strong").starved == {0}


# Tiny models through the naive explorer.

def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


SPIN_ON_FLAG = src("""
    import threading

    done = False


    def spinner():
        while not done:
            pass


    def setter():
        global done
        done = True


    threading.Thread(target=spinner).start()
    threading.Thread(target=setter).start()
    """)


def test_a_busy_wait_ends_under_weak_fairness_and_is_never_starvation() -> None:
    assert check_liveness(SPIN_ON_FLAG, "termination", "none").verdict == "violation"
    assert check_liveness(SPIN_ON_FLAG, "termination", "weak").verdict == "ok"
    assert check_liveness(SPIN_ON_FLAG, "starvation", "none").verdict == "ok"  # spinning is moving


def test_waiting_is_resting_at_a_blocking_instruction() -> None:
    model = NaiveModel(src("""
        import threading

        m = threading.Lock()
        flag = False


        def a():
            with m:
                pass


        def b():
            while not flag:
                pass


        t = threading.Thread(target=a)
        t.start()
        threading.Thread(target=b).start()
        t.join()
        """))
    s = model.initial
    assert [model.waiting(s, t) for t in range(3)] == [True, False, True]  # acquire, busy loop, join
    steps, _ = model.steps(s)
    assert {t for t, _ in steps} == {0, 1}  # the join is disabled until a has ended


def test_a_blocked_waiter_starves_under_weak_fairness_only() -> None:
    model = src("""
        from movers.lang import *

        x = 0


        def stepper():
            global x
            while True:
                x = 1 - x


        def waiter():
            wait_until(x == 1)


        Thread(target=stepper).start()
        Thread(target=waiter).start()
        """)
    assert check_liveness(model, "starvation", "weak").starved == {1}
    assert check_liveness(model, "starvation", "strong").verdict == "ok"


def test_a_safety_violation_comes_first() -> None:
    deadlock = src("""
        import threading

        a = threading.Lock()
        b = threading.Lock()


        def one():
            with a:
                with b:
                    pass


        def two():
            with b:
                with a:
                    pass


        threading.Thread(target=one).start()
        threading.Thread(target=two).start()
        """)
    v = check_liveness(deadlock, "termination", "weak")
    assert (v.verdict, v.kind) == ("violation", "deadlock")


# movers' liveness search against the naive one (part C of issue 26).

@pytest.mark.parametrize("fairness", FAIRNESS)
@pytest.mark.parametrize("prop", PROPERTIES)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_movers_agrees_with_the_naive_search(path: Path, prop: str, fairness: str) -> None:
    pytest.importorskip("movers.search.fair_cycles", reason="movers has no liveness search yet (issue 26 part C)")
    import movers

    want = expected(path)[prop, fairness]
    for granularity in GRANULARITIES:
        assert decide(graph(path.name, granularity), prop, fairness).verdict == naive_expected(path)[prop, fairness]
        r = movers.check(path, liveness=prop, fairness=fairness, granularity=granularity)  # type: ignore[call-arg]
        assert r.verdict == want, (granularity, r.error, [(v.kind, v.message) for v in r.violations])
        if want == "violation":
            assert r.violations[0].kind == "liveness"


# SPIN's verdicts on the Promela twins (benchmarks/promela/liveness_*.pml), where SPIN is installed: its
# weak fairness (-f) is the spec's weak fairness; it has no strong fairness.

PROMELA = Path(__file__).parent.parent / "benchmarks" / "promela"
SPIN_TWINS = {"liveness_peterson": "liveness_peterson.py", "liveness_polite": "liveness_polite.py",
              "liveness_spinlock": "liveness_spinlock.py"}


@pytest.mark.parametrize("twin", sorted(SPIN_TWINS))
def test_spin_agrees_on_termination(twin: str, tmp_path: Path) -> None:
    import shutil
    import subprocess

    if not (shutil.which("spin") and shutil.which("gcc")):
        pytest.skip("spin or gcc not installed")
    (tmp_path / f"{twin}.pml").write_text((PROMELA / f"{twin}.pml").read_text())
    subprocess.run(["spin", "-a", f"{twin}.pml"], cwd=tmp_path, check=True, capture_output=True, timeout=60)
    subprocess.run(["gcc", "-O1", "-o", "pan", "pan.c"], cwd=tmp_path, check=True, capture_output=True,
                   timeout=120)
    want = expected(EXAMPLES / SPIN_TWINS[twin])
    for fairness, flags in (("none", ["-a"]), ("weak", ["-a", "-f"])):
        out = subprocess.run(["./pan", *flags], cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout
        errors = re.search(r"errors: (\d+)", out)
        assert errors, out
        assert ("violation" if int(errors.group(1)) else "ok") == want["termination", fairness], (fairness, out)
