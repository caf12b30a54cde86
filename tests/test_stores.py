"""``--store hashcompact`` and ``--store bitstate`` (search/fingerprints.py): lossy visited stores that must
find the same states as the exact store whenever nothing collides, keep counterexamples exact, and say what
they may have missed."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import jsonschema
import pytest
from conftest import EXAMPLES
from rich.console import Console

import movers
from movers import checker
from movers.cli import main
from movers.report.html import render_result
from movers.report.text import LIMIT_TEXT, _percent, _probability, print_result, store_line
from movers.search import fingerprints
from movers.search.fingerprints import (
    MAX_OMISSION,
    STORE_FIELDS,
    BitSet,
    FingerprintSet,
    bits_problem,
    collision_probability,
    expected_coverage,
    fingerprint,
    lossy_verdict,
    store_report,
)
from movers.search.limits import LimitReached

SMALL = sorted(p for p in EXAMPLES.glob("*.py") if "counter_bench" not in p.name)


def _summary(r: movers.Result) -> tuple[object, ...]:
    traces = tuple(tuple((s.thread, s.line) for s in v.trace) for v in r.violations)
    return r.verdict, r.stats.states, r.stats.transitions, tuple(v.kind for v in r.violations), traces


@pytest.mark.parametrize("path", SMALL, ids=lambda p: p.stem)
def test_lossy_stores_find_the_states_of_the_exact_store(path: Path) -> None:
    exact = movers.check(path, max_states=50_000, time_limit=60)
    if exact.verdict in ("incomplete", "error"):
        pytest.skip(exact.verdict)
    for store in ("hashcompact", "bitstate"):
        r = movers.check(path, max_states=50_000, time_limit=60, store=store)
        assert _summary(r) == _summary(exact), store
        assert r.store["kind"] == store


@pytest.mark.parametrize("reduction", ["optimistic", "static-por", "dwyer-da"])
def test_lossy_stores_under_reductions(reduction: str) -> None:
    for name in ("dining_philosophers", "racy_counter", "sc_example", "dwyer_bounded_buffer"):
        path = EXAMPLES / f"{name}.py"
        exact = movers.check(path, reduction=reduction, time_limit=60)
        r = movers.check(path, reduction=reduction, time_limit=60, store="hashcompact")
        assert _summary(r) == _summary(exact), name


def test_bitstate_finds_the_racy_counters_bug_and_replays_it_exactly() -> None:
    r = movers.check(EXAMPLES / "racy_counter.py", store="bitstate")
    exact = movers.check(EXAMPLES / "racy_counter.py")
    assert r.verdict == "violation" and r.violations[0].kind == "assertion"
    assert [(s.thread, s.line, s.changes) for s in r.violations[0].trace] == [
        (s.thread, s.line, s.changes) for s in exact.violations[0].trace]


def test_a_tiny_bit_array_misses_states_and_says_so() -> None:
    path = EXAMPLES / "dining_philosophers_ordered.py"
    exact = movers.check(path)
    r = movers.check(path, store="bitstate", bits=6)
    assert r.stats.states < exact.stats.states
    assert r.store["expected_coverage"] < 0.9 and r.store["hash_factor"] < 2
    big = movers.check(path, store="bitstate", bits=24)
    assert big.stats.states == exact.stats.states and big.store["expected_coverage"] > 0.999
    assert (r.verdict, r.limit) == ("incomplete", "coverage") and big.verdict == "ok"


def test_max_states_holds_with_lossy_stores() -> None:
    path = EXAMPLES / "dining_philosophers_ordered.py"
    for store in ("hashcompact", "bitstate"):
        r = movers.check(path, store=store, max_states=10)
        assert r.verdict == "incomplete" and r.limit == "max-states" and r.stats.states == 10


def test_refused_combinations() -> None:
    path = EXAMPLES / "racy_counter.py"
    r = movers.check(path, store="hashcompact", search="bfs")
    assert r.verdict == "error" and "--search dfs" in r.error
    r = movers.check(path, store="bitstate", reduction="transactions")
    assert r.verdict == "error" and "transactions" in r.error
    r = movers.check(path, store="bitstate", bits=99)
    assert r.verdict == "error" and "--bits 99" in r.error
    r = movers.check(path, store="fingerprints")
    assert r.verdict == "error" and "unknown --store" in r.error


def test_the_cli_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "dining_philosophers_ordered.py")
    assert main(["check", path, "--store", "hashcompact", "--json"]) in (0, 1)
    d = json.loads(capsys.readouterr().out)
    assert d["store"]["kind"] == "hashcompact" and 0 <= d["store"]["collision_probability"] < 1e-6
    assert main(["check", path, "--json"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["store"] == {"kind": "exact"}
    main(["check", path, "--store", "bitstate", "--bits", "20"])
    out = capsys.readouterr().out
    assert "store: bitstate, 2^20 bits, 3 hashes" in out and "expected coverage" in out


def test_fingerprint_set_grows_and_answers_membership() -> None:
    s = FingerprintSet(bits=4)
    fps = [fingerprint((i, i * 7, 3)) for i in range(5_000)]
    for fp in fps:
        s.add(fp)
        s.add(fp)
    assert len(s) == len(set(fps)) == 5_000
    assert all(fp in s for fp in fps)
    assert sum(fingerprint((i, 1, 2)) in s for i in range(10_000, 11_000)) == 0
    assert len(s.table) >= 4 * len(s) / 3


def test_bitset_and_coverage() -> None:
    b = BitSet(bits=10)
    fps = [fingerprint((i,)) for i in range(50)]
    for fp in fps:
        b.add(fp)
    assert all(fp in b for fp in fps)
    assert expected_coverage(10, 1 << 20, 3) > 0.999999
    assert expected_coverage(100_000, 1 << 10, 3) < 0.05
    # The formula against a direct sum.
    import math
    n, m, k = 500, 2_000, 3
    direct = 1 - sum((1 - math.exp(-k * i / m)) ** k for i in range(n)) / n
    assert abs(expected_coverage(n, m, k) - direct) < 1e-3


def test_fingerprints_do_not_depend_on_the_process() -> None:
    # Computed from interned numbers, never from id-based hashes: the same in every run (state counts are
    # part of the contract).
    assert fingerprint((0, 1, 2, 3)) == fingerprint((0, 1, 2, 3))
    import subprocess
    import sys
    code = "from movers.search.fingerprints import fingerprint; print(fingerprint((0, 1, 2, 3)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert int(out) == fingerprint((0, 1, 2, 3))


# Two threads take two locks in opposite orders after counting, a third counts alongside: a deadlock the exact
# search finds among about 2,400 states, and a 2^10-bit array hides (it stores about 560, 80% coverage).
HIDDEN_DEADLOCK = """\
from movers.lang import *

N = 12

a = Lock()
b = Lock()


def left():
    i = 0
    while i < N:
        i += 1
    with a:
        with b:
            pass


def right():
    j = 0
    while j < N:
        j += 1
    with b:
        with a:
            pass


def idle():
    k = 0
    while k < N:
        k += 1


Thread(target=left).start()
Thread(target=right).start()
Thread(target=idle).start()
"""

SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "result.schema.json").read_text())


def test_a_bitstate_search_that_misses_a_deadlock_is_incomplete_and_never_verified(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "hidden_deadlock.py"
    model.write_text(HIDDEN_DEADLOCK)
    exact = movers.check(model)
    assert exact.verdict == "violation" and exact.violations[0].kind == "deadlock"
    assert main(["check", str(model), "--store", "bitstate", "--bits", "10", "--quiet"]) == 3
    out = capsys.readouterr().out
    head = out.splitlines()[0]
    assert "verified" not in out and "any interleaving" not in out
    assert head.startswith("incomplete: no violation found in ") and "expected coverage" in head
    assert "below 99.9%" in head and "--bits" in head
    assert main(["check", str(model), "--store", "bitstate", "--bits", "10", "--json"]) == 3
    d = json.loads(capsys.readouterr().out)
    jsonschema.validate(d, SCHEMA)
    assert (d["verdict"], d["limit"]) == ("incomplete", "coverage")
    assert d["stats"]["states"] < exact.stats.states and d["store"]["expected_coverage"] < 0.999
    # Enough bits find the deadlock.
    assert main(["check", str(model), "--store", "bitstate", "--bits", "20", "--quiet"]) == 1


def test_a_lossy_search_with_enough_coverage_exits_0_with_honest_words(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "dining_philosophers_ordered.py")
    n = movers.check(path).stats.states
    assert main(["check", path, "--store", "bitstate", "--bits", "24", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "verified" not in out and "any interleaving" not in out
    assert out.startswith(f"no violation found in {n:,} states (bitstate, expected coverage 99.9")
    assert main(["check", path, "--store", "hashcompact", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "verified" not in out and "any interleaving" not in out
    assert out.startswith(f"no violation found in {n:,} states (hash compaction, probability of a missed state "
                          "at most ")
    assert main(["check", path, "--store", "hashcompact", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "ok" and "limit" not in d
    assert d["store"] == {"kind": "hashcompact", "fingerprint_bits": 64,
                          "collision_probability": n * (n - 1) / 2.0**65}
    # The exact store still proves.
    assert main(["check", path, "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("verified: no violation in any interleaving")


def test_the_threshold_of_a_lossy_ok() -> None:
    assert MAX_OMISSION == 1e-3
    hc = {"kind": "hashcompact", "fingerprint_bits": 64}
    assert lossy_verdict("ok", {**hc, "collision_probability": 1e-3}) == ("ok", None)
    assert lossy_verdict("ok", {**hc, "collision_probability": 2e-3}) == ("incomplete", "coverage")
    bs = {"kind": "bitstate", "bits": 20, "hashes": 3, "hash_factor": 10.0}
    assert lossy_verdict("ok", {**bs, "expected_coverage": 0.9995}) == ("ok", None)
    assert lossy_verdict("ok", {**bs, "expected_coverage": 0.9985}) == ("incomplete", "coverage")
    # A violation found is real whatever the coverage; another limit keeps its reason.
    assert lossy_verdict("violation", {**bs, "expected_coverage": 0.1}) == ("violation", None)
    assert lossy_verdict("incomplete", {**bs, "expected_coverage": 0.1}) == ("incomplete", None)
    assert lossy_verdict("ok", {"kind": "exact"}) == ("ok", None)
    # A report that says nothing is not a proof.
    assert lossy_verdict("ok", {"kind": "bitstate"}) == ("incomplete", "coverage")
    # The estimates: the birthday bound (capped at 1) and the coverage at about 19 bits per state.
    assert collision_probability(10**6) == 10**6 * (10**6 - 1) / 2.0**65 and collision_probability(10**10) == 1
    assert expected_coverage((1 << 20) // 15, 1 << 20, 3) < 0.999 < expected_coverage((1 << 20) // 20, 1 << 20, 3)


def test_the_words_of_a_hash_compaction_that_may_have_missed_a_state() -> None:
    # Past about 190 million states the birthday bound exceeds 0.1%: too many to run, so the report is given.
    n = 200_000_000
    r = movers.Result("ok", "none", movers.Stats(states=n), store=store_report("hashcompact", n))
    r.verdict, r.limit = lossy_verdict(r.verdict, r.store)
    assert (r.verdict, r.limit, r.exit_code) == ("incomplete", "coverage", 3)
    buf = io.StringIO()
    print_result(r, Console(file=buf, width=200, color_system=None))
    head = buf.getvalue().splitlines()[0]
    assert head.startswith("incomplete: no violation found in 200,000,000 states, but the probability that hash "
                           "compaction missed a state is up to 1.1e-03, above 0.1%")
    assert "no violation found in 200,000,000 states" in render_result(r)


def test_printed_coverages_round_down_and_probabilities_up() -> None:
    assert _percent(0.99899) == "99.89%" and _percent(0.5) == "50%" and _percent(1.0) == "100%"
    assert _probability(4.14e-14) == "4.2e-14" and _probability(9.96e-5) == "1.0e-04" and _probability(0.0) == "0"
    assert _probability(1e-3) == "1.0e-03"


def test_a_bit_array_larger_than_the_memory_limit_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "peterson.py")
    assert main(["check", path, "--store", "bitstate", "--bits", "34", "--max-memory", "200"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert err.startswith("movers: error: --bits 34: the bit array alone takes 2,048 MB, more than --max-memory "
                          "200 MB; the largest --bits that fits")
    fits = int(re.search(r"fits.* is (\d+) \(", err).group(1))  # beside what the test process uses already
    assert 4 <= fits <= 30
    assert main(["check", path, "--store", "bitstate", "--bits", "34", "--max-memory", "200", "--json"]) == 2
    assert "movers: error: --bits 34" in capsys.readouterr().err
    import subprocess
    import sys

    # The API too, in a fresh process: this test process may already hold more than the array would take
    # (Python keeps the memory earlier tests in the same worker used), and then nothing would be refused.
    probe = ("import movers, sys\nr = movers.check(sys.argv[1], store='bitstate', bits=34, max_memory=300)\n"
             "print(r.verdict)\nprint(r.error)\n")
    p = subprocess.run([sys.executable, "-c", probe, path], capture_output=True, text=True, timeout=120)
    verdict, error = p.stdout.splitlines()[:2]
    assert verdict == "error" and error.startswith(
        "--bits 34: the bit array alone takes 2,048 MB, more than --max-memory 300 MB"), p.stdout + p.stderr
    # Exactly: the largest array within the limit, or beside what the process uses.
    assert bits_problem(30, 200) is None and bits_problem(34, None) is None
    assert bits_problem(34, 200).endswith("the largest --bits that fits is 30 (128 MB)")  # type: ignore[union-attr]
    assert bits_problem(31, 200, used_mb=100).endswith(  # type: ignore[union-attr]
        "the largest --bits that fits beside the 100 MB the process uses already is 29 (64 MB)")
    assert "75% of the memory available" in bits_problem(34, 1000, default=True)  # type: ignore[operator]
    assert bits_problem(20, 1e-6).endswith("not even --bits 4 fits")  # type: ignore[union-attr]


@pytest.mark.parametrize("store,where", [("bitstate", "BitSet"), ("hashcompact", "FingerprintSet")])
@pytest.mark.parametrize("stop", [LimitReached("memory"), LimitReached("time-limit"), MemoryError()],
                         ids=["memory", "time-limit", "MemoryError"])
def test_a_limit_hit_while_the_store_is_set_up_is_an_incomplete_run(
        store: str, where: str, stop: BaseException, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # A limit reached while the bit array (or the fingerprint table) is allocated, as --bits 34 could: the
    # report of the stopped check, text or JSON, is whole (it once failed with KeyError: 'bits', exit 4).
    def allocate(*args: object, **kw: object) -> None:
        raise stop

    monkeypatch.setattr(fingerprints, where, allocate)
    path = str(EXAMPLES / "peterson.py")
    why = getattr(stop, "why", "memory")
    assert main(["check", path, "--store", store, "--bits", "12", "--quiet"]) == 3
    captured = capsys.readouterr()
    assert "internal error" not in captured.err
    assert captured.out.startswith("incomplete: " + LIMIT_TEXT[why])
    assert main(["check", path, "--store", store, "--bits", "12", "--json"]) == 3
    d = json.loads(capsys.readouterr().out)
    jsonschema.validate(d, SCHEMA)
    assert d["limit"] == why and d["store"] == store_report(store, 0, 12)


def test_a_limit_hit_before_the_search_still_names_the_store(monkeypatch: pytest.MonkeyPatch) -> None:
    def load(*args: object, **kw: object) -> None:
        raise LimitReached("time-limit")

    monkeypatch.setattr(checker, "load", load)
    r = movers.check(EXAMPLES / "peterson.py", store="bitstate", bits=12)
    assert (r.verdict, r.limit) == ("incomplete", "time-limit")
    assert r.store == store_report("bitstate", 0, 12)
    jsonschema.validate(r.to_json(), SCHEMA)


@pytest.mark.parametrize("args", [[], ["--store", "hashcompact"], ["--store", "bitstate", "--bits", "12"],
                                  ["--store", "bitstate", "--bits", "22"], ["--store", "hashcompact", "--workers", "2"],
                                  ["--store", "hashcompact", "--max-states", "7"]],
                         ids=["exact", "hashcompact", "bitstate-12", "bitstate-22", "hashcompact-workers",
                              "hashcompact-max-states"])
def test_the_store_fields_of_each_kind_in_json_and_text(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "dining_philosophers_ordered.py")
    code = main(["check", path, *args, "--json"])
    d = json.loads(capsys.readouterr().out)
    jsonschema.validate(d, SCHEMA)
    kind = d["store"]["kind"]
    assert kind == (args[1] if args else "exact")
    assert set(d["store"]) == {"kind", *STORE_FIELDS[kind]}
    assert code == {"ok": 0, "incomplete": 3}[d["verdict"]]
    if kind == "hashcompact":
        n = d["stats"]["states"]
        assert d["store"]["fingerprint_bits"] == 64
        whole = n * (n - 1) / 2.0**65
        if "--workers" in args:
            # Each process's store can only hide its own states: the sum over the processes' stores, at most
            # the bound for one store of all n states.
            assert 0 < d["store"]["collision_probability"] <= whole
        else:
            assert d["store"]["collision_probability"] == whole
    if kind == "bitstate":
        bits, n = d["store"]["bits"], d["stats"]["states"]
        assert bits == int(args[3]) and d["store"]["hashes"] == 3
        assert d["store"]["hash_factor"] == round(2**bits / n, 1)
        assert d["store"]["expected_coverage"] == expected_coverage(n, 2**bits, 3)
        assert (d["verdict"] == "ok") == (d["store"]["expected_coverage"] >= 0.999)
    # The schema holds each kind to its fields.
    for field in STORE_FIELDS[kind]:
        broken = dict(d, store={k: v for k, v in d["store"].items() if k != field})
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, SCHEMA)
    # The text report of the same run prints them (the parallel search's once failed with a KeyError).
    assert main(["check", path, *args, "--quiet"]) == code
    out = capsys.readouterr().out
    assert ("verified" in out) == (kind == "exact" and code == 0)
    if kind != "exact":
        assert "store: " in out and "?" not in out.split("store: ")[1].splitlines()[0]


def test_the_text_report_of_a_store_without_its_fields_does_not_fail() -> None:
    assert "2^? bits" in store_line({"kind": "bitstate"})
    assert "at most ?" in store_line({"kind": "hashcompact"})


# -- how states are encoded (store.py's packed keys, fingerprints.py's numbers) ---------------------------------

TRUE_OR_ONE = """\
import threading

x = 0


def a():
    global x
    x = True


def b():
    global x
    x = ONE


t1 = threading.Thread(target=a)
t2 = threading.Thread(target=b)
t1.start()
t2.start()
t1.join()
t2.join()
"""


@pytest.mark.parametrize("store", ["exact", "hashcompact", "bitstate"])
def test_true_and_1_are_two_states_in_every_store(store: str) -> None:
    # x ends True or 1 depending on the order: two final states, as with True or 2 (Python's own hash(True) ==
    # hash(1) and True == 1 must not make them one).
    one = movers.check(source=TRUE_OR_ONE.replace("ONE", "1"), store=store)
    two = movers.check(source=TRUE_OR_ONE.replace("ONE", "2"), store=store)
    assert one.verdict == two.verdict == "ok"
    assert one.stats.states == two.stats.states


def test_the_exact_store_packs_numbers_one_to_one_and_untracked() -> None:
    import gc

    from movers.ir.program import box
    from movers.search.store import StateStore, decode, encode

    for nums in [(0,), (1, 2, 3), (70_000, 5, 2**32 - 1), (1, 2, 3, 0), tuple(range(40))]:
        assert decode(encode(nums)) == nums
        assert not gc.is_tracked(encode(nums))  # a key costs no collector header (store.py)
    assert encode((1, 2)) != encode((1, 2, 0)) and encode((256,)) != encode((0, 1))
    store = StateStore()
    a = ((1, None), ((None, None, 3),), (((None, 0, 7),), ()))
    b = ((box(True), None), ((None, None, 3),), (((None, 0, 7),), ()))
    assert store.key(a) != store.key(b)
    assert store.state(store.key(a)) == a and store.state(store.key(b)) == b


def test_interned_heaps_share_their_objects() -> None:
    from movers.search.store import StateStore

    store = StateStore()
    o1, o2, o3 = (None, None, 1, 2), (None, None, 5), (None, None, 6)
    store.key(((), (o1, o2), ()))
    again = tuple([None, None, 1, 2])  # equal to o1, built anew as a successor's heap would be
    assert again is not o1
    k = store.key(((), (again, o3), ()))
    assert store.state(k)[1][0] is o1


def test_lossy_numbers_tell_true_from_1_and_heaps_by_their_objects() -> None:
    from movers.ir.program import box
    from movers.search.fingerprints import CompactStore

    for kind in ("hashcompact", "bitstate"):
        store = CompactStore(kind, bits=10)
        a = ((1, None), ((None, None, 3),), (((None, 0, 7),), ()))
        b = ((box(True), None), ((None, None, 3),), (((None, 0, 7),), ()))
        assert store.find(a) is None
        assert store.key(a) != store.key(b) and store.key(a) == store.find(a)
        # The layout the exact store decides (store.py): a heap of one object is one number, after the threads'.
        assert store.numbers(a) == tuple(map(store.number, (a[0], *a[2], a[1])))
        c = ((1, None), ((None, None, 3), (None, None, 4)), (((None, 0, 7),), ()))
        flat = CompactStore(kind, bits=10)  # a heap of two objects, first met: its objects' numbers
        assert flat.numbers(c) == tuple(map(flat.number, (c[0], *c[2], *c[1])))


FINGERPRINTS_OF_A_RUN = """\
import sys
from movers.search import fingerprints, plain
seen = []
class Recording(fingerprints.FingerprintSet):
    def seen(self, fp):
        seen.append(fp)
        return super().seen(fp)
fingerprints.FingerprintSet = Recording
import movers
r = movers.check(sys.argv[1], store="hashcompact")
small = movers.check(sys.argv[1], store="bitstate", bits=5)
print(r.stats.states, small.stats.states, hash(tuple(seen)))
"""

STRINGS_MODEL = """\
import threading

names = {}


def add(who):
    names[who] = who + "!"


t1 = threading.Thread(target=add, args=("ada",))
t2 = threading.Thread(target=add, args=("bob",))
t3 = threading.Thread(target=add, args=("cy",))
t1.start()
t2.start()
t3.start()
t1.join()
t2.join()
t3.join()
"""


def test_fingerprints_are_the_same_whatever_pythonhashseed_says(tmp_path: Path) -> None:
    # A model with strings and a dict (whose hashes change with PYTHONHASHSEED): the fingerprints come from
    # the interned parts' numbers, so every process computes the same ones (and a small bit array, where they
    # collide, stores the same states).
    import os
    import subprocess
    import sys

    model = tmp_path / "strings.py"
    model.write_text(STRINGS_MODEL)
    outs = set()
    for seed in ("0", "1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        p = subprocess.run([sys.executable, "-c", FINGERPRINTS_OF_A_RUN, str(model)], capture_output=True,
                           text=True, env=env, check=True)
        outs.add(p.stdout.strip())
    assert len(outs) == 1, outs
    states, small, _ = next(iter(outs)).split()
    assert int(states) == movers.check(model).stats.states > int(small)


def test_fingerprint_set_is_at_most_three_quarters_full_and_seen_answers_then_adds() -> None:
    s = FingerprintSet(bits=4)
    for i in range(1_000):
        assert not s.seen(fingerprint((i, 2)))
        assert s.seen(fingerprint((i, 2)))
        assert 4 * len(s) <= 3 * len(s.table)
    assert len(s) == 1_000 and fingerprint((5, 2)) in s and fingerprint((5, 3)) not in s


def test_bitset_seen_sets_the_positions_it_tests() -> None:
    for k in (3, 2, 5):
        b = BitSet(bits=12, hashes=k)
        for i in range(300):
            fp = fingerprint((i, 9))
            new = not b.seen(fp)
            assert fp in b and all(b.array[p] for p in b._positions(fp))
            assert b.seen(fp)
            assert len(b) <= i + 1 and (new or len(b) < i + 1)


def test_keys_pack_two_bytes_a_number_and_one_key_a_state_past_two_to_the_sixteen_parts() -> None:
    from movers.search.store import StateStore, decode

    store = StateStore()
    a = ((1,), ((None, None, 3), (None, None, 4)), (((None, 0, 7),), ()))
    ka = store.key(a)
    # The heap is stored flat, its objects' numbers after the threads': no heap tuple is interned.
    assert len(ka) == 2 * 5 and a[1] not in store.parts and store.state(ka) == a
    for i in range(2**16):  # past 2^16 parts: numbers that two bytes cannot hold
        store.number((None, None, "filler", i))
    big = ((2,), ((None, None, "filler", 2**16 - 1),), (((None, 1, 7),),))
    kb = store.key(big)
    assert len(kb) % 2 == 1 and max(decode(kb)) >= 2**16 and store.state(kb) == big
    assert store.key(a) == ka and store.find(a) == ka  # a state met before and after keeps its key
    store.keys.update((ka, kb))
    assert a in store and big in store and set(store) == {a, big}
    store.keys.discard(kb)
    store.keys.discard(kb)
    assert set(store) == {a}


def test_threads_and_heap_objects_are_told_apart_by_their_parts() -> None:
    # No count separates the threads from the heap in a key: a thread is () or a tuple of frames, a heap
    # object starts with its class. Equal numbers of parts split differently must stay two states.
    from movers.search.store import StateStore

    store = StateStore()
    frame, obj = (None, 0), (None, None)
    one = ((), (obj, obj), ((frame,),))
    two = ((), (obj,), ((frame,), ()))
    assert store.key(one) != store.key(two)
    assert store.state(store.key(one)) == one and store.state(store.key(two)) == two


def test_a_store_keeps_small_heaps_flat_and_larger_ones_interned_one_key_a_state() -> None:
    from movers.search.store import FLAT_HEAP, StateStore

    objs = [(None, None, i) for i in range(FLAT_HEAP + 1)]
    frame = ((None, 0, 7),)
    for size, flat in ((FLAT_HEAP, True), (FLAT_HEAP + 1, False)):
        store = StateStore()
        a = ((1,), tuple(objs[:size]), (frame, ()))
        b = ((1,), tuple(objs[:size - 1]) + ((None, None, "other"),), (frame, ()))
        c = ((1,), (), (frame,))  # a heap of another size, met later: the first state decided
        keys = [store.key(x) for x in (a, b, c)]
        assert store.flat is flat and len(set(keys)) == 3
        assert (a[1] in store.parts) is not flat  # an interned heap is one part, a flat one its objects
        assert [store.state(k) for k in keys] == [a, b, c] and [store.key(x) for x in (a, b, c)] == keys


@pytest.mark.parametrize("store", ["hashcompact", "bitstate"])
@pytest.mark.parametrize("reduction", ["dwyer-ld+wsldom", "static-por", "none"])
def test_a_lossy_store_answers_the_general_search_in_one_call(store: str, reduction: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # dfs.py (every reduction, and none with a depth limit) asks a lossy store ``seen`` once per new state,
    # never its Python ``add`` and ``len`` per transition (fingerprints.py, "Cost"); the states are the
    # exact store's, and --max-states N still stores N.
    from movers.search import fingerprints

    model = EXAMPLES / "peterson.py"
    depth = 10**6 if reduction == "none" else None  # a depth limit: the general search, not plain.py
    exact = movers.check(model, reduction=reduction, max_depth=depth)

    adds = []
    for kind in (fingerprints.FingerprintSet, fingerprints.BitSet):
        monkeypatch.setattr(kind, "add", lambda self, fp: adds.append(self.seen(fp)))
    lossy = movers.check(model, reduction=reduction, store=store, max_depth=depth)
    assert lossy.verdict == exact.verdict == "ok" and lossy.stats.states == exact.stats.states
    assert len(adds) <= 3  # the initial state's, once a pass (a refined classification searches again)
    capped = movers.check(model, reduction=reduction, store=store, max_depth=depth, max_states=20)
    assert capped.verdict == "incomplete" and capped.stats.states == 20
