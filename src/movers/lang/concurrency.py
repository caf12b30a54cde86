"""Concurrency constructs: with-blocks, synchronisation and atomicity, compiled to nodes.

``ConcurrencyCompiler`` is the ``FunctionCompiler`` mixin for ``with lock:`` (acquire and release, a step
each), ``with synchronized(obj):`` and ``@synchronized`` methods (Java monitors), ``with indivisible():`` (one
step), ``with atomic():`` and ``commit()`` (atomicity specifications, no step), and the synchronisation
statements: ``wait_until(cond)``, ``wait(obj)``, ``notify(obj)``, ``notify_all(obj)`` and the methods
``x.acquire()``, ``release()``, ``wait()``, ``notify()``, ``notify_all()``, ``start()`` and ``join()`` (a
plain call when ``x`` is a model object whose class defines the method). A block that ``return``, ``break``
or ``continue`` leaves is exited through the ``Exit`` it pushes on ``self.exits``.

``with lock as got:`` binds True after the acquire, what CPython's ``__enter__`` of a lock returns. In a model
where some class defines ``__enter__``, every other ``with`` is ``withs.ContextCompiler``'s: the value decides
at run time whether it is a lock or a context manager.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from movers.ir import sync
from movers.ir.machine import Ctx, ModelError, show
from movers.ir.program import BARRIER, CONDITION, EVENT, MON, SYNC_KINDS, AtomicBlock, Ref
from movers.lang import codegen, codegen_sync
from movers.lang.function import AV, NO_VALUE, Exit, Facts, Fn, FunctionCore, Label
from movers.lang.runtime_ops import join_guard, join_op, start_thread
from movers.lang.syntax import _is_call_to
from movers.lang.withs import SYNC_CLASSES, lock_or_fail


class ConcurrencyCompiler(FunctionCore):
    """``with`` blocks and the statements that synchronise threads or delimit atomic blocks."""

    # -- with blocks ------------------------------------------------------------------------------------------

    def stmt_With(self, s: ast.With) -> None:
        items = list(s.items)
        if len(items) > 1:
            inner = ast.With(items=items[1:], body=s.body)
            ast.copy_location(inner, s)
            self.stmt_With(ast.copy_location(ast.With(items=items[:1], body=[inner]), s))
            return
        item = items[0]
        e = item.context_expr
        var = item.optional_vars
        special = next((f for f in ("indivisible", "atomic", "synchronized") if _is_call_to(e, f)), None)
        if var is not None and special is not None:
            raise self.mc.error(var, f"'with {special}(…)' has no value to bind: drop the 'as {self.mc.text(var)}'")
        if special is None and self.mc.defines_method("__enter__"):
            self.context_with(s, e, var)  # type: ignore[attr-defined]  # lang/withs.py
            return
        if _is_call_to(e, "indivisible"):
            self.compile_indivisible(s)
            return
        if _is_call_to(e, "atomic"):
            self.compile_atomic(s)
            return
        if _is_call_to(e, "synchronized"):
            assert isinstance(e, ast.Call)
            if len(e.args) != 1:
                raise self.mc.error(e, "synchronized(obj) takes one object")
            slot = self.hidden("mon")
            with self.recording() as facts:
                obj = self.expr(e.args[0], allow_calls=False)

            def r(ctx: Ctx) -> Any:
                return ctx.loc[slot]

            self.compile_monitor_with(s, r, s.body, f"with {self.mc.text(e)}:", self.mc.text(e.args[0]),
                                      init=(slot, obj), facts=facts, av=self.value(e.args[0]), fast_obj=e.args[0])
            return
        self.compile_lock_with(s, e, var)

    def compile_lock_with(self, s: ast.With, e: ast.expr, var: ast.expr | None = None) -> None:
        """``with lock:`` on a Lock, RLock, Semaphore or Condition; ``with lock as got:`` binds True, what
        CPython's ``__enter__`` of each returns, after the acquire (at the start of the block, as CPython)."""
        body = s.body
        if var is not None:
            true = ast.copy_location(ast.Constant(True), var)
            body = [ast.fix_missing_locations(ast.copy_location(ast.Assign(targets=[var], value=true), var)), *body]
        slot = self.hidden("lock")
        with self.recording() as facts:
            lock = self.expr(e, allow_calls=False)
            facts.uses.append(self.value(e))
        uses = (self.value(e),)  # the exit releases the same lock
        name = self.mc.text(e)
        nxt = self.label()

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                r = lock(ctx)
                if type(r) is not Ref or ctx.heap[r.i][0] not in SYNC_CLASSES:
                    lock_or_fail(ctx, r)  # CPython's TypeError: not a context manager
                ctx.loc[slot] = r
                sync.acquire(ctx, r)
                ctx.pc = nxt.pc

            return run

        def guard_make() -> Callable[[Ctx], bool]:
            return lambda ctx: sync.can_acquire(ctx, lock(ctx))

        def blocked_make() -> Callable[[Ctx], str]:
            return lambda ctx: sync.acquire_text(ctx, lock(ctx), name)

        lock_name = self.lock_name(e)
        # Any reference codegen reads (a local's too), and Conditions and RLocks besides Locks.
        fast = codegen_sync.lock_enter(self, e, slot, nxt)
        fast_guard = codegen_sync.lock_guard(self, e)
        self.emit(make, True, s, kind="acquire", source=f"with {name}:", guard_make=guard_make,
                  blocked_make=blocked_make, lock_name=lock_name, fast=fast, fast_guard=fast_guard, **facts.info())
        self.here(nxt)

        def emit_exit(at_node: ast.AST) -> None:
            after = self.label()

            def make_exit() -> Callable[[Ctx], None]:
                def run(ctx: Ctx) -> None:
                    r = ctx.loc[slot]
                    ctx.loc[slot] = None
                    sync.release(ctx, r)
                    ctx.pc = after.pc

                return run

            self.emit(make_exit, True, at_node, kind="release", source=f"end of with {name}: release",
                      lock_name=lock_name, uses=uses, fast=codegen_sync.lock_exit(slot, after),
                      line=getattr(at_node, "end_lineno", s.lineno) if at_node is s else at_node.lineno)
            self.here(after)

        # An exception leaving the block runs its exit too (lang/exceptions.py).
        self.protect(lambda: self.compile_block(body), emit_exit, s, Exit(emit_exit))  # type: ignore[attr-defined]
        # The exit clears the lock's slot, so that states do not remember which lock a finished block held.
        emit_exit(s)

    def lock_name(self, e: ast.expr) -> str | None:
        """The global a lock expression names (``m0``), or None when it is not known statically."""
        if isinstance(e, ast.Name) and self.is_global(e.id):
            return e.id
        return None

    def is_global(self, name: str) -> bool:
        if self.is_module:
            return name in self.mc.global_slot
        return name not in self.slot and name in self.mc.global_slot

    def compile_monitor_with(
        self,
        s: ast.AST,
        r: Fn,
        body: list[ast.stmt],
        src: str,
        name: str,
        init: tuple[int, Fn] | None = None,
        facts: Facts | None = None,
        av: AV = NO_VALUE,
        fast_obj: ast.expr | int | None = None,
    ) -> None:
        """``av``: the abstract value of the object whose monitor the block holds (static escape analysis);
        ``fast_obj``: the object's expression, or the local slot that holds it, for the generated code."""
        nxt = self.label()
        if init is not None:
            slot, obj = init

            def target(ctx: Ctx) -> Any:
                return obj(ctx)
        else:
            slot = -1
            target = r

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                o = target(ctx)
                if slot >= 0:
                    ctx.loc[slot] = o
                sync.enter(ctx, o)
                ctx.pc = nxt.pc

            return run

        def guard_make() -> Callable[[Ctx], bool]:
            return lambda ctx: sync.can_enter(ctx, target(ctx))

        def blocked_make() -> Callable[[Ctx], str]:
            def text(ctx: Ctx) -> str:
                o = target(ctx)
                own = sync.owner(ctx, o)
                return f"waits for the monitor of {sync.ref_text(ctx, o, name)} (held by {sync.thread_text(ctx, own)})"

            return text

        info = (facts or Facts()).info()
        info["uses"] = (*info["uses"], av)
        if fast_obj is not None:
            info["fast"] = codegen_sync.monitor_enter(self, fast_obj, slot, nxt)
            info["fast_guard"] = codegen_sync.monitor_enter_guard(self, fast_obj)
        self.emit(make, True, s, kind="acquire", source=src, guard_make=guard_make, blocked_make=blocked_make,
                  **info)
        self.here(nxt)

        def emit_exit(at_node: ast.AST) -> None:
            after = self.label()

            def make_exit() -> Callable[[Ctx], None]:
                def run(ctx: Ctx) -> None:
                    o = r(ctx)
                    if slot >= 0:
                        ctx.loc[slot] = None
                    sync.exit_(ctx, o)
                    ctx.pc = after.pc

                return run

            line = getattr(at_node, "end_lineno", 0) if at_node is s else getattr(at_node, "lineno", 0)
            fast = None
            if slot >= 0 or isinstance(fast_obj, int):
                fast = codegen_sync.monitor_exit(slot if slot >= 0 else fast_obj, slot >= 0, after)  # type: ignore[arg-type]
            self.emit(make_exit, True, at_node, kind="release", source=f"leave monitor of {name}", line=line,
                      uses=(av,), fast=fast)
            self.here(after)

        # An exception leaving the block runs its exit too (lang/exceptions.py).
        self.protect(lambda: self.compile_block(body), emit_exit, s, Exit(emit_exit))  # type: ignore[attr-defined]
        emit_exit(s)

    def compile_synchronized_body(self, fn: ast.FunctionDef, body: list[ast.stmt]) -> None:
        """A @synchronized method runs as ``with synchronized(self):`` around its body."""
        self_slot = 0
        src = f"{fn.name}(): enter monitor of self"

        def r(ctx: Ctx) -> Any:
            return ctx.loc[self_slot]

        self.compile_monitor_with(fn, r, body, src, "self", av=frozenset({("local", self_slot)}), fast_obj=self_slot)

    def compile_indivisible(self, s: ast.With) -> None:
        body = [b for b in s.body if not isinstance(b, ast.Pass)]
        nxt = self.label()

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                ctx.atomic += 1
                ctx.pc = nxt.pc

            return run

        entry = self.emit(make, True, s, kind="indivisible", source="with indivisible():",
                          fast=codegen_sync.indivisible(1, nxt))
        self.here(nxt)

        def emit_exit(at_node: ast.AST) -> None:
            after = self.label()

            def make_exit() -> Callable[[Ctx], None]:
                def run(ctx: Ctx) -> None:
                    ctx.atomic -= 1
                    ctx.pc = after.pc

                return run

            self.emit(make_exit, False, at_node, source="", fast=codegen_sync.indivisible(-1, after))
            self.here(after)

        start = len(self.pending)
        # An exception leaving the block runs its exit too (lang/exceptions.py).
        self.protect(lambda: self.compile_block(body), emit_exit, s, Exit(emit_exit))  # type: ignore[attr-defined]
        emit_exit(s)
        # The block is enabled when its first statement is (e.g. a wait_until guarding a compare-and-swap).
        if start < len(self.pending):
            info = self.pending[start][1]
            if "guard_make" in info:
                self.pending[entry][1]["guard_make"] = info["guard_make"]
                self.pending[entry][1]["fast_guard"] = info.get("fast_guard")
                if "blocked_make" in info:
                    self.pending[entry][1]["blocked_make"] = info["blocked_make"]
        # The nodes inside run in the entry's step; mark their static facts on the entry for reductions.
        inner = [self.pending[i][1] for i in range(start, len(self.pending))]
        ent = self.pending[entry][1]
        for key in ("reads", "writes", "fields_read", "fields_written"):
            acc: set[str] = set(ent.get(key, frozenset()))
            for inf in inner:
                acc |= inf.get(key, frozenset())
            ent[key] = frozenset(acc)
        if any(inf.get("kind", "stmt") in SYNC_KINDS for inf in inner):
            ent["kind"] = "indivisible"
        else:
            ent["kind"] = "atomic-step"
        for key in ("elements_read", "elements_written"):
            ent[key] = any(inf.get(key, False) for inf in inner)
        ent["callee_names"] = frozenset().union(*(inf.get("callee_names", frozenset()) for inf in inner))
        ent["allocates"] = any(inf.get("allocates", False) for inf in inner)
        ent["chooses"] = any(inf.get("chooses", False) for inf in inner)

    def compile_atomic(self, s: ast.With) -> None:
        """An atomicity specification costs no step. Its exit (at its end, and on every ``return``,
        ``break`` or ``continue`` that leaves it) is a step-free marker that records, in a tracked step's
        Effect, that the thread left its outermost block: one step may leave a block and enter the next
        (``while True: with atomic(): ...``), so commit-atomicity cannot tell phases from the pc alone."""
        outer = self.atomic_block
        ident = len(self.mc.atomic_blocks)
        block = AtomicBlock(ident, s.lineno, self.mc.text(s).split("\n")[0], outer)
        self.mc.atomic_blocks.append(block)
        self.atomic_block = ident
        lexically_outermost = outer < 0

        def emit_exit(at_node: ast.AST) -> None:
            after = self.label()

            def make_exit() -> Callable[[Ctx], None]:
                def run(ctx: Ctx) -> None:
                    if ctx.track and lexically_outermost and not any(
                            f[0].nodes[f[1]].atomic_block >= 0 for f in ctx.frames):
                        ctx.blocks.append(ident)
                    ctx.pc = after.pc

                return run

            self.emit(make_exit, False, at_node, source="", kind="atomic-exit",
                      fast=codegen_sync.atomic_exit(after, lexically_outermost))
            self.here(after)

        # An exception leaving the block runs its exit too (lang/exceptions.py).
        self.protect(lambda: self.compile_block(s.body), emit_exit, s, Exit(emit_exit))  # type: ignore[attr-defined]
        # commit() as the block's last statement: the block's last step commits (it leaves the block, which is
        # a commit anyway); the mark must not fall on the first step after the block.
        self.commit_next = False
        self.atomic_block = outer
        emit_exit(s)

    # -- synchronisation statements ---------------------------------------------------------------------------

    def call_stmt_wait_until(self, s: ast.Expr, e: ast.Call) -> None:
        if len(e.args) != 1 or e.keywords:
            raise self.mc.error(e, "wait_until(cond) takes one condition")
        with self.recording() as facts:
            cond = self.condition(e.args[0], allow_calls=False)
        nxt = self.label()
        text = self.mc.text(e.args[0])

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                # Evaluated again when executed: its reads are the step's accesses, and an error in the
                # condition (which the guard reports as "enabled") is raised here.
                if not cond(ctx):
                    raise ModelError(f"wait_until({text}) executed while false")
                ctx.pc = nxt.pc

            return run

        self.emit(make, True, s, kind="wait_until", guard_make=lambda: cond,
                  blocked_make=lambda: (lambda ctx: f"waits until {text}"), **facts.info(),
                  fast=codegen.check(self, e.args[0], nxt), fast_guard=codegen_sync.condition_guard(self, e.args[0]))
        self.here(nxt)

    def call_stmt_commit(self, s: ast.Expr, e: ast.Call) -> None:
        if self.atomic_block < 0:
            raise self.mc.error(e, "commit() outside 'with atomic():'")
        self.commit_next = True
        b = self.mc.atomic_blocks[self.atomic_block]
        while True:
            b.has_commit = True
            if b.outer < 0:
                break
            b = self.mc.atomic_blocks[b.outer]

    def call_stmt_wait(self, s: ast.Expr, e: ast.Call) -> None:
        if len(e.args) != 1:
            raise self.mc.error(e, "wait(obj) takes one object")
        with self.recording() as facts:
            obj = self.expr(e.args[0], allow_calls=False)
            facts.uses.append(self.value(e.args[0]))
        self.compile_wait(s, obj, True, self.mc.text(e.args[0]), facts, e.args[0])

    def call_stmt_notify(self, s: ast.Expr, e: ast.Call) -> None:
        self._notify_stmt(s, e, False)

    def call_stmt_notify_all(self, s: ast.Expr, e: ast.Call) -> None:
        self._notify_stmt(s, e, True)

    def _notify_stmt(self, s: ast.Expr, e: ast.Call, everyone: bool) -> None:
        if len(e.args) != 1:
            raise self.mc.error(e, "notify(obj) takes one object")
        with self.recording() as facts:
            obj = self.expr(e.args[0], allow_calls=False)
            facts.uses.append(self.value(e.args[0]))
        nxt = self.label()

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                sync.notify(ctx, obj(ctx), True, everyone)
                ctx.pc = nxt.pc

            return run

        self.emit(make, True, s, kind="notify", fast=codegen_sync.notify(self, e.args[0], True, everyone, nxt),
                  **facts.info())
        self.here(nxt)

    def compile_wait(self, s: ast.AST, obj: Fn, monitor: bool, name: str, facts: Facts,
                     fast_obj: ast.expr | None = None) -> None:
        """``wait`` is two steps: release and join the wait set; then, once notified, re-acquire.

        ``x.wait()`` may also meet an Event (one step, enabled while it is set) or a Barrier (two steps:
        arrive; then, once the party is complete, pass), which the receiver's class tells at run time. The
        first step is then guarded (by the event's flag) and its facts cover every branch; its kind stays
        ``wait``, which every reduction treats as blocking synchronisation, and its recorded accesses to the
        event or barrier (unprotected data) make it a non-mover."""
        slot, count = self.hidden("w"), self.hidden("c")
        reacq, nxt = self.label(), self.label()
        events = not monitor and self.mc.uses_events
        passing = self.label() if not monitor and self.mc.uses_barriers else None
        if events:
            facts.fields_read.add("$flag")
        if passing is not None:
            facts.fields_read |= {"$parties", "$waiters"}
            facts.fields_written.add("$waiters")

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                r = obj(ctx)
                if type(r) is not Ref:
                    raise ModelError(f"wait() on {show(r)}", exc="AttributeError")
                cls = ctx.heap[r.i][0]
                if cls is EVENT:
                    if not sync.event_is_set(ctx, r):  # the guard says it is: this only records the read
                        raise ModelError(f"{name}.wait() executed while the event is clear")
                    ctx.pc = nxt.pc
                    return
                if cls is BARRIER and passing is not None:
                    sync.barrier_arrive(ctx, r)
                    ctx.loc[slot] = r
                    ctx.pc = passing.pc
                    return
                ctx.loc[count] = sync.wait(ctx, r, monitor)
                ctx.loc[slot] = r
                ctx.pc = reacq.pc

            return run

        info: dict[str, Any] = facts.info()
        if events:
            def event_guard(ctx: Ctx) -> bool:
                r = obj(ctx)
                return type(r) is not Ref or ctx.heap[r.i][0] is not EVENT or sync.event_is_set(ctx, r)

            info["guard_make"] = lambda: event_guard
            info["blocked_make"] = lambda: (lambda ctx: f"waits for the event {name} to be set")
        if events or passing is not None:
            info["succ"] = [reacq, nxt] + ([passing] if passing is not None else [])
        if fast_obj is not None:
            info["fast"] = codegen_sync.wait(self, fast_obj, monitor, slot, count, reacq, nxt, events)
            if events:
                info["fast_guard"] = codegen_sync.wait_guard(self, fast_obj)
        self.emit(make, True, s, kind="wait", **info)
        self.here(reacq)

        def make2() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                loc = ctx.loc
                sync.reacquire(ctx, loc[slot], monitor, loc[count])
                loc[slot] = None
                loc[count] = None
                ctx.pc = nxt.pc

            return run

        def guard() -> Callable[[Ctx], bool]:
            return lambda ctx: sync.can_reacquire(ctx, ctx.loc[slot], monitor)

        def blocked() -> Callable[[Ctx], str]:
            def text(ctx: Ctx) -> str:
                r = ctx.loc[slot]
                o = ctx.heap[r.i]
                waiting = ctx.tid in (o[MON][2] if monitor and o[MON] else o[3] if not monitor else ())
                what = sync.ref_text(ctx, r, name)
                return f"waits for a notify on {what}" if waiting else f"waits to re-acquire the lock of {what}"

            return text

        self.emit(make2, True, s, kind="reacquire", source=f"{self.mc.text(s)}  (re-acquire)",
                  guard_make=guard, blocked_make=blocked, uses=tuple(facts.uses), succ=[nxt],
                  fast=codegen_sync.reacquire(slot, count, monitor, nxt),
                  fast_guard=codegen_sync.reacquire_guard(slot, monitor))
        if passing is not None:
            self.compile_barrier_pass(s, slot, passing, nxt, name, facts)
        self.here(nxt)

    def compile_barrier_pass(self, s: ast.AST, slot: int, passing: Label, nxt: Label, name: str,
                             facts: Facts) -> None:
        """The second step of ``b.wait()`` on a Barrier: enabled once the party this thread arrived in is
        complete. A guarded step that reads the barrier, as ``wait_until`` reads its condition."""
        self.here(passing)

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                loc = ctx.loc
                if not sync.barrier_can_pass(ctx, loc[slot]):  # the guard says it can: this records the read
                    raise ModelError(f"{name}.wait() passed the barrier before its party was complete")
                loc[slot] = None
                ctx.pc = nxt.pc

            return run

        def blocked(ctx: Ctx) -> str:
            o = ctx.heap[ctx.loc[slot].i]
            return f"waits at the barrier {name} ({len(o[3])} of {o[2]} parties arrived)"

        self.emit(make, True, s, kind="wait_until", source=f"{self.mc.text(s)}  (pass the barrier)",
                  guard_make=lambda: (lambda ctx: sync.barrier_can_pass(ctx, ctx.loc[slot])),
                  blocked_make=lambda: blocked, uses=tuple(facts.uses), fields_read=frozenset({"$waiters"}),
                  succ=[nxt])

    def wait_for_stmt(self, s: ast.Expr, e: ast.Call, f: ast.Attribute) -> None:
        """``cv.wait_for(pred)`` is ``while not pred(): cv.wait()``, as in Python: the predicate is checked
        first, with the lock held (one step each time, as a ``while`` condition), and after every wake-up.
        ``pred`` is a lambda without parameters (its body is read in the caller's scope) or the name of a
        model function without parameters."""
        if len(e.args) != 1 or e.keywords:
            self.timed_call(s, e, f, None)  # type: ignore[attr-defined]  # wait_for(pred, timeout): lang/timeouts.py
            return
        test = self.wait_for_predicate(e.args[0])
        p = e.args[0]
        head, wait, end = self.label(), self.label(), self.label()
        name = self.mc.text(f.value)
        self.here(head)

        def build() -> Callable[[Ctx], None]:
            recv = self.expr(f.value)
            holds = self.condition(test)

            def finish(ctx: Ctx) -> None:
                r = recv(ctx)
                if type(r) is not Ref or ctx.heap[r.i][0] is not CONDITION:
                    raise ModelError(f"wait_for() on {show(r) if type(r) is not Ref else 'a ' + ctx.heap[r.i][0].name}"
                                     ": only a Condition has it", exc="AttributeError")
                ctx.pc = end.pc if holds(ctx) else wait.pc

            return finish

        self.simple(s, build, "loop", succ=[wait, end], source=f"{self.mc.text(s)}  (check {self.mc.text(p)})",
                    fast=codegen_sync.wait_for_check(self, f.value, test, wait, end))
        self.here(wait)
        with self.recording() as facts:
            recv = self.expr(f.value, allow_calls=False)
            facts.uses.append(self.value(f.value))
        self.compile_wait(s, recv, False, name, facts, f.value)
        self.jump(head, s)
        self.here(end)

    def wait_for_predicate(self, p: ast.expr) -> ast.expr:
        """The test that ``wait_for``'s predicate ``p`` stands for (see ``wait_for_stmt``)."""
        if isinstance(p, ast.Lambda):
            a = p.args
            if a.posonlyargs or a.args or a.vararg or a.kwonlyargs or a.kwarg:
                raise self.mc.error(p, "wait_for(pred): the predicate takes no arguments")
            test: ast.expr = p.body
        elif isinstance(p, ast.Name) and p.id in self.mc.functions and p.id not in self.slot:
            self.check_arity(p, self.mc.functions[p.id], 0)
            test = ast.copy_location(ast.Call(func=p, args=[], keywords=[]), p)
        else:
            raise self.mc.error(p, "wait_for(pred): pred must be a lambda without parameters or the name of a "
                                   "model function")
        return test

    def sync_method_stmt(self, s: ast.Expr, e: ast.Call, f: ast.Attribute) -> None:
        """``x.acquire()`` and friends: a synchronisation step when ``x`` is a lock, condition or thread;
        a plain method call when ``x`` is a model object that defines the method."""
        method = f.attr
        if method in ("acquire", "wait", "join") and self.timed_call(s, e, f, None):  # type: ignore[attr-defined]
            return  # with a timeout, or without blocking: lang/timeouts.py
        if e.args or e.keywords:
            raise self.mc.error(e, f"{method}() with arguments is not supported in models")
        with self.recording() as facts:
            recv = self.expr(f.value, allow_calls=False)
        # The receiver may be a model object whose class defines the method: then it is a plain call.
        facts.callees.add("." + method)
        rv = self.value(f.value)
        facts.uses.append(rv)
        facts.flows.append(("method_call", rv, method, ()))
        if method == "start":
            facts.flows.append(("start", rv))
            if self.mc.daemon_slot is not None:
                facts.writes.add("$daemons")  # a daemon thread's start() adds its id (runtime_ops.start_thread)
        name = self.mc.text(f.value)
        user_call_site = self.label()
        nxt = self.label()
        # A model object whose class defines the method gets a normal call instead.
        user_setup = self.method_call_setup(recv, method, [], e)

        if method == "wait":
            self.compile_wait(s, recv, False, name, facts, f.value)  # c.wait() on a Condition
            return

        op: Callable[[Ctx, Any], None]
        guard: Callable[[Ctx, Any], bool] | None = None
        blocked: Callable[[Ctx, Any], str] | None = None
        kind = method
        if method == "acquire":
            op, guard = sync.acquire, sync.can_acquire

            def blocked(ctx: Ctx, r: Any) -> str:
                return sync.acquire_text(ctx, r, name)
        elif method == "release":
            op = sync.release
        elif method in ("notify", "notify_all", "notifyAll"):
            everyone = method != "notify"
            kind = "notify"

            def op(ctx: Ctx, r: Any, everyone: bool = everyone) -> None:
                sync.notify(ctx, r, False, everyone)
        elif method == "start":
            op = start_thread
        else:  # join
            op, guard = join_op, join_guard

            def blocked(ctx: Ctx, r: Any) -> str:
                return f"waits for {sync.thread_text(ctx, ctx.heap[r.i][2])} ({name}) to finish"

        def is_user(ctx: Ctx, r: Any) -> bool:
            return type(r) is Ref and ctx.heap[r.i][0].lookup(method) is not None

        def make() -> Callable[[Ctx], None]:
            after = nxt.pc
            ret = user_call_site.pc

            def run(ctx: Ctx) -> None:
                r = recv(ctx)
                if is_user(ctx, r):
                    user_setup(ctx, ret)
                    return
                op(ctx, r)
                ctx.pc = after

            return run

        info: dict[str, Any] = {}
        if guard is not None:
            g = guard

            def guard_make() -> Callable[[Ctx], bool]:
                def run(ctx: Ctx) -> bool:
                    r = recv(ctx)
                    return is_user(ctx, r) or g(ctx, r)

                return run

            info["guard_make"] = guard_make
        if blocked is not None:
            b = blocked
            info["blocked_make"] = lambda: (lambda ctx: b(ctx, recv(ctx)))
        if method == "join":
            info["fast"] = codegen.join(self, f.value, nxt)
            info["fast_guard"] = codegen.join_guard(self, f.value)
        elif method in ("notify", "notify_all", "notifyAll"):
            info["fast"] = codegen_sync.notify(self, f.value, False, method != "notify", nxt)
        elif method in ("acquire", "release"):
            info["fast"] = codegen.lock_method(self, f.value, method, nxt)
            if method == "acquire":
                info["fast_guard"] = codegen.lock_method_guard(self, f.value)
        self.emit(make, True, s, kind=kind, lock_name=self.lock_name(f.value), succ=[nxt, user_call_site], **info,
                  **facts.info())
        self.here(user_call_site)
        self.jump(nxt, s)
        self.here(nxt)
