"""The report formats' registry (report/registry.py) and the comparison's one ratio rule (report/compare.py):
``--format`` offers what the registry writes on standard output, and every format of ``movers compare``
shows the same ratio, measured against the row declared the baseline."""

from __future__ import annotations

import json
import re

import pytest

from movers.reduce import BASELINE, REDUCTIONS
from movers.report.compare import Comparison, Ratio, Row, comparison, ratios
from movers.report.registry import FORMATS, View, stdout_formats
from movers.report.result import Result, Stats


def _row(name: str, states: int, verdict: str = "ok", baseline: bool = False) -> Row:
    error = "refused" if verdict == "error" else None
    limit = "max-states" if verdict == "incomplete" else None
    return Row(Result(verdict, name, Stats(states=states), error=error, limit=limit), baseline=baseline)


def test_format_choices_are_the_registrys() -> None:
    from movers.cli import _early_format, _parser

    check = next(a for a in _parser()._actions if a.dest == "command").choices["check"]  # type: ignore[union-attr]
    (fmt,) = [a for a in check._actions if a.dest == "format"]
    assert list(fmt.choices) == stdout_formats() == ["text", "json", "sarif", "junit"]
    assert "html" in FORMATS and "html" not in stdout_formats()  # --html FILE writes it, not --format
    # A stop before the command line is parsed picks its format from the same registry.
    assert [_early_format(["check", "m.py", "--format", n]) for n in FORMATS] == [
        "text", "json", "sarif", "junit", "text"]


def test_the_baseline_is_declared_not_named() -> None:
    assert BASELINE in REDUCTIONS
    rows = comparison([Result("ok", "optimistic", Stats(states=5)), Result("ok", BASELINE, Stats(states=20))], "m.py")
    assert [r.baseline for r in rows.rows] == [False, True]
    assert ratios(rows.rows) == [Ratio(0.25), Ratio(1.0)]
    # Whatever the names, the row marked baseline is the one the others are measured against.
    assert ratios([_row("a", 10, baseline=True), _row(BASELINE, 5)]) == [Ratio(1.0), Ratio(0.5)]
    assert ratios([_row(BASELINE, 10), _row("b", 5)]) == [Ratio(), Ratio()]


def test_ratio_rule() -> None:
    # A refused baseline is skipped for the next one; a refused row has no ratio; a ratio to or of an
    # incomplete row says so.
    rows = [_row("x", 0, "error", baseline=True), _row("y", 8, "incomplete", baseline=True), _row("z", 2),
            _row("w", 0, "error")]
    assert ratios(rows) == [Ratio(), Ratio(1.0, True), Ratio(0.25, True), Ratio()]
    # A baseline that stored no state gives no ratio.
    assert ratios([_row("x", 0, "incomplete", baseline=True), _row("y", 3)]) == [Ratio(), Ratio()]


def test_every_format_of_a_comparison_shows_the_same_ratio() -> None:
    c = Comparison("m.py", [_row(BASELINE, 300, "incomplete", baseline=True), _row("static-por", 100),
                            _row("transactions", 0, "error")])
    view = View("m.py")
    rows = json.loads(FORMATS["json"].compare(c, view))
    assert [r["ratio"] for r in rows] == [1.0, pytest.approx(1 / 3), None]
    text = FORMATS["text"].compare(c, view)
    assert re.search(r"static-por .* 0\.33 \(incomplete\)", text)
    assert f"states vs {BASELINE}" in text
    page = FORMATS["html"].compare(c, view)
    assert '<tr data-reduction="static-por">' in page
    cells = re.findall(r"<td>([^<]*)</td>", page.split('data-reduction="static-por">')[1].split("</tr>")[0])
    assert cells[-1] == "0.33"


def test_a_format_without_a_comparison_says_so() -> None:
    with pytest.raises(ValueError, match="sarif format has no report of a comparison"):
        FORMATS["sarif"].compare(Comparison("m.py", []), View())


def test_formats_of_one_result() -> None:
    r = Result("incomplete", BASELINE, Stats(states=7), limit="max-states", model="m.py")
    view = View("m.py")
    assert json.loads(FORMATS["json"].check(r, view))["stats"]["states"] == 7
    assert json.loads(FORMATS["sarif"].check(r, view))["runs"][0]["invocations"][0]["properties"]["incomplete"] == (
        "max-states")
    assert "<skipped message=\"incomplete: max-states\"" in FORMATS["junit"].check(r, view)
    assert FORMATS["text"].check(r, view).startswith("incomplete: the state limit (--max-states) was reached")
    assert "<!DOCTYPE html>" in FORMATS["html"].check(r, view)
    assert all(FORMATS[n].check(r, view).endswith("\n") for n in stdout_formats())
