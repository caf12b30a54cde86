"""The program IR: what the compiler produces and the semantics runs.

A program is its globals, its classes and its code objects (one per function, method and the module's
initialisation). A code object is a control-flow graph of *nodes*: each node is a compiled closure over
integer slots plus the static facts a reduction asks about (line, source, the globals it may read and write,
whether it is a synchronisation operation). A node is *costly* when execution must stop before it: the
thread's program counter only ever rests on costly nodes, and one atomic step runs from one costly node up to
the next (docs/language.md section 8). Free nodes are the glue between: jumps, the continuation of a statement
after a call returns, falling off the end of a function.

Runtime values that are not plain Python data are interned objects compared by identity, so that states stay
hashable tuples whose equality is exact: ``Ref`` (a heap reference), ``Func`` (a function value),
``ClassInfo`` (an object's class, its first slot on the heap), and ``Bool`` (a boolean as a state holds it:
see its docstring; Python's ``1 == True`` must not merge two states).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


class Ref:
    """A reference to heap object number ``i``. Interned: ``ref(i) is ref(i)``, so identity is equality."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i

    def __repr__(self) -> str:
        return f"@{self.i}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (ref, (self.i,))


_REFS: list[Ref] = []


def ref(i: int) -> Ref:
    """The interned reference to heap slot ``i``."""
    while len(_REFS) <= i:
        _REFS.append(Ref(len(_REFS)))
    return _REFS[i]


class Bool:
    """How a state holds a boolean.

    ``True`` and ``1`` are different values of the language (``x is True`` tells them apart), but Python's
    ``1 == True`` and ``hash(1) == hash(True)`` would merge two states that differ only there, and the
    interleavings from the second would never be explored. So a state never holds a Python ``bool``: every
    store into a global, a field, an array element or a local boxes it (``box``), and every load unboxes it
    (``unbox``); compiled code only ever computes with plain Python values. The two instances are interned
    and compare by identity, like ``Ref``.
    """

    __slots__ = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Bool({self.value})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (box, (self.value,))


TRUE = Bool(True)
FALSE = Bool(False)


class Unbound:
    """The value of a local variable before its first assignment. Reading it is a runtime error, as
    Python's ``UnboundLocalError`` (a local that merely held ``None`` would hide the bug)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unbound>"

    def __reduce__(self) -> str:
        return "UNBOUND"


UNBOUND = Unbound()


class Same:
    """What a node's whole step (``Node.fast_step``, ``fast_succ``) returns where it is a self-loop: it came
    back to its own node having written nothing (a busy wait whose test holds), so the successor is the state
    it ran from (``lang/codegen._whole_step``). ``semantics/system.py`` hands on that state itself: no frame,
    threads or state is built, and the plain search knows the state stored without looking it up."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<same state>"


SAME = Same()


def box(v: Any) -> Any:
    """A runtime value as a state holds it: booleans boxed, also inside tuples. Idempotent."""
    t = type(v)
    if t is bool:
        return TRUE if v else FALSE
    if t is tuple:
        for x in v:
            tx = type(x)
            if tx is bool or tx is tuple:
                return tuple([box(y) for y in v])
    return v


def unbox(v: Any) -> Any:
    """A value read from a state as compiled code sees it: the inverse of ``box``."""
    t = type(v)
    if t is Bool:
        return v.value
    if t is tuple:
        for x in v:
            tx = type(x)
            if tx is Bool or tx is tuple:
                return tuple([unbox(y) for y in v])
    return v


@dataclass(eq=False)
class ClassInfo:
    """A class of heap objects. Builtin ones (list, Lock, …) have ``builtin`` set."""

    name: str
    fields: list[str] = field(default_factory=list)
    methods: dict[str, Code] = field(default_factory=dict)
    base: ClassInfo | None = None
    builtin: str = ""
    is_thread: bool = False
    # Lists are arrays; each list expression in the source has its own list class (its allocation site),
    # so that reductions can tell the elements of different arrays apart.
    is_list: bool = False
    line: int = 0
    # A list of a model that appends to or pops from lists: its length can change, so the operations that
    # depend on it record a read of it (``runtime_ops._read_length``).
    grows: bool = False

    def __post_init__(self) -> None:
        self.field_index: dict[str, int] = {}
        self.synchronized: set[str] = set()
        self._blank: tuple | None = None  # a fresh instance, made once (``machine.new_object``)

    def finish(self) -> None:
        """Compute field slots: object layout is (class, monitor, *fields)."""
        self.field_index = {f: i + 2 for i, f in enumerate(self.fields)}

    def lookup(self, name: str) -> Code | None:
        c: ClassInfo | None = self
        while c is not None:
            if name in c.methods:
                return c.methods[name]
            c = c.base
        return None

    def is_subclass_of(self, other: ClassInfo) -> bool:
        c: ClassInfo | None = self
        while c is not None:
            if c is other:
                return True
            c = c.base
        return False

    def __repr__(self) -> str:
        return self.name


# Object layout on the heap: obj[0] is its ClassInfo, obj[1] its intrinsic monitor (None when free and nobody
# waits, else (owner, count, waiters)), obj[2:] its fields or, for lists, its elements.
CLS, MON, FIELDS = 0, 1, 2

LIST = ClassInfo("list", builtin="list", is_list=True)
LOCK = ClassInfo("Lock", ["owner"], builtin="Lock")
RLOCK = ClassInfo("RLock", ["owner", "count"], builtin="RLock")
SEMAPHORE = ClassInfo("Semaphore", ["value"], builtin="Semaphore")
CONDITION = ClassInfo("Condition", ["lock", "waiters"], builtin="Condition")
THREAD = ClassInfo("Thread", ["_tid", "_target", "_args"], builtin="Thread", is_thread=True)
# Their fields start with '$', which no model field can: a model's field of the same name must not make the
# reductions take them for that field (a final field, say).
EVENT = ClassInfo("Event", ["$flag"], builtin="Event")
BARRIER = ClassInfo("Barrier", ["$parties", "$waiters"], builtin="Barrier")
for _c in (LIST, LOCK, RLOCK, SEMAPHORE, CONDITION, THREAD, EVENT, BARRIER):
    _c.finish()
LOCK_CLASSES = (LOCK, RLOCK)


# Node kinds that are synchronisation operations. An "indivisible" node is a `with indivisible():` block that
# contains one; an "atomic-step" block contains only data accesses. "try_acquire" is ``acquire(blocking=False)``
# or ``acquire(timeout=x)`` (never blocks, reads the lock's state: a non-mover); "yield" is ``sleep(x)`` or
# ``join(timeout)``, a step boundary that changes nothing; "is-alive" is ``t.is_alive()``, which observes another
# thread's end as ``join`` does (lang/timeouts.py).
SYNC_KINDS = frozenset(
    {"acquire", "release", "wait", "reacquire", "notify", "start", "join", "wait_until", "indivisible",
     "try_acquire", "yield", "is-alive"}
)


@dataclass(eq=False)
class Func:
    """A model function as a value (for ``Thread(target=f)``)."""

    name: str
    code: Code | None = None
    # ``Thread(target=f, name="...")``: one Func per such call, carrying the name for reports.
    thread_name: str | None = None
    # ``Thread(target=f, daemon=True)``: the slot of the hidden global that lists the daemon threads' ids
    # (``Program.daemon_slot``), which the thread's start() extends.
    daemon_slot: int | None = None

    def __repr__(self) -> str:
        return f"<function {self.name}>"


@dataclass(eq=False)
class Node:
    """One node of a code object's control-flow graph.

    ``run(ctx)`` executes it and sets ``ctx.pc`` (or pushes/pops frames). ``guard(ctx)``, when present, says
    whether the node may execute now; a node without a guard is always enabled.
    """

    run: Callable[[Any], None]
    costly: bool
    line: int
    col: int = 0
    source: str = ""
    guard: Callable[[Any], bool] | None = None
    # Static facts, for reductions and for deadlock messages.
    kind: str = "stmt"  # stmt, branch, loop, assert, return, ... or one of SYNC_KINDS
    reads: frozenset[str] = frozenset()  # global names it may read
    writes: frozenset[str] = frozenset()  # global names it may write
    fields_read: frozenset[str] = frozenset()
    fields_written: frozenset[str] = frozenset()
    elements_read: bool = False  # may read an element of some list
    elements_written: bool = False
    callee_names: frozenset[str] = frozenset()  # 'f', '.method', 'Class.__init__'
    lock_name: str | None = None  # the global holding the lock a lock operation uses, if that is known
    calls: bool = False
    allocates: bool = False
    chooses: bool = False  # makes a nondeterministic choice (choose)
    atomic_block: int = -1  # the `with atomic():` block it is in, or -1
    commit: bool = False  # `commit()` marks this node as the commit point
    # Under access granularity, the accesses of the statement read earlier into hidden locals: (the access's
    # text, the local's name) (lang/granularity.py), so that a failed assertion shows what was read.
    reads_into: tuple[tuple[str, str], ...] = ()
    blocked_on: Callable[[Any], str] | None = None  # describes what a disabled node waits for
    # The library method (lang/library) the node belongs to, as ``queue.Queue.put``; "" in the model's own code.
    # Its ``line`` follows the model's lines (``Program.library_files``): reports show the user's call instead.
    library: str = ""

    succ: tuple[int, ...] = ()  # control-flow successors in the code (static analyses)
    # For the static escape analysis (analysis/static_escape.py; see ``lang/function.Facts``): where the node
    # may copy references (flows), and the abstract values of the objects it may access (uses).
    flows: tuple[tuple[Any, ...], ...] = ()
    uses: tuple[frozenset[Any], ...] = ()
    # Pairs of abstract values it compares that may both be lists (``lang/function.Facts.compared``); the
    # compiler turns those that may be into reads of elements (``elements_read``, ``uses``).
    compared: tuple[tuple[frozenset[Any], frozenset[Any]], ...] = ()
    # The step as a generated Python function (``lang/codegen.py``), for the searches that need no Effects.
    fast: Callable[[tuple, tuple, list, int], tuple[tuple, tuple, int]] | None = None
    fast_tracked: Callable[..., tuple[tuple, tuple, int]] | None = None  # the same, recording its Effect
    # The whole step: (g, heap, threads, t, th, top) -> state, or ``SAME`` (a self-loop: the state it ran from).
    fast_step: Callable[..., Any] | None = None
    fast_succ: Callable[..., Any] | None = None  # guard and whole step: as fast_step, or None when disabled
    fast_guard: Callable[..., bool] | None = None  # the guard: (g, heap, threads, top, t) -> bool
    # Whether the one-call form (``fast_succ``, else ``fast_step``) reads no thread's stack but its own: its
    # answer is then a function of the thread's id, the globals, the heap and the thread's own stack, what the
    # plain search's transition cache keys it by (search/transition_cache.py). Not so for ``join`` or
    # ``is_alive`` (another thread's stack) or a return handed to the caller's code (``codegen.own_stack_only``).
    fast_local: bool = False

    @property
    def is_sync(self) -> bool:
        """A synchronisation operation (visible to every reduction)."""
        return self.kind in SYNC_KINDS


def call_line(frames: Sequence[tuple], node: Node) -> int:
    """The line a report shows for ``node`` run in a thread whose stack is ``frames`` (each ``(code, pc, *locals)``,
    innermost last): its own line in the model's code; in the library's, the line of the model's call into it
    (the innermost frame at a node of the model's own), or 0 in a thread the library started that is not in
    the model's code (an executor's worker between tasks): no line of the model's file."""
    if not node.library:
        return node.line
    for f in reversed(frames):
        nodes = f[0].nodes
        if f[1] < len(nodes) and not nodes[f[1]].library:
            return nodes[f[1]].line
    return 0


@dataclass(eq=False)
class Code:
    """A function, method or the module's initialisation, as nodes over a frame of local slots."""

    name: str
    params: list[str]
    locals: list[str]  # slot names, params first; hidden temporaries start with '$'
    nodes: list[Node] = field(default_factory=list)
    entry: int = 0
    line: int = 0
    synchronized: bool = False
    owner: ClassInfo | None = None
    fast_source: str = ""  # the generated source of its nodes' fast functions (lang/codegen.py)
    # For a body that is ``return e``: e as a generated function of (globals, heap) (lang/codegen.py).
    fast_value: Callable[[tuple, tuple], Any] | None = None
    # Per node, the function that gives a thread's successor there in one call (its ``fast_succ``, or its
    # ``fast_step`` when it has no guard), else None: the plain full search's dispatch (semantics/system.py).
    fast_dispatch: tuple[Callable[..., Any] | None, ...] = ()
    fast_local: tuple[bool, ...] = ()  # per node, its ``Node.fast_local`` where ``fast_dispatch`` is its one-call form
    # Per node, the step that goes on from it once a callee returns into it (a call's continuation), with the
    # returned value: ``_r{k}(g, heap, threads, t, frames, top, value) -> state`` (lang/codegen.py), else None;
    # empty when none has one. A callee's whole step that returns calls it (the caller's code is known only
    # when the step runs).
    fast_return: tuple[Callable[..., Any] | None, ...] = ()
    # The exception handlers of its ``try`` statements and cleanups (ir/exceptions.py), innermost last:
    # (pc intervals ((start, end), ...), handler pc, the hidden local the exception in flight goes to, what
    # it may stop: None (a cleanup that re-raises), True (anything), or the classes of its except clauses,
    # the hidden temporaries set to None when it catches one: those of the statements it interrupts).
    handlers: tuple[tuple[tuple[tuple[int, int], ...], int, int, Any, tuple[int, ...]], ...] = ()
    # How a call's arguments fill ``params`` (keywords, defaults): a ``lang/functions_model.Signature``.
    signature: Any = None

    @property
    def nlocals(self) -> int:
        return len(self.locals)

    def new_frame_locals(self, args: list[Any]) -> list[Any]:
        """The locals of a fresh frame: the (boxed) arguments, then every variable unbound and every hidden
        temporary (``$…``) None."""
        blank = self.__dict__.get("_blank")
        if blank is None or len(blank) + len(self.params) != len(self.locals):
            blank = self._blank = [None if n.startswith("$") else UNBOUND for n in self.locals[len(self.params):]]
        if len(args) != len(self.params):
            # Callers check arity; a mismatch here only pads (the caller reports the error).
            return [box(v) for v in args] + [UNBOUND] * (len(self.locals) - len(args))
        return [box(v) for v in args] + blank

    def __repr__(self) -> str:
        return f"<code {self.name}>"


@dataclass(eq=False)
class Exclusive:
    """An exclusive access predicate declared with ``exclusive``, ``guarded_by`` or ``thread_local``.

    ``target`` is ("global", name), ("element", name, index), ("array", name) or ("field", class, field).
    ``pred(ctx, t, obj)`` evaluates the predicate for thread ``t`` (and object ``obj`` for fields).
    """

    target: tuple[Any, ...]
    pred: Callable[[Any, int, Any], bool]
    line: int
    text: str


@dataclass(eq=False)
class LockingDeclaration:
    """``self_locking(Cls)`` (kind "self_locking": instances follow Dwyer et al.'s weak self-locking
    discipline, the paper's T_WSL) or ``lock_protected(Cls)`` (kind "lock_protected": instances are LD-Objects,
    Stoller's locking discipline). Used by ``reduce/locking.py``."""

    kind: str
    cls: ClassInfo
    line: int
    text: str


@dataclass(eq=False)
class AtomicBlock:
    """A ``with atomic():`` block: ``outer`` is the block it is nested in (-1: none); ``has_commit`` says
    whether ``commit()`` marks its commit point (in it or in a block nested in it)."""

    ident: int
    line: int
    code: str
    outer: int = -1
    has_commit: bool = False


@dataclass(frozen=True)
class LtlDeclaration:
    """``ltl("formula")`` or ``ltl("formula", name="fair")``: a property of every fair run, its formula in
    SPIN's syntax over the ``@predicate`` names, kept as written (``liveness/ltl.py`` parses it). ``name`` is
    the one given, else ``ltl_k`` for the k-th declaration of the module; ``line`` and ``col`` (1-based) are
    the call's, for messages."""

    name: str
    formula: str
    line: int
    col: int


@dataclass(eq=False)
class Program:
    filename: str
    source: str
    globals: list[str]
    classes: dict[str, ClassInfo]
    functions: dict[str, Code]
    init: Code
    invariants: list[tuple[str, Code]] = field(default_factory=list)
    # ``@predicate`` functions by name, the atomic propositions of ``ltl_formulas``
    # (``semantics.system.TransitionSystem.atoms``).
    predicates: dict[str, Code] = field(default_factory=dict)
    ltl_formulas: list[LtlDeclaration] = field(default_factory=list)
    exclusives: list[Exclusive] = field(default_factory=list)
    # Python's truth of a value in a state (a Ctx, the value): the language's (``lang.runtime_ops.truth_of``:
    # an empty list, dict or deque is false). An ``@invariant`` is judged by it, as ``if`` would judge it.
    truth: Callable[[Any, Any], bool] | None = None
    atomic_blocks: list[AtomicBlock] = field(default_factory=list)
    locking: list[LockingDeclaration] = field(default_factory=list)
    # "access": a step makes at most one access to shared memory; "statement": one statement (lang/granularity.py).
    granularity: str = "access"
    # Whether the module's code may go on after it started a thread, as the main thread (``main_thread``):
    # then its code is one a thread runs, among ``codes()``, for every analysis.
    main_thread: bool = False
    # The nodes (by id) where the module's code, once it has started a thread, becomes the main thread
    # (``lang/compiler.main_stops``).
    main_stops: frozenset[int] = frozenset()
    # The nodes of the module's code (by id) the main thread may run: those reachable from a stop. The others
    # run only atomically, before the search (what they write is a constant for the threads).
    main_nodes: frozenset[int] = frozenset()

    def thread_nodes(self, code: Code) -> list[Node]:
        """The nodes of ``code`` a thread may run (those of the module's code only if the main thread may)."""
        if code is not self.init:
            return code.nodes
        return [n for n in code.nodes if id(n) in self.main_nodes]
    # The slot of the hidden global ``$daemons`` (the ids of the daemon threads started, a tuple), for models
    # that start daemon threads: the deadlock check leaves them out (``TransitionSystem.deadlock``).
    daemon_slot: int | None = None
    # Some thread asks whether another has ended (``t.is_alive()``): a thread's end is then a write of its
    # Thread object's id, and a thread reaches its own Thread object (lang/timeouts.py, analysis/escape.py).
    ends_observed: bool = False
    # The standard library's model source compiled into the program (lang/library): each file's first line
    # number minus one in the program's numbering, and its path.
    library_files: tuple[tuple[int, str], ...] = ()

    def library_line(self, node: Node) -> tuple[str, int] | None:
        """The library file and line of a library node, None for the model's own."""
        if not node.library:
            return None
        for start, path in reversed(self.library_files):
            if node.line > start:
                return path, node.line - start
        return None

    def codes(self) -> list[Code]:
        """Every function and method, and the module's code when it may run as the main thread."""
        out = list(self.functions.values())
        if self.main_thread:
            out.append(self.init)
        for cls in self.classes.values():
            out.extend(cls.methods.values())
        return out

    def callee_index(self) -> dict[str, list[Code]]:
        """The codes a node's ``callee_names`` may denote: 'f', '.method', 'Class.method'."""
        index: dict[str, list[Code]] = {}
        for name, code in self.functions.items():
            index.setdefault(name, []).append(code)
        for cls in self.classes.values():
            for m, code in cls.methods.items():
                index.setdefault("." + m, []).append(code)
                index.setdefault(f"{cls.name}.{m}", []).append(code)
        return index

    def reachable_codes(self, roots: list[Code]) -> list[Code]:
        """``roots`` and every code they may call, transitively."""
        index = self.callee_index()
        seen: list[Code] = []
        work = list(roots)
        while work:
            c = work.pop()
            if c in seen:
                continue
            seen.append(c)
            for n in c.nodes:
                for name in n.callee_names:
                    work.extend(index.get(name, ()))
        return seen

    def global_slot(self, name: str) -> int:
        return self.globals.index(name)

    def source_line(self, line: int) -> str:
        lines = self.__dict__.get("_lines")
        if lines is None:
            lines = self._lines = re.split(r"\r\n|\r|\n", self.source)
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""
