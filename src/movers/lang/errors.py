"""Errors in a model's text: always reported as ``file:line:col: message``, never as a traceback.

A compiler that stops at the first refusal makes a user porting a program run it once per construct, so the
compiler goes on after a refusal and reports every one it finds (up to ``MAX_ERRORS``, in line order): the
first is the ``ModelSyntaxError`` raised, the others ride on it (``others``) and its text has one line each.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

MAX_ERRORS = 20


class ModelSyntaxError(Exception):
    """The model cannot be compiled: a syntax error or a construct outside the language."""

    def __init__(self, filename: str, line: int | None, col: int | None, message: str) -> None:
        # Lines and columns are 1-based everywhere: an unknown position (a syntax error whose offset is 0 or
        # None, a construct with no node) is the start of the file or of the line, never 0.
        line = max(line or 1, 1)
        col = max(col or 1, 1)
        super().__init__(f"{filename}:{line}:{col}: {message}")
        self.filename = filename
        self.line = line
        self.col = col
        self.message = message
        self.others: tuple[ModelSyntaxError, ...] = ()

    @property
    def all(self) -> tuple[ModelSyntaxError, ...]:
        """This error and the further ones found in the same compilation, in line order."""
        return (self, *self.others)

    def __str__(self) -> str:
        return "\n".join(str(e.args[0]) for e in self.all)


def collected(errors: Iterable[ModelSyntaxError]) -> ModelSyntaxError:
    """One error carrying all of ``errors``: one refusal per place (the first found), in line order, at most
    ``MAX_ERRORS`` (a last line then says where the ones left out begin)."""
    seen: dict[tuple[str, int, int], ModelSyntaxError] = {}
    for e in errors:
        for one in e.all:
            seen.setdefault((one.filename, one.line, one.col), one)
    ordered = sorted(seen.values(), key=lambda e: (e.line, e.col))
    kept = [ModelSyntaxError(e.filename, e.line, e.col, e.message) for e in ordered[:MAX_ERRORS]]
    if len(ordered) > MAX_ERRORS:
        last = ordered[MAX_ERRORS]
        kept.append(ModelSyntaxError(last.filename, last.line, last.col,
                                     f"more errors from here on not shown (movers stops after {MAX_ERRORS})"))
    first = kept[0]
    first.others = tuple(kept[1:])
    return first


def at(filename: str, node: ast.AST | None, message: str) -> ModelSyntaxError:
    """The error at ``node`` (ast columns are 0-based; ours are 1-based); at 1:1 without a node."""
    line = getattr(node, "lineno", None) or 1
    col = (getattr(node, "col_offset", None) or 0) + 1
    return ModelSyntaxError(filename, line, col, message)
