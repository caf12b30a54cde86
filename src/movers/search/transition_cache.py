"""The transition cache: a thread's step looked up by its short vector instead of run, and its successor's parts
not hashed again.

LTSmin's PINS interface (Blom, van de Pol and Weber, "LTSmin: Distributed and Symbolic Reachability", CAV 2010,
section 2) splits a model's transition relation into *transition groups* and says, for each group, which parts
of the state vector it reads and writes. A group's successors are a function of the parts it reads, its *short
vector*, so LTSmin caches them by it (Kant, Laarman, Meijer, van de Pol, Blom and van Dijk, "LTSmin:
High-Performance Language-Independent Model Checking", TACAS 2015, section 3: "transition caching"): where many
states share a group's short vector, the group's step runs once per distinct short vector, not once per state.

In movers a thread's step is a transition group. Its one-call generated form (``Code.fast_dispatch``) reads the
thread's id, the globals, the heap and the thread's own stack, and writes only the last three, wherever
``Code.fast_local`` says so (``lang/codegen.own_stack_only``: no ``join``, no ``is_alive``, no return handed to
another function's code). The plain search numbers every part of a state it meets (search/store.py), so the
short vector of thread t's step from a state is ``(t, number of the globals, number of t's stack, number(s) of
the heap)``, read off the parent's numbers with no hashing of the parts themselves. The cache keeps, per short
vector, what the step gave: disabled (None), a self-loop (``SAME``), the number of the thread's new stack where
nothing else changed (the stack itself is the store's, ``StateStore.by_number``), or else the successor's
globals, heap and stack with their numbers. A hit gives the successor and its numbers without running the step
or hashing its parts: it is the answer of the same step from equal parts, so it is the same successor. On the
filter lock at access granularity a thread's step meets its short vector again in 92 transitions of 100
(benchmarks/transition_cache.py).

Not cached, and run every time as ``TransitionSystem.successors`` runs them: a step whose node has no one-call
form or that leaves it (the closures, every resolution of a choice), one that reads another thread's stack, and
one that changes the number of threads. Memory is bounded whatever the model: at every look back (every
``WINDOW`` answers kept) a cache holding more than ``LIMIT`` answers, or more than one for every ``PER_STATE``
states stored, starts afresh (about 300 bytes an answer: at most about 150 bytes a stored state, and 20 MB);
and a cache that found a successor for fewer than one look-up in ``MIN_HITS`` is turned off for the rest of
the search. The states the search stores, the order it meets them in and their numbers are those of the search
without the cache (``tests/test_transition_cache.py``); ``TRANSITION_CACHE`` turns it off, for measuring.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import compress
from operator import is_not
from typing import Any

from movers.ir.program import SAME
from movers.semantics.state import State
from movers.semantics.system import GIVE_UP

TRANSITION_CACHE = True
# A cache is cleared where it holds more than LIMIT answers or more than one for every PER_STATE states stored
# (looked at every WINDOW answers kept): an answer costs about 300 bytes (its key, its entry, the dict's slot;
# the parts it names are the store's own), and clearing costs only the misses that refill it. Where fewer than
# one look-up in MIN_HITS found a successor (a hit that found the step disabled saves only a guard's test,
# about what the key costs), it is turned off for the rest of the search: a model whose steps rarely meet their
# short vector again (threads that all write one dict, each state's heap new) would pay the keys for nothing.
LIMIT = 1 << 16
PER_STATE = 2
WINDOW = 4096
MIN_HITS = 4

Expand = Callable[[State, Any], "tuple[list[State], list[Any]] | None"]


def cached_successors(ts: Any, store: Any) -> Expand:  # noqa: C901  (the hot loop, inline)
    """``expand(state, numbers)``: the successors of ``state`` (whose numbers in ``store`` are ``numbers``) as
    ``TransitionSystem.successors`` gives them, in the same order, with each successor's numbers in ``store``
    (``numbers`` itself for a self-loop, which is ``state``); None where ``successors`` gives None (a step that
    fails or is pruned: ``steps`` says what happens). ``ts`` is the program's ``TransitionSystem``; ``store``
    has numbered a state already (its heap layout, ``flat``, is decided)."""
    cache: dict[tuple[Any, ...], Any] = {}
    size = LIMIT if TRANSITION_CACHE else 0
    number, numbers, flat, part = store.parts.__getitem__, store.numbers, store.flat, store.by_number.__getitem__
    given_up, give_up, same = ts.given_up_successors, GIVE_UP, SAME
    on = size > 0
    looked = found = 0  # look-ups, and hits that gave a successor, since the last look back
    check_at = WINDOW
    stored = store.keys

    def look_back() -> None:
        """Every WINDOW answers kept: turn the cache off where it found too few, clear it where it is full."""
        nonlocal on, looked, found, check_at
        if found * MIN_HITS < looked:
            on = False
            cache.clear()
            return
        if len(cache) >= min(size, max(WINDOW, len(stored) // PER_STATE)):
            cache.clear()
        check_at = len(cache) + WINDOW
        looked = found = 0

    def expand(s: State, pk: Any) -> tuple[list[State], list[Any]] | None:
        nonlocal looked, found
        g, heap, threads = s
        n = len(threads)
        succ: list[State] = []
        kls: list[Any] = []
        if on:
            gk = pk[0]
            hk = tuple(pk[n + 1:]) if flat else pk[-1]
        t = -1
        for th in threads:
            t += 1
            if not th:
                continue
            if on:
                looked += 1
                key = (t, gk, pk[t + 1], hk)
                e = cache.get(key, give_up)
                if e is not give_up:  # the step's answer from equal parts: its successor, numbered
                    if e is None:
                        continue
                    found += 1
                    if e is same:
                        succ.append(s)
                        kls.append(pk)
                        continue
                    w = [*threads]
                    kl = [*pk]
                    if type(e) is int:  # only the thread's stack changed: e is its number
                        w[t] = part(e)
                        succ.append((g, heap, tuple(w)))
                        kl[t + 1] = e
                    else:
                        w[t] = e[2]
                        succ.append((e[0], e[1], tuple(w)))
                        kl[0] = e[3]
                        kl[t + 1] = e[4]
                        kl[n + 1:] = e[5:]  # the heap's numbers (one, where it is not flat)
                    kls.append(kl)
                    continue
            top = th[-1]
            code, pc = top[0], top[1]
            try:
                done = code.fast_dispatch[pc](g, heap, threads, t, th, top)
            except Exception:  # noqa: BLE001  (not its whole shape: the node's parts try)
                done = give_up
            if done is None or done is same:
                if on and code.fast_local[pc]:
                    cache[key] = done
                    if len(cache) >= check_at:
                        look_back()
                if done is same:
                    succ.append(s)
                    kls.append(pk)
                continue
            if done is give_up:
                out: list[State] = []
                if not given_up(s, t, out, []):
                    return None
                succ.extend(out)
                kls.extend(map(numbers, out))
                continue
            kl = _numbered(done, t, n, g, heap, pk, number, numbers, flat)
            succ.append(done)
            kls.append(kl)
            if on and code.fast_local[pc] and len(done[2]) == n:
                cache[key] = (kl[t + 1] if done[0] is g and done[1] is heap else
                              (done[0], done[1], done[2][t], kl[0], kl[t + 1], *kl[n + 1:]))
                if len(cache) >= check_at:
                    look_back()
        return succ, kls

    return expand


def _numbered(done: State, t: int, n: int, g: tuple, heap: tuple, pk: Any, number: Callable[[Any], int],
              numbers: Callable[[State], Any], flat: bool) -> Any:
    """The numbers of ``done``, thread t's successor from the one-call form of a state with parts ``g``,
    ``heap`` and numbers ``pk``: only thread t's stack, the globals and the heap may be new objects, every other
    part is the parent's. A part never seen before is numbered (interned) as the search numbers it."""
    g2, h2, d2 = done
    if len(d2) != n:  # a thread started (the generated code starts none: the closures' business)
        return numbers(done)
    kl = [*pk]
    try:
        if g2 is not g:
            kl[0] = number(g2)
        if h2 is not heap:
            if not flat:
                kl[-1] = number(h2)
            elif len(h2) == len(heap):
                # Only the objects the step replaced are numbered (a step changes one or two, a lossy store's
                # flat heap may hold dozens), found at C speed.
                for j in compress(range(n + 1, n + 1 + len(h2)), map(is_not, h2, heap)):
                    kl[j] = number(h2[j - n - 1])
            else:
                kl[n + 1:] = map(number, h2)
        kl[t + 1] = number(d2[t])
    except KeyError:
        return numbers(done)
    return kl


__all__ = ["LIMIT", "MIN_HITS", "PER_STATE", "TRANSITION_CACHE", "WINDOW", "cached_successors"]
