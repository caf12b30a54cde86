"""Lossy visited stores for state spaces that do not fit exactly: hash compaction and bitstate.

``--store hashcompact`` keeps a 64-bit *fingerprint* per state instead of the state (TLC's fingerprint set;
SPIN's ``-DHC`` hash compaction): two states with the same fingerprint are taken for one, so a collision
can hide a state and everything only it leads to. Up to the first collision the search is the exact one, and
while j states are stored a new state collides with probability j/2^64 (fingerprints taken as uniform), so
the chance that any state was missed is at most the sum over the states stored, n(n-1)/2^65 (the birthday
bound), which the result prints: about 10^-9 for a million states.

``--store bitstate`` is SPIN's supertrace (Holzmann's bitstate hashing): a bit array of m = 2^b bits
(``--bits b``, SPIN's ``-w``) and k = 3 bit positions per state; a state counts as visited when all its
bits are set. Nothing but the array is kept, whatever the number of states; a state whose bits were all set
by others is skipped. The result prints the *hash factor* m/n (bits per state) and the expected coverage,
the fraction of the states met that the search is expected to have stored: a new state met while i are
stored is taken for a visited one with probability (1 - e^(-k·i/m))^k (a Bloom filter's false-positive
rate), and the expected coverage is one minus that averaged over i = 0..n-1. (States reachable only through
a skipped one are not counted: SPIN's estimate, as this one, is first-order.)

A lossy search never proves anything: its verdict ``ok`` says "no violation found in n states" with the
coverage, and only when the store may have missed at most ``MAX_OMISSION`` (0.1%: the collision probability
for hashcompact, one minus the expected coverage for bitstate); otherwise the result is ``incomplete`` with
the reason ``coverage`` (``lossy_verdict``).

Both stores are deterministic: a fingerprint is Python's hash of the tuple of the numbers of the state's
interned parts (``store.py``'s numbering, which depends only on the order of discovery: the globals, each
heap object, each thread stack), never of ``id``-based or string hashes: ints and tuples of ints hash alike
in every process, whatever PYTHONHASHSEED says, so a run gives the same states on every machine, collisions
included. Those parts are kept (a model has few distinct globals tuples, heap objects and thread stacks,
shared by many states); whole states are not (a state's numbers are the exact store's, its heap as its
objects' numbers). Counterexamples come from the depth-first stack, which holds real states, so they
are exact and are replayed as always.

Cost. The plain search (``plain.py``) works a successor's numbers out from its parent's, in line, as for the
exact store, hashes them (in C) and asks the store once, ``seen(fingerprint)``, which answers and records:
about 1.16x the exact store's CPU on the unrolled counter, where computing a tuple of numbers per state in
Python and asking twice took 1.70x (SPIN's hash compaction costs 0.94x of its own exact store;
benchmarks/README.md, "Visited stores"). The general search (``dfs.py``: every reduction, and ``none`` with a
depth limit) asks ``seen`` too, once per state it stores, and ``in`` (unrolled for bitstate's three
positions) only where a reduction decides whether to store: 0.97-1.05x the exact store's CPU under
``static-por`` and ``dwyer-ld+wsldom`` on Dwyer et al.'s monitors.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterator
from typing import Any

from bitarray import bitarray

from movers.search.store import StateStore
from movers.semantics.state import State

STORES = ("exact", "hashcompact", "bitstate")
BITS_RANGE = (4, 34)  # --bits: 16 bits to 2 GB of bits
BITSTATE_HASHES = 3
FINGERPRINT_BITS = 64
EMPTY = -1  # an empty slot of the fingerprint table: Python's hash is never -1
# A lossy search is reported ``ok`` only when it may have missed at most this much (docs/cli.md): the
# probability that hash compaction missed a state, or the expected fraction of states bitstate missed.
MAX_OMISSION = 1e-3


def fingerprint(nums: tuple[Any, ...]) -> int:
    """The 64-bit fingerprint of a state's numbers (``CompactStore.numbers``): Python's hash of the tuple, which
    for ints and tuples of ints has no per-process seed (xxHash's mixing over the items' own hashes; a small
    int is its own hash), so it is the same in every process whatever PYTHONHASHSEED says. Signed, never -1."""
    return hash(nums)


class FingerprintSet:
    """A set of 64-bit fingerprints: open addressing with linear probing in an ``array('q')`` (8 bytes a
    slot, at most three quarters full, so 11-21 bytes per state), where a Python set of ints costs ~70. The
    slot is the fingerprint's low bits."""

    __slots__ = ("table", "bits", "mask", "n", "room", "seen")

    def __init__(self, bits: int = 16) -> None:
        self.bits = bits
        self.mask = (1 << bits) - 1
        self.table = array("q", [EMPTY]) * (1 << bits)
        self.n = 0
        self.room = 3 << (bits - 2)  # at most three quarters full (half full measured no faster)
        self.seen: Callable[[int], bool] = self._seen()

    def _seen(self) -> Callable[[int], bool]:
        """``seen(fp)``: whether ``fp`` is in the set; if not, add it (one probe for both: the search's hot
        loop). A closure over the table and its mask, read faster than attributes, taken again after a grow."""
        table, mask, room = self.table, self.mask, self.room

        def seen(fp: int) -> bool:
            nonlocal table, mask, room
            i = fp & mask
            while True:
                v = table[i]
                if v == fp:
                    return True
                if v == -1:  # EMPTY, as a constant: this is the hot loop's
                    table[i] = fp
                    self.n += 1
                    if self.n > room:
                        self._grow()
                        table, mask, room = self.table, self.mask, self.room
                    return False
                i = (i + 1) & mask

        return seen

    def add(self, fp: int) -> None:
        self.seen(fp)

    def _grow(self) -> None:
        old = self.table
        self.bits += 1
        self.mask = mask = (1 << self.bits) - 1
        self.table = table = array("q", [EMPTY]) * (1 << self.bits)
        self.room = 3 << (self.bits - 2)
        # Every fingerprint once, each distinct: placed with no comparison and no count (``seen``, inlined).
        for fp in old:
            if fp != -1:  # EMPTY
                i = fp & mask
                while table[i] != -1:
                    i = (i + 1) & mask
                table[i] = fp

    def discard(self, fp: int) -> None:
        """Used only to undo the insertion that went past --max-states, just before the search stops."""
        if fp in self:
            self.n -= 1  # the slot stays taken: the search ends here, no lookup follows

    def __contains__(self, fp: object) -> bool:
        table, mask = self.table, self.mask
        i = fp & mask  # type: ignore[operator]
        while True:
            v = table[i]
            if v == fp:
                return True
            if v == EMPTY:
                return False
            i = (i + 1) & mask

    def __len__(self) -> int:
        return self.n


class BitSet:
    """The bitstate array: k bit positions per state from one fingerprint (double hashing, h1 + j·h2, as
    Kirsch and Mitzenmacher's two-hash Bloom filter): h1 its low bits, h2 its high 32 bits (odd)."""

    __slots__ = ("array", "bits", "mask", "n", "hashes", "seen")

    def __init__(self, bits: int, hashes: int = BITSTATE_HASHES) -> None:
        self.bits = bits
        self.mask = (1 << bits) - 1
        self.array = bitarray(1 << bits)
        self.array.setall(0)
        self.n = 0
        self.hashes = hashes
        self.seen = self._seen3 if hashes == 3 else self._seen

    def _positions(self, fp: int) -> list[int]:
        mask = self.mask
        h1, h2 = fp & mask, (fp >> 32) & mask | 1
        return [(h1 + j * h2) & mask for j in range(self.hashes)]

    def _seen3(self, fp: int) -> bool:
        """``seen`` (whether all of ``fp``'s bits are set; if not, set them and count a state) for 3 positions,
        unrolled: the hot loop's. The positions are small ints, taken from the fingerprint's two halves once."""
        a, mask = self.array, self.mask
        h1, h2 = fp & mask, (fp >> 32) & mask | 1
        p1 = (h1 + h2) & mask
        p2 = (p1 + h2) & mask
        if a[h1] and a[p1] and a[p2]:
            return True
        a[h1] = a[p1] = a[p2] = 1
        self.n += 1
        return False

    def _seen(self, fp: int) -> bool:
        a = self.array
        ps = self._positions(fp)
        if all(a[p] for p in ps):
            return True
        for p in ps:
            a[p] = 1
        self.n += 1
        return False

    def add(self, fp: int) -> None:
        self.seen(fp)

    def discard(self, fp: int) -> None:
        self.n -= 1  # bits cannot be unset (other states share them); the search ends here

    def __contains__(self, fp: object) -> bool:
        """Whether all of ``fp``'s bits are set (a reduction's search asks before it decides to store)."""
        a, mask = self.array, self.mask
        if self.hashes == 3:  # ``_seen3``'s positions, unrolled
            h1, h2 = fp & mask, (fp >> 32) & mask | 1  # type: ignore[operator]
            p1 = (h1 + h2) & mask
            return bool(a[h1] and a[p1] and a[(p1 + h2) & mask])
        return all(a[p] for p in self._positions(fp))  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self.n


class CompactStore(StateStore):
    """A visited store that keeps fingerprints (``FingerprintSet``) or bits (``BitSet``) instead of keys."""

    __slots__ = ("kind",)

    def __init__(self, kind: str, bits: int = 26) -> None:
        super().__init__()
        self.kind = kind
        self.keys = FingerprintSet() if kind == "hashcompact" else BitSet(bits)
        # Heaps kept as the exact store keeps them (``StateStore._decide``): flat, a step that changes the heap
        # makes every successor's key long (its objects' numbers), and a lossy store's fingerprint and look-up
        # are Python's; interning each distinct heap costs some memory instead (benchmarks/README.md).

    def key(self, s: State) -> int:  # type: ignore[override]
        return hash(self.numbers(s))

    def find(self, s: State) -> int | None:  # type: ignore[override]
        nums = self.find_numbers(s)
        return None if nums is None else hash(nums)

    def __iter__(self) -> Iterator[State]:
        raise TypeError(f"--store {self.kind} keeps no states to list")

    def report(self) -> dict[str, Any]:
        """What the store was and how much it may have missed (the result's ``store`` field)."""
        n = len(self.keys)
        if self.kind == "hashcompact":
            return store_report("hashcompact", n)
        ks: BitSet = self.keys  # type: ignore[assignment]
        return store_report("bitstate", n, ks.bits, ks.hashes)


def collision_probability(n: int, fingerprint_bits: int = FINGERPRINT_BITS) -> float:
    """An upper bound on the chance that hash compaction missed a state among n stored: n(n-1)/2^(b+1)."""
    return min(1.0, n * (n - 1) / 2.0 ** (fingerprint_bits + 1))


def expected_coverage(n: int, m: int, k: int) -> float:
    """The expected fraction of states a bitstate search of n states reached with m bits and k hashes: one
    minus the false-positive rate (1 - e^(-k·i/m))^k averaged over i = 0..n-1 (a midpoint sum, 1,000 slices)."""
    if n <= 1:
        return 1.0
    slices = min(n, 1000)
    missed = 0.0
    for j in range(slices):
        i = (j + 0.5) * n / slices
        missed += (1.0 - math.exp(-k * i / m)) ** k
    return max(0.0, 1.0 - missed / slices)


# The fields of the result's ``store`` for each kind (docs/cli.md, docs/result.schema.json).
STORE_FIELDS = {"exact": (), "hashcompact": ("fingerprint_bits", "collision_probability"),
                "bitstate": ("bits", "hashes", "hash_factor", "expected_coverage")}


def store_report(kind: str, n: int, bits: int = 26, hashes: int = BITSTATE_HASHES) -> dict[str, Any]:
    """The result's ``store`` field for a store of ``kind`` holding n states: computed from the numbers alone,
    so that a search stopped before its store existed (a limit hit while the bit array was allocated) still
    says what it was asked to use."""
    if kind == "hashcompact":
        return {"kind": kind, "fingerprint_bits": FINGERPRINT_BITS, "collision_probability": collision_probability(n)}
    if kind == "bitstate":
        m = 1 << bits
        return {"kind": kind, "bits": bits, "hashes": hashes, "hash_factor": round(m / max(n, 1), 1),
                "expected_coverage": expected_coverage(n, m, hashes)}
    return {"kind": kind}


def omission(store: dict[str, Any]) -> float:
    """How much a store may have missed: the probability of a missed state (hashcompact), the expected
    fraction of states missed (bitstate), 0 for the exact store; 1 when the report says nothing."""
    kind = store.get("kind", "exact")
    if kind == "hashcompact":
        return float(store.get("collision_probability", 1.0))
    if kind == "bitstate":
        return 1.0 - float(store.get("expected_coverage", 0.0))
    return 0.0 if kind == "exact" else 1.0


def lossy_verdict(verdict: str, store: dict[str, Any]) -> tuple[str, str | None]:
    """The verdict and limit of a search that found nothing with ``store``: ``ok`` only when the store missed
    at most ``MAX_OMISSION``; otherwise ``incomplete`` for the reason ``coverage``. Other verdicts stand (a
    violation found is real, its trace a run of the model)."""
    if verdict == "ok" and omission(store) > MAX_OMISSION:
        return "incomplete", "coverage"
    return verdict, None


def array_mb(bits: int) -> float:
    """The size of a bit array of 2^bits bits, in MB (2^20 bytes, as --max-memory counts)."""
    return 2.0**bits / 2**23


def bits_problem(bits: int, max_memory_mb: float | None, used_mb: float = 0.0, default: bool = False) -> str | None:
    """Why ``--bits`` cannot be used under the memory limit, or None: the bit array alone must fit in it,
    since it is allocated whole before the first state. The message names the largest --bits whose array fits
    beside the ``used_mb`` the process uses already (or, if none does, in the limit alone)."""
    if max_memory_mb is None or array_mb(bits) <= max_memory_mb:
        return None
    room = max_memory_mb - used_mb
    if room < array_mb(BITS_RANGE[0]):
        room, beside = max_memory_mb, ""
    else:
        beside = f" beside the {used_mb:,.0f} MB the process uses already" if used_mb > 0 else ""
    fits = math.floor(math.log2(room * 2**23))
    limit = (f"the default memory limit ({max_memory_mb:,.0f} MB, 75% of the memory available; --max-memory "
             "sets it)" if default else f"--max-memory {max_memory_mb:,g} MB")
    if fits < BITS_RANGE[0]:
        advice = f"not even --bits {BITS_RANGE[0]} fits"
    else:
        advice = f"the largest --bits that fits{beside} is {fits} ({_mb(array_mb(fits))})"
    return f"--bits {bits}: the bit array alone takes {_mb(array_mb(bits))}, more than {limit}; {advice}"


def memory_problem(bits: int, max_memory_mb: float | None) -> str | None:
    """``bits_problem`` under --max-memory as given (None: the default ceiling), beside this process now."""
    from movers.search.limits import default_max_memory_mb, rss_mb

    mem = max_memory_mb if max_memory_mb is not None else default_max_memory_mb()
    return bits_problem(bits, mem, rss_mb(), default=max_memory_mb is None)


def _mb(mb: float) -> str:
    return f"{mb:,.0f} MB" if mb >= 1 else f"{mb * 1024:,.4g} KB"


def make_store(kind: str = "exact", bits: int = 26) -> StateStore:
    """The visited store ``--store`` names."""
    if kind == "exact":
        return StateStore()
    return CompactStore(kind, bits)

__all__ = ["BITS_RANGE", "MAX_OMISSION", "STORES", "STORE_FIELDS", "BitSet", "CompactStore", "FingerprintSet",
           "array_mb", "bits_problem", "collision_probability", "expected_coverage", "fingerprint", "lossy_verdict",
           "make_store", "memory_problem", "omission", "store_report"]
