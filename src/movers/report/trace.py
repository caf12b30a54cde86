"""Counterexamples at step granularity: replay the steps a search recorded and say what each changed.

Whatever moves a reduction explored, the search records every atomic step (thread, choices); replaying them
on the transition system gives the interleaving a user can follow, with each step's thread, line, source and
the variables it changed. Heap objects are named by a path from a global (``x[1]``, ``buf.items[0]``,
``m0.owner``) or from a local of the moving thread, so names survive the heap's canonical renumbering.
"""

from __future__ import annotations

from typing import Any

from movers.ir.machine import show
from movers.ir.program import CONDITION, LOCK, RLOCK, SEMAPHORE, UNBOUND, Program, Ref
from movers.report.result import TraceStep
from movers.semantics.state import State


def _value(state: State, v: Any) -> str:
    if type(v) is Ref:
        obj = state[1][v.i]
        if obj[0].is_list:
            return "[" + ", ".join(_value(state, x) for x in obj[2:]) + "]"
        return f"<{obj[0].name}>"
    if type(v) is tuple:
        inner = ", ".join(_value(state, x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    return show(v)


def _expand(state: State, path: str, r: Ref, out: dict[str, str], seen: set[int]) -> None:
    if r.i in seen:
        return
    seen.add(r.i)
    obj = state[1][r.i]
    cls = obj[0]
    if cls.is_list:
        for k, v in enumerate(obj[2:]):
            _leaf(state, f"{path}[{k}]", v, out, seen)
        return
    if cls is LOCK or cls is RLOCK:
        out[f"{path}.owner"] = show(obj[2])
        return
    if cls is SEMAPHORE:
        out[f"{path}.value"] = show(obj[2])
        return
    if cls is CONDITION:
        out[f"{path}.waiting"] = show(obj[3])
        _expand(state, f"{path}.lock", obj[2], out, seen)
        return
    if obj[1] is not None:
        mon = obj[1]
        out[f"{path}.owner"] = show(mon[0])
        if mon[2]:
            out[f"{path}.waiting"] = show(mon[2])
    for name, v in zip(cls.fields, obj[2:], strict=False):
        if not name.startswith("_") and v is not UNBOUND:
            _leaf(state, f"{path}.{name}", v, out, seen)


def _leaf(state: State, path: str, v: Any, out: dict[str, str], seen: set[int]) -> None:
    if type(v) is Ref:
        obj = state[1][v.i]
        if obj[0].is_list:
            if v.i in seen:
                out[path] = _value(state, v)
            _expand(state, path, v, out, seen)
        else:
            out[path] = _value(state, v)
            _expand(state, path, v, out, seen)
    else:
        out[path] = _value(state, v)


def view(program: Program, state: State, t: int, frame_depth: int | None = None) -> dict[str, str]:
    """Every named value of ``state`` that a user can see: globals, the heap by path, and the locals of
    thread ``t``'s frame at ``frame_depth`` (its current frame by default; none with -1)."""
    out: dict[str, str] = {}
    seen: set[int] = set()
    for name, v in zip(program.globals, state[0], strict=True):
        _leaf(state, name, v, out, seen)
    th = state[2][t] if t < len(state[2]) else ()
    depth = len(th) - 1 if frame_depth is None else frame_depth
    if th and 0 <= depth < len(th):
        frame = th[depth]
        for name, v in zip(frame[0].locals, frame[2:], strict=False):
            if not name.startswith("$") and v is not None:
                _leaf(state, name, v, out, seen)
    return out


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
