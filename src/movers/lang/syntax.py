"""The model language's vocabulary as the compiler checks it: forbidden and reserved names, the top-level
declarations, and small predicates on ``ast`` nodes."""

from __future__ import annotations

import ast
import collections
from typing import TypeVar

FORBIDDEN = {
    "eval", "exec", "open", "__import__", "compile", "globals", "locals", "vars", "getattr", "setattr",
    "delattr", "input", "breakpoint", "exit", "quit", "memoryview", "object", "type", "super_",
}
SYNC_METHODS = {"acquire", "release", "wait", "notify", "notify_all", "notifyAll", "start", "join"}
# Methods of Event and lists, compiled in expressions (``ExpressionCompiler.builtin_method``); those that change
# their object.
BUILTIN_METHODS = {"set", "clear", "is_set", "append", "pop"}
# Dict methods (``lang/containers.py``), dispatched on the receiver's type at run time.
DICT_METHOD_NAMES = {"get", "setdefault", "pop", "keys", "values", "items", "clear", "update", "copy"}
DICT_CHANGING_METHODS = {"setdefault", "pop", "clear", "update", "add", "discard", "remove"}
# Set methods (``lang/containers.py``): ``pop``, ``clear`` and ``copy`` are shared with the above.
SET_METHOD_NAMES = {"add", "discard", "remove", "pop", "clear", "copy"}
# List methods besides append and pop (``lang/containers.py``).
LIST_METHOD_NAMES = {"insert", "remove", "extend", "index", "count", "sort", "reverse", "clear", "copy"}
LIST_CHANGING_METHODS = {"insert", "remove", "extend", "sort", "reverse", "clear"}
# Deque methods (``lang/deques.py``) that lists have not; those that change the deque.
DEQUE_METHOD_NAMES = {"appendleft", "popleft", "extendleft", "rotate"}
DEQUE_CHANGING_METHODS = DEQUE_METHOD_NAMES
BUILTIN_METHODS |= DICT_METHOD_NAMES | SET_METHOD_NAMES | LIST_METHOD_NAMES | DEQUE_METHOD_NAMES
CHANGING_METHODS = {"set", "clear", "append", "pop"}
DECLARATIONS = {"exclusive", "guarded_by", "thread_local", "self_locking", "lock_protected", "ltl"}
LOCKING_DECLARATIONS = {"self_locking", "lock_protected"}
BUILTIN_CLASS_NAMES = {"Lock", "RLock", "Condition", "Semaphore", "BoundedSemaphore", "Event", "Barrier", "Thread",
                       "list", "object"}


def _is_call_to(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _is_docstring(s: ast.stmt) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)


def evaluated_here(e: ast.AST) -> list[ast.AST]:
    """The nodes of ``e`` evaluated where ``e`` is: a lambda's body is not (it is a function of its own, run
    when called); its defaults are."""
    out: list[ast.AST] = []
    work = collections.deque([e])  # in ast.walk's order: the first call reported is the one ast.walk finds
    while work:
        n = work.popleft()
        out.append(n)
        if isinstance(n, ast.Lambda):
            work.extend([*n.args.defaults, *(d for d in n.args.kw_defaults if d is not None)])
        else:
            work.extend(children(n))
    return out


def walked(node: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(node))``, in the same order (breadth first, each node's children in field order), at a
    third of its cost: the compiler lists a module's nodes a dozen times, ``ast.walk``'s generators of
    generators most of it. For a tree that the caller does not change while it reads the list."""
    out = [node]
    add = out.append
    for n in out:  # grows as it goes: each node's children are appended once it is reached
        for f in n._fields:
            v = getattr(n, f, None)
            if isinstance(v, ast.AST):
                add(v)
            elif isinstance(v, list):
                for x in v:
                    if isinstance(x, ast.AST):
                        add(x)
    return out


def children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))``, without its generators."""
    out: list[ast.AST] = []
    for f in node._fields:
        v = getattr(node, f, None)
        if isinstance(v, ast.AST):
            out.append(v)
        elif isinstance(v, list):
            out.extend([x for x in v if isinstance(x, ast.AST)])
    return out


_T = TypeVar("_T", bound=ast.AST)


def fix_locations(node: _T) -> _T:
    """``ast.fix_missing_locations``, the same in every respect (a node without a position gets its parent's,
    the root's default is line 1, column 0), but for its generators: the lowering (lang/granularity.py) calls
    it on every statement it makes, each holding an operand's whole subtree."""
    def fix(n: ast.AST, lineno: int, col: int, end_lineno: int, end_col: int) -> None:
        attributes = n._attributes
        if "lineno" in attributes:
            if not hasattr(n, "lineno"):
                n.lineno = lineno  # type: ignore[attr-defined]
            else:
                lineno = n.lineno  # type: ignore[attr-defined]
        if "end_lineno" in attributes:
            if getattr(n, "end_lineno", None) is None:
                n.end_lineno = end_lineno  # type: ignore[attr-defined]
            else:
                end_lineno = n.end_lineno  # type: ignore[attr-defined]
        if "col_offset" in attributes:
            if not hasattr(n, "col_offset"):
                n.col_offset = col  # type: ignore[attr-defined]
            else:
                col = n.col_offset  # type: ignore[attr-defined]
        if "end_col_offset" in attributes:
            if getattr(n, "end_col_offset", None) is None:
                n.end_col_offset = end_col  # type: ignore[attr-defined]
            else:
                end_col = n.end_col_offset  # type: ignore[attr-defined]
        for child in children(n):
            fix(child, lineno, col, end_lineno, end_col)

    fix(node, 1, 0, 1, 0)
    return node

