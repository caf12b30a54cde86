"""Differential checking of reductions against the full search (``--reduction none``).

``run_differential(src, reductions)`` checks ``src`` with ``none`` and with each reduction and raises
``AssertionError`` (with the model's source) when a reduction disagrees with ``none``:

- a reduction reports ``error`` (the model compiles, since ``none`` did not report ``error``);
- ``none`` finds a violation and the reduction says ``ok`` (a missed bug: the worst failure);
- ``none`` says ``ok`` and the reduction reports a violation;
- both searches are complete and their verdicts differ;
- both report violations and, with ``compare_kinds``, the kinds differ. Pass ``compare_kinds=False`` for
  models where several kinds of violation are reachable: a search that stops at its first violation may
  then legitimately stop at a different kind (``tests/strategies.single_kind_models`` generates models
  with only one possible kind).

- both say ``ok`` and the reduction stored more states than ``none``: every reduction stores states of the
  program (transactions normalise the phases they add, ``reduce/phases.py``), a subset of those the full
  search reaches, so ``states`` may only shrink. (A search that stops at a violation has stored an
  arbitrary part of its space, so counts are compared only when both searches completed with ``ok``.)

An ``incomplete`` verdict (a limit was hit) on either side is compared only for ok-versus-violation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def search_summary(result: Any) -> tuple[object, ...]:
    """What two runs of one search must share: verdict, states, transitions, depth, and each violation's kind,
    message and trace length (the fast path against the closures, a shortcut against its absence)."""
    return (result.verdict, result.stats.states, result.stats.transitions, result.stats.max_depth,
            tuple((v.kind, v.message, len(v.trace)) for v in result.violations))


def violation_kinds(result: Any) -> list[str]:
    """The sorted distinct kinds of the violations a result reports."""
    return sorted({v.kind for v in result.violations})


def run_differential(
    src: str,
    reductions: Iterable[str] = ("none",),
    *,
    compare_kinds: bool = True,
    **kw: Any,
) -> dict[str, Any]:
    """Check ``src`` with ``none`` and every reduction in ``reductions``; return the results by name.

    Keyword arguments go to ``movers.check`` (``search``, ``max_states`` — default 20000 —, ``time_limit``…).
    """
    import movers

    kw.setdefault("max_states", 20000)
    base = movers.check(src, reduction="none", **kw)
    results: dict[str, Any] = {"none": base}
    if base.verdict == "error":
        raise AssertionError(f"--reduction none reports an error: {base.error}\n--- model ---\n{src}")
    problems: list[str] = []
    for name in reductions:
        if name == "none":
            continue
        r = movers.check(src, reduction=name, **kw)
        results[name] = r
        complete = "incomplete" not in (base.verdict, r.verdict)
        if r.verdict == "error":
            problems.append(f"{name}: error: {r.error}")
        elif base.verdict == "violation" and r.verdict == "ok":
            problems.append(f"{name}: ok, but none finds {violation_kinds(base)} (a missed violation)")
        elif base.verdict == "ok" and r.verdict == "violation":
            problems.append(f"{name}: finds {violation_kinds(r)}, but none says ok")
        elif complete and base.verdict != r.verdict:
            problems.append(f"{name}: verdict {r.verdict}, none: {base.verdict}")
        elif compare_kinds and base.verdict == r.verdict == "violation" and violation_kinds(base) != violation_kinds(r):
            problems.append(f"{name}: kinds {violation_kinds(r)}, none: {violation_kinds(base)}")
        elif base.verdict == r.verdict == "ok" and r.stats.states > base.stats.states:
            problems.append(f"{name}: stores {r.stats.states} states, more than none's {base.stats.states}")
    if problems:
        raise AssertionError("\n".join(problems) + f"\n--- model ---\n{src}")
    return results
