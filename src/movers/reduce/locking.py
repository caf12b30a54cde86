"""Locking disciplines in the ample-set search: Dwyer, Hatcliff, Robby & Ranganath (papers/002), section 6
(6.1 Stoller's LD with the lock-set algorithm of appendix D, 6.2 weak self-locking WSL, 6.3 its dominated
variant WSL^dom, 6.4 the combination LD+WSL^dom), with appendix C's justification. Each strategy is a
``checkC1`` (``ample.Independence``) that first accepts thread-local steps (case 1 of Definitions 5 and 6,
section 5.2's dynamic escape analysis) and then its discipline's case 2:

- **WSL** (Definition 5, Algorithm 4): thread t's step accesses no global and every object it accesses is
  thread-local to t or is of a self-locking class (the paper's T_WSL) and *its own monitor* is held by t.
  Holding a ``Lock`` that guards the object's fields is not self-locking: only the object's intrinsic
  monitor (``@synchronized``, ``with synchronized(o):``) counts.
- **WSL^dom** (Definition 6, Algorithm 5): as WSL, and an accessed object may also be *dominated*: no
  other thread can reach it (from the globals or its frames) except through a self-locking object whose
  monitor t holds. Algorithm 5 takes the *union* over the other threads of the objects each cannot reach
  (line 5.10); Definition 6 needs every other thread to be unable, so we intersect (the union would let an
  object that one thread reaches freely count as dominated).
- **LD** (Definition 4, Algorithm 6): the lock-set algorithm. ``lockSetTable`` maps an *abstract object*
  (``("f", class, index)``: a field, element or, at index 1, the monitor of every object of a class, each
  list expression being a class of its own, as ``classify`` names locations; stable across heap
  renumbering) to the locks held at every access so far. ``intersectIfNotEmpty`` intersects it with
  ``collectAllLocksHeldBy`` at each access; ``inInitialization`` is the dynamic variant section 6.1 allows:
  an access to an object that only the accessing thread can reach is initialisation and leaves the table
  alone. A lock is named by a path that means the same lock in every state: ``("self",)`` the accessed
  object's own lock (its monitor; for a Lock, RLock or Condition the lock itself) and ``("g", slot)`` a
  global that no step ever writes (``ample.constant_globals``). Step: independent when every accessed
  object not thread-local is an LD object whose entry is non-empty and whose every lock t holds.
- **LD+WSL^dom** (6.4): WSL^dom first; an object is LD-protected only where it is not self-locked or
  dominated, and the lock set is intersected only for accesses WSL^dom does not cover.

Line 5.1 of Algorithms 4-5 (and the paper's Java semantics): a step that acquires a lock of an accessed
object that another thread can reach is never independent (two acquires do not commute).

**Which classes.** ``self_locking(Cls)`` and ``lock_protected(Cls)`` declare them (subclasses included). A
model with at least one such declaration uses exactly its declarations; a broken one is a violation of
kind ``discipline`` with the fine-grained trace that reaches it. Without declarations every class is
guessed to follow each discipline (not Thread subclasses, whose ``run`` reads its own fields while the
starter holds a reference; for LD, lists too), every access is checked, and a violated guess drops the
class and restarts the search (``Refine``, as ``classify`` does for Stoller & Cohen); ``refine=False``
(``--no-refine``) reports it as a ``discipline`` violation instead. Guesses only ever shrink.

**The discipline checked** (the paper's definitions, made exact for movers). A non-acquiring access of
thread u to object o (fields, elements, and o's monitor: ``o.owner``, ``wait``/``notify``, release; a
guard's reads count: a blocked ``wait_until`` reads what it tests) is *bad*:
WSL, when o's class is self-locking, u does not hold o's monitor and another thread can reach o;
LD, when o's class is an LD class, another thread can reach o, and u holds none of the locks the table
has for o's abstract location (the entry becomes empty).

**Soundness.** Three things together make the reduced search find every error the full search finds.

1. *Independence (Definition 2), assuming no bad access.* Let t's step α be accepted at s and β be a step
   of another thread u at a state reached from s by steps of other threads that are not bad.
   Thread-local objects: only t can make them escape (appendix C.1.1), so β does not touch them. A
   self-locking object o whose monitor t holds: t keeps it while t does not move (monitors are
   re-entrant; a thread in ``wait`` does not hold it, and a waiting t is not enabled), o stays reachable
   from t (α reaches it from t's locals through objects that are thread-local or self-locked by t, which
   nobody else may change), so u may touch o only holding o's monitor, which it cannot acquire: β does not
   access o, and cannot be disabled by α (only an acquire could be; α acquires nothing shared), nor make
   α lose its independence (that needs o's monitor). Dominated objects: to reach one, u must read a field
   of a blocker b (a self-locking object t holds and reaches through locals, thread-local or self-locked
   objects), which needs b's monitor. LD: let L be the table entry for o's location when the search
   ends; every access holds a lock of L (else the entry would be empty: see 3), L is contained in the entry
   at s, whose every lock t holds, so u cannot hold one while t does not move: β does not access o.
   Commutativity follows from disjoint accesses; heap canonicalisation (``semantics.state``) makes the
   two orders one state, as Bogor's canonical heap does in the paper.
2. *Bad accesses stay visible.* The ample argument (appendix B) also preserves "some enabled step is bad"
   if no accepted step can make another thread's bad step good: a step's badness depends on who holds
   the locks (an accepted step releases only locks t holds, and the bad thread still does not hold them)
   and on who can reach o. So a step is accepted only if it removes no reference (a global, field or
   element it overwrites, a local it overwrites, a frame it pops) through which an object another thread
   can reach is reachable (``shrinks``): reachability of shared objects only grows along ample steps.
   Made precise, in every state reached from s by other threads: an object t still reaches from its
   frames through final fields of constructed objects (``kept_for_good``: nobody can change that path
   while t does not move) or that a constant global names stays reachable, with all that lies behind it;
   and an object matters only if it may be accessed badly or may later lead to one (``at_risk``).
   The accesses of u's step up to its first read of something α wrote are the same before and after α,
   and that first read is itself bad (α writes only objects u may not touch), so u's step stays bad.
3. *Every bad access is executed and checked.* In every state the search expands, the step of *every*
   enabled thread is executed with tracking and checked (``LockingAmple.moves``), not only the ample
   thread's (Algorithm 4 checks only t's, which misses a thread delayed behind another's run). By 1 and 2
   and the ample theorem with C3, if the full system has a bad access, a state the reduced search expands
   has one: it is reported (declared) or refines the guess (inferred). The lock-set table is intersected
   with every checked access, also of steps that are not taken: each is a step the full system can take,
   so the table only loses locks that do not protect every access.

**Final fields.** A read of a final field of a constructed object (``ample.final_fields``) is no access
for independence (``ample.view_of``): nobody writes it any more, so it commutes with every step. For the
disciplines it is no access either, except one that takes a reference out of a self-locking object
(``StepView.final_refs``): WSL asks for the monitor there, so that domination (whose premise is that
reaching past a blocker needs its monitor) stays true; LD never minds (a final field cannot race).

Declared exclusive access predicates, invariants (C2) and C3 are ``ample.Ample``'s; assertion failures,
deadlocks and runtime errors are preserved by C0-C1 as it argues. Every configuration here includes DA.
"""

from __future__ import annotations

from typing import Any

from movers.analysis.classify import Refine, held_refs, key_name, lock_owner
from movers.analysis.escape import Locality
from movers.ir.program import CONDITION, LOCK, MON, RLOCK, SEMAPHORE, THREAD, ClassInfo, Program, Ref, ref
from movers.reduce.ample import (
    RECEIVER_KINDS,
    Ample,
    constant_globals,
    final_fields,
    final_slots,
    under_construction,
    view_of,
)
from movers.reduce.base import Capabilities, Move
from movers.semantics.state import State, reachable

WSL, LD = "self_locking", "lock_protected"
LOCK_CLASSES = (LOCK, RLOCK, SEMAPHORE, CONDITION)
GUESSED = "guessed"
_WHAT = {WSL: "self-locking", LD: "lock-protected"}


class LockingRefine(Refine):
    """A guessed discipline was broken: drop ``cls`` from ``discipline``'s classes and restart."""

    def __init__(self, discipline: str, cls: ClassInfo, message: str) -> None:
        super().__init__((discipline, cls), None, None, message)  # type: ignore[arg-type]
        self.discipline, self.cls = discipline, cls


# -- locks -------------------------------------------------------------------------------------------------------


def lock_paths(state: State, i: int, held: set[int], constants: frozenset[int]) -> frozenset:
    """The held locks as paths that name the same lock in every state (module docstring, LD)."""
    paths: set[tuple[Any, ...]] = {("g", s) for s in constants if type(state[0][s]) is Ref and state[0][s].i in held}
    if i in held:
        paths.add(("self",))
    return frozenset(paths)


def holds_path(state: State, t: int, i: int, path: tuple) -> bool:
    heap = state[1]
    if path[0] == "self":
        return lock_owner(heap, heap[i]) == t
    v = state[0][path[1]]
    return type(v) is Ref and lock_owner(heap, heap[v.i]) == t


def class_name(cls: ClassInfo) -> str:
    return f"list (line {cls.line})" if cls.is_list else cls.name


def path_name(program: Program, path: tuple) -> str:
    return "the object's own lock" if path[0] == "self" else program.globals[path[1]]


def accesses(view: Any) -> list[tuple[int, int, bool]]:
    """The view's accesses without the over-approximated receivers of ``wait``/``notify``/``join``
    (``ample.view_of`` names every object at hand): the real receiver of ``wait``/``notify`` is an object
    whose lock the thread holds (otherwise the step is a runtime error), and ``join`` reads the thread
    object's fields, which the Effect records. Lock operations the Effect records are kept."""
    if view.node.kind not in RECEIVER_KINDS:
        return list(view.accesses)
    heap, u, join = view.state[1], view.thread, view.node.kind == "join"
    return [(i, idx, w) for i, idx, w in view.accesses
            if idx != MON or i in view.acquires or i in view.releases
            or (not join and lock_owner(heap, heap[i]) == u)]


# -- reachability ------------------------------------------------------------------------------------------------


def _refs(v: Any, out: set[int]) -> None:
    t = type(v)
    if t is Ref:
        out.add(v.i)
    elif t is tuple:
        for x in v:
            _refs(x, out)


def _back(renumbered: Any, k: int) -> int:
    """The pre-state index of the successor's object ``k`` (``Effect.renumbered``; objects past its end are
    new)."""
    return renumbered[k] if k < len(renumbered) else k


def frame_refs(thread: tuple) -> set[int]:
    out: set[int] = set()
    for frame in thread:
        for v in frame[2:]:
            _refs(v, out)
    return out


# -- the annotations and the lock-set table ---------------------------------------------------------------------


class Disciplines:
    """Which classes follow which discipline (declared, or guessed and refined), the lock-set table, and
    the check of one thread's step against both disciplines."""

    def __init__(self, program: Program, wsl: bool, ld: bool, dominated: bool = False, refine: bool = True) -> None:
        self.program = program
        self.use_wsl, self.use_ld, self.use_dom = wsl, ld, dominated
        self.refine = refine
        decls = program.locking
        self.declared = bool(decls)
        self.decl = {WSL: {d.cls: d for d in decls if d.kind == WSL}, LD: {d.cls: d for d in decls if d.kind == LD}}
        self.dropped: dict[str, set[ClassInfo]] = {WSL: set(), LD: set()}
        self.constants = constant_globals(program)
        self.final = final_fields(program)  # names (see ``ample.final_fields``)
        nodes = [n for c in program.codes() for n in c.nodes]
        self.reads_owner = any("owner" in n.fields_read for n in nodes)
        # The runtime writes a Thread's own fields once (target and arguments at construction, the id, an int,
        # at start); unless the model writes them too, they never take a new reference.
        written = {f for n in nodes for f in n.fields_written}
        self.stable_own = not written & set(THREAD.fields)
        self._risk: dict[ClassInfo, bool] = {}
        self.lockset: dict[Any, frozenset] = {}  # lockSetTable
        self.refinements: list[str] = []
        self._memo: dict[tuple[str, ClassInfo], Any] = {}

    def reset(self) -> None:
        """A new search: the table describes the accesses of one search only."""
        self.lockset.clear()
        self._memo.clear()
        self._risk.clear()

    def apply(self, r: LockingRefine) -> str:
        self.dropped[r.discipline].add(r.cls)
        self.reset()
        note = (f"refined: {r.message}; {class_name(r.cls)} is no longer guessed {_WHAT[r.discipline]} "
                "(search restarted)")
        self.refinements.append(note)
        return note

    def follows(self, discipline: str, cls: ClassInfo) -> Any:
        """The declaration that puts ``cls`` under ``discipline``, ``GUESSED``, or None."""
        k = (discipline, cls)
        if k in self._memo:
            return self._memo[k]
        out: Any = None
        if self.declared:
            c: ClassInfo | None = cls
            while c is not None and out is None:
                out = self.decl[discipline].get(c)
                c = c.base
        elif cls not in self.dropped[discipline] and not cls.is_thread and (
            not cls.builtin or (cls.is_list and discipline == LD)
        ):
            out = GUESSED
        self._memo[k] = out
        return out

    def active(self) -> bool:
        """Is any class under a discipline in use? (Without one, nothing needs checking or keeping visible.)"""
        if not self.declared and self.use_ld:
            return True  # lists are guessed lock-protected per allocation site
        return any(self.wsl(c) or self.ld(c) for c in self.program.classes.values())

    def wsl(self, cls: ClassInfo) -> bool:
        return self.use_wsl and self.follows(WSL, cls) is not None

    def ld(self, cls: ClassInfo) -> bool:
        return self.use_ld and self.follows(LD, cls) is not None

    def at_risk(self, cls: ClassInfo) -> bool:
        """Does it matter which threads reach an object of ``cls``? When the object itself may be accessed
        against a discipline (one with no fields only through ``o.owner``: ``wait``, ``notify`` and release
        need its lock), or when one of its fields may later take a reference to such an object (any field
        that is not final; a lock's own fields never change: a Condition's lock is fixed)."""
        out = self._risk.get(cls)
        if out is None:
            if cls in LOCK_CLASSES:
                out = False
            else:
                own = set(THREAD.fields) if cls.is_thread and self.stable_own else set()
                changing = [f for f in cls.fields if f not in self.final and f not in own]
                out = bool(changing or cls.is_list or cls.builtin in ("dict", "set", "deque")) or (
                    (self.wsl(cls) or self.ld(cls)) and (bool(cls.fields) or self.reads_owner))
            self._risk[cls] = out
        return out

    def kept_for_good(self, state: State, frames: tuple) -> set[int]:
        """Objects a thread with ``frames`` reaches in ``state`` along references nobody can change while it
        does not move: its locals, tuples, and final fields (``ample.final_fields``) of objects whose
        constructor has returned. Whatever lies behind them stays reachable by the thread."""
        heap = state[1]
        building = under_construction(state)
        out: set[int] = set()
        work = list(frame_refs(frames))
        while work:
            i = work.pop()
            if i in out:
                continue
            out.add(i)
            o = heap[i]
            if i in building:
                continue
            for idx in final_slots(o[0], self.final):
                inner: set[int] = set()
                _refs(o[idx], inner)
                work.extend(inner)
        return out

    # -- WSL^dom ----------------------------------------------------------------------------------------------

    def blockers(self, state: State, t: int, loc: Locality) -> set[int]:
        """Self-locking objects whose monitor t holds and that t reaches from its locals through objects
        nobody else may change (thread-local ones, or such blockers): they stay t's while t does not move."""
        heap = state[1]
        out: set[int] = set()
        seen: set[int] = set()
        work = list(frame_refs(state[2][t]))
        while work:
            i = work.pop()
            if i in seen:
                continue
            seen.add(i)
            o = heap[i]
            if self.wsl(o[0]) and lock_owner(heap, o) == t:
                out.add(i)
            elif loc.reachable_by_others(t, (i,)):
                continue  # another thread may change its fields: what lies beyond is not stably t's
            inner: set[int] = set()
            for v in o[2:]:
                _refs(v, inner)
            work.extend(inner)
        return out

    def reached_by_others(self, state: State, t: int, blockers: set[int]) -> set[int]:
        """Objects some other live thread reaches (from the globals or its frames) avoiding ``blockers``."""
        threads = state[2]
        others = [u for u in range(len(threads)) if u != t and threads[u]]
        if not others:
            return set()
        roots: list[Any] = list(state[0])
        for u in others:
            for frame in threads[u]:
                roots.extend(frame[2:])
        return reachable(state, roots, blockers)

    # -- the check of every executed step ---------------------------------------------------------------------

    def check_step(self, view: Any) -> tuple[str, ClassInfo, str] | None:
        """Check one thread's step (one resolution's view) against the disciplines; updates the lock-set
        table. Returns (discipline, class, message) of the first bad access."""
        state, u, loc = view.state, view.thread, view.locality
        heap = state[1]
        held: set[int] | None = None
        dominated: Any = None
        for i, _idx in view.final_refs:
            cls = heap[i][0]
            if self.wsl(cls) and lock_owner(heap, heap[i]) != u and loc.reachable_by_others(u, (i,)):
                return WSL, cls, (f"thread {u} takes a reference out of a {cls.name} object without holding its "
                                  f"monitor while another thread can reach it: {cls.name} objects are not "
                                  "self-locking")
        for i, idx, write in accesses(view):
            if idx == MON and i in view.acquires:
                continue  # a lock acquire: lock-acquiring accesses are outside both disciplines
            o = heap[i]
            cls = o[0]
            wsl, ld = self.wsl(cls), self.ld(cls)
            if not (wsl or ld) or not loc.reachable_by_others(u, (i,)):
                continue  # inInitialization: only u can reach it
            mine = lock_owner(heap, o) == u
            if wsl and not mine:
                what = "uses the monitor of" if idx == MON else ("writes" if write else "reads")
                return WSL, cls, (f"thread {u} {what} a {cls.name} object without holding its monitor while "
                                  f"another thread can reach it: {cls.name} objects are not self-locking")
            if not ld:
                continue
            if self.use_dom and wsl and mine:
                continue  # 6.4: WSL^dom covers it; the lock set is intersected only where it does not
            if self.use_dom:
                if dominated is None:
                    b = self.blockers(state, u, loc)
                    dominated = (b, self.reached_by_others(state, u, b)) if b else ((), None)
                if dominated[1] is not None and i not in dominated[0] and i not in dominated[1]:
                    continue
            if held is None:
                held = held_refs(state, u)
            key = ("f", cls, idx)
            paths = lock_paths(state, i, held, self.constants)
            before = self.lockset.get(key)
            now = paths if before is None else before & paths  # intersectIfNotEmpty
            self.lockset[key] = now
            if not now:
                name = key_name(self.program, key)
                if before:
                    had = ("holding none of the locks that protected every access so far ("
                           + ", ".join(sorted(path_name(self.program, p) for p in before)) + ")")
                else:
                    had = "holding no lock"
                what = "writes" if write else "reads"
                return LD, cls, (f"thread {u} {what} {name} {had} while another thread can reach it: "
                                 f"{class_name(cls)} objects are not lock-protected")
        return None

    def message(self, discipline: str, cls: ClassInfo, text: str) -> str:
        d = self.follows(discipline, cls)
        if d is GUESSED:
            return f"{text} (inferred {_WHAT[discipline]}; --no-refine)"
        return f"{text} ({d.text}, line {d.line})"

    def violation(self, discipline: str, cls: ClassInfo, text: str) -> tuple[str, str]:
        """A declared discipline broken: report it. A guess broken: refine, or report with ``--no-refine``."""
        if self.follows(discipline, cls) is GUESSED and self.refine:
            raise LockingRefine(discipline, cls, text)
        return ("discipline", self.message(discipline, cls, text))

    def report(self) -> dict[str, str]:
        """The final classes of each discipline, for users."""
        out: dict[str, str] = {}
        for c in self.program.classes.values():
            kinds = [_WHAT[k] for k, on in ((WSL, self.use_wsl), (LD, self.use_ld))
                     if on and self.follows(k, c) is not None]
            out[c.name] = ", ".join(kinds) if kinds else "no locking discipline"
        return out


# -- checkC1 strategies -----------------------------------------------------------------------------------------


class LockingIndependence:
    """checkC1 of the locking strategies: thread-local first (section 5.2), then the discipline (section 6).
    Which discipline is the ``Disciplines``' configuration: WSL, WSL^dom, LD or LD+WSL^dom."""

    def __init__(self, disciplines: Disciplines, name: str) -> None:
        self.d = disciplines
        self.name = name

    def check_c1(self, view: Any) -> bool:
        if view.globals:
            return False  # Definitions 5-6 (2a), and Algorithm 3: static fields are shared
        t, loc = view.thread, view.locality
        acc = accesses(view)
        rest = {i for i, _, _ in acc if loc.reachable_by_others(t, (i,))}
        if rest:
            heap = view.state[1]
            if any(lock_owner(heap, heap[i]) != t for i in view.acquires & rest):
                return False  # Algorithm 4, line 5.1 (re-entering a monitor t holds takes nothing from anyone)
            if not self.protected(view, rest, acc):
                return False
        return not self.shrinks(view)

    def protected(self, view: Any, rest: set[int], acc: list[tuple[int, int, bool]]) -> bool:
        """Every accessed object that another thread can reach is protected by the discipline."""
        d, t, state = self.d, view.thread, view.state
        heap = state[1]
        unlocked = {i for i in rest if not (d.wsl(heap[i][0]) and lock_owner(heap, heap[i]) == t)}
        if not unlocked:
            return True  # Definition 5 (2b), Definition 6 (2b-i)
        if d.use_dom:
            b = d.blockers(state, t, view.locality)
            if b:
                others = d.reached_by_others(state, t, b)
                unlocked = {i for i in unlocked if i in b or i in others}
                if not unlocked:
                    return True  # Definition 6 (2b-ii)
        if not d.use_ld:
            return False
        by_obj: dict[int, list[int]] = {}
        for i, idx, _ in acc:
            if i in unlocked:
                by_obj.setdefault(i, []).append(idx)
        for i in unlocked:
            cls = heap[i][0]
            if not d.ld(cls) or i not in by_obj:
                return False
            for idx in by_obj[i]:
                ls = d.lockset.get(("f", cls, idx))
                if not ls or not all(holds_path(state, t, i, p) for p in ls):
                    return False
        return True

    def shrinks(self, view: Any) -> bool:
        """Might the step make an object another thread can reach reachable by fewer threads? It removes
        references: the old values of what it writes, and the references its frames lose. Only what lies
        behind objects no other thread can reach may go (module docstring, soundness 2). A lost reference
        costs nothing when t still holds its object through a path nobody can change (``kept_for_good``) or
        the object is a constant global's; and only objects ``at_risk`` matter."""
        d = self.d
        if not d.active():
            return False
        state, t = view.state, view.thread
        g, heap = state[0], state[1]
        n = len(heap)
        before = frame_refs(state[2][t])
        pinned = {g[s].i for s in d.constants if type(g[s]) is Ref}
        risk: set[int] = set()
        for o in view.outcomes:
            eff = o.effect
            if o.state is None or eff is None:
                continue
            lost: set[int] = set()
            for loc in eff.writes:
                if type(loc) is int:
                    _refs(g[loc], lost)
                elif loc[0].i < n and loc[1] < len(heap[loc[0].i]):
                    _refs(heap[loc[0].i][loc[1]], lost)
            after = o.state[2][t] if t < len(o.state[2]) else ()
            ren = eff.renumbered or ()
            lost |= before - {_back(ren, k) for k in frame_refs(after)}
            lost = {i for i in lost if i < n} - pinned
            if lost:
                # What t still holds for good, and what lies behind it, t keeps reaching.
                kept = {k for k in (_back(ren, j) for j in d.kept_for_good(o.state, after)) if k < n}
                risk |= reachable(state, [ref(i) for i in lost - kept], pinned | kept)
        loc = view.locality
        return any(d.at_risk(heap[i][0]) and loc.reachable_by_others(t, (i,)) for i in risk)


# -- the reductions ---------------------------------------------------------------------------------------------


class LockingAmple(Ample):
    """The ample-set search with a locking strategy and DA; every enabled thread's step is checked against
    the disciplines in every expanded state (module docstring, soundness 3)."""

    name = "dwyer-locking"
    capabilities = Capabilities(atomicity=frozenset({"commit"}), infers_disciplines=True, classifies=True)
    wsl, ld, dominated = False, False, False

    def __init__(self, ts: Any, refine: bool = True) -> None:
        self.disciplines = Disciplines(ts.program, self.wsl, self.ld, self.dominated, refine)
        super().__init__(ts, LockingIndependence(self.disciplines, self.name), avoid_storage=True)
        self._executed: tuple[State | None, dict[int, list[Any]]] = (None, {})
        # The views ``check_all`` built of the threads with one resolution in its state: ``ample`` asks for
        # the same views (``view``).
        self._views: dict[int, Any] = {}

    def reset(self) -> None:
        self.disciplines.reset()
        self._executed = (None, {})
        self._views = {}

    def classification_report(self) -> dict[str, str] | None:
        return self.disciplines.report()

    def refined(self, r: Refine) -> str | None:
        """Apply a refinement of the guessed classes (the checker then restarts the search); a refinement of
        another guess (the atomicity instrumentation's classification) is not this reduction's."""
        if not isinstance(r, LockingRefine):
            return None
        note = self.disciplines.apply(r)
        self.reset()
        return note

    def current(self, state: State, t: int) -> list[Any]:
        s, done = self._executed
        if s is state and t in done:
            return done[t]
        return self.ts.execute(state, t, True)

    def check_all(self, state: State, enabled: list[int]) -> list[Any]:
        """Execute and check every enabled thread's step; the outcomes of bad steps carry their violation."""
        ts, d = self.ts, self.disciplines
        loc = Locality.of(ts, state)
        done: dict[int, list[Any]] = {}
        views: dict[int, Any] = {}
        bad: list[Any] = []
        for t in enabled:
            outs = done[t] = ts.execute(state, t, True)
            for o in outs:
                if o.effect is None or o.violation is not None:
                    continue
                view = view_of(ts, state, t, [o], loc, self.constants, self.final)
                found = d.check_step(view)
                if found is not None:
                    o.violation = d.violation(*found)
                    o.state = None
                    bad.append(o)
                elif len(outs) == 1:
                    views[t] = view
        self._executed = (state, done)
        self._views = views
        return bad

    def view(self, state: State, t: int, outs: list[Any], loc: Any) -> Any:
        if self._executed[0] is state and self._executed[1].get(t) is outs:
            made = self._views.get(t)
            if made is not None and made.locality is loc:
                return made
        return super().view(state, t, outs, loc)

    def moves(self, state: State) -> list[Move]:
        enabled = self.enabled(state)
        if not enabled:
            return []
        bad = self.check_all(state, enabled)
        if bad:
            return bad
        chosen, _ = self.ample(state, enabled)
        done = self._executed[1]
        out: list[Any] = list(done[chosen]) if chosen is not None else [o for t in enabled for o in done[t]]
        if self.avoid_storage and self.on_stack is not None and (chosen is not None or len(enabled) == 1):
            out = self._unstored(state, out)
        return out


class DwyerWSL(LockingAmple):
    """(WSL): (DA) and weak self-locking (section 6.2, Algorithm 4)."""

    name = "dwyer-wsl"
    wsl = True


class DwyerWSLdom(LockingAmple):
    """(WSL^dom): (DA) and weak self-locking domination (section 6.3, Algorithm 5)."""

    name = "dwyer-wsldom"
    wsl, dominated = True, True


class DwyerLD(LockingAmple):
    """(LD): (DA) and Stoller's locking discipline with the lock-set algorithm (6.1, appendix D)."""

    name = "dwyer-ld"
    ld = True


class DwyerLDWSLdom(LockingAmple):
    """(LD+WSL^dom): (DA), WSL^dom first, LD where it does not hold (section 6.4)."""

    name = "dwyer-ld+wsldom"
    wsl, ld, dominated = True, True, True


__all__ = [
    "Disciplines", "LockingIndependence", "LockingAmple", "LockingRefine", "DwyerWSL", "DwyerWSLdom", "DwyerLD",
    "DwyerLDWSLdom",
]
