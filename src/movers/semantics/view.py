"""What a user can see in a state, by name: globals, the heap by path from a global (``x[1]``,
``buf.items[0]``, ``m0.owner``) or from a local of one thread, so that names survive the heap's canonical
renumbering. Counterexample traces (``report/trace.py``) and commit-atomicity's first difference between
the stores (``instrument/commit.py``) both speak in these names.
"""

from __future__ import annotations

from typing import Any

from movers.ir.machine import show
from movers.ir.program import BARRIER, CONDITION, EVENT, LOCK, RLOCK, SEMAPHORE, UNBOUND, Program, Ref
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
    if cls is EVENT:
        out[f"{path}.is_set()"] = show(obj[2])
        return
    if cls is BARRIER:
        out[f"{path}.waiting"] = show(obj[3])
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


__all__ = ["view"]
