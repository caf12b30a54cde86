"""Model strings made safe to print: what a model names or says (a thread's name, an assertion's message, a
string value, a line of its source) reaches a terminal, a CI log or an XML document only through here.

A control character from the model would otherwise act on the terminal (``ESC[2J`` clears the screen, ``\\r``
goes back to the start of the line, so "violation found" could be made to read "verified"), reorder the text
around it (the bidirectional overrides) or make a JUnit document that no XML parser accepts. They are shown
as Python's ``repr`` shows them (``\\x1b``, ``\\r``, ``\\u202e``), so a reader still sees they are there.
A newline is kept only where a text has several lines of its own (a deadlock's message, a statement written
over several lines); elsewhere it shows as ``\\n``. The JSON output keeps every string as the model has it.
"""

from __future__ import annotations

import re

# C0 controls but newline, DEL, C1 controls; the bidirectional marks, embeddings, overrides and isolates; the
# line and paragraph separators (they end a line in some terminals and viewers); lone surrogates (no encoding
# can write them).
_OTHERS = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE = re.compile(f"[\x00-\x09\x0b-\x1f{_OTHERS}]")
_UNSAFE_NL = re.compile(f"[\x00-\x1f{_OTHERS}]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
# What XML 1.0 cannot hold at all, not even as a character reference: the C0 controls but tab, newline and
# carriage return, lone surrogates, U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _escape(m: re.Match[str]) -> str:
    c = m[0]
    named = _NAMED.get(c)
    if named is not None:
        return named
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def printable(text: str, newlines: bool = False) -> str:
    """``text`` with its control characters escaped (``\\x1b``); newlines kept with ``newlines``."""
    return (_UNSAFE if newlines else _UNSAFE_NL).sub(_escape, text)


def xml_text(text: str, newlines: bool = True) -> str:
    """``text`` for an XML document: escaped as ``printable`` escapes it, and nothing left that XML 1.0
    forbids (a lone surrogate, U+FFFF)."""
    return _NOT_XML.sub(_escape, printable(text, newlines))


__all__ = ["printable", "xml_text"]
