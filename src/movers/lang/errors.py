"""Errors in a model's text: always reported as ``file:line:col: message``, never as a traceback."""

from __future__ import annotations

import ast


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


def at(filename: str, node: ast.AST | None, message: str) -> ModelSyntaxError:
    """The error at ``node`` (ast columns are 0-based; ours are 1-based); at 1:1 without a node."""
    line = getattr(node, "lineno", None) or 1
    col = (getattr(node, "col_offset", None) or 0) + 1
    return ModelSyntaxError(filename, line, col, message)
