"""The oracle: the contract of docs/cli.md, checked on one run of `movers`.

- the exit code is 0 (verified), 1 (violation), 2 (bad model or command line) or 3 (incomplete); 4 is the
  documented internal error, and a movers bug, so it fails the campaign like any other code or a signal;
- no Python traceback (nor "Exception ignored", nor a fatal error) on stderr;
- with ``--json``, stdout is exactly one JSON value whose verdict agrees with the exit code (no JSON only
  for a command-line error, which is said on stderr);
- limits hold: the run ends within its time limit plus a generous slack, and never stores more states
  than ``--max-states``;
- a model is never executed: its canary file never appears;
- a bad model is said with ``file:line:col`` where line and column are 1-based;
- stdout that cannot be written never turns a violation or an incomplete run into exit 0;
- every JSON object validates against docs/result.schema.json; ``--format sarif`` is one SARIF 2.1.0
  object and ``--format junit`` well-formed XML;
- no raw control character (\\x00-\\x08, \\x0b-\\x1f, \\x7f; not \\n, \\t or \\r) reaches stdout, stderr,
  a JUnit report or an HTML page: a model's string must not clear the user's terminal;
- the model's strings are printed as written: rich markup is not interpreted, HTML and XML are escaped;
- ``--html FILE`` writes a well-formed page (doctype, balanced elements, UTF-8);
- ``--trail FILE`` writes a trail on a violation and nothing otherwise, and the trail replays: ``movers
  replay`` of a pristine trail finds the violation again (exit 1), of a corrupted one exits 0, 1 or 2;
- a lossy store (``--store hashcompact|bitstate``) never says "verified … in any interleaving", and a
  bitstate search whose expected coverage is below 99.9% never exits 0 (it is incomplete, reason
  ``coverage``);
- ``--workers 2`` gives the sequential search's verdict, and leaves no process running behind it.

Each violation is a ``Finding`` whose ``signature`` names its cause without the details that vary from
input to input (the exception type and the function that raised it; the function a hang was in), so that a
campaign can count distinct bugs, not inputs.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import lru_cache
from html.parser import HTMLParser

from .cases import HTML, TRAIL, Case
from .corpus import ROOT
from .hostile import MARKUP, RAW_TAG

DOCUMENTED = {0, 1, 2, 3}
VERDICT_CODE = {"ok": 0, "violation": 1, "error": 2, "incomplete": 3}
CATEGORIES = ("traceback", "hang", "exit-code", "json", "canary", "control", "markup", "html", "format", "trail",
              "lossy", "workers", "other")
# Raw control characters that text output must not carry (a terminal acts on them).
CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
COVERAGE = 0.999


@dataclass
class Outcome:
    code: int | None          # exit status, None when killed by a signal
    signal: int | None
    wall: float
    killed: bool              # the watchdog had to stop it
    canary_fired: bool
    stdout: bytes
    stderr: bytes
    reference_code: int | None = None  # the same input with an ordinary stdout (for stdout variants)
    files: dict[str, bytes | None] = field(default_factory=dict)  # Case.outputs after the run (None: absent)
    pre_codes: list[int | None] = field(default_factory=list)     # exit codes of Case.pre
    sequential_code: int | None = None  # Case.sequential_argv's exit code (the same run without --workers)
    leaked: int = 0                     # processes of the run's group still alive after it exited
    budget: float | None = None         # the wall seconds the run was given (None: Case.budget() on a quiet machine)


@dataclass(frozen=True)
class Finding:
    category: str
    signature: str
    detail: str


_FRAME = re.compile(r'File "([^"]+)", line (\d+),? in (\S+)')


def _site(path: str, func: str) -> str:
    m = re.search(r"(movers/.*)$", path)
    where = m.group(1) if m else path.rsplit("/", 1)[-1]
    return f"{where}:{func}"


def traceback_site(stderr: str) -> tuple[str, str]:
    """(exception type, innermost movers frame) of the last traceback on stderr."""
    block = stderr[stderr.rfind("Traceback (most recent call last)"):]
    frames = _FRAME.findall(block)
    exc = "?"
    for line in block.splitlines()[1:]:
        if line and not line.startswith(" ") and not line.startswith("Traceback"):
            m = re.match(r"([\w.]+)(?::|$)", line)
            if m:
                exc = m.group(1)
                break
    ours = [f for f in frames if "/movers/" in f[0] and "/tests/fuzz/" not in f[0]]
    frame = (ours or frames or [("?", "0", "?")])[-1]
    return exc, _site(frame[0], frame[2])


def hang_site(stderr: str) -> str:
    """The innermost movers function of faulthandler's stack dump (most recent call first)."""
    dump = stderr[stderr.rfind("most recent call first"):]
    frames = _FRAME.findall(dump)
    ours = [f for f in frames if "/movers/" in f[0] and "/tests/fuzz/" not in f[0]]
    if ours:
        return _site(ours[0][0], ours[0][2])
    return _site(frames[0][0], frames[0][2]) if frames else "?"


def _after(stderr: str, marker: str) -> str:
    """"Exception ignored" or "Fatal Python error", with the exception or error that follows it."""
    tail = stderr[stderr.find(marker):]
    m = (re.search(r"(?m)^(\w+(?:Error|Exception|Interrupt))\b", tail)
         or re.search(re.escape(marker) + r":? ?(.{0,40})", tail))
    return f"{marker}: {m.group(1).strip()}" if m else marker


def _option(argv: list[str], name: str) -> str | None:
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def _positive_int(text: str | None) -> int | None:
    try:
        v = int(text) if text is not None else None
    except ValueError:
        return None
    return v if v is not None and v > 0 else None


def _label(case: Case) -> str:
    """What kind of run: the command and reduction (the same bug often shows under one reduction only)."""
    if case.command == "check":
        return f"check --reduction {_option(case.argv, '--reduction') or 'none'}"
    return case.command or "?"


def _cmdline_error(stderr: str) -> bool:
    return "movers: error:" in stderr or "usage:" in stderr


def _locations(messages: list[str]) -> list[str]:
    bad = []
    for msg in messages:
        for m in re.finditer(r"(?m)^(.+?):(-?\d+):(-?\d+): ", msg):
            if int(m.group(2)) < 1 or int(m.group(3)) < 1:
                bad.append(m.group(0))
    return bad


def judge(case: Case, out: Outcome) -> list[Finding]:
    found: list[Finding] = []
    stderr = out.stderr.decode("utf-8", "replace")
    stdout = out.stdout.decode("utf-8", "replace")
    label = _label(case)

    def add(category: str, signature: str, detail: str) -> None:
        found.append(Finding(category, signature, detail))

    if out.canary_fired:
        add("canary", "canary: the model was executed by Python", case.origin)
    budget = out.budget if out.budget is not None else case.budget()
    if out.killed or out.wall > budget:
        add("hang", f"hang @ {hang_site(stderr)} ({label})",
            f"ran {out.wall:.1f} s, time limit {case.time_limit}, budget {budget:.1f} s")
        return found  # what a stopped run printed says nothing more
    crash = None
    for marker in ("Traceback (most recent call last)", "Exception ignored", "Fatal Python error"):
        if marker in stderr:
            exc, site = traceback_site(stderr) if marker.startswith("Traceback") else (_after(stderr, marker), "")
            crash = f"{exc} @ {site}" if site else exc
            add("traceback", crash, stderr[-1500:])
            break
    # A crash explains the exit code and the missing output that follow it: one cause, one signature.
    if out.code is None:
        add("exit-code", crash or f"killed by signal {out.signal}", f"{label}: {stderr[-500:]}")
    elif out.code not in DOCUMENTED:
        what = "internal error (exit 4)" if out.code == 4 else f"exit {out.code}"
        add("exit-code", crash or what, f"{label}: {stderr[-500:]}")
    if out.code is None or crash:
        return found
    obj = _json_rules(case, out, stdout, stderr, add)
    _message_rules(case, out.code, stdout, stderr, obj, add)
    _limit_rules(case, obj, add)
    if case.stdout != "file" and out.reference_code in (1, 3) and out.code == 0:
        add("other", f"stdout {case.stdout}: exit 0 hides exit {out.reference_code}", f"{label}: {stderr[-500:]}")
    _format_rules(case, out, stdout, add)
    _text_rules(case, out, add)
    _html_rules(case, out, add)
    _trail_rules(case, out, stderr, add)
    _lossy_rules(case, out, stdout, obj, add)
    _workers_rules(case, out, add)
    return found


def _json_rules(case: Case, out: Outcome, stdout: str, stderr: str, add) -> object:
    """The one JSON value of --json, checked against the exit code; returns it (or None)."""
    if not case.json or case.stdout != "file" or out.code is None:
        return None
    label = _label(case)
    if not stdout.strip():
        if not (out.code == 2 and _cmdline_error(stderr)):
            add("json", f"json: nothing on stdout, exit {out.code}", f"{label}: {stderr[-500:]}")
        return None
    try:
        obj = json.loads(stdout)
    except ValueError as e:
        add("json", f"json: not one JSON value, exit {out.code}", f"{label}: {e}: {stdout[:300]!r}")
        return None
    rows = obj if isinstance(obj, list) else [obj]
    for row in rows:
        problem = schema_problem(row)
        if problem:
            add("json", f"json: not as docs/result.schema.json says: {problem[0]}", f"{label}: {problem[1]}")
            break
    if case.command in ("check", "replay"):
        if not isinstance(obj, dict) or obj.get("verdict") not in VERDICT_CODE:
            add("json", "json: no verdict", f"{label}: {stdout[:300]}")
        elif VERDICT_CODE[obj["verdict"]] != out.code:
            add("json", f"json: verdict {obj['verdict']} with exit {out.code}", f"{label}: {stdout[:300]}")
    elif case.command == "compare":
        if isinstance(obj, dict):
            if out.code != 2 or not obj.get("error"):
                add("json", f"json: compare object without an error, exit {out.code}", stdout[:300])
        elif not isinstance(obj, list) or not all(isinstance(r, dict) and r.get("verdict") in VERDICT_CODE
                                                  for r in obj):
            add("json", "json: compare rows without verdicts", stdout[:300])
        else:
            codes = [VERDICT_CODE[r["verdict"]] for r in obj if r["verdict"] != "error"]
            if out.code != max(codes, default=2):
                add("json", f"json: compare exit {out.code} where rows give {max(codes, default=2)}", stdout[:300])
    return obj


def _message_rules(case: Case, code: int, stdout: str, stderr: str, obj: object, add) -> None:
    label = _label(case)
    messages = [stderr]
    if isinstance(obj, dict) and obj.get("error"):
        messages.append(str(obj["error"]))
    if isinstance(obj, list):  # compare --json: a list of rows, a model that does not compile as one error row
        messages.extend(str(r["error"]) for r in obj if isinstance(r, dict) and r.get("error"))
    if case.option("--format") in ("sarif", "junit"):
        messages.append(stdout)  # a model that cannot be checked is reported in the SARIF or JUnit report
    if code == 2 and case.stdout == "file" and not any(m.strip() for m in messages):
        add("other", "exit 2 without a message", label)
    for loc in _locations(messages):
        add("other", "message: line or column below 1", loc)
    if case.command == "check" and not case.json and case.stdout == "file" and code in (0, 1, 3) \
            and case.option("--format") in (None, "text"):
        first = stdout.lstrip().split("\n", 1)[0]
        want = {0: "verified", 1: "violation found", 3: "incomplete"}[code]
        if code == 0 and case.option("--store") in ("hashcompact", "bitstate"):
            want = "no violation found in"  # a lossy store proves nothing: it says what it searched
        if not first.startswith(want):
            add("other", f"text: first line is not '{want}' for exit {code}", f"{label}: {first[:200]!r}, "
                f"stderr {stderr[-200:]!r}")


def _limit_rules(case: Case, obj: object, add) -> None:
    cap = _positive_int(_option(case.argv, "--max-states"))
    if cap is None:
        return
    rows = obj if isinstance(obj, list) else [obj] if isinstance(obj, dict) else []
    for r in rows:
        states = (r.get("stats") or {}).get("states") if isinstance(r, dict) else None
        if isinstance(states, int) and states > cap:
            add("other", "limit: more states stored than --max-states",
                f"{states} states stored with --max-states {cap} ({r.get('reduction')})")


@lru_cache(maxsize=1)
def _validator():
    import jsonschema

    schema = json.loads((ROOT / "docs" / "result.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def schema_problem(obj: object) -> tuple[str, str] | None:
    """(a signature that names where the object breaks the schema, the detail), or None."""
    if isinstance(obj, dict) and set(obj) == {"error"}:
        return None  # compare's "the model does not compile" object (docs/cli.md)
    errors = sorted(_validator().iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    if not errors:
        return None
    e = errors[0]
    where = "/".join("[]" if isinstance(p, int) else str(p) for p in e.absolute_path) or "(top)"
    return f"{where}: {e.validator}", f"{where}: {e.message[:300]}"


def _format_rules(case: Case, out: Outcome, stdout: str, add) -> None:
    fmt = case.option("--format")
    if case.command != "check" or case.stdout != "file" or fmt not in ("sarif", "junit") or not stdout.strip():
        return
    label = _label(case)
    if fmt == "sarif":
        try:
            obj = json.loads(stdout)
        except ValueError as e:
            add("format", "sarif: not one JSON value", f"{label}: {e}: {stdout[:300]!r}")
            return
        if not (isinstance(obj, dict) and obj.get("version") == "2.1.0" and isinstance(obj.get("runs"), list)):
            add("format", "sarif: not a SARIF 2.1.0 log", f"{label}: {stdout[:300]}")
        return
    try:
        ET.fromstring(out.stdout)
    except ET.ParseError as e:
        add("format", "junit: not well-formed XML", f"{label}: {e}: {stdout[:300]!r}")
        return
    if RAW_TAG in out.stdout:
        add("markup", "junit: a model's string is not escaped", f"{label}: {RAW_TAG!r}")


def _control_name(b: int) -> str:
    return {0x1b: "ESC", 0x07: "BEL", 0x00: "NUL", 0x08: "BS", 0x7f: "DEL"}.get(b, "a control character")


def _text_rules(case: Case, out: Outcome, add) -> None:
    """Raw control characters in what a terminal shows, and rich markup taken from a model's string."""
    label = _label(case)
    streams = [("stderr", out.stderr)]
    if case.stdout == "file":
        streams.append(("stdout", out.stdout))
    for where, data in streams:
        m = CONTROL.search(data)
        if m:
            add("control", f"control: raw {_control_name(m.group(0)[0])} on {where} ({label})",
                repr(data[max(0, m.start() - 80): m.end() + 80]))
    text = out.stdout + out.stderr
    token = MARKUP.encode()
    if b"fzmk" in text and token not in text and b"[b]fzmk" not in text and b"fzmk[/b]" not in text:
        add("markup", f"markup: rich markup in a model's string was interpreted ({label})",
            repr(text[max(0, text.find(b"fzmk") - 80): text.find(b"fzmk") + 80]))


class _Balance(HTMLParser):
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.doctype = False

    def handle_decl(self, decl: str) -> None:
        self.doctype = self.doctype or decl.lower().startswith("doctype html")

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
            if tag in self.stack:
                del self.stack[len(self.stack) - 1 - self.stack[::-1].index(tag):]
        else:
            self.stack.pop()


def html_problem(data: bytes) -> str | None:
    """Why ``data`` is not a well-formed, self-contained page, or None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"not UTF-8 ({e.reason})"
    p = _Balance()
    try:
        p.feed(text)
        p.close()
    except (AssertionError, ValueError) as e:  # HTMLParser's own complaints
        return f"does not parse ({type(e).__name__})"
    if not p.doctype:
        return "no <!DOCTYPE html>"
    if p.errors:
        return "unbalanced elements"
    if p.stack:
        return "unclosed elements"
    if not text.rstrip().endswith("</html>"):
        return "does not end with </html>"
    return None


def _html_rules(case: Case, out: Outcome, add) -> None:
    if HTML not in case.outputs or out.code not in (0, 1, 3) or case.stdout != "file" or case.sigint:
        return
    label = _label(case)
    data = out.files.get(HTML)
    if data is None:
        if b"cannot write" not in out.stderr:
            add("html", f"html: --html wrote no page, exit {out.code} ({label})", out.stderr[-300:].decode(
                "utf-8", "replace"))
        return
    problem = html_problem(data)
    if problem:
        add("html", f"html: the page is not well-formed: {problem} ({case.command})", f"{label}: {data[:200]!r}")
    if RAW_TAG in data or b"<script>alert(1)" in data:
        add("markup", f"html: a model's string is not escaped ({case.command})", label)
    m = CONTROL.search(data)
    if m:
        add("control", f"control: raw {_control_name(m.group(0)[0])} in the HTML page ({case.command})",
            repr(data[max(0, m.start() - 80): m.end() + 80]))


def _trail_rules(case: Case, out: Outcome, stderr: str, add) -> None:
    label = _label(case)
    if case.command == "check" and TRAIL in case.outputs and case.stdout == "file" and out.code is not None:
        data = out.files.get(TRAIL)
        if out.code == 1 and data is None and "cannot write" not in stderr:
            add("trail", "trail: a violation but no trail written", label)
        elif out.code != 1 and data is not None:
            add("trail", f"trail: a trail written for exit {out.code}", label)
        elif data is not None:
            try:
                obj = json.loads(data)
            except ValueError:
                obj = None
            if not (isinstance(obj, dict) and obj.get("movers_trail") == 1 and isinstance(obj.get("steps"), list)):
                add("trail", "trail: the trail written is not a trail", f"{label}: {data[:200]!r}")
    if case.command == "replay" and out.code is not None:
        if out.code not in (0, 1, 2, 3):
            return  # exit-code rule
        pristine = case.trail_mutation == "none" and out.pre_codes[:1] == [1]
        if pristine and out.code != 1 and not (out.code == 2 and "not replayed" in stderr):
            add("trail", f"trail: a pristine trail does not replay (exit {out.code})",
                f"{case.pre[0] if case.pre else ''}: {stderr[-400:]}")


def _lossy_rules(case: Case, out: Outcome, stdout: str, obj: object, add) -> None:
    store = case.option("--store")
    if case.command != "check" or store not in ("hashcompact", "bitstate") or case.stdout != "file":
        return
    if out.code == 0 and not case.json and "in any interleaving" in stdout:
        add("lossy", f"lossy: --store {store} said 'verified … in any interleaving'", stdout[:300])
    coverage = None
    if isinstance(obj, dict) and isinstance(obj.get("store"), dict):
        coverage = obj["store"].get("expected_coverage")
    else:
        m = re.search(r"expected coverage ([\d.]+)%", stdout)
        coverage = float(m.group(1)) / 100 if m else None
    if store == "bitstate" and out.code == 0 and isinstance(coverage, (int, float)) and coverage < COVERAGE:
        add("lossy", "lossy: a bitstate search below 99.9% expected coverage exited 0",
            f"expected coverage {coverage}, {case.option('--bits')} bits")


def _workers_rules(case: Case, out: Outcome, add) -> None:
    if out.leaked:
        add("workers", f"workers: {out.leaked} processes left running after movers exited", _label(case))
    seq = out.sequential_code
    if case.sequential_argv and seq in (0, 1) and out.code in (0, 1) and seq != out.code:
        add("workers", f"workers: exit {out.code} where the sequential search gives {seq}", _label(case))
