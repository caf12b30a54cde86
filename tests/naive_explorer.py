"""A deliberately naive explicit-state explorer for the models that ``tests/strategies.py`` generates.

It is a test oracle independent of ``src/movers``: it parses a model with ``ast``, turns each thread function
into a flat list of instructions, and explores every interleaving, evaluating expressions with ``eval`` on the
AST of the model. It is slow and simple on purpose; it exists to say which kinds of violation are reachable in
a small model and how big its state space is. Its states are represented differently from the checker's (loop
counters, lock owners, no heap), but for the models it supports the two representations are in one-to-one
correspondence, so when neither search finds a violation the state counts must be equal: that checks the
checker's notion of state identity and of what one step is. It keeps the *types* of values in its keys
(``typed``): ``True`` and ``1`` are different values of the language even though Python's ``1 == True`` and
``hash(1) == hash(True)``.

Two granularities (what one atomic step is):

- ``"statement"``: one instruction per statement, each instruction one step (docs/language.md section 8 as
  the papers have it).
- ``"access"`` (the default, as in movers): a step performs at most one access to shared memory (a global
  that some function assigns, a field some function assigns, an element of a list when some function writes
  an element) or one synchronisation. A statement with two or more accesses is split, in Python's order of
  evaluation, into *read* instructions that store each access's value into a pending temporary (``_vN``, a
  local while it is live) and a final instruction; when the final instruction writes shared memory every read
  is split off, otherwise the last read stays in it. ``a and b``/``a or b``/``x if c else y`` whose later
  operands access memory become conditional jumps, so that a later operand is read only when Python reads it.
  A temporary disappears in the instruction that uses it last. An instruction is *costly* when it accesses
  shared memory, synchronises or chooses; the others are *glue*: a step runs the instruction at the thread's
  pc, then every glue instruction after it, and stops before the next costly one (so a thread rests only at a
  costly instruction, at its entry, or at its end).

Supported: module-level ``name = value`` (ints, bools, None, tuples of them), ``name = [value, ...]``,
``name = Lock()``, ``name = Cls()`` for a class whose ``__init__`` only assigns constants to ``self``
fields, functions, and ``Thread(target=f, args=(...)).start()``; in functions: ``global``, ``pass``,
assignments (a whole right-hand side may be ``choose(e1, e2, ...)``) and augmented assignments to names,
array elements and fields of module-level objects, ``if``/``else``, ``while``, ``for v in range(n)`` (n a constant;
both loops with ``else`` blocks and ``break``, not out of a ``with`` or ``try`` block),
``with lock:`` (also ``with lock as got:``, ``got`` a local that is ``True``), ``lock.acquire()``,
``lock.release()``, ``if lock.acquire(blocking=False):`` (a try-lock: one
step that takes the lock when it is free, else goes to the ``else`` branch), ``assert``, ``wait_until(c)``,
``assume(c)``.
Plain Python too: ``import threading``, ``threading.Lock()``, ``t = threading.Thread(target=f, args=(...))``
and ``t.start()``; the module's code after its starts (from the first statement that neither makes nor starts a
thread) is one more thread, after the started ones (docs/language.md section 2, "The main thread"), with
``t.join()`` (blocks until thread ``t`` has terminated) and the module's names as its globals.
Dicts: module-level ``d = {k: v, ...}`` (kept as its (key, value) pairs in insertion order) with ``d[k]``,
``d[k] = e``, ``d[k] += e``, ``k in d``, ``d.get(k, v)``, ``len(d)``, ``not d`` and ``d.pop(k, v)`` (also as a
statement), each one access when some function writes an element or pops (docs/language.md section 4.9); a
missing key is a "runtime-error". (A bare ``d`` as a condition is not an access here: write ``not d`` or
``len(d)``.)
Sets and lists (sections 4.3, 4.10): module-level ``s = {v, ...}`` / ``set()`` (kept sorted, as movers keeps a
set) and lists, with ``s.add``, ``s.discard``, ``s.remove``, ``a.insert``, ``a.remove``, ``a.extend``,
``a.index``, ``a.count``, ``a.append``, ``a.pop``, ``k in s``, ``len(s)``, ``a == [...]`` (each one access) and
``del d[k]``, ``del a[i]`` (one access each; ``KeyError``, ``IndexError``, ``ValueError`` as CPython raises them),
also as statements. ``len(x)`` of anything is an access in a model where a length may change, as in movers.
Locals: ``del t`` (local work; reading ``t`` again raises ``UnboundLocalError``), and local lists made by
comprehensions over a range or, when no function writes an element, over a local list (local work: a
comprehension that reads shared memory is refused).
Exceptions (section 5.1): ``try``/``except E:`` / ``except (E1, E2):`` (built-in classes and the model's, ``class
Stop(Exception): pass`` and subclasses of those; no ``as``, no bare ``except``) / ``else`` / ``finally``, ``raise
E(constants...)``, ``with lock:`` left by an exception (its release a step, then the exception goes on). Raising,
entering and leaving a handler and a finally block are local work; while a handler or a finally block on the way
out of an exception runs, the exception (its class and args) is in the frame (``#exc``), as in CPython; a failed
``assert`` inside a ``try`` whose clauses catch ``AssertionError`` raises it. An exception that no except clause
of the function catches ends the thread where it is raised (the finally blocks and ``with`` releases it would
pass through cannot change that): a "runtime-error".
Thread targets: ``def f(a, *rest)`` (``rest`` the tuple of the arguments past ``a``),
``Thread(target=lambda: f(c, ...))`` (the thread of ``f``, entered by a call that is a step of
its own from the thread's entry) and ``Thread(target=make(c, ...))`` for ``def make(n): def run(): ...; return
run`` (``run`` with ``make``'s parameters as its first ones: a captured value that never changes).
Context managers (section 6.4): ``with o as name:`` / ``with o:`` for a module-level object of a class with
``__enter__`` and ``__exit__``, their bodies inlined (``self`` is ``o``, ``return e`` at the end of
``__enter__`` binds ``name``); ``__exit__`` also runs when an exception leaves the block, and never swallows
it. The inlined statements are steps of their own, where movers makes calls part of their statement's step:
only verdicts compare.
Objects: ``@dataclass`` classes of annotated fields with constant defaults, made with constant arguments.
Deques (section 4.11): module-level ``q = deque([v, ...])`` (``from collections import deque``, or
``collections.deque``), kept as its items left to right, with ``append``, ``appendleft``, ``pop``, ``popleft``,
``count``, ``q[i]``, ``x in q``, ``len(q)`` and its truth as a condition (``if q:``, ``not q``), each one access
(``IndexError`` as CPython raises it). ``list(c)``, ``sorted(c)``, ``sum(c)``... of a container are one access.
Queues: ``q = queue.Queue()`` / ``queue.Queue(maxsize)`` with ``q.put(v)`` (blocks while full), ``t = q.get()``
(blocks while empty), ``put_nowait``, ``get_nowait`` (``queue.Full``, ``queue.Empty``), ``qsize``, ``empty``,
``full``, ``task_done`` (a step that changes nothing: the count of unfinished tasks is not kept), each one atomic
step: movers runs CPython's queue code step by step, so for queues only the verdicts
correspond, not the state counts.
Executors (section 6.5), a coarse model of ``concurrent.futures.ThreadPoolExecutor``: in the module's code,
``with ThreadPoolExecutor(max_workers=K) as pool:`` (or ``pool = ThreadPoolExecutor(K)`` and
``pool.shutdown()``), ``f = pool.submit(fn, c, ...)`` and ``rs = list(pool.map(fn, (c, ...)))`` outside loops,
and ``r = f.result()``. Each submitted call is a thread of its own (a *task*) that waits, at its entry, until it
is submitted, every earlier task of its pool has started and fewer than K of them run: K workers taking the
calls first in, first out. A task's ``return e`` (or its end) makes its future done with that value; an
exception no clause of the task catches (a failed ``assert`` too) is kept in its future, after its ``with``
releases and finally blocks ran, and ``result()`` raises it again. ``result()`` waits until the future is done,
``shutdown`` (and the end of the ``with`` block, also when an exception leaves it) until every submitted task
is. Submitting, starting, returning, ``result()`` and ``shutdown`` are one step each, where movers runs
CPython's executor (lang/library) step by step: only the verdicts compare, not the state counts.
Liveness declarations (docs/language.md section 7.10): an ``@predicate`` function whose body is ``return e``
(``holds(state, name)`` evaluates ``e`` on a state's globals and containers, a bool or an error) and
``ltl("formula", name=...)`` (its formula kept in ``formulas``) are read, not run, wherever they stand.
Expressions are Python's own (``eval``, with the builtins ``bool``, ``int``, ``len``, ``str``, ``repr``,
``range``, ``sum``, ``sorted``, ``min``, ``max``, ``any``, ``all``, ``abs``, ``list`` and ``tuple``): strings,
their methods, f-strings, slices and comprehensions included.

Semantics: a failed ``assert`` is an "assertion" violation (its state is not expanded); ``assume(c)`` with
``c`` false drops the path; a state where some thread has not terminated and no thread has an enabled step
(``acquire`` of a held lock, ``wait_until`` of a false condition) is a "deadlock"; releasing a lock the thread
does not hold is a "runtime-error"; an ``AssertionError`` that leaves a thread uncaught (``result()`` of a task
whose ``assert`` failed) is an "assertion".
"""

from __future__ import annotations

import ast
import builtins
import copy
from collections import deque
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

_NO_BUILTINS: dict[str, Any] = {"__builtins__": {}, "bool": bool, "int": int, "len": len, "str": str, "repr": repr,
                                 "range": range, "sum": sum, "sorted": sorted, "min": min, "max": max, "any": any,
                                 "all": all, "abs": abs, "list": list, "tuple": tuple, "deque": deque}
# The methods of lists, dicts and sets that change their object (each one access, docs/language.md 4.3, 4.9, 4.10).
_CHANGING = {"append", "pop", "insert", "remove", "extend", "clear", "setdefault", "update", "add", "discard",
             "appendleft", "popleft"}
_READERS = {"list", "tuple", "sorted", "sum", "min", "max", "any", "all"}  # builtins that read a container
_CONTAINER_METHODS = _CHANGING | {"get", "index", "count", "copy"}
# The instructions that can block (each a node with a guard in movers).
_BLOCKING = {"acq", "join", "wait", "qget", "qput", "take", "result", "shutdown"}
_LAMBDA = "lambda:"  # the thread of `Thread(target=lambda: f(...))`: f's, entered through a call
_EXC = "#exc"  # the local holding the exception being handled, (class, args), while its handler runs
GRANULARITIES = ("access", "statement")
_TEMP = "_v"  # the prefix of pending temporaries (no generated model names a local so)
_GLUE_LIMIT = 100_000  # glue instructions in one step: more is a loop that never reaches a step


def typed(v: Any) -> Any:
    """A value with its type made part of its identity (tuples and local lists element by element)."""
    if type(v) is tuple:
        return ("tuple", tuple(typed(x) for x in v))
    if type(v) is list:  # a local list: a heap object of its own in movers, so its contents are its identity
        return ("list", tuple(typed(x) for x in v))
    return (type(v).__name__, v)


class Empty(Exception):
    """``queue.Empty``."""


class Full(Exception):
    """``queue.Full``."""


class _Queue:
    """A ``queue.Queue`` during an evaluation: its items (oldest first) and its ``maxsize`` (0: unbounded). Each
    method is one atomic step here; movers runs CPython's code for them (lang/library), so only verdicts
    compare, not state counts."""

    def __init__(self, items: tuple, maxsize: int) -> None:
        self.items = list(items)
        self.maxsize = maxsize

    def full(self) -> bool:
        return 0 < self.maxsize <= len(self.items)

    def empty(self) -> bool:
        return not self.items

    def qsize(self) -> int:
        return len(self.items)

    def put_nowait(self, v: Any) -> None:
        if self.full():
            raise Full()
        self.items.append(v)

    def get_nowait(self) -> Any:
        if not self.items:
            raise Empty()
        return self.items.pop(0)


_QUEUE_METHODS = {"full", "empty", "qsize", "put_nowait", "get_nowait"}
_RAISES = (KeyError, IndexError, ValueError, TypeError, ZeroDivisionError, AttributeError, NameError, Empty, Full)


def _eval(code: CodeType, env: dict[str, Any]) -> Any:
    """``code`` evaluated with ``env`` as its globals, so that a comprehension's body sees them too."""
    return eval(code, {**_NO_BUILTINS, **env})


def _set_key(v: Any) -> Any:
    """A set's elements in a canonical order (movers keeps a set sorted, docs/language.md section 4.10)."""
    return typed(v)


def _typed_state(state: tuple) -> Any:
    g, arrays, objects, owners, frames = state
    return (
        typed(g),
        typed(arrays),
        typed(objects),
        owners,
        tuple((pc, tuple((k, typed(v)) for k, v in loc)) for pc, loc in frames),
    )


@dataclass
class NaiveResult:
    states: int
    transitions: int
    kinds: set[str] = field(default_factory=set)
    complete: bool = True

    @property
    def verdict(self) -> str:
        if self.kinds:
            return "violation"
        return "ok" if self.complete else "incomplete"


class Unsupported(Exception):
    pass


def _expr(node: ast.expr) -> CodeType:
    node = ast.fix_missing_locations(node)
    return compile(ast.Expression(node), "<model>", "eval")


def _call_name(node: ast.expr) -> tuple[str | None, str]:
    """(receiver, name) of a call's function: ``m.acquire`` -> ("m", "acquire"); ``f`` -> (None, "f")."""
    if isinstance(node, ast.Name):
        return None, node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id, node.attr
    raise Unsupported(ast.unparse(node))


def _callee(node: ast.expr) -> str | None:
    """The name a call calls: ``Lock`` for ``Lock()`` and ``threading.Lock()``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "threading":
        return node.attr
    return None


def _name(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def _temps_in(nodes: list[ast.expr]) -> set[str]:
    return {n.id for e in nodes for n in ast.walk(e) if isinstance(n, ast.Name) and n.id.startswith(_TEMP)}


@dataclass
class _Executor:
    """The main thread's executor calls, numbered in the order they run: ``pools`` each pool's name and
    max_workers, ``submits`` each ``pool.submit``/``pool.map`` call (by ``id``) and its first task, ``futures``
    the task of each name a submit binds, ``tasks`` each task's (pool, function, arguments)."""

    pools: dict[str, int] = field(default_factory=dict)
    submits: dict[int, int] = field(default_factory=dict)
    futures: dict[str, int] = field(default_factory=dict)
    tasks: list[tuple[str, str, tuple]] = field(default_factory=list)


def _pool_call(e: ast.expr | None) -> int | None:
    """max_workers of ``ThreadPoolExecutor(K)`` / ``(max_workers=K)`` (32 when not given), else None."""
    if not (isinstance(e, ast.Call) and (isinstance(e.func, ast.Name) and e.func.id == "ThreadPoolExecutor"
                                         or isinstance(e.func, ast.Attribute) and e.func.attr == "ThreadPoolExecutor")):
        return None
    given = [*e.args, *(k.value for k in e.keywords if k.arg == "max_workers")]
    return ast.literal_eval(given[0]) if given else 32


def _executor_call(e: ast.AST, pools: dict[str, int]) -> str | None:
    """"submit" or "map" for ``pool.submit(...)``/``pool.map(...)`` of a known pool, else None."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in ("submit", "map") \
            and isinstance(e.func.value, ast.Name) and e.func.value.id in pools:
        return e.func.attr
    return None


def _plan(main: list[ast.stmt]) -> _Executor:
    """The executor calls of the module's code (a submit or map inside a loop is refused: each call is one
    task, a thread of the model)."""
    plan = _Executor()
    for node in ast.walk(ast.Module(body=main, type_ignores=[])):
        if isinstance(node, ast.With) and len(node.items) == 1 and _pool_call(node.items[0].context_expr):
            got = node.items[0].optional_vars
            if not isinstance(got, ast.Name):
                raise Unsupported("with ThreadPoolExecutor() without `as name`")
            plan.pools[got.id] = _pool_call(node.items[0].context_expr)  # type: ignore[assignment]
        elif isinstance(node, ast.Assign) and _pool_call(node.value) is not None:
            plan.pools[node.targets[0].id] = _pool_call(node.value)  # type: ignore[attr-defined,assignment]
    for loop in ast.walk(ast.Module(body=main, type_ignores=[])):
        if isinstance(loop, ast.For | ast.While | ast.comprehension) \
                and any(_executor_call(n, plan.pools) for n in ast.walk(loop)):
            raise Unsupported("pool.submit or pool.map in a loop")
    calls = sorted((n for n in ast.walk(ast.Module(body=main, type_ignores=[])) if _executor_call(n, plan.pools)),
                   key=lambda n: (n.lineno, n.col_offset))
    for call in calls:
        pool, fn = call.func.value.id, call.args[0]  # type: ignore[attr-defined]
        if not isinstance(fn, ast.Name) or call.keywords:
            raise Unsupported(ast.unparse(call))
        plan.submits[id(call)] = len(plan.tasks)
        if _executor_call(call, plan.pools) == "submit":
            plan.tasks.append((pool, fn.id, tuple(ast.literal_eval(a) for a in call.args[1:])))
        else:
            items = call.args[1]  # type: ignore[attr-defined]
            if len(call.args) != 2 or not isinstance(items, ast.Tuple | ast.List):  # type: ignore[attr-defined]
                raise Unsupported(ast.unparse(call))
            plan.tasks += [(pool, fn.id, (ast.literal_eval(a),)) for a in items.elts]
    for node in ast.walk(ast.Module(body=main, type_ignores=[])):
        if isinstance(node, ast.Assign) and _executor_call(node.value, plan.pools) == "submit":
            name = node.targets[0]
            if not isinstance(name, ast.Name) or name.id in plan.futures:
                raise Unsupported(ast.unparse(node))
            plan.futures[name.id] = plan.submits[id(node.value)]
    return plan


@dataclass(frozen=True)
class _Shared:
    """What some thread function writes: reading anything else (a module constant, a field only ``__init__``
    sets, an element of a list no function writes) commutes with everything, so it is no access. ``grows``:
    some list, dict or set may change its length (movers then takes ``len(x)`` of anything for an access)."""

    globals: frozenset[str]
    fields: frozenset[str]
    elements: bool
    grows: bool = False


def _shared(fdefs: list[ast.FunctionDef], containers: bool = False) -> _Shared:
    names: set[str] = set()
    fields: set[str] = set()
    elements, grows = False, containers
    for f in fdefs:
        declared = {n for s in ast.walk(f) if isinstance(s, ast.Global) for n in s.names}
        for node in ast.walk(f):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AugAssign | ast.For):
                targets = [node.target]
            elif isinstance(node, ast.Delete):
                targets = node.targets
                grows = grows or any(isinstance(t, ast.Subscript) for t in targets)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CHANGING:
                elements = grows = True  # d.pop(k, default) removes an entry, s.add(v) adds one...
            for t in targets:
                if isinstance(t, ast.Name) and t.id in declared:
                    names.add(t.id)
                elif isinstance(t, ast.Subscript):
                    elements = True
                elif isinstance(t, ast.Attribute):
                    fields.add(t.attr)
    return _Shared(frozenset(names), frozenset(fields), elements, grows)


@dataclass
class _Piece:
    """One instruction split off a statement: ``read`` (``temp = expr``, one access), ``set`` (``temp =
    expr``, local work) or ``branch`` (``if expr: then else: orelse``, local work)."""

    kind: str
    temp: str | None
    expr: ast.expr
    then: list[_Piece] = field(default_factory=list)
    orelse: list[_Piece] = field(default_factory=list)
    drops: set[str] = field(default_factory=set)


class _Cut:
    """The splitting of one statement into pieces (in Python's order of evaluation) and its final expressions."""

    def __init__(self, fn: _Function) -> None:
        self.fn = fn
        self.pieces: list[_Piece] = []

    def read(self, e: ast.expr) -> ast.Name:
        temp = self.fn.temp()
        self.pieces.append(_Piece("read", temp, e))
        return _name(temp)

    def expr(self, e: ast.expr, keep: ast.AST | None = None) -> ast.expr:
        """``e`` with every access but ``keep`` read beforehand into a temporary."""
        fn = self.fn
        if fn.short_circuits(e):
            return self._short_circuit(e)
        new = copy.copy(e)
        for name, value in ast.iter_fields(e):  # the fields of an expression are in Python's evaluation order
            if isinstance(value, ast.expr):
                setattr(new, name, self.expr(value, keep))
            elif isinstance(value, list):
                setattr(new, name, [self.expr(x, keep) if isinstance(x, ast.expr) else x for x in value])
        if e is not keep and fn.is_access(e):
            return self.read(new)
        return new

    def _sub(self, e: ast.expr, temp: str) -> list[_Piece]:
        """The pieces computing ``e`` into ``temp``, apart from the current ones."""
        outer, self.pieces = self.pieces, []
        value = self.expr(e)
        inner = [*self.pieces, _Piece("set", temp, value)]
        self.pieces = outer
        return inner

    def _short_circuit(self, e: ast.expr) -> ast.Name:
        temp = self.fn.temp()
        if isinstance(e, ast.IfExp):
            test = self.expr(e.test)
            self.pieces.append(_Piece("branch", None, test, self._sub(e.body, temp), self._sub(e.orelse, temp)))
            return _name(temp)
        assert isinstance(e, ast.BoolOp)
        self.pieces.extend(self._sub(e.values[0], temp))
        for v in e.values[1:]:
            later = self._sub(v, temp)
            if isinstance(e.op, ast.And):
                self.pieces.append(_Piece("branch", None, _name(temp), later, []))
            else:
                self.pieces.append(_Piece("branch", None, _name(temp), [], later))
        return _name(temp)

    def finish(self, final: list[ast.expr]) -> set[str]:
        """Give each temporary to the instruction that uses it last: it disappears there. Returns the final
        instruction's share."""
        last: dict[str, Any] = {}

        def visit(pieces: list[_Piece]) -> None:
            for p in pieces:
                for t in _temps_in([p.expr]):
                    last[t] = p
                visit(p.then)
                visit(p.orelse)

        visit(self.pieces)
        for t in _temps_in(final):
            last[t] = None
        for t, p in last.items():
            if p is not None:
                p.drops.add(t)
        return {t for t, p in last.items() if p is None}


class _Function:
    """One function compiled to instructions; ``entry`` is the first pc, -1 means terminated. ``shared`` is
    None under statement granularity (every instruction is a step)."""

    def __init__(self, fdef: ast.FunctionDef, locks: set[str], objects: set[str] | None = None,
                 shared: _Shared | None = None, arrays: set[str] | None = None,
                 handles: dict[str, int] | None = None, dicts: set[str] | None = None,
                 exceptions: dict[str, type] | None = None, queues: set[str] | None = None,
                 deques: set[str] | None = None,
                 managers: dict[str, tuple[ast.FunctionDef, ast.FunctionDef]] | None = None,
                 executor: _Executor | None = None, task: int | None = None) -> None:
        self.executor = executor or _Executor()
        self.task = task  # the task this function runs as, None for a thread
        self.deques = deques or set()
        self.managers = managers or {}
        for node in ast.walk(fdef):
            # `if q:` of a deque reads its length, one access: as `not not q` (the inner `not` the access)
            if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert) and isinstance(node.test, ast.Name) \
                    and node.test.id in self.deques:
                node.test = ast.UnaryOp(ast.Not(), ast.UnaryOp(ast.Not(), node.test))
        self.params = [a.arg for a in fdef.args.args]
        # `def f(a, *rest)`: the arguments after the named ones, a tuple (section 4.5)
        self.vararg = fdef.args.vararg.arg if fdef.args.vararg is not None else None
        if self.vararg is not None:
            self.params.append(self.vararg)
        self.handles = handles or {}
        self.dicts = dicts or set()
        self.exceptions = exceptions or {}
        self.queues = queues or set()
        self.locks = locks
        self.objects = objects or set()
        self.arrays = arrays or set()
        self.shared = shared
        self.globals: set[str] = set()
        for node in ast.walk(fdef):
            if isinstance(node, ast.Global):
                self.globals.update(node.names)
        self.locals = set(self.params) | {
            n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        } - self.globals
        if shared is not None and any(isinstance(n, ast.For) and isinstance(n.target, ast.Name)
                                      and n.target.id in self.globals for n in ast.walk(fdef)):
            raise Unsupported("a loop variable that is a global")
        self.code: list[tuple] = []
        self.costly: list[bool] = []  # whether a step may rest before the instruction
        self.drops: list[tuple[str, ...]] = []  # the temporaries that disappear in the instruction
        # The enclosing except clauses, innermost first; None for the classes: a finally block or the release
        # of a `with` lock, run on the way out of any exception.
        self.catching: list[tuple[tuple[type, ...] | None, int]] = []
        self.catch: list[tuple[tuple[tuple[type, ...] | None, int], ...]] = []  # each instruction's clauses
        self.temps = 0
        self.loops: list[int] = []  # the first instruction of each while loop
        self.breaks: list[tuple[int, int, str]] = []  # each loop's exit, its try/with depth, its counter
        if task is None:
            self.entry = self._block(fdef.body, -1)
        else:  # a task: taken by a worker, then its body; its end returns None
            end = self._new(("ret", _expr(ast.Constant(None)), -1))
            self.entry = self._new(("take", task, self._block(fdef.body, end)))
        if shared is not None:
            # A while loop that can go round through glue alone rests at its start each time round (else a
            # local `while True` would be one step that never ends). Judged on the glue before any marking.
            spinning = [first for first in self.loops if self._glue_cycle(first)]
            for first in spinning:
                self.costly[first] = True

    def _new(self, ins: tuple | None, costly: bool = True, drops: set[str] | tuple = (), glue: bool = False) -> int:
        """A new instruction; ``glue``: local work under either granularity (the end of an except clause, the
        re-raise at the end of a finally block: part of the step before them)."""
        self.code.append(ins or ())
        self.catch.append(tuple(self.catching))
        self.costly.append((costly or self.shared is None) and not glue)
        self.drops.append(tuple(sorted(drops)))
        return len(self.code) - 1

    def _set(self, pc: int, ins: tuple, costly: bool = True, drops: set[str] | tuple = ()) -> None:
        self.code[pc] = ins
        self.costly[pc] = costly or self.shared is None
        self.drops[pc] = tuple(sorted(drops))

    @staticmethod
    def _next(ins: tuple) -> list[int]:
        """The instructions that may follow ``ins`` (-1: the end)."""
        op = ins[0]
        if op in ("cond", "tryacq"):
            return [ins[2], ins[3]]
        if op == "for":
            return [ins[3], ins[4]]
        if op == "assert":
            return [ins[2]]
        return [ins[-1]]

    def _glue_cycle(self, first: int) -> bool:
        """Whether the loop starting at ``first`` can come back to it through glue (no costly instruction)."""
        if self.costly[first]:
            return False
        seen: set[int] = set()
        work = [first]
        while work:
            pc = work.pop()
            for nxt in self._next(self.code[pc]):
                if nxt == first:
                    return True
                if nxt >= 0 and nxt not in seen and not self.costly[nxt]:
                    seen.add(nxt)
                    work.append(nxt)
        return False

    def temp(self) -> str:
        self.temps += 1
        return f"{_TEMP}{self.temps}"

    # -- the access rule (granularity "access") --------------------------------------------------------------

    def is_access(self, node: ast.AST) -> bool:
        """Whether evaluating ``node`` itself (its operands apart) reads shared memory."""
        sh = self.shared
        if sh is None:
            return False
        if isinstance(node, ast.Name):
            return node.id not in self.locals and node.id in sh.globals
        if isinstance(node, ast.Attribute):
            return node.attr in sh.fields
        if isinstance(node, ast.Subscript):
            return sh.elements
        if isinstance(node, ast.Compare):
            # `x in a`: one access, however many elements it compares; so is `a == [1]`, `s != {2}`
            return sh.elements and any(
                (isinstance(op, ast.In | ast.NotIn) and isinstance(c, ast.Name) and c.id in self.arrays) or (
                    not isinstance(op, ast.In | ast.NotIn | ast.Is | ast.IsNot)
                    and any(isinstance(x, ast.Name) and x.id in self.arrays for x in (left, c)))
                for op, left, c in zip(node.ops, [node.left, *node.comparators], node.comparators, strict=False))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):  # `not d`: the dict's truth
            return sh.elements and isinstance(node.operand, ast.Name) and node.operand.id in self.dicts | self.deques
        if isinstance(node, ast.ListComp | ast.GeneratorExp):
            # local work over a range or a list no function writes; movers makes a loop of any other
            if any(self.is_access(n) for n in ast.walk(node) if n is not node) or (sh.elements and any(
                    not (isinstance(g.iter, ast.Call) and _callee(g.iter.func) == "range") for g in node.generators)):
                raise Unsupported("a comprehension that reads shared memory")
            return False
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id == "len" and len(node.args) == 1:
                # len(c) of a container is one access; movers counts len() of anything once lengths change
                a = node.args[0]
                return (sh.elements and isinstance(a, ast.Name) and a.id in self.arrays) or sh.grows
            if isinstance(f, ast.Name) and f.id in _READERS and len(node.args) == 1:
                # list(q), sorted(q)...: CPython reads the whole container in C, one access
                a = node.args[0]
                return sh.elements and isinstance(a, ast.Name) and a.id in self.arrays
            # d.get(k, v), s.add(v), a.insert(i, v)...: one access each, as in CPython
            return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in self.arrays \
                and f.attr in _CONTAINER_METHODS | _QUEUE_METHODS
        return False

    def accesses(self, e: ast.AST | None) -> list[ast.AST]:
        """The accesses of ``e`` in the order Python makes them (operands first)."""
        out: list[ast.AST] = []

        def visit(n: ast.AST) -> None:
            for child in ast.iter_child_nodes(n):
                visit(child)
            if self.is_access(n):
                out.append(n)

        if e is not None:
            visit(e)
        return out

    def short_circuits(self, e: ast.AST) -> bool:
        """Whether ``e`` is an ``and``/``or``/``if else`` whose later operands read shared memory."""
        if isinstance(e, ast.BoolOp):
            return any(self.accesses(v) for v in e.values[1:])
        if isinstance(e, ast.IfExp):
            return bool(self.accesses(e.body) or self.accesses(e.orelse))
        return False

    def keepable(self, e: ast.expr) -> ast.AST | None:
        """The last access of ``e``, unless it must be read conditionally (inside a short-circuit)."""
        acc = self.accesses(e)
        if not acc:
            return None
        last = acc[-1]
        for n in ast.walk(e):
            if self.short_circuits(n) and any(x is last for x in ast.walk(n)):
                return None
        return last

    def _link(self, pieces: list[_Piece], cont: int) -> int:
        for p in reversed(pieces):
            if p.kind == "branch":
                ins: tuple = ("cond", _expr(p.expr), self._link(p.then, cont), self._link(p.orelse, cont))
                cont = self._new(ins, costly=False, drops=p.drops)
            else:
                ins = ("assign", "l", p.temp, None, (_expr(p.expr),), cont)
                cont = self._new(ins, costly=p.kind == "read", drops=p.drops)
        return cont

    def _test(self, e: ast.expr) -> tuple[list[_Piece], ast.expr, set[str], bool]:
        """A condition cut at its accesses: (pieces, the final test, what the test drops, whether it is costly)."""
        acc = self.accesses(e)
        if len(acc) <= 1:
            return [], e, set(), bool(acc)
        cut = _Cut(self)
        test = cut.expr(e, self.keepable(e))
        drops = cut.finish([test])
        return cut.pieces, test, drops, bool(self.accesses(test))

    def _assign(self, target: ast.expr, value: ast.expr, op: ast.operator | None, cont: int) -> int:
        kind, name, index = self._target(target)
        index_node = target.slice if kind == "a" else None  # type: ignore[attr-defined]
        write = kind != "l" and self.shared is not None  # a written global, element or field is shared
        n = len(self.accesses(value)) + len(self.accesses(index_node)) + int(write) * (2 if op else 1)
        if n <= 1:
            if op is not None:
                load = ast.parse(ast.unparse(target), mode="eval").body
                value = ast.copy_location(ast.BinOp(load, op, value), target)
            return self._new(("assign", kind, name, index, (_expr(value),), cont), costly=n == 1)
        cut = _Cut(self)
        if op is not None:  # target's operands, its current value, the operand, then the write
            new_index = cut.expr(index_node) if index_node is not None else None
            load = ast.parse(ast.unparse(target), mode="eval").body
            if isinstance(load, ast.Subscript) and new_index is not None:
                load.slice = new_index
            current = cut.read(load) if write else load
            final = ast.BinOp(current, op, cut.expr(value, None if write else self.keepable(value)))
        else:  # the value, then the target's operands, then the write
            final = cut.expr(value, None if write else self.keepable(value))
            new_index = cut.expr(index_node) if index_node is not None else None
        finals: list[ast.expr] = [final] + ([new_index] if new_index is not None else [])
        drops = cut.finish(finals)
        compiled_index = _expr(new_index) if new_index is not None else index
        costly = write or bool(self.accesses(final))
        head = self._new(("assign", kind, name, compiled_index, (_expr(final),), cont), costly=costly, drops=drops)
        return self._link(cut.pieces, head)

    # -- statements ---------------------------------------------------------------------------------------------

    def _block(self, stmts: list[ast.stmt], cont: int) -> int:
        for s in reversed(stmts):
            cont = self._stmt(s, cont)
        return cont

    def _target(self, t: ast.expr) -> tuple:
        if isinstance(t, ast.Name):
            return ("g" if t.id in self.globals else "l", t.id, None)
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
            return ("a", t.value.id, _expr(t.slice))
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in self.objects:
            return ("o", t.value.id, t.attr)
        raise Unsupported(ast.unparse(t))

    def _queue_call(self, e: ast.expr, name: str) -> str | None:
        """The queue of ``q.get()`` / ``q.put(v)`` (blocking, without timeout), else None."""
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == name \
                and isinstance(e.func.value, ast.Name) and e.func.value.id in self.queues:
            if e.keywords or len(e.args) != (1 if name == "put" else 0):
                raise Unsupported(ast.unparse(e))
            return e.func.value.id
        return None

    def _exception(self, e: ast.expr) -> type:
        """The class an except clause or a ``raise`` names: the model's, else a built-in one."""
        if isinstance(e, ast.Name) and e.id in self.exceptions:
            return self.exceptions[e.id]
        if isinstance(e, ast.Name) and isinstance(getattr(builtins, e.id, None), type):
            return getattr(builtins, e.id)
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "queue" \
                and e.attr in ("Empty", "Full"):
            return Empty if e.attr == "Empty" else Full
        raise Unsupported(ast.unparse(e))

    def _try(self, s: ast.Try, cont: int) -> int:
        """``try``/``except``/``else``/``finally`` (section 5.1): entering and leaving, raising and testing the
        clauses are local work. A handler runs with the exception it handles in the frame (``#exc``), which the
        end of its clause drops; on the way out of an exception the finally block runs with it, then re-raises."""
        if any(h.name is not None for h in s.handlers):
            raise Unsupported("except ... as")
        done = cont
        if s.finalbody:
            done = self._block(s.finalbody, cont)
            unwind = self._block(s.finalbody, self._new(("reraise", -1), glue=True))
            self.catching.insert(0, (None, unwind))
        clauses: list[tuple[tuple[type, ...] | None, int]] = []
        for h in s.handlers:
            if h.type is None:
                raise Unsupported("a bare except")
            names = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
            end = self._new(("endexc", done), glue=True)
            clauses.append((tuple(self._exception(n) for n in names), self._block(h.body, end)))
        after = self._block(s.orelse, done)
        self.catching = clauses + self.catching
        body = self._block(s.body, after)
        self.catching = self.catching[len(clauses):]
        if s.finalbody:
            self.catching.pop(0)
        return body

    def _manager(self, s: ast.With, cont: int) -> int:
        """``with o as name:`` for a module-level object of a class with ``__enter__``/``__exit__`` (section
        6.4): their bodies inlined with ``self`` as ``o``; ``__enter__``'s ``return e`` (its last statement)
        binds ``name``; ``__exit__`` runs after the block and, when an exception leaves it, before the
        exception goes on (its parameters unused, its result no true constant: it never swallows one)."""
        o = s.items[0].context_expr.id  # type: ignore[attr-defined]
        enter, exit_ = self.managers[o]

        def body(f: ast.FunctionDef, name: ast.expr | None) -> list[ast.stmt]:
            out: list[ast.stmt] = []
            for i, st in enumerate(copy.deepcopy(f.body)):
                for n in ast.walk(st):
                    if isinstance(n, ast.Name) and n.id == "self":
                        n.id = o
                    elif isinstance(n, ast.Name) and n.id in ("exc_type", "exc", "tb"):
                        raise Unsupported("__exit__ that reads its parameters")
                if isinstance(st, ast.Return):
                    if i != len(f.body) - 1:
                        raise Unsupported("a return before the end of __enter__/__exit__")
                    if f is exit_:
                        if st.value is not None and not (isinstance(st.value, ast.Constant) and not st.value.value):
                            raise Unsupported("__exit__ that may swallow an exception")
                        continue
                    if name is not None and st.value is not None:
                        st = ast.copy_location(ast.Assign(targets=[name], value=st.value), st)
                    else:
                        continue
                out.append(st)
            return out

        normal = self._block(body(exit_, None), cont)
        unwind = self._block(body(exit_, None), self._new(("reraise", -1), glue=True))
        self.catching.insert(0, (None, unwind))
        block = self._block(s.body, normal)
        self.catching.pop(0)
        return self._block(body(enter, s.items[0].optional_vars), block)

    def _executor_stmt(self, s: ast.stmt, cont: int) -> int | None:
        """A statement of the executor model (see the module docstring), else None."""
        ex = self.executor
        if isinstance(s, ast.Return):
            if self.task is None or self.catching:
                raise Unsupported("return outside a task, or in a with or try block")
            pieces, value, drops, costly = self._test(s.value or ast.Constant(None))
            return self._link(pieces, self._new(("ret", _expr(value), -1), True, drops))
        if isinstance(s, ast.With) and len(s.items) == 1 and _pool_call(s.items[0].context_expr) is not None:
            pool = s.items[0].optional_vars.id  # type: ignore[union-attr]
            # leaving the block shuts the pool down and waits, also on the way out of an exception
            unwind = self._new(("shutdown", pool, self._new(("reraise", -1), glue=True)))
            self.catching.insert(0, (None, unwind))
            body = self._block(s.body, self._new(("shutdown", pool, cont)))
            self.catching.pop(0)
            return body
        if isinstance(s, ast.Assign) and _pool_call(s.value) is not None:
            return cont  # making a pool: its workers start with its tasks
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) \
                and s.value.func.attr == "shutdown" and isinstance(s.value.func.value, ast.Name) \
                and s.value.func.value.id in ex.pools:
            if s.value.args or any(not (k.arg == "wait" and isinstance(k.value, ast.Constant) and k.value.value
                                        is True) for k in s.value.keywords):
                raise Unsupported(ast.unparse(s))
            return self._new(("shutdown", s.value.func.value.id, cont))
        value = s.value if isinstance(s, ast.Assign | ast.Expr) else None
        target = self._target(s.targets[0]) if isinstance(s, ast.Assign) and len(s.targets) == 1 else None
        if value is not None and _executor_call(value, ex.pools) == "submit":
            return self._new(("submit", ex.submits[id(value)], cont))
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "result" \
                and isinstance(value.func.value, ast.Name) and value.func.value.id in ex.futures:
            if value.args or value.keywords:
                raise Unsupported(ast.unparse(value))
            return self._new(("result", ex.futures[value.func.value.id], target, cont))
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "list" \
                and len(value.args) == 1 and _executor_call(value.args[0], ex.pools) == "map":
            # list(pool.map(fn, items)): every call submitted, then each result waited for in order
            first = ex.submits[id(value.args[0])]
            n = len(value.args[0].args[1].elts)  # type: ignore[attr-defined]
            temps = [self.temp() for _ in range(n)]
            whole = ast.List([_name(t) for t in temps], ast.Load())
            if target is None:
                raise Unsupported("list(pool.map(...)) as a statement")
            cont = self._new(("assign", *target, (_expr(whole),), cont), costly=target[0] != "l", drops=temps)
            for k in reversed(range(n)):
                cont = self._new(("result", first + k, ("l", temps[k], None), cont))
            for k in reversed(range(n)):
                cont = self._new(("submit", first + k, cont))
            return cont
        return None

    def _try_lock(self, e: ast.expr) -> str | None:
        """The lock of ``L.acquire(blocking=False)`` / ``L.acquire(False)``, else None."""
        if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "acquire"
                and isinstance(e.func.value, ast.Name) and e.func.value.id in self.locks):
            return None
        args = [*e.args, *(k.value for k in e.keywords if k.arg == "blocking")]
        if len(args) == 1 and len(e.args) + len(e.keywords) == 1 and isinstance(args[0], ast.Constant) \
                and args[0].value is False:
            return e.func.value.id
        return None

    def _stmt(self, s: ast.stmt, cont: int) -> int:
        access = self.shared is not None
        if isinstance(s, ast.Pass | ast.Global):
            return cont
        if self.executor.pools or self.task is not None:
            done = self._executor_stmt(s, cont)
            if done is not None:
                return done
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and self._queue_call(s.value, "get") is not None:
            return self._new(("qget", self._queue_call(s.value, "get"), self._target(s.targets[0]), cont))
        if isinstance(s, ast.Expr) and self._queue_call(s.value, "get") is not None:
            return self._new(("qget", self._queue_call(s.value, "get"), None, cont))
        if isinstance(s, ast.Expr) and self._queue_call(s.value, "task_done") is not None:
            # one step that changes nothing here: the count of unfinished tasks is not modelled
            return self._new(("qdone", self._queue_call(s.value, "task_done"), cont))
        if isinstance(s, ast.Expr) and self._queue_call(s.value, "put") is not None:
            value = s.value.args[0]  # type: ignore[attr-defined]
            if self.accesses(value):
                raise Unsupported("a put of a value read from shared memory")
            return self._new(("qput", self._queue_call(s.value, "put"), _expr(value), cont))
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            v = s.value
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "choose" and v.args:
                alternatives = tuple(_expr(a) for a in v.args)  # a choice is always one whole step
                return self._new(("assign", *self._target(s.targets[0]), alternatives, cont))
            if access:
                return self._assign(s.targets[0], v, None, cont)
            return self._new(("assign", *self._target(s.targets[0]), (_expr(v),), cont))
        if isinstance(s, ast.AugAssign):
            if access:
                return self._assign(s.target, s.value, s.op, cont)
            load = ast.parse(ast.unparse(s.target), mode="eval").body
            value = ast.fix_missing_locations(ast.copy_location(ast.BinOp(load, s.op, s.value), s))
            return self._new(("assign", *self._target(s.target), (_expr(value),), cont))
        if isinstance(s, ast.If) and self._try_lock(s.test) is not None:
            # if m.acquire(blocking=False): one step, taking the lock when it is free, else the other branch
            then, orelse = self._block(s.body, cont), self._block(s.orelse, cont)
            return self._new(("tryacq", self._try_lock(s.test), then, orelse))
        if isinstance(s, ast.If):
            then, orelse = self._block(s.body, cont), self._block(s.orelse, cont)
            pieces, test, drops, costly = self._test(s.test)
            return self._link(pieces, self._new(("cond", _expr(test), then, orelse), costly, drops))
        if isinstance(s, ast.Break):
            if not self.breaks or self.breaks[-1][1] != len(self.catching):
                raise Unsupported("break outside a loop, or out of a with or try block")
            target, _, counter = self.breaks[-1]
            # no step of its own at either granularity (docs/language.md section 8.2)
            return self._new(("nop", target), glue=True, drops={counter} if counter else ())
        if isinstance(s, ast.While):
            # `while … else`: the else block runs when the test is false, not after a break (section 4.4)
            after = self._block(s.orelse, cont)
            head = self._new(None)
            pieces, test, drops, costly = self._test(s.test)
            first = self._link(pieces, head)  # the test's reads are made again before every test
            self.breaks.append((cont, len(self.catching), ""))
            self._set(head, ("cond", _expr(test), self._block(s.body, first), after), costly, drops)
            self.breaks.pop()
            self.loops.append(first)
            return first
        if (
            isinstance(s, ast.For)
            and isinstance(s.target, ast.Name)
            and isinstance(s.iter, ast.Call)
            and isinstance(s.iter.func, ast.Name)
            and s.iter.func.id == "range"
            and len(s.iter.args) == 1
        ):
            after = self._block(s.orelse, cont)  # `for … else`: run when the range is done, not after a break
            head = self._new(None)
            bound = ast.literal_eval(s.iter.args[0])
            # A constant bound and a local variable: the headers are local work under access granularity.
            self.breaks.append((cont, len(self.catching), f"#it{head}"))  # a break drops the loop's counter
            self._set(head, ("for", s.target.id, bound, self._block(s.body, head), after, f"#it{head}"), not access)
            self.breaks.pop()
            return head
        if isinstance(s, ast.With) and len(s.items) == 1 and isinstance(s.items[0].context_expr, ast.Name) \
                and s.items[0].context_expr.id in self.managers:
            return self._manager(s, cont)
        if isinstance(s, ast.With) and len(s.items) == 1:
            lock = s.items[0].context_expr
            if not (isinstance(lock, ast.Name) and lock.id in self.locks):
                raise Unsupported(ast.unparse(s))
            release = self._new(("rel", lock.id, cont))
            # An exception leaving the block releases the lock (a step), then goes on (section 5.1).
            unwind = self._new(("rel", lock.id, self._new(("reraise", -1), glue=True)))
            self.catching.insert(0, (None, unwind))
            body = self._block(s.body, release)
            got = s.items[0].optional_vars
            if got is not None:  # `with m as got:`: a lock's __enter__ returns acquire()'s True (local work)
                if not (isinstance(got, ast.Name) and got.id in self.locals):
                    raise Unsupported(ast.unparse(s.items[0]))
                body = self._assign(got, ast.Constant(True), None, body)
            self.catching.pop(0)
            return self._new(("acq", lock.id, body))
        if isinstance(s, ast.Assert):
            pieces, test, drops, costly = self._test(s.test)
            return self._link(pieces, self._new(("assert", _expr(test), cont, ast.unparse(s.test)), costly, drops))
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            return cont  # a docstring
        if isinstance(s, ast.Try):
            return self._try(s, cont)
        if isinstance(s, ast.Raise) and s.cause is None and isinstance(s.exc, ast.Call) \
                and isinstance(s.exc.func, ast.Name) and not s.exc.keywords:
            args = _expr(ast.Tuple(s.exc.args, ast.Load()))
            return self._new(("raise", self._exception(s.exc.func), args, cont), costly=False)
        if isinstance(s, ast.Delete):
            for t in reversed(s.targets):  # left to right, one step each
                if isinstance(t, ast.Name) and t.id in self.locals:
                    cont = self._new(("delname", t.id, cont), costly=False)
                elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in self.arrays \
                        and not self.accesses(t.slice):
                    cont = self._new(("del", t.value.id, _expr(t.slice), cont))
                else:
                    raise Unsupported(ast.unparse(s))
            return cont
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            recv, name = _call_name(s.value.func)
            if recv in self.arrays and name in _CONTAINER_METHODS | _QUEUE_METHODS:  # the value: dropped at once
                temp = self.temp()
                if len(self.accesses(s.value)) <= 1:
                    return self._new(("assign", "l", temp, None, (_expr(s.value),), cont), drops={temp})
                # `q.append(len(q))`: the arguments' accesses first, each a step of its own
                cut = _Cut(self)
                final = cut.expr(s.value, self.keepable(s.value))
                drops = cut.finish([final]) | {temp}
                head = self._new(("assign", "l", temp, None, (_expr(final),), cont), drops=drops)
                return self._link(cut.pieces, head)
            if recv in self.handles and name == "join" and not s.value.args:
                return self._new(("join", self.handles[recv], cont))
            if recv in self.locks and name in ("acquire", "release"):
                return self._new(("acq" if name == "acquire" else "rel", recv, cont))
            if recv is None and name == "wait_until" and len(s.value.args) == 1:
                return self._new(("wait", _expr(s.value.args[0]), cont))
            if recv is None and name == "assume" and len(s.value.args) == 1:
                # never cut; a step only when its condition reads shared memory
                cond = s.value.args[0]
                return self._new(("assume", _expr(cond), cont), costly=bool(self.accesses(cond)))
        raise Unsupported(f"line {s.lineno}: {ast.unparse(s)}")


class _Object:
    """A model object during an evaluation: its fields as attributes."""

    def __init__(self, fields: tuple) -> None:
        for k, v in fields:
            setattr(self, k, v)


def _constructor_fields(cdef: ast.ClassDef) -> Any:
    """A function from a constructor call to the fields it gives, sorted by name: an ``__init__`` of constant
    assignments to ``self`` (called without arguments), or a ``@dataclass`` of annotated fields with constant
    defaults (called with constant arguments, positional and keyword)."""
    if any(isinstance(d, ast.Name) and d.id == "dataclass" for d in cdef.decorator_list):
        order: list[str] = []
        defaults: dict[str, Any] = {}
        for item in cdef.body:
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                raise Unsupported(f"dataclass {cdef.name}: only annotated fields")
            order.append(item.target.id)
            if item.value is not None:
                defaults[item.target.id] = ast.literal_eval(item.value)

        def dataclass_fields(call: ast.Call) -> tuple:
            given = dict(zip(order, (ast.literal_eval(a) for a in call.args), strict=False))
            given.update((k.arg, ast.literal_eval(k.value)) for k in call.keywords if k.arg is not None)
            return tuple(sorted({**defaults, **given}.items()))

        return dataclass_fields
    fields: dict[str, Any] = {}
    for item in cdef.body:
        if isinstance(item, ast.FunctionDef) and item.name in ("__enter__", "__exit__"):
            continue  # a context manager's: inlined at each `with` (_Function._manager)
        if not (isinstance(item, ast.FunctionDef) and item.name == "__init__"):
            raise Unsupported(f"class {cdef.name}: only __init__")
        for st in item.body:
            if not (
                isinstance(st, ast.Assign)
                and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Attribute)
                and isinstance(st.targets[0].value, ast.Name)
                and st.targets[0].value.id == "self"
            ):
                raise Unsupported(ast.unparse(st))
            fields[st.targets[0].attr] = ast.literal_eval(st.value)
    return lambda call: tuple(sorted(fields.items()))


def _exception_class(cdef: ast.ClassDef, known: dict[str, type]) -> type | None:
    """``class E(Base): pass`` for an exception class ``Base`` (built-in or the model's) as a Python class."""
    if len(cdef.bases) != 1 or not isinstance(cdef.bases[0], ast.Name):
        return None
    base = known.get(cdef.bases[0].id) or getattr(builtins, cdef.bases[0].id, None)
    if not (isinstance(base, type) and issubclass(base, BaseException)):
        return None
    if not all(isinstance(st, ast.Pass) or (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))
               for st in cdef.body):
        raise Unsupported(f"class {cdef.name}: only pass")
    return type(cdef.name, (base,), {})


def _packed(fn: _Function, args: tuple) -> tuple:
    """A thread's arguments as its parameters take them: those past the named ones in a ``*rest`` tuple."""
    if fn.vararg is None:
        return args
    n = len(fn.params) - 1
    if len(args) < n:
        raise Unsupported("too few arguments")
    return (*args[:n], tuple(args[n:]))


def _factory(fdef: ast.FunctionDef) -> ast.FunctionDef | None:
    """``def make(n): def run(): ...; return run`` as one function ``run`` whose parameters are ``make``'s
    (what a closure captures that never changes is as good as an argument), then ``run``'s."""
    if not (len(fdef.body) == 2 and isinstance(fdef.body[0], ast.FunctionDef) and isinstance(fdef.body[1], ast.Return)
            and isinstance(fdef.body[1].value, ast.Name) and fdef.body[1].value.id == fdef.body[0].name):
        return None
    inner = fdef.body[0]
    args = ast.arguments(posonlyargs=[], args=[*fdef.args.args, *inner.args.args], kwonlyargs=[], kw_defaults=[],
                         defaults=[])
    return ast.FunctionDef(name=fdef.name, args=args, body=inner.body, decorator_list=[])


# What one instruction does: the next (globals, arrays, objects, owners, pc, locals), or the end of the path
# with the kind of violation ("" when an ``assume`` drops it). A blocked instruction has no outcome.
_Next = tuple[tuple, tuple, tuple, tuple, int, dict]


class NaiveModel:
    def __init__(self, source: str, granularity: str = "access") -> None:
        if granularity not in GRANULARITIES:
            raise ValueError(f"unknown granularity {granularity!r}")
        self.granularity = granularity
        tree = ast.parse(source)
        self.gnames: list[str] = []
        ginit: list[Any] = []
        self.anames: list[str] = []
        ainit: list[tuple] = []
        self.onames: list[str] = []
        oinit: list[tuple] = []
        self.locks: list[str] = []
        self.dnames: set[str] = set()
        self._frames: tuple = ()  # the frames of the state being expanded (a join reads them)
        classes: dict[str, Any] = {}
        self.exceptions: dict[str, type] = {}
        self.snames: set[str] = set()
        self.deqnames: set[str] = set()
        self.qsizes: dict[str, int] = {}  # the queues and their maxsize
        self.managers: dict[str, tuple[ast.FunctionDef, ast.FunctionDef]] = {}  # an object's __enter__/__exit__
        managers: dict[str, tuple[ast.FunctionDef, ast.FunctionDef]] = {}  # a class's
        fdefs: dict[str, ast.FunctionDef] = {}
        starts: list[tuple[str, tuple]] = []
        handles: dict[str, tuple[str, tuple]] = {}  # t = Thread(target=f, args=(...)): not yet started
        started: dict[str, int] = {}  # a started handle's thread index
        main: list[ast.stmt] = []  # the module's code from its first step after a start() on: MainThread
        self.predicates: dict[str, CodeType] = {}  # each @predicate's returned expression (liveness)
        self.formulas: list[str] = []  # the ltl("...") declarations' formulas, in the order written
        for s in tree.body:
            if self._declaration(s):
                continue
            if main or (starts and not self._starts(s)) or _pool_call(s.items[0].context_expr if isinstance(
                    s, ast.With) and s.items else s.value if isinstance(s, ast.Assign) else None) is not None:
                main.append(s)
                continue
            if isinstance(s, ast.ImportFrom | ast.Import):
                continue
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                    and self._thread_call(s.value):
                handles[s.targets[0].id] = self._thread_call(s.value)  # type: ignore[assignment]
                continue
            if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) \
                    and s.value.func.attr == "start" and isinstance(s.value.func.value, ast.Name):
                started[s.value.func.value.id] = len(starts)
                starts.append(handles[s.value.func.value.id])
                continue
            if isinstance(s, ast.FunctionDef):
                fdefs[s.name] = _factory(s) or s
            elif isinstance(s, ast.ClassDef):
                exc = _exception_class(s, self.exceptions)
                if exc is not None:
                    self.exceptions[s.name] = exc
                else:
                    classes[s.name] = _constructor_fields(s)
                    methods = {f.name: f for f in s.body if isinstance(f, ast.FunctionDef)}
                    if "__enter__" in methods and "__exit__" in methods:
                        managers[s.name] = (methods["__enter__"], methods["__exit__"])
            elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                name, v = s.targets[0].id, s.value
                if isinstance(v, ast.Call) and _callee(v.func) == "Lock":
                    self.locks.append(name)
                elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in classes:
                    if v.func.id in managers:
                        self.managers[name] = managers[v.func.id]
                    self.onames.append(name)
                    oinit.append(classes[v.func.id](v))
                elif isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "Queue":
                    self.anames.append(name)  # a queue.Queue: its items, oldest first
                    size = [*v.args, *(k.value for k in v.keywords if k.arg == "maxsize")]
                    self.qsizes[name] = ast.literal_eval(size[0]) if size else 0
                    ainit.append(())
                elif isinstance(v, ast.Dict):  # a dict: its (key, value) pairs in insertion order
                    self.anames.append(name)
                    self.dnames.add(name)
                    ainit.append(tuple(ast.literal_eval(v).items()))
                elif isinstance(v, ast.Set) or (isinstance(v, ast.Call) and _callee(v.func) == "set" and not v.args):
                    self.anames.append(name)  # a set: its elements sorted (section 4.10)
                    self.snames.add(name)
                    ainit.append(tuple(sorted(ast.literal_eval(v) if isinstance(v, ast.Set) else (), key=_set_key)))
                elif isinstance(v, ast.List):
                    self.anames.append(name)
                    ainit.append(tuple(ast.literal_eval(v)))
                elif isinstance(v, ast.Call) and _callee(v.func) == "deque" and not v.keywords and len(v.args) <= 1:
                    self.anames.append(name)  # a deque: its items, left to right (section 4.11)
                    self.deqnames.add(name)
                    ainit.append(tuple(ast.literal_eval(v.args[0])) if v.args else ())
                else:
                    self.gnames.append(name)
                    ginit.append(ast.literal_eval(v))
            elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
                thread = s.value.func
                if not (isinstance(thread, ast.Attribute) and thread.attr == "start"):
                    raise Unsupported(ast.unparse(s))
                call = self._thread_call(thread.value)
                if call is None:
                    raise Unsupported(ast.unparse(s))
                starts.append(call)
            else:
                raise Unsupported(f"line {s.lineno}: {ast.unparse(s)}")
        if main:
            # The rest of the module's code is a thread after the others (docs/language.md section 2); it
            # reads and writes the module's names as globals.
            names = [*self.gnames, *self.anames, *self.onames]
            body: list[ast.stmt] = [ast.Global(names)] if names else []
            fdefs["<main>"] = ast.FunctionDef(name="<main>", args=ast.arguments(
                posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]), body=[*body, *main],
                decorator_list=[])
            starts.append(("<main>", ()))
        self.plan = _plan(main)
        # each task's future, in the globals: None until it is submitted, then ("pending",), ("ok", value) or
        # ("exc", class, args)
        self.futures = len(self.gnames)
        self.gnames += [f"#future{i}" for i in range(len(self.plan.tasks))]
        ginit += [None] * len(self.plan.tasks)
        lockset = set(self.locks)
        containers = bool(self.dnames or self.snames)  # movers: a model that makes one has changing lengths
        shared = _shared(list(fdefs.values()), containers) if granularity == "access" else None
        def compile_(f: ast.FunctionDef, executor: _Executor | None = None, task: int | None = None) -> _Function:
            return _Function(f, lockset, set(self.onames), shared, set(self.anames), started, self.dnames,
                             self.exceptions, set(self.qsizes), self.deqnames, self.managers, executor, task)

        threads = {name for name, _ in starts}
        compiled = {name: compile_(f, self.plan if name == "<main>" else None) for name, f in fdefs.items()
                    if name in threads or all(name != fname for _, fname, _ in self.plan.tasks)}
        for i, (_, fname, args) in enumerate(self.plan.tasks):
            compiled[f"#task{i}"] = compile_(fdefs[fname], task=i)
            starts.append((f"#task{i}", args))
        for name, _ in starts:
            if name.startswith(_LAMBDA):
                # `lambda: f(...)`: the thread starts in the lambda, whose call of f is a step of its own (local
                # work that a thread resting at its entry runs; section 8.4)
                fn = compile_(fdefs[name.removeprefix(_LAMBDA)])
                fn.entry = fn._new(("nop", fn.entry), costly=False)
                compiled[name] = fn
        self.threads = [compiled[name] for name, _ in starts]
        frames = tuple(
            (compiled[name].entry,
             tuple(sorted(zip(compiled[name].params, _packed(compiled[name], args), strict=True))))
            for name, args in starts
        )
        self.initial = (tuple(ginit), tuple(ainit), tuple(oinit), tuple(None for _ in self.locks), frames)

    @staticmethod
    def _thread_call(e: ast.expr) -> tuple[str, tuple] | None:
        """(target, args) of ``Thread(target=f, args=(...))``, else None. The target may also be ``lambda:
        f(c, ...)`` (a thread of ``f`` with those arguments) or ``make(c, ...)`` for a ``_factory``."""
        if not (isinstance(e, ast.Call) and _callee(e.func) == "Thread"):
            return None
        kw = {k.arg: k.value for k in e.keywords}
        target = kw["target"]
        args = ast.literal_eval(kw["args"]) if "args" in kw else ()
        if isinstance(target, ast.Lambda) and isinstance(target.body, ast.Call) \
                and isinstance(target.body.func, ast.Name) and not target.args.args and not args:
            return _LAMBDA + target.body.func.id, tuple(ast.literal_eval(a) for a in target.body.args)
        if isinstance(target, ast.Call) and isinstance(target.func, ast.Name) and not target.keywords:
            return target.func.id, (*(ast.literal_eval(a) for a in target.args), *args)
        if not isinstance(target, ast.Name):
            raise Unsupported(ast.unparse(target))
        return target.id, tuple(args)

    def _declaration(self, s: ast.stmt) -> bool:
        """Records ``s`` when it is an ``@predicate`` function (its body one ``return e``, docstring and
        ``global`` aside) or an ``ltl("formula", name=...)`` declaration: they are not code any thread runs."""
        if isinstance(s, ast.FunctionDef) and any(_callee(d) == "predicate" for d in s.decorator_list):
            body = [b for b in s.body if not isinstance(b, ast.Global | ast.Expr)]
            if s.args.args or len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
                raise Unsupported(f"@predicate {s.name}: only `return e`")
            self.predicates[s.name] = _expr(body[0].value)
            return True
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and _callee(s.value.func) == "ltl":
            self.formulas.append(ast.literal_eval(s.value.args[0]))
            return True
        return False

    def holds(self, state: tuple, name: str) -> bool:
        """The value of the ``@predicate`` ``name`` at ``state`` (it must be a bool, as in movers)."""
        g, arrays, objects, _, _ = state
        v = _eval(self.predicates[name], self._env(g, arrays, objects, {}))
        if not isinstance(v, bool):
            raise ValueError(f"predicate {name}() returns {v!r}, not a bool")
        return v

    def _starts(self, s: ast.stmt) -> bool:
        """Whether ``s`` only creates or starts a thread (the module's code runs on atomically through it)."""
        if isinstance(s, ast.Assign):
            return self._thread_call(s.value) is not None
        return isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) \
            and isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "start"

    def _raise(self, fn: _Function, pc: int, exc: BaseException, here: _Next) -> _Next | str:
        """Where ``exc`` raised at ``pc`` goes: when an except clause around it matches, to the first clause,
        finally block or ``with`` release on the way there (with the pending temporaries gone and the exception
        in ``#exc``); else the thread dies where it raised, a "runtime-error" ("assertion" for an
        ``AssertionError``; section 5.1: the finally blocks and ``with`` exits it would pass through cannot
        change the verdict). A task's worker catches everything: its finally blocks and ``with`` releases run,
        then the exception is kept in its future and the task ends."""
        entries = fn.catch[pc]
        if fn.task is not None and not any(types is None or isinstance(exc, types) for types, _ in entries):
            g = here[0]
            k = self.futures + fn.task
            return (g[:k] + (("exc", type(exc), exc.args),) + g[k + 1 :], *here[1:4], -1, {})
        if fn.task is None and not any(types is not None and isinstance(exc, types) for types, _ in entries):
            return "assertion" if isinstance(exc, AssertionError) else "runtime-error"
        for types, handler in entries:
            if types is None or isinstance(exc, types):
                g, arrays, objects, owners, _, loc = here
                loc = {k: v for k, v in loc.items() if not k.startswith(_TEMP)}
                if _EXC in loc:
                    raise Unsupported("an exception raised while another is handled")
                loc[_EXC] = (type(exc), exc.args)
                return (g, arrays, objects, owners, handler, loc)
        raise AssertionError("unreachable")

    def _containers_back(self, arrays: tuple, env: dict[str, Any]) -> tuple:
        """``arrays`` with the containers as an evaluation left them in ``env`` (``d.pop``, ``s.add``...)."""
        out = []
        for n in self.anames:
            c = env[n]
            if n in self.qsizes:
                out.append(tuple(c.items))
            elif n in self.dnames:
                out.append(tuple(c.items()))
            elif n in self.snames:
                out.append(tuple(sorted(c, key=_set_key)))
            else:
                out.append(tuple(c))
        return tuple(out)

    def _env(self, g: tuple, arrays: tuple, objects: tuple, loc: dict[str, Any]) -> dict[str, Any]:
        """The names an evaluation sees, each container a new mutable copy."""
        env = dict(zip(self.gnames, g, strict=True))
        for n, a in zip(self.anames, arrays, strict=True):
            env[n] = dict(a) if n in self.dnames else set(a) if n in self.snames else \
                _Queue(a, self.qsizes[n]) if n in self.qsizes else deque(a) if n in self.deqnames else list(a)
        env.update((n, _Object(o)) for n, o in zip(self.onames, objects, strict=True))
        env.update((k, v) for k, v in loc.items() if k != _EXC)
        return env

    def successors(self, state: tuple) -> tuple[list[tuple], set[str]]:
        """The successor states and the kinds of violation found in this state's steps. A step runs the
        instruction at the thread's pc, then the glue instructions after it (see the module docstring)."""
        out, kinds = self.steps(state)
        return [s for _, s in out if s], kinds

    def waiting(self, state: tuple, t: int) -> bool:
        """Whether thread t rests at a blocking instruction (an acquire, a join, ``wait_until``, a blocking
        queue operation, an executor's wait): movers' node with a guard, where a thread *waits* (liveness)."""
        pc = state[4][t][0]
        return pc >= 0 and self.threads[t].code[pc][0] in _BLOCKING

    def steps(self, state: tuple) -> tuple[list[tuple[int, tuple]], set[str]]:
        """Each thread's steps from ``state`` as (thread, successor) pairs, the successor ``()`` for a step
        whose path ends (a violation, a false ``assume``), and the kinds of violation found."""
        g, arrays, objects, owners, frames = state
        self._frames = frames
        out: list[tuple[int, tuple]] = []
        kinds: set[str] = set()
        live = False
        for t, (pc, loc) in enumerate(frames):
            fn = self.threads[t]
            if pc < 0 or (fn.task is not None and g[self.futures + fn.task] is None):
                continue  # ended, or a task never submitted
            live = True
            todo: list[_Next] = [(g, arrays, objects, owners, pc, dict(loc))]
            first, glue = True, 0
            while todo:
                here = todo.pop()
                outcomes = self._execute(t, fn, here)
                if first and outcomes is None:
                    kinds.add("runtime-error")  # a release of a lock the thread does not hold: no step
                    break
                first = False
                for o in outcomes or ():
                    if isinstance(o, str):
                        if o:
                            kinds.add(o)
                        out.append((t, ()))  # a step whose successor is dropped: not a deadlock
                        continue
                    nxt = o[4]
                    if nxt >= 0 and not fn.costly[nxt]:
                        glue += 1
                        if glue > _GLUE_LIMIT:
                            raise Unsupported("local work that never reaches a step")
                        todo.append(o)
                        continue
                    frame = (nxt, () if nxt < 0 else tuple(sorted(o[5].items())))
                    out.append((t, (o[0], o[1], o[2], o[3], frames[:t] + (frame,) + frames[t + 1 :])))
        if live and not out:
            kinds.add("deadlock")
        return out, kinds

    def _execute(self, t: int, fn: _Function, here: _Next) -> list[_Next | str] | None:
        """The outcomes of the instruction at ``here``'s pc ([] when it blocks; None for a release of a lock
        the thread does not hold)."""
        g, arrays, objects, owners, pc, loc = here
        ins = fn.code[pc]
        op = ins[0]
        try:
            return self._run(t, fn, here, ins)
        except _RAISES as e:  # a Python exception of the evaluation is the model's (section 5.1)
            if op == "assign" and len(ins[4]) > 1:
                raise Unsupported("a choice that raises") from None
            return [self._raise(fn, pc, e, here)]

    def _run(self, t: int, fn: _Function, here: _Next, ins: tuple) -> list[_Next | str] | None:
        g, arrays, objects, owners, pc, loc = here
        op = ins[0]
        env = self._env(g, arrays, objects, loc)
        drops = fn.drops[pc]

        def local(locd: dict[str, Any]) -> dict[str, Any]:
            for k in drops:
                locd.pop(k, None)
            return locd

        if op == "assign":
            _, kind, name, index, alternatives, nxt = ins
            out: list[_Next | str] = []
            for value in alternatives:
                env = self._env(g, arrays, objects, loc)
                v = _eval(value, env)
                locd = dict(loc)
                g2, a2, ob2 = g, self._containers_back(arrays, env), objects
                if kind == "g":
                    k = self.gnames.index(name)
                    g2 = g[:k] + (v,) + g[k + 1 :]
                elif kind == "l":
                    locd[name] = v
                elif kind == "o":
                    k = self.onames.index(name)
                    fields = dict(objects[k])
                    fields[index] = v
                    ob2 = objects[:k] + (tuple(sorted(fields.items())),) + objects[k + 1 :]
                elif name in self.dnames:
                    k = self.anames.index(name)
                    entries = dict(a2[k])
                    entries[_eval(index, env)] = v
                    a2 = a2[:k] + (tuple(entries.items()),) + a2[k + 1 :]
                else:
                    k = self.anames.index(name)
                    i = _eval(index, env)
                    arr = list(a2[k])
                    arr[i] = v  # an IndexError out of range
                    a2 = a2[:k] + (tuple(arr),) + a2[k + 1 :]
                out.append((g2, a2, ob2, owners, nxt, local(locd)))
            return out
        locd = dict(loc)
        o2 = owners
        if op == "cond":
            nxt = ins[2] if _eval(ins[1], env) else ins[3]
        elif op == "for":
            _, var, bound, body, exit_, key = ins
            it = locd.get(key, 0)
            if it < bound:
                locd[var], locd[key], nxt = it, it + 1, body
            else:
                locd.pop(key, None)
                nxt = exit_
        elif op == "acq":
            k = self.locks.index(ins[1])
            if owners[k] is not None:
                return []  # blocked
            o2 = owners[:k] + (t,) + owners[k + 1 :]
            nxt = ins[2]
        elif op == "tryacq":
            k = self.locks.index(ins[1])
            if owners[k] is None:
                o2 = owners[:k] + (t,) + owners[k + 1 :]
                nxt = ins[2]
            else:
                nxt = ins[3]
        elif op == "rel":
            k = self.locks.index(ins[1])
            if owners[k] != t:
                return None
            o2 = owners[:k] + (None,) + owners[k + 1 :]
            nxt = ins[2]
        elif op == "raise":
            return [self._raise(fn, pc, ins[1](*_eval(ins[2], env)), here)]
        elif op == "reraise":  # the end of a finally block or a `with` release on the way out of an exception
            exc, args = loc[_EXC]
            return [self._raise(fn, pc, exc(*args), (g, arrays, objects, owners, pc,
                                                     {k: v for k, v in loc.items() if k != _EXC}))]
        elif op == "qput":  # blocks while the queue is full
            _, name, value, nxt = ins
            q = env[name]
            if q.full():
                return []
            q.put_nowait(_eval(value, env))
            return [(g, self._containers_back(arrays, env), objects, owners, nxt, local(locd))]
        elif op == "qget":  # blocks while the queue is empty
            _, name, target, nxt = ins
            q = env[name]
            if q.empty():
                return []
            v = q.get_nowait()
            a2 = self._containers_back(arrays, env)
            if target is None:
                return [(g, a2, objects, owners, nxt, local(locd))]
            kind, tname, _ = target
            if kind == "l":
                locd[tname] = v
                return [(g, a2, objects, owners, nxt, local(locd))]
            if kind != "g":
                raise Unsupported("q.get() into an element or a field")
            k = self.gnames.index(tname)
            return [(g[:k] + (v,) + g[k + 1 :], a2, objects, owners, nxt, local(locd))]
        elif op in ("take", "ret", "submit", "result", "shutdown"):
            return self._executor_op(t, fn, here, ins, env, local(locd))
        elif op == "nop":
            nxt = ins[1]
        elif op == "qdone":
            nxt = ins[2]
        elif op == "endexc":  # the end of an except clause: the exception is gone
            locd.pop(_EXC, None)
            nxt = ins[1]
        elif op == "delname":
            del locd[ins[1]]
            nxt = ins[2]
        elif op == "del":  # del d[k], del a[i]: a KeyError, an IndexError
            _, name, index, nxt = ins
            del env[name][_eval(index, env)]
            return [(g, self._containers_back(arrays, env), objects, owners, nxt, local(locd))]
        elif op == "join":
            if self._frames[ins[1]][0] >= 0:
                return []  # blocked until the thread has terminated
            nxt = ins[2]
        elif op == "wait":
            if not _eval(ins[1], env):
                return []  # blocked
            nxt = ins[2]
        elif op == "assume":
            if not _eval(ins[1], env):
                return [""]
            nxt = ins[2]
        elif op == "assert":
            if not _eval(ins[1], env):
                if fn.task is not None or any(types is not None and issubclass(AssertionError, types)
                                              for types, _ in fn.catch[pc]):
                    return [self._raise(fn, pc, AssertionError(ins[3]), here)]  # caught (section 5.1)
                return ["assertion"]
            nxt = ins[2]
        else:
            raise AssertionError(op)
        return [(g, arrays, objects, o2, nxt, local(locd))]


    def _executor_op(self, t: int, fn: _Function, here: _Next, ins: tuple, env: dict[str, Any],
                     locd: dict[str, Any]) -> list[_Next | str]:
        """A step of the executor model: a task taken, a task's return, a submit, ``result()``, ``shutdown``."""
        g, arrays, objects, owners, pc, _ = here
        op, plan, first = ins[0], self.plan, self.futures

        def set_future(i: int, value: tuple) -> tuple:
            return g[: first + i] + (value,) + g[first + i + 1 :]

        def started(i: int) -> bool:
            return self._frames[len(self.threads) - len(plan.tasks) + i][0] != self.threads[
                len(self.threads) - len(plan.tasks) + i].entry

        if op == "take":  # by a free worker, first in first out
            i = ins[1]
            pool = plan.tasks[i][0]
            mine = [j for j, task in enumerate(plan.tasks) if task[0] == pool]
            running = sum(1 for j in mine if started(j) and g[first + j] == ("pending",))
            if g[first + i] is None or running >= plan.pools[pool] or not all(started(j) for j in mine if j < i):
                return []
            return [(g, arrays, objects, owners, ins[2], locd)]
        if op == "ret":
            return [(set_future(fn.task, ("ok", _eval(ins[1], env))), arrays, objects, owners, -1, {})]  # type: ignore[arg-type]
        if op == "submit":
            return [(set_future(ins[1], ("pending",)), arrays, objects, owners, ins[2], locd)]
        if op == "shutdown":
            pool = ins[1]
            if any(task[0] == pool and g[first + j] == ("pending",) for j, task in enumerate(plan.tasks)):
                return []
            return [(g, arrays, objects, owners, ins[2], locd)]
        _, i, target, nxt = ins  # result()
        future = g[first + i]
        if future == ("pending",):
            return []
        if future[0] == "exc":
            return [self._raise(fn, pc, future[1](*future[2]), (g, arrays, objects, owners, pc, locd))]
        if target is None:
            return [(g, arrays, objects, owners, nxt, locd)]
        kind, name, _ = target
        if kind == "l":
            return [(g, arrays, objects, owners, nxt, {**locd, name: future[1]})]
        if kind != "g":
            raise Unsupported("result() into an element or a field")
        k = self.gnames.index(name)
        return [(g[:k] + (future[1],) + g[k + 1 :], arrays, objects, owners, nxt, locd)]


def naive_explore(source: str, max_states: int = 100_000, granularity: str = "access") -> NaiveResult:
    """Explore every interleaving of ``source`` at ``granularity`` ("access" or "statement"); collect every
    reachable kind of violation. States are told apart by ``typed`` keys, so that ``True`` and ``1`` are two
    values, as in the language."""
    model = NaiveModel(source, granularity)
    seen = {_typed_state(model.initial)}
    todo = deque([model.initial])
    result = NaiveResult(states=1, transitions=0)
    while todo:
        succs, kinds = model.successors(todo.pop())
        result.kinds |= kinds
        result.transitions += len(succs)
        for s in succs:
            key = _typed_state(s)
            if key not in seen:
                if len(seen) >= max_states:
                    result.complete = False
                    result.states = len(seen)
                    return result
                seen.add(key)
                todo.append(s)
    result.states = len(seen)
    return result
