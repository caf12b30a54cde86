"""Bad input (issue item 7): file:line:col, exit 2, never a traceback; a model is never executed."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import movers
from movers.cli import main
from movers.lang.compiler import compile_model
from movers.lang.errors import ModelSyntaxError


def cli(tmp_path, src: str, *args: str) -> tuple[int, str, str]:
    f = tmp_path / "model.py"
    f.write_text(src)
    p = subprocess.run([sys.executable, "-m", "movers.cli", "check", str(f), *args],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize(
    ("src", "where", "needle"),
    [
        ("x = 1 +\n", "1:8", "syntax error"),
        ("import os\n", "1:1", "import of 'os' is not supported"),
        ("from foo import bar\n", "1:1", "import of 'foo' is not supported"),
        ("x = 0\ndef f():\n    eval('x')\nThread(target=f).start()\n", "3:5", "never executed"),
        ("x = 0\ndef f():\n    exec('x = 1')\nThread(target=f).start()\n", "3:5", "never executed"),
        ("x = open('/etc/passwd')\n", "1:5", "never executed"),
        ("x = __import__('os')\n", "1:5", "never executed"),
        ("def f():\n    try:\n        pass\n    except E:\n        pass\n", "4:12",
         "an except clause names an exception class"),
        ("x = 1.5\n", "1:5", "unsupported value"),
        # A field named as a method: CPython would call the field's value (the instance's attribute first).
        ("class C:\n    def __init__(self):\n        self.f = self.g\n    def f(self):\n        pass\n"
         "    def g(self):\n        pass\n", "3:9", "the field 'f' of class 'C' has the name of one of its methods"),
        ("class B:\n    def __init__(self):\n        self.f = 1\nclass C(B):\n    def f(self):\n        pass\n"
         "c = C()\n", "3:9", "the field 'f' of class 'C' has the name of one of its methods"),
        ("x = 3 / 2\n", "1:5", "use //"),
        ("def f():\n    y = zz\n", "2:9", "name 'zz' is not defined"),
        ("def f():\n    nonlocal x\n    x = 1\n", "2:5", "nonlocal is only allowed in a nested function"),
        ("def f(a=[]):\n    pass\n", "1:9", "mutable default value for 'a'"),
        ("x = 0\nexclusive(y, lambda t: True)\n", "2:11", "not a global variable"),
        ("def f():\n    return g()\n", "2:12", "unknown function 'g'"),
        ("def f():\n    break\n", "2:5", "outside a loop"),
    ],
)
def test_rejected_with_position(tmp_path, src: str, where: str, needle: str) -> None:
    code, out, err = cli(tmp_path, src)
    assert code == 2
    assert "Traceback" not in out + err
    assert f"model.py:{where}: " in err, err
    assert needle in err


def test_model_is_never_executed(tmp_path) -> None:
    marker = tmp_path / "ran"
    src = f"x = 0\nif x == 0:\n    open({str(marker)!r}, 'w')\n"
    code, out, err = cli(tmp_path, src)
    assert code == 2
    assert not marker.exists()


def test_missing_file_and_bad_options(tmp_path, capsys) -> None:
    assert main(["check", str(tmp_path / "nope.py")]) == 2
    assert "cannot read the model" in capsys.readouterr().err
    f = tmp_path / "m.py"
    f.write_text("x = 0\n")
    with pytest.raises(SystemExit) as e:  # an argparse error, as every bad option: exit code 2
        main(["check", str(f), "--reduction", "bogus"])
    assert e.value.code == 2 and "unknown reduction 'bogus' (known: none, static-por" in capsys.readouterr().err
    assert main(["check", str(f), "--max-states", "0"]) == 2
    assert main(["check", str(f), "--atomicity", "commit"]) == 2
    with pytest.raises(SystemExit) as e:
        main(["check", str(f), "--search", "sideways"])
    assert e.value.code == 2


def test_python_api_returns_error_verdict() -> None:
    import movers

    r = movers.check("x = (\n")
    assert r.verdict == "error" and r.error.startswith("<model>:")
    assert r.exit_code == 2


# -- issue 7: files read as Python reads them, nesting, 1-based columns, the API never raises -------------------


def cli_bytes(tmp_path, data: bytes, *args: str) -> tuple[int, str, str]:
    f = tmp_path / "model.py"
    f.write_bytes(data)
    p = subprocess.run([sys.executable, "-m", "movers.cli", "check", str(f), *args],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def test_coding_line_and_bom_are_honoured(tmp_path) -> None:
    # Latin-1 with its coding line: é (0xe9) is a valid character in an assertion message.
    code, out, err = cli_bytes(tmp_path, b"# -*- coding: latin-1 -*-\nx = 0\nassert x == 0, 'caf\xe9'\n")
    assert code == 0 and "Traceback" not in err, err
    code, out, err = cli_bytes(tmp_path, b"\xef\xbb\xbfx = 0\nassert x == 0\n")
    assert code == 0 and "Traceback" not in err, err


@pytest.mark.parametrize(
    ("data", "where", "needle"),
    [
        (b"x = 0\ny = '\xff\xfe'\n", "2:6", "cannot decode the model as utf-8"),
        (b"# coding: klingon\nx = 0\n", "1:1", "unknown encoding: klingon"),
        (b"\xef\xbb\xbf# coding: latin-1\nx = 0\n", "1:1", "cannot decode the model"),
        (b"x = 0\x00\n", "1:6", "null character"),
    ],
)
def test_undecodable_files(tmp_path, data: bytes, where: str, needle: str) -> None:
    for args in ((), ("--json",)):
        code, out, err = cli_bytes(tmp_path, data, *args)
        assert code == 2 and "Traceback" not in out + err, err
        text = json.loads(out)["error"] if args else err
        assert f"model.py:{where}: " in text and needle in text, text


def elif_chain(n: int, indent: str = "") -> str:
    return (f"{indent}if x == 0:\n{indent}    pass\n"
            + "".join(f"{indent}elif x == {i}:\n{indent}    pass\n" for i in range(1, n)))


@pytest.mark.parametrize(
    "src",
    [
        "x = 0\n" + elif_chain(1000),
        "x = 0\ny = " + "x + " * 1000 + "x\n",
        "x = 0\ny = " + "-" * 1000 + "x\n",
        "x = 0\ndef f():\n    global x\n    x = " + "not " * 500 + "x\nThread(target=f).start()\n",
        "x = 0\ndef f():\n" + elif_chain(500, "    ") + "Thread(target=f).start()\n",
    ],
)
def test_deep_nesting_is_an_error_not_a_crash(tmp_path, src: str) -> None:
    code, out, err = cli(tmp_path, src, "--json")
    assert code == 2 and "Traceback" not in err, err
    msg = json.loads(out)["error"]
    assert re.match(r"\S*model\.py:[1-9]\d*:[1-9]\d*: ", msg), msg
    assert "too deeply nested" in msg, msg


def test_columns_are_one_based_everywhere() -> None:
    import ast

    from movers.lang.errors import ModelSyntaxError, at

    assert str(ModelSyntaxError("m.py", 0, 0, "x")) == "m.py:1:1: x"
    assert str(ModelSyntaxError("m.py", None, None, "x")) == "m.py:1:1: x"
    e = ModelSyntaxError("m.py", 3, 0, "x")
    assert (e.line, e.col) == (3, 1) and str(e) == "m.py:3:1: x"
    assert str(at("m.py", None, "no node")) == "m.py:1:1: no node"
    node = ast.parse("y = 1").body[0]
    assert str(at("m.py", node, "here")) == "m.py:1:1: here"


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"reduction": "bogus"}, "unknown reduction 'bogus'"),
        ({"search": "sideways"}, "unknown search 'sideways'"),
        ({"time_limit": float("nan")}, "time_limit must be a positive finite number"),
        ({"time_limit": float("inf")}, "time_limit must be a positive finite number"),
        ({"time_limit": -1}, "time_limit must be positive"),
        ({"max_states": 0}, "max_states must be positive"),
        ({"max_depth": 2.5}, "max_depth must be a positive integer"),
        ({"max_memory": float("nan")}, "max_memory must be a positive finite number"),
    ],
)
def test_api_returns_an_error_result_for_bad_arguments(kw: dict, needle: str) -> None:
    import movers

    r = movers.check(source="x = 0\n", **kw)
    assert r.verdict == "error" and r.exit_code == 2 and needle in r.error, r.error


def test_api_returns_an_error_result_for_bad_files(tmp_path) -> None:
    import movers

    bad = tmp_path / "bad.py"
    bad.write_bytes(b"x = '\xff'\n")
    for model, needle in [(tmp_path / "nope.py", "cannot read the model"), (tmp_path, "cannot read the model"),
                          (bad, "bad.py:1:6: cannot decode"), ("", "the model path is empty"),
                          (3, "must be a path or source text")]:
        r = movers.check(model)
        assert r.verdict == "error" and needle in r.error, (model, r.error)
    deep = "x = 0\n" + elif_chain(1000)
    r = movers.check(source=deep)
    assert r.verdict == "error" and "too deeply nested" in r.error


def test_a_pipe_without_writer_and_a_device_are_errors_not_waits(tmp_path) -> None:
    """Found by the fuzz campaign: a FIFO nobody writes to made the checker wait forever (with no time
    limit), and /dev/zero would fill the memory. A pipe with a writer (``<(…)``) still works."""
    import os

    import movers

    fifo = tmp_path / "model.py"
    os.mkfifo(fifo)
    r = movers.check(fifo)
    assert r.verdict == "error" and "pipe that gave nothing" in (r.error or ""), r.error
    r = movers.check("/dev/zero")
    assert r.verdict == "error" and "not a regular file" in (r.error or ""), r.error


@pytest.mark.parametrize("body, message", [
    ("    m.frobnicate()", "4:5: no class of the model defines a method 'frobnicate()'"),
    ("    m.wait(timeout=l)", "4:20: wait(): timeout must be a constant (a number, True, False or None)"),
    ("    m.wait_for(lambda: True, 1, 2)", "4:5: too many arguments: wait_for(predicate, timeout)"),
    ("    m.acquire(False, 1, 2)", "4:5: too many arguments: acquire(blocking, timeout)"),
    ("    m.acquire(wait=1)", "4:5: acquire() got an unexpected keyword argument 'wait'"),
    ("    t = 1 if l else m.acquire(False)", "4:21: acquire() inside a conditional expression: it would run"),
    ("    t = l and m.acquire(False)", "4:15: acquire() inside 'and'/'or': it would run whether or not"),
    ("    sleep(-1)", "4:11: sleep length must be non-negative"),
    ("    t = sleep(1)", "4:9: sleep() must be a statement of its own"),
    ("    m.wait_for(lambda k: k)", "4:16: wait_for(pred): the predicate takes no arguments"),
    ("    m.wait_for(l)", "4:16: wait_for(pred): pred must be a lambda without parameters or the name of a"),
    ("    t = [m.acquire() for k in l]", "4:10: acquire() inside a comprehension"),
    ("    l.append(1, 2)", "4:5: append() takes one argument"),
    ("    t = l.pop(0, 1)", "4:9: pop() takes at most one argument"),
    ("    m.set(True)", "4:5: set() takes no arguments"),
    ("    print(l.pop())", "4:11: print() does not evaluate its arguments: call l.pop() in a statement of its own"),
])
def test_methods_no_object_has_are_compile_errors(body: str, message: str) -> None:
    # Caught when the model is compiled, not as a runtime error in the middle of a search.
    src = f"from movers.lang import *\nm = Lock()\ndef w():\n{body}\nl = [0]\nThread(target=w).start()\n"
    r = movers.check(source=src)
    assert r.verdict == "error" and message in r.error, r.error


def test_a_method_the_model_defines_is_no_error() -> None:
    src = ("from movers.lang import *\nclass Box:\n    def __init__(self):\n        self.v = 0\n"
           "    def append(self, x):\n        self.v = x\nb = Box()\ndef w():\n    b.append(1)\n"
           "Thread(target=w).start()\n")
    assert movers.check(source=src).verdict == "ok"


def test_join_at_module_level_is_the_main_thread() -> None:
    # The module's code is the main thread: after its start(), its join waits for the thread, as in CPython.
    src = "from movers.lang import *\ndef w():\n    pass\nt = Thread(target=w)\nt.start()\nt.join()\n"
    assert movers.check(source=src).verdict == "ok"


def test_blocking_before_any_start_is_an_error() -> None:
    src = "from movers.lang import *\nm = Lock()\nm.acquire()\nm.acquire()\n"
    r = movers.check(source=src)
    assert r.verdict == "violation" and r.violations[0].kind == "runtime-error"
    assert "line 4" in r.violations[0].message and "no thread has been started yet" in r.violations[0].message


def test_every_refusal_in_one_run_in_line_order(tmp_path):
    """A user porting a program learns every refused construct at once, not one per run."""
    src = ("x = 0\n"
           "class C:\n"
           "    def __len__(self):\n"
           "        return 0\n"
           "def f():\n"
           "    global x\n"
           "    x = 1.5\n"
           "    x = 2j\n"
           "    x = 2\n"
           "def g():\n"
           "    y = x @ x\n"
           "Thread(target=f).start()\n")
    rc, out, err = cli(tmp_path, src)
    assert rc == 2 and "Traceback" not in err
    lines = err.strip().splitlines()
    assert [ln.split(": ")[0].split(":", 1)[1] for ln in lines] == ["3:5", "7:9", "8:9", "11:9"], err
    assert "special method '__len__'" in lines[0] and "1.5" in lines[1]
    with pytest.raises(ModelSyntaxError) as e:
        compile_model(src)
    assert [(x.line, x.col) for x in e.value.all] == [(3, 5), (7, 9), (8, 9), (11, 9)]


def test_at_most_twenty_refusals_then_a_count(tmp_path):
    body = "".join(f"    y{i} = {i}.5\n" for i in range(30))
    rc, _, err = cli(tmp_path, f"def f():\n{body}Thread(target=f).start()\n")
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 21, err
    assert lines[-1].endswith(":22:11: more errors from here on not shown (movers stops after 20)")
    assert lines[0].startswith(f"{tmp_path / 'model.py'}:2:10:")
