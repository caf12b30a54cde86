"""Strings as values of the language: Python's ``str``, immutable, held in a state as a plain ``str``.

A string needs no box (``program.box``): no other value of the language is a ``str``, so Python's equality
and hashing of states are the language's (``1 == "1"`` is false, as in Python). Operating on a string is
local work for the granularity rule (docs/language.md section 8): it reads and writes no shared memory.
What reads shared memory is formatting a *list* (``str(xs)``, ``f"{xs}"``, ``", ".join(xs)``), which reads
its elements: those functions read them through ``runtime_ops.list_items`` (``read_list``), which records
each read on ``ctx``.

Each operation follows CPython 3.11: the same value, and where CPython raises, a ``ModelError`` naming the
same built-in exception with CPython's message (``TypeError: can only concatenate str (not "int") to
str``, ``ValueError: invalid literal for int() with base 10: 'x'``). What a model value looks like as text
(``str``, ``repr``, f-strings, ``format``, ``%``) is CPython's for ints, booleans, None, strings, tuples and
lists; an object of a model class, a lock or a thread formats as ``<Name object>`` (CPython adds its module
and its address, which no two runs share). A string is at most ``MAX_STR`` characters long, as tuples and
lists are bounded (``runtime_ops.MAX_SEQUENCE``): one step must not build a gigabyte.

The string methods are the table ``STR_METHODS``: name -> (implementation, fewest and most positional
arguments); an implementation is ``impl(ctx, s, *args, **kwargs)`` and returns the method's value (a Python
list for the methods that return one: the caller allocates it on the heap, ``ExpressionCompiler``).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from typing import Any

from movers.ir.exceptions import ARGS, BUILTIN_EXCEPTIONS, is_exception_class
from movers.ir.machine import Ctx, ModelError
from movers.ir.program import Bool, Ref, unbox

MAX_STR = 100_000


def _no_reader(ctx: Ctx, r: Ref) -> tuple:
    raise AssertionError("movers.lang.runtime_ops installs the list reader when it is imported")


# Every element of a list, each read recorded (``runtime_ops.list_items``, which installs itself here: it
# imports this module, so this module cannot import it).
read_list: Callable[[Ctx, Ref], tuple] = _no_reader
# A dict's ``(key, value)`` pairs and a set's elements, every slot read: installed by ``lang/containers.py``
# (which builds on runtime_ops, which builds on this module) when it is imported, before any dict exists.
read_dict_items: Callable[[Ctx, Ref], tuple] = _no_reader
read_set_items: Callable[[Ctx, Ref], tuple] = _no_reader
# ``repr`` of a deque and its items, every slot read: installed by ``lang/deques.py``.
deque_text: Callable[[Ctx, Ref, tuple, frozenset[int]], str] = _no_reader  # type: ignore[assignment]
read_deque: Callable[[Ctx, Ref], tuple] = _no_reader


def too_long() -> ModelError:
    return ModelError(f"string too long: the checker bounds strings to {MAX_STR:,} characters")


def _sized(s: str) -> str:
    if len(s) > MAX_STR:
        raise too_long()
    return s


def type_name(v: Any, ctx: Ctx | None = None) -> str:
    """The name CPython gives ``type(v)`` for a model value (a reference's class needs ``ctx``'s heap)."""
    t = type(v)
    if t is Ref:
        return ctx.heap[v.i][0].name if ctx is not None else "object"
    if t is Bool:
        return "bool"
    return "NoneType" if v is None else t.__name__


def _type_error(message: str) -> ModelError:
    return ModelError(message, exc="TypeError")


def _python_error(e: Exception) -> ModelError:
    """A TypeError or ValueError that Python's own ``str`` operation raised: its message is CPython's."""
    return ModelError(str(e), exc=type(e).__name__)


def _is_int(v: Any) -> bool:
    return type(v) is int or type(v) is bool


# -- operators ------------------------------------------------------------------------------------------------


def concat(a: Any, b: Any, ctx: Ctx | None = None) -> str:
    """``a + b`` where one of them is a string."""
    if type(a) is str and type(b) is str:
        if len(a) + len(b) > MAX_STR:
            raise too_long()
        return a + b
    if type(a) is str:
        raise _type_error(f'can only concatenate str (not "{type_name(b, ctx)}") to str')
    raise _type_error(f"unsupported operand type(s) for +: '{type_name(a, ctx)}' and '{type_name(b, ctx)}'")


def repeat(a: Any, b: Any, ctx: Ctx | None = None) -> str:
    """``a * b`` where one of them is a string."""
    s, n = (a, b) if type(a) is str else (b, a)
    if type(n) is str:
        raise _type_error("can't multiply sequence by non-int of type 'str'")
    if not _is_int(n):
        raise _type_error(f"can't multiply sequence by non-int of type '{type_name(n, ctx)}'")
    if n > 0 and len(s) * n > MAX_STR:
        raise too_long()
    return s * n


def contains(s: str, x: Any, ctx: Ctx | None = None) -> bool:
    """``x in s``: a substring."""
    if type(x) is not str:
        raise _type_error(f"'in <string>' requires string as left operand, not {type_name(x, ctx)}")
    return x in s


def char_at(s: str, i: Any, ctx: Ctx | None = None) -> str:
    """``s[i]``."""
    if not _is_int(i):
        raise _type_error(f"string indices must be integers, not '{type_name(i, ctx)}'")
    if not -len(s) <= i < len(s):
        raise ModelError("string index out of range", exc="IndexError")
    return s[i]


def sliced(v: Any, lo: Any, hi: Any, step: Any, ctx: Ctx | None = None) -> Any:
    """``v[lo:hi:step]`` of a string or a tuple (None for an absent bound), as CPython slices."""
    for b in (lo, hi, step):
        if b is not None and not _is_int(b):
            raise _type_error("slice indices must be integers or None or have an __index__ method")
    if step == 0:
        raise ModelError("slice step cannot be zero", exc="ValueError")
    if type(v) is str or type(v) is tuple:
        return v[lo:hi:step]
    raise _type_error(f"'{type_name(v, ctx)}' object is not subscriptable")


def to_int(v: Any, base: Any = None, ctx: Ctx | None = None) -> int:
    """``int(v)`` and ``int(v, base)``."""
    if type(v) is Ref:
        raise _type_error("int() argument must be a string, a bytes-like object or a real number, not "
                          f"'{type_name(v, ctx)}'")
    if base is not None and (type(v) is not str or not _is_int(base)):
        raise _type_error("int() can't convert non-string with explicit base" if type(v) is not str
                          else f"'{type_name(base, ctx)}' object cannot be interpreted as an integer")
    try:
        return int(v) if base is None else int(v, base)
    except (TypeError, ValueError) as e:
        raise _python_error(e) from None


# -- values as text --------------------------------------------------------------------------------------------


def _int_text(v: int) -> str:
    try:
        return str(v)
    except ValueError as e:  # more than 4,300 digits: CPython refuses too
        raise _python_error(e) from None


def to_str(ctx: Ctx | None, v: Any) -> str:
    """``str(v)``: an exception's is its message (``BaseException.__str__``), the rest are their ``repr``."""
    t = type(v)
    if t is str:
        return v
    if t is int:
        return _int_text(v)
    if t is Ref and ctx is not None and is_exception_class(ctx.heap[v.i][0]):
        args = unbox(ctx.heap[v.i][ARGS])
        if type(args) is not tuple or not args:
            return ""
        if len(args) != 1:
            return to_repr(ctx, args)
        # KeyError.__str__ shows its key as repr shows it (str(KeyError('k')) is "'k'").
        key = ctx.heap[v.i][0].is_subclass_of(BUILTIN_EXCEPTIONS["KeyError"])
        return (to_repr if key else to_str)(ctx, unbox(args[0]))
    return to_repr(ctx, v)


def to_repr(ctx: Ctx | None, v: Any, seen: frozenset[int] = frozenset()) -> str:
    """``repr(v)``; a list's elements are read (each an access, recorded), and a list inside itself is
    ``[...]``, as CPython shows it."""
    t = type(v)
    if t is str:
        return repr(v)
    if t is int:
        return _int_text(v)
    if t is Bool:
        return repr(v.value)
    if t is tuple:
        inner = _joined(ctx, v, seen)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if t is Ref:
        if ctx is None:  # ``s %= x`` (``runtime_ops.BINOPS``) has no heap at hand
            return "<object>"
        o = ctx.heap[v.i]
        cls = o[0]
        if not cls.is_list:
            return _object_repr(ctx, v, o, seen)
        if v.i in seen:
            return "[...]"
        return f"[{_joined(ctx, read_list(ctx, v), seen | {v.i})}]"
    return repr(v)  # None, True, False


def _object_repr(ctx: Ctx, v: Ref, o: tuple, seen: frozenset[int]) -> str:
    """``repr`` of a heap object that is not a list: a dict's and a set's contents and an exception's and a
    dataclass's constructor call, as CPython shows them; any other object as ``<Name object>``."""
    cls = o[0]
    if cls.builtin == "deque":
        return deque_text(ctx, v, o, seen)
    if cls.builtin in ("dict", "set"):
        if v.i in seen:
            return "{...}"
        inner = seen | {v.i}
        if cls.builtin == "set":
            items = read_set_items(ctx, v)
            return f"{{{_joined(ctx, items, inner)}}}" if items else "set()"
        parts = [f"{to_repr(ctx, k, inner)}: {to_repr(ctx, x, inner)}" for k, x in read_dict_items(ctx, v)]
        text = ", ".join(parts)
        if len(text) > MAX_STR:
            raise too_long()
        return f"{{{text}}}"
    if is_exception_class(cls):
        args = unbox(o[ARGS])
        return f"{cls.name}({_joined(ctx, args, seen) if type(args) is tuple else ''})"
    spec = getattr(cls, "dataclass", None)
    if spec is not None and v.i not in seen:
        if ctx.track:  # the fields shown are read, as comparing the dataclass reads them
            ctx.reads.extend((v, cls.field_index[f]) for f in spec.fields)
        fields = [f"{f}={to_repr(ctx, unbox(o[cls.field_index[f]]), seen | {v.i})}" for f in spec.fields]
        return f"{cls.name}({', '.join(fields)})"
    return f"<{cls.name} object>"


def _joined(ctx: Ctx | None, items: tuple, seen: frozenset[int]) -> str:
    parts: list[str] = []
    size = 0
    for x in items:
        p = to_repr(ctx, unbox(x), seen)
        size += len(p) + 2
        if size > MAX_STR:
            raise too_long()
        parts.append(p)
    return ", ".join(parts)


_DIGITS = re.compile(r"\d+")


def _spec_ok(spec: str) -> None:
    """A format specification whose width or precision would build more than ``MAX_STR`` characters."""
    if any(len(d) > 6 or int(d) > MAX_STR for d in _DIGITS.findall(spec)):
        raise too_long()


def format_value(ctx: Ctx | None, v: Any, conversion: int = -1, spec: str = "") -> str:
    """One ``{v!c:spec}`` of an f-string: ``format(v, spec)`` after the conversion ``!s``, ``!r`` or ``!a``
    (``conversion`` as ``ast.FormattedValue`` gives it: ``ord`` of the letter, -1 for none)."""
    if conversion == 115:
        v = to_str(ctx, v)
    elif conversion == 114:
        v = to_repr(ctx, v)
    elif conversion == 97:
        v = to_repr(ctx, v).encode("ascii", "backslashreplace").decode("ascii")
    t = type(v)
    if t is str or t is int or t is bool or v is None:
        if spec:
            _spec_ok(spec)
        elif t is str:
            return v
        elif t is int:
            return _int_text(v)
        try:
            return _sized(format(v, spec))
        except (TypeError, ValueError) as e:
            raise _python_error(e) from None
    if spec:
        raise _type_error(f"unsupported format string passed to {type_name(v, ctx)}.__format__")
    return to_str(ctx, v)


class _Shown:
    """A model value given to Python's own ``str.format`` and ``%``: it formats as the model value does."""

    __slots__ = ("ctx", "v", "name")

    def __init__(self, ctx: Ctx | None, v: Any) -> None:
        self.ctx = ctx
        self.v = v
        self.name = type_name(v, ctx)

    def __str__(self) -> str:
        return to_str(self.ctx, self.v)

    def __repr__(self) -> str:
        return to_repr(self.ctx, self.v)

    def __format__(self, spec: str) -> str:
        return format_value(self.ctx, self.v, -1, spec)


def _shown(ctx: Ctx | None, v: Any) -> Any:
    t = type(v)
    return _Shown(ctx, v) if t is Ref or t is tuple or t is Bool else v


def _fields(template: str) -> list[tuple[str, str | None, str | None, str | None]]:
    """The replacement fields of a ``str.format`` template, the nested ones of specifications included."""
    out = []
    for part in string.Formatter().parse(template):
        out.append(part)
        if part[2]:
            out.extend(_fields(part[2]))
    return out


def _size_checked(specs: list[str], values: list[Any], nested: bool) -> None:
    """Specifications (``specs``: their widths and precisions), or widths given as values (``nested``: a
    ``{:{}}`` or ``%*d``), that would build more than ``MAX_STR`` characters."""
    for spec in specs:
        _spec_ok(spec)
    if nested and any(_is_int(v) and not -MAX_STR <= v <= MAX_STR for v in values):
        raise too_long()


# A printf-style conversion specifier: its width and precision.
_PERCENT = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d*))?")


def str_format(ctx: Ctx, template: str, *args: Any, **kwargs: Any) -> str:
    """``template.format(*args, **kwargs)``: Python's own, on the model's values as they format."""
    try:
        fields = _fields(template)
    except ValueError as e:
        raise _python_error(e) from None
    for _, name, _, _ in fields:
        if name is not None and ("." in name or "[" in name):
            raise ModelError(f"format field '{{{name}}}': attributes and indices in a format field are not "
                             "supported; format the value itself")
    _size_checked([s for _, _, _, s in fields if s], [*args, *kwargs.values()],
                  any(s and "{" in s for _, _, _, s in fields))
    try:
        out = template.format(*[_shown(ctx, a) for a in args], **{k: _shown(ctx, v) for k, v in kwargs.items()})
    except (IndexError, KeyError, TypeError, ValueError) as e:
        raise _python_error(e) from None
    return _sized(out)


def percent(ctx: Ctx | None, template: str, values: Any) -> str:
    """``template % values``: printf-style formatting, Python's own, on the model's values as they format."""
    args = tuple(_shown(ctx, x) for x in values) if type(values) is tuple else _shown(ctx, values)
    items = args if type(args) is tuple else (args,)
    _size_checked([w + "." + p for w, p in _PERCENT.findall(template)], list(items), "*" in template)
    if sum(len(str(x)) for x in items if type(x) is str or type(x) is _Shown) > MAX_STR:
        raise too_long()
    try:
        out = template % args
    except (TypeError, ValueError) as e:
        raise ModelError(str(e).replace("_Shown", type_name(values, ctx)), exc=type(e).__name__) from None
    return _sized(out)


# -- methods ---------------------------------------------------------------------------------------------------


def _python_method(name: str) -> Callable[..., Any]:
    method = getattr(str, name)

    def run(ctx: Ctx, s: str, *args: Any, **kwargs: Any) -> Any:
        for a in (*args, *kwargs.values()):
            if type(a) is Ref:
                raise _type_error(f"{name}() argument must be str, not {type_name(a, ctx)}")
        try:
            return method(s, *args, **kwargs)
        except (TypeError, ValueError) as e:
            raise _python_error(e) from None

    return run


_PY_REPLACE = _python_method("replace")


def _replace(ctx: Ctx, s: str, old: Any, new: Any, count: Any = -1) -> str:
    if type(old) is str and type(new) is str and _is_int(count):
        n = len(s) + 1 if old == "" else s.count(old)
        if count >= 0:
            n = min(n, count)
        if len(s) + n * (len(new) - len(old)) > MAX_STR:
            raise too_long()
    return _PY_REPLACE(ctx, s, old, new, count)


def _padded(name: str) -> Callable[..., Any]:
    method = _python_method(name)

    def run(ctx: Ctx, s: str, width: Any, *rest: Any) -> Any:
        if _is_int(width) and width > MAX_STR:
            raise too_long()
        return method(ctx, s, width, *rest)

    return run


def _join(ctx: Ctx, s: str, items: Any) -> str:
    """``s.join(items)`` of a tuple, a string or a list (whose elements are read)."""
    if type(items) is Ref:
        o = ctx.heap[items.i]
        if o[0].builtin == "deque":
            items = read_deque(ctx, items)
        elif not o[0].is_list:
            raise _type_error("can only join an iterable")
        else:
            items = read_list(ctx, items)
    elif type(items) is not tuple and type(items) is not str:
        raise _type_error("can only join an iterable")
    size = len(s) * max(len(items) - 1, 0)
    for k, x in enumerate(items):
        if type(x) is not str:
            raise _type_error(f"sequence item {k}: expected str instance, {type_name(x, ctx)} found")
        size += len(x)
    if size > MAX_STR:
        raise too_long()
    return s.join(items)


def _format(ctx: Ctx, s: str, *args: Any, **kwargs: Any) -> str:
    return str_format(ctx, s, *args, **kwargs)


_PLAIN = ("strip", "lstrip", "rstrip", "startswith", "endswith", "upper", "lower", "find", "rfind", "index",
          "rindex", "count", "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower", "isdecimal",
          "isnumeric", "isidentifier", "title", "capitalize", "swapcase", "casefold", "split", "rsplit",
          "splitlines", "partition", "rpartition", "removeprefix", "removesuffix")
_ARITY = {
    "strip": (0, 1), "lstrip": (0, 1), "rstrip": (0, 1), "startswith": (1, 3), "endswith": (1, 3),
    "find": (1, 3), "rfind": (1, 3), "index": (1, 3), "rindex": (1, 3), "count": (1, 3), "split": (0, 2),
    "rsplit": (0, 2), "splitlines": (0, 1), "partition": (1, 1), "rpartition": (1, 1), "removeprefix": (1, 1),
    "removesuffix": (1, 1),
}

# name -> (implementation, fewest and most positional arguments)
STR_METHODS: dict[str, tuple[Callable[..., Any], int, int]] = {
    **{name: (_python_method(name), *_ARITY.get(name, (0, 0))) for name in _PLAIN},
    "replace": (_replace, 2, 3),
    "center": (_padded("center"), 1, 2),
    "ljust": (_padded("ljust"), 1, 2),
    "rjust": (_padded("rjust"), 1, 2),
    "zfill": (_padded("zfill"), 1, 1),
    "join": (_join, 1, 1),
    "format": (_format, 0, 1 << 16),
}
# The methods that take keyword arguments (in Python 3.11).
_KEYWORDS = frozenset({"split", "rsplit", "splitlines", "format"})
# The methods whose value is a new list.
LIST_VALUED = frozenset({"split", "rsplit", "splitlines"})
# The methods that may read a list's elements: ``join``'s argument, the values ``format`` formats.
READ_LISTS = frozenset({"join", "format"})


def call_method(ctx: Ctx, s: str, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``s.name(*args, **kwargs)`` on a string (the caller allocates a list value)."""
    impl, lo, hi = STR_METHODS[name]
    if not lo <= len(args) <= hi or (kwargs and name not in _KEYWORDS):
        _python_method(name)(ctx, s, *args, **kwargs)  # raises CPython's TypeError for the arguments
    return impl(ctx, s, *args, **kwargs)


__all__ = [
    "LIST_VALUED", "MAX_STR", "READ_LISTS", "STR_METHODS", "call_method", "char_at", "concat", "contains",
    "format_value", "percent", "repeat", "sliced", "str_format", "to_int", "to_repr", "to_str", "too_long",
    "type_name",
]
