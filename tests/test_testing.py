"""``movers.testing``: a project's tests assert that a model verifies, or that a saved trail still fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES

import movers
from movers.testing import check_model, replays
from movers.trail import write_trail


def test_check_model_passes_and_fails_with_the_report() -> None:
    assert check_model(EXAMPLES / "peterson.py").verdict == "ok"
    check_model(EXAMPLES / "racy_counter.py", expect="violation", kind="assertion")
    with pytest.raises(AssertionError, match=r"expected ok, got violation \(assertion\)") as e:
        check_model(EXAMPLES / "racy_counter.py")
    assert "counterexample" in str(e.value) and "count = tmp + 1" in str(e.value)
    with pytest.raises(AssertionError, match="expected violation \\(deadlock\\)"):
        check_model(EXAMPLES / "racy_counter.py", expect="violation", kind="deadlock")
    check_model(EXAMPLES / "fq_counter.py", reduction="transactions", granularity="statement")


def test_replays(tmp_path: Path) -> None:
    path = EXAMPLES / "racy_counter.py"
    trail = tmp_path / "t"
    write_trail(trail, movers.check(path), path.read_text(), str(path))
    assert replays(path, trail)
    fixed = tmp_path / "fixed.py"
    fixed.write_text(path.read_text().replace("count == 2", "count >= 1"))
    assert not replays(fixed, trail)


def test_replays_after_the_fix_answers_with_a_check(tmp_path: Path) -> None:
    from test_trail import LOST_WAKEUP

    model = tmp_path / "buffer.py"
    model.write_text(LOST_WAKEUP)
    trail = tmp_path / "lost.trail"
    write_trail(trail, movers.check(model), LOST_WAKEUP, str(model))
    assert replays(model, trail)
    model.write_text(LOST_WAKEUP.replace("cv.notify()", "cv.notify_all()"))
    assert not replays(model, trail)  # the trail no longer fits; the check verifies the model
    with pytest.raises(AssertionError, match="decided nothing: incomplete"):
        replays(model, trail, max_states=20)
    model.write_text("x = (\n")
    with pytest.raises(AssertionError, match="decided nothing: error"):
        replays(model, trail)
