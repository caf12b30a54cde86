"""movers: an explicit-state model checker for multithreaded programs modelled in a subset of Python.

``movers.check(model, reduction="none", search="dfs", …)`` returns a ``Result`` with the fields of the
``--json`` contract. See docs/ for the language, the reductions and the command line.

The names below are imported on first use (PEP 562): ``python -m movers.cli`` then installs its Ctrl-C
handler before the checker's modules are loaded, so that an early Ctrl-C never prints a traceback.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from movers.version import __version__ as __version__

if TYPE_CHECKING:
    from movers.checker import Checker, check, load
    from movers.report.result import Result, Stats, TraceStep, Violation

_WHERE = {
    "check": "movers.checker",
    "load": "movers.checker",
    "Checker": "movers.checker",
    "Result": "movers.report.result",
    "Stats": "movers.report.result",
    "TraceStep": "movers.report.result",
    "Violation": "movers.report.result",
}

__all__ = ["check", "load", "Checker", "Result", "Stats", "TraceStep", "Violation"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'movers' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
