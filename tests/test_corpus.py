"""The Real Python corpus (issue 24): tests/corpus/*.py are small threading programs written as Python
developers write them (``import threading``, ``queue``, ``concurrent.futures``, dicts, strings, exceptions,
closures, dataclasses), each with its expected verdict in a header.

Each file must run under ``python3`` (the same file means the same thing there), and ``movers check`` must
give the header's verdict under ``none`` and under every reduction that accepts the model. Every program
compiles (a refusal fails, with its message); a wrong verdict fails.

Header lines (the file's leading comments):
    # Expected: ok | violation (assertion|deadlock|runtime-error)
    # <what the program does; a bug twin starts with "Twin of <file>.py">
    # CPython: may hang            (it can deadlock under CPython too: a timeout there is its verdict)
    # Raises: <Exception>          (runtime-error: the exception CPython raises where movers finds it)
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

import movers
from movers.lang.errors import ModelSyntaxError
from movers.reduce import BASELINE, REDUCTIONS

CORPUS = ROOT / "tests" / "corpus"
FILES = sorted(CORPUS.glob("*.py"))
KINDS = ("assertion", "deadlock", "runtime-error")
# The modules a corpus program may import: the Python of the threading documentation and everyday code.
MODULES = {"threading", "queue", "time", "dataclasses", "collections", "concurrent.futures", "movers.lang"}
HANG_TIMEOUT = 5.0  # seconds a program that may deadlock gets under CPython before it counts as hung
RUN_TIMEOUT = 10.0
CHECK_TIME_LIMIT = 60.0  # a corpus program is small: reaching this is a failure, not a verdict


def header(path: Path) -> dict[str, str]:
    """The leading comment lines' fields: Expected, Description (the first other line), CPython, Raises."""
    fields: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        m = re.match(r"# (Expected|CPython|Raises): (.*)", line)
        if m:
            fields[m.group(1)] = m.group(2).strip()
        elif "Description" not in fields:
            fields["Description"] = line.lstrip("# ").strip()
    return fields


def expected(path: Path) -> tuple[str, str | None]:
    m = re.fullmatch(r"(ok|violation) ?(?:\(([\w-]+)\))?", header(path).get("Expected", ""))
    assert m, f"{path.name}: no valid '# Expected:' line"
    return m.group(1), m.group(2)


def ids(p: Path) -> str:
    return p.name


# -- the corpus itself ---------------------------------------------------------------------------------------


def test_the_corpus_is_large_enough_and_has_both_verdicts() -> None:
    verdicts = [expected(p) for p in FILES]
    assert len(FILES) >= 40
    assert sum(v == "ok" for v, _ in verdicts) >= 20
    assert {k for _, k in verdicts if k} == set(KINDS)


@pytest.mark.parametrize("path", FILES, ids=ids)
def test_header(path: Path) -> None:
    h = header(path)
    verdict, kind = expected(path)
    assert (kind is None) == (verdict == "ok"), f"{path.name}: a violation names its kind, ok none"
    assert kind is None or kind in KINDS, kind
    assert h.get("Description"), f"{path.name}: a one-line description follows the Expected line"
    twin = re.match(r"Twin of (\w+\.py)", h["Description"])
    if twin:
        assert (CORPUS / twin.group(1)).is_file(), f"{path.name}: its twin {twin.group(1)} is missing"
    if "CPython" in h:
        assert h["CPython"] == "may hang" and kind == "deadlock", path.name
    assert ("Raises" in h) == (kind == "runtime-error"), f"{path.name}: a runtime-error names its exception"


@pytest.mark.parametrize("path", FILES, ids=ids)
def test_imports_are_everyday_python(path: Path) -> None:
    for m in re.finditer(r"^(?:from ([\w.]+) import|import ([\w.]+))", path.read_text(), re.M):
        module = m.group(1) or m.group(2)
        assert module in MODULES, f"{path.name} imports {module}"


def test_most_programs_are_plain_python() -> None:
    uses_lang = [p.name for p in FILES if "from movers.lang import" in p.read_text()]
    assert 1 <= len(uses_lang) <= len(FILES) // 10, uses_lang


def test_every_ok_program_has_a_bug_twin_or_is_one() -> None:
    """Every correct program has a bug-injected twin in the corpus, or is itself the fixed twin of one."""
    twins: dict[str, str] = {}
    for p in FILES:
        m = re.match(r"Twin of (\w+\.py)", header(p)["Description"])
        if m:
            twins[p.name] = m.group(1)
    paired = set(twins) | set(twins.values())
    for p in FILES:
        if expected(p)[0] == "ok":
            assert p.name in paired, f"{p.name} has no bug twin"


def test_readme_lists_every_program_with_its_verdict() -> None:
    readme = (CORPUS / "README.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+\.py)` \| ([^|]+?) \|", readme, re.M))
    assert sorted(rows) == [p.name for p in FILES]
    for p in FILES:
        verdict, kind = expected(p)
        assert rows[p.name] == (f"violation ({kind})" if kind else "ok"), p.name


# -- (1) every program runs under python3 --------------------------------------------------------------------

# The last line of a traceback: "ZeroDivisionError: integer division or modulo by zero", "_queue.Empty".
EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)(?::|$)")


def raised(stderr: str) -> list[str]:
    """The names of the exceptions whose tracebacks ``stderr`` shows (a thread's or the main thread's)."""
    names = []
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Traceback (most recent call last):"):
            for follow in lines[i + 1:]:
                if follow and not follow.startswith(" "):
                    m = EXCEPTION_LINE.match(follow)
                    names.append(m.group(1) if m else follow)
                    break
    return names


def run_python(path: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=CORPUS)


@pytest.mark.parametrize("path", FILES, ids=ids)
def test_runs_under_python3(path: Path) -> None:
    """A correct program passes under CPython. A buggy one usually does too (CPython runs one lucky
    schedule), so it must only end as its bug can: exit 0, or the AssertionError or the exception its
    header names; one that may deadlock may also time out."""
    h = header(path)
    verdict, _ = expected(path)
    may_hang = h.get("CPython") == "may hang"
    try:
        r = run_python(path, HANG_TIMEOUT if may_hang else RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        if may_hang:
            return  # it deadlocked, as its header says it can
        raise
    if verdict == "ok":
        assert r.returncode == 0 and r.stderr == "", r.stderr
        return
    allowed = {"AssertionError", *h.get("Raises", "").split()}
    names = raised(r.stderr)
    assert r.returncode in (0, 1), r.stderr
    assert set(names) <= allowed, r.stderr
    assert r.returncode == 0 or names, r.stderr


def test_raised_reads_thread_and_main_tracebacks() -> None:
    stderr = ("Exception in thread Thread-2 (worker):\nTraceback (most recent call last):\n  File \"x.py\", "
              "line 3, in worker\n    q.get_nowait()\n_queue.Empty\nTraceback (most recent call last):\n  File "
              "\"x.py\", line 9, in <module>\nAssertionError: lost\n")
    assert raised(stderr) == ["Empty", "AssertionError"]
    assert raised("") == []


# -- (2) movers gives each program its verdict ---------------------------------------------------------------


@functools.cache
def refusal(path: Path) -> str | None:
    """The compiler's refusal of the program (its first message), or None when it compiles: every program of
    the corpus compiles, so a refusal fails its tests."""
    try:
        movers.load(path)
    except ModelSyntaxError as e:
        return str(e).splitlines()[0]
    return None


def assert_verdict(path: Path, r: movers.Result) -> None:
    verdict, kind = expected(path)
    assert r.verdict == verdict, (r.verdict, r.error, r.limit, [(v.kind, v.message) for v in r.violations])
    if kind:
        assert r.violations[0].kind == kind, (r.violations[0].kind, r.violations[0].message)
        assert r.violations[0].trace or kind == "deadlock", "a counterexample has steps"


@pytest.mark.parametrize("path", FILES, ids=ids)
def test_verdict_under_none(path: Path) -> None:
    assert refusal(path) is None, refusal(path)
    assert_verdict(path, movers.check(path, reduction=BASELINE, time_limit=CHECK_TIME_LIMIT))


OTHERS = [r for r in REDUCTIONS if r != BASELINE]


@pytest.mark.parametrize("reduction", OTHERS)
@pytest.mark.parametrize("path", FILES, ids=ids)
def test_verdict_under_every_reduction(path: Path, reduction: str) -> None:
    """The verdict of ``none``, under each reduction that accepts the model (a reduction declares what it
    refuses: ``Capabilities.refuses_model``, which gives an error with ``refused`` set)."""
    assert refusal(path) is None, refusal(path)
    r = movers.check(path, reduction=reduction, time_limit=CHECK_TIME_LIMIT)
    if r.verdict == "error" and r.refused:
        pytest.skip(f"{reduction} does not accept the model: {r.error}")
    assert_verdict(path, r)


def test_a_wrong_verdict_fails(tmp_path: Path) -> None:
    """A program that compiles and gives another verdict than its header fails (here a racy counter labelled
    ok), and a refused program fails too."""
    wrong = tmp_path / "wrong.py"
    wrong.write_text("# Expected: ok\n# A racy counter labelled ok.\nfrom movers.lang import *\n\ncount = 0\n\n\n"
                     "def w():\n    global count\n    count = count + 1\n\n\n"
                     "def check():\n    t0.join()\n    t1.join()\n    assert count == 2\n\n\nt0 = Thread(target=w)\n"
                     "t1 = Thread(target=w)\nt0.start()\nt1.start()\nThread(target=check).start()\n")
    assert refusal(wrong) is None
    with pytest.raises(AssertionError):
        assert_verdict(wrong, movers.check(wrong))
    refused = tmp_path / "refused.py"
    refused.write_text("# Expected: ok\n# Refused.\nimport os\n")
    assert refusal(refused) is not None
