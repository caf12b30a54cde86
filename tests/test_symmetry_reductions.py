"""``--symmetry threads`` under the ample-set reductions (issue 27, item 4): the reductions that claim it
(``Capabilities.symmetry``) against ``--symmetry off`` on random symmetric and look-alike models, at both
granularities; the cycle proviso answering for the orbit on the stack (Bošnački, Dams & Holenderski), without
which a reduced search misses a violation; fewer states together than either alone on the symmetric
examples; and counterexamples found with both that replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import movers
from movers.reduce import REDUCTIONS, capabilities, supporting
from movers.search.base import OrbitSet
from movers.trail import read_trail, replay, write_trail

# The reductions that claim --symmetry threads besides ``none`` (tests/test_symmetry.py has ``none``).
CLAIMING = ["static-por", "dwyer-d", "dwyer-s", "dwyer-da", "dwyer-sda"]
GRANULARITIES = ["access", "statement"]
SYMMETRIC = ["symmetric_workers.py", "symmetric_local_work.py"]


def _outcome(r: movers.Result) -> tuple[str, str | None]:
    return r.verdict, (r.violations[0].kind if r.violations else None)


def test_the_claims_are_declared_and_the_others_refused() -> None:
    assert supporting(lambda c: c.symmetry) == ["none", *CLAIMING]
    src = (EXAMPLES / "symmetric_workers.py").read_text()
    for name in REDUCTIONS:
        r = movers.check(source=src, reduction=name, symmetry="threads", max_states=50_000)
        if capabilities(name).symmetry:
            assert r.verdict == "ok" and r.symmetry == "threads", (name, r.error)
        else:
            assert r.verdict == "error" and r.error is not None, name
            assert "--symmetry threads: only with --reduction none, static-por, dwyer-d" in r.error, r.error


# Two threads spin on a local loop for ever, a third fails an assertion. Every spinning step is thread-local
# and invisible, so the ample sets keep choosing a spinner; the cycle proviso must see that (0, 1) closes a
# cycle of orbits with (1, 0) on the stack (they are one state up to renaming), though it is no cycle of
# states: else the checker never moves.
IGNORED = """\
import threading

def spin():
    i = 0
    while True:
        i = 1 - i

def checker():
    assert False

for k in range(SPINNERS):
    threading.Thread(target=spin).start()
threading.Thread(target=checker).start()
"""


@pytest.mark.parametrize("spinners", [2, 3])
@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize("reduction", CLAIMING)
def test_the_cycle_proviso_sees_orbits_on_the_stack(reduction: str, granularity: str, spinners: int) -> None:
    text = IGNORED.replace("SPINNERS", str(spinners))
    off = movers.check(source=text, reduction=reduction, granularity=granularity)
    on = movers.check(source=text, reduction=reduction, granularity=granularity, symmetry="threads")
    assert on.symmetry == "threads"
    assert _outcome(on) == _outcome(off) == ("violation", "assertion"), (reduction, on.stats.states)


def test_the_stack_set_answers_for_the_representative() -> None:
    # Renaming: the representative of both is the sorted pair; a plain set would tell them apart.
    s = OrbitSet(lambda x: tuple(sorted(x)))
    s.add((2, 1))
    assert (1, 2) in s and (2, 1) in s and (1, 3) not in s
    s.discard((1, 2))
    assert (2, 1) not in s and not s


@pytest.mark.parametrize("name", SYMMETRIC)
def test_together_fewer_states_than_either_alone(name: str) -> None:
    path = EXAMPLES / name
    sym = movers.check(path, symmetry="threads")
    red = movers.check(path, reduction="dwyer-d")
    both = movers.check(path, reduction="dwyer-d", symmetry="threads")
    assert sym.verdict == red.verdict == both.verdict == "ok"
    assert both.symmetry == "threads"
    assert both.stats.states < min(sym.stats.states, red.stats.states), (
        sym.stats.states, red.stats.states, both.stats.states)


@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize("reduction", ["none", *CLAIMING])
def test_counterexamples_replay(tmp_path: Path, reduction: str, granularity: str) -> None:
    path = EXAMPLES / "symmetric_local_work_bug.py"
    r = movers.check(path, reduction=reduction, granularity=granularity, symmetry="threads")
    assert r.symmetry == "threads" and _outcome(r) == ("violation", "assertion"), r.error
    f = tmp_path / "t.trail"
    write_trail(f, r, path.read_text(), str(path), options={"symmetry": "threads", "granularity": granularity})
    misfits: list[str] = []
    again = replay(path, read_trail(f), misfit=misfits.append)
    assert not misfits, misfits
    assert _outcome(again) == ("violation", "assertion") and again.headline.startswith("replayed")
    assert again.violations[0].message == r.violations[0].message
    assert len(again.violations[0].trace) == len(r.violations[0].trace)


# -- random symmetric and look-alike models ----------------------------------------------------------------------

# A worker's statements; ``{c}`` is a constant that a look-alike worker changes in one of them.
OPS = [
    "with m:\n    x = (x + {c}) % 3",
    "with m:\n    t = x\nwith m:\n    x = (t + {c}) % 3",
    "t = x\nx = (t + {c}) % 3",
    "y = (y + {c}) % 2",
    "assert x != 2 or y != 1",
    "for i in range(2):\n    t = (t + i + {c}) % 3",
    "l = [t, {c}]\nl[0] = l[1]\nt = l[0]",
    "with m:\n    with n:\n        y = (y + {c}) % 2",
    "with n:\n    with m:\n        x = (x + {c}) % 3",
    "with cv:\n    x = (x + {c}) % 3\n    cv.notify()",
    "with cv:\n    if x == 0:\n        cv.wait()",
    "wait_until(y == 0)",
    "r.acquire()\nr.acquire()\ny = (y + x) % 2\nr.release()\nr.release()",
]
# What a checker thread asserts about the globals.
CHECKS = ["assert not (x == 2 and y == 1)", "assert x != 1", "assert y == 0", "assert x == 1"]
# A last statement that spins for ever on local data: invisible, independent steps around a cycle.
SPIN = "while True:\n    t = 1 - t"


def _body(ops: list[str], consts: list[int], pad: str) -> list[str]:
    return [pad + ln for op, c in zip(ops, consts, strict=True) for ln in op.format(c=c).split("\n")]


@st.composite
def symmetric_models(draw: Any) -> str:
    """K identical workers running ``worker`` (locals, shared globals, locks, a condition, a local list),
    sometimes a checker thread that reads the globals, sometimes an invariant; and look-alikes: the last
    worker gets a different argument, or runs a copy of ``worker`` with one constant changed."""
    k = draw(st.integers(2, 3))
    spin = draw(st.integers(0, 2)) == 0
    # Spinning workers with a checker beside them are where the cycle proviso matters: they get one always,
    # and often nothing before the spin (else the checker is mostly explored before the workers spin).
    count = draw(st.sampled_from([0, 0, 1, 2]) if spin else st.integers(1, 3))
    ops = [draw(st.sampled_from(OPS)) for _ in range(count)]
    consts = [1] * len(ops)
    loop = bool(ops) and draw(st.booleans())
    lines = ["from movers.lang import *", "x = 0", "y = 0", "m = Lock()", "n = Lock()", "r = RLock()",
             "cv = Condition(m)" if draw(st.booleans()) else "cv = Condition()"]

    def function(name: str, cs: list[int]) -> list[str]:
        out = [f"def {name}(a):", "    global x, y", "    t = a"]
        pad = "    "
        if loop:
            out.append("    for j in range(2):")
            pad = "        "
        out += _body(ops, cs, pad)
        if spin:
            out += ["    " + ln for ln in SPIN.split("\n")]
        return out

    if draw(st.integers(0, 3)) == 0:  # an invariant makes the steps that write x or y visible (C2)
        lines += ["@invariant", "def bounded():", "    return x + y != 3"]
    lines += function("worker", consts)
    targets = ["worker"] * k
    args = [0] * k
    look = draw(st.sampled_from(["same", "argument", "constant"]))
    if look == "argument":
        args[-1] = 1
    elif look == "constant" and ops:
        changed = list(consts)
        changed[draw(st.integers(0, len(ops) - 1))] = 2
        lines += function("worker_b", changed)
        targets[-1] = "worker_b"
    starts = [f"Thread(target={f}, args=({a},)).start()" for f, a in zip(targets, args, strict=True)]
    if spin or draw(st.booleans()):
        lines += ["def checker():", "    " + draw(st.sampled_from(CHECKS))]
        # First or last: the ample sets try threads in their order, so either can be the one postponed.
        starts.insert(draw(st.sampled_from([0, len(starts)])), "Thread(target=checker).start()")
    lines += starts
    return "\n".join(lines) + "\n"


LIMITS = {"max_states": 20_000, "time_limit": 20}


def _agree(text: str, granularity: str) -> None:
    """Each claiming reduction under symmetry against the same reduction without it (and so against ``none``:
    every one of them preserves what these models can violate)."""
    note(text)
    for reduction in CLAIMING:
        off = movers.check(source=text, reduction=reduction, granularity=granularity, **LIMITS)
        on = movers.check(source=text, reduction=reduction, granularity=granularity, symmetry="threads", **LIMITS)
        assert "error" not in (off.verdict, on.verdict), (reduction, off.error, on.error)
        if "incomplete" in (off.verdict, on.verdict):
            continue
        assert on.symmetry == "threads", on.notes
        assert _outcome(on) == _outcome(off), (reduction, on.violations, off.violations)


RANDOM = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_random_symmetric_models_agree_with_symmetry_off(granularity: str) -> None:
    @RANDOM
    @given(symmetric_models())
    def run(text: str) -> None:
        _agree(text, granularity)

    run()
