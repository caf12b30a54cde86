"""Scheduling policies: given a state, which moves to explore (docs/reductions.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from movers.reduce.base import Capabilities, Move, Reduction
from movers.reduce.dwyer import DwyerD, DwyerDA, DwyerS, DwyerSDA
from movers.reduce.locking import DwyerLD, DwyerLDWSLdom, DwyerWSL, DwyerWSLdom
from movers.reduce.none import NoReduction
from movers.reduce.optimistic import Optimistic
from movers.reduce.static_por import StaticPOR
from movers.reduce.transactions import Transactions

REDUCTIONS: dict[str, Callable[..., Reduction]] = {
    "none": NoReduction,
    "static-por": StaticPOR,
    "optimistic": Optimistic,
    "transactions": Transactions,
    "dwyer-d": DwyerD,
    "dwyer-s": DwyerS,
    "dwyer-da": DwyerDA,
    "dwyer-sda": DwyerSDA,
    "dwyer-wsl": DwyerWSL,
    "dwyer-wsldom": DwyerWSLdom,
    "dwyer-ld": DwyerLD,
    "dwyer-ld+wsldom": DwyerLDWSLdom,
}
# The reduction that explores every interleaving: what ``movers compare`` measures the others against.
BASELINE = "none"


def make_reduction(name: str, ts: Any, **options: Any) -> Reduction:
    if name not in REDUCTIONS:
        known = ", ".join(REDUCTIONS)
        raise ValueError(f"unknown reduction '{name}' (known: {known})")
    return REDUCTIONS[name](ts, **options)


def capabilities(name: str) -> Capabilities:
    """What the reduction ``name`` declares it supports (``Capabilities``)."""
    return REDUCTIONS[name].capabilities  # type: ignore[attr-defined]


def checks_discipline(name: str) -> bool:
    """Does this reduction check declared exclusive access predicates itself?"""
    return capabilities(name).checks_discipline


def supporting(test: Callable[[Capabilities], bool]) -> list[str]:
    """The reductions whose capabilities pass ``test``, in the registry's order."""
    return [n for n in REDUCTIONS if test(capabilities(n))]


def names_text(names: list[str]) -> str:
    """Reduction names for a message: ``none or optimistic``; the Dwyer et al. family as one."""
    if len(names) <= 2:
        return " or ".join(names)
    own = [n for n in names if not n.startswith("dwyer-")]
    return ", ".join(own) + (" or the dwyer-* strategies" if len(own) < len(names) else "")


__all__ = ["BASELINE", "Capabilities", "Move", "Reduction", "REDUCTIONS", "capabilities", "checks_discipline",
           "make_reduction", "names_text", "supporting"]
