"""What a user can see in a state, by name: globals, the heap by path from a global (``x[1]``,
``buf.items[0]``, ``m0.owner``) or from a local of one thread, so that names survive the heap's canonical
renumbering. Counterexample traces (``report/trace.py``) and commit-atomicity's first difference between
the stores (``instrument/commit.py``) both speak in these names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from movers.ir.machine import show
from movers.ir.program import BARRIER, CONDITION, EVENT, LOCK, RLOCK, SEMAPHORE, UNBOUND, Program, Ref
from movers.semantics.state import State


def _value(state: State, v: Any, inside: frozenset[int] = frozenset()) -> str:
    """``v`` as Python's ``repr`` shows it; ``inside``: the lists being shown around it (a list that holds
    itself shows as ``[...]`` there, as in Python)."""
    if type(v) is Ref:
        obj = state[1][v.i]
        if obj[0].is_list:
            if v.i in inside:
                return "[...]"
            inner = inside | {v.i}
            return "[" + ", ".join(_value(state, x, inner) for x in obj[2:]) + "]"
        return f"<{obj[0].name}>"
    if type(v) is tuple:
        items = ", ".join(_value(state, x, inside) for x in v)
        return f"({items},)" if len(v) == 1 else f"({items})"
    return show(v)


class _Walk:
    """One walk of a state's values, from the globals and then one frame's locals: each heap object is named
    by the first path that reaches it."""

    def __init__(self, state: State, who: Callable[[Any], str], seen: dict[int, str]) -> None:
        self.state = state
        self.who = who  # how a thread id (a lock's owner, a wait set's member) shows
        self.seen = seen
        self.out: dict[str, str] = {}

    def threads(self, ts: Any) -> str:
        if type(ts) is not tuple:
            return self.who(ts)
        inner = ", ".join(self.who(x) for x in ts)
        return f"({inner},)" if len(ts) == 1 else f"({inner})"

    def expand(self, path: str, r: Ref) -> None:
        if r.i in self.seen:
            return
        self.seen[r.i] = path
        state, out = self.state, self.out
        obj = state[1][r.i]
        cls = obj[0]
        if cls.is_list:
            for k, v in enumerate(obj[2:]):
                self.leaf(f"{path}[{k}]", v)
            return
        if cls is LOCK or cls is RLOCK:
            out[f"{path}.owner"] = self.who(obj[2])
            return
        if cls is SEMAPHORE:
            out[f"{path}.value"] = show(obj[2])
            return
        if cls is EVENT:
            out[f"{path}.is_set()"] = show(obj[2])
            return
        if cls is BARRIER:
            out[f"{path}.waiting"] = self.threads(obj[3])
            return
        if cls is CONDITION:
            out[f"{path}.waiting"] = self.threads(obj[3])
            self.expand(f"{path}.lock", obj[2])
            return
        if obj[1] is not None:
            mon = obj[1]
            out[f"{path}.owner"] = self.who(mon[0])
            if mon[2]:
                out[f"{path}.waiting"] = self.threads(mon[2])
        for name, v in zip(cls.fields, obj[2:], strict=False):
            if not name.startswith("_") and v is not UNBOUND:
                self.leaf(f"{path}.{name}", v)

    def leaf(self, path: str, v: Any) -> None:
        if type(v) is Ref:
            obj = self.state[1][v.i]
            if obj[0].is_list:
                if v.i in self.seen:
                    self.out[path] = _value(self.state, v)
                self.expand(path, v)
            else:
                self.out[path] = _value(self.state, v)
                self.expand(path, v)
        else:
            self.out[path] = _value(self.state, v)


def view(program: Program, state: State, t: int, frame_depth: int | None = None,
         paths: dict[int, str] | None = None, who: Callable[[Any], str] = show) -> dict[str, str]:
    """Every named value of ``state`` that a user can see: globals, the heap by path, and the locals of
    thread ``t``'s frame at ``frame_depth`` (its current frame by default; none with -1). ``paths``, if
    given, receives the path that names each heap object (by its index), as the values' names use it;
    ``who`` says how a thread (a lock's owner, a member of a wait set) shows (its id by default)."""
    w = _Walk(state, who, {} if paths is None else paths)
    for name, v in zip(program.globals, state[0], strict=True):
        w.leaf(name, v)
    th = state[2][t] if t < len(state[2]) else ()
    depth = len(th) - 1 if frame_depth is None else frame_depth
    if th and 0 <= depth < len(th):
        frame = th[depth]
        for name, v in zip(frame[0].locals, frame[2:], strict=False):
            if not name.startswith("$") and v is not None and v is not UNBOUND:
                w.leaf(name, v)
    return w.out


__all__ = ["view"]
