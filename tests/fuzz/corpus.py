"""The seeds of the mutation fuzzer: every example model and every checked model of the docs.

The docs' models are found as ``tests/test_docs.py`` finds them: a ```python block whose first line is a
``# movers check:`` tag.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TAG = "# movers check:"

# The models of the issue's findings: small, and each at a place the checker got wrong once.
ISSUE_MODELS = {
    "issue/bool-int": (
        "x = 0\ndef a():\n    global x\n    x = True\ndef b():\n    global x\n    x = 1\n"
        "    assert x is not True\nThread(target=a).start()\nThread(target=b).start()\n"
    ),
    "issue/choose-list": "x = choose([1, 2, 3])\nassert x != 2\n",
    "issue/whole-array": (
        "a = [0, 0]\ndef r():\n    assert 1 not in a\ndef w():\n    a[0] = 1\n"
        "Thread(target=r).start()\nThread(target=w).start()\n"
    ),
    "issue/local-loop": (
        "x = 0\ndef spin():\n    k = 0\n    while True:\n        k += 1\ndef w():\n    global x\n    x = 1\n"
        "Thread(target=spin).start()\nThread(target=w).start()\n"
    ),
    "issue/escape": (
        "class C:\n    def __init__(self):\n        self.f = 0\n        Thread(target=peek, args=(self,)).start()\n"
        "        self.f = 1\n        self.f = 2\ndef peek(c):\n    assert c.f != 1\ndef main():\n    C()\n"
        "Thread(target=main).start()\n"
    ),
}


@dataclass(frozen=True)
class Seed:
    name: str
    source: str


@lru_cache(maxsize=1)
def seeds() -> tuple[Seed, ...]:
    """The seeds in a fixed order, so that a fuzz seed means the same inputs on every machine."""
    out = [Seed(f"examples/{p.name}", p.read_text(encoding="utf-8"))
           for p in sorted((ROOT / "examples").glob("*.py"))]
    for md in sorted((ROOT / "docs").glob("*.md")):
        text = md.read_text(encoding="utf-8")
        for m in re.finditer(r"```python\n(.*?)```", text, re.S):
            code = m.group(1)
            if code.startswith(TAG):
                line = text[: m.start()].count("\n") + 1
                out.append(Seed(f"docs/{md.name}:{line}", code))
    out.extend(Seed(name, src) for name, src in ISSUE_MODELS.items())
    return tuple(out)
