"""Gaps the Real Python corpus hit (issue 24): ``threading.current_thread()``, ``get_ident()``, ``local()``
(lang/threadinfo.py), ...

Each construct checks under ``--reduction none`` and every reduction agrees (``differential.run_differential``);
each has a bug twin that every reduction finds; deterministic programs run under CPython too and must agree.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from differential import run_differential
from test_footprints import all_uncovered, compile_src

import movers
from movers.reduce import REDUCTIONS

ALL = tuple(REDUCTIONS)


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def agree(source: str, verdict: str, kind: str | None = None) -> dict[str, movers.Result]:
    results = run_differential(source, ALL)
    for name, r in results.items():
        assert r.verdict == verdict, (name, r.verdict, r.violations, r.error)
        if kind is not None:
            assert {v.kind for v in r.violations} == {kind}, (name, r.violations)
    return results


def cpython(source: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "model.py"
    path.write_text(source)
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60)


# -- current_thread().name, get_ident() -----------------------------------------------------------------------

NAMES = src("""
    import threading

    log = []

    def greet(person):
        log.append(f"{threading.current_thread().name}: {person}")

    def main():
        threads = [threading.Thread(target=greet, args=("ann",)), threading.Thread(target=greet, args=("bob",)),
                   threading.Thread(target=greet, args=("cy",), name="greeter")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(log) == EXPECTED, log
        assert threading.current_thread().name == "MainThread"
        assert [t.name for t in threads] == ["Thread-1 (greet)", "Thread-2 (greet)", "greeter"]

    main()
""")
NAMES_OK = NAMES.replace("EXPECTED", '["Thread-1 (greet): ann", "Thread-2 (greet): bob", "greeter: cy"]')
NAMES_BUG = NAMES.replace("EXPECTED", '["Thread-1 (greet): ann", "Thread-2 (greet): bob", "Thread-3 (greet): cy"]')


def test_thread_names_as_cpython_gives_them(tmp_path: Path) -> None:
    assert cpython(NAMES_OK, tmp_path).returncode == 0
    agree(NAMES_OK, "ok")


def test_thread_names_twin_is_found(tmp_path: Path) -> None:
    assert cpython(NAMES_BUG, tmp_path).returncode != 0
    agree(NAMES_BUG, "violation", "assertion")


def test_main_thread_name_in_the_module_code() -> None:
    r = movers.check(src("""
        import threading
        assert threading.current_thread().name == "MainThread"
        assert threading.current_thread() is threading.current_thread()
    """))
    assert r.verdict == "ok", r.violations


def test_current_thread_is_the_thread_object() -> None:
    agree(src("""
        import threading

        seen = []

        def work():
            seen.append(threading.current_thread())

        t = threading.Thread(target=work)
        t.start()
        t.join()
        assert seen == [t]
        assert seen[0] is not threading.current_thread()
    """), "ok")


IDENTS = src("""
    import threading

    ids = []
    all_in = threading.Barrier(3)  # all alive together: CPython may give an ended thread's number again

    def work():
        ids.append(threading.get_ident())
        ids.append(threading.get_ident())
        all_in.wait()

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    all_in.wait()
    for t in threads:
        t.join()
    assert ids.count(ids[0]) == 2 and len(set(ids)) == 2, ids
    assert threading.get_ident() not in ids
    assert isinstance(threading.get_ident(), int)
""")


def test_get_ident_is_an_int_unique_per_thread(tmp_path: Path) -> None:
    assert cpython(IDENTS, tmp_path).returncode == 0
    agree(IDENTS, "ok")


def test_get_ident_twin_is_found(tmp_path: Path) -> None:
    bug = IDENTS.replace("len(set(ids)) == 2", "len(set(ids)) == 1")
    assert cpython(bug, tmp_path).returncode != 0
    agree(bug, "violation", "assertion")


def test_the_main_threads_ident_is_the_same_before_and_after_it_starts_threads() -> None:
    agree(src("""
        import threading

        def work():
            pass

        before = threading.get_ident()
        t = threading.Thread(target=work)
        t.start()
        t.join()
        assert threading.get_ident() == before
    """), "ok")


# -- threading.local() ------------------------------------------------------------------------------------------

LOCAL = src("""
    import threading

    context = threading.local()
    mismatches = []

    def handle(request_id):
        context.request_id = request_id
        context.request_id += "!"
        if context.request_id != request_id + "!":
            mismatches.append(request_id)

    threads = [threading.Thread(target=handle, args=(rid,)) for rid in ("r1", "r2")]
    context.request_id = "main"
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mismatches == [], mismatches
    assert context.request_id == "main"
""")


def test_local_fields_are_per_thread(tmp_path: Path) -> None:
    assert cpython(LOCAL, tmp_path).returncode == 0
    agree(LOCAL, "ok")


def test_shared_object_instead_of_local_is_found() -> None:
    bug = LOCAL.replace("context = threading.local()", "class C:\n    pass\n\n\ncontext = C()")
    bug = bug.replace('context.request_id = "main"\n', "")
    bug = bug.replace('assert context.request_id == "main"\n', "")
    bug = bug.replace("class C:\n    pass", "class C:\n    def __init__(self):\n        self.request_id = ''")
    agree(bug, "violation", "assertion")


def test_local_attribute_another_thread_set_is_an_attribute_error(tmp_path: Path) -> None:
    bug = src("""
        import threading

        context = threading.local()
        context.user = "main"
        seen = []

        def work():
            seen.append(context.user)

        t = threading.Thread(target=work)
        t.start()
        t.join()
    """)
    assert "AttributeError" in cpython(bug, tmp_path).stderr
    for r in agree(bug, "violation", "runtime-error").values():
        assert "has no attribute 'user'" in r.violations[0].message


# -- a Thread subclass's super().__init__(name=..., daemon=...) ---------------------------------------------------

SUBCLASS = src("""
    import threading

    names = []

    class Summer(threading.Thread):
        def __init__(self, numbers):
            super().__init__(name=f"summer-{len(numbers)}", daemon=False)
            self.numbers = numbers
            self.result = None

        def run(self):
            names.append(threading.current_thread().name)
            self.result = sum(self.numbers)

    workers = [Summer([1, 2]), Summer([3])]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert [w.result for w in workers] == [3, 3]
    assert sorted(names) == EXPECTED, names
    assert [w.name for w in workers] == ["summer-2", "summer-1"]
""")


def test_subclass_init_name(tmp_path: Path) -> None:
    ok = SUBCLASS.replace("EXPECTED", '["summer-1", "summer-2"]')
    assert cpython(ok, tmp_path).returncode == 0
    agree(ok, "ok")


def test_subclass_init_name_twin_is_found(tmp_path: Path) -> None:
    bug = SUBCLASS.replace("EXPECTED", '["Thread-1", "Thread-2"]')
    assert cpython(bug, tmp_path).returncode != 0
    agree(bug, "violation", "assertion")


DAEMON = src("""
    import threading

    forever = threading.Event()

    class Server(threading.Thread):
        def __init__(self):
            super().__init__(daemon=DAEMON)

        def run(self):
            forever.wait()

    s = Server()
    s.start()
""")


def test_subclass_daemon_is_not_waited_for() -> None:
    agree(DAEMON.replace("DAEMON", "True"), "ok")


def test_subclass_not_daemon_twin_deadlocks() -> None:
    agree(DAEMON.replace("DAEMON", "False"), "violation", "deadlock")


def test_subclass_init_other_arguments_are_refused() -> None:
    r = movers.check(src("""
        import threading

        class W(threading.Thread):
            def __init__(self):
                super().__init__(None, target=None)

            def run(self):
                pass

        W().start()
    """))
    assert r.verdict == "error" and "takes only name= and daemon=" in r.error, r.error


# -- lock.locked() ----------------------------------------------------------------------------------------------

LOCKED = src("""
    import threading

    m = threading.Lock()
    seen = []

    def holder():
        with m:
            seen.append("held")

    def watcher():
        seen.append(m.locked())

    assert not m.locked()
    m.acquire()
    assert m.locked()
    m.release()
    threads = [threading.Thread(target=holder), threading.Thread(target=watcher)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not m.locked()
    assert CHECK, seen
""")


def test_locked_reads_the_lock(tmp_path: Path) -> None:
    ok = LOCKED.replace("CHECK", "len(seen) == 2")
    assert cpython(ok, tmp_path).returncode == 0
    agree(ok, "ok")


def test_locked_seen_while_another_thread_holds_it_is_found() -> None:
    # Under CPython the watcher almost always runs when nobody holds the lock: the interleaving where it
    # does not is the one every reduction must keep.
    agree(LOCKED.replace("CHECK", "True not in seen"), "violation", "assertion")


def test_rlock_has_no_locked_in_cpython_3_11(tmp_path: Path) -> None:
    bug = src("""
        import threading

        r = threading.RLock()
        x = r.locked()
    """)
    if sys.version_info < (3, 14):
        assert "AttributeError" in cpython(bug, tmp_path).stderr
    r = movers.check(bug)
    assert r.verdict == "violation" and "has no attribute 'locked'" in r.violations[0].message, r


# -- del ----------------------------------------------------------------------------------------------------------

DEL_SINGLE = src("""
    d = {"a": 1, "b": 2, "c": 3}
    del d["b"]
    xs = [10, 20, 30, 40]
    del xs[1]
    del xs[-1]
    x = 5
    del x, d["a"]
    print(d, xs)

    def f():
        y = 1
        del y
        try:
            return y
        except UnboundLocalError:
            return "unbound"

    print(f())
    try:
        x
    except NameError as e:
        print(e)
    for bad in ("del d['zz']", "del xs[7]", "del s[0]"):
        pass
""")


def test_del_as_cpython(tmp_path: Path) -> None:
    expected = cpython(DEL_SINGLE, tmp_path)
    assert expected.returncode == 0, expected.stderr
    body = DEL_SINGLE.replace("print(d, xs)", 'assert (d, xs) == ({"c": 3}, [10, 30]), (d, xs)')
    assert expected.stdout.splitlines()[1] == "unbound"
    body = body.replace("print(f())", "assert f() == 'unbound'")
    body = body.replace("        print(e)", "        assert str(e) == " + repr(expected.stdout.splitlines()[2]))
    r = movers.check(body)
    assert r.verdict == "ok", (r.error, r.violations)


def test_del_errors_as_cpython(tmp_path: Path) -> None:
    cases = {
        "d = {'a': 1}\ndel d['zz']\n": ("KeyError", "'zz'"),
        "xs = [1]\ndel xs[7]\n": ("IndexError", "list assignment index out of range"),
        "s = 'ab'\ndel s[0]\n": ("TypeError", "'str' object doesn't support item deletion"),
        "x = 1\ndel x\ndel x\n": ("NameError", "name 'x' is not defined"),
    }
    for source, (exc, text) in cases.items():
        err = cpython(source, tmp_path).stderr
        assert exc in err and text in err, err
        r = movers.check(source)
        assert r.verdict == "violation" and text in r.violations[0].message, (source, r.error, r.violations)


DEL_RACE = src("""
    import threading

    pending = {"job1": "queued", "job2": "queued"}
    done = []

    def cancel(job, who):
        with LOCK:
            if job in pending:
                del pending[job]
                done.append(who)

    lock = threading.Lock()
    threads = [threading.Thread(target=cancel, args=("job1", who)) for who in ("ann", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert pending == {"job2": "queued"} and len(done) == 1
""")


def test_del_under_a_lock_is_ok() -> None:
    agree(DEL_RACE.replace("LOCK", "lock"), "ok")


def test_del_check_then_act_race_is_found() -> None:
    bug = DEL_RACE.replace("with LOCK:", "if True:")
    results = agree(bug, "violation", "runtime-error")
    assert all("KeyError" in r.violations[0].message for r in results.values())


def test_del_list_element_race_is_found() -> None:
    agree(src("""
        import threading

        xs = [1, 2, 3]

        def drop():
            if len(xs) > 2:
                del xs[0]

        threads = [threading.Thread(target=drop) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert xs == [2, 3], xs
    """), "violation", "assertion")


# -- bound methods as values --------------------------------------------------------------------------------------

BOUND = src("""
    import threading

    class Counter:
        def __init__(self):
            self.lock = threading.Lock()
            self.n = 0

        def add(self, k):
            with LOCK:
                self.n += k

    c = Counter()
    threads = [threading.Thread(target=c.add, args=(k,)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert c.n == 3, c.n
""")


def test_bound_method_as_thread_target(tmp_path: Path) -> None:
    ok = BOUND.replace("LOCK", "self.lock")
    assert cpython(ok, tmp_path).returncode == 0
    agree(ok, "ok")


def test_bound_method_target_race_is_found() -> None:
    # the receiver reaches both threads through the bound method: no escape analysis may call it local
    bug = BOUND.replace("with LOCK:\n            self.n += k", "n = self.n\n        self.n = n + k")
    agree(bug, "violation", "assertion")


def test_bound_method_in_a_variable(tmp_path: Path) -> None:
    source = src("""
        class Acc:
            def __init__(self, start):
                self.total = start

            def add(self, k, times=1):
                self.total += k * times
                return self.total

        a = Acc(10)
        b = Acc(100)
        f = a.add
        g = b.add
        r = [f(1), g(2, times=3), f(k=5)]
        print(r, a.total, b.total)
        assert r == [11, 106, 16] and a.total == 16 and b.total == 106
    """)
    out = cpython(source, tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == "[11, 106, 16] 16 106", out
    r = movers.check(source)
    assert r.verdict == "ok", (r.error, r.violations)
    bad = movers.check(source.replace("f(k=5)", "f(5, 6, 7)"))
    assert bad.verdict == "violation" and "positional arguments but 4 were given" in bad.violations[0].message, bad


def test_bound_method_called_from_threads_through_a_variable() -> None:
    agree(src("""
        import threading

        class Box:
            def __init__(self):
                self.items = []

            def put(self, x):
                self.items.append(x)

        box = Box()
        put = box.put

        def worker(x):
            put(x)

        threads = [threading.Thread(target=worker, args=(x,)) for x in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert box.items == [1, 2], box.items
    """), "violation", "assertion")


# -- @dataclass field(default_factory=threading.Lock, compare=False) ---------------------------------------------

ACCOUNTS = src("""
    import threading
    from dataclasses import dataclass, field

    @dataclass
    class Account:
        id: int
        balance: int
        lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def transfer(src, dst, amount):
        with src.lock:
            ok = src.balance >= amount
            if ok:
                src.balance -= amount
        if ok:
            with dst.lock:
                dst.balance += amount

    a = Account(1, 100)
    b = Account(2, 100)
    assert a.lock is not b.lock
    same = Account(1, 5) == Account(1, 5)
    assert same
    t1 = threading.Thread(target=transfer, args=(a, b, 30))
    t2 = threading.Thread(target=transfer, args=(b, a, 50))
    t1.start()
    t2.start()
    t1.join()
    t2.join()
    assert a.balance + b.balance == 200 and (a.balance, b.balance) == (120, 80), (a, b)
""")


def test_default_factory_lock_and_compare_false(tmp_path: Path) -> None:
    assert cpython(ACCOUNTS, tmp_path).returncode == 0
    agree(ACCOUNTS, "ok")


def test_default_factory_lock_twin_is_found() -> None:
    # a lock per object: taking the source's lock to credit the destination races with the other transfer
    bug = ACCOUNTS.replace("with dst.lock:", "with src.lock:")
    agree(bug, "violation", "assertion")


def test_compare_false_fields_are_not_compared(tmp_path: Path) -> None:
    source = src("""
        from dataclasses import dataclass, field

        @dataclass
        class P:
            x: int
            tag: str = field(default="", compare=False)

        @dataclass
        class Q(P):
            y: int = 0

        assert P(1, "a") == P(1, "b")
        assert Q(1, "a", 2) == Q(1, "b", 2)
        assert Q(1, "a", 2) != Q(1, "a", 3)
        print("ok")
    """)
    out = cpython(source, tmp_path)
    assert out.returncode == 0, out.stderr
    r = movers.check(source)
    assert r.verdict == "ok", (r.error, r.violations)
    bad = movers.check(source.replace('P(1, "a") == P(1, "b")', 'P(1, "a") == P(2, "a")'))
    assert bad.verdict == "violation"


def test_default_factory_model_class() -> None:
    r = movers.check(src("""
        from dataclasses import dataclass, field

        class Box:
            def __init__(self):
                self.items = []

        @dataclass
        class Holder:
            name: str
            box: Box = field(default_factory=Box)

        h = Holder("a")
        g = Holder("b")
        h.box.items.append(1)
        assert g.box.items == [] and h.box.items == [1]
    """))
    assert r.verdict == "ok", (r.error, r.violations)


# -- calling a call's result; a lambda calling a model function inside a comprehension ----------------------------

def test_call_of_a_calls_result_as_cpython(tmp_path: Path) -> None:
    source = src("""
        def make(k):
            def f(x):
                return x + k
            return f

        r = make(2)(3)
        s = (lambda y: y * 2)(4)
        print(r, s)
        assert (r, s) == (5, 8)
    """)
    assert cpython(source, tmp_path).stdout.strip() == "5 8"
    assert movers.check(source).verdict == "ok"
    assert movers.check(source.replace("(5, 8)", "(6, 8)")).verdict == "violation"


WITHDRAW = src("""
    import threading

    class Account:
        def __init__(self):
            self.balance = 100
            self.lock = threading.Lock()

    outcomes = []

    def withdraw(acct, amount):
        with LOCK:
            if acct.balance >= amount:
                acct.balance -= amount
                return True
            return False

    acct = Account()
    threads = [threading.Thread(target=lambda: outcomes.append(withdraw(acct, 80))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert acct.balance == 20 and sorted(outcomes) == [False, True], (acct.balance, outcomes)
""")


def test_lambda_calling_a_model_function_in_a_comprehension() -> None:
    agree(WITHDRAW.replace("LOCK", "acct.lock"), "ok")


def test_lambda_in_a_comprehension_twin_is_found() -> None:
    bug = WITHDRAW.replace("with LOCK:", "if True:")
    agree(bug, "violation", "assertion")


# -- the static facts cover every access each construct makes ----------------------------------------------------

COVERED = {
    "current_thread": NAMES_OK,
    "get_ident": IDENTS,
    "local": LOCAL,
    "subclass": SUBCLASS.replace("EXPECTED", '["summer-1", "summer-2"]'),
    "locked": LOCKED.replace("CHECK", "len(seen) == 2"),
    # (del d[k] as d.pop(k): all_uncovered does not read dicts' accesses yet)
    "del-list": DEL_RACE.replace("with LOCK:", "if True:").replace('pending = {"job1": "queued", "job2": "queued"}',
                                                                   "pending = [1, 2, 3]").replace(
        "if job in pending:", "if len(pending) > 2:").replace("del pending[job]", "del pending[0]"),
    "bound-method": BOUND.replace("with LOCK:\n            self.n += k", "n = self.n\n        self.n = n + k"),
    "dataclass-factory": ACCOUNTS,
    "lambda-in-comprehension": WITHDRAW.replace("LOCK", "acct.lock"),
}


@pytest.mark.parametrize("name", sorted(COVERED))
def test_facts_cover_the_accesses(name: str) -> None:
    assert all_uncovered(compile_src(COVERED[name])) == []


NAMES_NO_MAIN = src("""
    import threading

    def w(k):
        assert threading.current_thread().name == f"Thread-{k} (w)", threading.current_thread().name

    t1 = threading.Thread(target=w, args=(FIRST,))
    t2 = threading.Thread(target=w, args=(SECOND,))
    t1.start()
    t2.start()
""")


def test_default_names_when_the_module_code_ends_with_its_starts(tmp_path: Path) -> None:
    ok = NAMES_NO_MAIN.replace("FIRST", "1").replace("SECOND", "2")
    assert cpython(ok, tmp_path).returncode == 0
    agree(ok, "ok")


def test_default_names_when_the_module_code_ends_with_its_starts_twin(tmp_path: Path) -> None:
    bug = NAMES_NO_MAIN.replace("FIRST", "2").replace("SECOND", "1")
    assert "AssertionError" in cpython(bug, tmp_path).stderr
    agree(bug, "violation", "assertion")


def test_default_names_of_threads_started_after_the_main_thread_waits() -> None:
    agree(src("""
        import threading

        names = []

        def w():
            names.append(threading.current_thread().name)

        first = threading.Thread(target=w)
        first.start()
        first.join()
        later = [threading.Thread(target=w) for _ in range(2)]
        for t in later:
            t.start()
        for t in later:
            t.join()
        assert sorted(names) == ["Thread-1 (w)", "Thread-2 (w)", "Thread-3 (w)"], names
        assert threading.current_thread().name == "MainThread"
    """), "ok")


def test_thread_names_in_a_parallel_search() -> None:
    # worker processes see the main thread's id that the initial state recorded
    assert movers.check(NAMES_OK, workers=2).verdict == "ok"
    assert movers.check(NAMES_BUG, workers=2).verdict == "violation"


def test_no_thread_symmetry_for_models_that_see_thread_numbers() -> None:
    from movers.semantics.symmetry import symmetry_problem
    for source in (NAMES_OK, IDENTS, LOCAL, LOCKED.replace("CHECK", "True"),
                   src("""
                       import threading

                       def w():
                           pass

                       t = threading.Thread(target=w)
                       t.start()
                       n = t.name
                   """)):
        assert symmetry_problem(compile_src(source)) is not None


# -- Thread(kwargs={...}) -----------------------------------------------------------------------------------------

KWARGS = src("""
    import threading

    log = []

    def greet(person, greeting="hello", punct="."):
        log.append(f"{threading.current_thread().name}: {greeting} {person}{punct}")

    threads = [
        threading.Thread(target=greet, args=("ann",), kwargs={"greeting": "hi", "punct": "!"}, name="g1"),
        threading.Thread(target=greet, kwargs={"person": "bob"}, name="g2"),
        threading.Thread(target=lambda who, greeting: greet(who, greeting), args=("cy",), kwargs={"greeting": "yo"},
                         name="g3"),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(log) == EXPECTED, log
""")
KWARGS_OK = KWARGS.replace("EXPECTED", '["g1: hi ann!", "g2: hello bob.", "g3: yo cy."]')


def test_thread_kwargs(tmp_path: Path) -> None:
    assert cpython(KWARGS_OK, tmp_path).returncode == 0
    agree(KWARGS_OK, "ok")


def test_thread_kwargs_twin_is_found(tmp_path: Path) -> None:
    bug = KWARGS.replace("EXPECTED", '["g1: hello ann.", "g2: hello bob.", "g3: yo cy."]')
    assert cpython(bug, tmp_path).returncode != 0
    agree(bug, "violation", "assertion")


def test_thread_kwargs_unknown_name_is_a_type_error_in_the_thread(tmp_path: Path) -> None:
    bug = KWARGS_OK.replace('kwargs={"person": "bob"}', 'kwargs={"persn": "bob"}')
    assert "unexpected keyword argument 'persn'" in cpython(bug, tmp_path).stderr
    for r in agree(bug, "violation", "runtime-error").values():
        assert "unexpected keyword argument 'persn'" in r.violations[0].message


def test_thread_args_string_passes_its_characters(tmp_path: Path) -> None:
    source = src("""
        import threading

        got = []

        def f(a, b, c):
            got.append(a + c)

        t = threading.Thread(target=f, args=("xyz"))
        t.start()
        t.join()
        assert got == ["xz"], got
    """)
    assert cpython(source, tmp_path).returncode == 0
    agree(source, "ok")


def test_thread_kwargs_must_be_a_dict_display() -> None:
    r = movers.check(src("""
        import threading

        def f(a):
            pass

        kw = {"a": 1}
        t = threading.Thread(target=f, kwargs=kw)
    """))
    assert r.verdict == "error" and "must be a dict display with string keys" in r.error, r.error


COVERED["kwargs"] = KWARGS_OK
