"""Atomicity by reduction: every ``with atomic():`` block must be *reducible*, the pattern R* N? L* of
Flanagan & Qadeer's transactions (papers/004, sections 4-5; Lipton's reduction): right movers (lock
acquires), at most one non-mover, then left movers (lock releases). Steps that are both movers (accesses to
data the thread has exclusive access to, ``notify``) fit anywhere. Movers come from the exclusive access
predicates, declared or inferred, exactly as for ``--reduction transactions`` (``mover.classify_step``).

The instrumented state is ``(globals, heap, threads, stages)``: ``stages[t]`` is None while thread t is
outside every block, else ``(block, stage, line, what)`` with stage ``R`` (before the block's non-mover or
first left mover) or ``L`` (after it; ``line`` and ``what`` say which step turned it). A right mover or a
second non-mover in stage L breaks the pattern: the block is not proved atomic.

**A committed block must end when its thread runs alone** (docs/atomicity.md, "Blocks that do not end"):
from every state where a thread is in stage L, its steps alone must leave the block on every path, without
coming back to a state or blocking. That is Flanagan & Qadeer's condition C (papers/004, section 4: "the
left-mover part of each transaction terminates"), without which Lipton's reduction proves nothing: the
other threads' steps cannot be moved past an L part that never ends. It is also what ``--atomicity
commit`` asks of the serial run that starts at the same step (the default commit point is the block's
first non-mover or left mover), so the two modes agree on such blocks. The run alone is a real execution,
so an error on it is the search's to find; ``assume()`` cuts it as everywhere; and so is a step that
breaks the pattern (a right mover or a second non-mover: the block is not proved, and its run alone is no
longer its serial run, which a busy-waiting acquire shows: alone on the normal store it spins while
another thread holds the lock, serially it takes the lock at once).

Checked once per entry into stage L, from the state after the step that turned it: until the pattern
breaks, the thread's steps there touch only data it has exclusive access to (and release locks), which no
other thread's step can change, so its run alone from that state covers every way it goes on in any
interleaving; where another thread's step does matter, the thread's next step is a non-mover and the
search reports the broken pattern. For the same reason the run alone depends on the thread's stack, the
globals and the heap, not on where the other threads are: runs that end are remembered by those
(``_ends``), so a part of a block is run once whatever the other threads are doing.

This is sound (a reducible block is atomic: its steps can be moved together) but incomplete: a block that
is atomic for a subtler reason (a commit point that is not a mover boundary) is not proved;
``--atomicity commit`` decides it. Phases follow the same conventions as ``commit.py``: a block's first
step enters it, the step's Effect says which blocks it left, callees run in the caller's block and nested
blocks belong to the outermost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from movers.analysis.classify import Classification
from movers.analysis.mover import LEFT, LEFT_KINDS, NON, NON_KINDS, RIGHT, RIGHT_KINDS, classify_step
from movers.instrument.commit import SERIAL_LIMIT, left_blocks, outermost_block
from movers.instrument.ghost import GhostSystem
from movers.semantics.interface import System
from movers.semantics.system import Outcome

R, L = "R", "L"
CACHE_LIMIT = 200_000
INCOMPLETE = ("--atomicity reduction is sound but incomplete: the block may still be atomic; "
              "--atomicity commit decides it")


def describe(node: Any, mover: str) -> str:
    """A step, for a message: "the release of the lock at line 12"."""
    what = {"acquire": "the acquire", "reacquire": "the re-acquire after wait", "release": "the release",
            "wait": "the wait"}.get(node.kind)
    if what is not None:
        return f"{what} at line {node.line} ('{node.source}')"
    return f"the {'non-mover' if mover == NON else 'step'} at line {node.line} ('{node.source}')"


class ReducibleSystem(GhostSystem):
    """The transition system with each thread's stage in its current atomic block. With ``report=True`` a
    broken pattern is a violation of kind ``atomicity``; otherwise it is recorded in ``broken`` (block ->
    why) and the search goes on (``--atomicity auto``'s first pass)."""

    # No ``quiet`` (``System``): a reduction (optimistic) sees its steps as the program's.
    quiet = None

    def __init__(self, inner: System, classification: Classification, report: bool = True) -> None:
        super().__init__(inner)
        self.cls = classification
        classification.lock_state_matters = True
        self.report = report
        self.broken: dict[int, str] = {}
        # (thread, its stack, globals, heap) whose run alone leaves its block (module docstring)
        self._ends: set[tuple[int, tuple, tuple, tuple]] = set()

    def reset(self) -> None:
        self.broken.clear()
        self._ends.clear()

    def ghost(self, threads: int) -> tuple:
        return ((None,) * threads,)

    @staticmethod
    def program_state(state: tuple) -> tuple:
        return state[:3]

    def execute(self, state: tuple, t: int, track: bool | None = None) -> list[Outcome]:
        inner, program = self.inner, self.program
        sigma = state[:3]
        node = inner.next_node(sigma, t)
        assert node is not None  # only a thread that has not ended steps
        outs = inner.execute(sigma, t, True)
        mover = classify_step(self.cls, inner, sigma, t, node, outs)
        stages = state[3]
        st = stages[t]
        if st is None:
            b = outermost_block(program, sigma[2][t])
            st = None if b is None else (b, R, 0, "")
        new_st, bad = st, None
        if st is not None:
            b, stage, line, what = st
            if stage == R:
                if mover in (NON, LEFT):
                    new_st = (b, L, node.line, describe(node, mover))
            elif stage == L and mover in (RIGHT, NON):
                block = program.atomic_blocks[b]
                bad = (f"the atomic block at line {block.line} is not reducible (R* N? L*): "
                       f"{describe(node, mover)} comes after {what}; {INCOMPLETE}")
        for o in outs:
            if o.state is None:
                continue
            s_t = None if left_blocks(o) else new_st
            why = bad
            if (why is None and s_t is not None and s_t[1] == L and st[1] == R
                    and (self.report or s_t[0] not in self.broken)):
                why = self._unending(s_t, o.state, t)
            if why is not None:
                if self.report:
                    o.violation = ("atomicity", why)
                    o.state = None
                    continue
                self.broken.setdefault((s_t or st)[0], why)  # type: ignore[index]
            new = stages[:t] + (s_t,) + stages[t + 1:]
            started = len(o.state[2]) - len(stages)
            if started > 0:
                new = new + (None,) * started
            o.state = (o.state[0], o.state[1], o.state[2], new)
        return outs

    def _unending(self, st: tuple, sigma: tuple, t: int) -> str | None:
        """Why thread t's block (its stage ``st``, in L) does not end when the thread runs alone from
        ``sigma``, or None when it does (module docstring, "A committed block must end")."""
        stuck = self.ends_alone(sigma, t)
        if stuck is None:
            return None
        block = self.program.atomic_blocks[st[0]]
        why = (f"the atomic block at line {block.line} does not end when its thread runs alone after {st[3]}: "
               f"{stuck}; a block must end when it runs alone from its commit point (docs/atomicity.md, "
               "\"Blocks that do not end\")")
        if block.has_commit:
            why += ("; --atomicity reduction does not read commit() markers: --atomicity commit checks the block "
                    "from its marked commit point")
        return why

    def _breaks_blocked(self, sigma: tuple, t: int) -> bool:
        """Would thread t's blocked step break the pattern once another thread lets it go on (a right mover,
        or a non-mover: what its kind says, and the data its guard reads)? Then the search meets it there,
        or the thread stays blocked, which the search reports as a deadlock when nobody else can move."""
        node = self.inner.next_node(sigma, t)
        assert node is not None  # a blocked thread has not ended
        if node.kind in RIGHT_KINDS or node.kind in NON_KINDS:
            return True
        if self.cls.lock_state_observed and node.kind in LEFT_KINDS:
            return True
        nonmover, bad = self.cls.check_access(self.inner, sigma, t, self.inner.guard_reads(sigma, t), [])
        return nonmover or bad is not None

    def ends_alone(self, sigma: tuple, t: int) -> str | None:
        """Does thread t, inside a block at ``sigma`` (the program state), leave it on every path of its
        steps alone? None if so, else how it does not: it comes back to a state, it blocks, or it runs more
        than ``SERIAL_LIMIT`` steps (``commit.CommitSystem._serial`` asks the same of the serial run)."""
        ends = self._ends
        if (t, sigma[2][t], sigma[0], sigma[1]) in ends:
            return None
        inner, program = self.inner, self.program
        # Depth-first over the run's branches: a state met again on the branch is a run that never ends.
        stack: list[tuple[bool, tuple, int]] = [(False, sigma, 0)]
        on_branch: set[tuple] = set()
        seen: set[tuple] = set()
        while stack:
            leaving, r, n = stack.pop()
            if leaving:
                on_branch.discard(r)
                continue
            if r in on_branch:
                return "it comes back to a state it was in, so it never ends"
            if r in seen or (t, r[2][t], r[0], r[1]) in ends:
                continue
            seen.add(r)
            if not inner.enabled(r, t):
                if self._breaks_blocked(r, t):
                    continue
                node = inner.next_node(r, t)
                assert node is not None
                return f"it blocks at line {node.line} ('{node.source}'), where only another thread could let it go on"
            if n >= SERIAL_LIMIT:
                return f"it runs more than {SERIAL_LIMIT:,} steps"
            steps = inner.execute(r, t, True)
            if classify_step(self.cls, inner, r, t, inner.next_node(r, t), steps) in (RIGHT, NON):
                continue  # the pattern breaks here: the search meets this step and says so
            on_branch.add(r)
            stack.append((True, r, n))
            for s in steps:
                if s.state is None or left_blocks(s) or not s.state[2][t]:
                    continue  # an error (the search's to report), assume(), or the block is over
                if outermost_block(program, s.state[2][t]) is None:
                    continue
                stack.append((False, s.state[:3], n + 1))
        if len(ends) + len(seen) > CACHE_LIMIT:
            ends.clear()
        ends.update((t, r[2][t], r[0], r[1]) for r in seen)
        return None


if TYPE_CHECKING:
    _: type[System] = ReducibleSystem  # mypy checks that it is one


__all__ = ["ReducibleSystem", "INCOMPLETE", "describe"]
