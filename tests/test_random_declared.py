"""Random models with a declared discipline: every reduction agrees with the full search on whether the
model goes wrong (a violated declaration included), since each checks declared predicates its own way:
the full search and static-por on every step, optimistic in the reduced system (q), transactions through
P#'s delta assertions."""

from __future__ import annotations

from differential import run_differential
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from strategies import models

DECLARATIONS = ["guarded_by(x, m0)", "thread_local(x, 0)", "exclusive(x, lambda t: m0.owner == t)"]


@st.composite
def declared_models(draw: st.DrawFn) -> str:
    src = draw(models())
    decl = draw(st.sampled_from(DECLARATIONS))
    head, sep, tail = src.partition("\ndef ")
    return f"{head}\n{decl}\n{sep}{tail}"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(declared_models())
def test_declared_disciplines_agree_with_none(src: str) -> None:
    note(src)
    run_differential(src, ["static-por", "optimistic", "transactions"], compare_kinds=False)
