"""Self-loops on the generated code: a busy wait whose test holds comes back to its own node having written
nothing, so its whole step returns ``ir.program.SAME`` (lang/codegen.py's ``_whole_step``),
``TransitionSystem.successors`` gives the state itself, and the plain search (search/plain.py) skips it
before any key work. Each search stores the states, counts the transitions and gives the verdicts of the
closures' search (the fast path off), under every store, --max-states, thread symmetry and the reductions."""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT
from differential import search_summary
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import movers
from movers.checker import compile_source
from movers.ir.program import SAME
from movers.search import explore
from movers.semantics import system

sys.path.insert(0, str(ROOT / "benchmarks"))
import shapes  # noqa: E402  (benchmarks/shapes.py: the models of issue 25's shapes)

BUSY = """
from movers.lang import *

go = False
n = 0


def waiter():
    global n
    while not go:
        pass
    n += 1


def setter():
    global go
    go = True


Thread(target=waiter).start()
Thread(target=setter).start()
"""

# Loops that come back to their head but write on the way: a local, a global (the same value each time,
# but written), an element. Not self-loops to the code generator, whatever the values.
WRITING = """
from movers.lang import *

go = False
m = 0
xs = [0, 0]


def local_write():
    k = 0
    while not go:
        k = 1


def global_write():
    global m
    while not go:
        m = 0


def element_write():
    while not go:
        xs[0] = 0


def setter():
    global go
    go = True


Thread(target=local_write).start()
Thread(target=global_write).start()
Thread(target=element_write).start()
Thread(target=setter).start()
"""

EXAMPLES = ["peterson", "atomicity_dekker", "ldlock_figure6", "dwyer_deadlock_bug", "dwyer_bounded_buffer"]
MODELS = {"busy": BUSY, "writing": WRITING, "filter": shapes.filter_model(3, 1),
          **{name: (ROOT / "examples" / f"{name}.py").read_text() for name in EXAMPLES}}




def _both(source: str, mp: pytest.MonkeyPatch, **kw: object) -> tuple[tuple[object, ...], tuple[object, ...]]:
    """The search on the generated code and on the closures (the fast path off)."""
    kw.setdefault("time_limit", 60)
    fast = search_summary(movers.check(source, **kw))  # type: ignore[arg-type]
    with mp.context() as m:
        m.setattr(system, "FAST_PATH", False)
        slow = search_summary(movers.check(source, **kw))  # type: ignore[arg-type]
    return fast, slow


def _plain_runs(mp: pytest.MonkeyPatch) -> list[object]:
    """The plain searches the next checks run (search/plain.py's ``PlainDepthFirst``), to read their counts."""
    runs: list[object] = []
    real = explore.STRATEGIES["plain"]

    def keep(search: object, order: str) -> object:
        runs.append(real(search, order))  # type: ignore[arg-type]
        return runs[-1]

    mp.setitem(explore.STRATEGIES, "plain", keep)  # type: ignore[arg-type]
    return runs


# -- the generated step, the successors, the plain search's shortcut ------------------------------------------


@pytest.mark.parametrize("granularity", ["statement", "access"])
def test_a_busy_waits_turn_is_the_same_state(granularity: str) -> None:
    ts = system.TransitionSystem(compile_source(BUSY, "model.py", granularity))
    s0 = ts.initial()
    g, heap, threads = s0
    th = threads[0]
    top = th[-1]
    node = top[0].nodes[top[1]]
    assert "not go" in node.source
    assert node.fast_step is not None and node.fast_step(g, heap, threads, 0, th, top) is SAME
    succ, moved = ts.successors(s0)  # type: ignore[misc]
    assert succ[0] is s0 and moved[0] == 0
    # The setter's step: once go holds, the test fails and the waiter moves on (a new state, not SAME).
    s1 = succ[1]
    th = s1[2][0]
    after = node.fast_step(s1[0], s1[1], s1[2], 0, th, th[-1])
    assert after is not SAME and after != s1 and after[2][0][-1][1] != top[1]
    # Outcomes of ``steps`` (the reductions' and dfs.py's) carry an equal state, never the marker.
    outcome = ts.steps(s0)[0]
    assert outcome.state == s0 and outcome.state is not SAME


def test_a_loop_that_writes_is_no_self_loop() -> None:
    for granularity in ("statement", "access"):
        program = compile_source(WRITING, "model.py", granularity)
        for name in ("local_write", "global_write", "element_write"):
            assert "return SAME" not in program.functions[name].fast_source, (name, granularity)
    assert "return SAME" in compile_source(BUSY, "model.py", "statement").functions["waiter"].fast_source


def _self_loops_by_the_closures(source: str, granularity: str) -> int:
    """The transitions from a reachable state to itself, counted on the closures."""
    ts = system.TransitionSystem(compile_source(source, "model.py", granularity))
    ts.fast_path = False
    s0 = ts.initial()
    seen, todo, loops = {s0}, [s0], 0
    while todo:
        s = todo.pop()
        for o in ts.steps(s):
            if o.state == s:
                loops += 1
            elif o.state is not None and o.state not in seen:
                seen.add(o.state)
                todo.append(o.state)
    return loops


@pytest.mark.parametrize("name", ["busy", "filter", "peterson"])
def test_the_plain_search_skips_every_self_loop(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _plain_runs(monkeypatch)
    r = movers.check(MODELS[name], granularity="statement")
    assert r.verdict == "ok" and len(runs) == 1
    loops = runs[0].self_loops  # type: ignore[attr-defined]
    assert loops > 0 and loops == _self_loops_by_the_closures(MODELS[name], "statement")


def test_no_shortcut_where_the_loop_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _plain_runs(monkeypatch)
    movers.check(WRITING, granularity="statement")
    assert runs[0].self_loops == 0  # type: ignore[attr-defined]


# -- the same searches as the closures' --------------------------------------------------------------------


@pytest.mark.parametrize("granularity", ["statement", "access"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_searches_are_the_closures(name: str, granularity: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = _both(MODELS[name], monkeypatch, granularity=granularity, max_states=100_000)
    assert fast == slow


@pytest.mark.parametrize("kw", [{"store": "hashcompact"}, {"store": "bitstate", "bits": 20},
                                {"max_states": 500}, {"max_states": 1}, {"store": "bitstate", "max_states": 300},
                                {"search": "bfs"}, {"symmetry": "threads"}],
                         ids=["hashcompact", "bitstate", "max500", "max1", "bitstate-max", "bfs", "symmetry"])
@pytest.mark.parametrize("name", ["busy", "filter", "peterson", "dwyer_deadlock_bug"])
def test_stores_limits_and_symmetry_are_the_closures(name: str, kw: dict[str, object],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = _both(MODELS[name], monkeypatch, granularity="statement", **kw)
    assert fast == slow


def test_max_states_stops_at_the_same_count_with_self_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    full = movers.check(MODELS["filter"], granularity="statement")
    n = full.stats.states - 1
    fast, slow = _both(MODELS["filter"], monkeypatch, granularity="statement", max_states=n)
    assert fast == slow and fast[1] == n and fast[0] != "ok"


@pytest.mark.parametrize("reduction", ["optimistic", "static-por", "transactions", "dwyer-sda"])
@pytest.mark.parametrize("name", ["busy", "filter", "peterson", "atomicity_dekker", "dwyer_deadlock_bug"])
def test_the_reductions_are_the_closures_and_agree_with_none(name: str, reduction: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = _both(MODELS[name], monkeypatch, granularity="statement", reduction=reduction)
    assert fast == slow
    none = search_summary(movers.check(MODELS[name], granularity="statement", time_limit=60))
    assert fast[0] == none[0] and {v[0] for v in fast[4]} <= {v[0] for v in none[4]} | {"deadlock"}


# -- random busy-waiting models ---------------------------------------------------------------------------


@st.composite
def busy_models(draw: st.DrawFn) -> str:
    """Threads setting flags and waiting on them: ``while <test>: pass`` (sometimes a body that writes),
    ``with m:`` sections, an element of a shared list, an unlocked ``count += 1`` and an assertion."""
    n = draw(st.integers(2, 3))
    flags = ["f0", "f1", "f2"][:draw(st.integers(1, 3))]
    lines = ["from movers.lang import *", "", *(f"{f} = 0" for f in flags), "xs = [0, 0]", "count = 0",
             "m = Lock()", ""]

    def test(i: int) -> str:
        parts = []
        for _ in range(draw(st.integers(1, 2))):
            kind = draw(st.sampled_from(["flag", "element", "local"]))
            if kind == "flag":
                parts.append(f"{draw(st.sampled_from(flags))} {draw(st.sampled_from(['==', '!=', '<']))} "
                             f"{draw(st.integers(0, 1))}")
            elif kind == "element":
                parts.append(f"xs[{draw(st.sampled_from(['0', '1', 'i']))}] == {draw(st.integers(0, 1))}")
            else:
                parts.append(f"i == {draw(st.integers(0, n - 1))}")
        return f" {draw(st.sampled_from(['and', 'or']))} ".join(parts)

    for t in range(n):
        body = [f"def w{t}(i):", f"    global count, {', '.join(flags)}"]
        for _ in range(draw(st.integers(1, 4))):
            kind = draw(st.sampled_from(["set", "wait", "wait", "with", "count", "element", "assert"]))
            if kind == "set":
                body.append(f"    {draw(st.sampled_from(flags))} = {draw(st.integers(0, 1))}")
            elif kind == "wait":
                loop = draw(st.sampled_from(["pass", "pass", "k = 1", "count = count"]))
                body += [f"    while {test(t)}:", f"        {loop}"]
            elif kind == "with":
                body += ["    with m:", f"        {draw(st.sampled_from(flags))} = {draw(st.integers(0, 1))}"]
            elif kind == "count":
                body.append("    count += 1")
            elif kind == "element":
                body.append(f"    xs[i % 2] = {draw(st.integers(0, 1))}")
            else:
                body.append(f"    assert count < {draw(st.integers(1, 3))}")
        lines += [*body, "", ""]
    lines += [f"Thread(target=w{t}, args=({t},)).start()" for t in range(n)]
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(busy_models(), st.sampled_from(["statement", "access"]),
       st.sampled_from(["none", "none", "optimistic", "static-por", "dwyer-sda"]))
def test_random_busy_waits_are_the_closures(src: str, granularity: str, reduction: str) -> None:
    note(src)
    with pytest.MonkeyPatch.context() as mp:
        fast, slow = _both(src, mp, granularity=granularity, reduction=reduction, max_states=20_000)
    assert fast == slow


# -- the tighter list indexing and the guard's shared lines --------------------------------------------------

INDICES = """
from movers.lang import *

xs = [0, 1, 2]
flags = [True, False]
m = Lock()


def worker(i, j):
    xs[i] = xs[-1] + 1
    xs[j] = xs[2]
    if flags[0]:
        xs[0] = flags[1]
    assert xs[i - 3] < 9
    with m:
        xs[j] = xs[j]
    xs[i + j] = 1


Thread(target=worker, args=(0, -3)).start()
Thread(target=worker, args=(2, 1)).start()
"""


@pytest.mark.parametrize("granularity", ["statement", "access"])
def test_indices_negative_constant_and_out_of_range_are_the_closures(granularity: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # ``xs[i + j]`` is out of range for the second thread (IndexError on the closures); ``xs[-1]``,
    # ``xs[i - 3]`` and ``xs[j]`` with j = -3 count from the back; ``xs[0] = flags[1]`` stores a boolean.
    fast, slow = _both(INDICES, monkeypatch, granularity=granularity)
    assert fast == slow and fast[0] != "ok"


def test_a_guards_lines_are_shared_only_between_whole_statements() -> None:
    from movers.lang import codegen

    guard = ["_1 = g[0]", "if _1:", "    _2 = top[2]", "_o = heap[_1.i]"]
    assert codegen._shared_prefix(guard, ["_1 = g[0]", "if _1:", "    _2 = loc[0]", "_o = heap[_1.i]", "pc = 3"]) == 4
    # Never inside a block: the step's own lines of the block stay with the ``if``.
    assert codegen._shared_prefix(guard, ["_1 = g[0]", "if _1:", "    _2 = loc[0]", "    _3 = 1", "pc = 3"]) == 1
    assert codegen._shared_prefix(guard, ["_1 = g[1]", "pc = 3"]) == 0


@pytest.mark.parametrize("name", ["busy", "filter", "peterson"])
def test_the_parallel_search_counts_self_loops_as_the_sequential_one(name: str) -> None:
    # Its workers take ``successors`` too: a self-loop is the state itself there, looked up and found stored.
    one = movers.check(MODELS[name], granularity="statement", time_limit=600)
    many = movers.check(MODELS[name], granularity="statement", workers=2, time_limit=600)
    assert (many.verdict, many.stats.states) == (one.verdict, one.stats.states)
    assert many.stats.transitions == one.stats.transitions
