"""Trails (movers/trail.py): ``check --trail FILE`` saves a violation's steps, ``movers replay MODEL FILE``
re-runs them: 1 when the violation happens again, 0 when the model no longer has it, 2 when the file is not a
trail; a trail that no longer fits the model gives the verdict of checking the model with the trail's
options."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import EXAMPLES

import movers
from movers.cli import main
from movers.trail import TrailError, read_trail, replay, trail_of, write_trail

VIOLATING = [p for p in sorted(EXAMPLES.glob("*.py")) if "# Expected: violation" in p.read_text()]


def _save(tmp_path: Path, path: Path, **kw: object) -> tuple[movers.Result, Path]:
    r = movers.check(path, **kw)
    assert r.verdict == "violation", (path, r.verdict)
    f = tmp_path / "t.trail"
    write_trail(f, r, path.read_text(), str(path), kw.get("atomicity"))  # type: ignore[arg-type]
    return r, f


@pytest.mark.parametrize("path", VIOLATING, ids=lambda p: p.stem)
def test_every_violation_replays(tmp_path: Path, path: Path) -> None:
    r, f = _save(tmp_path, path)
    again = replay(path, read_trail(f))
    assert again.verdict == "violation" and again.violations[0].kind == r.violations[0].kind
    assert [(s.thread, s.line, s.changes) for s in again.violations[0].trace] == [
        (s.thread, s.line, s.changes) for s in r.violations[0].trace]


@pytest.mark.parametrize("reduction", ["optimistic", "transactions", "dwyer-da", "static-por"])
def test_trails_found_by_reductions_replay(tmp_path: Path, reduction: str) -> None:
    for name in ("racy_counter", "dining_philosophers", "fq_counter_nolock"):
        path = EXAMPLES / f"{name}.py"
        r, f = _save(tmp_path, path, reduction=reduction)
        again = replay(path, read_trail(f))
        assert again.verdict == "violation" and again.violations[0].kind == r.violations[0].kind, (name, reduction)


def test_an_atomicity_violation_replays_on_the_shadow_store(tmp_path: Path) -> None:
    path = EXAMPLES / "atomicity_bluetooth.py"
    r, f = _save(tmp_path, path, atomicity="commit")
    assert json.loads(f.read_text())["atomicity"] == "commit"
    again = replay(path, read_trail(f))
    assert again.verdict == "violation" and again.violations[0].kind == "atomicity"


def test_a_fixed_model_no_longer_has_it_and_a_changed_one_may_not_fit(tmp_path: Path) -> None:
    path = EXAMPLES / "racy_counter.py"
    _, f = _save(tmp_path, path)
    fixed = tmp_path / "fixed.py"
    fixed.write_text(path.read_text().replace('assert count == 2, "lost update"', 'assert count >= 1, "lost update"'))
    ok = replay(fixed, read_trail(f))
    assert ok.verdict == "ok" and "no longer happens" in ok.notes[0]
    locked = tmp_path / "locked.py"
    locked.write_text(path.read_text().replace("count = 0", "m = Lock()\ncount = 0").replace(
        "    tmp = count\n    count = tmp + 1", "    with m:\n        tmp = count\n        count = tmp + 1"))
    # The lock changes the steps: where the trail stops fitting is said, and the model is checked instead.
    checked = replay(locked, read_trail(f))
    assert checked.verdict == "ok" and checked.stats.states > 1
    assert re.match(r"the trail does not fit the model at step \d+: .*\(the model changed since the trail was "
                    r"written\); so the model was checked instead, with the trail's options \(--reduction none\)",
                    checked.notes[0])


def test_files_that_are_not_trails(tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    for text, why in (("not json", "not JSON"), ('{"a": 1}', "no 'movers_trail'"),
                      ('{"movers_trail": 99, "steps": []}', "schema 99"),
                      ('{"movers_trail": 1, "steps": [[0, "x"]]}', "[thread, [choices]]")):
        f.write_text(text)
        with pytest.raises(TrailError, match=why.replace("[", r"\[").replace("]", r"\]")):
            read_trail(f)
    with pytest.raises(TrailError, match="cannot read"):
        read_trail(tmp_path / "missing.json")


def test_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = str(EXAMPLES / "racy_counter.py")
    trail = str(tmp_path / "t.trail")
    assert main(["check", model, "--trail", trail]) == 1
    assert "trail written to" in capsys.readouterr().out
    assert main(["replay", model, trail]) == 1
    assert "replayed: the violation happens again" in capsys.readouterr().out
    assert main(["replay", model, trail, "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["violations"][0]["kind"] == "assertion"
    (tmp_path / "bad").write_text("{}")
    assert main(["replay", model, str(tmp_path / "bad")]) == 2
    assert "not a movers trail" in capsys.readouterr().err
    ok = str(EXAMPLES / "peterson.py")
    assert main(["check", ok, "--trail", str(tmp_path / "none.trail")]) == 0
    assert not (tmp_path / "none.trail").exists()


def test_trail_fields() -> None:
    path = EXAMPLES / "racy_counter.py"
    r = movers.check(path)
    t = trail_of(r, path.read_text(), str(path))
    assert t["movers_trail"] == 1 and t["kind"] == "assertion" and len(t["model_sha256"]) == 64
    assert t["steps"] == [[s[0], list(s[1])] for s in r.violations[0].steps] and len(t["steps"]) == 7


def test_the_full_state_of_a_deadlock(capsys: pytest.CaptureFixture[str]) -> None:
    # The JSON carries it always; the text prints the threads for a deadlock, everything with --full-state.
    r = movers.check(EXAMPLES / "dining_philosophers.py")
    st = r.violations[0].state
    assert [th["status"] for th in st["threads"]] == ["blocked"] * 4
    assert {h for th in st["threads"] for h in th["holds"]} == {"forks[0]", "forks[1]", "forks[2]"}
    philosophers = [th for th in st["threads"] if th["name"] != "MainThread"]
    assert len(philosophers) == 3
    assert all("waits to acquire" in th["waits"] and th["stack"][0]["function"] == "philosopher"
               for th in philosophers)
    assert st["globals"]["forks[0].owner"] in ("philosopher#0", "philosopher#1", "philosopher#2")
    assert main(["check", str(EXAMPLES / "dining_philosophers.py")]) == 1
    out = capsys.readouterr().out
    assert "threads at the end of the trace" in out and "globals and heap" not in out
    assert main(["check", str(EXAMPLES / "racy_counter.py"), "--full-state"]) == 1
    out = capsys.readouterr().out
    assert "globals and heap" in out and "terminated" in out
    assert main(["check", str(EXAMPLES / "racy_counter.py"), "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["violations"][0]["state"]["globals"]["count"] == "1"


def test_traces_name_threads_and_show_the_lost_update() -> None:
    r = movers.check(EXAMPLES / "racy_counter.py")
    tr = r.violations[0].trace
    # Two threads run worker: their names keep their numbers; the main thread's name is its own.
    assert [s.name for s in tr] == [f"worker#{s.thread}" for s in tr[:4]] + ["MainThread"] * 3
    assert tr[3].changes.get("count") == "1 (unchanged)" and tr[2].changes.get("count") == "1"


# A lost wakeup: a producer's notify() can wake the other producer, and every thread ends up waiting.
LOST_WAKEUP = """from movers.lang import *

lock = Lock()
cv = Condition(lock)
count = 0


def producer():
    global count
    for _ in range(2):
        with cv:
            while count == 1:
                cv.wait()
            count += 1
            cv.notify()


def consumer():
    global count
    for _ in range(2):
        with cv:
            while count == 0:
                cv.wait()
            count -= 1
            cv.notify()


Thread(target=producer).start()
Thread(target=producer).start()
Thread(target=consumer).start()
Thread(target=consumer).start()
"""


def test_replay_after_the_fix_checks_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "buffer.py"
    trail = tmp_path / "lost.trail"
    model.write_text(LOST_WAKEUP)
    assert main(["check", str(model), "--search", "bfs", "--granularity", "statement", "--trail", str(trail)]) == 1
    assert "deadlock" in capsys.readouterr().out
    assert json.loads(trail.read_text())["options"]["search"] == "bfs"
    assert json.loads(trail.read_text())["options"]["granularity"] == "statement"
    assert main(["replay", str(model), str(trail)]) == 1
    capsys.readouterr()
    model.write_text(LOST_WAKEUP.replace("cv.notify()", "cv.notify_all()"))
    assert main(["replay", str(model), str(trail)]) == 0
    out, err = capsys.readouterr()
    where = ("the trail does not fit the model at step 14: the trail resolves thread 0's step with the choices [0]; "
             "the model's step there (line 15: cv.notify_all()) has no choice to resolve (the model changed since "
             "the trail was written)")
    assert f"movers: {where}; checking the model with the trail's options instead" in err
    assert out.startswith("verified: no violation in any interleaving")
    assert (f"{where}; so the model was checked instead, with the trail's options (--reduction none --search bfs "
            "--granularity statement)") in " ".join(out.split())
    assert main(["replay", str(model), str(trail), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["verdict"] == "ok" and got["search"] == "bfs" and got["notes"][0].startswith(where)
    # The usual limits hold for that check: cut short, it says so.
    assert main(["replay", str(model), str(trail), "--max-states", "50"]) == 3
    assert "incomplete" in capsys.readouterr().out
    # A change that leaves another violation: the check finds it.
    model.write_text(LOST_WAKEUP.replace("cv.notify()", "cv.notify_all()").replace("count -= 1", "count -= 2"))
    assert main(["replay", str(model), str(trail)]) == 1
    out = capsys.readouterr().out
    assert "violation found" in out and "does not fit the model" in out


def test_a_misfit_with_the_model_unchanged_is_said(tmp_path: Path) -> None:
    path = EXAMPLES / "racy_counter.py"
    _, f = _save(tmp_path, path)
    data = json.loads(f.read_text())
    data["steps"][0][0] = 7
    f.write_text(json.dumps(data))
    r = replay(path, read_trail(f))
    assert r.verdict == "violation"
    assert r.notes[0].startswith("the trail does not fit the model at step 1: the trail moves thread 7; the model "
                                 "has 3 threads there (the model has not changed since the trail was written)")


def test_files_that_are_not_trails_ii(tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    deep = 100_000
    for text, why in (
            ('{"movers_trail": 1, "steps": ' + "[" * deep + "]" * deep + "}", "nested too deeply"),
            ('{"movers_trail": true, "steps": []}', "schema true"),
            ('{"movers_trail": 1.0, "steps": []}', "schema 1.0"),
            ('{"movers_trail": 1, "steps": [], "reduction": ["none"]}', "'reduction' is not a string"),
            ('{"movers_trail": 1, "steps": [], "reduction": "fast"}', "options are refused: unknown reduction"),
            ('{"movers_trail": 1, "steps": [], "options": []}', "'options' is not an object"),
            ('{"movers_trail": 1, "steps": [], "options": {"bits": true}}', "option 'bits' is true, not a int"),
            ('{"movers_trail": 1, "steps": [], "options": {"speed": 1}}', "unknown option 'speed'"),
            ('{"movers_trail": 1, "steps": [], "options": {"search": "bfs", "store": "bitstate"}}',
             "needs --search dfs")):
        f.write_text(text)
        with pytest.raises(TrailError, match=re.escape(why)):
            read_trail(f)
        assert main(["replay", str(EXAMPLES / "racy_counter.py"), str(f)]) == 2


def test_a_trail_of_a_model_in_another_encoding(tmp_path: Path) -> None:
    # The trail keeps the hash of the text the check decoded (a coding line), not of the bytes read as UTF-8.
    text = (EXAMPLES / "racy_counter.py").read_text().replace('"lost update"', '"lost update \xe9"')
    model = tmp_path / "latin.py"
    model.write_bytes(("# -*- coding: latin-1 -*-\n" + text).encode("latin-1"))
    trail = tmp_path / "t.trail"
    assert main(["check", str(model), "--trail", str(trail), "--quiet"]) == 1
    again = replay(model, read_trail(trail))
    assert again.verdict == "violation" and "the model changed" not in " ".join(again.notes)


def test_an_invariant_broken_in_the_initial_state_replays(tmp_path: Path) -> None:
    # Found by the fuzz campaign: a trail of 0 steps (the invariant fails at once) replayed as "fixed".
    from movers.cli import main

    model = tmp_path / "m.py"
    model.write_text("from movers.lang import *\nbalance = 1\n\n@invariant\ndef positive():\n    return balance > 5\n\n"
                     "def w():\n    global balance\n    balance = 7\nThread(target=w).start()\n")
    trail = tmp_path / "bug.trail"
    assert main(["check", str(model), "--trail", str(trail), "--quiet"]) == 1
    assert main(["replay", str(model), str(trail)]) == 1


def test_a_violation_of_a_guessed_classification_replays_by_checking_again(tmp_path: Path) -> None:
    # Found by the fuzz campaign: under --no-refine, a violation of the classification a reduction guessed
    # replayed as "fixed" on the plain program (which has no guesses); it is checked with the trail's options.
    from movers.cli import main

    model = tmp_path / "m.py"
    model.write_text("from movers.lang import *\nx = 0\ndef a():\n    global x\n    x = 1\n"
                     "def b():\n    global x\n    x = 2\nThread(target=a).start()\nThread(target=b).start()\n")
    trail = tmp_path / "bug.trail"
    assert main(["check", str(model), "--reduction", "transactions", "--no-refine", "--trail", str(trail),
                 "--quiet"]) == 1
    assert main(["replay", str(model), str(trail)]) == 1
