"""``--store hashcompact`` and ``--store bitstate`` (search/fingerprints.py): lossy visited stores that must
find the same states as the exact store whenever nothing collides, keep counterexamples exact, and say what
they may have missed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLES

import movers
from movers.cli import main
from movers.search.fingerprints import BitSet, FingerprintSet, expected_coverage, fingerprint

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
