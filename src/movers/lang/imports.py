"""The imports a model may make, and the names they bind, resolved before compilation.

A model is parsed, never executed, so an import is only a way of naming things: ``import threading``,
``import threading as th``, ``from threading import Lock as L`` all let the module name the same class. This
module checks the imports (only the standard library modules movers models, and ``movers.lang``), then
rewrites the tree so that every use of an imported name is the builtin name the compiler knows:
``threading.Lock``, ``th.Lock`` and ``L`` all become ``Lock``; ``concurrent.futures.ThreadPoolExecutor``
becomes ``ThreadPoolExecutor``. The rest of the compiler never sees a module.

Names movers resolves but does not model yet (``PENDING``) are refused where they are used, with the name the
user wrote (``'queue.Queue' is not supported yet``), so that adding one is only implementing its builtin.
"""

from __future__ import annotations

import ast

from movers.lang.errors import ModelSyntaxError, at
from movers.lang.syntax import walked

# The members of each supported module a model may name, and the builtin each one is (its canonical name).
MODULES: dict[str, dict[str, str]] = {
    "threading": {n: n for n in ("Thread", "Lock", "RLock", "Condition", "Semaphore", "BoundedSemaphore", "Event",
                                 "Barrier", "current_thread", "get_ident", "local")},
    "time": {"sleep": "sleep"},
    # The classes are model source (lang/library), named by their dotted names so that no name of the model
    # can clash with them.
    "queue": {**{n: f"queue.{n}" for n in ("Queue", "LifoQueue", "SimpleQueue")}, "Empty": "Empty", "Full": "Full"},
    "concurrent.futures": {n: f"concurrent.futures.{n}" for n in ("ThreadPoolExecutor", "as_completed", "Future",
                                                                   "CancelledError", "InvalidStateError")},
    "dataclasses": {"dataclass": "dataclass", "field": "field"},
    "collections": {"deque": "deque", "defaultdict": "defaultdict"},
}
# Resolved names the compiler does not implement yet: a use is refused with the name as the user wrote it.
PENDING: set[str] = set()
# Where each canonical name comes from, for messages.
_ORIGIN = {canon: f"{mod}.{member}" for mod, members in MODULES.items() for member, canon in members.items()}
SUPPORTED = ("movers checks models that use threading, queue, concurrent.futures, time, dataclasses, collections "
             "(deque, defaultdict) and movers.lang")


def _refuse(filename: str, node: ast.AST, module: str) -> ModelSyntaxError:
    if module == "random" or module.startswith("random."):
        return at(filename, node, "import of 'random' is not supported: a model's nondeterminism is explored, not "
                  "sampled: write choose(n) (from movers.lang import *) for a value among 0..n-1, every one checked")
    return at(filename, node, f"import of '{module}' is not supported: {SUPPORTED}")


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` as a string, or None when it is not a chain of names."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class _Resolver(ast.NodeTransformer):
    def __init__(self, filename: str, modules: dict[str, str], names: dict[str, tuple[str, str]]) -> None:
        self.filename = filename
        self.modules = modules  # bound name (or dotted prefix) -> module
        self.names = names  # bound name -> (canonical, what the user wrote it as)

    def _member(self, node: ast.AST, module: str, member: str, written: str) -> ast.expr:
        canon = MODULES[module].get(member)
        if canon is None:
            raise at(self.filename, node, f"'{written}' is not supported: movers models {module}'s "
                     f"{', '.join(sorted(MODULES[module]))}")
        if canon in PENDING:
            raise at(self.filename, node, f"'{module}.{member}' is not supported yet")
        return ast.copy_location(ast.Name(id=canon, ctx=ast.Load()), node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        path = _dotted(node)
        if path is not None:
            parts = path.split(".")
            for k in range(len(parts) - 1, 0, -1):
                module = self.modules.get(".".join(parts[:k]))
                if module is None:
                    continue
                if k != len(parts) - 1:
                    raise at(self.filename, node, f"'{path}' is not supported: {SUPPORTED}")
                if not isinstance(node.ctx, ast.Load):
                    raise at(self.filename, node, f"'{path}' cannot be assigned: a module's names are its own")
                return self._member(node, module, parts[-1], path)
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.modules:
            raise at(self.filename, node, f"the module '{self.modules[node.id]}' as a value is not supported: "
                     f"name its members ({node.id}.Lock, ...)")
        hit = self.names.get(node.id)
        if hit is None:
            return node
        canon, written = hit
        if not isinstance(node.ctx, ast.Load):
            raise at(self.filename, node, f"'{node.id}' names {written} and cannot be assigned")
        if canon in PENDING:
            raise at(self.filename, node, f"'{written}' is not supported yet")
        return ast.copy_location(ast.Name(id=canon, ctx=ast.Load()), node)


def resolve_imports(tree: ast.Module, filename: str) -> ast.Module:
    """Check the module's imports and rewrite every use of an imported name to its builtin name; the import
    statements are left in place (``_top_level`` skips them). Raises ModelSyntaxError at the import or use."""
    return resolve_listed(tree, filename)[0]


def resolve_listed(tree: ast.Module, filename: str) -> tuple[ast.Module, list[ast.AST] | None]:
    """``resolve_imports``, and the tree's nodes (``syntax.walked``) where it left the tree as it was (no name
    to rewrite), else None: the compiler's next passes read them instead of walking the tree again."""
    modules: dict[str, str] = {}
    names: dict[str, tuple[str, str]] = {}
    nodes = walked(tree)
    for s in nodes:
        if isinstance(s, (ast.Import, ast.ImportFrom)) and s not in tree.body:
            raise at(filename, s, "import is supported only at the top level of the module")
    for s in tree.body:
        if isinstance(s, ast.Import):
            for a in s.names:
                if a.name not in MODULES:
                    raise _refuse(filename, s, a.name)
                # `import concurrent.futures` binds `concurrent`; the uses name `concurrent.futures.X`, which
                # the resolver finds as the dotted prefix.
                modules[a.asname or a.name] = a.name
        elif isinstance(s, ast.ImportFrom):
            module = s.module or ""
            if s.level:
                raise _refuse(filename, s, "." * s.level + module)
            if module == "movers.lang":
                continue
            if module not in MODULES:
                raise _refuse(filename, s, module)
            for a in s.names:
                if a.name == "*":
                    raise at(filename, s, f"'from {module} import *' is not supported: import the names you use")
                canon = MODULES[module].get(a.name)
                if canon is None:
                    raise at(filename, s, f"'{module}.{a.name}' is not supported: movers models {module}'s "
                             f"{', '.join(sorted(MODULES[module]))}")
                bound = a.asname or a.name
                if bound != canon or canon in PENDING:
                    names[bound] = (canon, f"{module}.{a.name}")
    if not modules and not names:
        return tree, nodes
    return _Resolver(filename, modules, names).visit(tree), None


__all__ = ["MODULES", "PENDING", "SUPPORTED", "resolve_imports", "resolve_listed"]
