"""The named configurations of Dwyer, Hatcliff, Robby & Ranganath's reductions (papers/002), one per column
of the paper's Tables 1-2 (section 8):

| name        | column | what                                                                  |
|-------------|--------|-----------------------------------------------------------------------|
| ``dwyer-d``   | (D)    | ample sets, thread-locality by dynamic escape analysis (section 5.2)  |
| ``dwyer-s``   | (S)    | ample sets, thread-locality by static escape analysis (section 5.1)   |
| ``dwyer-da``  | (DA)   | (D) and avoiding state storage (section 7)                            |
| ``dwyer-sda`` | (SDA)  | (DA), where statically thread-local steps skip the heap scan          |

The locking columns (WSL, WSL^dom, LD, LD+WSL^dom) are in ``locking.py``. Every configuration preserves
assertion failures, deadlocks, invariants, declared disciplines and runtime errors (``ample.py`` argues it),
not atomicity violations (the ample set does not keep ``with atomic():`` blocks whole). (D) and (S) also
preserve liveness (``--liveness``, every ``--fairness``): the fair-cycle search builds their reduced graph
breadth first, where DA stores every state anyway (docs/reductions.md, "Liveness").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from movers.analysis.escape import Sda, StaticThreadLocal, ThreadLocal
from movers.reduce.ample import Ample


class DwyerD(Ample):
    """(D): Algorithm 2 with Algorithm 3's checkC1."""

    name = "dwyer-d"
    # Liveness under every fairness (docs/reductions.md, "Liveness"): checkC1 makes an ample step independent of
    # every step of every other thread, enabling and disabling included, which is what keeps fairness.
    capabilities = replace(Ample.capabilities, liveness=True)

    def __init__(self, ts: Any) -> None:
        super().__init__(ts, ThreadLocal(), avoid_storage=False)


class DwyerDA(Ample):
    """(DA): (D), and states reached by an independent step (or the only enabled thread's) are not stored."""

    name = "dwyer-da"

    def __init__(self, ts: Any) -> None:
        super().__init__(ts, ThreadLocal(), avoid_storage=True)


def _static(ts: Any) -> Any:
    from movers.analysis.static_escape import analyse

    return analyse(ts.program)


class DwyerS(Ample):
    """(S): Algorithm 2, checkC1 from the static escape analysis (``analysis/static_escape.py``)."""

    name = "dwyer-s"
    capabilities = replace(Ample.capabilities, liveness=True)  # as (D)

    def __init__(self, ts: Any, static: Any = None) -> None:
        super().__init__(ts, StaticThreadLocal(static if static is not None else _static(ts)))


class DwyerSDA(Ample):
    """(SDA): (DA), where a statically thread-local step is independent without the heap scan."""

    name = "dwyer-sda"

    def __init__(self, ts: Any, static: Any = None) -> None:
        super().__init__(ts, Sda(static if static is not None else _static(ts)), avoid_storage=True)


__all__ = ["DwyerD", "DwyerDA", "DwyerS", "DwyerSDA"]


# -- the locking columns (owner "locking": see locking.py) -------------------------------------------------------
# (WSL), (WSL^dom), (LD), (LD+WSL^dom) of Table 2, each with (DA). Register them in ``reduce/__init__.py``:
# "dwyer-wsl": DwyerWSL, "dwyer-wsldom": DwyerWSLdom, "dwyer-ld": DwyerLD, "dwyer-ld+wsldom": DwyerLDWSLdom.

from movers.reduce.locking import DwyerLD, DwyerLDWSLdom, DwyerWSL, DwyerWSLdom  # noqa: E402

__all__ += ["DwyerWSL", "DwyerWSLdom", "DwyerLD", "DwyerLDWSLdom"]
