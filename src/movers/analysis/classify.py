"""Classification of locations and their exclusive access predicates.

Stoller & Cohen, *Optimistic Synchronization-Based State-Space Reduction* (TACAS 2003), section 4: every
shared location is *unshared*, *protected* (with an exclusive access predicate e^x_i per thread i) or
*unprotected*; section 4.1: the synchronization discipline, whose violation sets the history flag q;
section 8: guess the classification, check the discipline **in the reduced system**, and on a violation
revise the guess and start again; section 9: infer the monitor that protects a location with the lockset
algorithm during the search, with e^x_i = init^x_i or (i = m.owner and not init^x).

Sources of a location's classification, in order of precedence:

1. the model's declarations (``exclusive``, ``guarded_by``, ``thread_local``): the predicate is the user's;
   a violation is the user's bug and is reported, never refined away;
2. locations an ``@invariant`` reads: unprotected, so that invariant violations cannot hide inside
   invisible runs (the side condition I u_i <= u_i I of section 3);
3. automatic guesses, refined on violation. A location starts *unshared* by the first thread that
   accesses it (e^x_i = (i = k)). When another thread accesses it, it becomes *protected by the locks
   held at every access so far* (the lockset: e^x_i = i holds all of them), or *read-only* if nobody has
   written it since initialisation (reads commute with reads; a write is then a violation), or
   *unprotected*. Each refinement strictly weakens the guess, so refinement terminates.

Initialisation (section 9's init^x_i): a thread may access the fields of an object while it runs that
object's ``__init__`` and no other thread can reach the object; such accesses are always allowed, are
invisible and do not count for the lockset. Section 9 lets init^x_i hold for the whole constructor and
relies on the discipline to catch another thread's access meanwhile, but an exempt access never enters
the guess, so a constructor that lets ``self`` escape (starts a thread with it, stores it in a global or in
an object another thread reaches) and then writes a field would hide the other thread's access between the
two writes. So the exemption ends as soon as ``self`` escapes: from then on the constructor's accesses are
checked and recorded like any other. The exemption is sound because it is a dynamic *unshared*
predicate: no other thread can reach the object, so no other thread's step can access it or make it
reachable (only the initialising thread's own steps can), and the access commutes with every other
thread's step; it holds for one thread at a time and no other thread can take it away (WFendExcl).

Abstract locations name what the classification is about, stably across states and heap renumbering:
``("g", slot)`` a global, ``("f", cls, index)`` a field of every object of a class, or the element at that
index of every list made by one list expression (each list expression is a class of its own). Lock paths
name locks the same way: ``("g", slot)`` the lock in a
global, ``("f", index)`` the lock in a field of the accessed object, ``("mon",)`` the accessed object's
own monitor.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Any

from movers.analysis.declarations import declarations_at, location_name
from movers.ir.program import CONDITION, LOCK, MON, RLOCK, Code, Exclusive, Program, Ref, ref
from movers.semantics.state import State, reachable
from movers.semantics.system import RUNTIME_ERRORS, runtime_message

UNSHARED, READONLY, LOCKED, UNPROTECTED = "unshared", "read-only", "protected", "unprotected"


@dataclass(frozen=True)
class Protection:
    kind: str
    owner: int = -1  # UNSHARED: the only thread that may access it
    locks: frozenset = frozenset()  # LOCKED: lock paths that must all be held

    def describe(self, program: Program) -> str:
        if self.kind == UNSHARED:
            return f"unshared (thread {self.owner})"
        if self.kind == LOCKED:
            return "protected by " + ", ".join(sorted(lock_path_name(program, p) for p in self.locks))
        return self.kind


class Refine(Exception):
    """The guessed classification was violated: the search restarts with the refined one."""

    def __init__(self, key: Any, old: Protection, new: Protection, message: str) -> None:
        super().__init__(message)
        self.key, self.old, self.new, self.message = key, old, new, message


_NOTHING: set[int] = set()

# The refinement key of ``Classification.lock_state_observed`` (no location: every lock's state).
LOCK_STATE = ("lock state",)
LOCK_CLASSES = frozenset({"Lock", "RLock", "Semaphore", "Condition"})


def is_lock_state(key: Any) -> bool:
    """Whether a location key is the state of a lock (owner, count, value) or of an object's monitor."""
    return key[0] != "g" and (key[2] < 2 or key[1].builtin in LOCK_CLASSES)


def in_constructor(th: tuple) -> bool:
    """Is some frame of this thread stack a constructor's (where the discipline's init^x_t rule asks which
    objects other threads reach)?"""
    for frame in th:
        if frame[0].name.endswith(".__init__"):
            return True
    return False


def _own_bookkeeping(ts: Any, state: State, t: int) -> bool:
    """Whether thread t's step is ``wait`` or ``notify``, which read the wait set (an object's monitor slot)
    as part of the lock operation itself, not as data."""
    node = ts.next_node(state, t)
    return node is not None and node.kind in ("wait", "notify")


def key_name(program: Program, key: Any) -> str:
    if key[0] == "g":
        return program.globals[key[1]]
    cls, idx = key[1], key[2]
    if idx < 2:
        return f"the monitor of {cls.name} objects"
    if cls.is_list:
        return f"list (line {cls.line})[{idx - 2}]"
    if cls.builtin == "dict":
        return f"dict (line {cls.line}) entry {(idx - 2) // 2}"
    if cls.builtin == "set":
        return f"set (line {cls.line}) element {idx - 2}"
    if cls.builtin == "deque":  # lang/deques.py: maxlen, the iterators' token, then the elements
        return f"deque (line {cls.line}) {'maxlen' if idx == 2 else 'iterators' if idx == 3 else f'element {idx - 4}'}"
    return f"{cls.name}.{cls.fields[idx - 2]}"


def lock_path_name(program: Program, path: Any) -> str:
    if path[0] == "g":
        return program.globals[path[1]]
    if path[0] == "f":
        return f"self.<field {path[1] - 2}>"
    return "the object's monitor"


def lock_owner(heap: tuple, o: tuple) -> Any:
    """The holder of an object's own lock: a Lock's or RLock's owner, a Condition's lock's owner, else the
    intrinsic monitor's owner (None while free or while its holder waits)."""
    c = o[0]
    if c is LOCK or c is RLOCK:
        return o[2]
    if c is CONDITION:
        return heap[o[2].i][2]
    mon = o[MON]
    return mon[0] if mon else None


def held_refs(state: State, t: int) -> set[int]:
    """Heap objects whose lock (or monitor) thread ``t`` holds; a Condition counts with its lock."""
    heap = state[1]
    return {i for i, o in enumerate(heap) if lock_owner(heap, o) == t}


def _static_reads(codes: list[Code]) -> tuple[set[str], set[str], bool]:
    names: set[str] = set()
    fields: set[str] = set()
    elements = False
    for code in codes:
        for n in code.nodes:
            names |= n.reads
            fields |= n.fields_read
            elements = elements or n.elements_read
    return names, fields, elements


def predicate_support(program: Program) -> tuple[set[str], set[str]]:
    """Globals and field names that declared exclusive access predicates may read: a step that writes
    one of them might change a predicate, so it is visible."""
    names: set[str] = set()
    fields: set[str] = set()
    for d in program.exclusives:
        try:
            tree = ast.parse(d.text, mode="eval")
        except SyntaxError:
            continue
        call = tree.body
        if not isinstance(call, ast.Call) or len(call.args) != 2:
            continue
        pred = call.args[1]
        for n in ast.walk(pred):
            if isinstance(n, ast.Name) and n.id in program.globals:
                names.add(n.id)
            elif isinstance(n, ast.Attribute):
                fields.add(n.attr)
    return names, fields


def predicate_failure(ts: Any, state: State, d: Exclusive, t: int, obj: Any) -> str | None:
    """The message when evaluating a declared exclusive access predicate fails (a runtime error in the
    model's predicate, as the full search reports it: ``instrument/properties.py``), else None."""
    try:
        ts.evaluate_predicate(state, d.pred, t, obj)
    except RUNTIME_ERRORS as e:
        return f"the exclusive access predicate of line {d.line} fails: {runtime_message(e)}"
    return None


class Classification:
    """The current guess, the lockset bookkeeping, and the discipline check (section 4.1's q)."""

    def __init__(
        self, program: Program, refine: bool = True, incremental: bool = False, infer: bool = True
    ) -> None:
        self.program = program
        self.refine = refine
        # Without lock inference, no location is guessed protected by locks (unshared and read-only still
        # are: nothing else would let even a lock acquire be a mover).
        self.infer = infer
        # Incremental (Flanagan & Qadeer, section 6): a violated guess is weakened at once and the search
        # goes on; ``version`` counts the weakenings so that the search can re-expand what it stored.
        self.incremental = incremental
        self.version = 0
        self._guards_checked: set[tuple[Any, ...]] = set()  # see check_guards
        # The lengths of the states whose first three parts are the program's globals, heap and threads and
        # whose other parts no guard reads: the program's own (3), and P#'s over it (4: ``reduce/phases.py``
        # adds it), where check_guards may remember what it checked.
        self.guard_memo_lengths = {3}
        self.guess: dict[Any, Protection] = {}
        self.lockset: dict[Any, frozenset] = {}
        self.written: set[Any] = set()
        self.refinements: list[Refine] = []
        inv_codes = program.reachable_codes([c for _, c in program.invariants])
        names, fields, elements = _static_reads(inv_codes)
        self.unprotected_globals = {program.globals.index(n) for n in names if n in program.globals}
        self.unprotected_fields = fields
        self.unprotected_elements = elements
        pn, pf = predicate_support(program)
        self.support_globals = {program.globals.index(n) for n in pn}
        self.support_fields = pf
        self.declared = bool(program.exclusives)
        self._decl_state: Any = None
        self._decls: Any = None
        self._shared_state: Any = None
        self._shared: tuple[int, set[int]] = (-1, set())
        self._values: dict[State, dict] = {}
        # Declared locations that some blocked guard reads without access: accessing them is visible.
        self.watched: set[Any] = set()
        # Whether some step reads the state of a lock or monitor as data (``m.owner``). Lock operations
        # then do not commute with that read (an acquire changes what it sees), so for the reductions that
        # use movers (``lock_state_matters``: transactions, atomicity) every lock operation is a non-mover.
        self.lock_state_observed = False
        self.lock_state_matters = False
        # Caches of ``held`` and ``lock_paths``, by the identity of the heap and globals they were built from.
        self._held_heap: Any = None
        self._held_by: dict[Any, set[int]] = {}
        self._refs_of: Any = None
        self._global_refs: list[tuple[int, int]] = []

    # -- keys ------------------------------------------------------------------------------------------------

    @staticmethod
    def key(state: State, loc: Any) -> Any:
        if type(loc) is int:
            return ("g", loc)
        r, idx = loc
        return ("f", state[1][r.i][0], idx)

    def declarations(self, state: State) -> tuple[dict[Any, list[Exclusive]], list[Exclusive]]:
        if state is not self._decl_state:
            self._decl_state = state
            self._decls = declarations_at(self.program, state)
        return self._decls

    def declared_for(self, state: State, loc: Any) -> list[Exclusive]:
        by_loc, fields = self.declarations(state)
        found = list(by_loc.get(loc, ()))
        if fields and type(loc) is tuple:
            r, idx = loc
            cls = state[1][r.i][0]
            for d in fields:
                c, f = d.target[1], d.target[2]
                if cls.is_subclass_of(c) and c.field_index[f] == idx:
                    found.append(d)
        return found

    def is_unprotected_key(self, key: Any) -> bool:
        if key[0] == "g":
            return key[1] in self.unprotected_globals
        cls, idx = key[1], key[2]
        if idx < 2 or (cls.builtin and not cls.is_list):
            # Lock state (an owner, a count, a semaphore's value, a monitor) read as data: every thread's
            # lock operations change it, so it is never protected.
            return True
        if cls.is_list:
            return self.unprotected_elements
        return cls.fields[idx - 2] in self.unprotected_fields

    def writes_support(self, state: State, loc: Any) -> bool:
        """Might writing ``loc`` change an exclusive access predicate (declared, or a lockset's lock path)?"""
        if type(loc) is int:
            if loc in self.support_globals:
                return True
            key = ("g", loc)
            return any(p.kind == LOCKED and key in p.locks for p in self.guess.values())
        r, idx = loc
        o = state[1][r.i]
        if not o[0].is_list and self.support_fields and idx - 2 < len(o[0].fields):
            if o[0].fields[idx - 2] in self.support_fields:
                return True
        path = ("f", idx)
        return any(p.kind == LOCKED and path in p.locks for p in self.guess.values())

    # -- the discipline check -----------------------------------------------------------------------------------

    def held(self, state: State, t: int) -> set[int]:
        """``held_refs(state, t)``, from one pass over the heap per heap (every thread's step from a state,
        and every access of a step, asks about the same heap). The set is shared: do not change it."""
        heap = state[1]
        if heap is not self._held_heap:
            by: dict[Any, set[int]] = {}
            for i, o in enumerate(heap):
                w = lock_owner(heap, o)
                if w is not None:
                    by.setdefault(w, set()).add(i)
            self._held_heap, self._held_by = heap, by
        return self._held_by.get(t, _NOTHING)

    def lock_paths(self, state: State, t: int, loc: Any, held: set[int]) -> frozenset:
        g, heap = state[0], state[1]
        if g is not self._refs_of:
            self._refs_of = g
            self._global_refs = [(s, v.i) for s, v in enumerate(g) if type(v) is Ref]
        paths: set[tuple[Any, ...]] = {("g", s) for s, i in self._global_refs if i in held} if held else set()
        if type(loc) is tuple:
            r = loc[0]
            o = heap[r.i]
            for j in range(2, len(o)):
                v = o[j]
                if type(v) is Ref and v.i in held:
                    paths.add(("f", j))
            if r.i in held:
                paths.add(("mon",))
        return frozenset(paths)

    @staticmethod
    def holds(state: State, t: int, loc: Any, path: Any) -> bool:
        g, heap = state[0], state[1]
        if path[0] == "g":
            v = g[path[1]]
        elif type(loc) is tuple:
            o = heap[loc[0].i]
            v = loc[0] if path[0] == "mon" else (o[path[1]] if path[1] < len(o) else None)
        else:
            return False
        return type(v) is Ref and lock_owner(heap, heap[v.i]) == t

    @staticmethod
    def in_constructor(state: State, t: int, r: Ref) -> bool:
        """Is thread ``t`` running ``r``'s ``__init__`` (section 9's init^x_t)?"""
        for frame in state[2][t]:
            code = frame[0]
            if code.name.endswith(".__init__") and len(frame) > 2 and frame[2] is r:
                return True
        return False

    def reachable_by_others(self, state: State, t: int) -> set[int]:
        """Heap objects a thread other than ``t`` can reach, from the globals or its frames."""
        if state is not self._shared_state or self._shared[0] != t:
            roots: list[Any] = list(state[0])
            for u, th in enumerate(state[2]):
                if u != t:
                    for frame in th:
                        roots.extend(frame[2:])
            self._shared_state = state
            self._shared = (t, reachable(state, roots))
        return self._shared[1]

    def initialising(self, state: State, t: int, r: Ref) -> bool:
        """init^x_t for the fields of ``r``: thread ``t`` runs ``r``'s ``__init__`` and ``r`` has not
        escaped to another thread (module docstring, "Initialisation")."""
        return self.in_constructor(state, t, r) and r.i not in self.reachable_by_others(state, t)

    def check_access(
        self, ts: Any, state: State, t: int, reads: list[Any], writes: list[Any]
    ) -> tuple[bool, str | None]:
        """Check one executed step's accesses against the discipline.

        Returns (visible, violation): whether the step touches an unprotected location or might change
        an exclusive access predicate, and the message of a violated declared predicate. A violated
        guess raises ``Refine`` (or, without refinement, is returned as a violation).
        """
        visible = False
        heap_len = len(state[1])
        held: set[int] | None = None
        for is_write, locs in ((False, reads), (True, writes)):
            for loc in locs:
                if type(loc) is tuple and loc[0].i >= heap_len:
                    continue  # an object this step allocated: nobody else can see it yet
                if is_write and self.writes_support(state, loc):
                    visible = True
                decls = self.declared_for(state, loc) if self.declared else ()
                if decls:
                    obj = loc[0] if type(loc) is tuple else None
                    for d in decls:
                        failed = predicate_failure(ts, state, d, t, obj)
                        if failed is not None:
                            return True, failed
                        if not ts.evaluate_predicate(state, d.pred, t, obj):
                            where = location_name(self.program, state, loc)
                            return True, (f"thread {t} accesses {where} without exclusive "
                                          f"access ({d.text}, line {d.line})")
                    if self.watched and self.key(state, loc) in self.watched:
                        visible = True  # a blocked guard of another thread reads it: see check_guards
                    continue
                key = self.key(state, loc)
                if self.is_unprotected_key(key):
                    visible = True
                    if not self.lock_state_observed and is_lock_state(key) and not _own_bookkeeping(ts, state, t):
                        self._observe_lock_state(key, t)
                    continue
                if type(loc) is tuple and self.initialising(state, t, loc[0]):
                    continue
                if held is None:
                    held = self.held(state, t)
                paths = self.lock_paths(state, t, loc, held)
                ls = self.lockset.get(key)
                self.lockset[key] = paths if ls is None else ls & paths
                if is_write:
                    self.written.add(key)
                p = self.guess.get(key)
                if p is None:
                    self.guess[key] = Protection(UNSHARED, owner=t)
                    continue
                if p.kind == UNPROTECTED:
                    visible = True
                    continue
                ok = (
                    (p.kind == UNSHARED and p.owner == t)
                    or (p.kind == READONLY and not is_write)
                    or (p.kind == LOCKED and all(self.holds(state, t, loc, lp) for lp in p.locks))
                )
                if ok:
                    continue
                new = self._weaken(key, p, is_write)
                what = "writes" if is_write else "reads"
                msg = (f"thread {t} {what} {key_name(self.program, key)}, classified "
                       f"{p.describe(self.program)}")
                if not self.refine and new.kind == UNPROTECTED:
                    # Without refinement, report what would lose all protection: a race on the location.
                    return True, msg + " and no lock protects every access (automatic classification; --no-refine)"
                r = Refine(key, p, new, msg)
                if not self.incremental:
                    raise r
                self.apply(r)
                self.version += 1
                if not (
                    (new.kind == READONLY and not is_write)
                    or (new.kind == LOCKED and all(self.holds(state, t, loc, lp) for lp in new.locks))
                ):
                    visible = True
        return visible, None

    def check_guards(self, ts: Any, state: State) -> str | None:
        """Check what every thread's guard reads in ``state`` against the discipline. Stoller & Cohen's
        system model forbids protected variables in guards; we allow them but count a guard's reads as
        accesses, even while it blocks: otherwise an invisible run (or a transaction) that writes such a
        location could keep a guard false in the reduced system that a full interleaving finds true."""
        threads = state[2]
        # A guard's reads, and the check of them, depend on its thread's stack, the globals and the heap only
        # (guard_reads reads no other thread's locations): a thread's guard in a state is checked once per
        # such triple and classification (every combination of the other threads asks again otherwise).
        # Declared predicates and constructors (init^x_t asks what other threads reach) are checked each time.
        memo = not self.declared and len(state) in self.guard_memo_lengths
        for t in range(len(threads)):
            th = threads[t]
            if not th or th[-1][0].nodes[th[-1][1]].guard is None:
                continue
            done = None
            if memo and not in_constructor(th):
                done = (self.version, len(self.refinements), t, th, state[0], state[1])
                if done in self._guards_checked:
                    continue
            reads = ts.guard_reads(state, t)
            if not reads:
                continue
            if self.declared:
                # A blocked guard reading a *declared* location it has no access to is no violation yet (the
                # full search reports one only if the guard ever lets the step run). Instead the location is
                # watched: every access to it becomes visible (a non-mover), so that the reduced system shows
                # the guard every value the location takes, and a real access is then checked as usual.
                rest = []
                for loc in reads:
                    decls = self.declared_for(state, loc)
                    if not decls:
                        rest.append(loc)
                        continue
                    obj = loc[0] if type(loc) is tuple else None
                    for d in decls:
                        failed = predicate_failure(ts, state, d, t, obj)
                        if failed is not None:
                            return failed
                    key = self.key(state, loc)
                    if key not in self.watched and not all(
                        ts.evaluate_predicate(state, d.pred, t, obj) for d in decls
                    ):
                        self._watch(key, t)
                reads = rest
            _, bad = self.check_access(ts, state, t, reads, [])
            if bad is not None:
                return bad
            if done is not None:
                if len(self._guards_checked) >= 100_000:
                    self._guards_checked.clear()
                # Keyed by the classification as it is now: a weakening during the check is a new key.
                self._guards_checked.add((self.version, len(self.refinements), *done[2:]))
        return None

    def _watch(self, key: Any, t: int) -> None:
        self.watched.add(key)
        msg = f"thread {t}'s guard reads {key_name(self.program, key)} without exclusive access"
        p = Protection(UNPROTECTED)
        r = Refine(key, p, p, msg + ": its accesses become visible")
        if self.incremental:
            self.refinements.append(r)
            self.version += 1
        else:
            raise r

    def _weaken(self, key: Any, p: Protection, is_write: bool) -> Protection:
        # Data nobody writes needs no lock: read-only comes first, then the lockset, then unprotected.
        if p.kind == UNSHARED and key not in self.written and not is_write:
            return Protection(READONLY)
        locks = self.lockset.get(key, frozenset()) if self.infer else frozenset()
        if p.kind == LOCKED:
            locks = locks & p.locks
        if locks and not (p.kind == LOCKED and locks == p.locks):
            return Protection(LOCKED, locks=locks)
        return Protection(UNPROTECTED)

    def _observe_lock_state(self, key: Any, t: int) -> None:
        """A lock's state read as data: lock operations stop being movers (``lock_state_observed``). Where
        that matters, it is a weakening like any other: at once in incremental mode (the search re-expands
        what it stored), by a restart otherwise."""
        if not self.lock_state_matters:
            self.lock_state_observed = True
            return
        r = Refine(LOCK_STATE, Protection(UNSHARED, owner=t), Protection(UNPROTECTED),
                   f"thread {t} reads {key_name(self.program, key)} as data, so lock operations are not movers")
        if not self.incremental:
            raise r
        self.apply(r)
        self.version += 1

    def snapshot(self) -> dict[str, Any]:
        """Everything this classification has learnt, to go back to with ``restore`` (the incremental search
        redoes a pass from it: ``search/incremental.py``)."""
        return {k: _copied(v) for k, v in vars(self).items()}

    def restore(self, snapshot: dict[str, Any]) -> None:
        vars(self).update({k: _copied(v) for k, v in snapshot.items()})

    def apply(self, r: Refine) -> None:
        if r.key == LOCK_STATE:
            self.lock_state_observed = True
            self.refinements.append(r)
            return
        if r.key not in self.watched:
            self.guess[r.key] = r.new
        self.refinements.append(r)

    # -- declared predicates: disjointness and WFendExcl -----------------------------------------------------------

    def declared_values(self, ts: Any, state: State) -> dict[tuple[int, Any], list[int]]:
        """For each declared predicate and location, the threads for which it holds in ``state``."""
        hit = self._values.get(state)
        if hit is not None:
            return hit
        if len(self._values) > 20_000:
            self._values.clear()
        out: dict[tuple[int, Any], list[int]] = {}
        self._values[state] = out
        n = len(state[2])
        for k, d in enumerate(self.program.exclusives):
            objs: list[Any] = [None]
            if d.target[0] == "field":
                c = d.target[1]
                objs = [ref(i) for i, o in enumerate(state[1]) if o[0].is_subclass_of(c)]
            for obj in objs:
                try:
                    out[(k, obj)] = [t for t in range(n) if ts.evaluate_predicate(state, d.pred, t, obj)]
                except Exception:  # noqa: BLE001 - a failing predicate is reported by the access check
                    out[(k, obj)] = []
        return out

    def check_declared(
        self, ts: Any, before: State, after: State, t: int, renumbered: list[int] | None = None
    ) -> str | None:
        """Disjointness in ``after`` (section 4.1 (ii)), and that thread ``t``'s step from ``before`` to
        ``after`` took no other thread's exclusive access away (WFendExcl). A per-object predicate is
        compared on the same object before and after the step, whatever index heap canonicalisation gave
        it: ``renumbered`` is the step's Effect's (object k after the step is object renumbered[k] before;
        None when no object moved)."""
        a = self.declared_values(ts, after)
        for (k, _obj), holders in a.items():
            if len(holders) > 1:
                d = self.program.exclusives[k]
                return (f"exclusive access predicates of line {d.line} hold for threads "
                        f"{holders[0]} and {holders[1]} at once ({d.text})")
        b = self.declared_values(ts, before)
        moved = None if renumbered is None else {old: new for new, old in enumerate(renumbered)}
        for key, holders in b.items():
            obj = key[1]
            if obj is not None and moved is not None:
                if obj.i not in moved:
                    continue  # garbage after the step: nobody can access it any more
                key = (key[0], ref(moved[obj.i]))
            for i in holders:
                # A terminated thread accesses nothing more: taking its access away is harmless.
                if i != t and i < len(after[2]) and after[2][i] and i not in a.get(key, ()):
                    d = self.program.exclusives[key[0]]
                    return (f"thread {t} takes away thread {i}'s exclusive access ({d.text}, line {d.line}): "
                            "no thread may falsify another thread's predicate (WFendExcl)")
        return None

    def protecting_locks(self) -> dict[str, str]:
        """The inferred protecting locks: locations protected by a lockset (``--show-locks``)."""
        out = {d.text.split("(", 1)[1].split(",", 1)[0]: f"declared: {d.text}" for d in self.program.exclusives}
        out.update({key_name(self.program, k): p.describe(self.program).removeprefix("protected by ")
                    for k, p in sorted(self.guess.items(), key=lambda kv: key_name(self.program, kv[0]))
                    if p.kind == LOCKED})
        return out

    def report(self) -> dict[str, str]:
        """The classification of every location seen, for users (``--show-classification``)."""
        return {key_name(self.program, k): p.describe(self.program) for k, p in sorted(
            self.guess.items(), key=lambda kv: key_name(self.program, kv[0]))}


def _copied(v: Any) -> Any:
    """``Classification.snapshot``'s copy of one attribute: its containers are copied (what they hold is
    immutable, or a memo of a pure function)."""
    return copy.copy(v) if isinstance(v, (dict, set, list)) else v
