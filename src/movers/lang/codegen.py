"""Steps compiled to Python source specialised to their shape: the fast back end.

SPIN's lesson is to compile the model: its steps are C functions with the slots, constants and the
granularity baked in. movers does the same inside Python for the shapes that dominate a search: besides its
closure (``Node.run``, over a per-step ``Ctx``), a node may get generated functions, written as Python
source by one small emitter per statement shape (``assign``, ``branch``, ``check``, ``range_loop``,
``join``, ``lock_method``, ``release_lock``...; ``with m:``'s entry is ``codegen_sync.lock_enter``):

- ``_n{k}(g, heap, loc, t) -> (g, heap, pc)``: ``g`` the globals tuple, ``heap`` the heap tuple (neither is
  mutated: writes build new tuples), ``loc`` a fresh list of the top frame's locals, updated in place, ``t``
  the thread; it returns the new globals, heap and program counter (``-1``: the frame returns). A costly
  node's function also runs, in line, the free glue that statically follows it;
- ``_t{k}(g, heap, loc, t, eff)``: the same, recording the step's Effect in ``eff`` exactly as the closures
  do (the lines marked ``TRACKED``), for the searches that ask for Effects (every reduction);
- ``_s{k}(g, heap, threads, t, th, top) -> state``: the whole step of a costly node (or of the function's
  entry, a thread's first step) whose step ends, whatever path it takes through the glue (each path written
  out where the glue branches: a busy wait's test; through a ``with indivisible():`` block), at a costly node,
  at the thread's end, or in a call whose callee's first node is costly (the callee's frame pushed): the
  successor state, in one call; a return into a caller goes on in the caller's ``_r{k}``; a call into local
  work hands the frames over to ``codegen_calls._resume``, which goes on as the general driver would; its frame's
  locals are plain variables ``_l0``... (taken from ``top``, put into the new frame) wherever the fragment
  uses them only as ``loc[i]``; where a path comes back to node k having written nothing (a busy wait whose
  test holds), ``SAME`` (``ir.program.SAME``: the successor is the state itself);
- ``_r{k}(g, heap, threads, t, th, top, value) -> state``: the whole step from a call's continuation ``k``
  once the callee returned ``value`` (``return_source``), which a callee's whole step that returns calls
  through the caller's ``Code.fast_return``;
- ``_g{k}(g, heap, threads, top, t) -> bool``: the node's guard;
- ``_x{k}(g, heap, threads, t, th, top) -> state | None``: a guarded node's guard and whole step together
  (None when the guard is false): the plain full search's one call per thread and state;

and a function whose body is ``return e`` (an ``@invariant``) becomes ``f(g, heap) -> value``, the module's
constants (names bound once, to an int or a boolean, before any thread starts: ``module_constants``) folded
into it.

Monitors, conditions, events, ``wait_until`` and ``with indivisible():`` have their emitters in
``lang/codegen_sync.py``; calls and returns in ``lang/codegen_calls.py``, whose fragments end with a pc that
is a tuple (a frame to push, or entering and leaving an indivisible block) for the driver
(``semantics/system._run_fast``) to act on, as ``Ctx.push``, ``Ctx.ret`` and ``Ctx.atomic`` do.

**What the fast path may decide.** Nothing on its own: a generated function covers the common case of its
shape (ints, booleans and None in the variables it touches, references copied among locals; a plain
``Lock``, a ``Semaphore``; a dict's ``d.get(k)`` and ``d[k] = v`` with int keys, among int and string keys;
a list's elements, ``append`` and ``pop``, recording the reads of its length where lists grow, as
``runtime_ops._read_length`` does) and raises ``Fallback``, or lets Python raise, whenever the step leaves it
(a missing key, an index out of range, an empty list: the closures raise KeyError, IndexError, and the
library's ``queue.Empty``). The engine
(``semantics/system.py``) then runs the same step again on the closures, from the same state, and those
report runtime errors, assertion failures and everything else. So the state graph is the closures' by
construction: the fast path is right exactly when it agrees with them where it returns, which
``tests/test_codegen.py`` checks on every example and on random models by running each search, under
``none`` and under the reductions, with and without it. It never moves
a reference into a global or an object (a step that would falls back): that reshapes the heap, and the
closures then walk it (``semantics/state.py``). It does move references among the top frame's locals
(``first = forks[i]``, ``first, second = second, first``, a local overwritten, a thread that ends holding
some), which on the closures needs the walk only where the globals do not reach every object: there the
generated code asks ``_cover`` (one walk per distinct heap, remembered) and falls back when they do not. So
its successors need no walk, and neither do the closures' on the steps where it returns.

**What the generated text is made of.** Only this module's own identifiers, the helpers of ``HELPERS``,
slot and node numbers, and literal values the emitters validated (ints in 64 bits, ``True``, ``False``,
``None``, through ``repr``). No name, attribute, string or other text of the model is ever pasted into the
source: a field's name is a value bound in the functions' namespace (``_a0``...), the ``Code`` object
itself is ``_code``, and a model whose variable is called ``__import__`` or whose assertion message closes
a string still cannot run anything (``tests/test_codegen.py`` tokenizes every generated function to check
it). Source that CPython refuses (too deep, too big) leaves the code on its closures.
"""

from __future__ import annotations

import ast
import copy
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from movers.ir.program import FALSE, LOCK, SAME, SEMAPHORE, THREAD, TRUE, UNBOUND, Bool, Ref
from movers.lang.runtime_ops import MAX_SEQUENCE
from movers.lang.strings import MAX_STR
from movers.semantics.state import globals_cover_memo

if TYPE_CHECKING:
    from movers.ir.program import Code


class Target(Protocol):
    """A jump target (``function.Label`` is one): the number of its node, once placed."""

    @property
    def pc(self) -> int: ...


class ModuleNames(Protocol):
    """The module's globals, by name (``compiler.ModuleCompiler``)."""

    @property
    def global_slot(self) -> dict[str, int]: ...


class CompiledFunction(Protocol):
    """What the emitters read of the function being compiled (``function.FunctionCore`` is one): its code,
    its local slots and the names it declares global, the module's globals, the field names the generated
    code binds (which the emitters add to), and whether it is the module's initialisation."""

    @property
    def code(self) -> Code: ...

    @property
    def slot(self) -> dict[str, int]: ...

    @property
    def global_names(self) -> set[str]: ...

    @property
    def fast_names(self) -> dict[str, str]: ...

    @property
    def is_module(self) -> bool: ...

    @property
    def mc(self) -> ModuleNames: ...


class Fallback(Exception):
    """The step left the shape its fast function was written for: run it on the closures."""


def _val(v: Any) -> Any:
    """A variable's value as expressions see it, for the values the fast path handles (ints are tested in
    line, before this is called): booleans unboxed, None, strings; anything else (unbound, a reference, a
    tuple) is the closures' business."""
    if type(v) is Bool:
        return v.value
    if v is None:
        return None
    if type(v) is str:
        return v  # immutable, a value by its text, stored as itself (``+`` and ``%`` on it stay the closures')
    raise Fallback


def _fail() -> None:
    raise Fallback


# The last (globals, heap) ``_cover`` was asked about, and its answer: every thread's step from one state, and
# every step that keeps the heap, asks about the same pair.
_last_cover: list[tuple[Any, Any, bool]] = [(None, None, False)]


def forget_cover() -> None:
    _last_cover[0] = (None, None, False)


def _cover(g: tuple, heap: tuple) -> bool:
    """Whether the globals reach every object (``semantics.state.globals_cover``): then a step that moves
    references only among the top frame's locals, or drops some, needs no canonical walk, and the closures
    make none. A fast step stores no reference into a global or an object, so the pair it holds mid-step
    answers as its pre-state does."""
    c = _last_cover[0]
    if c[0] is g and c[1] is heap:
        return c[2]
    covered = globals_cover_memo(g, heap)
    _last_cover[0] = (g, heap, covered)
    return covered


def _grown(eff: Any, r: Ref, o: tuple) -> None:
    """The reads of list ``r``'s length where lists may grow, as ``runtime_ops._read_length`` records them."""
    if o[0].grows:
        n = len(o)
        if n > 2:
            eff.reads.append((r, n - 1))
        eff.reads.append((r, n))


def _dict_reads(eff: Any, r: Ref, o: tuple) -> None:
    """A dict lookup's reads: every slot and the one past the end (``containers._read_all``)."""
    eff.reads.extend([(r, j) for j in range(2, len(o) + 1)])


def _dict_get(o: tuple, k: Any, default: Any) -> Any:
    """``d.get(k, default)`` for an int or string key, in a dict whose keys are ints and strings
    (``containers._find``: Python's equality, under which no int equals a string); its value as expressions see
    it. Other keys (booleans, tuples, references): the closures compare them."""
    for j in range(2, len(o), 2):
        x = o[j]
        if type(x) is int or type(x) is str:
            if x == k:
                v = o[j + 1]
                return v if type(v) is int else _val(v)
        elif type(x) is not str:
            raise Fallback
    return default


def _dict_set(heap: tuple, r: Ref, o: tuple, k: Any, v: Any) -> tuple[tuple, tuple[int, ...]]:
    """``d[k] = v`` for an int or string key and a value that is no reference (booleans boxed), as
    ``containers.dict_set`` stores it: the new heap and the slots written (the value's; or, for a new key, the
    two past the end). Overwriting a reference or a tuple, or another key shape, is the closures'."""
    n = len(o)
    for j in range(2, n, 2):
        x = o[j]
        if type(x) is int or type(x) is str:
            if x == k:
                old = o[j + 1]
                if type(old) is Ref or type(old) is tuple:
                    raise Fallback
                w = [*heap]
                w[r.i] = (*o[:j + 1], v, *o[j + 2:])
                return tuple(w), (j + 1,)
        elif type(x) is not str:
            raise Fallback
    if (n - 2) // 2 >= MAX_SEQUENCE:
        raise Fallback
    w = [*heap]
    w[r.i] = (*o, k, v)
    return tuple(w), (n, n + 1)


def _list_append(heap: tuple, r: Ref, o: tuple, v: Any) -> tuple:
    """``xs.append(v)`` for a value that is no reference (booleans boxed), as ``runtime_ops.list_append``."""
    if not o[0].is_list or len(o) - 2 >= MAX_SEQUENCE:
        raise Fallback
    w = [*heap]
    w[r.i] = (*o, v)
    return tuple(w)


def _list_pop(heap: tuple, r: Ref, o: tuple, i: Any) -> tuple[tuple, Any, int]:
    """``xs.pop(i)`` as ``runtime_ops.list_pop``: the new heap, the element (as expressions see it) and its
    slot; an empty list, an index out of range (IndexError on the closures) or references among the elements
    that move are the closures'."""
    if not o[0].is_list or type(i) is not int:
        raise Fallback
    n = len(o) - 2
    k = i + n if i < 0 else i
    if not 0 <= k < n:
        raise Fallback
    k += 2
    for y in o[k:]:
        if type(y) is Ref or type(y) is tuple:
            raise Fallback
    x = o[k]
    w = [*heap]
    w[r.i] = o[:k] + o[k + 1:]
    return tuple(w), (x if type(x) is int else _val(x)), k


def _pop_effect(eff: Any, r: Ref, o: tuple, k: int) -> None:
    """A pop's accesses: the slots from the one removed to the end, read and written (``list_pop``)."""
    eff.reads.extend([(r, j) for j in range(k, len(o))])
    eff.writes.extend([(r, j) for j in range(k, len(o))])


def _user_join(cls: Any) -> bool:
    """Whether a Thread class defines its own ``join`` (then ``t.join()`` is a call, on the closures)."""
    return cls.lookup("join") is not None


# Everything the generated source may name besides its parameters and temporaries.
HELPERS: dict[str, Any] = {
    "Fallback": Fallback,
    "_val": _val,
    "_fail": _fail,
    "_user_join": _user_join,
    "_cover": _cover,
    "_grown": _grown,
    "_dict_reads": _dict_reads,
    "_dict_get": _dict_get,
    "_dict_set": _dict_set,
    "_DICT": "dict",
    "_MAX_STR": MAX_STR,
    "_STR": str,
    "_list_append": _list_append,
    "_list_pop": _list_pop,
    "_pop_effect": _pop_effect,
    "Ref": Ref,
    "Bool": Bool,
    "LOCK": LOCK,
    "SEMAPHORE": SEMAPHORE,
    "THREAD": THREAD,
    "TRUE": TRUE,
    "FALSE": FALSE,
    "UNBOUND": UNBOUND,
    "SAME": SAME,
}

# Operators whose Python meaning on ints and booleans is the language's, with no bound to check (``*``,
# ``**`` and ``<<`` check sizes in ``runtime_ops``: they stay on the closures).
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.FloorDiv: "//", ast.Mod: "%", ast.RShift: ">>", ast.BitAnd: "&",
           ast.BitOr: "|", ast.BitXor: "^"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_INT_BOUND = 2**63


@dataclass
class Fragment:
    """The source of one node's step: statements over ``g``, ``heap``, ``loc``, ``t``, ending by setting
    ``pc``. ``next_pc`` is that pc when it is a constant (the glue there can be run in line)."""

    lines: list[str]
    next_pc: int | None
    # Whether it records its Effect exactly as the closures do (``tracked`` lines), so that searches that ask
    # for Effects (every reduction) can run it too.
    tracked: bool = True
    # Every pc it may end with (-1: the frame returns), when ``next_pc`` is not the only one.
    targets: tuple[int, ...] = ()
    # Whether it ends with a call's ``pc = (_k, arguments, return pc)`` (``codegen_calls.call``).
    call: bool = False
    # Whether it writes nothing but its temporaries and pc (a condition, a jump): a whole step whose path
    # through such fragments comes back to its own node is a self-loop (``_whole_step``), a busy wait's turn.
    pure: bool = False

    def ends(self) -> tuple[int, ...]:
        return (self.next_pc,) if self.next_pc is not None else self.targets


# A fragment whose node numbers are known only once the function's labels are placed (``FunctionCore.finish``).
FragmentMaker = Callable[[], Fragment]


class _Source:
    """Statements being generated, and fresh temporaries for them. ``eager``: some operand is evaluated where
    the closures would skip it (``and``/``or``), so the reads it records would not be theirs."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n = 0
        self.eager = False
        self.depth = 0  # of the expression being generated (``value``)

    def temp(self) -> str:
        self.n += 1
        return f"_{self.n}"

    def add(self, line: str) -> None:
        self.lines.append(line)

    def record(self, line: str) -> None:
        """A line that records the step's Effect (``eff``): only in the tracked variant."""
        self.lines.append(line + TRACKED)


# Marks a line of the tracked variant only (removed from the other, the mark itself removed from both).
TRACKED = "  # tracked"


def _track(line: str) -> str:
    return line + TRACKED


# -- expressions: an emitter per shape, returning the text of a value (or None: not handled) --------------------


def _variable(fc: CompiledFunction, name: str) -> tuple[str, int] | None:
    """Where a name lives, exactly as ``ExpressionCompiler.e_Name`` decides it."""
    if name in getattr(fc, "cells", ()):
        return None  # in a cell (nonlocal): the closures' business
    if name in fc.slot and name not in fc.global_names:
        return "loc", fc.slot[name]
    if name in fc.mc.global_slot:
        return "g", fc.mc.global_slot[name]
    return None


def _literal(v: Any) -> str | None:
    if v is None or type(v) is bool:
        return repr(v)
    if type(v) is int and -_INT_BOUND < v < _INT_BOUND:
        return repr(v)
    return None


def _load(src: _Source, where: str, slot: int) -> str:
    x = src.temp()
    src.add(f"{x} = {where}[{slot}]")
    if where == "g":
        src.record(f"eff.reads.append({slot})")
    src.add(f"if type({x}) is not int: {x} = {x}.value if type({x}) is Bool else _val({x})")
    return x


# Deeper expressions stay on the closures: the generated text parenthesises every operation, and CPython
# refuses more than 200 nested parentheses (a model may chain 400 additions without one).
MAX_DEPTH = 40


def value(fc: CompiledFunction, e: ast.expr, src: _Source) -> str | None:
    """The text of ``e``'s value, after the statements it needs are added to ``src``; None when ``e`` has a
    shape the fast path does not handle. Operands are evaluated eagerly (they have no effects; one that fails
    where the closures would not have evaluated it only sends the step back to them)."""
    if src.depth >= MAX_DEPTH:
        return None
    src.depth += 1
    try:
        return _value(fc, e, src)
    finally:
        src.depth -= 1


def _value(fc: CompiledFunction, e: ast.expr, src: _Source) -> str | None:
    if isinstance(e, ast.Constant):
        if type(e.value) is str and len(e.value) <= MAX_SEQUENCE:
            return _name_constant(fc, e.value)  # the string is a value bound in the namespace, never text
        return _literal(e.value)
    if isinstance(e, ast.Name):
        where = _variable(fc, e.id)
        return _load(src, *where) if where is not None else None
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
        # On strings, concatenation is CPython's within ``strings.concat``'s bound: past it (and for a string
        # and another type) the closures raise. A chain of ``+`` stays one expression, its result checked
        # once: it is at least as long as every string concatenated on the way.
        t = _sum(fc, e, src)
        if t is None:
            return None
        x = src.temp()
        src.add(f"{x} = {t}")
        src.add(f"if type({x}) is _STR and len({x}) > _MAX_STR: _fail()")
        return x
    if isinstance(e, ast.BinOp):
        op = _BINOPS.get(type(e.op))
        a = value(fc, e.left, src) if op else None
        b = value(fc, e.right, src) if a is not None else None
        if b is None:
            return None
        if op != "%":
            return f"({a} {op} {b})"  # on a string: CPython's TypeError, as the closures raise it
        # On a string, formatting is the closures' (``strings.percent`` formats the language's values).
        x = src.temp()
        src.add(f"{x} = {a} % {b}")
        src.add(f"if type({x}) is _STR: _fail()")
        return x
    if isinstance(e, ast.Compare) and len(e.ops) == 1 and isinstance(e.ops[0], (ast.Is, ast.IsNot)):
        # ``x is None`` (``runtime_ops._is``: identity when a side is None), on the value as stored.
        sides = [e.left, e.comparators[0]]
        other = [x for x in sides if not (isinstance(x, ast.Constant) and x.value is None)]
        if len(other) != 1:
            return None
        x = _raw(fc, other[0], src)
        if x is None:
            return None
        return f"({x} is None)" if isinstance(e.ops[0], ast.Is) else f"({x} is not None)"
    if isinstance(e, ast.Compare) and len(e.ops) == 1:
        op = _CMPOPS.get(type(e.ops[0]))
        a = value(fc, e.left, src) if op else None
        b = value(fc, e.comparators[0], src) if a is not None else None
        return f"({a} {op} {b})" if b is not None else None
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.Not, ast.USub)):
        a = value(fc, e.operand, src)
        if a is None:
            return None
        return f"(not {a})" if isinstance(e.op, ast.Not) else f"(-{a})"
    if isinstance(e, (ast.Subscript, ast.Attribute)):
        x = _element(fc, e, src) if isinstance(e, ast.Subscript) else _field(fc, e, src)
        if x is None:
            return None
        src.add(f"if type({x}) is not int: {x} = {x}.value if type({x}) is Bool else _val({x})")
        return x
    if isinstance(e, ast.Call):
        return _dict_get_call(fc, e, src)
    if isinstance(e, ast.BoolOp):
        parts = [value(fc, x, src) for x in e.values]
        if any(p is None for p in parts):
            return None
        src.eager = True
        op = " and " if isinstance(e.op, ast.And) else " or "
        return "(" + op.join(parts) + ")"  # type: ignore[arg-type]
    return None


def _sum(fc: CompiledFunction, e: ast.BinOp, src: _Source) -> str | None:
    """The text of a chain of ``+``, unchecked (``_value`` checks its result)."""
    if src.depth >= MAX_DEPTH:
        return None
    src.depth += 1
    try:
        a, b = e.left, e.right
        x = _sum(fc, a, src) if isinstance(a, ast.BinOp) and isinstance(a.op, ast.Add) else value(fc, a, src)
        if x is None:
            return None
        y = _sum(fc, b, src) if isinstance(b, ast.BinOp) and isinstance(b.op, ast.Add) else value(fc, b, src)
        return f"({x} {_BINOPS[ast.Add]} {y})" if y is not None else None
    finally:
        src.depth -= 1


def _dict_get_call(fc: CompiledFunction, e: ast.Call, src: _Source) -> str | None:
    """``d.get(k)``, ``d.get(k, default)`` where the model makes dicts and defines no method ``get`` (then
    ``ExpressionCompiler.builtin_method`` compiles it: receiver, arguments, then the dict's lookup); an int
    key, else the closures'."""
    f = e.func
    if not (isinstance(f, ast.Attribute) and f.attr == "get" and getattr(fc.mc, "has_dicts", False)
            and not e.keywords and 1 <= len(e.args) <= 2 and not any(isinstance(a, ast.Starred) for a in e.args)):
        return None
    defines = getattr(fc.mc, "defines_method", None)
    if defines is None or defines("get"):
        return None
    r = reference(fc, f.value, src)
    k = value(fc, e.args[0], src) if r is not None else None
    d = (value(fc, e.args[1], src) if len(e.args) > 1 else "None") if k is not None else None
    if d is None:
        return None
    o, x = src.temp(), src.temp()
    src.add(f"{o} = heap[{r}.i]")
    src.add(f"if {o}[0].builtin != _DICT or (type({k}) is not int and type({k}) is not _STR): _fail()")
    src.record(f"_dict_reads(eff, {r}, {o})")
    src.add(f"{x} = _dict_get({o}, {k}, {d})")
    return x


def _list_call(fc: CompiledFunction, e: ast.expr, methods: tuple[str, ...]) -> ast.Call | None:
    """``e`` when it is ``xs.append(v)``, ``xs.pop()`` or ``xs.pop(i)`` (of ``methods``) that
    ``ExpressionCompiler.builtin_method`` compiles (no class of the model defines the method), else None."""
    if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in methods
            and not e.keywords and not any(isinstance(a, ast.Starred) for a in e.args)):
        return None
    n = len(e.args)
    if (e.func.attr == "append" and n != 1) or (e.func.attr == "pop" and n > 1):
        return None
    defines = getattr(fc.mc, "defines_method", None)
    if defines is None or defines(e.func.attr):
        return None
    return e


def list_pop_value(fc: CompiledFunction, e: ast.expr, src: _Source) -> str | None:
    """The text of ``xs.pop(i)``'s value (the statement's whole value: it changes the list, so it is never
    an operand evaluated eagerly), or None when ``e`` is no such call."""
    c = _list_call(fc, e, ("pop",))
    if c is None:
        return None
    r = reference(fc, c.func.value, src)  # type: ignore[attr-defined]
    i = (value(fc, c.args[0], src) if c.args else "-1") if r is not None else None
    if i is None:
        return None
    o, k, x = src.temp(), src.temp(), src.temp()
    src.add(f"{o} = heap[{r}.i]")
    src.record(f"_grown(eff, {r}, {o})")
    src.add(f"heap, {x}, {k} = _list_pop(heap, {r}, {o}, {i})")
    src.record(f"_pop_effect(eff, {r}, {o}, {k})")
    return x


def list_method(fc: CompiledFunction, e: ast.expr, nxt: Target) -> FragmentMaker | None:
    """``xs.append(v)``, ``xs.pop()``, ``xs.pop(i)`` as a statement."""
    src = _Source()
    if list_pop_value(fc, e, src) is None:
        c = _list_call(fc, e, ("append",))
        if c is None:
            return None
        r = reference(fc, c.func.value, src)  # type: ignore[attr-defined]
        v = value(fc, c.args[0], src) if r is not None else None
        if v is None:
            return None
        o, x = src.temp(), src.temp()
        src.add(f"{x} = {v}")
        src.add(f"if type({x}) is bool: {x} = TRUE if {x} else FALSE")
        src.add(f"{o} = heap[{r}.i]")
        src.record(f"_grown(eff, {r}, {o})")
        src.add(f"heap = _list_append(heap, {r}, {o}, {x})")
        src.record(f"eff.writes.append(({r}, len({o})))")
    return lambda: Fragment([*src.lines, f"pc = {nxt.pc}"], nxt.pc, not src.eager)


def _stored(fc: CompiledFunction, e: ast.expr, src: _Source) -> str | None:
    """The text of what a variable, a list's element or a field holds, as stored (references and boxes
    included, unchecked); None for other shapes."""
    if isinstance(e, ast.Name):
        where = _variable(fc, e.id)
        if where is None:
            return None
        x = src.temp()
        src.add(f"{x} = {where[0]}[{where[1]}]")
        if where[0] == "g":
            src.record(f"eff.reads.append({where[1]})")
        return x
    if isinstance(e, ast.Subscript):
        return _element(fc, e, src)
    if isinstance(e, ast.Attribute):
        return _field(fc, e, src)
    return None


def reference(fc: CompiledFunction, e: ast.expr, src: _Source) -> str | None:
    """The text of a reference ``e`` holds (a variable, a list's element, a field), or None when ``e`` has
    another shape; the step falls back when the value is not a reference."""
    x = _stored(fc, e, src)
    if x is not None:
        src.add(f"if type({x}) is not Ref: _fail()")
    return x


def _raw(fc: CompiledFunction, e: ast.expr, src: _Source) -> str | None:
    """What ``e`` holds as stored (references and boxes included), failing where it is unbound."""
    x = _stored(fc, e, src)
    if x is not None:
        src.add(f"if {x} is UNBOUND: _fail()")
    return x


def _name_constant(fc: CompiledFunction, name: Any) -> str:
    """The identifier under which a field's name (or a class of the model) is bound in the generated code's
    namespace: the name is data there, never source text."""
    names = fc.fast_names
    if name not in names:
        names[name] = f"_a{len(names)}"
    return names[name]


def _field_slot(fc: CompiledFunction, e: ast.Attribute, src: _Source) -> tuple[str, str, str] | None:
    """For ``obj.f`` on a model object: the texts of the reference, the object and the field's index."""
    r = reference(fc, e.value, src)
    if r is None:
        return None
    o, i = src.temp(), src.temp()
    src.add(f"{o} = heap[{r}.i]")
    _index(fc, e.attr, o, i, src, False)
    return r, o, i


# At most this many classes share a field's predicted index (each is one ``is`` in the test).
_FIELD_CLASSES = 4


def _index(fc: CompiledFunction, name: str, o: str, i: str, src: _Source, store: bool) -> None:
    """Lines that set ``i`` to field ``name``'s index in object ``o``, failing where it has none (``m.owner``
    of a monitor: the closures' business) or, for a ``store``, where it is a builtin object or a thread (the
    closures refuse some of their fields). Where every class of the model that has the field has it at one
    index (a class's fields are declared before any body is compiled, and never change), objects of those
    classes take the index as a literal: no look-up by name."""
    lookup = [*([f"if {o}[0].builtin or {o}[0].is_thread: _fail()"] if store else []),
              f"{i} = {o}[0].field_index.get({_name_constant(fc, name)})", f"if {i} is None: _fail()"]
    found = [c for c in getattr(fc.mc, "classes", {}).values() if name in c.field_index]
    if (not found or len(found) > _FIELD_CLASSES or len({c.field_index[name] for c in found}) != 1
            or any(c.builtin or c.is_thread for c in found)):
        for line in lookup:
            src.add(line)
        return
    test = " or ".join(f"{o}[0] is {_name_constant(fc, c)}" for c in found)
    src.add(f"if {test}: {i} = {found[0].field_index[name]}")
    src.add("else:")
    for line in lookup:
        src.add(f"    {line}")


def _field(fc: CompiledFunction, e: ast.Attribute, src: _Source) -> str | None:
    """A field's value, as stored (``ExpressionCompiler.e_Attribute``)."""
    return _read_slot(_field_slot(fc, e, src), src)


def _read_slot(where: tuple[str, str, str] | None, src: _Source) -> str | None:
    """The value at (reference, object, index), recorded as a read of (reference, index)."""
    if where is None:
        return None
    x = src.temp()
    src.record(f"eff.reads.append(({where[0]}, {where[2]}))")
    src.add(f"{x} = {where[1]}[{where[2]}]")
    return x


def _list_slot(fc: CompiledFunction, e: ast.Subscript, src: _Source) -> tuple[str, str, str] | None:
    """For ``a[i]`` on a list: the texts of the list's reference, its object and the element's index in the
    object tuple (``runtime_ops._index``, for ints)."""
    operands = _subscript(fc, e, src)
    if operands is None:
        return None
    r, k = operands
    o, i = src.temp(), src.temp()
    src.add(f"{o} = heap[{r}.i]")
    _list_index(r, o, k, i, src)
    return r, o, i


def _subscript(fc: CompiledFunction, e: ast.Subscript, src: _Source) -> tuple[str, str] | None:
    """For ``t[k]`` (not a slice): the texts of ``t``'s reference and of ``k``'s value, where both have a
    generated form."""
    if isinstance(e.slice, ast.Slice):
        return None
    r = reference(fc, e.value, src)
    if r is None:
        return None
    # A variable's value as stored: the index is checked to be an int (``_list_index``; a dict's key, an int
    # or a string), which is what unboxing it first would leave of it.
    k = _stored(fc, e.slice, src) if isinstance(e.slice, ast.Name) else value(fc, e.slice, src)
    return None if k is None else (r, k)


def _list_index(r: str, o: str, k: str, i: str, src: _Source, indent: str = "") -> None:
    """Set ``i`` to the position in list object ``o`` (referenced by ``r``) of the element that index ``k``
    names, as ``runtime_ops.element_index`` does; ``_fail()`` where it is not a list or not an int in range."""
    src.add(f"{indent}if not {o}[0].is_list: _fail()")
    # Where lists may grow, which element i names depends on the length: read as the closures read it
    # (``runtime_ops.element_index``, ``_read_length``).
    src.record(f"{indent}_grown(eff, {r}, {o})")
    if re.fullmatch(r"\d+", k) and int(k) < _INT_BOUND:
        src.add(f"{indent}{i} = {int(k) + 2}")  # a constant index (``victim[1]``)
        src.add(f"{indent}if len({o}) <= {i}: _fail()")
        return
    src.add(f"{indent}{i} = {k}")
    src.add(f"{indent}if type({i}) is not int: _fail()")
    # Past the list's class and length: i + 2 from the front, i + len from the back; in range either way.
    src.add(f"{indent}{i} += 2 if {i} >= 0 else len({o})")
    src.add(f"{indent}if not 2 <= {i} < len({o}): _fail()")


def _element(fc: CompiledFunction, e: ast.Subscript, src: _Source) -> str | None:
    """A list's element, as stored (the caller unboxes or checks it)."""
    return _read_slot(_list_slot(fc, e, src), src)


def _store(fc: CompiledFunction, target: ast.expr, v: str, src: _Source) -> bool:
    """Store value text ``v`` into a variable, as ``store_local`` and ``Ctx.set_global`` do for values that
    are not references: booleans boxed; overwriting a reference or a tuple falls back (the closures would mark
    the heap for canonicalisation)."""
    if fc.is_module and isinstance(target, ast.Name) and target.id in fc.slot and not target.id.startswith("$"):
        return False  # not a name the module's code reads as it stores it (``store_name``)
    if isinstance(target, ast.Subscript):
        return _store_element(fc, target, v, src)
    if isinstance(target, ast.Attribute):
        return _store_field(fc, target, v, src)
    if not isinstance(target, ast.Name):
        return False
    where = _variable(fc, target.id)
    if where is None:
        return False
    kind, slot = where
    x = src.temp()
    src.add(f"{x} = {v}")
    src.add(f"if type({x}) is bool: {x} = TRUE if {x} else FALSE")
    old = f"{kind}[{slot}]"
    if kind == "loc":
        # Dropping a reference from a local needs no walk where the globals reach every object.
        src.add(f"if (type({old}) is Ref or type({old}) is tuple) and not _cover(g, heap): _fail()")
        src.add(f"loc[{slot}] = {x}")
    else:
        src.add(f"if type({old}) is Ref or type({old}) is tuple: _fail()")
        src.add(f"_w = [*g]; _w[{slot}] = {x}; g = tuple(_w)")
        src.record(f"eff.writes.append({slot})")
    return True


def _local_slot(fc: CompiledFunction, target: ast.expr) -> int | None:
    """The slot of a plain local (not a cell; in the module's code, only its hidden temporaries), or None."""
    if not isinstance(target, ast.Name) or (fc.is_module and not target.id.startswith("$")):
        return None
    where = _variable(fc, target.id)
    return where[1] if where is not None and where[0] == "loc" else None


def _copy_locals(fc: CompiledFunction, targets: list[ast.expr], values: list[ast.expr], src: _Source) -> bool:
    """``x = e`` or ``x, y = e1, e2`` into plain locals, where each value is what a variable, a list's element or
    a field holds: copied as stored (``store_local``), references included. A reference stored into a local,
    or one overwritten there, moves references among the frame's locals only: the closures then walk the heap
    unless the globals reach every object (``_cover``), where the fast step falls back. The values are all
    read before any is stored, as CPython builds the tuple first."""
    slots = [_local_slot(fc, t) for t in targets]
    if not slots or any(k is None for k in slots) or len(set(slots)) != len(slots):
        return False
    xs = []
    for e in values:
        x = _stored(fc, e, src) if isinstance(e, (ast.Name, ast.Subscript, ast.Attribute)) else None
        if x is None:
            return False
        xs.append(x)
    for x in xs:
        # An int, a boolean (boxed as stored), None or a reference: anything else (unbound, a tuple, a
        # function) is the closures' business.
        src.add(f"if type({x}) is not int and type({x}) is not Bool and {x} is not None and type({x}) is not _STR:")
        src.add(f"    if type({x}) is not Ref or not _cover(g, heap): _fail()")
    for k, x in zip(slots, xs, strict=True):
        src.add(f"if (type(loc[{k}]) is Ref or type(loc[{k}]) is tuple) and not _cover(g, heap): _fail()")
        src.add(f"loc[{k}] = {x}")
    return True


# The text of an int literal or None (``_literal``): a value that needs no evaluating and no boxing.
_CONSTANT = re.compile(r"-?\d+|None")


def _value_first(v: str, src: _Source) -> str:
    """The value text ``v`` evaluated into a temporary before the target's operands, as the closures evaluate
    a store; a constant is its own text."""
    if _CONSTANT.fullmatch(v):
        return v
    x = src.temp()
    src.add(f"{x} = {v}")
    return x


def _box(x: str, src: _Source) -> None:
    """Box a boolean value as variables store it (``ir.program.Bool``); a constant needs none."""
    if not _CONSTANT.fullmatch(x):
        src.add(f"if type({x}) is bool: {x} = TRUE if {x} else FALSE")


def _store_element(fc: CompiledFunction, target: ast.Subscript, v: str, src: _Source) -> bool:
    """``a[i] = v`` on a list, as ``store_item`` and ``Ctx.set_field`` do for values that are not references;
    where the model makes dicts, ``d[k] = v`` on a dict too (``_store_item``)."""
    x = _value_first(v, src)
    if getattr(fc.mc, "has_dicts", False):
        return _store_item(fc, target, x, src)
    where = _list_slot(fc, target, src)
    if where is None:
        return False
    r, o, i = where
    _box(x, src)
    src.add(f"if type({o}[{i}]) is Ref or type({o}[{i}]) is tuple: _fail()")
    src.add(f"_w = [*{o}]; _w[{i}] = {x}; _v = [*heap]; _v[{r}.i] = tuple(_w); heap = tuple(_v)")
    src.record(f"eff.writes.append(({r}, {i}))")
    return True


def _store_item(fc: CompiledFunction, target: ast.Subscript, x: str, src: _Source) -> bool:
    """``t[k] = x`` where ``t`` may be a dict or a list, decided on the object as ``store_item`` decides: a
    dict's int key through ``_dict_set`` (its lookup's reads, then the slots it writes), a list's element as
    ``_store_element`` stores it."""
    operands = _subscript(fc, target, src)
    if operands is None:
        return False
    r, k = operands
    o, w = src.temp(), src.temp()
    src.add(f"{o} = heap[{r}.i]")
    _box(x, src)
    src.add(f"if {o}[0].builtin == _DICT:")
    src.add(f"    if type({k}) is not int and type({k}) is not _STR: _fail()")
    src.record(f"    _dict_reads(eff, {r}, {o})")
    src.add(f"    heap, {w} = _dict_set(heap, {r}, {o}, {k}, {x})")
    src.record(f"    eff.writes.append(({r}, {w}[0]))")
    src.record(f"    if len({w}) > 1: eff.writes.append(({r}, {w}[1]))")
    src.add("else:")
    i = src.temp()
    _list_index(r, o, k, i, src, "    ")
    src.add(f"    if type({o}[{i}]) is Ref or type({o}[{i}]) is tuple: _fail()")
    src.add(f"    _w = [*{o}]; _w[{i}] = {x}; _v = [*heap]; _v[{r}.i] = tuple(_w); heap = tuple(_v)")
    src.record(f"    eff.writes.append(({r}, {i}))")
    return True


def _store_field(fc: CompiledFunction, target: ast.Attribute, v: str, src: _Source) -> bool:
    """``obj.f = v``, as ``store_field`` and ``Ctx.set_field`` do for values that are not references (the
    fields of builtin objects and of threads are the closures' business: they refuse some)."""
    if any(spec.frozen for spec in getattr(fc.mc, "dataclasses", {}).values()):
        return False  # a frozen dataclass's fields: the closures raise FrozenInstanceError
    x = _value_first(v, src)
    r = reference(fc, target.value, src)
    if r is None:
        return False
    o, i = src.temp(), src.temp()
    src.add(f"{o} = heap[{r}.i]")
    _index(fc, target.attr, o, i, src, True)
    _box(x, src)
    src.add(f"if type({o}[{i}]) is Ref or type({o}[{i}]) is tuple: _fail()")
    src.add(f"_w = [*{o}]; _w[{i}] = {x}; _v = [*heap]; _v[{r}.i] = tuple(_w); heap = tuple(_v)")
    src.record(f"eff.writes.append(({r}, {i}))")
    return True


# -- statements: an emitter per shape, returning a FragmentMaker (or None: not handled) --------------------------


def assign(fc: CompiledFunction, target: ast.expr, e: ast.expr, nxt: Target, op: ast.operator | None = None
           ) -> FragmentMaker | None:
    """``x = e`` and ``x op= e`` (``op``) for a local or global ``x``, a list's element or a field; ``x = y``
    and ``x, y = y, x`` into locals copy what the values hold, references included (``_copy_locals``)."""
    src = _Source()
    if op is not None:
        sym = _BINOPS.get(type(op))
        if sym is None:
            return None
        a = value(fc, target, src) if isinstance(target, (ast.Name, ast.Subscript, ast.Attribute)) else None
        b = value(fc, e, src) if a is not None else None
        v = f"({a} {sym} {b})" if b is not None else None
        if v is not None and sym in ("+", "%"):
            # On strings: as ``_value`` checks ``+`` and ``%`` (``strings.concat``'s bound, the closures' format).
            x = src.temp()
            src.add(f"{x} = {v}")
            check = f"len({x}) > _MAX_STR" if sym == "+" else "True"
            src.add(f"if type({x}) is _STR and {check}: _fail()")
            v = x
    elif isinstance(target, ast.Tuple) and isinstance(e, ast.Tuple) and len(target.elts) == len(e.elts):
        if not _copy_locals(fc, target.elts, e.elts, src):
            return None
        return lambda: Fragment([*src.lines, f"pc = {nxt.pc}"], nxt.pc, not src.eager)
    elif _local_slot(fc, target) is not None and isinstance(e, (ast.Name, ast.Subscript, ast.Attribute)):
        if not _copy_locals(fc, [target], [e], src):
            return None
        return lambda: Fragment([*src.lines, f"pc = {nxt.pc}"], nxt.pc, not src.eager)
    else:
        v = list_pop_value(fc, e, src)
        if v is None:
            v = value(fc, e, src)
    if v is None or not _store(fc, target, v, src):
        return None
    # ``a[i] += v`` evaluates a and i twice here, once on the closures: the reads would not be theirs.
    tracked = not src.eager and not (op is not None and isinstance(target, (ast.Subscript, ast.Attribute)))
    return lambda: Fragment([*src.lines, f"pc = {nxt.pc}"], nxt.pc, tracked)


def branch(fc: CompiledFunction, test: ast.expr, nxt: Target, on_false: Target) -> FragmentMaker | None:
    """A condition step (``if``, ``while``): on to ``nxt`` when it holds, else to ``on_false``."""
    src = _Source()
    c = value(fc, test, src)
    if c is None:
        return None
    return lambda: Fragment([*src.lines, f"pc = {nxt.pc} if {c} else {on_false.pc}"], None, not src.eager,
                            (nxt.pc, on_false.pc), pure=True)


def check(fc: CompiledFunction, test: ast.expr, nxt: Target) -> FragmentMaker | None:
    """``assert test``: when it fails, the closures raise it with its message."""
    src = _Source()
    c = value(fc, test, src)
    if c is None:
        return None
    return lambda: Fragment([*src.lines, f"if not {c}: _fail()", f"pc = {nxt.pc}"], nxt.pc, not src.eager,
                            pure=True)


def jump(target: Target) -> FragmentMaker:
    return lambda: Fragment([f"pc = {target.pc}"], target.pc, pure=True)


def end_of_function() -> FragmentMaker:
    """Falling off the end of a function (returns None; the engine pops the frame)."""
    return lambda: Fragment(["pc = -1"], None, True, (-1,))


def _indented(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def range_loop(fc: CompiledFunction, target: ast.expr, args: list[ast.expr], cur: int, stop: int, body: Target,
               end: Target) -> tuple[FragmentMaker, FragmentMaker] | None:
    """``for x in range(a, b)`` (step 1): its first header (evaluates the bounds) and its next header, as the
    closures of ``StatementCompiler.stmt_For`` run them: the counter and the bound in hidden slots."""
    if not 1 <= len(args) <= 2:
        return None
    src = _Source()
    bounds = [value(fc, a, src) for a in args]
    if any(b is None for b in bounds):
        return None
    a, b = ("0", bounds[0]) if len(bounds) == 1 else bounds
    first_store, next_store = _Source(), _Source()
    first_store.n = next_store.n = 1000  # temporaries apart from the bounds'
    if not (_store(fc, target, "_lo", first_store) and _store(fc, target, "_lo", next_store)):
        return None
    clear = [f"loc[{cur}] = None", f"loc[{stop}] = None"]

    def first() -> Fragment:
        return Fragment([
            *src.lines,
            f"_lo = {a}",
            f"_hi = {b}",
            "if type(_lo) is not int or type(_hi) is not int: _fail()",
            "if _lo < _hi:",
            *_indented([f"loc[{cur}] = _lo + 1", f"loc[{stop}] = _hi", *first_store.lines, f"pc = {body.pc}"]),
            "else:",
            *_indented([*clear, f"pc = {end.pc}"]),
        ], None, not src.eager, (body.pc, end.pc))

    def following() -> Fragment:
        return Fragment([
            f"_lo = loc[{cur}]",
            f"if _lo < loc[{stop}]:",
            *_indented([f"loc[{cur}] = _lo + 1", *next_store.lines, f"pc = {body.pc}"]),
            "else:",
            *_indented([*clear, f"pc = {end.pc}"]),
        ], None, True, (body.pc, end.pc))

    return first, following


def leave_loop(cur: int, stop: int, end: Target) -> FragmentMaker:
    """``break`` out of a range loop: its hidden slots cleared."""
    return lambda: Fragment([f"loc[{cur}] = None", f"loc[{stop}] = None", f"pc = {end.pc}"], end.pc)


def join(fc: CompiledFunction, receiver: ast.expr, after: Target) -> FragmentMaker | None:
    """``t.join()`` on a started Thread (its guard, on the closures, waited for the thread to end)."""
    src = _Source()
    r = reference(fc, receiver, src)
    if r is None:
        return None
    lines = [
        *src.lines,
        f"_o = heap[{r}.i]",
        "if not _o[0].is_thread or _o[2] is None or (_o[0] is not THREAD and _user_join(_o[0])): _fail()",
        _track(f"eff.reads.append(({r}, 2))"),  # the thread's id (runtime_ops.join_op)
    ]
    return lambda: Fragment([*lines, f"pc = {after.pc}"], after.pc)


# -- guards: ``f(g, heap, threads, top, t) -> bool`` (the locals are ``top[2:]``), or raise: the closure decides

GuardSource = list[str]


def _guard_text(lines: list[str]) -> list[str]:
    """Guard lines read locals from the top frame (``top``) rather than from a ``loc`` list."""
    return [re.sub(r"loc\[(\d+)\]", lambda m: f"top[{int(m[1]) + 2}]", line)
            for line in lines if not line.endswith(TRACKED)]


def join_guard(fc: CompiledFunction, receiver: ast.expr) -> GuardSource | None:
    """May ``t.join()`` go on: has the started thread ended (``runtime_ops.join_guard``)?"""
    src = _Source()
    r = reference(fc, receiver, src)
    if r is None:
        return None
    return _guard_text([*src.lines, f"_o = heap[{r}.i]",
                        "if not _o[0].is_thread or _o[2] is None or (_o[0] is not THREAD and _user_join(_o[0])):"
                        " _fail()",
                        "return _o[2] < len(threads) and threads[_o[2]] == ()"])


def lock_method(fc: CompiledFunction, receiver: ast.expr, method: str, after: Target) -> FragmentMaker | None:
    """``m.acquire()`` and ``m.release()`` on a plain Lock (``sync.acquire``, ``sync.release``; a Lock is a
    builtin object, so no model method of that name can be meant)."""
    src = _Source()
    r = reference(fc, receiver, src)
    if r is None or method not in ("acquire", "release"):
        return None
    body = [*src.lines, f"_o = heap[{r}.i]", *_lock_change(r, method)]
    return lambda: Fragment([*body, f"pc = {after.pc}"], after.pc)


def _lock_change(r: str, method: str) -> list[str]:
    """The heap change of ``acquire`` or ``release`` on the object ``_o`` of reference ``r``: a plain Lock,
    or a Semaphore (its value down or up by one; a BoundedSemaphore past its bound is the closures', which
    raise ValueError), as ``sync.acquire`` and ``sync.release`` make it."""
    if method == "acquire":
        return ["if _o[0] is LOCK and _o[2] is None:",
                f"    _w = [*heap]; _w[{r}.i] = (LOCK, _o[1], t); heap = tuple(_w)",
                "elif _o[0] is SEMAPHORE and type(_o[2]) is int and _o[2] > 0:",
                f"    _w = [*heap]; _w[{r}.i] = (SEMAPHORE, _o[1], _o[2] - 1, *_o[3:]); heap = tuple(_w)",
                "else: _fail()",
                _track(f"eff.acquired.append({r})")]
    return ["if _o[0] is LOCK and _o[2] == t:",
            f"    _w = [*heap]; _w[{r}.i] = (LOCK, _o[1], None); heap = tuple(_w)",
            "elif _o[0] is SEMAPHORE and type(_o[2]) is int and (len(_o) == 3 or _o[2] < _o[3]):",
            f"    _w = [*heap]; _w[{r}.i] = (SEMAPHORE, _o[1], _o[2] + 1, *_o[3:]); heap = tuple(_w)",
            "else: _fail()",
            _track(f"eff.released.append({r})")]


def acquire_into(fc: CompiledFunction, receiver: ast.expr, result: int | None, after: Target
                 ) -> FragmentMaker | None:
    """``got = s.acquire()`` (no timeout, blocking) on a Semaphore, as ``lang/timeouts.compile_acquire`` runs
    it: the acquire, then True into the local ``result`` (stored as the closures store it, with no walk)."""
    src = _Source()
    r = reference(fc, receiver, src)
    if r is None:
        return None
    body = [*src.lines, f"_o = heap[{r}.i]", "if _o[0] is not SEMAPHORE: _fail()", *_lock_change(r, "acquire")]
    if result is not None:
        body.append(f"loc[{result}] = TRUE")
    return lambda: Fragment([*body, f"pc = {after.pc}"], after.pc)


def lock_method_guard(fc: CompiledFunction, receiver: ast.expr) -> GuardSource | None:
    """May ``m.acquire()`` or ``with m:`` take a plain Lock now (``sync.can_acquire``)?"""
    src = _Source()
    r = reference(fc, receiver, src)
    if r is None:
        return None
    return _guard_text([*src.lines, f"_o = heap[{r}.i]",
                        "if _o[0] is not LOCK and (_o[0] is not SEMAPHORE or type(_o[2]) is not int): _fail()",
                        # One return, last: ``_x{k}`` inlines the guard's lines before its own test.
                        "return (_o[2] is None) if _o[0] is LOCK else (_o[2] > 0)"])


def release_lock(slot: int, after: Target) -> FragmentMaker:
    """``with m:`` exit: release the plain Lock the entry kept in ``slot`` (``sync.release``)."""
    lines = [
        f"_r = loc[{slot}]",
        "if type(_r) is not Ref: _fail()",
        "_i = _r.i",
        "_o = heap[_i]",
        "if _o[0] is not LOCK or _o[2] != t: _fail()",
        f"loc[{slot}] = None",
        "_w = [*heap]; _w[_i] = (LOCK, _o[1], None); heap = tuple(_w)",
        _track("eff.released.append(_r)"),
    ]
    return lambda: Fragment([*lines, f"pc = {after.pc}"], after.pc)


def module_constants(tree: ast.Module, prefix: list[ast.stmt]) -> dict[str, int | bool]:
    """The module's constants: names bound exactly once in the whole file, by a statement ``K = literal`` (an
    int of 64 bits or a boolean) of the module's code that runs before it may start a thread (``prefix``).
    Every state an invariant is evaluated in comes after that prefix (``TransitionSystem.initial``), so there
    the global holds the literal. Any other binding of the name anywhere (a local of the same name, ``global
    K``, ``del``, an import, a ``def``, a loop or handler variable) disqualifies it: the count is
    conservative."""
    bound: dict[str, int] = {}

    def bind(name: str | None) -> None:
        if name is not None:
            bound[name] = bound.get(name, 0) + 1

    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            bind(n.id)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            for name in n.names:
                bind(name)
                bind(name)
        elif isinstance(n, ast.alias):
            bind((n.asname or n.name).split(".")[0])
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(n.name)
        elif isinstance(n, ast.ExceptHandler):
            bind(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)):
            bind(n.name)
        elif isinstance(n, ast.MatchMapping):
            bind(n.rest)
        elif isinstance(n, ast.arg):
            bind(n.arg)
    out: dict[str, int | bool] = {}
    for st in prefix:
        if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                and isinstance(st.value, ast.Constant) and _literal(st.value.value) is not None
                and st.value.value is not None and bound.get(st.targets[0].id) == 1):
            out[st.targets[0].id] = st.value.value
    return out


class _Fold(ast.NodeTransformer):
    """An invariant's expression with the module's constants in place of their names, and the products of
    two ints folded (``*`` checks sizes on the closures: a folded product is one that fits in 64 bits)."""

    def __init__(self, fc: CompiledFunction, constants: dict[str, int | bool]) -> None:
        self.fc = fc
        self.constants = constants

    def visit_Name(self, e: ast.Name) -> ast.expr:
        where = _variable(self.fc, e.id)
        if e.id in self.constants and where is not None and where[0] == "g":
            return ast.copy_location(ast.Constant(self.constants[e.id]), e)
        return e

    def visit_BinOp(self, e: ast.BinOp) -> ast.expr:
        self.generic_visit(e)
        a, b = e.left, e.right
        if (isinstance(e.op, ast.Mult) and isinstance(a, ast.Constant) and isinstance(b, ast.Constant)
                and type(a.value) is int and type(b.value) is int and _literal(a.value * b.value) is not None):
            return ast.copy_location(ast.Constant(a.value * b.value), e)
        return e


def expression_function(fc: CompiledFunction, body: list[ast.stmt]) -> Callable[[tuple, tuple], Any] | None:
    """A function without parameters whose body is ``return e`` (an ``@invariant``, typically) as a generated
    ``f(g, heap) -> value`` of ``e``, evaluated without a frame or a Ctx, the module's constants folded into
    it (``module_constants``); None for other bodies. Like a fast
    step, it may raise where the closures would give a value or an error: the caller then calls the
    function on the closures."""
    if fc.code.params or len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    src = _Source()
    constants = getattr(fc.mc, "constants", None)
    e = body[0].value
    if constants:
        e = _Fold(fc, constants).visit(copy.deepcopy(e))  # the compiler keeps the original
    v = value(fc, e, src)
    if v is None or any("loc[" in line for line in src.lines):
        return None
    lines = [line for line in src.lines if not line.endswith(TRACKED)]
    text = "\n".join(["def _value(g, heap):", *_indented(lines), f"    return {v}", ""])
    namespace = dict(HELPERS)
    for name, ident in fc.fast_names.items():
        namespace[ident] = name  # a field's name, as a value
    if not _run_source(text, namespace):
        return None
    fc.code.fast_source += text
    return namespace["_value"]  # type: ignore[no-any-return]


# -- assembling a function's fast functions ---------------------------------------------------------------------

# How many glue nodes one fast function runs in line after its own (the engine's loop does the rest).
_INLINE = 8


def _inlined(code: Code, fragments: list[Fragment | None], k: int, tracked: bool) -> tuple[list[str], Fragment]:
    """Node k's lines followed by those of the glue its constant successor leads to; and the last fragment."""
    frag = fragments[k]
    assert frag is not None
    body = list(frag.lines)
    seen = {k}
    last = frag
    nxt = frag.next_pc
    while nxt is not None and nxt not in seen and len(seen) <= _INLINE and 0 <= nxt < len(fragments):
        node, more = code.nodes[nxt], fragments[nxt]
        if node.costly or more is None or (tracked and not more.tracked):
            break
        body.extend(more.lines)
        seen.add(nxt)
        last = more
        nxt = more.next_pc
    return body, last


def function_source(code: Code, fragments: list[Fragment | None], tracked: bool = False) -> str:
    """The Python source of ``code``'s fast functions: ``_n{k}`` for every node ``k`` with a fragment,
    followed in line by the glue its constant successor leads to; ``tracked``: the variants ``_t{k}`` that
    also record the step's Effect in ``eff``, for the fragments that can."""
    out: list[str] = []
    for k, frag in enumerate(fragments):
        if frag is None or (tracked and not frag.tracked):
            continue
        body, _ = _inlined(code, fragments, k, tracked)
        if tracked:
            out.append(f"def _t{k}(g, heap, loc, t, eff):")
            body = [line.removesuffix(TRACKED) for line in body]
        else:
            out.append(f"def _n{k}(g, heap, loc, t):")
            body = [line for line in body if not line.endswith(TRACKED)]
        out.extend(f"    {line}" for line in body)
        out.append("    return g, heap, pc")
        out.append("")
    return "\n".join(out)


def step_source(code: Code, fragments: list[Fragment | None],
                guards: list[GuardSource | None] | None = None, callees: dict[str, Any] | None = None) -> str:
    """Whole steps, ``_s{k}(g, heap, threads, t, th, top) -> state``, for the costly nodes whose step ends,
    whatever path it takes, at a costly node or at the frame's return: the successor state is built here,
    with no loop over glue and no second call (``semantics/system.py`` runs them when it can). With the
    node's generated guard, also ``_x{k}``: the guard and the step in one function, None when the guard is
    false (the plain full search's one call per thread and state)."""
    out: list[str] = []
    for k, frag in enumerate(fragments):
        # A thread rests at costly nodes, and starts at its function's entry, costly or not (under access
        # granularity the first step runs the local work up to the first access).
        if frag is None or not (code.nodes[k].costly or k == code.entry):
            continue
        whole = _whole_step(code, fragments, k)
        if whole is None:
            continue
        body, ends = whole
        step = _step_body(code, body, -1 in ends, -2 in ends, callees)
        out.append(f"def _s{k}(g, heap, threads, t, th, top):")
        out.extend(step)
        out.append("")
        guard = guards[k] if guards is not None and k < len(guards) else None
        if code.nodes[k].guard is not None and guard is not None and guard[-1].startswith("return "):
            out.append(f"def _x{k}(g, heap, threads, t, th, top):")
            out.extend(f"    {line}" for line in guard[:-1])
            out.append(f"    if not ({guard[-1].removeprefix('return ')}): return None")
            n = _shared_prefix(guard[:-1], body)
            out.extend(step if not n else _step_body(code, body[n:], -1 in ends, -2 in ends))
            out.append("")
    return "\n".join(out)


def _shared_prefix(guard: list[str], body: list[str]) -> int:
    """How many of the step's first lines the guard ran already, the same text over the same state (a guard
    writes nothing, and reads locals from ``top`` where the step reads them from ``loc``): ``with forks[a]:``
    finds ``forks[a]`` once. Cut only between top-level statements, never inside a block."""
    n = cut = 0
    for a, b in zip(guard, body, strict=False):
        if a != _guard_text([b])[0]:
            break
        n += 1
        if n < len(body) and not body[n].startswith(" ") and not b.endswith(":"):
            cut = n
    return cut


def return_source(code: Code, fragments: list[Fragment | None], callees: dict[str, Any] | None = None) -> str:
    """``_r{k}(g, heap, threads, t, th, top, _rv) -> state``: the rest of a step whose callee returned ``_rv``
    into the continuation ``k`` of a call (``codegen_calls.continuation``, ``branch``, ``pass_on``: a fragment
    that takes the value, ``_rv = loc.pop()``), the caller's frame ``top`` on top of ``th``: a whole step from
    there, as ``semantics/system.drive_frames`` goes on after a return, for the callee's whole steps to hand
    over to (``Code.fast_return``). Popping the callee's frame may drop references, and the value may be one:
    the globals must reach every object (``_cover``), as ``drive_frames``' callers ask."""
    out: list[str] = []
    for k, frag in enumerate(fragments):
        if frag is None or code.nodes[k].costly or frag.lines[:1] != [_TAKE_VALUE]:
            continue  # a costly continuation would keep the value in the frame: the closures' (``drive_frames``)
        whole = _whole_step(code, fragments, k)
        if whole is None or whole[0][:1] != [_TAKE_VALUE] or any(_SAME in line for line in whole[0]):
            continue  # (a path back to k would be no self-loop here: the callee's frame is gone)
        body, ends = whole
        out.append(f"def _r{k}(g, heap, threads, t, th, top, _rv):")
        out.append("    if not _cover(g, heap): _fail()")
        out.extend(_step_body(code, body[1:], -1 in ends, -2 in ends, callees))
        out.append("")
    return "\n".join(out)


_TAKE_VALUE = "_rv = loc.pop()"  # the first line of a call's continuation (lang/codegen_calls.py)


# A whole step runs at most this many glue nodes in line, counting each copy (the paths of a branch are
# written out one after the other, so a part two paths share is written twice), and nests at most this many
# branches (CPython bounds a source's indentation).
_STEP_NODES = 64
_STEP_DEPTH = 12


def _whole_step(code: Code, fragments: list[Fragment | None], k: int) -> tuple[list[str], set[int]] | None:
    """The untracked lines of costly node k's whole step and every pc it may end at (costly nodes, -1), or
    None when the glue after it has no fragment (a path of a branch without one falls back, where it is
    taken), ends with a pc that is not a node, loops, or is too long. Each path is written out: where a
    fragment may go to several glue nodes, ``if pc == j:`` runs the glue from j (as ``_run_fast``'s loop
    would, node by node), so that a busy-wait's test (``while level[a] >= i and ...``, several nodes under
    access granularity) is one call, not a trip through the driver per node. A ``with indivisible():`` block
    (``pc = (1, j)`` ... ``pc = (-1, j)``) is written out too, on through its costly nodes as ``_run_fast``
    goes (the library's ``SimpleQueue.put``), where none of them has a guard and no call or return is inside.
    A path of pure fragments (``Fragment.pure``: a busy wait's test that holds, the jump back) that comes back
    to node k is a self-loop: it returns ``SAME`` at once, with no frame or threads built (the successor is
    the state itself: ``TransitionSystem.successors`` gives the state, and the plain search skips it)."""
    budget = [_STEP_NODES]
    ends: set[int] = set()  # -2: a call

    def run(j: int, path: frozenset[int], depth: int, atomic: int, pure: bool) -> list[str] | None:
        frag = fragments[j]
        assert frag is not None
        pure = pure and frag.pure
        out = [line for line in frag.lines if not line.endswith(TRACKED)]
        targets = frag.ends()
        m = _ATOMIC.match(out[-1]) if not targets and not frag.call and out else None
        if m is not None:
            atomic += int(m[1])
            if atomic < 0:
                return None
            targets = (int(m[2]),)
            out[-1] = f"pc = {m[2]}"
        if not targets:
            if not frag.call or atomic:
                return None
            ends.add(-2)
            return out
        glue = []
        for e in targets:
            if e >= len(fragments):
                return None
            if e < 0 or (code.nodes[e].costly and not atomic):
                if atomic:
                    return None  # a return inside the block: the caller runs on inside it (the driver's)
                ends.add(e)
            elif code.nodes[e].costly and code.nodes[e].guard is not None:
                return None  # inside the block only where the guard holds: the driver's
            else:
                glue.append(e)
        # Back at node k having written nothing: the state is unchanged (its pc is k's again).
        same = pure and k in targets and k not in glue
        if not glue:
            if same and len(targets) == 1:
                return [*out[:-1], _SAME] if _PC.match(out[-1]) else [*out, _SAME]  # ``pc = k``: no use now
            if same:
                out.append(f"if pc == {k}: {_SAME}")
            return out
        if len(targets) == 1:
            more = enter(glue[0], path, depth, atomic, pure)
            return None if more is None else out + more
        if depth >= _STEP_DEPTH:
            return None
        if same:
            out.append(f"if pc == {k}: {_SAME}")
        for n, e in enumerate(glue):
            # A branch into glue with no generated form (``if not got: raise Empty``) gives up on that path
            # only: the general driver and the closures take it.
            more = ["_fail()"] if fragments[e] is None else enter(e, path, depth + 1, atomic, pure)
            if more is None:
                return None
            out.append(f"{'elif' if n else 'if'} pc == {e}:")
            out.extend(f"    {line}" for line in more)
        return out

    def enter(j: int, path: frozenset[int], depth: int, atomic: int, pure: bool) -> list[str] | None:
        if j in path or fragments[j] is None or budget[0] <= 0:
            return None
        budget[0] -= 1
        return run(j, path | {j}, depth, atomic, pure)

    lines = run(k, frozenset((k,)), 0, 0, True)
    return None if lines is None else (_simplified(lines), ends)


# A whole step's self-loop (``_whole_step``): the successor is the state it ran from (``ir.program.SAME``).
_SAME = "return SAME"
_ATOMIC = re.compile(r"pc = \((-?1), (\d+)\)$")  # ``codegen_sync.indivisible``'s entry and exit
_LITERAL = re.compile(r"( *)(_\d+) = (None|-?\d+)$")
_PC = re.compile(r"( *)pc = -?\d+$")
_PC_NAME = re.compile(r"\bpc\b")


def _simplified(lines: list[str]) -> list[str]:
    """The lines without what is a no-op where it stands, as the emitters write it one fragment at a time: a
    boolean's boxing or an int's unboxing right after the temporary was set to None or an int literal, and a
    constant pc set again on the next line (one glue node's end, the next one's start)."""
    out: list[str] = []
    for line in lines:
        # Only these two lines can go: the previous line is matched for them alone (a step has thousands).
        if out and line.lstrip().startswith("if type("):
            m = _LITERAL.match(out[-1])
            if m is not None:
                ind, x = m[1], m[2]
                if line in (f"{ind}if type({x}) is bool: {x} = TRUE if {x} else FALSE",
                            f"{ind}if type({x}) is not int: {x} = {x}.value if type({x}) is Bool else _val({x})"):
                    continue
        out.append(line)
    dead = _overwritten(out)
    return [line for i, line in enumerate(out) if i not in dead]


def _overwritten(lines: list[str]) -> set[int]:
    """The lines ``pc = k`` whose pc is set again before anything reads it: the next line that names pc, in
    the line's block (no line indented less comes first), sets it from values that are not pc. One backward
    pass, which knows for each line the nearest later line that names pc and, for each indentation, the
    nearest later line so indented."""
    dead: set[int] = set()
    names_pc = -1  # the nearest later line that names pc, or -1
    at_indent: dict[int, int] = {}  # indentation -> the nearest later line with it
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        ind = len(line) - len(line.lstrip())
        if "pc" in line and _PC.match(line) and names_pc >= 0:
            out = min((k for d, k in at_indent.items() if d < ind), default=len(lines))
            nxt = lines[names_pc]
            rest = nxt[ind:]
            if names_pc < out and len(nxt) - len(nxt.lstrip()) == ind and rest.startswith("pc = ") \
                    and _PC_NAME.search(rest[5:]) is None:
                dead.add(i)
        at_indent[ind] = i
        if "pc" in line and _PC_NAME.search(line):
            names_pc = i
    return dead


def _step_body(code: Code, body: list[str], returns: bool, calls: bool = False,
               callees: dict[str, Any] | None = None) -> list[str]:
    """The indented body of a whole step: the fragment's lines, then the successor state. Where the lines use
    the locals only as ``loc[i]``, the locals are plain variables (``_l{i}``) instead of a list: no list to
    build and copy per step. A small frame is unpacked and packed whole; a wide one (access granularity's
    temporaries: a busy-wait's frame holds dozens) has only the locals the lines name taken from it and put
    back into a copy. A step that ends with a call pushes the callee's frame,
    as ``semantics/system._run_fast`` does, where the callee's first node is costly (the step ends there)."""
    kept = returns and any(_RETURNED.match(line) for line in body)
    if kept:
        # The value a ``return`` appends to the frame's locals for the driver (``codegen_calls``) is kept in a
        # variable instead: the locals stay a fixed set of variables, and the caller's continuation takes it.
        body = ["_ret = None", *(_RETURNED.sub(r"\1_ret = \2", line) for line in body)]
    names = _local_variables(body, code.nlocals)
    fix = ""  # a line that puts pc into a frame copied as a list, before it becomes the frame
    back = ""  # the line that puts a wide frame's locals back, into that copy
    if names is None:
        out = ["loc = list(top[2:])", *body]
        values, frame = "loc", "(_code, pc, *loc)"
    elif len(names) <= _WHOLE_FRAME:
        out = [f"_c, pc, {', '.join(names)}, = top" if names else "pc = top[1]"]
        out.extend(re.sub(r"\bloc\[(\d+)\]", lambda m: f"_l{m[1]}", line) for line in body)
        values = f"({', '.join(names)},)" if names else "()"
        frame = f"(_code, pc, {', '.join(names)})" if names else "(_code, pc)"
    else:
        # Every local the lines name is put back, written or not: no reading of the lines to get wrong.
        used = sorted({int(i) for i in re.findall(r"\bloc\[(\d+)\]", "\n".join(body))})
        out = [f"_l{i} = top[{i + 2}]" for i in used]
        out.extend(re.sub(r"\bloc\[(\d+)\]", lambda m: f"_l{m[1]}", line) for line in body)
        if used:
            back = "_f = [*top]; " + "; ".join(f"_f[{i + 2}] = _l{i}" for i in used)
            out.append(back)
            values, frame, fix = "_f[2:]", "tuple(_f)", "_f[1] = pc"
        else:
            values, frame = "top[2:]", "(_code, pc, *top[2:])"
    if calls:
        out = _static_pushes(out, frame, "; ".join(x for x in (back, fix) if x), callees or {})
    if calls and any(_CALL.match(line) for line in out):
        # As ``_run_fast``: a frame pushed (the closures' depth bound checked) may carry references into the
        # frames: no walk only where the globals reach every object.
        out.append("if type(pc) is tuple:")
        out.append("    _k, _a, pc = pc")
        if fix:
            out.append(f"    {fix}")
        out.append("    if len(th) > 201: _fail()")
        out.append("    if not _k.nodes[_k.entry].costly:")
        out.append(f"        return _resume(g, heap, threads, t, (*th[:-1], {frame}), _k, _locals(_k, _a), _k.entry)")
        out.append("    if not _cover(g, heap): _fail()")
        out.append(f"    _w = [*threads]; _w[t] = (*th[:-1], {frame}, _frame(_k, _a))")
        out.append("    return (g, heap, tuple(_w))")
    if returns:
        # The frame returns: only a thread's last frame (a return to a caller passes a value, on the
        # closures), and only if it held no reference, or the globals reach every object (dropping a
        # reference may otherwise change the canonical heap).
        out.append("if pc < 0:")
        # Into the caller's continuation, written as a step of its own (``return_source``), where it has one.
        rv = "_ret" if kept else "None"
        out.append("    if len(th) > 1:")
        out.append("        _cf = th[-2]; _rf = _cf[0].fast_return")
        out.append("        if _rf:")
        out.append("            _rf = _rf[_cf[1]]")
        out.append(f"            if _rf is not None: return _rf(g, heap, threads, t, th[:-1], _cf, {rv})")
        frame_values = f"[*{values}, _ret]" if kept else f"[*{values}]"
        out.append(f"        return _resume(g, heap, threads, t, th[:-1], _code, {frame_values}, pc)")
        out.append(f"    for _v in {values}:")
        out.append("        if type(_v) is Ref or type(_v) is tuple:")
        out.append("            if not _cover(g, heap): _fail()")
        out.append("            break")
        out.append("    _w = [*threads]; _w[t] = (); return (g, heap, tuple(_w))")
    if fix:
        out.append(fix)
    # A list copy rebuilds the threads with half the allocations of slicing around t.
    out.append(f"_w = [*threads]; _w[t] = ({frame},) if len(th) == 1 else (*th[:-1], {frame})")
    out.append("return (g, heap, tuple(_w))")
    return [f"    {line}" for line in out]


# Frames up to this many locals are unpacked whole in a whole step (``_step_body``).
_WHOLE_FRAME = 8


_RETURNED = re.compile(r"( *)loc\.append\((.*)\)$")  # ``return e``'s value to the caller (codegen_calls)
# A call's pc (``codegen_calls.call``): of a callee known when the text is written (``_a`` names its Code),
# or looked up when the step runs (``_k``).
_STATIC_CALL = re.compile(r"( *)pc = \((_a\d+), \[(.*)\], (\d+)\)$")
_CALL = re.compile(r" *pc = \(_")


def _static_pushes(lines: list[str], frame: str, pre: str, callees: dict[str, Any]) -> list[str]:
    """The lines with each call of a known, compiled callee done in line, as ``drive_frames`` does it: its
    frame pushed, the arguments then its blank locals as literals (``Code.new_frame_locals``), where its first
    node ends the step; else handed over to ``codegen_calls._resume``, which runs the callee's local work.
    ``pre`` completes the caller's frame where it is a copy (a wide frame). Another call keeps its pc, for
    the general ending (``_step_body``)."""
    out: list[str] = []
    for line in lines:
        m = _STATIC_CALL.match(line)
        callee = callees.get(m[2]) if m is not None else None
        if m is None or callee is None or not callee.nodes or callee.entry != 0:
            out.append(line)
            continue
        ind, k, args, ret = m[1], m[2], m[3], m[4]
        blank = ["UNBOUND" if v is UNBOUND else "None"
                 for v in callee.new_frame_locals([None] * len(callee.params))[len(callee.params):]]
        pushed = ", ".join(x for x in (k, "0", args, *blank) if x)
        out.extend(f"{ind}{x}" for x in (f"pc = {ret}", *([pre] if pre else []), "if len(th) > 201: _fail()"))
        if callee.nodes[0].costly:
            # As ``Ctx.push`` marks it (an argument that is a reference or a tuple): the closures then walk the
            # heap unless the globals reach every object, and a walk renumbers more than the new frame's
            # references where an earlier step did not walk (a reference kept in a hidden local by ``with
            # self.m:``).
            moved = [x for x in args.split(", ") if re.fullmatch(r"_\d+", x)]
            if moved:
                test = " or ".join(f"type({x}) is Ref or type({x}) is tuple" for x in moved)
                out.append(f"{ind}if ({test}) and not _cover(g, heap): _fail()")
            out.append(f"{ind}_w = [*threads]; _w[t] = ({frame}, ({pushed})) if len(th) == 1 else "
                       f"(*th[:-1], {frame}, ({pushed})); return (g, heap, tuple(_w))")
        else:
            out.append(f"{ind}return _resume(g, heap, threads, t, (*th[:-1], {frame}), {k}, "
                       f"[{', '.join(x for x in (args, *blank) if x)}], 0)")
    return out


def _local_variables(body: list[str], n: int) -> list[str] | None:
    """``_l0``... for the ``n`` locals, if every use of ``loc`` in ``body`` is ``loc[i]`` with a literal i (and
    no line that uses one holds a string literal, which a rewrite must not touch); else None."""
    for line in body:
        if "loc" not in line:
            continue
        if "'" in line or '"' in line or re.search(r"\bloc\b(?!\[\d+\])", line):
            return None
    return [f"_l{i}" for i in range(n)]


def guard_source(guards: list[GuardSource | None]) -> str:
    """``_g{k}(g, heap, threads, top, t)``: the guards that have a generated form."""
    out: list[str] = []
    for k, lines in enumerate(guards):
        if lines is None:
            continue
        out.append(f"def _g{k}(g, heap, threads, top, t):")
        out.extend(f"    {line}" for line in lines)
        out.append("")
    return "\n".join(out)


def _run_source(source: str, namespace: dict[str, Any]) -> bool:
    """Compile and run generated source into ``namespace``; False (the code keeps to its closures) if CPython
    refuses it for its size or shape, which the emitters try to avoid but cannot bound for every model."""
    # In chunks of functions: CPython's compiler holds a whole source's syntax tree at once, hundreds of MB
    # for a function of thousands of statements compiled in one piece.
    blocks = re.split(r"\n(?=def )", source)
    try:
        for i in range(0, len(blocks), _CHUNK):
            chunk = "\n".join(blocks[i:i + _CHUNK])
            compiled = _COMPILED.get(chunk)
            if compiled is None:
                compiled = compile(chunk, "<movers fast path>", "exec")
                if len(_COMPILED) >= _COMPILED_MAX:
                    _COMPILED.clear()
                _COMPILED[chunk] = compiled
            exec(compiled, namespace)  # noqa: S102  (module docstring)
    except (SyntaxError, RecursionError, MemoryError, ValueError, OverflowError):
        return False
    return True


_CHUNK = 200  # generated functions compiled together
# Compiled chunks by their text. The text names nothing of the model (the module docstring: what it binds is
# in the namespace), so one text is one code object: the compiler's second pass over a model, the modelled
# library's classes in every model that uses them, and a model checked again in the same process
# (benchmarks, tests) compile each once.
_COMPILED: dict[str, Any] = {}
_COMPILED_MAX = 4096


_deferred = threading.local()  # ``jobs``: the ``attach`` calls waiting for the module to be compiled


@contextmanager
def deferred(held: list[Any] | None = None) -> Iterator[None]:
    """Hold every ``attach`` until the block ends, then run them: a call's whole step is written once its
    callee is compiled (its frame's blank locals are literals in the text), whatever order the functions are
    compiled in. A block that raises attaches nothing (the compilation failed). With ``held``, the held calls
    are left in it instead, for the caller to run (``attach(*job)``) if it keeps the program: the compiler's
    first pass at access granularity is often compiled again (``compiler.compile_model``)."""
    outer = getattr(_deferred, "jobs", None)
    jobs: list[Any] = [] if held is None else held
    _deferred.jobs = jobs
    try:
        yield
    finally:
        _deferred.jobs = outer
    if held is None:
        for job in jobs:
            attach(*job)


def own_stack_only(source: str, name: str) -> bool:
    """Whether the generated function ``name`` of ``source`` reads no thread's stack but its own (``th``,
    ``top``): the word ``threads`` appears in it only in its signature and where it copies the threads to
    replace thread t's stack (``[*threads]``). Then no other thread's stack is read (a ``join``'s guard,
    ``is_alive``), and no driver is reached that could read one (``_resume``, a return handed to the caller's
    code through ``_rf``): every helper the text may name gets the threads only as an argument, so the text
    shows it. The plain search's transition cache rests on this (``Node.fast_local``)."""
    start = source.find(f"def {name}(g, heap, threads, t, th, top):\n")
    if start < 0:
        return False
    end = source.find("\ndef ", start)
    body = source[start:end if end >= 0 else len(source)].split("\n", 1)[1]
    return "threads" not in body.replace("[*threads]", "")


def attach(code: Code, fragments: list[Fragment | None], guards: list[GuardSource | None],
           names: dict[str, str] | None = None) -> None:
    """Generate, compile and attach (``Node.fast``, ``fast_tracked``, ``fast_step``, ``fast_guard``) the fast
    functions of ``code``."""
    pending = getattr(_deferred, "jobs", None)
    if pending is not None:
        pending.append((code, fragments, guards, names))
        return
    # The Codes the text names (a call's callee), by identifier: what a step knows of its callee's frame.
    callees = {ident: obj for obj, ident in (names or {}).items() if type(obj) is type(code)}
    source = "\n".join(part for part in (
        function_source(code, fragments), function_source(code, fragments, tracked=True),
        step_source(code, fragments, guards, callees), return_source(code, fragments, callees),
        guard_source(guards)) if part)
    if not source:
        return
    namespace = dict(HELPERS, _code=code)  # the Code object itself, not its name
    for name, ident in (names or {}).items():
        namespace[ident] = name  # a field's name, as a value
    # The text is this module's own (see the module docstring): no model text reaches it.
    if not _run_source(source, namespace):
        return
    for k, frag in enumerate(fragments):
        if frag is not None:
            node = code.nodes[k]
            node.fast = namespace[f"_n{k}"]
            node.fast_tracked = namespace.get(f"_t{k}")
            node.fast_step = namespace.get(f"_s{k}")
            node.fast_succ = namespace.get(f"_x{k}")
            one_call = f"_x{k}" if node.fast_succ is not None else f"_s{k}" if node.fast_step is not None else None
            node.fast_local = one_call is not None and own_stack_only(source, one_call)
    for k, g in enumerate(guards):
        if g is not None:
            code.nodes[k].fast_guard = namespace[f"_g{k}"]
    returns = tuple(namespace.get(f"_r{k}") for k in range(len(code.nodes)))
    code.fast_return = returns if any(returns) else ()
    code.fast_source = source + code.fast_source


__all__ = ["Fallback", "Fragment", "FragmentMaker", "HELPERS", "attach", "expression_function", "function_source",
           "own_stack_only"]
