"""The plain search's transition cache (search/transition_cache.py): a thread's step looked up by its short
vector (the thread, the globals, the heap, its own stack) instead of run again.

A cached answer is only sound where the step reads nothing else: the cache must change no search. Each check
here runs the plain search with the cache as it is, with a tiny cache that is cleared all the time, with one
that turns itself off after a few answers, and with none, and asks for the same verdict, counts and
counterexample, and for the same states expanded in the same order; on every example and corpus program at both
granularities, on the issue's shapes, under the lossy stores and --max-states, and on random models. A step
that reads another thread's stack (``join``, ``is_alive``, the main thread's end) is never cached, and a model
where caching it would be wrong shows that these checks would see it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from differential import search_summary
from hypothesis import HealthCheck, given, note, settings
from strategies import models

import movers
from movers.checker import compile_source
from movers.lang import codegen
from movers.search import plain, transition_cache
from movers.semantics import system

sys.path.insert(0, str(ROOT / "benchmarks"))
import shapes  # noqa: E402  (benchmarks/shapes.py: issue 25's shapes)

EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
CORPUS = sorted((ROOT / "tests" / "corpus").glob("*.py"))

# The cache's settings compared with no cache: as shipped; so small that it is cleared every few answers;
# turned off after its first look back (every answer a miss by the measure MIN_HITS asks).
SETTINGS: dict[str, dict[str, Any]] = {
    "default": {},
    "tiny": {"LIMIT": 16, "WINDOW": 4},
    "turned-off": {"WINDOW": 4, "MIN_HITS": 10**9},
}
OFF = {"TRANSITION_CACHE": False}

JOIN = """
import threading

done = 0


def quiet():
    k = 0
    k += 1


def watcher(t):
    global done
    while t.is_alive():
        pass
    done = 1


q = threading.Thread(target=quiet)
q.start()
w = threading.Thread(target=watcher, args=(q,))
w.start()
q.join()
alive = q.is_alive()
assert not alive
"""


@contextmanager
def _cache(mp: pytest.MonkeyPatch, settings_: dict[str, Any]) -> Iterator[list[Any]]:
    """The cache's module set as ``settings_`` says, and the states the plain search expands (their texts'
    hashes), in order."""
    expanded: list[Any] = []
    real = plain.cached_successors

    def recording(ts: Any, store: Any) -> Any:
        expand = real(ts, store)

        def run(s: Any, pk: Any) -> Any:
            # Its text: two compilations of one model make distinct (identity-compared) code objects.
            expanded.append(hash(repr(s)))
            return expand(s, pk)

        return run

    with mp.context() as m:
        for name, value in settings_.items():
            m.setattr(transition_cache, name, value)
        m.setattr(plain, "cached_successors", recording)
        yield expanded


def _run(source: str, mp: pytest.MonkeyPatch, settings_: dict[str, Any], **kw: Any) -> tuple[Any, list[Any]]:
    kw.setdefault("time_limit", 120)
    kw.setdefault("max_states", 20_000)
    with _cache(mp, settings_) as expanded:
        r = movers.check(source, **kw)
    return (search_summary(r), tuple(tuple(v.trace) for v in r.violations)), expanded


def _same_as_no_cache(source: str, mp: pytest.MonkeyPatch, names: tuple[str, ...] = tuple(SETTINGS),
                      **kw: Any) -> None:
    without, order = _run(source, mp, OFF, **kw)
    # (No order where the cache is not in play: a reduction, symmetry, disciplines checked on each step.)
    for name in names:
        with_cache, order_with = _run(source, mp, SETTINGS[name], **kw)
        assert with_cache == without, name
        assert order_with == order, name


# -- every program, both granularities -----------------------------------------------------------------------


@pytest.mark.parametrize("granularity", ["access", "statement"])
@pytest.mark.parametrize("path", EXAMPLES + CORPUS, ids=lambda p: p.stem)
def test_every_program_searches_as_without_the_cache(path: Path, granularity: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # The cache as shipped runs in every other test of the suite (against the closures, the naive explorer):
    # here, the one that clears itself every few answers, the hardest for the numbering.
    _same_as_no_cache(path.read_text(), monkeypatch, ("tiny",), filename=path.name, granularity=granularity)


@pytest.mark.parametrize("granularity", ["access", "statement"])
@pytest.mark.parametrize("name", ["filter", "monitor", "phil_locals", "invariant", "dict", "queue"])
def test_the_shapes_search_as_without_the_cache(name: str, granularity: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    source = shapes.SHAPES[name][2](*shapes.SHAPES[name][4])  # the small size
    _same_as_no_cache(source, monkeypatch, granularity=granularity, max_states=200_000)
    _, order = _run(source, monkeypatch, {}, granularity=granularity)
    assert order  # the cache was in play


@pytest.mark.parametrize("kw", [{"store": "hashcompact"}, {"store": "bitstate", "bits": 20},
                                {"max_states": 300}, {"max_states": 1}, {"store": "hashcompact", "max_states": 300}],
                         ids=["hashcompact", "bitstate", "max300", "max1", "hashcompact-max"])
@pytest.mark.parametrize("name", ["filter", "monitor"])
def test_stores_and_limits_search_as_without_the_cache(name: str, kw: dict[str, Any],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    source = shapes.SHAPES[name][2](*shapes.SHAPES[name][4])
    _same_as_no_cache(source, monkeypatch, granularity="access", **kw)


def test_the_cache_is_the_closures(monkeypatch: pytest.MonkeyPatch) -> None:
    # With the cache on (as shipped) against no generated code at all.
    source = shapes.SHAPES["filter"][2](*shapes.SHAPES["filter"][4])
    fast = search_summary(movers.check(source, granularity="access"))
    monkeypatch.setattr(system, "FAST_PATH", False)
    assert search_summary(movers.check(source, granularity="access")) == fast


# -- what is cached --------------------------------------------------------------------------------------------


def test_steps_that_read_another_threads_stack_are_not_cached() -> None:
    for granularity in ("access", "statement"):
        program = compile_source(JOIN, "model.py", granularity)
        ts = system.TransitionSystem(program)
        assert ts.bare_system is ts
        by_source = {n.source: c.fast_local[k] for c in program.codes() for k, n in enumerate(c.nodes)
                     if n.fast_succ is not None or n.fast_step is not None}
        assert by_source["q.join()"] is False, granularity  # its guard reads q's stack
        assert by_source["assert not alive"] is False, granularity  # the main thread's end waits for the others
        if granularity == "statement":
            assert by_source["k = 0"] is True


def test_a_model_where_caching_them_would_be_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    # q ends without writing a global or a field: the main thread's join, disabled before, is enabled after,
    # from equal globals, heap and main-thread stack. Taken for a step of its own parts, its answer would be
    # kept, and the search would lose states: the checks above would see the difference.
    right = movers.check(JOIN, granularity="statement")
    assert right.verdict == "ok"
    _same_as_no_cache(JOIN, monkeypatch, granularity="statement")
    monkeypatch.setattr(codegen, "own_stack_only", lambda *_: True)
    wrong = movers.check(JOIN, granularity="statement")
    assert wrong.stats.states < right.stats.states


def test_the_filter_lock_runs_few_of_its_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    # The point of the cache: most of a busy-waiting model's steps meet their short vector again.
    source = shapes.filter_model(3, 2)
    runs = {}
    for label, settings_ in (("on", {}), ("off", OFF)):
        calls = [0]
        real_init = system.TransitionSystem.__init__

        def counting_init(self: Any, *a: Any, _calls: list[int] = calls, _init: Any = real_init, **k: Any) -> None:
            _init(self, *a, **k)
            for code in self.program.codes():
                code.fast_dispatch = tuple(_counted(f, _calls) for f in code.fast_dispatch)

        with monkeypatch.context() as m:
            m.setattr(system.TransitionSystem, "__init__", counting_init)
            summary, _ = _run(source, m, settings_, granularity="access")
        runs[label] = (summary, calls[0])
    assert runs["on"][0] == runs["off"][0]
    assert runs["on"][1] * 3 < runs["off"][1], runs


def _counted(f: Any, calls: list[int]) -> Any:
    def run(*a: Any) -> Any:
        calls[0] += 1
        return f(*a)
    return run


def test_instrumented_systems_have_no_bare_system() -> None:
    # Disciplines are checked on each step's Effect: no step of theirs may be answered from the cache.
    source = """
from movers.lang import *

x = 0
m = Lock()
guarded_by(x, m)


def w():
    global x
    with m:
        x += 1


Thread(target=w).start()
Thread(target=w).start()
"""
    r = movers.check(source)
    assert r.verdict == "ok"
    from movers.instrument.properties import Checked

    program = compile_source(source, "model.py", "access")
    assert Checked(system.TransitionSystem(program)).bare_system is None
    assert Checked(system.TransitionSystem(program), disciplines=False).bare_system is not None


# -- random models -----------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(max_threads=3))
def test_random_models_search_as_without_the_cache(src: str) -> None:
    note(src)
    with pytest.MonkeyPatch.context() as mp:
        for granularity in ("access", "statement"):
            _same_as_no_cache(src, mp, ("tiny", "default"), granularity=granularity, max_states=5_000)
