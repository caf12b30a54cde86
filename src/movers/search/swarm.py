"""``--swarm N``: swarm verification (Holzmann, Joshi & Groce, "Swarm Verification Techniques", IEEE TSE
37(6), 2011), SPIN's answer to state spaces no machine holds.

Instead of one exhaustive search that cannot finish, N small *diversified* searches run at once, each a
*member* of the swarm: the usual depth-first search (``dfs.py``, with the reduction asked for) over its own
bitstate store (``fingerprints.py``, 2^``--bits`` bits), each with

- its own *hash seed*: member k's fingerprints are a hash of the state's numbers and ``seed + k``, so that
  the states one member's bit array loses to collisions are not the ones another's loses (SPIN's ``-RS``
  with hash-function variation);
- its own *search order*: member 0 takes the threads in their order (the sequential search's), member 1 in
  the reverse order (the last thread first: SPIN's ``-DREVERSE``), members 2 and up in a random order drawn
  afresh at each state from ``seed + k`` (SPIN's ``-DT_RAND`` / ``-DP_RAND``). A reduction's moves are
  reordered after the reduction chose them, so each member's search is that reduction's search.

The members are processes (forked from the checker once the model is compiled, as ``parallel.py``'s, and
dying with it: ``parallel._die_with_parent``). The first violation a member reports stops every member; its
trace is the member's depth-first stack (a real run, replayed by the checker as always). The parent owns the
time limit, ``--max-memory`` (the members' resident memory added up, ``parallel._memory_check``), Ctrl-C and
the progress line; each member also stops on its own budget and ``--max-states`` (states it stored) and at
the parent's stop, looked at every few hundred expansions.

*Not a proof.* A member's bitstate search may miss states (its expected coverage is reported), and the
members' orders only make it likely that together they reach more: a swarm that finds nothing ends
``incomplete`` (reason ``not-a-proof``, exit 3), with each member's states, hash factor and coverage.
The same seed and model give the same members, so the same violation is found by the same member
(which member reports first when several find one is the machine's timing).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import random
import signal
import time
from collections.abc import Callable
from typing import Any

from movers.analysis.classify import Refine
from movers.search.base import Found, Outcome, SearchBase, Stop, Strategy
from movers.search.dfs import DepthFirst
from movers.search.fingerprints import CompactStore
from movers.search.limits import LimitReached, poll, stop_reason
from movers.search.options import Options
from movers.search.parallel import _die_with_parent, _memory_check
from movers.search.simulate import new_seed
from movers.search.stats import Stats
from movers.semantics.state import State

# How long the parent waits, after a stop, for the members' statistics (they look every few hundred
# expansions) before it kills them.
COLLECT_SECONDS = 10.0


def order_name(k: int) -> str:
    """Member k's search order (module docstring)."""
    return "thread order" if k == 0 else "reverse thread order" if k == 1 else "random order"


class SeededStore(CompactStore):
    """A bitstate store whose fingerprints are a hash of the state's numbers and the member's seed: each
    member's bit array collides on other states."""

    __slots__ = ("seed",)

    def __init__(self, bits: int, seed: int) -> None:
        super().__init__("bitstate", bits)
        self.seed = seed

    def key(self, s: State) -> int:  # type: ignore[override]
        return hash((self.seed, self.numbers(s)))

    def find(self, s: State) -> int | None:  # type: ignore[override]
        nums = self.find_numbers(s)
        return None if nums is None else hash((self.seed, nums))


def reorder(red: Any, k: int, seed: int) -> None:
    """Give member k's order to the reduction's moves (module docstring); the reduction's own lists are never
    changed (they may be cached)."""
    if k == 0:
        return
    moves = red.moves
    if k == 1:
        def reversed_threads(s: State) -> list[Any]:
            # A stable sort: one thread's moves (its choices) keep their order.
            return sorted(moves(s), key=lambda m: -m.steps[0][0])

        red.moves = reversed_threads
        return
    shuffle = random.Random(seed).shuffle

    def shuffled(s: State) -> list[Any]:
        out = list(moves(s))
        shuffle(out)
        return out

    red.moves = shuffled


class Member(SearchBase):
    """One member's depth-first search: a seeded bitstate store, and a stop the parent sets."""

    def __init__(self, ts: Any, red: Any, options: Options, seed: int, stop: Any, counts: Any = None,
                 k: int = 0) -> None:
        super().__init__(ts, red, options.but(store="bitstate"), None)
        self.seed = seed
        self.stop = stop
        # The parent's progress line: the states each member stored so far (written at each tick, unlocked).
        self.counts, self.k = counts, k

    def strategy(self, name: str) -> Strategy:
        return DepthFirst(self)

    def new_store(self) -> Any:
        return SeededStore(self.bits, self.seed)

    def tick(self, stored: int) -> None:
        super().tick(stored)
        if self.counts is not None:
            self.counts[self.k] = stored
        if self.stop.is_set():
            raise Stop("stopped")


def _member(k: int, seed: int, ts: Any, red: Any, options: Options, shared: tuple[Any, Any, Any], ppid: int,
            classification: Any) -> None:
    status, stop, counts = shared
    _die_with_parent(ppid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C does
    try:
        reorder(red, k, seed)
        search, out = _refined_search(ts, red, options, seed, stop, classification, counts, k)
        f = out.found
        found = (f.kind, f.message, list(f.steps)) if f is not None else None
        s = out.stats
        status.put(("end", k, found, (s.states, s.transitions, s.max_depth), search.store_report(), out.limit))
    except BaseException as e:  # noqa: BLE001  (a bug in a member must reach the parent, never hang it)
        status.put(("error", k, f"internal error in swarm member {k} (a bug in movers): {type(e).__name__}: {e}"))
    status.close()
    status.join_thread()


def _refined_search(ts: Any, red: Any, options: Options, seed: int, stop: Any, classification: Any,
                    counts: Any = None, k: int = 0) -> tuple[Member, Outcome]:
    """The member's search, restarted after each refinement of a guessed classification, as the checker's
    (``Checker._search``; Stoller & Cohen, section 8): each member refines its own copy of the guess."""
    while True:
        search = Member(ts, red, options, seed, stop, counts, k)
        try:
            return search, search.run("dfs")
        except Refine as r:
            if red.refined(r) is not None:  # the reduction's own guesses (Dwyer et al.'s disciplines)
                continue
            if classification is None:
                raise
            classification.apply(r)
            red.reset()
            ts.reset()


def swarm_search(ts: Any, red: Any, options: Options, progress: Callable[[Stats], None] | None = None,
                 classification: Any = None) -> tuple[Outcome, dict[str, Any]]:
    """Run ``options.swarm`` members (module docstring): what the first violation found, and the coverage (the
    result's ``hunt`` field). ``classification``: the reduction's guessed classification, if any, which a
    member refines as the checker would."""
    n = options.swarm or 1
    seed = options.seed if options.seed is not None else new_seed()
    ctx = mp.get_context("fork")
    status = ctx.Queue()
    stop = ctx.Event()
    counts = ctx.Array("q", n, lock=False)
    procs = [ctx.Process(target=_member, daemon=True,
                         args=(k, seed + k, ts, red, options, (status, stop, counts), os.getpid(), classification))
             for k in range(n)]
    start = time.perf_counter()
    stats = Stats()
    ends: dict[int, tuple[Any, ...]] = {}
    found: Found | None = None
    finder: int | None = None
    limit: str | None = None
    for p in procs:
        p.start()
    try:
        try:
            found, finder = _watch(procs, status, counts, ends, options, progress, stats, start)
        except (LimitReached, KeyboardInterrupt, MemoryError) as e:
            limit = stop_reason(e)
        stop.set()
        _collect(procs, status, ends, n)
    finally:
        stop.set()
        for p in procs:
            p.join(timeout=0.5)
            if p.is_alive():
                p.kill()
                p.join(timeout=1)
        status.cancel_join_thread()
    errors = [e for e in ends.values() if e[0] == "error"]
    if errors and found is None:
        raise RuntimeError(errors[0][2])
    members = [_member_report(k, seed + k, ends.get(k)) for k in range(n)]
    stats.states = sum(m["states"] for m in members)
    stats.transitions = stats.moves = sum(m["transitions"] for m in members)
    stats.max_depth = max((m["max_depth"] for m in members), default=0)
    stats.seconds = time.perf_counter() - start
    if found is None and limit is None:
        # Every member ended: by its own limit (the first one met is reported), or having searched all it could.
        own = [m["ended"] for m in members if m["ended"] not in ("done", "stopped")]
        limit = own[0] if own else "not-a-proof"
    hunt = {"mode": "swarm", "seed": seed, "members": members, "found_by": finder}
    return Outcome(found, stats, None if found is not None else limit), hunt


def _watch(procs: list[Any], status: Any, counts: Any, ends: dict[int, tuple[Any, ...]], options: Options,
           progress: Callable[[Stats], None] | None, stats: Stats, start: float) -> tuple[Found | None, int | None]:
    """The parent during the search: the members' ends, its budget, their health and memory, until a member
    finds a violation or every member has ended."""
    last = start
    while len(ends) < len(procs):
        try:
            msg = status.get(timeout=0.05)
        except queue.Empty:
            msg = None
        if msg is not None:
            ends[msg[1]] = msg
            if msg[0] == "error":
                return None, None
            if msg[2] is not None:
                kind, message, steps = msg[2]
                return Found(kind, message, steps), msg[1]
        poll()  # the time limit, --max-memory and Ctrl-C of the parent's budget
        dead = [k for k, p in enumerate(procs) if not p.is_alive() and k not in ends and p.exitcode not in (0, None)]
        if dead:  # killed from outside (the out-of-memory killer): said, never waited for
            ends[dead[0]] = ("error", dead[0], f"--swarm: member {dead[0]} ended during the search (exit code "
                             f"{procs[dead[0]].exitcode})")
            return None, None
        _memory_check(procs, options.limits)
        now = time.perf_counter()
        if progress is not None and now - last >= 0.5:
            last = now
            stats.seconds, stats.states = now - start, sum(counts)
            progress(stats)
    return None, None


def _collect(procs: list[Any], status: Any, ends: dict[int, tuple[Any, ...]], n: int) -> None:
    """After the stop: the other members' statistics, for a few seconds at most."""
    deadline = time.perf_counter() + COLLECT_SECONDS
    while len(ends) < n and time.perf_counter() < deadline:
        try:
            msg = status.get(timeout=0.05)
        except queue.Empty:
            if not any(p.is_alive() for p in procs):
                break
            continue
        ends.setdefault(msg[1], msg)


def _member_report(k: int, seed: int, end: tuple[Any, ...] | None) -> dict[str, Any]:
    """One member's coverage (docs/cli.md, ``hunt.members``)."""
    out: dict[str, Any] = {"member": k, "seed": seed, "order": order_name(k), "states": 0, "transitions": 0,
                           "max_depth": 0, "store": None, "ended": "killed"}
    if end is None or end[0] != "end":
        out["ended"] = "killed" if end is None else "error"
        return out
    _, _, found, (states, transitions, depth), store, limit = end
    out.update(states=states, transitions=transitions, max_depth=depth, store=store,
               ended="violation" if found is not None else limit or "done")
    return out


def swarm_notes(hunt: dict[str, Any], found: bool) -> list[str]:
    """The report's notes: each member's coverage, and how to repeat the run."""
    notes = []
    for m in hunt["members"]:
        store = m["store"] or {}
        cov = store.get("expected_coverage")
        notes.append(f"swarm member {m['member']} (seed {m['seed']}, {m['order']}): {m['states']:,} states stored, "
                     f"max depth {m['max_depth']:,}, hash factor {store.get('hash_factor', '?')}, expected coverage "
                     f"{'?' if cov is None else f'{100 * cov:.2f}%'}; {m['ended']}")
    n = len(hunt["members"])
    if found:
        notes.append(f"swarm of {n} (Holzmann, Joshi & Groce's swarm verification), seed {hunt['seed']}: found by "
                     f"member {hunt['found_by']} (--swarm {n} --seed {hunt['seed']} repeats the members)")
    else:
        notes.append(f"swarm of {n} (Holzmann, Joshi & Groce's swarm verification), seed {hunt['seed']}: not a "
                     "proof: each member's bitstate search may miss states, and the members together cover an "
                     "unknown share of the state space")
    return notes


__all__ = ["COLLECT_SECONDS", "Member", "SeededStore", "order_name", "reorder", "swarm_notes", "swarm_search"]
