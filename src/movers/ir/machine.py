"""The abstract machine that compiled nodes run on.

A ``Ctx`` holds, during one step of one thread, the parts of the state the step may change: the globals
(a tuple, replaced on write), the heap (a tuple, turned into a list on the first write), the thread's stack
(the top frame exploded into ``code``, ``pc`` and the list ``loc``), the threads it starts, and the step's
Effect (locations read and written, locks acquired and released, objects allocated, threads started).
Everything here is deliberately plain: the compiled closures index slots and never look names up.

Locations in an Effect are an ``int`` (a global's slot) or a pair ``(ref, index)`` (a heap object's field or
element, ``index`` into the object tuple).

Values in the state are boxed (``program.box``: booleans as ``Bool``, so that ``True`` and ``1`` are two
states); every write below boxes, and the compiled loads unbox.
"""

from __future__ import annotations

from typing import Any

from movers.ir.program import CLS, FIELDS, MON, THREAD, UNBOUND, Bool, ClassInfo, Code, Ref, Unbound, box, ref


class ModelError(Exception):
    """A runtime error in the model (index out of range, attribute of None, releasing a lock not held…).

    ``exc`` names the built-in exception CPython raises there (``"IndexError"``, ``"KeyError"``…), so that a
    model's ``try``/``except`` can catch it; ``None`` for the checker's own limits, which no ``except``
    catches (a step that computes too long, a recursion deeper than the checker allows)."""

    def __init__(self, message: str, exc: str | None = None) -> None:
        super().__init__(message)
        self.exc = exc


class AssertionFailed(Exception):
    """A model ``assert`` failed."""


class Pruned(Exception):
    """An ``assume`` failed: the path is dropped."""


class Ctx:
    """One step's working state. See the module docstring."""

    __slots__ = (
        "g", "heap", "threads", "tid", "frames", "code", "pc", "loc", "new_threads", "dirty", "reshaped", "track",
        "reads", "writes", "acquired", "released", "allocated", "started", "choices", "made", "arities",
        "retval", "atomic", "blocks",
    )

    def __init__(
        self,
        g: tuple,
        heap: tuple | list,
        threads: tuple,
        tid: int,
        track: bool = False,
        frames: tuple | None = None,
        choices: tuple[int, ...] = (),
    ) -> None:
        # Each slot is set exactly once: this runs for every executed step.
        self.g = g
        self.heap = heap
        self.threads = threads
        self.tid = tid
        if frames:
            top = frames[-1]
            # The caller frames stay a tuple (no allocation for a one-frame thread) until a call or return.
            self.frames: list[tuple] | tuple = frames[:-1]
            self.code: Code | None = top[0]
            self.pc = top[1]
            self.loc: list[Any] = list(top[2:])
        else:
            self.frames = []
            self.code = None
            self.pc = 0
            self.loc = []
        self.new_threads: list[tuple] | None = None
        # dirty: references moved (the heap may need canonicalising); reshaped: a reference was stored into or
        # overwritten in a global or a field, or an object allocated (semantics/state.py says why it matters).
        self.dirty = False
        self.reshaped = False
        self.track = track
        if track:
            self.reads: list[Any] = []
            self.writes: list[Any] = []
            self.acquired: list[Ref] = []
            self.released: list[Ref] = []
            self.allocated: list[Ref] = []
            self.started: list[int] = []
            self.blocks: list[int] = []  # outermost `with atomic():` blocks left during the step
        self.choices = choices
        self.made: list[int] | None = None
        self.arities: list[int] | None = None
        self.atomic = 0

    # -- frames -------------------------------------------------------------------------------------------

    def load_thread(self, frames: tuple) -> None:
        """Make the thread's stack current: the top frame is exploded, the rest kept as tuples."""
        top = frames[-1]
        self.frames = list(frames[:-1])
        self.code = top[0]
        self.pc = top[1]
        self.loc = list(top[2:])

    def push(self, code: Code, args: list[Any], ret_pc: int) -> None:
        """Call ``code``: the caller resumes at ``ret_pc`` (a continuation node) when it returns."""
        if len(self.frames) > 200:
            raise ModelError("recursion too deep (more than 200 frames)")
        self.frames = [*self.frames, (self.code, ret_pc, *self.loc)]
        loc = code.new_frame_locals(args)
        self.code = code
        self.loc = loc
        self.pc = code.entry
        for v in args:
            if type(v) is Ref or type(v) is tuple:
                self.dirty = True
                break

    def ret(self, value: Any) -> None:
        """Return ``value`` from the current frame; the thread terminates when its last frame returns."""
        self.retval = value
        for v in self.loc:
            if type(v) is Ref or type(v) is tuple:
                self.dirty = True
                break
        if self.frames:
            frames = self.frames
            top = frames[-1]
            self.frames = frames[:-1]
            self.code = top[0]
            self.pc = top[1]
            self.loc = list(top[2:])
        else:
            self.code = None

    # -- globals and heap ---------------------------------------------------------------------------------

    def set_global(self, slot: int, v: Any) -> None:
        g = self.g
        old = g[slot]
        tv = type(v)
        if tv is Ref or type(old) is Ref or tv is tuple or type(old) is tuple:
            v = box(v)
            self.dirty = self.reshaped = True
        elif tv is bool:
            v = box(v)
        self.g = g[:slot] + (v,) + g[slot + 1:]
        if self.track:
            self.writes.append(slot)

    def obj(self, r: Any) -> tuple:
        if type(r) is not Ref:
            raise ModelError(f"expected an object, got {show(r)}", exc="AttributeError")
        return self.heap[r.i]

    def set_field(self, r: Ref, idx: int, v: Any) -> None:
        heap = self.heap
        if type(heap) is not list:
            heap = self.heap = list(heap)
        o = heap[r.i]
        old = o[idx]
        tv = type(v)
        if tv is Ref or type(old) is Ref or tv is tuple or type(old) is tuple:
            v = box(v)
            self.dirty = self.reshaped = True
        elif tv is bool:
            v = box(v)
        heap[r.i] = o[:idx] + (v,) + o[idx + 1:]
        if self.track:
            self.writes.append((r, idx))

    def put_object(self, r: Ref, o: tuple) -> None:
        """Replace a whole object (used by synchronisation operations on lock objects)."""
        heap = self.heap
        if type(heap) is not list:
            heap = self.heap = list(heap)
        heap[r.i] = o

    def alloc(self, o: tuple) -> Ref:
        heap = self.heap
        if type(heap) is not list:
            heap = self.heap = list(heap)
        r = ref(len(heap))
        for x in o:
            if type(x) is bool or type(x) is tuple:
                o = o[:FIELDS] + tuple([box(y) for y in o[FIELDS:]])
                break
        heap.append(o)
        self.dirty = self.reshaped = True
        if self.track:
            self.allocated.append(r)
        return r

    # -- nondeterminism -----------------------------------------------------------------------------------

    def choose(self, n: int) -> int:
        """Index of the alternative taken at this choice point; the executor enumerates all of them."""
        if n <= 0:
            raise ModelError("choose() with no alternatives")
        if self.made is None:
            self.made = []
            self.arities = []
        pos = len(self.made)
        k = self.choices[pos] if pos < len(self.choices) else 0
        self.made.append(k)
        self.arities.append(n)  # type: ignore[union-attr]
        return k


def show(v: Any) -> str:
    """A value as users see it in messages and traces."""
    if type(v) is Bool:
        return repr(v.value)
    if type(v) is Unbound:
        return "<unbound>"
    if type(v) is int:
        return _show_int(v)
    if v is None or type(v) is bool:
        return repr(v)
    if type(v) is Ref:
        return f"<object #{v.i}>"
    if type(v) is tuple:
        inner = ", ".join(show(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    return repr(v)


def _show_int(v: int) -> str:
    # Python refuses to print ints of more than 4,300 digits (and it is slow well before): show the size.
    if -10**60 < v < 10**60:
        return repr(v)
    bits = v.bit_length()
    return f"{'-' if v < 0 else ''}<an int of about {int(bits * 0.30103) + 1:,} digits>"


def new_object(cls: ClassInfo) -> tuple:
    """A fresh instance of a model class: every field unbound until assigned (reading one first is a runtime
    error, as Python's AttributeError), except a Thread subclass's own bookkeeping (not started yet)."""
    blank = cls._blank
    if blank is None:
        builtin = THREAD.fields if cls.is_thread else ()
        blank = cls._blank = (cls, None) + tuple(None if f in builtin else UNBOUND for f in cls.fields)
    return blank


__all__ = ["CLS", "MON", "FIELDS", "Ctx", "ModelError", "AssertionFailed", "Pruned", "show", "new_object"]
