"""Atomicity by reduction: every ``with atomic():`` block must be *reducible*, the pattern R* N? L* of
Flanagan & Qadeer's transactions (papers/004, sections 4-5; Lipton's reduction): right movers (lock
acquires), at most one non-mover, then left movers (lock releases). Steps that are both movers (accesses to
data the thread has exclusive access to, ``notify``) fit anywhere. Movers come from the exclusive access
predicates, declared or inferred, exactly as for ``--reduction transactions`` (``phases.classify_step``).

The instrumented state is ``(globals, heap, threads, stages)``: ``stages[t]`` is None while thread t is
outside every block, else ``(block, stage, line, what)`` with stage ``R`` (before the block's non-mover or
first left mover) or ``L`` (after it; ``line`` and ``what`` say which step turned it). A right mover or a
second non-mover in stage L breaks the pattern: the block is not proved atomic.

This is sound (a reducible block is atomic: its steps can be moved together) but incomplete: a block that
is atomic for a subtler reason (a commit point that is not a mover boundary) is not proved;
``--atomicity commit`` decides it. Phases follow the same conventions as ``commit.py``: a block's first
step enters it, the step's Effect says which blocks it left, callees run in the caller's block and nested
blocks belong to the outermost.
"""

from __future__ import annotations

from typing import Any

from movers.instrument.commit import left_blocks, outermost_block
from movers.instrument.ghost import GhostSystem
from movers.instrument.phases import LEFT, NON, RIGHT, classify_step
from movers.reduce.classify import Classification
from movers.semantics.system import Outcome

R, L = "R", "L"
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

    def __init__(self, inner: Any, classification: Classification, report: bool = True) -> None:
        super().__init__(inner)
        self.cls = classification
        classification.lock_state_matters = True
        self.report = report
        self.broken: dict[int, str] = {}

    def reset(self) -> None:
        self.broken.clear()

    def ghost(self, threads: int) -> tuple:
        return ((None,) * threads,)

    @staticmethod
    def program_state(state: tuple) -> tuple:
        return state[:3]

    def execute(self, state: tuple, t: int, track: bool | None = None) -> list[Outcome]:
        inner, program = self.inner, self.program
        sigma = state[:3]
        node = inner.next_node(sigma, t)
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
            if bad is not None:
                if self.report:
                    o.violation = ("atomicity", bad)
                    o.state = None
                    continue
                self.broken.setdefault(st[0], bad)  # type: ignore[index]
            new = stages[:t] + (s_t,) + stages[t + 1:]
            started = len(o.state[2]) - len(stages)
            if started > 0:
                new = new + (None,) * started
            o.state = (o.state[0], o.state[1], o.state[2], new)
        return outs


__all__ = ["ReducibleSystem", "INCOMPLETE", "describe"]
