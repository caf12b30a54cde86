"""The ``del`` statement: ``del d[k]``, ``del xs[i]`` and ``del x``, as CPython runs them.

- ``del d[k]`` removes the entry (``KeyError: k`` when there is none): ``containers.dict_delete``, one access.
- ``del xs[i]`` removes the element (a negative ``i`` counts from the end); the later ones move down by one,
  as ``xs.pop(i)`` moves them, and it is recorded as ``pop(i)`` is: one access to the list.
  ``IndexError: list assignment index out of range`` as in CPython. A slice (``del xs[1:3]``) is refused.
- ``del x`` unbinds the local or global ``x``: reading it again raises ``UnboundLocalError`` (a local) or
  ``NameError`` (a global), and ``del`` of an unbound name raises the same.
- Strings and tuples are immutable: ``TypeError: 'str' object doesn't support item deletion``.

Targets are deleted left to right (``del a, b[i]``), each one as it is reached.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from movers.ir.machine import Ctx, ModelError, show
from movers.ir.program import UNBOUND, Ref
from movers.lang import deques
from movers.lang.containers import dict_delete, is_dict
from movers.lang.function import FunctionCore
from movers.lang.runtime_ops import _read_length, int_like


def delete_item(ctx: Ctx, r: Any, k: Any) -> None:
    """``del r[k]``."""
    if type(r) is not Ref:
        what = "str" if type(r) is str else "tuple" if type(r) is tuple else None
        if what is None:
            raise ModelError(f"{show(r)} does not support item deletion", exc="TypeError")
        raise ModelError(f"'{what}' object doesn't support item deletion", exc="TypeError")
    o = ctx.heap[r.i]
    if is_dict(o):
        dict_delete(ctx, r, k)
        return
    if deques.is_deque(o):
        deques.del_item(ctx, r, k)
        return
    if not o[0].is_list:
        raise ModelError(f"'{o[0].name}' object doesn't support item deletion", exc="TypeError")
    if not int_like(k):
        raise ModelError(f"list indices must be integers or slices, not {type(k).__name__}", exc="TypeError")
    _read_length(ctx, r, o)
    n = len(o) - 2
    i = int(k)
    j = i + n if i < 0 else i
    if not 0 <= j < n:
        raise ModelError("list assignment index out of range", exc="IndexError")
    j += 2
    if ctx.track:
        ctx.reads.extend((r, m) for m in range(j, len(o)))
        ctx.writes.extend((r, m) for m in range(j, len(o)))
    ctx.put_object(r, o[:j] + o[j + 1:])
    if any(type(y) is Ref or type(y) is tuple for y in o[j:]):
        ctx.dirty = ctx.reshaped = True  # references moved or dropped


class DeletionCompiler(FunctionCore):
    """The ``FunctionCompiler`` mixin for ``del`` (module docstring)."""

    def stmt_Delete(self, s: ast.Delete) -> None:
        for t in s.targets:  # each its own statement: `del a, b` is `del a` then `del b`
            nxt = self.label()
            self.simple(s, lambda t=t, nxt=nxt: self._deletion(t, nxt))  # type: ignore[misc]
            self.here(nxt)

    def _deletion(self, t: ast.expr, nxt: Any) -> Callable[[Ctx], None]:
        if isinstance(t, ast.Subscript) and not isinstance(t.slice, ast.Slice):
            seq, index = self.expr(t.value), self.expr(t.slice)  # type: ignore[attr-defined]
            self.facts.elements_read = self.facts.elements_written = True
            self.facts.uses.append(self.value(t.value))  # type: ignore[attr-defined]

            def finish(ctx: Ctx) -> None:
                r = seq(ctx)
                delete_item(ctx, r, index(ctx))
                ctx.pc = nxt.pc

            return finish
        if isinstance(t, ast.Name):
            return self._unbind(t, nxt)
        if isinstance(t, (ast.Tuple, ast.List)):
            raise self.mc.error(t, "del of a tuple of targets is not supported; write del a, b")
        raise self.mc.error(t, "unsupported target of del: write del d[k], del xs[i] or del x "
                            "(a slice or an attribute cannot be deleted)")

    def _unbind(self, t: ast.Name, nxt: Any) -> Callable[[Ctx], None]:
        name = t.id
        if name in self.cells and name in self.slot and name not in self.global_names:  # type: ignore[attr-defined]
            raise self.mc.error(t, f"del of '{name}', a variable an inner function uses, is not supported")
        if name in self.slot and name not in self.global_names and not self.is_module:  # type: ignore[attr-defined]
            i = self.slot[name]  # type: ignore[attr-defined]

            def unbind_local(ctx: Ctx) -> None:
                if ctx.loc[i] is UNBOUND:
                    raise ModelError(f"cannot access local variable '{name}' where it is not associated with a "
                                     "value", exc="UnboundLocalError")
                if type(ctx.loc[i]) is Ref or type(ctx.loc[i]) is tuple:
                    ctx.dirty = True  # a reference dropped
                ctx.loc[i] = UNBOUND
                ctx.pc = nxt.pc

            return unbind_local
        if name in self.mc.global_slot:
            g = self.mc.global_slot[name]
            self.facts.reads.add(name)
            self.facts.writes.add(name)

            def unbind_global(ctx: Ctx) -> None:
                if ctx.track:
                    ctx.reads.append(g)
                if ctx.g[g] is UNBOUND:
                    raise ModelError(f"name '{name}' is not defined", exc="NameError")
                ctx.set_global(g, UNBOUND)
                ctx.pc = nxt.pc

            return unbind_global
        raise self.mc.error(t, f"name '{name}' is not defined")


__all__ = ["DeletionCompiler", "delete_item"]
