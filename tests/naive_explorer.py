"""A deliberately naive explicit-state explorer for the models that ``tests/strategies.py`` generates.

It is a test oracle independent of ``src/movers``: it parses a model with ``ast``, turns each thread function
into a flat list of instructions (one instruction per atomic step, following LANGUAGE.md section 6), and
explores every interleaving, evaluating expressions with ``eval`` on the AST of the model. It is slow and
simple on purpose; it exists to say which kinds of violation are reachable in a small model and roughly how
big its state space is (used to tune the generator). Its state counts need not equal the checker's (states
are represented differently, e.g. loop counters), its verdicts must.

Supported: module-level ``name = int``, ``name = [int, ...]``, ``name = Lock()``, functions, and
``Thread(target=f, args=(...)).start()``; in functions: ``global``, ``pass``, assignments and augmented
assignments to names and array elements, ``if``/``else``, ``while``, ``for v in range(n)`` (n a constant),
``with lock:``, ``lock.acquire()``, ``lock.release()``, ``assert``, ``wait_until(c)``, ``assume(c)``.

Semantics: a failed ``assert`` is an "assertion" violation (its state is not expanded); ``assume(c)`` with
``c`` false drops the path; a state where some thread has not terminated and no thread has an enabled step
(``acquire`` of a held lock, ``wait_until`` of a false condition) is a "deadlock"; releasing a lock the thread
does not hold is a "runtime-error".
"""

from __future__ import annotations

import ast
from collections import deque
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

_NO_BUILTINS: dict[str, Any] = {"__builtins__": {}}


@dataclass
class NaiveResult:
    states: int
    transitions: int
    kinds: set[str] = field(default_factory=set)
    complete: bool = True

    @property
    def verdict(self) -> str:
        if self.kinds:
            return "violation"
        return "ok" if self.complete else "incomplete"


class Unsupported(Exception):
    pass


def _expr(node: ast.expr) -> CodeType:
    return compile(ast.Expression(node), "<model>", "eval")


def _call_name(node: ast.expr) -> tuple[str | None, str]:
    """(receiver, name) of a call's function: ``m.acquire`` -> ("m", "acquire"); ``f`` -> (None, "f")."""
    if isinstance(node, ast.Name):
        return None, node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id, node.attr
    raise Unsupported(ast.unparse(node))


class _Function:
    """One function compiled to instructions; ``entry`` is the first pc, -1 means terminated."""

    def __init__(self, fdef: ast.FunctionDef, locks: set[str]) -> None:
        self.params = [a.arg for a in fdef.args.args]
        self.locks = locks
        self.globals: set[str] = set()
        for node in ast.walk(fdef):
            if isinstance(node, ast.Global):
                self.globals.update(node.names)
        self.code: list[tuple] = []
        self.entry = self._block(fdef.body, -1)

    def _new(self, ins: tuple | None) -> int:
        self.code.append(ins or ())
        return len(self.code) - 1

    def _block(self, stmts: list[ast.stmt], cont: int) -> int:
        for s in reversed(stmts):
            cont = self._stmt(s, cont)
        return cont

    def _target(self, t: ast.expr) -> tuple:
        if isinstance(t, ast.Name):
            return ("g" if t.id in self.globals else "l", t.id, None)
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
            return ("a", t.value.id, _expr(t.slice))
        raise Unsupported(ast.unparse(t))

    def _stmt(self, s: ast.stmt, cont: int) -> int:
        if isinstance(s, ast.Pass | ast.Global):
            return cont
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            return self._new(("assign", *self._target(s.targets[0]), _expr(s.value), cont))
        if isinstance(s, ast.AugAssign):
            load = ast.parse(ast.unparse(s.target), mode="eval").body
            value = ast.fix_missing_locations(ast.copy_location(ast.BinOp(load, s.op, s.value), s))
            return self._new(("assign", *self._target(s.target), _expr(value), cont))
        if isinstance(s, ast.If):
            then, orelse = self._block(s.body, cont), self._block(s.orelse, cont)
            return self._new(("cond", _expr(s.test), then, orelse))
        if isinstance(s, ast.While) and not s.orelse:
            head = self._new(None)
            self.code[head] = ("cond", _expr(s.test), self._block(s.body, head), cont)
            return head
        if (
            isinstance(s, ast.For)
            and isinstance(s.target, ast.Name)
            and isinstance(s.iter, ast.Call)
            and isinstance(s.iter.func, ast.Name)
            and s.iter.func.id == "range"
            and len(s.iter.args) == 1
            and not s.orelse
        ):
            head = self._new(None)
            bound = ast.literal_eval(s.iter.args[0])
            self.code[head] = ("for", s.target.id, bound, self._block(s.body, head), cont, f"#it{head}")
            return head
        if isinstance(s, ast.With) and len(s.items) == 1:
            lock = s.items[0].context_expr
            if not (isinstance(lock, ast.Name) and lock.id in self.locks):
                raise Unsupported(ast.unparse(s))
            release = self._new(("rel", lock.id, cont))
            return self._new(("acq", lock.id, self._block(s.body, release)))
        if isinstance(s, ast.Assert):
            return self._new(("assert", _expr(s.test), cont))
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            return cont  # a docstring
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            recv, name = _call_name(s.value.func)
            if recv in self.locks and name in ("acquire", "release"):
                return self._new(("acq" if name == "acquire" else "rel", recv, cont))
            if recv is None and name in ("wait_until", "assume") and len(s.value.args) == 1:
                return self._new(("wait" if name == "wait_until" else "assume", _expr(s.value.args[0]), cont))
        raise Unsupported(f"line {s.lineno}: {ast.unparse(s)}")


class NaiveModel:
    def __init__(self, source: str) -> None:
        tree = ast.parse(source)
        self.gnames: list[str] = []
        ginit: list[int] = []
        self.anames: list[str] = []
        ainit: list[tuple] = []
        self.locks: list[str] = []
        fdefs: dict[str, ast.FunctionDef] = {}
        starts: list[tuple[str, tuple]] = []
        for s in tree.body:
            if isinstance(s, ast.ImportFrom):
                continue
            if isinstance(s, ast.FunctionDef):
                fdefs[s.name] = s
            elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                name, v = s.targets[0].id, s.value
                if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "Lock":
                    self.locks.append(name)
                elif isinstance(v, ast.List):
                    self.anames.append(name)
                    ainit.append(tuple(ast.literal_eval(v)))
                else:
                    self.gnames.append(name)
                    ginit.append(ast.literal_eval(v))
            elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
                thread = s.value.func
                if not (isinstance(thread, ast.Attribute) and thread.attr == "start"):
                    raise Unsupported(ast.unparse(s))
                call = thread.value
                assert isinstance(call, ast.Call)
                kw = {k.arg: k.value for k in call.keywords}
                target = kw["target"]
                assert isinstance(target, ast.Name)
                args = ast.literal_eval(kw["args"]) if "args" in kw else ()
                starts.append((target.id, tuple(args)))
            else:
                raise Unsupported(f"line {s.lineno}: {ast.unparse(s)}")
        lockset = set(self.locks)
        compiled = {name: _Function(f, lockset) for name, f in fdefs.items()}
        self.threads = [compiled[name] for name, _ in starts]
        frames = tuple(
            (compiled[name].entry, tuple(sorted(zip(compiled[name].params, args, strict=True))))
            for name, args in starts
        )
        self.initial = (tuple(ginit), tuple(ainit), tuple(None for _ in self.locks), frames)

    def successors(self, state: tuple) -> tuple[list[tuple], set[str]]:
        """The successor states and the kinds of violation found in this state's steps."""
        g, arrays, owners, frames = state
        out: list[tuple] = []
        kinds: set[str] = set()
        live = False
        for t, (pc, loc) in enumerate(frames):
            if pc < 0:
                continue
            live = True
            ins = self.threads[t].code[pc]
            op = ins[0]
            env = dict(zip(self.gnames, g, strict=True))
            env.update(zip(self.anames, arrays, strict=True))
            env.update(loc)
            locd = dict(loc)
            g2, a2, o2 = g, arrays, owners
            if op == "assign":
                _, kind, name, index, value, nxt = ins
                v = eval(value, _NO_BUILTINS, env)
                if kind == "g":
                    k = self.gnames.index(name)
                    g2 = g[:k] + (v,) + g[k + 1 :]
                elif kind == "l":
                    locd[name] = v
                else:
                    k = self.anames.index(name)
                    i = eval(index, _NO_BUILTINS, env)
                    arr = list(arrays[k])
                    if not 0 <= i < len(arr):
                        kinds.add("runtime-error")
                        continue
                    arr[i] = v
                    a2 = arrays[:k] + (tuple(arr),) + arrays[k + 1 :]
            elif op == "cond":
                nxt = ins[2] if eval(ins[1], _NO_BUILTINS, env) else ins[3]
            elif op == "for":
                _, var, bound, body, exit_, key = ins
                it = locd.get(key, 0)
                if it < bound:
                    locd[var], locd[key], nxt = it, it + 1, body
                else:
                    locd.pop(key, None)
                    nxt = exit_
            elif op == "acq":
                k = self.locks.index(ins[1])
                if owners[k] is not None:
                    continue  # blocked
                o2 = owners[:k] + (t,) + owners[k + 1 :]
                nxt = ins[2]
            elif op == "rel":
                k = self.locks.index(ins[1])
                if owners[k] != t:
                    kinds.add("runtime-error")
                    continue
                o2 = owners[:k] + (None,) + owners[k + 1 :]
                nxt = ins[2]
            elif op == "wait":
                if not eval(ins[1], _NO_BUILTINS, env):
                    continue  # blocked
                nxt = ins[2]
            elif op == "assume":
                if not eval(ins[1], _NO_BUILTINS, env):
                    out.append(())  # a step whose successor is dropped: not a deadlock
                    continue
                nxt = ins[2]
            elif op == "assert":
                if not eval(ins[1], _NO_BUILTINS, env):
                    kinds.add("assertion")
                    out.append(())
                    continue
                nxt = ins[2]
            else:
                raise AssertionError(op)
            new_frame = (nxt, () if nxt < 0 else tuple(sorted(locd.items())))
            out.append((g2, a2, o2, frames[:t] + (new_frame,) + frames[t + 1 :]))
        if live and not out:
            kinds.add("deadlock")
        return [s for s in out if s], kinds


def naive_explore(source: str, max_states: int = 100_000) -> NaiveResult:
    """Explore every interleaving of ``source``; collect every reachable kind of violation."""
    model = NaiveModel(source)
    seen = {model.initial}
    todo = deque([model.initial])
    result = NaiveResult(states=1, transitions=0)
    while todo:
        succs, kinds = model.successors(todo.pop())
        result.kinds |= kinds
        result.transitions += len(succs)
        for s in succs:
            if s not in seen:
                if len(seen) >= max_states:
                    result.complete = False
                    result.states = len(seen)
                    return result
                seen.add(s)
                todo.append(s)
    result.states = len(seen)
    return result
