"""Expressions, calls of model functions, and assignment targets.

``ExpressionCompiler`` is the ``FunctionCompiler`` mixin with ``e_X`` for each supported expression
``ast.X`` (``_expr`` dispatches on the node's type; an expression without a method is an unsupported
construct). Each returns a closure ``Fn`` that evaluates the expression in a ``Ctx`` and records, while it
compiles, what the code accesses (``self.facts``) and the expression's abstract value (``note``), so that the
static facts cannot disagree with what executes. Calls of model functions, methods and constructors
(``e_Call``) are hoisted: ``site`` registers a ``CallSite`` that the enclosing statement runs before the rest
of the expression (see ``function.py``); ``no_calls`` rejects them where hoisting would change which of them
run. Builtin calls are in ``builtins.py``. ``store`` compiles assignment targets: names, fields, elements and
unpacking.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from movers.ir import sync
from movers.ir.exceptions import ARGS, BUILTIN_EXCEPTIONS, is_exception_class, new_exception
from movers.ir.machine import Ctx, ModelError, new_object, show
from movers.ir.program import FIELDS, MON, THREAD, UNBOUND, ClassInfo, Code, Ref, box, unbox
from movers.lang import deques, strings, threadinfo
from movers.lang.containers import (
    DICT_METHODS,
    LIST_CHANGING,
    LIST_METHODS,
    SET_METHODS,
    dict_class,
    dict_get,
    dict_items,
    dict_method,
    dict_new,
    dict_set,
    is_dict,
    list_method,
    set_binop,
    set_class,
    set_method,
    set_new,
)
from movers.lang.function import AV, NO_VALUE, CallSite, Fn, FunctionCore
from movers.lang.functions_model import (
    Source,
    bind,
    bind_static,
    function_of,
    kwargs_site,
    parameters,
    signature_of,
)
from movers.lang.granularity import container_operands, is_boolean
from movers.lang.iteration import items_of
from movers.lang.runtime_ops import (
    BINOPS,
    BOXED,
    MAX_SEQUENCE,
    check_ref,
    comparison,
    element_index,
    int_like,
    length_of,
    list_append,
    list_items,
    list_pop,
    make_in,
    too_big,
    truth_of,
    writable_field,
)
from movers.lang.syntax import (
    BUILTIN_METHODS,
    DECLARATIONS,
    DICT_CHANGING_METHODS,
    FORBIDDEN,
    SYNC_METHODS,
    _is_call_to,
)


class ExpressionCompiler(FunctionCore):
    """``e_X``: the rule for expression ``ast.X``; model calls; assignment targets."""

    # -- expressions ------------------------------------------------------------------------------------------

    def expr(self, e: ast.expr, allow_calls: bool = True) -> Fn:
        saved = self.site_stack
        if not allow_calls:
            self.site_stack = None
        try:
            return self._expr(e)
        finally:
            self.site_stack = saved

    def _expr(self, e: ast.expr) -> Fn:
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            raise self.mc.error(e, f"unsupported construct: {type(e).__name__.lower()} expression")
        return m(e)

    def length_use(self, e: ast.expr) -> None:
        """Record that the node may read the length of the list ``e`` denotes (``len``, a list's truth): an
        access to its elements once lists can grow (``runtime_ops._read_length``); before, a constant."""
        if self.mc.lists_grow:
            self.facts.elements_read = True
            self.facts.uses.append(self.value(e))

    def truth_use(self, e: ast.expr) -> None:
        """Record that the node tests the truth of ``e`` (compiled): when ``e`` is a list (dict, set, deque),
        that reads its length, an access once containers change size (``runtime_ops.truth_of``). Whether it
        may be one is known once every flow is (``compiler.resolve_truths``, as for comparisons): a second
        compilation makes local work of the tests of values that never are (``Finals.truths_plain_at``: a
        parameter ``block=True``, a flag, the result of ``acquire``), in the model's code and the library's."""
        if not self.mc.lists_grow:
            return
        av = self.value(e)
        at = (getattr(e, "lineno", 0), getattr(e, "col_offset", 0))
        self.mc.truth_sites.append((self.code, av, at))
        if at in self.mc.finals.truths_plain_at:
            return
        self.facts.elements_read = True
        self.facts.uses.append(av)

    def condition(self, e: ast.expr, allow_calls: bool = True) -> Fn:
        """``e`` compiled for its truth (``if``, ``while``, ``assert``, ``not``…), as Python tests it."""
        f = self.expr(e, allow_calls)
        if isinstance(e, ast.Compare) or (isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not)):
            return f  # already a bool
        if not is_boolean(e):  # the truth of a bool reads no list's length
            self.truth_use(e)

        def truth(ctx: Ctx) -> bool:
            v = f(ctx)
            return truth_of(ctx, v) if type(v) is Ref else bool(v)

        return truth

    def no_calls(self, e: ast.expr, why: str) -> Fn:
        saved = self.site_stack
        if saved is not None and any(
            isinstance(n, ast.Call) and self._is_model_call(n) for n in ast.walk(e)
        ):
            raise self.mc.error(e, f"calls of model functions are not supported {why}; assign to a variable first")
        try:
            return self._expr(e)
        finally:
            self.site_stack = saved

    def _is_model_call(self, c: ast.Call) -> bool:
        f = c.func
        if isinstance(f, ast.Name):
            return f.id in self.mc.functions or (f.id in self.mc.classes and self.mc.classes[f.id].lookup("__init__")
                                                 is not None) or f.id in self.slot or f.id in self.mc.global_slot
        if isinstance(f, ast.Subscript):
            return True
        if isinstance(f, ast.Attribute) and f.attr not in _model_methods(self.mc.class_nodes) and (
                f.attr in _model_fields(self.mc.classes)):
            return True
        return isinstance(f, ast.Attribute) and not (
            (f.attr in BUILTIN_METHODS or f.attr in strings.STR_METHODS)
            and f.attr not in _model_methods(self.mc.class_nodes))

    def e_Constant(self, e: ast.Constant) -> Fn:
        v = e.value
        if not isinstance(v, (int, bool, type(None), str)):
            raise self.mc.error(e, f"unsupported value {v!r}: values are ints, bools, None, strings and tuples")
        if isinstance(v, str) and len(v) > strings.MAX_STR:
            raise self.mc.error(e, f"string literal too long (more than {strings.MAX_STR:,} characters)")
        return lambda ctx: v

    # -- strings (lang/strings.py) ----------------------------------------------------------------------------

    def e_JoinedStr(self, e: ast.JoinedStr) -> Fn:
        """An f-string: each ``{value!c:spec}`` formatted as CPython formats the model's value."""
        parts: list[Fn] = []
        for v in e.values:
            if isinstance(v, ast.Constant):
                text = str(v.value)
                parts.append(_constant(text))
            else:
                parts.append(self._expr(v))
        size = strings.MAX_STR

        def run(ctx: Ctx) -> str:
            out = "".join([p(ctx) for p in parts])
            if len(out) > size:
                raise strings.too_long()
            return out

        return run

    def e_FormattedValue(self, e: ast.FormattedValue) -> Fn:
        value = self._expr(e.value)
        self.formats(self.value(e.value))
        conversion = e.conversion
        if e.format_spec is None:
            if conversion == -1:
                def plain(ctx: Ctx) -> str:
                    v = value(ctx)
                    return v if type(v) is str else strings.format_value(ctx, v)

                return plain
            return lambda ctx: strings.format_value(ctx, value(ctx), conversion)
        spec = self._expr(e.format_spec)
        return lambda ctx: strings.format_value(ctx, value(ctx), conversion, spec(ctx))

    def formats(self, v: AV) -> None:
        """Record that the node formats values of ``v`` as text (``str``, ``repr``, f-strings, ``format``):
        a list among them has its elements read, and those of the lists inside it, as a comparison reads them
        (``compares``)."""
        self.compares(v, v)

    def str_method(self, e: ast.Call, f: ast.Attribute) -> Fn:
        """``s.m(…)`` for a method ``m`` of ``str`` (``strings.STR_METHODS``): local work on a string. When a
        class of the model defines a method of the same name, the receiver decides at run time, as in Python
        (a hoisted call, which for a string delivers its value at once)."""
        method = f.attr
        user = method in _model_methods(self.mc.class_nodes)
        if any(isinstance(a, ast.Starred) for a in e.args) or any(k.arg is None for k in e.keywords):
            raise self.mc.error(e, "unsupported construct: *args and **kwargs in a call")
        recv = self._expr(f.value)
        args = self.call_args(e) if user else [self._expr(a) for a in e.args]
        names = [k.arg or "" for k in e.keywords]  # no None: ** is refused above
        kwargs = [self._expr(k.value) for k in e.keywords]
        rv = self.value(f.value)
        cls = self.list_class(e) if method in strings.LIST_VALUED else None
        if cls is not None:
            self.facts.allocates = True
        if method in strings.READ_LISTS:
            for a in [*e.args, *(k.value for k in e.keywords)]:
                self.formats(self.value(a))
            if method == "join" and e.args:
                self.facts.elements_read = True  # the elements of a list joined
                self.facts.uses.append(self.value(e.args[0]))

        def on_str(ctx: Ctx, s: str) -> Any:
            v = strings.call_method(ctx, s, method, [a(ctx) for a in args],
                                    dict(zip(names, [k(ctx) for k in kwargs], strict=True)))
            if cls is None:
                return v
            if len(v) > MAX_SEQUENCE:
                raise too_big("list too long")
            return ctx.alloc((cls, None, *v))

        if not user:
            self.note(e, self.new_site(e, "list") if cls is not None else NO_VALUE)

            def run(ctx: Ctx) -> Any:
                s = recv(ctx)
                if type(s) is not str:
                    raise _no_method(ctx, s, method)
                return on_str(ctx, s)

            return run
        if kwargs:
            raise self.mc.error(e, "keyword arguments are not supported for model functions")
        self.facts.callees.add("." + method)
        self.flow("method_call", rv, method, tuple(self.value(a) for a in e.args))
        self.note(e, self.new_site(e, "list") if cls is not None else NO_VALUE,
                  frozenset({("method_return", rv, method)}))
        user_setup = self.method_call_setup(recv, method, args, e)

        def setup(ctx: Ctx, ret_pc: int) -> None:
            s = recv(ctx)
            if type(s) is str:
                ctx.retval = on_str(ctx, s)
                ctx.pc = ret_pc
                return
            user_setup(ctx, ret_pc)

        return self.site(setup, e)

    def e_Name(self, e: ast.Name) -> Fn:
        name = e.id
        if name in self.cells and name in self.slot and name not in self.global_names:
            return self.read_cell(e)
        if name in self.slot and name not in self.global_names:
            i = self.slot[name]
            self.note(e, frozenset({("local", self.var(name))}))

            def read_local(ctx: Ctx) -> Any:
                v = ctx.loc[i]
                if type(v) in BOXED:
                    if v is UNBOUND:
                        raise ModelError(f"local variable '{name}' referenced before assignment",
                                         exc="UnboundLocalError")
                    return unbox(v)
                return v

            return read_local
        if name in self.mc.global_slot:
            s = self.mc.global_slot[name]
            self.facts.reads.add(name)
            self.note(e, frozenset({("global", name)}))

            def read(ctx: Ctx) -> Any:
                if ctx.track:
                    ctx.reads.append(s)
                v = ctx.g[s]
                if type(v) in BOXED:
                    if v is UNBOUND:  # `del name` (lang/deletion.py)
                        raise ModelError(f"name '{name}' is not defined", exc="NameError")
                    return unbox(v)
                return v

            return read
        if name in self.mc.funcs:
            func = self.mc.funcs[name]  # a function as a value: its interned Func, compared by identity
            return lambda ctx: func
        if name in self.mc.classes:
            raise self.mc.error(e, f"'{name}' is a class: classes are not values in models; call it to create "
                                "an object")
        if name in ("True", "False", "None"):
            v = {"True": True, "False": False, "None": None}[name]
            return lambda ctx: v
        if name in FORBIDDEN:
            raise self.mc.error(e, f"'{name}' is not allowed: a model is parsed, never executed")
        raise self.mc.error(e, f"name '{name}' is not defined")

    def read_cell(self, e: ast.Name) -> Fn:
        """A variable in a cell (``nonlocal``): read from the cell its slot holds, an access to the heap."""
        name, i = e.id, self.slot[e.id]
        cell = frozenset({("local", i)})
        self.facts.fields_read.add("$cell")
        self.facts.uses.append(cell)
        self.note(e, frozenset({("field", cell, "$cell")}))

        def run(ctx: Ctx) -> Any:
            r = ctx.loc[i]
            if ctx.track:
                ctx.reads.append((r, FIELDS))
            v = ctx.heap[r.i][FIELDS]
            if type(v) in BOXED:
                if v is UNBOUND:
                    raise ModelError(f"cannot access free variable '{name}' where it is not associated with a "
                                     "value in enclosing scope", exc="NameError")
                return unbox(v)
            return v

        return run

    def e_Lambda(self, e: ast.Lambda) -> Fn:
        return self.function_value(e)

    def function_value(self, e: ast.FunctionDef | ast.Lambda) -> Fn:
        """The value of a lambda or nested ``def`` where it is evaluated: its Func, or, when it captures
        variables or has defaults, a new object holding their values (lang/functions_model.py)."""
        lf = self.mc.lifted.get(id(e))
        if lf is None:
            raise self.mc.error(e, "unsupported construct: a lambda here")
        if lf.cls is None:
            func = lf.func
            return lambda ctx: func
        cls = lf.cls
        parts: list[Fn] = []
        site = self.new_site(e, cls.name)
        for n in lf.captured:
            if n in self.cells:  # the closure shares the variable: it captures the cell
                i = self.slot[n]
                parts.append(_local_reader(i))
                self.flow("store", ("field", site, f"$cap:{n}"), frozenset({("local", i)}))
                continue
            ref_ = ast.copy_location(ast.Name(id=n, ctx=ast.Load()), e)
            parts.append(self._expr(ref_))
            self.flow("store", ("field", site, f"$cap:{n}"), self.value(ref_))
        # The defaults as they are now: the granularity's lowering may have hoisted their accesses.
        pos, kwonly, dflts = parameters(e.args)
        for n, d in [(p.arg, d) for p, d in zip([*pos, *kwonly], dflts, strict=True) if d is not None]:
            parts.append(self.no_calls(d, "in a default value of a nested function or lambda"))
            self.flow("store", ("field", site, f"$def:{n}"), self.value(d))
        self.facts.allocates = True
        self.note(e, site)

        def make(ctx: Ctx) -> Ref:
            return ctx.alloc((cls, None, *(box(p(ctx)) for p in parts)))

        return make

    def call_value(self, e: ast.Call) -> Fn:
        """A call of a function value (a variable, an element): the function is known only at run time, so
        the static facts name every function whose value a call may reach (``value_callees``)."""
        fv = self._expr(e.func)
        args = self.call_args(e, spread=True)
        spread = self.spreading(e, args)
        keywords = tuple(k.arg or "" for k in e.keywords)
        npos = len(e.args)
        every = NO_VALUE.union(*(self.value(a) for a in e.args), *(self.value(k) if k.arg is None else
                                                                    self.value(k.value) for k in e.keywords))
        kw_codes = [self.mc.functions[k] for k in self.mc.value_callees] + [c for _, c in self.mc.bound_codes]
        self.kwargs_facts(kw_codes, every)
        every = every | self.kw_sites(kw_codes)
        fav = self.value(e.func)
        for key in self.mc.value_callees:
            code = self.mc.functions[key]
            self.facts.callees.add(key)
            ncap = signature_of(code).hidden
            caps = tuple(frozenset({("field", fav, f"$cap:{n}")}) for n in code.params[:ncap])
            self.flow("call", code, (*caps, *(every,) * (len(code.params) - ncap)))
        for key, code in self.mc.bound_codes:  # a bound method: its self is the value's $self
            self.facts.callees.add(key)
            self.flow("call", code, (frozenset({("field", fav, "$self")}), *(every,) * (len(code.params) - 1)))
        self.note(e, NO_VALUE.union(*(frozenset({("return", self.mc.functions[k])})
                                      for k in self.mc.value_callees),
                                    *(frozenset({("return", code)}) for _, code in self.mc.bound_codes)))

        def setup(ctx: Ctx, ret_pc: int) -> None:
            code, first, fields = function_of(ctx, fv(ctx))
            if spread is not None:
                pos, names, kwvals = spread(ctx)
                ctx.push(code, bind(signature_of(code), first, pos, names, kwvals, fields, ctx), ret_pc)
                return
            vals = [a(ctx) for a in args]
            sig = signature_of(code)
            if keywords or len(code.params) != len(first) + len(vals) or sig.npos != len(code.params):
                vals = bind(sig, first, vals[:npos], keywords, vals[npos:], fields, ctx)
                ctx.push(code, vals, ret_pc)
                return
            ctx.push(code, [*first, *vals], ret_pc)

        return self.site(setup, e)

    def e_Tuple(self, e: ast.Tuple) -> Fn:
        parts = [self._expr(x) for x in e.elts]
        if any(isinstance(x, ast.Starred) for x in e.elts):
            raise self.mc.error(e, "unsupported construct: starred expression")
        self.note(e, *(self.value(x) for x in e.elts))
        return lambda ctx: tuple(p(ctx) for p in parts)

    def list_class(self, e: ast.AST) -> ClassInfo:
        """The list class of this allocation site."""
        return ClassInfo("list", builtin="list", is_list=True, line=getattr(e, "lineno", 0), grows=self.mc.lists_grow)

    def e_List(self, e: ast.List) -> Fn:
        parts = [self._expr(x) for x in e.elts]
        cls = self.list_class(e)
        self.facts.allocates = True
        self.note(e, self.new_site(e, "list"))
        self.flow("store", ("element", self.value(e)), NO_VALUE.union(*(self.value(x) for x in e.elts)))

        def run(ctx: Ctx) -> Ref:
            return ctx.alloc((cls, None, *(p(ctx) for p in parts)))

        return run

    def e_Dict(self, e: ast.Dict) -> Fn:
        """``{k: v, ...}``: a new dict (``lang/containers.py``), its own allocation site."""
        if any(k is None for k in e.keys):
            raise self.mc.error(e, "unsupported construct: **mapping in a dict display; use d.update(other)")
        keys = [self._expr(k) for k in e.keys if k is not None]
        vals = [self._expr(v) for v in e.values]
        return self.new_dict(e, [k for k in e.keys if k is not None] + list(e.values),
                             lambda ctx: [(k(ctx), v(ctx)) for k, v in zip(keys, vals, strict=True)])

    def e_Set(self, e: ast.Set) -> Fn:
        """``{a, b, ...}``: a new set (``lang/containers.py``), its own allocation site."""
        if any(isinstance(x, ast.Starred) for x in e.elts):
            raise self.mc.error(e, "unsupported construct: starred expression")
        parts = [self._expr(x) for x in e.elts]
        return self.new_set(e, list(e.elts), lambda ctx: [p(ctx) for p in parts])

    def new_set(self, e: ast.AST, parts: list[ast.expr], items: Callable[[Ctx], Any]) -> Fn:
        cls = set_class(getattr(e, "lineno", 0))
        self.facts.allocates = True
        self.note(e, self.new_site(e, "set"))
        self.flow("store", ("element", self.value(e)), NO_VALUE.union(*(self.value(x) for x in parts)))
        return lambda ctx: set_new(ctx, cls, items(ctx))

    def new_dict(self, e: ast.AST, parts: list[ast.expr], pairs: Callable[[Ctx], Any],
                 cls: ClassInfo | None = None, av_items: AV = NO_VALUE) -> Fn:
        """A new dict of ``pairs``; ``parts``: the expressions of its keys and values; ``av_items``: the abstract
        value of its pairs when they come from elsewhere (a dict comprehension's)."""
        cls = cls or dict_class(getattr(e, "lineno", 0))
        self.facts.allocates = True
        self.note(e, self.new_site(e, "dict"))
        self.flow("store", ("element", self.value(e)), NO_VALUE.union(av_items, *(self.value(x) for x in parts)))
        return lambda ctx: dict_new(ctx, cls, pairs(ctx))

    def e_BinOp(self, e: ast.BinOp) -> Fn:
        if isinstance(e.op, ast.Mult) and isinstance(e.left, ast.List) and len(e.left.elts) == 1:
            item, count = self._expr(e.left.elts[0]), self._expr(e.right)
            cls = self.list_class(e)
            self.facts.allocates = True
            self.note(e, self.new_site(e, "list"))
            self.flow("store", ("element", self.value(e)), self.value(e.left.elts[0]))

            def alloc(ctx: Ctx) -> Ref:
                n = count(ctx)
                if not int_like(n) or n < 0:
                    raise ModelError(f"array length must be a non-negative int, got {show(n)}", exc="TypeError")
                if n > MAX_SEQUENCE:
                    raise too_big(f"array of {show(n)} elements")
                return ctx.alloc((cls, None, *((item(ctx),) * n)))

            return alloc
        op = BINOPS.get(type(e.op))
        if op is None:
            raise self.mc.error(e, "unsupported operator (values are ints: use // for division)")
        a, b = self._expr(e.left), self._expr(e.right)
        if self.mc.has_dicts and isinstance(e.op, (ast.BitOr, ast.BitAnd, ast.Sub)):
            return self.set_operator(e, a, b, op)
        if (self.mc.container_arith and isinstance(e.op, (ast.Add, ast.Mult)) and not getattr(e, "movers_local", False)
                and container_operands(e)):
            return self.list_operator(e, a, b, op)
        self.note(e, self.value(e.left), self.value(e.right))  # tuple + tuple, tuple * n
        if isinstance(e.op, ast.Add):
            def add(ctx: Ctx) -> Any:
                x, y = a(ctx), b(ctx)
                if type(x) is str or type(y) is str:
                    return strings.concat(x, y, ctx)
                v = x + y
                if type(v) is tuple and len(v) > MAX_SEQUENCE:
                    raise too_big("tuple too long")
                return v

            return add
        if isinstance(e.op, ast.Sub):
            return lambda ctx: a(ctx) - b(ctx)
        if isinstance(e.op, ast.Mod):
            self.formats(self.value(e.right))  # `"%s" % xs` formats the values of xs (nothing for ints)

            def mod(ctx: Ctx) -> Any:
                x, y = a(ctx), b(ctx)
                return strings.percent(ctx, x, y) if type(x) is str else x % y

            return mod
        if isinstance(e.op, ast.Mult):
            def mul(ctx: Ctx) -> Any:
                x, y = a(ctx), b(ctx)
                if type(x) is str or type(y) is str:
                    return strings.repeat(x, y, ctx)
                return op(x, y)

            return mul
        return lambda ctx: op(a(ctx), b(ctx))

    def set_operator(self, e: ast.BinOp, a: Fn, b: Fn, op: Callable[[Any, Any], Any]) -> Fn:
        """``|``, ``&``, ``-``: on two sets a new set (reading both), else the ints' operator."""
        symbol = {ast.BitOr: "|", ast.BitAnd: "&", ast.Sub: "-"}[type(e.op)]
        cls = set_class(e.lineno)
        site = self.new_site(e, "set")
        self.facts.allocates = self.facts.elements_read = True
        self.facts.uses.extend((self.value(e.left), self.value(e.right)))
        self.note(e, self.value(e.left), self.value(e.right), site)
        self.flow("store", ("element", site), frozenset({("element", self.value(e.left)),
                                                         ("element", self.value(e.right))}))

        def run(ctx: Ctx) -> Any:
            x, y = a(ctx), b(ctx)
            if type(x) is Ref and type(y) is Ref:
                return set_binop(ctx, cls, x, y, symbol)
            if type(x) is Ref or type(y) is Ref:
                raise ModelError(f"unsupported operand type(s) for {symbol}", exc="TypeError")
            return op(x, y)

        return run

    def slice_read(self, e: ast.Subscript, s: ast.Slice) -> Fn:
        """``a[i:j:k]``: of a list a new list (reading every element and the length), of a tuple a tuple."""
        seq = self._expr(e.value)
        bounds = [self._expr(b) if b is not None else (lambda ctx: None) for b in (s.lower, s.upper, s.step)]
        sv = self.value(e.value)
        cls = self.list_class(e)
        site = self.new_site(e, "list")
        self.facts.elements_read = self.facts.allocates = True
        self.facts.uses.append(sv)
        self.note(e, sv, site)
        self.flow("store", ("element", site), frozenset({("element", sv)}) | sv)

        def run(ctx: Ctx) -> Any:
            v = seq(ctx)
            lo, hi, st = (b(ctx) for b in bounds)
            for x in (lo, hi, st):
                if x is not None and not int_like(x):
                    raise ModelError("slice indices must be integers or None or have an __index__ method",
                                     exc="TypeError")
            if st == 0:
                raise ModelError("slice step cannot be zero", exc="ValueError")
            if type(v) is tuple or type(v) is str:
                return strings.sliced(v, lo, hi, st, ctx)
            if type(v) is not Ref or not ctx.heap[v.i][0].is_list:
                if type(v) is Ref and deques.is_deque(ctx.heap[v.i]):
                    raise ModelError("sequence index must be integer, not 'slice'", exc="TypeError")
                raise ModelError(f"cannot slice {show(v)}", exc="TypeError")
            o = ctx.heap[v.i]
            if ctx.track:
                ctx.reads.extend((v, k) for k in range(2, len(o)))
            element_index(ctx, v, o, 0) if len(o) > 2 else length_of(ctx, v)  # the length: an access
            return ctx.alloc((cls, None, *o[2:][lo:hi:st]))

        return run

    def list_operator(self, e: ast.BinOp, a: Fn, b: Fn, op: Callable[[Any, Any], Any]) -> Fn:
        """``a + b`` and ``a * n`` where a list may be an operand: a new list (CPython's), else ``op``."""
        cls = self.list_class(e)
        site = self.new_site(e, "list")
        lv, rv = self.value(e.left), self.value(e.right)
        self.facts.elements_read = self.facts.allocates = True
        self.facts.uses.extend((lv, rv))
        self.note(e, lv, rv, site)
        self.flow("store", ("element", site), frozenset({("element", lv), ("element", rv)}))
        add = isinstance(e.op, ast.Add)

        dcls = deques.deque_class(e.lineno) if self.mc.has_deques else None
        inplace = getattr(e, "movers_inplace", False)

        def run(ctx: Ctx) -> Any:
            x, y = a(ctx), b(ctx)
            if type(x) is not Ref and type(y) is not Ref:
                return op(x, y)
            if dcls is not None and type(x) is Ref and deques.is_deque(ctx.heap[x.i]):
                if inplace:
                    raise deques.in_place(add)
                return deques.arithmetic(ctx, dcls, x, y, add)
            if dcls is not None and type(y) is Ref and deques.is_deque(ctx.heap[y.i]) and not add:
                return deques.arithmetic(ctx, dcls, y, x, add)
            xs = list_items(ctx, x) if type(x) is Ref and ctx.heap[x.i][0].is_list else None
            ys = list_items(ctx, y) if type(y) is Ref and ctx.heap[y.i][0].is_list else None
            if add and xs is not None and ys is not None:
                items = xs + ys
            elif not add and xs is not None and int_like(y):
                items = xs * y if len(xs) * y <= MAX_SEQUENCE else too_big_list()
            elif not add and ys is not None and int_like(x):
                items = ys * x if len(ys) * x <= MAX_SEQUENCE else too_big_list()
            else:
                sym = "+" if add else "*"
                raise ModelError(f"unsupported operand type(s) for {sym}", exc="TypeError")
            if len(items) > MAX_SEQUENCE:
                too_big_list()
            return ctx.alloc((cls, None, *(box(v) if type(v) is bool or type(v) is tuple or type(v) is Ref
                                             else v for v in items)))

        return run

    def e_UnaryOp(self, e: ast.UnaryOp) -> Fn:
        if isinstance(e.op, ast.Not):
            t = self.condition(e.operand)
            return lambda ctx: not t(ctx)
        a = self._expr(e.operand)
        if isinstance(e.op, ast.USub):
            return lambda ctx: -a(ctx)
        if isinstance(e.op, ast.UAdd):
            return lambda ctx: +a(ctx)
        return lambda ctx: ~a(ctx)

    def e_BoolOp(self, e: ast.BoolOp) -> Fn:
        parts = [self.no_calls(x, "inside 'and'/'or'") for x in e.values]
        for x in e.values:
            self.truth_use(x)
        self.note(e, *(self.value(x) for x in e.values))  # `a or b` is one of its operands
        if isinstance(e.op, ast.And):
            def run(ctx: Ctx) -> Any:
                v: Any = True
                for p in parts:
                    v = p(ctx)
                    if not (truth_of(ctx, v) if type(v) is Ref else v):
                        return v
                return v
        else:
            def run(ctx: Ctx) -> Any:
                v: Any = False
                for p in parts:
                    v = p(ctx)
                    if truth_of(ctx, v) if type(v) is Ref else v:
                        return v
                return v

        return run

    def e_IfExp(self, e: ast.IfExp) -> Fn:
        self.no_calls(e.test, "inside a conditional expression")
        t = self.condition(e.test)
        a = self.no_calls(e.body, "inside a conditional expression")
        b = self.no_calls(e.orelse, "inside a conditional expression")
        self.note(e, self.value(e.body), self.value(e.orelse))
        return lambda ctx: a(ctx) if t(ctx) else b(ctx)

    def e_Compare(self, e: ast.Compare) -> Fn:
        left = self._expr(e.left)
        rights = [self._expr(c) for c in e.comparators]
        ops: list[Callable[[Ctx, Any, Any], bool]] = []
        operands = [e.left, *e.comparators]
        for k, o in enumerate(e.ops):
            a, b = self.value(operands[k]), self.value(operands[k + 1])
            if isinstance(o, (ast.In, ast.NotIn)):
                self.facts.elements_read = True  # `v in a` reads every element of a list
                self.facts.uses.append(b)
                self.compares(a, frozenset({("element", b)}))  # v against each element
                ops.append(make_in(isinstance(o, ast.NotIn)))
            else:
                if not isinstance(o, (ast.Is, ast.IsNot)):
                    self.compares(a, b)
                    if a and b and self.mc.has_lists:  # where, for the lowering (``Finals.compared_at``)
                        self.mc.compare_sites.append((self.code, a, b, (e.lineno, e.col_offset)))
                ops.append(comparison(type(o)))
        if len(ops) == 1:
            op, r = ops[0], rights[0]
            # Two ints, the common case, compare in line; anything else as ``runtime_ops`` says.
            if isinstance(e.ops[0], ast.Eq):
                def eq(ctx: Ctx) -> bool:
                    a, b = left(ctx), r(ctx)
                    if type(a) is int and type(b) is int:
                        return a == b
                    return op(ctx, a, b)

                return eq
            if isinstance(e.ops[0], ast.Lt):
                def lt(ctx: Ctx) -> bool:
                    a, b = left(ctx), r(ctx)
                    if type(a) is int and type(b) is int:
                        return a < b
                    return op(ctx, a, b)

                return lt
            py = _INT_COMPARISONS.get(type(e.ops[0]))
            if py is not None:
                def compare(ctx: Ctx) -> bool:
                    a, b = left(ctx), r(ctx)
                    if type(a) is int and type(b) is int:
                        return py(a, b)
                    return op(ctx, a, b)

                return compare
            return lambda ctx: op(ctx, left(ctx), r(ctx))

        def run(ctx: Ctx) -> bool:
            a = left(ctx)
            for op, r in zip(ops, rights, strict=True):
                b = r(ctx)
                if not op(ctx, a, b):
                    return False
                a = b
            return True

        return run

    def compares(self, a: AV, b: AV) -> None:
        """Record that the node compares values of ``a`` and ``b`` (``==``, ``<``, ``in``, ``min``…). When both
        may be lists, it may compare their contents, reading their elements and those of the lists inside
        them (``runtime_ops._eq``): ``compiler.resolve_comparisons`` decides that once every flow is known."""
        if a and b and self.mc.has_lists:
            self.facts.compared.append((a, b))
        if a and b and self.mc.compared_fields:
            # Two dataclass objects compare by their fields (runtime_ops._eq): every such field may be read,
            # of the objects compared and of the objects in their fields.
            self.facts.fields_read |= self.mc.compared_fields
            for v in (a, b):
                self.facts.uses.append(v)
                for f in self.mc.compared_fields:
                    self.facts.uses.append(frozenset({("field", v, f)}))

    def names_a_list(self, e: ast.expr) -> bool:
        """Whether ``e`` is a global that only ever holds lists (``ModuleCompiler.list_globals``): indexing it
        gives an element, not a tuple's item (the abstract values cannot tell a tuple from its items)."""
        return (isinstance(e, ast.Name) and e.id in self.mc.list_globals
                and (e.id in self.global_names or e.id not in self.slot))

    def e_Subscript(self, e: ast.Subscript) -> Fn:
        if isinstance(e.slice, ast.Slice):
            return self.slice_read(e, e.slice)
        seq, index = self._expr(e.value), self._expr(e.slice)
        self.facts.elements_read = True
        sv = self.value(e.value)
        self.facts.uses.append(sv)
        if self.mc.has_defaultdict:  # d[k] may insert k and a new default value
            self.facts.elements_written = self.facts.allocates = True
            self.flow("store", ("element", sv), self.value(e.slice))
        if self.names_a_list(e.value):
            self.note(e, frozenset({("element", sv)}))  # a list's element, never the list itself
        else:
            self.note(e, sv, frozenset({("element", sv)}))  # a list's element, or a tuple's item

        def run(ctx: Ctx) -> Any:
            v = seq(ctx)
            i = index(ctx)
            if type(v) is Ref:
                o = ctx.heap[v.i]
                if not o[0].is_list:
                    if is_dict(o):
                        return dict_get(ctx, v, i)
                    if deques.is_deque(o):
                        return deques.get_item(ctx, v, i)
                    raise ModelError(f"a {o[0].name} object is not subscriptable", exc="TypeError")
                idx = element_index(ctx, v, o, i)
                if ctx.track:
                    ctx.reads.append((v, idx))
                x = o[idx]
                return unbox(x) if type(x) in BOXED else x
            if type(v) is tuple:
                if type(i) is not int or not -len(v) <= i < len(v):
                    raise ModelError(f"tuple index {show(i)} out of range", exc="IndexError")
                return v[i]
            if type(v) is str:
                return strings.char_at(v, i, ctx)
            raise ModelError(f"{show(v)} is not subscriptable", exc="TypeError")

        return run

    def e_Attribute(self, e: ast.Attribute) -> Fn:
        obj = self._expr(e.value)
        name = e.attr
        self.facts.fields_read.add(name)
        if name == "name":  # a Thread's name: its id, target and given name (lang/threadinfo.py)
            self.facts.fields_read |= {"_tid", "_target", "_args", "$name"}
        if self.mc.has_local:
            self.facts.fields_read.add("$data")
        self.facts.uses.append(self.value(e.value))
        self.note(e, frozenset({("field", self.value(e.value), name)}))
        bound = name in self.mc.bound_names
        if bound:  # may be a bound method (functions_model.bound_method_class), holding the receiver
            self.facts.allocates = True
            self.note(e, self.new_site(e, "method"))
            self.flow("store", ("field", self.value(e), "$self"), self.value(e.value))

        def run(ctx: Ctx) -> Any:
            r = obj(ctx)
            if r is threadinfo.MAIN_THREAD and name == "name":
                return "MainThread"
            if type(r) is not Ref:
                raise ModelError(f"attribute '{name}' of {show(r)}", exc="AttributeError")
            o = ctx.heap[r.i]
            idx = o[0].field_index.get(name)
            if idx is None:
                if name == "owner":
                    if ctx.track:
                        ctx.reads.append((r, MON))  # the monitor (or a condition's lock): lock state
                    return sync.owner(ctx, r)
                if name == "name" and o[0].is_thread:
                    return threadinfo.thread_name(ctx, r)
                if o[0] is threadinfo.LOCAL:
                    return threadinfo.local_get(ctx, r, name)
                if bound and name in getattr(o[0], "bound_methods", ()):
                    return ctx.alloc((o[0].bound_methods[name], None, r))
                if o[0].builtin == "deque" and name in deques.DEQUE_METHODS:
                    raise ModelError(f"a deque's method as a value (.{name} without a call) is not supported; "
                                     f"wrap the call in a lambda: lambda: d.{name}()")
                raise ModelError(f"{o[0].name} object has no field '{name}'", exc="AttributeError")
            if ctx.track:
                ctx.reads.append((r, idx))
            x = o[idx]
            if type(x) in BOXED:
                if x is UNBOUND:
                    raise ModelError(f"{o[0].name} object has no attribute '{name}' (not assigned yet)",
                                     exc="AttributeError")
                return unbox(x)
            return x

        return run

    # -- calls of model functions, methods and constructors (hoisted: see ``site``) ---------------------------

    def e_Call(self, e: ast.Call) -> Fn:
        f = e.func
        if isinstance(f, ast.Name):
            name = f.id
            if name in FORBIDDEN:
                raise self.mc.error(e, f"'{name}' is not allowed: a model is parsed, never executed")
            if name in self.mc.functions and name not in self.slot:
                code = self.mc.functions[name]
                self.facts.callees.add(name)
                args = self.call_args(e, spread=True)
                spread = self.spreading(e, args)
                if spread is not None:  # f(*xs): matched when the items are known (CPython's TypeError)
                    self.flow("call", code, self.spread_values(e, code))
                    self.note(e, frozenset({("return", code)}))
                    return self.site(_spread_call(code, spread), e)
                how = self.bound(e, code, 0)
                values = self.arranged(how, args)
                self.flow("call", code, self.bound_values(e, how, code))
                self.note(e, frozenset({("return", code)}))
                read = self.site(lambda ctx, ret_pc: ctx.push(code, values(ctx), ret_pc), e)
                self.site_stack[0][-1].fast_call = (e, code)  # type: ignore[index]  # lang/codegen_calls.py
                return read
            if name in self.mc.classes:
                return self.constructor(e, self.mc.classes[name])
            if name in BUILTIN_EXCEPTIONS and name not in self.slot and name not in self.mc.global_slot:
                return self.builtin_exception(e, BUILTIN_EXCEPTIONS[name])  # type: ignore[attr-defined]
            builder = getattr(self, "b_" + name, None)
            if builder is not None and name not in self.slot:
                return builder(e)
            if name in self.slot or name in self.mc.global_slot:
                return self.call_value(e)
            if name in DECLARATIONS:
                raise self.mc.error(e, f"{name}(…) must be a statement at the top level of the model")
            raise self.mc.error(e, f"unknown function '{name}'")
        if isinstance(f, ast.Attribute):
            if isinstance(f.value, ast.Call) and _is_call_to(f.value, "super"):
                return self.super_call(e, f)
            if f.attr == "locked" and not e.args and not e.keywords and not self.mc.defines_method("locked"):
                return self.lock_locked(e, f)
            container = f.attr in BUILTIN_METHODS and f.attr in self.container_methods()
            if container or (f.attr in strings.STR_METHODS and (
                    f.attr != "join" or (len(e.args) == 1 and not e.keywords))):
                return self.builtin_method(e, f)
            if f.attr in SYNC_METHODS or (f.attr == "wait_for"
                                          and "wait_for" not in _model_methods(self.mc.class_nodes)):
                raise self.mc.error(e, f"{f.attr}() must be a statement of its own")
            if f.attr not in _model_methods(self.mc.class_nodes) and f.attr in _model_fields(self.mc.classes):
                return self.call_value(e)  # a function value held in a field: self.callback(x)
            if f.attr not in _model_methods(self.mc.class_nodes):
                # No object of the model could have it: caught here rather than as a runtime error mid-search.
                raise self.mc.error(f, UNKNOWN_METHODS.get(
                    f.attr, f"no class of the model defines a method '{f.attr}()', and the threading objects "
                            "have only acquire, release, wait, wait_for, notify, notify_all, start, join, set, clear, "
                            "is_set, append and pop"))
            recv = self._expr(f.value)
            args = self.call_args(e, spread=True)
            self.facts.callees.add("." + f.attr)
            rv = self.value(f.value)
            self.flow("method_call", rv, f.attr, self.method_args_values(e, f.attr))
            self.note(e, frozenset({("method_return", rv, f.attr)}))
            read = self.site(self.method_call_setup(recv, f.attr, args, e), e)
            self.site_stack[0][-1].fast_call = (e, None)  # type: ignore[index]  # lang/codegen_calls.py
            return read
        if isinstance(f, (ast.Subscript, ast.Call, ast.Lambda)):  # handlers[i](x), make(k)(), (lambda: 1)()
            return self.call_value(e)
        raise self.mc.error(e, "unsupported call")

    def builtin_method(self, e: ast.Call, f: ast.Attribute) -> Fn:
        """``e.set()``, ``e.clear()``, ``e.is_set()`` on an Event, ``xs.append(v)``, ``xs.pop()``, ``xs.pop(i)``
        on a list: part of the step of the statement that contains them, with their accesses recorded (the
        event's flag; the list's elements and length). When a class of the model defines a method of the same
        name, the receiver's class decides at run time, as in Python (a hoisted call, which for a built-in
        object delivers its value at once)."""
        method = f.attr
        if method in strings.STR_METHODS and method not in self.container_methods():
            return self.str_method(e, f)
        user = method in _model_methods(self.mc.class_nodes)
        lo, hi = {"append": (1, 1), "pop": (0, 1)}.get(method, (0, 0))
        ranges = [r[method] for r in self.method_tables() if method in r]
        if method not in _NON_DICT_METHODS:
            lo, hi = ranges[0]  # a dict's or a set's alone
        for a, b in ranges:  # pop, clear: a list's, an Event's, a dict's or a set's
            lo, hi = min(lo, a), max(hi, b)
        what = ("one argument" if lo == hi == 1 else "no arguments" if hi == 0 else "at most one argument" if lo == 0
                and hi == 1 else f"{lo} to {hi} arguments")
        shared = method in strings.STR_METHODS  # a name lists and strings share: the run time checks arity
        if not user and not shared and (e.keywords or not lo <= len(e.args) <= hi):
            raise self.mc.error(e, f"{method}() takes {what}")
        recv = self._expr(f.value)
        args = self.call_args(e) if user else [self._expr(a) for a in e.args]
        rv = self.value(f.value)
        self.facts.uses.append(rv)
        op: Callable[[Ctx, Any, list[Any]], Any]
        if method == "append":
            self.facts.elements_read = self.facts.elements_written = True
            if e.args:
                self.flow("store", ("element", rv), self.value(e.args[0]))
            op = lambda ctx, r, vals: list_append(ctx, r, *vals)  # noqa: E731
        elif method == "pop":
            self.facts.elements_read = self.facts.elements_written = True
            self.note(e, frozenset({("element", rv)}))
            op = lambda ctx, r, vals: list_pop(ctx, r, *vals)  # noqa: E731
        elif method == "is_set":
            self.facts.fields_read.add("$flag")
            op = lambda ctx, r, vals: sync.event_is_set(ctx, r)  # noqa: E731
        elif method in ("set", "clear"):
            self.facts.fields_written.add("$flag")
            flag = method == "set"
            op = lambda ctx, r, vals: sync.event_set(ctx, r, flag)  # noqa: E731
        else:
            op = _no_op(method)
        if ranges:
            op = self.dict_dispatch(e, method, rv, op)
        if shared:
            op = _or_str_method(op, method)
        if not user:
            return lambda ctx: op(ctx, recv(ctx), [a(ctx) for a in args])
        self.facts.callees.add("." + method)
        self.flow("method_call", rv, method, self.method_args_values(e, method))
        self.note(e, self.value(e), frozenset({("method_return", rv, method)}))
        user_setup = self.method_call_setup(recv, method, args, e)

        def setup(ctx: Ctx, ret_pc: int) -> None:
            r = recv(ctx)
            if (type(r) is Ref and ctx.heap[r.i][0].builtin) or (shared and type(r) is str):
                vals = [a(ctx) for a in args]
                if type(r) is not str and not lo <= len(vals) <= hi:
                    raise ModelError(f"{method}() takes {what}", exc="TypeError")
                ctx.retval = op(ctx, r, vals)
                ctx.pc = ret_pc
                return
            user_setup(ctx, ret_pc)

        read = self.site(setup, e)
        # On the generated code, a model object's method (``q.get()`` of the queue library in a model with
        # dicts); a builtin receiver falls back to this setup (lang/codegen_calls.py).
        self.site_stack[0][-1].fast_call = (e, None)  # type: ignore[index]
        return read

    def method_tables(self) -> list[dict[str, tuple[int, int]]]:
        """The tables of container methods (``lang/containers.py``) objects of this model may have."""
        return ([DICT_METHODS, SET_METHODS] if self.mc.has_dicts else []) + (
            [LIST_METHODS] if self.mc.has_lists or self.mc.has_dicts else []) + (
            [deques.DEQUE_METHODS] if self.mc.has_deques else [])

    def container_methods(self) -> frozenset[str]:
        return _NON_DICT_METHODS.union(*self.method_tables())

    def dict_dispatch(self, e: ast.Call, method: str, rv: AV, other: Callable[[Ctx, Any, list[Any]], Any]
                      ) -> Callable[[Ctx, Any, list[Any]], Any]:
        """Dict and set methods (``lang/containers.py``): the facts of ``d.method(...)`` added to those of the other
        types the name may mean, and the run-time dispatch on the receiver's type."""
        self.facts.elements_read = True
        in_deque = self.mc.has_deques and method in deques.DEQUE_METHODS
        if method in DICT_CHANGING_METHODS or method in LIST_CHANGING or (in_deque and method in deques.DEQUE_CHANGING):
            self.facts.elements_written = True
        if e.args:  # keys and default values may be stored into the dict, and returned
            self.flow("store", ("element", rv), NO_VALUE.union(*(self.value(a) for a in e.args)))
        if method in ("extend", "extendleft") and e.args:  # the items of the argument are stored
            self.facts.uses.append(self.value(e.args[0]))
            self.flow("store", ("element", rv), frozenset({("element", self.value(e.args[0]))}))
        # The result: a value or a key of the dict, a tuple of them, a default, or a copy of the dict.
        copy_cls = dict_class(getattr(e, "lineno", 0))
        copy_set = set_class(getattr(e, "lineno", 0))
        site = NO_VALUE
        if method == "copy":
            self.facts.allocates = True
            site = self.new_site(e, "container")
            self.flow("store", ("element", site), frozenset({("element", rv)}))
        self.note(e, self.value(e), site, frozenset({("element", rv)}), *(self.value(a) for a in e.args[1:]))

        in_dict, in_set, in_list = method in DICT_METHODS, method in SET_METHODS, method in LIST_METHODS
        copy_list = self.list_class(e)
        copy_deque = deques.deque_class(getattr(e, "lineno", 0))

        def op(ctx: Ctx, r: Any, vals: list[Any]) -> Any:
            if type(r) is Ref:
                kind = ctx.heap[r.i][0].builtin
                if kind == "dict" and in_dict:
                    return dict_method(ctx, r, method, vals, copy_cls)
                if kind == "set" and in_set:
                    return set_method(ctx, r, method, vals, copy_set)
                if kind == "list" and in_list:
                    return list_method(ctx, r, method, vals, copy_list)
                if kind == "deque" and in_deque:
                    return deques.method(ctx, r, method, vals, copy_deque)
            return other(ctx, r, vals)

        return op

    def check_arity(self, e: ast.AST, code: Code, n: int) -> None:
        if n != len(code.params):
            raise self.mc.error(e, f"{code.name}() takes {len(code.params)} arguments, {n} given")

    def call_args(self, e: ast.Call, spread: bool = False) -> list[Fn]:
        """The arguments of a model call compiled in Python's order of evaluation: the positional ones, then
        the keyword ones left to right (``bound`` says which parameter each fills). With ``spread``, a
        positional argument may be ``*xs``: its value is the iterable (``spreading`` expands it)."""
        for a in e.args:
            if isinstance(a, ast.Starred):
                if spread:
                    continue
                raise self.mc.error(a, "unsupported construct: *args in a call of a built-in or an exception "
                                       "class; pass the items one by one")
        for k in e.keywords:
            if k.arg is None and not spread:
                raise self.mc.error(k, "unsupported construct: **mapping in a call of a built-in; give the keyword "
                                       "arguments by name")
        return [self._starred(a) if isinstance(a, ast.Starred) else self._expr(a) for a in e.args] + [
            self._expr(k.value) if k.arg is not None else self._mapping(k) for k in e.keywords]

    def _mapping(self, k: ast.keyword) -> Fn:
        """``**d`` in a call: the dict, whose items are read (an access)."""
        v = self._expr(k.value)
        av = self.value(k.value)
        self.facts.elements_read = True
        self.facts.uses.append(av)
        self.note(k, av, frozenset({("element", av)}))
        return v

    def _starred(self, a: ast.Starred) -> Fn:
        """``*xs`` in a call: the iterable, whose items are read (a list's elements: an access)."""
        v = self._expr(a.value)
        av = self.value(a.value)
        self.facts.elements_read = True
        self.facts.uses.append(av)
        self.note(a, av, frozenset({("element", av)}))
        return v

    def spreading(self, e: ast.Call, args: list[Fn]) -> Spread | None:
        """For a call with ``*xs`` or ``**d`` among its arguments: the positional values (the items of each
        ``*xs`` in its place), the keywords' names and their values (the items of each ``**d`` in its place),
        in CPython's order; None for a call without."""
        stars = [isinstance(a, ast.Starred) for a in e.args]
        names = [k.arg for k in e.keywords]
        if not any(stars) and None not in names:
            return None
        npos = len(e.args)
        pos = list(zip(args[:npos], stars, strict=True))
        kws = list(zip(args[npos:], names, strict=True))
        fname = self.mc.text(e.func)

        def run(ctx: Ctx) -> tuple[list[Any], tuple[str, ...], list[Any]]:
            out: list[Any] = []
            for a, star in pos:
                v = a(ctx)
                if star:
                    out.extend(items_of(ctx, v))
                else:
                    out.append(v)
            keys: list[str] = []
            vals: list[Any] = []
            for a, name in kws:
                v = a(ctx)
                if name is not None:
                    keys.append(name)
                    vals.append(v)
                    continue
                if type(v) is not Ref or not is_dict(ctx.heap[v.i]):
                    raise ModelError(f"{fname}() argument after ** must be a mapping, not {show(v)}",
                                     exc="TypeError")
                for key, x in dict_items(ctx, v):
                    if type(key) is not str:
                        raise ModelError("keywords must be strings", exc="TypeError")
                    if key in keys:
                        raise ModelError(f"{fname}() got multiple values for keyword argument '{key}'",
                                         exc="TypeError")
                    keys.append(key)
                    vals.append(x)
            return out, tuple(keys), vals

        return run

    def spread_values(self, e: ast.Call, code: Code, first: tuple[AV, ...] = ()) -> tuple[AV, ...]:
        """The parameters' abstract values for a call with ``*xs`` or ``**d``: any argument may reach any
        parameter (a ``**kwargs`` parameter: the dict the call makes, which holds them)."""
        every = NO_VALUE.union(*(self.value(a) for a in e.args), *(self.value(k) if k.arg is None else
                                                                    self.value(k.value) for k in e.keywords))
        self.kwargs_facts([code], every)
        return (*first, *(every | self.kw_sites([code]),) * (len(code.params) - len(first)))

    def kw_codes(self) -> list[Code]:
        """Every function and method of the model that takes ``**kwargs``."""
        codes = [*self.mc.functions.values(), *(c for cls in self.mc.classes.values() for c in cls.methods.values())]
        return [c for c in codes if c.signature is not None and c.signature.kwstar is not None]

    def kw_sites(self, codes: list[Code]) -> AV:
        return NO_VALUE.union(*(kwargs_site(c) for c in codes if signature_of(c).kwstar is not None))

    def kwargs_facts(self, codes: list[Code], values: AV) -> None:
        """A call that may bind ``**kwargs`` of one of ``codes`` makes a dict holding keyword values."""
        for c in codes:
            if signature_of(c).kwstar is not None:
                self.facts.allocates = True
                self.flow("store", ("element", kwargs_site(c)), values)

    def bound(self, e: ast.Call, code: Code, first: int) -> list[Source]:
        """Where each parameter of ``code`` from the ``first`` on gets its value in call ``e`` (CPython's
        TypeError message, at the call, when they do not match)."""
        how = bind_static(signature_of(code), len(e.args), [k.arg for k in e.keywords], first)
        if isinstance(how, str):
            raise self.mc.error(e, how)
        if signature_of(code).kwstar is not None:
            self.kwargs_facts([code], NO_VALUE.union(*(self.value(k.value) for k in e.keywords)))
        return how

    @staticmethod
    def arranged(how: list[Source], args: list[Fn]) -> Callable[[Ctx], list[Any]]:
        """The parameters' values: the arguments evaluated in their order, then put in the parameters'."""
        if all(type(s) is int for s in how) and how == list(range(len(args))):
            return lambda ctx: [a(ctx) for a in args]

        if not any(isinstance(s, tuple) and s[0] in ("star", "kwstar") for s in how):
            def plain(ctx: Ctx) -> list[Any]:
                vals = [a(ctx) for a in args]
                return [vals[s] if type(s) is int else s[1] for s in how]  # type: ignore[index]

            return plain

        def one(ctx: Ctx, vals: list[Any], s: Source) -> Any:
            if isinstance(s, int):
                return vals[s]
            if s[0] == "star":
                return tuple(vals[i] for i in s[1])
            if s[0] == "kwstar":
                return s[2](ctx, [(k, vals[i]) for k, i in s[1]])
            return s[1]

        def run(ctx: Ctx) -> list[Any]:
            vals = [a(ctx) for a in args]
            return [one(ctx, vals, s) for s in how]

        return run

    def bound_values(self, e: ast.Call, how: list[Source], code: Code | None = None) -> tuple[AV, ...]:
        """The abstract values of the parameters (a default is a constant: it holds no reference)."""
        exprs = [*e.args, *(k.value for k in e.keywords)]

        def one(s: Source) -> AV:
            if isinstance(s, int):
                return self.value(exprs[s])
            if s[0] == "star":  # a tuple: its value is the union of its items'
                return NO_VALUE.union(*(self.value(exprs[i]) for i in s[1]))
            if s[0] == "kwstar" and code is not None:  # the dict the call makes
                return kwargs_site(code)
            return NO_VALUE

        return tuple(one(s) for s in how)

    def method_args_values(self, e: ast.Call, method: str) -> tuple[AV, ...]:
        """The parameters' abstract values of a method call for the escape analysis, which matches them by
        position: with keywords, the method's classes may order them differently, so every parameter may
        receive any argument (a sound over-approximation)."""
        defs = [item for c in self.mc.class_nodes.values() for item in c.body
                if isinstance(item, ast.FunctionDef) and item.name == method]
        if not e.keywords and not any(d.args.vararg or d.args.kwarg for d in defs) and not any(
                isinstance(a, ast.Starred) for a in e.args):
            return tuple(self.value(a) for a in e.args)
        every = NO_VALUE.union(*(self.value(a) for a in e.args), *(self.value(k) if k.arg is None else
                                                                    self.value(k.value) for k in e.keywords))
        codes = [c for cls in self.mc.classes.values() for name, c in cls.methods.items() if name == method]
        self.kwargs_facts(codes, every)
        every = every | self.kw_sites(codes)
        width = max([len(item.args.args) + len(item.args.kwonlyargs) + len(item.args.posonlyargs)
                     + (1 if item.args.vararg else 0) + (1 if item.args.kwarg else 0) for item in defs] or [0])
        return (every,) * width

    def site(self, setup: Callable[[Ctx, int], None], e: ast.AST, temp: int | None = None) -> Fn:
        """Register a hoisted call; the returned closure reads (and clears) its result."""
        if self.site_stack is None:
            raise self.mc.error(e, "calls of model functions are not supported here; assign to a variable first")
        t = self.call_temp() if temp is None else temp
        self.site_stack[0].append(CallSite(t, setup))

        def read(ctx: Ctx) -> Any:
            loc = ctx.loc
            v = loc[t]
            loc[t] = None
            return unbox(v)

        return read

    def method_call_setup(self, recv: Fn, method: str, args: list[Fn], e: ast.AST) -> Callable[[Ctx, int], None]:
        keywords = tuple(k.arg or "" for k in e.keywords) if isinstance(e, ast.Call) else ()
        npos = len(args) - len(keywords)
        spread = self.spreading(e, args) if isinstance(e, ast.Call) else None

        def setup(ctx: Ctx, ret_pc: int) -> None:
            r = recv(ctx)
            if type(r) is not Ref:
                raise ModelError(f"method '{method}' called on {show(r)}", exc="AttributeError")
            cls = ctx.heap[r.i][0]
            code = cls.lookup(method)
            if code is None:
                raise ModelError(f"{cls.name} object has no method '{method}'", exc="AttributeError")
            if spread is not None:
                pos, names, kwvals = spread(ctx)
                ctx.push(code, bind(signature_of(code), [r], pos, names, kwvals, ctx=ctx), ret_pc)
                return
            vals = [a(ctx) for a in args]
            sig = signature_of(code)
            if keywords or sig.npos != len(args) + 1 or len(code.params) != sig.npos:
                # The receiver's class decides which parameters the keywords and defaults fill (CPython's
                # TypeError when they do not match).
                vals = bind(signature_of(code), [r], vals[:npos], keywords, vals[npos:], ctx=ctx)
                ctx.push(code, vals, ret_pc)
                return
            ctx.push(code, [r, *vals], ret_pc)

        return setup

    def super_call(self, e: ast.Call, f: ast.Attribute) -> Fn:
        if self.cls is None:
            raise self.mc.error(e, "super() outside a method")
        base = self.cls.base
        args = self.call_args(e, spread=base is not None and base.builtin != "exception" and base is not THREAD)
        self_slot = 0
        if base is not None and base.builtin == "exception" and f.attr == "__init__":
            # BaseException.__init__(self, *args) sets args.
            self.facts.fields_written.add("args")

            def init_args(ctx: Ctx) -> None:
                ctx.set_field(ctx.loc[self_slot], ARGS, tuple(a(ctx) for a in args))

            return init_args
        if base is None or base is THREAD:
            if f.attr == "__init__":
                if e.args or any(k.arg not in ("name", "daemon") for k in e.keywords):
                    raise self.mc.error(e, "Thread.__init__ takes only name= and daemon= in a subclass; define "
                                        "run() for the thread's work")
                return self.thread_init(e)
            raise self.mc.error(e, f"base class has no method '{f.attr}'")
        code = base.lookup(f.attr)
        if code is None:
            raise self.mc.error(e, f"base class '{base.name}' has no method '{f.attr}'")
        self.facts.callees.add("." + f.attr)
        spread = self.spreading(e, args)
        if spread is not None:  # super().__init__(*args, **kwargs)
            sig = signature_of(code)
            self.flow("call", code, self.spread_values(e, code, (frozenset({("local", self_slot)}),)))
            self.note(e, frozenset({("return", code)}))

            def spread_setup(ctx: Ctx, ret_pc: int) -> None:
                pos, names, kwvals = spread(ctx)
                ctx.push(code, bind(sig, [ctx.loc[self_slot]], pos, names, kwvals, ctx=ctx), ret_pc)

            return self.site(spread_setup, e)
        how = self.bound(e, code, 1)
        values = self.arranged(how, args)
        self.flow("call", code, (frozenset({("local", self_slot)}), *self.bound_values(e, how, code)))
        self.note(e, frozenset({("return", code)}))
        return self.site(lambda ctx, ret_pc: ctx.push(code, [ctx.loc[self_slot], *values(ctx)], ret_pc), e)

    def lock_locked(self, e: ast.Call, f: ast.Attribute) -> Fn:
        """``m.locked()``: a read of the lock's owner, recorded as ``m.owner`` is (``e_Attribute``)."""
        obj = self._expr(f.value)
        self.facts.fields_read.add("owner")
        self.facts.uses.append(self.value(f.value))
        self.note(e, frozenset({("field", self.value(f.value), "owner")}))
        return lambda ctx: threadinfo.lock_locked(ctx, obj(ctx))

    def thread_init(self, e: ast.Call) -> Fn:
        """``super().__init__(name=..., daemon=...)`` in a Thread subclass (lang/threadinfo.py)."""
        if not e.keywords:
            return lambda ctx: None
        given = {k.arg: self._expr(k.value) for k in e.keywords}
        name, daemon = given.get("name"), given.get("daemon")
        self.facts.fields_written |= {f"${k}" for k in given}
        self.facts.uses.append(frozenset({("local", 0)}))

        def init(ctx: Ctx) -> None:
            threadinfo.thread_init(ctx, ctx.loc[0], name(ctx) if name else None, daemon(ctx) if daemon else None)

        return init

    def constructor(self, e: ast.Call, cls: ClassInfo) -> Fn:
        args = self.call_args(e, spread=cls.lookup("__init__") is not None and not is_exception_class(cls))
        init = cls.lookup("__init__")
        self.facts.allocates = True
        self.facts.callees.add(cls.name + ".__init__")
        self.note(e, self.new_site(e, cls.name))
        exc = is_exception_class(cls)
        if exc and e.keywords:
            raise self.mc.error(e, f"{cls.name}(): keyword arguments to an exception class are not supported; "
                                "pass its arguments by position")
        if init is None:
            if exc:
                # BaseException.__init__: the arguments are the exception's args.
                return lambda ctx: ctx.alloc(new_exception(cls, tuple(a(ctx) for a in args)))
            if args:
                raise self.mc.error(e, f"{cls.name}() takes no arguments (it has no __init__)")
            return lambda ctx: ctx.alloc(new_object(cls))
        spread = self.spreading(e, args)
        if spread is not None:
            sig = signature_of(init)
            self.flow("call", init, self.spread_values(e, init, (self.value(e),)))
            site_temp = self.call_temp()

            def spread_setup(ctx: Ctx, ret_pc: int) -> None:
                pos, names, kwvals = spread(ctx)
                r = ctx.alloc(new_object(cls))
                ctx.loc[site_temp] = r
                ctx.push(init, bind(sig, [r], pos, names, kwvals, ctx=ctx), ret_pc)

            read = self.site(spread_setup, e, temp=site_temp)
            self.site_stack[0][-1].temp = -1  # type: ignore[index]
            return read
        how = self.bound(e, init, 1)
        values = self.arranged(how, args)
        self.flow("call", init, (self.value(e), *self.bound_values(e, how, init)))
        temp = self.call_temp()
        npos = len(e.args)

        def setup(ctx: Ctx, ret_pc: int) -> None:
            vals = values(ctx)
            # BaseException.__new__ sets args from the constructor's arguments (by position: no keywords, above),
            # whatever __init__ does.
            r = ctx.alloc(new_exception(cls, tuple(vals[:npos])) if exc else new_object(cls))
            ctx.loc[temp] = r
            ctx.push(init, [r, *vals], ret_pc)

        # The constructor's value is the new object, stored before the call; the continuation ignores retval.
        read = self.site(setup, e, temp=temp)
        self.site_stack[0][-1].temp = -1  # type: ignore[index]
        return read

    # -- assignment targets -----------------------------------------------------------------------------------

    def store(self, t: ast.expr, value: AV = NO_VALUE) -> Callable[[Ctx, Any], None]:
        """The store into target ``t``; ``value`` is the abstract value stored (for the facts' flows)."""
        if isinstance(t, ast.Name):
            return self.store_name(t, value)
        if isinstance(t, ast.Attribute):
            obj = self._expr(t.value)
            name = t.attr
            self.facts.fields_written.add(name)
            threadinfo.store_facts(self.facts, self.mc.has_local)
            self.facts.uses.append(self.value(t.value))
            self.flow("store", ("field", self.value(t.value), name), value)

            def store_field(ctx: Ctx, v: Any) -> None:
                threadinfo.store_attribute(ctx, check_ref(obj(ctx), f"attribute '{name}'"), name, v)

            if any(spec.frozen for spec in self.mc.dataclasses.values()):
                def store_frozen(ctx: Ctx, v: Any) -> None:
                    r = check_ref(obj(ctx), f"attribute '{name}'")
                    init = getattr(ctx.heap[r.i][0], "frozen_init", None)
                    if init is not None and ctx.code is not init:
                        raise ModelError(f"cannot assign to field '{name}'", exc="FrozenInstanceError")
                    ctx.set_field(r, writable_field(ctx.heap[r.i], name), v)

                return store_frozen
            return store_field
        if isinstance(t, ast.Subscript):
            if isinstance(t.slice, ast.Slice):
                raise self.mc.error(t, "unsupported construct: slices")
            seq, index = self._expr(t.value), self._expr(t.slice)
            self.facts.elements_written = True
            self.facts.uses.append(self.value(t.value))
            self.flow("store", ("element", self.value(t.value)), value)
            if self.mc.has_deques:  # `d[i] = v` on a deque checks i against its length
                self.facts.elements_read = True
            if self.mc.has_dicts:  # `d[k] = v` looks k up (reads the dict) and may store k
                self.facts.elements_read = True
                self.flow("store", ("element", self.value(t.value)), self.value(t.slice))

            def store_item(ctx: Ctx, v: Any) -> None:
                r = seq(ctx)
                if type(r) is not Ref:
                    raise ModelError(f"item assignment on {show(r)}", exc="TypeError")
                o = ctx.heap[r.i]
                if not o[0].is_list:
                    if is_dict(o):
                        dict_set(ctx, r, index(ctx), v)
                        return
                    if deques.is_deque(o):
                        deques.set_item(ctx, r, index(ctx), v)
                        return
                    raise ModelError(f"item assignment on a {o[0].name} object", exc="TypeError")
                ctx.set_field(r, element_index(ctx, r, o, index(ctx)), v)

            return store_item
        if isinstance(t, (ast.Tuple, ast.List)) and any(isinstance(x, ast.Starred) for x in t.elts):
            return self.store_starred(t, value)
        if isinstance(t, (ast.Tuple, ast.List)):
            # Unpacking a tuple gives its items, a list its elements (and reads them all).
            self.facts.uses.append(value)
            parts = [self.store(x, value | frozenset({("element", value)})) for x in t.elts]
            n = len(parts)
            self.facts.elements_read = True  # unpacking a list reads every element

            def store_tuple(ctx: Ctx, v: Any) -> None:
                if type(v) is Ref and ctx.heap[v.i][0].is_list:
                    v = list_items(ctx, v)
                elif type(v) is Ref and deques.is_deque(ctx.heap[v.i]):
                    v = deques.items(ctx, v)
                if type(v) is not tuple or len(v) != n:
                    raise ModelError(f"cannot unpack {show(v)} into {n} values", exc="ValueError")
                for p, x in zip(parts, v, strict=True):
                    p(ctx, x)

            return store_tuple
        raise self.mc.error(t, "unsupported assignment target")

    def store_name(self, t: ast.Name, value: AV) -> Callable[[Ctx, Any], None]:
        name = t.id
        if name in self.cells and name in self.slot and name not in self.global_names:
            i = self.slot[name]
            cell = frozenset({("local", i)})
            self.facts.fields_written.add("$cell")
            self.facts.uses.append(cell)
            self.flow("store", ("field", cell, "$cell"), value)
            return lambda ctx, v: ctx.set_field(ctx.loc[i], FIELDS, v)
        # The module's own names are globals; its hidden temporaries (``$v1``, lang/granularity.py) are locals.
        if name in self.slot and name not in self.global_names and (not self.is_module or name.startswith("$")):
            i = self.slot[name]
            self.flow("store", ("local", self.var(name)), value)

            def store_local(ctx: Ctx, v: Any) -> None:
                loc = ctx.loc
                tv = type(v)
                if tv is Ref or tv is tuple or type(loc[i]) is Ref or type(loc[i]) is tuple:
                    ctx.dirty = True
                    v = box(v)
                elif tv is bool:
                    v = box(v)
                loc[i] = v

            return store_local
        if name in self.mc.global_slot:
            s = self.mc.global_slot[name]
            self.facts.writes.add(name)
            self.flow("store", ("global", name), value)
            return lambda ctx, v: ctx.set_global(s, v)
        raise self.mc.error(t, f"cannot assign to '{name}'")

    def store_starred(self, t: ast.Tuple | ast.List, value: AV) -> Callable[[Ctx, Any], None]:
        """``a, *rest, z = v``: as CPython, ``rest`` is a new list of the items between (an allocation)."""
        stars = [k for k, x in enumerate(t.elts) if isinstance(x, ast.Starred)]
        if len(stars) > 1:
            raise self.mc.error(t, "multiple starred expressions in assignment")
        k = stars[0]
        item = value | frozenset({("element", value)})
        self.facts.uses.append(value)
        self.facts.elements_read = True
        before = [self.store(x, item) for x in t.elts[:k]]
        star = t.elts[k]
        assert isinstance(star, ast.Starred)
        site = self.new_site(star, "list")
        self.facts.allocates = True
        self.flow("store", ("element", site), item)
        rest = self.store(star.value, site)
        after = [self.store(x, item) for x in t.elts[k + 1:]]
        cls = self.list_class(star)
        least = len(before) + len(after)

        def store_unpacked(ctx: Ctx, v: Any) -> None:
            if type(v) is Ref and ctx.heap[v.i][0].is_list:
                v = list_items(ctx, v)
            elif type(v) is Ref and deques.is_deque(ctx.heap[v.i]):
                v = deques.items(ctx, v)
            if type(v) is not tuple:
                raise ModelError(f"cannot unpack non-iterable {show(v)}", exc="TypeError")
            if len(v) < least:
                raise ModelError(f"not enough values to unpack (expected at least {least}, got {len(v)})",
                                 exc="ValueError")
            for p, x in zip(before, v, strict=False):
                p(ctx, x)
            middle = v[len(before):len(v) - len(after)]
            rest(ctx, ctx.alloc((cls, None, *middle)))
            for p, x in zip(after, v[len(v) - len(after):], strict=True):
                p(ctx, x)

        return store_unpacked


_INT_COMPARISONS: dict[type, Callable[[int, int], bool]] = {
    ast.NotEq: operator.ne, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
}

# Methods of Python's threading objects and lists that movers does not have, with what to write instead.
UNKNOWN_METHODS = {
    "is_alive": "t.is_alive() must be used as a value (alive = t.is_alive())",
}


# What a call with ``*xs`` or ``**d`` passes: its positional values, its keywords' names and their values.
Spread = Callable[[Ctx], tuple[list[Any], tuple[str, ...], list[Any]]]


def _spread_call(code: Code, spread: Spread) -> Callable[[Ctx, int], None]:
    """The call of a module function with ``*xs`` or ``**d`` among its arguments, matched once the items are
    known."""
    sig = signature_of(code)

    def setup(ctx: Ctx, ret_pc: int) -> None:
        pos, names, kwvals = spread(ctx)
        ctx.push(code, bind(sig, [], pos, names, kwvals, ctx=ctx), ret_pc)

    return setup


def _constant(v: Any) -> Fn:
    return lambda ctx: v


def _local_reader(i: int) -> Fn:
    return lambda ctx: ctx.loc[i]


def _model_fields(classes: dict[str, ClassInfo]) -> set[str]:
    """The names of the fields the model's classes have."""
    return {f for c in classes.values() for f in c.fields}


def _or_str_method(op: Callable[[Ctx, Any, list[Any]], Any], method: str) -> Callable[[Ctx, Any, list[Any]], Any]:
    """``op`` for a method that strings have too (``count``, ``index``): a string receiver takes ``str``'s."""
    def run(ctx: Ctx, r: Any, vals: list[Any]) -> Any:
        if type(r) is str:
            return strings.call_method(ctx, r, method, vals, {})
        return op(ctx, r, vals)

    return run


def _no_method(ctx: Ctx, v: Any, method: str) -> ModelError:
    """The AttributeError of calling a string's method on another value."""
    return ModelError(f"'{strings.type_name(v, ctx)}' object has no attribute '{method}'", exc="AttributeError")
# The methods of Event and lists; the others of BUILTIN_METHODS are only dicts', compiled as such only in a
# model that makes dicts (else no object could have them: a compile error, as for any unknown method).
_NON_DICT_METHODS = frozenset({"set", "clear", "is_set", "append", "pop"})


def too_big_list() -> Any:
    raise too_big("list too long")


def _no_op(method: str) -> Callable[[Ctx, Any, list[Any]], Any]:
    """A method only dicts have, called on something else."""
    def op(ctx: Ctx, r: Any, vals: list[Any]) -> Any:
        if type(r) is Ref:
            raise ModelError(f"{ctx.heap[r.i][0].name} object has no method '{method}'", exc="AttributeError")
        raise ModelError(f"method '{method}' called on {show(r)}", exc="AttributeError")

    return op


def _model_methods(class_nodes: dict[str, ast.ClassDef]) -> set[str]:
    """The names of the methods the model's classes define."""
    return {item.name for c in class_nodes.values() for item in c.body if isinstance(item, ast.FunctionDef)}

