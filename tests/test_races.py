"""``--races``: the precise data-race detector (instrument/races.py), its refusals, its reports and trails, and
the note of a verified run that writes shared memory outside every lock."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, note, settings

import movers
from movers.cli import main
from movers.instrument.races import unprotected_writes
from movers.reduce import REDUCTIONS, capabilities, supporting
from movers.report.formats import to_junit, to_sarif
from movers.search.options import Options
from movers.trail import read_trail, replay

try:
    from strategies import models
except ImportError:  # tests/ imported as a package
    from tests.strategies import models

SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "result.schema.json").read_text())

# The reductions that declare race detection (docs/reductions.md argues each).
RACES = ["none", "static-por", "dwyer-d", "dwyer-s", "dwyer-da", "dwyer-sda"]

UNLOCKED = """\
from movers.lang import *

counter = 0

def inc():
    global counter
    counter += 1

Thread(target=inc).start()
Thread(target=inc).start()
"""

LOCKED = """\
from movers.lang import *

counter = 0
m = Lock()

def inc():
    global counter
    with m:
        counter += 1

Thread(target=inc).start()
Thread(target=inc).start()
"""

# Local work first, and a third thread busy with its own global: the reductions have something to reduce.
BUSY = """\
from movers.lang import *

counter = 0
mine = 0

def inc():
    global counter
    k = 0
    for i in range(2):
        k += i
    counter += k

def other():
    global mine
    for i in range(2):
        mine += 1

Thread(target=inc).start()
Thread(target=other).start()
Thread(target=inc).start()
"""

FIELD = """\
from movers.lang import *

class Account:
    def __init__(self):
        self.balance = 0

def deposit(a):
    a.balance = a.balance + 1

def main():
    a = Account()
    Thread(target=deposit, args=(a,)).start()
    Thread(target=deposit, args=(a,)).start()

Thread(target=main).start()
"""

ELEMENT = """\
from movers.lang import *

xs = [0, 0]

def write():
    xs[1] = 5

def read():
    y = xs[1]

def other():
    xs[0] = 7

Thread(target=other).start()
Thread(target=write).start()
Thread(target=read).start()
"""

OTHER_ELEMENTS = """\
from movers.lang import *

xs = [0, 0]

def w0():
    xs[0] = 1

def w1():
    xs[1] = 1

Thread(target=w0).start()
Thread(target=w1).start()
"""

READ_READ = """\
from movers.lang import *

shared = 0
got = [0, 0]

def reader(i):
    got[i] = shared

def setter():
    global shared
    with m:
        shared = 1

m = Lock()
Thread(target=reader, args=(0,)).start()
Thread(target=reader, args=(1,)).start()
"""

CONSTANT = """\
from movers.lang import *

LIMIT = 3
out = [0, 0]

def worker(i):
    out[i] = LIMIT + i

Thread(target=worker, args=(0,)).start()
Thread(target=worker, args=(1,)).start()
"""


def race(source: str, **kw: object) -> movers.Result:
    return movers.check(source=source, races=True, **kw)  # type: ignore[arg-type]


def test_the_reductions_that_claim_race_detection() -> None:
    assert supporting(lambda c: c.races) == RACES


@pytest.mark.parametrize("reduction", RACES)
def test_unlocked_counter_races_and_locked_does_not(reduction: str) -> None:
    r = race(UNLOCKED, reduction=reduction)
    assert r.verdict == "violation", r.error
    v = r.violations[0]
    assert v.kind == "race"
    assert v.message.startswith("data race on counter: ")
    assert "can write it next (line 7: counter += 1" in v.message and "can read it next" in v.message
    assert race(LOCKED, reduction=reduction).verdict == "ok"


@pytest.mark.parametrize("reduction", RACES)
def test_every_claiming_reduction_finds_the_race_past_local_work(reduction: str) -> None:
    r = race(BUSY, reduction=reduction)
    assert r.verdict == "violation" and r.violations[0].kind == "race", (r.verdict, r.error)
    assert "data race on counter" in r.violations[0].message


def test_without_races_the_unlocked_counter_verifies() -> None:
    # The detector is off by default: the same model, no assertion, is verified.
    assert movers.check(source=UNLOCKED).verdict == "ok"


def test_field_race_names_the_object_by_its_heap_path() -> None:
    r = race(FIELD)
    assert r.verdict == "violation"
    v = r.violations[0]
    assert v.kind == "race" and v.message.startswith("data race on Account#1.balance: ")
    assert "thread deposit#1" in v.message and "thread deposit#2" in v.message


def test_element_race_on_a_list() -> None:
    r = race(ELEMENT)
    assert r.verdict == "violation"
    assert r.violations[0].message.startswith("data race on xs[1]: ")
    assert "line 6: xs[1] = 5" in r.violations[0].message and "line 9: y = xs[1]" in r.violations[0].message


def test_different_elements_do_not_race() -> None:
    assert race(OTHER_ELEMENTS).verdict == "ok"


def test_two_appends_race_on_the_length() -> None:
    r = race("from movers.lang import *\nxs = []\ndef w():\n    xs.append(1)\n"
             "Thread(target=w).start()\nThread(target=w).start()\n")
    assert r.verdict == "violation" and r.violations[0].message.startswith("data race on len(xs): ")


def test_read_read_is_no_race() -> None:
    assert race(READ_READ).verdict == "ok"


def test_module_constant_is_no_race() -> None:
    assert race(CONSTANT).verdict == "ok"


def test_a_lock_operation_is_no_access() -> None:
    # One thread at the acquire, the other at the write inside: the acquire is synchronisation, no race.
    r = race(LOCKED)
    assert r.verdict == "ok" and r.stats.states > 2


def test_indivisible_block_is_synchronisation() -> None:
    src = UNLOCKED.replace("    counter += 1", "    with indivisible():\n        counter += 1")
    assert race(src).verdict == "ok"


@pytest.mark.parametrize("extra", [{"search": "bfs"}, {"store": "hashcompact"}, {"symmetry": "threads"}])
def test_races_with_the_full_search_options(extra: dict[str, str]) -> None:
    r = race(FIELD, **extra)
    assert r.verdict == "violation" and r.violations[0].kind == "race"
    assert race(LOCKED, **extra).verdict == "ok"


@pytest.mark.parametrize("reduction", [n for n in REDUCTIONS if n not in RACES])
def test_reductions_that_do_not_claim_it_refuse(reduction: str) -> None:
    assert not capabilities(reduction).races
    r = race(UNLOCKED, reduction=reduction)
    assert r.verdict == "error" and r.refused
    assert r.error == (f"--races: only with --reduction none, static-por, dwyer-d, dwyer-s, dwyer-da or dwyer-sda; "
                       f"--reduction {reduction} may not reach every state where two conflicting accesses are both "
                       "next (docs/reductions.md)")


def test_refusals() -> None:
    assert Options(races=True, granularity="statement").problem() == (
        "--races needs --granularity access: a race is two single accesses, and a statement step makes several "
        "at once, atomically")
    assert Options(races=True, workers=2).problem() == (
        "--races: not with --workers 2 (the parallel search does not look for races yet)")
    assert Options(races=True, atomicity="commit").problem() == (
        "--races: not with --atomicity (check the two separately)")
    assert Options(races=True).problem() is None
    assert Options(granularity="statement").problem() is None


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unlocked, locked = tmp_path / "unlocked.py", tmp_path / "locked.py"
    unlocked.write_text(UNLOCKED)
    locked.write_text(LOCKED)
    assert main(["check", str(unlocked), "--races"]) == 1
    out = capsys.readouterr().out
    assert "race: data race on counter: " in out and "threads at the end of the trace" in out
    assert main(["check", str(locked), "--races"]) == 0
    assert main(["check", str(unlocked)]) == 0
    capsys.readouterr()
    assert main(["check", str(unlocked), "--races", "--granularity", "statement"]) == 2
    assert "movers: error: --races needs --granularity access" in capsys.readouterr().err
    assert main(["check", str(unlocked), "--races", "--reduction", "optimistic"]) == 2
    assert "movers: error: --races: only with --reduction none, static-por" in capsys.readouterr().err


def test_json_sarif_and_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.py"
    model.write_text(FIELD)
    assert main(["check", str(model), "--races", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    jsonschema.validate(d, SCHEMA)
    assert d["violations"][0]["kind"] == "race"
    r = race(FIELD)
    sarif = to_sarif(r, str(model))
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert any(rule["id"] == "race" for rule in rules)
    assert sarif["runs"][0]["results"][0]["ruleId"] == "race"
    assert "data race on Account#1.balance" in to_junit(r, str(model))


def test_trail_records_races_and_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model, trail = tmp_path / "m.py", tmp_path / "m.trail"
    model.write_text(UNLOCKED)
    assert main(["check", str(model), "--races", "--trail", str(trail)]) == 1
    data = read_trail(trail)
    assert data["options"]["races"] is True and data["kind"] == "race"
    r = replay(model, data)
    assert r.verdict == "violation" and r.violations[0].kind == "race"
    assert main(["replay", str(model), str(trail)]) == 1
    # Fixed with a lock, the violation no longer happens.
    model.write_text(LOCKED)
    assert replay(model, data).verdict == "ok"
    # A trail that does not fit: the model is checked with the trail's options, --races included.
    model.write_text(UNLOCKED)
    r = replay(model, dict(data, steps=[[7, []]]))
    assert r.verdict == "violation" and r.violations[0].kind == "race"
    assert "(--reduction none --races)" in r.notes[0]


def test_note_on_a_verified_unlocked_model_and_none_on_a_locked_one() -> None:
    r = movers.check(source=UNLOCKED)
    assert r.verdict == "ok"
    notes = [n for n in r.notes if "--races" in n]
    assert notes == ["some threads write counter outside any lock: races on them (two unordered accesses, one a "
                     "write) were not looked for; --races reports them"]
    assert [n for n in movers.check(source=LOCKED).notes if "--races" in n] == []
    # Any reduction's verified run notes it.
    assert any("--races" in n for n in movers.check(source=UNLOCKED, reduction="optimistic").notes)
    # Not at statement granularity, where --races is refused, nor once races were looked for.
    assert not any("--races" in n for n in movers.check(source=UNLOCKED, granularity="statement").notes)
    assert not any("--races" in n for n in race(LOCKED).notes)


def test_unprotected_writes_static_pass() -> None:
    assert unprotected_writes(movers.load(source=UNLOCKED)) == ["counter"]
    assert unprotected_writes(movers.load(source=LOCKED)) == []
    assert unprotected_writes(movers.load(source=FIELD)) == ["field balance"]
    assert unprotected_writes(movers.load(source=OTHER_ELEMENTS)) == ["list elements"]
    # A constructor's writes of its own object, and the module's own code, are not thread writes.
    assert unprotected_writes(movers.load(source=CONSTANT)) == ["list elements"]
    # A helper called only under the lock is protected; a synchronized method is too.
    helper = LOCKED.replace(
        "def inc():\n    global counter\n    with m:\n        counter += 1",
        "def bump():\n    global counter\n    counter += 1\n\ndef inc():\n    with m:\n        bump()")
    assert "bump" in helper
    assert unprotected_writes(movers.load(source=helper)) == []
    # ... but not one also started as a thread.
    assert unprotected_writes(movers.load(source=helper + "Thread(target=bump).start()\n")) == ["counter"]
    monitor = """\
from movers.lang import *

class Box:
    def __init__(self):
        self.n = 0

    @synchronized
    def add(self):
        self.n = self.n + 1

b = Box()
def go():
    b.add()
Thread(target=go).start()
Thread(target=go).start()
"""
    assert unprotected_writes(movers.load(source=monitor)) == []
    assert movers.check(source=monitor, races=True).verdict == "ok"
    indivisible = UNLOCKED.replace("    counter += 1", "    with indivisible():\n        counter += 1")
    assert unprotected_writes(movers.load(source=indivisible)) == []


# -- random models: the claiming reductions find a race exactly where the full search does ----------------------

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(asserts=False))
def test_claiming_reductions_agree_with_none_on_races(src: str) -> None:
    note(src)
    # Every violation, not only the first: a race found by one search after another violation still counts.
    full = movers.check(source=src, races=True, max_violations=10**9, max_states=20000)
    assume(full.verdict in ("ok", "violation"))
    raced = any(v.kind == "race" for v in full.violations)
    for reduction in RACES[1:]:
        r = movers.check(source=src, races=True, reduction=reduction, max_violations=10**9, max_states=20000)
        if r.verdict not in ("ok", "violation"):
            continue
        assert any(v.kind == "race" for v in r.violations) == raced, (reduction, full.violations, r.violations)
