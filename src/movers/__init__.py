"""movers: an explicit-state model checker for multithreaded programs modelled in a subset of Python.

``movers.check(model, reduction="none", search="dfs", …)`` returns a ``Result`` with the fields of the
``--json`` contract. See docs/ for the language, the reductions and the command line.
"""

from movers.checker import Checker, check, load
from movers.report.result import Result, Stats, TraceStep, Violation

__all__ = ["check", "load", "Checker", "Result", "Stats", "TraceStep", "Violation"]
__version__ = "0.1.0"
