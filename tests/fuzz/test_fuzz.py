"""The fuzz campaign in CI: a hundred inputs of a fixed seed, failing on any breach of the contract.

The long campaign is run by hand (``PYTHONPATH=src python -m tests.fuzz --seed S --count 3000``); this one keeps the
harness and the oracle honest (they can fail: see the oracle tests below) and catches regressions early.
"""

from __future__ import annotations

import ast
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import movers

from .campaign import CANARY_DIR, campaign
from .cases import HTML, TRAIL, Case, make_case
from .corpus import ROOT, seeds
from .hostile import MARKUP, TAG, TRAIL_MUTATIONS, inject, mutate_trail
from .mutate import CANARIES, Names, mutate_model
from .oracle import Outcome, html_problem, judge

CI_SEED = 20240607
# Small enough for CI (well under a minute on two busy cores); the big campaigns are run by hand (__init__.py).
CI_COUNT = 100


def _case(argv: list[str], **kw: object) -> Case:
    return Case(0, 0, "model", argv, {"model.py": b"x = 0\n"}, time_limit=1.0, **kw)  # type: ignore[arg-type]


def _outcome(code: int | None, stdout: str = "", stderr: str = "", **kw: object) -> Outcome:
    base: dict = {"signal": None, "wall": 0.1, "killed": False, "canary_fired": False}
    extra = {k: kw.pop(k) for k in ("files", "pre_codes", "sequential_code", "leaked", "budget") if k in kw}
    base.update(kw)
    return Outcome(code, base["signal"], base["wall"], base["killed"], base["canary_fired"],
                   stdout.encode(), stderr.encode(), **extra)


CHECK_JSON = ["check", "model.py", "--json", "--time-limit", "1", "--max-states", "10"]
# A real object of movers check --json (it must validate against docs/result.schema.json).
OK = movers.check(source="x = 0\n").to_json()
OK_JSON = json.dumps(OK) + "\n"
OVER_LIMIT = json.dumps({**OK, "verdict": "incomplete", "limit": "max-states", "stats": {**OK["stats"], "states": 11}})
PAGE = "<!DOCTYPE html>\n<html><head><title>t</title></head><body><p>&lt;i&gt;fzhtml&lt;/i&gt;<br></p></body></html>\n"


def test_the_oracle_accepts_a_run_that_keeps_the_contract() -> None:
    assert judge(_case(CHECK_JSON), _outcome(0, OK_JSON)) == []
    assert judge(_case(["check", "model.py", "--json", "--time-limit", "-1"]),
                 _outcome(2, "", "movers: error: --time-limit must be positive\n")) == []


@pytest.mark.parametrize(("case_argv", "outcome", "category"), [
    (CHECK_JSON, _outcome(1, "", 'Traceback (most recent call last):\n  File "/x/src/movers/cli.py", line 3, in '
                              "main\nValueError: boom\n"), "traceback"),
    (CHECK_JSON, _outcome(4, '{"verdict": "error", "error": "internal"}'), "exit-code"),
    (CHECK_JSON, _outcome(None, signal=9), "exit-code"),
    (CHECK_JSON, _outcome(0, OK_JSON + OK_JSON), "json"),
    (CHECK_JSON, _outcome(1, OK_JSON), "json"),
    (CHECK_JSON, _outcome(0, ""), "json"),
    (CHECK_JSON, _outcome(3, OVER_LIMIT), "other"),
    (CHECK_JSON, _outcome(0, json.dumps({**OK, "stats": {"states": "2"}})), "json"),
    (CHECK_JSON, _outcome(0, json.dumps({k: v for k, v in OK.items() if k != "tool"})), "json"),
    (["check", "model.py"], _outcome(1, "violation found\nassertion: \x1b[2Jboom\n"), "control"),
    (["check", "model.py"], _outcome(1, "violation found\n", "movers: model\x07.py: error\n"), "control"),
    (["check", "model.py"], _outcome(1, "violation found\nassertion: fzmk\n"), "markup"),
    (["check", "model.py", "--format", "junit"], _outcome(1, "<testsuites><testsuite>"), "format"),
    (["check", "model.py", "--format", "junit"], _outcome(1, f"<testsuites>{TAG}</testsuites>"), "markup"),
    (["check", "model.py", "--format", "sarif"], _outcome(1, '{"version": "2.0"}'), "format"),
    (["check", "model.py", "--store", "bitstate", "--bits", "8"],
     _outcome(0, "verified: no violation in any interleaving  (none reduction)\n"), "lossy"),
    (["check", "model.py", "--store", "bitstate", "--bits", "8"],
     _outcome(0, "verified: no violation in the states reached\nstore: bitstate, expected coverage 98.68% (…)\n"),
     "lossy"),
    (["check", "model.py", "--store", "hashcompact"],
     _outcome(0, "verified: no violation in any interleaving  (none reduction)\n"), "lossy"),
    (["check", "model.py", "--store", "bitstate", "--json"],
     _outcome(0, json.dumps({**OK, "store": {"kind": "bitstate", "bits": 8, "hashes": 3, "hash_factor": 6.7,
                                             "expected_coverage": 0.9868}})), "lossy"),
    (["check", "model.py"], _outcome(0, "verified: no violation in any interleaving\n", leaked=2), "workers"),

    (CHECK_JSON, _outcome(0, OK_JSON, wall=60.0), "hang"),
    (CHECK_JSON, _outcome(0, OK_JSON, canary_fired=True), "canary"),
    (["check", "model.py"], _outcome(2, "", "model.py:0:1: unsupported construct\n"), "other"),
    (["check", "model.py"], _outcome(0, "violation found\n"), "other"),
])
def test_the_oracle_rejects_each_breach(case_argv: list[str], outcome: Outcome, category: str) -> None:
    found = judge(_case(case_argv), outcome)
    assert category in {f.category for f in found}, found


def test_the_oracle_accepts_the_new_surfaces_when_they_keep_the_contract() -> None:
    html = _case(["check", "model.py", "--html", HTML], outputs=[HTML])
    assert html_problem(PAGE.encode()) is None
    assert judge(html, _outcome(1, "violation found\n", files={HTML: PAGE.encode()})) == []
    lossy = _case(["check", "model.py", "--store", "bitstate", "--bits", "8"])
    assert judge(lossy, _outcome(3, "incomplete: the expected coverage is below 99.9%\n"
                                    "store: bitstate, expected coverage 98.68%\n")) == []
    assert judge(_case(["check", "model.py"]), _outcome(1, f"violation found\nassertion: {MARKUP}\n")) == []
    trail = _case(["check", "model.py", "--trail", TRAIL], outputs=[TRAIL])
    assert judge(trail, _outcome(1, "violation found\n", files={TRAIL: b'{"movers_trail": 1, "steps": []}'})) == []
    replay = _case(["replay", "model.py", TRAIL], pre=[["check", "model.py", "--trail", TRAIL]], trail_mutation="none")
    assert judge(replay, _outcome(1, "replayed: the violation happens again\n", pre_codes=[1])) == []


@pytest.mark.parametrize(("case_kw", "outcome", "category"), [
    ({"argv": ["check", "model.py", "--html", HTML], "outputs": [HTML]},
     _outcome(1, "violation found\n", files={HTML: b"<!DOCTYPE html><html><body><div></body></html>"}), "html"),
    ({"argv": ["check", "model.py", "--html", HTML], "outputs": [HTML]},
     _outcome(1, "violation found\n", files={HTML: PAGE.replace("&lt;i&gt;fzhtml&lt;/i&gt;", TAG).encode()}),
     "markup"),
    ({"argv": ["check", "model.py", "--html", HTML], "outputs": [HTML]},
     _outcome(1, "violation found\n", files={HTML: PAGE.replace("<p>", "<p>\x1b[2J").encode()}), "control"),
    ({"argv": ["check", "model.py", "--html", HTML], "outputs": [HTML]},
     _outcome(0, "verified: no violation in any interleaving\n", files={HTML: None}), "html"),
    ({"argv": ["check", "model.py", "--trail", TRAIL], "outputs": [TRAIL]},
     _outcome(1, "violation found\n", files={TRAIL: None}), "trail"),
    ({"argv": ["check", "model.py", "--trail", TRAIL], "outputs": [TRAIL]},
     _outcome(0, "verified: no violation in any interleaving\n", files={TRAIL: b"{}"}), "trail"),
    ({"argv": ["replay", "model.py", TRAIL], "pre": [["check", "model.py", "--trail", TRAIL]],
      "trail_mutation": "none"}, _outcome(0, "replayed: the violation no longer happens\n", pre_codes=[1]), "trail"),
    ({"argv": ["check", "model.py", "--workers", "2"], "sequential_argv": ["check", "model.py"]},
     _outcome(0, "verified: no violation in any interleaving\n", sequential_code=1), "workers"),
])
def test_the_oracle_rejects_each_breach_of_the_new_surfaces(case_kw: dict, outcome: Outcome, category: str) -> None:
    argv = case_kw.pop("argv")
    found = judge(_case(argv, **case_kw), outcome)
    assert category in {f.category for f in found}, found


def test_hostile_strings_reach_thread_names_and_messages() -> None:
    rng = random.Random(3)
    for s in seeds()[:10]:
        text, op = inject(s.source, rng)
        tree = ast.parse(text)  # still Python
        assert "fz_hostile" in text or "name=" in text or "assert" in op, op
        assert any(isinstance(n, ast.Assert) and n.msg is not None for n in ast.walk(tree)) or "thread" in op


def test_trail_mutations_are_deterministic_and_keep_a_pristine_trail() -> None:
    trail = json.dumps({"movers_trail": 1, "model": "model.py", "steps": [[0, []], [1, [1]]]}).encode()
    assert mutate_trail(trail, random.Random(0), "none")[0] == trail
    for how in TRAIL_MUTATIONS:
        a = mutate_trail(trail, random.Random(f"t/{how}"), how)
        assert a == mutate_trail(trail, random.Random(f"t/{how}"), how), how
        if how not in ("none", "dir", "unknown-keys"):
            assert a[0] != trail, how


def test_a_busy_machine_stretches_the_slack_not_the_time_limit() -> None:
    """At load 15 on 2 cores a run's start and compilation take several times longer: the campaign gives it
    the budget of that load, and the oracle judges the run by the budget it was given."""
    case = _case(CHECK_JSON)
    assert case.budget() == case.budget(1.0) < case.budget(7.5)
    assert case.budget(7.5) - case.budget() == pytest.approx(6.5 * (5.0 + 1.5))
    slow = _outcome(0, '{"verdict": "ok"}', wall=case.budget() + 3)
    assert "hang" in {f.category for f in judge(case, slow)}
    given = _outcome(0, '{"verdict": "ok"}', wall=case.budget() + 3, budget=case.budget(7.5))
    assert "hang" not in {f.category for f in judge(case, given)}


def test_a_closed_stdout_must_not_hide_a_violation() -> None:
    out = _outcome(0)
    out.reference_code = 1
    assert {f.category for f in judge(_case(CHECK_JSON, stdout="broken", mode="proc"), out)} == {"other"}


def test_the_generator_is_deterministic() -> None:
    a = [make_case(5, i, CANARY_DIR) for i in range(40)]
    b = [make_case(5, i, CANARY_DIR) for i in range(40)]
    assert [c.to_dict() for c in a] == [c.to_dict() for c in b]
    assert len({c.files.get("model.py") for c in a}) > 30


def test_mutations_reach_every_seed_and_keep_int_digit_limit() -> None:
    limit = sys.get_int_max_str_digits()
    rng = random.Random(1)
    for s in seeds():
        # A draw may leave a small model unchanged (no applicable mutation): a few draws must not.
        for _ in range(5):
            data, ops = mutate_model(s.source, rng, None)
            if ops:
                break
        assert isinstance(data, bytes) and ops, s
    assert sys.get_int_max_str_digits() == limit


@pytest.mark.parametrize("template", [c for c in CANARIES if "\n" not in c and "@g@" not in c and "@f@" not in c
                                      and "invariant" not in c and "lambda" not in c][:6])
def test_the_canary_fires_when_python_executes_the_model(template: str, tmp_path: Path) -> None:
    """The canary is only worth checking if it would fire: run a canary-bearing model under CPython."""
    target = tmp_path / "canary"
    text = Names(ast.parse("x = 0")).fill(template, random.Random(0), str(target))
    model = tmp_path / "m.py"
    model.write_text(f"from movers.lang import *\n{text}\n")
    subprocess.run([sys.executable, str(model)], cwd=tmp_path, capture_output=True, timeout=60,
                   env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert target.exists()


def test_fuzz_campaign(tmp_path: Path) -> None:
    """CI_COUNT inputs of CI_SEED: no traceback, no hang, no exit code outside 0-3, valid JSON, no canary."""
    totals = campaign(CI_SEED, CI_COUNT, 2, tmp_path)
    print(totals.table())
    assert not totals.late_canaries, f"canaries fired after their runs: {totals.late_canaries}"
    if totals.signatures:
        report = []
        for sig, recs in totals.signatures.items():
            r = recs[0]
            model = next(iter(r.case.files.values()), b"").decode("utf-8", "replace")
            argv = " ".join(r.case.argv).encode("utf-8", "backslashreplace").decode()  # hostile file names
            report.append(f"{sig}  ({totals.counts[sig]} inputs)\n  replay: python -m tests.fuzz --seed "
                          f"{r.case.seed} --index {r.case.index}\n  movers {argv}\n  "
                          f"origin: {r.case.origin}\n  model (first lines):\n    "
                          + "\n    ".join(model.splitlines()[:15]))
        pytest.fail(f"{len(totals.signatures)} distinct contract failures\n{totals.table()}\n\n"
                    + "\n\n".join(report), pytrace=False)
