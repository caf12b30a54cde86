"""The transition system of a compiled program: initial state, enabledness, executing steps.

This is the only place that runs compiled code. Reductions ask it questions (what is thread t's next step,
is it enabled, what does it access, which objects can a thread reach, who owns a lock) and ask it to execute
steps; they never run code themselves. It knows nothing of reductions.

One call of ``execute(state, t)`` runs thread ``t``'s next step once for every resolution of the step's
nondeterministic choices (``choose``, which waiter a ``notify`` wakes) and returns an ``Outcome`` per
resolution: the successor state, the step's Effect, and the violation it raised, if any.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from movers.ir.exceptions import Raised, assertion_message, catchable, describe, thread_label, unwind
from movers.ir.machine import AssertionFailed, Ctx, ModelError, Pruned, show
from movers.ir.program import LOCK_CLASSES, MON, SAME, THREAD, Code, Node, Program, Ref, call_line, unbox
from movers.semantics.state import State, canonical, canonical_order, globals_cover_memo, reachable

# The operations one step may run (glue, or a `with indivisible():` block) before the check stops it as a
# loop that does not end (e.g. `while True: pass`); a finite loop longer than this is stopped too, so the
# message names the bound. No option changes it.
GLUE_LIMIT = 100_000
# At access granularity a loop of local work that can go round for ever ends a step at its head
# (lang/granularity.py): glue outside `with indivisible():` always ends there, and only a long finite loop
# (`for i in range(10**6)` over locals) is long. Its bound is much higher, so that such work is not cut.
LOCAL_GLUE_LIMIT = 20_000_000
# Glue a fast step may run (lang/codegen.py) before it hands the step to the closures, which apply GLUE_LIMIT.
FAST_GLUE_LIMIT = 1_000
# Whether steps run their generated fast functions where they can (tests switch it off to compare).
FAST_PATH = True
INIT_LIMIT = 10_000_000


@dataclass(slots=True)
class Effect:
    """What one executed step did: locations read and written (a global's slot, or (ref, index) in the
    pre-state's heap numbering), locks acquired and released, objects allocated, threads started."""

    reads: list[Any] = field(default_factory=list)
    writes: list[Any] = field(default_factory=list)
    acquired: list[Ref] = field(default_factory=list)
    released: list[Ref] = field(default_factory=list)
    allocated: list[Ref] = field(default_factory=list)
    started: list[int] = field(default_factory=list)
    # How heap canonicalisation renumbered objects after the step: object k of the successor is object
    # renumbered[k] of the pre-state (indices past the pre-state's heap are objects the step allocated);
    # None when no object moved. Lets a reduction compare the same object on both sides of a step.
    renumbered: list[int] | None = None
    # The outermost ``with atomic():`` blocks the thread left during the step, in order (commit-atomicity
    # tracks a thread's phase as steps happen: one step may leave a block and enter the next).
    blocks: list[int] = field(default_factory=list)
    # The names of the threads started (``Thread(name=...)``), by thread id: reports name threads by them.
    names: dict[int, str] = field(default_factory=dict)
    # Whether the heap's canonical walk ran after the step: then the successor's heap depends on what every
    # thread's locals reach, not only on the stepping thread (a reduction's per-thread memo must not keep it).
    walked: bool = False


@dataclass(slots=True)
class Outcome:
    """One resolution of a step: successor (None if the step failed or an assume pruned it).

    It is also a one-step move (``steps``, ``state``, ``violation``), so that the full search needs no
    second object per transition."""

    state: tuple[Any, ...] | None  # a state of the system that stepped (an instrumentation's has ghost parts)
    choices: tuple[int, ...]
    node: Node
    violation: tuple[str, str] | None = None  # (kind, message)
    effect: Effect | None = None
    thread: int = -1
    # For a step that failed: the node it failed at (under access granularity a step runs on through glue, and
    # the assertion that failed may be several statements after the node the step started at).
    failed_at: Node | None = None
    failed_in: tuple[Any, ...] | None = None  # and the state there (the values a failed assert read)
    size = 1  # steps in this move (class constants, not fields)
    keep = True  # its state is to be stored if new (a reduction's move may say otherwise)

    @property
    def steps(self) -> tuple[tuple[int, tuple[int, ...]], ...]:
        return ((self.thread, self.choices),)


def _current_node(ctx: Ctx) -> Node | None:
    """The node a step was running when it failed (its program counter is that node's until it finishes)."""
    code = ctx.code
    if code is None or not 0 <= ctx.pc < len(code.nodes):
        return None
    return code.nodes[ctx.pc]


def _current_state(ctx: Ctx, threads: tuple, t: int) -> State | None:
    """The state a step had reached when it failed (not canonical: for reports only)."""
    if ctx.code is None:
        return None
    nt = list(threads)
    nt[t] = (*ctx.frames, (ctx.code, ctx.pc, *ctx.loc))
    h = ctx.heap
    return (ctx.g, h if type(h) is tuple else tuple(h), tuple(nt))


class InitError(Exception):
    """The module-level initialisation failed (kind, message)."""

    def __init__(self, kind: str, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.line = line


class PredicateError(ModelError):
    """A ``@predicate`` failed at a state (a runtime error, an uncaught exception) or returned something that
    is not a bool: the state has no letter, so no LTL verdict is sound there (``TransitionSystem.atoms``)."""

    def __init__(self, predicate: str, message: str) -> None:
        super().__init__(f"predicate {predicate}() {message}")
        self.predicate = predicate


# CPython's names for the checker's value representations, as users know those values.
_TYPE_NAMES = (("'NoneType'", "None"), ("'Ref'", "object"), ("'Func'", "function"), ("'Bool'", "bool"))


def runtime_message(e: BaseException) -> str:
    if isinstance(e, ZeroDivisionError):
        return "division by zero"
    if isinstance(e, RecursionError):
        return "recursion too deep"
    if isinstance(e, ModelError):
        return str(e)
    if isinstance(e, ValueError) and "int_max_str_digits" in str(e):
        return "an integer too large to print"
    msg = str(e)
    for internal, shown in _TYPE_NAMES:
        msg = msg.replace(internal, shown)
    return msg


RUNTIME_ERRORS = (ModelError, TypeError, ZeroDivisionError, ValueError, OverflowError, RecursionError)
# What a node may raise that a model's handler may catch (``exceptions.catchable`` decides).
RAISING = (Raised, AssertionFailed, *RUNTIME_ERRORS)


class TransitionSystem:
    """The program's states and steps. ``track`` asks for Effects on every step (reductions, disciplines).
    A ``semantics.interface.System``: the one the instrumentations wrap."""

    # No ghost components to see through, no instrumentation's shared part (``System``).
    program_state = None
    quiet = None

    def __init__(self, program: Program, track: bool = False) -> None:
        self.program = program
        self.track = track
        self._statement_steps = program.granularity == "statement"
        self._initial: State | None = None
        # The names given with ``Thread(name=...)`` to the threads module-level code started.
        self.initial_names: dict[int, str] = {}
        self._last_arities: Any = ()
        # Scratch contexts for side-effect-free evaluation (guards, predicates): no allocation per question.
        self._gctx = Ctx((), (), (), -1)
        # globals_cover of the last pre-state asked about: every thread's step from one state shares it.
        self._cover: tuple[Any, Any, bool] = ((), (), True)
        self.fast_path = FAST_PATH
        for code in program.codes():
            code.fast_dispatch = tuple(
                n.fast_succ if n.fast_succ is not None else (n.fast_step if n.guard is None and n.fast_step else _parts)
                for n in code.nodes)
            code.fast_local = tuple(n.fast_local and f is not _parts for n, f in zip(code.nodes, code.fast_dispatch,
                                                                                       strict=True))

    # -- initial state ----------------------------------------------------------------------------------------

    def initial(self) -> State:
        """Run the module-level code atomically; the threads it started are the initial threads.

        As in CPython, the module's code is the main thread, and it interleaves with the threads it starts.
        Before its first ``start()`` it is the only thread, so it runs atomically (it cannot interleave with
        anything); a ``start()`` only adds a thread, and commutes with the steps of the threads already started
        (Lipton's reduction), so the module's code also runs on atomically through its ``start()`` calls and
        local work, and through every step that cannot conflict with a thread's. It stops at its first step after
        a ``start()`` that may (a join, an acquire, an access to what a thread writes...: ``Program.main_stops``,
        lang/compiler.main_stops): from there on the rest of it is
        a thread of its own, named ``MainThread``, with the next free thread id (``tid()`` in it returns that
        id; before, in the module's atomic prefix, ``tid()`` is None). A model whose module code ends with its
        ``start()`` calls keeps its states and thread ids."""
        if self._initial is None:
            p = self.program
            frame = (p.init, p.init.entry, *p.init.new_frame_locals([]))
            ctx = Ctx((None,) * len(p.globals), [], (), -1, frames=(frame,))
            try:
                _run_to_completion(ctx, INIT_LIMIT, "module initialisation", p.main_stops)
            except AssertionFailed as e:
                raise InitError("assertion", str(e), _line(ctx)) from None
            except Raised as e:
                message = assertion_message(ctx.heap, e.ref)
                if message is not None:
                    raise InitError("assertion", message, _line(ctx)) from None
                raise InitError("runtime-error", f"uncaught exception: {describe(ctx.heap, e.ref)}",
                                _line(ctx)) from None
            except RUNTIME_ERRORS as e:
                raise InitError("runtime-error", runtime_message(e), _line(ctx)) from None
            except Pruned:
                raise InitError("runtime-error", "assume() failed during module initialisation") from None
            if ctx.made:
                raise InitError("runtime-error", "choose() during module initialisation is not supported: "
                                "choose in a thread instead", _line(ctx))
            threads = list(ctx.new_threads or ())
            self.initial_names = thread_names(ctx.heap, range(len(threads)))
            # The main thread's id, or None when the module's code ends before it would become a thread:
            # what CPython's default thread names count from (lang/threadinfo.py).
            main_tid = len(threads) if ctx.code is not None else None
            for code in p.codes():
                code.main_tid = main_tid  # type: ignore[attr-defined]
            heap = list(ctx.heap)
            if ctx.code is not None:  # stopped at a costly step after a start(): the main thread from here
                self.initial_names[len(threads)] = "MainThread"
                threads.append((*ctx.frames, (ctx.code, ctx.pc, *ctx.loc)))
                heap = _hand_over(heap, ctx.tid, len(threads) - 1)
            self._initial = canonical((ctx.g, tuple(heap), tuple(threads)))
        return self._initial

    # -- queries ----------------------------------------------------------------------------------------------

    @staticmethod
    def thread_count(state: State) -> int:
        return len(state[2])

    @staticmethod
    def alive(state: State, t: int) -> bool:
        return bool(state[2][t])

    @staticmethod
    def next_node(state: State, t: int) -> Node | None:
        """The node thread ``t`` will execute next, or None if it has terminated."""
        th = state[2][t]
        if not th:
            return None
        top = th[-1]
        return top[0].nodes[top[1]]

    def _ctx(self, state: State, t: int, track: bool = False) -> Ctx:
        ctx = Ctx(state[0], state[1], state[2], t, track)
        ctx.load_thread(state[2][t])
        return ctx

    def enabled(self, state: State, t: int) -> bool:
        th = state[2][t]
        if not th:
            return False
        top = th[-1]
        node = top[0].nodes[top[1]]
        guard = node.guard
        if guard is None:
            return True
        fg = node.fast_guard
        if fg is not None and self.fast_path:
            try:
                return fg(state[0], state[1], state[2], top, t)  # type: ignore[no-any-return]
            except Exception:  # noqa: BLE001, S110  (not its shape: the closure decides)
                pass
        c = self._gctx
        c.g, c.heap, c.threads = state[0], state[1], state[2]
        c.tid = t
        c.loc = top[2:]  # type: ignore[assignment]  # guards only read locals
        try:
            return bool(guard(c))
        except RUNTIME_ERRORS:
            return True  # executing it reports the error

    def guard_reads(self, state: State, t: int) -> list[Any]:
        """The locations thread t's guard reads in ``state`` (whether it holds or not): a guard is an access
        too, even while it blocks the thread."""
        th = state[2][t]
        if not th:
            return []
        top = th[-1]
        guard = top[0].nodes[top[1]].guard
        if guard is None:
            return []
        ctx = Ctx(state[0], state[1], state[2], t, True, th)
        try:
            guard(ctx)
        except RUNTIME_ERRORS:
            pass
        return ctx.reads

    def ended(self, state: State) -> bool:
        """Whether the program has ended at ``state``: as in CPython, when every thread but daemon threads has
        ended (the interpreter exits then, and the daemon threads with it)."""
        threads = state[2]
        if not any(threads):
            return True
        slot = self.program.daemon_slot
        if slot is None:
            return False
        daemons = unbox(state[0][slot]) or ()
        return all(not th or t in daemons for t, th in enumerate(threads))

    def deadlock(self, state: State) -> str | None:
        """If no thread can move and some have not terminated, say who waits on what (daemon threads left
        blocked once every other thread has ended are no deadlock: the program has ended, ``ended``)."""
        threads = state[2]
        if self.ended(state):
            return None
        waiting = []
        for t, th in enumerate(threads):
            if not th:
                continue
            if self.enabled(state, t):
                return None
            node = self.next_node(state, t)
            assert node is not None
            what = node.blocked_on(self._ctx(state, t)) if node.blocked_on else f"blocked at '{node.source}'"
            waiting.append(f"thread {t} {what} (line {call_line(th, node)})")
        return "; ".join(waiting)

    def waiting_on(self, state: State, t: int) -> str:
        """What blocked thread ``t`` waits for, as the deadlock message says it."""
        node = self.next_node(state, t)
        assert node is not None
        return node.blocked_on(self._ctx(state, t)) if node.blocked_on else f"blocked at '{node.source}'"

    def lock_owner(self, state: State, r: Ref) -> int | None:
        from movers.ir.sync import owner

        return owner(Ctx(state[0], state[1], state[2], -1), r)

    def reachable_from_thread(self, state: State, t: int) -> set[int]:
        """Heap objects thread ``t`` can reach: from the globals and from its own frames."""
        roots: list[Any] = list(state[0])
        for frame in state[2][t]:
            roots.extend(frame[2:])
        return reachable(state, roots)

    # -- executing steps --------------------------------------------------------------------------------------

    def execute(self, state: State, t: int, track: bool | None = None) -> list[Outcome]:
        """Execute thread ``t``'s next step under every resolution of its choices."""
        tr = self.track if track is None else track
        out = [self._run(state, t, (), tr)]
        first = out[0]
        arities = self._last_arities
        if not arities:
            return out
        # Enumerate the other resolutions of the choice points, depth first, in increasing order.
        pending = [first.choices[:p] + (k,) for p in range(len(arities) - 1, -1, -1)
                   for k in range(arities[p] - 1, 0, -1)]
        while pending:
            prefix = pending.pop()
            o = self._run(state, t, prefix, tr)
            out.append(o)
            ar = self._last_arities
            for p in range(len(ar) - 1, len(prefix) - 1, -1):
                for k in range(ar[p] - 1, 0, -1):
                    pending.append(o.choices[:p] + (k,))
        return out

    def successors(self, state: State) -> tuple[list[State], list[int | None]] | None:
        """The successor states of ``state`` (every enabled thread's next step, in thread order, every
        resolution, as ``steps`` gives them) and, for each, the thread that moved (the only thread whose stack
        differs from the state's; None where the step changed others too: it started a thread, or the heap was
        walked and renumbered references in other frames). The plain full search's hot path: no Outcome per
        transition, one call per thread (``Code.fast_dispatch``: the guard and the whole step in one generated
        function). A thread whose step has no generated form, or leaves its shape, runs on the closures, once;
        None (``steps`` then says what happens) only where such a step fails or an assume prunes it, so that
        violations and transitions are ``steps``' own. A self-loop (a busy wait whose test holds: ``SAME``) is
        ``state`` itself, the very object: the plain search knows it stored without looking it up."""
        if not self.fast_path or self.track:
            return None
        out: list[State] = []
        moved: list[int | None] = []
        g, heap, threads = state[0], state[1], state[2]
        give_up, same = _GIVE_UP, SAME
        t = -1
        for th in threads:
            t += 1
            if not th:
                continue
            top = th[-1]
            try:
                done = top[0].fast_dispatch[top[1]](g, heap, threads, t, th, top)
            except Exception:  # noqa: BLE001  (not its whole shape: the node's parts try)
                done = give_up
            if done is not None:
                if done is same:
                    done = state
                elif done is give_up:
                    if not self.given_up_successors(state, t, out, moved):
                        return None
                    continue
                out.append(done)
                moved.append(t)
        return out, moved

    @property
    def bare_system(self) -> TransitionSystem | None:
        """Itself where ``successors`` gives bare successors (``System.bare_system``)."""
        return self if self.fast_path and not self.track else None

    def given_up_successors(self, state: State, t: int, out: list[State], moved: list[int | None]) -> bool:
        """Thread t's successors where its one-call form (``Code.fast_dispatch``) gave up, appended to ``out`` and
        ``moved`` as ``successors`` gives them: the node's generated guard and step one at a time, else the
        closures; False where a resolution fails or an assume prunes it (``steps`` then says what happens)."""
        g, heap, threads = state[0], state[1], state[2]
        th = threads[t]
        top = th[-1]
        done = self._thread_successor(g, heap, threads, t, th, top)
        if done is None:
            return True
        if done is _GIVE_UP or done is _GUARD_HOLDS:
            return self._closure_successors(state, t, top, done is _GUARD_HOLDS, out, moved)
        out.append(done)
        moved.append(t)
        return True

    def _thread_successor(self, g: tuple, heap: tuple, threads: tuple, t: int, th: tuple, top: tuple) -> Any:
        """Thread t's successor from the node's generated guard and step taken one at a time: the state, None
        when the guard is false, ``_GIVE_UP`` when the guard has no generated form or leaves its shape,
        ``_GUARD_HOLDS`` when the guard holds but the step has none or leaves its shape."""
        node = top[0].nodes[top[1]]
        if node.guard is not None:
            fg = node.fast_guard
            if fg is None:
                return _GIVE_UP
            try:
                ok = fg(g, heap, threads, top, t)
            except Exception:  # noqa: BLE001  (not its shape: ``steps`` decides)
                return _GIVE_UP
            if ok is None:
                return _GIVE_UP
            if not ok:
                return None
        if node.fast is None:
            return _GUARD_HOLDS
        if top[0].fast_dispatch[top[1]] is _parts:
            done = _fast_successor(node, g, heap, threads, t, th, top, self._globals_cover)
        else:  # the whole step already gave up (``successors`` ran it): straight to the general driver
            done = _run_fast(node, g, heap, threads, t, th, top, None, self._globals_cover)
        return _GUARD_HOLDS if done is None else done

    def _closure_successors(self, state: State, t: int, top: tuple, enabled: bool, out: list[State],
                            moved: list[int | None]) -> bool:
        """Thread t's step on the closures, as ``steps`` takes it (its guard on the closures unless ``enabled``
        says it holds; every resolution of its choices), appended to ``out`` and ``moved``; False where some
        resolution fails or is pruned (only ``steps``' Outcomes say so)."""
        node = top[0].nodes[top[1]]
        if not enabled and node.guard is not None:
            c = self._gctx
            c.g, c.heap, c.threads = state[0], state[1], state[2]
            c.tid = t
            c.loc = top[2:]  # type: ignore[assignment]  # guards only read locals
            try:
                ok = node.guard(c)
            except RUNTIME_ERRORS:
                ok = True  # executing the step reports the error
            if not ok:
                return True
        o = self._run_closures(state, t, (), False)
        outcomes = [o] if not self._last_arities else [o, *self.execute(state, t)[1:]]
        threads = state[2]
        for o in outcomes:
            s = o.state
            if s is None:
                return False
            out.append(s)
            moved.append(t if _only_moved(threads, s[2], t) else None)
        return True

    def steps(self, state: State) -> list[Outcome]:
        """Every enabled thread's next step from ``state``, every resolution: the successors of the full
        interleaving semantics in one pass (enabledness inlined: this is the full search's hot path)."""
        out: list[Outcome] = []
        g, heap, threads = state[0], state[1], state[2]
        track = self.track
        # Untracked, the fast path is tried below and the closures run only where it gives up; tracked (the
        # disciplines of a full search), ``_run`` tries the tracked fast path first.
        run = self._run if track else self._run_closures
        fast = self.fast_path and not track
        fast_guards = self.fast_path
        cover = self._globals_cover
        c = self._gctx
        c.g, c.heap, c.threads = g, heap, threads
        for t in range(len(threads)):
            th = threads[t]
            if not th:
                continue
            top = th[-1]
            node = top[0].nodes[top[1]]
            guard = node.guard
            if guard is not None:
                ok = None
                if fast_guards and node.fast_guard is not None:
                    try:
                        ok = node.fast_guard(g, heap, threads, top, t)
                    except Exception:  # noqa: BLE001, S110  (not its shape: the closure decides)
                        pass
                if ok is None:
                    c.tid = t
                    c.loc = top[2:]  # type: ignore[assignment]  # guards only read locals
                    try:
                        ok = guard(c)
                    except RUNTIME_ERRORS:
                        ok = True  # executing the step reports the error
                if not ok:
                    continue
            if fast and node.fast is not None:
                done = _fast_successor(node, g, heap, threads, t, th, top, cover)
                if done is not None:
                    out.append(Outcome(done, (), node, None, None, t))
                    continue
            out.append(run(state, t, (), track))
            if self._last_arities:
                out.extend(self.execute(state, t)[1:])
        return out

    def execute_choice(self, state: State, t: int, choices: tuple[int, ...], track: bool = True) -> Outcome:
        """Replay one resolution (for counterexample traces)."""
        return self._run(state, t, choices, track)

    def _run(self, state: State, t: int, choices: tuple[int, ...], track: bool) -> Outcome:
        # Index rather than unpack: instrumentations may append ghost components to the state.
        g, heap, threads = state[0], state[1], state[2]
        th = threads[t]
        top = th[-1]
        node = top[0].nodes[top[1]]
        if node.fast is not None and not choices and self.fast_path:
            if not track:
                done = _fast_successor(node, g, heap, threads, t, th, top, self._globals_cover)
                if done is not None:
                    self._last_arities = ()
                    return Outcome(done, (), node, None, None, t)
            elif node.fast_tracked is not None:
                eff = Effect()
                done = _run_fast(node, g, heap, threads, t, th, top, eff, self._globals_cover)
                if done is not None:
                    self._last_arities = ()
                    return Outcome(done, (), node, None, eff, t)
        return self._run_closures(state, t, choices, track)

    def _run_closures(self, state: State, t: int, choices: tuple[int, ...], track: bool) -> Outcome:
        g, heap, threads = state[0], state[1], state[2]
        th = threads[t]
        top = th[-1]
        node = top[0].nodes[top[1]]
        ctx = Ctx(g, heap, threads, t, track, th, choices)
        violation = None
        failed_at: Node | None = None
        failed_in: State | None = None
        new_state: State | None = None
        order: list[int] | None = None
        try:
            try:
                node.run(ctx)
            except RAISING as e:
                if not self._catch(ctx, e, top[0], top[1]):
                    raise
            code = ctx.code
            # Most steps end at the next costly node at once; the loop below is for glue and indivisible.
            if code is not None and (not code.nodes[ctx.pc].costly or ctx.atomic):
                glue = 0
                limit = GLUE_LIMIT if ctx.atomic or self._statement_steps else LOCAL_GLUE_LIMIT
                while ctx.code is not None:
                    cur, pc = ctx.code, ctx.pc
                    nxt = cur.nodes[pc]
                    if nxt.costly:
                        if not ctx.atomic:
                            break
                        if nxt.guard is not None and not nxt.guard(ctx):
                            raise ModelError(f"'{nxt.source}' would block inside 'with indivisible():'")
                    try:
                        nxt.run(ctx)
                    except RAISING as e:
                        if not self._catch(ctx, e, cur, pc):
                            raise
                    glue += 1
                    if glue > limit:
                        raise ModelError(_unfinished(node, bool(ctx.atomic), limit))
        except Raised as e:
            failed_at = _current_node(ctx)
            message = assertion_message(ctx.heap, e.ref)
            if message is not None:
                violation = ("assertion", message)
                failed_in = _current_state(ctx, threads, t)
            else:
                tids = range(len(ctx.threads) + len(ctx.new_threads or ()))
                names = self.initial_names | thread_names(ctx.heap, tids)
                where = ""
                if failed_at is not None and failed_at.line:
                    # In the library (lang/library): the line of the model's call, and the library's method.
                    line = call_line(ctx.frames, failed_at)
                    where = f" (line {line}, in {failed_at.library})" if failed_at.library else f" (line {line})"
                violation = ("runtime-error",
                             f"thread {thread_label(ctx, names)} died: {describe(ctx.heap, e.ref)}{where}")
        except AssertionFailed as e:
            violation = ("assertion", str(e))
            failed_at = _current_node(ctx)
            failed_in = _current_state(ctx, threads, t)
        except Pruned:
            pass
        except RUNTIME_ERRORS as e:
            violation = ("runtime-error", runtime_message(e))
            failed_at = _current_node(ctx)
        else:
            nt = list(threads)
            nt[t] = (*ctx.frames, (ctx.code, ctx.pc, *ctx.loc)) if ctx.code is not None else ()
            if ctx.new_threads:
                nt += ctx.new_threads
            new_threads = tuple(nt)
            h = ctx.heap
            new_state = (ctx.g, h if type(h) is tuple else tuple(h), new_threads)
            walked = ctx.dirty and (ctx.reshaped or not self._globals_cover(g, heap))
            if walked:
                new_state, order = canonical_order(new_state)
        made = ctx.made
        if made is None:
            self._last_arities = ()
            choices = ()
        else:
            self._last_arities = ctx.arities
            choices = tuple(made)
        eff = None
        if track:
            eff = Effect(ctx.reads, ctx.writes, ctx.acquired, ctx.released, ctx.allocated, ctx.started,
                         order, ctx.blocks, thread_names(ctx.heap, ctx.started) if ctx.started else {},
                         new_state is not None and walked)
        return Outcome(new_state, choices, node, violation, eff, t, failed_at, failed_in)

    @staticmethod
    def _catch(ctx: Ctx, e: BaseException, code: Code, pc: int) -> bool:
        """Whether the exception ``e``, raised by node ``pc`` of ``code``, is caught in the thread: ``ctx`` then
        resumes at the handler (ir/exceptions.py)."""
        if not code.handlers and not ctx.frames:
            return False
        if ctx.code is not code:
            return False  # raised after the node pushed or popped a frame: only the checker's limits do
        return catchable(e) and unwind(ctx, e, code, pc)

    def _globals_cover(self, g: tuple, heap: tuple) -> bool:
        c = self._cover
        if c[0] is g and c[1] is heap:
            return c[2]
        covered = globals_cover_memo(g, heap)
        self._cover = (g, heap, covered)
        return covered

    # -- evaluating model functions atomically (invariants) ---------------------------------------------------

    def call(self, state: State, code: Code, args: list[Any] | None = None) -> Any:
        """Run a model function to completion on ``state`` without changing it; returns its value."""
        ctx = Ctx(state[0], state[1], state[2], -1)
        a = list(args or [])
        ctx.load_thread(((code, code.entry, *code.new_frame_locals(a)),))
        _run_to_completion(ctx, GLUE_LIMIT, code.name)
        return ctx.retval

    def holds(self, state: State, code: Code) -> bool:
        """Python's truth of what the model function ``code`` (an ``@invariant``: no parameters, pure) returns on
        ``state``: its generated code where that answers with a value that is not an object, else run to
        completion and judged as ``if`` judges it (``Program.truth``: an empty list is false). Raises one of
        ``RUNTIME_ERRORS`` where it fails, an exception it does not catch included."""
        fast = code.fast_value
        if fast is not None and self.fast_path:
            try:  # like a guard: no frame, no Ctx; an object's truth, or a failure, is the closures' to give
                v = fast(state[0], state[1])
            except Exception:  # noqa: BLE001, S110
                pass
            else:
                if type(v) is not Ref:
                    return bool(v)
        ctx = Ctx(state[0], state[1], state[2], -1)
        ctx.load_thread(((code, code.entry, *code.new_frame_locals([])),))
        try:
            _run_to_completion(ctx, GLUE_LIMIT, code.name)
        except Raised as e:
            raise ModelError(f"uncaught exception: {describe(ctx.heap, e.ref)}") from None
        v = ctx.retval
        truth = self.program.truth
        return truth(ctx, v) if type(v) is Ref and truth is not None else bool(v)

    def atoms(self, state: State) -> frozenset[str]:
        """The names of the ``@predicate`` functions true at ``state``: the letter an ``ltl(...)`` property
        reads there. Each is evaluated as an invariant is (``instrument/properties.Checked.check_state``): its
        generated code when it has some and answers, else run to completion on the state. Only the liveness
        check asks, so no other search pays for it. Raises ``PredicateError`` for a predicate that fails or
        returns what is not a bool (Python's truth of an arbitrary value would be a guess at the atom)."""
        true = [name for name, code in self.program.predicates.items() if self._holds(state, name, code)]
        return frozenset(true)

    def _holds(self, state: State, name: str, code: Code) -> bool:
        fast = code.fast_value
        if fast is not None and self.fast_path:
            try:  # like a guard: no frame, no Ctx; any other answer is the closures' to give
                v = fast(state[0], state[1])
                if type(v) is bool:
                    return v
            except Exception:  # noqa: BLE001, S110  (the closures evaluate it again and report)
                pass
        ctx = Ctx(state[0], state[1], state[2], -1)
        ctx.load_thread(((code, code.entry, *code.new_frame_locals([])),))
        try:
            _run_to_completion(ctx, GLUE_LIMIT, code.name)
        except RUNTIME_ERRORS as e:
            raise PredicateError(name, f"fails: {runtime_message(e)}") from None
        except Raised as e:
            raise PredicateError(name, f"fails: uncaught exception: {describe(ctx.heap, e.ref)}") from None
        v = unbox(ctx.retval)
        if type(v) is not bool:
            raise PredicateError(name, f"returns {show(ctx.retval)}, not a bool: an atom of a formula is true "
                                       f"or false (write a comparison, as 'return x > 0')")
        return v

    def check_state(self, state: State) -> tuple[str, str] | None:
        """A violation of a state property (none here; instrumentations add invariants)."""
        return None

    # The search skips the call per state when it sees this mark (wrappers that forward the method keep it).
    check_state.checks_nothing = True  # type: ignore[attr-defined]

    @property
    def replay_system(self) -> TransitionSystem:
        """Counterexamples are replayed on the program's own states: these."""
        return self

    def reset(self) -> None:
        """Nothing is remembered between passes: every answer is a function of the state."""

    def evaluate_predicate(self, state: State, pred: Any, t: int, obj: Any = None) -> bool:
        c = self._gctx
        c.g, c.heap, c.threads = state[0], state[1], state[2]
        c.tid = -1
        return bool(pred(c, t, obj))


_GIVE_UP = object()  # ``successors``: this thread's step is not on the generated code
GIVE_UP = _GIVE_UP  # what a one-call form that gives up returns (``Code.fast_dispatch``), for the plain search
_GUARD_HOLDS = object()  # ``successors``: nor is it, but its guard holds


def _only_moved(before: tuple, after: tuple, t: int) -> bool:
    """Whether thread t's stack is the only one that differs (a step of t that starts no thread and walks no
    heap): the plain search then numbers only that part anew."""
    if len(before) != len(after):
        return False
    for u in range(len(before)):
        if u != t and before[u] is not after[u]:
            return False
    return True


def _parts(*_: Any) -> object:
    """``Code.fast_dispatch`` of a node with no one-call form: its guard and step are tried one at a time."""
    return _GIVE_UP


def _fast_successor(node: Node, g: tuple, heap: tuple, threads: tuple, t: int, th: tuple, top: tuple,
                    cover: Any) -> State | None:
    """The successor of thread t's untracked step on the generated code: the whole-step function when the
    node has one, else (or where it gives up) the general driver; None: run the closures."""
    step = node.fast_step
    if step is not None:
        try:
            done = step(g, heap, threads, t, th, top)
        except Exception:  # noqa: BLE001, S110  (not its whole shape: the general driver tries)
            pass
        else:
            # A self-loop: the state it ran from (rebuilt: an instrumentation's state has more parts).
            return (g, heap, threads) if done is SAME else done  # type: ignore[no-any-return]
    return _run_fast(node, g, heap, threads, t, th, top, None, cover)


def _run_fast(node: Node, g: tuple, heap: tuple, threads: tuple, t: int, th: tuple, top: tuple,
              eff: Effect | None = None, cover: Any = None) -> State | None:
    """Thread ``t``'s step from ``node`` on its generated fast functions (``lang/codegen.py``): the successor,
    or None when the step left their shapes (the caller then runs it on the closures, from the same state).
    No Ctx; the Effect, when ``eff`` asks for it, recorded by the tracked variants. A fast function never
    moves a reference into the globals or the heap, so the successor needs no canonical walk, except where the
    step may pass, store or drop references in frames (a call, a return, a value returned into a local: every
    step that pushes or pops a frame is taken as one; ``Ctx.push``, ``Ctx.ret`` and ``store_local`` mark the
    closures' dirty) or where the thread ends holding some: ``cover(g, heap)`` then says whether the globals
    reach every object (then no walk is needed, as in ``_run``).

    A call's fragment ends with ``pc = (callee, arguments, return pc)`` (``lang/codegen_calls.py``): the frame
    is pushed here, as ``Ctx.push`` does; a ``return e`` appends its value to the frame's locals before
    ``pc = -1``, and the caller's continuation takes it from the end of its own (``Ctx.retval``). The entry
    and the exit of ``with indivisible():`` end with ``pc = (1, next)`` and ``pc = (-1, next)``
    (``Ctx.atomic``): in between, the step goes on through costly nodes."""
    g0, heap0 = g, heap
    code = top[0]
    loc = list(top[2:])
    try:
        if eff is None:
            g, heap, pc = node.fast(g, heap, loc, t)  # type: ignore[misc]
        else:
            g, heap, pc = node.fast_tracked(g, heap, loc, t, eff)  # type: ignore[misc]
        g, heap, frames, code, loc, pc, dirty = drive_frames(g, heap, threads, t, th[:-1], code, loc, pc, eff)
    except Exception:  # noqa: BLE001  (whatever went wrong, the closures redo the step and report it)
        return None
    if pc >= 0:
        mine = (*frames, (code, pc, *loc))
    else:
        # The thread's last frame returned. Dropping a reference may change the canonical heap, unless the
        # globals reach every object (the canonical order walks from the globals first: semantics/state.py).
        if len(loc) > len(code.locals):
            loc.pop()
        for v in loc:
            if type(v) is Ref or type(v) is tuple:
                dirty = True
                break
        mine = ()
    if dirty and (cover is None or not cover(g0, heap0)):
        return None
    return (g, heap, threads[:t] + (mine,) + threads[t + 1:])


class LeftGeneratedCode(Exception):
    """``drive_frames``: the step leaves the generated functions' shapes; its caller hands it to the closures."""


def drive_frames(g: tuple, heap: tuple, threads: tuple, t: int, frames: tuple, code: Code, loc: list[Any],
                 pc: Any, eff: Effect | None = None) -> tuple[tuple, tuple, tuple, Code, list[Any], Any, bool]:
    """The rest of thread t's step once a generated fragment has run and left ``pc`` (``_run_fast``'s
    docstring says what a pc may be): calls push frames (``Ctx.push``), returns pop them into the caller's
    continuation, indivisible blocks run on through costly nodes whose generated guards hold, each node on its
    generated function (the tracked one where ``eff`` asks for the Effect). ``frames`` are the frames under
    ``code``'s. Returns the globals, heap, frames, code, locals and pc where the step ends (pc < 0: the thread's
    last frame returned), and whether a frame was pushed or popped (references may have moved between frames:
    the caller decides whether the heap needs a canonical walk). Raises ``LeftGeneratedCode`` where the step
    leaves the generated shapes. ``_run_fast`` and the whole steps' hand-over (``codegen_calls._resume``)
    both go on here."""
    atomic = glue = 0
    dirty = False
    while True:
        if type(pc) is tuple and len(pc) == 2:
            atomic += pc[0]
            pc = pc[1]
        elif type(pc) is tuple:
            callee, args, ret = pc
            if len(frames) > 200:
                raise LeftGeneratedCode  # the closures' "recursion too deep"
            frames = (*frames, (code, ret, *loc))
            code, loc, pc = callee, callee.new_frame_locals(args), callee.entry
            dirty = True
        elif pc < 0:
            if not frames:
                break
            rv = loc.pop() if len(loc) > len(code.locals) else None
            dirty = True
            caller = frames[-1]
            frames = frames[:-1]
            code, pc, loc = caller[0], caller[1], [*caller[2:], rv]
            if code.nodes[pc].costly:
                raise LeftGeneratedCode  # the value would be left in the frame: only a continuation takes it
        nxt = code.nodes[pc]
        if nxt.costly:
            if not atomic:
                break
            # Inside ``with indivisible():`` a step runs on through costly nodes whose guards hold (where one
            # does not, the closures report that it would block). A tracked step's Effect holds the reads of
            # those guards: the closures'.
            if nxt.guard is not None:
                fg = nxt.fast_guard
                if eff is not None or fg is None or not fg(g, heap, threads, (code, pc, *loc), t):
                    raise LeftGeneratedCode
        if glue > FAST_GLUE_LIMIT:
            raise LeftGeneratedCode
        if eff is None:
            f = nxt.fast
            if f is None:
                raise LeftGeneratedCode
            g, heap, pc = f(g, heap, loc, t)
        else:
            f = nxt.fast_tracked
            if f is None:
                raise LeftGeneratedCode
            g, heap, pc = f(g, heap, loc, t, eff)
        glue += 1
    return g, heap, frames, code, loc, pc, dirty


def _unfinished(node: Node, indivisible: bool, limit: int = GLUE_LIMIT) -> str:
    """The message for a step stopped at ``GLUE_LIMIT`` operations: a finite loop may hit it too."""
    what = ("the 'with indivisible():' block" if indivisible else
            "code that touches nothing shared (one step, as long as it does not)")
    return (f"{what} did not finish within {limit:,} operations, movers' bound on one step (no option "
            "changes it): a loop that does not end (e.g. 'while True: pass'), or one too long for one step "
            "(move part of the work out of it" + (" or out of the block" if indivisible else "") + ")")


def _run_to_completion(ctx: Ctx, limit: int, what: str, stops: frozenset[int] = frozenset()) -> None:
    """Run ``ctx``'s code to its end; stop instead, once a thread has been started, at a node of ``stops``
    (the module's code: there it becomes the main thread, ``TransitionSystem.initial``), but not inside a
    ``with indivisible():`` block, which is one step wherever it is, nor between a return and the caller's
    continuation, which takes the returned value (``Ctx.retval``, not part of a state)."""
    n = 0
    returned = False
    while ctx.code is not None:
        node = ctx.code.nodes[ctx.pc]
        # Not between a return and the caller's continuation, which takes the value from ``ctx.retval``: a
        # step's, not the state's; nor inside ``with indivisible():``, one step wherever it is.
        if stops and ctx.new_threads and id(node) in stops and not returned and not ctx.atomic:
            return
        if node.guard is not None and not node.guard(ctx):
            hint = ""
            if what == "module initialisation":
                hint = "; no thread has been started yet, so it would block for ever"
            raise ModelError(f"'{node.source}' blocks during {what}{hint}")
        code, pc, depth = ctx.code, ctx.pc, len(ctx.frames)
        try:
            node.run(ctx)
        except RAISING as e:
            if ctx.code is not code or not catchable(e) or not unwind(ctx, e, code, pc):
                raise
        returned = ctx.code is not None and len(ctx.frames) < depth
        n += 1
        if n > limit:
            raise ModelError(f"{what} did not finish within {limit:,} operations (movers' bound on it, which no "
                             "option changes): a loop that does not end, or one too long for movers")


def thread_names(heap: Any, tids: Any) -> dict[int, str]:
    """The ``Thread(name=...)`` names of threads ``tids``, from the Thread objects of ``heap`` (a heap not yet
    canonicalised: a thread object nothing refers to any more is still there)."""
    want = set(tids)
    out: dict[int, str] = {}
    for o in heap:
        if o[0].is_thread and o[2] in want and o[0] is THREAD and getattr(o[3], "thread_name", None) is not None:
            out[o[2]] = o[3].thread_name
    return out


def _hand_over(heap: list[Any], before: int, main: int) -> list[Any]:
    """The heap once the module's code is the thread ``main``: the locks and monitors its atomic prefix (thread
    id ``before``) holds are held by the main thread (``with lock: Thread(...).start(); ...`` releases it)."""
    out = list(heap)
    for i, o in enumerate(out):
        if o[0] in LOCK_CLASSES and o[2] == before:
            out[i] = (*o[:2], main, *o[3:])
        mon = o[MON] if len(o) > MON else None
        if mon and mon[0] == before:
            o = out[i]
            out[i] = (*o[:MON], (main, *mon[1:]), *o[MON + 1:])
    return out


def _line(ctx: Ctx) -> int:
    if ctx.code is None:
        return 0
    # In the library (lang/library): the line of the model's call.
    return call_line(ctx.frames, ctx.code.nodes[ctx.pc]) if ctx.pc < len(ctx.code.nodes) else 0


__all__ = ["TransitionSystem", "Outcome", "Effect", "InitError", "runtime_message", "show"]
