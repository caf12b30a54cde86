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
- stdout that cannot be written never turns a violation or an incomplete run into exit 0.

Each violation is a ``Finding`` whose ``signature`` names its cause without the details that vary from
input to input (the exception type and the function that raised it; the function a hang was in), so that a
campaign can count distinct bugs, not inputs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .cases import Case

DOCUMENTED = {0, 1, 2, 3}
VERDICT_CODE = {"ok": 0, "violation": 1, "error": 2, "incomplete": 3}
CATEGORIES = ("traceback", "hang", "exit-code", "json", "canary", "other")


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
    if out.killed or out.wall > case.budget():
        add("hang", f"hang @ {hang_site(stderr)} ({label})",
            f"ran {out.wall:.1f} s, time limit {case.time_limit}, budget {case.budget():.1f} s")
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
    if case.command == "check":
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
    if code == 2 and case.stdout == "file" and not any(m.strip() for m in messages):
        add("other", "exit 2 without a message", label)
    for loc in _locations(messages):
        add("other", "message: line or column below 1", loc)
    if case.command == "check" and not case.json and case.stdout == "file" and code in (0, 1, 3):
        first = stdout.lstrip().split("\n", 1)[0]
        want = {0: "verified", 1: "violation found", 3: "incomplete"}[code]
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
