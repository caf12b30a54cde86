"""Liveness under the reductions that claim it (issue 26; docs/reductions.md, "Liveness"): Dwyer et al.'s
ample sets (D) and (S) must give ``--reduction none``'s verdict for ``termination``, ``starvation`` and LTL-X
formulas under every fairness, on the examples and on random models whose threads compute on their own
locals and objects (where the ample sets are smaller than the enabled set, and an invisible step may loop
forever: the case the fairness argument is about), and their lassos must replay.

Each side condition the docs argue has a test that fails without it: the cycle proviso (a thread spinning on
its own locals must not hide the others' moves), the visibility of a waiting thread's step (starvation
without fairness), and ``observe`` making a step that changes a formula's atom visible (checked on the step
itself: under (D) and (S) C1 already keeps such steps out of ample sets, so no verdict shows it)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from test_liveness_examples import expected
from test_naive_ltl import liveness_formulas

import movers
from movers.cli import main
from movers.reduce import capabilities, supporting

FAIRNESS = ("none", "weak", "strong")
PROPERTIES = ("termination", "starvation")
REDUCED = ("dwyer-d", "dwyer-s")
RANDOM = settings(max_examples=25, deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def test_the_reductions_that_claim_liveness_are_these() -> None:
    assert set(supporting(lambda c: c.liveness)) == {"none", *REDUCED}
    assert not capabilities("dwyer-da").liveness and not capabilities("transactions").liveness


def _verdict(source: str, reduction: str, **kw: Any) -> tuple[str, str | None, int] | None:
    r = movers.check(source, reduction=reduction, max_states=3000, **kw)
    assert r.error is None, r.error
    if r.verdict == "incomplete":
        return None
    return r.verdict, (r.violations[0].kind if r.violations else None), r.stats.states


def _agree(source: str, **kw: Any) -> list[int]:
    """Every reduction's verdict is none's; the states each stored, none's first."""
    want = _verdict(source, "none", **kw)
    if want is None:
        return []
    sizes = [want[2]]
    for red in REDUCED:
        got = _verdict(source, red, **kw)
        if got is None:  # a reduced graph is a subgraph: it is never bigger than the full one
            raise AssertionError(f"{red} ran out of states where none did not")
        assert got[:2] == want[:2], (red, kw)
        assert got[2] <= want[2], (red, kw)
        sizes.append(got[2])
    return sizes


# ------------------------------------------------------------------------------------------------- examples

@pytest.mark.parametrize("reduction", REDUCED)
@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("liveness_*.py")), ids=lambda p: p.name)
def test_examples_give_their_verdicts(path: Path, reduction: str) -> None:
    source = path.read_text()
    for (prop, fairness), want in expected(path).items():
        r = movers.check(source, liveness=prop, fairness=fairness, reduction=reduction)
        assert r.verdict == want, (prop, fairness)


@pytest.mark.parametrize("reduction", REDUCED)
@pytest.mark.parametrize(("example", "prop", "fairness"), [
    ("liveness_spinlock.py", "starvation", "weak"), ("liveness_polite.py", "termination", "strong"),
    ("liveness_producer_consumer.py", "starvation", "weak")])
def test_a_reduced_lasso_replays(example: str, prop: str, fairness: str, reduction: str, tmp_path: Path) -> None:
    trail = tmp_path / "t.trail"
    model = EXAMPLES / example
    assert main(["check", str(model), "--liveness", prop, "--fairness", fairness, "--reduction", reduction,
                 "--trail", str(trail)]) == 1
    data = json.loads(trail.read_text())
    assert data["kind"] == "liveness" and type(data["cycle_start"]) is int
    assert main(["replay", str(model), str(trail)]) == 1


# ---------------------------------------------------------------------------------- the side conditions

LOCAL_SPINNER = """
    from movers.lang import *
    import threading

    done = False

    def spinner():
        i = 0
        while True:
            i = 1 - i

    def worker():
        global done
        k = [0]
        k[0] = 1
        done = True

    @predicate
    def finished():
        return done

    ltl("<> finished")
    threading.Thread(target=spinner).start()
    threading.Thread(target=worker).start()
"""


@pytest.mark.parametrize("reduction", REDUCED)
def test_a_thread_spinning_on_its_locals_does_not_hide_the_others(reduction: str) -> None:
    # The spinner's steps are ample wherever it is enabled; only the cycle proviso lets the worker move. The
    # worker finishes on every weakly fair run, and on some unfair one it never does.
    src = textwrap.dedent(LOCAL_SPINNER)
    for fairness, want in (("none", "violation"), ("weak", "ok"), ("strong", "ok")):
        r = movers.check(src, liveness="ltl", fairness=fairness, reduction=reduction)
        assert r.verdict == want, fairness
    none = movers.check(src, liveness="ltl", fairness="weak")
    reduced = movers.check(src, liveness="ltl", fairness="weak", reduction=reduction)
    assert reduced.stats.states < none.stats.states
    # Without the proviso the spinner's steps would be ample at every state, and the worker would never set
    # ``done`` in the reduced graph: a formula that only its move violates would hold there.
    never = src.replace('ltl("<> finished")', 'ltl("[] !finished")')
    for fairness in FAIRNESS:
        r = movers.check(never, liveness="ltl", fairness=fairness, reduction=reduction)
        assert r.verdict == "violation" and r.violations[0].kind == "liveness", fairness


WAITER = """
    import threading

    limit = 5

    def waiter():
        i = 0
        while True:
            i = (i + 1) % 3
            wait_until(limit != 2)

    def spinner():
        j = 0
        while True:
            j = (j + 1) % 3

    threading.Thread(target=waiter).start()
    threading.Thread(target=spinner).start()
"""


@pytest.mark.parametrize("reduction", REDUCED)
def test_the_step_of_a_waiting_thread_is_visible(reduction: str) -> None:
    # The waiter's wait_until reads a global no step writes, so its step is independent of everything and would
    # be ample; without fairness the waiter starves at it while the spinner runs, and an ample wait_until step
    # put in front of that run would end the waiting the violation needs (Peled's construction inserts it).
    src = "from movers.lang import *\n" + textwrap.dedent(WAITER)
    for fairness, want in (("none", "violation"), ("weak", "ok"), ("strong", "ok")):
        assert movers.check(src, liveness="starvation", fairness=fairness).verdict == want, fairness
        r = movers.check(src, liveness="starvation", fairness=fairness, reduction=reduction)
        assert r.verdict == want, fairness


INVISIBLE_LOOKING = """
    from movers.lang import *
    import threading

    class Box:
        def __init__(self):
            self.v = 0

    box = Box()
    other = 0

    def writer():
        b = box
        b.v = 1
        b.v = 0

    def bystander():
        global other
        n = [0]
        while n[0] < 2:
            n[0] = n[0] + 1
        other = 1

    @predicate
    def set_once():
        return box.v == 1

    ltl("[] !set_once")
    threading.Thread(target=writer).start()
    threading.Thread(target=bystander).start()
"""


@pytest.mark.parametrize("reduction", REDUCED)
def test_a_violation_through_an_object_is_found(reduction: str) -> None:
    # The writer reaches the global box through a local; the state where the atom holds is in the reduced graph.
    src = textwrap.dedent(INVISIBLE_LOOKING)
    for fairness in FAIRNESS:
        r = movers.check(src, liveness="ltl", fairness=fairness, reduction=reduction)
        assert r.verdict == "violation" and r.violations[0].kind == "liveness", fairness


@pytest.mark.parametrize("reduction", REDUCED)
def test_observe_makes_a_step_that_changes_an_atom_visible(reduction: str) -> None:
    # C2 for the formula's atoms, on one step. Under (D) and (S) an ample step touches only objects no global
    # reaches, which no predicate can read, so C1 already keeps such a step out of an ample set and no verdict
    # shows C2: this asks checkC2 itself, before and after ``observe``.
    from movers.analysis.escape import Locality
    from movers.reduce import make_reduction
    from movers.semantics.system import TransitionSystem

    ts = TransitionSystem(movers.load(source=textwrap.dedent(INVISIBLE_LOOKING)))
    red: Any = make_reduction(reduction, ts)
    state = ts.initial()
    writer = 0
    while True:  # on to the writer's step that sets box.v
        outs = red.current(state, writer)
        after = outs[0].state
        if ts.atoms(after) == {"set_once"}:
            break
        state = after
    view = red.view(state, writer, outs, Locality.of(ts, state))
    assert red.checkC2(view)  # no invariant, no declaration: invisible to safety
    red.observe(frozenset({"set_once"}))
    assert not red.checkC2(view)
    red.observe(frozenset())  # observing nothing more keeps what was observed
    assert not red.checkC2(view)


CORPUS = Path(__file__).parent / "corpus"


@pytest.mark.parametrize("reduction", REDUCED)
def test_an_ample_step_enables_and_disables_no_other_thread(reduction: str) -> None:
    """The fact the fairness argument rests on (docs/reductions.md, "Liveness with ample sets", fact 3): an
    ample step disables no other thread, and enables none but in the two permanent ways the argument allows:
    a ``start`` enables the thread it starts, and a thread's last step enables a ``join`` on it. Checked at
    every state of the examples and of the corpus's idiomatic programs (the first 800 states of each),
    breadth first as the liveness search builds its graph."""
    from collections import deque

    from movers.reduce import make_reduction
    from movers.semantics.system import TransitionSystem

    starts = joins = 0
    for path in sorted(EXAMPLES.glob("*.py")) + sorted(CORPUS.glob("*.py")):
        ts = TransitionSystem(movers.load(path))
        red: Any = make_reduction(reduction, ts)
        init = ts.initial()
        seen, queue = {init}, deque([init])
        red.on_stack, red.stored, red.arrived = None, seen.__contains__, None
        while queue and len(seen) < 800:
            s = queue.popleft()
            enabled = red.enabled(s)
            if enabled and not ts.ended(s):
                chosen, executed = red.ample(s, enabled)
                if chosen is not None:
                    others = set(enabled) - {chosen}
                    for o in executed[chosen]:
                        if o.state is None:
                            continue
                        after = set(red.enabled(o.state)) - {chosen}
                        assert not others - after, (path.name, chosen, others, after)  # disables no one
                        started = set(o.effect.started) if o.effect is not None else set()
                        ended = not o.state[2][chosen]
                        for j in after - others:  # enables only a thread it starts, or a join on itself
                            assert j in started or (ended and ts.next_node(o.state, j).kind == "join"), (
                                path.name, chosen, j)
                            starts += j in started
                            joins += j not in started
            for o in ts.steps(s):
                if o.state is not None and o.state not in seen:
                    seen.add(o.state)
                    queue.append(o.state)
    # The exceptions are met, so the check saw such steps (on these programs (S) makes no start ample).
    assert joins > 0 and (starts > 0 or reduction == "dwyer-s"), (starts, joins)


# ------------------------------------------------------------------------------------------- random models

_GLOBAL = ["x = (x + 1) % 3", "b = not b", "y = x", "x = i", "i = x", "b = x == y", "x = 0", "y = (y + 1) % 2"]
_LOCAL = ["i = (i + 1) % 3", "k[0] = (k[0] + i) % 2", "i = k[0]", "k.append(i)", "k[0] = 1 - k[0]"]
_CONDS = ["x != 2", "x == y", "not b", "b"]
_LOCAL_CONDS = ["i != 2", "k[0] == 0", "len(k) < 3"]
PREDICATES = {"p": "x == 1", "q": "b", "r": "y > x"}


@st.composite
def _statement(draw: st.DrawFn, depth: int) -> list[str]:
    kind = draw(st.sampled_from(["local", "local", "global", "while", "if", "with", "wait"] if depth
                                else ["local", "global"]))
    if kind == "local":
        return [draw(st.sampled_from(_LOCAL))]
    if kind == "global":
        return [draw(st.sampled_from(_GLOBAL))]
    if kind == "wait":
        return [f"wait_until({draw(st.sampled_from(_CONDS))})"]
    inner = draw(st.lists(_statement(depth - 1), min_size=1, max_size=2))
    body = ["    " + line for s in inner for line in s]
    if kind == "with":
        return ["with m:", *body]
    cond = draw(st.sampled_from(_LOCAL_CONDS + _CONDS))
    if kind == "while" and cond == "len(k) < 3":
        body.append("    k.append(0)")
    return [f"{'while' if kind == 'while' else 'if'} {cond}:", *body]


@st.composite
def local_models(draw: st.DrawFn) -> str:
    """2-3 threads over globals x, y, b and a lock m, each with a local int i and a list k of its own, whose
    loops may run forever; sometimes a thread that spins forever on its own locals, or on a global."""
    lines = ["from movers.lang import *", "import threading", "", "m = threading.Lock()",
             f"x = {draw(st.integers(0, 2))}", f"y = {draw(st.integers(0, 1))}", f"b = {draw(st.booleans())}", ""]
    n = draw(st.integers(2, 3))
    spinner = draw(st.sampled_from(["", "", "i = 1 - i", "k[0] = 1 - k[0]", "x = (x + 1) % 3"]))
    for t in range(n - bool(spinner)):
        body = [line for s in draw(st.lists(_statement(2), min_size=1, max_size=3)) for line in s]
        if draw(st.integers(0, 3)) == 0:
            body = ["while True:", *("    " + line for line in body)]
        lines += ["", f"def t{t}():", "    global x, y, b", "    i = 0", "    k = [0]",
                  *("    " + line for line in body), ""]
    if spinner:
        lines += ["", f"def t{n - 1}():", "    global x", "    i = 0", "    k = [0]", "    while True:",
                  f"        {spinner}", ""]
    for name, expr in PREDICATES.items():
        lines += ["", "@predicate", f"def {name}():", f"    return {expr}", ""]
    return "\n".join(lines)


def _finish(source: str, formula: str | None) -> str:
    n = sum(line.startswith("def t") for line in source.splitlines())
    decl = [f"ltl({formula!r})"] if formula else []
    return source + "\n" + "\n".join([*decl, *(f"threading.Thread(target=t{i}).start()" for i in range(n))]) + "\n"


@RANDOM
@given(local_models(), liveness_formulas(), st.sampled_from(["access", "statement"]))
def test_random_models_agree_with_none_on_ltl(source: str, formula: str, granularity: str) -> None:
    source = _finish(source, formula)
    note(source)
    for fairness in FAIRNESS:
        _agree(source, liveness="ltl", fairness=fairness, granularity=granularity)


@RANDOM
@given(local_models(), st.sampled_from(["access", "statement"]))
def test_random_models_agree_with_none_on_termination_and_starvation(source: str, granularity: str) -> None:
    source = _finish(source, None)
    note(source)
    for prop in PROPERTIES:
        for fairness in FAIRNESS:
            _agree(source, liveness=prop, fairness=fairness, granularity=granularity)


_SYNC = ["i = (i + 1) % 3", "k.append(i)", "x = (x + 1) % 3", "b = not b", "ev.set()", "ev.wait()",
         "with cv:\n    x = (x + 1) % 3\n    cv.notify_all()",
         "with cv:\n    while x == 0:\n        cv.wait()\n    x = x - 1",
         "h = threading.Thread(target=helper)\nh.start()\nh.join()", "with m:\n    b = True", "y = len(k) % 2"]


@st.composite
def sync_models(draw: st.DrawFn) -> str:
    """2-3 threads that also wait: on an Event, on a Condition (``wait`` in a loop, ``notify_all``), for a
    helper thread they start and join; each with its own locals, and sometimes a loop forever."""
    lines = ["from movers.lang import *", "import threading", "", "m = threading.Lock()", "cv = threading.Condition()",
             "ev = threading.Event()", f"x = {draw(st.integers(0, 2))}", "y = 0", f"b = {draw(st.booleans())}", "",
             "def helper():", "    global y", "    y = 1 - y", ""]
    for t in range(draw(st.integers(2, 3))):
        body = [line for s in draw(st.lists(st.sampled_from(_SYNC), min_size=1, max_size=4)) for line in s.split("\n")]
        if draw(st.integers(0, 3)) == 0:
            body = ["while True:", *("    " + line for line in body)]
        lines += [f"def t{t}():", "    global x, y, b", "    i = 0", "    k = [0]",
                  *("    " + line for line in body), ""]
    for name, expr in PREDICATES.items():
        lines += ["@predicate", f"def {name}():", f"    return {expr}", ""]
    return "\n".join(lines)


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sync_models(), liveness_formulas(), st.sampled_from(["access", "statement"]))
def test_random_models_that_wait_agree_with_none(source: str, formula: str, granularity: str) -> None:
    # Events, Conditions and joins: steps that enable or disable other threads, which an ample step must never be.
    source = _finish(source, formula)
    note(source)
    for prop in ("ltl", *PROPERTIES):
        for fairness in FAIRNESS:
            _agree(source, liveness=prop, fairness=fairness, granularity=granularity)


def test_the_random_models_are_reduced() -> None:
    """The differential tests above are not vacuous: on the models they draw, the ample sets store fewer
    states than the full search on most."""
    smaller = total = 0

    @settings(max_examples=15, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(local_models())
    def run(source: str) -> None:
        nonlocal smaller, total
        sizes = _agree(_finish(source, None), liveness="termination", fairness="weak")
        if sizes:
            total += 1
            smaller += sizes[1] < sizes[0]

    run()
    assert total >= 8 and smaller * 2 > total, (smaller, total)
