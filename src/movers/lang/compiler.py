"""Compile a model (a Python module, parsed with ``ast``, never executed) into the program IR.

Every function, method and the module's initialisation becomes a ``Code``: a list of nodes, each a closure
over integer slots (globals by slot, locals by slot, fields by index).

This module is the entry point (``compile_model``) and the front end: ``ModuleCompiler`` parses the module,
checks its shape (the one import allowed, definitions at the top level, decorators), declares its globals,
classes (fields laid out base-first) and methods, compiles the top-level declarations (``exclusive``,
``guarded_by``, ``thread_local``, ``self_locking``, ``lock_protected``, ``ltl``) and checks that invariants
and predicates are pure (``_check_pure``). Errors in the model are ``ModelSyntaxError``s at
``file:line:col`` (``lang/errors.py``).

The body of each function, method and of the module's initialisation is compiled by a ``FunctionCompiler``,
assembled here from a core and one mixin per kind of construct, each dispatching by method name on the type
of the ``ast`` node:

- ``lang/function.py``: the core: a function's locals and hidden slots, labels, node emission (``emit``,
  ``jump``, ``finish``), the facts recorded for the static analyses, which nodes start a step (the
  granularity), and how a statement that contains calls is cut into segments;
- ``lang/statements.py``: ``stmt_X``, plain and control-flow statements, and ``call_stmt_X`` for ``assume``
  and ``print``;
- ``lang/concurrency.py``: ``with`` blocks (locks, monitors, ``indivisible``, ``atomic``), ``commit``,
  ``wait_until``, ``wait``/``notify``, and ``x.acquire()`` and the other synchronisation methods;
- ``lang/expressions.py``: ``e_X``, expressions, calls of model functions, and assignment targets;
- ``lang/builtins.py``: ``b_X``, calls of builtin functions (``len``, ``choose``, ``Lock``, ``Thread``…);
- ``lang/runtime_ops.py``: the small functions the compiled closures call as the model runs;
- ``lang/syntax.py``: reserved and forbidden names, and predicates on ``ast`` nodes.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from movers.analysis.static_escape import points_to
from movers.ir.exceptions import BUILTIN_EXCEPTIONS
from movers.ir.machine import Ctx
from movers.ir.program import (
    CONDITION,
    LOCK,
    RLOCK,
    SEMAPHORE,
    THREAD,
    AtomicBlock,
    ClassInfo,
    Code,
    Exclusive,
    Func,
    LockingDeclaration,
    LtlDeclaration,
    Node,
    Program,
    Ref,
    box,
)
from movers.lang import codegen
from movers.lang.builtins import BuiltinCompiler
from movers.lang.comprehensions import desugar
from movers.lang.concurrency import ConcurrencyCompiler
from movers.lang.containers import dict_class, dict_new
from movers.lang.deletion import DeletionCompiler
from movers.lang.errors import MAX_ERRORS, ModelSyntaxError, at, collected
from movers.lang.exceptions import ExceptionCompiler
from movers.lang.expressions import ExpressionCompiler
from movers.lang.functions_model import (
    DataclassSpec,
    FieldDefault,
    Lifted,
    Signature,
    bound_method_class,
    changing_capture,
    closure_class,
    constant_value,
    dataclass_init,
    dataclass_options,
    default_message,
    free_variables,
    kwstar_name,
    needs,
    own_cells,
    own_nodes,
    parameters,
    refuse_star,
    star_name,
)
from movers.lang.granularity import DEFAULT_GRANULARITY, GRANULARITIES, Finals, finals
from movers.lang.imports import resolve_listed
from movers.lang.iteration import IterationCompiler
from movers.lang.library import Library, add_library, library_error
from movers.lang.runtime_ops import truth_of
from movers.lang.statements import StatementCompiler
from movers.lang.strings import LIST_VALUED
from movers.lang.syntax import (
    BUILTIN_CLASS_NAMES,
    DECLARATIONS,
    LOCKING_DECLARATIONS,
    _is_call_to,
    _is_docstring,
    walked,
)
from movers.lang.threadinfo import SUBCLASS_FIELDS
from movers.lang.timeouts import TimeoutCompiler
from movers.lang.withs import ContextCompiler, exit_parameter_refusal
from movers.liveness.ltl import FormulaError
from movers.liveness.ltl import atoms as formula_atoms
from movers.liveness.ltl import parse as parse_formula

# How the tokenizer breaks lines (str.splitlines also breaks at form feeds and others, shifting line numbers).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Node sources (shown in traces) longer than this are cut: a 5 MB assertion message stays out of every step.
TEXT_LIMIT = 200


# ---------------------------------------------------------------------------------------------------------------
# The module compiler
# ---------------------------------------------------------------------------------------------------------------


class ModuleCompiler:
    def __init__(self, source: str, filename: str, granularity: str = DEFAULT_GRANULARITY,
                 plain: frozenset[tuple[Any, Any]] = frozenset(),
                 compared_at: frozenset[tuple[int, int]] = frozenset(),
                 truths_plain_at: frozenset[tuple[int, int]] = frozenset()) -> None:
        self.source = source
        self.filename = filename
        self.granularity = granularity
        self.plain = plain  # comparisons known to compare no lists (``compile_model``)
        self.plain_found: frozenset[tuple[Any, Any]] = frozenset()
        self.compared_at = compared_at  # where comparisons may compare containers (``compile_model``)
        self.compared_at_found: frozenset[tuple[int, int]] = frozenset()
        self.compare_sites: list[tuple[Code, Any, Any, tuple[int, int]]] = []
        # Truth tests: where the values are never containers (``compile_model``), and every test compiled
        # (its code, abstract value, line and column), which ``resolve_truths`` decides.
        self.truths_plain_at = truths_plain_at
        self.truths_plain_found: frozenset[tuple[int, int]] = frozenset()
        self.truths_contradicted = False
        self.truth_sites: list[tuple[Code, Any, tuple[int, int]]] = []
        self.finals = Finals(frozenset(), frozenset(), False)
        self.list_globals: frozenset[str] = frozenset()
        self._blines: list[bytes] | None = None
        self.globals: list[str] = []
        self.global_slot: dict[str, int] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.class_nodes: dict[str, ast.ClassDef] = {}
        self.functions: dict[str, Code] = {}
        self.function_nodes: dict[str, ast.FunctionDef] = {}
        self.funcs: dict[str, Func] = {}
        # Lambdas and nested functions, by the id of their ``ast`` node (``_lift``), and the functions whose
        # values a call through a variable may call (``value_callees``).
        self.lifted: dict[int, Lifted] = {}
        self.value_callees: list[str] = []
        self.bound_names: set[str] = set()  # methods used as values (``_bound_methods``)
        self.bound_codes: list[tuple[str, Code]] = []
        # The variables that live in cells, by the id of the function's ``ast`` node (``_lift``).
        self.cells: dict[int, frozenset[str]] = {}
        # @dataclass classes, by name: their spec, and their fields with defaults (for a dataclass subclass).
        self.dataclasses: dict[str, DataclassSpec] = {}
        self.dataclass_fields: dict[str, list[tuple[str, Any, str]]] = {}
        self.compared_fields: frozenset[str] = frozenset()
        self.invariants: list[tuple[str, Code]] = []
        self.predicates: dict[str, Code] = {}  # ``@predicate`` functions, the atoms of ``ltl(...)``
        self.ltl_formulas: list[LtlDeclaration] = []
        self._ltl_calls: list[ast.expr] = []  # each formula's literal, for where an unknown atom is reported
        self.exclusives: list[Exclusive] = []
        self.atomic_blocks: list[AtomicBlock] = []
        self.locking: list[LockingDeclaration] = []
        self.lists_grow = self.uses_events = self.uses_barriers = self.has_lists = self.uses_try = False
        self.uses_is_alive = False
        self.has_dicts = self.has_defaultdict = self.container_arith = self.has_local = False
        self.has_deques = False
        self.errors: list[ModelSyntaxError] = []  # refusals so far (``collecting``)
        self.main_code = False  # the module's code is cut at its accesses (``_compile``)
        self.constants: dict[str, int | bool] = {}  # folded into invariants (``_compile``, lang/codegen.py)
        # The standard library classes the model uses, compiled from model source (lang/library).
        self.library = Library()
        # With a list, the generated code of the functions is not written but its jobs left here
        # (``codegen.deferred``): ``compile_model`` writes it for the compilation it keeps.
        self.held: list[Any] | None = None
        self.module_nodes: list[ast.AST] = []  # the module's nodes (``_lift_all``)

    def defines_method(self, name: str) -> bool:
        """Whether some class of the model defines a method ``name`` (then ``x.name()`` is its call)."""
        return any(name in c.methods for c in self.classes.values())

    def error(self, node: ast.AST | None, message: str) -> ModelSyntaxError:
        return library_error(self.library, at(self.filename, node, message))

    @contextmanager
    def collecting(self) -> Iterator[None]:
        """Record a refusal inside the block and go on after it, so that one run reports them all
        (lang/errors.py); the block's construct is left out of the program, which is never run."""
        try:
            yield
        except ModelSyntaxError as e:
            self.errors.append(e)
            if sum(len(x.all) for x in self.errors) > MAX_ERRORS:
                raise collected(self.errors) from None

    def text(self, node: ast.AST) -> str:
        """The source of ``node`` on one line, for traces and messages (cut after ``TEXT_LIMIT`` characters).

        ``ast.get_source_segment`` splits the whole source at every call, which is quadratic on a large
        model; the lines are split once here, as the tokenizer splits them (not at form feeds)."""
        described = getattr(node, "movers_text", None)  # a statement cut at its accesses (lang/granularity.py)
        if described is not None:
            return described
        end_line = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        if end_line is None or end_col is None:
            return ""
        if self._blines is None:  # the library's lines follow the model's (lang/library)
            self._blines = [ln.encode("utf-8") for ln in _LINE_BREAK.split(self.source + self.library.text)]
        lines = self._blines
        first, last = node.lineno - 1, end_line - 1  # type: ignore[attr-defined]
        if not 0 <= first <= last < len(lines):
            return ""
        col = node.col_offset  # type: ignore[attr-defined]
        if first == last:
            raw = lines[first][col:end_col]
        else:
            raw = b"\n".join([lines[first][col:], *lines[first + 1:last][:TEXT_LIMIT], lines[last][:end_col]])
        seg = raw[: 4 * TEXT_LIMIT].decode("utf-8", "replace")
        if "\n" in seg or "\r" in seg:
            seg = " ".join(seg.split())
        return seg if len(seg) <= TEXT_LIMIT else seg[: TEXT_LIMIT - 1] + "…"

    # -- pass 1: the module's shape ---------------------------------------------------------------------------

    def compile(self) -> Program:
        """The program, or every refusal found (``collecting``): after the first, a later failure of any kind
        may come from a construct left out, so it ends the compilation with the refusals found so far."""
        try:
            program = self._compile()
        except ModelSyntaxError as e:
            raise collected([*self.errors, e]) from None
        except Exception:
            if self.errors:
                raise collected(self.errors) from None
            raise
        if self.errors:
            raise collected(self.errors)
        return program

    def _compile(self) -> Program:
        # The tree's nodes, listed once for the passes that read them, as long as none has changed it.
        tree, nodes = resolve_listed(self._parse(), self.filename)
        self.library = add_library(tree, self.filename, len(_LINE_BREAK.split(self.source)), nodes)
        if self.library.classes or self.library.functions:
            nodes = None  # library definitions were added, and the model's loops over them rewritten
        self._blines = None
        self._survey(tree, nodes)
        init_body, declarations = self._top_level(tree)
        self._declare_globals(init_body)
        self.daemon_slot: int | None = None
        if self.uses_daemons:
            self.daemon_slot = len(self.globals)
            self.global_slot["$daemons"] = self.daemon_slot
            self.globals.append("$daemons")
        self._declare_classes()
        self._lift_all(tree, init_body)
        # What comparing two objects may read: every field of a dataclass that compares by its fields.
        self.compared_fields = frozenset(f for spec in self.dataclasses.values() if spec.eq for f in spec.compared)
        self.list_globals = _list_globals(self.module_nodes, self.global_slot)
        bodies = [(fn, False) for fn in self.function_nodes.values()]
        bodies += [(lf.node, False) for lf in self.lifted.values()]  # type: ignore[misc]
        bodies += [(item, item.name == "__init__") for c in self.class_nodes.values() for item in c.body
                   if isinstance(item, ast.FunctionDef)]
        late = self._after_first_start(init_body)
        # Names bound once, to a literal, before any thread starts: folded into invariants (lang/codegen.py).
        self.constants = codegen.module_constants(tree, init_body[:len(init_body) - len(late)])
        # Module code that goes on after starting a thread may run as the main thread: at access granularity
        # it is then cut at its accesses like a function (``FunctionCore.is_step``), or its statements would be
        # indivisible steps that CPython interleaves.
        self.main_code = bool(late) and self.granularity == "access"
        if late:
            # The module's code after it starts a thread may run as the main thread (``main_thread``),
            # concurrently with the threads: what it writes there is not final.
            main = ast.FunctionDef(name="<main>", body=[ast.Global(names=list(self.globals)), *late],
                                   decorator_list=[])
            bodies.append((main, False))  # type: ignore[arg-type]
        self.finals = dataclasses.replace(finals(self.globals, bodies), plain=self.plain,
                                          compared_at=self.compared_at, truths_plain_at=self.truths_plain_at)
        if self.has_defaultdict:  # `d[k]` on a defaultdict may insert: elements are never final
            self.finals = dataclasses.replace(self.finals, elements=False)
        # Every function's generated code is written once all are compiled: a call's step then knows its
        # callee's frame (lang/codegen.py, ``deferred``).
        with codegen.deferred(self.held):
            self._compile_functions()
            init = Code("<module>", [], [], line=1)
            fc = FunctionCompiler(self, init, None, None)
            init_body = desugar(fc, init_body, self.main_code)
            init_body = fc.hoist(init_body)
            if self.main_code:
                init_body = fc.lowering().block(init_body)
            fc.compile_block(init_body)
            fc.finish()
        for d in declarations:
            self._declaration(d)
        self._check_ltl_atoms()
        program = Program(
            filename=self.filename,
            source=self.source,
            globals=self.globals,
            classes=self.classes,
            functions=self.functions,
            init=init,
            invariants=self.invariants,
            truth=truth_of,
            predicates=self.predicates,
            ltl_formulas=self.ltl_formulas,
            exclusives=self.exclusives,
            atomic_blocks=self.atomic_blocks,
            locking=self.locking,
            granularity=self.granularity,
            ends_observed=self.uses_is_alive,
        )
        program.main_stops = main_stops(program)
        program.main_thread = bool(program.main_stops)
        program.main_nodes = _reached(program.init, program.main_stops)
        program.daemon_slot = self.daemon_slot
        self._mark_library(program)
        for _, code in self.invariants:
            self._check_pure(program, code)
        for code in self.predicates.values():
            self._check_pure(program, code, "predicate")
        sites = lazy_points_to(program)
        self.plain_found, self.compared_at_found = resolve_comparisons(program, self.compare_sites, sites)
        if self.granularity == "access":  # statement granularity makes every truth test a read (no second pass)
            self.truths_plain_found, self.truths_contradicted = resolve_truths(sites, self.truth_sites,
                                                                               self.truths_plain_at)
        return program

    def _mark_library(self, program: Program) -> None:
        """Each node of a library method records the method (``Node.library``), for reports."""
        program.library_files = tuple(self.library.files)
        codes = [code for name in self.library.classes for code in self.classes[name].methods.values()]
        codes += [self.functions[name] for name in self.library.functions if name in self.functions]
        for code in codes:
            for n in code.nodes:
                n.library = code.name

    def _parse(self) -> ast.Module:
        try:
            return ast.parse(self.source, self.filename)
        except SyntaxError as e:
            msg = e.msg
            if "integer string conversion" in msg:
                msg = "integer literal too large (more than 4,300 digits)"
            raise ModelSyntaxError(self.filename, max(e.lineno or 1, 1), max(e.offset or 1, 1),
                                   f"syntax error: {msg}") from None

    def _survey(self, tree: ast.Module, nodes: list[ast.AST] | None = None) -> None:
        """What the whole module uses, which decides how some constructs compile everywhere in it. ``nodes``:
        the tree's nodes, if known (``syntax.walked``)."""
        # The tree is walked once: nothing here changes it.
        if nodes is None:
            nodes = walked(tree)
        # Whether lists may change length: then every list records reads of its length (ClassInfo.grows).
        calls = [n for n in nodes if isinstance(n, ast.Call)]
        self.lists_grow = any(isinstance(n.func, ast.Attribute) and n.func.attr in (
            "append", "pop", "insert", "remove", "extend", "clear") for n in calls) or any(
            isinstance(n, ast.Delete) and any(isinstance(t, ast.Subscript) for t in n.targets)
            for n in nodes)  # `del xs[i]` (lang/deletion.py)
        # Whether the model has lists at all: only then may a comparison read elements (``compares``).
        self.has_lists = any((isinstance(n, ast.List) and isinstance(n.ctx, ast.Load)) or isinstance(n, ast.ListComp)
                             for n in nodes) or any(
            isinstance(n.func, ast.Attribute) and n.func.attr in LIST_VALUED for n in calls)  # "a b".split()
        # Whether the model makes dicts or sets (``lang/containers.py``): only then do their methods compile.
        self.has_defaultdict = any(_is_call_to(n, "defaultdict") for n in calls)
        self.has_local = any(_is_call_to(n, "local") for n in calls)  # attributes may be per thread
        self.has_dicts = self.has_defaultdict or any(
            isinstance(n, (ast.Dict, ast.Set, ast.DictComp, ast.SetComp)) or _is_call_to(n, "dict")
            or _is_call_to(n, "set")
            or (isinstance(n, (ast.FunctionDef, ast.Lambda)) and n.args.kwarg is not None)  # **kwargs
            or (isinstance(n, ast.keyword) and n.arg is None)  # f(**mapping)
            for n in nodes)
        # Whether `+`, `*`, `|`, `&`, `-` may meet lists or sets (``lang/containers.py``): then they compile to
        # the containers' operators, and each one with two operands that are not constants is an access.
        # A name some statement assigns a list (``done = []``) counts as list-valued here: ``done + skipped``
        # is then a concatenation, as in CPython, not an error.
        list_names = {t.id for n in nodes if isinstance(n, ast.Assign) and _list_valued(n.value)
                      for t in n.targets if isinstance(t, ast.Name)}
        self.container_arith = self.has_dicts or any(
            isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Mult)) and any(
                (_list_valued(x) or (isinstance(x, ast.Name) and x.id in list_names))
                and not (isinstance(n.op, ast.Mult) and x is n.left and isinstance(x, ast.List) and len(x.elts) == 1)
                for x in (n.left, n.right)) for n in nodes)
        # Whether the model names ``deque`` (``lang/deques.py``): only then do its methods compile.
        self.has_deques = any(isinstance(n, ast.Name) and n.id == "deque" for n in nodes)
        if self.has_deques:
            self.container_arith = True  # `d + e`, `d * n` of deques: the containers' operators (deques.arithmetic)
        if self.has_dicts or self.has_deques:
            # A dict's size changes with its contents: its length, like a growing list's, is an access.
            self.lists_grow = self.has_lists = True
        # Whether a `.wait()` may meet an Event or a Barrier: only then does it get their branches (a guard,
        # a second blocking step), so that models without them compile exactly as before.
        called = {n.func.id for n in calls if isinstance(n.func, ast.Name)}
        self.uses_events = "Event" in called
        self.uses_barriers = "Barrier" in called
        # Whether a Thread subclass may pass name=/daemon= to Thread.__init__: only then do its objects get the
        # hidden fields that keep them (lang/threadinfo.py).
        self.thread_init_keywords = any(
            isinstance(n.func, ast.Attribute) and n.func.attr == "__init__" and _is_call_to(n.func.value, "super")
            and n.keywords for n in calls)
        # Whether some thread may be a daemon: only then is there a hidden global listing them.
        self.uses_daemons = any(k.arg == "daemon" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                                for n in calls for k in n.keywords)
        # Whether an exception can be caught: only then do `with` blocks get a handler that runs their exit on
        # the way out (an uncaught exception ends the search), so models without `try` compile as before.
        # A context manager's __exit__ may stop an exception too (lang/withs.py).
        self.uses_try = any(isinstance(n, ast.Try) or (isinstance(n, ast.FunctionDef) and n.name == "__exit__")
                            for n in nodes)
        # Whether some thread asks whether another has ended: only then is a thread's end an access
        # (lang/timeouts.py), so that models without is_alive() compile exactly as before.
        self.uses_is_alive = any(isinstance(n.func, ast.Attribute) and n.func.attr == "is_alive" for n in calls)

    def _top_level(self, tree: ast.Module) -> tuple[list[ast.stmt], list[ast.Call]]:
        """Sort the module's statements: functions and classes (recorded by name), declarations, and the
        statements of the initialisation (those under ``if __name__ == "__main__":`` included)."""
        init_body: list[ast.stmt] = []
        declarations: list[ast.Call] = []
        for s in tree.body:
            if isinstance(s, (ast.Import, ast.ImportFrom)):
                pass  # checked, and their names resolved, by lang/imports.py
            elif isinstance(s, ast.FunctionDef):
                self._new_name(s)
                self.function_nodes[s.name] = s
            elif isinstance(s, ast.AsyncFunctionDef):
                raise self.error(s, "unsupported construct: async def")
            elif isinstance(s, ast.ClassDef):
                self._new_name(s)
                self._class_decorators(s)
                self.class_nodes[s.name] = s
            elif (
                isinstance(s, ast.Expr)
                and isinstance(s.value, ast.Call)
                and isinstance(s.value.func, ast.Name)
                and s.value.func.id in DECLARATIONS
            ):
                declarations.append(s.value)
            elif isinstance(s, ast.If) and self._is_main_guard(s.test):
                init_body.extend(s.body)
            else:
                init_body.append(s)
        return init_body, declarations

    def _after_first_start(self, init_body: list[ast.stmt]) -> list[ast.stmt]:
        """The module's statements from the first one that may start a thread (a ``.start()`` call, or a call
        of a model function that may make one) on."""
        def starts(node: ast.AST) -> set[str] | bool:
            called: set[str] = set()
            for n in walked(node):
                if isinstance(n, ast.Call):
                    if isinstance(n.func, ast.Attribute) and n.func.attr == "start":
                        return True
                    if isinstance(n.func, ast.Name):
                        called.add(n.func.id)
                    elif isinstance(n.func, ast.Attribute):
                        called.add("." + n.func.attr)
            return called

        # Functions and methods that may start a thread, directly or through the ones they call.
        defs: dict[str, list[ast.AST]] = {}
        for name, fn in self.function_nodes.items():
            defs.setdefault(name, []).append(fn)
        for c in self.class_nodes.values():
            defs.setdefault(c.name, []).append(c)  # a constructor call may start a thread in __init__
            for item in c.body:
                if isinstance(item, ast.FunctionDef):
                    defs.setdefault("." + item.name, []).append(item)
        direct = {name: [starts(d) for d in ds] for name, ds in defs.items()}
        starting = {name for name, rs in direct.items() if any(r is True for r in rs)}
        grew = True
        while grew:
            grew = False
            for name, rs in direct.items():
                if name not in starting and any(r is not True and r & starting for r in rs):  # type: ignore[operator]
                    starting.add(name)
                    grew = True
        for i, s in enumerate(init_body):
            r = starts(s)
            if r is True or r & starting:  # type: ignore[operator]
                return init_body[i:]
        return []
    def _class_decorators(self, c: ast.ClassDef) -> None:
        """``@dataclass``: the class's annotated fields become its ``__init__`` (lang/functions_model.py)."""
        for d in c.decorator_list:
            options = dataclass_options(d)
            if options is None:
                raise self.error(d, "unsupported decorator on a class (only @dataclass)")
            if isinstance(options, str):
                raise self.error(d, options)
            base = c.bases[0].id if len(c.bases) == 1 and isinstance(c.bases[0], ast.Name) else None
            inherited = self.dataclasses.get(base or "")
            if inherited is not None:  # the base's field(compare=False) fields stay out of ==
                c.movers_uncompared = [f for f in inherited.fields if f not in inherited.compared]  # type: ignore
            made = dataclass_init(c, self.dataclass_fields.get(base or "", []), options)
            if isinstance(made[1], str):
                raise self.error(made[0], made[1])
            spec, fields = made
            self.dataclasses[c.name] = spec  # type: ignore[assignment]
            self.dataclass_fields[c.name] = fields  # type: ignore[assignment]

    def _new_name(self, s: ast.FunctionDef | ast.ClassDef) -> None:
        if s.name in self.function_nodes or s.name in self.class_nodes:
            raise self.error(s, f"'{s.name}' is defined twice")

    def _declare_globals(self, init_body: list[ast.stmt]) -> None:
        """A slot for every name the initialisation assigns, in the order of first assignment."""
        for s in init_body:
            # A comprehension's variables are its own (Python 3), not the module's.
            nodes = walked(s)
            own = {id(t) for c in nodes if isinstance(c, ast.comprehension) for t in walked(c.target)}
            for n in nodes:
                if isinstance(n, (ast.FunctionDef, ast.ClassDef)):
                    raise self.error(n, "unsupported construct: definitions must be at the top level of a model")
                # ``except E as e`` assigns ``e`` too.
                name = (n.id if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                        else n.name if isinstance(n, ast.ExceptHandler) and n.name else None)
                if name is not None and name not in self.global_slot and id(n) not in own:
                    if name in self.function_nodes or name in self.class_nodes:
                        raise self.error(n, f"'{name}' is a function or class and cannot be assigned")
                    self.global_slot[name] = len(self.globals)
                    self.globals.append(name)

    def _compile_functions(self) -> None:
        """Every function and method: all are declared first (a body may call one defined after it), then
        compiled; ``@invariant`` and ``@predicate`` functions are recorded."""
        for name, fn in self.function_nodes.items():
            code = self._new_code(fn, name, None)
            self.functions[name] = code
            self.funcs[name] = Func(name, code)
        for c in self.class_nodes.values():
            self._declare_methods(c)
        self._bound_methods(self.module_nodes)
        for cname, spec in self.dataclasses.items():
            if spec.frozen:  # only its __init__ may set its fields (CPython's FrozenInstanceError)
                self.classes[cname].frozen_init = self.classes[cname].lookup("__init__")  # type: ignore[attr-defined]
        for name, fn in self.function_nodes.items():
            with self.collecting():
                self._compile_function(name, fn)
        for cname, c in self.class_nodes.items():
            info = self.classes[cname]
            for item in c.body:
                if isinstance(item, ast.FunctionDef):
                    with self.collecting():
                        FunctionCompiler(self, info.methods[item.name], item, info).compile_function()
        for lf in self.lifted.values():
            with self.collecting():
                FunctionCompiler(self, lf.code, lf.node, None).compile_function()  # type: ignore[arg-type]

    def _compile_function(self, name: str, fn: ast.FunctionDef) -> None:
        decorators = [self._decorator_name(d) for d in fn.decorator_list]
        for d, dn in zip(decorators, fn.decorator_list, strict=True):
            if d not in ("invariant", "predicate"):
                raise self.error(dn, f"unsupported decorator '@{d}' on a function")
        FunctionCompiler(self, self.functions[name], fn, None).compile_function()
        for d in ("invariant", "predicate"):
            if d in decorators and self.functions[name].params:
                raise self.error(fn, f"an @{d} takes no arguments: it is a function of the state only "
                                     f"(read globals instead)")
        if "invariant" in decorators:
            self.invariants.append((name, self.functions[name]))
        if "predicate" in decorators:
            self.predicates[name] = self.functions[name]

    # -- lambdas and nested functions (lang/functions_model.py) -----------------------------------------------

    def _lift_all(self, tree: ast.Module, init_body: list[ast.stmt]) -> None:
        """Make a function of its own of every lambda and nested ``def``; list the functions whose values a
        call through a variable may call (every one used as a value, every lifted one)."""
        for name, fn in self.function_nodes.items():
            self._lift(fn, name)
        for cname, c in self.class_nodes.items():
            for item in c.body:
                if isinstance(item, ast.FunctionDef):
                    self._lift(item, f"{cname}.{item.name}")
        module = ast.Module(body=init_body, type_ignores=[])
        self._lift(module, "")
        # The module's nodes, listed once for this and for ``_list_globals`` and ``_bound_methods``, which
        # follow: nothing changes the tree until the functions are compiled (``_lift`` makes new nodes).
        self.module_nodes = nodes = walked(tree)
        called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
        used = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                and id(n) not in called and n.id in self.function_nodes}
        self.value_callees = sorted(used) + [lf.key for lf in self.lifted.values()]
        for name in used:
            if self.function_nodes[name].decorator_list:
                raise self.error(self.function_nodes[name], f"'{name}' is decorated: it cannot be used as a value")

    def _bound_methods(self, nodes: list[ast.AST]) -> None:
        """``obj.method`` used as a value (``Thread(target=obj.run_job)``, ``f = obj.m``): the method names so
        used, each class's bound-method class for them, and the codes a call of such a value may run
        (``bound_codes``: every method of that name, as ``.m`` in the facts)."""
        methods = {m for c in self.classes.values() for m in c.methods}
        called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
        self.bound_names = {n.attr for n in nodes if isinstance(n, ast.Attribute)
                            and isinstance(n.ctx, ast.Load) and id(n) not in called and n.attr in methods}
        self.bound_codes: list[tuple[str, Code]] = []
        for c in self.classes.values():
            table = {}
            for m in sorted(self.bound_names):
                code = c.lookup(m)
                if code is not None:
                    table[m] = bound_method_class(c, m, code)
                if m in c.methods:
                    self.bound_codes.append(("." + m, c.methods[m]))
            c.bound_methods = table  # type: ignore[attr-defined]

    def _lift(self, fn: ast.AST, qual: str, inherited: frozenset[str] = frozenset()) -> None:
        # ``fn``'s own nodes, listed once: nothing here changes ``fn`` (a lifted function is a new node that
        # shares the nested one's body).
        mine = own_nodes(fn)
        predicates = {id(n.args[0]) for n in mine if isinstance(n, ast.Call) and n.args
                      and isinstance(n.func, ast.Attribute) and n.func.attr == "wait_for"}
        # The variables that live in cells (``nonlocal``): its own, and the captured ones that are cells of an
        # enclosing function (their values are the cells).
        cells = set(inherited) | own_cells(fn, mine)
        if cells:
            self.cells[id(fn)] = frozenset(cells)
        for n in mine:
            if isinstance(n, ast.Nonlocal) and (isinstance(fn, ast.Module) or not qual or ".<locals>." not in qual):
                raise self.error(n, "nonlocal is only allowed in a nested function")
        if isinstance(fn, ast.Module):
            scope: set[str] = set()
            params: set[str] = set()
        else:
            a = fn.args  # type: ignore[attr-defined]
            params = {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]} | set(star_name(a)) | set(
                kwstar_name(a))
            declared = {x for n in mine if isinstance(n, ast.Global) for x in n.names}
            scope = params | {n.id for n in mine if isinstance(n, ast.Name)
                              and isinstance(n.ctx, ast.Store) and n.id not in declared}
            scope |= {n.name for n in mine if isinstance(n, ast.FunctionDef) and n is not fn}
        for child in mine:
            if not isinstance(child, (ast.FunctionDef, ast.Lambda)) or id(child) in predicates:
                continue
            if isinstance(child, ast.FunctionDef) and child.decorator_list:
                raise self.error(child.decorator_list[0], "unsupported decorator on a nested function")
            why = refuse_star(child.args)
            if why:
                raise self.error(child, why)
            own = child.name if isinstance(child, ast.FunctionDef) else "<lambda>"
            qn = f"{qual}.<locals>.{own}" if qual else own
            key = qn
            while key in self.functions:
                key = f"{qn}@{child.lineno}:{child.col_offset}"
                if key in self.functions:
                    key += "'"
            captured = [n for n in free_variables(child) if n in scope]
            captured += sorted(n for n in needs(child) if n in scope and n not in captured)
            for n in needs(child):
                if n not in scope and n not in cells:
                    raise self.error(child, f"no binding for nonlocal '{n}' found")
            for n in captured:
                why = "" if n in cells else changing_capture(fn, params, n, child)
                if why:
                    raise self.error(child, why)
            pos, kwonly, defaults = parameters(child.args)
            dnames = [p.arg for p, d in zip([*pos, *kwonly], defaults, strict=True) if d is not None]
            own_params = [p.arg for p in (*pos, *kwonly)]
            star, kwstar = star_name(child.args), kwstar_name(child.args)
            body = [ast.Return(value=child.body)] if isinstance(child, ast.Lambda) else child.body
            synth = ast.FunctionDef(
                name=qn, args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in captured]
                                           + [ast.arg(arg=p.arg) for p in pos], vararg=child.args.vararg,
                                           kwarg=child.args.kwarg,
                                           kwonlyargs=[ast.arg(arg=p.arg) for p in kwonly], kw_defaults=[],
                                           defaults=[]),
                body=body, decorator_list=[], returns=None, type_comment=None)
            ast.copy_location(synth, child)
            if isinstance(child, ast.Lambda):
                ast.copy_location(body[0], child.body)
            ast.fix_missing_locations(synth)
            ncap = len(captured)
            names = (*captured, *own_params)
            code = Code(qn, [*names, *star, *kwstar], [*names, *star, *kwstar], line=child.lineno)
            code.signature = Signature(qn, names, ncap + len(pos), ncap + len(child.args.posonlyargs),
                                       {n: FieldDefault(ncap + k) for k, n in enumerate(dnames)}, hidden=ncap,
                                       star=star[0] if star else None, kwstar=kwstar[0] if kwstar else None,
                                       kwmake=_kwargs_maker(child.lineno) if kwstar else None)
            cls = closure_class(qn, captured, dnames, child.lineno) if captured or dnames else None
            if cls is not None:
                cls.closure = code  # type: ignore[attr-defined]
            self.functions[key] = code
            lf = Lifted(synth, qn, code, captured, cls, Func(qn, code) if cls is None else None, key)
            self.lifted[id(child)] = lf
            self._lift(synth, qn, frozenset(n for n in captured if n in cells))

    def _check_pure(self, program: Program, invariant: Code, what: str = "invariant") -> None:
        """An @invariant (a @predicate) is evaluated in every state and must not change it, block or branch:
        reject, at the statement that would, writes to globals, fields and elements, synchronisation, assert,
        assume and choose, in the invariant and in everything it calls."""
        for code in program.reachable_codes([invariant]):
            for n in code.nodes:
                why = ""
                if n.is_sync:
                    why = "a synchronisation operation"
                elif n.kind in ("assert", "assume"):
                    why = f"'{n.kind}' (an {what} returns its truth: use 'return')"
                elif n.chooses:
                    why = "a nondeterministic choice"
                elif n.writes or n.fields_written or n.elements_written:
                    why = "a write to the state"
                if why:
                    raise ModelSyntaxError(self.filename, n.line, max(n.col, 1),
                                           f"the @{what} {invariant.name}() must not change the state or "
                                           f"block: this is {why}")

    @staticmethod
    def _is_main_guard(test: ast.expr) -> bool:
        return (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == "__name__"
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__"
        )

    def _decorator_name(self, d: ast.expr) -> str:
        if isinstance(d, ast.Name):
            return d.id
        raise self.error(d, "unsupported decorator")

    def _declare_classes(self) -> None:
        for name in self.class_nodes:
            self.classes[name] = ClassInfo(name)
        # Resolve bases in dependency order so that fields are laid out base-first.
        done: set[str] = set()

        def resolve(name: str, seen: tuple[str, ...] = ()) -> None:
            if name in done:
                return
            if name in seen:
                raise self.error(self.class_nodes[name], f"class '{name}' inherits from itself")
            c = self.class_nodes[name]
            info = self.classes[name]
            fields: list[str] = []
            if len(c.bases) > 1:
                raise self.error(c, "unsupported construct: multiple inheritance")
            if c.keywords:
                raise self.error(c, "unsupported construct: class keywords")
            if c.bases:
                b = c.bases[0]
                if not isinstance(b, ast.Name):
                    raise self.error(b, "unsupported base class")
                if b.id == "Thread":
                    info.is_thread = True
                    info.base = THREAD
                    fields = list(THREAD.fields)
                    if self.thread_init_keywords:
                        fields += list(SUBCLASS_FIELDS)
                        info.daemon_slot = self.daemon_slot  # type: ignore[attr-defined]
                elif b.id == "object":
                    pass
                elif b.id in BUILTIN_EXCEPTIONS and b.id not in self.class_nodes:
                    info.base = BUILTIN_EXCEPTIONS[b.id]
                    fields = list(info.base.fields)
                elif b.id in self.class_nodes:
                    resolve(b.id, (*seen, name))
                    base = self.classes[b.id]
                    info.base = base
                    info.is_thread = base.is_thread
                    fields = list(base.fields)
                else:
                    raise self.error(b, f"unknown base class '{b.id}'")
            for item in c.body:
                if isinstance(item, ast.FunctionDef):
                    for n in walked(item):
                        if (
                            isinstance(n, ast.Attribute)
                            and isinstance(n.ctx, ast.Store)
                            and isinstance(n.value, ast.Name)
                            and n.value.id == "self"
                            and n.attr not in fields
                        ):
                            fields.append(n.attr)
                elif _is_docstring(item) or isinstance(item, ast.Pass):
                    continue
                elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                    raise self.error(item, "class attributes are not supported: use a module-level global or a "
                                     "field set in __init__ (@dataclass makes annotated fields __init__'s "
                                     "parameters); a class body has only methods otherwise")
                else:
                    raise self.error(
                        item, "unsupported construct in a class body: only methods (set fields in __init__)"
                    )
            spec = self.dataclasses.get(name)
            if spec is not None:
                fields += [f for f in spec.fields if f not in fields]
                info.dataclass = spec  # type: ignore[attr-defined]
            info.fields = fields
            info.finish()
            done.add(name)

        for name in self.class_nodes:
            resolve(name)
        for name in self.class_nodes:
            self._refuse_shadowed_methods(name)

    def _refuse_shadowed_methods(self, name: str) -> None:
        """A field named as one of the class's methods (its own or a base's): CPython finds the instance's
        attribute before the class's method (``self.put = self.other`` makes ``obj.put()`` call ``other``),
        while movers resolves a method call by the class. Refused rather than checked as something else."""
        chain: list[ast.ClassDef] = []
        info: Any = self.classes[name]
        while info is not None and info.name in self.class_nodes:
            chain.append(self.class_nodes[info.name])
            info = info.base
        methods = {item.name for c in chain for item in c.body if isinstance(item, ast.FunctionDef)}
        for c in chain:
            for n in walked(c):
                if (isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)
                        and n.value.id == "self" and n.attr in methods):
                    raise self.error(n, f"the field '{n.attr}' of class '{name}' has the name of one of its "
                                     f"methods: Python would call the field's value where movers calls the "
                                     f"method; give the field another name")

    def _declare_methods(self, c: ast.ClassDef) -> None:
        info = self.classes[c.name]
        for item in c.body:
            if isinstance(item, ast.FunctionDef):
                code = self._new_code(item, f"{c.name}.{item.name}", info)
                for d in item.decorator_list:
                    dn = self._decorator_name(d)
                    if dn == "synchronized":
                        code.synchronized = True
                    else:
                        raise self.error(d, f"unsupported decorator '@{dn}' on a method")
                if item.name == "__exit__":
                    why = exit_parameter_refusal(item)
                    if why is not None:
                        with self.collecting():
                            raise self.error(*why)
                if item.name.startswith("__") and item.name.endswith("__") and item.name not in (
                        "__init__", "__enter__", "__exit__"):
                    # Python would call it implicitly (==, bool(), len(), hash…); the checker would not. Declared
                    # all the same, so that its calls are not refused too.
                    with self.collecting():
                        raise self.error(item, f"unsupported construct: special method '{item.name}' "
                                         "(only __init__, and __enter__ and __exit__ for 'with', are supported)")
                if not item.args.posonlyargs and not item.args.args:  # def m(self, x, /, *args) too
                    raise self.error(item, "a method must take 'self' as its first parameter")
                info.methods[item.name] = code

    def _new_code(self, fn: ast.FunctionDef, name: str, owner: ClassInfo | None) -> Code:
        why = refuse_star(fn.args)
        if why:
            raise self.error(fn, why)
        pos, kwonly, defaults = parameters(fn.args)
        values: dict[str, Any] = {}
        for p, d in zip([*pos, *kwonly], defaults, strict=True):
            if d is not None:
                ok, v = constant_value(d)
                if not ok:
                    raise self.error(d, default_message(p.arg, d))
                values[p.arg] = box(v)
        params = [p.arg for p in (*pos, *kwonly)]
        star, kwstar = star_name(fn.args), kwstar_name(fn.args)
        code = Code(name, params + star + kwstar, params + star + kwstar, line=fn.lineno, owner=owner)
        # CPython's messages name a method by its qualified name (``Queue.put``, not the library's ``queue.Queue.put``).
        shown = (f"{self.library.local_name(owner.name)}.{fn.name}" if owner is not None
                 and owner.name in self.library.classes else name)
        code.signature = Signature(shown, tuple(params), len(pos), len(fn.args.posonlyargs), values,
                                   star=star[0] if star else None, kwstar=kwstar[0] if kwstar else None,
                                   kwmake=_kwargs_maker(fn.lineno) if kwstar else None)
        return code

    # -- declarations -----------------------------------------------------------------------------------------

    def _declaration(self, call: ast.Call) -> None:
        kind = call.func.id  # type: ignore[attr-defined]
        if kind == "ltl":
            self._ltl_declaration(call)
            return
        if kind in LOCKING_DECLARATIONS:
            self._locking_declaration(kind, call)
            return
        if call.keywords or len(call.args) != 2:
            raise self.error(call, f"{kind}(location, …) takes exactly two arguments")
        loc, arg = call.args
        target = self._location(loc)
        text = self.text(call)
        if kind == "exclusive":
            if not isinstance(arg, ast.Lambda):
                raise self.error(arg, "exclusive(loc, pred): pred must be a lambda")
            params = [p.arg for p in arg.args.args]
            want = 2 if target[0] == "field" else 1
            if len(params) != want:
                what = "lambda t, self: …" if want == 2 else "lambda t: …"
                raise self.error(arg, f"the predicate for this location must be '{what}'")
            pred = self._predicate(params, arg.body)
        elif kind == "guarded_by":
            params = ["t", "self"]
            lock = arg
            body = ast.Compare(
                left=ast.Attribute(value=lock, attr="owner", ctx=ast.Load()),
                ops=[ast.Eq()],
                comparators=[ast.Name(id="t", ctx=ast.Load())],
            )
            ast.copy_location(body, arg)
            ast.fix_missing_locations(body)
            pred = self._predicate(params, body)
        else:  # thread_local
            if not (isinstance(arg, ast.Constant) and type(arg.value) is int):
                raise self.error(arg, "thread_local(loc, k): k must be a thread id (an int constant)")
            k = arg.value

            def pred(ctx: Ctx, t: int, obj: Any, k: int = k) -> bool:
                return t == k

        self.exclusives.append(Exclusive(target, pred, call.lineno, text))

    def _ltl_declaration(self, call: ast.Call) -> None:
        """``ltl("formula")`` or ``ltl("formula", name="n")``, both string literals: the formula is kept as
        written, to be parsed by ``liveness/ltl.py`` (a model is never run, so only a literal has a value)."""
        usage = 'write ltl("[] (p -> <> q)") or ltl("[] (p -> <> q)", name="response")'
        if len(call.args) != 1 or any(k.arg != "name" for k in call.keywords):
            raise self.error(call, f"ltl(…) takes one formula and an optional name=: {usage}")
        formula = call.args[0]
        if not (isinstance(formula, ast.Constant) and type(formula.value) is str):
            raise self.error(formula, f"ltl(…): the formula must be a string literal: {usage}")
        if not formula.value.strip():
            raise self.error(formula, f"ltl(…): the formula is empty: {usage}")
        name = f"ltl_{len(self.ltl_formulas) + 1}"
        for k in call.keywords:
            if not (isinstance(k.value, ast.Constant) and type(k.value.value) is str and k.value.value.strip()):
                raise self.error(k.value, f"ltl(…): name= must be a non-empty string literal: {usage}")
            name = k.value.value
        for d in self.ltl_formulas:
            if d.name == name:
                raise self.error(call, f"the property '{name}' is declared twice (first at line {d.line}): give "
                                       f"each ltl(…) its own name=")
        try:
            parse_formula(formula.value)
        except FormulaError as e:  # at the character of the literal's text that the parser points at
            where = ast.Constant(None, lineno=formula.lineno, col_offset=formula.col_offset + 1 + e.column)
            raise self.error(where, f"ltl(…): {e.message}") from None
        self.ltl_formulas.append(LtlDeclaration(name, formula.value, call.lineno, call.col_offset + 1))
        self._ltl_calls.append(formula)

    def _check_ltl_atoms(self) -> None:
        """Every atom of an ``ltl(…)`` formula names an ``@predicate`` (once every function is compiled)."""
        for d, node in zip(self.ltl_formulas, self._ltl_calls, strict=True):
            unknown = sorted(formula_atoms(parse_formula(d.formula)) - self.predicates.keys())
            if unknown:
                known = ", ".join(sorted(self.predicates)) or "none declared"
                raise self.error(node, f"ltl(…): {', '.join(repr(a) for a in unknown)} "
                                       f"{'is not an @predicate' if len(unknown) == 1 else 'are not @predicates'} "
                                       f"of the model (its @predicate functions: {known}); an atom of a formula "
                                       f"is the name of a function declared with @predicate, without parameters, "
                                       f"returning a bool")

    def _locking_declaration(self, kind: str, call: ast.Call) -> None:
        """``self_locking(Cls)`` / ``lock_protected(Cls)``: one model class, named directly (Dwyer et al.
        take both disciplines per class, sections 6.1-6.2)."""
        if call.keywords or len(call.args) != 1:
            raise self.error(call, f"{kind}(Class) takes exactly one argument: a class of the model")
        arg = call.args[0]
        if not isinstance(arg, ast.Name):
            raise self.error(arg, f"{kind}(Class): the argument must be the name of a class of the model")
        info = self.classes.get(arg.id)
        if info is None:
            what = "a built-in" if arg.id in BUILTIN_CLASS_NAMES else "not a class of the model"
            raise self.error(arg, f"{kind}({arg.id}): '{arg.id}' is {what}; name a class defined in the model")
        for d in self.locking:
            if d.cls is info and d.kind == kind:
                raise self.error(call, f"{kind}({arg.id}) is declared twice (first at line {d.line})")
        self.locking.append(LockingDeclaration(kind, info, call.lineno, self.text(call)))

    def _location(self, loc: ast.expr) -> tuple[Any, ...]:
        if isinstance(loc, ast.Name):
            if loc.id in self.classes:
                raise self.error(loc, "use Class.field to declare a field")
            if loc.id not in self.global_slot:
                raise self.error(loc, f"'{loc.id}' is not a global variable")
            return ("name", loc.id)
        if isinstance(loc, ast.Subscript) and isinstance(loc.value, ast.Name):
            name = loc.value.id
            if name not in self.global_slot:
                raise self.error(loc, f"'{name}' is not a global variable")
            if not (isinstance(loc.slice, ast.Constant) and type(loc.slice.value) is int):
                raise self.error(loc.slice, "the index of a declared element must be an int constant")
            return ("element", name, loc.slice.value)
        if isinstance(loc, ast.Attribute) and isinstance(loc.value, ast.Name) and loc.value.id in self.classes:
            info = self.classes[loc.value.id]
            if loc.attr not in info.fields:
                raise self.error(loc, f"class '{info.name}' has no field '{loc.attr}'")
            return ("field", info, loc.attr)
        raise self.error(loc, "a location is a global (x), an element (x[0]) or a field (Class.field)")

    def _predicate(self, params: list[str], body: ast.expr) -> Callable[[Ctx, int, Any], bool]:
        code = Code("<predicate>", params, list(params))
        fc = FunctionCompiler(self, code, None, None)
        fn = fc.expr(body, allow_calls=False)

        def pred(ctx: Ctx, t: int, obj: Any) -> bool:
            saved = ctx.loc
            ctx.loc = [t, obj]
            try:
                return bool(fn(ctx))
            finally:
                ctx.loc = saved

        return pred


# ---------------------------------------------------------------------------------------------------------------
# The function compiler: the core (function.py) and the rules for each kind of construct
# ---------------------------------------------------------------------------------------------------------------


class FunctionCompiler(StatementCompiler, ConcurrencyCompiler, ExceptionCompiler, ExpressionCompiler, IterationCompiler,
                       BuiltinCompiler, TimeoutCompiler, DeletionCompiler, ContextCompiler):
    """Compiles one function, method or the module's initialisation into its ``Code``: ``compile_function``,
    or ``compile_block`` then ``finish``. ``FunctionCore`` (function.py) with the rules of each mixin."""


def _kwargs_maker(line: int) -> Callable[[Ctx, list[tuple[str, Any]]], Ref]:
    """What makes the dict ``**kwargs`` of the definition at ``line`` receives at each call."""
    cls = dict_class(line)
    return lambda ctx, pairs: dict_new(ctx, cls, pairs)


def _list_valued(e: ast.expr) -> bool:
    """An expression that is a list whatever it holds: a display, a comprehension, a slice, ``list(…)``."""
    return (isinstance(e, (ast.List, ast.ListComp)) or (isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice))
            or _is_call_to(e, "list"))


def _list_globals(nodes: list[ast.AST], globals_: dict[str, int]) -> frozenset[str]:
    """The globals that only ever hold lists: every store of the name, anywhere in the module (locals of the
    same name included), assigns a list display (``[…]``, ``[…] * n``)."""
    def is_list(v: ast.expr) -> bool:
        return isinstance(v, ast.List) or (isinstance(v, ast.BinOp) and isinstance(v.op, ast.Mult)
                                           and (isinstance(v.left, ast.List) or isinstance(v.right, ast.List)))

    ok = set(globals_)
    listed: set[int] = set()
    for n in nodes:
        if isinstance(n, ast.Assign) and is_list(n.value):
            listed.update(id(t) for t in n.targets if isinstance(t, ast.Name))
    for n in nodes:
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and id(n) not in listed:
            ok.discard(n.id)
    return frozenset(ok)


def main_stops(program: Program) -> frozenset[int]:
    """The nodes (by ``id``) where the module's code, once it has started a thread, stops running atomically
    and goes on as the main thread (``TransitionSystem.initial``): those that may conflict with a step of a
    thread (a synchronisation other than ``start()``, a choice, a call of a model function, or an access to a
    location some function or method writes, or writes one that it reads). Empty when the module's code can
    never be the main thread (``Program.main_thread``).

    Before that point every step of the module's code is independent of every step the started threads may
    take, so it commutes with them (Lipton's reduction: a both-mover may run early) and running it first loses
    no interleaving; a ``start()`` only adds a thread. Module code that only starts threads and does work of
    its own after its first ``start()`` therefore runs whole before them, as before the main thread existed:
    such models keep their states and thread ids."""
    init = program.init
    reach = program.reachable_codes([init])
    threads = [c for c in program.codes() if c is not init]
    rg: set[str] = set()
    wg: set[str] = set()
    rf: set[str] = set()
    wf: set[str] = set()
    re_ = we = False
    for c in threads:
        for n in c.nodes:
            rg |= n.reads
            wg |= n.writes - {"$daemons"}  # only the deadlock check reads it
            rf |= n.fields_read
            wf |= n.fields_written
            re_ = re_ or n.elements_read
            we = we or n.elements_written

    def conflicts(n: Node) -> bool:
        return bool(
            (n.is_sync and n.kind != "start") or n.chooses or n.calls
            or n.writes & (rg | wg) or n.reads & wg
            or n.fields_written & (rf | wf) or n.fields_read & wf
            or (n.elements_written and (re_ or we)) or (n.elements_read and we))

    if any(n.kind == "start" for c in reach if c is not init for n in c.nodes):
        candidates = [n for c in reach for n in c.nodes]  # a function the module calls starts a thread
    else:
        first = next((i for i, n in enumerate(init.nodes) if n.kind == "start"), None)
        candidates = [] if first is None else init.nodes[first + 1:]
    if not any(conflicts(n) for n in candidates):
        return frozenset()
    # Loops may take the module's code back before its first start(): every node may be where it stops.
    return frozenset(id(n) for c in reach for n in c.nodes if conflicts(n))


def _reached(init: Code, stops: frozenset[int]) -> frozenset[int]:
    """The nodes of ``init`` reachable from one of ``stops`` (ids) along the control flow, stops included."""
    work = [pc for pc, n in enumerate(init.nodes) if id(n) in stops]
    seen = set(work)
    while work:
        for s in init.nodes[work.pop()].succ:
            if s not in seen and 0 <= s < len(init.nodes):
                seen.add(s)
                work.append(s)
    return frozenset(id(init.nodes[pc]) for pc in seen)
# Allocation sites whose objects ``==`` compares by their contents: lists, and dicts and sets
# (``lang/containers.py``; "container" is the site of a ``copy()`` that may be either), and deques.
_COMPARED_BY_CONTENTS = frozenset({"list", "dict", "set", "container", "deque"})


Sites = Callable[[Code, frozenset[Any]], set[Any]]


def lazy_points_to(program: Program) -> Sites:
    """``points_to(program)``, solved at the first question only (most models ask none)."""
    solved: list[Sites] = []

    def sites(code: Code, av: frozenset[Any]) -> set[Any]:
        if not solved:
            solved.append(points_to(program))
        return solved[0](code, av)

    return sites


def resolve_comparisons(program: Program, sites_compared: list[tuple[Code, Any, Any, tuple[int, int]]],
                        sites: Sites | None = None) -> tuple[frozenset[tuple[Any, Any]], frozenset[tuple[int, int]]]:
    """Turn the comparisons that may compare two lists (``Node.compared``) into what they read: every
    element of those lists and of the lists inside them (``runtime_ops._eq`` compares contents), for the
    reductions' static facts (``elements_read``) and the escape analysis (``uses``). Which values may be
    lists is the escape analysis's points-to sets (``analysis/static_escape.py``), solved only for models that
    compare possible references at all: ``x == y`` over ints then reads no element, as before. Returns the
    comparisons that compare no lists, and where (``sites_compared``: line, column) those that may are."""
    codes = [program.init, *(c for c in program.codes() if c is not program.init)]
    if not any(n.compared for code in codes for n in code.nodes):
        return frozenset(), frozenset()
    sites = sites or points_to(program)
    plain: set[tuple[Any, Any]] = set()

    def lists(code: Code, av: frozenset[Any]) -> bool:
        return any(site[3] in _COMPARED_BY_CONTENTS for site in sites(code, av))

    for code in codes:
        for n in code.nodes:
            for a, b in n.compared:
                if lists(code, a) and lists(code, b):
                    n.elements_read = True
                    n.uses = (*n.uses, frozenset({("reach", a)}), frozenset({("reach", b)}))
                else:
                    plain.add((a, b))
    at = frozenset(pos for code, a, b, pos in sites_compared if lists(code, a) and lists(code, b))
    return frozenset(plain), at


def resolve_truths(sites: Sites, sites_tested: list[tuple[Code, Any, tuple[int, int]]],
                   plain_at: frozenset[tuple[int, int]]) -> tuple[frozenset[tuple[int, int]], bool]:
    """Decide the truth tests (``ExpressionCompiler.truth_use``): testing a list's (dict's, set's, deque's)
    truth reads its length, an access once containers change size; testing anything else reads nothing. Which
    values may be containers is the points-to analysis's answer, as for comparisons (``resolve_comparisons``).
    Returns where (line, column) the tests are whose values are never containers, and whether a test this
    compilation took as such (``plain_at``, from a first compilation) may be one after all: then the program
    is not to be used (``compile_model`` compiles again without them)."""
    if not sites_tested:
        return frozenset(), False
    tested: set[tuple[int, int]] = set()
    containers: set[tuple[int, int]] = set()
    for code, av, where in sites_tested:
        tested.add(where)
        if av and any(site[3] in _COMPARED_BY_CONTENTS for site in sites(code, av)):
            containers.add(where)
    return frozenset(tested - containers), bool(containers & plain_at)


def compile_model(source: str, filename: str = "<model>", granularity: str = DEFAULT_GRANULARITY) -> Program:
    """Parse and compile a model's source text at a granularity (``GRANULARITIES``, lang/granularity.py).
    Raises ModelSyntaxError with file:line:col."""
    if granularity not in GRANULARITIES:
        raise ValueError(f"unknown granularity '{granularity}' (known: {', '.join(GRANULARITIES)})")
    mc = ModuleCompiler(source, filename, granularity)
    mc.held = []  # a first pass at access granularity is often done again: its code is written if it is kept
    program = mc.compile()
    if granularity == "access" and (mc.plain_found or mc.compared_at_found or mc.truths_plain_found):
        # Whether a comparison reads lists' elements (an access) is known only once every flow is: a second
        # compilation makes a step of only those that may (``Finals.plain``), each cut from the statement's
        # other accesses (``Finals.compared_at``); ``x == y`` over ints is local. So with truth tests: ``if not
        # block:`` reads a length only if ``block`` may be a list (``Finals.truths_plain_at``).
        mc = ModuleCompiler(source, filename, granularity, plain=mc.plain_found,
                            compared_at=mc.compared_at_found, truths_plain_at=mc.truths_plain_found)
        mc.held = []
        program = mc.compile()
        if mc.truths_contradicted:
            # The second compilation's flows let a test taken as plain see a container (never seen: a safety
            # net, since the two compilations differ in where they cut statements): every test is a read.
            second = mc  # compiled with the first compilation's findings: compile again with the same, no truths
            mc = ModuleCompiler(source, filename, granularity, plain=second.plain, compared_at=second.compared_at)
            mc.held = []
            program = mc.compile()
    for job in mc.held or ():
        codegen.attach(*job)
    return program


__all__ = ["GRANULARITIES", "compile_model", "ModelSyntaxError", "SEMAPHORE", "RLOCK", "LOCK", "CONDITION"]
