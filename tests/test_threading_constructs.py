"""Event, Barrier, Condition.wait_for, growable lists (append, pop) and formatted print arguments (issue 12).

Each construct runs in small models under ``--reduction none``, with state counts derived by hand, and
under every reduction, which must agree with ``none`` (``differential.run_differential``); each has buggy
models that every reduction must catch. The static footprints must cover what the new operations access
(``test_footprints.all_uncovered``).
"""

from __future__ import annotations

import textwrap

import pytest
from differential import run_differential
from test_footprints import all_uncovered, compile_src

import movers
from movers.reduce import REDUCTIONS

ALL = tuple(REDUCTIONS)


def model(src: str) -> str:
    return "from movers.lang import *\n" + textwrap.dedent(src).lstrip("\n")


def agree(src: str, verdict: str, kind: str | None = None, states: int | None = None, **kw: object) -> None:
    """Every reduction agrees with ``none``, which reports ``verdict`` (and ``kind``, and ``states``)."""
    results = run_differential(src, ALL, **kw)
    base = results["none"]
    assert base.verdict == verdict, (base.verdict, base.violations, base.error)
    if states is not None:
        assert base.stats.states == states
    for name, r in results.items():
        assert r.verdict == verdict, (name, r.verdict, r.error)
        if kind is not None:
            assert {v.kind for v in r.violations} == {kind}, (name, r.violations)


# -- Event ------------------------------------------------------------------------------------------------------

EVENT_OK = model("""
    e = Event()
    x = 0

    def producer():
        global x
        x = 1
        e.set()

    def consumer():
        e.wait()
        assert x == 1
        assert e.is_set()

    Thread(target=producer).start()
    Thread(target=consumer).start()
""")


def test_event_wait_blocks_until_set() -> None:
    # producer: 2 steps (p = 0..2); consumer: 3 steps (c = 0..3), its wait enabled once p == 2:
    # (0,0) (1,0) (2,0) (2,1) (2,2) (2,3).
    agree(EVENT_OK, "ok", states=6)


def test_event_set_before_the_data_is_a_race_every_reduction_finds() -> None:
    src = EVENT_OK.replace("    x = 1\n    e.set()", "    e.set()\n    x = 1")
    agree(src, "violation", "assertion")


def test_event_cleared_before_the_waiter_looks_deadlocks() -> None:
    src = model("""
        e = Event()

        def flicker():
            e.set()
            e.clear()

        def waiter():
            e.wait()

        Thread(target=flicker).start()
        Thread(target=waiter).start()
    """)
    agree(src, "violation", "deadlock")
    r = movers.check(source=src)
    assert "waits for the event e to be set" in r.violations[0].message


def test_event_is_set_in_conditions_and_one_step_each() -> None:
    # One thread: set, the if (is_set() and …), clear, assert: 4 steps, 5 states.
    src = model("""
        e = Event()
        n = 0

        def main():
            global n
            e.set()
            if e.is_set() and n == 0:
                e.clear()
            assert not e.is_set()

        Thread(target=main).start()
    """)
    agree(src, "ok", states=5, granularity="statement")  # statement steps


def test_event_passed_as_an_argument_and_waited_on_in_a_callee() -> None:
    src = model("""
        class Box:
            def __init__(self):
                self.v = 0

        def waiter(ev, box):
            ev.wait()
            assert box.v == 7

        def main():
            ev = Event()
            box = Box()
            Thread(target=waiter, args=(ev, box)).start()
            box.v = 7
            ev.set()

        Thread(target=main).start()
    """)
    agree(src, "ok")
    agree(src.replace("box.v = 7\n    ev.set()", "ev.set()\n    box.v = 7"), "violation", "assertion")


# -- Barrier ----------------------------------------------------------------------------------------------------

BARRIER_OK = model("""
    b = Barrier(2)
    x = [0, 0]

    def worker(i):
        x[i] = 1
        b.wait()
        assert x[1 - i] == 1

    Thread(target=worker, args=(0,)).start()
    Thread(target=worker, args=(1,)).start()
""")


def test_barrier_waits_for_its_party() -> None:
    # Each worker: x[i] = 1, arrive, pass, assert: 4 steps (pc 0..4). A worker passes (pc 3) only once the
    # other has arrived (pc >= 2): 25 pairs minus the 8 with one at pc >= 3 and the other at pc < 2.
    agree(BARRIER_OK, "ok", states=17)


def test_barrier_resets_for_the_next_generation() -> None:
    src = model("""
        b = Barrier(2)
        c = [0, 0]

        def worker(i):
            for r in range(2):
                c[i] = r + 1
                b.wait()
                assert c[1 - i] >= r + 1

        Thread(target=worker, args=(0,)).start()
        Thread(target=worker, args=(1,)).start()
    """)
    agree(src, "ok")


def test_barrier_with_more_parties_than_threads_deadlocks() -> None:
    src = BARRIER_OK.replace("Barrier(2)", "Barrier(3)")
    agree(src, "violation", "deadlock")
    r = movers.check(source=src)
    assert "waits at the barrier b (" in r.violations[0].message and "of 3 parties arrived" in r.violations[0].message


def test_a_third_thread_at_a_barrier_of_two_is_left_waiting() -> None:
    src = model("""
        b = Barrier(2)

        def worker():
            b.wait()

        for k in range(3):
            Thread(target=worker).start()
    """)
    agree(src, "violation", "deadlock")


def test_barrier_does_not_order_writes_made_after_it() -> None:
    src = model("""
        b = Barrier(2)
        x = [0, 0]

        def worker(i):
            b.wait()
            x[i] = 1
            assert x[1 - i] == 1

        Thread(target=worker, args=(0,)).start()
        Thread(target=worker, args=(1,)).start()
    """)
    agree(src, "violation", "assertion")


def test_barrier_parties_must_be_positive() -> None:
    r = movers.check(source=model("b = Barrier(0)\ndef w():\n    b.wait()\nThread(target=w).start()\n"))
    assert r.verdict == "violation" and "parties must be a positive int" in r.violations[0].message


# -- Condition.wait_for -----------------------------------------------------------------------------------------

WAIT_FOR = model("""
    cv = Condition(Lock())
    ready = False

    def waiter():
        with cv:
            cv.wait_for(lambda: ready)
            assert ready

    def setter():
        global ready
        with cv:
            ready = True
            cv.notify_all()

    Thread(target=waiter).start()
    Thread(target=setter).start()
""")


def test_wait_for_checks_first_and_after_every_wake_up() -> None:
    # Waiter first: acquire, check (false), wait; setter: acquire, set, notify, release; waiter re-acquires,
    # checks again (true), asserts, releases: 12 states. Setter first: 4 states of its own, then the waiter
    # joins the same tail (its check is true at once): 16.
    agree(WAIT_FOR, "ok", states=16)


def test_wait_for_with_a_function_and_a_true_predicate_does_not_wait() -> None:
    # acquire, check (calls ok() in the same step; its return is the next), return, release: 4 steps.
    src = model("""
        cv = Condition()

        def ok():
            return True

        def main():
            with cv:
                cv.wait_for(ok)

        Thread(target=main).start()
    """)
    agree(src, "ok", states=5, granularity="statement")  # statement steps


def test_wait_for_without_a_notify_deadlocks() -> None:
    agree(WAIT_FOR.replace("        cv.notify_all()\n", ""), "violation", "deadlock")


def test_wait_for_a_predicate_another_thread_breaks_again() -> None:
    src = model("""
        cv = Condition(Lock())
        items = 0

        def consumer():
            global items
            with cv:
                cv.wait_for(lambda: items > 0)
                items -= 1

        def producer():
            global items
            with cv:
                items += 1
                cv.notify_all()

        Thread(target=consumer).start()
        Thread(target=consumer).start()
        Thread(target=producer).start()
    """)
    agree(src, "violation", "deadlock")  # one item, two consumers: one waits forever
    agree(src.replace("Thread(target=producer).start()", "Thread(target=producer).start()\n"
                      "Thread(target=producer).start()"), "ok")


def test_wait_for_needs_a_condition() -> None:
    src = model("e = Event()\ndef w():\n    e.wait_for(lambda: True)\nThread(target=w).start()\n")
    r = movers.check(source=src)
    assert r.verdict == "violation" and "wait_for() on a Event: only a Condition has it" in r.violations[0].message


# -- growable lists ---------------------------------------------------------------------------------------------


def test_append_and_pop_one_step_each() -> None:
    src = model("""
        xs = []

        def main():
            xs.append(1)
            xs.append(2)
            v = xs.pop(0)
            assert v == 1 and len(xs) == 1 and xs[-1] == 2
            xs.pop()
            assert not xs

        Thread(target=main).start()
    """)
    agree(src, "ok", states=7, granularity="statement")  # statement steps


def test_concurrent_appends_in_both_orders() -> None:
    # initial, [1], [2], [1, 2], [2, 1]
    src = model("""
        xs = []

        def push(v):
            xs.append(v)

        Thread(target=push, args=(1,)).start()
        Thread(target=push, args=(2,)).start()
    """)
    agree(src, "ok", states=5, granularity="statement")  # statement steps
    agree(src + "def check():\n    wait_until(len(xs) == 2)\n    assert xs[0] == 1\nThread(target=check).start()\n",
          "violation", "assertion")


def test_pop_from_an_empty_list_is_a_runtime_error_check_then_act_race() -> None:
    src = model("""
        xs = [1]

        def take():
            if xs:
                xs.pop()

        Thread(target=take).start()
        Thread(target=take).start()
    """)
    agree(src, "violation", "runtime-error")
    r = movers.check(source=src)
    assert "pop from empty list" in r.violations[0].message


def appender_and(reader: str, init: str) -> str:
    """A model where one thread appends 1 to ``xs`` (initially ``init``) and another runs ``reader``."""
    body = textwrap.indent(textwrap.dedent(reader), "    ")
    return model(f"xs = {init}\n\ndef appender():\n    xs.append(1)\n\ndef reader():\n{body}\n\n"
                 "Thread(target=appender).start()\nThread(target=reader).start()\n")


@pytest.mark.parametrize("reader", [
    "assert len(xs) == 1",
    "if xs:\n    assert len(xs) < 2",
    "assert xs[-1] == 0",
    "n = 0\nfor v in xs:\n    n += 1\nassert n == 1",
    "assert 1 not in xs",
    "v = xs.pop()\nassert v == 0",
    "assert min(xs) == 0 and max(xs) == 0",
    "a = xs\nk = bool(a)\nassert k and len(a) < 2",
])
def test_length_changes_are_seen_by_every_reduction(reader: str) -> None:
    """Each reader depends on the list's length (or last element), which the appender changes without
    writing any element the reader read before: a reduction that took them for independent would miss it."""
    agree(appender_and(reader, "[0]"), "violation", compare_kinds=False)


@pytest.mark.parametrize("reader", ["assert not xs", "if xs:\n    assert False", "k = 0 if xs else 1\nassert k",
                                    "assert len(xs) == 0"])
def test_emptiness_changes_are_seen_by_every_reduction(reader: str) -> None:
    agree(appender_and(reader, "[]"), "violation", "assertion")


def test_pop_and_append_do_not_commute() -> None:
    src = model("""
        xs = [0]
        m = Lock()

        def appender():
            with m:
                xs.append(1)

        def popper():
            with m:
                v = xs.pop()
            assert v == 0

        Thread(target=appender).start()
        Thread(target=popper).start()
    """)
    agree(src, "violation", "assertion")


def test_lists_of_objects_grow_and_shrink() -> None:
    src = model("""
        class Job:
            def __init__(self, n):
                self.n = n

        queue = []
        m = Lock()
        done = 0

        def producer():
            for k in range(2):
                with m:
                    queue.append(Job(k + 1))

        def consumer():
            global done
            while done < 3:
                with m:
                    if queue:
                        j = queue.pop(0)
                        done += j.n

        Thread(target=producer).start()
        Thread(target=consumer).start()
    """)
    agree(src, "ok")


def test_a_model_method_named_pop_still_dispatches_on_the_receiver() -> None:
    src = model("""
        class Stack:
            def __init__(self):
                self.items = [1, 2]

            def pop(self):
                return self.items.pop()

        def main():
            s = Stack()
            v = s.pop()
            w = s.items.pop()
            assert v == 2 and w == 1

        Thread(target=main).start()
    """)
    agree(src, "ok")


# -- print ------------------------------------------------------------------------------------------------------


def test_print_takes_f_strings_and_percent_formatting_one_step_each() -> None:
    src = model("""
        x = 3

        def main():
            print(f"x is {x:>4} and {x + 1}", "twice: %d, %s" % (2 * x, x))
            print("plain", x)

        Thread(target=main).start()
    """)
    agree(src, "ok", states=3, granularity="statement")  # statement steps
    r = movers.check(source=src.replace("{x + 1}", "{y + 1}"))
    assert r.verdict == "error" and "5:30: name 'y' is not defined" in r.error, r.error


# -- static footprints ------------------------------------------------------------------------------------------


FOOTPRINT_MODEL = """from movers.lang import *
e = Event()
b = Barrier(2)
cv = Condition()
xs = [0]
g = 0

def t1():
{body}

def t2():
    global g
    e.set()
    xs.append(1)
    b.wait()
    with cv:
        g = 1
        cv.notify()

Thread(target=t1).start()
Thread(target=t2).start()
"""


@pytest.mark.parametrize("body", [
    "e.set()\nv = e.is_set()\ne.clear()\ne.wait()",
    "b.wait()",
    "xs.append(g)\nv = len(xs) + xs[-1]\nif xs:\n    xs.pop(0)",
    "with cv:\n    cv.wait_for(lambda: g > 0)",
])
def test_footprints_cover_the_new_operations(body: str) -> None:
    program = compile_src(FOOTPRINT_MODEL.format(body=textwrap.indent(body, "    ")))
    assert all_uncovered(program) == []
