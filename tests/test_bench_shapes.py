"""benchmarks/shapes.py's bare twins: each hand-written successor function must store exactly the states of
movers' ``--reduction none`` search of its model, at each granularity (docs/language.md section 8), or the
benchmark's ratios compare different graphs. Checked at the small sizes; this checks the encodings, never
speed."""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT

import movers

sys.path.insert(0, str(ROOT / "benchmarks"))
import shapes  # noqa: E402  (benchmarks/shapes.py)

CASES = [(name, g) for name in shapes.ORDER for g in shapes.GRANULARITIES]


@pytest.mark.parametrize(("name", "granularity"), CASES)
def test_the_bare_twin_stores_movers_states(name: str, granularity: str, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(shapes.run, "RESULTS", tmp_path)
    size = shapes.SHAPES[name][4]
    result = movers.check(shapes.write_model(name, size), reduction="none", granularity=granularity)
    assert result.verdict == "ok"
    assert shapes.bare_search(name, size, granularity == "access") == result.stats.states


@pytest.mark.parametrize("name", shapes.ORDER)
def test_the_two_granularities_are_two_graphs(name: str) -> None:
    """Why every shape has a twin per granularity: at the small size the two twins' counts differ, so the
    comparison above would catch a twin of the wrong granularity."""
    size = shapes.SHAPES[name][4]
    assert shapes.bare_search(name, size, True) != shapes.bare_search(name, size, False)


@pytest.mark.parametrize("size", [(2, 2), (3, 2)])
def test_the_peers_counter_is_the_invariant_shape(size: tuple[int, int]) -> None:
    """The peers' model (in their APIs, one step function per worker) walks shape 3's statement graph."""
    init, step = shapes.peer_counter_step(*size)
    visited = {init}
    stack = [init]
    while stack:
        s = stack.pop()
        for t in range(size[0]):
            n = step(s, t)
            if n is not None and n not in visited:
                visited.add(n)
                stack.append(n)
    assert len(visited) == shapes.bare_search("invariant", size, False)
