"""Python's parameter lists and function values: keyword arguments, defaults, lambdas and closures.

``Signature`` is what a ``def`` (or ``lambda``) says about its parameters: their names in order, which may be
given by position and which by keyword only, and the default values, evaluated once when the definition runs,
as CPython does (``def f(a, b=1, *, c=2)``). ``bind_static`` matches a call whose callee is known at compile
time (a function, a constructor) and ``bind`` matches one whose callee is known only at run time (a method, a
function value, or any call with ``*xs`` or ``**d``, whose arguments are known only then), with CPython's
``TypeError`` messages. ``*args`` is the function's parameter after the named ones and receives the tuple of
the extra positional arguments; ``**kwargs`` is the last and receives a new dict (on the heap, an object like
any other: ``Signature.kwmake``, allocation site ``kwargs_site``) of the keyword arguments no parameter takes.

A top-level default must be a constant (an int, a bool, None, a string, a tuple of those): CPython evaluates
it once at the ``def``, and a constant is the same value then as at any call. A mutable default (``x=[]``,
shared across calls in CPython) and one computed from the model's state are refused with a message. A
nested function's or lambda's defaults are evaluated when its definition runs, like its captured variables
(``lambda i=i: work(i)``): both are values stored in the function value (``closure_class``).

Function values. A top-level function used as a value is its interned ``Func``. A lambda or a nested
``def`` becomes a function of its own (``lift``), named as CPython's ``__qualname__`` (``make.<locals>.worker``,
``main.<locals>.<lambda>``), whose first parameters receive the enclosing variables it reads (its *free
variables*) and then the evaluated defaults. Its value is a heap object of a class of its own (one per
definition) whose fields hold those values: an object like any other, so that the canonical heap, the
symmetry reduction and every escape analysis walk the references a closure holds. CPython's closures share
the enclosing variable (a cell), not its value: the two agree only when the variable does not change after
the closure is made, so a closure over a variable assigned more than once (a loop variable, a counter) is
refused with a message saying to bind it as a default (``lambda i=i: …``) or pass it as an argument.

``nonlocal x``: then ``x`` lives in a *cell*, as in CPython: a heap object (class ``CELL``) made when the
function that binds ``x`` is entered, whose one field is the variable's value. That function and every
closure that reads or rebinds ``x`` hold the cell (a closure captures the cell, not the value), and every
read and write of ``x`` is an access to the cell's field, shared memory for the granularity and for every
reduction (``own_cells``, ``needs``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from movers.ir.machine import Ctx, ModelError, show
from movers.ir.program import ClassInfo, Code, Func, Ref, box
from movers.lang.syntax import children

# A parameter's value in a call matched at compile time: the index of the call's argument (positional ones
# first, then keywords, in the source's order), a default: ("default", value), or the tuple of the extra
# positional arguments that ``*args`` receives: ("star", (index, ...)), or the dict ``**kwargs`` receives:
# ("kwstar", ((name, index), ...), its class).
Source = int | tuple[Any, ...]


class FieldDefault:
    """A nested function's default, evaluated when its ``def`` ran: field ``k`` of its function value."""

    __slots__ = ("k",)

    def __init__(self, k: int) -> None:
        self.k = k


@dataclass(eq=False)
class Signature:
    """The parameters of a function as a caller sees them. ``names``: every parameter a call may fill, in
    order (``self`` of a method included); the first ``npos`` may be given by position, those from ``nkw``
    on by keyword (``npos``..: keyword-only; ..``nkw``: positional-only, before a ``/``). ``defaults``: a
    parameter's default, boxed, or a ``FieldDefault`` for a nested function's default evaluated at its ``def``
    (field ``k`` of its function value)."""

    name: str
    names: tuple[str, ...]
    npos: int
    nkw: int = 0
    defaults: dict[str, Any] = field(default_factory=dict)
    # Leading parameters a message does not count: a closure's captured variables (a method's self counts).
    hidden: int = 0
    # ``*args``: its name; the function's last parameter, not in ``names`` (no keyword fills it), which
    # receives the tuple of the positional arguments past the ``npos`` first, as in CPython.
    star: str | None = None
    # ``**kwargs``: its name (the parameter after ``*args``'s, if any), which receives a new dict of the keyword
    # arguments no other parameter takes, in the call's order; ``kwmake(ctx, pairs)`` makes that dict (one class
    # per definition: lang/containers.py, which the compiler gives here).
    kwstar: str | None = None
    kwmake: Callable[[Ctx, list[tuple[str, Any]]], Ref] | None = None


def constant_value(e: ast.expr) -> tuple[bool, Any]:
    """The value of a constant default (ints, bools, None, strings, tuples of them), or (False, None)."""
    if isinstance(e, ast.Constant) and (e.value is None or type(e.value) in (int, bool, str)):
        return True, e.value
    if (isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)) and isinstance(e.operand, ast.Constant)
            and type(e.operand.value) is int):
        return True, -e.operand.value if isinstance(e.op, ast.USub) else e.operand.value
    if isinstance(e, ast.Tuple):
        items = [constant_value(x) for x in e.elts]
        if all(ok for ok, _ in items):
            return True, tuple(v for _, v in items)
    return False, None


def _is_mutable_display(e: ast.expr) -> bool:
    return isinstance(e, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)) or (
        isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("list", "dict", "set", "deque"))


def refuse_star(a: ast.arguments) -> str:
    """Why a parameter list is refused, or '' (every parameter list is supported)."""
    return ""


def default_message(name: str, d: ast.expr) -> str:
    if _is_mutable_display(d):
        return (f"a mutable default value for '{name}' is not supported (Python shares one object across every "
                f"call); use {name}=None and create it in the body")
    return (f"the default value of '{name}' must be a constant (an int, a bool, None, a string or a tuple of "
            "those); compute it in the body")


def parameters(a: ast.arguments) -> tuple[list[ast.arg], list[ast.arg], list[ast.expr | None]]:
    """(positional parameters, keyword-only ones, their defaults aligned with both, None where none)."""
    pos = [*a.posonlyargs, *a.args]
    defaults: list[ast.expr | None] = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    return pos, list(a.kwonlyargs), [*defaults, *a.kw_defaults]


def bind_static(sig: Signature, nargs: int, keywords: Sequence[str | None], first: int = 0) -> list[Source] | str:
    """Match a call's arguments to ``sig``'s parameters from the ``first`` on (1 for a method: its receiver is
    ``self``): ``nargs`` positional arguments, then ``keywords`` by name. Returns, per parameter, where its
    value comes from, or CPython's message for a call that does not match."""
    names = sig.names[first:]
    npos = sig.npos - first
    nkw = max(sig.nkw - first, 0)
    fname = sig.name
    if nargs > npos and sig.star is None:
        given, takes = nargs + first - sig.hidden, sig.npos - sig.hidden  # CPython counts a method's self
        return f"{fname}() takes {takes} positional argument{'s' if takes != 1 else ''} but {given} were given"
    out: list[Source | None] = [None] * len(names)
    for k in range(min(nargs, npos)):
        out[k] = k
    extra: list[tuple[str, int]] = []
    for j, kw in enumerate(keywords):
        if kw is None:
            return "unsupported construct: **mapping in a call; give the keyword arguments by name"
        if kw not in names or names.index(kw) < nkw:
            if sig.kwstar is not None:  # CPython: a positional-only parameter's name may be a key of **kwargs
                if any(k == kw for k, _ in extra):
                    return f"{fname}() got multiple values for keyword argument '{kw}'"
                extra.append((kw, nargs + j))
                continue
            return f"{fname}() got an unexpected keyword argument '{kw}'"
        i = names.index(kw)
        if out[i] is not None:
            return f"{fname}() got multiple values for argument '{kw}'"
        out[i] = nargs + j
    missing = []
    for i, n in enumerate(names):
        if out[i] is None:
            if n in sig.defaults:
                out[i] = ("default", sig.defaults[n])
            else:
                missing.append(n)
    if missing:
        kind = "keyword-only" if all(names.index(m) >= npos for m in missing) else "positional"
        listed = " and ".join(f"'{m}'" for m in missing) if len(missing) <= 2 else (
            ", ".join(f"'{m}'" for m in missing[:-1]) + f", and '{missing[-1]}'")
        return (f"{fname}() missing {len(missing)} required {kind} argument{'s' if len(missing) > 1 else ''}: "
                f"{listed}")
    if sig.star is not None:
        out.append(("star", tuple(range(npos, nargs))))
    if sig.kwstar is not None:
        out.append(("kwstar", tuple(extra), sig.kwmake))
    return out  # type: ignore[return-value]


def bind(sig: Signature, first: list[Any], args: list[Any], keywords: Sequence[str], kwvals: list[Any],
         fields: tuple[Any, ...] = (), ctx: Ctx | None = None) -> list[Any]:
    """The arguments of a call matched at run time: ``first`` (a method's receiver) then ``args`` and the
    keyword arguments; a default ("field", k) is read from ``fields`` (the function value's); ``**kwargs``'s
    dict is made on ``ctx``'s heap. Raises CPython's ``TypeError`` for a call that does not match."""
    how = bind_static(sig, len(args), keywords, len(first))
    if isinstance(how, str):
        raise ModelError(how, exc="TypeError")
    given = [*args, *kwvals]
    out = list(first)
    for src in how:
        if isinstance(src, int):
            out.append(given[src])
        elif src[0] == "star":
            out.append(tuple(given[i] for i in src[1]))
        elif src[0] == "kwstar":
            assert ctx is not None
            out.append(src[2](ctx, [(k, given[i]) for k, i in src[1]]))
        else:
            d = src[1]
            out.append(fields[d.k] if type(d) is FieldDefault else d)
    return out


def kwargs_site(code: Code) -> frozenset[Any]:
    """The allocation site of the dicts ``code``'s ``**kwargs`` receives (static escape analysis)."""
    return frozenset({("new", (code.name, code.line, 0, "dict"))})


def star_name(a: ast.arguments) -> list[str]:
    """``[args]`` for a definition with ``*args``, else ``[]``."""
    return [a.vararg.arg] if a.vararg is not None else []


def kwstar_name(a: ast.arguments) -> list[str]:
    """``[kwargs]`` for a definition with ``**kwargs``, else ``[]``: the name of its last parameter, if any."""
    return [a.kwarg.arg] if a.kwarg is not None else []


def boxed_defaults(names: list[str], values: list[Any]) -> dict[str, Any]:
    return {n: box(v) for n, v in zip(names, values, strict=True)}


# -- lifting lambdas and nested functions -----------------------------------------------------------------------


@dataclass(eq=False)
class Lifted:
    """A lambda or nested ``def`` compiled as a function of its own (``node``: the ``def`` made of it, whose
    first parameters are ``captured``, the enclosing variables it reads). Its values hold the captured values
    and then the defaults its definition evaluates (``ExpressionCompiler.function_value``), as fields."""

    node: ast.FunctionDef | ast.Lambda
    qualname: str
    code: Code
    captured: list[str]
    cls: ClassInfo | None = None  # the class of its values (None: no captured variable and no default)
    func: Func | None = None  # its value when it has no class: one interned Func
    key: str = ""  # its name among the module's functions (``Program.functions``, callee names)


def free_variables(fn: ast.FunctionDef | ast.Lambda) -> list[str]:
    """The names ``fn`` reads and does not bind itself (parameters, assignments, nested definitions), in the
    order of first use; globals and builtins among them are sorted out by the caller."""
    a = fn.args
    bound = {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]} | set(star_name(a)) | set(kwstar_name(a))
    body: list[ast.AST] = [fn.body] if isinstance(fn, ast.Lambda) else list(fn.body)
    declared_global: set[str] = set()
    for b in body:
        for n in ast.walk(b):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                bound.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
                bound.add(n.name)
            elif isinstance(n, ast.Global):
                declared_global.update(n.names)
    bound -= nonlocals(fn)
    out: list[str] = []
    for b in body:
        for n in ast.walk(b):
            if (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound
                    and n.id not in declared_global and n.id not in out):
                out.append(n.id)
    return out


def assignments(fn: ast.FunctionDef | ast.Lambda, name: str) -> list[ast.AST]:
    """Where ``fn``'s own body (nested definitions apart) binds ``name``."""
    return [n for n in own_nodes(fn)
            if (isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and n.id == name)
            or (isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name)]


def closure_class(qualname: str, captured: list[str], defaults: list[str], line: int) -> ClassInfo:
    """The class of a lambda's or nested function's values: its captured variables and evaluated defaults
    as fields (named with '$', which no model field can be, so that no reduction takes them for one)."""
    info = ClassInfo(f"function {qualname}", [f"$cap:{n}" for n in captured] + [f"$def:{n}" for n in defaults],
                     builtin="function", line=line)
    info.finish()
    return info


def bound_method_class(cls: ClassInfo, method: str, code: Code) -> ClassInfo:
    """The class of the values of ``obj.method`` (``obj`` of class ``cls``) used as a value, not called: a
    bound method, one field ``$self`` holding the receiver (walked like a closure's captured values)."""
    info = ClassInfo(f"method {cls.name}.{method}", ["$self"], builtin="method", line=cls.line)
    info.finish()
    info.closure = code  # type: ignore[attr-defined]
    return info


def call_value_error(v: Any) -> ModelError:
    return ModelError(f"'{type_name(v)}' object is not callable", exc="TypeError")


def type_name(v: Any) -> str:
    if v is None:
        return "NoneType"
    if type(v) is tuple:
        return "tuple"
    return type(v).__name__ if type(v) in (int, bool, str) else show(v)


def own_nodes(fn: ast.AST) -> list[ast.AST]:
    """The nodes of ``fn``'s body that run in its own scope: nested definitions and lambdas are listed, and so
    are their defaults (evaluated where they are defined), but not their bodies."""
    out: list[ast.AST] = []
    body: list[ast.AST] = ([fn.body] if isinstance(fn, ast.Lambda) else list(getattr(fn, "body", [])))
    # Depth first, each node before its children (a stack of what is left, the next on top).
    todo = body[::-1]
    while todo:
        n = todo.pop()
        out.append(n)
        if isinstance(n, (ast.FunctionDef, ast.Lambda, ast.AsyncFunctionDef, ast.ClassDef)):
            args = getattr(n, "args", None)
            if args is not None:
                todo.extend([d for d in [*args.defaults, *args.kw_defaults] if d is not None][::-1])
            continue
        todo.extend(children(n)[::-1])
    return out


def in_loop(fn: ast.AST, target: ast.AST) -> bool:
    """Whether ``target`` (a node of ``fn``'s own scope) is inside a loop of ``fn``, so runs more than once."""
    for n in own_nodes(fn):
        if isinstance(n, (ast.For, ast.While)):
            inner = [*n.body, *n.orelse] + ([n.target] if isinstance(n, ast.For) else [])
            if any(target is m for b in inner for m in ast.walk(b)):
                return True
    return False


def changing_capture(enclosing: ast.AST, params: set[str], name: str, made_at: ast.AST) -> str:
    """Why capturing ``name`` of ``enclosing`` by its value at ``made_at`` (where the closure is made) would
    not mean what CPython's closure over the variable means, or ''."""
    stores = assignments(enclosing, name)  # type: ignore[arg-type]
    fix = (f"bind it as a default (lambda {name}={name}: …, def f({name}={name}): …) or pass it as an argument")
    if name in params and not stores:
        return ""
    if stores and stores[0] is made_at:
        return (f"the nested function '{name}' calls itself: recursion through a closure is not supported; define "
                "it at the top level of the module")
    if name in params or len(stores) > 1 or any(in_loop(enclosing, s) for s in stores):
        return (f"the closure reads '{name}', which changes after the closure is made (a Python closure sees "
                f"the variable's later values, not the value it had): {fix}")
    if not stores or (getattr(stores[0], "lineno", 0), getattr(stores[0], "col_offset", 0)) >= (
            getattr(made_at, "lineno", 0), getattr(made_at, "col_offset", 0)):
        return (f"the closure reads '{name}', which is assigned only after the closure is made: assign it "
                f"before, or {fix}")
    return ""


def function_of(ctx: Ctx, v: Any) -> tuple[Code, list[Any], tuple[Any, ...]]:
    """What calling the value ``v`` runs: its code, the values of its captured variables (its first
    parameters) and its fields (where its defaults are). A closure's fields never change after it is made
    (like a tuple's items), so reading them is not an access."""
    if type(v) is Func and v.code is not None:
        return v.code, [], ()
    if type(v) is Ref:
        o = ctx.heap[v.i]
        code = getattr(o[0], "closure", None)
        if code is not None:
            fields = o[2:]
            if o[0].builtin == "method":  # a bound method: its receiver is the method's self
                return code, [fields[0]], ()
            return code, list(fields[: signature_of(code).hidden]), fields
    raise call_value_error(v)


# -- @dataclass ---------------------------------------------------------------------------------------------------


@dataclass(eq=False)
class DataclassSpec:
    """What ``@dataclass(…)`` says of a class: its fields in order (base classes' first), whether ``==``
    compares them (``eq``, CPython's default) and whether assigning one after ``__init__`` raises
    (``frozen``)."""

    fields: list[str]
    eq: bool = True
    frozen: bool = False
    # The fields ``==`` compares: all but those declared ``field(compare=False)``.
    compared: list[str] | None = None

    def __post_init__(self) -> None:
        if self.compared is None:
            self.compared = list(self.fields)


# The default of a ``field(default_factory=f)`` parameter of a dataclass's ``__init__``: a string no model
# writes, which tells ``__init__`` to call the factory (CPython's ``_HAS_DEFAULT_FACTORY`` sentinel).
FACTORY_SENTINEL = "\x00movers:default_factory"
# A ``field(default_factory=f)``: the value each __init__ creates, as an expression.
_FACTORIES = {"list": lambda at: ast.List(elts=[], ctx=ast.Load()),
              "dict": lambda at: ast.Dict(keys=[], values=[]),
              "set": lambda at: ast.Call(func=ast.Name(id="set", ctx=ast.Load()), args=[], keywords=[]),
              "deque": lambda at: ast.Call(func=ast.Name(id="deque", ctx=ast.Load()), args=[], keywords=[])}


def dataclass_options(d: ast.expr) -> dict[str, bool] | str | None:
    """The options of a ``@dataclass`` or ``@dataclass(…)`` decorator (None: not that decorator; a string:
    why it is refused)."""
    if isinstance(d, ast.Name) and d.id == "dataclass":
        return {}
    if isinstance(d, ast.Attribute) and d.attr == "dataclass":
        return {}
    if isinstance(d, ast.Call) and dataclass_options(d.func) == {}:
        out: dict[str, bool] = {}
        for k in d.keywords:
            if k.arg not in ("eq", "frozen", "repr", "init", "order", "unsafe_hash") or not (
                    isinstance(k.value, ast.Constant) and type(k.value.value) is bool):
                return f"@dataclass({k.arg}=…) is not supported: eq, frozen and repr with True or False are"
            if k.arg in ("order", "unsafe_hash", "init") and k.value.value != (k.arg == "init"):
                return f"@dataclass({k.arg}={k.value.value}) is not supported: write the methods you need"
            out[k.arg] = k.value.value
        if d.args:
            return "@dataclass takes keyword options only"
        return out
    return None


def dataclass_init(c: ast.ClassDef, base_fields: list[tuple[str, ast.expr | None, str]],
                   options: dict[str, bool]) -> tuple[DataclassSpec, list[tuple[str, ast.expr | None, str]]] | tuple[
                       ast.AST, str]:
    """Rewrite the body of the ``@dataclass`` class ``c``: its annotated class-level fields become an
    ``__init__`` taking them in order (after the base dataclass's fields), as CPython generates it. Returns
    its spec and its fields (name, default, kind: "value", "default" or "factory"), or (node, why refused).
    A ``field(default_factory=…)`` field is a parameter whose default is ``FACTORY_SENTINEL``: ``__init__`` calls
    the factory when the argument is not given, as CPython's does."""
    fields = list(base_fields)
    body: list[ast.stmt] = []
    uncompared: set[str] = set(getattr(c, "movers_uncompared", ()))
    for item in c.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            name, value = item.target.id, item.value
            kind, default = ("value", None) if value is None else ("default", value)
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "field":
                if value.args:
                    return value, "field() takes keyword arguments only"
                kind, default = "value", None
                for k in value.keywords:
                    if k.arg == "default":
                        kind, default = "default", k.value
                    elif k.arg == "default_factory":
                        f = k.value
                        if isinstance(f, ast.Name) and f.id in _FACTORIES:
                            kind, default = "factory", _FACTORIES[f.id](f)
                        elif isinstance(f, ast.Name):
                            # threading.Lock, a class of the model, a function: called with no arguments (the
                            # call is compiled, and refused there, as if written in __init__)
                            kind, default = "factory", ast.copy_location(ast.Call(func=f, args=[], keywords=[]), f)
                        elif isinstance(f, ast.Lambda) and not f.args.args:
                            kind, default = "factory", f.body
                        else:
                            return f, ("default_factory must be a class or function taking no arguments (list, "
                                       "threading.Lock, a class of the model) or a lambda without parameters")
                    elif k.arg == "repr" and isinstance(k.value, ast.Constant) and type(k.value.value) is bool:
                        pass  # movers shows no dataclass repr
                    elif k.arg == "compare" and isinstance(k.value, ast.Constant) and type(k.value.value) is bool:
                        (uncompared.discard if k.value.value else uncompared.add)(name)
                    elif k.arg in ("repr", "compare", "hash", "init", "kw_only", "metadata"):
                        return k, f"field({k.arg}=…) is not supported"
                    else:
                        return k, f"field() got an unexpected keyword argument '{k.arg}'"
            fields = [f for f in fields if f[0] != name] + [(name, default, kind)]
            if not (isinstance(value, ast.Call) and any(k.arg == "compare" for k in value.keywords)):
                uncompared.discard(name)  # redeclared: compared again unless it says otherwise
        else:
            body.append(item)
    seen_default = False
    for name, _, kind in fields:
        if kind != "value":
            seen_default = True
        elif seen_default:
            return c, f"non-default argument '{name}' follows default argument"
    if options.get("init", True) and not any(isinstance(i, ast.FunctionDef) and i.name == "__init__" for i in body):
        sets: list[ast.stmt] = []
        for name, default, kind in fields:
            def assign(value: ast.expr, name: str = name) -> ast.stmt:
                return ast.Assign(targets=[ast.Attribute(value=ast.Name(id="self", ctx=ast.Load()), attr=name,
                                                         ctx=ast.Store())], value=value)

            arg = ast.Name(id=name, ctx=ast.Load())
            if kind == "factory":
                # CPython: the factory is called when the argument is not given (its default is a sentinel).
                missing = ast.Compare(left=ast.Name(id=name, ctx=ast.Load()), ops=[ast.Eq()],
                                      comparators=[ast.Constant(FACTORY_SENTINEL)])
                sets.append(ast.If(test=missing, body=[assign(default)], orelse=[assign(arg)]))  # type: ignore[arg-type]
            else:
                sets.append(assign(arg))
        defaults = [d if k == "default" else ast.Constant(FACTORY_SENTINEL) for _, d, k in fields if k != "value"]
        init = ast.FunctionDef(
            name="__init__",
            args=ast.arguments(posonlyargs=[], args=[ast.arg(arg="self")] + [ast.arg(arg=n) for n, _, _ in fields],
                               kwonlyargs=[], kw_defaults=[], defaults=defaults),  # type: ignore[arg-type]
            body=sets or [ast.Pass()], decorator_list=[], returns=None, type_comment=None)
        ast.copy_location(init, c)
        for n in ast.walk(init):
            if not hasattr(n, "lineno") or n is not init:
                ast.copy_location(n, c)
        ast.fix_missing_locations(init)
        body.insert(0, init)
    c.body = body or [ast.Pass()]
    spec = DataclassSpec([n for n, _, _ in fields], options.get("eq", True), options.get("frozen", False),
                         [n for n, _, _ in fields if n not in uncompared])
    return spec, fields


def signature_of(code: Code) -> Signature:
    """``code``'s signature; a code made without one (by other means than a ``def``) takes its parameters
    by position, all required."""
    sig = code.signature
    if sig is None:
        sig = code.signature = Signature(code.name, tuple(code.params), len(code.params))
    return sig  # type: ignore[no-any-return]


# -- nonlocal: cells -----------------------------------------------------------------------------------------------


def nonlocals(fn: ast.AST) -> set[str]:
    """The names ``fn`` declares ``nonlocal`` (in its own scope)."""
    return {x for n in own_nodes(fn) if isinstance(n, ast.Nonlocal) for x in n.names}


def bound_here(fn: ast.AST) -> set[str]:
    """The names ``fn``'s own scope binds (parameters, assignments, nested defs), ``nonlocal`` ones apart."""
    a = getattr(fn, "args", None)
    out = {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []),
                           *([a.kwarg] if a.kwarg else [])]} if a is not None else set()
    out |= {n.id for n in own_nodes(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    out |= {n.name for n in own_nodes(fn) if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n is not fn}
    return out - nonlocals(fn)


def needs(fn: ast.AST) -> set[str]:
    """The enclosing variables ``fn`` (a nested function) or the functions nested in it rebind with
    ``nonlocal``: the variables that must be cells in the function that binds them."""
    out = set(nonlocals(fn))
    mine = bound_here(fn)
    for child in own_nodes(fn):
        if isinstance(child, (ast.FunctionDef, ast.Lambda)) and child is not fn:
            out |= {n for n in needs(child) if n not in mine}
    return out


def own_cells(fn: ast.AST, nodes: list[ast.AST] | None = None) -> set[str]:
    """The variables of ``fn`` that a nested function rebinds with ``nonlocal``: each lives in a cell, a heap
    object the function and its closures share, as CPython's cells. ``nodes``: ``own_nodes(fn)``, if known."""
    nested = [child for child in (own_nodes(fn) if nodes is None else nodes)
              if isinstance(child, (ast.FunctionDef, ast.Lambda)) and child is not fn]
    if not nested:
        return set()  # most functions nest none: no need to list what they bind
    mine = bound_here(fn)
    return {n for child in nested for n in needs(child) if n in mine}


# The class of cells: one field, the variable's value (named with '$': no model field can be taken for it).
CELL = ClassInfo("cell", ["$cell"], builtin="cell")
CELL.finish()
