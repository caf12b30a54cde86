"""Every complete model in docs/*.md states what `movers check` reports on its first line
(``# movers check: ok, 10 states``, ``# movers check: violation (deadlock)``, ``# movers check: error: …``;
``# movers check --granularity statement: ok, 10 states`` for the statement granularity;
``# movers check --liveness starvation --fairness weak: violation (liveness)`` for a liveness property,
docs/liveness.md): the user reference cannot drift from the checker."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

import movers

DOCS = sorted((ROOT / "docs").glob("*.md"))
TAG = "# movers check"
GRANULARITY = re.compile(r"# movers check(?: --granularity (access|statement))?"
                         r"(?: --liveness (termination|starvation|ltl)(?: --fairness (weak|strong|none))?)?:")


def blocks() -> list[tuple[str, str, str, str, str | None, str | None]]:
    out = []
    for md in DOCS:
        text = md.read_text()
        for m in re.finditer(r"```python\n(.*?)```", text, re.S):
            code = m.group(1)
            first = code.splitlines()[0] if code.strip() else ""
            tag = GRANULARITY.match(first)
            if tag:
                line = text[: m.start()].count("\n") + 1
                out.append((f"{md.name}:{line}", first[tag.end():].strip(), code, tag.group(1) or "access",
                            tag.group(2), tag.group(3)))
    return out


BLOCKS = blocks()


def test_the_docs_have_checked_models() -> None:
    assert len(BLOCKS) >= 20


def test_liveness_tags_are_read() -> None:
    """docs/liveness.md's models are checked with their property, not as plain safety checks."""
    assert {b[4] for b in BLOCKS if b[0].startswith("liveness.md")} >= {"ltl", "starvation"}


def test_every_tag_is_read() -> None:
    for md in DOCS:
        for line in md.read_text().splitlines():
            if line.startswith(TAG):
                assert GRANULARITY.match(line), f"{md.name}: a tag the tests do not read: {line!r}"


@pytest.mark.parametrize(("where", "expect", "code", "granularity", "liveness", "fairness"), BLOCKS,
                         ids=[b[0] for b in BLOCKS])
def test_doc_model(where: str, expect: str, code: str, granularity: str, liveness: str | None,
                   fairness: str | None) -> None:
    r = movers.check(code, filename=where, granularity=granularity, liveness=liveness, fairness=fairness)
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
