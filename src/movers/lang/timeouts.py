"""Timeouts and sleep: ``acquire(blocking=False)``, ``acquire(timeout=x)``, ``e.wait(timeout)``,
``c.wait(timeout)``, ``c.wait_for(pred, timeout)``, ``t.join(timeout)`` and ``sleep(x)`` (``time.sleep``).

A model has no clock, so a timeout is modelled as TLA+ models one: the operation succeeds when it can, and
may time out at any moment it could not (docs/language.md section 6). Waiting itself does nothing a
thread can observe, so "wait, then succeed" is the operation's step scheduled later, and only the two
instants that matter are steps:

- ``acquire(blocking=False)``, ``acquire(timeout=x)`` (Lock, RLock, Semaphore, a Condition's lock): one step,
  never blocked (kind ``try_acquire``): True and the lock taken when it is free, False when it is held (the
  timeout fired while it was). CPython never fails to take a free lock, so neither does movers.
- ``e.wait(timeout)`` on an Event: one step, never blocked: the flag (False: it timed out while clear).
- ``c.wait(timeout)`` on a Condition: release and join the wait set, as ``wait()``; then, once the lock is
  free, re-acquire it whether notified or not (the timeout may fire at any time): False when the thread is
  still in the wait set (it leaves it), and, when a notify chose it, True or False (a choice: CPython's
  waiter may time out just before the notify picks it, which then wakes nobody else).
- ``c.wait_for(pred, timeout)``: ``pred`` checked first; after each timed wait, checked again and, while false,
  either waited for again or given up (a choice): the predicate's truth is the result.
- ``t.join(timeout)`` and ``sleep(x)``: a step that changes nothing (kind ``yield``): another thread may run
  there, no time passes. ``t.join(timeout)`` returns whether or not ``t`` has ended, which waiting longer
  could only change by scheduling the step later.

- ``t.is_alive()``: one step (kind ``is-alive``, a non-mover) reading whether ``t`` ended. In a model that
  calls it, a thread's end is a write of its Thread object's id (``thread_end``, on every node that may end
  a thread), and a thread reaches its own Thread object (``analysis/escape.Locality``), so that no reduction
  treats the end and the question as independent.

So a thread waiting with a timeout is never blocked: a state where every other thread is blocked is no
deadlock while it can still time out. An argument that means "no timeout" (``timeout=None``, ``-1`` for a
Lock's or RLock's acquire, ``blocking=True`` alone) compiles to the blocking operation; CPython's Semaphore
takes ``timeout=-1`` as already expired, so that one is decided by the receiver when the step runs.

The synchronisation methods that give a value (``acquire``, ``wait``, ``wait_for``, ``is_alive``) may appear
inside expressions (``if lock.acquire(blocking=False):``, ``while not ev.wait(0.1):``): ``hoist`` moves each
into a statement of its own before the statement that uses its value (``$s1 = lock.acquire(False)``;
``if $s1:``), as the granularity lowering moves accesses, and the bookkeeping it adds is glue at either
granularity (``movers_glue``: ``if m.acquire(False):`` is one statement). Where that would change what
Python does, it is refused: inside ``and``/``or`` and conditional expressions (the call would run whether or
not Python runs it), and after a read of shared memory in the same expression (the call would overtake it). A
comprehension that calls one is a loop of statements by then (``lang/comprehensions.py``), each call hoisted
in its turn.

Timeouts are the only place floats are values in a model: a timeout or a sleep length may be a float
constant (``timeout=0.5``); elsewhere floats stay refused.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from movers.ir import sync
from movers.ir.machine import Ctx, ModelError, show
from movers.ir.program import BARRIER, CONDITION, EVENT, LOCK, RLOCK, SEMAPHORE, Ref, box, ref
from movers.lang import codegen
from movers.lang.function import Facts, Fn, FunctionCore
from movers.lang.runtime_ops import _thread_id

# Synchronisation methods whose value a model may use (``join`` gives None, and is ``str.join`` in values).
VALUE_METHODS = frozenset({"acquire", "wait", "wait_for", "is_alive"})


def thread_end(ctx: Ctx) -> None:
    """The running thread's last frame returned: in a model that calls ``is_alive()``, its end is a write of
    its Thread object's id (what ``is_alive()`` reads), so that every reduction orders the two."""
    if ctx.track:
        tid = ctx.tid
        for i, o in enumerate(ctx.heap):
            if o[0].is_thread and o[2] == tid:
                ctx.writes.append((ref(i), 2))
                return


def thread_alive(ctx: Ctx, r: Any) -> bool:
    """``t.is_alive()``: started and not ended (CPython: False before ``start()``)."""
    if type(r) is not Ref or not ctx.heap[r.i][0].is_thread:
        raise ModelError(f"is_alive() on {show(r)}, which is not a Thread", exc="AttributeError")
    if ctx.track:
        ctx.reads.append((r, 2))
    t = ctx.heap[r.i][2]
    if t is None:
        return False
    threads = ctx.threads
    return t >= len(threads) or threads[t] != ()


class _NotConstant:
    pass


NOT_CONSTANT: Any = _NotConstant()


def constant(e: ast.expr | None) -> Any:
    """The value of a constant argument (a number, a bool, None, or a negated number), else NOT_CONSTANT."""
    if isinstance(e, ast.Constant) and (e.value is None or isinstance(e.value, (bool, int, float))):
        return e.value
    if (isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)) and isinstance(e.operand, ast.Constant)
            and isinstance(e.operand.value, (int, float)) and not isinstance(e.operand.value, bool)):
        return -e.operand.value if isinstance(e.op, ast.USub) else e.operand.value
    return NOT_CONSTANT


def _load(name: str, at: ast.AST) -> ast.Name:
    return ast.fix_missing_locations(ast.copy_location(ast.Name(name, ast.Load()), at))


def _assign(name: str, value: ast.expr, at: ast.AST, text: str | None = None) -> ast.Assign:
    a = ast.copy_location(ast.Assign(targets=[ast.copy_location(ast.Name(name, ast.Store()), at)], value=value), at)
    ast.fix_missing_locations(a)
    a.end_lineno, a.end_col_offset = getattr(at, "end_lineno", None), getattr(at, "end_col_offset", None)
    if text is not None:
        a.movers_text = text  # type: ignore[attr-defined]
    return a


def _clears(names: list[str], at: ast.AST) -> list[ast.stmt]:
    """``$s = None``: a result the thread no longer needs must not tell states apart. Glue at either
    granularity (``movers_glue``): the hoisting adds no step of its own."""
    out = [_assign(n, ast.copy_location(ast.Constant(None), at), at, "") for n in names]
    for a in out:
        a.movers_glue = True  # type: ignore[attr-defined]
    return out


def _mark_glue(test: ast.expr, temps: list[str]) -> None:
    """A test that only reads a hoisted result (``if $s1:``, ``if not $s1:``) is part of the step that
    computed it, at either granularity, as ``if m.acquire(False):`` is one statement."""
    e = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    if isinstance(e, ast.Name) and e.id in temps:
        test.movers_glue = True  # type: ignore[attr-defined]
        e.movers_boolean = True  # type: ignore[attr-defined]  # its truth reads no list's length


class TimeoutCompiler(FunctionCore):
    """The ``FunctionCompiler`` mixin for timeouts, try-acquires and sleep (module docstring)."""

    # -- moving synchronisation calls out of expressions --------------------------------------------------------

    def value_call(self, e: ast.AST) -> bool:
        """``e`` is a synchronisation call whose value the model uses (not a method of a model class)."""
        if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in VALUE_METHODS):
            return False
        from movers.lang.expressions import _model_methods
        return e.func.attr not in _model_methods(self.mc.class_nodes)

    def hoist(self, body: list[ast.stmt]) -> list[ast.stmt]:
        """``body`` with every synchronisation call used as a value moved into a statement of its own, and
        ``time.sleep(x)`` read as ``sleep(x)`` (module docstring)."""
        out: list[ast.stmt] = []
        for s in body:
            out.extend(self._hoist_stmt(s))
        return out

    def _hoist_stmt(self, s: ast.stmt) -> list[ast.stmt]:
        for field in ("body", "orelse", "finalbody"):
            part = getattr(s, field, None)
            if isinstance(part, list) and part and isinstance(part[0], ast.stmt):
                setattr(s, field, self.hoist(part))
        for h in getattr(s, "handlers", None) or ():
            h.body = self.hoist(h.body)
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            self._time_sleep(s.value)
            return [s]  # a call statement: the synchronisation statements compile it, its value unused
        if isinstance(s, ast.If):
            pre, temps = self._pull(s, "test")
            if pre:
                _mark_glue(s.test, temps)
                s.body = _clears(temps, s) + s.body
                s.orelse = _clears(temps, s) + s.orelse
            return pre + [s]
        if isinstance(s, ast.While):
            test = s.test
            pre, temps = self._pull(s, "test")
            if not pre:
                return [s]
            if s.orelse:
                raise self.mc.error(test, "a 'while … else' whose condition calls acquire() or wait(): write the "
                                          "loop with 'while True:' and 'break'")
            # while test: body  ->  while True: $s = call; if test': (clear) else: (clear); break; body
            _mark_glue(s.test, temps)
            leave = ast.copy_location(ast.Break(), s)
            check = ast.copy_location(ast.If(test=s.test, body=_clears(temps, s) or [ast.copy_location(ast.Pass(), s)],
                                             orelse=_clears(temps, s) + [leave]), s)
            check.test.movers_text = self.mc.text(test)  # type: ignore[attr-defined]
            forever = ast.copy_location(ast.Constant(True), s)
            loop = ast.copy_location(ast.While(test=forever, body=pre + [check] + s.body, orelse=[]), s)
            return [ast.fix_missing_locations(loop)]
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and self.value_call(s.value) \
                and self._local_name(s.targets[0]):
            return [s]  # ``ok = lock.acquire(False)``: one step, stored in the local (``timed_assign``)
        if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Assert, ast.Return, ast.Expr)):
            pre, temps = self._pull(s, "value" if not isinstance(s, ast.Assert) else "test")
            if not pre or isinstance(s, ast.Return):
                return pre + [s]
            return pre + [s] + _clears(temps, s)
        return [s]

    def _local_name(self, t: ast.expr) -> bool:
        return (isinstance(t, ast.Name) and not self.is_module and t.id in self.slot
                and t.id not in self.global_names)

    def _time_sleep(self, c: ast.Call) -> None:
        """``time.sleep(x)`` as ``sleep(x)``, when ``time`` names nothing of the model's."""
        f = c.func
        if (isinstance(f, ast.Attribute) and f.attr == "sleep" and isinstance(f.value, ast.Name)
                and f.value.id == "time" and "time" not in self.slot and "time" not in self.mc.global_slot):
            c.func = ast.copy_location(ast.Name("sleep", ast.Load()), f)

    def _pull(self, s: ast.stmt, field: str) -> tuple[list[ast.stmt], list[str]]:
        e = getattr(s, field, None)
        if e is None:
            return [], []
        pre: list[ast.stmt] = []
        temps: list[str] = []
        self._read_before: ast.expr | None = None
        setattr(s, field, self._replace(e, pre, temps, None))
        return pre, temps

    def _shared_read(self, e: ast.expr) -> bool:
        """Whether ``e`` itself may read shared memory (a global, a field, an element)."""
        if isinstance(e, ast.Name) and isinstance(e.ctx, ast.Load):
            return e.id in self.mc.global_slot and (self.is_module or e.id in self.global_names
                                                    or e.id not in self.slot)
        return isinstance(e, (ast.Attribute, ast.Subscript)) and isinstance(e.ctx, ast.Load)

    def _replace(self, e: ast.expr, pre: list[ast.stmt], temps: list[str], guarded: str | None) -> ast.expr:
        if isinstance(e, ast.Lambda):
            return e
        if self.value_call(e):
            assert isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute)
            if guarded == "inside a comprehension":  # one lang/comprehensions.py could not make a loop of
                raise self.mc.error(e, f"{e.func.attr}() inside a comprehension that also synchronises: write a "
                                       "for loop")
            if guarded is not None:
                raise self.mc.error(e, f"{e.func.attr}() {guarded}: it would run whether or not Python evaluates "
                                       "it; assign its result to a variable first")
            if self._read_before is not None:
                # Moved before the statement, the call would run before this read, which Python makes first.
                raise self.mc.error(e, f"{e.func.attr}() after a read of {self.mc.text(self._read_before)} in the "
                                       "same expression: assign its result to a variable first")
            name = self.code.locals[self.hidden("s")]
            pre.append(_assign(name, e, e, self.mc.text(e)))
            temps.append(name)
            return _load(name, e)
        for field, old in ast.iter_fields(e):
            inner = guarded
            if isinstance(e, ast.IfExp) and field != "test":
                inner = "inside a conditional expression"
            elif isinstance(e, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                inner = "inside a comprehension"
            if isinstance(old, ast.expr):
                setattr(e, field, self._replace(old, pre, temps, inner))
            elif isinstance(old, list):
                new = []
                for k, x in enumerate(old):
                    g = "inside 'and'/'or'" if isinstance(e, ast.BoolOp) and k > 0 else inner
                    new.append(self._replace(x, pre, temps, g) if isinstance(x, ast.expr) else x)
                setattr(e, field, new)
        if self._read_before is None and self._shared_read(e):
            self._read_before = e
        return e

    # -- statements -------------------------------------------------------------------------------------------

    def timed_assign(self, s: ast.Assign) -> bool:
        """``x = lock.acquire(…)``, ``x = e.wait(…)``, ``x = c.wait_for(…)``: the operation's step stores its
        value in the local ``x`` (a hidden one when ``hoist`` moved it out of an expression)."""
        if getattr(s, "movers_glue", False):
            self._clear(s)  # ``$s1 = None`` after the hoisted result's use
            return True
        if len(s.targets) != 1 or not self.value_call(s.value):
            return False
        t = s.targets[0]
        if not (isinstance(t, ast.Name) and t.id in self.slot and t.id not in self.global_names):
            return False
        e = s.value
        assert isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute)
        self.timed_call(s, e, e.func, self.slot[t.id])
        return True

    def _clear(self, s: ast.Assign) -> None:
        t = s.targets[0]
        assert isinstance(t, ast.Name)
        slot, nxt = self.slot[t.id], self.label()

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                ctx.loc[slot] = None
                ctx.pc = nxt.pc

            return run

        self.emit(make, False, s, source="")
        self.here(nxt)

    def timed_call(self, s: ast.AST, e: ast.Call, f: ast.Attribute, result: int | None) -> bool:
        """Compile ``x.acquire/wait/wait_for/join(…)`` when it takes arguments or gives a value; False when it
        is the plain statement that ``sync_method_stmt`` compiles."""
        method = f.attr
        if result is None and not e.args and not e.keywords:
            return False
        from movers.lang.expressions import _model_methods
        if method in _model_methods(self.mc.class_nodes):
            if result is None:
                return False  # a model class defines the method: ``sync_method_stmt`` decides at run time
            raise self.mc.error(e, f"a class of the model defines {method}(): call it as a statement, or "
                                   "rename the method")
        if method == "acquire":
            self.compile_acquire(s, e, f, result)
        elif method == "wait":
            self.compile_timed_wait(s, e, f, result)
        elif method == "wait_for":
            self.compile_wait_for(s, e, f, result)
        elif method == "join":
            self.compile_timed_join(s, e, f)
        elif method == "is_alive":
            self.compile_is_alive(s, e, f, result)
        else:
            raise self.mc.error(e, f"{method}() with arguments is not supported in models")
        return True

    def _arguments(self, e: ast.Call, names: tuple[str, ...], method: str) -> dict[str, Any]:
        """The constant arguments of ``e`` by parameter name (positional ones in ``names`` order)."""
        if len(e.args) > len(names) or any(isinstance(a, ast.Starred) for a in e.args):
            params = ", ".join(names) if method != "wait_for" else "predicate, timeout"
            raise self.mc.error(e, f"too many arguments: {method}({params})")
        given: dict[str, ast.expr] = dict(zip(names, e.args, strict=False))
        for kw in e.keywords:
            if kw.arg not in names:
                raise self.mc.error(kw.value if kw.arg is None else e,
                                    f"{method}() got an unexpected keyword argument '{kw.arg}'")
            if kw.arg in given:
                raise self.mc.error(e, f"{method}() got multiple values for argument '{kw.arg}'")
            given[kw.arg] = kw.value
        out: dict[str, Any] = {}
        for name, a in given.items():
            v = constant(a)
            if v is NOT_CONSTANT:
                raise self.mc.error(a, f"{method}(): {name} must be a constant (a number, True, False or None): a "
                                       "model has no clock, so only whether there is a timeout matters")
            out[name] = v
        return out

    def _receiver(self, f: ast.Attribute) -> tuple[Fn, Facts]:
        with self.recording() as facts:
            recv = self.expr(f.value, allow_calls=False)
            facts.uses.append(self.value(f.value))
        return recv, facts

    def compile_acquire(self, s: ast.AST, e: ast.Call, f: ast.Attribute, result: int | None) -> None:
        args = self._arguments(e, ("blocking", "timeout"), "acquire")
        blocking = args.get("blocking", True)
        timeout = args.get("timeout", -1)
        if type(blocking) not in (bool, int):
            raise self.mc.error(e, f"acquire(): blocking must be True or False, got {blocking!r}")
        recv, facts = self._receiver(f)
        name = self.mc.text(f.value)
        nxt = self.label()
        # What CPython says of the arguments depends on the lock's type (a Semaphore's timeout is None when
        # absent, a Lock's -1): checked when the step runs, with CPython's exception.
        sem_timeout = args.get("timeout")
        forever = bool(blocking) and (timeout is None or timeout == -1)

        def check(ctx: Ctx, r: Any) -> None:
            if type(r) is not Ref:
                raise ModelError(f"acquire: expected a lock or object, got {show(r)}")
            _, o = sync.lock_of(ctx, r)
            if o[0] is SEMAPHORE:
                if not blocking and sem_timeout is not None:
                    raise ModelError("can't specify timeout for non-blocking acquire", exc="ValueError")
                return
            if o[0] is LOCK or o[0] is RLOCK:
                if timeout is None:
                    raise ModelError("'NoneType' object cannot be interpreted as an integer", exc="TypeError")
                if not blocking and timeout != -1:
                    raise ModelError("can't specify a timeout for a non-blocking call", exc="ValueError")
                if timeout < 0 and timeout != -1:
                    raise ModelError("timeout value must be positive", exc="ValueError")

        def store(ctx: Ctx, v: bool) -> None:
            if result is not None:
                ctx.loc[result] = box(v)

        if forever and sem_timeout is not None and sem_timeout == -1:
            self._mixed_acquire(s, recv, facts, f, nxt, check, store)
            return
        if forever:
            def make() -> Callable[[Ctx], None]:
                def run(ctx: Ctx) -> None:
                    r = recv(ctx)
                    check(ctx, r)
                    sync.acquire(ctx, r)
                    store(ctx, True)
                    ctx.pc = nxt.pc

                return run

            self.emit(make, True, s, kind="acquire", lock_name=self.lock_name(f.value),
                      guard_make=lambda: (lambda ctx: sync.can_acquire(ctx, recv(ctx))),
                      blocked_make=lambda: (lambda ctx: sync.acquire_text(ctx, recv(ctx), name)), **facts.info(),
                      fast=codegen.acquire_into(self, f.value, result, nxt),  # a Semaphore's (lang/codegen.py)
                      fast_guard=codegen.lock_method_guard(self, f.value))
            self.here(nxt)
            return

        def make_try() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                r = recv(ctx)
                check(ctx, r)
                store(ctx, sync.try_acquire(ctx, r))
                ctx.pc = nxt.pc

            return run

        self.emit(make_try, True, s, kind="try_acquire", lock_name=self.lock_name(f.value), **facts.info())
        self.here(nxt)

    def _mixed_acquire(self, s: ast.AST, recv: Fn, facts: Facts, f: ast.Attribute, nxt: Any,
                       check: Callable[[Ctx, Any], None], store: Callable[[Ctx, bool], None]) -> None:
        """``acquire(timeout=-1)``: no timeout for a Lock or an RLock, but a Semaphore's ``timeout=-1`` has
        already expired (CPython's ``Semaphore.acquire`` gives up at once): decided by the receiver, in one
        step blocked only for a lock."""
        name = self.mc.text(f.value)

        def is_semaphore(ctx: Ctx, r: Any) -> bool:
            return type(r) is Ref and sync.lock_of(ctx, r)[1][0] is SEMAPHORE

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                r = recv(ctx)
                check(ctx, r)
                if is_semaphore(ctx, r):
                    store(ctx, sync.try_acquire(ctx, r))
                else:
                    sync.acquire(ctx, r)
                    store(ctx, True)
                ctx.pc = nxt.pc

            return run

        self.emit(make, True, s, kind="try_acquire", lock_name=self.lock_name(f.value),
                  guard_make=lambda: (lambda ctx: is_semaphore(ctx, recv(ctx)) or sync.can_acquire(ctx, recv(ctx))),
                  blocked_make=lambda: (lambda ctx: sync.acquire_text(ctx, recv(ctx), name)), **facts.info())
        self.here(nxt)

    def _timeout(self, e: ast.Call, method: str) -> tuple[bool, Any]:
        """``wait(timeout=None)``, ``join(timeout=None)``: (whether there is a timeout, its value)."""
        args = self._arguments(e, ("timeout",), method)
        t = args.get("timeout")
        if t is not None and type(t) is bool:
            raise self.mc.error(e, f"{method}(): the timeout must be a number or None")
        return t is not None, t

    def compile_timed_wait(self, s: ast.AST, e: ast.Call, f: ast.Attribute, result: int | None) -> None:
        """``e.wait(timeout)``/``c.wait(timeout)`` (module docstring); without a timeout, ``wait()`` whose value
        is True."""
        timed, _ = self._timeout(e, "wait")
        if result is not None and self.mc.uses_barriers:
            raise self.mc.error(e, "the value of wait() in a model with a Barrier is not supported (a Barrier's "
                                   "wait() gives an index): call wait() as a statement")
        recv, facts = self._receiver(f)
        name = self.mc.text(f.value)
        if not timed:
            self.compile_wait(s, recv, False, name, facts)
            self._store_constant(s, result, True)
            return
        slot, count = self.hidden("w"), self.hidden("c")
        reacq, nxt = self.label(), self.label()
        if self.mc.uses_events:
            facts.fields_read.add("$flag")

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                r = recv(ctx)
                if type(r) is not Ref:
                    raise ModelError(f"wait() on {show(r)}")
                cls = ctx.heap[r.i][0]
                if cls is EVENT:
                    flag = sync.event_is_set(ctx, r)
                    if result is not None:
                        ctx.loc[result] = box(flag)
                    ctx.pc = nxt.pc
                    return
                if cls is BARRIER:
                    raise ModelError(f"{name}.wait(timeout) on a Barrier is not supported (a timeout breaks the "
                                     "barrier for every party): wait without a timeout")
                ctx.loc[count] = sync.wait(ctx, r, False)
                ctx.loc[slot] = r
                ctx.pc = reacq.pc

            return run

        self.emit(make, True, s, kind="wait", succ=[reacq, nxt], **facts.info())  # type: ignore[misc]
        self.here(reacq)

        def make2() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                loc = ctx.loc
                woken = sync.reacquire_timed(ctx, loc[slot], loc[count])
                loc[slot] = None
                loc[count] = None
                if result is not None:
                    loc[result] = box(woken)
                ctx.pc = nxt.pc

            return run

        def blocked(ctx: Ctx) -> str:
            return f"waits to re-acquire the lock of {sync.ref_text(ctx, ctx.loc[slot], name)}"

        self.emit(make2, True, s, kind="reacquire", source=f"{self.mc.text(s)}  (re-acquire)", chooses=True,
                  guard_make=lambda: (lambda ctx: sync.can_reacquire_timed(ctx, ctx.loc[slot])),
                  blocked_make=lambda: blocked, uses=tuple(facts.uses), succ=[nxt])
        self.here(nxt)

    def _store_constant(self, s: ast.AST, result: int | None, v: Any) -> None:
        if result is None:
            return
        nxt = self.label()

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                ctx.loc[result] = box(v)
                ctx.pc = nxt.pc

            return run

        self.emit(make, False, s, source="")
        self.here(nxt)

    def compile_wait_for(self, s: ast.AST, e: ast.Call, f: ast.Attribute, result: int | None) -> None:
        """``c.wait_for(pred, timeout)`` (module docstring); without a timeout, ``wait_for(pred)``, True."""
        if not e.args:
            raise self.mc.error(e, "wait_for(pred, timeout=None) needs a predicate")
        pred = e.args[0]
        rest = ast.copy_location(ast.Call(func=e.func, args=e.args[1:], keywords=e.keywords), e)
        timed, _ = self._timeout(rest, "wait_for")
        plain = ast.copy_location(ast.Call(func=e.func, args=[pred], keywords=[]), e)
        stmt = ast.copy_location(ast.Expr(plain), s)
        if not timed:
            self.wait_for_stmt(stmt, plain, f)  # type: ignore[attr-defined]
            self._store_constant(s, result, True)
            return
        test = self.wait_for_predicate(pred)  # type: ignore[attr-defined]
        first, recheck, wait, end_true, end_false, end = (self.label() for _ in range(6))
        self.here(first)

        def checker(give_up: bool) -> Callable[[], Callable[[Ctx], None]]:
            def build() -> Callable[[Ctx], None]:
                recv = self.expr(f.value)
                holds = self.condition(test)
                if give_up:
                    self.facts.chooses = True

                def finish(ctx: Ctx) -> None:
                    r = recv(ctx)
                    if type(r) is not Ref or ctx.heap[r.i][0] is not CONDITION:
                        what = show(r) if type(r) is not Ref else "a " + ctx.heap[r.i][0].name
                        raise ModelError(f"wait_for() on {what}: only a Condition has it")
                    if holds(ctx):
                        ctx.pc = end_true.pc
                    elif give_up and ctx.choose(2) == 1:
                        ctx.pc = end_false.pc  # the timeout has passed
                    else:
                        ctx.pc = wait.pc

                return finish

            return build

        text = f"{self.mc.text(s)}  (check {self.mc.text(pred)})"
        self.simple(s, checker(False), "loop", succ=[wait, end_true], source=text)  # type: ignore[attr-defined]
        self.here(wait)
        self.compile_timed_wait(s, ast.copy_location(ast.Call(func=e.func, args=[], keywords=[
            ast.keyword(arg="timeout", value=ast.copy_location(ast.Constant(1), e))]), e), f, None)
        self.here(recheck)
        self.simple(s, checker(True), "loop", succ=[wait, end_true, end_false], source=text)  # type: ignore[attr-defined]
        self.here(end_true)
        self._store_constant(s, result, True)
        self.jump(end, s)
        self.here(end_false)
        self._store_constant(s, result, False)
        self.here(end)

    def compile_timed_join(self, s: ast.AST, e: ast.Call, f: ast.Attribute) -> None:
        """``t.join(timeout)``: a step that changes nothing (module docstring); ``join(None)`` waits."""
        timed, _ = self._timeout(e, "join")
        if not timed:
            plain = ast.copy_location(ast.Call(func=e.func, args=[], keywords=[]), e)
            self.sync_method_stmt(s, plain, f)  # type: ignore[attr-defined]
            return
        recv, facts = self._receiver(f)
        facts.fields_read.add("_tid")  # started or not (start writes it): a runtime error before start
        nxt = self.label()

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                r = recv(ctx)
                if type(r) is Ref and ctx.heap[r.i][0].is_thread and ctx.heap[r.i][2] is None:
                    raise ModelError("cannot join thread before it is started", exc="RuntimeError")
                _thread_id(ctx, r)
                if ctx.track:
                    ctx.reads.append((r, 2))
                ctx.pc = nxt.pc

            return run

        self.emit(make, True, s, kind="yield", **facts.info())
        self.here(nxt)

    def call_stmt_sleep(self, s: ast.Expr, e: ast.Call) -> None:
        """``sleep(x)``: a step boundary that does nothing (module docstring); ``x`` is evaluated for its
        accesses, unless it is a constant."""
        if "sleep" in self.mc.functions:
            self.plain_stmt(s, lambda: self.expr(e))  # type: ignore[attr-defined]
            return
        if len(e.args) != 1 or e.keywords or isinstance(e.args[0], ast.Starred):
            raise self.mc.error(e, "sleep(seconds) takes one argument")
        a = e.args[0]
        c = constant(a)
        if c is not NOT_CONSTANT and (c is None or type(c) is bool):
            raise self.mc.error(a, "sleep(): the length must be a number")
        if c is not NOT_CONSTANT and c < 0:
            raise self.mc.error(a, "sleep length must be non-negative")
        with self.recording() as facts:
            length = self.expr(a, allow_calls=False) if c is NOT_CONSTANT else None
        nxt = self.label()

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                if length is not None:
                    v = length(ctx)
                    if type(v) is not int:
                        raise ModelError(f"'{show(v)}' cannot be interpreted as a sleep length", exc="TypeError")
                    if v < 0:
                        raise ModelError("sleep length must be non-negative", exc="ValueError")
                ctx.pc = nxt.pc

            return run

        self.emit(make, True, s, kind="yield", **facts.info())
        self.here(nxt)

    def compile_is_alive(self, s: ast.AST, e: ast.Call, f: ast.Attribute, result: int | None) -> None:
        """``t.is_alive()``: a read of whether ``t`` has ended, whose end is a write (``thread_end``)."""
        if e.args or e.keywords:
            raise self.mc.error(e, "is_alive() takes no arguments")
        recv, facts = self._receiver(f)
        facts.fields_read.add("_tid")
        nxt = self.label()

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                alive = thread_alive(ctx, recv(ctx))
                if result is not None:
                    ctx.loc[result] = box(alive)
                ctx.pc = nxt.pc

            return run

        self.emit(make, True, s, kind="is-alive", **facts.info())
        self.here(nxt)

    def ending(self, make: Callable[[], Callable[[Ctx], None]]) -> Callable[[], Callable[[Ctx], None]]:
        """``make``'s node, which may end the thread, recording the end (``thread_end``)."""
        def make_ending() -> Callable[[Ctx], None]:
            run = make()

            def ending_run(ctx: Ctx) -> None:
                run(ctx)
                if ctx.code is None:
                    thread_end(ctx)

            return ending_run

        return make_ending

    def b_sleep(self, e: ast.Call) -> Fn:
        raise self.mc.error(e, "sleep() must be a statement of its own")


__all__ = ["TimeoutCompiler", "VALUE_METHODS", "constant", "thread_alive", "thread_end"]
