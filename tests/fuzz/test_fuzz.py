"""The fuzz campaign in CI: a few hundred inputs of a fixed seed, failing on any breach of the contract.

The long campaign is run by hand (``python -m tests.fuzz --seed S --count 10000``); this one keeps the
harness and the oracle honest (they can fail: see the oracle tests below) and catches regressions early.
"""

from __future__ import annotations

import ast
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from .campaign import CANARY_DIR, campaign
from .cases import Case, make_case
from .corpus import ROOT, seeds
from .mutate import CANARIES, Names, mutate_model
from .oracle import Outcome, judge

CI_SEED = 20240607
CI_COUNT = 250


def _case(argv: list[str], **kw: object) -> Case:
    return Case(0, 0, "model", argv, {"model.py": b"x = 0\n"}, time_limit=1.0, **kw)  # type: ignore[arg-type]


def _outcome(code: int | None, stdout: str = "", stderr: str = "", **kw: object) -> Outcome:
    base = {"signal": None, "wall": 0.1, "killed": False, "canary_fired": False}
    base.update(kw)
    return Outcome(code, base["signal"], base["wall"], base["killed"], base["canary_fired"],  # type: ignore[arg-type]
                   stdout.encode(), stderr.encode())


CHECK_JSON = ["check", "model.py", "--json", "--time-limit", "1", "--max-states", "10"]
OK_JSON = '{"verdict": "ok", "reduction": "none", "stats": {"states": 2}, "violations": [], "error": null}\n'


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
    (CHECK_JSON, _outcome(3, OK_JSON.replace('"ok"', '"incomplete"').replace("2}", "11}")), "other"),
    (CHECK_JSON, _outcome(0, OK_JSON, wall=60.0), "hang"),
    (CHECK_JSON, _outcome(0, OK_JSON, canary_fired=True), "canary"),
    (["check", "model.py"], _outcome(2, "", "model.py:0:1: unsupported construct\n"), "other"),
    (["check", "model.py"], _outcome(0, "violation found\n"), "other"),
])
def test_the_oracle_rejects_each_breach(case_argv: list[str], outcome: Outcome, category: str) -> None:
    found = judge(_case(case_argv), outcome)
    assert category in {f.category for f in found}, found


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
            report.append(f"{sig}  ({totals.counts[sig]} inputs)\n  replay: python -m tests.fuzz --seed "
                          f"{r.case.seed} --index {r.case.index}\n  movers {' '.join(r.case.argv)}\n  "
                          f"origin: {r.case.origin}\n  model (first lines):\n    "
                          + "\n    ".join(model.splitlines()[:15]))
        pytest.fail(f"{len(totals.signatures)} distinct contract failures\n{totals.table()}\n\n"
                    + "\n\n".join(report), pytrace=False)
