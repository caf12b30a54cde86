"""Issue 7 ("Hardening"), the reductions' items: each test fails without its fix.

- item 2: transactions store the phases of P# only where they carry information, so a stored state is a
  program state and no reduction stores more states than ``none``;
- item 6: an object that escapes its constructor (a thread started with ``self``, ``self`` stored in a
  global or in a shared object) loses the constructor exemption, so the other thread's read between two
  constructor writes is explored;
- item 7: per-object declared predicates are compared on the same object before and after a step, however
  heap canonicalisation renumbers the heap;
- item 10: a move ends after ``MOVE_LIMIT`` steps, so a thread counting forever on local data cannot hold
  the search past its limits.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from differential import run_differential

import movers
from movers.checker import Checker, load
from movers.search.options import Options

REDUCTIONS = ["none", "static-por", "optimistic", "transactions"]
TIMEOUT = 300  # seconds: generous, a hang fails; the runs take about a second


def model(src: str) -> str:
    return "from movers.lang import *\n" + textwrap.dedent(src).lstrip("\n")


# -- item 2: stored states are program states --------------------------------------------------------------

WRITE_READ = model("""
    x = 0

    def a():
        global x
        x = 1

    def b():
        y = x

    Thread(target=a).start()
    Thread(target=b).start()
""")

# Thread a comes back to its entry (the acquire) after every iteration, with x as it was two rounds before.
LOOP_TO_ENTRY = model("""
    x = 0
    m = Lock()

    def a():
        global x
        while True:
            with m:
                x = 1 - x

    def b():
        global x
        with m:
            x = 5

    Thread(target=a).start()
    Thread(target=b).start()
""")


@pytest.mark.parametrize("src", [WRITE_READ, LOOP_TO_ENTRY], ids=["write-read", "loop-to-entry"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_never_more_states_than_none(src: str, reduction: str) -> None:
    results = run_differential(src, [reduction])
    assert results[reduction].verdict == "ok"
    assert results[reduction].stats.states <= results["none"].stats.states


def test_write_read_stores_the_four_program_states() -> None:
    assert movers.check(WRITE_READ, reduction="transactions").stats.states == 4


@pytest.mark.parametrize("src", [WRITE_READ, LOOP_TO_ENTRY], ids=["write-read", "loop-to-entry"])
def test_transactions_store_each_program_state_once(src: str) -> None:
    checker = Checker(load(src), Options("transactions"))
    assert checker.run().verdict == "ok"
    stored = list(checker.last_search.stored)
    assert len({s[:3] for s in stored}) == len(stored)


# -- item 6: an object escaping its constructor ---------------------------------------------------------------

ESCAPES = {
    "thread-started-with-self": """
        class Box:
            def __init__(self):
                self.v = 0
                Thread(target=reader, args=(self,)).start()
                self.v = 1

        def reader(b):
            assert b.v == 1

        def main():
            b = Box()

        Thread(target=main).start()
    """,
    "self-stored-in-a-global": """
        g = None

        class Box:
            def __init__(self):
                global g
                self.v = 0
                g = self
                self.v = 1

        def reader():
            b = g
            if b is not None:
                assert b.v == 1

        def main():
            b = Box()

        Thread(target=main).start()
        Thread(target=reader).start()
    """,
    "self-stored-in-a-shared-object": """
        class Holder:
            def __init__(self):
                self.item = None

        class Box:
            def __init__(self, h):
                self.v = 0
                h.item = self
                self.v = 1

        holder = Holder()

        def reader():
            b = holder.item
            if b is not None:
                assert b.v == 1

        def main():
            b = Box(holder)

        Thread(target=main).start()
        Thread(target=reader).start()
    """,
}


@pytest.mark.parametrize("name", sorted(ESCAPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_constructor_escape_is_a_violation(name: str, reduction: str) -> None:
    r = movers.check(model(ESCAPES[name]), reduction=reduction)
    assert r.verdict == "violation", (r.verdict, r.error)
    assert r.violations[0].kind == "assertion"
    assert r.violations[0].trace[-1].source == "assert b.v == 1"


def test_constructor_without_escape_stays_invisible() -> None:
    """The exemption still holds while no other thread can reach the object: each thread's constructor
    run is one invisible stretch, so optimistic stores fewer states than none."""
    src = model("""
        class Box:
            def __init__(self):
                self.v = 0
                self.v = 1
                self.v = 2

        def main():
            b = Box()
            assert b.v == 2

        Thread(target=main).start()
        Thread(target=main).start()
    """)
    # (statement steps: at access granularity fields only constructors write are no accesses, and none
    # already runs each constructor in one step)
    results = run_differential(src, ["optimistic", "transactions"], granularity="statement")
    assert results["optimistic"].stats.states < results["none"].stats.states


# -- item 7: declared predicates keyed by object identity -----------------------------------------------------

# Thread 1 allocates a list into `first`, which comes before `a` and `b` in the canonical heap order (a
# global's slot order), so every Node changes index; later it drops it (garbage, renumbered back).
RENUMBERED = model("""
    class Node:
        def __init__(self, owner):
            self.owner = owner
            self.val = 0

    exclusive(Node.val, lambda t, self: self.owner == t)

    first = None
    a = Node(0)
    b = Node(1)

    def t0():
        a.val = 1
        y = first
        a.val = 2

    def t1():
        global first
        first = [1]
        b.val = 1
        first = None
        b.val = 2

    Thread(target=t0).start()
    Thread(target=t1).start()
""")

# Garbage collection alone: the list is dropped by a visible write (t0 reads `first`, unprotected).
COLLECTED = model("""
    class Node:
        def __init__(self, owner):
            self.owner = owner
            self.val = 0

    exclusive(Node.val, lambda t, self: self.owner == t)

    first = [1]
    a = Node(0)
    b = Node(1)

    def t0():
        a.val = 1
        y = first
        a.val = 2

    def t1():
        global first
        b.val = 1
        first = None
        b.val = 2

    Thread(target=t0).start()
    Thread(target=t1).start()
""")


@pytest.mark.parametrize("src", [RENUMBERED, COLLECTED], ids=["allocation", "collection"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_heap_renumbering_is_no_discipline_violation(src: str, reduction: str) -> None:
    r = movers.check(src, reduction=reduction)
    assert r.verdict == "ok", [(v.kind, v.message) for v in r.violations]


def test_taking_access_away_is_still_found_after_renumbering() -> None:
    """A real WFendExcl violation in a step that also renumbers the heap: thread 1 gives a's val to itself."""
    src = model("""
        class Node:
            def __init__(self, owner):
                self.owner = owner
                self.val = 0

        exclusive(Node.val, lambda t, self: self.owner == t)

        first = None
        a = Node(0)

        def t0():
            a.val = 1
            a.val = 2

        def t1():
            global first
            first = [1]
            a.owner = 1

        Thread(target=t0).start()
        Thread(target=t1).start()
    """)
    r = movers.check(src, reduction="optimistic")
    assert r.verdict == "violation"
    assert r.violations[0].kind == "discipline"


def test_taking_access_away_from_an_object_moved_in_the_same_step() -> None:
    """One step falsifies thread 1's predicate on an object *and* moves the only reference to it into a field
    it writes (renumbering the heap): the object is compared with itself across the step (the step's
    Effect says how the heap was renumbered), so the WFendExcl violation is reported at that step."""
    src = model("""
        class Node:
            def __init__(self):
                self.owner = 1
                self.val = 0

        class Box:
            def __init__(self):
                self.item = None

        g = Node()
        box = Box()
        exclusive(Node.val, lambda t, self: self.owner == t)

        def t0():
            global g
            g.owner, box.item, g = 0, g, None

        def t1():
            n = box.item
            if n is not None:
                n.val = 5

        Thread(target=t0).start()
        Thread(target=t1).start()
    """)
    r = movers.check(src, reduction="optimistic", refine=False)
    assert r.verdict == "violation" and r.violations[0].kind == "discipline"
    assert "takes away" in r.violations[0].message, r.violations[0].message
    assert movers.check(src, reduction="none").violations[0].kind == "discipline"


# -- item 10: moves are bounded --------------------------------------------------------------------------------

SPIN = model("""
    x = 0
    m = Lock()

    def spin():
        k = 0
        while True:
            k += 1

    def other():
        global x
        with m:
            x = 1

    Thread(target=spin).start()
    Thread(target=other).start()
""")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_local_spin_ends_at_max_states(tmp_path, reduction: str) -> None:
    path = tmp_path / "spin.py"
    path.write_text(SPIN)
    cmd = [sys.executable, "-m", "movers.cli", "check", str(path), "--reduction", reduction, "--max-states", "20",
           "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 3, proc.stderr
    assert '"incomplete"' in proc.stdout


DEADLOCK_SEARCH = """
import sys
from movers.checker import Checker, load
from movers.report.result import Result, Stats
from movers.search.options import Limits, Options

checker = Checker(load(sys.argv[1]), Options("transactions", limits=Limits(max_states=20)))
print(checker._deadlock_check(Result("ok", "transactions", Stats()), []).verdict)
"""


def test_transactions_deadlock_search_ends(tmp_path) -> None:
    """Transactions check deadlock freedom with an optimistic search under the same limits (``Checker``'s
    deadlock check, run on its own: the transactions search itself stops at the limit first). It ends too;
    run in a subprocess so that a hang fails the test instead of holding the suite."""
    path = tmp_path / "spin.py"
    path.write_text(SPIN)
    proc = subprocess.run([sys.executable, "-c", DEADLOCK_SEARCH, str(path)], capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert proc.stdout.split() == ["incomplete"], proc.stderr


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_violation_after_a_long_local_run_has_its_whole_trace(reduction: str) -> None:
    """A move cut by the bound replays to the right step-level trace (the steps kept as parent pointers)."""
    src = model("""
        x = 0

        def count():
            k = 0
            while k < 1500:
                k += 1
            assert x == 0

        def other():
            global x
            x = 1

        Thread(target=count).start()
        Thread(target=other).start()
    """)
    r = movers.check(src, reduction=reduction, granularity="statement")  # k += 1 a step of its own
    assert r.verdict == "violation" and r.violations[0].kind == "assertion"
    trace = r.violations[0].trace
    assert trace[-1].source == "assert x == 0"
    assert sum(1 for s in trace if s.source == "k += 1") == 1500


def test_a_program_state_stored_in_two_passes_counts_once() -> None:
    """Found by the value-model differential test: the incremental passes of transactions stored one program
    state under two phase vectors (the phase of a write that was a mover in the first pass, before the lock
    inference weakened it). ``states`` counts program states, so it never exceeds none's."""
    src = model("""
        x = 0
        def worker_0():
            global x
            x = choose(0, 0)
            x = choose(0, 0)
        def worker_1():
            global x
            x = choose(0, 0)
            assert x is not True
        Thread(target=worker_0).start()
        Thread(target=worker_1).start()
    """)
    base = movers.check(src)
    r = movers.check(src, reduction="transactions")
    assert base.verdict == r.verdict == "ok"
    assert r.stats.states <= base.stats.states, (r.stats.states, base.stats.states)


@pytest.mark.parametrize("reduction", ["none", "static-por", "optimistic", "dwyer-d", "dwyer-ld"])
def test_a_predicate_that_fails_is_a_discipline_violation_everywhere(reduction: str) -> None:
    """Found by the fuzz campaign: a declared predicate that raises (here it reads a field the object does
    not have) was an internal error in the discipline check of the reductions; the full search reports it
    as a discipline violation naming the predicate's line, and so does every reduction now."""
    src = model("""
        count = 0
        def worker():
            global count
            tmp = count
            count = tmp + 1
        def checker():
            t0.join()
        t0 = Thread(target=worker)
        t0.start()
        exclusive(t0, lambda t: t0.x)
        Thread(target=checker).start()
    """)
    r = movers.check(src, reduction=reduction)
    assert r.verdict == "violation", (r.verdict, r.error)
    assert r.violations[0].kind == "discipline"
    assert "the exclusive access predicate of line 11 fails" in r.violations[0].message, r.violations[0].message
