"""Reports for machines: SARIF 2.1.0 (GitHub code scanning and other static-analysis viewers) and JUnit XML
(the test tabs of CI systems), from a Result (``movers check --format sarif|junit``).

SARIF: one run of the driver ``movers``, one rule per kind of violation, one result per violation at the
line where it shows, and its counterexample as a code flow: one thread flow whose locations are the steps,
each with the thread, the source and what it changed. A verdict ``error`` is a tool execution notification
(the model could not be checked); ``ok`` and ``incomplete`` have no results (``incomplete`` says why in the
invocation's properties).

JUnit: one test suite ``movers``, one test case per model: passed (``ok``), a ``failure`` per violation
(message, then the trace as text), ``error`` for a model that could not be checked, ``skipped`` for an
incomplete search (with the limit).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from movers.report.result import Result, Violation
from movers.report.safe import printable, xml_text

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
RULES = {
    "assertion": "An assertion fails in some interleaving",
    "deadlock": "Some interleaving ends with threads that can never move",
    "invariant": "An @invariant is false in some reachable state",
    "discipline": "A location is accessed without the exclusive access its declaration (or inference) requires",
    "atomicity": "An atomic block is not serialisable in some interleaving",
    "runtime-error": "A step fails at run time in some interleaving",
    "race": "Two threads can each access the same location next, one a write, with no synchronisation between",
    "liveness": "A fair run repeats a cycle forever that the --liveness property forbids",
}


def _location(model: str, line: int, text: str | None = None) -> dict[str, Any]:
    loc: dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": model},
                                                "region": {"startLine": max(line, 1)}}}
    if text is not None:
        loc["message"] = {"text": text}
    return loc


def _steps_text(v: Violation) -> list[str]:
    out = []
    for i, st in enumerate(v.trace, 1):
        ch = st.changes_text()
        out.append(f"{i}. {printable(st.who)}, line {st.line}: {printable(st.shown_source(), True)}"
                   + (f"  [{printable(ch)}]" if ch else ""))
    return out


def to_sarif(result: Result, model: str) -> dict[str, Any]:
    from movers.version import __version__

    results = []
    for v in result.violations:
        flow = [{"location": _location(model, st.line, printable(f"{st.who}: {st.shown_source()}"
                                                                 + (f" ({st.changes_text()})" if st.changes else ""),
                                                                 True)),
                 "executionOrder": i}
                for i, st in enumerate(v.trace, 1)]
        r: dict[str, Any] = {"ruleId": v.kind, "level": "error", "message": {"text": printable(v.message, True)},
                             "locations": [_location(model, v.line)]}
        if flow:
            r["codeFlows"] = [{"threadFlows": [{"locations": flow}]}]
        results.append(r)
    invocation: dict[str, Any] = {"executionSuccessful": result.verdict != "error"}
    if result.verdict == "error":
        invocation["toolExecutionNotifications"] = [{"level": "error",
                                                     "message": {"text": printable(result.error or "", True)}}]
    if result.verdict == "incomplete":
        invocation["properties"] = {"incomplete": result.limit}
    invocation["properties"] = {**invocation.get("properties", {}), "verdict": result.verdict,
                                "reduction": result.reduction, "states": result.stats.states}
    return {
        "$schema": SARIF_SCHEMA, "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "movers", "version": __version__,
                                "rules": [{"id": k, "shortDescription": {"text": t}} for k, t in RULES.items()]}},
            "invocations": [invocation],
            "results": results,
        }],
    }


def to_junit(result: Result, model: str) -> str:
    suite = ET.Element("testsuite", name="movers", tests="1",
                       failures=str(int(result.verdict == "violation")), errors=str(int(result.verdict == "error")),
                       skipped=str(int(result.verdict == "incomplete")), time=f"{result.stats.seconds:.3f}")
    case = ET.SubElement(suite, "testcase", classname="movers.check", name=xml_text(f"{model} ({result.reduction})"),
                         time=f"{result.stats.seconds:.3f}")
    if result.verdict == "violation":
        for v in result.violations:
            f = ET.SubElement(case, "failure", message=xml_text(v.message), type=v.kind)
            f.text = xml_text("\n".join([f"{v.kind}: {v.message}", *_steps_text(v)]))
    elif result.verdict == "error":
        ET.SubElement(case, "error", message=xml_text(result.error or ""), type="error")
    elif result.verdict == "incomplete":
        ET.SubElement(case, "skipped", message=f"incomplete: {result.limit}")
    out = ET.SubElement(case, "system-out")
    out.text = f"{result.stats.states} states, {result.stats.transitions} transitions"
    root = ET.Element("testsuites")
    root.append(suite)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


__all__ = ["to_junit", "to_sarif"]
