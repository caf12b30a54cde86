"""Builtin functions: ``b_X`` compiles a call ``X(…)`` of the builtin ``X`` in an expression.

``BuiltinCompiler`` is the ``FunctionCompiler`` mixin for ``len``, ``abs``, ``int``, ``bool``, ``min``,
``max``, ``tid`` and ``choose``, the constructors ``Lock``, ``RLock``, ``Semaphore``, ``Condition``,
``Event``, ``Barrier`` and ``Thread``, and the errors for builtins used where they are not supported
(``range``, ``super``, ``wait_until``, ``assume``). ``e_Call`` reaches them for a name that is not a model
function, a class or a local. The builtins that are statements (``assume``, ``print``, ``wait_until``,
``wait``, ``notify``, ``commit``) are ``call_stmt_X`` in ``statements.py`` and ``concurrency.py``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from movers.ir import sync
from movers.ir.machine import Ctx, ModelError, show
from movers.ir.program import THREAD, Code, Func, Ref
from movers.lang import deques, strings, threadinfo
from movers.lang.function import AV, NO_VALUE, Fn, FunctionCore
from movers.lang.functions_model import kwargs_site, signature_of
from movers.lang.runtime_ops import DAEMON, KWARGS, THREAD_NAME, as_tuple, choice_count, extremum, length_of, truth_of
from movers.lang.syntax import _is_call_to


class BuiltinCompiler(FunctionCore):
    """``b_X``: the rule for a call of the builtin ``X``."""

    # builtins -----------------------------------------------------------------------------------------------

    def _args(self, e: ast.Call, lo: int, hi: int, name: str, keywords: tuple[str, ...] = ()) -> list[Fn]:
        """The arguments of a call to a builtin, compiled in order; ``keywords``: the names of its parameters
        that may be given by keyword, in order (``Semaphore(value=1)``, as Python's ``threading``)."""
        args: list[ast.expr] = list(e.args)
        for k in e.keywords:
            if k.arg is None or k.arg not in keywords:
                what = "**" if k.arg is None else f"'{k.arg}'"
                raise self.mc.error(k if k.arg is not None else e, f"{name}() got an unexpected keyword argument "
                                    f"{what}" + (f" (it takes {', '.join(keywords)})" if keywords else ""))
            i = keywords.index(k.arg)
            if i < len(args):
                raise self.mc.error(k, f"{name}() got multiple values for argument '{k.arg}'")
            if i > len(args):
                raise self.mc.error(k, f"{name}(): give '{keywords[len(args)]}' before '{k.arg}'")
            args.append(k.value)
        if not lo <= len(args) <= hi:
            raise self.mc.error(e, f"{name}() takes {lo}{'' if lo == hi else f' to {hi}'} arguments")
        return [self._expr(a) for a in args]

    def b_dict(self, e: ast.Call) -> Fn:
        """``dict()``, ``dict(k=v, ...)`` with names as string keys, or ``dict(other)`` a copy of a dict."""
        if len(e.args) > 1 or any(k.arg is None for k in e.keywords):
            raise self.mc.error(e, "dict() takes at most one dict and keyword arguments")
        src = self._expr(e.args[0]) if e.args else None
        names = [k.arg for k in e.keywords]
        vals = [self._expr(k.value) for k in e.keywords]
        parts = [k.value for k in e.keywords]
        if e.args:
            self.facts.elements_read = True
            self.facts.uses.append(self.value(e.args[0]))

        def pairs(ctx: Ctx) -> list:
            out: list = []
            if src is not None:
                from movers.lang.containers import dict_items, is_dict
                r = src(ctx)
                if type(r) is not Ref or not is_dict(ctx.heap[r.i]):
                    raise ModelError("dict() of something that is not a dict is not supported")
                out.extend(dict_items(ctx, r))
            out.extend(zip(names, (v(ctx) for v in vals), strict=True))
            return out

        f = self.new_dict(e, parts, pairs)
        if e.args:
            self.flow("store", ("element", self.value(e)), frozenset({("element", self.value(e.args[0]))}))
        return f

    def b_defaultdict(self, e: ast.Call) -> Fn:
        """``defaultdict(int)``, ``defaultdict(list)``, ``defaultdict(set)``: ``d[k]`` of a missing key
        inserts ``int()``, ``list()`` or ``set()`` (``lang/containers.py``)."""
        if (e.keywords or len(e.args) != 1 or not isinstance(e.args[0], ast.Name)
                or e.args[0].id not in ("int", "list", "set")):
            raise self.mc.error(e, "defaultdict takes one factory, int, list or set; for another default "
                                   "use d.setdefault(k, v) or d.get(k, v)")
        from movers.lang.containers import dict_class
        cls = dict_class(e.lineno, e.args[0].id)
        f = self.new_dict(e, [], lambda ctx: [], cls)
        if e.args[0].id != "int":
            self.flow("store", ("element", self.value(e)), self.new_site(e.args[0], e.args[0].id))
        return f

    def b_deque(self, e: ast.Call) -> Fn:
        """``deque()``, ``deque(iterable)``, ``deque(iterable, maxlen)`` (by position or keyword): a new deque
        (``lang/deques.py``), its own allocation site; the iterable's items are read at once, as ``list(xs)``."""
        given: dict[str, ast.expr] = dict(zip(("iterable", "maxlen"), e.args, strict=False))
        if len(e.args) > 2:
            raise self.mc.error(e, f"deque() takes at most 2 arguments ({len(e.args)} given)")
        for k in e.keywords:
            if k.arg not in ("iterable", "maxlen") or k.arg in given:
                raise self.mc.error(k if k.arg else e, f"deque() got an unexpected keyword argument '{k.arg}'"
                                    if k.arg not in ("iterable", "maxlen") else
                                    f"deque() got multiple values for argument '{k.arg}'")
            given[k.arg] = k.value
        order = [*e.args, *(k.value for k in e.keywords)]  # Python's order of evaluation
        first = min(given, key=lambda name: order.index(given[name]), default="")
        src: Fn | None = None
        size: Fn | None = None
        av: AV = NO_VALUE
        for name in sorted(given, key=lambda name: order.index(given[name])):
            if name == "iterable":  # its items, read at once (a range, a string, a list, a deque...)
                src, av = self.iterable(given[name])  # type: ignore[attr-defined]
            else:
                size = self._expr(given[name])
        cls = deques.deque_class(e.lineno)
        self.facts.allocates = True
        self.note(e, self.new_site(e, "deque"))
        if src is not None:
            self.flow("store", ("element", self.value(e)), av)

        def run(ctx: Ctx) -> Ref:
            if first == "maxlen":  # evaluated first when written first
                n = size(ctx)  # type: ignore[misc]
                return deques.deque_new(ctx, cls, src(ctx) if src else (), n)
            items = src(ctx) if src else ()
            return deques.deque_new(ctx, cls, items, size(ctx) if size else None)

        return run

    def b_list(self, e: ast.Call) -> Fn:
        """``list()``, or ``list(xs)`` of a list, tuple, dict (its keys) or set: a new list."""
        if len(e.args) > 1 or e.keywords:
            raise self.mc.error(e, "list() takes at most one argument")
        from movers.ir.program import box
        cls = self.list_class(e)
        self.facts.allocates = True
        self.note(e, self.new_site(e, "list"))
        if not e.args:
            return lambda ctx: ctx.alloc((cls, None))
        src = self._expr(e.args[0])
        av = self.value(e.args[0])
        self.facts.elements_read = True
        self.facts.uses.append(av)
        self.flow("store", ("element", self.value(e)), av | frozenset({("element", av)}))

        def run(ctx: Ctx) -> Ref:
            items = _iterable_items(ctx, src(ctx))
            return ctx.alloc((cls, None, *(box(v) if type(v) is bool or type(v) is tuple or type(v) is Ref
                                           else v for v in items)))

        return run

    def b_set(self, e: ast.Call) -> Fn:
        """``set()``, or ``set(xs)`` of a list, tuple, dict (its keys) or set."""
        if len(e.args) > 1 or e.keywords:
            raise self.mc.error(e, "set() takes at most one argument")
        if not e.args:
            return self.new_set(e, [], lambda ctx: ())
        src = self._expr(e.args[0])
        self.facts.elements_read = True
        self.facts.uses.append(self.value(e.args[0]))
        f = self.new_set(e, [], lambda ctx: _iterable_items(ctx, src(ctx)))
        self.flow("store", ("element", self.value(e)), self.value(e.args[0]) | frozenset({("element",
                                                                                         self.value(e.args[0]))}))
        return f

    def b_len(self, e: ast.Call) -> Fn:
        if len(e.args) == 1 and not e.keywords and _is_call_to(e.args[0], "range") and "range" not in self.slot:
            items, _ = self.iterable(e.args[0])  # type: ignore[attr-defined]
            return lambda ctx: len(items(ctx))
        (a,) = self._args(e, 1, 1, "len")
        self.length_use(e.args[0])
        return lambda ctx: length_of(ctx, a(ctx))

    def b_abs(self, e: ast.Call) -> Fn:
        (a,) = self._args(e, 1, 1, "abs")
        return lambda ctx: abs(a(ctx))

    def b_int(self, e: ast.Call) -> Fn:
        """``int(x)``, ``int(s, base)``: a string's digits as CPython reads them (``strings.to_int``)."""
        parts = self._args(e, 1, 2, "int", ("x", "base"))
        if len(parts) == 1:
            (a,) = parts

            def one(ctx: Ctx) -> int:
                v = a(ctx)
                return v if type(v) is int else strings.to_int(v, None, ctx)

            return one
        a, base = parts
        return lambda ctx: strings.to_int(a(ctx), base(ctx), ctx)

    def b_str(self, e: ast.Call) -> Fn:
        """``str(x)``: the value as text, as CPython shows it (``strings.to_str``); ``str()`` is ``''``."""
        parts = self._args(e, 0, 1, "str", ("object",))
        if not parts:
            return lambda ctx: ""
        (a,) = parts
        self.formats(self.value(e.args[0] if e.args else e.keywords[0].value))  # type: ignore[attr-defined]
        return lambda ctx: strings.to_str(ctx, a(ctx))

    def b_repr(self, e: ast.Call) -> Fn:
        """``repr(x)`` (``strings.to_repr``)."""
        (a,) = self._args(e, 1, 1, "repr")
        self.formats(self.value(e.args[0]))  # type: ignore[attr-defined]
        return lambda ctx: strings.to_repr(ctx, a(ctx))

    def b_bool(self, e: ast.Call) -> Fn:
        (a,) = self._args(e, 1, 1, "bool")
        self.length_use(e.args[0])
        return lambda ctx: truth_of(ctx, a(ctx))

    def b_min(self, e: ast.Call) -> Fn:
        return self._extremum(e, "min", "<", min)

    def b_max(self, e: ast.Call) -> Fn:
        return self._extremum(e, "max", ">", max)

    def _extremum(self, e: ast.Call, name: str, op: str, pick: Callable[[Any], Any]) -> Fn:
        """``min(a, b, …)``, or, as in Python, ``min(seq)`` of a list's or tuple's elements; lists among them
        compare by their contents (``runtime_ops.extremum``)."""
        if len(e.args) > 1 or e.keywords:
            parts = self._args(e, 1, 8, name)
            self.note(e, *(self.value(a) for a in e.args))
            every = NO_VALUE.union(*(self.value(a) for a in e.args))
            self.compares(every, every)
            return lambda ctx: extremum(ctx, [p(ctx) for p in parts], op, pick)
        if not e.args:
            raise self.mc.error(e, f"{name} expected at least 1 argument, got 0")
        seq, items_av = self.iterable(e.args[0])  # type: ignore[attr-defined]
        self.note(e, items_av)
        self.compares(items_av, items_av)

        def run(ctx: Ctx) -> Any:
            items = seq(ctx)
            if not items:
                raise ModelError(f"{name}() arg is an empty sequence", exc="ValueError")
            return extremum(ctx, items, op, pick)

        return run

    def b_tid(self, e: ast.Call) -> Fn:
        self._args(e, 0, 0, "tid")
        return lambda ctx: ctx.tid if ctx.tid >= 0 else None

    def b_current_thread(self, e: ast.Call) -> Fn:
        self._args(e, 0, 0, "current_thread")
        self.facts.fields_read.add("_tid")  # which Thread object is this thread's (lang/threadinfo.py)
        return threadinfo.current_thread

    def b_get_ident(self, e: ast.Call) -> Fn:
        self._args(e, 0, 0, "get_ident")
        return threadinfo.ident

    def b_local(self, e: ast.Call) -> Fn:
        self._args(e, 0, 0, "local")
        self.facts.allocates = True
        self.note(e, self.new_site(e, "local"))
        return threadinfo.new_local

    def b_choose(self, e: ast.Call) -> Fn:
        self.facts.chooses = True
        if len(e.args) == 1 and _is_call_to(e.args[0], "range"):
            r = e.args[0]
            assert isinstance(r, ast.Call)
            bounds = self._args(r, 1, 2, "range")
            if len(bounds) == 1:
                hi = bounds[0]
                return lambda ctx: ctx.choose(choice_count(hi(ctx)))
            lo, hi = bounds

            def run(ctx: Ctx) -> int:
                a = lo(ctx)
                return a + ctx.choose(choice_count(hi(ctx) - a))

            return run
        if not e.args:
            raise self.mc.error(e, "choose() needs at least one alternative")
        parts = self._args(e, 1, 64, "choose")
        self.note(e, *(self.value(a) for a in e.args))
        if len(parts) > 1:
            return lambda ctx: parts[ctx.choose(len(parts))](ctx)
        # One argument is a sequence to choose an element from, as random.choice does (the shim agrees).
        (seq,) = parts
        self.facts.elements_read = True
        self.facts.uses.append(self.value(e.args[0]))
        self.note(e, self.value(e.args[0]), frozenset({("element", self.value(e.args[0]))}))

        def one_of(ctx: Ctx) -> Any:
            items = as_tuple(ctx, seq(ctx))
            if type(items) is not tuple:
                raise ModelError(f"choose({show(items)}): one argument must be a list, a tuple or a range; "
                                 "to choose among values, give two or more")
            return items[ctx.choose(len(items))]

        return one_of

    def b_Lock(self, e: ast.Call) -> Fn:
        self._args(e, 0, 0, "Lock")
        self.facts.allocates = True
        self.note(e, self.new_site(e, "Lock"))
        return sync.new_lock

    def b_RLock(self, e: ast.Call) -> Fn:
        self._args(e, 0, 0, "RLock")
        self.facts.allocates = True
        self.note(e, self.new_site(e, "RLock"))
        return sync.new_rlock

    def b_Semaphore(self, e: ast.Call) -> Fn:
        parts = self._args(e, 0, 1, "Semaphore", ("value",))
        self.facts.allocates = True
        self.note(e, self.new_site(e, "Semaphore"))
        if not parts:
            return sync.new_semaphore
        v = parts[0]
        return lambda ctx: sync.new_semaphore(ctx, v(ctx))

    def b_BoundedSemaphore(self, e: ast.Call) -> Fn:
        """``threading.BoundedSemaphore``: a Semaphore whose release past its initial value is an error. The
        static analyses see a Semaphore (its allocation site says so)."""
        parts = self._args(e, 0, 1, "BoundedSemaphore", ("value",))
        self.facts.allocates = True
        self.note(e, self.new_site(e, "Semaphore"))
        v = parts[0] if parts else (lambda ctx: 1)
        return lambda ctx: sync.new_semaphore(ctx, v(ctx), bounded=True)

    def b_Condition(self, e: ast.Call) -> Fn:
        parts = self._args(e, 0, 1, "Condition", ("lock",))
        self.facts.allocates = True
        self.note(e, self.new_site(e, "Condition"))
        # Its lock is its field "lock" (a fresh RLock when none is given); wait/notify/acquire reach it.
        given = e.args[0] if e.args else next((k.value for k in e.keywords if k.arg == "lock"), None)
        lock_av = self.value(given) if given is not None else self.new_site(e, "RLock")
        self.flow("store", ("field", self.value(e), "lock"), lock_av)
        if not parts:
            return sync.new_condition
        lock = parts[0]
        return lambda ctx: sync.new_condition(ctx, lock(ctx))

    def b_Event(self, e: ast.Call) -> Fn:
        self._args(e, 0, 0, "Event")
        self.facts.allocates = True
        self.note(e, self.new_site(e, "Event"))
        return sync.new_event

    def b_Barrier(self, e: ast.Call) -> Fn:
        """``threading.Barrier(parties)``; its ``action`` and ``timeout`` are not supported."""
        (n,) = self._args(e, 1, 1, "Barrier", ("parties",))
        self.facts.allocates = True
        self.note(e, self.new_site(e, "Barrier"))
        return lambda ctx: sync.new_barrier(ctx, n(ctx))

    def _thread_kwargs(self, k: ast.keyword) -> tuple[tuple[str, ...], list[Fn]]:
        """``kwargs={'name': value, ...}``: the names, and the values compiled (a dict display only)."""
        d = k.value
        if not (isinstance(d, ast.Dict) and all(isinstance(x, ast.Constant) and isinstance(x.value, str)
                                                for x in d.keys)):
            raise self.mc.error(k, "Thread(kwargs=…) must be a dict display with string keys "
                                "(kwargs={'greeting': g}), or pass the arguments by position, args=(…)")
        return tuple(x.value for x in d.keys), [self._expr(v) for v in d.values]  # type: ignore[union-attr]

    def b_Thread(self, e: ast.Call) -> Fn:
        target: Fn | None = None
        args: Fn = lambda ctx: ()
        label: str | None = None
        daemon = False
        kw_names: tuple[str, ...] = ()
        kw_values: list[Fn] = []
        if e.args:
            raise self.mc.error(e, "use Thread(target=f, args=(…))")
        codes: list[Any] = []  # the functions the thread may run
        func: Func | None = None
        for k in e.keywords:
            if k.arg == "target":
                if (isinstance(k.value, ast.Name) and k.value.id in self.mc.funcs
                        and k.value.id not in self.slot):
                    func = self.mc.funcs[k.value.id]
                    target = lambda ctx, func=func: func  # noqa: E731
                    codes = [func.code]
                else:
                    # A lambda, a nested function, a function value: known at run time (runtime_ops.start_thread).
                    target = self._expr(k.value)
                    lf = self.mc.lifted.get(id(k.value))
                    codes = [lf.code] if lf is not None else [self.mc.functions[n] for n in self.mc.value_callees]
                    if lf is None:  # a bound method (obj.method) too
                        codes += [code for _, code in self.mc.bound_codes]
                        self.facts.callees |= {key for key, _ in self.mc.bound_codes}
                    if not codes:
                        raise self.mc.error(k.value, "Thread target must be a function of the model, a lambda "
                                            "or a nested function")
            elif k.arg == "args":
                args = self._expr(k.value)
            elif k.arg == "name":
                if not (isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)):
                    raise self.mc.error(k.value, "Thread name must be a string literal")
                label = k.value.value
            elif k.arg == "daemon":
                if not (isinstance(k.value, ast.Constant) and type(k.value.value) is bool):
                    raise self.mc.error(k.value, "Thread daemon= must be True or False")
                daemon = k.value.value
            elif k.arg == "kwargs":
                kw_names, kw_values = self._thread_kwargs(k)
            else:
                raise self.mc.error(k, f"unsupported Thread argument '{k.arg}'")
        if target is None:
            raise self.mc.error(e, "Thread(target=f, args=(…)) needs a target")
        # A daemon lambda, closure or bound method: the daemons' slot travels in its args (runtime_ops.DAEMON).
        daemon_slot = self.mc.daemon_slot if daemon and func is None else None
        if (label is not None or daemon) and func is not None:
            # A Func of its own per named (or daemon) call site: the name travels with the thread object to its
            # start, where reports pick it up (the thread's code stays the function's).
            named = Func(func.name, func.code, label, self.mc.daemon_slot if daemon else None)
            target = lambda ctx, named=named: named  # noqa: E731
        t = target
        unkept = label if label is not None and func is None else None
        self.facts.allocates = True
        self.note(e, self.new_site(e, "Thread"))
        args_av = NO_VALUE.union(*(self.value(k.value) for k in e.keywords if k.arg == "args"),
                                 *(self.value(v) for k in e.keywords if k.arg == "kwargs"
                                   for v in k.value.values))  # type: ignore[attr-defined]
        self.flow("store", ("field", self.value(e), "_args"), args_av)
        target_av = NO_VALUE.union(*(self.value(k.value) for k in e.keywords if k.arg == "target"))
        if target_av:
            # A closure's captured values reach the new thread through its fields (its first parameters).
            self.flow("store", ("field", self.value(e), "_target"), target_av)
            bound = {id(c) for _, c in self.mc.bound_codes}
            for code in codes:
                caps = frozenset({("field", target_av, f"$cap:{n}") for n in code.params[:signature_of(code).hidden]})
                if id(code) in bound:
                    caps |= {("field", target_av, "$self")}
                self.flow("thread", self.value(e), code, args_av | caps)
        else:
            for code in codes:
                self.flow("thread", self.value(e), code, args_av)
        self.thread_kwargs_flows(codes, args_av)

        def run(ctx: Ctx) -> Ref:
            a = args(ctx)
            if type(a) is str:  # args=("bob"): CPython's target(*args) passes its characters
                a = tuple(a)
            if type(a) is not tuple:
                raise ModelError("Thread args must be a tuple", exc="TypeError")
            if kw_names:  # kept after the positional ones, behind a marker (runtime_ops.start_thread)
                a = (*a, KWARGS, kw_names, *(v(ctx) for v in kw_values))
            if daemon_slot is not None:
                a = (*a, DAEMON, daemon_slot)
            if unkept is not None:  # name= of a lambda's or closure's thread: last, behind its marker
                a = (*a, THREAD_NAME, unkept)
            return ctx.alloc((THREAD, None, None, t(ctx), a))

        return run

    def thread_kwargs_flows(self, codes: list[Code], args_av: AV) -> None:
        """A target with ``**kwargs`` gets a dict its thread's start makes (lang/functions_model.py)."""
        for code in codes:
            if signature_of(code).kwstar is not None:
                site = kwargs_site(code)
                self.flow("call", code, (*(NO_VALUE,) * (len(code.params) - 1), site))
                self.flow("store", ("element", site), args_av)

    def b_isinstance(self, e: ast.Call) -> Fn:
        """``isinstance(x, C)`` for a class of the model (its subclasses included) or a built-in type (``int``
        holds for bools, as in Python), or a tuple of those. An object's class never changes: no access."""
        if len(e.args) != 2 or e.keywords:
            raise self.mc.error(e, "isinstance() takes exactly two arguments")
        x = self._expr(e.args[0])
        kinds = e.args[1].elts if isinstance(e.args[1], ast.Tuple) else [e.args[1]]
        tests: list[Callable[[Ctx, Any], bool]] = []
        for k in kinds:
            if isinstance(k, ast.Name) and k.id in self.mc.classes and k.id not in self.slot:
                cls = self.mc.classes[k.id]
                tests.append(lambda ctx, v, cls=cls: type(v) is Ref and ctx.heap[v.i][0].is_subclass_of(cls))
            elif isinstance(k, ast.Name) and k.id in _BUILTIN_TYPES and k.id not in self.slot:
                tests.append(_BUILTIN_TYPES[k.id])
            elif isinstance(k, ast.Name) and k.id not in self.slot and self.exception_class(k.id) is not None:
                exc = self.exception_class(k.id)  # ValueError, queue.Empty...: CPython's hierarchy
                tests.append(lambda ctx, v, cls=exc: type(v) is Ref and ctx.heap[v.i][0].is_subclass_of(cls))
            else:
                raise self.mc.error(k, "isinstance(x, C): C must be a class of the model, a built-in exception "
                                       "class, int, bool, str, tuple or list, or a tuple of those")

        def run(ctx: Ctx) -> bool:
            v = x(ctx)
            return any(t(ctx, v) for t in tests)

        return run


    def b_super(self, e: ast.Call) -> Fn:
        raise self.mc.error(e, "super() is only supported as super().method(…)")

    def b_wait_until(self, e: ast.Call) -> Fn:
        raise self.mc.error(e, "wait_until(…) must be a statement of its own")

    def b_assume(self, e: ast.Call) -> Fn:
        raise self.mc.error(e, "assume(…) must be a statement of its own")


_BUILTIN_TYPES: dict[str, Callable[[Ctx, Any], bool]] = {
    "int": lambda ctx, v: type(v) is int or type(v) is bool,
    "bool": lambda ctx, v: type(v) is bool,
    "str": lambda ctx, v: type(v) is str,
    "tuple": lambda ctx, v: type(v) is tuple,
    "list": lambda ctx, v: type(v) is Ref and ctx.heap[v.i][0].is_list,
    "deque": lambda ctx, v: type(v) is Ref and ctx.heap[v.i][0].builtin == "deque",
}
def _iterable_items(ctx: Ctx, v: Any) -> tuple:
    items = as_tuple(ctx, v)
    if type(items) is not tuple:
        raise ModelError(f"'{show(v)}' is not iterable", exc="TypeError")
    return items

