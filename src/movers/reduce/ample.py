"""The ample-set search of Dwyer, Hatcliff, Robby & Ranganath, *Exploiting Object Escape and Locking
Information in Partial-Order Reductions for Concurrent Object-Oriented Programs* (papers/002): section 3
(Algorithm 1, conditions C0-C3), section 4 (state-sensitive independence), section 5 (Algorithm 2: the
ample set is one thread's enabled transitions) and section 7 (avoiding state storage, "DA").

In movers' terms, a thread's *current* transitions at s (the paper's current(s, t)) are the resolutions of
its next node's choices; they share the node's guard, so they are enabled or disabled together, and
``enabled(s, t)`` is either all of them or none. ``ample(s)`` tries the enabled threads one by one, the
thread that moved into s first (section 7: fewer context switches, more sequential counterexamples), then
in thread-id order. For a candidate t it executes t's next step under every resolution, with tracking,
builds a ``StepView`` and returns enabled(s, t) when

- **checkC1**: the ``Independence`` strategy says t's current transitions are independent at s of every
  transition of every other thread (section 4, Definition 2; (D): Algorithm 3 in ``analysis/escape.py``). Before
  asking, two things are settled here for every strategy. *Disabled transitions* (section 5.1's note on
  checkC1): a thread whose step another thread could disable must not be ample. A step's guard (lock
  acquire, re-acquire after ``wait``, ``wait_until``, ``join``) is part of what the view says the step
  accesses (``ts.guard_reads``, and the lock objects it acquires), so it is independent only if no other
  thread can reach what decides it; an enabled ``join`` stays enabled (a terminated thread stays
  terminated). *Thread creation*: ``start`` gives the new thread the next free id, which ``tid()`` and
  ``m.owner`` show, so two ``start`` in different threads do not commute; a ``start`` is a candidate only
  if no other live thread's code can ever start a thread (``footprint.Footprints.future``). A thread
  whose every resolution is pruned by ``assume`` is not really enabled and is never a candidate (C0).
- **checkC2**: no resolution is *visible*: it may change what an ``@invariant`` reads (writes a global the
  invariants name, or a field, element or lock of an object reachable from the globals, which is all an
  invariant can read), or it accesses a location with a declared exclusive access predicate
  (``exclusive``/``guarded_by``/``thread_local``), or it writes what such a predicate may read (a global
  or field it names, or a lock's owner). A thread-local step touches nothing reachable from the globals,
  so for (D) invariants are invisible automatically. Assertion failures, runtime errors and deadlocks are
  not propositions of the state but of one step (or of a state with no step): C0 and C1 preserve them (a
  failing step of another thread reads nothing an independent ample step writes, so moving the ample step
  in front of it keeps the failure; a state with no enabled thread has an empty ample set only then).
- **checkC3**: depth-first, no resolution leads to a state on the search stack (``on_stack``, set by the
  search); breadth-first, where there is no stack, none leads to a state already stored (``stored``, set
  by the search), the proviso of static_por.py: a reduced expansion never closes a cycle, so no enabled
  transition is postponed forever around one.

If no thread qualifies, s is fully expanded: every enabled thread's steps (C0 holds either way).

**Avoiding state storage (DA, section 7).** A successor s2 = α(s) is not stored when α was in a reduced
ample set, or α's thread was the only enabled one at s (each outcome carries ``keep = False``; the search
still checks and expands s2). Always stored: the initial state, a state where no thread is enabled (where
deadlock is decided), and the states termination needs. The paper stores every state a control-flow back
edge produces; we do not, or Independent Work (whose threads loop over their lists) could not be 2 states.
What termination needs is that no cycle of unstored states is followed forever: the depth-first search
never pushes a state that is already on its stack (the search's ``on_stack`` check), and a state produced
by a back edge (the thread's top frame stays in the same code at a pc that does not increase) is stored
once the run of unstored states since the last stored one on the path reaches ``STORE_AFTER`` (10,000)
steps, so that ``--max-states`` bites on a thread-local loop that never repeats a state. Breadth-first
search has no stack: under BFS, DA stores every state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from movers.analysis.classify import predicate_support
from movers.analysis.declarations import declarations_at
from movers.analysis.escape import Locality
from movers.analysis.footprint import Footprint, Footprints
from movers.ir.program import MON, THREAD, ClassInfo, Node, Program, Ref, ref
from movers.reduce.base import Capabilities, Move, ReductionBase
from movers.reduce.optimistic import ALL_BUT_ATOMICITY
from movers.semantics.state import State
from movers.semantics.system import Outcome


@dataclass(slots=True)
class StepView:
    """Thread ``thread``'s next step in ``state``, executed under every resolution of its choices, as
    ``checkC1`` sees it: the paper's current(s, t) and what ``collectAccessed`` collects (Algorithm 3).

    ``globals``: global slots read or written by some resolution (the paper's G, static fields).
    ``objects``: pre-state heap indices of every object read or written, lock operations and ``(r, MON)``
    reads included (the paper's O); objects the step itself allocated are excluded (nobody else can reach
    them before the step). ``accesses``: (object, field index, is_write) per heap access (field index 1 is
    the monitor). ``acquires``/``releases``: objects whose lock the step acquires/releases. ``starts``: the
    step starts a thread. ``written_globals``: the global slots of ``globals`` it writes. ``locality``: the
    per-state reachability helper (``escape.Locality``). ``final_refs``: (object, field index) of the final
    fields it read that hold references (left out of ``accesses``: see ``view_of``); following one is
    still an access for the weak self-locking discipline (``locking``)."""

    state: State
    thread: int
    node: Node
    outcomes: list[Outcome]
    globals: frozenset[int]
    objects: frozenset[int]
    accesses: tuple[tuple[int, int, bool], ...]
    acquires: frozenset[int]
    locality: Any
    starts: bool = False
    releases: frozenset[int] = field(default_factory=frozenset)
    written_globals: frozenset[int] = field(default_factory=frozenset)
    final_refs: tuple[tuple[int, int], ...] = ()


class Independence(Protocol):
    """How ``checkC1`` decides that thread t's current transitions are independent at s of every transition
    of every other thread (section 4, Definition 2, and the condition of section 5.1 on disabled ones).

    ``check_c1(view)`` returns True when they are. It may raise ``classify.Refine`` (an inferred discipline
    was wrong: the checker restarts the search) or set ``o.violation = ("discipline", message)`` and
    ``o.state = None`` on outcomes of ``view.outcomes`` (a declared discipline is broken).

    A strategy whose verdict for some threads follows from the state alone may also have
    ``rejects(state, t)``: True only where ``check_c1`` would return False for t's step whatever it does
    (``escape.StaticThreadLocal``, the (S) column). Such a candidate is executed untracked and gets no view."""

    name: str

    def check_c1(self, view: StepView) -> bool: ...



# -- the view of a step ----------------------------------------------------------------------------------------

# Node kinds whose receiver the step's Effect does not name: ``notify`` and ``wait`` change an object's wait
# set through the machine's lock instructions, ``join`` reads a thread object's id, and an ``indivisible``
# block may do any of these. The receiver is a value the step had at hand: a local of the thread, or a value
# it read; we add every object such a value names (a superset, hence conservative).
RECEIVER_KINDS = frozenset({"wait", "notify", "join", "indivisible"})


def constant_globals(program: Program) -> frozenset[int]:
    """Global slots no step ever writes and no declaration governs: after module initialisation they are
    constants (a Java ``static final``), and reading one commutes with every step."""
    written: set[str] = set()
    for code in program.codes():
        for node in program.thread_nodes(code):
            written |= node.writes
    declared = {d.target[1] for d in program.exclusives if d.target[0] != "field"}
    return frozenset(i for i, name in enumerate(program.globals) if name not in written and name not in declared)


def final_fields(program: Program) -> frozenset[str]:
    """Field names assigned only by constructors to their own object (``self.f = …`` in an ``__init__`` that
    never rebinds ``self``), with no explicit ``x.__init__()`` call anywhere: once an object's constructor
    has returned, these fields never change (a Java ``final`` field)."""
    written: dict[str, bool] = {}
    for code in program.codes():
        init = code.name.endswith(".__init__")
        rebinds_self = init and any(f[0] == "store" and f[1] == ("local", 0) for n in code.nodes for f in n.flows)
        for n in code.nodes:
            if any(f[0] == "method_call" and f[2] == "__init__" for f in n.flows):
                return frozenset()
            own = {f[1][2] for f in n.flows
                   if f[0] == "store" and f[1][0] == "field" and f[1][1] == frozenset({("local", 0)})}
            for name in n.fields_written:
                written[name] = written.get(name, True) and init and not rebinds_self and name in own
    return frozenset(name for name, final in written.items() if final)


def final_slots(cls: ClassInfo, final: frozenset[str]) -> frozenset[int]:
    """The slots of ``cls``'s objects that hold final fields (the runtime's own Thread fields never do).
    Cached on the class (a class belongs to one program, whose ``final_fields`` it is given)."""
    hit = cls.__dict__.get("_final_slots")
    if hit is not None and hit[0] is final:
        return hit[1]
    own = () if cls.builtin else THREAD.fields if cls.is_thread else ()
    out = frozenset(i for f, i in cls.field_index.items() if f in final and f not in own)
    cls._final_slots = (final, out)  # type: ignore[attr-defined]
    return out


def under_construction(state: State) -> set[int]:
    """Objects whose ``__init__`` some thread is running."""
    return {f[2].i for th in state[2] for f in th
            if f[0].name.endswith(".__init__") and len(f) > 2 and type(f[2]) is Ref}


def view_of(
    ts: Any, state: State, t: int, outcomes: list[Outcome], locality: Locality, constants: frozenset[int] = frozenset(),
    final: frozenset[str] = frozenset(),
) -> StepView:
    """What checkC1 needs of thread t's current transitions at ``state`` (``outcomes``: executed with
    tracking): the paper's ``collectAccessed`` for every resolution, the guard's reads included. Reads of
    ``constants`` (see ``constant_globals``) are left out of ``globals``, and reads of ``final`` fields (see
    ``final_fields``) of objects whose constructor has returned are left out of the accesses: nobody writes
    them any more, so they commute with every step and break no discipline."""
    heap = state[1]
    n = len(heap)
    building: set[int] | None = None
    g: set[int] = set()
    g_written: set[int] = set()
    objs: set[int] = set()
    acc: list[tuple[int, int, bool]] = []
    acq: set[int] = set()
    rel: set[int] = set()
    starts = False
    node = ts.next_node(state, t)
    read_locs: list[Any] = []
    final_refs: list[tuple[int, int]] = []

    def access(loc: Any, write: bool) -> None:
        if type(loc) is int:
            if write:
                g_written.add(loc)
            elif loc in constants:
                return
            g.add(loc)
            return
        r, idx = loc
        if r.i < n:  # an object the step allocated is the step's own
            if not write and final and idx in final_slots(heap[r.i][0], final):
                nonlocal building
                if building is None:
                    building = under_construction(state)
                if r.i not in building:
                    v = heap[r.i][idx]
                    if type(v) is Ref or (type(v) is tuple and v):
                        final_refs.append((r.i, idx))
                    return
            objs.add(r.i)
            acc.append((r.i, idx, write))

    for o in outcomes:
        eff = o.effect
        if eff is None:
            continue
        for loc in eff.reads:
            access(loc, False)
        read_locs.extend(eff.reads)
        for loc in eff.writes:
            access(loc, True)
        for r in eff.acquired:
            if r.i < n:
                acq.add(r.i)
                access((r, MON), True)
        for r in eff.released:
            if r.i < n:
                rel.add(r.i)
                access((r, MON), True)
        starts = starts or bool(eff.started)
    if node.guard is not None:
        for loc in ts.guard_reads(state, t):
            access(loc, False)
    if node.kind in RECEIVER_KINDS:
        for i in _values_at_hand(state, t, read_locs, every_frame=node.kind == "indivisible"):
            objs.add(i)
            acc.append((i, MON, node.kind != "join"))
    return StepView(state, t, node, outcomes, frozenset(g), frozenset(objs), tuple(acc), frozenset(acq),
                    locality, starts, frozenset(rel), frozenset(g_written), tuple(final_refs))


def _values_at_hand(state: State, t: int, read_locs: list[Any], every_frame: bool) -> set[int]:
    """Objects named directly by thread t's locals (top frame, or every frame) or by a value it read."""
    g, heap = state[0], state[1]
    frames = state[2][t] if every_frame else state[2][t][-1:]
    work: list[Any] = [v for f in frames for v in f[2:]]
    for loc in read_locs:
        if type(loc) is int:
            work.append(g[loc])
        else:
            r, idx = loc
            if r.i < len(heap) and idx != MON and idx < len(heap[r.i]):
                work.append(heap[r.i][idx])
    out: set[int] = set()
    while work:
        v = work.pop()
        if type(v) is Ref:
            if v.i < len(heap):
                out.add(v.i)
        elif type(v) is tuple:
            work.extend(v)
    return out


# -- visibility (C2) -------------------------------------------------------------------------------------------


class Visibility:
    """Which steps are visible (section 3.2.2): those that may change what an @invariant or a declared
    exclusive access predicate reads, and accesses to a location such a predicate governs."""

    def __init__(self, program: Program, footprints: Footprints) -> None:
        self.program = program
        self.footprints = footprints
        self.waiting = False  # observe(): starvation's propositions
        inv = Footprint()
        for _, code in program.invariants:
            inv = inv | footprints.whole(code)
        self.invariants = bool(program.invariants)
        self.inv_globals = {i for i, name in enumerate(program.globals) if name in inv.reads}
        self.inv_fields = inv.fields_read
        self.inv_elements = inv.elements_read
        names, fields = predicate_support(program)
        self.declared = bool(program.exclusives)
        self.support_globals = {i for i, name in enumerate(program.globals) if name in names}
        self.support_fields = fields
        # A predicate that names a lock (guarded_by) or reads an owner reads lock state.
        self.support_locks = bool(names) or "owner" in fields
        self._decl_state: Any = None
        self._decls: Any = None

    def observe(self, codes: list[Any], waiting: bool = False) -> None:
        """--liveness ltl: the formula's ``@predicate`` functions (``codes``) read the state as an invariant does
        (no arguments: the globals and what they reach), so a step that may change one is visible as a step
        that may change an invariant is (C2 for LTL-X: the ample set never changes a proposition).
        ``waiting`` (starvation): the step of a thread at a guarded node is visible. It ends the thread's
        waiting, or moves a thread that waits on; left ample, it could be put in front of a run in which the
        thread waits for ever without fairness (Peled's construction inserts an ample step that the run
        never takes), and the starvation would be lost."""
        self.waiting = self.waiting or waiting
        if not codes:
            return
        seen = Footprint()
        for code in codes:
            seen = seen | self.footprints.whole(code)
        self.invariants = True
        self.inv_globals |= {i for i, name in enumerate(self.program.globals) if name in seen.reads}
        self.inv_fields = self.inv_fields | seen.fields_read
        self.inv_elements = self.inv_elements or seen.elements_read

    def visible(self, view: StepView) -> bool:
        if self.waiting and view.node is not None and view.node.guard is not None:
            return True
        return (self.invariants and self.changes_invariant(view)) or (
            self.declared and self.touches_declared(view)
        )

    def changes_invariant(self, view: StepView) -> bool:
        """An invariant reads the globals and what they reach (it takes no arguments): a step may change it
        by writing a global it names, or a field, element or lock of an object reachable from the globals."""
        if view.written_globals & self.inv_globals:
            return True
        shared = view.locality.shared
        heap = view.state[1]
        for i, idx, write in view.accesses:
            if not write or i not in shared:
                continue
            if idx == MON:
                if "owner" in self.inv_fields:
                    return True
                continue
            cls = heap[i][0]
            if cls.is_list or cls.builtin in ("dict", "set", "deque"):  # a dict's entries are elements, as a list's
                if self.inv_elements:
                    return True
            elif idx - 2 < len(cls.fields) and cls.fields[idx - 2] in self.inv_fields:
                return True
        return False

    def touches_declared(self, view: StepView) -> bool:
        state = view.state
        if state is not self._decl_state:
            self._decl_state = state
            self._decls = declarations_at(self.program, state)
        by_loc, field_decls = self._decls
        if view.globals & set(k for k in by_loc if type(k) is int):
            return True
        if view.written_globals & self.support_globals:
            return True
        heap = state[1]
        for i, idx, write in view.accesses:
            if idx == MON:
                if write and self.support_locks:
                    return True
                continue
            if (ref(i), idx) in by_loc:
                return True
            cls = heap[i][0]
            for d in field_decls:
                c, f = d.target[1], d.target[2]
                if cls.is_subclass_of(c) and c.field_index[f] == idx:
                    return True
            if write and not cls.is_list and idx - 2 < len(cls.fields) and cls.fields[idx - 2] in self.support_fields:
                return True
        return False


# -- the search ------------------------------------------------------------------------------------------------

# Unstored steps in a row (on the search path) after which DA stores the next state a back edge produces.
STORE_AFTER = 10_000


class Ample(ReductionBase):
    """The ample-set reduction (Algorithms 1-2) with a pluggable checkC1 (``Independence``); with
    ``avoid_storage``, section 7's DA. The named configurations are in ``dwyer.py``."""

    name = "ample"
    # The cycle proviso (on the stack, or stored), and DA's count of unstored states on the path (arrived).
    needs_stack = needs_stored = needs_arrival = True
    # Races: checkC1 never picks a thread whose next step conflicts with another's (docs/reductions.md); the
    # locking configurations (locking.py) declare their own capabilities, without it. Symmetry: checkC1, checkC2
    # and checkC3 ask nothing of a thread's number (docs/reductions.md, "Symmetry with ample sets").
    capabilities = Capabilities(atomicity=frozenset({"commit"}), classifies=True, races=True, symmetry=True)
    preserves = ALL_BUT_ATOMICITY

    def __init__(self, ts: Any, independence: Independence, avoid_storage: bool = False) -> None:
        self.ts = ts
        self.independence = independence
        self.avoid_storage = avoid_storage
        self.stores_all = not avoid_storage  # the search may skip asking store() and keep
        self.footprints = Footprints(ts.program)
        self.visibility = Visibility(ts.program, self.footprints)
        self.constants = constant_globals(ts.program)
        self.final = final_fields(ts.program)
        self.quiet = getattr(ts, "quiet", None)  # an instrumented system's own visibility (commit.py)
        # A checkC1 that can refuse a thread from the state alone, before its step is executed (``rejects``):
        # the step then runs untracked and no view is built, since checkC1 would say no whatever it saw.
        self.rejects = getattr(independence, "rejects", None)

    def store(self, state: State) -> bool:
        return True

    def observe(self, atoms: frozenset[str], waiting: bool = False) -> None:
        predicates = self.ts.program.predicates
        self.visibility.observe([predicates[a] for a in sorted(atoms)], waiting)

    # -- Algorithm 2 -----------------------------------------------------------------------------------------

    def enabled(self, state: State) -> list[int]:
        """The threads t with enabled(s, t) non-empty."""
        ts = self.ts
        threads = state[2]
        return [t for t in range(len(threads)) if threads[t] and ts.enabled(state, t)]

    def current(self, state: State, t: int) -> list[Outcome]:
        """current(s, t) = enabled(s, t) for an enabled thread: its next step under every resolution."""
        return self.ts.execute(state, t, True)

    def checkC1(self, view: StepView) -> bool:  # noqa: N802 (the paper's name)
        if view.starts and self._others_may_start(view.state, view.thread):
            return False
        return self.independence.check_c1(view)

    def checkC2(self, view: StepView) -> bool:  # noqa: N802
        return not self.visibility.visible(view)

    def checkC3(self, view: StepView) -> bool:  # noqa: N802
        check = self.on_stack if self.on_stack is not None else self.stored
        if check is None:
            return False  # outside a search: never reduce
        return not any(o.state is not None and check(o.state) for o in view.outcomes)

    def ample(self, state: State, enabled: list[int]) -> tuple[int | None, dict[int, list[Outcome]]]:
        """The thread whose enabled transitions form ample(s), or None (fully expand); and the steps
        executed on the way (reused, so that each is executed once)."""
        executed: dict[int, list[Outcome]] = {}
        if len(enabled) == 1:
            return None, executed
        loc = Locality.of(self.ts, state)
        rejects = self.rejects
        for t in self._candidates(enabled):
            if rejects is not None and rejects(state, t):
                # Refused whatever the step does: executed all the same (a rejected candidate's violation is
                # reported, and a full expansion reuses the outcomes), untracked.
                executed[t] = self.ts.execute(state, t)
                continue
            outs = executed[t] = self.current(state, t)
            if all(o.state is None and o.violation is None for o in outs):
                continue  # every resolution pruned by assume: not really enabled (C0)
            if self.quiet is not None and not self.quiet(state, t, outs):
                continue  # it moves an instrumentation's shared part (commit-atomicity's shadow store)
            view = self.view(state, t, outs, loc)
            if self.checkC1(view) and self.checkC2(view) and self.checkC3(view):
                return t, executed
        return None, executed

    def view(self, state: State, t: int, outs: list[Outcome], loc: Locality) -> StepView:
        """``view_of`` thread t's steps ``outs`` at ``state`` (a reduction that built it already reuses it)."""
        return view_of(self.ts, state, t, outs, loc, self.constants, self.final)

    def _candidates(self, enabled: list[int]) -> list[int]:
        """The thread that moved into the state first (section 7), then thread-id order."""
        m = self.arrived
        if m is None:
            return enabled
        last = m.steps[-1][0]
        if last not in enabled or enabled[0] == last:
            return enabled
        return [last] + [t for t in enabled if t != last]

    def _others_may_start(self, state: State, t: int) -> bool:
        threads = state[2]
        fp = self.footprints
        return any(u != t and threads[u] and "_tid" in fp.future(threads[u]).fields_written
                   for u in range(len(threads)))

    # -- Algorithm 1's workSet -------------------------------------------------------------------------------

    def moves(self, state: State) -> list[Move]:
        enabled = self.enabled(state)
        if not enabled:
            return []
        chosen, executed = self.ample(state, enabled)
        if chosen is not None:
            out: list[Any] = list(executed[chosen])
            # A rejected candidate whose check found a violation (a broken declared discipline) reports it.
            for t, outs in executed.items():
                if t != chosen:
                    out.extend(o for o in outs if o.violation is not None)
        else:
            out = []
            for t in enabled:
                done = executed.get(t)
                out.extend(done if done is not None else self.ts.execute(state, t))
        if self.avoid_storage and self.on_stack is not None and (chosen is not None or len(enabled) == 1):
            out = self._unstored(state, out)
        return out

    # -- section 7 -------------------------------------------------------------------------------------------

    def _unstored(self, state: State, outs: list[Any]) -> list[Any]:
        """DA: the successors of an independent (or the only enabled) thread's step are not stored, except a
        state where no thread is enabled and a back edge's state at the end of a long unstored run."""
        m = self.arrived
        run = (m.run if m is not None and getattr(m, "keep", True) is False else 0) + 1
        out: list[Any] = []
        for o in outs:
            s2 = o.state
            if s2 is None or o.violation is not None or self._terminal(s2) or (
                run >= STORE_AFTER and back_edge(state, s2, o.thread)
            ):
                out.append(o)
            else:
                out.append(Move(o.steps, s2, None, keep=False, run=run))
        return out

    def _terminal(self, state: State) -> bool:
        ts = self.ts
        threads = state[2]
        return not any(threads[t] and ts.enabled(state, t) for t in range(len(threads)))


def back_edge(state: State, succ: State, t: int) -> bool:
    """Did thread t's step follow a control-flow back edge: its top frame stays in the same code at the same
    depth, at a pc that does not increase? (A loop's body jumps back to its header.)"""
    before, after = state[2][t], succ[2][t]
    if not after or len(after) != len(before):
        return False
    f0, f1 = before[-1], after[-1]
    return f0[0] is f1[0] and f1[1] <= f0[1]
