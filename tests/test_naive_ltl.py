"""``--liveness ltl`` against the naive oracle ``tests/naive_ltl.py`` (issue 26): the oracle's automaton against
the reference semantics ``holds_on_lasso`` on single lassos, hand-written models whose verdicts under each
fairness are known, and random models with random formulas, where movers and the oracle must agree. Random
models are also compared on ``termination`` and ``starvation`` with ``tests/naive_liveness.py``."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from naive_liveness import FAIRNESS, Graph, build_graph, decide, graph_of
from naive_ltl import Automaton, check_ltl, decide_ltl, violated

from movers.liveness.ltl import holds_on_lasso, parse

GRANULARITIES = ("access", "statement")
RANDOM = settings(max_examples=30, deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def formulas(depth: int = 3, atoms: tuple[str, ...] = ("p", "q")) -> st.SearchStrategy[str]:
    """LTL-X formulas in SPIN's syntax over ``atoms``, nesting at most ``depth`` operators."""
    leaf = st.sampled_from([*atoms, *atoms, "true", "false"])
    if depth == 0:
        return leaf
    sub = formulas(depth - 1, atoms)
    unary = st.builds(lambda op, a: f"{op}({a})", st.sampled_from(["!", "[]", "<>"]), sub)
    binary = st.builds(lambda a, op, b: f"({a}) {op} ({b})", sub,
                       st.sampled_from(["&&", "||", "->", "<->", "U", "R", "W"]), sub)
    return st.one_of(leaf, unary, binary)


def liveness_formulas(atoms: tuple[str, ...] = ("p", "q", "r")) -> st.SearchStrategy[str]:
    """Random formulas, and as often the usual liveness shapes over random atoms or their negations (random
    formulas are mostly decided by the first state, where fairness cannot matter)."""
    literal = st.builds(lambda neg, a: neg + a, st.sampled_from(["", "!"]), st.sampled_from(atoms))
    shapes = st.sampled_from(["<> ({a})", "[] <> ({a})", "<> [] ({a})", "[] (({a}) -> <> ({b}))", "({a}) U ({b})",
                              "[] <> ({a}) -> [] <> ({b})", "<> ({a}) || [] ({b})"])
    shaped = st.builds(lambda f, a, b: f.format(a=a, b=b), shapes, literal, literal)
    return st.one_of(shaped, formulas(3, atoms))


# ------------------------------------------------------------------------ the automaton on single lassos

def lasso(labels: list[frozenset[str]], loop: int) -> Graph:
    """The path 0 -> 1 -> ... -> n-1 -> loop of one thread, each state labelled."""
    n = len(labels)
    g = graph_of(1, [(i, 0, i + 1) for i in range(n - 1)] + [(n - 1, 0, loop)], [{0}] * n)
    g.labels = labels
    return g


@RANDOM
@given(st.lists(st.frozensets(st.sampled_from("pq")), min_size=1, max_size=5), st.data(), formulas())
def test_the_automaton_agrees_with_the_lasso_semantics(labels: list[frozenset[str]], data: Any, text: str) -> None:
    loop = data.draw(st.integers(0, len(labels) - 1))
    f = parse(text)
    for fairness in FAIRNESS:  # one thread, moving on every edge: every cycle is fair
        assert violated(lasso(labels, loop), f, fairness) == (not holds_on_lasso(f, labels[:loop], labels[loop:]))


P, Q, NONE = frozenset("p"), frozenset("q"), frozenset()


@pytest.mark.parametrize(("text", "labels", "loop", "holds"), [
    ("<> p", [NONE, P], 1, True),
    ("<> p", [P, NONE], 1, True),  # p only before the loop: <> p holds at 0
    ("[] <> p", [P, NONE], 1, False),
    ("<> [] p", [NONE, P, P], 1, True),
    ("p U q", [P, P, Q], 2, True),
    ("p U q", [P, NONE, Q], 2, False),
    ("[] (p -> <> q)", [P, NONE, Q], 0, True),
    ("[] (p -> <> q)", [Q, P, NONE], 1, False),
])
def test_known_lassos(text: str, labels: list[frozenset[str]], loop: int, holds: bool) -> None:
    f = parse(text)
    assert holds_on_lasso(f, labels[:loop], labels[loop:]) == holds
    assert violated(lasso(labels, loop), f, "none") == (not holds)


def test_an_until_has_an_acceptance_set_that_forbids_putting_its_promise_off() -> None:
    aut = Automaton(parse("p U q"))
    assert len(aut.acceptance) == 1 and aut.initial
    # the one-state loop labelled p: p U q is promised at every position and never kept
    assert not violated(lasso([P], 0), parse("!(p U q)"), "none")
    assert violated(lasso([P], 0), parse("p U q"), "none")


def test_the_program_component_decides_fairness() -> None:
    # thread 0 loops at state 0 (p false), thread 1, enabled throughout, moves to state 1 where p holds
    g = graph_of(2, [(0, 0, 0), (0, 1, 1), (1, 0, 1)], [{0, 1}, {0}])
    g.labels = [NONE, P]
    assert violated(g, parse("<> p"), "none")
    assert not violated(g, parse("<> p"), "weak")
    assert not violated(g, parse("<> p"), "strong")


# ----------------------------------------------------------------------- hand-written models, known verdicts

def model(body: str, predicates: dict[str, str], formula: str) -> str:
    """A model: ``body`` (globals, threads), the ``@predicate`` functions, one ``ltl`` formula, then the
    threads' starts (``body``'s functions named in its ``# threads:`` line)."""
    body = textwrap.dedent(body).strip("\n")
    threads = body.splitlines()[0].removeprefix("# threads: ").split()
    lines = ["from movers.lang import *", "import threading", "", body, ""]
    for name, expr in predicates.items():
        lines += ["", "@predicate", f"def {name}():", f"    return {expr}", ""]
    lines += ["", f"ltl({formula!r})", ""]
    lines += [f"threading.Thread(target={t}).start()" for t in threads]
    return "\n".join(lines) + "\n"


# A request answered by a server that a third thread may keep from running: ``ticker`` runs forever, either
# without the lock (so under weak fairness the always-enabled server moves) or taking the lock the server
# needs (so the server is enabled only now and then: only strong fairness makes it move).
RESPONSE = """
    # threads: client server ticker
    m = threading.Lock()
    req = False
    ack = False
    t = 0


    def client():
        global req
        req = True


    def server():
        global ack
        while not req:
            pass
        with m:
            ack = True


    def ticker():
        global t
        while True:
            {tick}
    """
FREE_TICK = "t = 1 - t"
LOCKED_TICK = "with m:\n                t = 1 - t"

# A toggler of x and a thread that stops it; x is 1 once stopped.
STOPPER = """
    # threads: toggler stopper
    m = threading.Lock()
    x = 0
    stop = False


    def toggler():
        global x
        while not stop:
            {toggle}
        x = 1


    def stopper():
        global stop
        with m:
            stop = True
    """
FREE_TOGGLE = "x = 1 - x"
LOCKED_TOGGLE = "with m:\n                x = 1 - x"

# A worker that moves x through 1 while a spinner takes the lock, or not.
SPINNER = """
    # threads: worker spinner
    m = threading.Lock()
    x = 0
    y = 0


    def worker():
        global x
        while True:
            with m:
                x = 1 - x


    def spinner():
        global y
        while True:
            {spin}
    """
FREE_SPIN = "y = 1 - y"
LOCKED_SPIN = "with m:\n                y = 1 - y"

# A job: busy until it is served (``served`` first, then ``busy`` false: ``busy U served`` holds once the
# worker runs; in the other order there is a moment where neither holds).
JOB = """
    # threads: worker ticker
    m = threading.Lock()
    busy = True
    served = False
    t = 0


    def worker():
        global busy, served
        with m:
            {first}
            {second}


    def ticker():
        global t
        while True:
            {tick}
    """

V, OK = "violation", "ok"
KNOWN = {
    "response, free ticker": (model(RESPONSE.format(tick=FREE_TICK), {"p": "req", "q": "ack"}, "[] (p -> <> q)"),
                              (V, OK, OK)),
    "response, locking ticker": (model(RESPONSE.format(tick=LOCKED_TICK), {"p": "req", "q": "ack"},
                                       "[] (p -> <> q)"), (V, V, OK)),
    "response, no request": (model(RESPONSE.format(tick=LOCKED_TICK), {"p": "req", "q": "ack"},
                                   "[] (q -> <> p)"), (OK, OK, OK)),
    "persistence, free toggler": (model(STOPPER.format(toggle=FREE_TOGGLE), {"p": "x == 1"}, "<> [] p"),
                                  (V, OK, OK)),
    "persistence, locking toggler": (model(STOPPER.format(toggle=LOCKED_TOGGLE), {"p": "x == 1"}, "<> [] p"),
                                     (V, V, OK)),
    "persistence of the wrong value": (model(STOPPER.format(toggle=LOCKED_TOGGLE), {"p": "x == 0"}, "<> [] p"),
                                       (V, V, V)),
    "recurrence, free spinner": (model(SPINNER.format(spin=FREE_SPIN), {"p": "x == 1"}, "[] <> p"), (V, OK, OK)),
    "recurrence, locking spinner": (model(SPINNER.format(spin=LOCKED_SPIN), {"p": "x == 1"}, "[] <> p"),
                                    (V, V, OK)),
    "recurrence of both values": (model(SPINNER.format(spin=LOCKED_SPIN), {"p": "x == 1", "q": "x == 0"},
                                        "[] <> p || [] <> q"), (OK, OK, OK)),
    "until, free ticker": (model(JOB.format(first="served = True", second="busy = False", tick=FREE_TICK),
                                 {"p": "busy", "q": "served"}, "p U q"), (V, OK, OK)),
    "until, locking ticker": (model(JOB.format(first="served = True", second="busy = False", tick=LOCKED_TICK),
                                    {"p": "busy", "q": "served"}, "p U q"), (V, V, OK)),
    "until, a gap": (model(JOB.format(first="busy = False", second="served = True", tick=FREE_TICK),
                           {"p": "busy", "q": "served"}, "p U q"), (V, V, V)),
}


@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize("name", sorted(KNOWN))
def test_known_models(name: str, granularity: str) -> None:
    import movers

    source, want = KNOWN[name]
    g = build_graph(source, granularity)
    assert tuple(decide_ltl(g, f).verdict for f in FAIRNESS) == want
    for fairness, verdict in zip(FAIRNESS, want, strict=True):
        r = movers.check(source, liveness="ltl", fairness=fairness, granularity=granularity)
        assert r.verdict == verdict, (fairness, r.error, [v.message for v in r.violations])
        if verdict == V:
            assert r.violations[0].kind == "liveness"


def test_each_formula_is_checked() -> None:
    """Two formulas: the first holds, the second fails under weak fairness only; the run's verdict is the
    second's, and movers names it."""
    import movers

    source = model(SPINNER.format(spin=LOCKED_SPIN), {"p": "x == 1", "q": "x == 0"}, "[] <> p || [] <> q")
    source = source.replace("\nthreading.", '\nltl("[] <> p", name="often_one")\nthreading.', 1)
    g = build_graph(source)
    assert len(g.formulas) == 2
    assert [decide_ltl(g, f).verdict for f in FAIRNESS] == [V, V, OK]
    r = movers.check(source, liveness="ltl", fairness="weak")
    assert r.verdict == V and "often_one" in r.violations[0].message
    assert movers.check(source, liveness="ltl", fairness="strong").verdict == OK


def test_a_safety_violation_comes_first() -> None:
    source = model("""
        # threads: a
        x = 0


        def a():
            global x
            x = 1
            assert x == 0
        """, {"p": "x == 1"}, "[] !p")
    v = check_ltl(source, "weak")
    assert (v.verdict, v.kind) == ("violation", "assertion")


@pytest.mark.parametrize("fairness", FAIRNESS)
def test_a_deadlock_past_where_the_automaton_stops_is_still_reported(fairness: str) -> None:
    """The automaton of ``!p`` has no run from a state where p holds, so the product stops at the initial
    state; the program graph goes on to a deadlock (t0 makes x 2, t1 waits for x != 2 forever), which the
    spec reports first, as the safety search does (found by the random comparison below)."""
    import movers

    source = model("""
        # threads: t0 t1
        x = 1


        def t0():
            global x
            x = (x + 1) % 3


        def t1():
            wait_until(x != 2)
        """, {"p": "x == 1"}, "p")
    v = check_ltl(source, fairness)
    assert (v.verdict, v.kind) == ("violation", "deadlock")
    r = movers.check(source, liveness="ltl", fairness=fairness)
    assert r.verdict == "violation" and r.violations[0].kind == "deadlock", [v.message for v in r.violations]


# -------------------------------------------------------------------------- random models, random formulas

_SIMPLE = ["x = (x + 1) % 3", "x = (x + y) % 3", "y = (y + 1) % 3", "y = x", "b = not b", "b = x == y",
           "x = 0", "b = True", "x = 1", "b = False"]
_CONDS = ["x != 2", "x == y", "not b", "b", "y < 2", "x != 1"]
PREDICATES = {"p": "x == 1", "q": "b", "r": "y > x"}


@st.composite
def _statement(draw: st.DrawFn, depth: int, blocking: bool = True, locked: bool = False) -> list[str]:
    """A statement; without ``blocking``, no ``wait_until`` and no ``with m:`` inside one (no deadlock)."""
    kinds = ["simple", "simple", "while", "if", *(["with"] if blocking or not locked else []),
             *(["wait"] if blocking else [])]
    kind = draw(st.sampled_from(kinds if depth else ["simple"]))
    if kind == "simple":
        return [draw(st.sampled_from(_SIMPLE))]
    if kind == "wait":
        return [f"wait_until({draw(st.sampled_from(_CONDS))})"]
    inner = draw(st.lists(_statement(depth - 1, blocking, locked or kind == "with"), min_size=1, max_size=2))
    body = ["    " + line for s in inner for line in s]
    if kind == "with":
        return ["with m:", *body]
    head = "while" if kind == "while" else "if"
    return [f"{head} {draw(st.sampled_from(_CONDS))}:", *body]


@st.composite
def liveness_models(draw: st.DrawFn, fair: bool = False) -> str:
    """2-3 threads over ints x, y (0..2), a bool b and a lock m, whose loops may run forever, sometimes with a
    ticker thread that runs forever on its own variable (with or without the lock: fairness decides whether
    the others move), and the predicates p, q, r (``PREDICATES``). ``fair``: always a ticker, and the other
    threads neither loop forever at their top nor block, so that fairness decides more verdicts."""
    lines = ["from movers.lang import *", "import threading", "", "m = threading.Lock()",
             f"x = {draw(st.integers(0, 2))}", f"y = {draw(st.integers(0, 2))}", f"b = {draw(st.booleans())}",
             "t = 0", ""]
    n = draw(st.integers(2, 3))
    ticker = draw(st.sampled_from(["", "", *["t = 1 - t", "with m:\n            t = 1 - t"] * (1 + 2 * fair)]))
    for i in range(n - bool(ticker)):
        body = [line for s in draw(st.lists(_statement(2, not fair), min_size=1, max_size=3)) for line in s]
        if not fair and draw(st.integers(0, 2)) == 0:
            body = ["while True:", *("    " + line for line in body)]
        lines += ["", f"def t{i}():", "    global x, y, b", *("    " + line for line in body), ""]
    if ticker:
        lines += ["", f"def t{n - 1}():", "    global t", "    while True:", f"        {ticker}", ""]
    for name, expr in PREDICATES.items():
        lines += ["", "@predicate", f"def {name}():", f"    return {expr}", ""]
    return "\n".join(lines)


def _finish(source: str, formula: str | None, n_threads: int) -> str:
    decl = [f"ltl({formula!r})"] if formula else []
    starts = [f"threading.Thread(target=t{i}).start()" for i in range(n_threads)]
    return source + "\n" + "\n".join([*decl, *starts]) + "\n"


def _threads(source: str) -> int:
    return sum(line.startswith("def t") for line in source.splitlines())


def _movers_verdict(source: str, **kw: Any) -> tuple[str, str | None] | None:
    """movers' verdict and the first violation's kind, or None when the run is incomplete."""
    import movers

    r = movers.check(source, max_states=2000, **kw)
    assert r.error is None, r.error
    if r.verdict == "incomplete":
        return None
    return r.verdict, (r.violations[0].kind if r.violations else None)


def _naive_graph(source: str, granularity: str = "access") -> Graph | None:
    try:
        return build_graph(source, granularity, max_states=2000)
    except RuntimeError:  # more states than movers is given: its run is incomplete too
        return None


@RANDOM
@given(liveness_models(), liveness_formulas(), st.sampled_from(GRANULARITIES))
def test_random_models_agree_on_ltl(source: str, formula: str, granularity: str) -> None:
    _agree_on_ltl(source, formula, granularity)


@RANDOM
@given(liveness_models(fair=True), liveness_formulas(), st.sampled_from(GRANULARITIES))
def test_random_models_where_fairness_matters_agree_on_ltl(source: str, formula: str, granularity: str) -> None:
    _agree_on_ltl(source, formula, granularity)


def _agree_on_ltl(source: str, formula: str, granularity: str) -> None:
    source = _finish(source, formula, _threads(source))
    note(source)
    g = _naive_graph(source, granularity)
    for fairness in FAIRNESS:
        got = _movers_verdict(source, liveness="ltl", fairness=fairness, granularity=granularity)
        if got is None or g is None:
            continue
        want = decide_ltl(g, fairness)
        assert got == (want.verdict, want.kind), (fairness, formula)


@RANDOM
@given(liveness_models())
def test_random_models_agree_on_termination_and_starvation(source: str) -> None:
    source = _finish(source, None, _threads(source))
    note(source)
    g = _naive_graph(source)
    for prop in ("termination", "starvation"):
        for fairness in FAIRNESS:
            got = _movers_verdict(source, liveness=prop, fairness=fairness)
            if got is None or g is None:
                continue
            want = decide(g, prop, fairness)
            assert got == (want.verdict, want.kind), (prop, fairness)
