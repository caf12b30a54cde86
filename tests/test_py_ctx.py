"""``with E as name:`` (locks and the model's context managers, PEP 343), ``*args`` in definitions and ``*xs`` in
calls, and ``for … else`` / ``while … else`` (docs/language.md). Each threaded model and its bug twin are
checked under ``none`` and every reduction that accepts them; the deterministic ones also under python3, which
must agree (they are plain Python: ``import threading``)."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import movers
from movers.lang.compiler import compile_model
from movers.reduce import REDUCTIONS

try:
    from differential import run_differential
except ImportError:  # tests/ imported as a package
    from tests.differential import run_differential


def verdicts(source: str, expected: str, kind: str | None = None, needle: str | None = None) -> None:
    """``source`` has ``expected`` verdict (and violation kind, and message part) under none and every
    reduction that accepts it."""
    checked = []
    for name in REDUCTIONS:
        r = movers.check(source=source, reduction=name, max_states=50000)
        if name != "none" and r.verdict == "error":
            continue  # the reduction refuses the model (a property it does not preserve)
        assert r.verdict == expected, (name, r.verdict, r.error, [(v.kind, v.message) for v in r.violations])
        if kind is not None:
            assert r.violations[0].kind == kind, (name, r.violations[0].kind, r.violations[0].message)
        if needle is not None:
            assert needle in r.violations[0].message, (name, r.violations[0].message)
        checked.append(name)
    assert "none" in checked and len(checked) > 3, checked


def python3(source: str, tmp_path: Path) -> int:
    path = tmp_path / "model.py"
    path.write_text(source)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, timeout=60, text=True)
    # An exception that ends a thread is only printed: the run still exits with 0.
    return done.returncode or int("Traceback" in done.stderr)


def agree(source: str, tmp_path: Path, ok: bool) -> None:
    """The same file under python3 and movers: both pass, or both fail."""
    assert (python3(source, tmp_path) == 0) is ok
    r = movers.check(source=source)
    assert r.verdict == ("ok" if ok else "violation"), (r.verdict, r.error)


# -- for … else, while … else ---------------------------------------------------------------------------------

LOOPS = """
import threading

xs = [1, 2, 3]
out = []


def find(k):
    for x in xs:
        if x == k:
            out.append(x)
            break
    else:
        out.append(-1)
    i = 0
    while i < len(xs) and xs[i] != k:
        i += 1
    else:
        out.append(i)
    n = 0
    while n < 5:
        n += 1
        if n == k:
            break
    else:
        out.append(100 + n)
    for j in range(2):
        m = 0
        while m < len(xs) and xs[m] > 0:
            m += 1
        else:
            out.append(j)
            continue
        out.append(99)
    while False:
        pass
    else:
        out.append(7)


def main():
    find(2)
    find(9)
    assert out == EXPECTED, out


t = threading.Thread(target=main)
t.start()
t.join()
"""
LOOPS_OUT = "[2, 1, 0, 1, 7, -1, 3, 105, 0, 1, 7]"


@pytest.mark.parametrize("expected,ok", [(LOOPS_OUT, True), (LOOPS_OUT.replace("105", "104"), False)])
def test_loop_else_agrees_with_python3(tmp_path: Path, expected: str, ok: bool) -> None:
    agree(LOOPS.replace("EXPECTED", expected), tmp_path, ok)


SLOTS = """
import threading

lock = threading.Lock()
slots = [0, 0]
full = []


def claim(me):
    for i in range(2):
        with lock:
            if slots[i] == 0:
                slots[i] = me
                break
    else:
        with lock:
            full.append(me)


ts = [threading.Thread(target=claim, args=(k,)) for k in (1, 2, 3)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert len(full) == 1 and 0 not in slots and full[0] not in slots
"""
# The bug: the check and the claim in two critical sections.
SLOTS_BUG = SLOTS.replace("""            if slots[i] == 0:
                slots[i] = me
                break""", """            free = slots[i] == 0
        if free:
            with lock:
                slots[i] = me
            break""")


def test_for_else_runs_only_when_no_break() -> None:
    verdicts(SLOTS, "ok")
    verdicts(SLOTS_BUG, "violation", "assertion")


# -- with … as on locks -----------------------------------------------------------------------------------------

LOCK_AS = """
import threading

lock = threading.Lock()
rlock = threading.RLock()
cv = threading.Condition()
sem = threading.Semaphore(1)
n = 0


def work():
    global n
    with lock as a, rlock as b:
        with cv as c:
            with sem as d:
                assert a is True and b is True and c is True and d is True
                v = n
    with LOCK as got:
        n = v + 1 if got else v


ts = [threading.Thread(target=work) for _ in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert n == 2, n
"""


def test_with_lock_as_binds_true_and_keeps_the_lock() -> None:
    # The read and the write under one lock, and under two different lock acquisitions (the bug).
    verdicts(LOCK_AS.replace("                v = n\n", "                n = n + 1\n").replace(
        "    with LOCK as got:\n        n = v + 1 if got else v\n", ""), "ok")
    verdicts(LOCK_AS.replace("LOCK", "lock"), "violation", "assertion")


SINGLE_LOCK_AS = """
import threading

lock = threading.Lock()
cv = threading.Condition(lock)
got = []
with lock as a:
    got.append(a)
    got.append(lock.locked())
with cv as c:
    got.append(c)
got.append(lock.locked())
assert got == EXPECTED, got
"""


@pytest.mark.parametrize("expected,ok", [("[True, True, True, False]", True), ("[True, False, True, False]", False)])
def test_with_lock_as_value_agrees_with_python3(tmp_path: Path, expected: str, ok: bool) -> None:
    agree(SINGLE_LOCK_AS.replace("EXPECTED", expected), tmp_path, ok)


# -- with … as on context managers of the model -----------------------------------------------------------------

TRACER = """
import threading

log = []


class Tracer:
    def __init__(self, name, swallow):
        self.name = name
        self.swallow = swallow

    def __enter__(self):
        log.append("enter " + self.name)
        return self.name

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            log.append("exit " + self.name)
        else:
            log.append("exit " + self.name + " " + str(exc))
        return self.swallow


def first(xs):
    for x in xs:
        with Tracer("loop", False) as n:
            if x > 1:
                return x
            if x == 0:
                continue
            log.append(n)
    return -1


def main():
    with Tracer("a", True) as a:
        log.append(a)
        raise ValueError("boom")
    log.append("after a")
    try:
        with Tracer("b", False):
            raise KeyError("k")
    except KeyError:
        log.append("caught")
    log.append(str(first([0, 1, 2, 3])))
    with Tracer("c", False) as c, Tracer("d", False) as d:
        log.append(c + d)
    while True:
        with Tracer("w", False):
            break
    assert log == EXPECTED, log


t = threading.Thread(target=main)
t.start()
t.join()
"""
TRACER_OUT = repr(['enter a', 'a', 'exit a boom', 'after a', 'enter b', "exit b 'k'", 'caught', 'enter loop',
                   'exit loop', 'enter loop', 'loop', 'exit loop', 'enter loop', 'exit loop', '2', 'enter c',
                   'enter d', 'cd', 'exit d', 'exit c', 'enter w', 'exit w'])


@pytest.mark.parametrize("expected,ok", [(TRACER_OUT, True), (TRACER_OUT.replace("'exit d', 'exit c'",
                                                                                 "'exit c', 'exit d'"), False)])
def test_context_manager_protocol_agrees_with_python3(tmp_path: Path, expected: str, ok: bool) -> None:
    agree(TRACER.replace("EXPECTED", expected), tmp_path, ok)


GUARDED = """
import threading


class Swallowed(Exception):
    pass


class Guarded:
    def __init__(self):
        self.lock = threading.Lock()
        self.n = 0

    def __enter__(self):
        ACQUIRE
        return self

    def __exit__(self, exc_type, exc, tb):
        RELEASE
        return exc_type is not None and isinstance(exc, Swallowed)


g = Guarded()


def work(fail):
    with g as me:
        v = me.n
        me.n = v + 1
        if fail:
            raise Swallowed("by __exit__")


ts = [threading.Thread(target=work, args=(k == 0,)) for k in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert g.n == 2, g.n
"""


def test_a_context_manager_guards_its_block() -> None:
    ok = GUARDED.replace("ACQUIRE", "self.lock.acquire()").replace("RELEASE", "self.lock.release()")
    verdicts(ok, "ok")
    bug = GUARDED.replace("ACQUIRE", "pass").replace("RELEASE", "pass")
    verdicts(bug, "violation", "assertion")


def test_an_exception_that_exit_does_not_swallow_kills_the_thread() -> None:
    src = GUARDED.replace("ACQUIRE", "self.lock.acquire()").replace("RELEASE", "self.lock.release()").replace(
        'raise Swallowed("by __exit__")', 'raise KeyError("kept")')
    verdicts(src, "violation", "runtime-error", "KeyError")


def test_with_on_something_else_is_cpythons_type_error() -> None:
    src = GUARDED.replace("ACQUIRE", "pass").replace("RELEASE", "pass").replace("with g as me:", "with g.n as me:")
    verdicts(src, "violation", "runtime-error", "'int' object does not support the context manager protocol")


def test_enter_and_exit_are_calls_in_the_static_facts() -> None:
    ok = GUARDED.replace("ACQUIRE", "self.lock.acquire()").replace("RELEASE", "self.lock.release()")
    p = compile_model(ok)
    work = p.functions["work"]
    callees = set().union(*(n.callee_names for n in work.nodes))
    assert {".__enter__", ".__exit__"} <= callees
    entry = [n for n in work.nodes if ".__enter__" in n.callee_names]
    assert entry and all(n.costly and n.calls for n in entry)
    flows = [f for n in work.nodes for f in n.flows if f[0] == "method_call"]
    assert {f[2] for f in flows} >= {"__enter__", "__exit__"}


@pytest.mark.parametrize("bad,needle", [
    ("class C:\n    def __enter__(self):\n        return self\n    def __exit__(self, t, e, tb):\n"
     "        self.t = t\n", "__exit__ may use 't' only as 'is None'"),
    ("class C:\n    def __enter__(self):\n        return self\n    def __exit__(self, *exc):\n        return False\n",
     "__exit__ must take its parameters by name"),
    ("class C:\n    def __len__(self):\n        return 0\n", "special method '__len__'"),
    ("from movers.lang import *\ndef w():\n    with indivisible() as x:\n        pass\n", "has no value to bind"),
])
def test_refused(bad: str, needle: str) -> None:
    r = movers.check(source=bad)
    assert r.verdict == "error" and needle in (r.error or ""), r.error


# -- *args ------------------------------------------------------------------------------------------------------

STARS = """
import threading

results = []


def add(a, b, *rest):
    return a + b + sum(rest)


def run(fn, *args):
    return fn(*args)


def count(*args):
    return len(args)


class Pool:
    def __init__(self, *names):
        self.names = names

    def submit(self, fn, *args, key=None):
        results.append((key, fn(*args)))


def main():
    results.append(add(1, 2))
    results.append(add(1, 2, 3, 4))
    results.append(run(add, 1, 2, 3))
    xs = [5, 6]
    results.append(run(add, *xs))
    results.append(run(add, 1, *(2, 3), 4))
    results.append(count())
    results.append(count(*[]))
    f = lambda *a: a
    results.append(f(1, 2))

    def inner(x, *ys):
        return (x, ys)

    results.append(inner(*(1, 2, 3)))
    p = Pool("a", "b")
    results.append(p.names)
    p.submit(add, 1, 1, key="k")
    p.submit(count, *xs)
    assert results == EXPECTED, results


t = threading.Thread(target=main)
t.start()
t.join()
"""
STARS_OUT = "[3, 10, 6, 11, 10, 0, 0, (1, 2), (1, (2, 3)), ('a', 'b'), ('k', 2), (None, 2)]"


@pytest.mark.parametrize("expected,ok", [(STARS_OUT, True), (STARS_OUT.replace("(None, 2)", "(None, (5, 6))"), False)])
def test_star_args_agree_with_python3(tmp_path: Path, expected: str, ok: bool) -> None:
    agree(STARS.replace("EXPECTED", expected), tmp_path, ok)


@pytest.mark.parametrize("call,message", [
    ("add(*[1])", "add() missing 1 required positional argument: 'b'"),
    ("count(args=1)", "count() got an unexpected keyword argument 'args'"),
    ("run(*5)", "'int' object is not iterable"),
])
def test_star_binding_errors_are_cpythons(call: str, message: str) -> None:
    src = STARS.replace("    results.append(add(1, 2))\n", f"    {call}\n", 1).replace("EXPECTED", STARS_OUT)
    r = movers.check(source=src)
    # A call matched at compile time is refused there, with the message CPython raises at run time.
    found = r.error or "" if r.verdict == "error" else r.violations[0].message if r.violations else ""
    assert message in found, (r.verdict, r.error, r.violations)


WORKERS = """
import threading

lock = threading.Lock()
total = [0]


def bump(box, k):
    with lock:
        v = box[0]
        box[0] = v + k


def run(fn, *args):
    fn(*args)


ts = [threading.Thread(target=run, args=(bump, total, k)) for k in (1, 2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert total[0] == 3, total
"""


def test_a_function_value_called_with_star_args() -> None:
    verdicts(WORKERS, "ok")
    bug = WORKERS.replace("    with lock:\n        v = box[0]\n        box[0] = v + k\n",
                          "    v = box[0]\n    box[0] = v + k\n")
    verdicts(bug, "violation", "assertion")


def test_star_of_a_shared_list_reads_its_elements_in_a_step_of_its_own() -> None:
    src = textwrap.dedent("""
        import threading
        xs = [1, 2]
        g = [0]

        def f(a, b, c):
            return a + b + c

        def w():
            g[0] = f(g[0], *xs)

        t = threading.Thread(target=w)
        t.start()
        xs[0] = 5
        t.join()
        assert g[0] in (3, 7)
    """)
    verdicts(src, "ok")
    p = compile_model(src)
    steps = [n for n in p.functions["w"].nodes if n.costly]
    assert len(steps) >= 3, [(n.source, n.elements_read) for n in steps]  # g[0], the items of xs, the store


MODULE_WITH = """
import threading


class Held:
    def __init__(self, lock):
        self.lock = lock

    def __enter__(self):
        ACQUIRE
        return 5

    def __exit__(self, exc_type, exc, tb):
        RELEASE


lock = threading.Lock()
n = [0]


def work():
    with Held(lock) as five:
        n[0] = n[0] + five


t = threading.Thread(target=work)
t.start()
with Held(lock) as k:
    n[0] = n[0] + k
with lock as got:
    assert got
t.join()
assert n[0] == 10, n
"""


def test_with_in_the_main_thread_and_a_manager_made_in_the_with() -> None:
    verdicts(MODULE_WITH.replace("ACQUIRE", "self.lock.acquire()").replace("RELEASE", "self.lock.release()"), "ok")
    verdicts(MODULE_WITH.replace("ACQUIRE", "pass").replace("RELEASE", "pass"), "violation", "assertion")


# -- random programs: python3 agrees on one thread, every reduction agrees with none on two ----------------------

def _body(rng: random.Random, depth: int, ind: int, held: bool, deep: int = 2) -> list[str]:
    p = " " * ind
    out: list[str] = []
    for _ in range(rng.randint(1, 3 if deep > 1 else 2)):
        k = rng.random()
        g = rng.choice(["x", "y"])
        if depth > deep or k < 0.25:
            out.append(f"{p}{g} = {g} + {rng.randint(1, 3)}")
        elif k < 0.35:
            out += [f"{p}if {g} % 2 == {rng.randint(0, 1)}:", f"{p}    raise E1({g})"]
        elif k < 0.45:
            out.append(f"{p}{g} = add({g}, *({rng.randint(0, 2)}, {rng.randint(0, 2)}))"
                       if rng.random() < 0.5 else f"{p}{g} = run(add, {g}, {rng.randint(1, 2)})")
        elif k < 0.6 and not held:
            swallow = rng.choice(["True", "False"])
            out += [f"{p}with Guard(m, {swallow}) as s{depth}:", f"{p}    {g} = {g} + (1 if s{depth} else 2)"]
            out += _body(rng, depth + 1, ind + 4, True, deep)
        elif k < 0.7 and not held:
            out += [f"{p}with m as got{depth}:", f"{p}    {g} = {g} + (3 if got{depth} else 5)"]
            out += _body(rng, depth + 1, ind + 4, True, deep)
        elif k < 0.85:
            out += [f"{p}for i{depth} in range(2):"] + _body(rng, depth + 1, ind + 4, held, deep)
            out += [f"{p}    if {g} > {rng.randint(2, 8)}:", f"{p}        break"]
            out += [f"{p}else:"] + _body(rng, depth + 1, ind + 4, held, deep)
        else:
            out += [f"{p}n{depth} = 0", f"{p}while n{depth} < 2:", f"{p}    n{depth} += 1"]
            out += _body(rng, depth + 1, ind + 4, held, deep)
            out += [f"{p}    if {g} % 3 == {rng.randint(0, 2)}:", f"{p}        break"]
            out += [f"{p}else:"] + _body(rng, depth + 1, ind + 4, held, deep)
    return out


_PRELUDE = ["import threading", "m = threading.Lock()", "x = 0", "y = 0", "", "", "class E1(Exception):",
            "    pass", "", "", "class Guard:", "    def __init__(self, lock, swallow):", "        self.lock = lock",
            "        self.swallow = swallow", "", "    def __enter__(self):", "        self.lock.acquire()",
            "        return self.swallow", "", "    def __exit__(self, exc_type, exc, tb):",
            "        self.lock.release()", "        return self.swallow and exc_type is not None", "", "",
            "def add(g, *ks):", "    return g + sum(ks)", "", "", "def run(fn, *args):", "    return fn(*args)", ""]


def _thread(rng: random.Random, name: str, deep: int = 2) -> list[str]:
    return [f"def {name}():", "    global x, y", "    try:", *_body(rng, 0, 8, False, deep), "    except E1:",
            "        pass", ""]


def sequential_program(seed: int) -> str:
    rng = random.Random(seed)
    return "\n".join([*_PRELUDE, *_thread(rng, "w0"), "w0()", "assert (x, y) == EXPECTED, (x, y)", ""])


def threaded_program(seed: int) -> str:
    rng = random.Random(seed)
    return "\n".join([*_PRELUDE, *_thread(rng, "w0", 0), *_thread(rng, "w1", 0),
                      "t0 = threading.Thread(target=w0)", "t1 = threading.Thread(target=w1)", "t0.start()",
                      "t1.start()", "t0.join()", "t1.join()", f"assert x + y != {rng.randint(4, 14)}", ""])


@pytest.mark.parametrize("seed", range(0, 200, 10))
def test_random_programs_agree_with_python3(tmp_path: Path, seed: int) -> None:
    source = sequential_program(seed)
    path = tmp_path / "model.py"
    path.write_text(source.replace("EXPECTED", "None"))
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60)
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("AssertionError: "), last
    value = last.split(": ", 1)[1]
    r = movers.check(source=source.replace("EXPECTED", value))
    assert r.verdict == "ok", (source, value, r.error, [(v.kind, v.message) for v in r.violations])
    r = movers.check(source=source.replace("EXPECTED", "(-1, -1)"))
    assert r.verdict == "violation", (source, r.error)


@pytest.mark.parametrize("seed", [0, 9, 14, 16, 23, 33, 34, 38])
def test_random_threaded_programs_every_reduction_agrees(seed: int) -> None:
    run_differential(threaded_program(seed), list(REDUCTIONS), compare_kinds=False, max_states=20000)


# -- **kwargs ---------------------------------------------------------------------------------------------------

KWARGS = """
import threading

out = []


def describe(name, *args, sep="-", **kw):
    return (name, args, sep, sorted(kw.items()))


def call(fn, /, *args, **kwargs):
    return fn(*args, **kwargs)


class Item:
    def __init__(self, fn, args, kwargs):
        self.fn = fn
        self.args = args
        self.kwargs = kwargs

    def run(self):
        return self.fn(*self.args, **self.kwargs)


def main():
    out.append(describe("a"))
    out.append(describe("b", 1, 2, sep="+", x=1, y=2))
    opts = {"z": 3, "sep": "*"}
    out.append(describe("c", **opts))
    out.append(call(describe, "d", 5, w=4))
    out.append(call(describe, name="e", fn=1))
    it = Item(describe, ("f", 7), {"q": 8})
    out.append(it.run())
    g = lambda **k: len(k)
    out.append(g(a=1, b=2))
    assert out == EXPECTED, out


t = threading.Thread(target=main)
t.start()
t.join()
"""
KWARGS_OUT = ("[('a', (), '-', []), ('b', (1, 2), '+', [('x', 1), ('y', 2)]), ('c', (), '*', [('z', 3)]), "
              "('d', (5,), '-', [('w', 4)]), ('e', (), '-', [('fn', 1)]), ('f', (7,), '-', [('q', 8)]), 2]")


@pytest.mark.parametrize("expected,ok", [(KWARGS_OUT, True), (KWARGS_OUT.replace("[('z', 3)]", "[]"), False)])
def test_kwargs_agree_with_python3(tmp_path: Path, expected: str, ok: bool) -> None:
    agree(KWARGS.replace("EXPECTED", expected), tmp_path, ok)


@pytest.mark.parametrize("call,message", [
    ("describe('x', **{1: 2})", "keywords must be strings"),
    ("describe('x', **[1])", "argument after ** must be a mapping"),
    ("describe('x', **{'name': 1})", "got multiple values for argument 'name'"),
    ("call(describe, 'x', **{'w': 1}, w=2)", "got multiple values for keyword argument 'w'"),
])
def test_kwargs_errors_are_cpythons(call: str, message: str) -> None:
    src = KWARGS.replace('    out.append(describe("a"))\n', f"    {call}\n", 1).replace("EXPECTED", KWARGS_OUT)
    r = movers.check(source=src)
    found = r.error or "" if r.verdict == "error" else r.violations[0].message if r.violations else ""
    assert message in found, (r.verdict, r.error, r.violations)


REGISTRY = """
import threading

lock = threading.Lock()
registry = []


def register(**opts):
    registry.append(opts)


def call(fn, *args, **kwargs):
    fn(*args, **kwargs)


def bump():
    d = registry[0]
    with lock:
        v = d["n"]
        d["n"] = v + 1


call(register, n=0)
ts = [threading.Thread(target=bump) for _ in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert registry[0]["n"] == 2, registry
"""


def test_a_kwargs_dict_that_escapes_is_shared_for_every_reduction() -> None:
    verdicts(REGISTRY, "ok")
    # The read and the write in two critical sections: a lost update on the dict **kwargs made.
    bug = REGISTRY.replace('        d["n"] = v + 1\n', '    with lock:\n        d["n"] = v + 1\n')
    assert bug != REGISTRY
    verdicts(bug, "violation", "assertion")


SUPER = """
class A:
    def __init__(self, *args, **kw):
        self.args = args
        self.kw = kw


class B(A):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)


b = B(1, 2, x=3)
assert b.args == EXPECTED and b.kw == {"x": 3}
"""


@pytest.mark.parametrize("expected,ok", [("(1, 2)", True), ("(1, 2, 3)", False)])
def test_super_init_passes_star_args_on(tmp_path: Path, expected: str, ok: bool) -> None:
    agree(SUPER.replace("EXPECTED", expected), tmp_path, ok)



# -- an executor written as CPython's (submit(self, fn, /, *args, **kwargs), with … as, fn(*args, **kwargs)) ----

EXECUTOR = """
import threading


class Future:
    def __init__(self):
        self._condition = threading.Condition()
        self._done = False
        self._result = None
        self._exception = None

    def set_result(self, result):
        with self._condition:
            self._result = result
            self._done = True
            self._condition.notify_all()

    def set_exception(self, exception):
        with self._condition:
            self._exception = exception
            self._done = True
            self._condition.notify_all()

    def result(self):
        with self._condition:
            while not self._done:
                self._condition.wait()
            if self._exception is not None:
                raise self._exception
            return self._result


class _WorkItem:
    def __init__(self, future, fn, args, kwargs):
        self.future = future
        self.fn = fn
        self.args = args
        self.kwargs = kwargs

    def run(self):
        try:
            result = self.fn(*self.args, **self.kwargs)
        except BaseException as exc:
            self.future.set_exception(exc)
        else:
            self.future.set_result(result)


class Executor:
    def __init__(self):
        self._lock = threading.Lock()
        self._threads = []

    def submit(self, fn, /, *args, **kwargs):
        with self._lock:
            f = Future()
            w = _WorkItem(f, fn, args, kwargs)
            t = threading.Thread(target=w.run)
            self._threads.append(t)
            t.start()
            return f

    def shutdown(self, wait=True):
        if wait:
            for t in self._threads:
                t.join()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.shutdown(wait=True)
        return False


counter = [0]
lock = threading.Lock()


def inc(k, by=1):
    with lock:
        counter[0] = counter[0] + by
    return k


def main():
    with Executor() as ex:
        fs = [ex.submit(inc, i, by=2) for i in range(2)]
        rs = [f.result() for f in fs]
    assert rs == [0, 1]
    assert counter[0] == 4, counter


m = threading.Thread(target=main)
m.start()
m.join()
"""


def test_an_executor_written_as_cpythons() -> None:
    verdicts(EXECUTOR, "ok")
    bug = EXECUTOR.replace("    with lock:\n        counter[0] = counter[0] + by\n",
                           "    counter[0] = counter[0] + by\n")
    assert bug != EXECUTOR
    verdicts(bug, "violation", "assertion")


NOT_A_MANAGER = """
import threading

x = [5]
caught = []


def w():
    try:
        with x[0]:
            pass
    except TypeError as e:
        caught.append(str(e))


t = threading.Thread(target=w)
t.start()
t.join()
assert caught == EXPECTED, caught
"""


NOT_A_MANAGER_OUT = '["\'int\' object does not support the context manager protocol"]'


@pytest.mark.parametrize("expected,ok", [(NOT_A_MANAGER_OUT, True), ("[]", False)])
def test_with_on_a_value_that_is_not_a_lock_raises_cpythons_type_error(tmp_path: Path, expected: str,
                                                                        ok: bool) -> None:
    agree(NOT_A_MANAGER.replace("EXPECTED", expected), tmp_path, ok)


THREAD_KWARGS = """
import threading

lock = threading.Lock()
shared = []


def keep(first, *rest, **opts):
    shared.append(opts)
    assert first == 1 and rest == (2,)


def bump():
    d = shared[0]
    with lock:
        v = d["n"]
        d["n"] = v + 1


t = threading.Thread(target=keep, args=(1, 2), kwargs={"n": 0})
t.start()
t.join()
ts = [threading.Thread(target=bump) for _ in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert shared[0]["n"] == 2, shared
"""


def test_a_thread_target_with_star_args_and_kwargs() -> None:
    verdicts(THREAD_KWARGS, "ok")
    bug = THREAD_KWARGS.replace('        d["n"] = v + 1\n', '    with lock:\n        d["n"] = v + 1\n')
    assert bug != THREAD_KWARGS
    verdicts(bug, "violation", "assertion")
