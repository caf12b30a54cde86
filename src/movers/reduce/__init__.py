"""Scheduling policies: given a state, which moves to explore (DESIGN.md, "Reductions")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from movers.reduce.base import Move, Reduction
from movers.reduce.none import NoReduction

REDUCTIONS: dict[str, Callable[[Any], Reduction]] = {"none": NoReduction}


def make_reduction(name: str, ts: Any) -> Reduction:
    if name not in REDUCTIONS:
        known = ", ".join(sorted(REDUCTIONS))
        raise ValueError(f"unknown reduction '{name}' (known: {known})")
    return REDUCTIONS[name](ts)


__all__ = ["Move", "Reduction", "REDUCTIONS", "make_reduction"]
