"""Hostile strings: what a model's own text can put into movers' output, and the files that carry it.

A thread's name (``Thread(name=…)``), an assertion's message and the model's file name are the model's text
that movers prints: in the text report (a terminal: escape sequences such as ESC[2J clear it, ESC]0;…BEL
sets its title), through rich (``[bold]`` is markup to it), in HTML (``<script>``), in XML (JUnit), in JSON
(lone surrogates cannot be encoded as UTF-8). Each string carries a marker so that the oracle can tell, in
the output, whether it was escaped, interpreted or dropped.

Trails (``movers check --trail``) are files a user keeps and shares: ``mutate_trail`` corrupts one, or
writes a hostile one from scratch when the check found nothing to save.
"""

from __future__ import annotations

import ast
import json
import random
from typing import Any

# Rich markup that must be printed as written, never interpreted (the oracle looks for it verbatim).
MARKUP = "[b]fzmk[/b]"
# HTML and XML that must be escaped: the oracle looks for RAW_TAG in a page or a JUnit report.
TAG = "<i>fzhtml</i>"
RAW_TAG = b"<i>fzhtml"
# Strings for thread names and messages, as Python values (ast.unparse writes them as escapes).
STRINGS = [
    "\x1b[2J\x1b[H", "\x1b]0;fz-title\x07", "\x1b[31mred\x1b[0m", MARKUP, "[link=http://x]fz[/link]", "[/]",
    TAG, "<script>alert(1)</script>", "]]></failure>", "&amp;&lt;", "\ud800", "\udcff", "a\x00b", "\x7f",
    "\r", "\x08\x08", "\u202efz", "\ufeff", "\t", "line\nbreak", "w" * 3000, "é€😀", "'\"\\", "{0}", "%s%n",
]
# File names (the model's path; no "/"): rich markup, escapes, invalid UTF-8 (a surrogateescape str), long.
FILE_NAMES = [
    "[b]fzmk.py", "\x1b[2Jm.py", "<i>fzhtml.py", "m\udcff.py", "m\x07.py", "m" * 250 + ".py",
    "m&amp;.py", "é€.py", "-m.py", "m\nn.py",
]


def hostile_string(rng: random.Random) -> str:
    parts = rng.sample(STRINGS, rng.randint(1, 3))
    return "".join(parts)


def inject(source: str, rng: random.Random) -> tuple[str, str]:
    """Put hostile strings where a model may have strings: thread names and assertion messages; and add a
    thread whose assertion fails with one, so that the string is sure to be printed."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return source, "hostile: unparsable, left alone"
    done = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Thread" \
                and rng.random() < 0.6:
            node.keywords = [k for k in node.keywords if k.arg != "name"]
            node.keywords.append(ast.keyword("name", ast.Constant(hostile_string(rng))))
            done.append("thread name")
        elif isinstance(node, ast.Assert) and rng.random() < 0.6:
            node.msg = ast.Constant(hostile_string(rng))
            done.append("assert message")
    if not done or rng.random() < 0.5:
        name = repr(hostile_string(rng))
        tree.body += ast.parse(f"def fz_hostile():\n    assert False, {repr(hostile_string(rng))}\n"
                               f"fz_t = Thread(target=fz_hostile, name={name})\nfz_t.start()\n").body
        done.append("failing thread")
    try:
        text = ast.unparse(ast.fix_missing_locations(tree))
    except (ValueError, RecursionError, MemoryError):
        return source, "hostile: unparse failed, left alone"
    return text + "\n", "hostile: " + ", ".join(done)


def hostile_file_name(rng: random.Random) -> str:
    return rng.choice(FILE_NAMES)


# -- trails --------------------------------------------------------------------------------------------------

TRAIL_MUTATIONS = [
    "none", "truncate", "empty", "not-json", "not-utf8", "array", "no-schema", "schema-2",
    "schema-bool", "steps-missing", "steps-not-list", "thread-negative", "thread-huge", "thread-bool",
    "thread-str", "choices-bad", "choices-huge", "step-shape", "many-steps", "deep-nesting", "drop-step",
    "extra-step", "swap-steps", "sha-wrong", "model-other", "reduction-bogus", "atomicity-commit",
    "atomicity-bogus", "kind-bogus", "message-hostile", "kind-hostile", "unknown-keys", "big-int",
    "nan", "dir", "missing", "surrogate-escape",
]


def synthetic_trail(rng: random.Random) -> dict[str, Any]:
    """A plausible trail for a model that has none to save: a few steps of low thread numbers."""
    steps = [[rng.randint(0, 2), [] if rng.random() < 0.8 else [rng.randint(0, 2)]] for _ in range(rng.randint(0, 6))]
    return {"movers_trail": 1, "model": "model.py", "model_sha256": "0" * 64, "reduction": "none",
            "atomicity": None, "kind": rng.choice(["assertion", "deadlock", "invariant", "runtime-error"]),
            "message": "fz", "steps": steps}


def mutate_trail(data: bytes | None, rng: random.Random, how: str) -> tuple[bytes | None, str]:
    """The trail file after mutation ``how`` (None: remove the file; the pool makes ``dir`` a directory)."""
    try:
        trail = json.loads(data) if data else None
    except ValueError:
        trail = None
    if not isinstance(trail, dict):
        trail = synthetic_trail(rng)
    raw = json.dumps(trail).encode()
    steps = trail.get("steps") if isinstance(trail.get("steps"), list) else []
    t = dict(trail)
    if how == "none":
        return raw, how
    if how == "truncate":
        return raw[: rng.randint(0, max(0, len(raw) - 1))], how
    if how == "empty":
        return b"", how
    if how == "not-json":
        return rng.choice([b"movers", b"{", b"\x00\x01", b"{'movers_trail': 1}", b"[1, 2"]), how
    if how == "not-utf8":
        return raw.replace(b'"', b'"\xff', 1), how
    if how == "array":
        return json.dumps([trail]).encode(), how
    if how == "missing":
        return None, how
    if how == "dir":
        return b"", how
    if how == "no-schema":
        t.pop("movers_trail", None)
    elif how == "schema-2":
        t["movers_trail"] = 2
    elif how == "schema-bool":
        t["movers_trail"] = True
    elif how == "steps-missing":
        t.pop("steps", None)
    elif how == "steps-not-list":
        t["steps"] = rng.choice([None, 5, "steps", {"0": []}])
    elif how.startswith("thread-") and steps:
        k = rng.randrange(len(steps))
        value = {"thread-negative": -1, "thread-huge": 10**30, "thread-bool": True, "thread-str": "0"}[how]
        t["steps"] = [list(s) if isinstance(s, list) else s for s in steps]
        if isinstance(t["steps"][k], list) and t["steps"][k]:
            t["steps"][k][0] = value
    elif how == "choices-bad" and steps:
        t["steps"] = [[s[0] if isinstance(s, list) and s else 0, rng.choice([None, "x", [None], [-1], 7])]
                      for s in steps]
    elif how == "choices-huge" and steps:
        t["steps"] = [[s[0] if isinstance(s, list) and s else 0, [10**30]] for s in steps]
    elif how == "step-shape":
        t["steps"] = rng.choice([[[0]], [[0, [], 1]], [0], [[]], [[[0], []]], [{"thread": 0}]])
    elif how == "many-steps":
        t["steps"] = [[i % 3, []] for i in range(rng.choice([10_000, 200_000]))]
    elif how == "deep-nesting":
        return b'{"movers_trail": 1, "steps": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", how
    elif how == "drop-step" and steps:
        t["steps"] = steps[:-1]
    elif how == "extra-step":
        t["steps"] = steps + [[rng.randint(0, 3), []]]
    elif how == "swap-steps" and len(steps) > 1:
        s = list(steps)
        i, j = rng.sample(range(len(s)), 2)
        s[i], s[j] = s[j], s[i]
        t["steps"] = s
    elif how == "sha-wrong":
        t["model_sha256"] = rng.choice(["", "f" * 64, None, 1])
    elif how == "model-other":
        t["model"] = rng.choice(["/etc/passwd", "", None, "../../x.py", hostile_file_name(rng)])
    elif how == "reduction-bogus":
        t["reduction"] = rng.choice(["bogus", None, 3, "transactions", "dwyer-ld"])
    elif how == "atomicity-commit":
        t["atomicity"] = "commit"
    elif how == "atomicity-bogus":
        t["atomicity"] = rng.choice(["bogus", 1, [], "auto"])
    elif how == "kind-bogus":
        t["kind"] = rng.choice(["bogus", None, 1, ""])
    elif how == "message-hostile":
        t["message"] = hostile_string(rng)
    elif how == "kind-hostile":
        t["kind"] = hostile_string(rng)
    elif how == "unknown-keys":
        t["extra"] = {"x": [1, 2]}
        t[hostile_string(rng)] = 1
    elif how == "big-int":
        return raw.replace(b'"movers_trail": 1', b'"movers_trail": 1' + b"0" * 5000, 1), how
    elif how == "nan":
        return raw.replace(b'"movers_trail": 1', b'"movers_trail": NaN', 1), how
    elif how == "surrogate-escape":  # lone surrogates that JSON can carry and UTF-8 cannot encode
        t["message"] = "FZSUR"
        return json.dumps(t).encode().replace(b'"FZSUR"', b'"\\ud800\\udfff\\ud800 fz"'), how
    return json.dumps(t).encode(), how
