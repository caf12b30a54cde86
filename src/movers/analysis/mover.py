"""What kind of mover a step is: Flanagan & Qadeer, *Transactions for Software Model Checking* (SoftMC 2003,
``papers/004``), section 4.1, specialised to locks as in section 5. Shared by the transactions reduction's
instrumented program P# (``reduce/phases.py``) and the atomicity instrumentations
(``instrument/commit.py``, ``instrument/reducible.py``).

Each executed step is a **right mover**, a **left mover**, **both**, or a **non-mover**, from the exclusive
access predicates E(t, x) of the locations it accesses (section 4.1: right mover if t has exclusive access
to everything it accesses in the post-state, left mover if in the pre-state):

- lock acquire, the re-acquire after ``wait``, entering a monitor, semaphore acquire: right movers
  (section 5; 5.2 re-entrant locks; 5.3 wait is a left mover then a right mover);
- lock release, the release-and-wait half of ``wait``, leaving a monitor, semaphore release: left movers;
- ``notify``/``notify_all``: both (they need the lock, and only its holder can touch the wait set, 5.3);
- ``start``, ``join``, ``is_alive()``, a try-acquire (``acquire(blocking=False)``, ``acquire(timeout=x)``)
  and ``indivisible`` blocks that synchronise: non-movers;
- a data step (assignments, conditions, ``assert``, ``assume``, ``wait_until``, calls): both if the thread
  has exclusive access to every location it accesses (unshared data 5.1, lock-protected data, read-only
  data), a non-mover if it touches an unprotected location.
"""

from __future__ import annotations

from typing import Any

from movers.analysis.classify import Classification
from movers.semantics.system import Outcome

RIGHT, LEFT, BOTH, NON = "right", "left", "both", "non"
RIGHT_KINDS = frozenset({"acquire", "reacquire"})
LEFT_KINDS = frozenset({"release", "wait"})
# A try-acquire (acquire without blocking, or with a timeout) gives up when the lock is held: its outcome reads
# the lock's state, so it commutes with no operation on that lock. ``t.is_alive()`` reads whether a thread ended.
NON_KINDS = frozenset({"start", "join", "indivisible", "try_acquire", "is-alive"})


def classify_step(cls: Classification, inner: Any, state: tuple, t: int, node: Any, outs: list[Outcome]) -> str:
    """What kind of mover thread t's step is (module docstring), from its node and, for data steps, the
    exclusive access predicates of what each resolution accessed. A broken declared predicate becomes a
    ``discipline`` violation on that resolution; a broken guess raises ``Refine``."""
    kind = node.kind
    if kind in RIGHT_KINDS:
        mover = RIGHT
    elif kind in LEFT_KINDS:
        mover = LEFT
    elif kind == "notify":
        mover = BOTH
    elif kind in NON_KINDS:
        mover = NON
    else:
        mover = BOTH
    for o in outs:
        eff = o.effect
        if eff is None:
            continue
        nonmover, bad = cls.check_access(inner, state, t, eff.reads, eff.writes)
        if bad is not None and o.violation is None:
            o.violation = ("discipline", bad)
            o.state = None
        if nonmover:
            mover = NON  # e.g. a lock reached through an unprotected reference
        if eff.started:
            mover = NON
    if cls.lock_state_observed and (kind in RIGHT_KINDS or kind in LEFT_KINDS or kind == "notify"):
        mover = NON  # some thread reads lock state as data (m.owner): a lock operation commutes with nothing
    return mover


__all__ = ["BOTH", "LEFT", "LEFT_KINDS", "NON", "NON_KINDS", "RIGHT", "RIGHT_KINDS", "classify_step"]
