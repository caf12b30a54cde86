"""Scheduling policies: given a state, which moves to explore (docs/reductions.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from movers.reduce.base import Move, Reduction
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


def make_reduction(name: str, ts: Any, **options: Any) -> Reduction:
    if name not in REDUCTIONS:
        known = ", ".join(REDUCTIONS)
        raise ValueError(f"unknown reduction '{name}' (known: {known})")
    return REDUCTIONS[name](ts, **options)


def checks_discipline(name: str) -> bool:
    """Does this reduction check declared exclusive access predicates itself?"""
    return bool(getattr(REDUCTIONS.get(name), "checks_discipline", False))


__all__ = ["Move", "Reduction", "REDUCTIONS", "make_reduction", "checks_discipline"]
