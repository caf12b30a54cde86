"""Commit-atomicity: Flanagan, *Verifying Commit-Atomicity Using Model-Checking* (SPIN 2004, papers/003),
section 4, the instrumented semantics with a shadow store.

A state of the instrumented system is ``(globals, heap, threads, phases, shadow)``: the normal store σ (the
program state, interleaved as usual), each thread's phase A_i, and the shadow store ρ. ``phases[i]`` is
``None`` (*Outside*) or ``(PRE, b, made)`` / ``(POST, b, pending)`` (*PreCommit* / *PostCommit* of the
outermost atomic block ``b``, with the choices below); ``shadow`` is ρ, or ``None`` when ρ equals σ (so that
a program outside every block costs no extra state).

The rules, for a step T_i(σ, σ') of thread i (ρ is never inside a block between steps: the serial run that
[COMMIT] starts is run to its end within the same transition, which is what [SHADOW]'s priority means):

- [PRE-COMMIT]: the step leaves thread i in PreCommit (it enters a block, or it is a step of a block before
  its commit point): ρ is unchanged;
- [POST-COMMIT]: thread i was in PostCommit: ρ is unchanged;
- [COMMIT]: from PreCommit or Outside to PostCommit or Outside: thread i runs on ρ from where ρ has it,
  serially, until it is Outside again ([SHADOW]): the whole block, or the single step of a thread outside
  every block (which takes the same choices as on σ);
- [WRONG]: when no thread is inside a block (in σ; ρ never is between steps) and the stores differ.

**Phases as steps happen.** A step may leave a block and enter the next one (``while True:`` and ``with
atomic():`` cost no step), so the phase is not a function of the program counter: the step's Effect lists
the outermost blocks it left (``Effect.blocks``). A step is in a block when the thread rests inside one
before it (callees run inside their caller's block; nested blocks belong to the outermost); a block's first
step enters it (Outside to PreCommit, or further if it is also the commit point): a thread that rests at a
block's first statement has done nothing in it yet and is Outside. So a step that leaves a block and comes
to rest at the start of the next (``while True: with atomic(): ...``) ends Outside: the paper's third
requirement on A_i (no PostCommit to PreCommit in one step) holds by construction, and [WRONG] is checked
there.

**The commit point** of a block is the step after ``commit()`` when the model marks one, else the block's
first step that is not a right mover: a non-mover or a left mover, with movers from the exclusive access
predicates (declared or inferred, ``mover.classify_step``), so that a block that is reducible (R* N? L*)
commits at its non-mover, as Lipton's reduction has it. A step that leaves the block from PreCommit commits
too ([COMMIT], PreCommit to Outside), which covers ``commit()`` as a block's last statement.

**What is compared** for [WRONG]: what the program can observe and where it stands: the globals and the
heap reachable from them (canonicalised, so that allocation order does not matter), and each thread's
position (its frames' code and program counters). Thread-local leftovers (the values of locals) are not:
a block that reads a value it then discards is not a violation. When the stores agree, ρ becomes σ again.

**Blocks proved by reduction** (``proved``, ``--atomicity auto``'s second search). A block that the first
search proved reducible (R* N? L*, ``reducible.py``) commits at its non-mover like any other, but runs as
one transaction: while a thread inside it can move, no other thread moves (``_enabled``). Lipton's
reduction says nothing is lost: every interleaving can be rearranged, its right movers later and its left
movers earlier, into one where the block runs uninterrupted, without changing the order of any two commits
or the stores at any point where no thread is inside a block. When the thread blocks inside (an acquire
waits), the others move again; when several threads are inside proved blocks and can move, the
lowest-numbered runs (the executions where another's non-mover comes first are explored from the states
before they entered). What this saves is every interleaving inside proved blocks. (Running a
proved block as plain code on both stores instead would take its locks on ρ at once, where another block's
serial run would find them held: a false alarm. Committing it at its end would miss a block whose
left-mover part never ends, which the serial run at the non-mover reports.)

**Choices inside a block** (``choose()``, in the block or in what it calls). The serial run must be the
same run as the interleaved one, so it makes the same choices, matched by position (the k-th choosing step
of the block on one store against the k-th on the other): ``made`` holds the choices the block made on σ
before its commit point, which the serial run then makes; after them the serial run makes every choice,
one shadow store per combination, and ``pending`` holds, for each, the choice and the options it had. A
choosing step of the block on σ after the commit point then takes ``pending``'s next choice: another
choice that was among the options is explored on the sibling state whose serial run made it (so no run of
σ is lost). Where the two runs take different paths (a choice that was not among the options, one the
serial run never came to, a forced choice the serial run cannot make), the matching stops for the block
(``pending`` is None): the choices are then free on both stores, as in the paper's [SHADOW], and [WRONG]
alone decides. (Resolving every choice independently, as the paper does, would report every block whose
result depends on a choice as wrong.)

**Reported, never dropped**: a serial run on ρ that blocks (a lock another thread holds there, a ``wait``),
fails (an assertion or a runtime error in the block when run alone), or does not end (more than
``SERIAL_LIMIT`` steps) is an ``atomicity`` violation: the paper assumes it cannot happen, and dropping the
path would answer "atomic" wrongly. It is the rule the three ``--atomicity`` modes share: a block must end
when its thread runs alone from its commit point (``reducible.py`` checks it on the left-mover part;
docs/atomicity.md, "Blocks that do not end").

**Under a reduction** (``optimistic``, the ``dwyer-*`` strategies): a step that changes a phase or the
shadow store, or stops a thread in a proved block, is never invisible (``quiet``); under ``transactions``
it is a non-mover of P#, and so is a lock operation outside every block (``reduce/phases.py``, "Over
commit-atomicity"): docs/reductions.md, "Reductions on the instrumented search", gives the argument.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from movers.analysis.mover import LEFT, NON, RIGHT_KINDS, classify_step
from movers.instrument.ghost import GhostSystem
from movers.ir.program import Program, Ref
from movers.semantics.interface import System
from movers.semantics.state import canonical
from movers.semantics.system import Outcome
from movers.semantics.view import view

PRE, POST = "pre", "post"
SERIAL_LIMIT = 10_000


def outermost_block(program: Program, frames: tuple) -> int | None:
    """The outermost atomic block a thread resting at ``frames`` is in, or None."""
    blocks = program.atomic_blocks
    for f in frames:
        b = f[0].nodes[f[1]].atomic_block
        if b >= 0:
            while blocks[b].outer >= 0:
                b = blocks[b].outer
            return b
    return None


def left_blocks(o: Outcome) -> list[int]:
    """The outermost atomic blocks a step left (``Effect.blocks``)."""
    return o.effect.blocks if o.effect is not None else []


def observable(state: tuple) -> tuple:
    """What [WRONG] compares: the globals and what they reach (canonical), and every thread's position."""
    g, heap, threads = state[0], state[1], state[2]
    shared = canonical((g, heap, ()))
    where = tuple(tuple((f[0], f[1]) for f in th) for th in threads)
    return shared[0], shared[1], where


def first_difference(program: Program, normal: tuple, shadow: tuple) -> str:
    """The first location where the stores differ, for users."""
    a, b = observable(normal), observable(shadow)
    for slot, name in enumerate(program.globals):
        if a[0][slot] != b[0][slot] or type(a[0][slot]) is not type(b[0][slot]):
            if type(a[0][slot]) is not Ref:
                va, vb = view(program, normal, 0, -1).get(name), view(program, shadow, 0, -1).get(name)
                return f"{name} is {va} in the interleaved run but {vb} in the serial one"
    na, nb = view(program, normal, 0, -1), view(program, shadow, 0, -1)
    for k in sorted(set(na) | set(nb)):
        if na.get(k) != nb.get(k):
            return f"{k} is {na.get(k, 'absent')} in the interleaved run but {nb.get(k, 'absent')} in the serial one"
    for t, (x, y) in enumerate(zip(a[2], b[2], strict=False)):
        if x != y:
            lx = x[-1][0].nodes[x[-1][1]].line if x else 0
            ly = y[-1][0].nodes[y[-1][1]].line if y else 0
            return (f"thread {t} is at {'line ' + str(lx) if x else 'its end'} in the interleaved run but at "
                    f"{'line ' + str(ly) if y else 'its end'} in the serial one")
    return "the heap reachable from the globals differs"


def rule(
    program: Program, p: Any, frames: tuple, node: Any, left: list[int], mover: str | None = None,
) -> tuple[bool, bool, Any, int | None]:
    """Which rule a step of a thread in phase ``p`` resting at ``frames`` takes (module docstring, "Phases
    as steps happen"): (a commit: ρ takes the step, a single step outside every block, the phase after it,
    the block). ``mover``: what kind of mover the step is (``mover.classify_step``), for the default
    commit point; without it, every step but a lock acquire counts as not a right mover."""
    if p is None:
        b = outermost_block(program, frames)
        p = None if b is None else (PRE, b)  # the block's first step enters it (Outside to PreCommit)
    if p is None:
        return True, True, None, None  # Outside to Outside: a step outside every block
    if p[0] == PRE:
        block = program.atomic_blocks[p[1]]
        not_right = mover in (NON, LEFT) if mover is not None else node.kind not in RIGHT_KINDS
        commit = bool(left) or node.commit or (not block.has_commit and not_right)
    else:
        commit = False
    if left:
        new_p = None  # a block entered in the same step has had no step of its own yet
    elif p[0] == PRE and commit:
        new_p = (POST, p[1])
    else:
        new_p = p
    return commit, False, new_p, p[1]


class CommitSystem(GhostSystem):
    """The instrumented semantics of section 4 over a transition system (``inner``); ghost: the phases and
    the shadow store."""

    def __init__(self, inner: System, classification: Any = None, proved: frozenset[int] = frozenset()) -> None:
        super().__init__(inner)
        self.cls = classification  # movers for the default commit point (``mover.classify_step``)
        if classification is not None:
            classification.lock_state_matters = True
        self.proved = proved
        if proved:
            self.enabled = self._enabled

    def _enabled(self, state: tuple, u: int) -> bool:
        """A thread in a proved block that can move runs alone ("Blocks proved by reduction"); of several
        (one got in while another waited), the lowest-numbered, so that some thread can always move."""
        inner = self.inner
        if not inner.enabled(state, u):
            return False
        proved = self.proved
        mine = self._alone(state, u)
        for t, p in enumerate(state[3]):
            if t != u and p is not None and p[1] in proved and (t < u or not mine) and inner.enabled(state, t):
                return False
        return True

    def _alone(self, state: tuple, t: int) -> bool:
        p = state[3][t]
        return p is not None and p[1] in self.proved

    def steps(self, state: tuple) -> list[Outcome]:
        out: list[Outcome] = []
        for t in range(len(state[2])):
            if state[2][t] and self.enabled(state, t):
                out.extend(self.execute(state, t))
        return out

    def ghost(self, threads: int) -> tuple:
        return (None,) * threads, None

    # -- steps ------------------------------------------------------------------------------------------------

    def execute(self, state: tuple, t: int, track: bool | None = None) -> list[Outcome]:
        sigma = self.program_part(state)
        outs = self.inner.execute(sigma, t, True)
        mover = self._mover(sigma, t, outs)
        out: list[Outcome] = []
        for o in outs:
            out.extend(self._instrument(state, t, o, mover))
        return out

    def quiet(self, state: tuple, t: int, outs: list[Outcome]) -> bool:
        """Does thread t's step (``outs``, every resolution) leave the instrumentation's shared part alone:
        no thread's phase changes (it neither enters nor leaves a block, nor commits), the shadow store is
        the same, and it does not stop a thread in a proved block (which would let the others move)? Only
        such a step may be invisible to a reduction of this system (docs/reductions.md, "Reductions on the
        instrumented search"): it acts on the normal store alone and cannot change when or what [WRONG]
        compares, so it commutes in the product wherever it commutes in the program."""
        phases, rho = state[3], state[4]
        for o in outs:
            s2 = o.state
            if s2 is None:
                if o.violation is not None and o.violation[0] == "atomicity":
                    return False  # a serial run that went wrong, or [WRONG]
            elif s2[4] is not rho or s2[3] != phases:
                return False
            elif self._alone(s2, t) and not self.inner.enabled(s2, t):
                return False
        return True

    def _mover(self, sigma: tuple, t: int, outs: list[Outcome]) -> str | None:
        if self.cls is None or not outs:
            return None
        return classify_step(self.cls, self.inner, sigma, t, outs[0].node, outs)

    def _instrument(self, state: tuple, t: int, o: Outcome, mover: str | None = None) -> list[Outcome]:
        if o.state is None:
            return [o]
        program = self.program
        phases, rho = state[3], state[4]
        sigma = self.program_part(state)
        node = o.node
        left = left_blocks(o)
        commit, single, new_p, b = rule(program, phases[t], sigma[2][t], node, left, mover)
        p = phases[t]
        # The choices of the block's steps (module docstring, "Choices inside a block").
        made: tuple = p[2] if p is not None and p[0] == PRE else ()
        pending: tuple | None = p[2] if p is not None and p[0] == POST else ()
        if node.chooses and not single:
            if p is not None and p[0] == POST:
                if pending:
                    if o.choices == pending[0][0]:
                        pending = pending[1:]
                    elif o.choices in pending[0][1]:
                        return []  # the serial run that made this choice is another state: it goes on there
                    else:
                        pending = None  # the runs took different paths: [WRONG] alone decides
                elif pending is not None:
                    pending = None
            else:
                made = (*made, o.choices)
        started = len(o.state[2]) - len(phases)
        shadow = sigma if rho is None else rho
        if not commit:
            results: list[tuple[Any, Any, tuple | None]] = [(shadow, None, ())]  # [PRE-COMMIT], [POST-COMMIT]
        elif single and rho is None:
            results = [(None, None, ())]  # ρ = σ takes the same step
        else:
            results = self._serial(shadow, t, o.choices if single else None, sigma, made)
        out: list[Outcome] = []
        for rho2, bad, rest in results:
            n = Outcome(None, o.choices, node, None, o.effect, t)
            if bad is not None:
                n.violation = ("atomicity", bad)
                out.append(n)
                continue
            q = new_p
            if q is not None:
                q = (PRE, q[1], made) if q[0] == PRE else (POST, q[1], rest if commit else pending)
            new_phases = phases[:t] + (q,) + phases[t + 1:]
            if started > 0:
                new_phases = new_phases + (None,) * started
            s2 = (o.state[0], o.state[1], o.state[2], new_phases, rho2)
            if all(q is None for q in new_phases) and rho2 is not None:
                if observable(o.state) != observable(rho2):
                    n.violation = ("atomicity", self._wrong(o.state, rho2))
                    out.append(n)
                    continue
                s2 = (o.state[0], o.state[1], o.state[2], new_phases, None)
            n.state = s2
            out.append(n)
        return out

    def _serial(
        self, rho: tuple, t: int, same: tuple[int, ...] | None, sigma: tuple, forced: tuple = (),
    ) -> list[tuple[Any, Any, tuple | None]]:
        """Thread t's serial run on the shadow store from ``rho`` ([COMMIT] then [SHADOW]): every way it can
        end, as (final ρ, None, the choices it made after ``forced``, or None where it could not make them),
        or (None, why it went wrong, ()).
        ``same``: the choices of a single step of a thread outside every block (it resolves them as on the
        normal store). ``forced``: the choices the block made on the normal store up to its commit point,
        which the serial run makes too; after them it makes every choice, each recorded with the options it
        had (module docstring, "Choices inside a block")."""
        program, inner = self.program, self.inner
        out: list[tuple[Any, Any, tuple | None]] = []
        # A depth-first search of the run's branches: a state met again on the same branch is a run that never
        # ends; met again on another branch (two choices that lead to the same state), it is explored once.
        stack: list[tuple[bool, tuple[Any, int, int, tuple | None]]] = [(False, (rho, 0, 0, ()))]
        on_branch: set[tuple] = set()
        done: set[tuple] = set()
        while stack:
            leaving, item = stack.pop()
            r, n, i, chosen = item
            key = (r, i, chosen)
            if leaving:
                on_branch.discard(key)
                done.add(key)
                continue
            if key in on_branch:
                out.append((None, f"the serial run of thread {t}'s atomic block does not end when it runs alone on "
                                  "the shadow store (it comes back to a state it was in)", ()))
                continue
            if key in done:
                continue
            where = f"thread {t}'s atomic block" if n or same is None else f"thread {t}'s step"
            if t >= len(r[2]):
                out.append((None, f"{where} cannot run on the shadow store (the serial run): thread {t} was started "
                                  "by an atomic block that has not committed there yet", ()))
                continue
            th = r[2][t]
            if not th:
                out.append((None, f"{where} cannot run on the shadow store (the serial run): thread {t} has "
                                  "already ended there", ()))
                continue
            if not inner.enabled(r, t):
                node = inner.next_node(r, t)
                assert node is not None  # the thread has not ended (above)
                if same is not None and n == 0:
                    # A step outside every block that the interleaved run took: the stores have diverged.
                    out.append((None, f"thread {t}'s step at line {node.line} ('{node.source}') cannot be taken on "
                                      "the shadow store, where the committed blocks ran serially: the interleaved "
                                      "run is not serialisable (" + first_difference(program, sigma, r) + ")", ()))
                    continue
                out.append((None, f"the serial run of {where} blocks on the shadow store at line {node.line} "
                                  f"('{node.source}'): it cannot run alone, so it is not atomic", ()))
                continue
            if n >= SERIAL_LIMIT:
                out.append((None, f"the serial run of {where} does not end ({SERIAL_LIMIT:,} steps) when it runs "
                                  "alone on the shadow store", ()))
                continue
            steps = [inner.execute_choice(r, t, same, True)] if same is not None else inner.execute(r, t, True)
            branches: list[tuple[Outcome, int, tuple | None]] = [(s, i, chosen) for s in steps]
            node = inner.next_node(r, t)
            assert node is not None
            if same is None and node.chooses and chosen is not None:
                if i < len(forced):
                    branches = [(s, i + 1, chosen) for s in steps if s.choices == forced[i]]
                    if not branches:  # the runs took different paths: every choice, and [WRONG] decides
                        branches = [(s, i, None) for s in steps]
                else:
                    options = tuple(s.choices for s in steps)
                    branches = [(s, i, (*chosen, (s.choices, options))) for s in steps]
            on_branch.add(key)
            stack.append((True, item))
            for s, i2, chosen2 in branches:
                if s.violation is not None:
                    out.append((None, f"the serial run of {where} on the shadow store fails at line "
                                      f"{s.node.line}: {s.violation[1]}", ()))
                    continue
                if s.state is None:
                    continue  # assume(): no such serial run
                if left_blocks(s) or outermost_block(program, th) is None:
                    # The block is over, or it was a step outside every block.
                    out.append((s.state, None, chosen2 if i2 == len(forced) else None))
                else:
                    stack.append((False, (s.state, n + 1, i2, chosen2)))
        return out

    def serial_order(self, steps: list[tuple[int, tuple[int, ...]]]) -> list[str]:
        """The blocks the shadow store ran, in order, since the stores last agreed, along a counterexample
        (replayed; where a serial run made choices after its commit point, the first state whose normal
        store took that step is followed)."""
        state = self.initial()
        order: list[str] = []
        for t, choices in steps:
            nxt = next((o for o in self.execute(state, t) if o.choices == choices), None)
            if nxt is None:
                break
            mover = self._mover(self.program_part(state), t, self.inner.execute(self.program_part(state), t, True))
            commit, single, _, b = rule(self.program, state[3][t], state[2][t], nxt.node, left_blocks(nxt), mover)
            if commit and not single and b is not None:
                order.append(f"thread {t}'s block at line {self.program.atomic_blocks[b].line}")
            if nxt.state is None:
                break
            if nxt.state[4] is None:
                order = []
            state = nxt.state
        return order

    def _wrong(self, normal: tuple, shadow: tuple) -> str:
        return ("no thread is inside an atomic block, and the interleaved run differs from the serial run of "
                "the committed blocks on the shadow store: " + first_difference(self.program, normal, shadow))


if TYPE_CHECKING:
    _: type[System] = CommitSystem  # mypy checks that it is one


__all__ = [
    "CommitSystem", "PRE", "POST", "SERIAL_LIMIT", "left_blocks", "observable", "outermost_block",
    "rule",
]
