"""Exceptions (docs/language.md, "Exceptions"): ``try``/``except``/``else``/``finally``, ``raise``, the built-in
exception classes and the model's own, runtime errors caught as the exception CPython raises, ``with``
blocks that release on the way out, and an uncaught exception ending its thread as a violation. Each
threaded model and its bug twin are checked under ``none`` and every reduction that accepts them; the
single-thread ones also under python3, which must agree."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import movers

try:
    from differential import run_differential
except ImportError:  # tests/ imported as a package
    from tests.differential import run_differential
from movers.lang.compiler import compile_model
from movers.reduce import REDUCTIONS

ROOT = Path(__file__).resolve().parent.parent


def src(text: str) -> str:
    return "from movers.lang import *\n" + textwrap.dedent(text)


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
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, str(path)], env=env, capture_output=True, timeout=60).returncode


# -- single thread: the value CPython computes ------------------------------------------------------------------

SEQUENTIAL = """
a = [1, 2, 3]
r = 0


class MyError(Exception):
    pass


class Sub(MyError):
    def __init__(self, code):
        self.code = code


def f(i):
    if i > 2:
        raise Sub(i)
    return a[i]


def g():
    global r
    try:
        return 1
    finally:
        r += 1000000


def main():
    global r
    try:
        x = a[5]
        r += 99999999
    except IndexError as e:
        r += 1
    try:
        y = 1 // 0
    except (ValueError, ArithmeticError):
        r += 10
    try:
        f(7)
    except MyError as e:
        assert e.code == 7 and e.args == (7,)
        r += 100
    try:
        try:
            raise ValueError
        finally:
            r += 1000
    except Exception:
        r += 10000
    try:
        pass
    except LookupError:
        r += 99999999
    else:
        r += 100000
    r += g()
    for i in range(3):
        try:
            if i == 1:
                continue
            if i == 2:
                break
        finally:
            r += 10000000
    try:
        try:
            a.pop(7)
        except KeyError:
            r += 99999999
    except LookupError as e:
        r += 100000000
        try:
            raise
        except IndexError:
            r += 1000000000
    m = Lock()
    try:
        m.release()
    except RuntimeError:
        r += 10000000000
    assert r == TOTAL


main()
"""


@pytest.mark.parametrize("total,verdict,code", [(11130111112, "ok", 0), (11130111111, "violation", 1)])
def test_sequential_agrees_with_python3(tmp_path: Path, total: int, verdict: str, code: int) -> None:
    source = src(SEQUENTIAL.replace("TOTAL", str(total)))
    r = movers.check(source=source)
    assert r.verdict == verdict, (r.error, [(v.kind, v.message) for v in r.violations])
    assert python3(source, tmp_path) == code


NESTED = """r = 0
def f(n):
    global r
    for i in range(n):
        try:
            try:
                if i == 1:
                    return 7
            finally:
                r += 1
                if i == 0:
                    continue
        except ValueError as e:
            return 8
        finally:
            r += 10
    return 9
def g():
    global r
    try:
        x = [1][3]
    except IndexError:
        try:
            return 5
        finally:
            r += 100
    return 6
def main():
    global r
    v = f(3)
    w = g()
    try:
        try:
            raise KeyError(3)
        except KeyError as e:
            r += 1000
            raise
    except LookupError as e:
        assert e.args == (3,)
        r += 10000
    assert (v, w, r) == (7, 5, TOTAL), (v, w, r)
main()
"""


@pytest.mark.parametrize("total,verdict,code", [(11122, "ok", 0), (11123, "violation", 1)])
def test_nested_finally_return_continue_and_reraise_agree_with_python3(tmp_path: Path, total: int, verdict: str,
                                                                       code: int) -> None:
    source = src(NESTED.replace("TOTAL", str(total)))
    r = movers.check(source=source)
    assert r.verdict == verdict, (r.error, [(v.kind, v.message) for v in r.violations])
    assert python3(source, tmp_path) == code


def test_an_uncaught_exception_in_module_code_is_reported_as_before() -> None:
    r = movers.check(source=src("class E(Exception):\n    pass\nraise E(4)\n"))
    assert r.verdict == "violation" and r.violations[0].kind == "runtime-error"
    assert "E: 4" in r.violations[0].message
    caught = "x = 0\ntry:\n    x = [1][4]\nexcept IndexError as e:\n    x = len(e.args)\nassert x == 1\n"
    assert movers.check(source=src(caught)).verdict == "ok"


# -- threads -------------------------------------------------------------------------------------------------------

WITH_RELEASES = """
lock = Lock()
a = [0]
count = 0


def worker(i):
    global count
    try:
        with lock:
            count += 1
            x = a[i]
            count += 10
    except IndexError:
        pass


def checker():
    t0.join()
    t1.join()
    with lock:
        assert count == 12


t0 = Thread(target=worker, args=(5,))
t1 = Thread(target=worker, args=(0,))
t0.start()
t1.start()
Thread(target=checker).start()
"""

SKIPS_RELEASE = """
lock = Lock()
a = [0]
count = 0


def worker(i):
    global count
    try:
        lock.acquire()
        count += 1
        x = a[i]
        lock.release()
    except IndexError:
        pass


t0 = Thread(target=worker, args=(5,))
t1 = Thread(target=worker, args=(0,))
t0.start()
t1.start()
"""


def test_with_lock_releases_when_an_exception_passes() -> None:
    verdicts(src(WITH_RELEASES), "ok")


def test_an_exception_that_skips_a_release_deadlocks() -> None:
    verdicts(src(SKIPS_RELEASE), "violation", "deadlock")


SWALLOWS = """
lock = Lock()
a = [0]
x = 1
y = 1


def transfer(i):
    global x, y
    with lock:
        try:
            x -= 1
            v = a[i]
            y += 1
        except IndexError:
            RECOVER


def checker():
    with lock:
        assert x + y == 2


Thread(target=transfer, args=(5,)).start()
Thread(target=checker).start()
"""


def test_a_handler_that_leaves_state_inconsistent_is_found() -> None:
    verdicts(src(SWALLOWS.replace("RECOVER", "pass")), "violation", "assertion")
    verdicts(src(SWALLOWS.replace("RECOVER", "x += 1")), "ok")


UNCAUGHT = """
a = [0]


class Stop(Exception):
    pass


def worker(i):
    if i > 0:
        raise Stop(i)
    try:
        x = a[3]
    except ValueError:
        pass


t = Thread(target=worker, args=(ARG,))
t.start()
"""


def test_an_uncaught_exception_kills_its_thread() -> None:
    verdicts(src(UNCAUGHT.replace("ARG", "4")), "violation", "runtime-error", "thread worker died: Stop: 4")
    # A runtime error no handler matches is reported where it happened, with its message of section 9.
    verdicts(src(UNCAUGHT.replace("ARG", "0")), "violation", "runtime-error", "list index 3 out of range (length 1)")
    r = movers.check(source=src("def w():\n    x = [1][2]\nThread(target=w).start()\n"))
    assert r.violations[0].kind == "runtime-error" and "out of range" in r.violations[0].message


FINALLY_RETURN = """
lock = Lock()
n = 0


def take():
    global n
    with lock:
        try:
            return n
        finally:
            n += 1


def worker():
    v = take()
    assert v < LIMIT


Thread(target=worker).start()
Thread(target=worker).start()
"""


def test_finally_runs_on_return() -> None:
    verdicts(src(FINALLY_RETURN.replace("LIMIT", "2")), "ok")
    verdicts(src(FINALLY_RETURN.replace("LIMIT", "1")), "violation", "assertion")


RELEASE_UNHELD = """
lock = Lock()
done = 0


def worker():
    global done
    try:
        lock.release()
    except RuntimeError:
        done += 1


def checker():
    t.join()
    assert done == EXPECTED


t = Thread(target=worker)
t.start()
Thread(target=checker).start()
"""


def test_releasing_an_unheld_lock_raises_runtime_error() -> None:
    verdicts(src(RELEASE_UNHELD.replace("EXPECTED", "1")), "ok")
    verdicts(src(RELEASE_UNHELD.replace("EXPECTED", "0")), "violation", "assertion")


def test_handlers_are_successors_of_the_nodes_they_protect() -> None:
    p = compile_model(src("""
        g = [0]
        def w():
            try:
                g[0] = 1
                g[0] = 2
            except IndexError:
                g[0] = 3
        Thread(target=w).start()
        """))
    code = next(c for c in p.codes() if c.name == "w")
    (intervals, handler, _, stops, _), = code.handlers
    assert [c.name for c in stops] == ["IndexError"]
    protected = [k for a, b in intervals for k in range(a, b)]
    assert protected and all(handler in code.nodes[k].succ for k in protected)


@pytest.mark.parametrize("bad,needle", [
    ("try:\n    pass\nexcept 3:\n    pass\n", "an except clause names an exception class"),
])
def test_rejected(bad: str, needle: str) -> None:
    with pytest.raises(movers.ModelSyntaxError if hasattr(movers, "ModelSyntaxError") else Exception) as e:
        compile_model(src("def w():\n" + textwrap.indent(bad, "    ")))
    assert needle in str(e.value)


ACROSS_FRAMES = """
lock = Lock()
n = 0


class Box:
    pass


box = Box()


def inner(i):
    global n
    with lock:
        n += 1
        if i > 0:
            raise ValueError(i)


def outer(i):
    try:
        with synchronized(box):
            inner(i)
    except ValueError as e:
        assert e.args == (i,)


def checker():
    t0.join()
    t1.join()
    with lock:
        assert n == EXPECTED
    with synchronized(box):
        pass


t0 = Thread(target=outer, args=(1,))
t1 = Thread(target=outer, args=(0,))
t0.start()
t1.start()
Thread(target=checker).start()
"""


def test_an_exception_leaves_locks_and_monitors_across_frames() -> None:
    verdicts(src(ACROSS_FRAMES.replace("EXPECTED", "2")), "ok")
    verdicts(src(ACROSS_FRAMES.replace("EXPECTED", "3")), "violation", "assertion")


def test_except_assertion_error_catches_a_failed_assert(tmp_path: Path) -> None:
    model = src("""
        caught = 0
        def main():
            global caught
            try:
                assert caught == 1
            except AssertionError:
                caught = 2
            try:
                with Lock():
                    assert caught == 5, "no"
            finally:
                caught += 1
        main()
        """)
    r = movers.check(source=model)
    assert r.verdict == "violation" and r.violations[0].kind == "assertion", r.error
    assert "no" in r.violations[0].message
    assert python3(model, tmp_path) == 1
    fixed = model.replace("caught == 5", "caught == 2")
    assert movers.check(source=fixed).verdict == "ok"
    assert python3(fixed, tmp_path) == 0


def test_an_exception_leaves_an_indivisible_block() -> None:
    model = src("""
        x = 0
        a = [0]
        def w():
            global x
            try:
                with indivisible():
                    x += 1
                    v = a[3]
            except IndexError:
                pass
            x += 10
        def c():
            t.join()
            assert x == EXPECTED
        t = Thread(target=w)
        t.start()
        Thread(target=c).start()
        """)
    verdicts(model.replace("EXPECTED", "11"), "ok")
    verdicts(model.replace("EXPECTED", "10"), "violation", "assertion")


# -- random single-thread programs: movers computes what python3 computes ---------------------------------------

EXC = ["ValueError", "IndexError", "KeyError", "LookupError", "ZeroDivisionError", "E1", "E2"]
CATCH = ["ValueError", "LookupError", "IndexError", "ArithmeticError", "Exception", "E1", "(E1, ValueError)",
         None]

def block(rng: random.Random, depth: int, in_loop: bool, ind: int) -> list[str]:
    out = []
    for _ in range(rng.randint(1, 3)):
        out += stmt(rng, depth, in_loop, ind)
    return out

def stmt(rng: random.Random, depth: int, in_loop: bool, ind: int) -> list[str]:
    p = " " * ind
    k = rng.random()
    c = rng.randint(1, 9)
    if depth > 2 or k < 0.3:
        return [f"{p}r = r * 3 + {c}"]
    if k < 0.4:
        e = rng.choice(EXC)
        arg = rng.randint(0, 5)
        return [f"{p}if r % {rng.randint(2, 4)} == {rng.randint(0, 1)}:", f"{p}    raise {e}({arg})"]
    if k < 0.45:
        return [f"{p}x = a[r % 5]", f"{p}r = r + x"]
    if k < 0.5:
        return [f"{p}r = r + 1 // (r % 3)"]
    if k < 0.55 and in_loop:
        return [f"{p}if r % 2 == 0:", f"{p}    {rng.choice(['break', 'continue'])}"]
    if k < 0.6:
        return [f"{p}if r % 5 == 1:", f"{p}    return r"]
    if k < 0.7 and not in_loop:
        return [f"{p}for i in range(3):"] + block(rng, depth + 1, True, ind + 4)
    lines = [f"{p}try:"] + block(rng, depth + 1, in_loop, ind + 4)
    n = rng.randint(0, 2)
    for _ in range(n):
        cl = rng.choice(CATCH if _ == n - 1 else CATCH[:-1])  # a bare except: must be last
        if cl is None:
            lines += [f"{p}except:"]
        else:
            lines += [f"{p}except {cl} as e{depth}:"] if rng.random() < 0.5 else [f"{p}except {cl}:"]
        body = block(rng, depth + 1, in_loop, ind + 4)
        if rng.random() < 0.2:
            body.append(f"{p}    raise")
        lines += body
    if n and rng.random() < 0.3:
        lines += [f"{p}else:"] + block(rng, depth + 1, in_loop, ind + 4)
    if n == 0 or rng.random() < 0.4:
        lines += [f"{p}finally:"] + block(rng, depth + 1, in_loop, ind + 4)
    return lines

def program(seed: int) -> str:
    rng = random.Random(seed)
    body = block(rng, 0, False, 4)
    return "\n".join([
        "from movers.lang import *", "a = [1, 2, 3]", "class E1(Exception):", "    pass",
        "class E2(E1):", "    pass",
        "def f():", "    r = 1"] + body + ["    return r",
        "def main():", "    r = 0", "    try:", "        r = f()", "    except Exception as e:",
        "        r = -1", "    assert r == EXPECTED, r", "main()", ""])


@pytest.mark.parametrize("seed", range(0, 400, 10))
def test_random_try_programs_agree_with_python3(tmp_path: Path, seed: int) -> None:
    source = program(seed)
    path = tmp_path / "model.py"
    path.write_text(source.replace("EXPECTED", "-99999"))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    p = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True, timeout=60)
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("AssertionError: "), last
    value = last.split(": ", 1)[1]
    r = movers.check(source=source.replace("EXPECTED", value))
    assert r.verdict == "ok", (source, value, r.error, [(v.kind, v.message) for v in r.violations])



# -- random threaded programs: every reduction agrees with none ------------------------------------------------------

def threaded_body(rng: random.Random, depth: int, ind: int, locks_held: frozenset[str]) -> list[str]:
    p = " " * ind
    out = []
    for _ in range(rng.randint(1, 3)):
        k = rng.random()
        g = rng.choice(["x", "y"])
        if depth > 2 or k < 0.3:
            out.append(f"{p}{g} = {g} + {rng.randint(1, 3)}")
        elif k < 0.45:
            exc = rng.choice(["ValueError", "IndexError", "E1"])
            out += [f"{p}if {g} % 2 == {rng.randint(0, 1)}:", f"{p}    raise {exc}({g})"]
        elif k < 0.55:
            out += [f"{p}v = a[{g} % 4]", f"{p}{g} = {g} + v"]
        elif k < 0.7 and "m" not in locks_held:
            out += [f"{p}with m:"] + threaded_body(rng, depth + 1, ind + 4, locks_held | {"m"})
        elif k < 0.75 and "m" not in locks_held:
            out += [f"{p}m.acquire()"] + threaded_body(rng, depth + 1, ind, locks_held | {"m"}) + [f"{p}m.release()"]
        else:
            out += [f"{p}try:"] + threaded_body(rng, depth + 1, ind + 4, locks_held)
            c = rng.choice(["Exception", "LookupError", "ValueError", "E1", None])
            if c:
                out += [f"{p}except {c}:"] + threaded_body(rng, depth + 1, ind + 4, locks_held)
            if c is None or rng.random() < 0.4:
                out += [f"{p}finally:"] + threaded_body(rng, depth + 1, ind + 4, locks_held)
    return out

def threaded_program(seed: int) -> str:
    rng = random.Random(seed)
    lines = ["from movers.lang import *", "m = Lock()", "a = [1, 2, 3]", "x = 0", "y = 0",
             "class E1(Exception):", "    pass"]
    for t in range(2):
        lines += [f"def w{t}():", "    global x, y", "    try:", *threaded_body(rng, 0, 8, frozenset()),
                  "    except Exception:", "        pass"]
    lines += ["def c():", "    t0.join()", "    t1.join()", f"    assert x + y != {rng.randint(0, 12)}",
              "t0 = Thread(target=w0)", "t1 = Thread(target=w1)", "t0.start()", "t1.start()",
              "Thread(target=c).start()", ""]
    return "\n".join(lines)


@pytest.mark.parametrize("seed", [3, 17, 42, 77, 101, 150])
def test_random_threaded_try_programs_every_reduction_agrees(seed: int) -> None:
    run_differential(threaded_program(seed), list(REDUCTIONS), compare_kinds=False, max_states=20000)
