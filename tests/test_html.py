"""The HTML report (``--html FILE``, report/html.py) and the state after every step (report/steps.py).

The first tests read the page as text; the ones marked ``browser`` load it in a real headless Chromium
(Debian's ``/usr/bin/chromium``, driven by the ``playwright`` package): swimlanes, clicking a step, the
deadlock table, escaping of a hostile model, and a screenshot. Without a browser they are skipped, unless
``MOVERS_REQUIRE_BROWSER=1`` (as ``.ci/run`` sets it), where a missing browser fails them.
"""

from __future__ import annotations

import json
import os
import re
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES

import movers
from movers.cli import main
from movers.report.html import deadlock_rows, embed_json, render_result
from movers.report.steps import add_step_states, step_states, thread_names
from movers.trail import read_trail, replay

RACY = EXAMPLES / "racy_counter.py"
DINING = EXAMPLES / "dining_philosophers.py"
CHROMIUM = os.environ.get("MOVERS_CHROMIUM", "/usr/bin/chromium")
HOSTILE_MESSAGE = "</script><img src=x onerror=alert(1)><!-- & end"
HOSTILE = f'''from movers.lang import *

x = 0


def w():
    global x
    x = 1
    assert x == 0, "{HOSTILE_MESSAGE}"


Thread(target=w).start()
'''


def _html(tmp_path: Path, *args: str, name: str = "report.html") -> tuple[int, str]:
    out = tmp_path / name
    code = main([*args, "--html", str(out)])
    return code, out.read_text(encoding="utf-8")


def _data(page: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="movers-data">(.*?)</script>', page, re.S)
    assert m
    return json.loads(m.group(1))


def _hostile(tmp_path: Path) -> Path:
    # The file name is hostile too: it is the page's title and heading.
    path = tmp_path / "<img src=x onerror=alert(3)>.py"
    path.write_text(HOSTILE)
    return path


# --- the state after every step -----------------------------------------------------------------------------


def test_step_states_follow_the_lost_update() -> None:
    r = add_step_states(movers.check(RACY), movers.load(RACY))
    states = [st.state for st in r.violations[0].trace]
    assert all(s is not None for s in states) and len(states) == 7
    assert [s["globals"]["count"] for s in states] == ["0", "0", "1", "1", "1", "1", "1"]
    assert states[0]["threads"][0]["locals"] == {"tmp": "0"}
    assert [th["status"] for th in states[2]["threads"]] == ["terminated", "can move", "can move"]
    # The failed assert did not complete: its state is the one before it, which is the violation's state.
    assert states[-1].pop("failed") is True and states[-1] == r.violations[0].state
    assert not any("failed" in s for s in states[:-1])


def test_step_states_of_a_deadlock_end_in_its_state() -> None:
    r = add_step_states(movers.check(DINING), movers.load(DINING))
    v = r.violations[0]
    assert v.trace[-1].state == v.state and "failed" not in v.state
    assert thread_names(v) == {0: "philosopher#0", 1: "philosopher#1", 2: "philosopher#2", 3: "MainThread"}


def test_step_states_of_nothing_and_of_a_misfit() -> None:
    ts = movers.Checker(movers.load(RACY)).system()
    assert step_states(ts, []) == []
    out = step_states(ts, [(0, ()), (7, ())])  # there is no thread 7: the report keeps what it has
    assert len(out) == 2 and out[0]["globals"]["count"] == "0" and "could not be computed" in out[1]["error"]


def test_replay_json_and_full_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trail = tmp_path / "t.trail"
    assert main(["check", str(RACY), "--trail", str(trail)]) == 1
    capsys.readouterr()
    assert main(["replay", str(RACY), str(trail), "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert [s["state"]["globals"]["count"] for s in d["violations"][0]["trace"]] == ["0", "0", "1", "1", "1", "1",
                                                                                      "1"]
    assert main(["replay", str(RACY), str(trail), "--full-state"]) == 1
    out = capsys.readouterr().out
    assert "state after each step" in out and "after step 3 (worker#0, line 15: count = tmp + 1)" in out
    assert "worker#0: can move at worker:15; tmp = 0" in out
    assert "step 7 fails (MainThread, line 24" in out
    # Without --full-state, replay prints the failing state only as check does.
    assert main(["replay", str(RACY), str(trail)]) == 1
    assert "state after each step" not in capsys.readouterr().out
    assert all(s.state is not None for s in replay(RACY, read_trail(trail)).violations[0].trace)


def test_check_json_has_step_states_only_with_full_state(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(RACY), "--json"]) == 1
    assert all("state" not in s for s in json.loads(capsys.readouterr().out)["violations"][0]["trace"])
    assert main(["check", str(DINING), "--json", "--full-state"]) == 1
    trace = json.loads(capsys.readouterr().out)["violations"][0]["trace"]
    assert trace[3]["state"]["globals"]["forks[0].owner"] == "philosopher#0"
    assert [th["status"] for th in trace[-1]["state"]["threads"]] == ["blocked"] * 4


# --- the page, as text ---------------------------------------------------------------------------------------


def test_embed_json_cannot_close_its_script() -> None:
    value = {"m": "</script><!--<script>&\u2028\u2029"}
    text = embed_json(value)
    assert not set("<>&\u2028\u2029") & set(text) and json.loads(text) == value


def test_page_of_the_lost_update(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, page = _html(tmp_path, "check", str(RACY))
    assert code == 1 and "note: HTML report written to" in capsys.readouterr().out
    assert re.findall(r'<th class="lane" data-thread="\d+">([^<]*)</th>', page) == ["worker#0", "worker#1",
                                                                                   "MainThread"]
    steps = re.findall(r'<button type="button" class="step[^"]*" data-violation="0" data-step="(\d+)" '
                       r'data-thread="(\d+)"', page)
    assert steps == [("1", "0"), ("2", "1"), ("3", "0"), ("4", "1"), ("5", "2"), ("6", "2"), ("7", "2")]
    assert "count = 1 (unchanged)" in page and "lost update (assertion failed: count == 2)" in page
    d = _data(page)
    assert [s["state"]["globals"]["count"] for s in d["violations"][0]["steps"]] == ["0", "0", "1", "1", "1", "1",
                                                                                     "1"]
    assert d["violations"][0]["threads"] == {"0": "worker#0", "1": "worker#1", "2": "MainThread"}
    # Self-contained: nothing to load, and the policy forbids loading anything.
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|\bhref=|https?://|@import|url\(", page)
    assert "default-src 'none'" in page
    assert 'id="deadlock-0"' not in page


def test_page_of_a_deadlock_has_its_table(tmp_path: Path) -> None:
    code, page = _html(tmp_path, "check", str(DINING), "--search", "bfs")
    assert code == 1
    table = re.search(r'<table class="grid deadlock" id="deadlock-0">.*?</table>', page, re.S)
    assert table and table.group(0).count("<tr>") == 5  # the header and one row per thread
    r = add_step_states(movers.check(DINING, search="bfs"), movers.load(DINING))
    rows = deadlock_rows(r.violations[0], thread_names(r.violations[0]))
    assert [row[:2] for row in rows] == [("philosopher#0", "blocked"), ("philosopher#1", "blocked"),
                                         ("philosopher#2", "blocked"), ("MainThread", "blocked")]
    # Each waits on its second fork, which its right neighbour holds as its first; the main thread joins.
    assert [(row[2], row[3], row[4]) for row in rows] == [
        ("waits to acquire forks[1]", "philosopher#1", "forks[0]"),
        ("waits to acquire forks[2]", "philosopher#2", "forks[1]"),
        ("waits to acquire forks[0]", "philosopher#0", "forks[2]"),
        ("waits for philosopher#0 (p0) to finish", "", "")]
    assert [row[5] for row in rows] == ["philosopher:21"] * 3 + ["<module>:33"]


def test_a_hostile_model_is_escaped(tmp_path: Path) -> None:
    code, page = _html(tmp_path, "check", str(_hostile(tmp_path)))
    assert code == 1
    assert "<img" not in page and "<!--" not in page
    assert page.count("</script>") == 2 and page.count("<script") == 2  # the data and the code, nothing else
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;img src=x onerror=alert(3)&gt;.py</title>" in page
    d = _data(page)
    assert d["violations"][0]["message"].startswith(HOSTILE_MESSAGE) and "<img" in d["model"]


def test_page_of_ok_error_and_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, page = _html(tmp_path, "check", str(EXAMPLES / "peterson.py"))
    assert code == 0 and 'verdict-ok' in page and 'id="state-panel"' not in page
    assert re.search(r'data-key="states"><dt>states</dt><dd>\d', page) and "No interleaving violates" in page
    bad = tmp_path / "bad.py"
    bad.write_text("x = (\n")
    code, page = _html(tmp_path, "check", str(bad), name="bad.html")
    assert code == 2 and "verdict-error" in page and "syntax error" in page
    trail = tmp_path / "t.trail"
    main(["check", str(RACY), "--trail", str(trail)])
    capsys.readouterr()
    code, page = _html(tmp_path, "replay", str(RACY), str(trail), name="replay.html")
    assert code == 1 and "replayed: the violation happens again" in page
    assert _data(page)["violations"][0]["steps"][2]["state"]["globals"]["count"] == "1"
    fixed = tmp_path / "fixed.py"
    fixed.write_text(RACY.read_text().replace('assert count == 2, "lost update"', 'assert count >= 1, "lost"'))
    code, page = _html(tmp_path, "replay", str(fixed), str(trail), name="fixed.html")
    assert code == 0 and "replayed: the violation no longer happens" in page and "No interleaving" not in page


def test_an_unwritable_page_keeps_the_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(RACY), "--html", str(tmp_path / "no" / "such" / "dir.html")]) == 1
    err = capsys.readouterr().err
    assert "cannot write the HTML report" in err


def test_compare_page(tmp_path: Path) -> None:
    code, page = _html(tmp_path, "compare", str(EXAMPLES / "peterson.py"), "--reductions", "none,optimistic")
    assert code == 0
    assert re.findall(r'<tr data-reduction="([\w-]+)">', page) == ["none", "optimistic"]
    bars = re.findall(r'<rect class="bar (states|seconds)" data-reduction="([\w-]+)" x="130" y="\d+" '
                      r'width="([\d.]+)"', page)
    assert [(k, n) for k, n, _ in bars] == [("states", "none"), ("states", "optimistic"), ("seconds", "none"),
                                            ("seconds", "optimistic")]
    rows = _data(page)["rows"]
    states = {n: float(w) for k, n, w in bars if k == "states"}
    # Bars are to scale: the larger count is the full width.
    big, small = sorted(rows, key=lambda r: -r["stats"]["states"])
    assert states[big["reduction"]] == 230.0
    assert states[small["reduction"]] == pytest.approx(230 * small["stats"]["states"] / big["stats"]["states"],
                                                       abs=0.1)


def test_render_result_without_step_states() -> None:
    # The Python API's Result has no step states unless asked: the page still shows the swimlanes.
    page = render_result(movers.check(RACY), "racy_counter.py")
    assert page.count('<button type="button" class="step') == 7
    assert _data(page)["violations"][0]["steps"][0]["state"] is None


# --- the page, in a browser ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    problem = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        problem = "the playwright package is not installed"
    if problem is None and not os.path.exists(CHROMIUM):
        problem = f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if problem is not None:
        if os.environ.get("MOVERS_REQUIRE_BROWSER") == "1":
            pytest.fail(f"MOVERS_REQUIRE_BROWSER=1 but {problem}")
        pytest.skip(problem)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    pg = browser.new_page(viewport={"width": 1200, "height": 800})
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("dialog", lambda d: (errors.append("dialog: " + d.message), d.dismiss()))
    pg.on("request", lambda r: errors.append("request: " + r.url) if not r.url.startswith("file:") else None)
    yield pg
    pg.close()
    assert errors == []


def _open(page: Any, tmp_path: Path, *args: str) -> None:
    code, _ = _html(tmp_path, *args)
    page.goto((tmp_path / "report.html").as_uri())


def _global(page: Any, name: str) -> str:
    return page.eval_on_selector_all(
        "#state-panel table tbody tr",
        "(rows, name) => rows.filter(r => r.cells[0].textContent === name).map(r => r.cells[1].textContent)[0]",
        name)


@pytest.mark.browser
def test_browser_swimlanes_and_states_of_the_lost_update(page: Any, tmp_path: Path) -> None:
    _open(page, tmp_path, "check", str(RACY))
    assert page.locator("th.lane").all_inner_texts() == ["worker#0", "worker#1", "MainThread"]
    # Each step sits in its thread's column.
    cells = page.eval_on_selector_all(
        "button.step", "bs => bs.map(b => [b.closest('td').cellIndex, Number(b.dataset.thread)])")
    lanes = page.eval_on_selector_all("th.lane", "hs => hs.map(h => Number(h.dataset.thread))")
    assert len(cells) == 7 and all(lanes[i - 1] == t for i, t in cells)
    # The last step is shown at first.
    assert page.get_attribute("#state-panel", "data-step") == "7"
    assert "Step 7 fails: the state before it" in page.inner_text("#state-panel")
    page.click('button.step[data-step="1"]')
    assert page.get_attribute("#state-panel", "data-step") == "1" and _global(page, "count") == "0"
    assert page.get_attribute('button.step[data-step="1"]', "aria-pressed") == "true"
    panel = page.inner_text("#state-panel")
    assert "State after step 1" in panel and "tmp = 0" in panel
    page.click('button.step[data-step="3"]')
    assert _global(page, "count") == "1"
    assert page.locator("#state-panel .changed").all_inner_texts() == ["count\t1"]
    assert page.locator("#state-panel .thread.moved").get_attribute("data-thread") == "0"
    assert "terminated" in page.inner_text('#state-panel .thread[data-thread="0"]')
    page.keyboard.press("ArrowDown")
    assert page.get_attribute("#state-panel", "data-step") == "4"
    assert page.locator("button.step.selected").get_attribute("data-step") == "4"


@pytest.mark.browser
def test_browser_deadlock(page: Any, tmp_path: Path) -> None:
    _open(page, tmp_path, "check", str(DINING))
    assert page.locator("th.lane").all_inner_texts() == ["philosopher#0", "philosopher#1", "philosopher#2",
                                                         "MainThread"]
    assert page.locator("#deadlock-0 tbody tr").count() == 4
    assert page.locator("#deadlock-0 tbody tr").first.inner_text().split("\t")[:3] == [
        "philosopher#0", "blocked", "waits to acquire forks[1]"]
    statuses = page.locator("#state-panel .thread .status").all_inner_texts()
    assert statuses == ["blocked"] * 4
    page.click('button.step[data-step="3"]')  # forks[i], forks[(i + 1) % N], then the acquire
    assert _global(page, "forks[0].owner") == "philosopher#0" and _global(page, "forks[1].owner") == "None"


@pytest.mark.browser
def test_browser_hostile_model(page: Any, tmp_path: Path) -> None:
    _open(page, tmp_path, "check", str(_hostile(tmp_path)))
    assert page.locator("img").count() == 0
    assert page.inner_text("#violation-0 .message").startswith(HOSTILE_MESSAGE)
    assert page.title().startswith("movers: ") and "<img src=x onerror=alert(3)>.py" in page.title()
    page.click('button.step[data-step="1"]')
    assert HOSTILE_MESSAGE[:20] in page.inner_text("#state-panel")


@pytest.mark.browser
def test_browser_compare_chart(page: Any, tmp_path: Path) -> None:
    _open(page, tmp_path, "compare", str(EXAMPLES / "peterson.py"), "--reductions", "none,optimistic")
    assert page.locator("svg.chart").count() == 2 and page.locator("svg.chart rect.bar").count() == 4
    widths = page.eval_on_selector_all("svg.states rect.bar", "rs => rs.map(r => r.getBBox().width)")
    assert max(widths) == pytest.approx(230) and min(widths) > 0


def _png_size_and_pixels(png: bytes) -> tuple[int, int, bytes]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", (0, 0)
    while pos < len(png):
        n, kind = struct.unpack(">I4s", png[pos:pos + 8])
        chunk = png[pos + 8:pos + 8 + n]
        assert zlib.crc32(kind + chunk) == struct.unpack(">I", png[pos + 8 + n:pos + 12 + n])[0]
        if kind == b"IHDR":
            size = struct.unpack(">II", chunk[:8])
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    return size[0], size[1], zlib.decompress(idat)


@pytest.mark.browser
def test_browser_screenshot(page: Any, tmp_path: Path) -> None:
    _open(page, tmp_path, "check", str(DINING), "--search", "bfs")
    page.set_viewport_size({"width": 1000, "height": 700})
    page.click('button.step[data-step="8"]')
    png = page.screenshot()
    width, height, raw = _png_size_and_pixels(png)
    assert (width, height) == (1000, 700)
    # Not blank: a page of text, tables and coloured boxes has many distinct byte values and no long run of
    # one value covering most of the image.
    assert len(set(raw)) > 50
    assert max(raw.count(bytes([b]) * 64) for b in (0, 255)) * 64 < len(raw) * 0.9
    # The panel is in the picture, to the right of the swimlanes.
    box = page.locator("#state-panel").bounding_box()
    lanes = page.locator("#lanes-0").bounding_box()
    assert box and lanes and box["x"] > lanes["x"] + lanes["width"] and box["y"] < height


def test_the_docs_show_the_page() -> None:
    docs = EXAMPLES.parent / "docs"
    text = (docs / "counterexamples.md").read_text()
    images = re.findall(r"!\[[^\]]*\]\((images/[^)]+\.png)\)", text)
    assert images == ["images/html_racy_counter.png", "images/html_dining_philosophers.png"]
    for image in images:
        png = (docs / image).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) < 150_000  # small, for the repository's sake
    synopsis = (docs / "cli.md").read_text().split("```")[1]
    assert synopsis.count("[--html FILE]") == 3  # check, replay, compare


def test_control_characters_of_the_model_are_escaped_in_the_page(tmp_path: Path) -> None:
    # Found by the fuzz campaign: a NUL or an ESC[2J in an assert message or a thread name reached the page raw.
    from movers.report.html import render_result

    model = tmp_path / "m.py"
    model.write_text('from movers.lang import *\ndef w():\n    assert False, "a\\x00b\\x1b[2J"\n'
                     'Thread(target=w, name="t\\x1b[H").start()\n')
    page = render_result(movers.check(model), str(model))
    assert "\x00" not in page and "\x1b" not in page
    assert "a\\x00b\\x1b[2J" in page and "t\\x1b[H" in page
