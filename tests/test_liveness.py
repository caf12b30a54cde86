"""``--liveness termination|starvation`` and ``--fairness``: the fair-cycle search (search/fair_cycles.py), its
properties (liveness/properties.py), its refusals, its lasso and its report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from movers.checker import check, load
from movers.cli import main
from movers.search.fair_cycles import STUTTER, Graph, Target, build, components, fair_components, lasso
from movers.search.options import Options
from movers.semantics.system import TransitionSystem

SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "result.schema.json").read_text())

# A thread waits for a flag no one sets: it spins forever (every fairness), and it never waits at a guard.
SPIN = """
import threading

flag = False

def waiter():
    while not flag:
        pass

t = threading.Thread(target=waiter)
t.start()
"""

# Two threads that each do a finite amount of work under a lock: every run ends.
FINITE = """
import threading

m = threading.Lock()
x = 0

def worker():
    global x
    with m:
        x = x + 1

a = threading.Thread(target=worker)
b = threading.Thread(target=worker)
a.start()
b.start()
"""

# Two threads take the lock forever: each may starve under weak fairness (the other holds the lock at some
# state of every turn, so the starved one is disabled there), never under strong fairness (the lock is free
# at a state of every turn, where the starved one is enabled: strong fairness makes it move).
GREEDY = """
import threading

m = threading.Lock()

def worker():
    while True:
        with m:
            pass

a = threading.Thread(target=worker)
b = threading.Thread(target=worker)
a.start()
b.start()
"""

# The poller loops on the lock until the setter has set done; the setter needs the lock once. Weak fairness
# lets the poller hold it whenever the setter could look (termination fails), strong fairness does not.
POLLER = """
import threading

m = threading.Lock()
done = False

def poller():
    while not done:
        with m:
            pass

def setter():
    global done
    with m:
        done = True

a = threading.Thread(target=poller)
b = threading.Thread(target=setter)
a.start()
b.start()
"""

ABBA = """
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
"""


def _check(source: str, **options: Any) -> Any:
    return check(source=source, **options)


# -- verdicts -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fairness", ["weak", "strong", "none"])
def test_a_spin_loop_on_a_flag_never_set_does_not_terminate(fairness: str) -> None:
    r = _check(SPIN, liveness="termination", fairness=fairness)
    assert r.verdict == "violation" and r.exit_code == 1
    v = r.violations[0]
    assert v.kind == "liveness"
    assert ("without fairness" if fairness == "none" else f"under {fairness} fairness") in v.message
    assert v.cycle_start is not None and v.cycle_start < len(v.trace)
    assert all(st.name == "waiter" for st in v.trace[v.cycle_start:])


def test_a_spin_loop_is_no_starvation() -> None:
    # The waiter never waits at a guard: it runs, so it does not starve.
    r = _check(SPIN, liveness="starvation")
    assert r.verdict == "ok" and r.exit_code == 0


@pytest.mark.parametrize("fairness", ["weak", "strong", "none"])
@pytest.mark.parametrize("prop", ["termination", "starvation"])
def test_threads_that_terminate_are_verified(prop: str, fairness: str) -> None:
    r = _check(FINITE, liveness=prop, fairness=fairness)
    assert r.verdict == "ok", r.violations
    assert r.stats.states > 1


def test_starvation_under_weak_fairness_but_not_under_strong() -> None:
    weak = _check(GREEDY, liveness="starvation", fairness="weak")
    assert weak.verdict == "violation"
    v = weak.violations[0]
    assert v.message.startswith("thread worker#") and "starves: waiting at line 8 `with m:`" in v.message
    assert "under weak fairness" in v.message
    starved = v.message.split()[1]
    # The starved thread never moves in the cycle; the other does.
    assert v.trace[v.cycle_start:] and all(st.name != starved for st in v.trace[v.cycle_start:])
    strong = _check(GREEDY, liveness="starvation", fairness="strong")
    assert strong.verdict == "ok"
    assert _check(GREEDY, liveness="starvation", fairness="none").verdict == "violation"


def test_termination_under_weak_fairness_but_not_under_strong() -> None:
    weak = _check(POLLER, liveness="termination", fairness="weak")
    assert weak.verdict == "violation"
    v = weak.violations[0]
    assert "thread setter never moves" in v.message
    assert {st.name for st in v.trace[v.cycle_start:]} == {"poller"}
    assert _check(POLLER, liveness="termination", fairness="strong").verdict == "ok"


def test_weak_is_the_default_fairness() -> None:
    r = _check(POLLER, liveness="termination")
    assert r.verdict == "violation" and "under weak fairness" in r.violations[0].message


def test_a_deadlock_is_reported_as_a_deadlock_first() -> None:
    r = _check(ABBA, liveness="termination")
    assert r.verdict == "violation" and r.violations[0].kind == "deadlock"
    assert r.violations[0].cycle_start is None


def test_without_liveness_the_same_model_is_verified() -> None:
    # The safety search knows nothing of cycles: the feature is what finds them.
    assert _check(POLLER).verdict == "ok"


# -- the lasso replays ----------------------------------------------------------------------------------------


def _replay(source: str, steps: list[tuple[int, tuple[int, ...]]]) -> list[Any]:
    """The states the steps go through, each step found among ``TransitionSystem.steps`` of the one before."""
    ts = TransitionSystem(load(source=source))
    states = [ts.initial()]
    for t, choices in steps:
        o = next(o for o in ts.steps(states[-1]) if o.thread == t and o.choices == tuple(choices))
        assert o.violation is None and o.state is not None
        states.append(o.state)
    return states


@pytest.mark.parametrize(("source", "prop", "fairness"), [
    (SPIN, "termination", "weak"), (GREEDY, "starvation", "weak"), (POLLER, "termination", "weak"),
    (GREEDY, "termination", "strong"), (GREEDY, "starvation", "none"),
])
def test_the_lasso_replays_and_its_cycle_closes(source: str, prop: str, fairness: str) -> None:
    r = _check(source, liveness=prop, fairness=fairness)
    v = r.violations[0]
    states = _replay(source, v.steps)
    assert len(states) == len(v.steps) + 1
    assert v.cycle_start < len(v.steps)
    assert states[v.cycle_start] == states[-1]  # the cycle's last step returns to its first state


# -- the graph and the SCC search on a hand-made graph ---------------------------------------------------------


def _graph(edges: dict[int, list[tuple[int, int]]], enabled: dict[int, int]) -> Graph:
    g = Graph()
    for n in range(len(edges)):
        g.nodes.append(((n,), 0))
        g.succ.append([(t, m, ((t, (n, m)),)) for t, m in edges[n]])
        g.enabled.append(enabled[n])
        g.done.append(False)
        g.parent.append((-1, -1) if n == 0 else (n - 1, 0))
        g.depth.append(n)
    return g


def test_components_are_tarjans() -> None:
    g = _graph({0: [(0, 1)], 1: [(0, 2)], 2: [(0, 1), (0, 3)], 3: []}, {0: 1, 1: 1, 2: 1, 3: 0})
    comps = sorted(sorted(c) for c in components(g, range(4), set(range(4)), None))
    assert comps == [[0], [1, 2], [3]]


def test_strong_fairness_refines_inside_a_component() -> None:
    # Thread 0 cycles 0 -> 1 -> 0 and 1 -> 2 -> 1; thread 1 is enabled at node 2 only and never moves.
    g = _graph({0: [(0, 1)], 1: [(0, 0), (0, 2)], 2: [(0, 1)]}, {0: 0b01, 1: 0b01, 2: 0b11})
    target = Target()
    assert [set(c) for c in fair_components(g, target, "weak")] == [{0, 1, 2}]
    # Strong: node 2, where thread 1 is enabled, cannot be on a fair cycle; {0, 1} still is one.
    assert [set(c) for c in fair_components(g, target, "strong")] == [{0, 1}]
    lo = lasso(g, frozenset({0, 1}), target, "strong")
    assert lo.entry == 0 and lo.cycle and lo.moved == 0b01
    # Weak: the cycle must pass node 0 or 1, where thread 1 is disabled (both are).
    lo = lasso(g, frozenset({0, 1, 2}), target, "weak")
    assert lo.cycle[0][1][0] == 0


def test_a_thread_enabled_everywhere_that_never_moves_makes_no_weakly_fair_cycle() -> None:
    g = _graph({0: [(0, 1)], 1: [(0, 0)]}, {0: 0b11, 1: 0b11})
    assert fair_components(g, Target(), "weak") == []
    assert fair_components(g, Target(), "strong") == []
    assert len(fair_components(g, Target(), "none")) == 1


def test_a_lasso_visits_every_witness() -> None:
    # Two threads each move on one edge of a four-node ring with a chord; a weakly fair cycle needs both.
    g = _graph({0: [(0, 1), (0, 3)], 1: [(0, 2)], 2: [(1, 3)], 3: [(0, 0)]}, {0: 0b01, 1: 0b01, 2: 0b10, 3: 0b01})
    lo = lasso(g, frozenset(range(4)), Target(), "weak")
    assert {st[0] for st in lo.cycle} == {0, 1}
    assert lo.cycle[-1][1][1] == lo.entry  # it ends where it began


# -- the product with a Büchi automaton ------------------------------------------------------------------------

TOGGLE = """
import threading

x = 0

def toggler():
    global x
    while True:
        x = 1 - x

threading.Thread(target=toggler).start()
"""


class InfinitelyOften:
    """GF one: state 1 after reading a letter where ``one`` holds; accepting {1}."""

    initial = (0,)
    acceptance = (frozenset({1}),)
    atoms = frozenset({"one"})

    def successors(self, q: int, true_atoms: frozenset[str]) -> tuple[int, ...]:
        return (1,) if "one" in true_atoms else (0,)


class EventuallyAlwaysNot:
    """FG !one: guess (from 0) the point after which ``one`` never holds; accepting {1}."""

    initial = (0,)
    acceptance = (frozenset({1}),)
    atoms = frozenset({"one"})

    def successors(self, q: int, true_atoms: frozenset[str]) -> tuple[int, ...]:
        if q == 0:
            return (0, 1)
        return () if "one" in true_atoms else (1,)


def _toggle_graph(automaton: Any) -> tuple[Graph, TransitionSystem]:
    program = load(source=TOGGLE)
    ts = TransitionSystem(program)
    slot = program.globals.index("x")

    def label(s: Any) -> frozenset[str]:
        return frozenset({"one"}) if s[0][slot] == 1 else frozenset()

    g = build(ts, automaton, label, None, lambda n: None)
    assert isinstance(g, Graph)
    return g, ts


def test_the_product_meets_acceptance_sets() -> None:
    g, _ = _toggle_graph(InfinitelyOften())
    assert {q for _, q in g.nodes} == {0, 1}
    target = Target(acceptance=InfinitelyOften.acceptance)
    comps = fair_components(g, target, "weak")
    assert comps
    lo = lasso(g, comps[0], target, "weak")
    assert any(g.nodes[v][1] == 1 for v in lo.component)
    # x = 1 - x flips forever under weak fairness: ``one`` cannot stop holding.
    g2, _ = _toggle_graph(EventuallyAlwaysNot())
    assert fair_components(g2, Target(acceptance=EventuallyAlwaysNot.acceptance), "weak") == []
    # Without the acceptance sets, the product has fair cycles.
    assert fair_components(g2, Target(), "weak")


def test_a_terminated_program_stutters() -> None:
    ts = TransitionSystem(load(source=FINITE))

    class Trivial:
        initial = (0,)
        acceptance: tuple[frozenset[int], ...] = ()

        def successors(self, q: int, true_atoms: frozenset[str]) -> tuple[int, ...]:
            return (0,)

    g = build(ts, Trivial(), None, None, lambda n: None)
    assert isinstance(g, Graph)
    ends = [n for n in range(len(g.nodes)) if g.done[n]]
    assert ends and all(g.succ[n] == [(STUTTER, n, ())] for n in ends)


# -- limits, refusals, reports ---------------------------------------------------------------------------------


def test_max_states_gives_incomplete_never_verified() -> None:
    r = _check(FINITE, liveness="termination", max_states=3)
    assert r.verdict == "incomplete" and r.limit == "max-states" and r.exit_code == 3


def test_max_states_exit_code_3(tmp_path: Path) -> None:
    f = tmp_path / "finite.py"
    f.write_text(FINITE)
    assert main(["check", str(f), "--liveness", "termination", "--max-states", "3", "--quiet"]) == 3


@pytest.mark.parametrize(("changes", "named"), [
    ({"reduction": "optimistic"}, "--reduction optimistic"),
    ({"reduction": "static-por"}, "--reduction static-por"),
    ({"symmetry": "threads"}, "--symmetry threads"),
    ({"workers": 2}, "--workers 2"),
    ({"store": "hashcompact"}, "--store hashcompact"),
    ({"search": "bfs"}, "--search bfs"),
    ({"max_violations": 3}, "--max-violations"),
])
def test_refusals(changes: dict[str, Any], named: str) -> None:
    problem = Options(liveness="termination", **changes).problem()
    assert problem is not None and problem.startswith("--liveness termination:") and named in problem
    assert "--reduction none" in problem  # generated from the capabilities
    r = _check(FINITE, liveness="termination", **changes)
    assert r.verdict == "error" and r.exit_code == 2


def test_ltl_needs_a_formula_and_fairness_needs_liveness() -> None:
    assert Options(liveness="ltl").problem() is None
    r = _check(FINITE, liveness="ltl")
    assert r.verdict == "error" and "declares no formula" in str(r.error)
    assert Options(liveness="termination").problem() is None
    assert Options(fairness="strong").problem() == "--fairness needs --liveness"


def test_cli_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "finite.py"
    f.write_text(FINITE)
    assert main(["check", str(f), "--liveness", "starvation", "--reduction", "optimistic"]) == 2
    assert "--liveness starvation" in capsys.readouterr().err
    assert main(["check", str(f), "--liveness", "ltl"]) == 2


def test_json_has_cycle_start_and_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "greedy.py"
    f.write_text(GREEDY)
    assert main(["check", str(f), "--liveness", "starvation", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    jsonschema.validate(d, SCHEMA)
    v = d["violations"][0]
    assert v["kind"] == "liveness" and 0 <= v["cycle_start"] < len(v["trace"])
    g = tmp_path / "abba.py"
    g.write_text(ABBA)
    assert main(["check", str(g), "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    jsonschema.validate(d, SCHEMA)
    assert d["violations"][0]["cycle_start"] is None


def test_text_report_marks_the_cycle_and_the_fairness(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "poller.py"
    f.write_text(POLLER)
    assert main(["check", str(f), "--liveness", "termination", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "-- the cycle starts here, and repeats forever --" in out
    assert "under weak fairness" in out and "thread setter never moves" in out
    assert main(["check", str(f), "--liveness", "termination", "--fairness", "strong", "--quiet"]) == 0
    assert "verified: no fair cycle violates termination (strong fairness)" in capsys.readouterr().out


def test_an_incomplete_run_counts_the_states_it_built() -> None:
    r = _check(FINITE, liveness="termination", max_states=3)
    assert r.stats.states == 3


def test_a_lasso_is_saved_as_a_trail(tmp_path: Path) -> None:
    # (tests/test_liveness_trail.py replays them.)
    f = tmp_path / "spin.py"
    f.write_text(SPIN)
    assert main(["check", str(f), "--liveness", "termination", "--trail", str(tmp_path / "t.trail")]) == 1
    assert json.loads((tmp_path / "t.trail").read_text())["cycle_start"] is not None


def test_a_safety_violation_met_while_building_the_graph_is_reported_as_such() -> None:
    source = """
import threading

count = 0

@invariant
def small():
    return count < 2

def worker():
    global count
    while True:
        count = count + 1

threading.Thread(target=worker).start()
"""
    r = _check(source, liveness="termination")
    assert r.verdict == "violation" and r.violations[0].kind == "invariant"
    assert r.violations[0].cycle_start is None


def test_statistics_count_steps_not_stutter_loops() -> None:
    safety = _check(FINITE)
    live = _check(FINITE, liveness="termination")
    assert live.stats.states == safety.stats.states
    assert live.stats.transitions == safety.stats.transitions


def _brute_force_fair(g: Graph, fairness: str, acceptance: tuple[frozenset[int], ...]) -> bool:
    """Whether some closed walk is fair and accepting, by trying every set of edges: a closed walk's edges are a
    strongly connected set of edges, and every such set is the edges of some closed walk."""
    edges = [(v, i) for v in range(len(g.nodes)) for i in range(len(g.succ[v]))]
    for pick in range(1, 1 << len(edges)):
        chosen = [edges[k] for k in range(len(edges)) if pick >> k & 1]
        arcs = [(v, g.succ[v][i][1], g.succ[v][i][0]) for v, i in chosen]
        nodes = {v for v, _, _ in arcs} | {w for _, w, _ in arcs}
        reach = {n: {n} for n in nodes}
        for _ in nodes:
            for v, w, _ in arcs:
                reach[v] |= reach[w]
        if any(reach[a] != nodes for a in nodes):
            continue
        moved = {t for _, _, t in arcs if t >= 0}
        threads = {t for v in nodes for t in range(4) if g.enabled[v] >> t & 1}
        if fairness == "weak":
            ok = all(t in moved or any(not g.enabled[v] >> t & 1 for v in nodes) for t in threads)
        elif fairness == "strong":
            ok = all(t in moved for t in threads)
        else:
            ok = True
        if ok and all(any(g.nodes[v][1] in acc for v in nodes) for acc in acceptance):
            return True
    return False


@pytest.mark.parametrize("seed", range(60))
def test_the_scc_search_agrees_with_trying_every_cycle(seed: int) -> None:
    import random

    rnd = random.Random(seed)
    n = rnd.randint(1, 4)
    edges = {v: [(rnd.randint(0, 2), rnd.randrange(n)) for _ in range(rnd.randint(0, 2))] for v in range(n)}
    g = _graph(edges, {v: rnd.randrange(8) for v in range(n)})
    g.nodes = [((v,), rnd.randrange(2)) for v in range(n)]
    g.parent = [(-1, -1)] * n  # every node initial: the stems are empty
    acceptance = rnd.choice([(), (frozenset({1}),), (frozenset({0}), frozenset({1}))])
    target = Target(acceptance=acceptance)
    for fairness in ("weak", "strong", "none"):
        comps = fair_components(g, target, fairness)
        assert bool(comps) == _brute_force_fair(g, fairness, acceptance), (fairness, edges, g.enabled)
        for comp in comps:
            lo = lasso(g, comp, target, fairness)
            # The cycle closes, and it is fair on its own: the witnesses are on it.
            walk = [lo.entry]
            for _t, (src, dst) in lo.cycle:
                assert src == walk[-1]
                walk.append(dst)
            assert walk[-1] == lo.entry and lo.cycle
            on = set(walk)
            moved = {t for t, _ in lo.cycle}
            for t in range(3):
                enabled = [bool(g.enabled[v] >> t & 1) for v in on]
                if fairness == "weak":
                    assert t in moved or not all(enabled)
                elif fairness == "strong":
                    assert t in moved or not any(enabled)
            assert all(any(g.nodes[v][1] in acc for v in on) for acc in acceptance)


def test_a_product_property_plugs_into_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # What ``ltl`` will be: a property over the product with an automaton; here GF one (x is 1 infinitely
    # often) as the automaton of a negated formula "eventually x stays 0", and FG !one, which toggling breaks.
    from movers.liveness import properties

    def factory(automaton: Any) -> Any:
        def make(ts: Any) -> list[properties.Property]:
            slot = ts.program.globals.index("x")
            return [properties.Accepting(ts, automaton, lambda s: frozenset({"one"}) if s[0][slot] == 1 else
                                         frozenset(), "the formula")]
        return make

    monkeypatch.setitem(properties.PROPERTIES, "ltl", factory(InfinitelyOften()))
    assert Options(liveness="ltl").problem() is None
    toggle = TOGGLE.replace("import threading\n", "import threading\nfrom movers.lang import ltl\nltl(\"true\")\n", 1)
    r = _check(toggle, liveness="ltl")
    assert r.verdict == "violation" and r.violations[0].kind == "liveness"
    v = r.violations[0]
    assert v.message.startswith("the formula fails under weak fairness")
    states = _replay(toggle, v.steps)
    assert states[v.cycle_start] == states[-1]
    monkeypatch.setitem(properties.PROPERTIES, "ltl", factory(EventuallyAlwaysNot()))
    assert _check(toggle, liveness="ltl").verdict == "ok"


def test_a_stutter_loop_is_a_cycle_of_no_step(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # An automaton that accepts every run: the ended program's last state, repeated, is a violation.
    from movers.liveness import properties

    monkeypatch.setitem(properties.PROPERTIES, "ltl", lambda ts: [properties.Accepting(
        ts, properties.Trivial(), lambda s: frozenset(), "false")])
    finite = FINITE.replace("import threading\n", "import threading\nfrom movers.lang import ltl\nltl(\"true\")\n", 1)
    f = tmp_path / "finite.py"
    f.write_text(finite)
    assert main(["check", str(f), "--liveness", "ltl", "--quiet"]) == 1
    assert "-- the cycle: the last state repeats forever, no thread moving --" in capsys.readouterr().out
    r = _check(finite, liveness="ltl")
    v = r.violations[0]
    assert v.cycle_start == len(v.trace) == len(v.steps) > 0
    states = _replay(finite, v.steps)
    assert not any(states[-1][2])  # every thread has terminated there


def test_a_state_whose_every_step_is_pruned_is_a_dead_end_not_a_stutter_loop() -> None:
    # assume(False) prunes the thread's only step: no run goes on from there, so there is no cycle (a stutter
    # loop there would be a cycle without fairness).
    source = """
import threading

def worker():
    assume(False)

threading.Thread(target=worker).start()
"""
    assert _check(source, liveness="termination", fairness="none").verdict == "ok"


def test_html_report_marks_the_cycle(tmp_path: Path) -> None:
    f = tmp_path / "poller.py"
    f.write_text(POLLER)
    page = tmp_path / "r.html"
    assert main(["check", str(f), "--liveness", "termination", "--quiet", "--html", str(page)]) == 1
    assert "the cycle starts here, and repeats forever" in page.read_text()


# -- ltl(...) formulas: checked at compile time, each on its own product ---------------------------------------

LTL_MODEL = """
from movers.lang import *

flag = False
done = False


@predicate
def raised():
    return flag


@predicate
def finished():
    return done


def setter():
    global flag
    flag = True


def waiter():
    global done
    while not flag:
        pass
    done = True


ltl("FORMULA")
Thread(target=setter).start()
Thread(target=waiter).start()
"""


@pytest.mark.parametrize(("formula", "fairness", "verdict"), [
    ("<> finished", "weak", "ok"), ("<> finished", "strong", "ok"), ("<> finished", "none", "violation"),
    ("[] (raised -> <> finished)", "weak", "ok"), ("[] !finished", "weak", "violation"),
    ("<> [] finished", "weak", "ok"), ("[] <> raised", "weak", "ok"), ("!raised U finished", "weak", "violation"),
    ("!finished U raised", "weak", "ok")])
def test_ltl_formulas(formula: str, fairness: str, verdict: str) -> None:
    r = _check(LTL_MODEL.replace("FORMULA", formula), liveness="ltl", fairness=fairness)
    assert r.verdict == verdict, [(v.kind, v.message) for v in r.violations]
    if verdict == "violation":
        v = r.violations[0]
        assert v.kind == "liveness" and f"`{formula}`" in v.message and v.cycle_start is not None


def test_each_formula_is_checked_and_the_failing_one_named() -> None:
    src = LTL_MODEL.replace('ltl("FORMULA")', 'ltl("<> finished", name="ends")\nltl("[] !raised", name="never")')
    r = _check(src, liveness="ltl")
    assert r.verdict == "violation" and r.violations[0].message.startswith("ltl never `[] !raised`")


@pytest.mark.parametrize(("formula", "where", "says"), [
    ("<> finishd", ":30:5:", "'finishd' is not an @predicate"),
    ("X finished", ":30:6:", "the next operator X is not supported"),
    ("[] (raised ->", ":30:19:", "")])
def test_a_bad_formula_is_refused_where_it_is(formula: str, where: str, says: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "m.py"
    f.write_text(LTL_MODEL.replace("FORMULA", formula))
    assert main(["check", str(f), "--liveness", "ltl"]) == 2
    err = capsys.readouterr().err
    assert f"m.py{where}" in err and says in err, err


DAEMON = """
import threading

done = False


def spinner():
    while True:
        pass


def worker():
    global done
    done = True


threading.Thread(target=spinner, daemon=True).start()
threading.Thread(target=worker).start()
"""


@pytest.mark.parametrize(("fairness", "verdict"), [("weak", "ok"), ("strong", "ok"), ("none", "violation")])
def test_the_program_ends_with_its_last_non_daemon_thread(fairness: str, verdict: str) -> None:
    # As in CPython, the interpreter exits once every thread but daemon threads has ended: the daemon spinner
    # does not spin forever there. Before that, it may (only without fairness: the worker is always enabled).
    r = _check(DAEMON, liveness="termination", fairness=fairness)
    assert r.verdict == verdict, [(v.kind, v.message) for v in r.violations]
    assert _check(DAEMON.replace(", daemon=True", ""), liveness="termination", fairness=fairness).verdict == "violation"


def test_several_formulas_report_the_largest_graph() -> None:
    one = LTL_MODEL.replace('ltl("FORMULA")', 'ltl("[] <> raised")')
    two = LTL_MODEL.replace('ltl("FORMULA")', 'ltl("[] <> raised")\nltl("<> true")')
    alone, both = _check(one, liveness="ltl"), _check(two, liveness="ltl")
    assert alone.verdict == both.verdict == "ok"
    assert both.stats.states == alone.stats.states  # not the smaller product of the formula checked last


def test_a_failing_predicate_is_the_models_runtime_error_not_a_crash() -> None:
    src = LTL_MODEL.replace("    return done\n", "    return 0\n").replace('ltl("FORMULA")', 'ltl("<> finished")')
    r = _check(src, liveness="ltl")
    assert r.verdict == "violation" and r.exit_code == 1
    assert r.violations[0].kind == "runtime-error" and "predicate finished() returns 0" in r.violations[0].message
