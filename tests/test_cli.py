"""The command line and the --json contract of docs/cli.md (issue items 6 and 8)."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest
from conftest import EXAMPLES

SC = str(EXAMPLES / "sc_example.py")


def movers_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "movers.cli", *args], capture_output=True, text=True,
                          timeout=120)


def test_sc_example_has_106_states_json() -> None:
    p = movers_cli("check", SC, "--reduction", "none", "--json", "--granularity", "statement")
    assert p.returncode == 0
    d = json.loads(p.stdout)
    assert set(d) == {"verdict", "reduction", "stats", "violations", "error", "store", "symmetry", "model", "search",
                      "granularity", "notes", "tool", "schema"}
    assert d["granularity"] == "statement"
    assert d["store"] == {"kind": "exact"}
    assert set(d["stats"]) == {"states", "transitions", "max_depth", "seconds", "peak_memory_mb"}
    assert d["verdict"] == "ok" and d["reduction"] == "none" and d["error"] is None
    assert d["stats"]["states"] == 106
    assert d["violations"] == []


def test_violation_json_has_step_trace() -> None:
    p = movers_cli("check", str(EXAMPLES / "racy_counter.py"), "--json")
    assert p.returncode == 1
    d = json.loads(p.stdout)
    v = d["violations"][0]
    assert d["verdict"] == "violation" and v["kind"] == "assertion"
    for step in v["trace"]:
        assert {"thread", "line", "source"} <= set(step)
        assert isinstance(step["thread"], int) and isinstance(step["line"], int)


def test_text_output_shows_trace_table() -> None:
    p = movers_cli("check", str(EXAMPLES / "dining_philosophers.py"), "--search", "bfs")
    assert p.returncode == 1
    assert "deadlock" in p.stdout and "counterexample: 9 steps" in p.stdout
    assert "forks[0].owner = 0" in p.stdout.replace("\n", " ") or "forks[0].owner" in p.stdout
    assert "Traceback" not in p.stderr


def test_ok_text_output_and_exit_code() -> None:
    p = movers_cli("check", SC, "--quiet", "--granularity", "statement")
    assert p.returncode == 0
    assert "verified" in p.stdout and "106 states" in p.stdout


def test_incomplete_exit_code_3() -> None:
    p = movers_cli("check", str(EXAMPLES / "counter_bench.py"), "--max-states", "50", "--json")
    assert p.returncode == 3
    d = json.loads(p.stdout)
    assert d["verdict"] == "incomplete" and d["stats"]["states"] == 50


def test_compare_rows() -> None:
    p = movers_cli("compare", SC, "--json", "--granularity", "statement")
    assert p.returncode == 0
    rows = json.loads(p.stdout)
    assert rows[0]["reduction"] == "none" and rows[0]["ratio"] == 1.0
    p = movers_cli("compare", SC, "--granularity", "statement")
    assert "none" in p.stdout and "106" in p.stdout


def test_console_script_entry_point() -> None:
    import shutil

    exe = shutil.which("movers")
    if exe is None:
        return  # not installed as a script in this environment; `python -m movers.cli` is tested above
    p = subprocess.run([exe, "check", SC, "--json", "--granularity", "statement"], capture_output=True, text=True,
                       timeout=60)
    assert json.loads(p.stdout)["stats"]["states"] == 106


def test_ctrl_c_stops_with_statistics(tmp_path) -> None:
    import signal
    import time

    model = tmp_path / "big.py"
    model.write_text((EXAMPLES / "counter_bench.py").read_text().replace("L = 4", "L = 60"))
    p = subprocess.Popen([sys.executable, "-m", "movers.cli", "check", str(model), "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 3, err
    d = json.loads(out)
    assert d["verdict"] == "incomplete" and d["stats"]["states"] > 0
    assert "Traceback" not in err


# -- issue 7: the model argument, shortest counterexamples, internal errors, output that cannot be written -----

RACY = EXAMPLES / "racy_counter.py"


def test_model_argument_is_always_a_path(tmp_path) -> None:
    """`movers check pass` reads the file named pass; `True` and "" name no file: never source text."""
    (tmp_path / "pass").write_text(RACY.read_text())
    p = subprocess.run([sys.executable, "-m", "movers.cli", "check", "pass", "--json"], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 1 and json.loads(p.stdout)["verdict"] == "violation"
    p = subprocess.run([sys.executable, "-m", "movers.cli", "check", "True"], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path)
    assert p.returncode == 2 and "True: cannot read the model" in p.stderr and "verified" not in p.stdout
    for cmd in ("check", "compare"):
        p = movers_cli(cmd, "")
        assert p.returncode == 2 and "the model path is empty" in p.stderr and "verified" not in p.stdout


def test_api_model_rule_is_explicit(tmp_path) -> None:
    import pathlib

    import movers

    (tmp_path / "pass").write_text(RACY.read_text())
    assert movers.check(str(tmp_path / "pass")).verdict == "violation"  # no newline: a path
    assert movers.check(pathlib.Path(tmp_path / "pass")).verdict == "violation"
    r = movers.check("True")
    assert r.verdict == "error" and "cannot read the model" in r.error
    assert movers.check("").verdict == "error"
    assert movers.check(source="x = 0").verdict == "ok"  # source= is source text, even on one line
    assert movers.check("x = 0\n").verdict == "ok"  # a newline: source text
    assert movers.check(str(tmp_path / "pass"), source="x = 0\n").verdict == "error"


def test_bfs_reports_a_one_step_deadlock_before_a_two_step_assertion(tmp_path) -> None:
    """Thread 0's assertion fails after 2 steps and is generated first; thread 1's first step deadlocks
    both threads. Breadth-first search must report the deadlock, 1 step long."""
    import movers

    src = ("go = 0\n\ndef a():\n    wait_until(go == 0)\n    assert go == 5, 'two steps'\n\n"
           "def b():\n    global go\n    go = 1\n    wait_until(False)\n\n"
           "Thread(target=a).start()\nThread(target=b).start()\n")
    r = movers.check(source=src, search="bfs")
    v = r.violations[0]
    assert r.verdict == "violation" and v.kind == "deadlock" and len(v.trace) == 1, (v.kind, len(v.trace))
    f = tmp_path / "m.py"
    f.write_text(src)
    p = movers_cli("check", str(f), "--search", "bfs", "--json")
    d = json.loads(p.stdout)
    assert p.returncode == 1 and d["violations"][0]["kind"] == "deadlock" and len(d["violations"][0]["trace"]) == 1


def test_compare_needs_a_reduction() -> None:
    for value in ("", ",", " , ,"):
        p = movers_cli("compare", SC, f"--reductions={value}")
        assert p.returncode == 2 and "--reductions names no reduction" in p.stderr, p.stderr


def test_incomplete_json_says_which_limit() -> None:
    p = movers_cli("check", str(EXAMPLES / "counter_bench.py"), "--max-states", "50", "--json")
    d = json.loads(p.stdout)
    assert p.returncode == 3 and d["limit"] == "max-states"
    p = movers_cli("check", SC, "--json", "--granularity", "statement")
    assert "limit" not in json.loads(p.stdout)  # the object of docs/cli.md, unchanged for complete runs


@pytest.mark.parametrize("json_flag", [True, False])
def test_internal_error_exit_4(monkeypatch, capsys, json_flag: bool) -> None:
    import movers.checker
    from movers.cli import main

    def broken(*args, **kw):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(movers.checker, "check", broken)
    monkeypatch.delenv("MOVERS_DEBUG", raising=False)
    code = main(["check", SC, *(["--json"] if json_flag else [])])
    out, err = capsys.readouterr()
    assert code == 4
    assert "internal error (a bug in movers" in err and "ZeroDivisionError: a bug" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    if json_flag:
        d = json.loads(out)
        assert d["verdict"] == "error" and "a bug" in d["error"] and "stats" in d
    monkeypatch.setenv("MOVERS_DEBUG", "1")
    assert main(["check", SC]) == 4
    assert "Traceback" in capsys.readouterr().err


def test_a_ctrl_c_wrapped_by_python_is_a_stop_not_a_bug(monkeypatch, capsys) -> None:
    """Found by the fuzz campaign: a Ctrl-C while a module is imported is raised inside a class's
    ``__set_name__``, which Python wraps in a RuntimeError; that is still exit 3, not an internal error."""
    import movers.checker
    from movers.cli import main

    def interrupted_import(*args, **kw):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as e:
            raise RuntimeError("Error calling __set_name__ on 'Field' instance") from e

    monkeypatch.setattr(movers.checker, "check", interrupted_import)
    assert main(["check", SC, "--json"]) == 3
    out, err = capsys.readouterr()
    assert json.loads(out)["limit"] == "interrupted" and "internal error" not in err


def test_compare_json_stopped_before_any_row_is_still_a_table(monkeypatch, capsys) -> None:
    """``compare --json`` always prints an array, even when stopped before its first row."""
    import movers.cli

    def stop(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(movers.cli, "_compare", stop)
    assert movers.cli.main(["compare", SC, "--json"]) == 3
    rows = json.loads(capsys.readouterr().out)
    assert isinstance(rows, list) and rows[0]["verdict"] == "incomplete" and rows[0]["limit"] == "interrupted"


def test_closed_pipe_keeps_the_violation_exit_code() -> None:
    for reader in ("true", "head -c 10"):
        p = subprocess.run(f"{sys.executable} -m movers.cli check {RACY} --json | {reader}; "
                           "exit ${PIPESTATUS[0]}", shell=True, executable="/bin/bash", capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 1, (reader, p.returncode, p.stderr)
        assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr
    p = subprocess.run(f"{sys.executable} -m movers.cli compare {RACY} | head -c 10; exit ${{PIPESTATUS[0]}}",
                       shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr


@pytest.mark.parametrize("unbuffered", ["1", ""])
@pytest.mark.parametrize("json_flag", ["--json", "--quiet"])
def test_full_disk_and_closed_stdout_keep_the_exit_code(unbuffered: str, json_flag: str) -> None:
    import os

    env = dict(os.environ, PYTHONUNBUFFERED=unbuffered)
    if not unbuffered:
        del env["PYTHONUNBUFFERED"]
    for redirect in (">/dev/full", ">&-"):
        p = subprocess.run(f"{sys.executable} -m movers.cli check {RACY} {json_flag} {redirect}", shell=True,
                           capture_output=False, stderr=subprocess.PIPE, text=True, timeout=120, env=env)
        assert p.returncode == 1, (redirect, p.returncode, p.stderr)
        assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
        if redirect == ">/dev/full":
            assert "cannot write the report" in p.stderr


def test_progress_lines_in_a_log(monkeypatch, capsys) -> None:
    # stderr is not a terminal (a log, CI): a plain line every LOG_EVERY seconds (made 0 here); --quiet: none.
    from movers import cli
    from movers.search.explore import Search

    monkeypatch.setattr(cli, "LOG_EVERY", 0.0)
    monkeypatch.setattr(Search, "PROGRESS_EVERY", 0.0)
    monkeypatch.setattr(Search, "CHECK_EVERY", 64)
    model = str(EXAMPLES / "counter_bench.py")
    assert cli.main(["check", model]) == 0
    err = capsys.readouterr().err
    assert "movers: " in err and " states/s, " in err and " MB" in err
    assert cli.main(["check", model, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_compare_shows_rows_as_they_finish_and_marks_ratios_to_incomplete_rows(tmp_path, capsys) -> None:
    from movers.cli import main

    model = str(EXAMPLES / "dwyer_readers_writers.py")
    assert main(["compare", model, "--reductions", "none,optimistic"]) == 0
    err = capsys.readouterr().err
    assert "movers compare: none: ok, 6,696 states" in err and "(2 of 2)" in err
    main(["compare", model, "--reductions", "none,optimistic", "--max-states", "500"])
    assert "(incomplete)" in capsys.readouterr().out
    # A model that does not compile: the same shape as a comparison, a list of rows.
    bad = tmp_path / "bad.py"
    bad.write_text("x = \n")
    assert main(["compare", str(bad), "--json"]) == 2
    rows = json.loads(capsys.readouterr().out)
    assert isinstance(rows, list) and rows[0]["verdict"] == "error" and "bad.py:1" in rows[0]["error"]


@pytest.mark.parametrize("words, fmt", [(["check", "m.py", "--json"], "json"),
                                        (["check", "m.py", "--format", "json"], "json"),
                                        (["check", "m.py", "--format=sarif"], "sarif"),
                                        (["check", "m.py", "--format", "junit"], "junit"), (["check", "m.py"], "text")])
def test_a_stop_before_the_command_line_is_parsed_reports_in_the_format_asked_for(
        words: list[str], fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Ctrl-C while movers starts up once printed text under --format json or sarif (found by the fuzz campaign).
    import xml.etree.ElementTree as ET

    from movers.cli import _early_format, _stopped_early

    assert _early_format(words) == fmt
    assert _stopped_early("interrupted", _early_format(words), None) == 3
    out = capsys.readouterr().out
    if fmt == "json":
        assert json.loads(out)["limit"] == "interrupted"
    elif fmt == "sarif":
        assert json.loads(out)["version"] == "2.1.0"
    elif fmt == "junit":
        assert ET.fromstring(out).find("testcase/skipped") is not None
    else:
        assert out.startswith("incomplete: interrupted")


def test_a_lone_surrogate_in_a_model_string_does_not_break_the_html_report(tmp_path: pathlib.Path) -> None:
    # Found by the fuzz campaign: a thread named "\ud800" (a valid literal, not a character) made --html exit 4.
    from movers.cli import main

    model = tmp_path / "m.py"
    model.write_text('from movers.lang import *\nx = 0\ndef w():\n    global x\n    x = 1\n'
                     '    assert x == 0, "\\ud800"\nThread(target=w, name="a\\ud800").start()\n')
    page = tmp_path / "r.html"
    code = main(["check", str(model), "--html", str(page), "--quiet"])
    assert code == 1
    assert "\\ud800" in page.read_text(encoding="utf-8")
