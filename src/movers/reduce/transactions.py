"""``--reduction transactions``: Flanagan & Qadeer, *Transactions for Software Model Checking*, SoftMC 2003
(``papers/004``).

Where Stoller & Cohen only let invisible steps move left, transactions also move right movers (lock
acquires) right: a transaction is a sequence of right movers, at most one non-mover (the commit), then
left movers. Runs on the instrumented program P# (``phases.py``), whose states carry each
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
(``phases.py``), so the stored states are program states.

Protecting locks are inferred incrementally (section 6): a location starts protected (unshared by its first
accessor, then read-only, then by the locks held at every access) and loses protection the moment an access
violates it, without restarting; the search then re-expands every state it stored, with the weaker
predicates, until a pass changes nothing (the fixpoint of the paper's rules, Theorem 6.1). A state expanded
under the predicates that are still current is not expanded again: the pass takes the numbers of its
expansion (``begin_pass``), and runs again without that if it weakens them once more.

Deadlocks: right movers can hide them (section 7: the algorithm "does not directly catch deadlocks"). A
thread blocked inside a transaction is a dead end of the reduced search, not a deadlock: in a deadlock of
the dining philosophers each thread has made a right move (its first fork) and none has committed. So at
every stored state where every thread is in N, the search also looks for a deadlock in the *right-mover
closure*: every combination, taken in thread order, of a run of each thread's pre-commit steps (steps after
which its phase is R). When every step that can block is a right mover (an acquire, the re-acquire after
``wait``) or a join, this finds every deadlock of the program (docs/reductions.md, "Deadlocks under
transactions", gives the argument: in a deadlock no thread is in L, moving each thread's unfinished R part
to the end of the path leaves a state with every thread in N, which the reduced search stores, and the R
parts commute into thread order). Each deadlock it reports is a real run of the program. Where some step
that can block is not a right mover (``wait_until``), or a closure grows past ``CLOSURE_LIMIT``
combinations, deadlock freedom is established separately, by an optimistic search (``Checker`` does it).
"""

from __future__ import annotations

from typing import Any

from movers.analysis.classify import Classification
from movers.analysis.mover import BOTH, LEFT, LEFT_KINDS, NON_KINDS, RIGHT_KINDS
from movers.reduce.base import MOVE_LIMIT, Capabilities, Move, ReductionBase, _steps
from movers.reduce.phases import INIT, PhaseSystem

BASE_KINDS = frozenset({"assertion", "invariant", "discipline", "runtime-error"})
# Steps the right-mover closure of one state may take before the deadlock check gives up (then an optimistic
# search checks deadlock freedom instead: the answer stays sound, only slower).
CLOSURE_LIMIT = 5_000


class _GiveUp(Exception):
    pass


def closure_applies(program: Any) -> bool:
    """Whether the right-mover closure finds every deadlock: every step that can block is a right mover or a
    join (the argument in docs/reductions.md needs a blocked thread's next step to be outside L whatever the
    state)."""
    return all(n.kind in RIGHT_KINDS or n.kind in NON_KINDS
               for code in program.codes() for n in code.nodes if n.guard is not None)


class Transactions(ReductionBase):
    name = "transactions"
    capabilities = Capabilities(atomicity=frozenset({"commit"}), stores=frozenset({"exact"}), all_violations=False,
                                incremental=True, checks_discipline=True, counts_transactions=True,
                                deadlock_search="optimistic", classifies=True,
                                refuses_model=lambda program: model_refusal(program))

    def __init__(self, ts: Any, classification: Classification | None = None) -> None:
        # Over an atomicity instrumentation (ghost state: phases of atomic blocks, a shadow store) the commit
        # point of a block depends on the classification, so a guess that fails restarts the search (the
        # states stored under it may hold commits the final classification does not make) instead of
        # weakening in place; and the right-mover closure's argument is not made: there an optimistic search
        # checks deadlock freedom, as before.
        plain = not getattr(ts.inner if isinstance(ts, PhaseSystem) else ts, "ghost_state", False)
        cls = classification or Classification(ts.program, incremental=plain)
        cls.incremental = plain
        self.cls = cls
        self.ts = ts if isinstance(ts, PhaseSystem) else PhaseSystem(ts, cls)
        self._cut: set[Any] = set()
        self._initial: Any = None
        self.closure = plain and closure_applies(ts.program)
        self.closure_gave_up = False
        self._ahead: dict[Any, bool] = {}
        # What the passes of the incremental search expanded: see ``begin_pass``.
        self._records: dict[Any, int] | None = None
        self._records_key: Any = None
        self._previous: dict[Any, int] | None = None
        self._previous_key: Any = None

    @property
    def preserves(self) -> frozenset[str]:  # type: ignore[override]  # it depends on the closure
        """Deadlocks too, when the right-mover closure covers them (module docstring)."""
        if self.closure and not self.closure_gave_up:
            return BASE_KINDS | {"deadlock"}
        return BASE_KINDS

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
        p = state[-1][t]
        if p is True:
            return False  # R(t)
        if p is INIT:
            return True
        node = self.ts.next_node(state, t)
        assert node is not None  # the thread has not ended (above)
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
        ts = self.ts
        key = self._key()
        hits = ts.stale_hits
        cut = state in self._cut
        out = self._expand(state)
        if self._records is not None and not cut and ts.stale_hits == hits and self._key() == key:
            # Expanded under one classification, with no answer from before a weakening: what a later pass
            # would get again, if the classification is still this one then (``again``).
            if key != self._records_key:
                self._records, self._records_key = {}, key  # older ones can never be reused: forget them
            self._records[state] = (sum(len(m.steps) for m in out) << 32) | len(out)
        return out

    def _key(self) -> tuple[Any, ...]:
        """The classification as it is (and whether the closure gave up): two expansions of a state under the
        same key are the same, given the same answers from P#."""
        cls = self.cls
        return cls.version, len(cls.refinements), cls.lock_state_observed, self.closure_gave_up

    # -- reusing a pass -----------------------------------------------------------------------------------------

    def begin_pass(self, reuse: bool, first: bool = False) -> Any:
        """Before a pass of the incremental search: keep what this pass expands (when ``reuse``), and hand
        over what the last pass expanded under the classification it ended with. The search then asks
        ``again`` before ``moves``: an expansion made under the classification that is still current, with
        no stale answer (``PhaseSystem.weakened``), gives the same moves, whose states the search already
        has, so only their numbers are needed. That holds while the pass does not weaken the classification
        again; if it does, the search goes back to the snapshot returned here (``redo_pass``) and runs the
        pass again without reuse: after a weakening the memo answers with stale entries that a skipped
        expansion would have made. None: nothing to reuse (no snapshot taken). ``first``: the search's first
        pass, which reuses nothing (after a restart, what a search expanded is not the new search's)."""
        previous, key = (None, None) if first else (self._records, self._records_key)
        self._records, self._records_key = ({} if reuse else None), None
        self._previous, self._previous_key = None, None
        if not reuse or not previous:
            return None
        self._previous, self._previous_key = previous, key
        return self.cls.snapshot(), set(self._cut), self.closure_gave_up

    def redo_pass(self, snapshot: Any) -> None:
        """Back to where ``begin_pass`` took ``snapshot``, to run the pass again without reuse."""
        cls_snap, cut, gave_up = snapshot
        self.cls.restore(cls_snap)
        self._cut.clear()
        self._cut.update(cut)
        self.closure_gave_up = gave_up
        self._previous = self._previous_key = None
        self._records, self._records_key = {}, None
        self.reset()

    def again(self, state: tuple) -> tuple[int, int] | None:
        """(transitions, moves) of the last pass's expansion of ``state``, where it is the same now
        (``begin_pass``), else None."""
        previous = self._previous
        if previous is None or self._previous_key != self._key() or state in self._cut:
            return None
        made = previous.get(state)
        if made is None:
            return None
        return made >> 32, made & 0xFFFFFFFF

    def _expand(self, state: tuple) -> list[Move]:
        n = len(state[2])
        self.ts.expanding(state)
        version = self.cls.version
        bad = self.cls.check_guards(self.ts, state)
        if self.cls.version != version:
            self.ts.weakened()
        if bad is not None:
            return [Move((), None, ("discipline", bad))]
        if state not in self._cut:
            for t in range(n):
                if not self.in_N(state, t):
                    return self._transaction(state, t)  # a thread went on after a cut state: it goes on
            if self.closure and not self.closure_gave_up:
                dead = self._deadlock_in_closure(state)
                if dead is not None:
                    return [dead]
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
        state ends there, and that state is stored (condition C).

        ``base.thread_moves`` with ``in_N`` as its ``ends``, written out: the same steps asked of P# in the
        same order (the incremental lock inference sees them in that order), without a call per question.
        Where ``in_N`` executes t's next step (an L state), the loop expands those outcomes instead of asking
        P# again: the second answer would be the entry the first one just stored."""
        ts = self.ts
        step, enabled, next_node = ts.step, ts.enabled, ts.next_node
        check_state = None if getattr(ts.check_state, "checks_nothing", False) else ts.check_state
        cut = self._cut
        out: list[Move] = []
        work: list[tuple[Any, Any, int]] = [(o, (None, (t, o.choices)), 1) for o in reversed(step(state, t)[0])]
        seen: Any = [state]  # a list while short: ``in`` compares, where a set would hash every state whole
        pop, push = work.pop, work.append
        while work:
            o, path, length = pop()
            if o.violation is not None:
                out.append(Move(_steps(path), None, o.violation))
                continue
            s = o.state
            if s is None:
                continue  # an assume pruned this path
            if check_state is not None:
                bad = check_state(s)
                if bad is not None:
                    out.append(Move(_steps(path), None, bad))
                    continue
            # ``in_N(s, t)``, and the dead end of a blocked thread inside a transaction.
            outs = None
            if not s[2][t]:
                out.append(Move(_steps(path), s))
                continue
            p = s[-1][t]
            if p is not True:
                if p is INIT:
                    out.append(Move(_steps(path), s))
                    continue
                kind = next_node(s, t).kind
                if kind in RIGHT_KINDS or kind in NON_KINDS or not enabled(s, t):
                    out.append(Move(_steps(path), s))
                    continue
                outs, mover = step(s, t)
                if mover not in (LEFT, BOTH):
                    out.append(Move(_steps(path), s))
                    continue
            elif not enabled(s, t):
                continue
            if s in seen or length >= MOVE_LIMIT:
                cut.add(s)
                out.append(Move(_steps(path), s))
                continue
            seen = _seen_add(seen, s)
            if outs is None:
                outs = step(s, t)[0]
            for o2 in reversed(outs):
                push((o2, (path, (t, o2.choices)), length + 1))
        return out

    # -- deadlocks: the right-mover closure -------------------------------------------------------------------

    def _deadlock_in_closure(self, state: tuple) -> Move | None:
        """From ``state`` (every thread in N), a deadlock reached by a run of pre-commit steps of each thread,
        in thread order, as a move ending in the violation; None if there is none (module docstring)."""
        try:
            return self._closure_search(state, 0, (), [CLOSURE_LIMIT])
        except _GiveUp:
            self.closure_gave_up = True
            return None

    def _closure_search(self, s: tuple, t: int, steps: tuple, budget: list[int]) -> Move | None:
        """``_deadlock_in_closure`` from thread t on: a method, not a nested function that calls itself (that
        would be a reference cycle per stored state, and the search runs with the cycle collector off).

        Thread t's options are the empty run, then every nonempty run of its steps from ``s`` after each of
        which its phase is R (right movers), found depth first; a run ends where a step would commit, block
        or fail. Each run that may leave t blocked is followed by the next thread's options at once, before
        the next run is looked for (the order in which P# is asked for steps is the lock inference's order).
        Each state a run reaches costs one of ``budget`` (shared by the whole closure): past it, the check
        gives up."""
        if t == len(s[2]):
            dead = self.ts.deadlock(s) if steps else None  # no run at all: the search sees it itself
            return Move(steps, None, ("deadlock", dead)) if dead else None
        if self._may_stay_blocked(s, t):
            found = self._closure_search(s, t + 1, steps, budget)
            if found is not None:
                return found
        step, enabled = self.ts.step, self.ts.enabled
        work: list[tuple[tuple, tuple]] = [(s, ())]
        seen: Any = [s]  # as in ``_transaction``
        while work:
            budget[0] -= 1
            if budget[0] < 0:
                raise _GiveUp
            s1, run = work.pop()
            if run and (len(run) >= MOVE_LIMIT or not self._guard_ahead(s1, t)):
                continue  # no state further on in this run can have t blocked: nothing to find there
            if not enabled(s1, t):
                continue
            for o in step(s1, t)[0]:
                s2 = o.state
                if o.violation is not None or s2 is None or s2[-1][t] is not True or s2 in seen:
                    continue
                seen = _seen_add(seen, s2)
                run2 = (*run, (t, o.choices))
                if self._may_stay_blocked(s2, t):
                    found = self._closure_search(s2, t + 1, steps + run2, budget)
                    if found is not None:
                        return found
                work.append((s2, run2))
        return None

    def _guard_ahead(self, state: tuple, t: int) -> bool:
        """Whether, statically, a step with a guard may come in thread t's pre-commit run after its next step:
        a search of the code's control flow from there, through steps that may keep the phase R (not a
        release, wait, start, join or indivisible block); a call or a return leaves the code: yes."""
        top = state[2][t][-1]
        key = (top[0], top[1])
        known = self._ahead.get(key)
        if known is None:
            known = self._ahead[key] = _guard_reachable(top[0], top[1])
        return known

    def _may_stay_blocked(self, state: tuple, t: int) -> bool:
        """Whether thread t can be blocked (or terminated) once the threads after it have run: the others only
        make right moves, which take locks (so an acquire may become blocked) but never end a thread (so an
        enabled join stays enabled), and a step without a guard is never blocked."""
        th = state[2][t]
        if not th:
            return True
        node = self.ts.next_node(state, t)
        assert node is not None  # the thread has not ended (above)
        if node.guard is None:
            return False
        return node.kind != "join" or not self.ts.enabled(state, t)


def _seen_add(seen: Any, s: tuple) -> Any:
    """``seen`` with ``s`` added: a list up to 8 states, then a set (a run may be ``MOVE_LIMIT`` long)."""
    if type(seen) is list:
        seen.append(s)
        return seen if len(seen) < 8 else set(seen)
    seen.add(s)
    return seen


def _guard_reachable(code: Any, start: int) -> bool:
    """``Transactions._guard_ahead``, computed: a search of ``code``'s control flow from node ``start``."""
    seen = {start}
    work = [start]
    while work:
        k = work.pop()
        n = code.nodes[k]
        if n.calls or not n.succ:
            return True
        if k != start:
            if n.guard is not None:
                return True
            if n.kind in LEFT_KINDS or n.kind in NON_KINDS:
                continue  # the run commits here
        for j in n.succ:
            if j not in seen and 0 <= j < len(code.nodes):
                seen.add(j)
                work.append(j)
    return False


def model_refusal(program: Any) -> str | None:
    """Why ``--reduction transactions`` refuses this model (its declared predicates), or None."""
    bad = second_condition_violations(program)
    if not bad:
        return None
    return ("--reduction transactions needs exclusive access predicates that hold for one thread at a time and "
            "that no other thread can give or take away (Flanagan & Qadeer, section 4.1, conditions (i) and "
            "(ii)); these may not: " + "; ".join(bad) + ". Use --reduction optimistic, which needs only that no "
            "thread takes access away (WFendExcl)")


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
