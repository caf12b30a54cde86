"""``--simulate`` (search/simulate.py: TLC's simulation mode) and ``--swarm N`` (search/swarm.py: Holzmann, Joshi &
Groce's swarm verification): seeds reproduce, every safety violation kind is found and its trace replays, finding
nothing is exit 3 and says it is not a proof, the options that do not combine are refused, limits end every
run, and the first violation stops the swarm."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import EXAMPLES

import movers
from movers.cli import main
from movers.search.options import Limits, Options
from movers.search.swarm import SeededStore, order_name, reorder
from movers.trail import read_trail, replay

SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "result.schema.json").read_text())
DEEP = EXAMPLES / "large" / "deep_counter.py"


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# A lost update: the assertion fails in some interleavings only (a walk finds it after a few).
RACY = src("""
    import threading
    count = 0
    def worker():
        global count
        tmp = count
        count = tmp + 1
    t0 = threading.Thread(target=worker)
    t1 = threading.Thread(target=worker)
    t0.start()
    t1.start()
    t0.join()
    t1.join()
    assert count == 2, "lost update"
""")

# Correct: nothing to find, a handful of states.
SAFE = src("""
    import threading
    lock = threading.Lock()
    x = 0
    def w():
        global x
        with lock:
            x += 1
    threading.Thread(target=w).start()
    threading.Thread(target=w).start()
""")

# Runs for ever, and never repeats a state: no search of it ends by itself.
# Two counters that grow forever: a grid with no end, so that a bitstate collision, which ends a single
# chain's search, only cuts one branch here (a swarm member never runs out of states before its time limit).
ENDLESS = src("""
    import threading
    x = 0
    y = 0
    def w():
        global x
        while True:
            x += 1
    def v():
        global y
        while True:
            y += 1
    threading.Thread(target=w).start()
    threading.Thread(target=v).start()
""")

KINDS = {
    "assertion": RACY,
    "deadlock": src("""
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
    """),
    "runtime-error": src("""
        import threading
        d = 1
        def zero():
            global d
            d = 0
        def divide():
            y = 10 // d
        threading.Thread(target=zero).start()
        threading.Thread(target=divide).start()
    """),
    "invariant": src("""
        from movers.lang import *
        inside = 0
        @invariant
        def at_most_one():
            return inside <= 1
        def worker():
            global inside
            inside += 1
            inside -= 1
        Thread(target=worker).start()
        Thread(target=worker).start()
    """),
}


def steps(r: movers.Result) -> list[Any]:
    return [(s.thread, s.line, sorted(s.changes.items())) for s in r.violations[0].trace]


def run_cli(tmp_path: Path, source: str, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    model = tmp_path / "model.py"
    model.write_text(source)
    code = main(["check", str(model), "--quiet", *args])
    return code, capsys.readouterr().out


# -- --simulate -------------------------------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_walks_and_violation() -> None:
    a = movers.check(RACY, simulate=True, seed=11, time_limit=60)
    b = movers.check(RACY, simulate=True, seed=11, time_limit=60)
    assert a.verdict == b.verdict == "violation"
    assert a.search == "simulate" and a.hunt is not None and b.hunt is not None
    assert a.hunt["seed"] == 11
    assert steps(a) == steps(b)
    assert {k: a.hunt[k] for k in ("walks", "steps", "distinct_states", "found_in_walk")} == {
        k: b.hunt[k] for k in ("walks", "steps", "distinct_states", "found_in_walk")}


def test_the_walks_differ_with_the_seed() -> None:
    # Several seeds: not all of them take the same walks (a seed that was ignored would).
    found = {repr(steps(movers.check(RACY, simulate=True, seed=s, time_limit=60))) for s in range(6)}
    assert len(found) > 1


def test_a_seed_is_drawn_and_printed_when_none_is_given() -> None:
    r = movers.check(RACY, simulate=True, time_limit=60)
    assert r.verdict == "violation" and r.hunt is not None
    seed = r.hunt["seed"]
    assert any(f"seed {seed}" in n and f"--seed {seed}" in n for n in r.notes)
    assert steps(movers.check(RACY, simulate=True, seed=seed, time_limit=60)) == steps(r)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_simulate_finds_every_safety_kind(kind: str) -> None:
    r = movers.check(KINDS[kind], simulate=True, seed=1, time_limit=60)
    assert r.verdict == "violation", r.notes
    assert r.violations[0].kind == kind


def test_a_walks_violation_replays_from_its_trail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "model.py"
    model.write_text(RACY)
    trail = tmp_path / "t.trail"
    assert main(["check", str(model), "--simulate", "--seed", "3", "--quiet", "--trail", str(trail)]) == 1
    first = capsys.readouterr().out
    assert "found in walk" in first and "--simulate --seed 3" in first
    again = replay(model, read_trail(trail))
    assert again.verdict == "violation" and again.violations[0].kind == "assertion"
    assert main(["replay", str(model), str(trail)]) == 1


def test_nothing_found_is_exit_3_and_not_a_proof(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_cli(tmp_path, SAFE, "--simulate", "--seed", "5", "--max-states", "300", capsys=capsys)
    assert code == 3
    assert "incomplete: no violation found by random walks (not a proof)" in out
    assert "not a proof" in out and "300 steps" in out and "walks" in out
    code, out = run_cli(tmp_path, SAFE, "--simulate", "--seed", "5", "--max-states", "300", "--json",
                        capsys=capsys)
    d = json.loads(out)
    jsonschema.validate(d, SCHEMA)
    assert code == 3 and d["verdict"] == "incomplete" and d["limit"] == "max-states"
    assert d["search"] == "simulate"
    hunt = d["hunt"]
    assert hunt["mode"] == "simulate" and hunt["seed"] == 5 and hunt["steps"] == 300 and hunt["walks"] > 1
    assert 1 < hunt["distinct_states"] <= d["stats"]["transitions"] + 1 and hunt["found_in_walk"] is None


def test_max_depth_bounds_each_walk() -> None:
    r = movers.check(ENDLESS, simulate=True, seed=2, max_depth=50, max_states=500)
    assert r.verdict == "incomplete" and r.hunt is not None
    assert r.hunt["deepest_walk"] == 50 and r.hunt["walks"] >= 10 and r.hunt["max_depth"] == 50


def test_a_time_limit_ends_a_simulation_of_an_endless_model() -> None:
    r = movers.check(ENDLESS, simulate=True, time_limit=1)
    assert r.verdict == "incomplete" and r.limit == "time-limit"
    assert r.hunt is not None and r.hunt["steps"] > 0


# -- --swarm ----------------------------------------------------------------------------------------------------


def test_the_swarm_finds_the_bug_and_the_trace_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "model.py"
    model.write_text(RACY)
    trail = tmp_path / "t.trail"
    assert main(["check", str(model), "--swarm", "2", "--seed", "4", "--quiet", "--trail", str(trail)]) == 1
    out = capsys.readouterr().out
    assert "swarm member 0 (seed 4, thread order)" in out and "swarm member 1 (seed 5, reverse thread order)" in out
    assert main(["replay", str(model), str(trail)]) == 1


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_swarm_finds_every_safety_kind(kind: str) -> None:
    r = movers.check(KINDS[kind], swarm=2, seed=1, time_limit=60)
    assert r.verdict == "violation"
    assert r.violations[0].kind == kind and r.search == "swarm"


def test_a_swarm_that_finds_nothing_is_not_a_proof(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_cli(tmp_path, SAFE, "--swarm", "3", "--seed", "9", "--json", capsys=capsys)
    d = json.loads(out)
    jsonschema.validate(d, SCHEMA)
    assert code == 3 and d["verdict"] == "incomplete" and d["limit"] == "not-a-proof" and d["search"] == "swarm"
    members = d["hunt"]["members"]
    assert [m["seed"] for m in members] == [9, 10, 11]
    assert [m["order"] for m in members] == ["thread order", "reverse thread order", "random order"]
    full = movers.check(SAFE).stats.states
    for m in members:
        assert m["ended"] == "done" and m["states"] == full  # a bit array this large loses nothing here
        assert m["store"]["kind"] == "bitstate" and m["store"]["hash_factor"] > 1
    code, out = run_cli(tmp_path, SAFE, "--swarm", "2", capsys=capsys)
    assert code == 3 and "no violation found by the swarm (not a proof)" in out and "hash factor" in out


def test_the_same_seed_gives_the_same_members() -> None:
    a = movers.check(SAFE, swarm=3, seed=21, bits=10)
    b = movers.check(SAFE, swarm=3, seed=21, bits=10)
    assert a.hunt is not None and b.hunt is not None
    assert [(m["seed"], m["states"], m["transitions"]) for m in a.hunt["members"]] == [
        (m["seed"], m["states"], m["transitions"]) for m in b.hunt["members"]]


def test_the_first_violation_stops_the_swarm() -> None:
    # Member 0 takes the threads in order: alone it would search the deep counter's first third (about 10^8
    # states, hours) before the bug. Member 1 finds it on its first descent, and stops member 0.
    r = movers.check(DEEP, swarm=2, seed=0, time_limit=300)
    assert r.verdict == "violation" and r.violations[0].kind == "assertion"
    assert r.hunt is not None and r.hunt["found_by"] == 1
    ends = [m["ended"] for m in r.hunt["members"]]
    assert ends == ["stopped", "violation"]


def test_the_deep_counter_falls_to_a_simulation() -> None:
    r = movers.check(DEEP, simulate=True, seed=0, time_limit=300)
    assert r.verdict == "violation" and r.violations[0].kind == "assertion"


def test_a_time_limit_ends_a_swarm_on_an_endless_model() -> None:
    seen: list[int] = []
    r = movers.check(ENDLESS, swarm=2, seed=0, time_limit=2.5, progress=lambda s: seen.append(s.states))
    assert r.verdict == "incomplete" and r.limit == "time-limit"
    assert seen and max(seen) > 0  # the progress line counts the members' states as they go
    assert r.hunt is not None and all(m["ended"] in ("time-limit", "stopped") for m in r.hunt["members"])


def test_members_are_diversified() -> None:
    # Each member's fingerprints carry its seed; member 1 takes the last thread first, member 2 and up a
    # random order: never the reduction's own list, which may be cached.
    program = movers.load(source=RACY)
    from movers.reduce import make_reduction
    from movers.semantics.system import TransitionSystem

    ts = TransitionSystem(program)
    init = ts.initial()
    one, two = SeededStore(10, 1), SeededStore(10, 2)
    assert one.key(init) != two.key(init) and one.key(init) == SeededStore(10, 1).key(init)
    s = init
    while len(ts.steps(s)) < 2:  # on to a state where two threads can move
        s = ts.steps(s)[0].state
    red = make_reduction("none", ts)
    natural = [m.steps[0][0] for m in red.moves(s)]
    reorder(red, 1, 0)
    assert [m.steps[0][0] for m in red.moves(s)] == sorted(natural, reverse=True) != natural
    assert [order_name(k) for k in range(3)] == ["thread order", "reverse thread order", "random order"]


# -- refusals ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("options", "words"), [
    (Options(simulate=True, reduction="dwyer-d"), "--simulate: random walks over every enabled step"),
    (Options(simulate=True, store="bitstate"), "not with --store bitstate"),
    (Options(simulate=True, symmetry="threads"), "not with --symmetry threads"),
    (Options(simulate=True, liveness="termination"), "not with --liveness"),
    (Options(swarm=2, liveness="termination"), "--swarm 2: depth-first searches over bitstate stores"),
    (Options(swarm=2, workers=2), "not with --workers 2"),
    (Options(swarm=2, search="bfs"), "not with --search bfs"),
    (Options(swarm=2, reduction="transactions"), "not with --reduction transactions"),
    (Options(swarm=2, store="hashcompact"), "not with --store hashcompact"),
    (Options(swarm=2, max_violations=3), "not with --max-violations"),
    (Options(swarm=2, atomicity="commit", reduction="optimistic"), "not with --atomicity"),
    (Options(simulate=True, swarm=2), "give one"),
    (Options(seed=3), "--seed needs --simulate or --swarm N"),
    (Options(simulate=True, seed=-1), "--seed must be a non-negative integer"),
    (Options(swarm=0), "--swarm must be a positive number"),
    (Options(swarm=64, bits=30, limits=Limits(max_memory=1000)), "the members' bit arrays take"),
])
def test_what_does_not_combine_is_refused(options: Options, words: str) -> None:
    problem = options.problem()
    assert problem is not None and words in problem, problem


def test_what_combines_is_accepted() -> None:
    assert Options(simulate=True, seed=0, races=True, granularity="access").problem() is None
    assert Options(swarm=2, reduction="dwyer-d", symmetry="off").problem() is None
    assert Options(swarm=2, symmetry="threads", store="bitstate", bits=20).problem() is None


def test_the_command_line_refuses_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "model.py"
    model.write_text(SAFE)
    assert main(["check", str(model), "--swarm", "2", "--liveness", "termination"]) == 2
    assert "movers: error: --swarm 2:" in capsys.readouterr().err
    assert main(["check", str(model), "--simulate", "--reduction", "static-por"]) == 2
    assert "movers: error: --simulate:" in capsys.readouterr().err


def test_a_reduced_swarm_finds_the_bug() -> None:
    r = movers.check(RACY, swarm=2, seed=0, reduction="dwyer-d", time_limit=60)
    assert r.verdict == "violation" and r.violations[0].kind == "assertion"


@pytest.mark.parametrize("reduction", ["optimistic", "dwyer-wsl"])
def test_members_refine_a_guessed_classification_as_the_checker_does(reduction: str) -> None:
    # Both guess (a classification, a locking discipline) and restart when a step refutes the guess: in a
    # member too, never an internal error.
    r = movers.check(EXAMPLES / "bank_transfer_deadlock.py", swarm=2, seed=0, reduction=reduction, time_limit=60)
    assert r.verdict == "violation" and r.violations[0].kind == "deadlock", (r.error, r.notes)
    r = movers.check(EXAMPLES / "condition_queue.py", swarm=2, seed=0, reduction=reduction, time_limit=60)
    assert r.verdict == "incomplete" and r.limit == "not-a-proof", (r.error, r.notes)


def test_max_states_bounds_each_member() -> None:
    r = movers.check(SAFE, swarm=2, seed=0, max_states=5)
    assert r.verdict == "incomplete" and r.limit == "max-states" and r.hunt is not None
    assert all(m["states"] <= 5 and m["ended"] == "max-states" for m in r.hunt["members"])


def _cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of ``pid`` and its child processes so far (Linux /proc)."""
    import os

    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    children = Path(f"/proc/{pid}/task/{pid}/children")
    kids = children.read_text().split() if children.exists() else []
    for q in [pid, *map(int, kids)]:
        try:
            fields = Path(f"/proc/{q}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


@pytest.mark.parametrize("mode", [["--simulate"], ["--swarm", "2"]], ids=["simulate", "swarm"])
def test_ctrl_c_ends_the_run_with_its_coverage(tmp_path: Path, mode: list[str]) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    model = tmp_path / "endless.py"
    model.write_text(ENDLESS)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent / "src"))
    p = subprocess.Popen([sys.executable, "-m", "movers", "check", str(model), *mode, "--seed", "1", "--json",
                          "--time-limit", "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # Once the search runs, Ctrl-C: the run ends as interrupted, with the coverage so far. "Runs" is measured in
    # CPU time, the process's and its children's (the swarm's members), not in wall time: on a loaded machine
    # the start-up (imports, compilation) may take seconds of wall time, and a signal then would come too soon.
    deadline = time.monotonic() + 90
    while _cpu_seconds(p.pid) < 2.0:
        assert time.monotonic() < deadline and p.poll() is None
        time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=90)
    assert p.returncode == 3, err
    d = json.loads(out)
    assert d["verdict"] == "incomplete" and d["limit"] == "interrupted", d
    assert d["hunt"]["seed"] == 1
