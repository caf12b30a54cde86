"""``--races``: a precise data-race detector, in the manner of Java PathFinder's ``PreciseRaceDetector``.

A state has a *race* when two threads can each perform, as their next step, an access to the same location
(the same global, the same field of the same object, the same element of the same list, or a list's length),
at least one of them a write, and neither step is a synchronisation operation (a lock operation, ``wait``,
``notify``, ``start``, ``join``, ``wait_until`` or a ``with indivisible():`` block): nothing orders the two
accesses, so the program's result may depend on which comes first. It is meaningful at ``--granularity
access``, where a step makes at most one access to shared memory; a statement step makes several, atomically
(``Options`` refuses ``--races`` there).

``find_race(ts, state)`` decides it for one state, with the Effects the engine records for the reductions:
each thread whose next node is a plain access is run once, tracked, from ``state`` (every resolution of its
choices), and the locations the steps would read and write are compared pair by pair. All steps run from the
same pre-state, so their locations are in the same heap numbering. The check is a state property:
``instrument.properties.Checked.check_state`` calls it after the invariants, and the search reports a
``race`` violation with the trace to the state.

``unprotected_writes(program)`` is the cheap static pass behind the note of a verified run: the globals and
fields some thread writes outside every lock (``docs/cli.md``).
"""

from __future__ import annotations

import ast
from typing import Any

from movers.ir.program import MON, Node, Program
from movers.semantics.state import State
from movers.semantics.view import state_names

# Nodes that are data accesses but run as one indivisible step: a ``with indivisible():`` block of data only.
INDIVISIBLE_KINDS = frozenset({"atomic-step", "indivisible"})


def may_access(node: Node) -> bool:
    """Thread's next node may access shared memory and is no synchronisation operation (static facts)."""
    if node.is_sync or node.kind in INDIVISIBLE_KINDS or node.guard is not None:
        return False
    return bool(node.reads or node.writes or node.fields_read or node.fields_written or node.elements_read
                or node.elements_written)


def step_accesses(ts: Any, state: State, t: int) -> tuple[dict[Any, bool], Node] | None:
    """The locations thread ``t``'s next step accesses from ``state`` (location -> written), over every
    resolution of its choices; None when the step is a synchronisation operation or accesses nothing. Objects
    the step allocates are its own (no other thread can reach them yet); lock state (``MON``) is
    synchronisation."""
    node = ts.next_node(state, t)
    if node is None or not may_access(node):
        return None
    n = len(state[1])
    locs: dict[Any, bool] = {}
    for o in ts.execute(state, t, True):
        eff = o.effect
        if eff is None:
            continue
        if eff.acquired or eff.released or eff.started:
            return None
        for loc in eff.reads:
            if type(loc) is int or (loc[0].i < n and loc[1] != MON):
                locs.setdefault(loc, False)
        for loc in eff.writes:
            if type(loc) is int or (loc[0].i < n and loc[1] != MON):
                locs[loc] = True
    return (locs, node) if locs else None


def find_race(ts: Any, state: State) -> tuple[str, str] | None:
    """The first race of ``state`` (threads in id order), as a ``race`` violation, or None."""
    seen: list[tuple[int, dict[Any, bool], Node]] = []
    threads = state[2]
    for t in range(len(threads)):
        if not threads[t]:
            continue
        acc = step_accesses(ts, state, t)
        if acc is None:
            continue
        locs, node = acc
        for u, other, unode in seen:
            for loc, w in locs.items():
                w2 = other.get(loc)
                if w2 is not None and (w or w2):
                    return ("race", race_message(ts.program, state, loc, (u, w2, unode), (t, w, node)))
        seen.append((t, locs, node))
    return None


def race_message(program: Program, state: State, loc: Any, first: tuple[int, bool, Node],
                 second: tuple[int, bool, Node]) -> str:
    where = location_path(program, state, loc)

    def access(a: tuple[int, bool, Node]) -> str:
        t, w, node = a
        return f"thread {t} can {'write' if w else 'read'} it next (line {node.line}: {node.source})"

    return f"data race on {where}: {access(first)} while {access(second)}, and no synchronisation orders the two"


def location_path(program: Program, state: State, loc: Any) -> str:
    """A location as the reports name it: a global by its name, a field or an element by the heap path of its
    object (``acct.balance``, ``Account#1.balance``, ``xs[0]``), the length of a list as ``len(xs)``."""
    if type(loc) is int:
        return program.globals[loc]
    r, idx = loc
    try:
        names = state_names(program, state)
        obj = state[1][r.i]
        base = names.paths.get(r.i) or names.labels.get(r.i) or f"{obj[0].name}#{r.i}"
    except Exception:  # noqa: BLE001  (a report never fails for a name: the class is name enough)
        obj = state[1][r.i]
        base = f"{obj[0].name}#{r.i}"
    cls = obj[0]
    if cls.is_list:
        k = idx - 2
        return f"len({base})" if k >= len(obj) - 2 else f"{base}[{k}]"
    name = cls.fields[idx - 2] if 0 <= idx - 2 < len(cls.fields) else str(idx)
    return f"{base}.{name}"


# -- the note of a verified run ----------------------------------------------------------------------------------


def unprotected_writes(program: Program) -> list[str]:
    """Globals and fields that some thread's code writes outside every lock, as names (``counter``,
    ``field balance``, ``list elements``); empty when every such write is under a lock.

    Static and conservative: a node is under a lock when every path from its function's entry to it acquires
    more than it releases (``with m:``, ``m.acquire()``), or when its function is synchronized or is only ever
    called from such nodes; a statement of a ``with indivisible():`` block is protected too (the block is one
    step, a synchronisation of its own). Writes of the objects a constructor builds (``self.f = …`` in
    ``__init__``) and of nodes the static escape analysis proves thread-local are left out; so is the module's
    own code, which runs before any thread."""
    from movers.analysis.static_escape import analyse

    codes = [c for c in program.codes() if c is not program.init]
    locked_entry = _locked_entries(program, codes)
    try:
        local = analyse(program)
    except Exception:  # noqa: BLE001  (the note is a hint: without the analysis, fewer writes are left out)
        local = None
    indivisible = _indivisible_lines(program)
    out: dict[str, None] = {}
    for code in codes:
        inside = _under_lock(code, code.synchronized or code in locked_entry)
        ctor = code.name.endswith(".__init__")
        for pc, node in enumerate(code.nodes):
            if inside[pc] or node.is_sync or node.kind in INDIVISIBLE_KINDS or node.line in indivisible:
                continue
            if node.library:  # the standard library's model (lang/library) writes under its own lock or in its
                continue  # constructor, as CPython's code does: not the user's to protect
            if not (node.writes or node.fields_written or node.elements_written):
                continue
            if local is not None and local.node_local(code, pc):
                continue
            for g in sorted(node.writes):
                out.setdefault(g, None)
            if not ctor:
                for f in sorted(node.fields_written):
                    out.setdefault(f"field {f}", None)
            if node.elements_written:
                out.setdefault("list elements", None)
    return list(out)


def _indivisible_lines(program: Program) -> set[int]:
    """The lines of the bodies of ``with indivisible():`` blocks (their statements run in one step)."""
    try:
        tree = ast.parse(program.source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    out: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.With) and any(
                isinstance(i.context_expr, ast.Call) and isinstance(i.context_expr.func, ast.Name)
                and i.context_expr.func.id == "indivisible" for i in n.items):
            out.update(range(n.lineno, (n.end_lineno or n.lineno) + 1))
    return out


def _under_lock(code: Any, entry_locked: bool) -> list[bool]:
    """Per node of ``code``: is some lock held on every path from the entry (a must-analysis of the number of
    locks held, its minimum over paths)?"""
    nodes = code.nodes
    held: list[int | None] = [None] * len(nodes)
    start = 1 if entry_locked else 0
    if not nodes:
        return []
    held[code.entry] = start
    work = [code.entry]
    while work:
        pc = work.pop()
        node = nodes[pc]
        h = held[pc]
        assert h is not None
        after = h + (1 if node.kind in ("acquire", "reacquire") else -1 if node.kind in ("release", "wait") else 0)
        after = max(after, 0)
        for s in node.succ:
            if 0 <= s < len(nodes) and (held[s] is None or after < held[s]):  # type: ignore[operator]
                held[s] = after
                work.append(s)
    return [h is not None and h > 0 for h in held]


def _locked_entries(program: Program, codes: list[Any]) -> set[Any]:
    """Functions and methods every call of which is made under a lock (one level: a caller's own entry is not
    assumed locked). A function named other than in a call (``Thread(target=f)``) and a ``run`` method may
    start a thread, unlocked: never one of them."""
    index = program.callee_index()
    unlocked: set[str] = set()
    locked: set[str] = set()
    for c in [*codes, program.init]:
        inside = _under_lock(c, c.synchronized)
        for pc, node in enumerate(c.nodes):
            for name in node.callee_names:
                (locked if inside[pc] and c is not program.init else unlocked).add(name)
    bodies = _values_named(program)
    out: set[Any] = set()
    for name in locked - unlocked:
        for c in index.get(name, ()):
            short = c.name.rsplit(".", 1)[-1]
            if short != "run" and short not in bodies:
                out.add(c)
    return out


def _values_named(program: Program) -> set[str]:
    """Names the model uses other than as the function of a call (``Thread(target=f)``, ``g = f``)."""
    try:
        tree = ast.parse(program.source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set(program.functions)
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    out: set[str] = set()
    for n in ast.walk(tree):
        if id(n) in called:
            continue
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


def race_note(program: Program) -> str | None:
    """The note of a verified run at access granularity without ``--races`` that writes shared memory
    outside every lock (``unprotected_writes``), or None."""
    names = unprotected_writes(program)
    if not names:
        return None
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    return (f"some threads write {shown} outside any lock: races on them (two unordered accesses, one a write) "
            "were not looked for; --races reports them")
