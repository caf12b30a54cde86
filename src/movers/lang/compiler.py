"""Compile a model (a Python module, parsed with ``ast``, never executed) into the program IR.

Every function, method and the module's initialisation becomes a ``Code``: a list of nodes, each a closure
over integer slots (globals by slot, locals by slot, fields by index). The granularity of LANGUAGE.md
section 6 is decided here and only here: the first node of every simple statement, every non-constant
``if``/``while`` condition, every ``for`` header, and the entry and exit of ``with lock:`` are *costly*
(a step starts there); everything else is free glue that runs as part of the step before it.

Calls of model functions are part of the calling statement's step. A statement whose expression contains
calls is lowered into segments: the costly node evaluates up to the first call and pushes the callee's frame;
when the callee's ``return`` step pops it, the caller's next segment (a free node) stores the result in a
hidden temporary and goes on, to the next call or to the end of the statement. Calls are therefore evaluated
before the rest of the expression; calls inside ``and``/``or``/conditional expressions are rejected, since
hoisting them would change which of them run.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from movers.ir import sync
from movers.ir.machine import AssertionFailed, Ctx, ModelError, Pruned, new_object, show
from movers.ir.program import (
    CONDITION,
    LOCK,
    MON,
    RLOCK,
    SEMAPHORE,
    SYNC_KINDS,
    THREAD,
    UNBOUND,
    AtomicBlock,
    Bool,
    ClassInfo,
    Code,
    Exclusive,
    Func,
    LockingDeclaration,
    Node,
    Program,
    Ref,
    Unbound,
    box,
    unbox,
)
from movers.lang.errors import ModelSyntaxError, at

Fn = Callable[[Ctx], Any]

FORBIDDEN = {
    "eval", "exec", "open", "__import__", "compile", "globals", "locals", "vars", "getattr", "setattr",
    "delattr", "input", "breakpoint", "exit", "quit", "memoryview", "object", "type", "super_",
}
SYNC_METHODS = {"acquire", "release", "wait", "notify", "notify_all", "notifyAll", "start", "join"}
DECLARATIONS = {"exclusive", "guarded_by", "thread_local", "self_locking", "lock_protected"}
LOCKING_DECLARATIONS = {"self_locking", "lock_protected"}
BUILTIN_CLASS_NAMES = {"Lock", "RLock", "Condition", "Semaphore", "Thread", "list", "object"}
PURE_BUILTINS = {"len", "min", "max", "abs", "tid", "choose", "int", "bool"}


class Label:
    __slots__ = ("pc",)

    def __init__(self) -> None:
        self.pc = -1


# An abstract value, for the static escape analysis: the objects an expression may evaluate to, as a set of
# terms. ("local", slot) and ("global", name): what a variable holds; ("new", site): an object allocated at
# ``site`` = (code name, line, column, class name); ("field", av, name) and ("element", av): what a field or an
# element of an object of ``av`` holds; ("return", code): what ``code`` returns; ("method_return", av, name):
# what method ``name`` returns, called on an object of ``av``. Tuples are not objects: a tuple's value is the
# union of its items'. A value that holds no reference (an int) is the empty set.
AV = frozenset
NO_VALUE: frozenset[Any] = frozenset()


class Facts:
    """What a node's code may access: recorded by the expression and target compilers *while* they compile
    the code that does the access, so that the static facts reductions rely on cannot disagree with what
    executes (a second walk over AST shapes once missed ``v in a`` and ``x, y = a``)."""

    __slots__ = ("reads", "writes", "fields_read", "fields_written", "elements_read", "elements_written",
                 "callees", "allocates", "chooses", "flows", "uses")

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
        # For the static escape analysis (reduce/static_escape.py): where references flow, and the objects
        # the node accesses (fields, elements, lock state), as abstract values (``AV``). A flow is
        # ("store", dest, av), dest one of ("local", slot), ("global", name), ("field", av, name),
        # ("element", av), ("return",); ("call", code, (av, ...)): arguments to parameters;
        # ("method_call", av, name, (av, ...)): method ``name`` called on an object of ``av``;
        # ("thread", av, code, av_args): ``Thread(target=code, args=…)``; ("start", av): ``start()``.
        self.flows: list[tuple[Any, ...]] = []
        self.uses: list[AV] = []

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
        }


class CallSite:
    """A model call inside an expression, hoisted to run before the rest of the statement."""

    def __init__(self, temp: int, setup: Callable[[Ctx, int], None]) -> None:
        self.temp = temp
        self.setup = setup  # setup(ctx, ret_pc): evaluate receiver and arguments, push the frame


# ---------------------------------------------------------------------------------------------------------------
# Runtime helpers used by the compiled closures (small and pure; on the hot path).
# ---------------------------------------------------------------------------------------------------------------


def _check_ref(v: Any, what: str) -> Ref:
    if type(v) is not Ref:
        if v is None:
            raise ModelError(f"{what} of None")
        raise ModelError(f"{what} of {show(v)}, which is not an object")
    return v


def _index(o: tuple, i: Any) -> int:
    if type(i) is not int and type(i) is not bool:
        raise ModelError(f"list index must be an int, got {show(i)}")
    n = len(o) - 2
    if i < 0:
        i += n
    if not 0 <= i < n:
        raise ModelError(f"list index {i} out of range (length {n})")
    return i + 2


def _field_index(o: tuple, name: str) -> int:
    idx = o[0].field_index.get(name)
    if idx is None:
        raise ModelError(f"{o[0].name} object has no field '{name}'")
    return idx


def _writable_field(o: tuple, name: str) -> int:
    cls = o[0]
    if cls.builtin or (cls.is_thread and name in THREAD.fields):
        raise ModelError(f"'{name}' of a {cls.name} cannot be assigned")
    return _field_index(o, name)


def _length(ctx: Ctx, v: Any) -> int:
    if type(v) is Ref:
        o = ctx.heap[v.i]
        if not o[0].is_list:
            raise ModelError(f"len() of a {o[0].name} object")
        return len(o) - 2
    if type(v) is tuple:
        return len(v)
    raise ModelError(f"len() of {show(v)}")


def _truth(ctx: Ctx, v: Any) -> bool:
    """Python's truth of a value: a list is false when empty; any other object is true."""
    if type(v) is Ref:
        o = ctx.heap[v.i]
        return not o[0].is_list or len(o) > 2
    return bool(v)


def _is(a: Any, b: Any) -> bool:
    if a is None or b is None or type(a) is Ref or type(b) is Ref:
        return a is b
    return type(a) is type(b) and a == b


# Bounds on the size of values, so that one step of a model cannot run for minutes or exhaust memory inside
# CPython's arithmetic, where no time limit can interrupt it (`10 ** 10 ** 8`): a result past them is a
# runtime error of the model. Documented in docs/language.md.
MAX_INT_BITS = 1 << 16
MAX_SEQUENCE = 100_000


def _int_like(v: Any) -> bool:
    return type(v) is int or type(v) is bool


def _too_big(what: str) -> ModelError:
    return ModelError(f"{what}: the checker bounds integers to {MAX_INT_BITS:,} bits and tuples and arrays "
                      f"to {MAX_SEQUENCE:,} elements")


def _add(a: Any, b: Any) -> Any:
    v = a + b
    if type(v) is tuple and len(v) > MAX_SEQUENCE:
        raise _too_big("tuple too long")
    return v


def _mul(a: Any, b: Any) -> Any:
    if _int_like(a) and _int_like(b):
        if a.bit_length() + b.bit_length() > MAX_INT_BITS:
            raise _too_big("integer too large")
    elif type(a) is tuple and _int_like(b) and len(a) * b > MAX_SEQUENCE:
        raise _too_big("tuple too long")
    elif type(b) is tuple and _int_like(a) and len(b) * a > MAX_SEQUENCE:
        raise _too_big("tuple too long")
    return a * b


def _pow(a: Any, b: Any) -> Any:
    if _int_like(a) and _int_like(b):
        if b < 0:
            raise ModelError(f"{show(a)} ** {show(b)}: a negative exponent gives a fraction; values are ints")
        if b > 1 and (a > 1 or a < -1) and b * (abs(a).bit_length() - 1) > MAX_INT_BITS:
            raise _too_big("integer too large")
    return a**b


def _lshift(a: Any, b: Any) -> Any:
    if _int_like(a) and _int_like(b) and a and b > 0 and a.bit_length() + b > MAX_INT_BITS:
        raise _too_big("integer too large")
    return a << b


BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: _add,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: _mul,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: _pow,
    ast.LShift: _lshift,
    ast.RShift: lambda a, b: a >> b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitXor: lambda a, b: a ^ b,
}
CMPOPS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Is: _is,
    ast.IsNot: lambda a, b: not _is(a, b),
}


# How the tokenizer breaks lines (str.splitlines also breaks at form feeds and others, shifting line numbers).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Node sources (shown in traces) longer than this are cut: a 5 MB assertion message stays out of every step.
TEXT_LIMIT = 200


def _is_call_to(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _is_docstring(s: ast.stmt) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)


def _constant_truth(e: ast.expr) -> bool | None:
    if isinstance(e, ast.Constant) and isinstance(e.value, (bool, int, type(None))):
        return bool(e.value)
    return None


# ---------------------------------------------------------------------------------------------------------------
# The module compiler
# ---------------------------------------------------------------------------------------------------------------


class ModuleCompiler:
    def __init__(self, source: str, filename: str) -> None:
        self.source = source
        self.filename = filename
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

    def error(self, node: ast.AST | None, message: str) -> ModelSyntaxError:
        return at(self.filename, node, message)

    def text(self, node: ast.AST) -> str:
        """The source of ``node`` on one line, for traces and messages (cut after ``TEXT_LIMIT`` characters).

        ``ast.get_source_segment`` splits the whole source at every call, which is quadratic on a large
        model; the lines are split once here, as the tokenizer splits them (not at form feeds)."""
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
        try:
            tree = ast.parse(self.source, self.filename)
        except SyntaxError as e:
            msg = e.msg
            if "integer string conversion" in msg:
                msg = "integer literal too large (more than 4,300 digits)"
            raise ModelSyntaxError(self.filename, max(e.lineno or 1, 1), max(e.offset or 1, 1),
                                   f"syntax error: {msg}") from None
        init_body: list[ast.stmt] = []
        declarations: list[ast.Call] = []
        for s in tree.body:
            if isinstance(s, ast.ImportFrom):
                if s.module != "movers.lang" or s.level:
                    raise self.error(s, f"import of '{s.module}' is not allowed: only 'from movers.lang import *'")
            elif isinstance(s, ast.Import):
                raise self.error(s, "import is not allowed in a model: only 'from movers.lang import *'")
            elif isinstance(s, ast.FunctionDef):
                if s.name in self.function_nodes or s.name in self.class_nodes:
                    raise self.error(s, f"'{s.name}' is defined twice")
                self.function_nodes[s.name] = s
            elif isinstance(s, ast.AsyncFunctionDef):
                raise self.error(s, "unsupported construct: async def")
            elif isinstance(s, ast.ClassDef):
                if s.name in self.function_nodes or s.name in self.class_nodes:
                    raise self.error(s, f"'{s.name}' is defined twice")
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
        for s in init_body:
            for n in ast.walk(s):
                if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Lambda)):
                    raise self.error(n, "unsupported construct: definitions must be at the top level of a model")
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in self.global_slot:
                    if n.id in self.function_nodes or n.id in self.class_nodes:
                        raise self.error(n, f"'{n.id}' is a function or class and cannot be assigned")
                    self.global_slot[n.id] = len(self.globals)
                    self.globals.append(n.id)
        self._declare_classes()
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
        )
        for _, code in self.invariants:
            self._check_pure(program, code)
        return program

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
# The function compiler: statements to nodes
# ---------------------------------------------------------------------------------------------------------------


class Exit:
    """An enclosing construct that must be left properly by return/break/continue."""

    def __init__(self, emit_exit: Callable[[ast.AST], None], loop: tuple[Label, Label] | None = None) -> None:
        self.emit_exit = emit_exit
        self.loop = loop  # (continue target, break target) for loops


class FunctionCompiler:
    def __init__(self, mc: ModuleCompiler, code: Code, fn: ast.FunctionDef | None, cls: ClassInfo | None) -> None:
        self.mc = mc
        self.code = code
        self.fn = fn
        self.cls = cls
        self.slot: dict[str, int] = {n: i for i, n in enumerate(code.locals)}
        self.global_names: set[str] = set()
        self.pending: list[tuple[Callable[[], Callable[[Ctx], None]], dict[str, Any]]] = []
        self.exits: list[Exit] = []
        self.site_stack: list[list[CallSite]] | None = None
        self.temp_counter = 0
        self.atomic_block = -1
        self.commit_next = False
        self.is_module = fn is None
        # The facts of the node being compiled (see ``recording``); outside one, a sink nobody reads.
        self.facts = Facts()
        # The abstract value (``AV``) of each expression compiled so far, for the facts' flows.
        self.values: dict[ast.AST, AV] = {}

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
        if costly and self.commit_next:
            info["commit"] = True
            self.commit_next = False
        self.pending.append((make, dict(info, costly=costly)))
        return len(self.pending) - 1

    def jump(self, target: Label, node: ast.AST | None = None) -> None:
        def make() -> Callable[[Ctx], None]:
            pc = target.pc

            def run(ctx: Ctx) -> None:
                ctx.pc = pc

            return run

        self.emit(make, False, node, source="", succ=[target])

    def finish(self) -> None:
        # Falling off the end returns None and costs nothing (LANGUAGE.md 6.4); a synchronized method leaves
        # its monitor first.
        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                ctx.ret(None)

            return run

        self.emit(make, False, None, source="", line=0, succ=[])
        nodes: list[Node] = []
        for k, (mk, info) in enumerate(self.pending):
            guard_make = info.pop("guard_make", None)
            blocked_make = info.pop("blocked_make", None)
            # Control-flow successors, for static analyses (default: the next node).
            succ = info.pop("succ", None)
            info["succ"] = (k + 1,) if succ is None else tuple(lbl.pc for lbl in succ)
            node = Node(run=mk(), **info)
            if guard_make is not None:
                node.guard = guard_make()
            if blocked_make is not None:
                node.blocked_on = blocked_make()
            nodes.append(node)
        self.code.nodes = nodes
        self.code.entry = 0

    def compile_function(self) -> None:
        fn = self.fn
        assert fn is not None
        # Locals are the parameters and every name assigned in the body that is not declared global.
        for n in ast.walk(fn):
            if isinstance(n, ast.Global):
                for name in n.names:
                    if name not in self.mc.global_slot:
                        raise self.mc.error(n, f"global '{name}' is not defined at module level")
                    self.global_names.add(name)
            elif isinstance(n, ast.Nonlocal):
                raise self.mc.error(n, "unsupported construct: nonlocal")
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) and n is not fn:
                raise self.mc.error(n, "unsupported construct: nested functions, classes and lambdas")
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in self.global_names:
                self.local(n.id)
        body = [s for s in fn.body if not _is_docstring(s)]
        if self.code.synchronized:
            self.compile_synchronized_body(fn, body)
        else:
            self.compile_block(body)
        self.finish()

    def compile_synchronized_body(self, fn: ast.FunctionDef, body: list[ast.stmt]) -> None:
        """A @synchronized method runs as ``with synchronized(self):`` around its body."""
        self_slot = 0
        src = f"{fn.name}(): enter monitor of self"

        def r(ctx: Ctx) -> Any:
            return ctx.loc[self_slot]

        self.compile_monitor_with(fn, r, body, src, "self", av=frozenset({("local", self_slot)}))

    # -- blocks -----------------------------------------------------------------------------------------------

    def compile_block(self, body: list[ast.stmt]) -> None:
        for s in body:
            self.stmt(s)

    def stmt(self, s: ast.stmt) -> None:
        m = getattr(self, "stmt_" + type(s).__name__, None)
        if m is None:
            raise self.mc.error(s, f"unsupported construct: {type(s).__name__.lower()} statement")
        m(s)

    # -- simple statements ------------------------------------------------------------------------------------

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
        action, which must set ``ctx.pc`` (or return from the frame).
        """
        outer = self.site_stack
        sites: list[CallSite] = []
        self.site_stack = [sites]
        try:
            with self.recording() as facts:
                finish = build()
        finally:
            self.site_stack = outer
        static = facts.info()
        static.update(info)
        last = {} if succ is None else {"succ": succ}
        if not sites:
            self.emit(lambda: finish, True, s, kind=kind, **static, **last)
            return
        labels = [self.label() for _ in sites]
        static["calls"] = True

        def first_make() -> Callable[[Ctx], None]:
            setup = sites[0].setup
            pc = labels[0].pc

            def run(ctx: Ctx) -> None:
                setup(ctx, pc)

            return run

        self.emit(first_make, True, s, kind=kind, **static)
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
            self.emit(cont_make, False, s, **cont_info)

    def lock_name(self, e: ast.expr) -> str | None:
        """The global a lock expression names (``m0``), or None when it is not known statically."""
        if isinstance(e, ast.Name) and self.is_global(e.id):
            return e.id
        return None

    def is_global(self, name: str) -> bool:
        if self.is_module:
            return name in self.mc.global_slot
        return name not in self.slot and name in self.mc.global_slot

    def stmt_Pass(self, s: ast.Pass) -> None:
        pass

    def stmt_Expr(self, s: ast.Expr) -> None:
        e = s.value
        if _is_docstring(s):
            return
        if isinstance(e, ast.Call):
            f = e.func
            if isinstance(f, ast.Name):
                handler = getattr(self, "call_stmt_" + f.id, None)
                if handler is not None and f.id not in self.slot:
                    handler(s, e)
                    return
                if f.id in DECLARATIONS:
                    raise self.mc.error(e, f"{f.id}(…) must be at the top level of the model")
            elif isinstance(f, ast.Attribute) and f.attr in SYNC_METHODS:
                self.sync_method_stmt(s, e, f)
                return
        self.plain_stmt(s, lambda: self.expr(e))

    def plain_stmt(self, s: ast.AST, value_builder: Callable[[], Fn], kind: str = "stmt") -> None:
        nxt = self.label()

        def build() -> Callable[[Ctx], None]:
            v = value_builder()

            def make_finish(ctx: Ctx) -> None:
                v(ctx)
                ctx.pc = nxt.pc

            return make_finish

        self.simple(s, build, kind)
        self.here(nxt)

    def stmt_Assign(self, s: ast.Assign) -> None:
        nxt = self.label()

        def build() -> Callable[[Ctx], None]:
            value = self.expr(s.value)
            stores = [self.store(t, self.value(s.value)) for t in s.targets]
            if len(stores) == 1:
                store = stores[0]

                def finish(ctx: Ctx) -> None:
                    store(ctx, value(ctx))
                    ctx.pc = nxt.pc
            else:
                def finish(ctx: Ctx) -> None:
                    v = value(ctx)
                    for st in stores:
                        st(ctx, v)
                    ctx.pc = nxt.pc

            return finish

        self.simple(s, build)
        self.here(nxt)

    def stmt_AnnAssign(self, s: ast.AnnAssign) -> None:
        if s.value is None:
            return
        self.stmt_Assign(ast.copy_location(ast.Assign(targets=[s.target], value=s.value), s))

    def stmt_AugAssign(self, s: ast.AugAssign) -> None:
        op = BINOPS.get(type(s.op))
        if op is None:
            raise self.mc.error(s, "unsupported operator (use // for integer division)")
        nxt = self.label()

        def build() -> Callable[[Ctx], None]:
            value = self.expr(s.value)
            t = s.target
            if isinstance(t, ast.Name):
                loaded = ast.copy_location(ast.Name(id=t.id, ctx=ast.Load()), t)
                load = self.expr(loaded)
                store = self.store(t, self.value(loaded) | self.value(s.value))  # `t += (r,)`

                def finish(ctx: Ctx) -> None:
                    store(ctx, op(load(ctx), value(ctx)))
                    ctx.pc = nxt.pc

                return finish
            if isinstance(t, ast.Attribute):
                obj = self.expr(t.value)
                name = t.attr
                self.facts.fields_read.add(name)
                self.facts.fields_written.add(name)
                self.facts.uses.append(self.value(t.value))
                self.flow("store", ("field", self.value(t.value), name), self.value(s.value))

                def finish(ctx: Ctx) -> None:
                    r = _check_ref(obj(ctx), f"attribute '{name}'")
                    o = ctx.heap[r.i]
                    idx = _writable_field(o, name)
                    if ctx.track:
                        ctx.reads.append((r, idx))
                    if o[idx] is UNBOUND:
                        raise ModelError(f"{o[0].name} object has no attribute '{name}' (not assigned yet)")
                    ctx.set_field(r, idx, op(unbox(o[idx]), value(ctx)))
                    ctx.pc = nxt.pc

                return finish
            if isinstance(t, ast.Subscript):
                seq = self.expr(t.value)
                index = self.expr(t.slice)
                self.facts.elements_read = self.facts.elements_written = True
                self.facts.uses.append(self.value(t.value))
                self.flow("store", ("element", self.value(t.value)), self.value(s.value))

                def finish(ctx: Ctx) -> None:
                    r = seq(ctx)
                    i = index(ctx)
                    if type(r) is not Ref:
                        raise ModelError(f"item assignment on {show(r)}")
                    o = ctx.heap[r.i]
                    idx = _index(o, i)
                    if ctx.track:
                        ctx.reads.append((r, idx))
                    ctx.set_field(r, idx, op(unbox(o[idx]), value(ctx)))
                    ctx.pc = nxt.pc

                return finish
            raise self.mc.error(t, "unsupported target of augmented assignment")

        self.simple(s, build)
        self.here(nxt)

    def stmt_Assert(self, s: ast.Assert) -> None:
        nxt = self.label()
        default = f"assertion failed: {self.mc.text(s.test)}"

        def build() -> Callable[[Ctx], None]:
            test = self.condition(s.test)
            if isinstance(s.msg, ast.Constant) and isinstance(s.msg.value, str):
                text = s.msg.value if len(s.msg.value) <= 1000 else s.msg.value[:999] + "…"
                msg: Fn | None = lambda ctx: text
            else:
                msg = self.expr(s.msg) if s.msg is not None else None

            def finish(ctx: Ctx) -> None:
                if not test(ctx):
                    m = msg(ctx) if msg is not None else None
                    raise AssertionFailed(default if m is None else f"{m} ({default})")
                ctx.pc = nxt.pc

            return finish

        self.simple(s, build, "assert")
        self.here(nxt)

    def stmt_Global(self, s: ast.Global) -> None:
        if self.is_module:
            raise self.mc.error(s, "'global' at module level")

    def stmt_Return(self, s: ast.Return) -> None:
        if self.is_module:
            raise self.mc.error(s, "'return' outside a function")
        with_exits = [e for e in self.exits if e.loop is None]
        if not with_exits:
            def build() -> Callable[[Ctx], None]:
                v = self.expr(s.value) if s.value is not None else None
                self.flow("store", ("return",), self.value(s.value))

                def finish(ctx: Ctx) -> None:
                    ctx.ret(v(ctx) if v is not None else None)

                return finish

            self.simple(s, build, "return", succ=[])
            return
        # Leave the enclosing with-blocks first: each exit costs its step, then the value is delivered.
        ret_slot = self.hidden("ret")
        chain = self.label()

        def build2() -> Callable[[Ctx], None]:
            v = self.expr(s.value) if s.value is not None else None
            self.flow("store", ("return",), self.value(s.value))

            def finish(ctx: Ctx) -> None:
                ctx.loc[ret_slot] = box(v(ctx)) if v is not None else None
                ctx.pc = chain.pc

            return finish

        self.simple(s, build2, "return")
        self.here(chain)
        saved = self.exits
        for e in reversed(saved):
            if e.loop is None:
                e.emit_exit(s)

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                v = ctx.loc[ret_slot]
                ctx.loc[ret_slot] = None
                ctx.ret(unbox(v))

            return run

        self.emit(make, False, s, source="", succ=[])

    def _loop_jump(self, s: ast.stmt, which: int) -> None:
        for i in range(len(self.exits) - 1, -1, -1):
            if self.exits[i].loop is not None:
                target = self.exits[i].loop[which]  # type: ignore[index]
                for e in reversed(self.exits[i + 1:]):
                    e.emit_exit(s)
                self.jump(target, s)
                return
        raise self.mc.error(s, f"'{'continue' if which == 0 else 'break'}' outside a loop")

    def stmt_Break(self, s: ast.Break) -> None:
        self._loop_jump(s, 1)

    def stmt_Continue(self, s: ast.Continue) -> None:
        self._loop_jump(s, 0)

    # -- compound statements ----------------------------------------------------------------------------------

    def test_stmt(self, s: ast.AST, test: ast.expr, on_false: Label, kind: str = "branch") -> None:
        """A condition step: falls through when true, jumps to ``on_false`` when false."""
        nxt = self.label()

        def build() -> Callable[[Ctx], None]:
            t = self.condition(test)

            def finish(ctx: Ctx) -> None:
                ctx.pc = nxt.pc if t(ctx) else on_false.pc

            return finish

        self.simple(test, build, kind, succ=[nxt, on_false], source=self.mc.text(test), line=test.lineno)
        self.here(nxt)

    def stmt_If(self, s: ast.If) -> None:
        c = _constant_truth(s.test)
        if c is not None:
            self.compile_block(s.body if c else s.orelse)
            return
        else_lbl, end = self.label(), self.label()
        self.test_stmt(s, s.test, else_lbl)
        self.compile_block(s.body)
        if s.orelse:
            self.jump(end)
        self.here(else_lbl)
        self.compile_block(s.orelse)
        self.here(end)

    def stmt_While(self, s: ast.While) -> None:
        if s.orelse:
            raise self.mc.error(s, "unsupported construct: while … else")
        c = _constant_truth(s.test)
        head, end = self.label(), self.label()
        self.here(head)
        if c is False:
            return
        if c is None:
            self.test_stmt(s, s.test, end, "loop")
        self.exits.append(Exit(lambda n: None, (head, end)))
        self.compile_block(s.body)
        self.exits.pop()
        self.jump(head)
        self.here(end)

    def stmt_For(self, s: ast.For) -> None:
        if s.orelse:
            raise self.mc.error(s, "unsupported construct: for … else")
        it = s.iter
        cur, stop = self.hidden("i"), self.hidden("n")
        store = None
        step_val: Fn | None = None
        is_range = _is_call_to(it, "range") and "range" not in self.slot
        with self.recording() as facts:
            if is_range:
                assert isinstance(it, ast.Call)
                if it.keywords or not 1 <= len(it.args) <= 3:
                    raise self.mc.error(it, "range() takes 1 to 3 arguments")
                args = [self.expr(a, allow_calls=False) for a in it.args]
                if len(args) == 1:
                    start, bound = (lambda ctx: 0), args[0]
                else:
                    start, bound = args[0], args[1]
                step_val = args[2] if len(args) == 3 else None
                if step_val is not None:
                    stp = self.hidden("s")
                seq = None
            else:
                seq = self.expr(it, allow_calls=False)
                start = bound = None  # type: ignore[assignment]
                self.facts.elements_read = True  # each header reads the next element of a list
                self.facts.uses.append(self.value(it))
            item = NO_VALUE if is_range else self.value(it) | frozenset({("element", self.value(it))})
            store = self.store(s.target, item)
        body, end, nxt_head, brk = self.label(), self.label(), self.label(), self.label()
        src = f"for {self.mc.text(s.target)} in {self.mc.text(it)}"

        def clear(ctx: Ctx) -> None:
            loc = ctx.loc
            loc[cur] = None
            loc[stop] = None
            if step_val is not None:
                loc[stp] = None

        if is_range:
            def first_make() -> Callable[[Ctx], None]:
                b, e = body.pc, end.pc

                def run(ctx: Ctx) -> None:
                    i, n = _range_int(start(ctx)), _range_int(bound(ctx))
                    d = _range_int(step_val(ctx)) if step_val is not None else 1
                    if d == 0:
                        raise ModelError("range() step must not be zero")
                    if (i < n) if d > 0 else (i > n):
                        loc = ctx.loc
                        loc[cur] = i + d
                        loc[stop] = n
                        if step_val is not None:
                            loc[stp] = d
                        store(ctx, i)
                        ctx.pc = b
                    else:
                        clear(ctx)
                        ctx.pc = e

                return run

            def next_make() -> Callable[[Ctx], None]:
                b, e = body.pc, end.pc

                def run(ctx: Ctx) -> None:
                    loc = ctx.loc
                    i, n = loc[cur], loc[stop]
                    d = loc[stp] if step_val is not None else 1
                    if (i < n) if d > 0 else (i > n):
                        loc[cur] = i + d
                        store(ctx, i)
                        ctx.pc = b
                    else:
                        clear(ctx)
                        ctx.pc = e

                return run
        else:
            def first_make() -> Callable[[Ctx], None]:
                b, e = body.pc, end.pc

                def run(ctx: Ctx) -> None:
                    v = seq(ctx)
                    if type(v) is Ref:
                        o = ctx.heap[v.i]
                        if not o[0].is_list:
                            raise ModelError(f"cannot iterate over a {o[0].name} object")
                    elif type(v) is not tuple:
                        raise ModelError(f"cannot iterate over {show(v)}")
                    n = _length(ctx, v)
                    if n == 0:
                        ctx.pc = e
                        return
                    ctx.loc[cur] = 1
                    ctx.loc[stop] = box(v)
                    store(ctx, _item(ctx, v, 0))
                    ctx.pc = b

                return run

            def next_make() -> Callable[[Ctx], None]:
                b, e = body.pc, end.pc

                def run(ctx: Ctx) -> None:
                    loc = ctx.loc
                    i, v = loc[cur], loc[stop]
                    if i < _length(ctx, v):
                        loc[cur] = i + 1
                        store(ctx, _item(ctx, v, i))
                        ctx.pc = b
                    else:
                        clear(ctx)
                        ctx.pc = e

                return run

        # Both headers get every fact: over-approximating the second (which only reads the hidden counters
        # and, for a list, the next element) costs reductions nothing worth a second record.
        info = facts.info()
        self.emit(first_make, True, s, kind="loop", source=src, succ=[body, end], **info)
        self.here(nxt_head)
        self.emit(next_make, True, s, kind="loop", source=src, succ=[body, brk], **info)
        self.here(body)
        self.exits.append(Exit(lambda n: None, (nxt_head, brk)))
        self.compile_block(s.body)
        self.exits.pop()
        self.jump(nxt_head)
        # `break` leaves through here, clearing the loop's hidden counters.
        self.here(brk)

        def brk_make() -> Callable[[Ctx], None]:
            e = end.pc

            def run(ctx: Ctx) -> None:
                clear(ctx)
                ctx.pc = e

            return run

        self.emit(brk_make, False, s, source="", succ=[end])
        self.here(end)

    def stmt_With(self, s: ast.With) -> None:
        items = list(s.items)
        if len(items) > 1:
            inner = ast.With(items=items[1:], body=s.body)
            ast.copy_location(inner, s)
            self.stmt_With(ast.copy_location(ast.With(items=items[:1], body=[inner]), s))
            return
        item = items[0]
        e = item.context_expr
        if item.optional_vars is not None:
            raise self.mc.error(item.optional_vars, "unsupported construct: 'with … as'")
        if _is_call_to(e, "indivisible"):
            self.compile_indivisible(s)
            return
        if _is_call_to(e, "atomic"):
            self.compile_atomic(s)
            return
        if _is_call_to(e, "synchronized"):
            assert isinstance(e, ast.Call)
            if len(e.args) != 1:
                raise self.mc.error(e, "synchronized(obj) takes one object")
            slot = self.hidden("mon")
            with self.recording() as facts:
                obj = self.expr(e.args[0], allow_calls=False)

            def r(ctx: Ctx) -> Any:
                return ctx.loc[slot]

            self.compile_monitor_with(s, r, s.body, f"with {self.mc.text(e)}:", self.mc.text(e.args[0]),
                                      init=(slot, obj), facts=facts, av=self.value(e.args[0]))
            return
        self.compile_lock_with(s, e)

    def compile_lock_with(self, s: ast.With, e: ast.expr) -> None:
        slot = self.hidden("lock")
        with self.recording() as facts:
            lock = self.expr(e, allow_calls=False)
            facts.uses.append(self.value(e))
        uses = (self.value(e),)  # the exit releases the same lock
        name = self.mc.text(e)
        nxt = self.label()

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                r = lock(ctx)
                ctx.loc[slot] = r
                sync.acquire(ctx, r)
                ctx.pc = nxt.pc

            return run

        def guard_make() -> Callable[[Ctx], bool]:
            return lambda ctx: sync.can_acquire(ctx, lock(ctx))

        def blocked_make() -> Callable[[Ctx], str]:
            return lambda ctx: f"waits to acquire {name} {sync.lock_holder_text(ctx, lock(ctx))}".strip()

        lock_name = self.lock_name(e)
        self.emit(make, True, s, kind="acquire", source=f"with {name}:", guard_make=guard_make,
                  blocked_make=blocked_make, lock_name=lock_name, **facts.info())
        self.here(nxt)

        def emit_exit(at_node: ast.AST) -> None:
            after = self.label()

            def make_exit() -> Callable[[Ctx], None]:
                def run(ctx: Ctx) -> None:
                    r = ctx.loc[slot]
                    ctx.loc[slot] = None
                    sync.release(ctx, r)
                    ctx.pc = after.pc

                return run

            self.emit(make_exit, True, at_node, kind="release", source=f"end of with {name}: release",
                      lock_name=lock_name, uses=uses,
                      line=getattr(at_node, "end_lineno", s.lineno) if at_node is s else at_node.lineno)
            self.here(after)

        self.exits.append(Exit(emit_exit))
        self.compile_block(s.body)
        self.exits.pop()
        # The exit clears the lock's slot, so that states do not remember which lock a finished block held.
        emit_exit(s)

    def compile_monitor_with(
        self,
        s: ast.AST,
        r: Fn,
        body: list[ast.stmt],
        src: str,
        name: str,
        init: tuple[int, Fn] | None = None,
        facts: Facts | None = None,
        av: AV = NO_VALUE,
    ) -> None:
        """``av``: the abstract value of the object whose monitor the block holds (static escape analysis)."""
        nxt = self.label()
        if init is not None:
            slot, obj = init

            def target(ctx: Ctx) -> Any:
                return obj(ctx)
        else:
            slot = -1
            target = r

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                o = target(ctx)
                if slot >= 0:
                    ctx.loc[slot] = o
                sync.enter(ctx, o)
                ctx.pc = nxt.pc

            return run

        def guard_make() -> Callable[[Ctx], bool]:
            return lambda ctx: sync.can_enter(ctx, target(ctx))

        def blocked_make() -> Callable[[Ctx], str]:
            def text(ctx: Ctx) -> str:
                own = sync.owner(ctx, target(ctx))
                return f"waits for the monitor of {name} (held by thread {own})"

            return text

        info = (facts or Facts()).info()
        info["uses"] = (*info["uses"], av)
        self.emit(make, True, s, kind="acquire", source=src, guard_make=guard_make, blocked_make=blocked_make,
                  **info)
        self.here(nxt)

        def emit_exit(at_node: ast.AST) -> None:
            after = self.label()

            def make_exit() -> Callable[[Ctx], None]:
                def run(ctx: Ctx) -> None:
                    o = r(ctx)
                    if slot >= 0:
                        ctx.loc[slot] = None
                    sync.exit_(ctx, o)
                    ctx.pc = after.pc

                return run

            line = getattr(at_node, "end_lineno", 0) if at_node is s else getattr(at_node, "lineno", 0)
            self.emit(make_exit, True, at_node, kind="release", source=f"leave monitor of {name}", line=line,
                      uses=(av,))
            self.here(after)

        self.exits.append(Exit(emit_exit))
        self.compile_block(body)
        self.exits.pop()
        emit_exit(s)

    def compile_indivisible(self, s: ast.With) -> None:
        body = [b for b in s.body if not isinstance(b, ast.Pass)]
        nxt = self.label()

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                ctx.atomic += 1
                ctx.pc = nxt.pc

            return run

        entry = self.emit(make, True, s, kind="indivisible", source="with indivisible():")
        self.here(nxt)

        def emit_exit(at_node: ast.AST) -> None:
            after = self.label()

            def make_exit() -> Callable[[Ctx], None]:
                def run(ctx: Ctx) -> None:
                    ctx.atomic -= 1
                    ctx.pc = after.pc

                return run

            self.emit(make_exit, False, at_node, source="")
            self.here(after)

        start = len(self.pending)
        self.exits.append(Exit(emit_exit))
        self.compile_block(body)
        self.exits.pop()
        emit_exit(s)
        # The block is enabled when its first statement is (e.g. a wait_until guarding a compare-and-swap).
        if start < len(self.pending):
            info = self.pending[start][1]
            if "guard_make" in info:
                self.pending[entry][1]["guard_make"] = info["guard_make"]
                if "blocked_make" in info:
                    self.pending[entry][1]["blocked_make"] = info["blocked_make"]
        # The nodes inside run in the entry's step; mark their static facts on the entry for reductions.
        inner = [self.pending[i][1] for i in range(start, len(self.pending))]
        ent = self.pending[entry][1]
        for key in ("reads", "writes", "fields_read", "fields_written"):
            acc: set[str] = set(ent.get(key, frozenset()))
            for inf in inner:
                acc |= inf.get(key, frozenset())
            ent[key] = frozenset(acc)
        if any(inf.get("kind", "stmt") in SYNC_KINDS for inf in inner):
            ent["kind"] = "indivisible"
        else:
            ent["kind"] = "atomic-step"
        for key in ("elements_read", "elements_written"):
            ent[key] = any(inf.get(key, False) for inf in inner)
        ent["callee_names"] = frozenset().union(*(inf.get("callee_names", frozenset()) for inf in inner))
        ent["allocates"] = any(inf.get("allocates", False) for inf in inner)
        ent["chooses"] = any(inf.get("chooses", False) for inf in inner)

    def compile_atomic(self, s: ast.With) -> None:
        """An atomicity specification costs no step. Its exit (at its end, and on every ``return``,
        ``break`` or ``continue`` that leaves it) is a step-free marker that records, in a tracked step's
        Effect, that the thread left its outermost block: one step may leave a block and enter the next
        (``while True: with atomic(): ...``), so commit-atomicity cannot tell phases from the pc alone."""
        outer = self.atomic_block
        ident = len(self.mc.atomic_blocks)
        block = AtomicBlock(ident, s.lineno, self.mc.text(s).split("\n")[0], outer)
        self.mc.atomic_blocks.append(block)
        self.atomic_block = ident
        lexically_outermost = outer < 0

        def emit_exit(at_node: ast.AST) -> None:
            after = self.label()

            def make_exit() -> Callable[[Ctx], None]:
                def run(ctx: Ctx) -> None:
                    if ctx.track and lexically_outermost and not any(
                            f[0].nodes[f[1]].atomic_block >= 0 for f in ctx.frames):
                        ctx.blocks.append(ident)
                    ctx.pc = after.pc

                return run

            self.emit(make_exit, False, at_node, source="", kind="atomic-exit")
            self.here(after)

        self.exits.append(Exit(emit_exit))
        self.compile_block(s.body)
        self.exits.pop()
        # commit() as the block's last statement: the block's last step commits (it leaves the block, which is
        # a commit anyway); the mark must not fall on the first step after the block.
        self.commit_next = False
        self.atomic_block = outer
        emit_exit(s)

    # -- statement-level builtins -----------------------------------------------------------------------------

    def call_stmt_wait_until(self, s: ast.Expr, e: ast.Call) -> None:
        if len(e.args) != 1 or e.keywords:
            raise self.mc.error(e, "wait_until(cond) takes one condition")
        with self.recording() as facts:
            cond = self.condition(e.args[0], allow_calls=False)
        nxt = self.label()
        text = self.mc.text(e.args[0])

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                # Evaluated again when executed: its reads are the step's accesses, and an error in the
                # condition (which the guard reports as "enabled") is raised here.
                if not cond(ctx):
                    raise ModelError(f"wait_until({text}) executed while false")
                ctx.pc = nxt.pc

            return run

        self.emit(make, True, s, kind="wait_until", guard_make=lambda: cond,
                  blocked_make=lambda: (lambda ctx: f"waits until {text}"), **facts.info())
        self.here(nxt)

    def call_stmt_assume(self, s: ast.Expr, e: ast.Call) -> None:
        if len(e.args) != 1 or e.keywords:
            raise self.mc.error(e, "assume(cond) takes one condition")
        nxt = self.label()

        def build() -> Callable[[Ctx], None]:
            cond = self.condition(e.args[0])

            def finish(ctx: Ctx) -> None:
                if not cond(ctx):
                    raise Pruned()
                ctx.pc = nxt.pc

            return finish

        self.simple(s, build, "assume")
        self.here(nxt)

    def call_stmt_commit(self, s: ast.Expr, e: ast.Call) -> None:
        if self.atomic_block < 0:
            raise self.mc.error(e, "commit() outside 'with atomic():'")
        self.commit_next = True
        b = self.mc.atomic_blocks[self.atomic_block]
        while True:
            b.has_commit = True
            if b.outer < 0:
                break
            b = self.mc.atomic_blocks[b.outer]

    def call_stmt_print(self, s: ast.Expr, e: ast.Call) -> None:
        # print is accepted so that models run under CPython; it costs a step and has no effect. Its
        # arguments are compiled (so that names are checked) but not evaluated.
        for a in e.args:
            if not (isinstance(a, ast.Constant) and isinstance(a.value, str)):
                self.expr(a, allow_calls=False)
        self.plain_stmt(s, lambda: (lambda ctx: None))

    def call_stmt_wait(self, s: ast.Expr, e: ast.Call) -> None:
        if len(e.args) != 1:
            raise self.mc.error(e, "wait(obj) takes one object")
        with self.recording() as facts:
            obj = self.expr(e.args[0], allow_calls=False)
            facts.uses.append(self.value(e.args[0]))
        self.compile_wait(s, obj, True, self.mc.text(e.args[0]), facts)

    def call_stmt_notify(self, s: ast.Expr, e: ast.Call) -> None:
        self._notify_stmt(s, e, False)

    def call_stmt_notify_all(self, s: ast.Expr, e: ast.Call) -> None:
        self._notify_stmt(s, e, True)

    def _notify_stmt(self, s: ast.Expr, e: ast.Call, everyone: bool) -> None:
        if len(e.args) != 1:
            raise self.mc.error(e, "notify(obj) takes one object")
        with self.recording() as facts:
            obj = self.expr(e.args[0], allow_calls=False)
            facts.uses.append(self.value(e.args[0]))
        nxt = self.label()

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                sync.notify(ctx, obj(ctx), True, everyone)
                ctx.pc = nxt.pc

            return run

        self.emit(make, True, s, kind="notify", **facts.info())
        self.here(nxt)

    def compile_wait(self, s: ast.AST, obj: Fn, monitor: bool, name: str, facts: Facts) -> None:
        """``wait`` is two steps: release and join the wait set; then, once notified, re-acquire."""
        slot, count = self.hidden("w"), self.hidden("c")
        reacq, nxt = self.label(), self.label()

        def make() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                r = obj(ctx)
                if type(r) is not Ref:
                    raise ModelError(f"wait() on {show(r)}")
                ctx.loc[count] = sync.wait(ctx, r, monitor)
                ctx.loc[slot] = r
                ctx.pc = reacq.pc

            return run

        self.emit(make, True, s, kind="wait", **facts.info())
        self.here(reacq)

        def make2() -> Callable[[Ctx], None]:
            def run(ctx: Ctx) -> None:
                loc = ctx.loc
                sync.reacquire(ctx, loc[slot], monitor, loc[count])
                loc[slot] = None
                loc[count] = None
                ctx.pc = nxt.pc

            return run

        def guard() -> Callable[[Ctx], bool]:
            return lambda ctx: sync.can_reacquire(ctx, ctx.loc[slot], monitor)

        def blocked() -> Callable[[Ctx], str]:
            def text(ctx: Ctx) -> str:
                r = ctx.loc[slot]
                o = ctx.heap[r.i]
                waiting = ctx.tid in (o[MON][2] if monitor and o[MON] else o[3] if not monitor else ())
                return f"waits for a notify on {name}" if waiting else f"waits to re-acquire the lock of {name}"

            return text

        self.emit(make2, True, s, kind="reacquire", source=f"{self.mc.text(s)}  (re-acquire)",
                  guard_make=guard, blocked_make=blocked, uses=tuple(facts.uses))
        self.here(nxt)

    def sync_method_stmt(self, s: ast.Expr, e: ast.Call, f: ast.Attribute) -> None:
        """``x.acquire()`` and friends: a synchronisation step when ``x`` is a lock, condition or thread;
        a plain method call when ``x`` is a model object that defines the method."""
        method = f.attr
        if e.keywords or (e.args and method not in ("start", "join")) or (e.args and method == "start"):
            raise self.mc.error(e, f"{method}() with arguments is not supported in models")
        if method == "join" and e.args:
            raise self.mc.error(e, "join() with a timeout is not supported in models")
        with self.recording() as facts:
            recv = self.expr(f.value, allow_calls=False)
        # The receiver may be a model object whose class defines the method: then it is a plain call.
        facts.callees.add("." + method)
        rv = self.value(f.value)
        facts.uses.append(rv)
        facts.flows.append(("method_call", rv, method, ()))
        if method == "start":
            facts.flows.append(("start", rv))
        name = self.mc.text(f.value)
        user_call_site = self.label()
        nxt = self.label()
        # A model object whose class defines the method gets a normal call instead.
        user_setup = self.method_call_setup(recv, method, [], e)

        if method == "wait":
            self.compile_wait(s, recv, False, name, facts)  # c.wait() on a Condition
            return

        op: Callable[[Ctx, Any], None]
        guard: Callable[[Ctx, Any], bool] | None = None
        blocked: Callable[[Ctx, Any], str] | None = None
        kind = method
        if method == "acquire":
            op, guard = sync.acquire, sync.can_acquire

            def blocked(ctx: Ctx, r: Any) -> str:
                return f"waits to acquire {name} {sync.lock_holder_text(ctx, r)}".strip()
        elif method == "release":
            op = sync.release
        elif method in ("notify", "notify_all", "notifyAll"):
            everyone = method != "notify"
            kind = "notify"

            def op(ctx: Ctx, r: Any, everyone: bool = everyone) -> None:
                sync.notify(ctx, r, False, everyone)
        elif method == "start":
            op = _start_thread
        else:  # join
            op, guard = _join_op, _join_guard

            def blocked(ctx: Ctx, r: Any) -> str:
                return f"waits for thread {ctx.heap[r.i][2]} ({name}) to finish"

        def is_user(ctx: Ctx, r: Any) -> bool:
            return type(r) is Ref and ctx.heap[r.i][0].lookup(method) is not None

        def make() -> Callable[[Ctx], None]:
            after = nxt.pc
            ret = user_call_site.pc

            def run(ctx: Ctx) -> None:
                r = recv(ctx)
                if is_user(ctx, r):
                    user_setup(ctx, ret)
                    return
                op(ctx, r)
                ctx.pc = after

            return run

        info: dict[str, Any] = {}
        if guard is not None:
            g = guard

            def guard_make() -> Callable[[Ctx], bool]:
                def run(ctx: Ctx) -> bool:
                    r = recv(ctx)
                    return is_user(ctx, r) or g(ctx, r)

                return run

            info["guard_make"] = guard_make
        if blocked is not None:
            b = blocked
            info["blocked_make"] = lambda: (lambda ctx: b(ctx, recv(ctx)))
        self.emit(make, True, s, kind=kind, lock_name=self.lock_name(f.value), succ=[nxt, user_call_site], **info,
                  **facts.info())
        self.here(user_call_site)
        self.jump(nxt, s)
        self.here(nxt)

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

    def condition(self, e: ast.expr, allow_calls: bool = True) -> Fn:
        """``e`` compiled for its truth (``if``, ``while``, ``assert``, ``not``…), as Python tests it."""
        f = self.expr(e, allow_calls)
        if isinstance(e, ast.Compare) or (isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not)):
            return f  # already a bool

        def truth(ctx: Ctx) -> bool:
            v = f(ctx)
            return _truth(ctx, v) if type(v) is Ref else bool(v)

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
                                                 is not None)
        return isinstance(f, ast.Attribute)

    def e_Constant(self, e: ast.Constant) -> Fn:
        v = e.value
        if not isinstance(v, (int, bool, type(None))):
            if isinstance(v, str):
                raise self.mc.error(e, "strings are only allowed as assertion messages")
            raise self.mc.error(e, f"unsupported value {v!r}: values are ints, bools, None and tuples")
        return lambda ctx: v

    def e_Name(self, e: ast.Name) -> Fn:
        name = e.id
        if name in self.slot and name not in self.global_names:
            i = self.slot[name]
            self.note(e, frozenset({("local", i)}))

            def read_local(ctx: Ctx) -> Any:
                v = ctx.loc[i]
                if type(v) in _BOXED:
                    if v is UNBOUND:
                        raise ModelError(f"local variable '{name}' referenced before assignment")
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
                return unbox(v) if type(v) in _BOXED else v

            return read
        if name in self.mc.funcs:
            raise self.mc.error(e, f"'{name}' is a function: functions are not values in models; call it, or "
                                f"start it with Thread(target={name})")
        if name in self.mc.classes:
            raise self.mc.error(e, f"'{name}' is a class: classes are not values in models; call it to create "
                                "an object")
        if name in ("True", "False", "None"):
            v = {"True": True, "False": False, "None": None}[name]
            return lambda ctx: v
        if name in FORBIDDEN:
            raise self.mc.error(e, f"'{name}' is not allowed: a model is parsed, never executed")
        raise self.mc.error(e, f"name '{name}' is not defined")

    def e_Tuple(self, e: ast.Tuple) -> Fn:
        parts = [self._expr(x) for x in e.elts]
        if any(isinstance(x, ast.Starred) for x in e.elts):
            raise self.mc.error(e, "unsupported construct: starred expression")
        self.note(e, *(self.value(x) for x in e.elts))
        return lambda ctx: tuple(p(ctx) for p in parts)

    def list_class(self, e: ast.AST) -> ClassInfo:
        """The list class of this allocation site."""
        return ClassInfo("list", builtin="list", is_list=True, line=getattr(e, "lineno", 0))

    def e_List(self, e: ast.List) -> Fn:
        parts = [self._expr(x) for x in e.elts]
        cls = self.list_class(e)
        self.facts.allocates = True
        self.note(e, self.new_site(e, "list"))
        self.flow("store", ("element", self.value(e)), NO_VALUE.union(*(self.value(x) for x in e.elts)))

        def run(ctx: Ctx) -> Ref:
            return ctx.alloc((cls, None, *(p(ctx) for p in parts)))

        return run

    def e_BinOp(self, e: ast.BinOp) -> Fn:
        if isinstance(e.op, ast.Mult) and isinstance(e.left, ast.List):
            if len(e.left.elts) != 1:
                raise self.mc.error(e, "only [value] * n creates an array")
            item, count = self._expr(e.left.elts[0]), self._expr(e.right)
            cls = self.list_class(e)
            self.facts.allocates = True
            self.note(e, self.new_site(e, "list"))
            self.flow("store", ("element", self.value(e)), self.value(e.left.elts[0]))

            def alloc(ctx: Ctx) -> Ref:
                n = count(ctx)
                if not _int_like(n) or n < 0:
                    raise ModelError(f"array length must be a non-negative int, got {show(n)}")
                if n > MAX_SEQUENCE:
                    raise _too_big(f"array of {show(n)} elements")
                return ctx.alloc((cls, None, *((item(ctx),) * n)))

            return alloc
        op = BINOPS.get(type(e.op))
        if op is None:
            raise self.mc.error(e, "unsupported operator (values are ints: use // for division)")
        a, b = self._expr(e.left), self._expr(e.right)
        self.note(e, self.value(e.left), self.value(e.right))  # tuple + tuple, tuple * n
        if isinstance(e.op, ast.Add):
            def add(ctx: Ctx) -> Any:
                v = a(ctx) + b(ctx)
                if type(v) is tuple and len(v) > MAX_SEQUENCE:
                    raise _too_big("tuple too long")
                return v

            return add
        if isinstance(e.op, ast.Sub):
            return lambda ctx: a(ctx) - b(ctx)
        if isinstance(e.op, ast.Mod):
            return lambda ctx: a(ctx) % b(ctx)
        return lambda ctx: op(a(ctx), b(ctx))

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
        self.note(e, *(self.value(x) for x in e.values))  # `a or b` is one of its operands
        if isinstance(e.op, ast.And):
            def run(ctx: Ctx) -> Any:
                v: Any = True
                for p in parts:
                    v = p(ctx)
                    if not (_truth(ctx, v) if type(v) is Ref else v):
                        return v
                return v
        else:
            def run(ctx: Ctx) -> Any:
                v: Any = False
                for p in parts:
                    v = p(ctx)
                    if _truth(ctx, v) if type(v) is Ref else v:
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
        ops: list[Callable[[Any, Any], bool]] = []
        for o in e.ops:
            if isinstance(o, (ast.In, ast.NotIn)):
                self.facts.elements_read = True  # `v in a` reads every element of a list
                self.facts.uses.append(self.value(e.comparators[len(ops)]))
                neg = isinstance(o, ast.NotIn)
                ops.append(_make_in(neg))
            else:
                ops.append(CMPOPS[type(o)])
        needs_ctx = any(isinstance(o, (ast.In, ast.NotIn)) for o in e.ops)
        if len(ops) == 1 and not needs_ctx:
            op, r = ops[0], rights[0]
            if isinstance(e.ops[0], ast.Eq):
                return lambda ctx: left(ctx) == r(ctx)
            if isinstance(e.ops[0], ast.Lt):
                return lambda ctx: left(ctx) < r(ctx)
            return lambda ctx: op(left(ctx), r(ctx))

        def run(ctx: Ctx) -> bool:
            a = left(ctx)
            for op, r in zip(ops, rights, strict=True):
                b = r(ctx)
                if op in _IN_OPS:
                    b = _as_tuple(ctx, b)
                if not op(a, b):
                    return False
                a = b
            return True

        return run

    def e_Subscript(self, e: ast.Subscript) -> Fn:
        if isinstance(e.slice, ast.Slice):
            raise self.mc.error(e, "unsupported construct: slices")
        seq, index = self._expr(e.value), self._expr(e.slice)
        self.facts.elements_read = True
        sv = self.value(e.value)
        self.facts.uses.append(sv)
        self.note(e, sv, frozenset({("element", sv)}))  # a list's element, or a tuple's item

        def run(ctx: Ctx) -> Any:
            v = seq(ctx)
            i = index(ctx)
            if type(v) is Ref:
                o = ctx.heap[v.i]
                if not o[0].is_list:
                    raise ModelError(f"a {o[0].name} object is not subscriptable")
                idx = _index(o, i)
                if ctx.track:
                    ctx.reads.append((v, idx))
                x = o[idx]
                return unbox(x) if type(x) in _BOXED else x
            if type(v) is tuple:
                if type(i) is not int or not -len(v) <= i < len(v):
                    raise ModelError(f"tuple index {show(i)} out of range")
                return v[i]
            raise ModelError(f"{show(v)} is not subscriptable")

        return run

    def e_Attribute(self, e: ast.Attribute) -> Fn:
        obj = self._expr(e.value)
        name = e.attr
        self.facts.fields_read.add(name)
        self.facts.uses.append(self.value(e.value))
        self.note(e, frozenset({("field", self.value(e.value), name)}))

        def run(ctx: Ctx) -> Any:
            r = obj(ctx)
            if type(r) is not Ref:
                raise ModelError(f"attribute '{name}' of {show(r)}")
            o = ctx.heap[r.i]
            idx = o[0].field_index.get(name)
            if idx is None:
                if name == "owner":
                    if ctx.track:
                        ctx.reads.append((r, MON))  # the monitor (or a condition's lock): lock state
                    return sync.owner(ctx, r)
                raise ModelError(f"{o[0].name} object has no field '{name}'")
            if ctx.track:
                ctx.reads.append((r, idx))
            x = o[idx]
            if type(x) in _BOXED:
                if x is UNBOUND:
                    raise ModelError(f"{o[0].name} object has no attribute '{name}' (not assigned yet)")
                return unbox(x)
            return x

        return run

    def e_Call(self, e: ast.Call) -> Fn:
        f = e.func
        if isinstance(f, ast.Name):
            name = f.id
            if name in FORBIDDEN:
                raise self.mc.error(e, f"'{name}' is not allowed: a model is parsed, never executed")
            if name in self.mc.functions and name not in self.slot:
                code = self.mc.functions[name]
                self.facts.callees.add(name)
                args = self.call_args(e)
                self.check_arity(e, code, len(e.args))
                self.flow("call", code, tuple(self.value(a) for a in e.args))
                self.note(e, frozenset({("return", code)}))
                return self.site(lambda ctx, ret_pc: ctx.push(code, [a(ctx) for a in args], ret_pc), e)
            if name in self.mc.classes:
                return self.constructor(e, self.mc.classes[name])
            builder = getattr(self, "b_" + name, None)
            if builder is not None and name not in self.slot:
                return builder(e)
            if name in self.slot or name in self.mc.global_slot:
                raise self.mc.error(e, f"'{name}' is not a function: calling function values is not supported")
            if name in DECLARATIONS:
                raise self.mc.error(e, f"{name}(…) must be a statement at the top level of the model")
            raise self.mc.error(e, f"unknown function '{name}'")
        if isinstance(f, ast.Attribute):
            if isinstance(f.value, ast.Call) and _is_call_to(f.value, "super"):
                return self.super_call(e, f)
            if f.attr in SYNC_METHODS:
                raise self.mc.error(e, f"{f.attr}() must be a statement of its own")
            recv = self._expr(f.value)
            args = self.call_args(e)
            self.facts.callees.add("." + f.attr)
            rv = self.value(f.value)
            self.flow("method_call", rv, f.attr, tuple(self.value(a) for a in e.args))
            self.note(e, frozenset({("method_return", rv, f.attr)}))
            return self.site(self.method_call_setup(recv, f.attr, args, e), e)
        raise self.mc.error(e, "unsupported call")

    def check_arity(self, e: ast.AST, code: Code, n: int) -> None:
        if n != len(code.params):
            raise self.mc.error(e, f"{code.name}() takes {len(code.params)} arguments, {n} given")

    def call_args(self, e: ast.Call) -> list[Fn]:
        if e.keywords:
            raise self.mc.error(e, "keyword arguments are not supported for model functions")
        if any(isinstance(a, ast.Starred) for a in e.args):
            raise self.mc.error(e, "unsupported construct: *args")
        return [self._expr(a) for a in e.args]

    def site(self, setup: Callable[[Ctx, int], None], e: ast.AST, temp: int | None = None) -> Fn:
        """Register a hoisted call; the returned closure reads (and clears) its result."""
        if self.site_stack is None:
            raise self.mc.error(e, "calls of model functions are not supported here; assign to a variable first")
        t = self.hidden("t") if temp is None else temp
        self.site_stack[0].append(CallSite(t, setup))

        def read(ctx: Ctx) -> Any:
            loc = ctx.loc
            v = loc[t]
            loc[t] = None
            return unbox(v)

        return read

    def method_call_setup(self, recv: Fn, method: str, args: list[Fn], e: ast.AST) -> Callable[[Ctx, int], None]:
        def setup(ctx: Ctx, ret_pc: int) -> None:
            r = recv(ctx)
            if type(r) is not Ref:
                raise ModelError(f"method '{method}' called on {show(r)}")
            cls = ctx.heap[r.i][0]
            code = cls.lookup(method)
            if code is None:
                raise ModelError(f"{cls.name} object has no method '{method}'")
            if len(code.params) != len(args) + 1:
                raise ModelError(f"{code.name}() takes {len(code.params) - 1} arguments, {len(args)} given")
            ctx.push(code, [r, *(a(ctx) for a in args)], ret_pc)

        return setup

    def super_call(self, e: ast.Call, f: ast.Attribute) -> Fn:
        if self.cls is None:
            raise self.mc.error(e, "super() outside a method")
        base = self.cls.base
        args = self.call_args(e)
        self_slot = 0
        if base is None or base is THREAD:
            if f.attr == "__init__":
                if args:
                    raise self.mc.error(e, "Thread.__init__ arguments are not supported; define run()")
                return lambda ctx: None
            raise self.mc.error(e, f"base class has no method '{f.attr}'")
        code = base.lookup(f.attr)
        if code is None:
            raise self.mc.error(e, f"base class '{base.name}' has no method '{f.attr}'")
        self.facts.callees.add("." + f.attr)
        self.check_arity(e, code, len(args) + 1)
        self.flow("call", code, (frozenset({("local", self_slot)}), *(self.value(a) for a in e.args)))
        self.note(e, frozenset({("return", code)}))
        return self.site(lambda ctx, ret_pc: ctx.push(code, [ctx.loc[self_slot], *(a(ctx) for a in args)],
                                                      ret_pc), e)

    def constructor(self, e: ast.Call, cls: ClassInfo) -> Fn:
        args = self.call_args(e)
        init = cls.lookup("__init__")
        self.facts.allocates = True
        self.facts.callees.add(cls.name + ".__init__")
        self.note(e, self.new_site(e, cls.name))
        if init is not None:
            self.flow("call", init, (self.value(e), *(self.value(a) for a in e.args)))
        if init is None:
            if args:
                raise self.mc.error(e, f"{cls.name}() takes no arguments (it has no __init__)")
            return lambda ctx: ctx.alloc(new_object(cls))
        self.check_arity(e, init, len(args) + 1)
        temp = self.hidden("t")

        def setup(ctx: Ctx, ret_pc: int) -> None:
            vals = [a(ctx) for a in args]
            r = ctx.alloc(new_object(cls))
            ctx.loc[temp] = r
            ctx.push(init, [r, *vals], ret_pc)

        # The constructor's value is the new object, stored before the call; the continuation ignores retval.
        read = self.site(setup, e, temp=temp)
        self.site_stack[0][-1].temp = -1  # type: ignore[index]
        return read

    # builtins -----------------------------------------------------------------------------------------------

    def _args(self, e: ast.Call, lo: int, hi: int, name: str) -> list[Fn]:
        if e.keywords or not lo <= len(e.args) <= hi:
            raise self.mc.error(e, f"{name}() takes {lo}{'' if lo == hi else f' to {hi}'} arguments")
        return [self._expr(a) for a in e.args]

    def b_len(self, e: ast.Call) -> Fn:
        (a,) = self._args(e, 1, 1, "len")
        return lambda ctx: _length(ctx, a(ctx))

    def b_abs(self, e: ast.Call) -> Fn:
        (a,) = self._args(e, 1, 1, "abs")
        return lambda ctx: abs(a(ctx))

    def b_int(self, e: ast.Call) -> Fn:
        (a,) = self._args(e, 1, 1, "int")
        return lambda ctx: int(a(ctx))

    def b_bool(self, e: ast.Call) -> Fn:
        (a,) = self._args(e, 1, 1, "bool")
        return lambda ctx: _truth(ctx, a(ctx))

    def b_min(self, e: ast.Call) -> Fn:
        return self._extremum(e, "min", min)

    def b_max(self, e: ast.Call) -> Fn:
        return self._extremum(e, "max", max)

    def _extremum(self, e: ast.Call, name: str, pick: Callable[[Any], Any]) -> Fn:
        """``min(a, b, …)``, or, as in Python, ``min(seq)`` of a list's or tuple's elements."""
        parts = self._args(e, 1, 8, name)
        self.note(e, *(self.value(a) for a in e.args))
        if len(parts) > 1:
            return lambda ctx: pick([p(ctx) for p in parts])
        (seq,) = parts
        self.facts.elements_read = True
        self.facts.uses.append(self.value(e.args[0]))
        self.note(e, self.value(e.args[0]), frozenset({("element", self.value(e.args[0]))}))

        def run(ctx: Ctx) -> Any:
            items = _as_tuple(ctx, seq(ctx))
            if type(items) is not tuple:
                raise ModelError(f"{name}() of {show(items)}: one argument must be a list or a tuple")
            if not items:
                raise ModelError(f"{name}() of an empty sequence")
            return pick(items)

        return run

    def b_tid(self, e: ast.Call) -> Fn:
        self._args(e, 0, 0, "tid")
        return lambda ctx: ctx.tid if ctx.tid >= 0 else None

    def b_choose(self, e: ast.Call) -> Fn:
        self.facts.chooses = True
        if len(e.args) == 1 and _is_call_to(e.args[0], "range"):
            r = e.args[0]
            assert isinstance(r, ast.Call)
            bounds = self._args(r, 1, 2, "range")
            if len(bounds) == 1:
                hi = bounds[0]
                return lambda ctx: ctx.choose(_count(hi(ctx)))
            lo, hi = bounds

            def run(ctx: Ctx) -> int:
                a = lo(ctx)
                return a + ctx.choose(_count(hi(ctx) - a))

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
            items = _as_tuple(ctx, seq(ctx))
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
        parts = self._args(e, 0, 1, "Semaphore")
        self.facts.allocates = True
        self.note(e, self.new_site(e, "Semaphore"))
        if not parts:
            return sync.new_semaphore
        v = parts[0]
        return lambda ctx: sync.new_semaphore(ctx, v(ctx))

    def b_Condition(self, e: ast.Call) -> Fn:
        parts = self._args(e, 0, 1, "Condition")
        self.facts.allocates = True
        self.note(e, self.new_site(e, "Condition"))
        # Its lock is its field "lock" (a fresh RLock when none is given); wait/notify/acquire reach it.
        lock_av = self.value(e.args[0]) if e.args else self.new_site(e, "RLock")
        self.flow("store", ("field", self.value(e), "lock"), lock_av)
        if not parts:
            return sync.new_condition
        lock = parts[0]
        return lambda ctx: sync.new_condition(ctx, lock(ctx))

    def b_Thread(self, e: ast.Call) -> Fn:
        target: Fn | None = None
        args: Fn = lambda ctx: ()
        if e.args:
            raise self.mc.error(e, "use Thread(target=f, args=(…))")
        for k in e.keywords:
            if k.arg == "target":
                if not (isinstance(k.value, ast.Name) and k.value.id in self.mc.functions
                        and k.value.id not in self.slot):
                    raise self.mc.error(k.value, "Thread target must be the name of a model function")
                func = self.mc.funcs[k.value.id]
                target = lambda ctx, func=func: func  # noqa: E731
            elif k.arg == "args":
                args = self._expr(k.value)
            elif k.arg in ("daemon", "name"):
                continue
            else:
                raise self.mc.error(k, f"unsupported Thread argument '{k.arg}'")
        if target is None:
            raise self.mc.error(e, "Thread(target=f, args=(…)) needs a target")
        t = target
        self.facts.allocates = True
        self.note(e, self.new_site(e, "Thread"))
        args_av = NO_VALUE.union(*(self.value(k.value) for k in e.keywords if k.arg == "args"))
        self.flow("store", ("field", self.value(e), "_args"), args_av)
        self.flow("thread", self.value(e), func.code, args_av)

        def run(ctx: Ctx) -> Ref:
            a = args(ctx)
            if type(a) is not tuple:
                raise ModelError("Thread args must be a tuple")
            return ctx.alloc((THREAD, None, None, t(ctx), a))

        return run

    def b_range(self, e: ast.Call) -> Fn:
        raise self.mc.error(e, "range() is only supported in 'for … in range(…)' and choose(range(…))")

    def b_super(self, e: ast.Call) -> Fn:
        raise self.mc.error(e, "super() is only supported as super().method(…)")

    def b_wait_until(self, e: ast.Call) -> Fn:
        raise self.mc.error(e, "wait_until(…) must be a statement of its own")

    def b_assume(self, e: ast.Call) -> Fn:
        raise self.mc.error(e, "assume(…) must be a statement of its own")

    # -- assignment targets -----------------------------------------------------------------------------------

    def store(self, t: ast.expr, value: AV = NO_VALUE) -> Callable[[Ctx, Any], None]:
        """The store into target ``t``; ``value`` is the abstract value stored (for the facts' flows)."""
        if isinstance(t, ast.Name):
            name = t.id
            if name in self.slot and name not in self.global_names and not self.is_module:
                i = self.slot[name]
                self.flow("store", ("local", i), value)

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
        if isinstance(t, ast.Attribute):
            obj = self._expr(t.value)
            name = t.attr
            self.facts.fields_written.add(name)
            self.facts.uses.append(self.value(t.value))
            self.flow("store", ("field", self.value(t.value), name), value)

            def store_field(ctx: Ctx, v: Any) -> None:
                r = _check_ref(obj(ctx), f"attribute '{name}'")
                ctx.set_field(r, _writable_field(ctx.heap[r.i], name), v)

            return store_field
        if isinstance(t, ast.Subscript):
            if isinstance(t.slice, ast.Slice):
                raise self.mc.error(t, "unsupported construct: slices")
            seq, index = self._expr(t.value), self._expr(t.slice)
            self.facts.elements_written = True
            self.facts.uses.append(self.value(t.value))
            self.flow("store", ("element", self.value(t.value)), value)

            def store_item(ctx: Ctx, v: Any) -> None:
                r = seq(ctx)
                if type(r) is not Ref:
                    raise ModelError(f"item assignment on {show(r)}")
                o = ctx.heap[r.i]
                if not o[0].is_list:
                    raise ModelError(f"item assignment on a {o[0].name} object")
                ctx.set_field(r, _index(o, index(ctx)), v)

            return store_item
        if isinstance(t, (ast.Tuple, ast.List)):
            # Unpacking a tuple gives its items, a list its elements (and reads them all).
            self.facts.uses.append(value)
            parts = [self.store(x, value | frozenset({("element", value)})) for x in t.elts]
            n = len(parts)
            self.facts.elements_read = True  # unpacking a list reads every element

            def store_tuple(ctx: Ctx, v: Any) -> None:
                if type(v) is Ref and ctx.heap[v.i][0].is_list:
                    v = _list_items(ctx, v)
                if type(v) is not tuple or len(v) != n:
                    raise ModelError(f"cannot unpack {show(v)} into {n} values")
                for p, x in zip(parts, v, strict=True):
                    p(ctx, x)

            return store_tuple
        raise self.mc.error(t, "unsupported assignment target")


_IN_OPS: set[Any] = set()


def _make_in(neg: bool) -> Callable[[Any, Any], bool]:
    def op(a: Any, b: Any) -> bool:
        if type(b) is not tuple:
            raise ModelError(f"'in' needs a tuple or a list, got {show(b)}")
        return (a not in b) if neg else (a in b)

    _IN_OPS.add(op)
    return op


# The types of state values that a load must unbox (see ``program.Bool``).
_BOXED = frozenset({Bool, tuple, Unbound})


def _list_items(ctx: Ctx, r: Ref) -> tuple:
    """Every element of a list, read at once (``v in a``, ``x, y = a``): each element is an access."""
    o = ctx.heap[r.i]
    if ctx.track:
        ctx.reads.extend((r, k) for k in range(2, len(o)))
    return tuple([unbox(x) for x in o[2:]])


def _as_tuple(ctx: Ctx, v: Any) -> Any:
    if type(v) is Ref:
        o = ctx.heap[v.i]
        if o[0].is_list:
            return _list_items(ctx, v)
    return v


def _item(ctx: Ctx, v: Any, i: int) -> Any:
    if type(v) is tuple:
        return unbox(v[i])
    if ctx.track:
        ctx.reads.append((v, i + 2))
    return unbox(ctx.heap[v.i][i + 2])


def _range_int(v: Any) -> int:
    # range() takes ints (a bool counts as one, as in Python) and yields ints.
    if type(v) is int:
        return v
    if type(v) is bool:
        return int(v)
    raise ModelError(f"range() needs ints, got {show(v)}")


def _count(n: Any) -> int:
    if type(n) is not int:
        raise ModelError(f"choose(range(n)) needs an int, got {show(n)}")
    return n


def _start_thread(ctx: Ctx, r: Any) -> None:
    if type(r) is not Ref:
        raise ModelError(f"start() on {show(r)}")
    o = ctx.heap[r.i]
    cls = o[0]
    if not cls.is_thread:
        raise ModelError(f"start() on a {cls.name} object, which is not a Thread")
    if o[2] is not None:
        raise ModelError("a thread can be started only once")
    if ctx.new_threads is None:
        ctx.new_threads = []
    tid = len(ctx.threads) + len(ctx.new_threads)
    if cls is THREAD:
        target, args = o[3], o[4]
        code = target.code
        if len(code.params) != len(args):
            raise ModelError(f"thread target {code.name}() takes {len(code.params)} arguments, {len(args)} given")
        frame_locals = code.new_frame_locals(list(args))
    else:
        code = cls.lookup("run")
        if code is None:
            raise ModelError(f"{cls.name} has no run() method")
        frame_locals = code.new_frame_locals([r])
    ctx.set_field(r, 2, tid)
    ctx.new_threads.append(((code, code.entry, *frame_locals),))
    if ctx.track:
        ctx.started.append(tid)
    ctx.dirty = True


def _thread_id(ctx: Ctx, r: Any) -> int:
    if type(r) is not Ref or not ctx.heap[r.i][0].is_thread:
        raise ModelError(f"join() on {show(r)}, which is not a Thread")
    t = ctx.heap[r.i][2]
    if t is None:
        raise ModelError("join() on a thread that was not started")
    return t


def _join_guard(ctx: Ctx, r: Any) -> bool:
    if type(r) is not Ref or not ctx.heap[r.i][0].is_thread or ctx.heap[r.i][2] is None:
        return True  # the operation reports the error
    t = ctx.heap[r.i][2]
    threads = ctx.threads
    return t < len(threads) and threads[t] == ()


def _join_op(ctx: Ctx, r: Any) -> None:
    _thread_id(ctx, r)
    if ctx.track:
        ctx.reads.append((r, 2))  # the thread object's id: an access to it, for the reductions


def compile_model(source: str, filename: str = "<model>") -> Program:
    """Parse and compile a model's source text. Raises ModelSyntaxError with file:line:col."""
    return ModuleCompiler(source, filename).compile()


__all__ = ["compile_model", "ModelSyntaxError", "SEMAPHORE", "RLOCK", "LOCK", "CONDITION"]
