"""Dicts (``lang/containers.py``): values as CPython computes them, each operation one access, and the
reductions agreeing with ``--reduction none`` on races through a shared dict."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT
from differential import run_differential

import movers
from movers.ir.program import ClassInfo, box, ref
from movers.lang.containers import dict_class
from movers.reduce import REDUCTIONS
from movers.semantics.state import canonical

ALL = tuple(REDUCTIONS)


def cpython(src: str) -> subprocess.CompletedProcess:
    """Run a single-thread model under python3 (the shim ``movers.lang``)."""
    return subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(ROOT / "src")})


def check(src: str, **kw):
    return movers.check(source=textwrap.dedent(src), **kw)


SINGLE = """
from movers.lang import *
d = {1: 10, 2: 20}
d[3] = 30
d[True] = 11
assert d[1] == 11 and len(d) == 3 and d
assert d.get(5) is None and d.get(5, 7) == 7 and d.get(2) == 20
assert d.setdefault(4, 40) == 40 and d.setdefault(4, 0) == 40
assert d.pop(2) == 20 and d.pop(2, -1) == -1
assert 2 not in d and 3 in d and True in d
ks = ()
for k in d:
    ks = ks + (k,)
assert ks == (1, 3, 4)
t = 0
for k, v in d.items():
    t = t + k * v
assert t == 11 + 90 + 160
vs = 0
for v in d.values():
    vs = vs + v
assert vs == 81
e = d.copy()
assert e == d and e is not d
e[9] = (1, 2)
assert e != d and e[9] == (1, 2)
assert d == {3: 30, 1: 11, 4: 40}
assert d != [1, 3, 4] and {} != []
d.clear()
assert not d and len(d) == 0 and d == {}
f = dict()
f.update(e)
assert len(f) == 4 and f == e
g = {(1, 2): 5, None: 6}
assert g[(1, 2)] == 5 and g[None] == 6
h = {1: 'first', True: 'second'}
assert len(h) == 1
for k in h:
    assert k is not True
"""


def test_single_thread_values_are_cpythons() -> None:
    src = SINGLE.replace("'first'", "1").replace("'second'", "2")  # strings may be values in another part
    r = cpython(src)
    assert r.returncode == 0, r.stderr
    assert check(src).verdict == "ok"


def test_the_values_are_checked() -> None:
    # The twin of the test above: a wrong expectation is a violation, so the asserts above are evaluated.
    src = "from movers.lang import *\nd = {1: 10}\nd[True] = 11\nassert d[1] == 10\n"
    assert cpython(src).returncode != 0
    assert check(src).verdict == "violation"


@pytest.mark.parametrize("body, exc, message", [
    ("d = {1: 2}\nx = d[3]\n", "KeyError", "KeyError: 3"),
    ("d = {1: 2}\nd.pop(3)\n", "KeyError", "KeyError: 3"),
    ("d = {}\nd[[1]] = 2\n", "TypeError", "unhashable type: 'list'"),
    ("d = {}\nx = {1: 2}\nd[(1, x)] = 2\n", "TypeError", "unhashable type: 'dict'"),
    ("d = {1: 2}\nfor k in d:\n    d[k + 1] = 0\n", "RuntimeError", "dictionary changed size during iteration"),
])
def test_runtime_errors_are_cpythons(body: str, exc: str, message: str) -> None:
    src = "from movers.lang import *\n" + body
    r = cpython(src)
    assert exc in r.stderr and message.removeprefix("KeyError: ") in r.stderr, r.stderr
    res = check(src)
    assert res.verdict == "violation"
    assert any(message in v.message for v in res.violations), [v.message for v in res.violations]


def test_changing_a_value_while_iterating_is_fine() -> None:
    src = "from movers.lang import *\nd = {1: 2, 3: 4}\nfor k in d:\n    d[k] = 0\nassert d == {1: 0, 3: 0}\n"
    assert cpython(src).returncode == 0
    assert check(src).verdict == "ok"


def threads(body: str, check_: str) -> str:
    return f"""from movers.lang import *
{body}

def main():
    t1 = Thread(target=w, args=(1,))
    t2 = Thread(target=w, args=(2,))
    t1.start()
    t2.start()
    t1.join()
    t2.join()
{textwrap.indent(check_, "    ")}

Thread(target=main).start()
"""


LOST_UPDATE = threads("""d = {0: 0}
m = Lock()

def w(i):
    d[0] = d[0] + 1
""", "assert d[0] == 2")

LOCKED = LOST_UPDATE.replace("    d[0] = d[0] + 1", "    with m:\n        d[0] = d[0] + 1")

CHECK_THEN_ACT = threads("""d = {}
made = [0]
m = Lock()

def w(i):
    if 5 not in d:
        made[0] = made[0] + 1
        d[5] = i
""", "assert made[0] == 1, 'made twice'")

CHECK_THEN_ACT_LOCKED = CHECK_THEN_ACT.replace(
    "    if 5 not in d:\n        made[0] = made[0] + 1\n        d[5] = i",
    "    with m:\n        if 5 not in d:\n            made[0] = made[0] + 1\n            d[5] = i")

SETDEFAULT = CHECK_THEN_ACT.replace(
    "    if 5 not in d:\n        made[0] = made[0] + 1\n        d[5] = i",
    "    d.setdefault(5, i)").replace("assert made[0] == 1, 'made twice'", "assert d[5] == 1 or d[5] == 2")

ITERATE = threads("""d = {1: 0, 2: 0}
total = [0]

def w(i):
    if i == 1:
        for k in d:
            total[0] = total[0] + k
    else:
        d[3] = 0
""", "assert total[0] == 3 or total[0] == 6")


@pytest.mark.parametrize("src, verdict", [
    (LOST_UPDATE, "violation"), (LOCKED, "ok"), (CHECK_THEN_ACT, "violation"), (CHECK_THEN_ACT_LOCKED, "ok"),
    (SETDEFAULT, "ok"), (ITERATE, "violation"),
], ids=["lost-update", "locked", "check-then-act", "check-then-act-locked", "setdefault", "iterate"])
def test_reductions_agree_with_none(src: str, verdict: str) -> None:
    results = run_differential(src, ALL)
    assert results["none"].verdict == verdict


def test_iteration_race_is_the_size_error() -> None:
    r = movers.check(ITERATE, reduction="none")
    assert any("dictionary changed size during iteration" in v.message for v in r.violations)


def test_lost_update_is_found_at_access_granularity_only() -> None:
    # d[0] = d[0] + 1 is two accesses (a read, a write), as in CPython; one step at statement granularity.
    assert movers.check(LOST_UPDATE, granularity="statement").verdict == "ok"
    assert movers.check(LOST_UPDATE).verdict == "violation"


def test_a_dict_holding_objects_is_canonical() -> None:
    # Two threads each store a new object into the dict: the heap's numbering depends on who allocated
    # first, the states do not (the canonicalisation walks the dict's entries).
    src = threads("""class C:
    pass

d = {}

def w(i):
    d[i] = C()
""", "assert d[1] is not d[2]")
    r = run_differential(src, ALL)
    assert r["none"].verdict == "ok"


def test_canonical_heap_walks_a_dicts_entries() -> None:
    c = ClassInfo("C", ["v"])
    c.finish()
    dc = dict_class(1)
    # The same dict {1: C(v=1), 2: C(v=2)} with its objects numbered in two orders.
    s1 = ((ref(0),), ((dc, None, 1, box(ref(1)), 2, box(ref(2))), (c, None, 1), (c, None, 2)), ())
    s2 = ((ref(0),), ((dc, None, 1, box(ref(2)), 2, box(ref(1))), (c, None, 2), (c, None, 1)), ())
    assert s1 != s2
    assert canonical(s1) == canonical(s2)
    assert canonical(s2)[1][1] == (c, None, 1)  # the object of the first entry comes first


def _random_model(rng: random.Random) -> str:
    ops = ["d[{k}] = d.get({k}, 0) + 1", "d.pop({k}, 0)", "x = {k} in d", "d.setdefault({k}, {k})",
           "x = len(d)", "d[{k}] = {k}"]
    bodies = []
    for _ in range(2):
        lines = [rng.choice(ops).format(k=rng.randrange(3)) for _ in range(rng.randrange(1, 4))]
        bodies.append("\n".join("        " + ln for ln in lines))
    return threads(f"""d = {{0: 0}}

def w(i):
    x = 0
    if i == 1:
{bodies[0]}
    else:
{bodies[1]}
""", f"assert d.get({rng.randrange(3)}, -1) != {rng.randrange(-1, 3)}")


@pytest.mark.parametrize("seed", range(10))
def test_random_dict_models_reductions_agree(seed: int) -> None:
    run_differential(_random_model(random.Random(seed)), ALL, compare_kinds=False)


INVARIANT = """from movers.lang import *
d = {0: 0}

@invariant
def small():
    return len(d) <= 2

def w(i):
    x = 0
    x = x + 1
    d[i] = x
    x = x + 1
    d.pop(i)

Thread(target=w, args=(1,)).start()
Thread(target=w, args=(2,)).start()
"""


def test_an_invariant_over_a_dict_is_seen_by_every_reduction() -> None:
    # The reductions must treat a dict's entries as the elements an invariant reads (ample.py).
    results = run_differential(INVARIANT, ALL)
    assert results["none"].verdict == "violation"


def test_the_trace_shows_a_dict() -> None:
    v = movers.check(LOST_UPDATE).violations[0]
    assert v.values == {"d": "{0: 1}"}
    assert v.state["globals"]["d[0]"] == "1"


# -- sets ---------------------------------------------------------------------------------------------------------

SETS = """from movers.lang import *
s = {3, 1, 2}
s.add(0)
s.add(True)
assert len(s) == 4 and 1 in s and 5 not in s and s
t = ()
for x in s:
    t = t + (x,)
assert t == (0, 1, 2, 3)
s.discard(7)
s.remove(3)
assert s == {2, 1, 0} and s != {1, 2} and s != [0, 1, 2]
assert s.pop() == 0
u = set()
u.add(5)
assert (s | u) == {1, 2, 5} and (s & {2, 9}) == {2} and (s - {1}) == {2}
v = set((1, 2, 2))
assert v == {1, 2} and s.copy() == s and not set()
c = set({4: 1})
assert c == {4} and {(1, 2), None} == {None, (1, 2)}
assert 7 - 2 == 5 and (6 | 1) == 7 and (6 & 3) == 2
s.clear()
assert len(s) == 0
"""


def test_set_values_are_cpythons() -> None:
    r = cpython(SETS)
    assert r.returncode == 0, r.stderr
    assert check(SETS).verdict == "ok"
    wrong = SETS.replace("assert t == (0, 1, 2, 3)", "assert t == (0, 1, 3, 2)")
    assert check(wrong).verdict == "violation"


@pytest.mark.parametrize("body, message", [
    ("s = {1}\ns.remove(2)\n", "KeyError: 2"),
    ("s = set()\nx = s.pop()\n", "pop from an empty set"),
    ("s = {1}\nfor x in s:\n    s.add(x + 1)\n", "Set changed size during iteration"),
    ("s = {1}\ns.add([1])\n", "unhashable type: 'list'"),
])
def test_set_errors_are_cpythons(body: str, message: str) -> None:
    src = "from movers.lang import *\n" + body
    assert message.removeprefix("KeyError: ") in cpython(src).stderr
    res = check(src)
    assert res.verdict == "violation" and any(message in v.message for v in res.violations)


def _adders(container: str, add: str) -> str:
    return threads(f"""s = {container}

def w(i):
    {add}
""", "assert True")


def test_sets_are_canonical_whatever_their_insertion_history() -> None:
    # Two threads add 1 and 2 in either order: one final set, as two element writes to a list make one
    # final list; stored in insertion order, the set would have two final states.
    sets = movers.check(_adders("set()", "s.add(i)"), reduction="none")
    lists = movers.check(_adders("[0, 0, 0]", "s[i] = 1"), reduction="none")
    assert sets.verdict == lists.verdict == "ok"
    assert sets.stats.states == lists.stats.states


SET_RACE = threads("""s = set()
made = [0]
m = Lock()

def w(i):
    if 7 not in s:
        made[0] = made[0] + 1
        s.add(7)
""", "assert made[0] == 1 and s == {7}")


@pytest.mark.parametrize("src, verdict", [
    (SET_RACE, "violation"),
    (SET_RACE.replace("    if 7 not in s:\n        made[0] = made[0] + 1\n        s.add(7)",
                      "    with m:\n        if 7 not in s:\n            made[0] = made[0] + 1\n"
                      "            s.add(7)"), "ok"),
    (_adders("{0}", "s.discard(0)\n    s.add(i)\n    x = s.pop()"), "ok"),
], ids=["check-then-act", "locked", "add-pop"])
def test_set_reductions_agree_with_none(src: str, verdict: str) -> None:
    assert run_differential(src, ALL, compare_kinds=False)["none"].verdict == verdict


# -- list methods -------------------------------------------------------------------------------------------------

LISTS = """from movers.lang import *
a = [3, 1, 2]
a.insert(0, 9)
a.insert(-1, 7)
a.insert(100, 5)
assert a == [9, 3, 1, 7, 2, 5]
a.remove(7)
assert a.index(1) == 2 and a.count(3) == 1 and a.count(8) == 0
a.extend([4, 4])
a.extend((6,))
assert a == [9, 3, 1, 2, 5, 4, 4, 6]
a.sort()
assert a == [1, 2, 3, 4, 4, 5, 6, 9]
a.reverse()
assert a == [9, 6, 5, 4, 4, 3, 2, 1]
b = a.copy()
assert b == a and b is not a
a.clear()
assert a == [] and len(b) == 8
t = [(2, 1), (1, 5), (1, 2)]
t.sort()
assert t == [(1, 2), (1, 5), (2, 1)]
"""


def test_list_methods_values_are_cpythons() -> None:
    assert cpython(LISTS).returncode == 0
    assert check(LISTS).verdict == "ok"
    assert check(LISTS.replace("assert a == [1, 2, 3, 4, 4, 5, 6, 9]", "assert a == [1]")).verdict == "violation"


@pytest.mark.parametrize("body, message", [
    ("a = [1]\na.remove(2)\n", "list.remove(x): x not in list"),
    ("a = [1]\nx = a.index(2)\n", "2 is not in list"),
])
def test_list_method_errors_are_cpythons(body: str, message: str) -> None:
    src = "from movers.lang import *\n" + body
    assert message in cpython(src).stderr
    res = check(src)
    assert res.verdict == "violation" and any(message in v.message for v in res.violations)


QUEUE = threads("""q = [1, 2, 3]
got = [0, 0, 0]
m = Lock()

def w(i):
    if 2 in q:
        q.remove(2)
        got[i] = 1
""", "assert got[1] + got[2] == 1")


@pytest.mark.parametrize("src, verdict", [
    (QUEUE, "violation"),
    (QUEUE.replace("    if 2 in q:\n        q.remove(2)\n        got[i] = 1",
                   "    with m:\n        if 2 in q:\n            q.remove(2)\n            got[i] = 1"), "ok"),
    (threads("q = [5, 1]\n\ndef w(i):\n    q.insert(0, i)\n    q.sort()\n    q.reverse()\n",
             "assert q == [5, 2, 1, 1]"), "violation"),  # a sort may run last
    (threads("q = [5, 1]\n\ndef w(i):\n    q.insert(0, i)\n    x = q.index(i)\n    q.extend([x])\n",
             "assert q.count(0) <= 1"), "violation"),
], ids=["remove-race", "remove-locked", "insert-sort", "insert-index"])
def test_list_method_reductions_agree_with_none(src: str, verdict: str) -> None:
    assert run_differential(src, ALL, compare_kinds=False)["none"].verdict == verdict


# -- defaultdict --------------------------------------------------------------------------------------------------

DEFAULTS = """from movers.lang import *
c = defaultdict(int)
c[3] = c[3] + 1
c[3] += 1
assert c[3] == 2 and c[4] == 0 and len(c) == 2 and 5 not in c
g = defaultdict(list)
g[1].append(7)
g[1].append(8)
assert g[1] == [7, 8] and g == {1: [7, 8]}
s = defaultdict(set)
s[0].add(2)
assert s[0] == {2}
e = c.copy()
assert e[9] == 0 and c.get(9) is None and 9 not in c
"""


def test_defaultdict_values_are_cpythons() -> None:
    assert cpython(DEFAULTS).returncode == 0
    assert check(DEFAULTS).verdict == "ok"
    assert check(DEFAULTS.replace("c[4] == 0", "c[4] == 1")).verdict == "violation"


GROUPS = threads("""g = defaultdict(list)

def w(i):
    g[0].append(i)
""", "assert len(g) == 1 and len(g[0]) == 2")


def test_defaultdict_reads_that_insert_are_accesses() -> None:
    # Only reads in the threads: each `g[0]` may insert, so it is an access, and the two inserts race on
    # nothing CPython loses (d[k] is atomic): ok under every reduction.
    assert run_differential(GROUPS, ALL)["none"].verdict == "ok"
    racy = GROUPS.replace("g[0].append(i)", "x = g[i]").replace(
        "assert len(g) == 1 and len(g[0]) == 2", "assert len(g) == 2 and g[1] == g[2] == []")
    assert run_differential(racy, ALL)["none"].verdict == "ok"
    wrong = racy.replace("len(g) == 2", "len(g) == 1")
    assert run_differential(wrong, ALL)["none"].verdict == "violation"


@pytest.mark.parametrize("make", ["{0: 0}", "defaultdict(int)"])
def test_augmented_assignment_to_a_dict_entry_loses_updates(make: str) -> None:
    src = LOST_UPDATE.replace("d = {0: 0}", f"d = {make}").replace("d[0] = d[0] + 1", "d[0] += 1")
    assert run_differential(src, ALL)["none"].verdict == "violation"
    locked = LOCKED.replace("d = {0: 0}", f"d = {make}").replace("d[0] = d[0] + 1", "d[0] += 1")
    assert run_differential(locked, ALL)["none"].verdict == "ok"


COMPARE = threads("""d = {0: 0}
e = {0: 0}
r = [0]

def w(i):
    if i == 1:
        d[0] = 1
    else:
        r[0] = d == e
""", "assert r[0]")


def test_comparing_dicts_reads_their_entries() -> None:
    assert run_differential(COMPARE, ALL)["none"].verdict == "violation"
    assert run_differential(COMPARE.replace("assert r[0]", "assert True"), ALL)["none"].verdict == "ok"


# -- slices, list(), + and * on lists ------------------------------------------------------------------------------

SLICES = """from movers.lang import *
a = [1, 2, 3, 4, 5]
assert a[1:3] == [2, 3] and a[::-1] == [5, 4, 3, 2, 1] and a[:-2] == [1, 2, 3] and a[::2] == [1, 3, 5]
b = a[:]
b[0] = 9
assert a[0] == 1 and b is not a
t = (1, 2, 3)
assert t[1:] == (2, 3)
assert list(t) == [1, 2, 3] and list({4: 0, 5: 1}) == [4, 5] and list({3, 1}) == [1, 3] and list() == []
c = a + [6]
assert c == [1, 2, 3, 4, 5, 6] and len(a) == 5
assert [0, True] * 2 == [0, True, 0, True] and 2 * [1] == [1, 1]
x = [(1, True)] + [None]
assert x == [(1, True), None]
assert 3 + 4 == 7 and 3 * 4 == 12 and (1,) + (2,) == (1, 2)
"""


def test_slices_and_list_arithmetic_are_cpythons() -> None:
    assert cpython(SLICES).returncode == 0
    assert check(SLICES).verdict == "ok"
    assert check(SLICES.replace("a[::2] == [1, 3, 5]", "a[::2] == [1, 3]")).verdict == "violation"


SNAPSHOT = threads("""q = [1, 2]
seen = [0]

def w(i):
    if i == 1:
        q.append(3)
    else:
        s = q[:] + [0]
        seen[0] = len(s)
""", "assert seen[0] == 4")


def test_a_slice_races_with_an_append() -> None:
    assert run_differential(SNAPSHOT, ALL)["none"].verdict == "violation"
    both = SNAPSHOT.replace("assert seen[0] == 4", "assert seen[0] == 3 or seen[0] == 4")
    assert run_differential(both, ALL)["none"].verdict == "ok"


CLASS_METHODS = """
from movers.lang import *

class Bag:
    def __init__(self):
        self.n = 0

    def add(self, x):
        self.n = self.n + x
        return self.n

    def get(self, k):
        return k * 2

b = Bag()
s = {1}
d = {1: 5}
b.add(3)
s.add(2)
x = b.add(4)
y = b.get(3)
z = d.get(1)
w = d.get(3)
assert x == 7 and s == {1, 2} and y == 6 and z == 5 and w is None
"""


def test_a_model_class_may_define_container_method_names() -> None:
    # The receiver's class decides at run time: Bag.add and Bag.get, the set's add, the dict's get.
    assert cpython(CLASS_METHODS).returncode == 0
    assert check(CLASS_METHODS).verdict == "ok"
    assert check(CLASS_METHODS.replace("y == 6", "y == 3")).verdict == "violation"


IN_A_THREAD = """
from movers.lang import *
a = [3, 1]
b = [2]
r = [0, 0, 0]

def w():
    c = list(a) + b
    c.sort()
    d = c[::-1]
    e = list(d)
    r[0] = e[0] + c.index(2) + c.count(1)
    e.reverse()
    f = e.copy()
    r[1] = f[0]

def main():
    t = Thread(target=w)
    t.start()
    t.join()
    assert r[0] == 5 and r[1] == 1

Thread(target=main).start()
"""


def test_list_methods_and_arithmetic_in_a_thread() -> None:
    # In a thread (compiled code, not module initialisation), with no list that grows.
    assert cpython(IN_A_THREAD).returncode == 0
    assert check(IN_A_THREAD).verdict == "ok"
    assert check(IN_A_THREAD.replace("r[1] == 1", "r[1] == 3")).verdict == "violation"
