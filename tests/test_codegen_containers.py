"""The fast back end on what the Python issue added (lang/codegen.py): dicts, lists that grow, strings, the
modelled ``queue`` library, exceptions; and the plain search's per-thread fallback
(``TransitionSystem.successors``), where a state whose steps are partly generated computes each once.

As in tests/test_codegen.py, every search is compared with and without the fast path, under ``none`` and the
reductions (which run the tracked variants: their Effects must be the closures'), at both granularities."""

from __future__ import annotations

from typing import Any

import pytest
from differential import search_summary
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import movers
from movers.semantics import system

REDUCTIONS = ["none", "optimistic", "static-por", "transactions", "dwyer-sda"]




def _both(source: str, **kw: Any) -> tuple[tuple[object, ...], tuple[object, ...]]:
    kw.setdefault("time_limit", 60)
    kw.setdefault("max_states", 20_000)
    fast = search_summary(movers.check(source, **kw))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(system, "FAST_PATH", False)
        slow = search_summary(movers.check(source, **kw))
    return fast, slow


def _counts(source: str, **kw: Any) -> tuple[int, int]:
    """Steps run on the closures, and states whose ``successors`` gave up (their successors computed twice)."""
    ts = system.TransitionSystem
    n = [0, 0]
    real_closures, real_given_up = ts._run_closures, ts.given_up_successors

    def closures(self: Any, *a: Any) -> Any:
        n[0] += 1
        return real_closures(self, *a)

    def given_up(self: Any, *a: Any) -> Any:
        # False: the state's successors are given up (``successors`` gives None, the plain search's
        # transition cache too), and ``steps`` computes them again.
        ok = real_given_up(self, *a)
        n[1] += not ok
        return ok

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ts, "_run_closures", closures)
        mp.setattr(ts, "given_up_successors", given_up)
        movers.check(source, **kw)
    return n[0], n[1]


DICT = """
import threading

hits = {}
lock = threading.Lock()


def worker(k):
    with lock:
        hits[k] = hits.get(k, 0) + 1
    with lock:
        hits[k] = hits.get(k, 0) + 1


threading.Thread(target=worker, args=(0,)).start()
threading.Thread(target=worker, args=(1,)).start()
threading.Thread(target=worker, args=(0,)).start()
"""

# Keys and values the fast path does not take (a string key, a boolean key equal to 1, a value that is a
# string, a tuple): the closures' business, in the same dict as int keys.
DICT_MIXED = """
import threading

d = {"a": 1, 2: True}
lock = threading.Lock()


def worker(k):
    with lock:
        d[k] = d.get(k, 0) + 1
    d[True] = d.get(1, 5)
    x = d.get("a", 0)
    d[k + 10] = "s" if x else (1, 2)
    d[k] = d.get(k + 10, 0) == "s"


threading.Thread(target=worker, args=(1,)).start()
threading.Thread(target=worker, args=(2,)).start()
"""

# A missing key (KeyError), a list index out of range (IndexError), raised and caught or not.
DICT_ERRORS = """
import threading

d = {}
xs = [0, 0]
lock = threading.Lock()


def reader():
    v = d[1]
    xs[v] = 1


def writer():
    d[1] = 1
    d[1] = 3
    try:
        xs[d[1]] = 2
    except IndexError:
        d[2] = 2


threading.Thread(target=writer).start()
threading.Thread(target=reader).start()
"""

LISTS = """
import threading

xs = []
n = [0]
lock = threading.Lock()


def producer(v):
    with lock:
        xs.append(v)
        n[0] = n[0] + 1


def consumer():
    with lock:
        if n[0] > 0:
            n[0] = n[0] - 1
            y = xs.pop(0)
    if xs:
        xs[0] = xs[-1] + 1


threading.Thread(target=producer, args=(1,)).start()
threading.Thread(target=producer, args=(2,)).start()
threading.Thread(target=consumer).start()
"""

QUEUE = """
import queue
import threading

q = queue.SimpleQueue()
got = {}


def producer(v):
    q.put(v)
    q.put(v + 1)


def consumer(k):
    x = q.get()
    try:
        y = q.get_nowait()
    except queue.Empty:
        y = -1
    got[k] = x + y


threading.Thread(target=producer, args=(1,)).start()
threading.Thread(target=consumer, args=(0,)).start()
threading.Thread(target=consumer, args=(1,)).start()
"""

BOUNDED = """
import queue
import threading

q = queue.Queue(maxsize=1)
total = [0]


def producer(v):
    q.put(v)
    q.put(v)


def consumer():
    a = q.get()
    b = q.get()
    total[0] = total[0] + a + b
    q.task_done()


threading.Thread(target=producer, args=(1,)).start()
threading.Thread(target=consumer).start()
"""

STRINGS = """
import threading

names = {}
lock = threading.Lock()
status = "idle"


def worker(k):
    global status
    with lock:
        names[k] = "w" + str(k)
        status = "busy"
    n = names.get(k, "")
    assert n == "w" + str(k)
    status = "idle"


threading.Thread(target=worker, args=(1,)).start()
threading.Thread(target=worker, args=(2,)).start()
"""

# Semaphores (the queue library's permits) acquired and released as statements and as values, a
# BoundedSemaphore released past its bound (ValueError, the closures'), and method calls whose defaults fill
# parameters (``q.put(v)`` binds ``block`` and ``timeout``), with a default the fast path does not take.
SEMAPHORES = """
import threading

s = threading.Semaphore(1)
b = threading.BoundedSemaphore(1)
out = []


class Box:
    def __init__(self):
        self.n = 0

    def add(self, k, step=1, tag="x", flag=True):
        self.n = self.n + k * step if flag else self.n
        return self.n


box = Box()


def worker(k):
    got = s.acquire()
    v = box.add(k)
    w = box.add(k, 2)
    s.release()
    b.acquire()
    out.append(v + w)
    b.release()


def spoiler():
    b.release()


threading.Thread(target=worker, args=(1,)).start()
threading.Thread(target=worker, args=(2,)).start()
threading.Thread(target=spoiler).start()
"""

MODELS = {"semaphores": SEMAPHORES, "dict": DICT, "dict_mixed": DICT_MIXED, "dict_errors": DICT_ERRORS, "lists": LISTS,
          "queue": QUEUE,
          "bounded": BOUNDED, "strings": STRINGS}


@pytest.mark.parametrize("granularity", ["access", "statement"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", list(MODELS))
def test_container_models_are_the_same_search_without_the_fast_path(name: str, reduction: str,
                                                                     granularity: str) -> None:
    fast, slow = _both(MODELS[name], reduction=reduction, granularity=granularity, max_violations=10)
    assert fast == slow


def test_the_errors_are_reported_as_the_closures_report_them() -> None:
    # A missing key read and an index out of range fall back; the closures report both, as they do alone.
    for kw in ({}, {"granularity": "statement"}):
        r = movers.check(DICT_ERRORS, max_violations=10, **kw)
        messages = " ".join(v.message for v in r.violations)
        assert r.verdict == "violation" and "KeyError: 1" in messages and "list index 3 out of range" in messages


@pytest.mark.parametrize("granularity", ["access", "statement"])
def test_the_dict_shape_runs_on_generated_code(granularity: str) -> None:
    # Before: no generated code in a model with a dict (every step on the closures, 99% of states twice).
    closures, twice = _counts(DICT, granularity=granularity)
    assert (closures, twice) == (0, 0)


@pytest.mark.parametrize("granularity", ["access", "statement"])
def test_the_queue_shape_runs_on_generated_code(granularity: str) -> None:
    # SimpleQueue's put (indivisible: append, a permit released) and get (a permit taken, ``pop(0)``
    # returned), called with their defaults. Before: every step on the closures.
    src = QUEUE.replace("""    try:
        y = q.get_nowait()
    except queue.Empty:
        y = -1
""", "    y = q.get()\n").replace("q.put(v + 1)", "q.put(v + 1)\n    q.put(v)\n    q.put(v)")
    closures, twice = _counts(src, granularity=granularity)
    assert (closures, twice) == (0, 0)


def test_a_bounded_semaphore_released_too_often_is_the_closures_error() -> None:
    r = movers.check(SEMAPHORES)
    assert r.verdict == "violation" and "BoundedSemaphore released too many times" in r.violations[0].message


# Strings as values: constants, copies, comparisons, concatenation, dict keys and values.
WORDS = """
import threading

seen = {"a": "x"}
lock = threading.Lock()
status = "idle"


def worker(k, name):
    global status
    with lock:
        seen[name] = seen.get(name, "") + "!"
        status = "busy" if status == "idle" else status + name
        status += "."
    word = seen.get(name, "")
    other = word
    if other != "" and status >= "b":
        seen[k] = other
    status = "idle"


threading.Thread(target=worker, args=(1, "a")).start()
threading.Thread(target=worker, args=(2, "b")).start()
"""


@pytest.mark.parametrize("granularity", ["access", "statement"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_strings_are_the_same_search_without_the_fast_path(reduction: str, granularity: str) -> None:
    fast, slow = _both(WORDS, reduction=reduction, granularity=granularity)
    assert fast == slow


def test_strings_run_on_generated_code() -> None:
    # Before: a string constant, a string in a variable, a string key had no generated form.
    closures, twice = _counts(WORDS)
    assert (closures, twice) == (0, 0)
    # Past strings.concat's bound, the closures raise.
    src = WORDS.replace('seen.get(name, "") + "!"', 'seen.get(name, "") + "!" * 100_000')
    r = movers.check(src)
    assert r.verdict == "violation"
    fast, slow = _both(src)
    assert fast == slow


@pytest.mark.parametrize("statement", ["big += big", "big = big + big", "big = (big + \"\") + big",
                                       "names[0] += big"])
def test_a_string_past_the_bound_is_the_closures_error(statement: str) -> None:
    src = f"""
import threading

big = "x" * 60_000
names = {{0: "x" * 60_000}}


def w():
    global big
    {statement}


threading.Thread(target=w).start()
"""
    r = movers.check(src)
    assert r.verdict == "violation" and r.violations[0].kind == "runtime-error"
    fast, slow = _both(src)
    assert fast == slow


# One thread's step (``str(k)``) has no generated form; the other threads' steps do.
PARTLY = """
import threading

lock = threading.Lock()
n = 0


def worker(k):
    global n
    with lock:
        n += 1
    label = str(k)
    with lock:
        n += 1


threading.Thread(target=worker, args=(1,)).start()
threading.Thread(target=worker, args=(2,)).start()
threading.Thread(target=worker, args=(3,)).start()
"""


def test_a_state_with_some_closure_steps_is_computed_once() -> None:
    closures, twice = _counts(PARTLY)
    assert closures > 0  # ``str(k)`` runs on the closures...
    assert twice == 0  # ...and no state's successors are computed a second time by ``steps``
    fast, slow = _both(PARTLY)
    assert fast == slow


def test_a_failing_closure_step_leaves_the_state_to_steps() -> None:
    # A violation's Outcome is steps' own: successors gives the state up where a closure step fails.
    src = PARTLY.replace("label = str(k)", "label = str(k)\n    assert k != 2")
    closures, twice = _counts(src)
    assert twice > 0
    fast, slow = _both(src)
    assert fast == slow and fast[0] == "violation"


def test_threads_started_by_a_closure_step_are_numbered_whole() -> None:
    # The main thread starts workers while others run (the successor has a new thread: ``moved`` None).
    src = PARTLY.replace("threading.Thread(target=worker, args=(3,)).start()",
                         "def main():\n    t = threading.Thread(target=worker, args=(3,))\n    label = str(3)\n"
                         "    t.start()\n\n\nthreading.Thread(target=main).start()")
    for red in REDUCTIONS:
        fast, slow = _both(src, reduction=red)
        assert fast == slow


# -- random dict and list models ----------------------------------------------------------------------------

_OPS = [
    "d[{k}] = d.get({k}, 0) + 1",
    "d[{k}] = d.get({j}, {c})",
    "d[{k}] = {b}",
    "x = d.get({k})",
    "x = d.get({k}, {c})",
    "d[{k}] = x is None",
    "xs[{i}] = xs[{i}] + {c}",
    "xs[{i}] = d.get({k}, 0)",
    "xs.append({c})",
    "x = xs.pop()",
    "x = d[{k}]",
    "d[{k}] = 's'",
]


@st.composite
def dict_models(draw: Any) -> str:
    n_threads = draw(st.integers(1, 3))
    lines = ["import threading", "", "d = {0: 0}", "xs = [0, 1]", "lock = threading.Lock()", ""]
    for w in range(n_threads):
        lines.append(f"def w{w}():")
        lines.append("    x = 0")
        for _ in range(draw(st.integers(1, 4))):
            op = draw(st.sampled_from(_OPS)).format(
                k=draw(st.integers(0, 2)), j=draw(st.integers(0, 2)), c=draw(st.integers(-1, 2)),
                b=draw(st.booleans()), i=draw(st.integers(-2, 2)))
            if draw(st.booleans()):
                lines += ["    with lock:", "        " + op]
            else:
                lines.append("    " + op)
        lines.append("")
    lines += [f"threading.Thread(target=w{w}).start()" for w in range(n_threads)]
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dict_models(), st.sampled_from(REDUCTIONS), st.sampled_from(["access", "statement"]))
def test_random_dict_models_are_the_same_search_without_the_fast_path(src: str, reduction: str,
                                                                       granularity: str) -> None:
    note(src)
    fast, slow = _both(src, reduction=reduction, granularity=granularity, max_states=5_000)
    assert fast == slow
