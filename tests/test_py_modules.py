"""Plain Python modules (issue 24, items 1 and 4): the standard library imports, resolved to the builtins they
name; other imports refused; the module's own code as the main thread, interleaving with the threads it starts;
daemon threads, which the program does not wait for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import movers
from movers.lang.compiler import ModelSyntaxError, compile_model
from movers.reduce import REDUCTIONS

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# A counter two threads increment; the module's code joins them and asserts, as CPython programs do.
JOINED = '''\
import threading

counter = 0
lock = threading.Lock()


def work():
    global counter
    with lock:
        counter += 1


t1 = threading.Thread(target=work)
t2 = threading.Thread(target=work)
t1.start()
t2.start()
t1.join()
t2.join()
assert counter == 2, counter
print("ok", counter)
'''
# Its bug twin: the increment split into a read and a write, without the lock.
JOINED_BUG = JOINED.replace("    with lock:\n        counter += 1\n", "    c = counter\n    counter = c + 1\n")

ALIASED = '''\
import threading as th
from threading import Thread as T, Lock as L

counter = 0
lock = L()


def work():
    global counter
    with lock:
        counter += 1


ts = [T(target=work), th.Thread(target=work)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert counter == 2
'''

MAIN_GUARD = '''\
from threading import Thread, Lock

counter = 0
lock = Lock()


def work():
    global counter
    with lock:
        counter += 1


def main():
    t = Thread(target=work)
    t.start()
    t.join()
    assert counter == 1


if __name__ == "__main__":
    main()
'''

# The main thread reads what a thread writes, with no join: both orders are possible.
UNJOINED_READ = '''\
import threading

flag = 0


def work():
    global flag
    flag = 1


threading.Thread(target=work).start()
assert flag == 0
'''

# The main thread writes flag, then box[0], after the start: the worker may read the old flag and the new
# box[0]. flag is written only by the module's code: it is still not final (a read of it is an access).
LATE_WRITE = '''\
import threading

flag = 0
box = [0]


def work():
    a = flag
    b = box[0]
    assert not (a == 0 and b == 1)


t = threading.Thread(target=work)
t.start()
flag = 1
box[0] = 1
t.join()
'''

DAEMON = '''\
import threading

cond = threading.Condition()
served = 0


def server():
    global served
    with cond:
        while True:
            cond.wait()
            served += 1


def main():
    t = threading.Thread(target=server, daemon=True)
    t.start()
    with cond:
        cond.notify()


if __name__ == "__main__":
    main()
'''


def _verdicts(source: str) -> dict[str, str]:
    """The verdict under every reduction that accepts the model (a refusal is an 'error' verdict)."""
    out = {}
    for r in REDUCTIONS:
        res = movers.check(source=source, reduction=r, time_limit=60)
        if res.verdict != "error":
            out[r] = res.verdict
    assert "none" in out
    return out


@pytest.mark.parametrize(("source", "verdict"), [
    (JOINED, "ok"), (JOINED_BUG, "violation"), (ALIASED, "ok"), (MAIN_GUARD, "ok"),
    (MAIN_GUARD.replace("counter == 1", "counter == 0"), "violation"), (UNJOINED_READ, "violation"),
    (UNJOINED_READ.replace("assert flag == 0", "assert flag in (0, 1)"), "ok"), (LATE_WRITE, "violation"),
    # Message passing: box[0] written before flag, read after it: a worker that sees the flag sees box[0].
    (LATE_WRITE.replace("flag = 1\nbox[0] = 1\n", "box[0] = 1\nflag = 1\n")
     .replace("a == 0 and b == 1", "a == 1 and b == 0"), "ok"),
    (LATE_WRITE.replace("a == 0 and b == 1", "a == 1 and b == 0"), "violation"),
])
def test_main_thread_under_every_reduction(source: str, verdict: str) -> None:
    verdicts = _verdicts(source)
    assert set(verdicts.values()) == {verdict}, verdicts


def test_the_bug_is_found_in_the_main_threads_assert() -> None:
    r = movers.check(source=JOINED_BUG)
    (v,) = r.violations
    assert v.kind == "assertion" and v.line == 19


def test_the_module_code_is_a_thread_named_main_thread(tmp_path: Path) -> None:
    f = tmp_path / "bug.py"
    f.write_text(JOINED_BUG)
    p = subprocess.run([sys.executable, "-m", "movers.cli", "check", str(f)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 1 and "MainThread" in p.stdout and "t1.join()" in p.stdout, p.stdout
    p = compile_model(JOINED)
    assert p.main_thread and p.init in p.codes()


def test_a_deterministic_program_agrees_with_cpython(tmp_path: Path) -> None:
    f = tmp_path / "joined.py"
    f.write_text(JOINED)
    run = subprocess.run([sys.executable, str(f)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout == "ok 2\n"
    assert movers.check(f).verdict == "ok"


def test_module_code_that_only_starts_threads_keeps_its_states() -> None:
    # Module code that ends with its start() calls runs whole before the threads: no main thread, and the
    # states of the examples are those documented before the main thread existed (examples/README.md).
    path = EXAMPLES / "sc_example.py"
    p = compile_model(path.read_text(), str(path))
    assert not p.main_thread and p.init not in p.codes()
    assert movers.check(path, granularity="statement").stats.states == 106
    r = movers.check(EXAMPLES / "bounded_buffer.py")
    assert (r.verdict, r.stats.states, r.stats.transitions) == ("ok", 292, 336)
    # Its module code goes on after the first start(), writing only a global no thread reads: no main thread.
    path = EXAMPLES / "atomicity_bluetooth.py"
    assert not compile_model(path.read_text(), str(path)).main_thread
    r = movers.check(path)
    assert (r.verdict, r.stats.states, r.stats.transitions) == ("ok", 52, 85)


def test_daemon_threads_left_blocked_are_no_deadlock() -> None:
    assert set(_verdicts(DAEMON).values()) == {"ok"}
    r = movers.check(source=DAEMON.replace("daemon=True", "daemon=False"))
    assert r.verdict == "violation" and r.violations[0].kind == "deadlock"
    r = movers.check(source=DAEMON.replace(", daemon=True", ""))
    assert r.verdict == "violation" and r.violations[0].kind == "deadlock"


def test_a_blocked_non_daemon_thread_beside_a_daemon_is_a_deadlock() -> None:
    src = DAEMON.replace("    t.start()\n", "    t.start()\n    threading.Thread(target=server).start()\n")
    r = movers.check(source=src)
    assert r.verdict == "violation" and r.violations[0].kind == "deadlock"


def test_daemon_must_be_a_constant() -> None:
    with pytest.raises(ModelSyntaxError, match="daemon= must be True or False"):
        compile_model(DAEMON.replace("daemon=True", "daemon=served"))


@pytest.mark.parametrize(("line", "name"), [
    ("import threading\nx = threading.Lock()\n", "Lock"),
    ("import threading as th\nx = th.Semaphore(2)\n", "Semaphore"),
    ("from threading import Lock as L\nx = L()\n", "Lock"),
    ("from threading import RLock, BoundedSemaphore, Event, Barrier, Condition\nx = RLock()\n", "RLock"),
])
def test_imported_names_resolve_to_the_builtins(line: str, name: str) -> None:
    p = compile_model(line)
    r = movers.check(source=line)
    assert r.verdict == "ok" and p.globals == ["x"]


@pytest.mark.parametrize(("source", "where", "needle"), [
    ("import os\n", "1:1", "import of 'os' is not supported: movers checks models that use threading, queue"),
    ("from foo import bar\n", "1:1", "import of 'foo' is not supported"),
    ("import numpy as np\n", "1:1", "import of 'numpy' is not supported"),
    ("import random\n", "1:1", "choose"),
    ("from random import randint\n", "1:1", "choose"),
    ("from . import x\n", "1:1", "is not supported"),
    ("from threading import Timer\n", "1:1", "'threading.Timer' is not supported"),
    ("import threading\nt = threading.Timer(1, f)\n", "2:5", "'threading.Timer' is not supported"),
    ("from queue import PriorityQueue\n", "1:1", "'queue.PriorityQueue' is not supported: movers models queue's"),
    ("import queue\nq = queue.PriorityQueue()\n", "2:5", "'queue.PriorityQueue' is not supported"),
    ("import concurrent.futures\nx = concurrent.futures.ProcessPoolExecutor()\n", "2:5",
     "'concurrent.futures.ProcessPoolExecutor' is not supported: movers models concurrent.futures's"),
    ("from collections import OrderedDict\n", "1:1",
     "'collections.OrderedDict' is not supported: movers models collections's defaultdict, deque"),
    ("import threading\nx = threading\n", "2:5", "the module 'threading' as a value"),
    ("def f():\n    import threading\n", "2:5", "only at the top level"),
    ("from threading import *\n", "1:1", "import the names you use"),
])
def test_refused_imports_exit_2_with_position(tmp_path: Path, source: str, where: str, needle: str) -> None:
    f = tmp_path / "model.py"
    f.write_text(source)
    p = subprocess.run([sys.executable, "-m", "movers.cli", "check", str(f)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert f"{f}:{where}: " in p.stderr and needle in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_thread_subclass_and_tid_of_the_main_thread() -> None:
    src = (
        "import threading\nfrom movers.lang import *\n\n\nclass W(threading.Thread):\n    def __init__(self):\n"
        "        super().__init__()\n        self.seen = None\n\n    def run(self):\n        self.seen = tid()\n\n\n"
        "w = W()\nw.start()\nw.join()\nassert w.seen == 0 and tid() == 1\n"
    )
    assert set(_verdicts(src).values()) == {"ok"}
    assert movers.check(source=src.replace("tid() == 1", "tid() is None")).verdict == "violation"


def test_thread_kwargs_not_a_display_is_refused_with_a_hint() -> None:
    with pytest.raises(ModelSyntaxError, match=r"kwargs=…\) must be a dict display with string keys"):
        compile_model("import threading\nd = {}\ndef f(x):\n    pass\nthreading.Thread(target=f, kwargs=d).start()\n")


def test_movers_lang_models_keep_working() -> None:
    src = "from movers.lang import *\nx = 0\ndef w():\n    global x\n    x = choose([1, 2])\nThread(target=w).start()\n"
    assert movers.check(source=src).verdict == "ok"
