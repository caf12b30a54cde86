"""benchmarks/run.py's ``--variant`` models: the papers' unlocked counter updates made ``with indivisible():``,
so that Stoller & Cohen's example and Flanagan & Qadeer's counter can be measured at access granularity
(docs/reductions.md, "Reduction factors at both granularities"). Each rewrite must still apply to the example,
and the variant must be the papers' program again: the published state counts at both granularities."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import ROOT

import movers

sys.path.insert(0, str(ROOT / "benchmarks"))
import run as bench  # noqa: E402  (benchmarks/run.py)


@pytest.mark.parametrize("name", sorted(bench.VARIANTS))
def test_every_variant_rewrites_its_example(name: str, tmp_path: Path) -> None:
    path = bench.variant_model(name, out_dir=tmp_path)
    assert path.read_text().count("with indivisible():") >= 1


@pytest.mark.parametrize("granularity", ["statement", "access"])
def test_stoller_cohen_variant_has_the_papers_counts_at_both_granularities(granularity: str, tmp_path: Path) -> None:
    """Section 7: 106 states, 62 reduced. At access granularity the example as published loses an update of
    the barrier counter (a deadlock); with ``y += 1`` one step it is the paper's program at both."""
    path = bench.variant_model("sc_example_indivisible", out_dir=tmp_path)
    full = movers.check(path, granularity=granularity)
    reduced = movers.check(path, reduction="optimistic", granularity=granularity)
    assert (full.verdict, full.stats.states) == ("ok", 106)
    assert (reduced.verdict, reduced.stats.states) == ("ok", 62)


def test_the_published_examples_are_racy_at_access_granularity() -> None:
    """Why the variants exist: the unlocked updates lose one at access granularity, never at statement."""
    for name, kind in (("sc_example.py", "deadlock"), ("fq_counter.py", "assertion")):
        path = ROOT / "examples" / name
        assert movers.check(path, granularity="statement").verdict == "ok"
        r = movers.check(path, granularity="access")
        assert r.verdict == "violation" and r.violations[0].kind == kind, (name, r.verdict)


def test_fq_counter_variant_verifies_at_access_granularity(tmp_path: Path) -> None:
    path = bench.variant_model("fq_counter_indivisible", out_dir=tmp_path)
    for reduction in ("none", "transactions"):
        r = movers.check(path, reduction=reduction, granularity="access")
        assert r.verdict == "ok", (reduction, r.error)
