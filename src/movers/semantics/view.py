"""What a user can see in a state, by name: globals, the heap by path from a global (``x[1]``,
``buf.items[0]``, ``m0.owner``) or from a local of one thread, so that names survive the heap's canonical
renumbering. Counterexample traces (``report/trace.py``) and commit-atomicity's first difference between
the stores (``instrument/commit.py``) both speak in these names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from movers.ir.machine import show
from movers.ir.program import BARRIER, CONDITION, EVENT, LOCK, RLOCK, SEMAPHORE, THREAD, UNBOUND, Program, Ref
from movers.semantics.state import State


def _value(state: State, v: Any, labels: dict[int, str] | None = None) -> str:
    """A value as one string: a list or tuple whole, another object as ``<Class>`` (``<Account#2>`` when
    ``labels``, an object's name for a whole state, names it)."""
    if type(v) is Ref:
        obj = state[1][v.i]
        if obj[0].is_list:
            return "[" + ", ".join(_value(state, x, labels) for x in obj[2:]) + "]"
        label = labels.get(v.i) if labels else None
        return f"<{label or obj[0].name}>"
    if type(v) is tuple:
        inner = ", ".join(_value(state, x, labels) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    return show(v)


_THREAD_FIELDS = frozenset(THREAD.fields)


class _Walk:
    """One walk of a state's values, from the globals and then one frame's locals: each heap object is named
    by the first path that reaches it."""

    def __init__(self, state: State, who: Callable[[Any], str], seen: dict[int, str],
                 labels: dict[int, str] | None = None) -> None:
        self.state = state
        self.who = who  # how a thread id (a lock's owner, a wait set's member) shows
        self.seen = seen
        self.labels = labels
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
            if len(obj) == 2:
                out[path] = "[]"  # an empty list is still there (the pop that empties it shows it)
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
        # Every field the model declared shows, ``self._lock`` as well as ``self.lock``; only a Thread's own
        # bookkeeping (its id, target and arguments) does not: the trace names threads otherwise.
        hidden = _THREAD_FIELDS if cls.is_thread else ()
        for name, v in zip(cls.fields, obj[2:], strict=False):
            if v is not UNBOUND and name not in hidden:
                self.leaf(f"{path}.{name}", v)

    def leaf(self, path: str, v: Any) -> None:
        if type(v) is Ref:
            obj = self.state[1][v.i]
            if obj[0].is_list:
                if v.i in self.seen:
                    self.out[path] = _value(self.state, v, self.labels)
                self.expand(path, v)
            else:
                self.out[path] = _value(self.state, v, self.labels)
                self.expand(path, v)
        else:
            self.out[path] = _value(self.state, v, self.labels)


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


@dataclass
class Names:
    """Every object of a state named once for the whole state (a deadlock, ``--full-state``): by its path
    from a global, else, for an object that only locals reach, by its class and a number (``Account#1``, in
    the order of the threads and their frames), with the objects it reaches by paths below that
    (``Account#1._lock``). Two threads' local ``b`` are then told apart, as the locks each holds.
    ``paths`` maps each object (by index) to its name, ``labels`` the objects named by a number, and
    ``values`` is the globals and the whole heap by name, as ``view`` gives them."""

    paths: dict[int, str]
    labels: dict[int, str]
    values: dict[str, str]


def state_names(program: Program, state: State, who: Callable[[Any], str] = show) -> Names:
    """The names of ``Names`` for ``state``."""
    paths: dict[int, str] = {}
    labels: dict[int, str] = {}
    w = _Walk(state, who, paths, labels)
    for name, v in zip(program.globals, state[0], strict=True):
        w.leaf(name, v)
    count: dict[str, int] = {}
    for th in state[2]:
        for frame in th:
            for v in frame[2:]:
                if type(v) is Ref and v.i not in paths:
                    cls = state[1][v.i][0].name
                    count[cls] = count.get(cls, 0) + 1
                    labels[v.i] = f"{cls}#{count[cls]}"
                    w.expand(labels[v.i], v)
    return Names(paths, labels, w.out)


def frame_view(program: Program, state: State, t: int, names: Names, who: Callable[[Any], str] = show
               ) -> dict[str, str]:
    """The locals of thread ``t``'s current frame, each an object named by ``names`` (``a = <Account#2>``,
    its fields being in the heap under that name), a list whole (``xs = [1, 2]``)."""
    th = state[2][t] if t < len(state[2]) else ()
    if not th:
        return {}
    frame = th[-1]
    w = _Walk(state, who, dict(names.paths), names.labels)
    for name, v in zip(frame[0].locals, frame[2:], strict=False):
        if not name.startswith("$") and v is not None and v is not UNBOUND:
            w.leaf(name, v)
    return w.out


__all__ = ["Names", "frame_view", "state_names", "view"]
