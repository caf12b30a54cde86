"""Counterexamples at step granularity: replay the steps a search recorded and say what each changed.

Whatever moves a reduction explored, the search records every atomic step (thread, choices); replaying them
on the transition system gives the interleaving a user can follow, with each step's thread, line, source and
the variables it changed. Heap objects are named by a path from a global (``x[1]``, ``buf.items[0]``,
``m0.owner``) or from a local of the moving thread, so names survive the heap's canonical renumbering.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from movers.ir.machine import Ctx, show
from movers.ir.program import CONDITION, UNBOUND, Node, Program, Ref, call_line
from movers.ir.sync import ReportCtx
from movers.report.result import TraceStep, Violation
from movers.semantics.state import State
from movers.semantics.view import Names, frame_view, list_changes, state_names, value_text, view

# The name of an element of a list: ``b[3]``, ``buf.items[0]`` (the list's name, then the index).
_ELEMENT = re.compile(r"^(.*)\[(\d+)\]$")


def changes(program: Program, before: State, after: State, t: int, who: Callable[[Any], str] = show
            ) -> dict[str, str]:
    # Locals are compared in the frame the step started in; a call shows the callee's parameters, a
    # return shows nothing of the caller's unchanged locals.
    db, da = len(before[2][t]), len(after[2][t]) if t < len(after[2]) else 0
    depth = db - 1
    paths: dict[int, str] = {}
    # Long lists of plain values are compared as lists (``list_changes``), not spelt out at every step.
    ca: dict[str, tuple] = {}
    cb: dict[str, tuple] = {}
    if da > db:
        a = view(program, before, t, -1, who=who, chunks=ca)
        b = view(program, after, t, paths=paths, who=who, chunks=cb)
    else:
        # Same frame, or a return: compare the frame that is on top afterwards (the caller receiving the
        # value), which exists in both states.
        keep = depth if da == db else da - 1
        a = view(program, before, t, keep, who=who, chunks=ca)
        b = view(program, after, t, keep, paths=paths, who=who, chunks=cb)
    shrunk: dict[str, None] = {}
    for p, obj in ca.items():
        if p not in cb:  # no longer a long list there: spelt out, its elements compare one by one
            a.update(list_changes(p, None, obj)[0])
    changed = {k: v for k, v in b.items() if a.get(k) != v}
    for p, obj in cb.items():
        if p in ca:
            elements, shorter = list_changes(p, ca[p], obj)
            changed.update(elements)
            if shorter:
                shrunk[p] = None
        else:  # a long list now, spelt out (or absent) before
            elements = list_changes(p, None, obj)[0]
            b.update(elements)
            changed.update((k, v) for k, v in elements.items() if a.get(k) != v)
    # Names that disappear: a monitor fully released, a wait set emptied, a list or object dropped.
    for k in a:
        if k not in b:
            m = _ELEMENT.match(k)
            if m and m[1] in cb:
                if int(m[2]) >= len(cb[m[1]]) - 2:
                    shrunk[m[1]] = None
                continue
            if k.endswith(".owner"):
                changed[k] = "None"
            elif k.endswith(".waiting"):
                changed[k] = "()"
            else:
                m = _ELEMENT.match(k)
                if m:
                    shrunk[m[1]] = None
    if shrunk:
        # A list that lost elements (pop, remove, clear) shows whole, as it is now: ``b = [1]``.
        lists = {p: i for i, p in paths.items()}
        for p in shrunk:
            if p in lists and p not in changed:
                changed[p] = value_text(after, Ref(lists[p]))
    started = len(after[2]) - len(before[2])
    for k in range(started):
        changed[f"thread {who(len(before[2]) + k)}"] = "started"
    if before[2][t] and not after[2][t]:
        changed[f"thread {who(t)}"] = "terminated"
    return changed


@dataclass
class Replay:
    """A replayed counterexample: its steps, the state where it ends (before a step that failed), each
    thread's name as reports show it, and, when the last step is a failed ``assert``, the values its
    condition reads."""

    trace: list[TraceStep]
    end: Any
    names: dict[int, str] = field(default_factory=dict)
    values: dict[str, str] = field(default_factory=dict)


def replay(ts: Any, steps: list[tuple[int, tuple[int, ...]]]) -> list[TraceStep]:
    """The trace of ``steps`` from the initial state."""
    return replay_full(ts, steps).trace


def replay_with_state(ts: Any, steps: list[tuple[int, tuple[int, ...]]]) -> tuple[list[TraceStep], Any]:
    """The trace of ``steps`` from the initial state, and the state where it ends (before a step that
    failed)."""
    r = replay_full(ts, steps)
    return r.trace, r.end


def violation(ts: Any, kind: str, message: str, steps: list[tuple[int, tuple[int, ...]]]) -> Violation:
    """The violation ``steps`` lead to, as reports show it: its trace, the state where it ends, a deadlock
    told thread by thread (objects by their paths, threads by their names), a failed assertion's values."""
    r = replay_full(ts, steps)
    if kind == "deadlock":
        try:
            message = deadlock_message(ts, r.end, r.names) or message
        except Exception:  # noqa: BLE001  (the search's own message is still right, if less readable)
            pass
    elif kind != "assertion":  # an assertion's message is the model's own text
        message = name_threads(message, r.names)
    return Violation(kind, message, r.trace, r.trace[-1].line if r.trace else 0,
                     [(t, tuple(c)) for t, c in steps], describe_state(ts, r.end, r.names), r.values)


def thread_label(names: dict[int, str], t: int) -> str:
    return names.get(t, f"thread {t}")


_THREAD_ID = re.compile(r"\bthread (\d+)\b")


def name_threads(message: str, names: dict[int, str]) -> str:
    """A message the search wrote (``thread 0 releases a lock it does not hold``) with each thread named as
    the trace names it (``thread worker#0 releases …``); ids it does not know stay as they are."""
    return _THREAD_ID.sub(lambda m: f"thread {names[int(m[1])]}" if int(m[1]) in names else m[0], message)


def _labels(base: dict[int, str]) -> dict[int, str]:
    # A name several threads share keeps the thread's number, so that each label is one thread.
    count: dict[str, int] = {}
    for b in base.values():
        count[b] = count.get(b, 0) + 1
    return {t: b if count[b] == 1 else f"{b}#{t}" for t, b in base.items()}


def _started_as(frames: tuple) -> str:
    """A thread's name when ``Thread(name=...)`` gave none: the function it runs (a Thread subclass: the
    class)."""
    if not frames:
        return "thread"
    code = frames[0][0]
    return code.owner.name if code.owner is not None and code.name.endswith(".run") else code.name


def _execute(ts: Any, steps: list[tuple[int, tuple[int, ...]]]) -> tuple[list, Any, dict[int, str]]:
    """Execute ``steps`` from the initial state: each (state before, thread, choices, outcome), the state
    where they end (before a step that failed), and each thread's name."""
    state = ts.initial()
    given = getattr(ts, "initial_names", None) or {}
    base = {t: given.get(t) or _started_as(th) for t, th in enumerate(state[2])}
    runs = []
    for t, choices in steps:
        o = ts.execute_choice(state, t, choices, True)
        runs.append((state, t, choices, o))
        if o.state is None:
            break
        named = o.effect.names if o.effect is not None else {}
        for k in range(len(state[2]), len(o.state[2])):
            base[k] = named.get(k) or _started_as(o.state[2][k])
        state = o.state
    # Names are known once every thread has started: a name shared by several threads keeps its numbers.
    return runs, state, _labels(base)


def thread_labels(ts: Any, steps: list[tuple[int, tuple[int, ...]]]) -> dict[int, str]:
    """Each thread of the run of ``steps``, named as ``replay_full`` names it."""
    return _execute(ts, steps)[2]


def replay_full(ts: Any, steps: list[tuple[int, tuple[int, ...]]]) -> Replay:
    """Replay ``steps`` from the initial state (see ``Replay``)."""
    program = ts.program
    runs, state, names = _execute(ts, steps)

    def who(v: Any) -> str:
        return names.get(v, show(v)) if type(v) is int else show(v)

    out: list[TraceStep] = []
    values: dict[str, str] = {}
    for before, t, choices, o in runs:
        node = o.node
        if o.violation is not None and o.failed_at is not None:
            node = o.failed_at  # the statement that failed, not the one its step began at
        ch = changes(program, before, o.state, t, who) if o.state is not None else {}
        if o.state is not None and o.effect is not None:
            # A write of the value a global already had changes nothing, but it is often the step that matters
            # (the lost update: count = 1 written over count = 1): show it.
            for w in o.effect.writes:
                if type(w) is int and 0 <= w < len(program.globals) and program.globals[w] not in ch:
                    value = _global_text(o.state, w)
                    if value is not None:
                        ch[program.globals[w]] = f"{value} (unchanged)"
        if node.kind == "notify" and o.state is not None:
            # Which waiter a notify woke is the choice it made: name the thread rather than its index.
            for k in sorted(_waiting(before) - _waiting(o.state)):
                ch[f"thread {who(k)}"] = "woken"
        elif len(choices) and any(choices):
            ch["choice"] = ", ".join(str(c) for c in choices)
        if o.violation is not None and o.violation[0] == "assertion" and node.kind == "assert":
            values = assert_values(program, o.failed_in or before, t, node)
        line, source = shown(before[2][t], node)
        out.append(TraceStep(t, line, source, ch, who(t), _outcome(before, t, choices, node)))
    return Replay(out, state, names, values)


def shown(frames: tuple, node: Node) -> tuple[int, str]:
    """A step's line and source as a trace shows them: a step of the library (lang/library) at the line of the
    model's call into it, its source labelled with the library's method, ``(in queue.Queue.put) ...``."""
    if not node.library:
        return node.line, node.source
    return call_line(frames, node), f"(in {node.library}) {node.source}"


def _global_text(state: State, g: int) -> str | None:
    """Global ``g`` as ``view`` shows it under its own name, or None when it shows only by its elements (a
    list that is not empty)."""
    v = state[0][g]
    if type(v) is Ref and state[1][v.i][0].is_list and len(state[1][v.i]) > 2:
        return None
    return value_text(state, v)


def _waiting(state: State) -> set[int]:
    """The threads in some wait set (of a Condition or of a monitor)."""
    out: set[int] = set()
    for o in state[1]:
        if o[0] is CONDITION:
            out.update(o[3])
        elif not o[0].is_list and o[1] is not None:
            out.update(o[1][2])
    return out


def _outcome(state: State, t: int, choices: tuple[int, ...], node: Node) -> str:
    """Where a condition step went: ``true`` or ``false``; a ``for`` header: ``next`` (into the body, with
    the next item) or ``done``; nothing for other steps."""
    if node.kind == "wait_until":
        return "true"  # it can only move when its condition holds
    # Inside a ``try``, the handler follows the two branches among the successors (lang/exceptions.py).
    if node.kind not in ("branch", "loop") or len(node.succ) < 2:
        return ""
    # Run the step's own node again, alone, to see which successor it chose (the step itself may go on
    # through nodes that take no step of their own, so its end does not tell).
    ctx = Ctx(state[0], state[1], state[2], t, False, state[2][t], choices)
    code = ctx.code
    try:
        node.run(ctx)
    except Exception:  # noqa: BLE001  (the step itself reports its error)
        return ""
    if ctx.code is not code:
        return ""
    # The true branch (the loop's body) is the first successor; a ``for`` header ends at its loop's end,
    # which is not among its successors (they have the label ``break`` jumps to).
    taken = ctx.pc == node.succ[0]
    if node.source.startswith("for "):
        return "next" if taken else "done"
    return "true" if taken else "false"


_MISSING = object()


def _normal(text: str) -> str:
    """An expression's text as ``ast.unparse`` spells it (so that ``a[i+1]`` and ``a[i + 1]`` meet)."""
    try:
        return ast.unparse(ast.parse(text.strip(), mode="eval").body)
    except SyntaxError:
        return text


def assert_values(program: Program, state: State, t: int, node: Node) -> dict[str, str]:
    """The values of the variables, fields and elements the condition of a failed ``assert`` reads, in the
    state it failed in: ``{"count": "1"}`` for ``assert count == 2``. An element whose index is computed is
    shown as its whole list, with the variables of the index."""
    try:
        tree = ast.parse(textwrap.dedent(node.source))
    except SyntaxError:
        return {}
    stmt = tree.body[0] if tree.body else None
    if not isinstance(stmt, ast.Assert):
        return {}
    src = textwrap.dedent(node.source)
    frame = state[2][t][-1] if t < len(state[2]) and state[2][t] else None
    local = dict(zip(frame[0].locals, frame[2:], strict=False)) if frame is not None else {}
    glob = dict(zip(program.globals, state[0], strict=True))

    # A temporary that is gone (None: its last use, e.g. the test of an ``and``, has passed) shows the value in
    # the state instead.
    held = {_normal(text): local[name] for text, name in node.reads_into if local.get(name) is not None}

    def read(e: ast.expr) -> Any:
        if ast.unparse(e) in held:
            return held[ast.unparse(e)]  # what the thread read, in an earlier step, of this access
        if isinstance(e, ast.Name):
            v = local.get(e.id, _MISSING)
            if v is _MISSING or v is None and e.id not in local:
                v = glob.get(e.id, _MISSING)
            if type(v) is Ref and state[1][v.i][0].builtin == "cell":  # nonlocal: the cell's value
                v = state[1][v.i][2]
                return _MISSING if v is UNBOUND else v
            return v
        if isinstance(e, ast.Attribute):
            r = read(e.value)
            if type(r) is not Ref:
                return _MISSING
            o = state[1][r.i]
            fields = list(o[0].fields)
            if o[0].is_list or e.attr not in fields:
                return _MISSING
            v = o[2 + fields.index(e.attr)]
            return _MISSING if v is UNBOUND else v
        if isinstance(e, ast.Subscript):
            r = read(e.value)
            k = e.slice.value if isinstance(e.slice, ast.Constant) else read(e.slice)
            if type(r) is not Ref or type(k) is not int:
                return _MISSING
            o = state[1][r.i]
            deque = o[0].builtin == "deque"  # (cls, monitor, maxlen, token, *items): lang/deques.py
            items = o[4:] if deque else o[2:]
            if not (o[0].is_list or deque) or not -len(items) <= k < len(items):
                return _MISSING
            return items[k]
        return _MISSING

    out: dict[str, str] = {}

    def visit(e: ast.AST) -> None:
        if isinstance(e, ast.Call):
            # A call's function is not a value to show; its arguments are.
            if not isinstance(e.func, ast.Name):
                visit(e.func)
            for a in e.args:
                visit(a)
            return
        if isinstance(e, ast.Name | ast.Attribute | ast.Subscript):
            v = read(e)
            if v is not _MISSING and not (isinstance(e, ast.Name) and v is None and e.id not in local
                                          and e.id not in glob):
                text = ast.get_source_segment(src, e) or ast.unparse(e)
                if text not in out:
                    out[text] = value_text(state, v)
                if not isinstance(e, ast.Subscript) or isinstance(e.slice, ast.Constant):
                    return
                visit(e.slice)  # the index's variables too
                return
        for child in ast.iter_child_nodes(e):
            visit(child)

    visit(stmt.test)
    return out


def deadlock_message(ts: Any, state: Any, names: dict[int, str]) -> str:
    """A deadlock, one line per thread that has not terminated: its name, what it waits for (objects named
    by their paths, as the trace names them), and the line where it is blocked."""
    lines = []
    objects = state_names(ts.program, state)
    for t, th in enumerate(state[2]):
        if not th:
            continue
        node = ts.next_node(state, t)
        if node is None:
            continue
        line, _ = shown(th, node)
        inside = f" (in {node.library})" if node.library else ""
        lines.append(f"  {thread_label(names, t)}, line {line}{inside}: {waits_for(ts, state, t, names, objects)}")
    if not lines:
        return ""
    n = len(lines)
    head = "a thread is blocked forever" if n == 1 else f"{n} threads are blocked, none can move"
    return "\n".join([head, *lines])


def waits_for(ts: Any, state: Any, t: int, names: dict[int, str], objects: Names | None = None) -> str:
    """What blocked thread ``t`` waits for, objects named as ``state_names`` names them (``objects``, if
    already computed) and threads by their names."""
    node = ts.next_node(state, t)
    if node is None or node.blocked_on is None:
        return f"blocked at '{node.source if node is not None else ''}'"
    paths = (objects or state_names(ts.program, state)).paths
    ctx = ReportCtx(state[0], state[1], state[2], t)
    ctx.load_thread(state[2][t])
    ctx.ref_name = lambda r: paths.get(r.i)
    ctx.thread_name = lambda k: thread_label(names, k)
    return node.blocked_on(ctx)


def _frame(program: Program, f: tuple) -> dict[str, Any]:
    """A frame of a thread's stack: its function and line; in the library, the line of the library's file."""
    node = f[0].nodes[f[1]]
    where = program.library_line(node)
    return {"function": f[0].name, "line": where[1] if where is not None else node.line}


def describe_state(ts: Any, state: Any, names: dict[int, str] | None = None, short: int | None = None
                   ) -> dict[str, Any]:
    """``full_state``, or what went wrong in describing it (a report never fails because of it)."""
    try:
        return full_state(ts, state, names, short)
    except Exception as e:  # noqa: BLE001
        return {"error": f"the state could not be described: {type(e).__name__}: {e}"}


def full_state(ts: Any, state: Any, names: dict[int, str] | None = None, short: int | None = None
               ) -> dict[str, Any]:
    """Everything at one state, as users name it (``--full-state``, and the JSON's ``state``): the globals and
    the heap by path, and per thread its name, its status (running, blocked and on what, terminated), its
    stack (each frame's function and line, innermost last), the locals of its current frame, and the locks
    it holds. ``names`` (``Replay.names``) names the threads, here and as owners of locks; by default they
    are named by the function they run. With ``short`` (the HTML report), a long list of plain values has
    only its first ``short`` elements, then an entry that says how many more there are."""
    program = ts.program
    if names is None:
        names = _labels({t: _started_as(th) for t, th in enumerate(state[2])})

    def who(v: Any) -> str:
        return names.get(v, show(v)) if type(v) is int else show(v)

    objects = state_names(program, state, who, short)
    shared = objects.values
    threads = []
    for t, th in enumerate(state[2]):
        name = thread_label(names, t)
        if not th:
            threads.append({"thread": t, "name": name, "status": "terminated", "stack": [], "locals": {},
                            "holds": []})
            continue
        node = ts.next_node(state, t)
        blocked = not ts.enabled(state, t)
        waits = waits_for(ts, state, t, names, objects) if blocked else None
        holds = sorted(p[: -len(".owner")] for p, v in shared.items() if p.endswith(".owner") and v == who(t))
        threads.append({
            "thread": t, "name": name, "status": "blocked" if blocked else "can move", "waits": waits,
            "stack": [_frame(program, f) for f in th],
            "next": shown(th, node)[1] if node is not None else "",
            "locals": frame_view(program, state, t, objects, who, short),
            "holds": holds,
        })
    return {"globals": shared, "threads": threads}
