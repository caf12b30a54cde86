"""Checking models from a project's own test suite (pytest or any other)::

    from movers.testing import check_model, replays

    def test_the_queue_is_correct():
        check_model("models/queue.py", reduction="transactions")          # fails the test unless verified

    def test_the_old_race_is_still_caught():
        check_model("models/queue_buggy.py", expect="violation", kind="assertion")

    def test_the_fix_holds():
        assert not replays("models/queue.py", "trails/race.trail")       # the saved counterexample is gone

``check_model`` raises ``AssertionError`` with the verdict, the violation and its trace as the text report
shows them, so a failing test says what went wrong. Keyword arguments are ``movers.check``'s. ``replays``
answers for a trail that no longer fits the model too (the model is then checked with the trail's options),
and fails with the report only when it cannot say (a limit reached, a model that does not compile).
"""

from __future__ import annotations

import io
import os
from typing import Any

from movers.report.result import Result


def _report(result: Result, model: str) -> str:
    from rich.console import Console

    from movers.report.text import print_result

    buf = io.StringIO()
    print_result(result, Console(file=buf, width=120, color_system=None), model)
    return buf.getvalue()


def check_model(model: str | os.PathLike[str], expect: str = "ok", kind: str | None = None, **options: Any) -> Result:
    """Check ``model`` and fail (``AssertionError``) unless the verdict is ``expect`` (and, for a violation,
    of ``kind`` when given); returns the Result."""
    from movers.checker import check

    result = check(model, **options)
    got_kind = result.violations[0].kind if result.violations else None
    if result.verdict != expect or (kind is not None and got_kind != kind):
        want = expect + (f" ({kind})" if kind else "")
        raise AssertionError(f"movers: expected {want}, got {result.verdict}"
                             + (f" ({got_kind})" if got_kind else "") + "\n" + _report(result, str(model)))
    return result


def replays(model: str | os.PathLike[str], trail: str | os.PathLike[str], **limits: Any) -> bool:
    """Whether the trail's violation still happens on ``model`` (``movers replay``'s exit code 1).

    Where the trail no longer fits the model (the model changed: the bug was fixed, say), the model is
    checked with the trail's options, as ``movers replay`` does: True if that check finds a violation, False
    if it verifies the model. ``limits`` are ``movers.check``'s (``max_states``, ``time_limit``,
    ``max_memory``). A replay that decides neither, a check cut short by a limit or a model that does not
    compile, fails with ``AssertionError`` and the report; a file that is not a trail raises
    ``movers.trail.TrailError``."""
    from movers.trail import read_trail, replay

    result = replay(model, read_trail(trail), **limits)
    if result.verdict in ("incomplete", "error"):
        raise AssertionError(f"movers: the replay of {trail} decided nothing: {result.verdict}\n"
                             + _report(result, str(model)))
    return result.verdict == "violation"


__all__ = ["check_model", "replays"]
