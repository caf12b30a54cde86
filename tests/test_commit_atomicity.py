"""Commit-atomicity (papers/003, section 4; ``instrument/commit.py``): the rules, the traps of issue 9
(phases tracked as steps happen, blocks with a dynamic extent, serial runs that block or never end,
``commit()`` as a block's last statement), and the well-formedness checks."""

from __future__ import annotations

import pytest

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
    assert any("commit point is its first step that is not a lock acquire" in n for n in r.notes)


def test_refused_models_and_options() -> None:
    choose_in_block = """
from movers.lang import *
x = 0
def w():
    global x
    with atomic():
        x = choose(range(2))
Thread(target=w).start()
"""
    r = movers.check(source=choose_in_block, atomicity="commit")
    assert r.verdict == "error" and "<model>:7:" in r.error and "choose()" in r.error
    r = movers.check(source="from movers.lang import *\nx = 0\n", atomicity="commit")
    assert r.verdict == "error" and "no 'with atomic():' block" in r.error
    r = movers.check(source=MODELS["locked"], atomicity="commit", reduction="optimistic")
    assert r.verdict == "error" and "--reduction none" in r.error


def test_the_cli(tmp_path) -> None:
    from movers.cli import main

    f = tmp_path / "m.py"
    f.write_text(MODELS["unlocked"])
    assert main(["check", str(f), "--atomicity", "commit", "--quiet"]) == 1
    f.write_text(MODELS["locked"])
    assert main(["check", str(f), "--atomicity", "commit", "--quiet"]) == 0
