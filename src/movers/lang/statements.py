"""Statements: plain and control-flow statements, compiled to nodes.

``StatementCompiler`` is the ``FunctionCompiler`` mixin with ``stmt_X`` for each supported statement
``ast.X`` (``stmt`` dispatches on the node's type; a statement without a method is an unsupported construct):
``pass``, expression statements, assignments, ``assert``, ``global``, ``return``, ``break``/``continue``,
``if``, ``while`` and ``for`` (their ``else`` blocks run when no ``break`` left the loop, as in CPython); and
``call_stmt_X`` for the statement-level builtins ``assume(cond)`` and
``print(…)`` (tried first for a call statement ``X(…)``). A simple statement is one step, its first node
costly and the rest glue (``simple`` in ``function.py``); a non-constant ``if``/``while`` condition is a step
of its own (``test_stmt``), and so is each ``for`` header. ``with`` blocks and the synchronisation statements
are in ``concurrency.py``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from movers.ir.machine import AssertionFailed, Ctx, ModelError, Pruned, show
from movers.ir.program import UNBOUND, Ref, box, unbox
from movers.lang import codegen, codegen_calls, codegen_sync, deques, strings, threadinfo
from movers.lang.containers import dict_get, dict_set
from movers.lang.expressions import _model_methods
from movers.lang.function import NO_VALUE, Exit, Fn, FunctionCore, Label
from movers.lang.iteration import STOP
from movers.lang.runtime_ops import (
    BINOPS,
    check_ref,
    element_index,
    range_int,
    writable_field,
)
from movers.lang.syntax import (
    CHANGING_METHODS,
    DECLARATIONS,
    DEQUE_CHANGING_METHODS,
    SYNC_METHODS,
    _is_call_to,
    _is_docstring,
)
from movers.lang.timeouts import thread_end


def _constant_truth(e: ast.expr) -> bool | None:
    if isinstance(e, ast.Constant) and isinstance(e.value, (bool, int, type(None))):
        return bool(e.value)
    return None


class StatementCompiler(FunctionCore):
    """``stmt_X``: the rule for statement ``ast.X``; ``call_stmt_X``: for the call statement ``X(…)``."""

    # -- blocks -----------------------------------------------------------------------------------------------

    def compile_block(self, body: list[ast.stmt]) -> None:
        for s in body:
            with self.mc.collecting():  # a refusal here does not hide the next statement's
                self.stmt(s)

    def stmt(self, s: ast.stmt) -> None:
        m = getattr(self, "stmt_" + type(s).__name__, None)
        if m is None:
            raise self.mc.error(s, f"unsupported construct: {type(s).__name__.lower()} statement")
        # A try or with the lowering marked: the temporaries it found live there (lang/granularity.py); the
        # statements the compiler makes of one (``with a, b:``) are where it is.
        floor = self.temp_floor
        self.temp_floor = getattr(s, "movers_temps", floor)
        try:
            m(s)
        finally:
            self.temp_floor = floor

    # -- simple statements ------------------------------------------------------------------------------------

    def stmt_FunctionDef(self, s: ast.FunctionDef) -> None:
        """A nested ``def``: its value (lang/functions_model.py) stored in the local of its name."""
        nxt = self.label()

        def build() -> Callable[[Ctx], None]:
            value = self.function_value(s)  # type: ignore[attr-defined]
            store = self.store(ast.copy_location(ast.Name(id=s.name, ctx=ast.Store()), s), self.value(s))

            def finish(ctx: Ctx) -> None:
                store(ctx, value(ctx))
                ctx.pc = nxt.pc

            return finish

        self.simple(s, build)
        self.here(nxt)

    def stmt_Pass(self, s: ast.Pass) -> None:
        pass

    def stmt_Expr(self, s: ast.Expr) -> None:
        e = s.value
        if _is_docstring(s):
            return
        if isinstance(e, ast.Call):
            f = e.func
            if isinstance(f, ast.Name):
                handler = getattr(self, "call_stmt_" + f.id, None)
                if handler is not None and f.id not in self.slot:
                    handler(s, e)
                    return
                if f.id in DECLARATIONS:
                    raise self.mc.error(e, f"{f.id}(…) must be at the top level of the model")
            elif isinstance(f, ast.Attribute) and f.attr in SYNC_METHODS and not _literal_join(f):
                self.sync_method_stmt(s, e, f)
                return
            elif (isinstance(f, ast.Attribute) and f.attr == "wait_for"
                  and "wait_for" not in _model_methods(self.mc.class_nodes)):
                self.wait_for_stmt(s, e, f)
                return
        self.plain_stmt(s, lambda: self.expr(e))

    def plain_stmt(self, s: ast.AST, value_builder: Callable[[], Fn], kind: str = "stmt") -> None:
        nxt = self.label()

        def build() -> Callable[[Ctx], None]:
            v = value_builder()

            def make_finish(ctx: Ctx) -> None:
                v(ctx)
                ctx.pc = nxt.pc

            return make_finish

        fast = None
        e = getattr(s, "value", None)
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "set" and not e.args \
                and not e.keywords:
            fast = codegen_sync.event_set(self, e.func.value, nxt)  # used only when no model call is hoisted
        elif e is not None:
            fast = codegen.list_method(self, e, nxt)  # xs.append(v), xs.pop(i)
        self.simple(s, build, kind, fast_after=nxt, fast=fast)
        self.here(nxt)

    def stmt_Assign(self, s: ast.Assign) -> None:
        if self.timed_assign(s):  # type: ignore[attr-defined]  # ok = lock.acquire(False): lang/timeouts.py
            return
        nxt = self.label()

        def build() -> Callable[[Ctx], None]:
            value = self.expr(s.value)
            stores = [self.store(t, self.value(s.value)) for t in s.targets]
            if len(stores) == 1:
                store = stores[0]

                def finish(ctx: Ctx) -> None:
                    store(ctx, value(ctx))
                    ctx.pc = nxt.pc
            else:
                def finish(ctx: Ctx) -> None:
                    v = value(ctx)
                    for st in stores:
                        st(ctx, v)
                    ctx.pc = nxt.pc

            return finish

        fast = codegen.assign(self, s.targets[0], s.value, nxt) if len(s.targets) == 1 else None
        self.simple(s, build, fast=fast, fast_after=nxt)
        self.here(nxt)

    def stmt_AnnAssign(self, s: ast.AnnAssign) -> None:
        if s.value is None:
            return
        self.stmt_Assign(ast.copy_location(ast.Assign(targets=[s.target], value=s.value), s))

    def stmt_AugAssign(self, s: ast.AugAssign) -> None:
        op = BINOPS.get(type(s.op))
        if op is None:
            raise self.mc.error(s, "unsupported operator (use // for integer division)")
        nxt = self.label()

        def build() -> Callable[[Ctx], None]:
            value = self.expr(s.value)
            t = s.target
            if isinstance(t, ast.Name):
                loaded = ast.copy_location(ast.Name(id=t.id, ctx=ast.Load()), t)
                load = self.expr(loaded)
                store = self.store(t, self.value(loaded) | self.value(s.value))  # `t += (r,)`

                def finish(ctx: Ctx) -> None:
                    store(ctx, op(load(ctx), value(ctx)))
                    ctx.pc = nxt.pc

                if self.mc.has_deques and isinstance(s.op, (ast.Add, ast.Mult)):
                    plain = finish

                    def finish(ctx: Ctx) -> None:
                        v = load(ctx)
                        if type(v) is Ref and deques.is_deque(ctx.heap[v.i]):
                            raise deques.in_place(isinstance(s.op, ast.Add))
                        plain(ctx)

                return finish
            if isinstance(t, ast.Attribute):
                obj = self.expr(t.value)
                name = t.attr
                self.facts.fields_read.add(name)
                self.facts.fields_written.add(name)
                threadinfo.store_facts(self.facts, self.mc.has_local)
                self.facts.uses.append(self.value(t.value))
                self.flow("store", ("field", self.value(t.value), name), self.value(s.value))

                def finish(ctx: Ctx) -> None:
                    r = check_ref(obj(ctx), f"attribute '{name}'")
                    o = ctx.heap[r.i]
                    if o[0] is threadinfo.LOCAL:  # the running thread's attribute (lang/threadinfo.py)
                        threadinfo.local_set(ctx, r, name, op(threadinfo.local_get(ctx, r, name), value(ctx)))
                        ctx.pc = nxt.pc
                        return
                    idx = writable_field(o, name)
                    if ctx.track:
                        ctx.reads.append((r, idx))
                    if o[idx] is UNBOUND:
                        raise ModelError(f"{o[0].name} object has no attribute '{name}' (not assigned yet)",
                                         exc="AttributeError")
                    ctx.set_field(r, idx, op(unbox(o[idx]), value(ctx)))
                    ctx.pc = nxt.pc

                return finish
            if isinstance(t, ast.Subscript):
                seq = self.expr(t.value)
                index = self.expr(t.slice)
                self.facts.elements_read = self.facts.elements_written = True
                self.facts.uses.append(self.value(t.value))
                self.flow("store", ("element", self.value(t.value)), self.value(s.value))
                if self.mc.has_dicts:  # a dict's key may be stored
                    self.flow("store", ("element", self.value(t.value)), self.value(t.slice))

                def finish(ctx: Ctx) -> None:
                    r = seq(ctx)
                    i = index(ctx)
                    if type(r) is not Ref:
                        raise ModelError(f"item assignment on {show(r)}", exc="TypeError")
                    o = ctx.heap[r.i]
                    if o[0].builtin == "dict":  # d[k] += v: one lookup, one store (lang/containers.py)
                        dict_set(ctx, r, i, op(dict_get(ctx, r, i), value(ctx)))
                        ctx.pc = nxt.pc
                        return
                    if o[0].builtin == "deque":  # d[i] += v (lang/deques.py)
                        deques.set_item(ctx, r, i, op(deques.get_item(ctx, r, i), value(ctx)))
                        ctx.pc = nxt.pc
                        return
                    idx = element_index(ctx, r, o, i)
                    if ctx.track:
                        ctx.reads.append((r, idx))
                    ctx.set_field(r, idx, op(unbox(o[idx]), value(ctx)))
                    ctx.pc = nxt.pc

                return finish
            raise self.mc.error(t, "unsupported target of augmented assignment")

        self.simple(s, build, fast=codegen.assign(self, s.target, s.value, nxt, s.op))
        self.here(nxt)

    def stmt_Assert(self, s: ast.Assert) -> None:
        nxt = self.label()
        default = f"assertion failed: {self.mc.text(s.test)}"

        def build() -> Callable[[Ctx], None]:
            test = self.condition(s.test)
            msg = self.message(s.msg) if s.msg is not None else None

            def finish(ctx: Ctx) -> None:
                if not test(ctx):
                    m = msg(ctx) if msg is not None else None
                    raise AssertionFailed(default if m is None else f"{m} ({default})")
                ctx.pc = nxt.pc

            return finish

        self.simple(s, build, "assert", fast=codegen.check(self, s.test, nxt))
        self.here(nxt)

    def message(self, e: ast.expr, allow_calls: bool = True) -> Fn:
        """An assertion's message: a string, an f-string or ``"..." % values`` (the habits of Python code),
        formatted only when the assertion fails; any other expression is shown as a value."""
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            text = e.value if len(e.value) <= 1000 else e.value[:999] + "…"
            return lambda ctx: text
        if isinstance(e, ast.JoinedStr):
            parts: list[Callable[[Ctx], str]] = []
            for v in e.values:
                if isinstance(v, ast.Constant):
                    piece = str(v.value)
                    parts.append(lambda ctx, piece=piece: piece)
                elif isinstance(v, ast.FormattedValue):
                    if v.format_spec is not None and not (
                            isinstance(v.format_spec, ast.JoinedStr)
                            and all(isinstance(x, ast.Constant) for x in v.format_spec.values)):
                        raise self.mc.error(v, "a computed format specification in an f-string")
                    spec = "".join(str(x.value) for x in v.format_spec.values) if v.format_spec else ""  # type: ignore[union-attr]
                    parts.append(_formatted(self.expr(v.value, allow_calls), spec, v.conversion))
            return lambda ctx: "".join(p(ctx) for p in parts)
        if (isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mod) and isinstance(e.left, ast.Constant)
                and isinstance(e.left.value, str)):
            template = e.left.value
            items = e.right.elts if isinstance(e.right, ast.Tuple) else [e.right]
            values = [self.expr(x, allow_calls) for x in items]

            def percent(ctx: Ctx) -> str:
                vs = tuple(v(ctx) for v in values)
                try:
                    return template % tuple(x if type(x) in (int, bool, str) else strings.to_str(ctx, x) for x in vs)
                except (TypeError, ValueError, ModelError):
                    return template + " % " + ", ".join(show(x) for x in vs)

            return percent
        value = self.expr(e, allow_calls)

        def text(ctx: Ctx) -> str:
            v = value(ctx)
            try:
                return strings.to_str(ctx, v)  # CPython prints str() of the AssertionError's argument
            except ModelError:
                return show(v)

        return text

    def stmt_Global(self, s: ast.Global) -> None:
        if self.is_module:
            raise self.mc.error(s, "'global' at module level")

    def stmt_Nonlocal(self, s: ast.Nonlocal) -> None:
        """A declaration (compile_function checked it): its names live in cells."""

    def stmt_Return(self, s: ast.Return) -> None:
        if self.is_module:
            raise self.mc.error(s, "'return' outside a function")
        with_exits = [e for e in self.exits if e.loop is None]
        if not with_exits:
            ends = self.mc.uses_is_alive  # a thread's end is an access: lang/timeouts.py

            def build() -> Callable[[Ctx], None]:
                v = self.expr(s.value) if s.value is not None else None
                self.flow("store", ("return",), self.value(s.value))
                if ends:
                    self.facts.fields_written.add("_tid")

                def finish(ctx: Ctx) -> None:
                    ctx.ret(v(ctx) if v is not None else None)
                    if ends and ctx.code is None:
                        thread_end(ctx)

                return finish

            self.simple(s, build, "thread-end" if ends else "return", succ=[],
                        fast=None if ends else codegen_calls.return_value(self, s.value),
                        fast_return=None if ends else (-1, None))
            return
        # Leave the enclosing with-blocks first: each exit costs its step, then the value is delivered.
        ret_slot = self.hidden("ret")
        chain = self.label()

        def build2() -> Callable[[Ctx], None]:
            v = self.expr(s.value) if s.value is not None else None
            self.flow("store", ("return",), self.value(s.value))

            def finish(ctx: Ctx) -> None:
                ctx.loc[ret_slot] = box(v(ctx)) if v is not None else None
                ctx.pc = chain.pc

            return finish

        self.simple(s, build2, "return", fast=codegen_calls.keep_return_value(self, s.value, ret_slot, chain),
                    fast_return=(ret_slot, chain))
        self.here(chain)
        saved = self.exits
        suspended = []
        for e in reversed(saved):
            if e.loop is None:
                # The copy of the exit code runs outside the region it leaves (lang/exceptions.py).
                if e.protection is not None and e.protection.close(len(self.pending)):
                    suspended.append(e.protection)
                e.emit_exit(s)

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                v = ctx.loc[ret_slot]
                ctx.loc[ret_slot] = None
                ctx.ret(unbox(v))

            return run

        if self.mc.uses_is_alive:
            self.emit(self.ending(make), False, s, source="", succ=[], kind="thread-end",  # type: ignore[attr-defined]
                      fields_written=frozenset({"_tid"}))
        else:
            self.emit(make, False, s, source="", succ=[], fast=codegen_calls.deliver_return_value(ret_slot))
        for p in suspended:
            p.resume(len(self.pending))

    def _loop_jump(self, s: ast.stmt, which: int) -> None:
        for i in range(len(self.exits) - 1, -1, -1):
            if self.exits[i].loop is not None:
                target = self.exits[i].loop[which]  # type: ignore[index]
                suspended = []
                for e in reversed(self.exits[i + 1:]):
                    if e.protection is not None and e.protection.close(len(self.pending)):
                        suspended.append(e.protection)
                    e.emit_exit(s)
                self.jump(target, s)
                for p in suspended:
                    p.resume(len(self.pending))
                return
        raise self.mc.error(s, f"'{'continue' if which == 0 else 'break'}' outside a loop")

    def stmt_Break(self, s: ast.Break) -> None:
        self._loop_jump(s, 1)

    def stmt_Continue(self, s: ast.Continue) -> None:
        self._loop_jump(s, 0)

    # -- compound statements ----------------------------------------------------------------------------------

    def test_stmt(self, s: ast.AST, test: ast.expr, on_false: Label, kind: str = "branch") -> None:
        """A condition step: falls through when true, jumps to ``on_false`` when false."""
        nxt = self.label()

        def build() -> Callable[[Ctx], None]:
            t = self.condition(test)

            def finish(ctx: Ctx) -> None:
                ctx.pc = nxt.pc if t(ctx) else on_false.pc

            return finish

        self.simple(test, build, kind, succ=[nxt, on_false], source=self.mc.text(test), line=test.lineno,
                    fast=codegen.branch(self, test, nxt, on_false), fast_branch=(nxt, on_false))
        self.here(nxt)

    def stmt_If(self, s: ast.If) -> None:
        c = _constant_truth(s.test)
        if c is not None:
            self.compile_block(s.body if c else s.orelse)
            return
        else_lbl, end = self.label(), self.label()
        self.test_stmt(s, s.test, else_lbl)
        self.compile_block(s.body)
        if s.orelse:
            self.jump(end)
        self.here(else_lbl)
        self.compile_block(s.orelse)
        self.here(end)

    def stmt_While(self, s: ast.While) -> None:
        c = _constant_truth(s.test)
        head, end = self.label(), self.label()
        # CPython runs the else block when the condition turns false, not after a break.
        done = self.label() if s.orelse else end
        self.here(head)
        if c is False:
            self.compile_block(s.orelse)
            return
        self.while_heads.append(head)
        if c is None:
            self.test_stmt(s, s.test, done, "loop")
        self.exits.append(Exit(lambda n: None, (head, end)))
        self.compile_block(s.body)
        self.exits.pop()
        self.jump(head)
        if s.orelse:
            self.here(done)
            self.compile_block(s.orelse)
        self.here(end)

    def stmt_For(self, s: ast.For) -> None:
        it = s.iter
        cur, stop = self.hidden("i"), self.hidden("n")
        is_range = _is_call_to(it, "range") and "range" not in self.slot
        bounds: tuple[Fn, Fn, Fn | None] | None = None
        stp: int | None = None
        creates = False
        with self.recording() as facts:
            if is_range:
                assert isinstance(it, ast.Call)
                bounds = self._range_bounds(it)
                if bounds[2] is not None:
                    stp = self.hidden("s")
            else:
                first, get, item, creates = self.for_source(it)  # type: ignore[attr-defined]
            if is_range:
                item = NO_VALUE
            with self.recording() as target_facts:
                store = self.store(s.target, item)
            facts.absorb(target_facts)
        body, end, nxt_head, brk = self.label(), self.label(), self.label(), self.label()
        # Where the exhausted loop goes: its else block, which a break skips (CPython).
        done = self.label() if s.orelse else end
        src = f"for {self.mc.text(s.target)} in {self.mc.text(it)}"
        loop = _Loop(cur=cur, stop=stop, step=stp, store=store, body=body, end=done)
        if bounds is not None:
            first_make, next_make = _range_headers(loop, bounds)
        else:
            first_make, next_make = _sequence_headers(loop, first, get, nxt_head if creates else None)
        # Both headers get every fact: over-approximating the second (which only reads the hidden counters
        # and, for a list, the next element) costs reductions nothing worth a second record.
        info = facts.info()
        fast = (codegen.range_loop(self, s.target, it.args, cur, stop, body, done)  # type: ignore[attr-defined]
                if bounds is not None and bounds[2] is None else None)
        first_succ = [nxt_head] if bounds is None and creates else [body, done]
        self.emit(first_make, True, s, kind="loop", source=src, succ=first_succ, **info,
                  fast=fast[0] if fast else None)
        self.here(nxt_head)
        # The next header of a range loop reads only its hidden counters (and stores the loop variable).
        self.emit(next_make, True, s, kind="loop", source=src, succ=[body, brk, *([done] if s.orelse else [])], **info,
                  fast=fast[1] if fast else None, step_facts=target_facts.info() if bounds is not None else info)
        self.here(body)
        self.exits.append(Exit(lambda n: None, (nxt_head, brk)))
        self.compile_block(s.body)
        self.exits.pop()
        self.jump(nxt_head)
        # `break` leaves through here, clearing the loop's hidden counters.
        self.here(brk)
        clear = loop.clearing()

        def brk_make() -> Callable[[Ctx], None]:
            e = end.pc

            def run(ctx: Ctx) -> None:
                clear(ctx)
                ctx.pc = e

            return run

        self.emit(brk_make, False, s, source="", succ=[end],
                  fast=codegen.leave_loop(cur, stop, end) if fast else None)
        if s.orelse:
            self.here(done)
            self.compile_block(s.orelse)
        self.here(end)

    def _range_bounds(self, it: ast.Call) -> tuple[Fn, Fn, Fn | None]:
        """``range(…)``'s start, stop and step (None: 1)."""
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.mc.error(it, "range() takes 1 to 3 arguments")
        args = [self.expr(a, allow_calls=False) for a in it.args]
        if len(args) == 1:
            return (lambda ctx: 0), args[0], None
        return args[0], args[1], args[2] if len(args) == 3 else None

    # -- statement-level builtins -----------------------------------------------------------------------------

    def call_stmt_assume(self, s: ast.Expr, e: ast.Call) -> None:
        if len(e.args) != 1 or e.keywords:
            raise self.mc.error(e, "assume(cond) takes one condition")
        nxt = self.label()

        def build() -> Callable[[Ctx], None]:
            cond = self.condition(e.args[0])

            def finish(ctx: Ctx) -> None:
                if not cond(ctx):
                    raise Pruned()
                ctx.pc = nxt.pc

            return finish

        self.simple(s, build, "assume")
        self.here(nxt)

    def call_stmt_print(self, s: ast.Expr, e: ast.Call) -> None:
        # print is accepted so that models run under CPython; it costs a step and has no effect. Its
        # arguments are compiled (so that names are checked) but not evaluated: f-strings and "…" % values
        # as in assertion messages.
        for a in e.args:
            for n in ast.walk(a):
                if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                        and n.func.attr in CHANGING_METHODS | DEQUE_CHANGING_METHODS):
                    raise self.mc.error(n, f"print() does not evaluate its arguments: call "
                                           f"{self.mc.text(n)} in a statement of its own")
            if not (isinstance(a, ast.Constant) and isinstance(a.value, str)):
                self.message(a, allow_calls=False)
        self.plain_stmt(s, lambda: (lambda ctx: None))


def _literal_join(f: ast.Attribute) -> bool:
    """``", ".join(…)``: a string's join (its value unused), not a thread's, whatever its arguments."""
    return f.attr == "join" and isinstance(f.value, ast.Constant) and isinstance(f.value.value, str)


def _formatted(value: Fn, spec: str, conversion: int = -1) -> Callable[[Ctx], str]:
    """One ``{expr}``, ``{expr!r}`` or ``{expr:spec}`` of an f-string message: CPython's text for it (a list,
    dict or object as ``str()`` shows it), or the value as users see it (``show``) when the specification
    does not apply."""

    def run(ctx: Ctx) -> str:
        v = value(ctx)
        try:
            return strings.format_value(ctx, v, conversion, spec)
        except ModelError:  # a specification that does not apply: the value as users see it
            return show(v)

    return run


@dataclass(frozen=True, slots=True)
class _Loop:
    """A ``for`` loop's hidden slots (the next index, the bound or the sequence, and the step of a ``range``
    with three arguments), how it stores the loop variable, and where its headers go."""

    cur: int
    stop: int
    step: int | None
    store: Callable[[Ctx, Any], None]
    body: Label
    end: Label

    def clearing(self) -> Callable[[Ctx], None]:
        """What leaving the loop does: clear its hidden slots."""
        cur, stop, stp = self.cur, self.stop, self.step

        def clear(ctx: Ctx) -> None:
            loc = ctx.loc
            loc[cur] = None
            loc[stop] = None
            if stp is not None:
                loc[stp] = None

        return clear


Make = Callable[[], Callable[[Ctx], None]]


def _range_headers(loop: _Loop, bounds: tuple[Fn, Fn, Fn | None]) -> tuple[Make, Make]:
    """The first and the next header of ``for x in range(…)``: the first evaluates the bounds, both store the
    next value and go to the body, or clear the slots and leave."""
    cur, stop, store, body, end = loop.cur, loop.stop, loop.store, loop.body, loop.end
    start, bound, step_val = bounds
    stp = loop.step if loop.step is not None else -1  # read only when there is a step
    clear = loop.clearing()

    def first_make() -> Callable[[Ctx], None]:
        b, e = body.pc, end.pc

        def run(ctx: Ctx) -> None:
            i, n = range_int(start(ctx)), range_int(bound(ctx))
            d = range_int(step_val(ctx)) if step_val is not None else 1
            if d == 0:
                raise ModelError("range() step must not be zero", exc="ValueError")
            if (i < n) if d > 0 else (i > n):
                loc = ctx.loc
                loc[cur] = i + d
                loc[stop] = n
                if step_val is not None:
                    loc[stp] = d
                store(ctx, i)
                ctx.pc = b
            else:
                clear(ctx)
                ctx.pc = e

        return run

    def next_make() -> Callable[[Ctx], None]:
        b, e = body.pc, end.pc

        def run(ctx: Ctx) -> None:
            loc = ctx.loc
            i, n = loc[cur], loc[stop]
            d = loc[stp] if step_val is not None else 1
            if (i < n) if d > 0 else (i > n):
                loc[cur] = i + d
                store(ctx, i)
                ctx.pc = b
            else:
                clear(ctx)
                ctx.pc = e

        return run

    return first_make, next_make


def _sequence_headers(loop: _Loop, first: Fn, get: Callable[[Ctx, Any, int], Any],
                      fetch: Label | None) -> tuple[Make, Make]:
    """The first and the next header of ``for x in it`` over anything but a ``range`` (``iteration.for_source``):
    the first computes the iterator's state and keeps it (boxed) in the bound's slot; both ask the accessor for
    the item at the next position and store it and go to the body, or leave. With ``fetch`` (the next header),
    the first only creates the iterator and goes there."""
    cur, stop, store, body, end = loop.cur, loop.stop, loop.store, loop.body, loop.end
    clear = loop.clearing()

    def create_make() -> Callable[[Ctx], None]:
        assert fetch is not None
        f = fetch.pc

        def run(ctx: Ctx) -> None:
            state = first(ctx)
            ctx.loc[cur] = 0
            ctx.loc[stop] = box(state)
            ctx.pc = f

        return run

    def first_make() -> Callable[[Ctx], None]:
        b, e = body.pc, end.pc

        def run(ctx: Ctx) -> None:
            state = first(ctx)
            x = get(ctx, state, 0)
            if x is STOP:
                ctx.pc = e
                return
            ctx.loc[cur] = 1
            ctx.loc[stop] = box(state)
            store(ctx, x)
            ctx.pc = b

        return run

    def next_make() -> Callable[[Ctx], None]:
        b, e = body.pc, end.pc

        def run(ctx: Ctx) -> None:
            loc = ctx.loc
            i = loc[cur]
            x = get(ctx, loc[stop], i)
            if x is not STOP:
                loc[cur] = i + 1
                store(ctx, x)
                ctx.pc = b
            else:
                clear(ctx)
                ctx.pc = e

        return run

    return (create_make if fetch is not None else first_make), next_make
