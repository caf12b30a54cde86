"""The benchmarks of Dwyer et al. (papers/002, section 8) as examples: every model verifies and every bug
twin is a violation of the kind its header states, under ``none`` and under every reduction, with the
kind ``none`` reports. Small sizes (module-level constants rewritten) keep the file fast; benchmarks/dwyer.py
measures the larger ones."""

from __future__ import annotations

import re

import pytest
from conftest import EXAMPLES

import movers
from movers.reduce import REDUCTIONS

# model -> the constants it runs with here (the file's own defaults where they are small already)
MODELS: dict[str, dict[str, int]] = {
    "dwyer_independent_work1.py": {},
    "dwyer_independent_work2.py": {},
    "dwyer_deadlock.py": {},
    "dwyer_bounded_buffer.py": {},
    "dwyer_readers_writers.py": {"READERS": 1, "WRITERS": 1},
    "dwyer_replicated_workers.py": {"DEPTH": 0, "ITEMS": 2},
}
# twin -> the violation kind its bug gives (its header says the same, checked below)
TWINS: dict[str, str] = {
    "dwyer_independent_work1_bug.py": "assertion",
    "dwyer_independent_work2_bug.py": "assertion",
    "dwyer_deadlock_bug.py": "deadlock",
    "dwyer_bounded_buffer_bug.py": "runtime-error",
    "dwyer_readers_writers_bug.py": "deadlock",
    "dwyer_replicated_workers_bug.py": "deadlock",
}
# The reductions to compare with none: the earlier ones, and every Dwyer strategy registered so far.
OTHERS = [r for r in REDUCTIONS if r in ("static-por", "optimistic", "transactions") or r.startswith("dwyer-")]


def sized(name: str, consts: dict[str, int]) -> str:
    """The model's source with its module-level lines ``NAME = <int>`` rewritten."""
    src = (EXAMPLES / name).read_text()
    for const, value in consts.items():
        src, n = re.subn(rf"^{const} = \d+$", f"{const} = {value}", src, count=1, flags=re.M)
        assert n == 1, f"{name} has no line '{const} = <int>'"
    return src


def check(name: str, consts: dict[str, int], reduction: str) -> movers.Result:
    return movers.check(source=sized(name, consts), filename=name, reduction=reduction)


def kinds(r: movers.Result) -> list[str]:
    return [v.kind for v in r.violations]


def refused(r: movers.Result, reduction: str) -> bool:
    """``transactions`` refuses models whose declared predicates it cannot use (exit code 2)."""
    return reduction == "transactions" and r.verdict == "error"


def test_every_model_has_a_twin_and_both_are_listed() -> None:
    files = {p.name for p in EXAMPLES.glob("dwyer_*.py")}
    assert files == set(MODELS) | set(TWINS)
    assert {m.replace(".py", "_bug.py") for m in MODELS} == set(TWINS)
    readme = (EXAMPLES / "README.md").read_text()
    for name in files:
        assert f"`{name}`" in readme, name


@pytest.mark.parametrize("twin", sorted(TWINS))
def test_twin_header_states_its_kind(twin: str) -> None:
    text = (EXAMPLES / twin).read_text()
    assert f"# Expected: violation ({TWINS[twin]})" in text
    assert '"""' in text, "the twin's docstring says what was injected"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_verifies_under_none(name: str) -> None:
    r = check(name, MODELS[name], "none")
    assert r.verdict == "ok", (r.error, kinds(r))
    assert r.stats.states > 2


@pytest.mark.parametrize("reduction", OTHERS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_verifies_under_every_reduction(name: str, reduction: str) -> None:
    r = check(name, MODELS[name], reduction)
    if refused(r, reduction):
        pytest.skip(r.error or "refused")
    assert r.verdict == "ok", (r.error, kinds(r))


@pytest.mark.parametrize("reduction", ["none", *OTHERS])
@pytest.mark.parametrize("twin", sorted(TWINS))
def test_twin_is_the_stated_violation(twin: str, reduction: str) -> None:
    model = twin.replace("_bug.py", ".py")
    r = check(twin, MODELS[model], reduction)
    if refused(r, reduction):
        pytest.skip(r.error or "refused")
    assert r.verdict == "violation", (r.verdict, r.error)
    assert r.violations[0].kind == TWINS[twin], (r.violations[0].kind, r.violations[0].message)
    assert r.violations[0].trace, "a counterexample has steps"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_scaling_constants_are_rewritable(name: str) -> None:
    """benchmarks/dwyer.py makes its sizes by rewriting these lines: each must exist exactly once."""
    doc = {
        "dwyer_independent_work1.py": ("THREADS", "LENGTH"),
        "dwyer_independent_work2.py": ("THREADS", "LENGTH"),
        "dwyer_deadlock.py": ("ROUNDS",),
        "dwyer_bounded_buffer.py": ("BOUND", "ITEMS"),
        "dwyer_readers_writers.py": ("READERS", "WRITERS"),
        "dwyer_replicated_workers.py": ("WORKERS", "ITEMS", "DEPTH"),
    }[name]
    lines = (EXAMPLES / name).read_text().splitlines()
    for const in doc:
        assert len([ln for ln in lines if re.fullmatch(rf"{const} = \d+", ln)]) == 1, const


@pytest.mark.skipif("dwyer-da" not in REDUCTIONS, reason="dwyer-da is not registered yet")
@pytest.mark.parametrize("reduction", [r for r in ("dwyer-da", "dwyer-sda") if r in REDUCTIONS])
@pytest.mark.parametrize("threads", [2, 4, 7])  # Process threads: 3, 5 and 8 threads with main
@pytest.mark.parametrize("length", [1, 6])
@pytest.mark.parametrize("name", ["dwyer_independent_work1.py", "dwyer_independent_work2.py"])
def test_independent_work_is_two_states_under_da(name: str, threads: int, length: int, reduction: str) -> None:
    """Section 8: with storage avoidance, Independent Work stores only its initial and final states, at any
    number of threads and any list length (version 2's lists thread-local only dynamically)."""
    r = check(name, {"THREADS": threads, "LENGTH": length}, reduction)
    assert r.verdict == "ok", (r.error, kinds(r))
    assert r.stats.states == 2


def test_bounded_buffer_is_figure_3() -> None:
    """The class is the paper's, method for method, with `while` loops around the waits."""
    text = (EXAMPLES / "dwyer_bounded_buffer.py").read_text()
    for line in ("while self.tail == self.head:", "while self.head == (self.tail + 1) % self.bound:",
                 "self.head = (self.head + 1) % self.bound", "self.tail = (self.tail + 1) % self.bound",
                 "return self.buffer[self.tail]", "b1.add(Item())", "t2 = InOut(b2, b1)"):
        assert line in text, line
    assert text.count("@synchronized") == 2 and text.count("notify_all(self)") == 2


def test_twins_differ_from_their_model_by_the_injected_bug_only() -> None:
    """A twin is its model with the bug injected: the code after the docstring differs in a few lines."""
    import difflib

    def code(name: str) -> list[str]:
        text = (EXAMPLES / name).read_text()
        return text.split('"""', 2)[2].splitlines()

    for twin in TWINS:
        model = twin.replace("_bug.py", ".py")
        changed = [ln for ln in difflib.unified_diff(code(model), code(twin), lineterm="", n=0)
                   if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
        assert 0 < len(changed) <= 12, (twin, changed)
