"""The depth-first search's visited set, compactly: each state is stored as a short byte string of part numbers.

A state ``(globals, heap, threads, *ghosts)`` has few distinct parts across a whole search: a model with a
few hundred thousand states has a few hundred distinct globals tuples, heaps and thread stacks, combined in
many ways. So each part is interned once (``parts``: a part's number, ``_list``: the part by number) and a
state is stored as its *key*: its *numbers* ``(globals#, heap#, thread#, ...)`` packed four bytes a number
(``encode``), a bytes object of 33 + 4n bytes that the garbage collector never tracks, where the tuple of the
numbers took 40 + 8n plus a 16-byte collector header (about 150 bytes a state on the unrolled counter, see
benchmarks/README.md). The search works out a successor's numbers from its parent's, looking up only the
parts that are new objects (``plain.py``), and hashes the packed key once.

Two states have the same key exactly when they are equal as tuples, which is the language's identity of
states (values are boxed so that ``True`` and ``1`` differ, ``ir.program.Bool``): interning changes how
states are stored, never which states are one, and fixed-width packing is one-to-one (the length says how
many numbers). Instrumentations that append ghost parts (phases, a shadow store) get numbers
``(globals#, heap#, thread count, thread#..., ghost#...)``, so that a part's position says what it is.

A heap is interned with its objects shared: equal objects that successors built anew are kept once
(``_shared_heap``), since a model's distinct heaps are many where its distinct objects are few (a third of
the memory of Dwyer et al.'s replicated workers before, benchmarks/README.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from struct import Struct
from typing import Any

from movers.semantics.state import State


class Packers(dict[int, Any]):
    """``Struct(n numbers).pack`` by n: filled on first use, read in C by the hot loop (``packs[len(nums)]``)."""

    def __missing__(self, n: int) -> Any:
        pack = self[n] = Struct(f"<{n}I").pack
        return pack


PACKS = Packers()


def encode(nums: tuple[int, ...] | list[int]) -> bytes:
    """The stored key of a state's numbers: four bytes a number, little-endian (fewer than 2^32 parts)."""
    return PACKS[len(nums)](*nums)  # type: ignore[no-any-return]


def decode(key: bytes) -> tuple[int, ...]:
    """The numbers a key packs."""
    return Struct(f"<{len(key) // 4}I").unpack(key)


class StateStore:
    """A set of states, stored as keys of interned parts. ``key(s)`` interns; ``keys`` is the plain set the
    search's hot loop adds to."""

    __slots__ = ("keys", "parts", "_list", "ghosts", "objects")

    def __init__(self) -> None:
        self.keys: set[Any] = set()
        self.parts: dict[Any, int] = {}
        self._list: list[Any] = []
        self.objects: dict[Any, Any] = {}  # the heap objects of the interned heaps, each kept once
        # Whether states carry ghost parts: one transition system's states all have one shape.
        self.ghosts = False

    @property
    def heap_key(self) -> Any:
        """What stands for a heap among a state's numbers: its number (``numbers`` interns it whole)."""
        return self.parts.__getitem__

    def numbers(self, s: State) -> tuple[int, ...]:
        """The numbers of ``s``, interning the parts not seen before."""
        number = self.parts.__getitem__
        try:  # ``find_numbers``, inlined: this runs once per transition where the numbers are not worked out
            if len(s) == 3:
                return (number(s[0]), number(s[1]), *map(number, s[2]))
        except KeyError:
            pass
        if s[1] not in self.parts:
            self.number(self._shared_heap(s[1]))
        for p in (s[0], *s[2], *s[3:]):
            self.number(p)
        if len(s) != 3:
            self.ghosts = True
        return StateStore.find_numbers(self, s)  # type: ignore[return-value]

    def find_numbers(self, s: State) -> tuple[int, ...] | None:
        """The numbers of ``s`` if every part of it is interned already, else None (then ``s`` is not stored):
        looking a state up interns nothing, so that states a reduction explores without storing them cost
        no memory. (On the hot path: the lookups run in C, through ``map``.)"""
        number = self.parts.__getitem__
        try:
            if len(s) == 3:
                return (number(s[0]), number(s[1]), *map(number, s[2]))
            threads = s[2]
            return (number(s[0]), number(s[1]), len(threads), *map(number, threads), *map(number, s[3:]))
        except KeyError:
            return None

    def _shared_heap(self, heap: tuple) -> tuple:
        """``heap`` with each object replaced by the equal one kept already, if any (the module docstring)."""
        keep = self.objects.setdefault
        return tuple([keep(o, o) for o in heap])

    def key(self, s: State) -> Any:
        """The key of ``s``, interning the parts not seen before."""
        number = self.parts.__getitem__
        try:  # ``numbers`` and ``encode``, inlined: the general search (dfs.py) calls this per transition
            if len(s) == 3:
                return PACKS[len(s[2]) + 2](number(s[0]), number(s[1]), *map(number, s[2]))
        except KeyError:
            pass
        return encode(self.numbers(s))

    def find(self, s: State) -> Any:
        """The key of ``s`` if every part of it is interned already, else None (``find_numbers``)."""
        number = self.parts.__getitem__
        try:
            if len(s) == 3:
                return PACKS[len(s[2]) + 2](number(s[0]), number(s[1]), *map(number, s[2]))
        except KeyError:
            return None
        nums = self.find_numbers(s)
        return None if nums is None else encode(nums)

    def number(self, part: Any) -> int:
        """The number of one part (interning it if new): thread symmetry sorts threads by it."""
        n = self.parts.get(part)
        if n is None:
            n = self.parts[part] = len(self._list)
            self._list.append(part)
        return n

    def state(self, key: bytes) -> State:
        """The state a key stands for."""
        part, nums = self._list, decode(key)
        if not self.ghosts:
            return (part[nums[0]], part[nums[1]], tuple([part[i] for i in nums[2:]]))
        n = nums[2]
        return (part[nums[0]], part[nums[1]], tuple([part[i] for i in nums[3:3 + n]]),
                *[part[i] for i in nums[3 + n:]])  # type: ignore[return-value]

    def __contains__(self, s: object) -> bool:
        k = self.find(s)  # type: ignore[arg-type]
        return k is not None and k in self.keys

    def __len__(self) -> int:
        return len(self.keys)

    def __iter__(self) -> Iterator[State]:
        return (self.state(k) for k in self.keys)
