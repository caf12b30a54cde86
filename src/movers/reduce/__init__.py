"""Scheduling policies: given a state, which moves to explore (DESIGN.md, "Reductions")."""

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


def refusal(options: Any) -> str | None:
    """Why the reduction of ``options`` (``movers.options.Options``) refuses the rest of them, from what it
    declares (``Capabilities``), or None."""
    name = options.reduction
    caps = capabilities(name)
    if options.max_violations > 1 and not caps.all_violations:
        return f"--all-violations / --max-violations: with the depth-first search only, not with --reduction {name}"
    if options.workers > 1 and not caps.workers:
        return (f"--workers {options.workers}: the parallel search is the full search (--reduction "
                f"{names_text(supporting(lambda c: c.workers))}, depth-first, exact or hashcompact store) for now, "
                f"not with --reduction {name}")
    if options.symmetry == "threads" and not caps.symmetry:
        return (f"--symmetry threads: only with --reduction {names_text(supporting(lambda c: c.symmetry))} for now "
                f"(--reduction {name} classifies locations by the thread that touches them, which renaming threads "
                "changes)")
    if options.store not in caps.stores:
        return (f"--store {options.store}: not with --reduction {name}, whose passes re-expand every stored state "
                "(it needs the states themselves)")
    mode = options.atomicity
    if mode is not None and mode != "proof" and mode not in caps.atomicity:
        allowed = supporting(lambda c: mode in c.atomicity)
        return (f"--atomicity {mode}: only with --reduction {names_text(allowed)} for now; no other reduction is "
                f"shown yet to preserve atomicity violations (--reduction {name} refused)")
    return None


__all__ = ["Capabilities", "Move", "Reduction", "REDUCTIONS", "capabilities", "checks_discipline", "make_reduction",
           "refusal", "supporting"]
