"""Static footprints of steps and of threads' futures, for the traditional partial-order baseline.

A footprint over-approximates what code may touch, as far as the compiler can tell without knowing which
objects references point to: global names read and written, field names read and written (of any
object), whether some list element is read or written, and which locks it operates on (by the global that
holds the lock, or ``"?"`` when the lock is reached through a reference). Two footprints *conflict* when
one may write what the other reads or writes, or both operate on a common (or unknown) lock: steps with
conflicting footprints may not commute. This is the imprecision Stoller & Cohen point out (section 1,
section 7): statically, ``x[i]`` in two threads conflicts even when the threads use different elements or
hold the protecting lock.

A thread's *future* footprint is the union of everything reachable in its code from its current position
(the control-flow successors recorded by the compiler), through the calls it may make and the threads it
may start, and in the code its callers return to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from movers.analysis.classify import predicate_support
from movers.analysis.escape import step_nodes
from movers.ir.program import Code, Node, Program


@dataclass(frozen=True)
class Footprint:
    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    fields_read: frozenset[str] = frozenset()
    fields_written: frozenset[str] = frozenset()
    elements_read: bool = False
    elements_written: bool = False
    locks: frozenset[str] = frozenset()

    def __or__(self, o: Footprint) -> Footprint:
        return Footprint(
            self.reads | o.reads,
            self.writes | o.writes,
            self.fields_read | o.fields_read,
            self.fields_written | o.fields_written,
            self.elements_read or o.elements_read,
            self.elements_written or o.elements_written,
            self.locks | o.locks,
        )

    def conflicts(self, o: Footprint) -> bool:
        if self.writes & (o.reads | o.writes) or o.writes & self.reads:
            return True
        if self.fields_written & (o.fields_read | o.fields_written) or o.fields_written & self.fields_read:
            return True
        if (self.elements_written and (o.elements_read or o.elements_written)) or (
            o.elements_written and self.elements_read
        ):
            return True
        if self.locks and o.locks:
            return bool(self.locks & o.locks) or "?" in self.locks or "?" in o.locks
        return False


EMPTY = Footprint()
LOCK_KINDS = {"acquire", "release", "wait", "reacquire", "notify", "try_acquire"}


def node_footprint(n: Node) -> Footprint:
    locks: frozenset[str] = frozenset()
    fr, fw = n.fields_read, n.fields_written
    if n.kind in LOCK_KINDS:
        # wait/reacquire involve a condition *and* its lock, which may be named differently: unknown.
        name = n.lock_name if n.kind in ("acquire", "release", "notify", "try_acquire") else None
        locks = frozenset({name or "?"})
    elif n.kind == "indivisible":
        locks = frozenset({"?"})
    elif n.kind == "start":
        fw = fw | {"_tid"}  # start sets the thread object's id, which join reads
    elif n.kind == "join":
        fr = fr | {"_tid"}
    return Footprint(n.reads, n.writes, fr, fw, n.elements_read, n.elements_written, locks)


class Footprints:
    """Footprints of a program's steps and futures, memoised per code position."""

    def __init__(self, program: Program, extra: dict[str, Footprint] | None = None) -> None:
        self.program = program
        self.by_name = program.callee_index()
        # Any thread may start any thread body: functions passed as targets and run() methods; we take
        # every function and every run method, which over-approximates.
        self.thread_bodies = list(program.functions.values()) + [
            c.methods["run"] for c in program.classes.values() if "run" in c.methods
        ]
        self.extra = extra or {}
        self._node: dict[tuple[Code, int], Footprint] = {}
        self._whole: dict[Code, Footprint] = {}
        self._future: dict[tuple[Code, int], Footprint] = {}
        self._spawn: Footprint | None = None
        self._entry: dict[Code, Footprint] = {}
        self._steps: dict[tuple[tuple[Code, int], ...], Footprint] = {}
        self._futures: dict[tuple[tuple[Code, int], ...], Footprint] = {}

    def node(self, code: Code, pc: int) -> Footprint:
        k = (code, pc)
        fp = self._node.get(k)
        if fp is None:
            n = code.nodes[pc]
            fp = node_footprint(n)
            for name in n.reads | n.writes:
                if name in self.extra:
                    fp = fp | self.extra[name]
            for name in n.fields_read | n.fields_written:
                if "." + name in self.extra:
                    fp = fp | self.extra["." + name]
            self._node[k] = fp
        return fp

    def _reach(self, code: Code, pc: int) -> list[int]:
        seen = {pc}
        work = [pc]
        while work:
            p = work.pop()
            for q in code.nodes[p].succ:
                if q < len(code.nodes) and q not in seen:
                    seen.add(q)
                    work.append(q)
        return sorted(seen)

    def whole(self, code: Code) -> Footprint:
        """Everything a call of ``code`` may touch, its callees and spawned threads included."""
        fp = self._whole.get(code)
        if fp is None:
            fp = EMPTY
            spawns = False
            for c in self._closure([code]):
                for pc in range(len(c.nodes)):
                    fp = fp | self.node(c, pc)
                    spawns = spawns or c.nodes[pc].kind == "start"
            if spawns:
                fp = fp | self.spawned()
            self._whole[code] = fp
        return fp

    def _closure(self, roots: list[Code]) -> list[Code]:
        return self.program.reachable_codes(roots)

    def spawned(self) -> Footprint:
        """Everything a thread that some ``start`` may create can touch."""
        if self._spawn is None:
            fp = EMPTY
            for c in self._closure(self.thread_bodies):
                for pc in range(len(c.nodes)):
                    fp = fp | self.node(c, pc)
            self._spawn = fp
        return self._spawn

    def calls_glue(self, n: Node) -> Footprint:
        """What the glue at the entries of the functions node ``n`` calls may touch in the same step: under
        access granularity a callee's first statements may be local work that runs on into its first access."""
        if not n.callee_names:
            return EMPTY
        fp = EMPTY
        for name in n.callee_names:
            for callee in self.by_name.get(name, ()):
                fp = fp | self.entry_glue(callee)
        return fp

    def entry_glue(self, code: Code) -> Footprint:
        """The footprint of ``code``'s free nodes reachable from its entry without passing a costly one (and
        of the glue they call, transitively)."""
        fp = self._entry.get(code)
        if fp is not None:
            return fp
        self._entry[code] = EMPTY  # a recursive call adds nothing the walk does not already add
        fp = EMPTY
        seen = {code.entry}
        work = [code.entry]
        while work:
            p = work.pop()
            n = code.nodes[p]
            if n.costly:
                continue
            fp = fp | self.node(code, p) | self.calls_glue(n)
            for q in n.succ:
                if q < len(code.nodes) and q not in seen:
                    seen.add(q)
                    work.append(q)
        self._entry[code] = fp
        return fp

    def future_at(self, code: Code, pc: int) -> Footprint:
        k = (code, pc)
        fp = self._future.get(k)
        if fp is None:
            fp = EMPTY
            for p in self._reach(code, pc):
                n = code.nodes[p]
                fp = fp | self.node(code, p)
                for name in n.callee_names:
                    for callee in self.by_name.get(name, ()):
                        fp = fp | self.whole(callee)
                if n.kind == "start":
                    fp = fp | self.spawned()
            self._future[k] = fp
        return fp

    def future(self, thread: tuple) -> Footprint:
        """What a thread (a tuple of frames) may still touch. A function of the frames' positions alone:
        remembered."""
        key = tuple((f[0], f[1]) for f in thread)
        fp = self._futures.get(key)
        if fp is None:
            if len(self._futures) > 100_000:
                self._futures.clear()
            fp = EMPTY
            for code, pc in key:
                fp = fp | self.future_at(code, pc)
            self._futures[key] = fp
        return fp

    def step(self, thread: tuple) -> Footprint:
        """What the thread's next step may touch: its node, the free glue after it, and, when the glue
        returns, the caller's continuation. A function of the frames' positions alone: remembered."""
        key = tuple((f[0], f[1]) for f in thread)
        fp = self._steps.get(key)
        if fp is None:
            if len(self._steps) > 100_000:
                self._steps.clear()
            fp = self._steps[key] = self._step(thread)
        return fp

    def _step(self, thread: tuple) -> Footprint:
        top = thread[-1]
        if top[0].nodes[top[1]].kind in ("indivisible", "atomic-step"):
            return self.future_at(top[0], top[1])  # the whole block, calls included, is one step
        fp = EMPTY
        for code, p in step_nodes(thread):
            fp = fp | self.node(code, p) | self.calls_glue(code.nodes[p])
        return fp


def declared_support(program: Program) -> dict[str, Footprint]:
    """Extra footprint for steps that access declared locations: what their predicates read, so that a
    step whose discipline check depends on another thread's step is never reordered past it."""
    names, fields = predicate_support(program)
    support = Footprint(reads=frozenset(names), fields_read=frozenset(fields), locks=frozenset(names))
    extra: dict[str, Any] = {}
    for d in program.exclusives:
        t = d.target
        if t[0] == "field":
            extra["." + t[2]] = support
        else:
            extra[t[1]] = support
    return extra
