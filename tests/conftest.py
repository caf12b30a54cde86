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


@pytest.fixture
def check():
    return run
