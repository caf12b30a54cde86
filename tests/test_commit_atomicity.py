"""Commit-atomicity (papers/003, section 4; ``instrument/commit.py``): the rules, the traps of issue 9
(phases tracked as steps happen, blocks with a dynamic extent, serial runs that block or never end,
``commit()`` as a block's last statement), and the well-formedness checks."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import EXAMPLES
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import movers
from movers.checker import load

MODELS = {
    "wait_dep": """\
from movers.lang import *
flag = False
x = 0
y = 0
def a():
    with atomic():
        wait_until(flag)
        y = 1
def b():
    global flag, x
    with atomic():
        flag = True
        x = 1
        commit()
        x = 2
Thread(target=a).start()
Thread(target=b).start()
""",
    "spin": """\
from movers.lang import *
flag = False
def a():
    with atomic():
        while not flag:
            pass
def b():
    global flag
    flag = True
Thread(target=a).start()
Thread(target=b).start()
""",
    "loop": """\
from movers.lang import *
x = 0
m = Lock()
def w():
    global x
    while True:
        with atomic():
            with m:
                x = (x + 1) % 3
Thread(target=w).start()
Thread(target=w).start()
""",
    "loop_bad": """\
from movers.lang import *
x = 0
def w():
    global x
    while True:
        with atomic():
            t = x
            x = (t + 1) % 3
Thread(target=w).start()
Thread(target=w).start()
""",
    "callee": """\
from movers.lang import *
x = 0
def incr():
    global x
    t = x
    x = t + 1
def w():
    with atomic():
        incr()
Thread(target=w).start()
Thread(target=w).start()
""",
    "locked": """\
from movers.lang import *
x = 0
m = Lock()
def inc():
    global x
    with atomic():
        with m:
            t = x
            x = t + 1
Thread(target=inc).start()
Thread(target=inc).start()
""",
    "unlocked": """\
from movers.lang import *
x = 0
m = Lock()
def inc():
    global x
    with atomic():
        if True:
            t = x
            x = t + 1
Thread(target=inc).start()
Thread(target=inc).start()
""",
}
EXPECT = {
    "wait_dep": ('violation', 'blocks on the shadow store'),
    "spin": ('violation', 'does not end'),
    "loop": ('ok', None),
    "loop_bad": ('violation', 'differs from the serial run'),
    "callee": ('violation', 'differs from the serial run'),
    "locked": ('ok', None),
    "unlocked": ('violation', 'x is 1 in the interleaved run but 2 in the serial one'),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_small_models(name: str) -> None:
    verdict, text = EXPECT[name]
    r = movers.check(source=MODELS[name], atomicity="commit")
    assert r.verdict == verdict, (name, r.verdict, r.violations)
    if verdict == "violation":
        v = r.violations[0]
        assert v.kind == "atomicity"
        assert text in v.message
    # Without --atomicity the blocks are a specification only: no violation at all.
    assert movers.check(source=MODELS[name]).verdict == "ok"


def test_a_loop_that_leaves_a_block_and_enters_the_next_in_one_step_is_checked() -> None:
    """``while True: with atomic():`` leaves a block and re-enters it in one step; were the phase read off
    the program counter, the thread would never be outside a block and [WRONG] never checked."""
    r = movers.check(source=MODELS["loop_bad"], atomicity="commit")
    assert r.verdict == "violation" and "the shadow store ran, serially: thread" in r.violations[0].message


def test_commit_as_the_last_statement_does_not_mark_the_step_after_the_block() -> None:
    program = load(source="""
from movers.lang import *
x = 0
def w():
    global x
    with atomic():
        x = 1
        commit()
    x = 2
Thread(target=w).start()
""")
    code = program.functions["w"]
    assert not any(n.commit for n in code.nodes), [(n.line, n.commit) for n in code.nodes]
    assert program.atomic_blocks[0].has_commit


def test_the_default_commit_point_is_said() -> None:
    r = movers.check(source=MODELS["locked"], atomicity="commit")
    assert any("commit point is its first step that is not a right mover" in n for n in r.notes)


CHOICES = {
    # The lock makes the block atomic whatever it chooses; resolved independently on the shadow store (the
    # paper's [SHADOW]), the serial run could add 2 where the interleaved run added 1: a false alarm.
    "locked": ("""
from movers.lang import *
x = 0
m = Lock()
def w():
    global x
    with atomic():
        with m:
            v = choose(range(3))
            x = (x + v) % 4
Thread(target=w).start()
Thread(target=w).start()
""", "ok"),
    # The choice comes after the commit point (the read of flag): the serial run makes both choices, and the
    # interleaved run's later choice is matched against each.
    "after_commit": ("""
from movers.lang import *
x = 0
flag = 0
m = Lock()
def pick():
    return choose(range(2))
def w():
    global x
    with atomic():
        t = flag
        with m:
            if pick() == 1:
                x = (x + 1) % 3
            else:
                x = (x + 2) % 3
def f():
    global flag
    flag = 1
Thread(target=w).start()
Thread(target=w).start()
Thread(target=f).start()
""", "ok"),
    # Two critical sections: not atomic, whatever is chosen.
    "two_sections": ("""
from movers.lang import *
x = 0
m = Lock()
def w():
    global x
    with atomic():
        with m:
            t = x
        v = choose(range(2))
        with m:
            x = t + v
Thread(target=w).start()
Thread(target=w).start()
""", "violation"),
}


@pytest.mark.parametrize("name", sorted(CHOICES))
@pytest.mark.parametrize("reduction", ["none", "optimistic", "transactions", "dwyer-da"])
def test_choices_inside_blocks_are_the_same_on_both_stores(name: str, reduction: str) -> None:
    text, verdict = CHOICES[name]
    r = movers.check(source=text, atomicity="commit", reduction=reduction)
    assert r.verdict == verdict, (r.verdict, r.violations, r.error)
    if verdict == "violation":
        assert r.violations[0].kind == "atomicity"


def test_refused_models_and_options() -> None:
    r = movers.check(source="from movers.lang import *\nx = 0\n", atomicity="commit")
    assert r.verdict == "error" and "no 'with atomic():' block" in r.error
    r = movers.check(source=MODELS["locked"], atomicity="commit", reduction="static-por")
    assert r.verdict == "error" and "--reduction none, optimistic, transactions" in r.error
    assert "static-por" in r.error
    for mode in ("reduction", "auto"):
        r = movers.check(source=MODELS["locked"], atomicity=mode, reduction="transactions")
        assert r.verdict == "error" and "--reduction none or optimistic" in r.error


def test_the_cli(tmp_path) -> None:
    from movers.cli import main

    f = tmp_path / "m.py"
    f.write_text(MODELS["unlocked"])
    assert main(["check", str(f), "--atomicity", "commit", "--quiet"]) == 1
    f.write_text(MODELS["locked"])
    assert main(["check", str(f), "--atomicity", "commit", "--quiet"]) == 0


# -- --atomicity reduction and auto ---------------------------------------------------------------------------------

REDUCTION_EXPECT = {  # (reduction, auto): reduction is sound but incomplete, auto agrees with commit
    "locked": ("ok", "ok"), "unlocked": ("violation", "violation"), "loop": ("ok", "ok"),
    "loop_bad": ("violation", "violation"), "callee": ("violation", "violation"),
    "spin": ("violation", "violation"), "wait_dep": ("ok", "violation"),
}


@pytest.mark.parametrize("name", sorted(REDUCTION_EXPECT))
def test_reduction_and_auto(name: str) -> None:
    by_reduction, by_auto = REDUCTION_EXPECT[name]
    r = movers.check(source=MODELS[name], atomicity="reduction")
    assert r.verdict == by_reduction, (name, r.violations)
    if r.verdict == "violation":
        assert r.violations[0].kind == "atomicity"
        assert "not reducible (R* N? L*)" in r.violations[0].message
        assert "sound but incomplete" in r.violations[0].message
    a = movers.check(source=MODELS[name], atomicity="auto")
    assert a.verdict == by_auto == movers.check(source=MODELS[name], atomicity="commit").verdict
    assert any("proved atomic by reduction" in n or "checked by commit-atomicity" in n for n in a.notes)


def test_the_breaking_step_is_named() -> None:
    text = """\
from movers.lang import *
x = 0
m = Lock()
def w():
    global x
    with atomic():
        with m:
            t = x
        with m:
            x = t + 1
Thread(target=w).start()
Thread(target=w).start()
"""
    r = movers.check(source=text, atomicity="reduction")
    assert r.verdict == "violation"
    msg = r.violations[0].message
    assert "the acquire at line 9" in msg and "the release at line 8" in msg, msg
    assert movers.check(source=text, atomicity="commit").verdict == "violation"  # and it is not atomic


def test_nested_blocks_belong_to_the_outermost() -> None:
    text = """\
from movers.lang import *
x = 0
m = Lock()
def w():
    global x
    with atomic():
        with m:
            with atomic():
                t = x
            x = t + 1
Thread(target=w).start()
Thread(target=w).start()
"""
    for mode in ("commit", "reduction", "auto"):
        assert movers.check(source=text, atomicity=mode).verdict == "ok", mode
    unlocked = text.replace("        with m:\n", "        if True:\n")
    for mode in ("commit", "reduction", "auto"):
        r = movers.check(source=unlocked, atomicity=mode)
        assert r.verdict == "violation" and r.violations[0].kind == "atomicity", mode


# -- random models with atomic blocks ---------------------------------------------------------------------------------

OPS = [
    "with m:\n    x = (x + 1) % 3",
    "with m:\n    t = x\nwith m:\n    x = (t + 1) % 3",
    "t = x\nx = (t + 2) % 3",
    "y = (y + 1) % 2",
    "with m:\n    y = x",
    "k = 1",
    "with m:\n    if x == 1:\n        y = 1",
    "if y == 0:\n    with m:\n        x = 0",
    "with m:\n    x = (x + 1) % 3\n    y = (y + 1) % 2",
    "with m:\n    c = choose(range(2))\n    x = (x + c) % 3",
    "if x == 0:\n    c = choose(range(2))\n    y = c",
]


@st.composite
def atomic_models(draw: Any) -> str:
    """Two or three threads over two globals and a lock, each running one to three operations, some of
    them inside `with atomic():` (nested, or one block after another)."""
    lines = ["from movers.lang import *", "x = 0", "y = 0", "m = Lock()"]
    n = draw(st.integers(2, 3))
    for k in range(n):
        lines += [f"def w{k}():", "    global x, y", "    k = 0"]
        for _ in range(draw(st.integers(1, 3))):
            op = draw(st.sampled_from(OPS))
            depth = draw(st.sampled_from([0, 1, 1, 2]))
            body = op.split("\n")
            pad = "    "
            for _d in range(depth):
                lines.append(pad + "with atomic():")
                pad += "    "
            lines += [pad + b for b in body]
    if not any("atomic" in ln for ln in lines):
        lines.insert(lines.index("    k = 0") + 1, "    with atomic():\n        k = 2")
    lines += [f"Thread(target=w{k}).start()" for k in range(n)]
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(atomic_models())
def test_random_models_commit_auto_and_reduction_agree(text: str) -> None:
    note(text)
    commit = movers.check(source=text, atomicity="commit", max_states=20_000)
    auto = movers.check(source=text, atomicity="auto", max_states=20_000)
    reduction = movers.check(source=text, atomicity="reduction", max_states=20_000)
    if "incomplete" in (commit.verdict, auto.verdict, reduction.verdict):
        return
    kinds = [r.violations[0].kind if r.violations else None for r in (commit, auto)]
    assert (auto.verdict, kinds[1]) == (commit.verdict, kinds[0]), (auto.notes, auto.violations, commit.violations)
    if reduction.verdict == "ok":
        assert commit.verdict == "ok", commit.violations  # a reducible block commits at its non-mover
    plain = movers.check(source=text, max_states=20_000)
    if plain.verdict == "violation":  # the program's own errors are found in every mode
        assert commit.verdict == "violation"
    # The optimistic reduction keeps every thread's sequence of steps: the same blocks are proved or not.
    for mode, base in (("reduction", reduction), ("auto", auto)):
        opt = movers.check(source=text, atomicity=mode, reduction="optimistic", max_states=20_000)
        if opt.verdict != "incomplete":
            kind = (opt.violations[0].kind if opt.violations else None,
                    base.violations[0].kind if base.violations else None)
            assert (opt.verdict, kind[0]) == (base.verdict, kind[1]), (mode, opt.violations, base.violations)
            if opt.verdict == "ok":
                assert opt.stats.states <= base.stats.states


def test_compare_gives_standard_and_instrumented_states(tmp_path, capsys) -> None:
    import json

    from movers.cli import main

    f = tmp_path / "m.py"
    f.write_text(MODELS["locked"])
    assert main(["compare", str(f), "--atomicity", "commit", "--reductions", "none,optimistic,transactions",
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    none, optimistic, transactions = rows
    assert none["atomicity"] == "commit" and none["verdict"] == "ok"
    assert none["standard_states"] == movers.check(source=MODELS["locked"]).stats.states
    assert none["stats"]["states"] == movers.check(source=MODELS["locked"], atomicity="commit").stats.states
    assert optimistic["verdict"] == "ok" and optimistic["standard_states"] == movers.check(
        source=MODELS["locked"], reduction="optimistic").stats.states
    assert optimistic["stats"]["states"] < none["stats"]["states"]
    assert transactions["verdict"] == "ok" and transactions["standard_states"] == movers.check(
        source=MODELS["locked"], reduction="transactions").stats.states
    assert transactions["stats"]["states"] < none["stats"]["states"]


# -- reductions on the instrumented search -----------------------------------------------------------------------

LOOP_OPS = OPS + ["assert x != 2 or y != 1", "with m:\n    with atomic():\n        x = (x + 2) % 3",
                  "if x == 2:\n    y = 0"]


@st.composite
def looping_atomic_models(draw: Any) -> str:
    """Like ``atomic_models``, but a thread may loop for ever over its operations, so that blocks end and
    start again while other threads are inside theirs (the shadow store then lives long)."""
    lines = ["from movers.lang import *", "x = 0", "y = 0", "m = Lock()"]
    n = draw(st.integers(2, 3))
    for k in range(n):
        lines += [f"def w{k}():", "    global x, y", "    k = 0", "    t = 0"]
        base = "    "
        if draw(st.booleans()):
            lines.append("    while True:")
            base = "        "
        for _ in range(draw(st.integers(1, 3))):
            op = draw(st.sampled_from(LOOP_OPS))
            pad = base
            for _d in range(draw(st.sampled_from([0, 1, 1, 2]))):
                lines.append(pad + "with atomic():")
                pad += "    "
            lines += [pad + b for b in op.split("\n")]
    if not any("atomic" in ln for ln in lines):
        lines.insert(lines.index("    k = 0") + 1, "    with atomic():\n        k = 2")
    lines += [f"Thread(target=w{k}).start()" for k in range(n)]
    return "\n".join(lines) + "\n"


def _outcome(r: Any) -> tuple[str, str | None]:
    return r.verdict, (r.violations[0].kind if r.violations else None)


LIMIT = 4_000  # looping models can be large: a bigger or slower one is skipped (incomplete)


def _agrees_with_commit_none(text: str, mode: str, reductions: tuple[str, ...]) -> None:
    note(text)
    base = movers.check(source=text, atomicity="commit", max_states=LIMIT, time_limit=5)
    if base.verdict == "incomplete":
        return
    plain = movers.check(source=text, max_states=LIMIT, time_limit=5)
    if plain.verdict == "incomplete":
        # Whether the program has violations of its own (then which kind a search meets first may differ)
        # must be known, not cut short: the instrumented search may complete where the plain one did not.
        plain = movers.check(source=text, max_states=50 * LIMIT, time_limit=60)
    for reduction in reductions:
        r = movers.check(source=text, atomicity=mode, reduction=reduction, max_states=LIMIT, time_limit=5)
        if r.verdict == "incomplete":
            continue
        if plain.verdict == "violation":  # several kinds of violation: which one comes first may differ
            assert r.verdict == base.verdict, (reduction, r.violations, base.violations)
        else:
            assert _outcome(r) == _outcome(base), (reduction, r.violations, base.violations)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(atomic_models(), looping_atomic_models()))
def test_random_models_commit_under_every_reduction_agrees_with_none(text: str) -> None:
    _agrees_with_commit_none(text, "commit", ("optimistic", "transactions", "dwyer-da", "dwyer-ld+wsldom"))


# A random model found this: thread 0 takes m outside every block, where the shadow store is the normal store;
# thread 1's block commits at its first step (a read of y, shared and unprotected), and its serial run then
# needs m, which thread 0 holds there. Under transactions the acquire must not move right past that commit
# (moved, the serial run finds m free and the violation is gone): outside every block a lock operation is a
# non-mover of P#.
OUTSIDE_ACQUIRE = """
from movers.lang import *
x = 0
y = 0
m = Lock()
def w0():
    global x
    if y == 0:
        with m:
            x = 0
def w1():
    global x, y
    with atomic():
        if y == 0:
            with m:
                x = 0
    with atomic():
        with m:
            x = (x + 1) % 3
            y = (y + 1) % 2
Thread(target=w0).start()
Thread(target=w1).start()
"""


@pytest.mark.parametrize("reduction", ["none", "optimistic", "transactions", "dwyer-da"])
def test_a_lock_taken_outside_every_block_is_seen_by_the_serial_run(reduction: str) -> None:
    r = movers.check(source=OUTSIDE_ACQUIRE, atomicity="commit", reduction=reduction)
    assert r.verdict == "violation" and r.violations[0].kind == "atomicity", (reduction, r.violations)
    assert "blocks on the shadow store" in r.violations[0].message


def test_transactions_on_the_instrumented_search_store_fewer_states_than_the_standard_full_search() -> None:
    # Issue 9's goal on the transaction benchmark (papers/003, Figure 1: instrumented 5.7x standard in SPIN):
    # with transactions the instrumented search stores fewer states than the plain search of the program.
    # The paper's steps are statements.
    path = str(EXAMPLES / "atomicity_transaction.py")
    standard = movers.check(path, granularity="statement")
    instrumented = movers.check(path, atomicity="commit", reduction="transactions", granularity="statement")
    assert standard.verdict == instrumented.verdict == "ok"
    assert instrumented.stats.states < standard.stats.states, (instrumented.stats.states, standard.stats.states)
    assert instrumented.stats.states < movers.check(path, atomicity="commit", granularity="statement").stats.states


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(looping_atomic_models())
def test_random_looping_models_auto_agrees_with_commit(text: str) -> None:
    # auto runs the blocks the reduction proved as one transaction each beside the shadow store of the others.
    _agrees_with_commit_none(text, "auto", ("none", "optimistic"))


MIXED = """
from movers.lang import *
m = Lock()
data = 0
other = 0

def inc():
    global data, other
    while True:
        with atomic():
            with m:
                data = (data + 1) % 3
                other = (other + 1) % 2

def txn():
    global data
    while True:
        with atomic():
            while True:
                with m:
                    t = data
                f = (t + 1) % 3
                with m:
                    if t == data:
                        commit()
                        data = f
                        break

Thread(target=inc).start()
Thread(target=inc).start()
Thread(target=txn).start()
"""


def test_auto_runs_proved_blocks_as_transactions_beside_the_shadow_store() -> None:
    # At access granularity txn's local step (f = ...) is glue and every other step of the others needs m, so
    # nothing can interleave inside inc's block anyway: the same transitions. Statement steps show the gain.
    at_access = (movers.check(source=MIXED, atomicity="commit"), movers.check(source=MIXED, atomicity="auto"))
    assert at_access[1].stats.transitions <= at_access[0].stats.transitions
    commit = movers.check(source=MIXED, atomicity="commit", granularity="statement")
    auto = movers.check(source=MIXED, atomicity="auto", granularity="statement")
    assert commit.verdict == auto.verdict == "ok"
    assert any("line 10: proved atomic by reduction" in n and "one transaction" in n for n in auto.notes)
    assert any("line 18: commit() marks its commit point" in n for n in auto.notes)
    # No interleaving inside the proved block: fewer transitions than the shadow store alone.
    assert auto.stats.transitions < commit.stats.transitions
    # Under optimistic, both are much smaller than the plain instrumented search.
    opt = movers.check(source=MIXED, atomicity="auto", reduction="optimistic", granularity="statement")
    assert opt.verdict == "ok" and opt.stats.states < commit.stats.states


def test_auto_with_the_same_model_made_non_atomic_finds_it() -> None:
    broken = MIXED.replace("                    if t == data:\n", "                    if True:\n")
    for reduction in ("none", "optimistic"):
        r = movers.check(source=broken, atomicity="auto", reduction=reduction)
        assert r.verdict == "violation" and r.violations[0].kind == "atomicity", reduction


def test_two_threads_inside_proved_blocks_never_block_each_other() -> None:
    # One thread gets into its proved block while the other waits inside its own for the lock; when both can
    # move, the lower-numbered one runs (were both kept out, the search would report a false deadlock).
    text = """
from movers.lang import *
a = Lock()
b = Lock()
x = 0

def w0():
    global x
    with atomic():
        with a:
            with b:
                x = (x + 1) % 3

def w1():
    global x
    with atomic():
        with b:
            x = (x + 2) % 3
    with atomic():
        with a:
            x = (x + 1) % 3

Thread(target=w0).start()
Thread(target=w1).start()
"""
    for reduction in ("none", "optimistic"):
        r = movers.check(source=text, atomicity="auto", reduction=reduction)
        assert r.verdict == movers.check(source=text, atomicity="commit").verdict == "ok", (reduction, r.violations)


# -- blocks that do not end (issue 21; docs/atomicity.md, "Blocks that do not end") ----------------------------------
# One rule for the three modes: a block must end when its thread runs alone from its commit point. commit runs
# the block serially there; reduction runs the thread alone from every state after its non-mover (condition C of
# papers/004); auto proves only blocks that pass, and commit decides the others.

UNENDING = {
    # x = 1 on data another thread writes without a lock (the commit point), then an endless thread-local loop.
    "local_loop": """\
from movers.lang import *
x = 0
def a():
    global x
    with atomic():
        x = 1
        k = 0
        while True:
            k = (k + 1) % 2
def b():
    global x
    x = 2
Thread(target=a).start()
Thread(target=b).start()
""",
    # The same, with commit() marking the write as the commit point.
    "marked_loop": """\
from movers.lang import *
x = 0
def a():
    global x
    with atomic():
        x = 1
        commit()
        k = 0
        while True:
            k = (k + 1) % 2
def b():
    global x
    x = 2
Thread(target=a).start()
Thread(target=b).start()
""",
    # A spin that only another thread can end: alone, it spins for ever.
    "spin": """\
from movers.lang import *
x = 0
flag = False
def a():
    global x
    with atomic():
        x = 1
        while not flag:
            pass
def b():
    global x, flag
    x = 2
    flag = True
Thread(target=a).start()
Thread(target=b).start()
""",
    # A wait that only another thread can end, after the commit point.
    "wait": """\
from movers.lang import *
x = 0
e = Event()
def a():
    global x
    with atomic():
        x = 1
        e.wait()
def b():
    global x
    x = 2
    e.set()
Thread(target=a).start()
Thread(target=b).start()
""",
}


@pytest.mark.parametrize("name", sorted(UNENDING))
@pytest.mark.parametrize("reduction", ["none", "optimistic"])
def test_a_block_that_does_not_end_alone_is_a_violation_in_every_mode(name: str, reduction: str) -> None:
    for mode in ("commit", "reduction", "auto"):
        r = movers.check(source=UNENDING[name], atomicity=mode, reduction=reduction)
        assert r.verdict == "violation", (mode, r.verdict, r.violations)
        v = r.violations[0]
        assert v.kind == "atomicity", (mode, v.kind, v.message)
        if mode == "reduction" and name in ("spin", "wait"):
            # The spin's second read, or the wait on the Event, is a second non-mover: not reducible; or, while
            # flag is still taken for a's own (no other thread has touched it yet), the spin does not end alone.
            assert "not reducible (R* N? L*)" in v.message or "does not end when its thread" in v.message, v.message
        elif mode == "reduction":
            assert "does not end when its thread runs alone after the non-mover at line 6" in v.message, v.message
        else:
            assert "does not end" in v.message or "blocks on the shadow store" in v.message, (mode, v.message)


@pytest.mark.parametrize("reduction", ["transactions", "dwyer-da"])
def test_a_block_that_does_not_end_alone_under_commit_and_the_other_reductions(reduction: str) -> None:
    for name in sorted(UNENDING):
        r = movers.check(source=UNENDING[name], atomicity="commit", reduction=reduction)
        assert _outcome(r) == ("violation", "atomicity"), (name, r.violations)


def test_auto_does_not_prove_a_reducible_block_that_does_not_end() -> None:
    r = movers.check(source=UNENDING["local_loop"], atomicity="auto")
    assert any("not proved by reduction" in n and "does not end when its thread runs alone" in n
               for n in r.notes), r.notes
    assert "serial run of thread a's atomic block does not end" in r.violations[0].message


def test_a_block_that_loops_before_it_commits_is_not_a_violation() -> None:
    # Only right movers before the commit point (a thread-local loop): no serial run starts, nothing to end.
    # Lipton's reduction moves them after every other thread's steps: the block starts last and runs for ever.
    text = UNENDING["local_loop"].replace("        x = 1\n", "")
    for mode in ("commit", "reduction", "auto"):
        assert movers.check(source=text, atomicity=mode).verdict == "ok", mode
    # A block whose run alone ends after its commit point: ok in every mode.
    text = UNENDING["local_loop"].replace("        while True:\n", "        for _ in range(3):\n")
    for mode in ("commit", "reduction", "auto"):
        assert movers.check(source=text, atomicity=mode).verdict == "ok", mode


# --atomicity reduction does not read commit() markers (docs/atomicity.md): it proves this block atomic by its
# own commit point (the write of x, its non-mover), while the marked commit point, after it, lets thread b read
# x = 1 before the block commits: commit and auto reject the block as the model marks it.
MARKED_LATE = """\
from movers.lang import *
x = 0
y = 0
def a():
    global x
    with atomic():
        x = 1
        commit()
        k = 1
def b():
    global y
    y = x
Thread(target=a).start()
Thread(target=b).start()
"""


def test_reduction_ignores_commit_markers() -> None:
    assert movers.check(source=MARKED_LATE, atomicity="reduction").verdict == "ok"
    for mode in ("commit", "auto"):
        r = movers.check(source=MARKED_LATE, atomicity=mode)
        assert r.verdict == "violation" and r.violations[0].kind == "atomicity", mode
        assert "y is 1 in the interleaved run but 0 in the serial one" in r.violations[0].message
    # Without the marker the three agree: the block commits at its write.
    unmarked = MARKED_LATE.replace("        commit()\n", "")
    for mode in ("commit", "reduction", "auto"):
        assert movers.check(source=unmarked, atomicity=mode).verdict == "ok", mode
    # The other way round: an endless loop before the marked commit point. commit never starts the block's
    # serial run (no state with no thread inside a block comes again); reduction, from the write, finds that
    # the block does not end, and says that it did not read the marker.
    looping = MARKED_LATE.replace("        k = 1\n", "").replace(
        "        commit()\n", "        k = 0\n        while True:\n            k = (k + 1) % 2\n        commit()\n")
    assert movers.check(source=looping, atomicity="commit").verdict == "ok"
    assert movers.check(source=looping, atomicity="auto").verdict == "ok"
    r = movers.check(source=looping, atomicity="reduction")
    assert r.verdict == "violation" and "does not read commit() markers" in r.violations[0].message


ENDING_OPS = [  # reducible operations mostly, so that reduction proves many blocks
    "while True:\n    k = (k + 1) % 2",
    "x = 1\nwhile True:\n    k = (k + 1) % 2",
    "while y == 0:\n    k = (k + 1) % 2",
    "wait_until(x == 1)",
    "x = 1",
    "y = 1",
    "k = 1",
    "for _ in range(2):\n    k = (k + 1) % 2",
    "with m:\n    x = (x + 1) % 3",
    "t = x\nx = (t + 2) % 3",
    "with m:\n    c = choose(range(2))\n    y = c",
]


@st.composite
def unending_atomic_models(draw: Any) -> str:
    """Like ``atomic_models``, with operations that may not end alone: endless thread-local loops, spins and
    waits that only another thread can end."""
    lines = ["from movers.lang import *", "x = 0", "y = 0", "m = Lock()"]
    n = draw(st.integers(2, 3))
    for k in range(n):
        lines += [f"def w{k}():", "    global x, y", "    k = 0"]
        for _ in range(draw(st.integers(1, 3))):
            op = draw(st.sampled_from(ENDING_OPS))
            pad = "    "
            for _d in range(draw(st.sampled_from([0, 1, 1]))):
                lines.append(pad + "with atomic():")
                pad += "    "
            lines += [pad + b for b in op.split("\n")]
    if not any("atomic" in ln for ln in lines):
        lines.insert(lines.index("    k = 0") + 1, "    with atomic():\n        k = 2")
    lines += [f"Thread(target=w{k}).start()" for k in range(n)]
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(unending_atomic_models())
def test_random_unending_models_the_three_modes_agree(text: str) -> None:
    """Where each mode gives a verdict they agree: auto is commit; reduction's "ok" is commit's; a block that
    reduction finds does not end alone is a violation for commit (no commit() markers here)."""
    note(text)
    limit = dict(max_states=20_000, time_limit=20)
    commit = movers.check(source=text, atomicity="commit", **limit)
    auto = movers.check(source=text, atomicity="auto", **limit)
    reduction = movers.check(source=text, atomicity="reduction", **limit)
    if "incomplete" in (commit.verdict, auto.verdict, reduction.verdict):
        return
    plain = movers.check(source=text, **limit)
    if plain.verdict == "incomplete":
        return
    if plain.verdict == "violation":  # several kinds of violation: which one comes first may differ
        assert commit.verdict == auto.verdict == reduction.verdict == "violation"
        return
    assert _outcome(auto) == _outcome(commit), (auto.notes, auto.violations, commit.violations)
    if reduction.verdict == "ok":
        assert commit.verdict == "ok", commit.violations
    elif "does not end when its thread runs alone" in reduction.violations[0].message:
        assert _outcome(commit) == ("violation", "atomicity"), commit.violations
    # Under optimistic too (which may prove fewer blocks: it counts a blocked guard's reads as accesses).
    auto = movers.check(source=text, atomicity="auto", reduction="optimistic", **limit)
    reduction = movers.check(source=text, atomicity="reduction", reduction="optimistic", **limit)
    if auto.verdict != "incomplete":
        assert _outcome(auto) == _outcome(commit), (auto.notes, auto.violations, commit.violations)
    if reduction.verdict == "ok":
        assert commit.verdict == "ok", commit.violations
    elif reduction.verdict == "violation" and "does not end when its thread" in reduction.violations[0].message:
        assert _outcome(commit) == ("violation", "atomicity"), commit.violations
