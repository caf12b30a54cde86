"""Lossy visited stores for state spaces that do not fit exactly: hash compaction and bitstate.

``--store hashcompact`` keeps a 64-bit *fingerprint* per state instead of the state (TLC's fingerprint set;
SPIN's ``-DHC`` hash compaction): two states with the same fingerprint are taken for one, so a collision
can hide a state and everything only it leads to. With n states stored the chance that any collision
happened is about n(n-1)/2^65 (the birthday bound over uniform 64-bit values), which the result prints:
about 10^-9 for a million states.

``--store bitstate`` is SPIN's supertrace (Holzmann's bitstate hashing): a bit array of 2^b bits
(``--bits b``, SPIN's ``-w``) and k = 3 bit positions per state; a state counts as visited when all its
bits are set. Nothing but the array is kept, whatever the number of states; a state whose bits were all set
by others is skipped. The result prints the *hash factor* m/n (bits per state) and the expected coverage,
the fraction of states the search is expected to have reached: each state inserted when i are stored is
missed with probability (1 - e^(-k·i/m))^k (a Bloom filter's false-positive rate), averaged over the run.

Both stores are deterministic: a fingerprint is computed from the numbers of the state's interned parts
(``store.py``'s numbering, which depends only on the order of discovery: the globals, each heap object,
each thread stack), never from Python's ``id``-based hashes, so a run gives the same states on every
machine. Those parts are kept (a model has few distinct globals tuples, heap objects and thread stacks,
shared by many states); whole states and whole heaps are not. Counterexamples come from the depth-first
stack, which holds real states, so they are exact and are replayed as always.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from typing import Any

from bitarray import bitarray

from movers.search.store import StateStore
from movers.semantics.state import State

MASK = (1 << 64) - 1
# Fibonacci hashing: a multiplier that spreads a fingerprint's bits over the table index.
GOLDEN = 0x9E3779B97F4A7C15
BITSTATE_HASHES = 3


def fingerprint(key: tuple[int, ...]) -> int:
    """A 64-bit fingerprint of an exact key (never 0: 0 marks an empty slot). Python's tuple hash of small
    ints is deterministic (xxHash-style mixing, no per-process seed); one more multiply spreads it."""
    h = (hash(key) * GOLDEN) & MASK
    return h or 1


class FingerprintSet:
    """A set of 64-bit fingerprints: open addressing with linear probing in an ``array('Q')`` (8 bytes a
    slot, at most three quarters full, so 11-21 bytes per state), where a Python set of ints costs ~70."""

    __slots__ = ("table", "bits", "n")

    def __init__(self, bits: int = 16) -> None:
        self.bits = bits
        self.table = array("Q", bytes(8 << bits))
        self.n = 0

    def _slot(self, fp: int) -> int:
        table, mask = self.table, (1 << self.bits) - 1
        i = fp >> (64 - self.bits)
        while True:
            v = table[i]
            if v == 0 or v == fp:
                return i
            i = (i + 1) & mask

    def add(self, fp: int) -> None:
        i = self._slot(fp)
        if self.table[i] == 0:
            self.table[i] = fp
            self.n += 1
            if self.n * 4 > 3 << self.bits:
                self._grow()

    def _grow(self) -> None:
        old = self.table
        self.bits += 1
        self.table = array("Q", bytes(8 << self.bits))
        for fp in old:
            if fp:
                self.table[self._slot(fp)] = fp

    def discard(self, fp: int) -> None:
        """Used only to undo the insertion that went past --max-states, just before the search stops."""
        i = self._slot(fp)
        if self.table[i] == fp:
            self.n -= 1  # the slot stays taken: the search ends here, no lookup follows

    def __contains__(self, fp: object) -> bool:
        return self.table[self._slot(fp)] == fp  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self.n


class BitSet:
    """The bitstate array: k bit positions per state from one fingerprint (double hashing, h1 + j·h2)."""

    __slots__ = ("array", "bits", "mask", "n", "hashes")

    def __init__(self, bits: int, hashes: int = BITSTATE_HASHES) -> None:
        self.bits = bits
        self.mask = (1 << bits) - 1
        self.array = bitarray(1 << bits)
        self.array.setall(0)
        self.n = 0
        self.hashes = hashes

    def _positions(self, fp: int) -> list[int]:
        h1, h2 = fp & self.mask, ((fp >> 32) | 1) & self.mask
        return [(h1 + j * h2) & self.mask for j in range(self.hashes)]

    def add(self, fp: int) -> None:
        a = self.array
        new = False
        for p in self._positions(fp):
            if not a[p]:
                a[p] = 1
                new = True
        if new:
            self.n += 1

    def discard(self, fp: int) -> None:
        self.n -= 1  # bits cannot be unset (other states share them); the search ends here

    def __contains__(self, fp: object) -> bool:
        a = self.array
        return all(a[p] for p in self._positions(fp))  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self.n


class CompactStore(StateStore):
    """A visited store that keeps fingerprints (``FingerprintSet``) or bits (``BitSet``) instead of keys."""

    __slots__ = ("kind",)

    def __init__(self, kind: str, bits: int = 26) -> None:
        super().__init__()
        self.kind = kind
        self.keys = FingerprintSet() if kind == "hashcompact" else BitSet(bits)  # type: ignore[assignment]

    def key(self, s: State) -> int:  # type: ignore[override]
        try:
            return fingerprint(self._numbers(s, self.parts.__getitem__))
        except KeyError:
            return fingerprint(self._numbers(s, self.number))

    def find(self, s: State) -> int | None:  # type: ignore[override]
        try:
            return fingerprint(self._numbers(s, self.parts.__getitem__))
        except KeyError:
            return None  # a part never seen: neither is the state

    @staticmethod
    def _numbers(s: State, number: Any) -> tuple[int, ...]:
        """The numbers a fingerprint is computed from: the globals, each heap object and each thread stack
        (then any ghost parts), with the lengths that keep their places apart. Heap objects are interned one
        by one, not whole heaps: objects recur across states far more than heaps do, and a lossy store
        should not keep a copy of every distinct heap."""
        heap, threads = s[1], s[2]
        out = (number(s[0]), len(heap), *map(number, heap), len(threads), *map(number, threads))
        if len(s) > 3:
            out += tuple(map(number, s[3:]))
        return out

    def __iter__(self) -> Iterator[State]:
        raise TypeError(f"--store {self.kind} keeps no states to list")

    def report(self) -> dict[str, Any]:
        """What the store was and how much it may have missed (the result's ``store`` field)."""
        n = len(self.keys)
        if self.kind == "hashcompact":
            p = n * (n - 1) / 2.0**65
            return {"kind": "hashcompact", "fingerprint_bits": 64, "collision_probability": p}
        ks: BitSet = self.keys  # type: ignore[assignment]
        m = 1 << ks.bits
        return {"kind": "bitstate", "bits": ks.bits, "hashes": ks.hashes, "hash_factor": round(m / max(n, 1), 1),
                "expected_coverage": expected_coverage(n, m, ks.hashes)}


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


def make_store(kind: str = "exact", bits: int = 26) -> StateStore:
    """The visited store ``--store`` names."""
    if kind == "exact":
        return StateStore()
    return CompactStore(kind, bits)


STORES = ("exact", "hashcompact", "bitstate")
BITS_RANGE = (4, 34)  # --bits: 16 bits to 2 GB of bits

__all__ = ["BITS_RANGE", "STORES", "BitSet", "CompactStore", "FingerprintSet", "expected_coverage", "fingerprint",
           "make_store"]
