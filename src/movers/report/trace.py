"""Counterexamples at step granularity: replay the steps a search recorded and say what each changed.

Whatever moves a reduction explored, the search records every atomic step (thread, choices); replaying them
on the transition system gives the interleaving a user can follow, with each step's thread, line, source and
the variables it changed. Heap objects are named by a path from a global (``x[1]``, ``buf.items[0]``,
``m0.owner``) or from a local of the moving thread, so names survive the heap's canonical renumbering.
"""

from __future__ import annotations

from typing import Any

from movers.ir.program import Program
from movers.report.result import TraceStep
from movers.semantics.state import State
from movers.semantics.view import view


def changes(program: Program, before: State, after: State, t: int) -> dict[str, str]:
    # Locals are compared in the frame the step started in; a call shows the callee's parameters, a
    # return shows nothing of the caller's unchanged locals.
    db, da = len(before[2][t]), len(after[2][t]) if t < len(after[2]) else 0
    depth = db - 1
    if da > db:
        a = view(program, before, t, -1)
        b = view(program, after, t)
    else:
        # Same frame, or a return: compare the frame that is on top afterwards (the caller receiving the
        # value), which exists in both states.
        keep = depth if da == db else da - 1
        a = view(program, before, t, keep)
        b = view(program, after, t, keep)
    changed = {k: v for k, v in b.items() if a.get(k) != v}
    # Names that disappear: a monitor fully released, a wait set emptied, a list or object dropped.
    for k in a:
        if k not in b:
            if k.endswith(".owner"):
                changed[k] = "None"
            elif k.endswith(".waiting"):
                changed[k] = "()"
    started = len(after[2]) - len(before[2])
    for k in range(started):
        changed[f"thread {len(before[2]) + k}"] = "started"
    if before[2][t] and not after[2][t]:
        changed[f"thread {t}"] = "terminated"
    return changed


def replay(ts: Any, steps: list[tuple[int, tuple[int, ...]]]) -> list[TraceStep]:
    """The trace of ``steps`` from the initial state."""
    program = ts.program
    state = ts.initial()
    out: list[TraceStep] = []
    for t, choices in steps:
        o = ts.execute_choice(state, t, choices)
        node = o.node
        ch = changes(program, state, o.state, t) if o.state is not None else {}
        if len(choices) and any(choices):
            ch["choice"] = ", ".join(str(c) for c in choices)
        out.append(TraceStep(t, node.line, node.source, ch))
        if o.state is None:
            break
        state = o.state
    return out
