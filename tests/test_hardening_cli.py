"""Hardening II (issue 21, items 13 and 15): every refusal of the command line says ``movers: error:``; the
files a command writes never overwrite the files it reads; a model too large to parse within --max-memory is
refused before the parser starts; a lone surrogate is a model error; a step stopped at movers' bound names
the bound; ``peak_memory_mb`` is this process's peak during the run."""

from __future__ import annotations

import argparse
import itertools
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES

import movers
from movers.cli import _parser, main
from movers.lang.errors import ModelSyntaxError

RACY = str(EXAMPLES / "racy_counter.py")
ATOMIC = str(EXAMPLES / "atomicity_bluetooth.py")


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's refusals
        code = e.code if isinstance(e.code, int) else 2
    return code, capsys.readouterr().err


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(argv, capsys)
    assert code == 2, (argv, code, err)
    assert any(line.startswith("movers: error: ") for line in err.splitlines()), (argv, err)
    assert "Traceback" not in err and "internal error" not in err, (argv, err)


def _bad_values(action: argparse.Action) -> list[str]:
    """Values that ``action`` must refuse."""
    if action.choices is not None:
        return ["bogus", ""]
    if action.type is int:
        return ["x", "1.5", "", "0x"]
    if action.type is float:
        return ["x", "", "1e"]
    if callable(action.type):  # --reduction
        return ["bogus", ""]
    return []


def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _positionals(command: str, tmp_path: Path) -> list[str]:
    if command != "replay":
        return [RACY]
    trail = tmp_path / "t.trail"
    if not trail.exists():
        assert main(["check", RACY, "--trail", str(trail), "--quiet"]) == 1
    return [RACY, str(trail)]


def test_every_bad_option_value_says_movers_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tried = 0
    for command, parser in _commands().items():
        head = [command, *_positionals(command, tmp_path)]
        capsys.readouterr()
        for action in parser._actions:
            if not action.option_strings or action.nargs == 0 or isinstance(action, argparse._HelpAction):
                continue
            option = action.option_strings[0]
            for value in _bad_values(action):
                _refused([*head, option, value], capsys)
                tried += 1
            if action.nargs is None:  # an option that needs a value, given none
                _refused([*head, option], capsys)
                tried += 1
            if action.type in (int, float) and option not in ("--bits",):
                for value in ("0", "-1") + (("nan", "inf") if action.type is float else ()):
                    _refused([*head, option, value], capsys)
                    tried += 1
        _refused([*head, "--bogus"], capsys)
        _refused([command], capsys)  # no model
        _refused([command, ""] + head[2:], capsys)  # an empty model path
        tried += 3
    _refused(["frobnicate"], capsys)
    _refused([], capsys)
    assert tried > 80


# Options that some combinations refuse (the checker's options_problem), and the model refuses others.
SETTINGS = [["--workers", "2"], ["--search", "bfs"], ["--symmetry", "threads"], ["--store", "bitstate"],
            ["--store", "hashcompact"], ["--atomicity", "commit"], ["--atomicity", "reduction"],
            ["--reduction", "transactions"], ["--reduction", "static-por"], ["--all-violations"],
            ["--max-depth", "3"], ["--bits", "99"], ["--workers", "0"], ["--max-violations", "0"]]


def test_every_refused_combination_says_movers_error(capsys: pytest.CaptureFixture[str]) -> None:
    refused = 0
    for model in (RACY, ATOMIC):
        for a, b in itertools.combinations(SETTINGS, 2):
            argv = ["check", model, *a, *b, "--quiet", "--max-states", "2000"]
            if "--workers" in argv and "hashcompact" in argv and "0" not in argv:
                continue  # the parallel search's hashcompact report is another item's (KeyError in the text report)
            code, err = _run(argv, capsys)
            assert code in (0, 1, 2, 3), (argv, code, err)
            if code == 2:
                _refused(argv, capsys)
                refused += 1
            else:
                assert "error" not in err, (argv, err)
    assert refused > 60
    # Refusals that depend on the model: found once it is compiled, said the same way (and in the JSON).
    _refused(["check", RACY, "--atomicity", "commit"], capsys)
    _refused(["check", str(EXAMPLES / "sc_example.py"), "--reduction", "transactions"], capsys)
    code, err = _run(["check", RACY, "--atomicity", "commit", "--json"], capsys)
    assert code == 2 and err.startswith("movers: error: --atomicity commit: the model has no")


def test_outputs_never_overwrite_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.py"
    text = Path(RACY).read_text()
    model.write_text(text)
    trail = tmp_path / "t.trail"
    assert main(["check", str(model), "--trail", str(trail), "--quiet"]) == 1
    trail_text = trail.read_text()
    capsys.readouterr()
    same = str(tmp_path / "." / "m.py")  # the same file by another name
    for argv, why in (
            (["check", str(model), "--trail", str(model)], "is the model, which it would overwrite"),
            (["check", str(model), "--html", same], "is the model, which it would overwrite"),
            (["check", str(model), "--trail", ""], "--trail: the path is empty"),
            (["check", str(model), "--html", ""], "--html: the path is empty"),
            (["check", str(model), "--trail", "x.out", "--html", "x.out"], "name the same file"),
            (["replay", str(model), str(trail), "--html", str(trail)], "is the trail, which it would overwrite"),
            (["replay", str(model), str(trail), "--html", str(model)], "is the model, which it would overwrite"),
            (["replay", str(model), str(trail), "--html", ""], "--html: the path is empty"),
            (["compare", str(model), "--html", str(model)], "is the model, which it would overwrite"),
            (["compare", str(model), "--html", ""], "--html: the path is empty")):
        code, err = _run(argv, capsys)
        assert code == 2 and err.startswith("movers: error: ") and why in err, (argv, err)
    assert model.read_text() == text and trail.read_text() == trail_text
    assert not (tmp_path / "x.out").exists()


def test_a_lone_surrogate_is_a_model_error() -> None:
    r = movers.check(source="x = 0\ny = '\ud800'\n")
    assert r.verdict == "error"
    assert r.error == ("<model>:2:6: the model contains a lone surrogate (U+D800), which is not a character: it "
                       "cannot be encoded as UTF-8")
    with pytest.raises(ModelSyntaxError, match="lone surrogate"):
        movers.load(source="# \udcff\n")


def test_a_long_finite_loop_in_one_step_names_the_bound() -> None:
    src = ("from movers.lang import *\nx = 0\ndef worker():\n    global x\n    with indivisible():\n"
           "        for i in range(50000):\n            x = x + 1\nThread(target=worker).start()\n")
    r = movers.check(source=src)
    assert r.verdict == "violation" and r.violations[0].kind == "runtime-error"
    assert r.violations[0].message.startswith(
        "the 'with indivisible():' block did not finish within 100,000 operations, movers' bound on one step "
        "(no option changes it)")
    spin = "from movers.lang import *\ndef worker():\n    while True:\n        pass\nThread(target=worker).start()\n"
    # At access granularity a loop of local work ends a step at its head each time round: the thread spins
    # for ever, as under CPython, and the search meets the repeated state.
    assert movers.check(source=spin).verdict == "ok"
    r = movers.check(source=spin, granularity="statement")
    assert "code that touches nothing shared (one step, as long as it does not) did not finish within 100,000 " \
        "operations" in r.violations[0].message
    r = movers.check(source="from movers.lang import *\nn = 0\nwhile True:\n    n = 1\n")
    assert "module initialisation did not finish within 10,000,000 operations" in r.violations[0].message


def test_a_model_too_large_to_parse_within_the_memory_limit_is_refused_first(tmp_path: Path) -> None:
    # 240,000 characters: the parser alone would need about 100 MB, over what --max-memory 80 leaves free.
    model = tmp_path / "big.py"
    model.write_text("from movers.lang import *\n" + "a = 1\n" * 40_000)
    p = subprocess.run([sys.executable, "-m", "movers.cli", "check", str(model), "--max-memory", "80"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.startswith(f"{model}:1:1: the model is too large to parse within --max-memory 80 MB: 240,026 "
                               "characters")
    assert "give more --max-memory, or split the model" in p.stderr
    # The API refuses it the same way, source text included.
    src = model.read_text()
    r = movers.check(source=src, max_memory=movers.search.limits.rss_mb() + 60)
    assert r.verdict == "error" and "too large to parse" in (r.error or "")


GROW_THEN_CHECK = """
import json, subprocess, sys
big = bytearray(300 * 2**20)
for i in range(0, len(big), 4096):
    big[i] = 1
p = subprocess.run([sys.executable, "-m", "movers.cli", "check", sys.argv[1], "--json"], capture_output=True,
                   text=True)
print(json.loads(p.stdout)["stats"]["peak_memory_mb"])
"""


def test_peak_memory_is_this_process_during_the_run() -> None:
    # Started by a process of 300 MB, the check's peak is its own (ru_maxrss said 300 MB and more).
    p = subprocess.run([sys.executable, "-c", GROW_THEN_CHECK, RACY], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert 0 < float(p.stdout) < 200
    # Within one process, the memory a caller used before the check is not the check's.
    big = bytearray(300 * 2**20)
    for i in range(0, len(big), 4096):
        big[i] = 1
    del big
    before = movers.search.limits.high_water_mb()
    r = movers.check(RACY)
    if before is not None:
        assert r.stats.peak_memory_mb < before - 200


def test_a_long_loop_of_local_work_is_one_step_at_access_granularity() -> None:
    # 300,000 rounds of local work (some 1.2 million operations) end where CPython ends them: at access
    # granularity glue outside `with indivisible():` cannot loop for ever (a local while loop ends a step at
    # its head), so only a much higher bound applies to it.
    src = ("from movers.lang import *\ntotal = 0\ndef work():\n    global total\n    s = 0\n"
           "    for i in range(300000):\n        s += i % 7\n    total = s\nThread(target=work).start()\n")
    r = movers.check(source=src)
    assert r.verdict == "ok" and r.stats.states == 3, (r.verdict, r.violations)
