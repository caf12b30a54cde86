"""Errors in a model's text: always reported as ``file:line:col: message``, never as a traceback."""

from __future__ import annotations

import ast


class ModelSyntaxError(Exception):
    """The model cannot be compiled: a syntax error or a construct outside the language."""

    def __init__(self, filename: str, line: int, col: int, message: str) -> None:
        super().__init__(f"{filename}:{line}:{col}: {message}")
        self.filename = filename
        self.line = line
        self.col = col
        self.message = message


def at(filename: str, node: ast.AST | None, message: str) -> ModelSyntaxError:
    line = getattr(node, "lineno", 0) or 0
    col = (getattr(node, "col_offset", 0) or 0) + 1
    return ModelSyntaxError(filename, line, col, message)
