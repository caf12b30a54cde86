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


def value_text(
    state: State, v: Any, labels: dict[int, str] | None = None, inside: frozenset[int] = frozenset()
) -> str:
    """``v`` as Python's ``repr`` shows it: a list or tuple whole, another object as ``<Class>``
    (``<Account#2>`` when ``labels``, an object's name for a whole state, names it); ``inside``: the lists
    being shown around it (a list that holds itself shows as ``[...]`` there, as in Python)."""
    if type(v) is Ref:
        obj = state[1][v.i]
        if obj[0].is_list:
            if v.i in inside:
                return "[...]"
            if len(obj) > CHUNK and plain(obj):
                return _list_text(obj)
            inner = inside | {v.i}
            return "[" + ", ".join(value_text(state, x, labels, inner) for x in obj[2:]) + "]"
        if obj[0].builtin == "deque":  # (cls, monitor, maxlen, stamp, *elements): lang/deques.py
            if v.i in inside:
                return "[...]"
            items = ", ".join(value_text(state, x, labels, inside | {v.i}) for x in obj[4:])
            return f"deque([{items}])" if obj[2] is None else f"deque([{items}], maxlen={obj[2]})"
        if obj[0].builtin == "set":
            items = ", ".join(value_text(state, x, labels, inside) for x in obj[2:])
            return "{" + items + "}" if items else "set()"
        if obj[0].builtin == "dict":
            if v.i in inside:
                return "{...}"
            inner = inside | {v.i}
            return "{" + ", ".join(f"{value_text(state, obj[j], labels, inner)}: "
                                   f"{value_text(state, obj[j + 1], labels, inner)}"
                                   for j in range(2, len(obj), 2)) + "}"
        label = labels.get(v.i) if labels else None
        return f"<{label or obj[0].name}>"
    if type(v) is tuple:
        items = ", ".join(value_text(state, x, labels, inside) for x in v)
        return f"({items},)" if len(v) == 1 else f"({items})"
    return show(v)


_THREAD_FIELDS = frozenset(THREAD.fields)
# A list longer than this, of plain values, is compared element by element without spelling it out
# (``view(chunks=...)``).
CHUNK = 64


def plain(obj: tuple) -> bool:
    """Whether a list holds only values that show on their own (no reference, no tuple that could hold
    one): then ``show`` of each element is what a walk would show."""
    if len(obj) <= CHUNK:
        return not any(type(x) is Ref or type(x) is tuple for x in obj[2:])
    hit = _PLAIN.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    types = set(map(type, obj[2:]))
    out = Ref not in types and tuple not in types
    if len(_PLAIN) >= 64:
        _PLAIN.clear()
    _PLAIN[id(obj)] = (obj, out)
    return out


# Whether each of the last long lists asked about is plain (consecutive states share most lists).
_PLAIN: dict[int, tuple[tuple, bool]] = {}


# The text of the last long lists shown whole (an alias of a list shows it at every step of a trace, and
# consecutive states share the lists a step did not change): each is made once.
_TEXTS: dict[int, tuple[tuple, str]] = {}


def _list_text(obj: tuple) -> str:
    hit = _TEXTS.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    text = "[" + ", ".join(map(show, obj[2:])) + "]"
    if len(_TEXTS) >= 32:
        _TEXTS.clear()
    _TEXTS[id(obj)] = (obj, text)
    return text


def _same(x: Any, y: Any) -> bool:
    """Whether two plain values are the same value of the language (1 and True differ, 1 and 1.0 too)."""
    if x is y:
        return True
    if type(x) is not type(y):
        return False
    if type(x) is int or type(x) is str:
        return x == y
    return show(x) == show(y)


def list_changes(path: str, before: tuple | None, after: tuple) -> tuple[dict[str, str], bool]:
    """The elements of a plain list at ``path`` that differ between two states (``before`` None: the list
    is new there), as ``view`` would name them, and whether the list became shorter."""
    items = after[2:]
    if before is None:
        return dict(zip([f"{path}[{k}]" for k in range(len(items))], map(show, items), strict=True)), False
    if before is after:
        return {}, False
    old = before[2:]
    out = {f"{path}[{k}]": show(y) for k, (x, y) in enumerate(zip(old, items, strict=False)) if not _same(x, y)}
    for k in range(len(old), len(items)):
        out[f"{path}[{k}]"] = show(items[k])
    return out, len(items) < len(old)


class _Walk:
    """One walk of a state's values, from the globals and then one frame's locals: each heap object is named
    by the first path that reaches it."""

    def __init__(self, state: State, who: Callable[[Any], str], seen: dict[int, str],
                 labels: dict[int, str] | None = None, chunks: dict[str, tuple] | None = None,
                 short: int | None = None) -> None:
        self.state = state
        self.who = who  # how a thread id (a lock's owner, a wait set's member) shows
        self.seen = seen
        self.labels = labels
        # With ``chunks``, a long list of plain values is not spelt out element by element: its path maps
        # to the list itself, for a caller that compares two states' lists (``list_changes``).
        self.chunks = chunks
        # With ``short``, a long list of plain values shows only its first ``short`` elements, and then an
        # entry that says how many more there are (the HTML report's state panel).
        self.short = short
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
            elif plain(obj):
                # No element names an object: the elements are their own strings, made in one pass (a model
                # may hold lists of 100,000 elements).
                if self.chunks is not None and len(obj) > CHUNK:
                    self.chunks[path] = obj
                    return
                n = len(obj) - 2
                if self.short is not None and n > self.short:
                    out.update((f"{path}[{k}]", show(obj[2 + k])) for k in range(self.short))
                    out[f"… {n - self.short:,} more under {path}[…]"] = ""
                    return
                out.update(zip([f"{path}[{k}]" for k in range(n)], map(show, obj[2:]), strict=True))
                return
            for k, v in enumerate(obj[2:]):
                self.leaf(f"{path}[{k}]", v)
            return
        if cls.builtin == "set" or cls.builtin == "deque":
            out[path] = value_text(state, r, self.labels)
            return
        if cls.builtin == "dict":
            if len(obj) == 2:
                out[path] = "{}"
            for j in range(2, len(obj), 2):
                self.leaf(f"{path}[{show(obj[j])}]", obj[j + 1])
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
                if name.startswith("$def:"):
                    continue  # a closure's evaluated defaults: part of its definition, not of its state
                self.leaf(f"{path}.{name[5:] if name.startswith('$cap:') else name}", v)

    def leaf(self, path: str, v: Any) -> None:
        if type(v) is Ref and self.state[1][v.i][0].builtin == "cell":
            v = self.state[1][v.i][2]  # a variable in a cell (nonlocal) shows its value
            if v is UNBOUND:
                return
        if type(v) is Ref:
            obj = self.state[1][v.i]
            if obj[0].is_list:
                if v.i in self.seen:
                    self.out[path] = value_text(self.state, v, self.labels)
                self.expand(path, v)
            else:
                self.out[path] = value_text(self.state, v, self.labels)
                self.expand(path, v)
        else:
            self.out[path] = value_text(self.state, v, self.labels)


def view(program: Program, state: State, t: int, frame_depth: int | None = None,
         paths: dict[int, str] | None = None, who: Callable[[Any], str] = show,
         chunks: dict[str, tuple] | None = None) -> dict[str, str]:
    """Every named value of ``state`` that a user can see: globals, the heap by path, and the locals of
    thread ``t``'s frame at ``frame_depth`` (its current frame by default; none with -1). ``paths``, if
    given, receives the path that names each heap object (by its index), as the values' names use it;
    ``who`` says how a thread (a lock's owner, a member of a wait set) shows (its id by default).
    ``chunks``, if given, receives the long lists of plain values instead of their elements (see
    ``list_changes``)."""
    w = _Walk(state, who, {} if paths is None else paths, chunks=chunks)
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


def state_names(program: Program, state: State, who: Callable[[Any], str] = show, short: int | None = None
                ) -> Names:
    """The names of ``Names`` for ``state``; with ``short``, its ``values`` show only the first ``short``
    elements of a long list of plain values."""
    paths: dict[int, str] = {}
    labels: dict[int, str] = {}
    w = _Walk(state, who, paths, labels, short=short)
    for name, v in zip(program.globals, state[0], strict=True):
        w.leaf(name, v)
    count: dict[str, int] = {}
    for th in state[2]:
        for frame in th:
            for v in frame[2:]:
                # A list of plain values names no object: the locals show it by their own names.
                if type(v) is Ref and v.i not in paths and not (state[1][v.i][0].is_list and plain(state[1][v.i])):
                    cls = state[1][v.i][0].name
                    count[cls] = count.get(cls, 0) + 1
                    labels[v.i] = f"{cls}#{count[cls]}"
                    w.expand(labels[v.i], v)
    return Names(paths, labels, w.out)


def frame_view(program: Program, state: State, t: int, names: Names, who: Callable[[Any], str] = show,
               short: int | None = None) -> dict[str, str]:
    """The locals of thread ``t``'s current frame, each an object named by ``names`` (``a = <Account#2>``,
    its fields being in the heap under that name), a list the heap has whole (``xs = [1, 2]``), a list
    only this local reaches by its elements (``short`` as for ``state_names``)."""
    th = state[2][t] if t < len(state[2]) else ()
    if not th:
        return {}
    frame = th[-1]
    w = _Walk(state, who, dict(names.paths), names.labels, short=short)
    for name, v in zip(frame[0].locals, frame[2:], strict=False):
        if not name.startswith("$") and v is not None and v is not UNBOUND:
            w.leaf(name, v)
    return w.out


__all__ = ["CHUNK", "Names", "frame_view", "list_changes", "plain", "state_names", "value_text", "view"]
