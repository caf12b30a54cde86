"""The HTML report (``--html FILE``): one self-contained page, to open in a browser or attach to a CI run.

A counterexample shows as swimlanes, one column per thread and one row per step; clicking a step shows the
full state after it in a side panel (report/steps.py computes those states). A deadlock gets a table of its
threads: what each waits on, who holds it, its stack. ``movers compare --html`` gives the comparison's table
and a bar chart of states and seconds per reduction.

The page loads nothing: its CSS and JavaScript are inline, and a Content-Security-Policy forbids any other
source. Everything that comes from the model (names, sources, messages, values) is HTML-escaped where the
page is built, and the data the script reads is JSON inside ``<script type="application/json">`` with
``<``, ``>`` and ``&`` escaped, so that no string of a model can close that element; the script only ever
sets ``textContent``.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from movers.report.compare import Comparison, comparison
from movers.report.result import Result, TraceStep, Violation
from movers.report.safe import printable
from movers.report.shorten import entries_text, short_entries
from movers.report.steps import thread_names
from movers.report.text import CYCLE_MARK, STUTTER_MARK, compare_verdict, headline, store_line

HEADLINE = {"error": "error: the model could not be checked"}
HELD_BY = re.compile(r"\s*\(held by ([^)]+)\)")

CSS = """
:root { --fg: #1d232b; --muted: #5b6573; --line: #d5dae1; --bg: #ffffff; --soft: #f4f6f9; --accent: #2357c6;
        --bad: #b42318; --good: #1e7b34; --warn: #9a6400; --sel: #fff2c2; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
       background: var(--bg); }
header { padding: 14px 20px; border-bottom: 1px solid var(--line); background: var(--soft); }
h1 { font-size: 18px; margin: 0 0 6px; }
h2 { font-size: 16px; margin: 18px 0 8px; }
.message { white-space: pre-line; }
h3 { font-size: 14px; margin: 14px 0 6px; }
code, .src, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 12.5px; }
.verdict { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff; font-weight: 600; }
.verdict-ok { background: var(--good); } .verdict-violation, .verdict-error { background: var(--bad); }
.verdict-incomplete { background: var(--warn); }
.summary { display: flex; flex-wrap: wrap; gap: 4px 22px; margin: 8px 0 0; }
.summary div { white-space: nowrap; } .summary dt { display: inline; color: var(--muted); margin-right: 5px; }
.summary dd { display: inline; margin: 0; font-weight: 600; }
.notes { color: var(--muted); margin: 6px 0 0; padding-left: 18px; }
main { display: flex; align-items: flex-start; gap: 16px; padding: 0 20px 20px; }
#report { flex: 1 1 auto; min-width: 0; }
#state-panel { flex: 0 0 400px; position: sticky; top: 0; max-height: 100vh; overflow: auto; margin-top: 14px;
               border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; background: var(--soft); }
#state-panel:empty { display: none; }
table.grid { border-collapse: collapse; width: 100%; }
table.grid th, table.grid td { border: 1px solid var(--line); padding: 3px 6px; vertical-align: top;
                               text-align: left; }
table.grid th { background: var(--soft); font-weight: 600; }
table.lanes { table-layout: fixed; }
table.lanes th.stepno, table.lanes td.stepno { width: 44px; text-align: right; color: var(--muted); }
button.step { display: block; width: 100%; text-align: left; border: 1px solid #b9c7e6; border-radius: 4px;
              background: #eef3fd; padding: 2px 5px; cursor: pointer; font: inherit; color: inherit; }
button.step:hover { border-color: var(--accent); }
button.step.selected { background: var(--sel); border-color: #d9a400; }
button.step.last { border-color: var(--bad); }
.line { color: var(--muted); font-size: 12px; margin-right: 4px; }
.changes { display: block; color: #0f5132; font-size: 12px; overflow-wrap: anywhere; }
.src { overflow-wrap: anywhere; }
.panel-title { font-weight: 600; margin: 2px 0 6px; }
.thread { border: 1px solid var(--line); border-radius: 4px; background: var(--bg); padding: 4px 8px;
          margin-bottom: 6px; }
.thread.moved { border-color: var(--accent); box-shadow: inset 3px 0 0 var(--accent); }
.thread-head { font-weight: 600; } .thread-head .status { font-weight: 400; color: var(--muted); }
.thread dl { margin: 2px 0 0; display: grid; grid-template-columns: auto 1fr; gap: 1px 8px; font-size: 12.5px; }
.thread dt { color: var(--muted); } .thread dd { margin: 0; overflow-wrap: anywhere; }
.changed td { background: var(--sel); }
.moved td { background: #e6eefc; }
.kind { color: var(--bad); }
.hint { color: var(--muted); margin: 4px 0 8px; }
svg.chart text { font-size: 12px; fill: var(--fg); }
svg.chart .chart-title { font-weight: 600; }
svg.chart rect.states { fill: #4a78d4; } svg.chart rect.seconds { fill: #d4894a; }
.charts { display: flex; flex-wrap: wrap; gap: 24px; margin-top: 12px; }
#compare { margin-top: 14px; }
"""

# Renders the state of the clicked step from the embedded JSON; text only (textContent), never markup.
JS = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("movers-data").textContent);
  var panel = document.getElementById("state-panel");
  if (!panel) { return; }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }
  function table(headers, rows, rowClass) {
    var t = el("table", null, "grid"), tr = el("tr");
    headers.forEach(function (h) { tr.appendChild(el("th", h)); });
    var thead = el("thead"); thead.appendChild(tr); t.appendChild(thead);
    var body = el("tbody");
    rows.forEach(function (r, i) {
      var row = el("tr", null, rowClass ? rowClass(i) : "");
      r.forEach(function (c) { row.appendChild(el("td", c)); });
      body.appendChild(row);
    });
    t.appendChild(body);
    return t;
  }
  function show(vi, si) {
    var v = data.violations[vi], step = v.steps[si], state = step.state;
    var buttons = document.querySelectorAll("button.step");
    Array.prototype.forEach.call(buttons, function (b) {
      var on = Number(b.dataset.violation) === vi && Number(b.dataset.step) === si + 1;
      b.classList.toggle("selected", on);
      b.setAttribute("aria-pressed", on ? "true" : "false");
    });
    panel.textContent = "";
    panel.dataset.violation = String(vi);
    panel.dataset.step = String(si + 1);
    var who = v.threads[String(step.thread)] || String(step.thread);
    var where = "thread " + who + ", line " + step.line + ": " + step.source;
    if (!state) {
      panel.appendChild(el("p", "Step " + (si + 1) + " (" + where + "): no state recorded.", "panel-title"));
      return;
    }
    var title = state.failed ? "Step " + (si + 1) + " fails: the state before it"
                             : "State after step " + (si + 1);
    panel.appendChild(el("p", title, "panel-title"));
    panel.appendChild(el("p", where, "mono"));
    if (state.error) { panel.appendChild(el("p", state.error)); return; }
    var changed = step.changes || {};
    var names = Object.keys(state.globals);
    panel.appendChild(el("h3", "globals and heap"));
    panel.appendChild(table(["name", "value"], names.map(function (k) { return [k, state.globals[k]]; }),
      function (i) { return Object.prototype.hasOwnProperty.call(changed, names[i]) ? "changed" : ""; }));
    panel.appendChild(el("h3", "threads"));
    state.threads.forEach(function (th) {
      var box = el("div", null, "thread" + (th.thread === step.thread ? " moved" : ""));
      box.dataset.thread = String(th.thread);
      var head = el("div", "thread " + (v.threads[String(th.thread)] || th.thread) + " ", "thread-head");
      head.appendChild(el("span", th.status, "status"));
      box.appendChild(head);
      var dl = el("dl");
      function item(k, val) { if (val) { dl.appendChild(el("dt", k)); dl.appendChild(el("dd", val)); } }
      item("reason", th.waits);
      item("holds", th.holds.join(", "));
      item("stack", th.stack.map(function (f) { return f["function"] + ":" + f.line; }).join(" > "));
      item("next", th.next);
      item("locals", Object.keys(th.locals).map(function (k) { return k + " = " + th.locals[k]; }).join(", "));
      box.appendChild(dl);
      panel.appendChild(box);
    });
  }
  document.addEventListener("click", function (ev) {
    var b = ev.target.closest ? ev.target.closest("button.step") : null;
    if (b) { show(Number(b.dataset.violation), Number(b.dataset.step) - 1); }
  });
  document.addEventListener("keydown", function (ev) {
    // Up and down walk through the steps of the selected counterexample.
    if (ev.key !== "ArrowDown" && ev.key !== "ArrowUp") { return; }
    var vi = Number(panel.dataset.violation), si = Number(panel.dataset.step) - 1;
    if (isNaN(vi) || isNaN(si)) { return; }
    var next = si + (ev.key === "ArrowDown" ? 1 : -1);
    if (next >= 0 && next < data.violations[vi].steps.length) { ev.preventDefault(); show(vi, next); }
  });
  if (data.violations.length && data.violations[0].steps.length) {
    show(0, data.violations[0].steps.length - 1);
  }
})();
"""


def esc(value: object) -> str:
    """``value`` as HTML text: markup escaped, and control characters (a model's `ESC[2J`, a NUL) shown as
    their escapes, as the text report shows them (a NUL is not allowed in an HTML document)."""
    return html.escape(printable(str(value), True), quote=True)


_C1 = re.compile("[\x7f-\x9f]")


def embed_json(data: object) -> str:
    """``data`` as JSON that can sit inside a ``<script>`` element: no ``<`` (so no ``</script>`` nor
    ``<!--``), ``>`` and ``&`` escaped as JSON escapes, which parse back to the same strings."""
    text = json.dumps(data, ensure_ascii=False)
    for ch in "<>&\u2028\u2029":
        text = text.replace(ch, f"\\u{ord(ch):04x}")
    # JSON leaves DEL and the C1 controls raw: a page holds no control character of the model's.
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _page(title: str, header: str, body: str, data: dict[str, Any], panel: bool) -> str:
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<header>{header}</header>",
        f'<main><div id="report">{body}</div>' + ('<aside id="state-panel" aria-live="polite"></aside>'
                                                   if panel else "") + "</main>",
        f'<script type="application/json" id="movers-data">{embed_json(data)}</script>',
        f"<script>{JS}</script>",
        "</body></html>",
        "",
    ])


def _summary(result: Result, model: str) -> str:
    s = result.stats
    head = result.headline or HEADLINE.get(result.verdict) or headline(result)
    rows = [("model", model or result.model), ("reduction", result.reduction), ("search", result.search)]
    if result.verdict != "error":
        rate = f"{s.states_per_second:,.0f}" if s.seconds > 0 else "-"
        rows += [("states", f"{s.states:,}"), ("transitions", f"{s.transitions:,}"),
                 ("max depth", str(s.max_depth)), ("seconds", f"{s.seconds:.3f}"), ("states/s", rate),
                 ("peak memory", f"{s.peak_memory_mb:.1f} MB")]
        if s.transactions:
            rows.append(("transactions", f"{s.transactions:,}"))
        if s.moves and s.moves != s.transitions:
            rows.append(("moves", f"{s.moves:,}"))
        store = store_line(result.store)
        if store:
            rows.append(("store", store.removeprefix("store: ")))
        if result.symmetry != "off":
            rows.append(("symmetry", result.symmetry))
    out = [f'<h1>movers: {esc(model or result.model)}</h1>',
           f'<p><span class="verdict verdict-{esc(result.verdict)}" id="verdict">{esc(result.verdict)}</span> '
           f"{esc(head)}</p>"]
    if result.verdict == "error":
        out.append(f'<p class="mono" id="error">{esc(result.error or "")}</p>')
    out.append('<dl class="summary" id="summary">'
               + "".join(f'<div data-key="{esc(k)}"><dt>{esc(k)}</dt><dd>{esc(v)}</dd></div>' for k, v in rows)
               + "</dl>")
    if result.notes:
        out.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in result.notes) + "</ul>")
    return "\n".join(out)


def _changes(st: TraceStep) -> str:
    return entries_text(st.changes, ("started", "terminated"))


def _short(entries: dict[str, str]) -> dict[str, str]:
    """``entries`` as the page shows them: long values and long runs of elements cut (report/shorten.py)."""
    return {k: v or "" for k, v in short_entries(entries)}


def _short_state(state: dict[str, Any] | None) -> dict[str, Any] | None:
    if not state or "globals" not in state:
        return state
    return {**state, "globals": _short(state["globals"]),
            "threads": [{**th, "locals": _short(th["locals"])} for th in state["threads"]]}


def _lanes(k: int, v: Violation, names: dict[int, str]) -> str:
    cols = list(names)
    head = "".join(f'<th class="lane" data-thread="{t}">{esc(names[t])}</th>' for t in cols)
    rows = []
    for i, st in enumerate(v.trace, 1):
        if v.cycle_start == i - 1:  # a liveness violation's lasso: from here on, the cycle
            rows.append(_cycle_row(len(cols), CYCLE_MARK))
        cells = []
        for t in cols:
            if t != st.thread:
                cells.append("<td></td>")
                continue
            ch = _changes(st)
            last = " last" if i == len(v.trace) else ""
            cells.append(
                f'<td><button type="button" class="step{last}" data-violation="{k}" data-step="{i}" '
                f'data-thread="{t}" aria-pressed="false" title="show the state after step {i}">'
                f'<span class="line">{st.line}</span><code class="src">{esc(st.shown_source())}</code>'
                + (f'<span class="changes">{esc(ch)}</span>' if ch else "") + "</button></td>")
        rows.append(f'<tr><td class="stepno">{i}</td>{"".join(cells)}</tr>')
    if v.cycle_start is not None and v.cycle_start >= len(v.trace):
        rows.append(_cycle_row(len(cols), STUTTER_MARK))
    return (f'<table class="grid lanes" id="lanes-{k}"><thead><tr><th class="stepno">step</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _cycle_row(lanes: int, mark: str) -> str:
    return f'<tr class="cycle"><td class="stepno"></td><td colspan="{max(lanes, 1)}"><b>{esc(mark)}</b></td></tr>'


def deadlock_rows(v: Violation, names: dict[int, str]) -> list[tuple[str, str, str, str, str, str]]:
    """Per thread of a deadlock: thread, status, what it waits on, who holds that, what it holds, stack."""
    out = []
    for th in v.state.get("threads", []):
        waits = th.get("waits") or ""
        m = HELD_BY.search(waits)
        holder = m.group(1) if m else ""
        stack = " > ".join(f"{f['function']}:{f['line']}" for f in th["stack"])
        out.append((names.get(th["thread"], str(th["thread"])), th["status"], HELD_BY.sub("", waits), holder,
                    ", ".join(th["holds"]), stack))
    return out


def _deadlock(k: int, v: Violation, names: dict[int, str]) -> str:
    head = "".join(f"<th>{h}</th>" for h in ("thread", "status", "waits on", "held by", "holds",
                                            "stack (innermost last)"))
    rows = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in deadlock_rows(v, names))
    return (f'<h3>threads in the deadlock</h3><table class="grid deadlock" id="deadlock-{k}">'
            f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")


def _violation(k: int, v: Violation) -> str:
    names = thread_names(v)
    out = [f'<section class="violation" id="violation-{k}">',
           f'<h2><span class="kind">{esc(v.kind)}</span>: <span class="message">{esc(v.message)}</span></h2>']
    if v.values:  # a failed assert: what its condition read
        where = entries_text(v.values)
        out.append(f'<p class="values">where {esc(where)}</p>')
    if v.trace:
        n = len(v.trace)
        out.append(f'<p class="hint">counterexample: {n} step{"" if n == 1 else "s"}, one column per thread. '
                   "Click a step to see the state after it (up and down arrows move through the steps).</p>")
        out.append(_lanes(k, v, names))
    else:
        out.append('<p class="hint">no steps: the violation shows in the initial state.</p>')
    if v.kind == "deadlock" and v.state.get("threads"):
        out.append(_deadlock(k, v, names))
    out.append("</section>")
    return "\n".join(out)


def _named_table(title: str, ident: str, heads: tuple[str, str], items: dict[str, str]) -> str:
    rows = "".join(f"<tr><td>{esc(a)}</td><td>{esc(b)}</td></tr>" for a, b in items.items())
    return (f'<h2>{esc(title)}</h2><table class="grid" id="{ident}"><thead><tr><th>{heads[0]}</th>'
            f"<th>{heads[1]}</th></tr></thead><tbody>{rows}</tbody></table>")


def render_result(result: Result, model: str = "") -> str:
    """The page of one check or replay."""
    body = [_violation(k, v) for k, v in enumerate(result.violations)]
    if result.classification:
        body.append(_named_table("classification of locations", "classification", ("location", "classified"),
                                 result.classification))
    if result.locks:
        body.append(_named_table("inferred protecting locks", "locks", ("location", "protected by"), result.locks))
    if not body and _no_violation(result):
        body.append(f'<p class="hint">{esc(_no_violation(result))}</p>')
    data = {"model": model or result.model, "verdict": result.verdict,
            "violations": [{"kind": v.kind, "message": v.message,
                            "threads": {str(t): name for t, name in thread_names(v).items()},
                            "steps": [{**st.to_json(), "changes": _short(st.changes), "state": _short_state(st.state)}
                                      for st in v.trace]}
                           for v in result.violations]}
    traces = any(v.trace for v in result.violations)
    return _page(f"movers: {model or result.model}", _summary(result, model), "\n".join(body), data, traces)


def _no_violation(result: Result) -> str:
    if result.headline:
        return ""  # a replay ran one trail, not every interleaving: its headline and notes say what happened
    if result.verdict == "ok":
        return "No interleaving violates an assertion, an invariant or a declaration, and none deadlocks."
    if result.verdict == "incomplete":
        return "The search stopped before it explored every interleaving: no violation among those it explored."
    return "The model was not checked."


def _bars(title: str, cls: str, rows: list[tuple[str, float | None, str]]) -> str:
    """A horizontal bar chart in SVG: one bar per (name, value, label); a value None gets no bar."""
    top = max((v for _, v, _ in rows if v), default=0) or 1
    height = 30 + 26 * len(rows)
    out = [f'<svg class="chart {cls}" role="img" aria-label="{esc(title)}" width="460" height="{height}" '
           f'viewBox="0 0 460 {height}"><text x="0" y="16" class="chart-title">{esc(title)}</text>']
    for i, (name, value, label) in enumerate(rows):
        y = 28 + 26 * i
        width = 0.0 if value is None else max(1.0, 230 * value / top)
        out.append(f'<text x="0" y="{y + 15}">{esc(name)}</text>')
        if value is not None:
            out.append(f'<rect class="bar {cls}" data-reduction="{esc(name)}" x="130" y="{y}" '
                       f'width="{width:.1f}" height="20"><title>{esc(name)}: {esc(label)}</title></rect>')
        out.append(f'<text x="{134 + width:.1f}" y="{y + 15}">{esc(label)}</text>')
    out.append("</svg>")
    return "".join(out)


def render_compare(rows: list[Result], model: str, standard: dict[str, Result] | None = None) -> str:
    """The page of ``movers compare``: a table of the rows, and bar charts of states and seconds."""
    return compare_page(comparison(rows, model, standard))


def compare_page(c: Comparison) -> str:
    """The page of a comparison (report/compare.py)."""
    from movers.reduce import BASELINE

    heads = ["reduction", "verdict", "states", "transitions", "moves", "seconds", "states/s", "peak MB",
             f"states vs {BASELINE}"]
    if c.with_standard:
        heads[2:3] = ["standard states", "instrumented states"]
    body_rows = []
    for row, ratio in zip(c.rows, c.ratios(), strict=True):
        r, s = row.result, row.result.stats
        states = [f"{s.states:,}" if not row.refused else ""]
        if c.with_standard:
            std = row.standard_states
            states.insert(0, f"{std:,}" if std is not None else "")
        cells = [r.reduction, compare_verdict(r), *states, f"{s.transitions:,}", f"{s.moves:,}", f"{s.seconds:.3f}",
                 f"{s.states_per_second:,.0f}", f"{s.peak_memory_mb:.1f}",
                 f"{ratio.value:.2f}" if ratio.value is not None else ""]
        body_rows.append(f'<tr data-reduction="{esc(r.reduction)}">'
                         + "".join(f"<td>{esc(cell)}</td>" for cell in cells)
                         + "</tr>")
    table = (f'<table class="grid" id="compare"><thead><tr>{"".join(f"<th>{esc(h)}</th>" for h in heads)}</tr>'
             f'</thead><tbody>{"".join(body_rows)}</tbody></table>')
    results = [row.result for row in c.rows]
    charts = ('<div class="charts">'
              + _bars("states", "states", [(r.reduction, r.stats.states if r.verdict != "error" else None,
                                            f"{r.stats.states:,}" if r.verdict != "error" else "refused")
                                           for r in results])
              + _bars("seconds", "seconds", [(r.reduction, r.stats.seconds if r.verdict != "error" else None,
                                              f"{r.stats.seconds:.3f} s" if r.verdict != "error" else "refused")
                                             for r in results])
              + "</div>")
    n = len(c.rows)
    header = (f"<h1>movers compare: {esc(c.model)}</h1>"
              f'<p>{n} reduction{"" if n == 1 else "s"} on the same model'
              + (" (each also with its standard search, no atomicity checking)" if c.with_standard else "") + "</p>")
    data = {"model": c.model, "rows": [r.to_json() for r in results], "violations": []}
    return _page(f"movers compare: {c.model}", header, table + charts, data, False)


__all__ = ["compare_page", "deadlock_rows", "embed_json", "esc", "render_compare", "render_result"]
