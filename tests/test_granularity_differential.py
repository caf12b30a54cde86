"""Every reduction against the full search (``--reduction none``) at both granularities (``--granularity
access``, the default, and ``statement``): on every example, and (nightly, ``-m slow``) on the random
families of ``tests/strategies.py`` (``test_random_models.py`` runs the everyday share: the naive explorer
and static-por, optimistic and transactions, at both granularities). ``differential.run_differential``
says what must agree: the verdict, the kind of violation, and never more states than a complete ``none``."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES
from differential import run_differential
from hypothesis import HealthCheck, given, note, settings
from strategies import list_models, single_kind_models, value_models

from movers.reduce import BASELINE, REDUCTIONS

FILES = sorted(EXAMPLES.glob("*.py"))
GRANULARITIES = ("access", "statement")
ALL = [name for name in REDUCTIONS if name != BASELINE]
# --reduction transactions refuses the section 7 example: its exclusive predicates may be given or taken away
# by another thread (Flanagan & Qadeer's conditions (i) and (ii); test_transactions.py).
REFUSED = {("sc_example.py", "transactions")}


@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_reduction_agrees_with_none_on_the_examples(path, granularity: str) -> None:
    reductions = [name for name in ALL if (path.name, name) not in REFUSED]
    run_differential(path.read_text(), reductions, granularity=granularity, max_states=300_000, time_limit=300)


NIGHTLY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow  # twelve searches an example: nightly (README)
@pytest.mark.parametrize("granularity", GRANULARITIES)
@NIGHTLY
@given(case=single_kind_models())
def test_every_reduction_agrees_with_none_on_random_models(case: tuple[str, str], granularity: str) -> None:
    note(case[0])
    run_differential(case[0], ALL, granularity=granularity)


@pytest.mark.slow
@pytest.mark.parametrize("granularity", GRANULARITIES)
@NIGHTLY
@given(src=value_models())
def test_every_reduction_agrees_with_none_on_value_models(src: str, granularity: str) -> None:
    note(src)
    run_differential(src, ALL, compare_kinds=False, granularity=granularity)


@pytest.mark.slow
@pytest.mark.parametrize("granularity", GRANULARITIES)
@NIGHTLY
@given(src=list_models())
def test_every_reduction_agrees_with_none_on_list_models(src: str, granularity: str) -> None:
    note(src)
    run_differential(src, ALL, compare_kinds=False, granularity=granularity)
