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
    check_model(EXAMPLES / "fq_counter.py", reduction="transactions")


def test_replays(tmp_path: Path) -> None:
    path = EXAMPLES / "racy_counter.py"
    trail = tmp_path / "t"
    write_trail(trail, movers.check(path), path.read_text(), str(path))
    assert replays(path, trail)
    fixed = tmp_path / "fixed.py"
    fixed.write_text(path.read_text().replace("count == 2", "count >= 1"))
    assert not replays(fixed, trail)
