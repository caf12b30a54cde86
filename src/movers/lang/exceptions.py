"""Exceptions: ``try``/``except``/``else``/``finally`` and ``raise``, compiled to nodes and handler tables.

``ExceptionCompiler`` is the ``FunctionCompiler`` mixin for ``stmt_Try`` and ``stmt_Raise`` and for
``protect``, the cleanup that ``with lock:`` and ``with synchronized(...)`` put around their bodies. The
runtime half (the exception classes, unwinding, what an uncaught exception reports) and the design are in
``ir/exceptions.py``.

A protected region is a list of pc intervals of the function's nodes (``Protection``): the body of a ``try``,
not its handlers, nor the copies of a ``finally`` block (or of a ``with``'s release) that ``return``,
``break`` and ``continue`` run on their way out (``Exit.protection`` suspends it while they are emitted, as
CPython's own compiler does). The handler is glue: it tests the exception object's class against the
``except`` clauses in order (CPython's ``isinstance``), binds the ``as`` name and runs the clause, which ends
by unbinding the name (CPython deletes it) and clearing the hidden local; no clause matches: the exception is
raised again from the handler, to the enclosing handler. ``finally`` is a protection whose handler runs the
block and re-raises; on the normal path and on ``return``/``break``/``continue`` the block runs inline.

For the static analyses, every node of a protected interval has the handler among its successors
(``FunctionCore.finish``), so the handler is reachable from every node that may raise.

Entering and leaving a ``try``, ``raise`` of a local value and the handler's test are local work
(docs/language.md section 8): only the accesses in them start steps.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from movers.ir.exceptions import BUILTIN_EXCEPTIONS, Raised, caught_by, is_exception_class, new_exception
from movers.ir.machine import Ctx, ModelError, show
from movers.ir.program import UNBOUND, ClassInfo, Ref
from movers.lang.function import AV, Exit, Fn, FunctionCore, Label


class Protection:
    """A protected region of one function: its pc intervals, its handler and the hidden local that receives
    the exception in flight."""

    __slots__ = ("intervals", "start", "handler", "slot", "stops", "floor")

    def __init__(self, start: int, handler: Label, slot: int, stops: Any, floor: int = 0) -> None:
        self.intervals: list[tuple[int, int]] = []
        self.start: int | None = start
        self.handler = handler
        self.slot = slot
        # What the handler may stop: None (a cleanup), True (anything), or the classes of its except clauses.
        self.stops = stops
        # The lowering's temporaries the statements around the region hold (``FunctionCore.dropped_temps``).
        self.floor = floor

    def close(self, pc: int) -> bool:
        """End the current interval at ``pc``; whether one was open."""
        if self.start is None:
            return False
        if pc > self.start:
            self.intervals.append((self.start, pc))
        self.start = None
        return True

    def resume(self, pc: int) -> None:
        if self.start is None:
            self.start = pc


# For the static escape analysis (analysis/static_escape.py): a raised object may reach any handler of the
# thread, in any frame, so ``raise`` stores it into a pseudo-global (whose objects count as escaping, an
# over-approximation) and an ``as`` name loads from it, and from a site standing for the exception objects the
# runtime operations make (``IndexError``...), so that storing one somewhere shared makes it escape.
IN_FLIGHT = ("global", "$exception")
CAUGHT = frozenset({IN_FLIGHT, ("new", ("<runtime>", 0, 0, "BaseException"))})


class ExceptionCompiler(FunctionCore):
    """``try`` and ``raise``; ``protect`` for the cleanups of ``with`` blocks."""

    if TYPE_CHECKING:  # the rules of the other mixins this one uses (lang/compiler.FunctionCompiler)
        def expr(self, e: ast.expr, allow_calls: bool = True) -> Fn: ...

        def compile_block(self, body: list[ast.stmt]) -> None: ...

        def store(self, t: ast.expr, value: AV = ...) -> Callable[[Ctx, Any], None]: ...

        def call_args(self, e: ast.Call) -> list[Fn]: ...

    # -- regions ----------------------------------------------------------------------------------------------

    def open_protection(self, handler: Label, slot: int, stops: Any = None) -> Protection:
        p = Protection(len(self.pending), handler, slot, stops, self.temp_floor)
        self.protections.append(p)
        return p

    def protect(self, body: Callable[[], None], cleanup: Callable[[ast.AST], None], at: ast.AST,
                exit_: Exit) -> None:
        """Run ``body`` so that an exception passing through it runs ``cleanup`` (a step or more of its own,
        e.g. a lock's release) and goes on outwards: ``with``'s ``__exit__`` when the block raises. ``exit_``
        is the block's own ``Exit`` (return/break/continue), whose copies of the cleanup the region excludes."""
        if not self.mc.uses_try:
            # Nothing can catch an exception: it ends the search, and what the block's exit would do is moot.
            self.exits.append(exit_)
            body()
            self.exits.pop()
            return
        slot = self.hidden("exc")
        handler = self.label()
        p = self.open_protection(handler, slot)
        exit_.protection = p
        self.exits.append(exit_)
        body()
        self.exits.pop()
        p.close(len(self.pending))
        return_to = self.label()
        self.jump(return_to)
        self.here(handler)
        cleanup(at)
        self.emit_reraise(at, slot)
        self.here(return_to)

    def emit_reraise(self, at: ast.AST, slot: int) -> None:
        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                r = ctx.loc[slot]
                ctx.loc[slot] = None
                raise Raised(r)

            return run

        self.emit(make, False, at, source="", line=getattr(at, "end_lineno", 0) or getattr(at, "lineno", 0),
                  succ=[])

    # -- raise ------------------------------------------------------------------------------------------------

    def stmt_Raise(self, s: ast.Raise) -> None:
        if s.exc is None:
            self.bare_raise(s)
            return
        exc = s.exc
        if isinstance(exc, ast.Name) and self.exception_class(exc.id) is not None and exc.id not in self.slot:
            # ``raise E`` raises ``E()``.
            exc = ast.copy_location(ast.Call(func=exc, args=[], keywords=[]), exc)

        def build() -> Callable[[Ctx], None]:
            v = self.expr(exc)
            cause = self.expr(s.cause) if s.cause is not None else None
            self.flow("store", IN_FLIGHT, self.value(exc))

            def finish(ctx: Ctx) -> None:
                r = v(ctx)
                if cause is not None:
                    cause(ctx)  # evaluated, as CPython does; the cause itself is not kept
                if type(r) is not Ref or not is_exception_class(ctx.heap[r.i][0]):
                    raise ModelError(f"exceptions must derive from BaseException, not {show(r)}", exc="TypeError")
                raise Raised(r)

            return finish

        self.simple(s, build, "raise", succ=[])

    def bare_raise(self, s: ast.Raise) -> None:
        if not self.handling:
            def make() -> Callable[[Ctx], None]:
                def run(ctx: Ctx) -> None:
                    raise ModelError("No active exception to reraise", exc="RuntimeError")

                return run

            self.emit(make, False, s, succ=[])
            return
        slot = self.handling[-1]

        def make2() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                raise Raised(ctx.loc[slot])

            return run

        self.emit(make2, False, s, succ=[])

    def exception_class(self, name: str) -> ClassInfo | None:
        cls = self.mc.classes.get(name)
        if cls is None:
            cls = BUILTIN_EXCEPTIONS.get(name)
        if cls is None or not is_exception_class(cls):
            return None
        return cls

    def exception_classes(self, e: ast.expr) -> tuple[ClassInfo, ...]:
        items = e.elts if isinstance(e, ast.Tuple) else [e]
        out: list[ClassInfo] = []
        for x in items:
            cls = self.exception_class(x.id) if isinstance(x, ast.Name) else None
            if cls is None:
                raise self.mc.error(x, "an except clause names an exception class or a tuple of them; write "
                                       "except ValueError:, except (IndexError, KeyError) as e:, or a class of "
                                       "the model that derives from Exception")
            out.append(cls)
        return tuple(out)

    # -- try --------------------------------------------------------------------------------------------------

    def stmt_Try(self, s: ast.Try) -> None:
        if s.finalbody:
            self.try_finally(s)
        else:
            self.try_except(s)

    def try_finally(self, s: ast.Try) -> None:
        slot = self.hidden("exc")
        handler = self.label()
        # A finally that may return, break or continue drops the exception in flight.
        drops = any(isinstance(n, (ast.Return, ast.Break, ast.Continue)) for b in s.finalbody for n in ast.walk(b))
        p = self.open_protection(handler, slot, True if drops else None)
        depth = len(self.exits)

        def inline_finally(at: ast.AST) -> None:
            # The copy that return/break/continue run: a return or break inside it leaves only the constructs
            # around the try, not this finally again.
            saved = self.exits
            self.exits = saved[:depth]
            self.compile_block(s.finalbody)
            self.exits = saved

        exit_ = Exit(inline_finally)
        exit_.protection = p
        self.exits.append(exit_)
        if s.handlers:
            self.try_except(s)
        else:
            self.compile_block(s.body)
        self.exits.pop()
        p.close(len(self.pending))
        self.compile_block(s.finalbody)
        end = self.label()
        self.jump(end)
        self.here(handler)
        self.compile_block(s.finalbody)
        self.emit_reraise(s, slot)
        self.here(end)

    def try_except(self, s: ast.Try) -> None:
        slot = self.hidden("exc")
        handler = self.label()
        stops: Any = ()
        for h in s.handlers:
            if h.type is None:
                stops = True
                break
            stops = (*stops, *self.exception_classes(h.type))
        p = self.open_protection(handler, slot, stops)
        exit_ = Exit(lambda at: None)
        exit_.protection = p
        self.exits.append(exit_)
        self.compile_block(s.body)
        self.exits.pop()
        p.close(len(self.pending))
        self.compile_block(s.orelse)
        end = self.label()
        self.jump(end)
        self.here(handler)
        clauses: list[tuple[tuple[ClassInfo, ...] | None, Label, Callable[[Ctx, Any], None] | None]] = []
        with self.recording() as facts:
            for h in s.handlers:
                classes = self.exception_classes(h.type) if h.type is not None else None
                store = self.store(ast.copy_location(ast.Name(h.name, ast.Store()), h), CAUGHT) if h.name else None
                clauses.append((classes, self.label(), store))
        reraise = self.label()

        def make() -> Callable[[Ctx], None]:
            table = [(classes, lbl.pc, store) for classes, lbl, store in clauses]
            re_pc = reraise.pc

            def run(ctx: Ctx) -> None:
                r = ctx.loc[slot]
                obj = ctx.heap[r.i]
                for classes, pc, store in table:
                    if classes is None or caught_by(obj, classes):
                        if store is not None:
                            store(ctx, r)
                        ctx.pc = pc
                        return
                ctx.pc = re_pc

            return run

        self.emit(make, False, s, source=f"except (line {s.handlers[0].lineno})" if s.handlers else "",
                  line=s.handlers[0].lineno if s.handlers else s.lineno,
                  succ=[lbl for _, lbl, _ in clauses] + [reraise], **facts.info())
        for h, (_, lbl, _) in zip(s.handlers, clauses, strict=True):
            self.here(lbl)
            name_slot = self.slot.get(h.name) if h.name and h.name in self.slot and not self.is_module else None

            def clear(at: ast.AST, name_slot: int | None = name_slot) -> None:
                after = self.label()

                def make_clear() -> Callable[[Ctx], None]:
                    nxt = after.pc

                    def run(ctx: Ctx) -> None:
                        if type(ctx.loc[slot]) is Ref or (name_slot is not None and type(ctx.loc[name_slot]) is Ref):
                            ctx.dirty = True  # the exception may now be garbage: the heap is canonicalised
                        ctx.loc[slot] = None
                        if name_slot is not None:
                            ctx.loc[name_slot] = UNBOUND
                        ctx.pc = nxt

                    return run

                # CPython deletes the ``as`` name at the end of the clause.
                self.emit(make_clear, False, at, source="", line=getattr(at, "lineno", 0), succ=[after])
                self.here(after)

            self.exits.append(Exit(clear))
            self.handling.append(slot)
            self.compile_block(h.body)
            self.handling.pop()
            self.exits.pop()
            clear(h)
            self.jump(end)
        self.here(reraise)
        self.emit_reraise(s, slot)
        self.here(end)

    # -- construction -----------------------------------------------------------------------------------------

    def builtin_exception(self, e: ast.Call, cls: ClassInfo) -> Fn:
        """``ValueError("bad")``: a new exception object whose ``args`` are the arguments."""
        if e.keywords:
            raise self.mc.error(e, f"{cls.name}() takes no keyword arguments")
        args = self.call_args(e)
        self.facts.allocates = True
        self.note(e, self.new_site(e, cls.name))

        def run(ctx: Ctx) -> Any:
            return ctx.alloc(new_exception(cls, tuple(a(ctx) for a in args)))

        return run


__all__ = ["ExceptionCompiler", "Protection"]
