"""The depth-first search's visited set, compactly: each state is stored as a flat tuple of small ints.

A state ``(globals, heap, threads, *ghosts)`` has few distinct parts across a whole search: a model with a
few hundred thousand states has a few hundred distinct globals tuples, heaps and thread stacks, combined in
many ways. So each part is interned once (``parts``: a part's number, ``_list``: the part by number) and a
state is stored as its *key*, ``(globals#, heap#, thread#, ...)``: one small tuple of shared int objects
instead of a nest of tuples per state (about 370 bytes per state on the unrolled counter before, see
benchmarks/README.md), and hashing a key hashes a handful of ints instead of walking the whole state.

Two states have the same key exactly when they are equal as tuples, which is the language's identity of
states (values are boxed so that ``True`` and ``1`` differ, ``ir.program.Bool``): interning changes how
states are stored, never which states are one. Instrumentations that append ghost parts (phases, a shadow
store) get keys ``(globals#, heap#, thread count, thread#..., ghost#...)``, so that a part's position says
what it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from movers.semantics.state import State


class StateStore:
    """A set of states, stored as keys of interned parts. ``key(s)`` interns; ``keys`` is the plain set the
    search's hot loop adds to."""

    __slots__ = ("keys", "parts", "_list", "ghosts")

    def __init__(self) -> None:
        self.keys: set[tuple[int, ...]] = set()
        self.parts: dict[Any, int] = {}
        self._list: list[Any] = []
        # Whether states carry ghost parts: one transition system's states all have one shape.
        self.ghosts = False

    def key(self, s: State) -> tuple[int, ...]:
        """The key of ``s``, interning the parts not seen before."""
        number = self.parts.__getitem__
        try:  # ``find``, inlined: this runs once per transition of the full search
            if len(s) == 3:
                return (number(s[0]), number(s[1]), *map(number, s[2]))
        except KeyError:
            pass
        for p in (s[0], s[1], *s[2], *s[3:]):
            self.number(p)
        if len(s) != 3:
            self.ghosts = True
        return StateStore.find(self, s)  # type: ignore[return-value]  # the exact key, in every subclass

    def number(self, part: Any) -> int:
        """The number of one part (interning it if new): thread symmetry sorts threads by it."""
        n = self.parts.get(part)
        if n is None:
            n = self.parts[part] = len(self._list)
            self._list.append(part)
        return n

    def state(self, key: tuple[int, ...]) -> State:
        """The state a key stands for."""
        part = self._list
        if not self.ghosts:
            return (part[key[0]], part[key[1]], tuple([part[i] for i in key[2:]]))
        n = key[2]
        return (part[key[0]], part[key[1]], tuple([part[i] for i in key[3:3 + n]]),
                *[part[i] for i in key[3 + n:]])  # type: ignore[return-value]

    def find(self, s: State) -> tuple[int, ...] | None:
        """The key of ``s`` if every part of it is interned already, else None (then ``s`` is not stored):
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

    def __contains__(self, s: object) -> bool:
        k = self.find(s)  # type: ignore[arg-type]
        return k is not None and k in self.keys

    def __len__(self) -> int:
        return len(self.keys)

    def __iter__(self) -> Iterator[State]:
        return (self.state(k) for k in self.keys)
