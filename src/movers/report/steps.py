"""The full state after every step of a counterexample (``replay --full-state``, ``replay --json``,
``check --json --full-state``, and the HTML report's state panel).

A search keeps only the states it needs; the states along a trace are recomputed by executing its steps
again from the initial state, on the system the trace was replayed on (the program with its properties,
without any atomicity shadow), and described as ``full_state`` describes the state where a violation shows.
"""

from __future__ import annotations

from typing import Any

from movers.ir.program import Program
from movers.report.result import Result, Violation
from movers.report.safe import printable
from movers.report.shorten import entries_text
from movers.report.trace import describe_state, thread_labels

# In the state of a step that did not complete (the failed assertion, the step that broke a declaration):
# that state is the one before it, which this key says.
FAILED = "failed"


def replay_system(program: Program, reduction: str) -> Any:
    """The system a check with ``reduction`` replays its traces on (``Checker.system``'s program part: the
    atomicity instrumentations replay on it too)."""
    from movers.instrument.properties import instrument
    from movers.reduce import checks_discipline
    from movers.semantics.system import TransitionSystem

    return instrument(TransitionSystem(program), disciplines=not checks_discipline(reduction))


def step_states(ts: Any, steps: list[tuple[int, tuple[int, ...]]], short: int | None = None
                ) -> list[dict[str, Any]]:
    """One ``full_state`` per step: the state after it, or, for a step that fails (it has no successor),
    the state before it with ``"failed": true``. Steps that cannot be executed end the list early. With
    ``short``, long lists are cut as ``full_state`` cuts them."""
    if not steps:
        return []
    out: list[dict[str, Any]] = []
    try:
        names = thread_labels(ts, steps)  # threads named as the trace names them
    except Exception:  # noqa: BLE001  (a trail that does not fit: the states below say where)
        names = None
    try:
        state = ts.initial()
        for t, choices in steps:
            o = ts.execute_choice(state, t, choices, True)
            if o.state is None:
                out.append({**describe_state(ts, state, names, short), FAILED: True})
                break
            state = o.state
            out.append(describe_state(ts, state, names, short))
    except Exception as e:  # noqa: BLE001
        # A report never fails because of its extras: the steps described so far are kept.
        out.append({"error": f"the state could not be computed: {type(e).__name__}: {e}"})
    return out


def attach_states(v: Violation, ts: Any, short: int | None = None) -> None:
    """Set ``state`` on each step of ``v``'s trace (``short``: see ``step_states``)."""
    for step, state in zip(v.trace, step_states(ts, v.steps, short), strict=False):
        step.state = state


def add_step_states(result: Result, program: Program, short: int | None = None) -> Result:
    """``result`` (of a check of ``program``) with the state after every step of each violation's trace
    (``short``: only for a report that shortens long values, see ``step_states``)."""
    if result.violations:
        ts = replay_system(program, result.reduction)
        for v in result.violations:
            attach_states(v, ts, short)
    return result


def thread_names(v: Violation) -> dict[int, str]:
    """Each thread of ``v`` (every thread that moves in its trace or exists at its end), named as the text
    trace names it (``Thread(name=...)``, else the function it runs; ``worker#1`` where names repeat)."""
    names: dict[int, str] = {}
    for st in v.trace:
        names.setdefault(st.thread, st.name or f"thread {st.thread}")
    states = [st.state for st in v.trace if st.state] + [v.state]
    for state in states:
        for th in (state or {}).get("threads", []):
            names.setdefault(th["thread"], th.get("name") or f"thread {th['thread']}")
    return dict(sorted(names.items()))


def thread_line(th: dict[str, Any]) -> str:
    """One thread of a state on one line: status, what it waits for, where it is, locks and locals."""
    out = th["status"]
    if th.get("waits"):
        out += f" ({th['waits']})"
    if th["stack"]:
        out += " at " + " > ".join(f"{f['function']}:{f['line']}" for f in th["stack"])
    if th["holds"]:
        out += "; holds " + ", ".join(th["holds"])
    if th["locals"]:
        out += "; " + entries_text(th["locals"])
    return out


def print_step_states(v: Violation, console: Any) -> None:
    """``replay --full-state``: the state after every step of ``v``'s trace, a few lines each."""
    from rich.text import Text

    names = thread_names(v)
    console.print()
    console.print(Text("state after each step", style="bold"))
    for i, st in enumerate(v.trace, 1):
        state = st.state
        if state is None:
            continue
        where = f"{names.get(st.thread, st.thread)}, line {st.line}: {st.source}"
        head = (f"step {i} fails ({where}): the state before it" if state.get(FAILED)
                else f"after step {i} ({where})")
        console.print(Text(printable(head, True), style="bold"), soft_wrap=True)
        if "error" in state:
            console.print(Text(printable("  " + state["error"])), soft_wrap=True)
            continue
        shared = entries_text(state["globals"])
        console.print(Text(printable(f"  globals: {shared or '-'}")), soft_wrap=True)
        for th in state["threads"]:
            console.print(Text(printable(f"  {names.get(th['thread'], th['thread'])}: {thread_line(th)}")),
                          soft_wrap=True)


__all__ = ["FAILED", "add_step_states", "attach_states", "print_step_states", "replay_system", "step_states",
           "thread_line", "thread_names"]
