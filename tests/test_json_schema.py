"""Every JSON object movers prints validates against the published schema (docs/result.schema.json): check
for each verdict, replay, the lossy stores, compare's rows, and the objects written before the checker loads
(Ctrl-C at start-up, an internal error)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import EXAMPLES

from movers import cli
from movers.cli import main

SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "result.schema.json").read_text())


def _valid(obj: object) -> None:
    jsonschema.validate(obj, SCHEMA)


@pytest.mark.parametrize("args", [
    [str(EXAMPLES / "racy_counter.py")],
    [str(EXAMPLES / "dining_philosophers.py"), "--all-violations"],
    [str(EXAMPLES / "peterson.py")],
    [str(EXAMPLES / "peterson.py"), "--max-states", "5"],
    [str(EXAMPLES / "peterson.py"), "--store", "bitstate", "--bits", "12"],
    [str(EXAMPLES / "symmetric_workers.py"), "--symmetry", "threads", "--store", "hashcompact"],
    [str(EXAMPLES / "fq_counter.py"), "--reduction", "transactions", "--search", "bfs"],
    [str(EXAMPLES / "atomicity_bluetooth.py"), "--atomicity", "commit"],
    ["nope.py"],
])
def test_check(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", *args, "--json"])
    d = json.loads(capsys.readouterr().out)
    _valid(d)
    assert d["tool"]["name"] == "movers" and d["schema"] == 1


def test_trace_outcomes_values_and_thread_names_are_in_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    v = SCHEMA["properties"]["violations"]["items"]["properties"]
    assert {"name", "outcome"} <= set(v["trace"]["items"]["properties"]) and "values" in v
    assert "name" in SCHEMA["$defs"]["state"]["properties"]["threads"]["items"]["properties"]
    # At statement granularity a for header is a step of its own, with its outcome.
    main(["check", str(EXAMPLES / "dining_philosophers.py"), "--json", "--granularity", "statement"])
    d = json.loads(capsys.readouterr().out)
    _valid(d)
    assert any(s.get("outcome") == "next" for s in d["violations"][0]["trace"])
    d["violations"][0]["trace"][2]["outcome"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        _valid(d)


def test_replay_and_compare(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    model = str(EXAMPLES / "racy_counter.py")
    trail = str(tmp_path / "t")
    main(["check", model, "--trail", trail])
    capsys.readouterr()
    main(["replay", model, trail, "--json"])
    _valid(json.loads(capsys.readouterr().out))
    main(["compare", model, "--reductions", "none,optimistic,transactions", "--json"])
    for row in json.loads(capsys.readouterr().out):
        _valid(row)


def test_objects_written_before_the_checker(capsys: pytest.CaptureFixture[str]) -> None:
    cli._stopped_early("interrupted", True, "none")
    _valid(json.loads(capsys.readouterr().out))
    cli._internal_error(RuntimeError("boom"), True, "none")
    _valid(json.loads(capsys.readouterr().out))
