"""The depth-first search's visited set, compactly: each state is stored as a short byte string of part numbers.

A state ``(globals, heap, threads, *ghosts)`` has few distinct parts across a whole search: a model with a
few hundred thousand states has a few hundred distinct globals tuples, heap objects and thread stacks,
combined in many ways. So each part is interned once (``parts``: a part's number, ``_list``: the part by
number) and a state is stored as its *key*: its *numbers* ``(globals#, thread#..., heap)`` packed two
bytes a number while every number is below 2^16, four otherwise (``encode``), a bytes object the garbage
collector never tracks, where the tuple of the numbers took 40 + 8n plus a 16-byte collector header. The
search works out a successor's numbers from its parent's, looking up only the parts that are new objects
(``plain.py``), and hashes the packed key once.

A heap is stored one of two ways, chosen by the first state (``FLAT_HEAP``): *flat*, as its objects'
numbers after the threads', where heaps are small, since a model's distinct heaps can be nearly as many as its
states (a dict or a lock changes with most steps: 0.7 heaps a state on benchmarks/shapes.py's dict model) and
an interned heap costs about 140 bytes where its objects' numbers take two bytes each in the key; or
*interned*, as one number after the threads', with its objects shared (equal objects that successors built
anew are kept once, ``_shared_heap``), where heaps are larger and one lookup of a heap is cheaper than one
per object.

Two states have the same key exactly when they are equal as tuples, which is the language's identity of
states (values are boxed so that ``True`` and ``1`` differ, ``ir.program.Bool``): interning changes how
states are stored, never which states are one. The packing is one-to-one: a key of two-byte numbers has an
even length, one of four-byte numbers an odd one (a marker byte ends it), and the numbers of a state are
packed two bytes each exactly when they all fit (``Packers``), so a state has one key whenever it is met.
Where the threads end and a flat heap begins needs no count: a thread stack is ``()`` or a tuple of frames
(tuples), a heap object a tuple that starts with its class (never a tuple, ``semantics/state.py``), so the
part a number stands for says which it is (``_is_stack``). Instrumentations that append ghost parts (phases,
a shadow store) get numbers ``(globals#, thread count, thread#..., object count, object#..., ghost#...)`` (a
flat heap), so that a part's position says what it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from struct import Struct
from struct import error as StructError
from typing import Any

from movers.semantics.state import State

NARROW = 1 << 16  # numbers below this pack two bytes each
WIDE_MARK = b"\x00"  # ends a key of four-byte numbers: its length is odd, a two-byte key's even
# A store keeps heaps flat (as their objects' numbers) when the first state has at most this many objects,
# else each distinct heap as one part: flat, a step that changes the heap looks each object up, where an
# interned heap is one lookup (5-19% more CPU on the philosophers and the counter of benchmarks/shapes.py,
# heaps of six objects), but an interned heap costs about 140 bytes (its tuple, its entry in ``parts``, its
# number), which is most of the memory where most states have a heap of their own (the dict model: 0.7
# heaps a state, two objects).
FLAT_HEAP = 2


def _narrow(n: int) -> Any:
    return Struct(f"<{n}H").pack


def _either(n: int) -> Any:
    """Two bytes a number if they all fit, else four and the marker: the packing of ``encode``."""
    narrow, wide = Struct(f"<{n}H").pack, Struct(f"<{n}I").pack

    def pack(*nums: int) -> bytes:
        try:
            return narrow(*nums)  # type: ignore[no-any-return]
        except StructError:
            return wide(*nums) + WIDE_MARK  # type: ignore[no-any-return]

    return pack


class Packers(dict[int, Any]):
    """A store's packers by the count of numbers, read in C by the hot loop (``packs[len(nums)](*nums)``):
    ``Struct`` packs of two-byte numbers while the store has fewer than 2^16 parts (no number can be wider),
    then (``widen``) ``encode``'s packing, which picks the width per key. Both give a state the same key."""

    def __init__(self) -> None:
        super().__init__()
        self.make = _narrow

    def __missing__(self, n: int) -> Any:
        pack = self[n] = self.make(n)
        return pack

    def widen(self) -> None:
        self.make = _either
        self.clear()


PACKS = Packers()
PACKS.widen()  # ``encode``'s: any numbers


def encode(nums: tuple[int, ...] | list[int]) -> bytes:
    """The stored key of a state's numbers: two bytes a number, little-endian, if all are below 2^16; else
    four bytes a number and a marker byte (fewer than 2^32 parts)."""
    return PACKS[len(nums)](*nums)  # type: ignore[no-any-return]


def decode(key: bytes) -> tuple[int, ...]:
    """The numbers a key packs."""
    if len(key) % 2 == 0:
        return Struct(f"<{len(key) // 2}H").unpack(key)
    return Struct(f"<{len(key) // 4}I").unpack(key[:-1])


class KeySet(dict[bytes, None]):
    """The set of stored keys, as a dict's keys: ``add``, ``discard`` and ``in`` as a set's, in C. A dict
    doubles its table when two thirds full and keeps its entries in a dense array (20 bytes a slot), where a
    set quadruples below 50,000 elements (16 bytes a slot, as little as a seventh used): 33-46 bytes a state
    where a set took 52-75 on benchmarks/shapes.py's dict and filter models."""

    __slots__ = ()
    add = dict.setdefault  # (key) -> None: stores the key

    def discard(self, key: bytes) -> None:
        self.pop(key, None)

    def update(self, keys: Any = (), /, **_: Any) -> None:  # type: ignore[override]
        """Adds each key, as a set's ``update``."""
        dict.update(self, dict.fromkeys(keys))


def _is_stack(part: Any) -> bool:
    """Whether a part among a state's threads and heap objects is a thread stack (the module docstring)."""
    return not part or type(part[0]) is tuple


class StateStore:
    """A set of states, stored as keys of interned parts. ``key(s)`` interns; ``keys`` is the set the search's
    hot loop adds to, ``packs`` the packers it keys a state's numbers with, ``flat`` whether a heap is stored
    as its objects' numbers (else as its own number, ``FLAT_HEAP``)."""

    __slots__ = ("keys", "parts", "_list", "ghosts", "packs", "flat", "objects")

    def __init__(self) -> None:
        self.keys: Any = KeySet()
        self.parts: dict[Any, int] = {}
        self._list: list[Any] = []
        self.packs = Packers()
        self.objects: dict[Any, Any] = {}  # the objects of the interned heaps, each kept once (``_shared_heap``)
        # Whether states carry ghost parts: one transition system's states all have one shape.
        self.ghosts = False
        self.flat: bool | None = None  # decided by the first state looked up (``_decide``)

    def _decide(self, s: State) -> bool:
        """Whether this store keeps heaps flat: so when the first state it meets has at most ``FLAT_HEAP``
        objects but not one (one object's heap costs what the object does, and one lookup either way), or
        ghost parts. Fixed from then on, so that a state has one key."""
        self.flat = len(s) != 3 or len(s[1]) != 1 and len(s[1]) <= FLAT_HEAP
        return self.flat

    def numbers(self, s: State) -> tuple[int, ...]:
        """The numbers of ``s``, interning the parts not seen before."""
        number = self.parts.__getitem__
        flat = self.flat
        if flat is None:
            flat = self._decide(s)
        try:  # ``find_numbers``, inlined: this runs once per transition where the numbers are not worked out
            if len(s) == 3:
                if flat:
                    return (number(s[0]), *map(number, s[2]), *map(number, s[1]))
                return (number(s[0]), *map(number, s[2]), number(s[1]))
        except KeyError:
            pass
        if flat:
            for p in s[1]:
                self.number(p)
        elif s[1] not in self.parts:
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
        flat = self.flat
        if flat is None:
            flat = self._decide(s)
        try:
            if len(s) == 3:
                if flat:
                    return (number(s[0]), *map(number, s[2]), *map(number, s[1]))
                return (number(s[0]), *map(number, s[2]), number(s[1]))
            threads, heap = s[2], s[1]
            return (number(s[0]), len(threads), *map(number, threads), len(heap), *map(number, heap),
                    *map(number, s[3:]))
        except KeyError:
            return None

    def _shared_heap(self, heap: tuple) -> tuple:
        """``heap`` with each object replaced by the equal one kept already, if any: a model's distinct heaps
        are many where its distinct objects are few (a third of the memory of Dwyer et al.'s replicated
        workers, benchmarks/README.md)."""
        keep = self.objects.setdefault
        return tuple([keep(o, o) for o in heap])

    def key(self, s: State) -> Any:
        """The key of ``s``, interning the parts not seen before."""
        number = self.parts.__getitem__
        try:  # ``numbers``, inlined: the general search (dfs.py) calls this per transition
            if len(s) == 3:
                if self.flat:
                    nums = (number(s[0]), *map(number, s[2]), *map(number, s[1]))
                    return self.packs[len(nums)](*nums)
                if self.flat is not None:
                    nums = (number(s[0]), *map(number, s[2]), number(s[1]))
                    return self.packs[len(nums)](*nums)
        except KeyError:
            pass
        nums = self.numbers(s)
        return self.packs[len(nums)](*nums)

    def find(self, s: State) -> Any:
        """The key of ``s`` if every part of it is interned already, else None (``find_numbers``)."""
        nums = self.find_numbers(s)
        return None if nums is None else self.packs[len(nums)](*nums)

    @property
    def by_number(self) -> list[Any]:
        """Every interned part, at its number (the transition cache reads a step's new stack here)."""
        return self._list

    def number(self, part: Any) -> int:
        """The number of one part (interning it if new): thread symmetry sorts threads by it."""
        n = self.parts.get(part)
        if n is None:
            n = self.parts[part] = len(self._list)
            if n == NARROW:  # the first number that two bytes cannot hold, before any key packs it
                self.packs.widen()
            self._list.append(part)
        return n

    def state(self, key: bytes) -> State:
        """The state a key stands for."""
        part, nums = self._list, decode(key)
        if not self.ghosts and not self.flat:
            return (part[nums[0]], part[nums[-1]], tuple([part[j] for j in nums[1:-1]]))
        if not self.ghosts:
            i = 1
            while i < len(nums) and _is_stack(part[nums[i]]):
                i += 1
            return (part[nums[0]], tuple([part[j] for j in nums[i:]]), tuple([part[j] for j in nums[1:i]]))
        n = nums[1]
        m = nums[2 + n]
        return (part[nums[0]], tuple([part[j] for j in nums[3 + n:3 + n + m]]),  # type: ignore[return-value]
                tuple([part[j] for j in nums[2:2 + n]]), *[part[j] for j in nums[3 + n + m:]])

    def __contains__(self, s: object) -> bool:
        k = self.find(s)  # type: ignore[arg-type]
        return k is not None and k in self.keys

    def __len__(self) -> int:
        return len(self.keys)

    def __iter__(self) -> Iterator[State]:
        return (self.state(k) for k in self.keys)
