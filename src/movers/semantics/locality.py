"""Steps that depend only on their own thread: what a reduction may remember per thread.

A reduction asks for the same thread's step from many states that differ only in the *other* threads (every
combination of where they are). Where the step reads and writes nothing but its own thread's stack, the
globals and the heap, its resolutions are the same in all of those states, up to the other threads, which
it leaves as they are: the reduction can execute and classify it once and replay it onto the others
(``reduce/optimistic.py``, ``reduce/phases.py``). This module says where that is exact:

- the step is a plain statement or a lock operation (``LOCAL_KINDS``): ``join`` reads another thread,
  ``start`` adds one, ``notify`` and ``wait`` act on waiting threads, ``assume`` prunes; a step is only asked
  for where its thread is enabled, so a lock operation's guard is no input;
- the thread is not inside a constructor (the discipline's init rule asks whether the object escaped to
  another thread, which reads the other threads);
- every resolution left the other threads' stacks as they were (the same objects), allocated nothing,
  started no thread, and needed no canonical walk of the heap (whose numbering depends on what every thread
  reaches: ``Effect.walked``).
"""

from __future__ import annotations

from typing import Any

from movers.semantics.system import Outcome

LOCAL_KINDS = frozenset({"stmt", "branch", "loop", "assert", "return", "acquire", "release"})


def local_thread(state: tuple, t: int) -> tuple | None:
    """Thread t's stack if its next step is of a kind that depends only on it, the globals and the heap (and
    it is not inside a constructor), else None."""
    th = state[2][t]
    if not th:
        return None
    top = th[-1]
    if top[0].nodes[top[1]].kind not in LOCAL_KINDS:
        return None
    for frame in th:
        if frame[0].name.endswith(".__init__"):
            return None
    return th


def stays_local(outs: list[Outcome], threads: tuple, t: int) -> bool:
    """Did every resolution change only thread t's stack, the globals and the heap, with no canonical walk?"""
    for o in outs:
        s = o.state
        if s is None:
            continue
        eff = o.effect
        if eff is None or eff.walked or eff.started or eff.allocated or eff.renumbered is not None:
            return False
        t2 = s[2]
        if len(t2) != len(threads) or any(t2[j] is not threads[j] for j in range(len(threads)) if j != t):
            return False
    return True


def remember(outs: list[Outcome], t: int) -> list[tuple | None]:
    """What a replay needs of each resolution: its globals, heap and thread t's stack (None: no successor)."""
    return [(o.state[0], o.state[1], o.state[2][t]) if o.state is not None else None for o in outs]


def replay(parts: list[tuple | None], outs: list[Outcome], threads: tuple, t: int,
           extra: list[tuple] | None = None) -> list[Outcome]:
    """The remembered resolutions as Outcomes from a state with these ``threads``: each successor's globals,
    heap and thread t's stack, the other threads as they are, and ``extra[k]`` appended to the k-th state
    (an instrumentation's ghost parts). A resolution with no successor (a violation, a pruned run) is
    returned as it was."""
    out: list[Outcome] = []
    for k, (part, o) in enumerate(zip(parts, outs, strict=True)):
        if part is None:
            out.append(o)
            continue
        nt = list(threads)
        nt[t] = part[2]
        state: Any = (part[0], part[1], tuple(nt))
        if extra is not None:
            state = state + extra[k]
        out.append(Outcome(state, o.choices, o.node, o.violation, o.effect, t))
    return out


__all__ = ["LOCAL_KINDS", "local_thread", "remember", "replay", "stays_local"]
