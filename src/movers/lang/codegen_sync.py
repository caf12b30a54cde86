"""Generated code for monitors, conditions and events: the fast back end's synchronisation emitters.

``lang/codegen.py`` compiles the steps that dominate a search to Python source (read its module docstring:
the fragments, the ``_n``/``_t``/``_s``/``_x`` functions, ``Fallback``). This module adds the emitters for the
operations of ``ir/sync.py`` that a monitor program runs at every step, each written from the closure it
stands for, statement for statement, in the same order of heap writes and ``Effect`` records:

- ``with lock:`` on a Lock, an RLock or a Condition (its lock): the entry, its guard and the exit
  (``sync.acquire``, ``sync.can_acquire``, ``sync.release``), for any reference ``codegen.reference`` reads;
- ``@synchronized`` methods and ``with synchronized(obj):``: entering (``sync.enter``, its guard
  ``sync.can_enter``) and leaving (``sync.exit_``) the object's intrinsic monitor, the heap object's slot
  ``MON``: ``None`` when free and nobody waits, else ``(owner, count, waiters)``;
- ``wait(obj)`` and ``c.wait()`` on a Condition: the first step (``sync.wait``: release, join the wait set)
  and the second (``sync.reacquire``, its guard ``sync.can_reacquire``); the check of ``c.wait_for(pred)``;
  ``e.wait()`` on an Event whose flag is set (one step, its guard the flag), and ``e.set()`` as a statement;
- ``wait_until(cond)``: its guard and its step;
- ``with indivisible():``: its entry and exit tell the driver (``semantics/system._run_fast``) to run the
  block's statements in the same step, costly or not, as ``Ctx.atomic`` tells the closures' loop;
- the exit of ``with atomic():`` (a jump; where a tracked step may record leaving the outermost block, only
  the untracked variant);
- ``notify(obj)``, ``notify_all(obj)`` and a Condition's ``notify()``, ``notify_all()`` (``sync.notify``)
  when no thread waits, and ``notify_all`` whatever the waiters; ``notify`` with waiters chooses one of
  them (a choice point): the closures' business.

As everywhere on the fast path, a step that leaves its common case (an object that is not the class the
statement expects, a monitor the thread does not hold, a Barrier, whose waiters are a tuple in a field, or a
guarded node inside an indivisible block in a tracked step, whose guard's reads the closures record) raises
``Fallback`` and runs on the closures, which report errors. The generated text names only the helpers bound in
``HELPERS`` (``codegen.HELPERS`` gets them when this module is imported, as the compiler does before it
compiles a model), slot and node numbers.
"""

from __future__ import annotations

import ast

from movers.ir.program import BARRIER, CONDITION, EVENT, LOCK, MON, RLOCK
from movers.lang import codegen
from movers.lang.codegen import CompiledFunction, Fragment, FragmentMaker, GuardSource, Target

# The classes the generated text compares with, bound by these names in every generated namespace.
codegen.HELPERS.update({"CONDITION": CONDITION, "EVENT": EVENT, "BARRIER": BARRIER, "RLOCK": RLOCK})
assert MON == 1 and codegen.HELPERS["LOCK"] is LOCK  # the texts below index the monitor slot as 1

# The other names the generated text uses: its temporaries and Python's own (tests/test_codegen.py checks it).
NAMES = frozenset({"_m", "_k", "_n", "_p", "_q", "_ws", "elif", "sorted"})


def _track(line: str) -> str:
    return line + codegen.TRACKED


def _put(r: str, o: str) -> str:
    """Replace object ``r`` by the tuple text ``o`` (``Ctx.put_object``)."""
    return f"_v = [*heap]; _v[{r}.i] = {o}; heap = tuple(_v)"


def _receiver(fc: CompiledFunction, e: ast.expr | int, src: codegen._Source) -> str | None:
    """The text of the reference the statement's object expression ``e`` holds, or of the one in local slot
    ``e`` (the method's ``self``, a block's hidden slot)."""
    if isinstance(e, int):
        src.add(f"_r = loc[{e}]")
        src.add("if type(_r) is not Ref: _fail()")
        return "_r"
    return codegen.reference(fc, e, src)


# -- with lock: on a Lock, an RLock or a Condition --------------------------------------------------------------


def _lock_free(heap: tuple, o: tuple, t: int) -> bool:
    """``sync.can_acquire`` past a plain Lock: a Condition's lock, an RLock (free, or the thread's own); other
    objects (semaphores) are the closures'."""
    if o[0] is CONDITION:
        o = heap[o[2].i]
    if o[0] is LOCK:
        return o[2] is None
    if o[0] is RLOCK:
        return o[2] is None or o[2] == t
    raise codegen.Fallback


codegen.HELPERS["_lock_free"] = _lock_free


def lock_enter(fc: CompiledFunction, e: ast.expr, slot: int, nxt: Target) -> FragmentMaker | None:
    """``with lock:`` entry (``sync.acquire``, after its guard) on a Lock (first, as the closure tests it), an
    RLock or a Condition (its lock); the hidden ``slot`` keeps the object for the exit."""
    src = codegen._Source()
    r = codegen.reference(fc, e, src)
    if r is None:
        return None
    lines = [*src.lines, f"_o = heap[{r}.i]",
             "if _o[0] is LOCK:",
             "    if _o[2] is not None: _fail()",
             f"    loc[{slot}] = {r}",
             "    " + _put(r, "(LOCK, _o[1], t)"),
             _track(f"    eff.acquired.append({r})"),
             "else:",
             f"    _q = {r}",
             "    if _o[0] is CONDITION: _q = _o[2]; _o = heap[_q.i]",
             "    if _o[0] is LOCK and _o[2] is None: _n = (LOCK, _o[1], t)",
             "    elif _o[0] is RLOCK and (_o[2] is None or _o[2] == t): _n = (RLOCK, _o[1], t, _o[3] + 1)",
             "    else: _fail()",
             f"    loc[{slot}] = {r}",
             "    " + _put("_q", "_n"),
             _track("    eff.acquired.append(_q)")]
    return lambda: Fragment([*lines, f"pc = {nxt.pc}"], nxt.pc)


def lock_guard(fc: CompiledFunction, e: ast.expr) -> GuardSource | None:
    """May ``with lock:`` take the lock now (``sync.can_acquire``)?"""
    src = codegen._Source()
    r = codegen.reference(fc, e, src)
    if r is None:
        return None
    return codegen._guard_text([*src.lines, f"_o = heap[{r}.i]",
                                "return _o[2] is None if _o[0] is LOCK else _lock_free(heap, _o, t)"])


def lock_exit(slot: int, after: Target) -> FragmentMaker:
    """``with lock:`` exit: release what the entry kept in ``slot`` (``sync.release``)."""
    lines = [
        f"_r = loc[{slot}]",
        "if type(_r) is not Ref: _fail()",
        f"loc[{slot}] = None",
        "_q = _r",
        "_o = heap[_r.i]",
        "if _o[0] is CONDITION: _q = _o[2]; _o = heap[_q.i]",
        "if _o[2] != t: _fail()",
        "if _o[0] is LOCK: _n = (LOCK, _o[1], None)",
        "elif _o[0] is RLOCK: _k = _o[3] - 1; _n = (RLOCK, _o[1], t if _k else None, _k)",
        "else: _fail()",
        _put("_q", "_n"),
        _track("eff.released.append(_q)"),
    ]
    return lambda: Fragment([*lines, f"pc = {after.pc}"], after.pc)


# -- monitors: enter and leave -------------------------------------------------------------------------------


def monitor_enter(fc: CompiledFunction, e: ast.expr | int, keep: int, nxt: Target) -> FragmentMaker | None:
    """Enter the monitor of the object ``e`` holds (``sync.enter``, after its guard); ``keep`` >= 0: the hidden
    slot that keeps the object for the exit (``with synchronized(obj):``)."""
    src = codegen._Source()
    r = _receiver(fc, e, src)
    if r is None:
        return None
    lines = [*src.lines, f"_o = heap[{r}.i]", "_m = _o[1]",
             "_m = (t, 1, ()) if _m is None else (t, _m[1] + 1, _m[2])"]
    if keep >= 0:
        lines.append(f"loc[{keep}] = {r}")
    lines += [_put(r, "(_o[0], _m, *_o[2:])"), _track(f"eff.acquired.append({r})")]
    return lambda: Fragment([*lines, f"pc = {nxt.pc}"], nxt.pc)


# The guards of a monitor's entry and of a wait's re-acquire, asked of a blocked thread at every state, take
# ``.i`` of a reference in a local slot unchecked: a value that is not a reference has no ``i`` (ints, ``Bool``,
# None, strings, tuples, ``UNBOUND``), the guard raises, and every caller of a generated guard then asks the
# closures (``semantics/system.py``), as after ``_fail()``.


def monitor_enter_guard(fc: CompiledFunction, e: ast.expr | int) -> GuardSource | None:
    """May the thread enter the monitor now (``sync.can_enter``): free, or its own?"""
    src = codegen._Source()
    # A slot's value unchecked (above); an expression's, as ``reference`` checks it.
    r = f"loc[{e}]" if isinstance(e, int) else _receiver(fc, e, src)
    if r is None:
        return None
    return codegen._guard_text([*src.lines, f"_m = heap[{r}.i][1]",
                                "return _m is None or _m[0] is None or _m[0] == t"])


def monitor_exit(slot: int, clear: bool, after: Target) -> FragmentMaker:
    """Leave the monitor of the object in local ``slot`` (``sync.exit_``); ``clear``: the slot is the block's
    hidden one, cleared as the closure clears it."""
    lines = [f"_r = loc[{slot}]", "if type(_r) is not Ref: _fail()"]
    if clear:
        lines.append(f"loc[{slot}] = None")
    lines += [
        "_o = heap[_r.i]",
        "_m = _o[1]",
        "if _m is None or _m[0] != t: _fail()",
        "_k = _m[1] - 1",
        "_m = (t, _k, _m[2]) if _k else ((None, 0, _m[2]) if _m[2] else None)",
        _put("_r", "(_o[0], _m, *_o[2:])"),
        _track("eff.released.append(_r)"),
    ]
    return lambda: Fragment([*lines, f"pc = {after.pc}"], after.pc)


# -- wait: release and join the wait set; then re-acquire ----------------------------------------------------


def _joined(waiters: str) -> str:
    """The text of the wait set ``waiters`` (a sorted tuple of thread ids) with ``t`` joining it, sorted: at its
    end where it is greater than every waiter (no sort)."""
    return f"(*{waiters}, t) if not {waiters} or {waiters}[-1] < t else tuple(sorted((*{waiters}, t)))"


def wait(fc: CompiledFunction, e: ast.expr, monitor: bool, slot: int, count: int, reacq: Target, nxt: Target,
         events: bool) -> FragmentMaker | None:
    """The first step of ``wait(obj)`` (``monitor``) or ``c.wait()`` (``sync.wait``): the object and the count
    to restore kept in the hidden ``slot`` and ``count``; with ``events``, ``e.wait()`` on a set Event too
    (the step only reads the flag: its guard waited for it)."""
    src = codegen._Source()
    r = codegen.reference(fc, e, src)
    if r is None:
        return None
    lines = [*src.lines, f"_o = heap[{r}.i]"]
    if events:
        lines += ["if _o[0] is EVENT:",
                  _track(f"    eff.reads.append(({r}, 2))"),
                  "    if _o[2] is not TRUE: _fail()",
                  "    pc = {nxt}",
                  "else:"]
    body = ["if _o[0] is EVENT or _o[0] is BARRIER: _fail()", _track(f"eff.reads.append(({r}, 1))")]
    if monitor:
        body += ["_m = _o[1]",
                 "if _m is None or _m[0] != t: _fail()",
                 f"_ws = {_joined('_m[2]')}",
                 _put(r, "(_o[0], (None, 0, _ws), *_o[2:])"),
                 _track(f"eff.released.append({r})"),
                 f"loc[{count}] = _m[1]"]
    else:
        body += ["if _o[0] is not CONDITION: _fail()",
                 "_q = _o[2]",
                 "_p = heap[_q.i]",
                 "if _p[2] != t: _fail()",
                 "if _p[0] is LOCK:",
                 "    _n = 1",
                 "    " + _put("_q", "(LOCK, _p[1], None)"),
                 "elif _p[0] is RLOCK:",
                 "    _n = _p[3]",
                 "    " + _put("_q", "(RLOCK, _p[1], None, 0)"),
                 "else: _fail()",
                 _track("eff.released.append(_q)"),
                 f"_ws = {_joined('_o[3]')}",
                 _put(r, "(_o[0], _o[1], _q, _ws)"),
                 f"loc[{count}] = _n"]
    body += [f"loc[{slot}] = {r}", "pc = {reacq}"]
    lines += ["    " + line for line in body] if events else body

    def make() -> Fragment:
        text = [line.replace("{nxt}", str(nxt.pc)).replace("{reacq}", str(reacq.pc)) for line in lines]
        return Fragment(text, None if events else reacq.pc, True, (reacq.pc, nxt.pc) if events else ())

    return make


def wait_guard(fc: CompiledFunction, e: ast.expr) -> GuardSource | None:
    """The guard of ``x.wait()``'s first step where the receiver may be an Event: its flag, when it is one."""
    src = codegen._Source()
    r = codegen.reference(fc, e, src)
    if r is None:
        return None
    return codegen._guard_text([*src.lines, f"_o = heap[{r}.i]", "return _o[0] is not EVENT or _o[2] is TRUE"])


def reacquire(slot: int, count: int, monitor: bool, nxt: Target) -> FragmentMaker:
    """The second step of a wait: take the monitor (the lock) back with the kept count (``sync.reacquire``)."""
    lines = [f"_r = loc[{slot}]", "if type(_r) is not Ref: _fail()", f"_c = loc[{count}]", "_o = heap[_r.i]"]
    if monitor:
        lines += ["_m = _o[1]",
                  _put("_r", "(_o[0], (t, _c, _m[2] if _m else ()), *_o[2:])"),
                  _track("eff.acquired.append(_r)")]
    else:
        lines += ["if _o[0] is not CONDITION: _fail()",
                  "_q = _o[2]",
                  "_p = heap[_q.i]",
                  "if _p[0] is LOCK: " + _put("_q", "(LOCK, _p[1], t)"),
                  "elif _p[0] is RLOCK: " + _put("_q", "(RLOCK, _p[1], t, _c)"),
                  "else: _fail()",
                  _track("eff.acquired.append(_q)")]
    lines += [f"loc[{slot}] = None", f"loc[{count}] = None"]
    return lambda: Fragment([*lines, f"pc = {nxt.pc}"], nxt.pc)


def reacquire_guard(slot: int, monitor: bool) -> GuardSource:
    """May the waiting thread re-acquire (``sync.can_reacquire``): notified, and the monitor (lock) free? The
    slot's value unchecked (above ``monitor_enter_guard``)."""
    lines = [f"_o = heap[loc[{slot}].i]"]
    if monitor:
        lines += ["_m = _o[1]", "return _m is None or (t not in _m[2] and _m[0] is None)"]
    else:
        lines += ["if _o[0] is not CONDITION: _fail()", "return t not in _o[3] and heap[_o[2].i][2] is None"]
    return codegen._guard_text(lines)


def wait_for_check(fc: CompiledFunction, receiver: ast.expr, test: ast.expr, wait: Target, end: Target
                   ) -> FragmentMaker | None:
    """The check of ``cv.wait_for(pred)`` (``wait_for_stmt``): on a Condition, on to ``end`` when the predicate
    holds, else to the wait."""
    src = codegen._Source()
    r = codegen.reference(fc, receiver, src)
    if r is None:
        return None
    src.add(f"if heap[{r}.i][0] is not CONDITION: _fail()")
    c = codegen.value(fc, test, src)
    if c is None:
        return None
    return lambda: Fragment([*src.lines, f"pc = {end.pc} if {c} else {wait.pc}"], None, not src.eager,
                            (end.pc, wait.pc))


# -- events -----------------------------------------------------------------------------------------------


def event_set(fc: CompiledFunction, e: ast.expr, nxt: Target) -> FragmentMaker | None:
    """``e.set()`` as a statement on an Event (``sync.event_set``: a write of its flag, boxed as
    ``Ctx.set_field`` boxes it); any other receiver is the closures' (a dict's or a model object's method)."""
    src = codegen._Source()
    r = codegen.reference(fc, e, src)
    if r is None:
        return None
    lines = [*src.lines, f"_o = heap[{r}.i]", "if _o[0] is not EVENT: _fail()",
             _put(r, "(_o[0], _o[1], TRUE, *_o[3:])"), _track(f"eff.writes.append(({r}, 2))")]
    return lambda: Fragment([*lines, f"pc = {nxt.pc}"], nxt.pc)


# -- wait_until(cond) ----------------------------------------------------------------------------------------


def condition_guard(fc: CompiledFunction, test: ast.expr) -> GuardSource | None:
    """``wait_until(cond)``'s guard: the condition (its step is ``codegen.check``'s: the condition again, for
    its reads, and the closures' error where it is false)."""
    src = codegen._Source()
    c = codegen.value(fc, test, src)
    if c is None:
        return None
    return codegen._guard_text([*src.lines, f"return {c}"])


# -- with indivisible(): one step ---------------------------------------------------------------------------


def indivisible(delta: int, nxt: Target) -> FragmentMaker:
    """The entry (``delta`` 1) or the exit (-1) of ``with indivisible():`` (``Ctx.atomic``): the driver
    (``semantics/system._run_fast``) runs on through costly nodes while inside."""
    return lambda: Fragment([f"pc = ({delta}, {nxt.pc})"], None, True, ())


def atomic_exit(after: Target, outermost: bool) -> FragmentMaker:
    """The exit of ``with atomic():``, a jump; the exit of a lexically outermost block records, in a tracked
    step, that the thread left its outermost block unless a caller is inside one (the frames, which a fragment
    does not see): that variant is the closures'."""
    return lambda: Fragment([f"pc = {after.pc}"], after.pc, not outermost)


# -- notify -------------------------------------------------------------------------------------------------


def notify(fc: CompiledFunction, e: ast.expr, monitor: bool, everyone: bool, nxt: Target) -> FragmentMaker | None:
    """``notify(obj)``/``notify_all(obj)`` (``monitor``) or a Condition's ``notify()``/``notify_all()``
    (``sync.notify``): nothing to do without waiters; ``notify_all`` empties the wait set; ``notify`` with
    waiters chooses one (the closures)."""
    src = codegen._Source()
    r = codegen.reference(fc, e, src)
    if r is None:
        return None
    lines = [*src.lines, f"_o = heap[{r}.i]"]
    if not monitor:
        # A model object whose class defines the method gets a call (the closures); a Condition is builtin.
        lines.append("if _o[0] is not CONDITION: _fail()")
    lines.append(_track(f"eff.reads.append(({r}, 1))"))
    if monitor:
        lines += ["_m = _o[1]", "if _m is None or _m[0] != t: _fail()", "_ws = _m[2]"]
        empty = _put(r, "(_o[0], (_m[0], _m[1], ()), *_o[2:])")
    else:
        lines += ["_p = heap[_o[2].i]", "if (_p[0] is not LOCK and _p[0] is not RLOCK) or _p[2] != t: _fail()",
                  "_ws = _o[3]"]
        empty = _put(r, "(_o[0], _o[1], _o[2], ())")
    lines.append(f"if _ws: {empty}" if everyone else "if _ws: _fail()")
    return lambda: Fragment([*lines, f"pc = {nxt.pc}"], nxt.pc)


__all__ = ["NAMES", "atomic_exit", "condition_guard", "event_set", "indivisible", "lock_enter", "lock_exit",
           "lock_guard", "monitor_enter",
           "monitor_enter_guard", "monitor_exit", "notify", "reacquire", "reacquire_guard", "wait", "wait_for_check",
           "wait_guard"]
