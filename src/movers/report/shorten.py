"""Long values made short for people: the text report, JUnit and SARIF show a list of 100,000 elements as
``[0, 0, 0, … 99,997 more]`` and the elements of a list, entry by entry, up to ``ITEMS`` of them; the JSON
output keeps every value whole.

Values reach the reports as strings (``semantics/view.py`` made them); these functions cut the strings,
reading just enough of their syntax (brackets, quotes) to cut between elements. Each is linear in the size
of what it reads.
"""

from __future__ import annotations

import re

# A list or tuple shows its first elements, up to ITEMS of them and about CHARS characters; the elements of
# a list that a step changes or a state holds show up to ITEMS entries, then how many more there are.
ITEMS = 8
CHARS = 120

# What the element syntax of a value is made of: a quoted string (which may hold brackets and commas), a
# ``<…>`` (``<Account#1>``, ``<an int of about 1,000 digits>``), a bracket, a comma.
_TOKEN = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|<[^<>]*>|[\[\]()]|,""")
_ELEMENT = re.compile(r"^(.*)\[(\d+)\](.*)$", re.DOTALL)
_NESTED = re.compile(r"""['"\[\]()<>]""")


def short_value(text: str) -> str:
    """``text`` (a value as the reports show it), shortened when it is longer than ``CHARS``: a list or
    tuple to its first elements and how many more there are, anything else to its first characters."""
    if len(text) <= CHARS:
        return text
    opening = text[0]
    closing = {"[": "]", "(": ")"}.get(opening)
    if closing is not None:
        cut = _elements_cut(text, closing)
        if cut is not None:
            return cut
    return f"{text[:CHARS]}… ({len(text) - CHARS:,} more characters)"


def _elements_cut(text: str, closing: str) -> str | None:
    """A list's or tuple's text cut after its first elements, or None when it is not one (or its first
    element alone is too long)."""
    body = text.removesuffix(" (unchanged)")
    if body.endswith(closing) and not _NESTED.search(body, 1, len(body) - 1):
        # Elements with no quotes, brackets or <…> (numbers, None, True): every comma is between two, and
        # only the first few need finding.
        commas: list[int] = []
        at = 0
        while len(commas) <= ITEMS and (at := body.find(",", at + 1, len(body) - 1)) != -1:
            commas.append(at)
        count = body.count(",", 1, len(body) - 1) + (body[body.rfind(",") + 1:-1].strip() != "")
        return _cut_at(text, commas, count, len(body), closing)
    depth = 0
    commas: list[int] = []  # where each top-level element ends
    end = -1
    for m in _TOKEN.finditer(text):
        tok = m[0]
        if tok in "[(":
            depth += 1
        elif tok in "])":
            depth -= 1
            if depth == 0:
                end = m.end()
                break
        elif tok == "," and depth == 1:
            commas.append(m.start())
    if end == -1 or not commas:
        return None
    count = len(commas) + (text[commas[-1] + 1:end - 1].strip() != "")  # ``(x,)`` has one element
    return _cut_at(text, commas, count, end, closing)


def _cut_at(text: str, commas: list[int], count: int, end: int, closing: str) -> str | None:
    """``text`` cut after its first elements, given where its first top-level commas are, how many elements
    it has and where it ends."""
    if not commas:
        return None
    rest = text[end:]  # `` (unchanged)`` after a global's value
    keep = 0
    while keep < min(ITEMS, len(commas)) and commas[keep] <= CHARS:
        keep += 1
    if keep == 0:
        return None
    more = count - keep
    if more <= 0:
        return None
    return f"{text[:commas[keep - 1]]}, … {more:,} more{closing}{rest}"


def short_entries(entries: dict[str, str]) -> list[tuple[str, str | None]]:
    """``entries`` (names and values of a step's changes or of a state) with each value shortened, and of
    the elements of one list (``a[0]``, ``a[1]``, … and what is under them) the first ``ITEMS``, then one
    entry ``(… 99,990 more under a[…], None)`` that says how many are left out."""
    out: list[tuple[str, str | None]] = []
    run = ""  # the list whose elements the last entries were
    shown = hidden = 0
    for k, v in entries.items():
        if hidden and k.startswith(run) and k[len(run):len(run) + 1] == "[":
            hidden += 1  # the rest of a long run, counted without a closer look
            continue
        m = _ELEMENT.match(k)
        # The outermost list the name is an element of: ``a`` for ``a[3].items[0]``.
        owner = k[:k.index("[")] if m else ""
        if owner and owner == run:
            if shown < ITEMS:
                shown += 1
            else:
                hidden += 1
                continue
        else:
            if hidden:
                out.append((f"… {hidden:,} more under {run}[…]", None))
            run, shown, hidden = owner, (1 if owner else 0), 0
        out.append((k, short_value(v)))
    if hidden:
        out.append((f"… {hidden:,} more under {run}[…]", None))
    return out


def entries_text(entries: dict[str, str], events: tuple[str, ...] = ()) -> str:
    """``short_entries`` on one line: ``a[0] = 1, a[1] = 2, … 98 more under a[…]``. A name that starts with
    ``thread `` and whose value is one of ``events`` reads as an event: ``thread worker#0 terminated``."""
    return ", ".join(k if v is None else f"{k} {v}" if k.startswith("thread ") and v in events else f"{k} = {v}"
                     for k, v in short_entries(entries))


__all__ = ["CHARS", "ITEMS", "entries_text", "short_entries", "short_value"]
