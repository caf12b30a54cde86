"""How values show as text (``str``, ``repr``, f-strings) across the kinds of values the parts of issue 24 added
(dicts, sets, exceptions, dataclasses), and lists concatenated by name: each program runs under CPython too,
and both must agree (its assertions hold in both)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import movers

PROGRAMS = {
    "reprs": '''
from dataclasses import dataclass

@dataclass
class P:
    x: int
    y: str = "a"

d = {"a": 1, 2: [3, "x"]}
s = {3, 1}
e = ValueError("bad", 2)
assert str(d) == "{'a': 1, 2: [3, 'x']}", str(d)
assert repr(s) == "{1, 3}" and str(set()) == "set()" and f"{d}" == str(d)
assert str(e) == "('bad', 2)" and repr(e) == "ValueError('bad', 2)", repr(e)
assert str(ValueError("m")) == "m" and str(ValueError()) == "" and repr(ValueError()) == "ValueError()"
assert f"{P(1)}" == "P(x=1, y='a')", f"{P(1)}"
assert str(KeyError("k")) == "'k'" and repr(KeyError("k")) == "KeyError('k')"
''',
    "caught message": '''
errors = []
def f(v):
    if v < 0:
        raise ValueError(f"negative value for {v}")
try:
    f(-1)
except ValueError as e:
    errors.append(str(e))
assert errors == ["negative value for -1"], errors
''',
    "concatenated by name": '''
done = [1]
skipped = [2, 3]
both = done + skipped
assert both == [1, 2, 3] and done * 2 == [1, 1] and sorted(skipped + done) == [1, 2, 3]
''',
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_text_agrees_with_cpython(name: str) -> None:
    src = PROGRAMS[name]
    p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    r = movers.check(src)
    assert r.verdict == "ok", (r.error, [v.message for v in r.violations])


# Each program with a wrong expectation added: a violation (the checks above cannot pass vacuously).
TWINS = {
    "reprs": 'assert repr(e) == "ValueError(\'bad\', 3)"',
    "caught message": 'assert errors == ["negative value for 1"]',
    "concatenated by name": "assert both == [2, 3, 1]",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_wrong_expectation_is_found(name: str) -> None:
    r = movers.check(PROGRAMS[name] + TWINS[name] + "\n")
    assert r.verdict == "violation" and r.violations[0].kind == "assertion", (r.error, r.verdict)
