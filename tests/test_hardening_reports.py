"""Reports that tell the truth about any model (issue 21, items 5, 6, 8 and 9): fields whose names start
with ``_`` show, and objects only locals reach are named apart for the whole state; a list that shrinks or
empties shows it; long values are shortened in text, JUnit, SARIF and HTML but whole in JSON, and the report
of a 100,000-element list is small; control characters and rich markup from the model reach no terminal and
no XML document raw."""

from __future__ import annotations

import json
import re
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import run

from movers.cli import main
from movers.report.safe import printable, xml_text
from movers.report.shorten import short_entries, short_value


def _model(tmp_path: Path, src: str, name: str = "m.py") -> str:
    path = tmp_path / name
    path.write_text("from movers.lang import *\n" + textwrap.dedent(src).lstrip("\n"), encoding="utf-8")
    return str(path)


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


# -- 5. fields starting with _ show; objects only locals reach are told apart -------------------------------------

ACCOUNTS = """
class Account:
    def __init__(self, v):
        self._lock = Lock()
        self._data = v


def transfer(a, b):
    a._lock.acquire()
    b._lock.acquire()
    a._data = a._data - 1
    b._data = b._data + 1
    b._lock.release()
    a._lock.release()


accounts = [Account(1), Account(2)]
Thread(target=transfer, args=(accounts[0], accounts[1])).start()
Thread(target=transfer, args=(accounts[1], accounts[0])).start()
"""


def test_private_fields_show_in_the_trace_the_deadlock_and_the_state() -> None:
    r = run(ACCOUNTS, search="bfs")
    v = r.violations[0]
    assert v.kind == "deadlock"
    assert v.message.splitlines()[1:] == [
        "  transfer#0, line 9: waits to acquire accounts[1]._lock (held by transfer#1)",
        "  transfer#1, line 9: waits to acquire accounts[0]._lock (held by transfer#0)"]
    assert [th["holds"] for th in v.state["threads"]] == [["accounts[0]._lock"], ["accounts[1]._lock"]]
    assert v.state["globals"]["accounts[0]._data"] == "1" and v.state["globals"]["accounts[1]._data"] == "2"
    assert v.trace[0].changes == {"accounts[0]._lock.owner": "transfer#0"}


def test_a_thread_objects_own_fields_stay_hidden() -> None:
    # A Thread subclass's bookkeeping (its id, target, arguments) is not the model's; its own fields are.
    r = run("""
    class W(Thread):
        def __init__(self):
            super().__init__()
            self._n = 0
        def run(self):
            self._n = 1
            assert self._n == 0
    w = W()
    w.start()
    """, search="bfs")
    keys = [k for st in r.violations[0].trace for k in st.changes]
    assert "w._n" in keys
    assert not [k for k in keys if k.startswith("w._t") or k.startswith("w._a")]


LOCAL_ACCOUNTS = """
class Account:
    def __init__(self, v):
        self._lock = Lock()
        self._data = v


def transfer(a, b):
    a._lock.acquire()
    b._lock.acquire()
    b._lock.release()
    a._lock.release()


def main():
    x = Account(1)
    y = Account(2)
    t = Thread(target=transfer, args=(x, y))
    t.start()
    transfer(y, x)


Thread(target=main).start()
"""


def test_objects_only_locals_reach_are_named_apart_for_the_whole_state() -> None:
    # Both threads call their accounts a and b: named from each thread's frame, the two locks would both be
    # "b._lock", and neither would show as held.
    v = run(LOCAL_ACCOUNTS, search="bfs").violations[0]
    assert v.kind == "deadlock"
    waits = re.findall(r"waits to acquire (\S+) \(held by (\w+)\)", v.message)
    assert len(waits) == 2 and waits[0][0] != waits[1][0]
    assert {w for w, _ in waits} == {"Account#1._lock", "Account#2._lock"}
    threads = {th["name"]: th for th in v.state["threads"]}
    for lock, holder in waits:
        assert threads[holder]["holds"] == [lock]
    # The locals say which account each name is; the heap has their fields under those names.
    assert {th["locals"]["a"] for th in threads.values()} == {"<Account#1>", "<Account#2>"}
    assert v.state["globals"]["Account#1._data"] in ("1", "2")
    assert {v.state["globals"]["Account#1._lock.owner"], v.state["globals"]["Account#2._lock.owner"]} == {
        "main", "transfer"}


def test_private_fields_in_json_and_html(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _model(tmp_path, ACCOUNTS)
    code, out = _cli(capsys, "check", path, "--search", "bfs", "--json")
    assert code == 1
    assert json.loads(out)["violations"][0]["state"]["globals"]["accounts[1]._data"] == "2"
    page = tmp_path / "r.html"
    assert main(["check", path, "--search", "bfs", "--html", str(page)]) == 1
    assert "accounts[1]._lock" in page.read_text(encoding="utf-8")


# -- 6. a list that shrinks or empties shows it -----------------------------------------------------------------


def test_pop_shows_the_list_shrinking_and_empty() -> None:
    r = run("""
    b = [1, 2]
    a = [0] * 100
    def w():
        a.pop()
        b.pop()
        b.pop()
        b.pop()
    Thread(target=w).start()
    """)
    v = r.violations[0]
    assert v.kind == "runtime-error"
    assert [st.changes for st in v.trace[:3]] == [{"a": "[" + ", ".join(["0"] * 99) + "]"}, {"b": "[1]"},
                                                   {"b": "[]"}]
    assert v.state["globals"]["b"] == "[]"


def test_an_empty_local_list_shows() -> None:
    r = run("""
    def w():
        xs = [1]
        xs.pop()
        assert len(xs) == 1
    Thread(target=w).start()
    """)
    v = r.violations[0]
    assert v.trace[1].changes == {"xs": "[]"}
    assert v.state["threads"][0]["locals"] == {"xs": "[]"}


def test_a_long_list_compares_as_the_language_does() -> None:
    # Long lists are compared as lists: False written over 0 is a change, 0 over 0 is not.
    v = run("""
    a = [0] * 200
    def w():
        a[3] = 0
        a[5] = False
        a.append(7)
        assert len(a) == 0
    Thread(target=w).start()
    """).violations[0]
    assert [st.changes for st in v.trace[:3]] == [{}, {"a[5]": "False"}, {"a[200]": "7"}]


# -- 8. long values: short in text, whole in JSON; the report stays small ------------------------------------------

BIG = """
N = 99990  # the longest list the checker keeps, 100,000 elements, is reached by one append
a = [0] * N
m = Lock()


def w():
    x = a
    y = [1] * N
    for i in range(2):
        x[i] = i + 5
    m.acquire()
    assert a[0] == 7 and a == y, "boom"


Thread(target=w).start()
"""


def test_a_long_list_is_short_in_text(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _model(tmp_path, BIG)
    code, out = _cli(capsys, "check", path, "--full-state")
    assert code == 1
    assert len(out) < 20_000, len(out)
    assert "where a[0] = 5, a = [5, 6, 0, 0, 0, 0, 0, 0, … 99,982 more], y = [1, 1, 1" in out
    assert "x = [0, 0, 0, 0, 0, 0, 0, 0, … 99,982 more]" in out  # the alias, at its step
    assert "y[7] = 1, … 99,982 more under y[…]" in out  # a new list's elements, at its step
    assert re.search(r"a\[1\]\s+│ 6", out) and "… 99,982 more under a[…]" in out  # the heap table


def test_a_long_list_is_whole_in_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _model(tmp_path, BIG.replace("99990", "3000"))
    # (statement steps: the trace's step numbers below are statements)
    code, out = _cli(capsys, "check", path, "--json", "--full-state", "--granularity", "statement")
    assert code == 1
    v = json.loads(out)["violations"][0]
    assert v["values"]["a"].count(",") == 2999
    assert len([k for k in v["trace"][1]["changes"] if k.startswith("y[")]) == 3000
    assert v["trace"][3]["changes"]["a[0]"] == "5"
    last = v["trace"][-1]["state"]
    assert last["globals"]["a[2999]"] == "0" and len(last["globals"]) > 3000
    assert v["state"]["threads"][0]["locals"]["x"].count(",") == 2999


def test_a_long_list_is_short_in_html_junit_and_sarif(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _model(tmp_path, BIG)
    page = tmp_path / "r.html"
    assert main(["check", path, "--html", str(page)]) == 1
    capsys.readouterr()
    html = page.read_text(encoding="utf-8")
    assert len(html) < 200_000, len(html)
    assert "99,982 more" in html
    for fmt in ("junit", "sarif"):
        code, out = _cli(capsys, "check", path, "--format", fmt)
        assert code == 1 and len(out) < 20_000 and "99,982 more" in out


def test_short_value_cuts_between_elements() -> None:
    long = "[" + ", ".join(str(k) for k in range(1000)) + "]"
    assert short_value(long) == "[0, 1, 2, 3, 4, 5, 6, 7, … 992 more]"
    assert short_value(long + " (unchanged)") == "[0, 1, 2, 3, 4, 5, 6, 7, … 992 more] (unchanged)"
    # Commas and brackets inside strings and <…> are not element boundaries.
    strings = "[" + ", ".join(["'a, [b'"] * 100) + "]"
    assert short_value(strings) == "[" + ", ".join(["'a, [b'"] * 8) + ", … 92 more]"
    nested = "(" + ", ".join(["[1, 2]"] * 100) + ")"
    assert short_value(nested).endswith("[1, 2], … 92 more)")
    assert short_value("'" + "x" * 500 + "'").endswith("… (382 more characters)")
    assert short_value("[1, 2]") == "[1, 2]"


def test_short_entries_cut_runs_of_elements() -> None:
    entries = {"n": "3", **{f"a[{k}]": str(k) for k in range(100)}, "m.owner": "None"}
    got = short_entries(entries)
    assert got[0] == ("n", "3") and got[1:9] == [(f"a[{k}]", str(k)) for k in range(8)]
    assert got[9:] == [("… 92 more under a[…]", None), ("m.owner", "None")]


# -- 9. control characters and markup from the model ---------------------------------------------------------------

CONTROLS = (
    "x = 0\n\n\ndef w():\n    global x\n    x = 1\n"
    # A carriage return cannot stand raw in a string literal: the model writes it as an escape.
    '    assert x == 0, "evil\x1b[2J\\rverified [bold]b[/] \x9b\u202e\x07 end"\n\n\n'
    'Thread(target=w, name="we\x1b[31mird[/]\x01").start()\n'
)
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]")


def test_control_characters_are_escaped_in_text(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _model(tmp_path, CONTROLS, name="[red]m.py")
    code, out = _cli(capsys, "check", path, "--full-state")
    assert code == 1
    assert not RAW.search(out), repr(out)
    assert "evil\\x1b[2J\\rverified [bold]b[/] \\x9b\\u202e\\x07 end" in out
    assert "we\\x1b[31mird[/]\\x01" in out
    assert "[red]m.py" in out  # the title is text, not rich markup
    code, out = _cli(capsys, "replay", path, "--full-state", str(_trail(tmp_path, path, capsys)))
    assert code == 1 and not RAW.search(out)


def _trail(tmp_path: Path, path: str, capsys: pytest.CaptureFixture[str]) -> Path:
    trail = tmp_path / "t.trail"
    assert main(["check", path, "--trail", str(trail)]) == 1
    capsys.readouterr()
    return trail


def test_control_characters_make_well_formed_junit_and_plain_sarif(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    path = _model(tmp_path, CONTROLS.replace(" end", " \\ud800 \\uffff end"))
    code, out = _cli(capsys, "check", path, "--format", "junit")
    assert code == 1
    root = ET.fromstring(out.encode("utf-8"))
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None and "evil\\x1b[2J\\r" in failure.get("message", "")
    assert "we\\x1b[31mird[/]\\x01" in (failure.text or "")
    code, out = _cli(capsys, "check", path, "--format", "sarif")
    res = json.loads(out)["runs"][0]["results"][0]
    assert not RAW.search(res["message"]["text"]) and "\\x1b" in res["message"]["text"]
    texts = [f["location"]["message"]["text"] for f in res["codeFlows"][0]["threadFlows"][0]["locations"]]
    assert texts and not any(RAW.search(t) for t in texts)


def test_json_keeps_the_model_strings(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _model(tmp_path, CONTROLS)
    code, out = _cli(capsys, "check", path, "--json")
    v = json.loads(out)["violations"][0]
    assert v["message"].startswith("evil\x1b[2J\r") and v["trace"][0]["name"] == "we\x1b[31mird[/]\x01"


def test_printable_and_xml_text() -> None:
    assert printable("a\x1bb\tc\nd\x9b\u2028") == "a\\x1bb\\tc\\nd\\x9b\\u2028"
    assert printable("a\nb\r", newlines=True) == "a\nb\\r"
    assert printable("é ü 日本 [bold]") == "é ü 日本 [bold]"
    assert xml_text("a\x00\ud800\uffff\nb") == "a\\x00\\ud800\\uffff\nb"
    ET.fromstring(f"<a>{xml_text(''.join(map(chr, range(0x20))))}</a>")
