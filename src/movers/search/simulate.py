"""``--simulate``: random walks for bug hunting, TLC's simulation mode (``tlc -simulate -depth N -seed S``).

A *walk* (TLC's *behavior* or *trace*) starts at the initial state and takes, at each state, one of the
enabled steps at random (uniformly, as TLC picks a successor), checking every property the safety search
checks on the way: a failed step (an assertion, a runtime error), a state property (an invariant, a race),
a deadlock where no step is enabled and some thread has not terminated. A walk ends where no thread can move
or at the depth bound (``--max-depth``, default ``DEFAULT_DEPTH``), and the next one starts again from the
initial state, until a violation, a limit (``--time-limit``, ``--max-memory``, ``--max-states``, which counts
the steps taken, every walk's) or Ctrl-C. Without a limit it runs until Ctrl-C, as TLC's simulation does.

*Seed.* The random choices come from ``random.Random(seed)`` alone and the enabled steps of a state come in
the system's order, so the same seed and model give the same walks and the same violation, on any machine.

*Not a proof.* Walks sample the interleavings; finding nothing says nothing about the others. The coverage
reported is the walks, the steps, the deepest walk, and the distinct states seen, counted in a fingerprint
set (the hashcompact store's fingerprints: the language's identity of states) of at most ``SEEN_CAP``
states, beyond which they are no longer counted (the count is then a lower bound).

A violation's trace is the walk's steps, a real run: the checker replays it as any counterexample, and
``--trail`` saves it for ``movers replay``.

Why a default depth of 10,000 (TLC's is 100): a thread program's walk usually ends by itself, when every
thread has terminated; the bound only cuts the walks of programs that loop for ever, and a bug at the end
of a long run (a counter that must reach its bound) needs the whole run. A walk of 10,000 steps costs a
fraction of a second.
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from movers.search.base import Found, Outcome
from movers.search.fingerprints import make_store
from movers.search.limits import LimitReached, poll, stop_reason
from movers.search.options import Options
from movers.search.stats import Stats

DEFAULT_DEPTH = 10_000
# The distinct states counted (a fingerprint set of 8-byte slots: about 16 MB at most), beyond which the count
# is a lower bound: the walks themselves keep nothing.
SEEN_CAP = 1 << 20
CHECK_EVERY = 1024  # steps between looks at the clock


def new_seed() -> int:
    """A seed for a run that was given none (printed, so that the run can be repeated)."""
    return secrets.randbelow(2**31)


@dataclass
class Walks:
    """What the walks covered (the result's ``hunt`` field, docs/cli.md)."""

    seed: int
    depth: int
    walks: int = 0
    steps: int = 0
    deepest: int = 0
    distinct: int = 0
    capped: bool = False
    # The walk that found the violation (1-based), or None.
    found_in: int | None = None

    def report(self) -> dict[str, Any]:
        return {"mode": "simulate", "seed": self.seed, "max_depth": self.depth, "walks": self.walks,
                "steps": self.steps, "deepest_walk": self.deepest, "distinct_states": self.distinct,
                "distinct_states_capped": self.capped, "found_in_walk": self.found_in}


def simulate(ts: Any, red: Any, options: Options, progress: Callable[[Stats], None] | None = None
             ) -> tuple[Outcome, Walks]:
    """Random walks over ``red``'s moves (the full system's steps, ``--reduction none``) until a violation or
    a limit (module docstring)."""
    seed = options.seed if options.seed is not None else new_seed()
    depth = options.limits.max_depth or DEFAULT_DEPTH
    cov = Walks(seed, depth)
    stats = Stats()
    start = time.perf_counter()
    found: Found | None = None
    limit: str | None = None
    try:
        found = _walk(ts, red, options.limits.max_states, cov, random.Random(seed), stats, start, progress)
        if found is None:
            limit = "max-states"
    except (LimitReached, KeyboardInterrupt, MemoryError) as e:
        limit = stop_reason(e)
    stats.seconds = time.perf_counter() - start
    stats.states, stats.transitions, stats.moves, stats.max_depth = cov.distinct, cov.steps, cov.steps, cov.deepest
    out = Outcome(found, stats, None if found is not None else limit)
    return out, cov


def _walk(ts: Any, red: Any, max_steps: int | None, cov: Walks, rng: random.Random, stats: Stats, start: float,
          progress: Callable[[Stats], None] | None) -> Found | None:
    """Walk until a violation (returned) or ``max_steps`` steps (None); the other limits raise."""
    init = ts.initial()
    bad = ts.check_state(init)
    cov.walks = 1
    if bad is not None:
        cov.found_in = 1
        return Found(bad[0], bad[1], [], init)
    store = make_store("hashcompact")
    key, seen = store.key, store.keys.seen  # type: ignore[attr-defined]
    seen(key(init))
    distinct = 1
    moves_of, deadlock = red.moves, ts.deadlock
    check_state = None if getattr(ts.check_state, "checks_nothing", False) else ts.check_state
    cap = max_steps if max_steps is not None else float("inf")
    depth_bound = cov.depth
    steps = depth = 0
    next_look = CHECK_EVERY
    randrange = rng.randrange
    try:
        while True:
            s = init
            path: list[Any] = []
            depth = 0
            while depth < depth_bound:
                if steps >= cap:
                    return None
                moves = moves_of(s)
                if not moves:
                    dead = deadlock(s)
                    if dead:
                        cov.found_in = cov.walks
                        return Found("deadlock", dead, path, s)
                    break
                # Steps an assume() pruned lead nowhere: the walk takes one of the others.
                live = [m for m in moves if m.state is not None or m.violation is not None]
                if not live:
                    break
                m = live[randrange(len(live))] if len(live) > 1 else live[0]
                steps += 1
                depth += 1
                if m.violation is not None:
                    cov.found_in = cov.walks
                    return Found(m.violation[0], m.violation[1], path + list(m.steps))
                path.extend(m.steps)
                s = m.state
                if distinct < SEEN_CAP and not seen(key(s)):
                    distinct += 1
                if check_state is not None:
                    v = check_state(s)
                    if v is not None:
                        cov.found_in = cov.walks
                        return Found(v[0], v[1], path, s)
                if steps >= next_look:
                    next_look = steps + CHECK_EVERY
                    cov.steps, cov.distinct = steps, distinct
                    _tick(stats, cov, start, progress)
            if depth > cov.deepest:
                cov.deepest = depth
            cov.walks += 1
    finally:
        if depth > cov.deepest:
            cov.deepest = depth
        cov.steps, cov.distinct = steps, distinct
        cov.capped = distinct >= SEEN_CAP


def _tick(stats: Stats, cov: Walks, start: float, progress: Callable[[Stats], None] | None) -> None:
    poll()  # the time limit, the memory ceiling (the timer raises on its own on the main thread)
    if progress is not None:
        stats.seconds = time.perf_counter() - start
        stats.states, stats.transitions, stats.max_depth = cov.distinct, cov.steps, cov.deepest
        progress(stats)


def walks_note(cov: Walks, found: bool) -> str:
    """The report's note: what the walks covered, and how to repeat them."""
    capped = "at least " if cov.capped else ""
    what = (f"simulation (random walks, TLC's simulation mode), seed {cov.seed}: {cov.walks:,} walk"
            f"{'' if cov.walks == 1 else 's'}, {cov.steps:,} steps, {capped}{cov.distinct:,} distinct states seen, "
            f"deepest walk {cov.deepest:,} steps (--max-depth {cov.depth:,})")
    if found:
        return f"{what}; found in walk {cov.found_in:,} (--simulate --seed {cov.seed} repeats it)"
    return f"{what}; not a proof: the interleavings no walk took were not checked"


__all__ = ["DEFAULT_DEPTH", "SEEN_CAP", "Walks", "new_seed", "simulate", "walks_note"]
