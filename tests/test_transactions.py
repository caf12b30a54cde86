"""Flanagan & Qadeer's transactions (papers/004): one transaction per procedure on the section 2 counter,
condition (ii), incremental lock inference, honesty about deadlocks, and soundness against none."""

from __future__ import annotations

import textwrap

import pytest
from conftest import EXAMPLES, agrees_with_none, search_summary
from differential import run_differential
from hypothesis import HealthCheck, given, note, settings
from strategies import models, single_kind_models

import movers
from movers.checker import Checker, load
from movers.search.options import Options

FILES = sorted(EXAMPLES.glob("*.py"))


def tx(src: str, **kw):
    return movers.check(textwrap.dedent(src).lstrip("\n"), reduction="transactions", **kw)


@pytest.mark.parametrize("path", [p for p in FILES if p.name != "sc_example.py"], ids=lambda p: p.name)
def test_examples_agree_with_none(path) -> None:
    # P# states carry phases, normalised where they carry no information: never more states than none
    agrees_with_none(path, "transactions")


@pytest.mark.parametrize("name", ["fq_counter.py", "bounded_buffer.py"])
def test_fewer_states_than_optimistic(name: str) -> None:
    opt = movers.check(EXAMPLES / name, reduction="optimistic", granularity="statement")
    r = movers.check(EXAMPLES / name, reduction="transactions", granularity="statement")
    assert r.verdict == opt.verdict == "ok"
    assert r.stats.states < opt.stats.states


def test_missing_lock_bug_is_found() -> None:
    r = movers.check(EXAMPLES / "fq_counter_nolock.py", reduction="transactions")
    assert r.verdict == "violation" and r.violations[0].kind == "assertion"


RANDOM = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@RANDOM
@given(single_kind_models())
def test_random_models_same_verdict_and_kind(case: tuple[str, str]) -> None:
    note(case[0])
    run_differential(case[0], ["transactions"])


@RANDOM
@given(models())
def test_random_models_same_verdict(src: str) -> None:
    note(src)
    run_differential(src, ["transactions"], compare_kinds=False)


# -- section 2: one transaction per procedure call --------------------------------------------------------------

COUNTER = """
x = 0
y = 0
count = 0
mx = Lock()
my = Lock()

def incr():
    global x, count
    mx.acquire()
    tx = x
    count += 1
    x = tx + 1
    mx.release()

def decr():
    global y, count
    my.acquire()
    ty = y
    count -= 1
    y = ty + 1
    my.release()

def read():
    mx.acquire()
    tx = x
    my.acquire()
    ty = y
    assert count == tx - ty
    my.release()
    mx.release()
    return tx - ty

def a():
    incr()
    decr()
    read()

def b():
    incr()
    decr()
    read()

Thread(target=a).start()
Thread(target=b).start()
"""


def moves_of_thread_0(reduction: str) -> list[list[str]]:
    """Run thread 0 alone to its end from the initial state, with the final classification, and return
    the source lines of each move it takes."""
    program = load(textwrap.dedent(COUNTER), granularity="statement")  # the paper's atomic statements
    checker = Checker(program, Options(reduction))
    assert checker.run().verdict == "ok"
    red = checker.last_reduction
    red.reset()
    ts = getattr(red, "system", red.ts)
    s = ts.initial()
    out = []
    while s[2][0]:
        moves = red.moves(s)
        m = next((m for m in moves if m.steps[0][0] == 0), None)
        if m is None:  # another thread's catch-up move (optimistic, WFinitVis): not thread 0's
            s = moves[0].state
            continue
        state = s
        lines = []
        for t, ch in m.steps:
            o = ts.execute_choice(state, t, ch)
            lines.append(o.node.source)
            state = o.state
        out.append(lines)
        s = m.state
    return out


def test_one_transaction_per_procedure_call() -> None:
    moves = moves_of_thread_0("transactions")
    commits = [[src for src in m if "count" in src] for m in moves]
    # incr, decr and read: each is one transaction with its single commit (the access to count).
    assert len(moves) == 3
    assert [len(c) for c in commits] == [1, 1, 1]


def test_optimistic_splits_the_procedures() -> None:
    moves = moves_of_thread_0("optimistic")
    assert len(moves) > 3  # every lock operation and every access to count is visible


# -- condition (ii) -------------------------------------------------------------------------------------------------


def test_predicates_another_thread_can_give_are_refused() -> None:
    r = movers.check(EXAMPLES / "sc_example.py", granularity="statement", reduction="transactions")
    assert r.verdict == "error" and r.exit_code == 2
    assert "(ii)" in r.error and "y == 2" in r.error
    # optimistic needs only WFendExcl, which the section 7 example meets
    assert movers.check(EXAMPLES / "sc_example.py", granularity="statement", reduction="optimistic").verdict == "ok"


def test_predicates_respecting_condition_ii_are_accepted() -> None:
    r = tx("""
    m = Lock()
    x = 0
    guarded_by(x, m)
    exclusive(y, lambda t: t == 1)
    y = 0
    def w():
        global x
        with m:
            x += 1
    def v():
        global y
        y = 1
    Thread(target=w).start()
    Thread(target=v).start()
    Thread(target=w).start()
    """)
    assert r.verdict == "ok", r.error
    r = tx("""
    m = Lock()
    x = 0
    guarded_by(x, m)
    def w():
        global x, m
        m = Lock()
        with m:
            x += 1
    Thread(target=w).start()
    Thread(target=w).start()
    """)
    assert r.verdict == "error" and "guarded_by(x, m)" in r.error


# -- incremental inference (section 6) ------------------------------------------------------------------------------


def test_lock_inference_is_incremental() -> None:
    program = load(textwrap.dedent(COUNTER), granularity="statement")  # the paper's atomic statements
    checker = Checker(program, Options("transactions"))
    r = checker.run()
    assert r.verdict == "ok"
    assert checker.last_search.passes >= 2  # weakened, then re-expanded, without a restart
    assert not any(n.startswith("refined") for n in r.notes)
    assert r.locks == {"x": "mx", "y": "my"}
    assert r.classification["count"] == "unprotected"


def test_without_inference_everything_undeclared_is_a_non_mover() -> None:
    src = textwrap.dedent(COUNTER)
    inferred = movers.check(src, reduction="transactions", granularity="statement")
    plain = movers.check(src, reduction="transactions", infer_locks=False, granularity="statement")
    assert plain.verdict == inferred.verdict == "ok"
    assert plain.stats.states > inferred.stats.states


# -- deadlocks --------------------------------------------------------------------------------------------------------


def _no_optimistic_route(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Checker, result: object, notes: object) -> object:
        raise AssertionError("the optimistic search for deadlock freedom ran")

    monkeypatch.setattr(Checker, "_deadlock_check", refuse)


# sc_example deadlocks at access granularity (its unlocked y += 1), but transactions refuses its predicates.
DEADLOCKING = [p for p in sorted(EXAMPLES.glob("*.py")) if p.name != "sc_example.py"
               if movers.check(p, max_states=200_000).violations[:1]
               and movers.check(p, max_states=200_000).violations[0].kind == "deadlock"]


def test_the_deadlocking_examples_are_known() -> None:
    assert {p.stem for p in DEADLOCKING} >= {"dining_philosophers", "dwyer_deadlock_bug",
                                             "dwyer_readers_writers_bug", "dwyer_replicated_workers_bug"}


@pytest.mark.parametrize("path", DEADLOCKING, ids=lambda p: p.stem)
def test_deadlocks_are_found_in_the_right_mover_closure(path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every step that can block is an acquire, a re-acquire or a join: no second search is needed.
    _no_optimistic_route(monkeypatch)
    r = movers.check(path, reduction="transactions")
    assert r.verdict == "violation" and r.violations[0].kind == "deadlock"
    # The trace is a real run: replayed, it ends where every live thread is blocked.
    assert r.violations[0].trace


def test_deadlock_freedom_needs_no_second_search_when_the_closure_applies(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_optimistic_route(monkeypatch)
    r = movers.check(EXAMPLES / "dining_philosophers_ordered.py", reduction="transactions")
    assert r.verdict == "ok"
    assert not any("optimistic search" in n for n in r.notes)


def test_the_dining_philosophers_deadlock_is_in_the_closure_of_the_initial_state() -> None:
    # Each philosopher takes its first fork (a right move, no commit): a deadlock no stored state shows.
    r = movers.check(EXAMPLES / "dining_philosophers.py", reduction="transactions")
    assert r.stats.states == 1 and r.violations[0].kind == "deadlock"
    assert [s.source for s in r.violations[0].trace].count("with first:") == 3


def test_deadlocks_are_checked_by_another_route_where_the_closure_does_not_apply() -> None:
    # wait_until is a data step that can block: a blocked one is in N, but the argument needs more.
    src = textwrap.dedent("""
        from movers.lang import *
        m = Lock()
        n = Lock()
        ready = False

        def a():
            global ready
            with m:
                wait_until(ready)

        def b():
            global ready
            with n:
                ready = True

        Thread(target=a).start()
        Thread(target=b).start()
    """)
    r = movers.check(src, reduction="transactions")
    assert r.verdict == "ok"
    assert any("deadlock freedom checked by an optimistic search" in n for n in r.notes)
    r = movers.check(src.replace("ready = True", "ready = False"), reduction="transactions")
    assert r.verdict == "violation" and r.violations[0].kind == "deadlock"


def test_a_closure_past_its_budget_hands_deadlocks_to_the_optimistic_search(monkeypatch: pytest.MonkeyPatch
                                                                            ) -> None:
    from movers.reduce import transactions

    monkeypatch.setattr(transactions, "CLOSURE_LIMIT", 1)
    r = movers.check(EXAMPLES / "dining_philosophers_ordered.py", reduction="transactions")
    assert r.verdict == "ok"
    assert any("deadlock freedom checked by an optimistic search" in n for n in r.notes)
    r = movers.check(EXAMPLES / "dining_philosophers.py", reduction="transactions")
    assert r.verdict == "violation" and r.violations[0].kind == "deadlock"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(asserts=False, blocking=True, assumes=False, max_threads=3))
def test_random_deadlocks_agree_with_none_through_the_closure(src: str) -> None:
    """Models whose only possible violation is a deadlock (inconsistent lock orders, re-acquired locks,
    wait_until): transactions agrees with none, by the closure or, with wait_until, the optimistic route."""
    note(src)
    run_differential(src, ["transactions"])


def test_transactions_statistics() -> None:
    r = movers.check(EXAMPLES / "fq_counter.py", granularity="statement", reduction="transactions")
    assert r.stats.transactions > 0
    assert r.stats.transitions / r.stats.transactions > 2
    d = r.to_json()["stats"]
    assert d["transactions"] == r.stats.transactions and d["steps_per_transaction"] > 2


def test_delta_assertion_reports_a_declared_predicate_violated() -> None:
    # P#'s assertion delta(t, l): incr without its lock accesses x, declared guarded_by(x, mx).
    src = (EXAMPLES / "fq_counter.py").read_text().replace(
        "    mx.acquire()\n    tx = x\n    count += 1\n    x = tx + 1\n    mx.release()",
        "    tx = x\n    count += 1\n    x = tx + 1",
    )
    r = movers.check(src, reduction="transactions")
    v = r.violations[0]
    assert v.kind == "discipline" and "guarded_by(x, mx)" in v.message
    assert v.trace[-1].source == "tx = x"


@pytest.mark.parametrize("pred", ["lambda t: True", "lambda t: t == 0 or t == 1", "lambda t: t != 0",
                                  "lambda t: not (t == 0)"])
def test_predicates_two_threads_may_hold_at_once_are_refused(pred: str) -> None:
    # Condition (i): with such a predicate transactions would treat racing accesses as movers.
    r = tx(f"""
    count = 0
    exclusive(count, {pred})
    def worker():
        global count
        tmp = count
        count = tmp + 1
    Thread(target=worker).start()
    Thread(target=worker).start()
    """)
    assert r.verdict == "error" and "condition" in r.error and pred.split(": ", 1)[1] in r.error


def test_a_left_mover_part_that_never_ends_does_not_keep_the_others_out() -> None:
    # Condition C: t's transaction is `x = 1` (its non-mover) and then a local loop of both-movers for ever.
    # Cutting the loop at a repeated state and letting only t move from there would never run u's assert.
    src = """
        from movers.lang import *
        x = 0

        def t():
            global x
            k = 0
            x = 1
            while True:
                k = (k + 1) % 2

        def u():
            assert x == 0

        Thread(target=t).start()
        Thread(target=u).start()
    """
    for search in ("dfs", "bfs"):
        r = tx(src, search=search)
        assert r.verdict == "violation" and r.violations[0].kind == "assertion", search



def test_wait_and_notify_are_not_reads_of_lock_state(monkeypatch: pytest.MonkeyPatch) -> None:
    # wait() and notify() read an object's wait set as part of the lock operation: that must not make every
    # lock operation a non-mover (it once tripled the stored states of the Dwyer examples).
    from movers.analysis.classify import Classification

    seen: list[object] = []
    real = Classification._observe_lock_state

    def observe(self: Classification, key: object, t: int) -> None:
        seen.append(key)
        real(self, key, t)

    monkeypatch.setattr(Classification, "_observe_lock_state", observe)
    for name in ("dwyer_readers_writers.py", "condition_queue.py", "bounded_buffer.py"):
        movers.check(EXAMPLES / name, reduction="transactions")
    assert seen == []
    owner = "from movers.lang import *\nm = Lock()\ndef f():\n    with m:\n        a = 1\n" \
            "def g():\n    assert m.owner is None\nThread(target=f).start()\nThread(target=g).start()\n"
    movers.check(owner, reduction="transactions")
    assert seen


# -- P#'s per-thread memo of steps (reduce/phases.py, semantics/locality.py) ------------------------------


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_step_memo_changes_nothing_but_time(path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A step is remembered per (thread, its stack and phase, globals, heap) and replayed onto other states:
    # the search must be the one that executes and classifies every step anew, state for state.
    from movers.reduce.phases import PhaseSystem

    memo = search_summary(movers.check(path, reduction="transactions", max_states=30_000))
    monkeypatch.setattr(PhaseSystem, "_local_key", lambda self, state, t: None)
    assert memo == search_summary(movers.check(path, reduction="transactions", max_states=30_000))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models())
def test_random_models_the_step_memo_changes_nothing(src: str) -> None:
    from movers.reduce.phases import PhaseSystem

    note(src)
    memo = search_summary(movers.check(src, reduction="transactions", max_states=5_000))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(PhaseSystem, "_local_key", lambda self, state, t: None)
        assert memo == search_summary(movers.check(src, reduction="transactions", max_states=5_000))
