"""Every complete model in docs/*.md states what `movers check` reports on its first line
(``# movers check: ok, 10 states``, ``# movers check: violation (deadlock)``, ``# movers check: error: …``):
the user reference cannot drift from the checker."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

import movers

DOCS = sorted((ROOT / "docs").glob("*.md"))
TAG = "# movers check:"


def blocks() -> list[tuple[str, str, str]]:
    out = []
    for md in DOCS:
        text = md.read_text()
        for m in re.finditer(r"```python\n(.*?)```", text, re.S):
            code = m.group(1)
            first = code.splitlines()[0] if code.strip() else ""
            if first.startswith(TAG):
                line = text[: m.start()].count("\n") + 1
                out.append((f"{md.name}:{line}", first[len(TAG):].strip(), code))
    return out


BLOCKS = blocks()


def test_the_docs_have_checked_models() -> None:
    assert len(BLOCKS) >= 20


@pytest.mark.parametrize(("where", "expect", "code"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_doc_model(where: str, expect: str, code: str) -> None:
    r = movers.check(code, filename=where)
    if expect.startswith("error:"):
        assert r.verdict == "error" and expect[6:].strip() in (r.error or "")
        return
    m = re.fullmatch(r"(ok|violation|incomplete)(?: \(([\w-]+)\))?(?:, (\d+) states)?", expect)
    assert m, f"bad tag {expect!r}"
    verdict, kind, n = m.groups()
    assert r.verdict == verdict, (r.error, [(v.kind, v.message) for v in r.violations])
    if kind:
        assert r.violations[0].kind == kind
    if n:
        assert r.stats.states == int(n)
