"""``with E as name:`` on context managers of the model, compiled to nodes (PEP 343).

``ContextCompiler`` is the ``FunctionCompiler`` mixin for a ``with`` block in a model where some class (of the
model or of the library, lang/library) defines ``__enter__``: the value of ``E`` is known only at run time, so
the block's nodes dispatch on it, as ``x.acquire()`` does (``ConcurrencyCompiler.sync_method_stmt``). A model
without such a class compiles ``with`` as before (``ConcurrencyCompiler.compile_lock_with``).

CPython's semantics, step by step:

- ``E`` is evaluated once (a statement of its own, which may call model functions) into a hidden local;
- the entry: on an object whose class defines ``__enter__`` and ``__exit__``, a call of ``__enter__()``; on a
  Lock, RLock, Semaphore or Condition, the acquire (a guarded step, as ``with lock:``), whose ``__enter__``
  returns True in CPython; on anything else CPython's ``TypeError: 'X' object does not support the context
  manager protocol``. Its result is bound to ``name`` at the start of the block (inside the protected
  region, where CPython stores it);
- the exit, on the way out of the block normally and on ``return``/``break``/``continue``: a call of
  ``__exit__(None, None, None)`` (its result ignored), or the release;
- on an exception: a call of ``__exit__(t, e, tb)``; a true result swallows the exception, a false one
  raises it again (a lock is released and the exception goes on).

Classes are not values in models, so ``__exit__`` cannot receive the exception's class nor a traceback. It
receives the exception object in their place, and the compiler allows ``__exit__`` to use those two
parameters only as CPython's values answer the same: ``t is None``, ``t is not None`` and their truth
(``ModuleCompiler`` refuses any other use, ``exit_parameter_refusal``). The exception itself (the second
parameter) is the real one.

The entry and the exit are calls like any other for the static facts (``callees``, the escape analysis's
``method_call`` flows) and lock operations for the granularity (a step each).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from movers.ir import sync
from movers.ir.machine import Ctx, ModelError, show
from movers.ir.program import CONDITION, LOCK, RLOCK, SEMAPHORE, TRUE, Ref, box
from movers.lang.exceptions import CAUGHT
from movers.lang.function import NO_VALUE, Exit, Fn, FunctionCore, Label
from movers.lang.runtime_ops import truth_of

# The built-in objects ``with`` acquires and releases (a Condition: its lock).
SYNC_CLASSES = (LOCK, RLOCK, SEMAPHORE, CONDITION)


def is_manager(ctx: Ctx, r: Any) -> bool:
    """Whether ``r`` is a context manager of the model (else it must be a built-in lock: ``lock_or_fail``)."""
    if type(r) is Ref:
        cls = ctx.heap[r.i][0]
        if cls.lookup("__enter__") is not None and cls.lookup("__exit__") is not None:
            return True
    return False


def lock_or_fail(ctx: Ctx, r: Any) -> None:
    """CPython's TypeError for ``with`` on a value that is neither a context manager nor a lock."""
    if type(r) is Ref and ctx.heap[r.i][0] in SYNC_CLASSES:
        return
    what = ctx.heap[r.i][0].name if type(r) is Ref else type(r).__name__ if r is not None else "NoneType"
    if type(r) not in (Ref, int, bool, str, tuple) and r is not None:
        what = show(r)
    raise ModelError(f"'{what}' object does not support the context manager protocol", exc="TypeError")


def exit_parameter_refusal(fn: ast.FunctionDef) -> tuple[ast.AST, str] | None:
    """Why the ``__exit__`` method ``fn`` cannot be compiled faithfully: it uses its exception type or traceback
    parameter otherwise than ``p is None``, ``p is not None`` or as a truth value (module docstring)."""
    a = fn.args
    params = [*a.posonlyargs, *a.args]
    if a.vararg is not None or a.kwarg is not None or a.kwonlyargs:
        return fn, ("__exit__ must take its parameters by name: def __exit__(self, exc_type, exc, tb)")
    if len(params) != 4:
        return fn, "__exit__ takes self and three parameters: def __exit__(self, exc_type, exc, tb)"
    watched = {params[1].arg, params[3].arg}
    allowed: set[int] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], (ast.Is, ast.IsNot)):
            sides = [n.left, n.comparators[0]]
            if any(isinstance(x, ast.Constant) and x.value is None for x in sides):
                allowed.update(id(x) for x in sides if isinstance(x, ast.Name))
        elif isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            if isinstance(n.test, ast.Name):
                allowed.add(id(n.test))
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) and isinstance(n.operand, ast.Name):
            allowed.add(id(n.operand))
        elif isinstance(n, ast.BoolOp):
            allowed.update(id(x) for x in n.values if isinstance(x, ast.Name))
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id in watched and id(n) not in allowed:
            return n, (f"__exit__ may use '{n.id}' only as 'is None', 'is not None' or a truth value: classes and "
                       "tracebacks are not values in models; test the exception itself (the second parameter), "
                       "e.g. isinstance(exc, ValueError)")
    return None


class ContextCompiler(FunctionCore):
    """``with E [as name]:`` where ``E`` may be a context manager of the model or a built-in lock."""

    if TYPE_CHECKING:  # the rules of the other mixins this one uses (lang/compiler.FunctionCompiler)
        def expr(self, e: ast.expr, allow_calls: bool = True) -> Fn: ...

        def compile_block(self, body: list[ast.stmt]) -> None: ...

        def stmt(self, s: ast.stmt) -> None: ...

        def open_protection(self, handler: Label, slot: int, stops: Any = None) -> Any: ...

        def emit_reraise(self, at: ast.AST, slot: int) -> None: ...

        def method_call_setup(self, recv: Fn, method: str, args: list[Fn], e: ast.AST
                              ) -> Callable[[Ctx, int], None]: ...

    def context_with(self, s: ast.With, e: ast.expr, var: ast.expr | None) -> None:
        mgr = self.hidden("mgr")
        got = self.hidden("enter") if var is not None else -1
        name = self.mc.text(e)
        avs: list[Any] = []
        entry = self.label()

        def build() -> Callable[[Ctx], None]:
            v = self.expr(e)
            avs.append(self.value(e))
            self.flow("store", ("local", mgr), self.value(e))

            def finish(ctx: Ctx) -> None:
                r = v(ctx)
                ctx.loc[mgr] = box(r)
                if type(r) is Ref:
                    ctx.dirty = True
                ctx.pc = entry.pc

            return finish

        self.simple(e, build, source=f"with {name}")
        self.here(entry)
        av = avs[0]
        self._context_entry(s, e, mgr, got, name, av)
        emit_exit = self._context_exit(s, e, mgr, name, av)

        # -- the block, protected ---------------------------------------------------------------------------------
        exc = self.hidden("exc")
        handler, end = self.label(), self.label()
        # The handler may stop the exception (__exit__ returns true): it stops anything, as an ``except:``.
        p = self.open_protection(handler, exc, True)
        exit_ = Exit(emit_exit)
        exit_.protection = p
        self.exits.append(exit_)
        if var is not None:
            hidden = ast.copy_location(ast.Name(id=self.code.locals[got], ctx=ast.Load()), var)
            self.stmt(ast.fix_missing_locations(ast.copy_location(ast.Assign(targets=[var], value=hidden), var)))
            cleared = self.label()
            self.emit(_clearing(got, cleared), False, var, source="", succ=[cleared])
            self.here(cleared)
        self.compile_block(s.body)
        self.exits.pop()
        p.close(len(self.pending))
        emit_exit(s)
        self.jump(end)
        self.here(handler)
        self._context_handler(s, e, mgr, exc, end, name, av)
        self.here(end)

    def _context_entry(self, s: ast.With, e: ast.expr, mgr: int, got: int, name: str, av: Any) -> None:
        """``__enter__()`` (its result into ``got``), or the acquire (True into ``got``)."""
        def recv(ctx: Ctx) -> Any:
            return ctx.loc[mgr]

        cont, bound = self.label(), self.label()
        enter_setup = self.method_call_setup(recv, "__enter__", [], s)

        def make_enter() -> Callable[[Ctx], None]:
            ret, nxt = cont.pc, bound.pc

            def run(ctx: Ctx) -> None:
                r = ctx.loc[mgr]
                if is_manager(ctx, r):
                    enter_setup(ctx, ret)
                    return
                lock_or_fail(ctx, r)
                sync.acquire(ctx, r)
                if got >= 0:
                    ctx.loc[got] = TRUE  # Lock.__enter__ returns True
                ctx.pc = nxt

            return run

        def guard_make() -> Callable[[Ctx], bool]:
            def run(ctx: Ctx) -> bool:
                r = ctx.loc[mgr]
                return is_manager(ctx, r) or sync.can_acquire(ctx, r)

            return run

        def blocked_make() -> Callable[[Ctx], str]:
            return lambda ctx: sync.acquire_text(ctx, ctx.loc[mgr], name)

        self.emit(make_enter, True, s, kind="acquire", source=f"with {name}: enter", guard_make=guard_make,
                  blocked_make=blocked_make, uses=(av,), callee_names=frozenset({".__enter__"}), calls=True,
                  flows=(("method_call", av, "__enter__", ()),), succ=[cont, bound])
        self.here(cont)

        def make_cont() -> Callable[[Ctx], None]:
            nxt = bound.pc

            def run(ctx: Ctx) -> None:
                if got >= 0:
                    v = ctx.retval
                    ctx.loc[got] = box(v)
                    if type(v) is Ref or type(v) is tuple:
                        ctx.dirty = True
                ctx.pc = nxt

            return run

        returned = frozenset({("method_return", av, "__enter__")})
        self.emit(make_cont, False, s, source="",
                  flows=(("store", ("local", got), returned),) if got >= 0 else ())
        self.here(bound)

    def _context_exit(self, s: ast.With, e: ast.expr, mgr: int, name: str, av: Any) -> Callable[[ast.AST], None]:
        """What emits the exit at the block's end and on return/break/continue: ``__exit__(None, None, None)``,
        its result ignored, or the release."""
        def recv(ctx: Ctx) -> Any:
            return ctx.loc[mgr]

        def emit_exit(at: ast.AST) -> None:
            after, called = self.label(), self.label()
            nones: list[Fn] = [lambda ctx: None] * 3
            make_exit = _exit_or_release(mgr, self.method_call_setup(recv, "__exit__", nones, s), called, after)
            line = getattr(at, "end_lineno", s.lineno) if at is s else getattr(at, "lineno", s.lineno)
            self.emit(make_exit, True, at, kind="release", source=f"end of with {name}: exit", line=line,
                      uses=(av,), callee_names=frozenset({".__exit__"}), calls=True,
                      flows=(("method_call", av, "__exit__", (NO_VALUE,) * 3),), succ=[called, after])
            self.here(called)
            self.emit(_clearing(mgr, after), False, at, source="", line=line, succ=[after])
            self.here(after)

        return emit_exit

    def _context_handler(self, s: ast.With, e: ast.expr, mgr: int, exc: int, end: Label, name: str,
                         av: Any) -> None:
        """The handler of an exception leaving the block: ``__exit__(t, e, tb)`` and the exception raised again
        unless it returns true; or the release, and the exception goes on."""
        def recv(ctx: Ctx) -> Any:
            return ctx.loc[mgr]

        called, reraise = self.label(), self.label()

        def in_flight(ctx: Ctx) -> Any:
            return ctx.loc[exc]

        make_handler = _exit_or_release(mgr, self.method_call_setup(recv, "__exit__", [in_flight] * 3, s), called,
                                        reraise)
        line = getattr(s, "end_lineno", s.lineno)
        self.emit(make_handler, True, s, kind="release", source=f"end of with {name}: exit (exception)", line=line,
                  uses=(av,), callee_names=frozenset({".__exit__"}), calls=True,
                  flows=(("method_call", av, "__exit__", (CAUGHT,) * 3),), succ=[called, reraise])
        self.here(called)

        def make_decide() -> Callable[[Ctx], None]:
            done, again = end.pc, reraise.pc

            def run(ctx: Ctx) -> None:
                ctx.loc[mgr] = None
                ctx.dirty = True
                if truth_of(ctx, ctx.retval):
                    ctx.loc[exc] = None  # swallowed: the block is over
                    ctx.pc = done
                else:
                    ctx.pc = again

            return run

        self.emit(make_decide, False, s, source="", line=line, succ=[end, reraise])
        self.here(reraise)
        self.emit_reraise(s, exc)


def _exit_or_release(mgr: int, setup: Callable[[Ctx, int], None], called: Label,
                     released: Label) -> Callable[[], Callable[[Ctx], None]]:
    """The node that leaves a ``with`` block: on a context manager the call of its ``__exit__`` (``setup``,
    which returns to ``called``), on a lock its release (then ``released``); either way the slot is done."""

    def make() -> Callable[[Ctx], None]:
        ret, nxt = called.pc, released.pc

        def run(ctx: Ctx) -> None:
            r = ctx.loc[mgr]
            if is_manager(ctx, r):
                setup(ctx, ret)
                return
            ctx.loc[mgr] = None
            sync.release(ctx, r)
            ctx.pc = nxt

        return run

    return make


def _clearing(slot: int, after: Label) -> Callable[[], Callable[[Ctx], None]]:
    """A glue node that clears a hidden slot (a value the thread no longer needs must not tell states apart)."""

    def make() -> Callable[[Ctx], None]:
        nxt = after.pc

        def run(ctx: Ctx) -> None:
            if type(ctx.loc[slot]) is Ref:
                ctx.dirty = True
            ctx.loc[slot] = None
            ctx.pc = nxt

        return run

    return make


__all__ = ["SYNC_CLASSES", "ContextCompiler", "exit_parameter_refusal", "is_manager", "lock_or_fail"]
