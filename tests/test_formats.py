"""``--format sarif`` and ``--format junit`` (report/formats.py): what CI systems and code-scanning viewers
read."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from conftest import EXAMPLES

from movers.cli import main


def _out(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    return code, capsys.readouterr().out


def test_sarif_of_a_violation_has_the_trace_as_a_code_flow(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "racy_counter.py")
    code, out = _out(capsys, path, "--format", "sarif")
    assert code == 1
    d = json.loads(out)
    assert d["version"] == "2.1.0" and d["$schema"].endswith("sarif-2.1.0.json")
    run = d["runs"][0]
    assert run["tool"]["driver"]["name"] == "movers"
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} >= {"assertion", "deadlock", "atomicity"}
    (res,) = run["results"]
    assert res["ruleId"] == "assertion" and res["level"] == "error" and "lost update" in res["message"]["text"]
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == path
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 24
    flow = res["codeFlows"][0]["threadFlows"][0]["locations"]
    assert len(flow) == 7 and flow[0]["location"]["message"]["text"].startswith("worker#0: tmp = count")
    assert [f["executionOrder"] for f in flow] == list(range(1, 8))


def test_sarif_of_ok_and_of_an_error(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    code, out = _out(capsys, str(EXAMPLES / "peterson.py"), "--format", "sarif")
    assert code == 0 and json.loads(out)["runs"][0]["results"] == []
    bad = tmp_path / "bad.py"
    bad.write_text("from movers.lang import *\nx = \n")
    code, out = _out(capsys, str(bad), "--format", "sarif")
    inv = json.loads(out)["runs"][0]["invocations"][0]
    assert code == 2 and inv["executionSuccessful"] is False and "bad.py:2" in inv["toolExecutionNotifications"][0][
        "message"]["text"]


def test_junit(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _out(capsys, str(EXAMPLES / "dining_philosophers.py"), "--format", "junit")
    assert code == 1
    suite = ET.fromstring(out).find("testsuite")
    assert suite is not None and suite.get("failures") == "1" and suite.get("tests") == "1"
    failure = suite.find("testcase/failure")
    assert failure is not None and failure.get("type") == "deadlock"
    assert "1. philosopher#0, line 17" in (failure.text or "")
    code, out = _out(capsys, str(EXAMPLES / "peterson.py"), "--format", "junit")
    case = ET.fromstring(out).find("testsuite/testcase")
    assert code == 0 and case is not None and case.find("failure") is None
    code, out = _out(capsys, str(EXAMPLES / "peterson.py"), "--format", "junit", "--max-states", "5")
    assert code == 3 and ET.fromstring(out).find("testsuite/testcase/skipped") is not None


def test_format_json_is_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _out(capsys, str(EXAMPLES / "racy_counter.py"), "--format", "json")
    assert code == 1 and json.loads(out)["verdict"] == "violation"
