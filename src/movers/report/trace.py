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
    return replay_with_state(ts, steps)[0]


def replay_with_state(ts: Any, steps: list[tuple[int, tuple[int, ...]]]) -> tuple[list[TraceStep], Any]:
    """The trace of ``steps`` from the initial state, and the state where it ends (before a step that
    failed)."""
    program = ts.program
    state = ts.initial()
    out: list[TraceStep] = []
    for t, choices in steps:
        o = ts.execute_choice(state, t, choices, True)
        node = o.node
        ch = changes(program, state, o.state, t) if o.state is not None else {}
        if o.state is not None and o.effect is not None:
            # A write of the value a global already had changes nothing, but it is often the step that matters
            # (the lost update: count = 1 written over count = 1): show it.
            for w in o.effect.writes:
                if type(w) is int and 0 <= w < len(program.globals) and program.globals[w] not in ch:
                    name = program.globals[w]
                    value = view(program, o.state, t, -1).get(name)
                    if value is not None:
                        ch[name] = f"{value} (unchanged)"
        if len(choices) and any(choices):
            ch["choice"] = ", ".join(str(c) for c in choices)
        th = state[2][t] if t < len(state[2]) else ()
        out.append(TraceStep(t, node.line, node.source, ch, th[0][0].name if th else ""))
        if o.state is None:
            break
        state = o.state
    return out, state


def describe_state(ts: Any, state: Any) -> dict[str, Any]:
    """``full_state``, or what went wrong in describing it (a report never fails because of it)."""
    try:
        return full_state(ts, state)
    except Exception as e:  # noqa: BLE001
        return {"error": f"the state could not be described: {type(e).__name__}: {e}"}


def full_state(ts: Any, state: Any) -> dict[str, Any]:
    """Everything at one state, as users name it (``--full-state``, and the JSON's ``state``): the globals and
    the heap by path, and per thread its status (running, blocked and on what, terminated), its stack (each
    frame's function and line, innermost last), the locals of its current frame, and the locks it holds."""
    program = ts.program
    shared = view(program, state, 0, -1)
    threads = []
    for t, th in enumerate(state[2]):
        if not th:
            threads.append({"thread": t, "status": "terminated", "stack": [], "locals": {}, "holds": []})
            continue
        node = ts.next_node(state, t)
        blocked = not ts.enabled(state, t)
        waits = ts.waiting_on(state, t) if blocked else None
        mine = view(program, state, t)
        holds = sorted(p[: -len(".owner")] for p, v in shared.items() if p.endswith(".owner") and v == str(t))
        threads.append({
            "thread": t, "status": "blocked" if blocked else "can move", "waits": waits,
            "stack": [{"function": f[0].name, "line": f[0].nodes[f[1]].line} for f in th],
            "next": node.source if node is not None else "",
            "locals": {k: v for k, v in mine.items() if k not in shared},
            "holds": holds,
        })
    return {"globals": shared, "threads": threads}
