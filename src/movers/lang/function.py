"""The core of the function compiler: the state and the node emission that every construct's rule builds on.

A ``FunctionCompiler`` (assembled in ``lang/compiler.py`` from ``FunctionCore`` and the mixins of
``statements.py``, ``concurrency.py``, ``expressions.py`` and ``builtins.py``) compiles one function, method
or the module's initialisation into a ``Code``: a list of nodes, each a closure over integer slots. The core
holds a function's locals and hidden slots, its labels, the nodes emitted so far (``emit``, ``jump``, and
``finish``, which resolves the labels and builds the ``Node``s), the facts each node records for the static
analyses (``Facts``, abstract values ``AV``), and the lowering of statements that contain calls (``simple``).

The granularity of docs/language.md section 8 is decided by the function compiler and only by it: the first node of
every simple statement, every non-constant ``if``/``while`` condition, every ``for`` header, and the entry and
exit of ``with lock:`` are *costly* (a step starts there: ``emit(…, costly=True)``); everything else is free
glue that runs as part of the step before it.

Calls of model functions are part of the calling statement's step. A statement whose expression contains
calls is lowered into segments (``simple``): the costly node evaluates up to the first call and pushes the
callee's frame; when the callee's ``return`` step pops it, the caller's next segment (a free node) stores the
result in a hidden temporary and goes on, to the next call or to the end of the statement. Calls are therefore
evaluated before the rest of the expression (``ExpressionCompiler.site`` registers each as a ``CallSite``);
calls inside ``and``/``or``/conditional expressions are rejected, since hoisting them would change which of
them run.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from movers.ir.machine import Ctx
from movers.ir.program import SYNC_KINDS, UNBOUND, AtomicBlock, ClassInfo, Code, Func, Node, box
from movers.lang import codegen, codegen_calls
from movers.lang.errors import ModelSyntaxError
from movers.lang.functions_model import CELL, Lifted, own_nodes
from movers.lang.granularity import Finals, Lowering, break_local_cycles
from movers.lang.syntax import BUILTIN_METHODS, SYNC_METHODS, _is_docstring, walked

Fn = Callable[[Ctx], Any]

# Whether a statement's hidden temporaries (the lowering's ``$v``, the call results ``$t``) reuse the slots of
# the statements before it (``FunctionCore.temp_slot``) and are dropped when an exception is caught around it.
# Off, each has a slot of its own for the frame's life and keeps a value an exception left there: the
# compilation before the reuse, which tests compare with (tests/test_temporaries.py).
SHARE_TEMPORARIES = True


class ModuleFacts(Protocol):
    """What a function's compiler asks of its module's (``compiler.ModuleCompiler`` is the one): the module's
    names, what the whole module uses, its atomic blocks, its source text and its error messages."""

    global_slot: dict[str, int]
    classes: dict[str, ClassInfo]
    class_nodes: dict[str, ast.ClassDef]
    functions: dict[str, Code]
    funcs: dict[str, Func]
    atomic_blocks: list[AtomicBlock]
    lists_grow: bool
    has_lists: bool
    granularity: str
    finals: Finals
    list_globals: frozenset[str]
    uses_events: bool
    uses_barriers: bool
    uses_try: bool
    lifted: dict[int, Lifted]
    value_callees: list[str]
    cells: dict[int, frozenset[str]]
    dataclasses: dict[str, Any]
    compared_fields: frozenset[str]
    uses_is_alive: bool
    has_dicts: bool
    has_local: bool
    bound_names: set[str]
    bound_codes: list[tuple[str, Code]]
    main_code: bool
    has_defaultdict: bool
    container_arith: bool
    has_deques: bool
    compare_sites: list[tuple[Code, Any, Any, tuple[int, int]]]
    truth_sites: list[tuple[Code, Any, tuple[int, int]]]

    def defines_method(self, name: str) -> bool: ...

    def error(self, node: ast.AST | None, message: str) -> ModelSyntaxError: ...

    def text(self, node: ast.AST) -> str: ...


class Label:
    __slots__ = ("pc",)

    def __init__(self) -> None:
        self.pc = -1


# An abstract value, for the static escape analysis: the objects an expression may evaluate to, as a set of
# terms. ("local", slot) and ("global", name): what a variable holds (a lowering's temporary is ("local", name):
# temporaries share slots, ``FunctionCore.var``); ("new", site): an object allocated at
# ``site`` = (code name, line, column, class name); ("field", av, name) and ("element", av): what a field or an
# element of an object of ``av`` holds; ("return", code): what ``code`` returns; ("method_return", av, name):
# what method ``name`` returns, called on an object of ``av``; ("reach", av): the objects of ``av`` and,
# transitively, those their elements hold (what comparing lists by content reads). Tuples are not objects: a
# tuple's value is the union of its items'. A value that holds no reference (an int) is the empty set.
AV = frozenset
NO_VALUE: frozenset[Any] = frozenset()


class Facts:
    """What a node's code may access: recorded by the expression and target compilers *while* they compile
    the code that does the access, so that the static facts reductions rely on cannot disagree with what
    executes (a second walk over AST shapes once missed ``v in a`` and ``x, y = a``)."""

    __slots__ = ("reads", "writes", "fields_read", "fields_written", "elements_read", "elements_written",
                 "callees", "allocates", "chooses", "flows", "uses", "compared")

    def __init__(self) -> None:
        self.reads: set[str] = set()
        self.writes: set[str] = set()
        self.fields_read: set[str] = set()
        self.fields_written: set[str] = set()
        self.elements_read = False
        self.elements_written = False
        self.callees: set[str] = set()
        self.allocates = False
        self.chooses = False
        # For the static escape analysis (analysis/static_escape.py): where references flow, and the objects
        # the node accesses (fields, elements, lock state), as abstract values (``AV``). A flow is
        # ("store", dest, av), dest one of ("local", slot), ("global", name), ("field", av, name),
        # ("element", av), ("return",); ("call", code, (av, ...)): arguments to parameters;
        # ("method_call", av, name, (av, ...)): method ``name`` called on an object of ``av``;
        # ("thread", av, code, av_args): ``Thread(target=code, args=…)``; ("start", av): ``start()``.
        self.flows: list[tuple[Any, ...]] = []
        self.uses: list[AV] = []
        # Pairs of abstract values the node compares (``==``, ``<``, ``in``, ``min``…) that may both be
        # references: whether that reads lists' elements is decided once the module is compiled
        # (``compiler.resolve_comparisons``).
        self.compared: list[tuple[AV, AV]] = []

    def absorb(self, part: Facts) -> None:
        """Add the accesses recorded in ``part`` (a sub-expression compiled in a recording of its own)."""
        for name in ("reads", "writes", "fields_read", "fields_written", "callees"):
            getattr(self, name).update(getattr(part, name))
        self.elements_read |= part.elements_read
        self.elements_written |= part.elements_written
        self.allocates |= part.allocates
        self.chooses |= part.chooses
        self.flows.extend(part.flows)
        self.uses.extend(part.uses)
        self.compared.extend(part.compared)

    def info(self) -> dict[str, Any]:
        """The ``Node`` fields these facts fill."""
        return {
            "reads": frozenset(self.reads),
            "writes": frozenset(self.writes),
            "fields_read": frozenset(self.fields_read),
            "fields_written": frozenset(self.fields_written),
            "elements_read": self.elements_read,
            "elements_written": self.elements_written,
            "callee_names": frozenset(self.callees),
            "allocates": self.allocates,
            "chooses": self.chooses,
            "flows": tuple(self.flows),
            "uses": tuple(self.uses),
            "compared": tuple(self.compared),
        }


class CallSite:
    """A model call inside an expression, hoisted to run before the rest of the statement."""

    def __init__(self, temp: int, setup: Callable[[Ctx, int], None]) -> None:
        self.temp = temp
        self.setup = setup  # setup(ctx, ret_pc): evaluate receiver and arguments, push the frame
        # (the call, the callee's Code or None for a method): a plain call the fast path may make (codegen_calls).
        self.fast_call: tuple[ast.Call, Any] | None = None


class Exit:
    """An enclosing construct that must be left properly by return/break/continue."""

    def __init__(self, emit_exit: Callable[[ast.AST], None], loop: tuple[Label, Label] | None = None) -> None:
        self.emit_exit = emit_exit
        self.loop = loop  # (continue target, break target) for loops
        # The exception handler region the construct protects (lang/exceptions.py): the copies of its exit
        # code that return/break/continue run lie outside it.
        self.protection: Any = None


class FunctionCore:
    """One function's compilation: its slots, labels and pending nodes, and the facts of the node being
    compiled. The rules for each construct are the mixins that subclass it."""

    def __init__(self, mc: ModuleFacts, code: Code, fn: ast.FunctionDef | None, cls: ClassInfo | None) -> None:
        self.mc = mc
        self.code = code
        self.fn = fn
        self.cls = cls
        self.slot: dict[str, int] = {n: i for i, n in enumerate(code.locals)}
        self.global_names: set[str] = set()
        self.pending: list[tuple[Callable[[], Callable[[Ctx], None]], dict[str, Any]]] = []
        self.exits: list[Exit] = []
        # Exception handler regions (lang/exceptions.py), in the order their ``try`` began; the hidden locals
        # holding the exceptions the enclosing ``except`` clauses handle (a bare ``raise`` re-raises the last).
        self.protections: list[Any] = []
        self.handling: list[int] = []
        self.site_stack: list[list[CallSite]] | None = None
        # The heads of the function's while loops (``break_local_cycles``).
        self.while_heads: list[Label] = []
        self.temp_counter = 0
        # The call results live at once in the statement being compiled (``call_temp``), and how deeply
        # ``simple`` is nested: the slots are reused once the outermost statement is compiled.
        self.call_depth = 0
        self.simple_nesting = 0
        # The lowering's temporaries held by the statements around the one being compiled (``movers_temps``,
        # lang/granularity.py): an exception caught here drops those above.
        self.temp_floor = 0
        self.atomic_block = -1
        self.commit_next = False
        self.is_module = fn is None
        # The variables that live in cells (``nonlocal``; lang/functions_model.py): their slots hold the cells.
        self.cells: frozenset[str] = mc.cells.get(id(fn), frozenset()) if fn is not None else frozenset()
        # The facts of the node being compiled (see ``recording``); outside one, a sink nobody reads.
        self.facts = Facts()
        # The abstract value (``AV``) of each expression compiled so far, for the facts' flows.
        self.values: dict[ast.AST, AV] = {}
        # Field names the generated code looks up, by the identifiers it binds them to (lang/codegen.py).
        self.fast_names: dict[str, str] = {}

    @contextmanager
    def recording(self) -> Iterator[Facts]:
        """Record the accesses of the code compiled inside the block, for the node about to be emitted."""
        outer = self.facts
        self.facts = f = Facts()
        try:
            yield f
        finally:
            self.facts = outer

    # -- abstract values (static escape analysis) ---------------------------------------------------------------

    def value(self, e: ast.AST | None) -> AV:
        """The abstract value of an expression already compiled (none for constants and absent ones)."""
        return self.values.get(e, NO_VALUE) if e is not None else NO_VALUE

    def note(self, e: ast.AST, *parts: AV) -> None:
        self.values[e] = NO_VALUE.union(*parts)

    def new_site(self, e: ast.AST, cls_name: str) -> AV:
        return frozenset({("new", (self.code.name, getattr(e, "lineno", 0), getattr(e, "col_offset", 0), cls_name))})

    def flow(self, *f: Any) -> None:
        self.facts.flows.append(f)

    # -- slots ------------------------------------------------------------------------------------------------

    def hidden(self, prefix: str) -> int:
        self.temp_counter += 1
        name = f"${prefix}{self.temp_counter}"
        self.slot[name] = len(self.code.locals)
        self.code.locals.append(name)
        return self.slot[name]

    def temp_slot(self, prefix: str, k: int) -> int:
        """The slot of the k-th temporary of a kind (``$v``, ``$t``) live at once: shared by every statement."""
        if not SHARE_TEMPORARIES:
            return self.hidden(prefix)
        return self.local(f"${prefix}{k}")

    def var(self, name: str) -> int | str:
        """The points-to variable of local ``name`` in the static analyses' abstract values (``("local",
        var)``): its slot, but for a lowering's temporary, whose slot other temporaries share (its name)."""
        slot = self.slot[name]
        return name if self.code.locals[slot] != name else slot

    def call_temp(self) -> int:
        """The slot of a call's result in the statement being compiled (``simple``)."""
        self.call_depth += 1
        return self.temp_slot("t", self.call_depth)

    def dropped_temps(self, floor: int) -> tuple[int, ...]:
        """The slots an exception caught by a handler whose statement starts at lowering depth ``floor`` sets to
        None: the temporaries of the statements inside it (the lowering's above ``floor``, every call result),
        as CPython unwinds its value stack to the handler's depth. Those of the statements around it (a ``for``
        loop's bounds) stay."""
        if not SHARE_TEMPORARIES:
            return ()
        out = []
        for i, n in enumerate(self.code.locals):
            kind, k = n[1:2], n[2:]
            if n.startswith("$") and k.isdigit() and (kind == "t" or (kind == "v" and int(k) > floor)):
                out.append(i)
        return tuple(out)

    def local(self, name: str) -> int:
        if name not in self.slot:
            self.slot[name] = len(self.code.locals)
            self.code.locals.append(name)
        return self.slot[name]

    # -- emission ---------------------------------------------------------------------------------------------

    def label(self) -> Label:
        return Label()

    def here(self, lbl: Label) -> None:
        lbl.pc = len(self.pending)

    def emit(self, make: Callable[[], Callable[[Ctx], None]], costly: bool, node: ast.AST | None, **info: Any) -> int:
        info.setdefault("line", getattr(node, "lineno", 0) if node is not None else 0)
        info.setdefault("col", getattr(node, "col_offset", 0) + 1 if node is not None else 0)
        if "source" not in info:
            info["source"] = self.mc.text(node) if node is not None else ""
        info["atomic_block"] = self.atomic_block
        if node is not None and getattr(node, "movers_reads", None):
            # By the slot's name: a temporary's own (``$v2.7``) names its slot (``$v2``) only here.
            info.setdefault("reads_into", tuple(  # type: ignore[attr-defined]
                (text, self.code.locals[self.slot[name]] if name in self.slot else name)
                for text, name in node.movers_reads))
        step_facts = info.pop("step_facts", info)
        # A statement that commit() marks starts a step whatever it does: the commit point is where the model
        # says (docs/atomicity.md), not in the step of the access before it.
        if costly and not self.commit_next and (not self.is_step(step_facts) or getattr(node, "movers_glue", False)):
            costly = False  # movers_glue: local bookkeeping of lang/timeouts.py's hoisting, at either granularity
        if costly and self.commit_next:
            info["commit"] = True
            self.commit_next = False
        self.pending.append((make, dict(info, costly=costly)))
        return len(self.pending) - 1

    def is_step(self, info: dict[str, Any]) -> bool:
        """Whether a node that would start a step under statement granularity starts one under the module's
        granularity: under "access", only one that synchronises, chooses or accesses shared memory
        (lang/granularity.py); local work is glue."""
        if self.mc.granularity != "access" or (self.is_module and not self.mc.main_code):
            return True
        if info.get("kind", "stmt") in SYNC_KINDS or info.get("chooses"):
            return True
        return self.mc.finals.shared(info)

    def jump(self, target: Label, node: ast.AST | None = None) -> None:
        def make() -> Callable[[Ctx], None]:
            pc = target.pc

            def run(ctx: Ctx) -> None:
                ctx.pc = pc

            return run

        self.emit(make, False, node, source="", succ=[target], fast=codegen.jump(target))

    def finish(self) -> None:
        # Falling off the end returns None and costs nothing (docs/language.md 8.3); a synchronized method leaves
        # its monitor first.
        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                ctx.ret(None)

            return run

        if self.mc.uses_is_alive and not self.is_module:
            self.emit(self.ending(make), False, None, source="", line=0, succ=[],  # type: ignore[attr-defined]
                      kind="thread-end", fields_written=frozenset({"_tid"}))
        else:
            self.emit(make, False, None, source="", line=0, succ=[], fast=codegen.end_of_function())
        nodes: list[Node] = []
        fragments: list[codegen.Fragment | None] = []
        guards: list[codegen.GuardSource | None] = []
        for k, (_, info) in enumerate(self.pending):
            # Control-flow successors, for static analyses (default: the next node).
            succ = info.pop("succ", None)
            info["succ"] = (k + 1,) if succ is None else tuple(lbl.pc for lbl in succ)
        if self.protections:
            # A handler is a successor of every node of its region: any of them may raise.
            handlers = []
            for p in self.protections:
                p.close(len(self.pending))
                for a, b in p.intervals:
                    for k in range(a, b):
                        info = self.pending[k][1]
                        if p.handler.pc not in info["succ"]:
                            info["succ"] = (*info["succ"], p.handler.pc)
                handlers.append((tuple(p.intervals), p.handler.pc, p.slot, p.stops, self.dropped_temps(p.floor)))
            self.code.handlers = tuple(handlers)
        if self.mc.granularity == "access" and (not self.is_module or self.mc.main_code):
            for k in break_local_cycles([info for _, info in self.pending], {h.pc for h in self.while_heads}):
                self.pending[k][1]["costly"] = True
        for mk, info in self.pending:
            fast = info.pop("fast", None)
            fragments.append(fast() if fast is not None else None)
            guards.append(info.pop("fast_guard", None))
            guard_make = info.pop("guard_make", None)
            blocked_make = info.pop("blocked_make", None)
            node = Node(run=mk(), **info)
            if guard_make is not None:
                node.guard = guard_make()
            if blocked_make is not None:
                node.blocked_on = blocked_make()
            nodes.append(node)
        self.code.nodes = nodes
        self.code.entry = 0
        # The module's initialisation runs once, on the closures, but what follows its first ``start()`` may be
        # the main thread, a thread like the others: it gets a fast path too. In models whose lists grow, its
        # tracked variants record the reads of a list's length as the closures do (``codegen._list_slot``).
        codegen.attach(self.code, fragments, guards, self.fast_names)

    def compile_function(self) -> None:
        fn = self.fn
        assert fn is not None
        # Locals are the parameters and every name assigned in the body that is not declared global.
        # The predicate of cv.wait_for(lambda: …) is the one lambda allowed: its body is read in this scope.
        # Lambdas and nested functions are functions of their own (ModuleCompiler._lift): only what runs in
        # this function's scope is walked here.
        mine = own_nodes(fn)
        for n in mine:
            if isinstance(n, ast.Global):
                for name in n.names:
                    if name not in self.mc.global_slot:
                        raise self.mc.error(n, f"global '{name}' is not defined at module level")
                    self.global_names.add(name)
            elif isinstance(n, ast.Nonlocal) and not set(n.names) <= self.cells:
                raise self.mc.error(n, "unsupported construct: nonlocal here; return the new value, or keep it in "
                                       "an object's field or a list the functions share")
            elif isinstance(n, (ast.AsyncFunctionDef, ast.ClassDef)):
                raise self.mc.error(n, "unsupported construct: nested classes and async functions")
        # A comprehension's variables are its own (Python 3): not the function's locals.
        comprehension_targets = {id(t) for c in walked(fn) if isinstance(c, ast.comprehension)
                                 for t in walked(c.target)}
        for n in mine:
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in self.global_names \
                    and id(n) not in comprehension_targets:
                self.local(n.id)
            elif isinstance(n, ast.ExceptHandler) and n.name and n.name not in self.global_names:
                self.local(n.name)
            elif isinstance(n, ast.FunctionDef):
                self.local(n.name)
        body = [s for s in fn.body if not _is_docstring(s)]
        self.make_cells(fn)
        lowered = self.mc.granularity == "access" and not self.is_invariant(fn)
        if not self.is_invariant(fn):  # lang/comprehensions.py: comprehensions that call the model, as loops
            from movers.lang.comprehensions import desugar
            body = desugar(self, body, lowered)  # type: ignore[arg-type]
        body = self.hoist(body)  # type: ignore[attr-defined]  # lang/timeouts.py: acquire()/wait() as values
        if lowered:
            body = self.lowering().block(body)
        if self.code.synchronized:
            self.compile_synchronized_body(fn, body)
        else:
            self.compile_block(body)
            if not self.mc.lists_grow:
                self.code.fast_value = codegen.expression_function(self, body)
        self.finish()

    def make_cells(self, fn: ast.FunctionDef) -> None:
        """At entry, a new cell for each variable of this function that a nested function rebinds with
        ``nonlocal`` (a parameter's holds its argument); a captured cell is already one (its parameter)."""
        sig = self.code.signature
        inherited = set(self.code.params[: sig.hidden]) if sig is not None else set()
        mine = [n for n in self.code.locals if n in self.cells and n not in inherited]
        if not mine:
            return
        slots = [(self.slot[n], n in self.code.params) for n in mine]
        site = frozenset({("new", (self.code.name, fn.lineno, fn.col_offset, "cell"))})
        nxt = self.label()

        def make() -> Callable[[Ctx], None]:
            pc = nxt.pc

            def run(ctx: Ctx) -> None:
                loc = ctx.loc
                for i, is_param in slots:
                    loc[i] = ctx.alloc((CELL, None, loc[i] if is_param else UNBOUND))
                ctx.pc = pc
                ctx.dirty = True

            return run

        # A parameter's argument goes into its cell (the escape analysis's flows, in the cell's site).
        flows = tuple(("store", ("field", site, "$cell"), frozenset({("local", i)})) for i, p in slots if p)
        flows += tuple(("store", ("local", i), site) for i, _ in slots)
        self.emit(make, False, fn, source="", allocates=True, flows=flows)
        self.here(nxt)

    def is_invariant(self, fn: ast.FunctionDef) -> bool:
        """An ``@invariant`` or ``@predicate``: a function of the state, evaluated atomically (never a step)."""
        return any(isinstance(d, ast.Name) and d.id in ("invariant", "predicate") for d in fn.decorator_list)

    def lowering(self, shared: bool = True) -> Lowering:
        """The cutting of this function's statements at their shared accesses (lang/granularity.py). Its
        temporaries reuse slots statement by statement (``shared``), but for a lowering that runs on parts of
        the function before the function's own does (lang/comprehensions.py): each of those has a slot of its
        own, which the function's lowering does not know of."""
        methods = {item.name for c in self.mc.class_nodes.values() for item in c.body
                   if isinstance(item, ast.FunctionDef)} - BUILTIN_METHODS - SYNC_METHODS

        def is_global(name: str) -> bool:
            # A variable in a cell is shared with the closures that rebind it: its accesses are accesses.
            return name in self.global_names or name in self.cells or (
                name not in self.slot and name in self.mc.global_slot)

        def temp(k: int) -> str:
            if not shared:
                return self.code.locals[self.hidden("u")]
            if not SHARE_TEMPORARIES:
                return self.code.locals[self.hidden("v")]
            # A name of its own for each temporary (``$v2.7``), in the slot of the k-th (``$v2``): the static
            # analyses tell the temporaries apart by name (``var``), as they did when each had a slot.
            slot = self.temp_slot("v", k)
            self.temp_counter += 1
            name = f"{self.code.locals[slot]}.{self.temp_counter}"
            self.slot[name] = slot
            return name

        def model_call(c: ast.Call) -> bool:
            f = c.func
            if isinstance(f, ast.Name):
                # A call through a variable calls a function value: a model call too.
                return f.id in self.mc.funcs or f.id in self.mc.classes or f.id in self.slot or (
                    f.id in self.mc.global_slot)
            if isinstance(f, ast.Subscript):
                return True
            if isinstance(f, ast.Attribute) and f.attr not in methods and f.attr not in BUILTIN_METHODS and (
                    f.attr not in SYNC_METHODS and any(f.attr in c.fields for c in self.mc.classes.values())):
                return True  # a function value held in a field
            return isinstance(f, ast.Attribute) and f.attr in methods

        return Lowering(self.mc.finals, is_global, temp, self.mc.text, model_call, self.mc.lists_grow,
                        self.mc.container_arith)

    # -- simple statements: one step, calls lowered into segments ---------------------------------------------

    def simple(
        self,
        s: ast.AST,
        build: Callable[[], Callable[[Ctx], None]],
        kind: str = "stmt",
        succ: list[Label] | None = None,
        **info: Any,
    ) -> None:
        """Emit a simple statement whose expressions may contain calls.

        ``build`` compiles the statement's expressions (registering call sites) and returns its finishing
        action, which must set ``ctx.pc`` (or return from the frame). Each call's result has a temporary
        (``call_temp``) that the statement reads and clears: the next statement reuses it.
        """
        self.simple_nesting += 1
        try:
            self._simple(s, build, kind, succ, **info)
        finally:
            self.simple_nesting -= 1
            if not self.simple_nesting:
                self.call_depth = 0

    def _simple(self, s: ast.AST, build: Callable[[], Callable[[Ctx], None]], kind: str,
                succ: list[Label] | None, **info: Any) -> None:
        outer = self.site_stack
        sites: list[CallSite] = []
        self.site_stack = [sites]
        try:
            with self.recording() as facts:
                finish = build()
        finally:
            self.site_stack = outer
        static = facts.info()
        fast = info.pop("fast", None)
        after = info.pop("fast_after", None)  # where the statement goes on: a call's fast path (codegen_calls)
        branch = info.pop("fast_branch", None)  # or, for a condition that is a call, where it jumps
        returned = info.pop("fast_return", None)  # or, for ``return f(...)``, where the value goes
        static.update(info)
        last = {} if succ is None else {"succ": succ}
        if not sites:
            # A statement without calls may have a fast function (``fast``: its fragment, lang/codegen.py).
            self.emit(lambda: finish, True, s, kind=kind, **static, **last, fast=fast)
            return
        labels = [self.label() for _ in sites]
        static["calls"] = True

        def first_make() -> Callable[[Ctx], None]:
            setup = sites[0].setup
            pc = labels[0].pc

            def run(ctx: Ctx) -> None:
                setup(ctx, pc)

            return run

        call_fast = cont_fast = None
        call = sites[0].fast_call if len(sites) == 1 else None
        if call is not None and after is not None and getattr(s, "value", None) is call[0]:
            call_fast = codegen_calls.call(self, *call, labels[0])
            cont_fast = codegen_calls.continuation(self, s, sites[0].temp, after)  # type: ignore[arg-type]
        elif call is not None and branch is not None and s is call[0]:
            call_fast = codegen_calls.call(self, *call, labels[0])
            cont_fast = codegen_calls.branch(sites[0].temp, *branch)
        elif call is not None and returned is not None and getattr(s, "value", None) is call[0]:
            call_fast = codegen_calls.call(self, *call, labels[0])
            cont_fast = codegen_calls.pass_on(sites[0].temp, *returned)
        self.emit(first_make, True, s, kind=kind, **static, fast=call_fast)
        for i, site in enumerate(sites):
            self.here(labels[i])
            nxt = sites[i + 1] if i + 1 < len(sites) else None

            def cont_make(site: CallSite = site, nxt: CallSite | None = nxt, i: int = i) -> Callable[[Ctx], None]:
                temp = site.temp
                if nxt is None:
                    def run(ctx: Ctx) -> None:
                        if temp >= 0:
                            ctx.loc[temp] = box(ctx.retval)
                        finish(ctx)
                else:
                    setup = nxt.setup
                    pc = labels[i + 1].pc

                    def run(ctx: Ctx) -> None:
                        if temp >= 0:
                            ctx.loc[temp] = box(ctx.retval)
                        setup(ctx, pc)

                return run

            cont_info = dict(static, source=self.mc.text(s) + "  (continued)")
            if nxt is None:
                cont_info.update(last)
            self.emit(cont_make, False, s, **cont_info, fast=cont_fast)
