"""Compile a model (a Python module, parsed with ``ast``, never executed) into the program IR.

Every function, method and the module's initialisation becomes a ``Code``: a list of nodes, each a closure
over integer slots (globals by slot, locals by slot, fields by index).

This module is the entry point (``compile_model``) and the front end: ``ModuleCompiler`` parses the module,
checks its shape (the one import allowed, definitions at the top level, decorators), declares its globals,
classes (fields laid out base-first) and methods, compiles the top-level declarations (``exclusive``,
``guarded_by``, ``thread_local``, ``self_locking``, ``lock_protected``) and checks that invariants are pure
(``_check_pure``). Errors in the model are ``ModelSyntaxError``s at ``file:line:col`` (``lang/errors.py``).

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
from collections.abc import Callable
from typing import Any

from movers.analysis.static_escape import points_to
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
    Program,
)
from movers.lang.builtins import BuiltinCompiler
from movers.lang.concurrency import ConcurrencyCompiler
from movers.lang.errors import ModelSyntaxError, at
from movers.lang.expressions import ExpressionCompiler
from movers.lang.granularity import DEFAULT_GRANULARITY, GRANULARITIES, Finals, finals
from movers.lang.statements import StatementCompiler
from movers.lang.syntax import BUILTIN_CLASS_NAMES, DECLARATIONS, LOCKING_DECLARATIONS, _is_call_to, _is_docstring

# How the tokenizer breaks lines (str.splitlines also breaks at form feeds and others, shifting line numbers).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Node sources (shown in traces) longer than this are cut: a 5 MB assertion message stays out of every step.
TEXT_LIMIT = 200


# ---------------------------------------------------------------------------------------------------------------
# The module compiler
# ---------------------------------------------------------------------------------------------------------------


class ModuleCompiler:
    def __init__(self, source: str, filename: str, granularity: str = DEFAULT_GRANULARITY,
                 plain: frozenset[tuple[Any, Any]] = frozenset()) -> None:
        self.source = source
        self.filename = filename
        self.granularity = granularity
        self.plain = plain  # comparisons known to compare no lists (``compile_model``)
        self.plain_found: frozenset[tuple[Any, Any]] = frozenset()
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
        self.invariants: list[tuple[str, Code]] = []
        self.exclusives: list[Exclusive] = []
        self.atomic_blocks: list[AtomicBlock] = []
        self.locking: list[LockingDeclaration] = []
        self.lists_grow = self.uses_events = self.uses_barriers = self.has_lists = False
        self.has_dicts = self.has_defaultdict = self.container_arith = False

    def error(self, node: ast.AST | None, message: str) -> ModelSyntaxError:
        return at(self.filename, node, message)

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
        if self._blines is None:
            self._blines = [ln.encode("utf-8") for ln in _LINE_BREAK.split(self.source)]
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
        tree = self._parse()
        self._survey(tree)
        init_body, declarations = self._top_level(tree)
        self._declare_globals(init_body)
        self._declare_classes()
        self.list_globals = _list_globals(tree, self.global_slot)
        bodies = [(fn, False) for fn in self.function_nodes.values()]
        bodies += [(item, item.name == "__init__") for c in self.class_nodes.values() for item in c.body
                   if isinstance(item, ast.FunctionDef)]
        self.finals = dataclasses.replace(finals(self.globals, bodies), plain=self.plain)
        if self.has_defaultdict:  # `d[k]` on a defaultdict may insert: elements are never final
            self.finals = dataclasses.replace(self.finals, elements=False)
        self._compile_functions()
        init = Code("<module>", [], [], line=1)
        fc = FunctionCompiler(self, init, None, None)
        fc.compile_block(init_body)
        fc.finish()
        for d in declarations:
            self._declaration(d)
        program = Program(
            filename=self.filename,
            source=self.source,
            globals=self.globals,
            classes=self.classes,
            functions=self.functions,
            init=init,
            invariants=self.invariants,
            exclusives=self.exclusives,
            atomic_blocks=self.atomic_blocks,
            locking=self.locking,
            granularity=self.granularity,
        )
        for _, code in self.invariants:
            self._check_pure(program, code)
        self.plain_found = resolve_comparisons(program)
        return program

    def _parse(self) -> ast.Module:
        try:
            return ast.parse(self.source, self.filename)
        except SyntaxError as e:
            msg = e.msg
            if "integer string conversion" in msg:
                msg = "integer literal too large (more than 4,300 digits)"
            raise ModelSyntaxError(self.filename, max(e.lineno or 1, 1), max(e.offset or 1, 1),
                                   f"syntax error: {msg}") from None

    def _survey(self, tree: ast.Module) -> None:
        """What the whole module uses, which decides how some constructs compile everywhere in it."""
        # Whether lists may change length: then every list records reads of its length (ClassInfo.grows).
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        self.lists_grow = any(isinstance(n.func, ast.Attribute) and n.func.attr in (
            "append", "pop", "insert", "remove", "extend", "clear") for n in calls)
        # Whether the model has lists at all: only then may a comparison read elements (``compares``).
        self.has_lists = any(isinstance(n, ast.List) and isinstance(n.ctx, ast.Load) for n in ast.walk(tree))
        # Whether the model makes dicts or sets (``lang/containers.py``): only then do their methods compile.
        self.has_defaultdict = any(_is_call_to(n, "defaultdict") for n in calls)
        self.has_dicts = self.has_defaultdict or any(
            isinstance(n, (ast.Dict, ast.Set)) or _is_call_to(n, "dict") or _is_call_to(n, "set")
            for n in ast.walk(tree))
        # Whether `+`, `*`, `|`, `&`, `-` may meet lists or sets (``lang/containers.py``): then they compile to
        # the containers' operators, and each one with two operands that are not constants is an access.
        self.container_arith = self.has_dicts or any(
            isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Mult)) and any(
                _list_valued(x) and not (isinstance(n.op, ast.Mult) and x is n.left
                                                  and isinstance(x, ast.List) and len(x.elts) == 1)
                for x in (n.left, n.right)) for n in ast.walk(tree))
        if self.has_dicts:
            # A dict's size changes with its contents: its length, like a growing list's, is an access.
            self.lists_grow = self.has_lists = True
        # Whether a `.wait()` may meet an Event or a Barrier: only then does it get their branches (a guard,
        # a second blocking step), so that models without them compile exactly as before.
        called = {n.func.id for n in calls if isinstance(n.func, ast.Name)}
        self.uses_events = "Event" in called
        self.uses_barriers = "Barrier" in called

    def _top_level(self, tree: ast.Module) -> tuple[list[ast.stmt], list[ast.Call]]:
        """Sort the module's statements: functions and classes (recorded by name), declarations, and the
        statements of the initialisation (those under ``if __name__ == "__main__":`` included)."""
        init_body: list[ast.stmt] = []
        declarations: list[ast.Call] = []
        for s in tree.body:
            if isinstance(s, ast.ImportFrom):
                if s.module != "movers.lang" or s.level:
                    raise self.error(s, f"import of '{s.module}' is not allowed: only 'from movers.lang import *'")
            elif isinstance(s, ast.Import):
                raise self.error(s, "import is not allowed in a model: only 'from movers.lang import *'")
            elif isinstance(s, ast.FunctionDef):
                self._new_name(s)
                self.function_nodes[s.name] = s
            elif isinstance(s, ast.AsyncFunctionDef):
                raise self.error(s, "unsupported construct: async def")
            elif isinstance(s, ast.ClassDef):
                self._new_name(s)
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

    def _new_name(self, s: ast.FunctionDef | ast.ClassDef) -> None:
        if s.name in self.function_nodes or s.name in self.class_nodes:
            raise self.error(s, f"'{s.name}' is defined twice")

    def _declare_globals(self, init_body: list[ast.stmt]) -> None:
        """A slot for every name the initialisation assigns, in the order of first assignment."""
        for s in init_body:
            for n in ast.walk(s):
                if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Lambda)):
                    raise self.error(n, "unsupported construct: definitions must be at the top level of a model")
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in self.global_slot:
                    if n.id in self.function_nodes or n.id in self.class_nodes:
                        raise self.error(n, f"'{n.id}' is a function or class and cannot be assigned")
                    self.global_slot[n.id] = len(self.globals)
                    self.globals.append(n.id)

    def _compile_functions(self) -> None:
        """Every function and method: all are declared first (a body may call one defined after it), then
        compiled; ``@invariant`` functions are recorded."""
        for name, fn in self.function_nodes.items():
            code = self._new_code(fn, name, None)
            self.functions[name] = code
            self.funcs[name] = Func(name, code)
        for c in self.class_nodes.values():
            self._declare_methods(c)
        for name, fn in self.function_nodes.items():
            decorators = [self._decorator_name(d) for d in fn.decorator_list]
            for d, dn in zip(decorators, fn.decorator_list, strict=True):
                if d != "invariant":
                    raise self.error(dn, f"unsupported decorator '@{d}' on a function")
            FunctionCompiler(self, self.functions[name], fn, None).compile_function()
            if "invariant" in decorators:
                if fn.args.args:
                    raise self.error(fn, "an @invariant takes no arguments")
                self.invariants.append((name, self.functions[name]))
        for cname, c in self.class_nodes.items():
            info = self.classes[cname]
            for item in c.body:
                if isinstance(item, ast.FunctionDef):
                    FunctionCompiler(self, info.methods[item.name], item, info).compile_function()

    def _check_pure(self, program: Program, invariant: Code) -> None:
        """An @invariant is evaluated in every state and must not change it, block or branch: reject, at the
        statement that would, writes to globals, fields and elements, synchronisation, assert, assume and
        choose, in the invariant and in everything it calls."""
        for code in program.reachable_codes([invariant]):
            for n in code.nodes:
                why = ""
                if n.is_sync:
                    why = "a synchronisation operation"
                elif n.kind in ("assert", "assume"):
                    why = f"'{n.kind}' (an invariant returns its truth: use 'return')"
                elif n.chooses:
                    why = "a nondeterministic choice"
                elif n.writes or n.fields_written or n.elements_written:
                    why = "a write to the state"
                if why:
                    raise ModelSyntaxError(self.filename, n.line, max(n.col, 1),
                                           f"the @invariant {invariant.name}() must not change the state or "
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
                elif b.id == "object":
                    pass
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
                    for n in ast.walk(item):
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
                else:
                    raise self.error(
                        item, "unsupported construct in a class body: only methods (set fields in __init__)"
                    )
            info.fields = fields
            info.finish()
            done.add(name)

        for name in self.class_nodes:
            resolve(name)

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
                if item.name.startswith("__") and item.name.endswith("__") and item.name != "__init__":
                    # Python would call it implicitly (==, bool(), len(), hash…); the checker would not.
                    raise self.error(item, f"unsupported construct: special method '{item.name}' "
                                     "(only __init__ is supported)")
                if not item.args.args:
                    raise self.error(item, "a method must take 'self' as its first parameter")
                info.methods[item.name] = code

    def _new_code(self, fn: ast.FunctionDef, name: str, owner: ClassInfo | None) -> Code:
        a = fn.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults or a.kw_defaults:
            raise self.error(fn, "unsupported construct: only plain positional parameters")
        params = [p.arg for p in a.args]
        return Code(name, params, list(params), line=fn.lineno, owner=owner)

    # -- declarations -----------------------------------------------------------------------------------------

    def _declaration(self, call: ast.Call) -> None:
        kind = call.func.id  # type: ignore[attr-defined]
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


class FunctionCompiler(StatementCompiler, ConcurrencyCompiler, ExpressionCompiler, BuiltinCompiler):
    """Compiles one function, method or the module's initialisation into its ``Code``: ``compile_function``,
    or ``compile_block`` then ``finish``. ``FunctionCore`` (function.py) with the rules of each mixin."""


def _list_valued(e: ast.expr) -> bool:
    """An expression that is a list whatever it holds: a display, a slice, ``list(…)``."""
    return (isinstance(e, ast.List) or (isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice))
            or _is_call_to(e, "list"))


def _list_globals(tree: ast.Module, globals_: dict[str, int]) -> frozenset[str]:
    """The globals that only ever hold lists: every store of the name, anywhere in the module (locals of the
    same name included), assigns a list display (``[…]``, ``[…] * n``)."""
    def is_list(v: ast.expr) -> bool:
        return isinstance(v, ast.List) or (isinstance(v, ast.BinOp) and isinstance(v.op, ast.Mult)
                                           and (isinstance(v.left, ast.List) or isinstance(v.right, ast.List)))

    ok = set(globals_)
    listed: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and is_list(n.value):
            listed.update(id(t) for t in n.targets if isinstance(t, ast.Name))
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and id(n) not in listed:
            ok.discard(n.id)
    return frozenset(ok)


# Allocation sites whose objects ``==`` compares by their contents: lists, and dicts and sets
# (``lang/containers.py``; "container" is the site of a ``copy()`` that may be either).
_COMPARED_BY_CONTENTS = frozenset({"list", "dict", "set", "container"})


def resolve_comparisons(program: Program) -> frozenset[tuple[Any, Any]]:
    """Turn the comparisons that may compare two lists (``Node.compared``) into what they read: every
    element of those lists and of the lists inside them (``runtime_ops._eq`` compares contents), for the
    reductions' static facts (``elements_read``) and the escape analysis (``uses``). Which values may be
    lists is the escape analysis's points-to sets (``analysis/static_escape.py``), solved only for models that
    compare possible references at all: ``x == y`` over ints then reads no element, as before."""
    codes = [program.init, *program.codes()]
    if not any(n.compared for code in codes for n in code.nodes):
        return frozenset()
    sites = points_to(program)
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
    return frozenset(plain)


def compile_model(source: str, filename: str = "<model>", granularity: str = DEFAULT_GRANULARITY) -> Program:
    """Parse and compile a model's source text at a granularity (``GRANULARITIES``, lang/granularity.py).
    Raises ModelSyntaxError with file:line:col."""
    if granularity not in GRANULARITIES:
        raise ValueError(f"unknown granularity '{granularity}' (known: {', '.join(GRANULARITIES)})")
    mc = ModuleCompiler(source, filename, granularity)
    program = mc.compile()
    if granularity == "access" and mc.plain_found:
        # Whether a comparison reads lists' elements (an access) is known only once every flow is: a second
        # compilation makes a step of only those that may (``Finals.plain``); ``x == y`` over ints is local.
        program = ModuleCompiler(source, filename, granularity, plain=mc.plain_found).compile()
    return program


__all__ = ["GRANULARITIES", "compile_model", "ModelSyntaxError", "SEMAPHORE", "RLOCK", "LOCK", "CONDITION"]
