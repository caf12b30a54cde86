"""The instrumented program P# of Flanagan & Qadeer, *Transactions for Software Model Checking* (SoftMC
2003, ``papers/004``), section 4.2, specialised to locks as in section 5: the system the transactions
reduction (``transactions.py``) searches.

P# extends every state with a *phase* per thread, the ghost variable p of the paper: ``True`` while the
thread is in the pre-commit (right-mover) part of a transaction, ``False`` after it (post-commit, or between
transactions), and ``INIT`` before the thread's first step (the paper's location Init). States of P# are
``(globals, heap, threads, phases)``: the plain state with the phases appended, so every explorer and
reduction works on them unchanged.

Each executed step is a right mover, a left mover, both, or a non-mover (``analysis/mover.py``, from the
exclusive access predicates E(t, x) of the locations it accesses, section 4.1).

The phase update is the paper's: p' = E(t, l) in the post-state and (p or l = Init or not E(t, l) in the
pre-state), which for these classes is: right -> True; left and non-movers -> False; both -> p (True at
the thread's first step).

Normal phases. A state of P# is stored once per phase vector, so a phase that carries no information must
have one value, or one program state is stored (and counted) several times. Two cases, from section 4.2:

- at Init (the thread's entry location: one frame, at the code's entry) the phase is ``INIT``, whether the
  thread has not run yet or has come back there: conditions A and B exclude l = Init from R(t) and L(t),
  and the update at l = Init is p' = E(t, l) in the post-state, whatever p was;
- a terminated thread's phase is ``False``: it has no next action, so it is in N(t) (``in_N``) and no
  step reads its phase again.

In every other thread outside a transaction the phase is ``False`` (``True`` is R(t)), so in the states the
search stores (every thread in N) the phases are a function of the program state, and ``states`` counts
program states as in every other reduction.

Over commit-atomicity. P# may instrument ``instrument/commit.py``'s system (``--atomicity commit
--reduction transactions``): its states are then that system's ``(globals, heap, threads, block phases,
shadow)`` with P#'s phases last. A step that is not *quiet* there (it enters or leaves an atomic block,
commits one, or changes the shadow store) is a non-mover of P#, whatever it does to the program: a
transaction holds at most one of them. A quiet step inside a block changes the normal store alone, so it
commutes in the product wherever it commutes in the program (docs/reductions.md, "Reductions on the
instrumented search"). A lock operation by a thread outside every block is a non-mover too: it is quiet
only because the shadow store is then the normal store (``None``), so it also acts on the shadow store,
where another thread's commit runs a whole block serially; an acquire moved right past that commit would
hide the serial run finding the lock held (a random model found it).

The assertion delta(t, l) before each unsafe access: a data access to a location with a declared predicate
that is false is a ``discipline`` violation. Automatic predicates (the inferred protecting locks, section 6)
are weakened instead (``Classification`` in incremental mode): the access then becomes a non-mover.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from movers.analysis.classify import Classification
from movers.analysis.mover import BOTH, NON, RIGHT, classify_step
from movers.ir.program import Program
from movers.semantics.interface import System
from movers.semantics.locality import LOCAL_KINDS, remember, stays_local
from movers.semantics.system import Outcome

INIT = None
CACHE_LIMIT = 100_000


def next_phase(p: Any, mover: str) -> bool:
    if mover == RIGHT:
        return True
    if mover == BOTH:
        return True if p is INIT else p
    return False


def normal_phase(thread: tuple, p: Any) -> Any:
    """The phase of a thread (its frames) stored in a state: ``p``, except where the phase carries no
    information (module docstring, "Normal phases")."""
    if not thread:
        return False
    if len(thread) == 1 and thread[0][1] == thread[0][0].entry:
        return INIT
    return p


class PhaseSystem:
    """P#: a transition system whose states carry each thread's phase. A ``System`` over ``inner`` (the
    program, or commit-atomicity's instrumentation): the questions about the program go straight to the inner
    system's methods, bound here."""

    successors = None  # its steps add the phases: no bare successors (``System``)
    bare_system = None

    def __init__(self, inner: System, classification: Classification) -> None:
        self.inner = inner
        self.program: Program = inner.program
        self.cls = classification
        classification.lock_state_matters = True
        if not getattr(inner, "ghost_state", False):
            # Its states are the program's with the phases last, which no guard reads (``check_guards``).
            classification.guard_memo_lengths.add(4)
        self.enabled = inner.enabled
        self.deadlock = inner.deadlock
        self.ended = inner.ended
        self.next_node = inner.next_node
        self.check_state = inner.check_state
        self.guard_reads = inner.guard_reads
        self.evaluate_predicate = inner.evaluate_predicate
        # Over commit-atomicity's instrumentation: whether a step leaves its phases and shadow store alone.
        self.quiet = inner.quiet
        # Traces are replayed on P# itself (its steps check the declared predicates, which the inner system
        # leaves to it), or on the program's own states when it instruments an atomicity instrumentation.
        shown = inner.replay_system
        self.replay_system: System = self if shown is inner else shown
        # The blocks a commit-atomicity counterexample ran serially (``CommitSystem.serial_order``).
        serial_order = getattr(inner, "serial_order", None)
        if serial_order is not None:
            self.serial_order = serial_order
        self._cache: dict[tuple[Any, int], tuple[list[Outcome], str]] = {}
        # Thread t's step by (classification, t, its stack and phase, globals, heap): see ``step``.
        self._local: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._no_local = self.quiet is not None or bool(classification.declared)
        # Whether a code is a constructor, by code (``locality.local_thread`` asks it of every frame, by name).
        self._ctor: dict[Any, bool] = {}
        self._initial: Any = None
        # ids of the answers in ``_cache`` given before the last weakening (``weakened``; the cache keeps
        # them alive until it is cleared, and clears this with them), and how often one was used.
        self.stale: set[int] = set()
        self.stale_hits = 0
        # The state being expanded (``expanding``) and its entries of ``_cache`` by thread: the same answers,
        # found by the state's identity instead of its hash (a state is hashed whole, ~1 µs).
        self.root: Any = None
        self._root_row: dict[int, tuple[list[Outcome], str]] = {}

    @property
    def initial_names(self) -> dict[int, str]:
        return self.inner.initial_names

    def initial(self) -> tuple:
        if self._initial is None:
            s = self.inner.initial()
            self._initial = (*s, (INIT,) * len(s[2]))
        return self._initial

    def reset(self) -> None:
        self._cache.clear()
        self._local.clear()
        self.stale.clear()
        self._root_row = {}

    @staticmethod
    def phases(state: tuple) -> tuple:
        return state[-1]

    @staticmethod
    def program_state(state: tuple) -> tuple:
        """The state of the system P# instruments (the program, or its atomicity instrumentation), without
        the phases P# adds."""
        return state[:-1]

    def _extend(self, state: tuple, t: int, o: Outcome, mover: str) -> None:
        if o.state is None:
            return
        ph = state[-1]
        # Only thread t's frames changed: the other threads' phases are normal already.
        p = normal_phase(o.state[2][t], next_phase(ph[t], mover))
        new = ph[:t] + (p,) + ph[t + 1:]
        started = len(o.state[2]) - len(ph)
        if started > 0:
            new = new + (INIT,) * started
        o.state = o.state[: len(state) - 1] + (new,)  # the inner system's state, then the phases

    def step(self, state: tuple, t: int) -> tuple[list[Outcome], str]:
        """Thread t's next step from ``state`` (every resolution), with the delta assertions checked, the
        phases updated, and what kind of mover it is.

        Remembered per thread where that is exact (``semantics/locality.py``): thread t's stack and phase
        over the same globals and heap step, and classify, the same way whatever the other threads are doing
        (the per-state work that made transactions slower than ``none`` where every step is inside a lock),
        as long as the classification is the same (the key holds its version)."""
        # The state's own entry first: within a pass of the incremental search it may be from before a
        # weakening, and the search is the same as without the memo only if it is used as it always was.
        root = state is self.root
        if root:
            hit = self._root_row.get(t)
            if hit is not None:
                if self.stale and id(hit) in self.stale:
                    self.stale_hits += 1
                return hit
        k = (state, t)
        hit = self._cache.get(k)
        if hit is not None:
            if self.stale and id(hit) in self.stale:
                self.stale_hits += 1
            if root:
                self._root_row[t] = hit
            return hit
        lk = self._local_key(state, t)
        if lk is not None:
            made = self._local.get(lk)
            if made is not None:
                hit = (_replay(made, state, t), made[1])
                self._store(k, hit)
                if root:
                    self._root_row[t] = hit
                return hit
        inner = self.inner
        cls = self.cls
        version = cls.version
        outs = inner.execute(state, t, True)
        mover = classify_step(cls, inner, state, t, inner.next_node(state, t), outs)
        if self.quiet is not None and mover != NON:
            if not self.quiet(state, t, outs) or (mover != BOTH and state[3][t] is None):
                mover = NON  # module docstring, "Over commit-atomicity"
        local = lk is not None and stays_local(outs, state[2], t)
        inner_parts = remember(outs, t) if local else None
        for o in outs:
            self._extend(state, t, o, mover)
        if local and lk is not None:
            if len(self._local) >= CACHE_LIMIT:
                self._local.clear()
            self._local[lk] = (inner_parts, mover, outs, [o.state[-1][t] if o.state is not None else None
                                                          for o in outs])
        made = (outs, mover)
        self._store(k, made)
        if root:
            self._root_row[t] = made
        if cls.version != version:
            self.weakened()  # this answer too: part of it was classified before the weakening
        return made

    def _store(self, k: tuple[Any, int], made: tuple[list[Outcome], str]) -> None:
        if len(self._cache) >= CACHE_LIMIT:
            self._cache.clear()
            self.stale.clear()
            self._root_row = {}
        self._cache[k] = made

    def expanding(self, state: tuple) -> None:
        """The search expands ``state`` now: its steps will be asked for several times."""
        if state is not self.root:
            self.root = state
            self._root_row = {}

    def weakened(self) -> None:
        """The classification just weakened: every answer remembered so far is *stale*, it may differ from
        what the step would give now. The memo goes on answering with it, as it always did (the search is
        the same with and without ``Transactions``' reuse of a pass only if it is); what is counted is
        whether an expansion used one (``stale_hits``), since an expansion that did cannot be reused."""
        self.stale.update(map(id, self._cache.values()))

    def _local_key(self, state: tuple, t: int) -> tuple[Any, ...] | None:
        """The key of thread t's step in the per-thread memo: the classification as it is (a weakening, or
        lock state read as data, changes what a step is), the thread, its stack and phase, the globals and
        the heap; None where the step may depend on more (``semantics/locality.py``), with declared
        predicates, and over commit-atomicity's instrumentation (its shadow store is another part)."""
        if self._no_local or len(state) != 4:
            return None
        threads = state[2]
        th = threads[t]
        if not th:
            return None
        top = th[-1]
        if top[0].nodes[top[1]].kind not in LOCAL_KINDS:
            return None
        ctor = self._ctor
        for frame in th:
            code = frame[0]
            c = ctor.get(code)
            if c is None:
                c = ctor[code] = code.name.endswith(".__init__")
            if c:
                return None  # ``locality.local_thread``: inside a constructor
        cls = self.cls
        return (cls.version, len(cls.refinements), cls.lock_state_observed, t, len(threads), th, state[3][t],
                state[0], state[1])

    def execute(self, state: tuple, t: int, track: bool | None = None) -> list[Outcome]:
        return self.step(state, t)[0]

    def steps(self, state: tuple) -> list[Outcome]:
        """Every enabled thread's next step, phases updated (the reductions ask for ``step`` instead)."""
        out: list[Outcome] = []
        enabled = self.enabled
        for t in range(len(state[2])):
            if state[2][t] and enabled(state, t):
                out.extend(self.step(state, t)[0])
        return out

    def execute_choice(self, state: tuple, t: int, choices: tuple[int, ...], track: bool = True) -> Outcome:
        """Replay one resolution (counterexample traces); the phase is carried along."""
        for o in self.step(state, t)[0]:
            if o.choices == choices:
                return o
        o = self.inner.execute_choice(state, t, choices, track)
        self._extend(state, t, o, NON)
        return o


def _replay(made: tuple[Any, ...], state: tuple, t: int) -> list[Outcome]:
    """``locality.replay`` of a remembered step onto ``state``, with thread t's phase after each resolution
    (``made``: what ``PhaseSystem.step`` keeps per thread), each successor built as one tuple."""
    threads, ph = state[2], state[3]
    out: list[Outcome] = []
    for part, o, p in zip(made[0], made[2], made[3], strict=True):
        if part is None:
            out.append(o)
            continue
        nt = list(threads)
        nt[t] = part[2]
        out.append(Outcome((part[0], part[1], tuple(nt), (*ph[:t], p, *ph[t + 1:])), o.choices, o.node,
                           o.violation, o.effect, t))
    return out


if TYPE_CHECKING:
    _: type[System] = PhaseSystem  # mypy checks that it is one
