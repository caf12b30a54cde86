from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import movers

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run(src: str, **kw):
    """Check a model given as (dedented) source text."""
    return movers.check(textwrap.dedent(src).lstrip("\n") + "\n", **kw)


def states(src: str, **kw) -> int:
    r = run(src, **kw)
    assert r.verdict == "ok", (r.verdict, r.error, r.violations)
    return r.stats.states


def agrees_with_none(path, reduction: str, fewer_states: bool = True, **kw):
    """Check ``path`` with ``none`` and with ``reduction``: same verdict, same kind of violation, and (for
    reductions whose states are states of the full system) never more states."""
    base = movers.check(path, **kw)
    r = movers.check(path, reduction=reduction, **kw)
    assert r.verdict == base.verdict, (r.error, [(v.kind, v.message) for v in r.violations])
    if base.violations:
        assert r.violations[0].kind == base.violations[0].kind
    elif fewer_states:
        assert r.stats.states <= base.stats.states
    return r


def search_summary(r: movers.Result) -> tuple:
    """What two runs of the same search must agree on, state for state: verdict, states, transitions, each
    violation (kind, message) and the length of its trace."""
    return (r.verdict, r.stats.states, r.stats.transitions, tuple((v.kind, v.message) for v in r.violations),
            tuple(len(v.trace) for v in r.violations))


@pytest.fixture
def check():
    return run
