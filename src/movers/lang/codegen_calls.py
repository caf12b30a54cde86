"""Generated code for calls of model functions and methods, and for returns: the fast back end's frames.

``lang/codegen.py`` compiles the steps that dominate a search to Python source over one frame's locals (read
its module docstring). A call changes the frames, which its fragments cannot do themselves; so they say it,
and the driver (``semantics/system._run_fast``) does what ``Ctx.push`` and ``Ctx.ret`` do:

- a call's fragment (the node that evaluates the receiver and the arguments, ``ExpressionCompiler.e_Call``'s
  hoisted call site) ends with ``pc = (callee, arguments, return pc)``: the arguments as the frame stores
  them (booleans boxed), for a call that binds them by position only (the callee's signature checked as
  ``method_call_setup`` checks it; anything else, keywords and defaults included, is the closures'). The
  callee is known when the text is written for a function, and for a method that one Code serves for every
  class of the model that has it (the classes and their methods are declared before any body is compiled,
  and never change): the receiver's class is tested against those classes (any other has no such method,
  or is a builtin object: the closures'), like a compiler's inline cache with its classes known in advance.
  Where the classes' methods are several Codes, or the call leaves parameters to their defaults, the call
  branches on the receiver's class, one branch per Code with its arguments bound as ``_method`` binds them
  (``_dispatch``: ``q.put(v)`` of the queue library, whose Queue and SimpleQueue define ``put`` apart, with
  ``block=True, timeout=None`` as literals). Otherwise (more classes than a call tests, a default that is no
  literal) ``_method`` looks the method up by the receiver's class when the step runs;
- ``return e`` appends ``e``'s value to the frame's locals, then ``pc = -1`` (falling off the end returns
  None: nothing appended); the driver pops the frame and appends the value to the caller's locals, where
  the caller's continuation node takes it (the closures' ``Ctx.retval``, which is not part of a state
  either: the continuation runs in the same step);
- the continuation of ``if f(...):`` (any condition that is a call) jumps on the value's truth, for an int, a
  boolean or None; of ``return f(...)`` it returns the value in turn; of ``f(...)`` as a statement it drops
  the value; of ``x = f(...)`` stores it into ``x``: any
  value into a local (the driver takes every step that pushes or pops a frame as one that may move references
  in frames, as ``Ctx.push``, ``Ctx.ret`` and ``store_local`` would mark it), an int, a boolean or None
  elsewhere (``codegen._store``), else the step falls back.

A whole step (``codegen._step_body``) that ends in a call of a known callee pushes the frame in line
(``codegen._static_pushes``: the callee's blank locals are literals, the text being written once every
function is compiled, ``codegen.deferred``). A return into a caller goes on in the
caller's continuation, a whole step of its own (``codegen.return_source``, ``Code.fast_return``: the caller
is known only when the step runs). A call into a callee whose first node is local work, a callee looked up
when the step runs, or a continuation with no such step goes on in ``_resume``, the driver's loop from that
point, rather than giving up.

A ``return`` inside ``with`` blocks (a ``@synchronized`` method's) keeps its value in a hidden slot while the
blocks' exits run: that store and the final delivery are fragments too.
"""

from __future__ import annotations

import ast
from typing import Any

from movers.ir.program import FALSE, TRUE, box, unbox
from movers.lang import codegen
from movers.lang.codegen import CompiledFunction, Fallback, Fragment, FragmentMaker, Target
from movers.lang.functions_model import FieldDefault, bind_static, signature_of
from movers.semantics.system import drive_frames


def _method(cls: Any, name: str, args: list[Any]) -> tuple[Any, list[Any]]:
    """The code of method ``name`` of class ``cls`` for a call with positional arguments ``args`` (``self``
    first), and the frame's arguments: ``args`` where they fill the parameters in order
    (``method_call_setup``'s plain case), else with the defaults of the parameters they leave out, as
    ``functions_model.bind`` fills them (``q.put(v)``, ``q.get()`` of the queue library, whose ``block`` and
    ``timeout`` have defaults); a call that ``bind`` refuses, or that fills ``*args``, is the closures'."""
    n = len(args)
    known = _BOUND.get((id(cls), name, n))
    if known is None or known[0] is not cls:
        if len(_BOUND) >= 4096:
            _BOUND.clear()  # the classes of models checked long ago
        known = _BOUND[(id(cls), name, n)] = (cls, *_binding(cls, name, n))
    code, how = known[1], known[2]
    if how is None:
        return code, args
    out = [args[0]]
    for src in how:
        if type(src) is int:
            out.append(args[1 + src])
        elif src[0] == "default" and type(src[1]) is not FieldDefault:
            out.append(src[1])
        else:
            raise Fallback
    return code, out


# (id of the class, method, number of arguments) -> (the class, its code, how the arguments bind: None when
# in order): what ``_method`` works out once per call shape. The class is kept, so its id stays its own.
_BOUND: dict[tuple[int, str, int], tuple[Any, Any, Any]] = {}


def _binding(cls: Any, name: str, n: int) -> tuple[Any, Any]:
    """The method's code and ``bind_static``'s binding of ``n`` positional arguments (None: in order)."""
    code = cls.lookup(name)
    if code is None:
        raise Fallback
    sig = signature_of(code)
    if sig.npos == n and len(code.params) == n:
        return code, None
    how = bind_static(sig, n - 1, (), 1)
    if type(how) is str:
        raise Fallback  # CPython's TypeError: the closures report it
    return code, how


# A callee's locals after its parameters in a fresh frame (unbound variables, None temporaries), by the
# number of its locals when it was worked out.
_TAILS: dict[Any, tuple[int, tuple[Any, ...]]] = {}


def forget_memos() -> None:
    """Drop the call-shape memos, which keep classes and codes (and so their programs) alive: after a check."""
    _BOUND.clear()
    _TAILS.clear()


def _frame(k: Any, args: list[Any]) -> tuple[Any, ...]:
    """The callee's fresh frame, ``Ctx.push``'s: ``(k, k.entry, *Code.new_frame_locals(args))``. A call's
    fragment has checked the arity, and its arguments are values as stored (boxed already)."""
    n = len(k.locals)
    c = _TAILS.get(k)
    if c is None or c[0] != n:
        c = _TAILS[k] = (n, tuple(k.new_frame_locals(args)[len(args):]))
    return (k, k.entry, *args, *c[1])


def _locals(k: Any, args: list[Any]) -> list[Any]:
    """The callee's fresh locals as a list, ``_frame``'s without the code and the pc (no boxing, no padding:
    ``Code.new_frame_locals`` for arguments a call's fragment has checked and boxed)."""
    n = len(k.locals)
    c = _TAILS.get(k)
    if c is None or c[0] != n:
        c = _TAILS[k] = (n, tuple(k.new_frame_locals(args)[len(args):]))
    return [*args, *c[1]]


def _resume(g: tuple, heap: tuple, threads: tuple, t: int, frames: tuple, code: Any, loc: list[Any],
            pc: Any) -> tuple:
    """The rest of thread t's step after a whole step's fragment ended in a call (``pc`` the call's tuple)
    or in a return into a caller (``pc`` -1): ``semantics/system.drive_frames`` from that point, untracked,
    with ``frames`` the frames under ``code``'s, ``loc`` its locals. A whole step hands over here instead of
    giving up, so its fragment does not run twice (once here, once in the general driver). As ``_run_fast``,
    a step that pushed or popped a frame needs no canonical walk only where the globals reach every object
    (``_cover``); anything else raises, and the general driver takes the step from the start."""
    g, heap, frames, code, loc, pc, _ = drive_frames(g, heap, threads, t, frames, code, loc, pc)
    if not codegen._cover(g, heap):
        raise Fallback
    mine = (*frames, (code, pc, *loc)) if pc >= 0 else ()
    w = [*threads]
    w[t] = mine
    return (g, heap, tuple(w))


codegen.HELPERS.update({"_method": _method, "_box": box, "_unbox": unbox, "_frame": _frame, "_resume": _resume,
                        "_locals": _locals})

# The other names the generated text uses (tests/test_codegen.py checks it).
NAMES = frozenset({"_rv", "_b", "_k", "pop", "_cf", "_rf", "_ret", "fast_return"})


def _bind(fc: CompiledFunction, obj: Any) -> str:
    """An identifier bound to ``obj`` (a callee's Code) in the generated code's namespace: ``fast_names`` maps
    what the namespace binds to its identifier, so the object is a value there, never source text."""
    names: dict[Any, str] = fc.fast_names  # type: ignore[assignment]
    if obj not in names:
        names[obj] = f"_a{len(names)}"
    return names[obj]


def _argument(fc: CompiledFunction, a: ast.expr, src: codegen._Source) -> str | None:
    """The text of an argument as the callee's frame stores it (``Code.new_frame_locals`` boxes it)."""
    if isinstance(a, ast.Constant) and type(a.value) is not str:
        if a.value is True or a.value is False:
            return "TRUE" if a.value else "FALSE"
        return codegen._literal(a.value)
    if isinstance(a, (ast.Name, ast.Attribute, ast.Subscript)):
        return codegen._raw(fc, a, src)  # as stored: box(unbox(v)) is v
    v = codegen.value(fc, a, src)
    if v is None:
        return None
    x = src.temp()
    src.add(f"{x} = {v}")
    src.add(f"if type({x}) is bool: {x} = TRUE if {x} else FALSE")
    return x


# At most this many classes share the predicted method (each is one ``is`` in the call's test).
_PREDICTED = 4


def _predicted(fc: CompiledFunction, method: str, n: int) -> tuple[list[Any], Any] | None:
    """The classes of the model whose objects' method ``method`` is one and the same Code, and that Code, when
    no class has another and the call binds its ``n`` arguments (``self`` included) by position, in order
    (``method_call_setup``'s plain case): a receiver of one of those classes calls it, known when the text is
    written (the classes and their methods are declared before any body is compiled, and never change)."""
    found = []
    for cls in getattr(fc.mc, "classes", {}).values():
        code = cls.lookup(method)
        if code is not None:
            found.append((cls, code))
    if not found or len(found) > _PREDICTED or any(k is not found[0][1] for _, k in found):
        return None
    code = found[0][1]
    sig = signature_of(code)
    if sig.npos != n or len(code.params) != n:
        return None
    return [cls for cls, _ in found], code


def _dispatch(fc: CompiledFunction, method: str, every: list[str]) -> list[tuple[list[Any], Any, list[str]]] | None:
    """Where ``_predicted`` finds no one Code: per Code of method ``method`` among the model's classes (at most
    ``_PREDICTED`` classes), the classes that call it and the frame's arguments for positional arguments
    ``every`` (the receiver first), the parameters they leave out filled with their defaults as
    ``_method`` fills them (``q.put(v)`` of the queue library: ``block`` and ``timeout``). A class whose
    binding is not that plain (a default that is not None, a boolean or an int; ``*args``; a call CPython
    refuses) is left out: its receivers fall back, as any other class's."""
    by_code: dict[int, tuple[list[Any], Any, list[str]]] = {}
    classes = [c for c in getattr(fc.mc, "classes", {}).values() if c.lookup(method) is not None]
    if not classes or len(classes) > _PREDICTED:
        return None
    for cls in classes:
        try:
            code, how = _binding(cls, method, len(every))
        except Fallback:
            continue
        args = _bound_arguments(every, how)
        if args is None:
            continue
        entry = by_code.setdefault(id(code), ([], code, args))
        if entry[2] != args:
            return None  # (one Code binds one call one way)
        entry[0].append(cls)
    return list(by_code.values()) or None


def _bound_arguments(every: list[str], how: Any) -> list[str] | None:
    """The texts of a frame's arguments as ``_method`` binds ``every`` (``how``: ``bind_static``'s sources,
    None for in order), or None where a source is no positional argument and no literal default."""
    if how is None:
        return every
    out = [every[0]]
    for src in how:
        if type(src) is int:
            out.append(every[1 + src])
        elif type(src) is tuple and src[0] == "default" and (src[1] is None or type(src[1]) is int):
            out.append(repr(src[1]))
        elif type(src) is tuple and src[0] == "default" and (src[1] is TRUE or src[1] is FALSE):
            out.append("TRUE" if src[1] is TRUE else "FALSE")
        else:
            return None
    return out


def call(fc: CompiledFunction, e: ast.Call, callee: Any, ret: Target) -> FragmentMaker | None:
    """The node of a hoisted call ``e`` (its site's setup): of the model function ``callee`` (a Code), or,
    when ``callee`` is None, of the method ``e.func.attr`` of the object ``e.func.value`` holds. A callee known
    here (a function; a method whose receiver's class is tested against the classes that define it) ends with
    ``pc = (_aN, [arguments], return pc)``, ``_aN`` the callee's Code, which a whole step turns into the pushed
    frame in line (``codegen._static_pushes``); a method looked up when the step runs ends with
    ``pc = (_k, _b, return pc)`` (``_method``)."""
    if e.keywords or any(isinstance(a, ast.Starred) for a in e.args):
        return None
    src = codegen._Source()
    head: list[str] = []
    if callee is None:
        if not isinstance(e.func, ast.Attribute):
            return None
        r = codegen.reference(fc, e.func.value, src)
        if r is None:
            return None
        head = [r]
    else:
        sig = signature_of(callee)
        if sig.npos != len(e.args) or len(callee.params) != len(e.args):
            return None  # defaults, keyword-only parameters, *args: the closures bind them
    args = [_argument(fc, a, src) for a in e.args]
    if any(a is None for a in args):
        return None
    every = [*head, *args]
    values = ", ".join(every)  # type: ignore[arg-type]
    lines = src.lines
    if callee is None:
        assert isinstance(e.func, ast.Attribute)
        name = codegen._name_constant(fc, e.func.attr)
        pred = _predicted(fc, e.func.attr, len(every))
        c = src.temp()
        generic = [f"_k, _b = _method({c}, {name}, [{values}])"]
        if pred is None:
            lines = [*lines, f"{c} = heap[{head[0]}.i][0]"]
            codes = _dispatch(fc, e.func.attr, every)  # type: ignore[arg-type]
            if codes is None:
                lines = [*lines, *generic]
                return lambda: Fragment([*lines, f"pc = (_k, _b, {ret.pc})"], None, not src.eager, call=True)
            # One branch per Code, its classes tested with ``is``; a receiver of any other class falls back.
            branches = [(" or ".join(f"{c} is {_bind(fc, cls)}" for cls in classes), _bind(fc, code), ", ".join(bound))
                        for classes, code, bound in codes]

            def dispatched() -> Fragment:  # the return pc is known once the continuation is placed
                out = list(lines)
                for n, (test, k, bound) in enumerate(branches):
                    out += [f"{'elif' if n else 'if'} {test}:", f"    pc = ({k}, [{bound}], {ret.pc})"]
                return Fragment([*out, "else:", "    _fail()"], None, not src.eager, call=True)
            return dispatched
        # Every class whose objects have the method is tested: an object of another class has none (the
        # closures raise AttributeError) or is a builtin object (a list's ``pop`` where a class of the model
        # defines one): the closures' business.
        classes, callee = pred
        test = " and ".join(f"{c} is not {_bind(fc, cls)}" for cls in classes)
        lines = [*lines, f"{c} = heap[{head[0]}.i][0]", f"if {test}: _fail()"]
    k = _bind(fc, callee)
    return lambda: Fragment([*lines, f"pc = ({k}, [{values}], {ret.pc})"], None, not src.eager, call=True)


def continuation(fc: CompiledFunction, s: ast.stmt, temp: int, nxt: Target) -> FragmentMaker | None:
    """The caller's node after the call returns: ``f(...)`` as a statement drops the value (its hidden slot
    ends cleared, as the closures leave it); ``x = f(...)`` stores it (``codegen._store``)."""
    src = codegen._Source()
    src.add("_rv = loc.pop()")
    if temp >= 0:
        src.add(f"loc[{temp}] = None")
    if isinstance(s, ast.Assign):
        if len(s.targets) != 1:
            return None
        target = s.targets[0]
        where = codegen._variable(fc, target.id) if isinstance(target, ast.Name) and not fc.is_module else None
        if where is not None and where[0] == "loc":
            # Into a local, any value, as ``store_local`` stores it: the driver takes a step that returns from a
            # call as one that may move references in frames (its canonical walk, semantics/system._run_fast).
            src.add(f"loc[{where[1]}] = {_boxed('_rv')}")
        else:
            src.add("if _rv is not None and type(_rv) is not int and type(_rv) is not bool: _fail()")
            if not codegen._store(fc, target, "_rv", src):
                return None
    elif not isinstance(s, ast.Expr):
        return None
    return lambda: Fragment([*src.lines, f"pc = {nxt.pc}"], nxt.pc, not src.eager)


def branch(temp: int, nxt: Target, on_false: Target) -> FragmentMaker:
    """The caller's node after a call that is a condition (``if f():``, ``while o.m():``): on to ``nxt`` when
    the value is true, else to ``on_false``; an int, a boolean or None (other values' truth is the closures')."""
    lines = ["_rv = loc.pop()", *([f"loc[{temp}] = None"] if temp >= 0 else []),
             "if _rv is not None and type(_rv) is not int and type(_rv) is not bool: _fail()"]
    # The labels are placed once the function is compiled: their numbers are read when the fragment is made.
    return lambda: Fragment([*lines, f"pc = {nxt.pc} if _rv else {on_false.pc}"], None, True,
                            (nxt.pc, on_false.pc))


def pass_on(temp: int, slot: int, chain: Target | None) -> FragmentMaker:
    """The caller's node after the call of ``return f(...)``: the value returned in turn (``slot`` < 0), or kept
    (boxed) in ``slot`` while the enclosing ``with`` blocks' exits run, then on to ``chain``."""
    lines = ["_rv = loc.pop()", *([f"loc[{temp}] = None"] if temp >= 0 else [])]
    if chain is None:
        return lambda: Fragment([*lines, "loc.append(_rv)", "pc = -1"], None, True, (-1,))
    return lambda: Fragment([*lines, f"loc[{slot}] = {_boxed('_rv')}", f"pc = {chain.pc}"], chain.pc)


def _unboxed(x: str) -> str:
    """The text of ``unbox(x)``, with no call where it is ``x`` itself (not a ``Bool``, not a tuple)."""
    return f"(_unbox({x}) if type({x}) is Bool or type({x}) is tuple else {x})"


def _boxed(x: str) -> str:
    """The text of ``box(x)``, with no call where it is ``x`` itself (not a bool, not a tuple)."""
    return f"(_box({x}) if type({x}) is bool or type({x}) is tuple else {x})"


def _returned(fc: CompiledFunction, e: ast.expr | None, src: codegen._Source) -> str | None:
    """The text of ``return e``'s value as the caller sees it (unboxed)."""
    if e is None:
        return "None"
    if isinstance(e, (ast.Name, ast.Attribute, ast.Subscript)):
        # References and tuples too: unboxed, as the closures' expression gives them.
        raw = codegen._raw(fc, e, src)
        return _unboxed(raw) if raw is not None else None
    popped = codegen.list_pop_value(fc, e, src)  # ``return xs.pop(0)``: the queue library's get
    return popped if popped is not None else codegen.value(fc, e, src)


def return_value(fc: CompiledFunction, e: ast.expr | None) -> FragmentMaker | None:
    """``return e`` out of no ``with`` block: the value to the caller (``Ctx.ret``)."""
    src = codegen._Source()
    v = _returned(fc, e, src)
    if v is None:
        return None
    return lambda: Fragment([*src.lines, f"loc.append({v})", "pc = -1"], None, not src.eager, (-1,))


def keep_return_value(fc: CompiledFunction, e: ast.expr | None, slot: int, chain: Target) -> FragmentMaker | None:
    """``return e`` inside ``with`` blocks: the value kept (boxed) in ``slot`` while the exits run."""
    src = codegen._Source()
    if isinstance(e, (ast.Name, ast.Attribute, ast.Subscript)):
        v = codegen._raw(fc, e, src)  # kept as stored: box(unbox(v)) is v
    else:
        v = _returned(fc, e, src)
        v = None if v is None else f"_box({v})"
    if v is None:
        return None
    lines = [*src.lines, f"loc[{slot}] = {v}"]
    return lambda: Fragment([*lines, f"pc = {chain.pc}"], chain.pc, not src.eager)


def deliver_return_value(slot: int) -> FragmentMaker:
    """After the exits: the kept value to the caller."""
    lines = [f"_b = loc[{slot}]", f"loc[{slot}] = None", f"loc.append({_unboxed('_b')})", "pc = -1"]
    return lambda: Fragment(lines, None, True, (-1,))


__all__ = ["NAMES", "branch", "call", "continuation", "deliver_return_value", "keep_return_value", "pass_on",
           "return_value"]
