"""The standard library's classes that movers models as model source, and the loader that compiles them into a
model that uses them.

Java PathFinder runs model classes in place of the JDK's; movers does the same for the parts of the standard
library a threading program uses: ``queue.Queue``, ``LifoQueue`` and ``SimpleQueue`` are written once, close
to CPython's own code, as ordinary model source (``queue_model.py``). A model that names one of them (after
``lang/imports.py`` resolved its imports, ``queue.Queue`` is the name ``queue.Queue``) gets that file's class,
and the classes it derives from, added to its module before compilation. They are then compiled as the
model's own classes are, so every step they take and every access they make is seen by every reduction.

Names. A library class is named by its dotted name (``queue.Queue``), which no class or variable of a model can
have, so a model may define a ``Queue`` of its own; it is also CPython's name for it (``repr`` shows
``<queue.Queue object at ...>``), and its methods are ``queue.Queue.put``. The built-in names the library
code uses (``Lock``, ``Condition``, ``len``, ``Empty``...) must mean the built-ins: a model that defines one of
them at its top level is refused, as it would change what the library does.

Lines. The library's lines are numbered after the model's own (``Library.offset``): no node of the library
has a line of the user's file, and the compiler's source text for the library's nodes is the library's
(``ModuleCompiler.text``). Each node of a library method records the method (``Node.library``): reports show
such a step at the line of the user's call, labelled ``(in queue.Queue.put)`` (``Program.call_line``).
"""

from __future__ import annotations

import ast
import functools
import pickle
from dataclasses import dataclass, field
from pathlib import Path

from movers.lang.errors import ModelSyntaxError, at
from movers.lang.imports import resolve_imports
from movers.lang.library.loops import library_loops
from movers.lang.syntax import walked
from movers.lang.timeouts import VALUE_METHODS, constant

HERE = Path(__file__).resolve().parent

# Each model source file here, and the module whose names it defines. Every top-level class and function of
# the file is named in a model by its dotted name (``concurrent.futures._WorkItem``), so none clashes with a
# name of the model.
FILES: dict[str, str] = {"queue_model.py": "queue", "futures_model.py": "concurrent.futures"}
# The names a model may use (``lang/imports.MODULES`` resolves them to these): their file and their name there.
CLASSES: dict[str, tuple[str, str]] = {
    "queue.Queue": ("queue_model.py", "Queue"),
    "queue.LifoQueue": ("queue_model.py", "LifoQueue"),
    "queue.SimpleQueue": ("queue_model.py", "SimpleQueue"),
    "concurrent.futures.ThreadPoolExecutor": ("futures_model.py", "ThreadPoolExecutor"),
    "concurrent.futures.Future": ("futures_model.py", "Future"),
    "concurrent.futures.as_completed": ("futures_model.py", "as_completed"),
    "concurrent.futures.CancelledError": ("futures_model.py", "CancelledError"),
    "concurrent.futures.InvalidStateError": ("futures_model.py", "InvalidStateError"),
}
# The methods of the library whose ``timeout`` may be given as a float constant (``_float_timeouts``), and the
# position of the timeout among their positional arguments where no other type has a method of that name
# (``d.get(k, 0.5)`` is a dict's default).
TIMEOUT_POSITION: dict[str, int | None] = {"get": None, "put": 2, "result": 0, "exception": 0}


@dataclass
class Library:
    """What the loader added to a model: the library source text that follows the model's own lines (for
    ``ModuleCompiler.text``), where each file begins (its first line number in the model, its path), and the
    classes added (their names in the model)."""

    offset: int = 0
    text: str = ""
    files: list[tuple[int, str]] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)

    @staticmethod
    def local_name(name: str) -> str:
        """A library definition's name in its file (``Queue`` for ``queue.Queue``), as CPython's messages name it."""
        return name.rsplit(".", 1)[1]

    def where(self, line: int) -> tuple[str, int] | None:
        """The library file and its line for a line of the compiled model, or None for the user's lines."""
        for start, path in reversed(self.files):
            if line > start:
                return path, line - start
        return None


@functools.cache
def _source(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def _used(tree: ast.Module, nodes: list[ast.AST] | None = None) -> set[str]:
    return {n.id for n in (walked(tree) if nodes is None else nodes) if isinstance(n, ast.Name) and n.id in CLASSES}


Definition = ast.ClassDef | ast.FunctionDef


def _definitions(name: str, offset: int) -> list[Definition]:
    """The top-level classes and functions of library file ``name``, each renamed (with every use of it) to its
    dotted name in a model, their lines after ``offset``: new trees, which the model's compilation may change,
    unpickled from the file's trees as ``_parsed`` makes them (parsing and resolving them is most of the cost)."""
    defs: list[Definition] = pickle.loads(_pickled(name))
    if offset:
        for d in defs:
            ast.increment_lineno(d, offset)
    return defs


@functools.cache
def _pickled(name: str) -> bytes:
    return pickle.dumps(_parsed(name, 0))


@functools.cache
def _pristine(name: str) -> tuple[Definition, ...]:
    """The definitions of library file ``name`` at offset 0, for reading only (what they name and use)."""
    return tuple(_parsed(name, 0))


def _parsed(name: str, offset: int) -> list[Definition]:
    """``_definitions`` made from the file's text."""
    path = str(HERE / name)
    tree = resolve_imports(ast.parse(_source(name), path), path)
    module = FILES[name]
    own = [s for s in tree.body if isinstance(s, (ast.ClassDef, ast.FunctionDef))]
    rename = {s.name: f"{module}.{s.name}" for s in own}
    for s in own:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and n.id in rename:
                n.id = rename[n.id]
        s.name = rename[s.name]
        ast.increment_lineno(s, offset)
    return own


def _references(d: Definition, defs: dict[str, Definition]) -> list[str]:
    """The library definitions ``d`` names (its bases first), in source order."""
    out: list[str] = []
    if isinstance(d, ast.ClassDef):
        out += [b.id for b in d.bases if isinstance(b, ast.Name) and b.id in defs]
    out += [n.id for n in ast.walk(d) if isinstance(n, ast.Name) and n.id in defs and n.id != d.name]
    return out


def _file_of(name: str) -> str:
    """The library file that defines ``name`` (``concurrent.futures._WorkItem``: futures_model.py)."""
    module = name.rsplit(".", 1)[0]
    return next(f for f, m in FILES.items() if m == module)


def _needed(used: set[str], defs: dict[str, Definition]) -> list[str]:
    """``used`` and every library definition they name, transitively; a class after its bases."""
    out: list[str] = []
    seen: set[str] = set()

    def add(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        d = defs[name]
        if isinstance(d, ast.ClassDef):
            for b in d.bases:
                if isinstance(b, ast.Name) and b.id in defs:
                    add(b.id)
        out.append(name)
        for r in _references(d, defs):
            add(r)

    for name in sorted(used):
        add(name)
    return out


def _builtins_used(c: Definition) -> set[str]:
    """The names a library definition reads that are neither parameters nor locals, nor library definitions:
    the built-ins it relies on."""
    local = {a.arg for n in ast.walk(c) if isinstance(n, ast.arguments)
             for a in [*n.posonlyargs, *n.args, *n.kwonlyargs, *filter(None, [n.vararg, n.kwarg])]}
    local |= {n.id for n in ast.walk(c) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    local |= {h.name for h in ast.walk(c) if isinstance(h, ast.ExceptHandler) and h.name}
    return {n.id for n in ast.walk(c) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            and n.id not in local and "." not in n.id and n.id not in ("True", "False", "None")}


def _timed_calls(c: Definition) -> set[str]:
    """The synchronisation methods a library class calls with a timeout (``self.not_full.wait(1)``): a class of
    the model that defines a method of the same name would make the compiler take them for calls of it
    (lang/timeouts.py)."""
    return {n.func.attr for n in ast.walk(c) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr in VALUE_METHODS and (n.args or n.keywords)}


def _top_level_names(tree: ast.Module) -> dict[str, ast.AST]:
    """The names the model binds at its top level (functions, classes, module-level variables), each with the
    node that binds it first."""
    out: dict[str, ast.AST] = {}
    for s in tree.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.setdefault(s.name, s)
        elif not isinstance(s, (ast.Import, ast.ImportFrom)):
            for n in ast.walk(s):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    out.setdefault(n.id, n)
    return out


def _float_timeouts(tree: ast.Module, user_methods: dict[str, ast.FunctionDef]) -> None:
    """``q.get(timeout=0.5)``: a float constant given as the timeout of a library method that no class of the
    model defines becomes the int of its sign (1, 0 or -1). The library compares a timeout only with None and
    0 (its length is not modelled: queue_model.py), and floats are values nowhere else in a model."""
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in TIMEOUT_POSITION
                and n.func.attr not in user_methods):
            continue
        for k in n.keywords:
            if k.arg == "timeout":
                k.value = _sign(k.value)
        pos = TIMEOUT_POSITION[n.func.attr]
        if pos is not None and len(n.args) > pos:
            n.args[pos] = _sign(n.args[pos])


def _sign(e: ast.expr) -> ast.expr:
    """A float constant (``0.5``, ``-1.0``) as the int of its sign; any other expression as it is."""
    v = constant(e)
    if type(v) is not float:
        return e
    return ast.copy_location(ast.Constant((v > 0) - (v < 0)), e)


@functools.cache
def _needed_everywhere(used: frozenset[str]) -> frozenset[str]:
    """The library definitions a model that names ``used`` gets, over every file (futures_model.py uses
    queue_model.py's SimpleQueue)."""
    every = {d.name: d for name in FILES for d in _pristine(name)}
    needed = set(_needed(set(used), every))
    # A file's classes call each other's methods through values (a Future tells its waiters), which names do
    # not show: a file is compiled whole, with what it uses of the other files.
    files = {_file_of(n) for n in needed}
    return frozenset(_needed({n for n in every if _file_of(n) in files}, every))


@functools.cache
def _checked(file: str, name: str) -> tuple[frozenset[str], frozenset[str]]:
    """The built-ins library definition ``name`` of ``file`` relies on, and the methods it calls with a timeout
    (``_builtins_used``, ``_timed_calls``): the same for every model."""
    d = next(d for d in _pristine(file) if d.name == name)
    return frozenset(_builtins_used(d)), frozenset(_timed_calls(d))


def add_library(tree: ast.Module, filename: str, source_lines: int,
                nodes: list[ast.AST] | None = None) -> Library:
    """Add to ``tree`` the library definitions it uses (and every one they use, in any library file), numbered
    after the model's ``source_lines`` lines; the ``Library`` says what was added (nothing, and ``tree`` is left
    as it was, when it uses none). Raises ModelSyntaxError where the model redefines a built-in name the library
    relies on. ``nodes``: the tree's nodes, if known (``syntax.walked``)."""
    lib = Library(offset=source_lines)
    used = _used(tree, nodes)
    if not used:
        return lib
    needed = _needed_everywhere(frozenset(used))
    user = _top_level_names(tree)
    user_methods = {item.name: item for s in tree.body if isinstance(s, ast.ClassDef) for item in s.body
                    if isinstance(item, ast.FunctionDef)}
    _float_timeouts(tree, user_methods)
    library_loops(tree, filename, set(user_methods))
    line = source_lines
    parts: list[str] = []
    for name in FILES:
        if not any(d.name in needed for d in _pristine(name)):
            continue
        defs = _definitions(name, line)
        text = _source(name)
        lib.files.append((line, str(HERE / name)))
        for d in defs:  # in source order: a class after its bases
            if d.name not in needed:
                continue
            for b in sorted(_checked(name, d.name)[0]):
                if b in user:
                    raise at(filename, user[b], f"'{b}' is defined by the model, but movers' model of {d.name} "
                                                f"uses the built-in '{b}': rename it")
            for m in sorted(_checked(name, d.name)[1]):
                if m in user_methods:
                    raise at(filename, user_methods[m], f"a method named {m}() in a model that uses {d.name} is "
                                                        f"not supported: movers' model of {d.name} calls "
                                                        f"{m}(timeout) on its Conditions, which the compiler would "
                                                        "take for calls of this method; rename it")
            tree.body.append(d)
            (lib.classes if isinstance(d, ast.ClassDef) else lib.functions).append(d.name)
        parts.append(text)
        line += text.count("\n") + 1
    lib.text = "".join("\n" + p for p in parts)
    return lib


def library_error(lib: Library, e: ModelSyntaxError) -> ModelSyntaxError:
    """A refusal at a line of the library, as the library file's (a construct of the model the library cannot
    be compiled with, such as a class of the model that defines ``wait()``)."""
    hit = lib.where(e.line)
    if hit is None:
        return e
    path, line = hit
    return ModelSyntaxError(path, line, e.col, f"in movers' model of the standard library: {e.message}")


__all__ = ["CLASSES", "Library", "add_library", "library_error"]
