"""A deliberately naive explicit-state explorer for the models that ``tests/strategies.py`` generates.

It is a test oracle independent of ``src/movers``: it parses a model with ``ast``, turns each thread function
into a flat list of instructions (one instruction per atomic step, following docs/language.md section 8), and
explores every interleaving, evaluating expressions with ``eval`` on the AST of the model. It is slow and
simple on purpose; it exists to say which kinds of violation are reachable in a small model and how big its
state space is. Its states are represented differently from the checker's (loop counters, lock owners, no
heap), but for the models it supports the two representations are in one-to-one correspondence, so when
neither search finds a violation the state counts must be equal: that checks the checker's notion of state
identity. It keeps the *types* of values in its keys (``typed``): ``True`` and ``1`` are different values
of the language even though Python's ``1 == True`` and ``hash(1) == hash(True)``.

Supported: module-level ``name = value`` (ints, bools, None, tuples of them), ``name = [value, ...]``,
``name = Lock()``, ``name = Cls()`` for a class whose ``__init__`` only assigns constants to ``self``
fields, functions, and ``Thread(target=f, args=(...)).start()``; in functions: ``global``, ``pass``,
assignments (a whole right-hand side may be ``choose(e1, e2, ...)``) and augmented assignments to names,
array elements and fields of module-level objects, ``if``/``else``, ``while``, ``for v in range(n)`` (n a constant),
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

_NO_BUILTINS: dict[str, Any] = {"__builtins__": {}, "bool": bool, "int": int}


def typed(v: Any) -> Any:
    """A value with its type made part of its identity (tuples element by element)."""
    if type(v) is tuple:
        return ("tuple", tuple(typed(x) for x in v))
    return (type(v).__name__, v)


def _typed_state(state: tuple) -> Any:
    g, arrays, objects, owners, frames = state
    return (
        typed(g),
        typed(arrays),
        typed(objects),
        owners,
        tuple((pc, tuple((k, typed(v)) for k, v in loc)) for pc, loc in frames),
    )


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

    def __init__(self, fdef: ast.FunctionDef, locks: set[str], objects: set[str] | None = None) -> None:
        self.params = [a.arg for a in fdef.args.args]
        self.locks = locks
        self.objects = objects or set()
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
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in self.objects:
            return ("o", t.value.id, t.attr)
        raise Unsupported(ast.unparse(t))

    def _stmt(self, s: ast.stmt, cont: int) -> int:
        if isinstance(s, ast.Pass | ast.Global):
            return cont
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            v = s.value
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "choose" and v.args:
                alternatives = tuple(_expr(a) for a in v.args)
            else:
                alternatives = (_expr(v),)
            return self._new(("assign", *self._target(s.targets[0]), alternatives, cont))
        if isinstance(s, ast.AugAssign):
            load = ast.parse(ast.unparse(s.target), mode="eval").body
            value = ast.fix_missing_locations(ast.copy_location(ast.BinOp(load, s.op, s.value), s))
            return self._new(("assign", *self._target(s.target), (_expr(value),), cont))
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


class _Object:
    """A model object during an evaluation: its fields as attributes."""

    def __init__(self, fields: tuple) -> None:
        for k, v in fields:
            setattr(self, k, v)


def _constructor_fields(cdef: ast.ClassDef) -> tuple:
    """The fields an ``__init__`` of constant assignments to ``self`` gives, sorted by name."""
    fields: dict[str, Any] = {}
    for item in cdef.body:
        if not (isinstance(item, ast.FunctionDef) and item.name == "__init__"):
            raise Unsupported(f"class {cdef.name}: only __init__")
        for st in item.body:
            if not (
                isinstance(st, ast.Assign)
                and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Attribute)
                and isinstance(st.targets[0].value, ast.Name)
                and st.targets[0].value.id == "self"
            ):
                raise Unsupported(ast.unparse(st))
            fields[st.targets[0].attr] = ast.literal_eval(st.value)
    return tuple(sorted(fields.items()))


class NaiveModel:
    def __init__(self, source: str) -> None:
        tree = ast.parse(source)
        self.gnames: list[str] = []
        ginit: list[Any] = []
        self.anames: list[str] = []
        ainit: list[tuple] = []
        self.onames: list[str] = []
        oinit: list[tuple] = []
        self.locks: list[str] = []
        classes: dict[str, tuple] = {}
        fdefs: dict[str, ast.FunctionDef] = {}
        starts: list[tuple[str, tuple]] = []
        for s in tree.body:
            if isinstance(s, ast.ImportFrom):
                continue
            if isinstance(s, ast.FunctionDef):
                fdefs[s.name] = s
            elif isinstance(s, ast.ClassDef):
                classes[s.name] = _constructor_fields(s)
            elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                name, v = s.targets[0].id, s.value
                if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "Lock":
                    self.locks.append(name)
                elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in classes:
                    self.onames.append(name)
                    oinit.append(classes[v.func.id])
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
        compiled = {name: _Function(f, lockset, set(self.onames)) for name, f in fdefs.items()}
        self.threads = [compiled[name] for name, _ in starts]
        frames = tuple(
            (compiled[name].entry, tuple(sorted(zip(compiled[name].params, args, strict=True))))
            for name, args in starts
        )
        self.initial = (tuple(ginit), tuple(ainit), tuple(oinit), tuple(None for _ in self.locks), frames)

    def successors(self, state: tuple) -> tuple[list[tuple], set[str]]:
        """The successor states and the kinds of violation found in this state's steps."""
        g, arrays, objects, owners, frames = state
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
            env.update((n, _Object(o)) for n, o in zip(self.onames, objects, strict=True))
            env.update(loc)

            def frame(nxt: int, locd: dict[str, Any], t: int = t) -> tuple:
                new = (nxt, () if nxt < 0 else tuple(sorted(locd.items())))
                return frames[:t] + (new,) + frames[t + 1 :]

            if op == "assign":
                _, kind, name, index, alternatives, nxt = ins
                for value in alternatives:
                    try:
                        v = eval(value, _NO_BUILTINS, env)
                    except (TypeError, ValueError, ZeroDivisionError):
                        kinds.add("runtime-error")
                        out.append(())
                        continue
                    locd = dict(loc)
                    g2, a2, ob2 = g, arrays, objects
                    if kind == "g":
                        k = self.gnames.index(name)
                        g2 = g[:k] + (v,) + g[k + 1 :]
                    elif kind == "l":
                        locd[name] = v
                    elif kind == "o":
                        k = self.onames.index(name)
                        fields = dict(objects[k])
                        fields[index] = v
                        ob2 = objects[:k] + (tuple(sorted(fields.items())),) + objects[k + 1 :]
                    else:
                        k = self.anames.index(name)
                        i = eval(index, _NO_BUILTINS, env)
                        arr = list(arrays[k])
                        if not -len(arr) <= i < len(arr):
                            kinds.add("runtime-error")
                            out.append(())
                            continue
                        arr[i] = v
                        a2 = arrays[:k] + (tuple(arr),) + arrays[k + 1 :]
                    out.append((g2, a2, ob2, owners, frame(nxt, locd)))
                continue
            locd = dict(loc)
            o2 = owners
            if op == "cond":
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
            out.append((g, arrays, objects, o2, frame(nxt, locd)))
        if live and not out:
            kinds.add("deadlock")
        return [s for s in out if s], kinds


def naive_explore(source: str, max_states: int = 100_000) -> NaiveResult:
    """Explore every interleaving of ``source``; collect every reachable kind of violation. States are
    told apart by ``typed`` keys, so that ``True`` and ``1`` are two values, as in the language."""
    model = NaiveModel(source)
    seen = {_typed_state(model.initial)}
    todo = deque([model.initial])
    result = NaiveResult(states=1, transitions=0)
    while todo:
        succs, kinds = model.successors(todo.pop())
        result.kinds |= kinds
        result.transitions += len(succs)
        for s in succs:
            key = _typed_state(s)
            if key not in seen:
                if len(seen) >= max_states:
                    result.complete = False
                    result.states = len(seen)
                    return result
                seen.add(key)
                todo.append(s)
    result.states = len(seen)
    return result
