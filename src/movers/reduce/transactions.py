"""``--reduction transactions``: Flanagan & Qadeer, *Transactions for Software Model Checking*, SoftMC 2003
(``papers/004``).

Where Stoller & Cohen only let invisible steps move left, transactions also move right movers (lock
acquires) right: a transaction is a sequence of right movers, at most one non-mover (the commit), then
left movers. Runs on the instrumented program P# (``instrument/phases.py``), whose states carry each
thread's phase. Following section 4.2, each thread t is at every state in one of

- R(t): in the right-mover (pre-commit) part of a transaction: its phase is True (condition A);
- L(t): in the left-mover (post-commit) part: phase False, not at Init, and its next step is a left mover
  in this state (condition B);
- N(t): not inside a transaction: everything else (terminated threads, and threads at their entry
  location, the paper's Init, included).

The search schedules a thread only when every *other* thread is in N (rule (step)), so a transaction runs
without interruption from a state where all threads are in N to the next such state. A transaction is
explored as one move and the states inside it are not stored; only states where every thread is in N are.
Condition C (every L run reaches N) is met by ending a transaction that comes back to a state it has
passed, and storing that state: this breaks every cycle of L states by an N state. A transaction is also
cut, and the state stored, after ``base.MOVE_LIMIT`` steps. A cut state is treated as in N for every
thread: its own thread goes on with the transaction and every other enabled thread may move too (which only
adds interleavings of the real system). Letting only the cut thread move there would be unsound: a
transaction whose left-mover part loops for ever (``x = 1`` then ``while True: k = (k + 1) % 2``) would
keep the other threads out for ever, and an assertion that only fails after ``x = 1`` would never be
reached (tests/test_transactions.py). P#'s phases are normalised where they carry no information
(``instrument/phases.py``), so the stored states are program states.

Protecting locks are inferred incrementally (section 6): a location starts protected (unshared by its first
accessor, then read-only, then by the locks held at every access) and loses protection the moment an access
violates it, without restarting; the search then re-expands every state it stored, with the weaker
predicates, until a pass changes nothing (the fixpoint of the paper's rules, Theorem 6.1).

Deadlocks: right movers can hide them (section 7: the algorithm "does not directly catch deadlocks"). A
thread blocked inside a transaction is a dead end of the reduced search, not a deadlock. Deadlocks seen in
stored states are real and reported; deadlock *freedom* is established separately, by an optimistic search
for that property (``Checker`` does it; see docs/reductions.md).
"""

from __future__ import annotations

from typing import Any

from movers.instrument.phases import BOTH, INIT, LEFT, NON_KINDS, RIGHT_KINDS, PhaseSystem
from movers.reduce.base import Move, thread_moves
from movers.reduce.classify import Classification


class Transactions:
    name = "transactions"
    preserves = frozenset({"assertion", "invariant", "discipline", "runtime-error"})
    checks_discipline = True
    incremental = True  # the search re-expands its stored states when the classification weakens

    def __init__(self, ts: Any, classification: Classification | None = None) -> None:
        cls = classification or Classification(ts.program, incremental=True)
        cls.incremental = True
        self.cls = cls
        self.ts = ts if isinstance(ts, PhaseSystem) else PhaseSystem(ts, cls)
        self._cut: set[Any] = set()
        self._initial: Any = None

    @property
    def system(self) -> PhaseSystem:
        """The transition system the search runs on: P#."""
        return self.ts

    def version(self) -> int:
        return self.cls.version

    def reset(self) -> None:
        self.ts.reset()

    # -- R, L, N ----------------------------------------------------------------------------------------------

    def in_N(self, state: tuple, t: int) -> bool:  # noqa: N802 - the paper's name
        if not state[2][t]:
            return True
        p = state[3][t]
        if p is True:
            return False  # R(t)
        if p is INIT:
            return True
        node = self.ts.next_node(state, t)
        if node.kind in RIGHT_KINDS or node.kind in NON_KINDS or not self.ts.enabled(state, t):
            return True  # not a left mover (and a blocked step is never executed to find out)
        _, mover = self.ts.step(state, t)
        return mover not in (LEFT, BOTH)  # L(t) when the next step is a left mover

    def all_N(self, state: tuple) -> bool:  # noqa: N802
        return all(self.in_N(state, t) for t in range(len(state[2])))

    def store(self, state: tuple) -> bool:
        if self._initial is None:
            self._initial = state
        return state is self._initial or state in self._cut or self.all_N(state)

    # -- moves ------------------------------------------------------------------------------------------------

    def moves(self, state: tuple) -> list[Move]:
        n = len(state[2])
        bad = self.cls.check_guards(self.ts, state)
        if bad is not None:
            return [Move((), None, ("discipline", bad))]
        if state not in self._cut:
            for t in range(n):
                if not self.in_N(state, t):
                    return self._transaction(state, t)  # a thread went on after a cut state: it goes on
        # A cut state counts as N for every thread (condition C): the others move there too, so a
        # transaction whose left-mover part never ends cannot keep them out for ever.
        out: list[Move] = []
        for t in range(n):
            if self.ts.enabled(state, t):
                out.extend(self._transaction(state, t))
        return out

    def _transaction(self, state: tuple, t: int) -> list[Move]:
        """Thread t's transactions from ``state``: its steps until it is in N again. A thread blocked inside
        a transaction is a dead end, not a deadlock (section 7); a run of L states that comes back to a
        state ends there, and that state is stored (condition C)."""

        def ends(s: tuple) -> bool | None:
            if self.in_N(s, t):
                return True
            return False if self.ts.enabled(s, t) else None

        return thread_moves(self.ts, state, t, step=lambda s: self.ts.step(s, t)[0], ends=ends, cut=self._cut)


def second_condition_violations(program: Any) -> list[str]:
    """Declared predicates that might hold for two threads at once (condition (i) of section 4.1) or that
    another thread's step might make true or false (condition (ii)). Accepted, because they meet both by
    construction: ``t == k``, ``X.owner == t`` where X names a lock through globals or fields that no
    thread assigns after construction, conjunctions of those, and ``False``. (Stoller & Cohen's WFendExcl
    only forbids taking access away; the section 7 example gives it: ``y += 1``.)"""
    import ast

    written_globals: set[str] = set()
    written_fields: set[str] = set()
    for code in program.codes():
        for n in code.nodes:
            written_globals |= n.writes
            if not code.name.endswith(".__init__"):
                written_fields |= n.fields_written
    bad: list[str] = []
    for d in program.exclusives:
        tree = ast.parse(d.text, mode="eval").body
        assert isinstance(tree, ast.Call)
        kind = tree.func.id  # type: ignore[attr-defined]
        if kind == "thread_local":
            continue
        if kind == "guarded_by":
            ok = _stable_lock(tree.args[1], written_globals, written_fields)
        else:
            lam = tree.args[1]
            assert isinstance(lam, ast.Lambda)
            t = lam.args.args[0].arg
            ok = _safe(lam.body, t, written_globals, written_fields)
        if not ok:
            bad.append(f"line {d.line}: {d.text}")
    return bad


def _stable_lock(e: Any, written_globals: set[str], written_fields: set[str]) -> bool:
    import ast

    if isinstance(e, ast.Name):
        return e.id not in written_globals
    if isinstance(e, ast.Attribute):
        return e.attr not in written_fields and _stable_lock(e.value, written_globals, written_fields)
    if isinstance(e, ast.Subscript):
        return False
    return False


def _atom(e: Any, t: str, written_globals: set[str], written_fields: set[str]) -> bool:
    """``t == k`` or ``X.owner == t`` (either way round): true for at most one thread at a time, and no
    other thread's step can change it."""
    import ast

    if not (isinstance(e, ast.Compare) and len(e.ops) == 1 and isinstance(e.ops[0], ast.Eq)):
        return False
    a, b = e.left, e.comparators[0]
    for x, y in ((a, b), (b, a)):
        if isinstance(x, ast.Name) and x.id == t:
            if isinstance(y, ast.Constant) and type(y.value) is int:
                return True
            if isinstance(y, ast.Attribute) and y.attr == "owner":
                return _stable_lock(y.value, written_globals, written_fields)
    return False


def _safe(e: Any, t: str, written_globals: set[str], written_fields: set[str]) -> bool:
    """Conditions (i) and (ii) by construction: an atom, a conjunction of atoms, or ``False``. A
    disjunction could hold for two threads at once (``t == 0 or m.owner == t``), so it is refused."""
    import ast

    if isinstance(e, ast.Constant):
        return e.value is False
    if isinstance(e, ast.BoolOp) and isinstance(e.op, ast.And):
        return all(_atom(v, t, written_globals, written_fields) for v in e.values)
    return _atom(e, t, written_globals, written_fields)
