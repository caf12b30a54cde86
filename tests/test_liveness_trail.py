"""Lasso trails: a liveness violation saved with ``--trail`` and replayed with ``movers replay``
(src/movers/trail.py, ``lasso_violation``). The replay runs the steps, then checks the lasso itself: the cycle
comes back to its first state (or is the stutter loop of a state where no thread can move), it is fair under
the trail's fairness, and it violates the trail's property. Where it no longer does (the fairness or the
model changed), the replay says the violation no longer happens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT
from test_liveness import LTL_MODEL

from movers.cli import main

EXAMPLES = ROOT / "examples"

LTL = LTL_MODEL.replace("FORMULA", "<> finished")


def _check_and_replay(model: Path, tmp_path: Path, *flags: str) -> tuple[dict[str, object], int]:
    trail = tmp_path / "t.trail"
    assert main(["check", str(model), *flags, "--trail", str(trail)]) == 1
    data = json.loads(trail.read_text())
    return data, main(["replay", str(model), str(trail)])


@pytest.mark.parametrize(("example", "prop", "fairness"), [
    ("liveness_spinlock.py", "starvation", "weak"), ("liveness_polite.py", "termination", "weak"),
    ("liveness_polite.py", "termination", "strong"), ("liveness_peterson.py", "termination", "none"),
    ("liveness_producer_consumer.py", "starvation", "strong")])
def test_a_lasso_replays(example: str, prop: str, fairness: str, tmp_path: Path) -> None:
    data, code = _check_and_replay(EXAMPLES / example, tmp_path, "--liveness", prop, "--fairness", fairness)
    assert data["kind"] == "liveness" and type(data["cycle_start"]) is int
    assert data["options"]["liveness"] == prop and data["options"]["fairness"] == fairness  # type: ignore[index]
    assert code == 1


def test_an_ltl_lasso_replays(tmp_path: Path) -> None:
    model = tmp_path / "m.py"
    model.write_text(LTL)
    data, code = _check_and_replay(model, tmp_path, "--liveness", "ltl", "--fairness", "none")
    assert code == 1 and data["cycle_start"] == 1
    # Under weak fairness the setter must move: the same lasso is unfair, so it no longer violates.
    trail = tmp_path / "t.trail"
    data["options"]["fairness"] = "weak"  # type: ignore[index]
    trail.write_text(json.dumps(data))
    assert main(["replay", str(model), str(trail)]) == 0


def test_a_lasso_that_is_unfair_under_strong_fairness_no_longer_violates(tmp_path: Path) -> None:
    # The spinlock's setter starves under weak fairness only: its acquire is enabled at some state of the cycle.
    model = EXAMPLES / "liveness_spinlock.py"
    data, code = _check_and_replay(model, tmp_path, "--liveness", "starvation", "--fairness", "weak")
    assert code == 1
    trail = tmp_path / "t.trail"
    data["options"]["fairness"] = "strong"  # type: ignore[index]
    trail.write_text(json.dumps(data))
    assert main(["replay", str(model), str(trail)]) == 0


def test_a_cycle_that_does_not_close_is_no_violation(tmp_path: Path) -> None:
    model = EXAMPLES / "liveness_polite.py"
    data, _ = _check_and_replay(model, tmp_path, "--liveness", "termination")
    steps = data["steps"]
    assert isinstance(steps, list)
    data["steps"] = steps[:-1]  # the cycle's last step dropped: it ends elsewhere than it began
    trail = tmp_path / "t.trail"
    trail.write_text(json.dumps(data))
    assert main(["replay", str(model), str(trail)]) == 0


@pytest.mark.parametrize("bad", [-1, 10_000, "3", True])
def test_a_bad_cycle_start_is_no_trail(bad: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = EXAMPLES / "liveness_polite.py"
    data, _ = _check_and_replay(model, tmp_path, "--liveness", "termination")
    data["cycle_start"] = bad
    trail = tmp_path / "t.trail"
    trail.write_text(json.dumps(data))
    assert main(["replay", str(model), str(trail)]) == 2
    assert "cycle_start" in capsys.readouterr().err
