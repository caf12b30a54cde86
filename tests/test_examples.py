"""Every example's verdict is the one its header states (issue item 10)."""

from __future__ import annotations

import re

import pytest
from conftest import EXAMPLES

import movers

FILES = sorted(EXAMPLES.glob("*.py"))


def expected(path) -> tuple[str, str | None]:
    m = re.search(r"^# Expected: (ok|violation)(?: \(([\w-]+)\))?", path.read_text(), re.M)
    assert m, f"{path.name} has no '# Expected:' line"
    return m.group(1), m.group(2)


def test_there_are_examples() -> None:
    names = {f.name for f in FILES}
    assert {"sc_example.py", "fq_counter.py", "bounded_buffer.py", "dining_philosophers.py",
            "racy_counter.py"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_example_verdict(path) -> None:
    verdict, kind = expected(path)
    r = movers.check(path)
    assert r.verdict == verdict, (r.error, [(v.kind, v.message) for v in r.violations])
    if kind:
        assert r.violations[0].kind == kind
        assert r.violations[0].trace or kind == "deadlock"


STATEMENT = [p for p in FILES if re.search(r"^# Statement granularity: ", p.read_text(), re.M)]


@pytest.mark.parametrize("path", STATEMENT, ids=lambda p: p.name)
def test_example_verdict_at_statement_granularity(path) -> None:
    """``# Statement granularity:``: the verdict under --granularity statement, where it differs (the papers'
    examples whose unlocked read-modify-writes CPython can interleave)."""
    m = re.search(r"^# Statement granularity: (ok|violation)", path.read_text(), re.M)
    assert m
    r = movers.check(path, granularity="statement")
    assert r.verdict == m.group(1), [(v.kind, v.message) for v in r.violations]
    assert movers.check(path).verdict != m.group(1)  # else the line would not be needed


def test_sc_example_106_states() -> None:
    assert movers.check(EXAMPLES / "sc_example.py", granularity="statement").stats.states == 106


ATOMIC = [p for p in FILES if re.search(r"^# Atomicity: ", p.read_text(), re.M)]


@pytest.mark.parametrize("path", ATOMIC, ids=lambda p: p.name)
def test_example_atomicity_verdict(path) -> None:
    """The `# Atomicity:` line is the verdict of --atomicity commit and auto; --atomicity reduction, which is
    sound, never says ok where they find a violation."""
    m = re.search(r"^# Atomicity: (ok|violation)(?: \(([\w-]+)\))?", path.read_text(), re.M)
    assert m, path.name
    for mode in ("commit", "auto"):
        r = movers.check(path, atomicity=mode, time_limit=120)
        assert r.verdict == m.group(1), (mode, [(v.kind, v.message) for v in r.violations])
        if m.group(2):
            assert r.violations[0].kind == m.group(2)
    if m.group(1) == "violation":
        assert movers.check(path, atomicity="reduction", time_limit=120).verdict == "violation"


# Models too large for an exhaustive search (examples/large/: a full state space beyond 10^8 states): their
# `# Expected:` verdict is what --simulate and --swarm 2 find, with a fixed seed.
LARGE = sorted((EXAMPLES / "large").glob("*.py"))


def test_there_are_large_examples() -> None:
    assert "deep_counter.py" in {f.name for f in LARGE}


@pytest.mark.parametrize("mode", [{"simulate": True}, {"swarm": 2}], ids=["simulate", "swarm"])
@pytest.mark.parametrize("path", LARGE, ids=lambda p: p.name)
def test_large_example_verdict_by_bug_hunting(path, mode) -> None:
    verdict, kind = expected(path)
    assert re.search(r"^# Smoke test: ", path.read_text(), re.M)
    r = movers.check(path, seed=0, time_limit=300, **mode)
    assert r.verdict == verdict, (r.verdict, r.limit, r.notes)
    if kind:
        assert r.violations[0].kind == kind
