"""The locations the model's declarations (``exclusive``, ``guarded_by``, ``thread_local``) govern in one
state, and how a location is named in a discipline violation's message.

Both the instrumentation that checks declared disciplines on every step (``instrument/properties.py``) and
the reductions that check them themselves (``analysis/classify.py``, ``reduce/ample.py``) read declarations
this way, so a violation is the same, with the same message, whichever finds it.
"""

from __future__ import annotations

from typing import Any

from movers.ir.program import Exclusive, Program, Ref
from movers.semantics.state import State


def location_name(program: Program, state: State, loc: Any) -> str:
    """A concrete location (a global's slot, or (object, field index)) as the model names it."""
    if type(loc) is int:
        return program.globals[loc]
    r, idx = loc
    obj = state[1][r.i]
    for slot, v in enumerate(state[0]):
        if v is r and obj[0].is_list:
            return f"{program.globals[slot]}[{idx - 2}]"
    if obj[0].is_list:
        return f"<list #{r.i}>[{idx - 2}]"
    cls = obj[0]
    name = cls.fields[idx - 2] if idx - 2 < len(cls.fields) else str(idx)
    return f"{cls.name}.{name}"


def declarations_at(program: Program, state: State) -> tuple[dict[Any, list[Exclusive]], list[Exclusive]]:
    """Concrete locations governed by declared predicates in ``state``, and the field declarations."""
    by_loc: dict[Any, list[Exclusive]] = {}
    fields: list[Exclusive] = []
    g, heap = state[0], state[1]
    for d in program.exclusives:
        kind = d.target[0]
        if kind == "field":
            fields.append(d)
            continue
        slot = program.globals.index(d.target[1])
        v = g[slot]
        if kind == "name":
            by_loc.setdefault(slot, []).append(d)
            if type(v) is Ref and heap[v.i][0].is_list:
                for idx in range(2, len(heap[v.i])):
                    by_loc.setdefault((v, idx), []).append(d)
        elif type(v) is Ref and heap[v.i][0].is_list:
            by_loc.setdefault((v, d.target[2] + 2), []).append(d)
    return by_loc, fields


__all__ = ["declarations_at", "location_name"]
