"""Exceptions of the model: CPython's built-in exception classes, the model's ``raise``, and the unwinding that
takes an exception in flight to the nearest handler.

Design. An exception is control flow inside a step: it never rests in a state by itself. Each ``Code`` has a
handler table (``Code.handlers``, compiled by ``lang/exceptions.py``): for each ``try`` (and each cleanup the
compiler adds: the release of ``with lock:``, the exit of ``with synchronized(...)``) the pc intervals it
protects, the pc of its handler and the hidden local that receives the exception object. When a node raises
(``raise`` in the model: ``Raised``; a runtime operation: ``ModelError`` with ``exc`` naming the built-in
exception CPython raises there; a failed ``assert``: ``AssertionError``), the executor calls ``unwind``: it looks
for the innermost handler covering the raising node's pc in the current frame, then in each caller frame at its
return pc (the call's continuation, inside the caller's ``try`` when the call is), pops the frames in between,
sets to None the hidden temporaries of the statements the exception interrupted in the handler's frame (the
values a statement had read or a call had returned before it raised: CPython unwinds its value stack to the
handler's depth; ``lang/function.FunctionCore.dropped_temps``), stores the exception object into the
handler's hidden local and resumes at the handler's pc, within the same step (entering a handler is local
work; its first shared access starts a step as usual). The handler code (compiled glue) tests the object's
class against the ``except`` clauses in order and re-raises it when none matches, so ``finally`` is a handler
that runs its body and re-raises. The exception in flight lives in a hidden local of the frame, hence in the
state, while a ``finally`` block or a ``with`` release runs across steps.

Exception objects are heap objects, ``(cls, monitor, args, *fields)``: ``args`` is the tuple of the
constructor's arguments, as CPython's ``BaseException.args``; a model class that derives from ``Exception``
inherits that field first. No handler of the thread may stop the exception (no ``except`` clause around the
raising node, in its frame or a caller's, matches its class, and no ``finally`` there may ``return``,
``break`` or ``continue``): the thread dies where it raised, without running the cleanups on the way (they
cannot change the verdict), so a failed ``assert`` is the assertion violation and a runtime error the
``runtime-error`` violation they were before exceptions could be caught, with their messages; a model's own
exception is ``runtime-error: thread worker died: MyError: 3 (line 12)``. The checker's own limits (recursion
depth, the glue bound, integer sizes) raise ``ModelError`` with ``exc=None``, which no handler catches.

A failed ``assert`` is an ``AssertionError`` whose ``args`` hold movers' message (CPython's hold the assert's
message alone), so that one a cleanup re-raises and nothing catches is still reported as the assertion.
"""

from __future__ import annotations

from typing import Any

from movers.ir.machine import AssertionFailed, Ctx, ModelError, show
from movers.ir.program import UNBOUND, ClassInfo, Code, Ref, unbox


class Raised(Exception):
    """A model ``raise``: ``ref`` is the exception object on the heap."""

    def __init__(self, ref: Ref) -> None:
        super().__init__("raise")
        self.ref = ref


def _classes() -> dict[str, ClassInfo]:
    out: dict[str, ClassInfo] = {}

    def make(name: str, base: str | None) -> None:
        c = ClassInfo(name, ["args"], base=out[base] if base else None, builtin="exception")
        c.finish()
        out[name] = c

    make("BaseException", None)
    make("Exception", "BaseException")
    for name, base in (
        ("ArithmeticError", "Exception"), ("ZeroDivisionError", "ArithmeticError"),
        ("OverflowError", "ArithmeticError"),
        ("LookupError", "Exception"), ("IndexError", "LookupError"), ("KeyError", "LookupError"),
        ("ValueError", "Exception"), ("TypeError", "Exception"), ("AttributeError", "Exception"),
        ("NameError", "Exception"), ("UnboundLocalError", "NameError"),
        ("RuntimeError", "Exception"), ("RecursionError", "RuntimeError"), ("NotImplementedError", "RuntimeError"),
        ("AssertionError", "Exception"), ("OSError", "Exception"), ("TimeoutError", "OSError"),
        ("Empty", "Exception"), ("Full", "Exception"),
    ):
        make(name, base)
    return out


# CPython's built-in exception classes by name (queue.Empty and queue.Full as the names ``Empty``, ``Full``).
BUILTIN_EXCEPTIONS: dict[str, ClassInfo] = _classes()
BASE_EXCEPTION = BUILTIN_EXCEPTIONS["BaseException"]
ASSERTION_ERROR = BUILTIN_EXCEPTIONS["AssertionError"]
ARGS = 2  # the object slot of ``args``: the first field of every exception class


def is_exception_class(cls: ClassInfo) -> bool:
    return cls.is_subclass_of(BASE_EXCEPTION)


def new_exception(cls: ClassInfo, args: tuple) -> tuple:
    """A fresh exception object of ``cls`` with ``args``; a model subclass's own fields unbound."""
    return (cls, None, args) + (UNBOUND,) * (len(cls.fields) - 1)


def caught_by(obj: tuple, classes: tuple[ClassInfo, ...]) -> bool:
    cls = obj[0]
    return any(cls.is_subclass_of(c) for c in classes)


def _handler_at(code: Code, pc: int) -> tuple[int, int, tuple[int, ...]] | None:
    for intervals, hpc, slot, _, dropped in reversed(code.handlers):
        for a, b in intervals:
            if a <= pc < b:
                return hpc, slot, dropped
    return None


def _stopped_at(code: Code, pc: int, cls: ClassInfo) -> bool:
    """Whether a handler around node ``pc`` may stop an exception of class ``cls``: an ``except`` clause that
    matches it, or a ``finally`` that may ``return``, ``break`` or ``continue`` (which drops the exception)."""
    for intervals, _, _, stops, _ in code.handlers:
        if stops is None or not any(a <= pc < b for a, b in intervals):
            continue
        if stops is True or any(cls.is_subclass_of(c) for c in stops):
            return True
    return False


def exception_class(ctx: Ctx, e: BaseException) -> ClassInfo:
    if type(e) is Raised:
        return ctx.heap[e.ref.i][0]  # type: ignore[no-any-return]
    if type(e) is AssertionFailed:
        return ASSERTION_ERROR
    name = e.exc if isinstance(e, ModelError) else type(e).__name__
    return BUILTIN_EXCEPTIONS.get(name or "", BUILTIN_EXCEPTIONS["Exception"])


# Python's own exceptions that compiled code lets escape from an operation (``1 // 0``, ``None + 1``) are the
# ones CPython raises there: catchable as such. RecursionError is the checker's limit, not the model's.
_PYTHON_ERRORS = (ZeroDivisionError, TypeError, ValueError, OverflowError)


def catchable(e: BaseException) -> bool:
    if type(e) is Raised or type(e) is AssertionFailed:
        return True
    if isinstance(e, ModelError):
        return e.exc is not None
    return isinstance(e, _PYTHON_ERRORS) and not isinstance(e, RecursionError)


def unwind(ctx: Ctx, e: BaseException, code: Code, pc: int) -> bool:
    """Take exception ``e``, raised by node ``pc`` of ``code`` (the current frame), to its handler: True when
    one is found (``ctx`` then resumes there), False when the exception ends the thread (``ctx`` unchanged).

    An exception that no handler of the thread may stop ends the thread at once, where it was raised: the
    ``finally`` blocks and ``with`` exits it would pass through change nothing that matters any more (the
    thread is dead, the search reports it), and the violation is reported where the user looks for it (a
    failed ``assert`` at the assert, a runtime error with its message, as when nothing could catch them)."""
    cls = exception_class(ctx, e)
    if not _stopped_at(code, pc, cls) and not any(_stopped_at(f[0], f[1], cls) for f in ctx.frames):
        return False
    found = _handler_at(code, pc)
    depth = 0  # frames to pop
    frames = ctx.frames
    if found is None:
        for k in range(len(frames) - 1, -1, -1):
            depth += 1
            f = frames[k]
            found = _handler_at(f[0], f[1])
            if found is not None:
                break
    if found is None:
        return False
    r = exception_ref(ctx, e)
    if depth:
        top = frames[len(frames) - depth]
        ctx.frames = list(frames[:len(frames) - depth])
        ctx.code = top[0]
        ctx.loc = list(top[2:])
    else:
        ctx.code = code
    hpc, slot, dropped = found
    loc = ctx.loc
    for i in dropped:  # the temporaries of the statements the exception left (lang/function.dropped_temps)
        loc[i] = None
    loc[slot] = r
    ctx.pc = hpc
    # Frames dropped and a reference stored: the heap's canonical order may change.
    ctx.dirty = ctx.reshaped = True
    return True


def exception_ref(ctx: Ctx, e: BaseException) -> Ref:
    if type(e) is Raised:
        return e.ref
    if type(e) is AssertionFailed:
        # args: movers' message (the assertion's own, with the failed condition), which ``assertion_message``
        # reports when no handler stops it.
        return ctx.alloc(new_exception(ASSERTION_ERROR, (str(e),)))
    return ctx.alloc(new_exception(exception_class(ctx, e), (str(e),)))


def assertion_message(heap: Any, r: Ref) -> str | None:
    """For a failed ``assert`` that cleanups (``finally``, ``with``) re-raised and nothing caught: its message,
    to be reported as the assertion violation it is."""
    o = heap[r.i]
    if o[0] is ASSERTION_ERROR and type(o[ARGS]) is tuple and len(o[ARGS]) == 1 and type(o[ARGS][0]) is str:
        return o[ARGS][0]  # type: ignore[no-any-return]
    return None


def exception_str(heap: Any, r: Ref) -> str:
    """``str(e)`` as CPython's ``BaseException.__str__``: '' for no args, ``str(args[0])`` for one, else
    ``str(args)`` (for ``str()`` of an exception object, once the model has strings)."""
    args = unbox(heap[r.i][ARGS])
    if type(args) is not tuple or not args:
        return ""
    if len(args) == 1:
        a = args[0]
        return a if type(a) is str else show(a)
    return show(args)


def describe(heap: Any, r: Ref) -> str:
    """``Cls: message`` as CPython's traceback ends for an uncaught exception object."""
    o = heap[r.i]
    args = unbox(o[ARGS]) if len(o) > ARGS else ()
    if type(args) is not tuple or not args:
        return o[0].name
    if len(args) == 1:
        a = args[0]
        return f"{o[0].name}: {a if type(a) is str else show(a)}"
    return f"{o[0].name}: {show(args)}"


def thread_label(ctx: Ctx, names: dict[int, str]) -> str:
    """The thread as the message of its death names it: its ``Thread(name=...)``, else its target's name."""
    if ctx.tid in names:
        return names[ctx.tid]
    bottom = ctx.frames[0][0] if ctx.frames else ctx.code
    return bottom.name if bottom is not None else f"#{ctx.tid}"


__all__ = ["Raised", "BUILTIN_EXCEPTIONS", "unwind", "catchable", "caught_by", "describe", "new_exception"]
