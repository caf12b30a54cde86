"""Hypothesis strategies that generate small, valid models in the movers language.

``models()`` draws the source text of a model of this shape (formatting is deterministic: four-space
indentation, one statement a line, ``from movers.lang import *`` on the first line)::

    from movers.lang import *

    x = 0                      # 1-3 int globals x, y, z with initial values in 0..K-1 (K = 3)
    y = 2
    a = [0, 1]                 # optional global array of length 2
    m0 = Lock()                # 1-2 locks m0, m1
    m1 = Lock()

    def worker_0(i):           # either one function per thread (worker_0, worker_1, ...; with or
        global x, y            # without a parameter ``i``), or one ``worker(i)`` started several times
        with m0:
            x = (x + i) % 3
        t0 = y
        for j0 in range(2):
            a[(t0 + j0) % 2] += 1
        assert x != 2

    def worker_1():
        global y
        m0.acquire()
        m1.acquire()
        y = (a[0] * 2) % 3
        m1.release()
        m0.release()
        wait_until(x == 1)

    Thread(target=worker_0, args=(1,)).start()
    Thread(target=worker_1).start()

Statements inside a thread function, 3-6 of them counting nested ones (3-4 with three threads):

- assignments to a global, an array element (``a[0]`` or ``a[e % 2]``) or a local ``tN``, of small
  expressions over constants, globals, readable locals and array elements, bounded with ``% K``;
- augmented assignments (``x += 1``, ``a[1] -= 1``, ``t0 += 1``);
- ``with mK:`` blocks and balanced ``mK.acquire()`` ... ``mK.release()`` pairs (never across blocks), and
  try-locks ``if mK.acquire(blocking=False): ... mK.release()`` with or without an ``else``;
- ``if``/``else`` and ``if`` on comparisons (sometimes ``and``/``or`` of two);
- ``for jN in range(n)`` with n in {1, 2}, and bounded ``cN = 0`` / ``while cN < n: ... cN += 1`` loops
  (loops never nest, compound statements nest at most two deep);
- ``assert cond`` over globals (only when ``asserts``; many can fail: that is the point);
- ``wait_until(cond)`` over globals and, rarely, ``assume(cond)`` (only when ``blocking``/``assumes``).

Every execution is finite (all loops are bounded), so every state space is finite; the sizes are chosen so
that a model has a few hundred states at most in the common case (the naive explorer in
``tests/naive_explorer.py`` measures them).

Locks nest in the global order m0 < m1, except in some models with ``blocking`` (about a quarter of those
with two locks), which may take them in any order and so can deadlock; with ``blocking``, a thread very
rarely re-acquires a lock it holds (a self-deadlock: locks are not re-entrant).

What can go wrong in a generated model, by the flags:

- ``blocking=False``: no ``wait_until``/``assume``, consistent lock order, no re-acquisition, so no
  deadlock: the only possible violation is a failed ``assert``.
- ``asserts=False``: the only possible violation is a deadlock.
- No generated model can raise a runtime error: indices are constants below the length or ``% len``,
  arithmetic is ``+ - *`` and ``%`` by a positive constant, every release matches an acquire.

``single_kind_models()`` draws ``(source, kind)`` pairs from the two families whose only possible
violation is known (``kind`` is ``"assertion"`` or ``"deadlock"``), for tests that compare violation kinds
between searches or reductions (a search may legitimately stop at a different kind of violation first when
several kinds are reachable).

Every generated model is also valid Python: local names (``tN``, ``jN``, ``cN``, ``i``) never clash with
globals, a local is read only where it is definitely assigned, and a function assigning a global declares
it ``global`` on its first line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st
from hypothesis.strategies import DrawFn

K = 3  # the modulus bounding values
ARRAY_LEN = 2
GLOBAL_NAMES = ("x", "y", "z")
LOCK_NAMES = ("m0", "m1")
ARRAY_NAME = "a"

__all__ = ["K", "container_models", "dict_models", "function_models", "list_models", "main_models", "models",
           "queue_models", "single_kind_models", "value_models"]


@dataclass
class _ModelShape:
    """Model-wide choices that every statement generator consults."""

    globals: list[str]
    array: str | None
    locks: list[str]
    asserts: bool
    blocking: bool
    assumes: bool
    any_lock_order: bool


@dataclass
class _Fn:
    """What the generator knows while it writes one thread function."""

    params: list[str]
    budget: int
    readable: set[str] = field(default_factory=set)  # locals definitely assigned here
    held: list[str] = field(default_factory=list)  # locks held here (outermost first)
    assigned_globals: set[str] = field(default_factory=set)
    temps: int = 0  # tN locals created so far
    loops: int = 0  # jN / cN names used so far
    in_loop: bool = False


def _start_and_join(n_threads: int) -> list[str]:
    """The module's code of a plain-Python family: make and start ``worker_0``... in threads, then join them."""
    return ["", *(f"t{k} = threading.Thread(target=worker_{k})" for k in range(n_threads)),
            *(f"t{k}.start()" for k in range(n_threads)), *(f"t{k}.join()" for k in range(n_threads))]


def _rarely(draw: DrawFn, one_in: int) -> bool:
    """True with probability about 1/one_in; shrinks to False."""
    return draw(st.integers(0, one_in - 1)) == one_in - 1


# -- expressions -------------------------------------------------------------------------------------------


def _index(draw: DrawFn, m: _ModelShape, fn: _Fn | None) -> str:
    """An index into the array that is always in range."""
    if draw(st.booleans()):
        names = list(m.globals) + (sorted(fn.readable) if fn else [])
        return f"{draw(st.sampled_from(names))} % {ARRAY_LEN}"
    return str(draw(st.integers(0, ARRAY_LEN - 1)))


def _atom(draw: DrawFn, m: _ModelShape, fn: _Fn | None, const: bool = True) -> str:
    """A constant (unless not const), a global, a readable local (when fn is given) or an array element."""
    kinds = ["const", "global"] if const else ["global"]
    if fn is not None and fn.readable:
        kinds.append("local")
    if m.array:
        kinds.append("array")
    kind = draw(st.sampled_from(kinds))
    if kind == "const":
        return str(draw(st.integers(0, K - 1)))
    if kind == "global":
        return draw(st.sampled_from(m.globals))
    if kind == "local":
        assert fn is not None
        return draw(st.sampled_from(sorted(fn.readable)))
    return f"{m.array}[{_index(draw, m, fn)}]"


def _expr(draw: DrawFn, m: _ModelShape, fn: _Fn | None) -> str:
    """An atom, or a binary operation on two atoms bounded by ``% K``."""
    if draw(st.booleans()):
        return _atom(draw, m, fn)
    left = _atom(draw, m, fn, const=False)
    op = draw(st.sampled_from(["+", "-", "*"]))
    right = _atom(draw, m, fn)
    return f"({left} {op} {right}) % {K}"


def _comparison(draw: DrawFn, m: _ModelShape, fn: _Fn | None) -> str:
    left = _atom(draw, m, fn, const=False)
    if draw(st.integers(0, 3)) == 3:
        left = f"{left} + {_atom(draw, m, fn)}"
    op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]))
    return f"{left} {op} {_atom(draw, m, fn)}"


def _cond(draw: DrawFn, m: _ModelShape, fn: _Fn | None) -> str:
    """A comparison, or rarely the ``and``/``or`` of two. fn=None: over globals and constants only."""
    first = _comparison(draw, m, fn)
    if _rarely(draw, 5):
        return f"{first} {draw(st.sampled_from(['and', 'or']))} {_comparison(draw, m, fn)}"
    return first


# -- statements --------------------------------------------------------------------------------------------

_SIMPLE = ["assign_global", "assign_local", "assign_array", "augassign", "assert", "wait_until", "assume"]
_COMPOUND = ["with", "acquire_release", "if", "if_else", "for", "while", "try_lock"]


def _target(draw: DrawFn, m: _ModelShape, fn: _Fn, kind: str) -> str:
    if kind == "assign_global":
        name = draw(st.sampled_from(m.globals))
        fn.assigned_globals.add(name)
        return name
    if kind == "assign_array":
        return f"{m.array}[{_index(draw, m, fn)}]"
    # a local: reuse a temp or create the next one
    temps = sorted(n for n in fn.readable if n.startswith("t"))
    if temps and draw(st.booleans()):
        return draw(st.sampled_from(temps))
    name = f"t{fn.temps}"
    fn.temps += 1
    return name


def _lock_choice(draw: DrawFn, m: _ModelShape, fn: _Fn) -> str | None:
    """A lock to take here, respecting the global order unless the model allows any order."""
    if m.blocking and fn.held and _rarely(draw, 20):
        return draw(st.sampled_from(fn.held))  # a self-deadlock: locks are not re-entrant
    if m.any_lock_order:
        free = [lk for lk in m.locks if lk not in fn.held]
    else:
        top = max((m.locks.index(lk) for lk in fn.held), default=-1)
        free = m.locks[top + 1 :]
    if not free:
        return None
    return draw(st.sampled_from(free))


def _simple(draw: DrawFn, m: _ModelShape, fn: _Fn, kind: str) -> list[str]:
    if kind in ("assign_global", "assign_local", "assign_array"):
        value = _expr(draw, m, fn)  # drawn before the target: a new local is not readable in its own value
        target = _target(draw, m, fn, kind)
        if kind == "assign_local":
            fn.readable.add(target)
        return [f"{target} = {value}"]
    if kind == "augassign":
        choices = ["assign_global"] + (["assign_array"] if m.array else [])
        if any(n.startswith("t") for n in fn.readable):
            choices.append("assign_local_existing")
        which = draw(st.sampled_from(choices))
        if which == "assign_local_existing":
            target = draw(st.sampled_from(sorted(n for n in fn.readable if n.startswith("t"))))
        else:
            target = _target(draw, m, fn, which)
        op = draw(st.sampled_from(["+=", "-="]))
        return [f"{target} {op} {draw(st.integers(1, 2))}"]
    if kind == "assert":
        return [f"assert {_cond(draw, m, None)}"]
    if kind == "wait_until":
        return [f"wait_until({_cond(draw, m, None)})"]
    if kind == "assume":
        return [f"assume({_cond(draw, m, None)})"]
    raise AssertionError(kind)


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def _compound(draw: DrawFn, m: _ModelShape, fn: _Fn, kind: str, depth: int) -> list[str] | None:
    if kind in ("with", "acquire_release"):
        lock = _lock_choice(draw, m, fn)
        if lock is None:
            return None
        fn.held.append(lock)
        body = _block(draw, m, fn, depth + 1)
        fn.held.pop()
        if kind == "with":
            return [f"with {lock}:", *_indent(body)]
        return [f"{lock}.acquire()", *body, f"{lock}.release()"]
    if kind == "try_lock":  # if m.acquire(blocking=False): …; m.release() [else: …]: both branches are explored
        lock = _lock_choice(draw, m, fn)
        if lock is None:
            return None
        before = set(fn.readable)
        fn.held.append(lock)
        then = _block(draw, m, fn, depth + 1)
        fn.held.pop()
        after_then = fn.readable
        lines = [f"if {lock}.acquire(blocking=False):", *_indent([*then, f"{lock}.release()"])]
        fn.readable = set(before)
        if draw(st.booleans()):
            lines += ["else:", *_indent(_block(draw, m, fn, depth + 1))]
            fn.readable = after_then & fn.readable
        else:
            fn.readable = before
        return lines
    if kind in ("if", "if_else"):
        cond = _cond(draw, m, fn)
        before = set(fn.readable)
        then = _block(draw, m, fn, depth + 1)
        after_then = fn.readable
        if kind == "if":
            fn.readable = before
            return [f"if {cond}:", *_indent(then)]
        fn.readable = set(before)
        orelse = _block(draw, m, fn, depth + 1)
        fn.readable = after_then & fn.readable  # definitely assigned on both branches
        return [f"if {cond}:", *_indent(then), "else:", *_indent(orelse)]
    if kind in ("for", "while"):
        if fn.in_loop:
            return None
        n = draw(st.integers(1, 2))
        before = set(fn.readable)
        fn.in_loop = True
        var = f"{'j' if kind == 'for' else 'c'}{fn.loops}"
        fn.loops += 1
        if kind == "for":
            fn.readable.add(var)
            body = _block(draw, m, fn, depth + 1)
            lines = [f"for {var} in range({n}):", *_indent(body)]
        else:
            fn.readable.add(var)
            body = _block(draw, m, fn, depth + 1)
            lines = [f"{var} = 0", f"while {var} < {n}:", *_indent([*body, f"{var} += 1"])]
            before.add(var)  # the counter is assigned before the loop
        fn.in_loop = False
        fn.readable = before
        return lines
    raise AssertionError(kind)


def _statement(draw: DrawFn, m: _ModelShape, fn: _Fn, depth: int) -> list[str]:
    kinds = ["assign_global", "augassign", "assign_local"]
    if m.array:
        kinds.append("assign_array")
    if m.asserts:
        kinds += ["assert", "assert"]
    if m.blocking:
        kinds.append("wait_until")
    if depth < 2 and fn.budget >= 2:
        kinds += _COMPOUND
    if m.blocking and m.assumes and _rarely(draw, 30):
        kinds = ["assume"]
    fn.budget -= 1
    while True:
        kind = draw(st.sampled_from(kinds))
        if kind in _SIMPLE:
            return _simple(draw, m, fn, kind)
        lines = _compound(draw, m, fn, kind, depth)
        if lines is not None:
            return lines
        kinds.remove(kind)


def _block(draw: DrawFn, m: _ModelShape, fn: _Fn, depth: int) -> list[str]:
    """A nonempty block: a body of 1-2 statements inside a compound one, or what is left of the budget at
    the top of a function."""
    lines = _statement(draw, m, fn, depth)
    limit = 2 if depth > 0 else fn.budget + 1
    for _ in range(limit - 1):
        if fn.budget <= 0 or (depth > 0 and not draw(st.booleans())):
            break
        lines += _statement(draw, m, fn, depth)
    return lines


def _function(draw: DrawFn, m: _ModelShape, name: str, params: list[str], budget: int) -> list[str]:
    fn = _Fn(params=params, budget=budget, readable=set(params))
    body = _block(draw, m, fn, 0)
    decl = [f"global {', '.join(sorted(fn.assigned_globals))}"] if fn.assigned_globals else []
    return [f"def {name}({', '.join(params)}):", *_indent(decl + body)]


@st.composite
def models(
    draw: DrawFn,
    asserts: bool = True,
    max_threads: int = 3,
    *,
    min_threads: int = 2,
    blocking: bool = True,
    assumes: bool = True,
) -> str:
    """The source text of a small model (see the module docstring for its shape).

    asserts: inject ``assert`` statements (some of which fail).
    blocking: allow ``wait_until``, rarely ``assume``, inconsistent lock order and re-acquiring a held lock;
        without it no generated model can deadlock.
    assumes: allow ``assume`` (only with ``blocking``).
    """
    n_threads = draw(st.integers(min_threads, max_threads))
    budget_max = 6 if n_threads <= 2 else 4
    n_globals = draw(st.integers(1, 3))
    names = list(GLOBAL_NAMES[:n_globals])
    has_array = draw(st.booleans())
    locks = list(LOCK_NAMES[: draw(st.integers(1, 2))])
    any_order = blocking and len(locks) == 2 and _rarely(draw, 4)
    m = _ModelShape(names, ARRAY_NAME if has_array else None, locks, asserts, blocking, assumes, any_order)

    lines = ["from movers.lang import *", ""]
    lines += [f"{g} = {draw(st.integers(0, K - 1))}" for g in names]
    if has_array:
        init = ", ".join(str(draw(st.integers(0, K - 1))) for _ in range(ARRAY_LEN))
        lines.append(f"{ARRAY_NAME} = [{init}]")
    lines += [f"{lk} = Lock()" for lk in locks]

    starts: list[str] = []
    if draw(st.booleans()):  # one function per thread
        for k in range(n_threads):
            params = ["i"] if draw(st.booleans()) else []
            budget = draw(st.integers(3, budget_max))
            lines += ["", *_function(draw, m, f"worker_{k}", params, budget)]
            if params:
                starts.append(f"Thread(target=worker_{k}, args=({draw(st.integers(0, K - 1))},)).start()")
            else:
                starts.append(f"Thread(target=worker_{k}).start()")
    else:  # one function, started n_threads times with ids 0, 1, ...
        budget = draw(st.integers(3, budget_max))
        lines += ["", *_function(draw, m, "worker", ["i"], budget)]
        starts = [f"Thread(target=worker, args=({k},)).start()" for k in range(n_threads)]
    lines += ["", *starts]
    return "\n".join(lines) + "\n"


@st.composite
def single_kind_models(draw: DrawFn, max_threads: int = 3) -> tuple[str, str]:
    """``(source, kind)``: a model whose only possible violation is ``kind`` ("assertion" or "deadlock")."""
    kind = draw(st.sampled_from(["assertion", "deadlock"]))
    if kind == "assertion":
        src = draw(models(asserts=True, max_threads=max_threads, blocking=False))
    else:
        src = draw(models(asserts=False, max_threads=max_threads, blocking=True, assumes=False))
    return src, kind


# -- value models: booleans and ints mixed, None, tuples, fields, `is` ----------------------------------------

VALUES = ("0", "1", "True", "False", "None", "(1, True)", "(1, 1)", "(0, False)")
VALUE_GLOBALS = ("x", "y")
FIELDS = ("f", "g")


def _value_atom(draw: DrawFn, fn: _Fn, const: bool = True) -> str:
    kinds = (["const"] if const else []) + ["global", "field", "array"] + (["local"] if fn.readable else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "const":
        return draw(st.sampled_from(VALUES))
    if kind == "global":
        return draw(st.sampled_from(VALUE_GLOBALS))
    if kind == "field":
        return f"o.{draw(st.sampled_from(FIELDS))}"
    if kind == "array":
        return f"a[{draw(st.integers(0, 1))}]"
    return draw(st.sampled_from(sorted(fn.readable)))


def _value_cond(draw: DrawFn, fn: _Fn) -> str:
    """A total condition (never a runtime error) that tells True from 1 where ``is`` is used."""
    a = _value_atom(draw, fn, const=False)  # `is` of a literal is a SyntaxWarning in Python
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return f"{a} is {draw(st.sampled_from(['True', 'False', 'None']))}"
    if kind == 1:
        return f"{a} is not {draw(st.sampled_from(['True', 'False', 'None']))}"
    if kind == 2:
        return f"{a} {draw(st.sampled_from(['==', '!=']))} {_value_atom(draw, fn)}"
    if kind == 3:
        return f"not {a}"
    return a


def _value_expr(draw: DrawFn, fn: _Fn, whole: bool) -> str:
    kind = draw(st.integers(0, 6))
    if kind == 0 and whole:
        return f"choose({draw(st.sampled_from(VALUES))}, {draw(st.sampled_from(VALUES))})"
    if kind == 1:
        return _value_cond(draw, fn)
    if kind == 2:
        return f"bool({_value_atom(draw, fn)})"
    if kind == 3:
        return f"int(bool({_value_atom(draw, fn)}))"
    if kind == 4:
        return f"({_value_atom(draw, fn)}, {_value_atom(draw, fn)})"
    return _value_atom(draw, fn)


def _value_statement(draw: DrawFn, fn: _Fn, depth: int, asserts: bool) -> list[str]:
    fn.budget -= 1
    kind = draw(st.integers(0, 11))
    if kind == 0 and asserts:
        return [f"assert {_value_cond(draw, fn)}"]
    if kind == 2 and depth == 0 and fn.budget >= 1:
        cond = _value_cond(draw, fn)
        before = set(fn.readable)
        then = _value_statement(draw, fn, depth + 1, asserts)
        fn.readable = set(before)
        orelse = _value_statement(draw, fn, depth + 1, asserts)
        fn.readable = before
        return [f"if {cond}:", *_indent(then), "else:", *_indent(orelse)]
    if kind == 3 and depth == 0 and fn.budget >= 1:
        body = _value_statement(draw, fn, depth + 1, asserts)
        return ["with m:", *_indent(body)]
    value = _value_expr(draw, fn, whole=True)
    where = draw(st.sampled_from(["global", "field", "array", "local"]))
    if where == "global":
        target = draw(st.sampled_from(VALUE_GLOBALS))
        fn.assigned_globals.add(target)
    elif where == "field":
        target = f"o.{draw(st.sampled_from(FIELDS))}"
    elif where == "array":
        target = f"a[{draw(st.integers(0, 1))}]"
    else:
        target = f"t{draw(st.integers(0, 1))}"
        fn.readable.add(target)
    return [f"{target} = {value}"]


@st.composite
def value_models(draw: DrawFn, asserts: bool = True) -> str:
    """A model whose values mix booleans and ints (and None and tuples) in globals, fields, array elements
    and locals, with ``is`` tests that tell ``True`` from ``1``: every step is total (no runtime error), so
    the only possible violation is a failed ``assert``::

        class Cell:
            def __init__(self):
                self.f = True
                self.g = 0

        x = 1
        y = (1, True)
        a = [False, 1]
        o = Cell()
        m = Lock()

        def worker_0():
            global x
            x = choose(1, True)
            if o.f is True:
                t0 = (x, None)
            else:
                a[1] = x == 1
            assert x is not True
    """
    lines = ["from movers.lang import *", "", "class Cell:", "    def __init__(self):"]
    lines += [f"        self.{f} = {draw(st.sampled_from(VALUES))}" for f in FIELDS]
    lines.append("")
    lines += [f"{g} = {draw(st.sampled_from(VALUES))}" for g in VALUE_GLOBALS]
    lines.append(f"a = [{draw(st.sampled_from(VALUES))}, {draw(st.sampled_from(VALUES))}]")
    lines += ["o = Cell()", "m = Lock()"]
    n_threads = draw(st.integers(2, 3))
    for k in range(n_threads):
        fn = _Fn(params=[], budget=draw(st.integers(2, 4 if n_threads == 2 else 3)))
        body: list[str] = []
        while fn.budget > 0:
            body += _value_statement(draw, fn, 0, asserts)
        decl = [f"global {', '.join(sorted(fn.assigned_globals))}"] if fn.assigned_globals else []
        lines += ["", f"def worker_{k}():", *_indent(decl + body)]
    lines.append("")
    lines += [f"Thread(target=worker_{k}).start()" for k in range(n_threads)]
    return "\n".join(lines) + "\n"


# -- list models: lists compared by their contents, nested in lists and tuples, aliased ----------------------

LISTS = ("p", "q")  # global lists of two ints (0 or 1), rebound to new lists or to each other (aliases)


def _list_value(draw: DrawFn) -> str:
    """A list of two ints: a global one, the one inside ``r``, or a new one."""
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return f"[{draw(st.integers(0, 1))}, {draw(st.integers(0, 1))}]"
    if kind == 1:
        return "r[0]"
    return draw(st.sampled_from(LISTS))


def _list_cond(draw: DrawFn) -> str:
    """A total condition (never a runtime error) over the lists' contents and identities."""
    a, b = _list_value(draw), _list_value(draw)
    kind = draw(st.integers(0, 11))
    if kind == 0:
        return f"{a} {draw(st.sampled_from(['<', '<=', '>', '>=']))} {b}"
    if kind == 1:
        container = draw(st.sampled_from(["r", f"[{b}, [1, 1]]", f"({b},)"]))
        return f"{a} {draw(st.sampled_from(['in', 'not in']))} {container}"
    if kind == 2:
        return f"({a}, {draw(st.integers(0, 1))}) == s"
    if kind == 3:
        return f"[{a}] != [{b}]"
    if kind == 4:
        return f"{draw(st.sampled_from(['max', 'min']))}({a}, {b}) == {_list_value(draw)}"
    if kind == 5:
        return f"{draw(st.sampled_from(['max', 'min']))}([{a}, {b}]) is {a}"
    if kind == 6:
        return f"{draw(st.sampled_from(LISTS))} is {b}"
    if kind == 7:
        return f"{a}[{draw(st.integers(0, 1))}] == {draw(st.sampled_from(['0', '1', 'True', 'False']))}"
    if kind == 10:  # iteration builtins and generator expressions (each element a read of its own)
        n = draw(st.integers(0, 2))
        return draw(st.sampled_from([f"sum(x for x in {a}) == {n}", f"sorted({a}, reverse=True) == {b}",
                                     f"any(x == 1 for x in {a})", f"all(x for x in {a})", f"sum({a}) == {n}"]))
    if kind == 11:  # comprehensions, zip, enumerate
        return draw(st.sampled_from([f"[x for x in {a} if x] == [y for y, z in zip({b}, {a}) if z]",
                                     f"[i * x for i, x in enumerate({a})] == {b}"]))
    return f"{a} {draw(st.sampled_from(['==', '!=']))} {b}"


def _list_statement(draw: DrawFn, fn: _Fn, depth: int) -> list[str]:
    fn.budget -= 1
    kind = draw(st.integers(0, 9))
    if kind <= 1:
        return [f"assert {_list_cond(draw)}"]
    if kind == 2 and depth == 0 and fn.budget >= 1:
        cond = _list_cond(draw)
        then = _list_statement(draw, fn, depth + 1)
        orelse = _list_statement(draw, fn, depth + 1)
        return [f"if {cond}:", *_indent(then), "else:", *_indent(orelse)]
    if kind == 3 and depth == 0 and fn.budget >= 1:
        return ["with m:", *_indent(_list_statement(draw, fn, depth + 1))]
    if kind == 4:
        target = draw(st.sampled_from(LISTS))
        fn.assigned_globals.add(target)
        return [f"{target} = {_list_value(draw)}"]  # a new list, or an alias
    if kind == 5:
        return [f"r[0] = {_list_value(draw)}"]
    if kind == 6:
        return [f"t{draw(st.integers(0, 1))} = {_list_cond(draw)}"]
    i = draw(st.integers(0, 1))
    value = draw(st.sampled_from(["0", "1", "True", f"1 - {_list_value(draw)}[{1 - i}]"]))
    return [f"{_list_value(draw)}[{i}] = {value}"]


@st.composite
def list_models(draw: DrawFn, max_threads: int = 3) -> str:
    """A model whose threads write, rebind, alias and compare lists (``==``, ``!=``, ``<``…, ``in``,
    ``min``/``max``, ``is``), nested in a list and a tuple; every step is total (no runtime error), so the
    only possible violation is a failed ``assert``::

        p = [0, 1]
        q = [0, 1]
        r = [q, 0]
        s = (p, 1)
        m = Lock()

        def worker_0():
            global q
            q = p
            assert [p] != [[0, 1]]

        def worker_1():
            r[0][1] = 1 - p[0]
            if max(p, q) == [1, 1]:
                t0 = p < r[0]
            else:
                assert (q, 1) == s
    """
    lines = ["from movers.lang import *", ""]
    lines += [f"{g} = [{draw(st.integers(0, 1))}, {draw(st.integers(0, 1))}]" for g in LISTS]
    lines.append(f"r = [{draw(st.sampled_from(LISTS))}, 0]")
    lines.append(f"s = ({draw(st.sampled_from(LISTS))}, 1)")
    lines.append("m = Lock()")
    n_threads = draw(st.integers(2, max_threads))
    for k in range(n_threads):
        fn = _Fn(params=[], budget=draw(st.integers(2, 4 if n_threads == 2 else 3)))
        body: list[str] = []
        while fn.budget > 0:
            body += _list_statement(draw, fn, 0)
        decl = [f"global {', '.join(sorted(fn.assigned_globals))}"] if fn.assigned_globals else []
        lines += ["", f"def worker_{k}():", *_indent(decl + body)]
    lines.append("")
    lines += [f"Thread(target=worker_{k}).start()" for k in range(n_threads)]
    return "\n".join(lines) + "\n"


@st.composite
def main_models(draw: DrawFn, max_threads: int = 3) -> str:
    """A model of ``models()`` in plain Python whose module code is the main thread (docs/language.md section
    2): it makes the threads (``t0 = threading.Thread(target=worker_0)``), starts them, then joins some or
    all of them (the first step after the starts is always a join) and asserts on the globals, e.g.::

        t0.start()
        t1.start()
        t1.join()
        assert x != 1
        t0.join()
        assert y == 2
    """
    src = draw(models(max_threads=max_threads, assumes=False))
    head, starts = src.rstrip("\n").split("\n\n")[:-1], src.rstrip("\n").split("\n\n")[-1].split("\n")
    lines = "\n\n".join(head).replace("from movers.lang import *", "import threading\nfrom movers.lang import *")
    lines = lines.replace("Lock()", "threading.Lock()")
    out = [lines, ""]
    for k, s in enumerate(starts):
        out.append(f"t{k} = threading.{s.removesuffix('.start()')}")
    out += [f"t{k}.start()" for k in range(len(starts))]
    order = draw(st.permutations(range(len(starts))))
    joined = order[: draw(st.integers(1, len(starts)))]
    # Asserts read one or two globals some thread writes: with two, the main thread's reads are two accesses
    # another thread can come between (test_random_python.py's MAIN_READS_TWICE).
    names = sorted({g for line in src.splitlines() if line.startswith("    global ")
                    for g in line.removeprefix("    global ").split(", ")})
    for k in joined:
        out.append(f"t{k}.join()")
        for _ in range(draw(st.integers(0, 1)) if names else 0):
            g = draw(st.sampled_from(names))
            if draw(st.booleans()):
                out.append(f"assert {g} {draw(st.sampled_from(['==', '!=']))} {draw(st.integers(0, K - 1))}")
            else:
                h = draw(st.sampled_from(names))
                out.append(f"assert {g} + {h} {draw(st.sampled_from(['<=', '!=']))} {draw(st.integers(0, 2 * K))}")
    return "\n".join(out) + "\n"


def _dict_read(draw: DrawFn) -> str:
    """One read of ``d`` that never raises: ``k in d``, ``d.get(k, v)``, ``len(d)``."""
    k = draw(st.integers(0, 2))
    return draw(st.sampled_from([f"{k} in d", f"{k} not in d", f"d.get({k}, {draw(st.integers(0, 2))})",
                                 "len(d)"]))


def _dict_cond(draw: DrawFn) -> str:
    a = _dict_read(draw)
    if " in d" in a:
        return a
    return f"{a} {draw(st.sampled_from(['==', '!=', '<']))} {draw(st.integers(0, 2))}"


def _dict_statement(draw: DrawFn, fn: _Fn, depth: int, exceptions: bool = False) -> list[str]:
    fn.budget -= 1
    k = draw(st.integers(0, 2))
    kind = draw(st.integers(0, 11 if exceptions and depth == 0 else 9))
    if kind == 10:  # a read of a key another thread may pop, its KeyError caught
        handler = _dict_statement(draw, fn, depth + 1) if fn.budget >= 1 else ["pass"]
        clause = draw(st.sampled_from(["KeyError", "LookupError", "(ValueError, KeyError)"]))
        return ["try:", f"    t{draw(st.integers(0, 1))} = d[{k}]", f"except {clause}:", *_indent(handler)]
    if kind == 11:  # a raise under a condition, caught in the same function
        rest = _dict_statement(draw, fn, depth + 1) if fn.budget >= 1 else ["pass"]
        handler = _dict_statement(draw, fn, depth + 1) if fn.budget >= 1 else ["pass"]
        return ["try:", f"    if {_dict_cond(draw)}:", "        raise ValueError()", *_indent(rest),
                "except ValueError:", *_indent(handler)]
    if kind == 0:
        return [f"assert {_dict_cond(draw)}"]
    if kind == 1 and depth == 0 and fn.budget >= 1:
        then = _dict_statement(draw, fn, depth + 1)
        orelse = _dict_statement(draw, fn, depth + 1)
        return [f"if {_dict_cond(draw)}:", *_indent(then), "else:", *_indent(orelse)]
    if kind == 2 and depth == 0 and fn.budget >= 1:
        return ["with m:", *_indent(_dict_statement(draw, fn, depth + 1))]
    if kind == 3:
        return [f"d.pop({k}, None)"]
    if kind == 4:
        return [f"t{draw(st.integers(0, 1))} = d.pop({k}, {draw(st.integers(0, 2))})"]
    if kind == 5:
        fn.assigned_globals.add("x")
        return [f"x = {_dict_read(draw)}"]
    if kind == 6:  # a check-then-act: the key may be gone when it is read (a KeyError, a runtime error)
        return [f"if {k} in d:", f"    t{draw(st.integers(0, 1))} = d[{k}]"]
    if kind == 7:  # two accesses: a read, then a write
        return [f"d[{k}] = (d.get({k}, 0) + {draw(st.integers(1, 2))}) % 3"]
    if kind == 8:
        return [f"d[{k}] = {draw(st.sampled_from(['0', '1', 'True', 'x', '(x + 1) % 3']))}"]
    return [f"t{draw(st.integers(0, 1))} = {_dict_cond(draw)}"]


@st.composite
def dict_models(draw: DrawFn, max_threads: int = 3, exceptions: bool = False) -> str:
    """A plain-Python model whose threads read and write a module-level dict (``d[k]``, ``d[k] = e``,
    ``k in d``, ``d.get(k, v)``, ``len(d)``, ``d.pop(k, v)``; each one access, docs/language.md section 4.9) and
    a global ``x``; the module's code starts the threads, joins them and asserts on the dict::

        import threading

        d = {0: 0, 1: 0}
        x = 0
        m = threading.Lock()

        def worker_0():
            d[1] = (d.get(1, 0) + 1) % 3
            if 2 in d:
                t0 = d[2]

        def worker_1():
            global x
            with m:
                d.pop(0, None)
            x = len(d)

        t0 = threading.Thread(target=worker_0)
        t1 = threading.Thread(target=worker_1)
        t0.start()
        t1.start()
        t0.join()
        t1.join()
        assert d.get(1, 0) != 2

    ``d[k]`` is read only after ``k in d``, which another thread may falsify (a ``KeyError``: a runtime error).
    Every model's first thread writes ``d`` first, so that the main thread's reads of ``d`` are accesses (see
    ``main_models`` on why that matters).

    exceptions: also ``try: t0 = d[k]`` / ``except KeyError:`` (or ``LookupError``, or a tuple of classes) and
    ``try: if cond: raise ValueError()`` ... ``except ValueError:``, each with a handler in the same function."""
    lines = ["import threading", "", f"d = {{0: {draw(st.integers(0, 2))}, 1: {draw(st.integers(0, 2))}}}",
             "x = 0", "m = threading.Lock()"]
    n_threads = draw(st.integers(2, max_threads))
    for k in range(n_threads):
        fn = _Fn(params=[], budget=draw(st.integers(2, 4 if n_threads == 2 else 3)))
        body: list[str] = []
        if k == 0:
            body.append(f"d[{draw(st.integers(0, 2))}] = {draw(st.integers(0, 2))}")
        while fn.budget > 0:
            body += _dict_statement(draw, fn, 0, exceptions)
        decl = [f"global {', '.join(sorted(fn.assigned_globals))}"] if fn.assigned_globals else []
        lines += ["", f"def worker_{k}():", *_indent(decl + body)]
    lines += _start_and_join(n_threads)
    if draw(st.booleans()):
        lines.append(f"assert {_dict_cond(draw)}")
    return "\n".join(lines) + "\n"


# -- containers: sets, del, list methods, local comprehensions ----------------------------------------------


def _container_simple(draw: DrawFn, fn: _Fn) -> list[str]:
    """One statement on ``s`` (a set), ``a`` (a list), ``d`` (a dict) or a local, that never raises."""
    k, v = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    t = f"t{draw(st.integers(0, 1))}"
    kind = draw(st.integers(0, 11))
    if kind == 0:
        return [f"s.add({draw(st.sampled_from([str(k), str(k), 'True']))})"]
    if kind == 1:
        return [f"s.discard({k})"]
    if kind == 2:
        fn.assigned_globals.add("x")
        return [f"x = {draw(st.sampled_from(['len(s)', 'len(a)', f'a.count({v})', f'{k} in s']))}"]
    if kind == 3:
        return [f"a.insert({draw(st.sampled_from(['0', '1', '-1', '5']))}, {v})"]
    if kind == 4:
        return [f"a.extend({draw(st.sampled_from([f'({v},)', f'[{v}, {k}]', '()']))})"]
    if kind == 5:
        return [f"a.append({v})"]
    if kind == 6:
        return [f"d[{k}] = {v}"]
    if kind == 7:
        return [f"{t} = {draw(st.sampled_from([f'{k} not in s', f'len(s) == {v}', f'a.count({v})', f'{k} in d']))}"]
    # No `+` or `*` here: in a model that makes a set, movers takes each for a read of a list's elements, a
    # step (DISAGREEMENTS.md, 1).
    if kind == 8:  # local work, its list a local value (of a name of its own: DISAGREEMENTS.md, 4)
        item = draw(st.sampled_from(["j", f"(j, {v})", "j == 1"]))
        fn.loops += 1
        return [f"l{fn.loops} = [{item} for j in range({draw(st.integers(0, 2))}) if j != {k}]"]
    if kind == 9:  # assigned, then deleted: the local is gone from the frame
        return [f"t2 = [{v}, {k}]", "del t2"]
    if kind == 10:
        return [f"s.add({k})", f"s.discard({v})"]
    return [f"d.pop({k}, None)"]


def _container_raising(draw: DrawFn) -> tuple[str, str, str]:
    """A statement that may raise (another thread's change coming between a check and its act): the statement,
    the class of what it raises, and the check that makes it safe in one thread."""
    k, v = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    t = f"t{draw(st.integers(0, 1))}"
    i = draw(st.sampled_from(["0", "-1", "1"]))
    return draw(st.sampled_from([
        (f"s.remove({k})", "KeyError", f"{k} in s"),
        (f"a.remove({v})", "ValueError", f"{v} in a"),
        (f"{t} = a.index({v})", "ValueError", f"{v} in a"),
        (f"del a[{i}]", "IndexError", "len(a) > 1"),
        (f"del d[{k}]", "KeyError", f"{k} in d"),
        (f"{t} = a.pop(0)", "IndexError", "len(a) > 0"),
    ]))


def _container_statement(draw: DrawFn, fn: _Fn, depth: int) -> list[str]:
    fn.budget -= 1
    kind = draw(st.integers(0, 7 if depth == 0 else 4))
    if kind <= 2:
        return _container_simple(draw, fn)
    if kind == 3:  # check-then-act: the check does not protect the act from other threads (unlocked)
        line, _, guard = _container_raising(draw)
        return [f"if {guard}:", f"    {line}"]
    if kind == 4:
        cond = draw(st.sampled_from(["len(s) <= 2", "0 not in s", "len(a) <= 3", "a.count(0) <= 1", "1 in d",
                                     "len(d) >= 1", "x != 2"]))
        return [f"assert {cond}"]
    if kind == 5:  # caught, or not caught by the wrong clause
        line, exc, _ = _container_raising(draw)
        clause = draw(st.sampled_from([exc, exc, "LookupError" if exc != "ValueError" else "Exception",
                                       f"(TypeError, {exc})", "ValueError"]))
        handler = _container_simple(draw, fn) if fn.budget >= 1 and draw(st.booleans()) else ["pass"]
        return ["try:", f"    {line}", f"except {clause}:", *_indent(handler)]
    if kind == 6 and fn.budget >= 1:
        body = _container_statement(draw, fn, depth + 1)
        if draw(st.booleans()) and fn.budget >= 1:
            body += _container_statement(draw, fn, depth + 1)
        return ["with m:", *_indent(body)]
    if kind == 7 and fn.budget >= 1:
        then = _container_statement(draw, fn, depth + 1)
        return [f"if {draw(st.sampled_from(['1 in s', 'len(a) > 2', '0 not in d', 'x == 1']))}:", *_indent(then)]
    return _container_simple(draw, fn)


@st.composite
def container_models(draw: DrawFn, max_threads: int = 3) -> str:
    """A plain-Python model whose threads change a module-level set ``s`` (``add``, ``discard``, ``remove``,
    ``in``, ``len``), list ``a`` (``insert``, ``remove``, ``extend``, ``index``, ``count``, ``append``, ``pop``,
    ``del a[i]``) and dict ``d`` (``del d[k]``), each operation one access (docs/language.md sections 4.3, 4.9,
    4.10), and make local lists with comprehensions over a range and ``del`` them; the module's code joins the
    threads and asserts::

        import threading

        s = {0, 2}
        a = [1, 0]
        d = {0: 0, 1: 1}
        x = 0
        m = threading.Lock()

        def worker_0():
            s.add(1)
            if 1 in a:
                a.remove(1)         # a ValueError when another thread removed it in between

        def worker_1():
            try:
                del d[0]
            except KeyError:
                pass
            t0 = [j * 2 for j in range(2) if j != 1]

        t0 = threading.Thread(target=worker_0)
        ...
        assert len(s) <= 2

    Violations: failed asserts, the exceptions of a check-then-act (a runtime error, or caught), an exception a
    clause of the wrong class lets through. Every model's first thread changes ``s`` first, so that reads of the
    containers are accesses everywhere."""
    s_init = sorted(set(draw(st.lists(st.integers(0, 2), max_size=2))))
    lines = ["import threading", "", f"s = {{{', '.join(map(str, s_init))}}}" if s_init else "s = set()",
             f"a = [{draw(st.integers(0, 2))}, {draw(st.integers(0, 2))}]",
             f"d = {{0: {draw(st.integers(0, 2))}, 1: {draw(st.integers(0, 2))}}}", "x = 0", "m = threading.Lock()"]
    n_threads = draw(st.integers(2, max_threads))
    for k in range(n_threads):
        fn = _Fn(params=[], budget=draw(st.integers(2, 3 if n_threads == 2 else 2)))
        body: list[str] = [f"s.add({draw(st.integers(0, 2))})"] if k == 0 else []
        while fn.budget > 0:
            body += _container_statement(draw, fn, 0)
        decl = [f"global {', '.join(sorted(fn.assigned_globals))}"] if fn.assigned_globals else []
        lines += ["", f"def worker_{k}():", *_indent(decl + body)]
    lines += _start_and_join(n_threads)
    if draw(st.booleans()):
        final = ["len(s) != 3", "2 not in s", "len(a) >= 2", "a.count(1) <= 1", "x != 1", "0 in d"]
        lines.append(f"assert {draw(st.sampled_from(final))}")
    return "\n".join(lines) + "\n"


# -- functions: closures and lambdas as targets, dataclass objects, try/finally, raise ---------------------------


def _fn_atom(draw: DrawFn, fn: _Fn) -> str:
    return draw(st.sampled_from(["x", "o.f", "o.g", str(draw(st.integers(0, 2))), *sorted(fn.readable)]))


def _fn_cond(draw: DrawFn, fn: _Fn) -> str:
    return f"{_fn_atom(draw, fn)} {draw(st.sampled_from(['==', '!=', '<']))} {draw(st.integers(0, 2))}"


def _fn_simple(draw: DrawFn, fn: _Fn) -> list[str]:
    """An assignment that never raises: to ``x``, a field of the dataclass object ``o``, or a local (a number, or
    a list made by a comprehension over a range, or over such a list)."""
    kind = draw(st.integers(0, 5))
    value = f"({_fn_atom(draw, fn)} + {_fn_atom(draw, fn)}) % 3"
    if kind == 0:
        fn.assigned_globals.add("x")
        return [f"x = {value}"]
    if kind <= 2:
        return [f"o.{draw(st.sampled_from(['f', 'g']))} = {value}"]
    if kind == 3:
        return [f"t{draw(st.integers(0, 1))} = {value}"]
    lists = sorted(n for n in fn.readable if n.startswith("u"))
    if kind == 4 and lists:
        u = draw(st.sampled_from(lists))
        fn.assigned_globals.add("x")
        return [draw(st.sampled_from([f"x = sum({u}) % 3", f"x = len([y for y in {u} if y != 1])",
                                      f"o.g = [y * 2 for y in {u}][-1] % 3 if {u} else 0"]))]
    factor = draw(st.sampled_from([str(draw(st.integers(0, 2))), *sorted(n for n in fn.readable if n[0] in "tnk")]))
    fn.temps += 1  # each list display a name of its own (DISAGREEMENTS.md, 4)
    return [f"u{fn.temps} = [j * {factor} for j in range({draw(st.integers(1, 2))})]"]  # local work


def _fn_raise(draw: DrawFn, fn: _Fn) -> list[str]:
    exc = draw(st.sampled_from(["Stop()", "Halt()", "Stop(1)"]))
    return [f"if {_fn_cond(draw, fn)}:", f"    raise {exc}"]


def _fn_statement(draw: DrawFn, fn: _Fn, depth: int) -> list[str]:
    fn.budget -= 1
    kind = draw(st.integers(0, 10 if depth == 0 else 3))
    if kind <= 1 or kind >= 9:
        lines = _fn_simple(draw, fn)
        if depth == 0 and lines[0][0] in "tu":
            fn.readable.add(lines[0].split(" = ")[0])
        return lines
    if kind == 2:
        return [f"assert {_fn_cond(draw, fn)}"] if _rarely(draw, 2) else _fn_simple(draw, fn)
    if kind == 3:
        if "m" in fn.held:
            return _fn_simple(draw, fn)
        fn.held.append("m")
        body = _fn_simple(draw, fn) + (_fn_raise(draw, fn) if draw(st.booleans()) else [])
        fn.held.pop()
        return ["with m:", *_indent(body)]
    if kind == 4:  # an exception no clause catches: the thread dies
        return _fn_raise(draw, fn) if _rarely(draw, 2) else _fn_simple(draw, fn)
    if kind in (5, 6, 7):  # try/except/else/finally around statements that may raise
        body = _fn_statement(draw, fn, depth + 1) + (_fn_raise(draw, fn) if draw(st.booleans()) else [])
        lines = ["try:", *_indent(body)]
        clauses = draw(st.sampled_from([["Stop"], ["Halt"], ["Exception"], ["(KeyError, Stop)"], ["Halt", "Stop"],
                                        []]))
        for c in clauses:
            lines += [f"except {c}:", *_indent(_fn_simple(draw, fn) if draw(st.booleans()) else ["pass"])]
        if clauses and draw(st.integers(0, 3)) == 0:
            lines += ["else:", *_indent(_fn_simple(draw, fn))]
        if not clauses or draw(st.booleans()):
            lines += ["finally:", *_indent(_fn_simple(draw, fn))]
        return lines
    lists = sorted(n for n in fn.readable if n.startswith("u"))
    if kind == 8 and lists:
        u = draw(st.sampled_from(lists))
        fn.readable.discard(u)
        return [f"del {u}"]
    return _fn_simple(draw, fn)


@st.composite
def function_models(draw: DrawFn, max_threads: int = 3) -> str:
    """A plain-Python model whose threads are a top-level function, a closure (``Thread(target=make_1(2))`` for
    ``def make_1(n): def run(): ...; return run``) or a lambda (``Thread(target=lambda: worker_2(1))``); they
    read and write a global and the fields of a ``@dataclass`` object, raise the model's exception classes
    (``class Stop(Exception)``, ``class Halt(Stop)``), catch them (or fail to: a clause of the wrong class, a
    raise outside any ``try``), run ``finally`` blocks, leave ``with m:`` by an exception (the lock released),
    and make local lists with comprehensions (over a range, then over such a list) and ``del`` them::

        import threading
        from dataclasses import dataclass

        @dataclass
        class Cell:
            f: int
            g: int = 0

        class Stop(Exception):
            pass

        class Halt(Stop):
            pass

        x = 0
        o = Cell(1)
        m = threading.Lock()

        def worker_0():
            try:
                with m:
                    o.f = (x + 1) % 3
                    if o.g == 0:
                        raise Halt()
            except Stop:
                pass
            finally:
                x = (o.f + 1) % 3

        def make_1(n):
            def run():
                u0 = [j * n for j in range(2)]
                o.g = sum(u0) % 3
            return run

        t0 = threading.Thread(target=worker_0)
        t1 = threading.Thread(target=make_1(2))
        ...
        assert x != 2
    """
    lines = ["import threading", "from dataclasses import dataclass", "", "@dataclass", "class Cell:", "    f: int",
             "    g: int = 0", "", "class Stop(Exception):", "    pass", "", "class Halt(Stop):", "    pass", "",
             "x = 0", draw(st.sampled_from([f"o = Cell({draw(st.integers(0, 2))})",
                                            f"o = Cell({draw(st.integers(0, 2))}, g={draw(st.integers(0, 2))})"])),
             "m = threading.Lock()"]
    n_threads = draw(st.integers(2, max_threads))
    targets = []
    for k in range(n_threads):
        how = draw(st.sampled_from(["def", "closure", "lambda"]))
        param = {"def": [], "closure": ["n"], "lambda": ["k"]}[how]
        fn = _Fn(params=param, budget=draw(st.integers(2, 3 if n_threads == 2 else 2)), readable=set(param))
        body: list[str] = []
        while fn.budget > 0:
            body += _fn_statement(draw, fn, 0)
        decl = [f"global {', '.join(sorted(fn.assigned_globals))}"] if fn.assigned_globals else []
        c = draw(st.integers(0, 2))
        if how == "closure":
            lines += ["", f"def make_{k}(n):", "    def run():", *_indent(_indent(decl + body)), "    return run"]
            targets.append(f"make_{k}({c})")
        else:
            lines += ["", f"def worker_{k}({', '.join(param)}):", *_indent(decl + body)]
            targets.append(f"lambda: worker_{k}({c})" if how == "lambda" else f"worker_{k}")
    lines.append("")
    lines += [f"t{k} = threading.Thread(target={target})" for k, target in enumerate(targets)]
    lines += [f"t{k}.start()" for k in range(n_threads)]
    lines += [f"t{k}.join()" for k in range(n_threads)]
    if draw(st.booleans()):
        lines.append(f"assert {draw(st.sampled_from(['x != 2', 'o.f != 1', 'o.g <= 1', 'o.f + o.g != 3']))}")
    return "\n".join(lines) + "\n"


# -- queues ------------------------------------------------------------------------------------------------------


def _queue_statement(draw: DrawFn, fn: _Fn, depth: int) -> list[str]:
    fn.budget -= 1
    v = draw(st.integers(1, 2))
    t = f"t{draw(st.integers(0, 1))}"
    kind = draw(st.integers(0, 9 if depth == 0 else 6))
    if kind <= 1:
        return [f"q.put({v})"]
    if kind == 2:
        if draw(st.booleans()):
            fn.assigned_globals.add("x")
            return ["x = q.get()"]
        return [f"{t} = q.get()"]
    if kind == 3:
        return ["try:", f"    {t} = q.get_nowait()", "except queue.Empty:", f"    {t} = 0"]
    if kind == 4:
        fn.assigned_globals.add("x")
        return ["try:", f"    q.put_nowait({v})", "except queue.Full:", "    x = 2"]
    if kind == 5:
        fn.assigned_globals.add("x")
        return [f"x = {draw(st.sampled_from(['q.qsize()', 'int(q.empty())', 'int(q.full())']))}"]
    if kind == 6:
        return [f"assert {draw(st.sampled_from(['q.qsize() <= 1', 'x != 2', 'not q.full()', 'x != 1']))}"]
    if kind == 7:  # check-then-act: another thread may empty the queue in between (then get blocks)
        return ["if not q.empty():", f"    {t} = q.get()"]
    if kind == 8 and fn.budget >= 1:
        return ["with m:", *_indent(_queue_statement(draw, fn, depth + 1))]
    return ["try:", f"    {t} = q.get_nowait()", "except Exception:", "    pass"]


@st.composite
def queue_models(draw: DrawFn, max_threads: int = 3) -> str:
    """A plain-Python model whose threads share a ``queue.Queue`` (``put``, ``get``, ``put_nowait``,
    ``get_nowait`` with ``queue.Empty``/``queue.Full`` caught, ``qsize``, ``empty``, ``full``), with or without a
    ``maxsize``; the module's code joins the threads and asserts on the queue::

        import queue
        import threading

        q = queue.Queue(maxsize=1)
        x = 0
        m = threading.Lock()

        def worker_0():
            q.put(1)
            q.put(2)                # blocks while the queue is full

        def worker_1():
            global x
            try:
                t0 = q.get_nowait()
            except queue.Empty:
                t0 = 0
            x = q.get()             # blocks while it is empty: a deadlock when nothing is left to put

        ...
        assert q.qsize() == 0

    movers runs CPython's queue code (lang/library) at access granularity, where the naive explorer makes each
    method one step: the verdicts compare, the state counts do not."""
    lines = ["import queue", "import threading", "",
             draw(st.sampled_from(["q = queue.Queue()", "q = queue.Queue(maxsize=1)", "q = queue.Queue(2)"])),
             "x = 0", "m = threading.Lock()"]
    n_threads = draw(st.integers(2, max_threads))
    for k in range(n_threads):
        fn = _Fn(params=[], budget=draw(st.integers(1, 3 if n_threads == 2 else 2)))
        body: list[str] = []
        while fn.budget > 0:
            body += _queue_statement(draw, fn, 0)
        decl = [f"global {', '.join(sorted(fn.assigned_globals))}"] if fn.assigned_globals else []
        lines += ["", f"def worker_{k}():", *_indent(decl + body)]
    lines += _start_and_join(n_threads)
    if draw(st.booleans()):
        lines.append(f"assert {draw(st.sampled_from(['q.qsize() == 0', 'q.qsize() <= 1', 'x != 2']))}")
    return "\n".join(lines) + "\n"


# -- deques ------------------------------------------------------------------------------------------------------


def _deque_raising(draw: DrawFn) -> tuple[str, str]:
    """A statement that raises ``IndexError`` on an empty deque, and the check that makes it safe in one thread."""
    t = f"t{draw(st.integers(0, 1))}"
    return draw(st.sampled_from([
        ("q.pop()", "len(q) > 0"), ("q.popleft()", "q"), (f"{t} = q.popleft()", "len(q) >= 1"),
        (f"{t} = q[0]", "len(q) > 0"), (f"{t} = q[-1]", "q"),
    ]))


def _deque_statement(draw: DrawFn, fn: _Fn, depth: int) -> list[str]:
    fn.budget -= 1
    v = draw(st.integers(0, 2))
    t = f"t{draw(st.integers(0, 1))}"
    kind = draw(st.integers(0, 8 if depth == 0 else 5))
    if kind <= 1:
        item = draw(st.sampled_from([str(v), *sorted(fn.readable)]))  # `len(vals)`: a thread's *vals
        return [f"q.{draw(st.sampled_from(['append', 'appendleft']))}({item})"]
    if kind == 2:
        fn.assigned_globals.add("x")
        # No `len(q) + len(q)`: `+` of two non-constants in a model with containers is an access of its own
        # in movers (DISAGREEMENTS.md, 1).
        return [f"x = {draw(st.sampled_from(['len(q)', f'q.count({v})', f'{v} in q', 'len(q) > 1']))}"]
    if kind == 3:  # check-then-act: another thread may empty the deque between the check and the act
        line, guard = _deque_raising(draw)
        return [f"if {guard}:", f"    {line}"]
    if kind == 4:
        return [f"assert {draw(st.sampled_from(['len(q) <= 2', f'{v} not in q', 'x != 1', 'q.count(1) <= 1']))}"]
    if kind == 5:
        line, _ = _deque_raising(draw)
        clause = draw(st.sampled_from(["IndexError", "LookupError", "KeyError"]))
        return ["try:", f"    {line}", f"except {clause}:", "    pass"]
    if kind == 6 and fn.budget >= 1 and depth == 0 and draw(st.booleans()):
        # `for … else` / `while … else` (section 4.4): the else block runs unless the search breaks
        fn.loops += 1
        j = f"j{fn.loops}"
        found = draw(st.sampled_from([f"{v} in q", "len(q) > 1", f"q.count({v}) >= 1"]))
        orelse = _deque_statement(draw, fn, depth + 1)
        if draw(st.booleans()):
            head = [f"for {j} in range({draw(st.integers(1, 2))}):"]
        else:
            head = [f"{j} = 0", f"while {j} < {draw(st.integers(1, 2))}:", f"    {j} += 1"]
        return [*head, f"    if {found}:", "        break", "else:", *_indent(orelse)]
    if kind in (6, 7) and fn.budget >= 1:
        body = _deque_statement(draw, fn, depth + 1)
        if draw(st.booleans()) and fn.budget >= 1:
            body += _deque_statement(draw, fn, depth + 1)
        if draw(st.booleans()):  # a lock's __enter__ returns True (section 6.4)
            got = draw(st.sampled_from(["got", "int(got)", "got is True"]))
            return ["with m as got:", *_indent(body), f"{t} = {got}"]
        return ["with m:", *_indent(body)]
    # Not `q.popleft() if q else v`: movers does not cut a conditional expression's container truth from the
    # branch's access (DISAGREEMENTS.md, 6: a missed violation).
    return [f"{t} = q.popleft() if len(q) > 0 else {v}"]


@st.composite
def deque_models(draw: DrawFn, max_threads: int = 3) -> str:
    """A plain-Python model whose threads share a ``collections.deque`` ``q`` (``append``, ``appendleft``,
    ``pop``, ``popleft``, ``len``, ``in``, ``count``, ``q[i]``, its truth), each operation one access
    (docs/language.md section 4.11), with check-then-act shapes (``if q: q.popleft()``) locked or not and
    ``IndexError`` caught by the right or the wrong clause, ``with m:`` and ``with m as got:``, threads of
    ``def worker(*vals)`` started with ``args=(...)`` (``len(vals)``, ``vals[-1]`` items), searches with ``for
    … else`` and ``while … else`` that ``break``; the module's code
    joins the threads and asserts. Every model's first thread changes ``q`` first, so that every read of it is
    an access (DISAGREEMENTS.md, 7)::

        import threading
        from collections import deque

        q = deque([1])
        x = 0
        m = threading.Lock()

        def worker_0():
            if len(q) > 0:
                q.pop()             # an IndexError when another thread emptied it in between

        def worker_1():
            q.appendleft(2)
        ...
        assert len(q) <= 1
    """
    init = draw(st.lists(st.integers(0, 2), max_size=2))
    lines = ["import threading", "from collections import deque", "", f"q = deque({init})", "x = 0",
             "m = threading.Lock()"]
    n_threads = draw(st.integers(2, max_threads))
    starts: list[str] = []
    for k in range(n_threads):
        fn = _Fn(params=[], budget=draw(st.integers(1, 3 if n_threads == 2 else 2)))
        # `def worker(*vals)` started with `args=(...)` (section 4.5): vals a tuple, its length an item
        varargs = draw(st.none() | st.lists(st.integers(0, 2), max_size=2).map(tuple))
        if varargs is not None:
            # not sum(vals): a step of its own in movers (DISAGREEMENTS.md, 8)
            fn.readable |= {"len(vals)"} | ({"vals[-1]"} if varargs else set())
        body: list[str] = [f"q.append({draw(st.integers(0, 2))})"] if k == 0 else []
        while fn.budget > 0:
            body += _deque_statement(draw, fn, 0)
        decl = [f"global {', '.join(sorted(fn.assigned_globals))}"] if fn.assigned_globals else []
        lines += ["", f"def worker_{k}({'' if varargs is None else '*vals'}):", *_indent(decl + body)]
        starts.append(f"t{k} = threading.Thread(target=worker_{k}" + ("" if varargs is None else f", args={varargs!r}")
                      + ")")
    lines.append("")
    lines += starts
    lines += [f"t{k}.start()" for k in range(n_threads)]
    lines += [f"t{k}.join()" for k in range(n_threads)]
    if draw(st.booleans()):
        lines.append(f"assert {draw(st.sampled_from(['len(q) <= 1', 'q.count(1) != 1', 'x != 2', '0 not in q']))}")
    return "\n".join(lines) + "\n"


# -- context managers (verdicts only) ----------------------------------------------------------------------------


@st.composite
def manager_models(draw: DrawFn, max_threads: int = 3) -> str:
    """The deque family's threads with ``with g as n:`` blocks on an object of a model class with
    ``__enter__``/``__exit__`` (docs/language.md section 6.4) that takes the lock ``m`` or not (an unlocked
    read-modify-write inside the block is then a lost update), counts its uses in a field and returns it::

        class Guard:
            def __init__(self):
                self.uses = 0

            def __enter__(self):
                m.acquire()
                self.uses += 1
                return self.uses

            def __exit__(self, exc_type, exc, tb):
                m.release()
                return False

    movers makes the calls of ``__enter__``/``__exit__`` part of the ``with`` statement's steps, where the naive
    explorer inlines their statements: the verdicts compare, the state counts do not."""
    locked = draw(st.booleans())
    enter = (["m.acquire()"] if locked else []) + ["self.uses += 1", "return self.uses"]
    exit_ = (["m.release()"] if locked else []) + [draw(st.sampled_from(["return False", "return None", "pass"]))]
    lines = ["import threading", "from collections import deque", "", "", "class Guard:",
             "    def __init__(self):", "        self.uses = 0", "", "    def __enter__(self):",
             *_indent(_indent(enter)),
             "", "    def __exit__(self, exc_type, exc, tb):", *_indent(_indent(exit_)), "", "",
             f"q = deque({draw(st.lists(st.integers(0, 2), max_size=2))})", "x = 0", "m = threading.Lock()",
             "g = Guard()"]
    n_threads = draw(st.integers(2, max_threads))
    for k in range(n_threads):
        fn = _Fn(params=[], budget=draw(st.integers(1, 2)))
        body: list[str] = [f"q.append({draw(st.integers(0, 2))})"] if k == 0 else []
        while fn.budget > 0:
            if draw(st.booleans()):
                fn.budget -= 1
                fn.assigned_globals.add("x")
                inner = draw(st.sampled_from([["x += 1"], ["x = n"], ["if len(q) > 0:", "    q.pop()"]]))
                bind = inner == ["x = n"] or draw(st.booleans())
                body += [f"with g{' as n' if bind else ''}:", *_indent(inner)]
            else:
                body += _deque_statement(draw, fn, 1)
        decl = [f"global {', '.join(sorted(fn.assigned_globals))}"] if fn.assigned_globals else []
        lines += ["", f"def worker_{k}():", *_indent(decl + body)]
    lines += _start_and_join(n_threads)
    if draw(st.booleans()):
        lines.append(f"assert {draw(st.sampled_from(['g.uses == x', 'x <= 3', 'len(q) <= 2']))}")
    return "\n".join(lines) + "\n"


# -- executors ---------------------------------------------------------------------------------------------------


def _task_statement(draw: DrawFn, fn: _Fn) -> list[str]:
    """One statement of a task: a locked or a lost update, a raise or an assert (both kept in the future), a
    check-then-act."""
    fn.budget -= 1
    fn.assigned_globals.add("x")
    return draw(st.sampled_from([
        ["x += a"],
        ["with m:", "    x += a"],
        ["t = x", "x = t + 1"],
        ["if x > 1:", "    raise ValueError(a)"],
        ["assert x != 2"],
        ["with m:", "    if x == 0:", "        x = a"],
    ]))


@st.composite
def executor_models(draw: DrawFn) -> str:
    """A plain-Python model whose module code runs tasks on a ``ThreadPoolExecutor`` (``submit`` and
    ``result()``, or ``list(pool.map(...))``), in a ``with`` block or shut down by hand (or not at all, so that
    the module's last assert races the tasks), the results caught or not::

        from concurrent.futures import ThreadPoolExecutor
        import threading

        x = 0
        m = threading.Lock()


        def task(a):
            global x
            with m:
                x += a
            return x


        with ThreadPoolExecutor(max_workers=2) as pool:
            f0 = pool.submit(task, 1)
            f1 = pool.submit(task, 2)
            r0 = f0.result()
            r1 = f1.result()
        assert x == 3

    movers runs CPython's executor (lang/library) step by step, where the naive explorer has one step for each
    submit, start, return, ``result()`` and ``shutdown``: the verdicts compare, the state counts do not."""
    fn = _Fn(params=["a"], budget=draw(st.integers(1, 2)))
    body: list[str] = []
    while fn.budget > 0:
        body += _task_statement(draw, fn)
    body.append(draw(st.sampled_from(["return x", "return a", "pass"])))
    workers = draw(st.integers(1, 2))
    lines = ["from concurrent.futures import ThreadPoolExecutor", "import threading", "", "x = 0",
             "m = threading.Lock()", "", "", "def task(a):", "    global x", *_indent(body), "", ""]
    shape = draw(st.sampled_from(["with", "map", "shutdown", "no shutdown", "held"]))
    if shape == "map":
        lines += [f"with ThreadPoolExecutor(max_workers={workers}) as pool:",
                  "    rs = list(pool.map(task, (1, 2)))"]
    else:
        calls = ["f0 = pool.submit(task, 1)", "f1 = pool.submit(task, 2)"]
        results = []
        for k in range(2):
            if draw(st.booleans()):
                results += ["try:", f"    r{k} = f{k}.result()", "except ValueError:", f"    r{k} = -1"]
            else:
                results.append(f"r{k} = f{k}.result()")
        if shape == "held":  # the module waits for a task while it holds the lock the task may need
            results = ["with m:", *_indent(results)]
        if draw(st.booleans()):
            calls.insert(1, "x += 1")
        if shape == "no shutdown":
            lines += [f"pool = ThreadPoolExecutor({workers})", *calls]
        elif shape == "shutdown":
            lines += [f"pool = ThreadPoolExecutor({workers})", *calls, *results, "pool.shutdown()"]
        else:
            lines += [f"with ThreadPoolExecutor(max_workers={workers}) as pool:", *_indent(calls + results)]
    if draw(st.booleans()):
        lines.append(f"assert {draw(st.sampled_from(['x >= 3', 'x != 4', 'x <= 3']))}")
    return "\n".join(lines) + "\n"
