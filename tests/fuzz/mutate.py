"""Grammar-aware mutation of models: at the AST level (then ``ast.unparse``), then at the text level.

Every function takes a ``random.Random`` and nothing else random, so a fuzz seed gives the same inputs on
every run. The mutations aim at the places a checker of a Python subset breaks: constructs outside the
subset, builtins it must not call, values at the edges of what it can store or print, nesting that
exhausts a recursive compiler, inputs so large that a quadratic pass shows, and bytes that are not the
text the parser expects. Some inputs carry a canary: a statement that creates a file if the model is ever
executed by Python, where the checker must only parse it.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import random
import sys
from collections.abc import Callable, Iterator

# Values at the edges of what the checker stores, compares, hashes and prints.
EDGE_VALUES = [
    "0", "-1", "1", "2", "True", "False", "None", "()", "(1, (2, None))", "(True, 1)", "(0, False)",
    "10 ** 5000", "-10 ** 5000", "10 ** 4400", "10 ** 10 ** 8", "-(2 ** 63)", "2 ** 64", "2 ** -1",
    "'s'", "b'b'", "1.5", "1j", "...", "[]", "[0] * 10 ** 9", "range(10 ** 9)", "[None] * -1", "-0",
    "0x7fffffffffffffff", "~0", "not None",
]
# A 5001-digit literal: over CPython's 4300-digit limit for int <-> str, which the parser also applies.
BIG_LITERAL = "1" + "0" * 5000
# Values of the language itself, where booleans, ints and tuples meet (True == 1, hash(0) == hash(False)).
SMALL_VALUES = ["0", "1", "-1", "2", "3", "True", "False", "None", "(1, 2)", "(True, 1)", "(0,)", "()"]

BIN_OPS = [ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift,
           ast.BitOr, ast.BitXor, ast.BitAnd, ast.MatMult]
CMP_OPS = [ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn]
UNARY_OPS = [ast.Invert, ast.Not, ast.UAdd, ast.USub]
BOOL_OPS = [ast.And, ast.Or]

NAMES = [
    "undefined_fz", "print", "len", "range", "eval", "open", "__import__", "exec", "compile", "globals",
    "getattr", "setattr", "object", "type", "super", "id", "self", "__builtins__", "__name__", "__file__",
    "Thread", "Lock", "RLock", "Condition", "Semaphore", "choose", "assume", "wait_until", "tid",
    "indivisible", "atomic", "commit", "invariant", "exclusive", "guarded_by", "thread_local", "synchronized",
    "wait", "notify", "notify_all", "int", "bool", "tuple", "list", "abs", "min", "max", "isinstance",
    "breakpoint", "input", "exit", "vars", "dir", "hash",
]
ATTRS = ["acquire", "release", "owner", "start", "join", "wait", "notify", "notify_all", "__class__",
         "__dict__", "__init__", "f", "x", "next", "value", "locked", "run", "daemon", "name", "ident",
         "append", "__globals__", "__code__"]

# Statements to insert; @g@ is a global of the model, @f@ one of its functions, @m@ a lock (or a guess).
SNIPPETS = [
    # outside the language
    "@g@ = lambda: 1", "@g@ = [i for i in range(3)]", "@g@ = {i: i for i in range(2)}", "@g@ = {1, 2}",
    "@g@ = {'a': 1}", "@g@ = f'{@g@}'", "@g@ = 'str'", "@g@ = b'bytes'", "@g@ = 1.5", "@g@ = 1j",
    "@g@ = ...", "try:\n    @g@ = 1\nexcept Exception:\n    pass", "try:\n    pass\nfinally:\n    @g@ = 2",
    "yield @g@", "@g@ = (yield)", "async def async_fz():\n    await @f@()", "@f@(*(1, 2))",
    "@f@(**{'a': 1})", "@f@(k=1)", "@g@ = @g@[1:2]", "@g@ = @g@[::-1]", "del @g@", "import os",
    "from os import path", "raise ValueError(1)", "raise", "nonlocal @g@", "global @g@", "(@g@ := 5)",
    "match @g@:\n    case 1:\n        pass", "with open('x') as fh:\n    pass", "print(@g@)",
    "@g@, *rest_fz = (1, 2, 3)", "@g@ = [*@g@]", "@g@ = @g@ @ @g@", "x_fz: int = 1", "x_fz: int",
    "class K_fz(object):\n    x = 1", "class K_fz(Exception):\n    pass",
    "class K_fz:\n    @staticmethod\n    def s():\n        pass",
    "def nest_fz():\n    def inner():\n        return 1\n    return inner()",
    "for i_fz in range(3):\n    pass\nelse:\n    @g@ = 1", "while False:\n    pass\nelse:\n    pass",
    "def kw_fz(a, b=1, *c, d, **e):\n    pass", "def ann_fz(a: int) -> int:\n    return a",
    "@unknown_decorator\ndef deco_fz():\n    pass", "@@f@\ndef deco_fz():\n    pass",
    "lambda: (yield)", "await @f@()", "async with @m@:\n    pass", "if __name__ == '__main__':\n    pass",
    # builtins and names a checker must never call
    "@g@ = __import__('os')", "eval('1')", "exec('x = 1')", "open('f')", "compile('1', 'f', 'exec')",
    "breakpoint()", "input()", "exit()", "quit()", "setattr(@g@, 'a', 1)", "object.__subclasses__()",
    "__builtins__.open('x')", "@g@ = globals()", "@g@ = vars()", "@g@ = type(@g@)", "@g@ = @f@",
    "@g@ = @f@.__code__", "@g@ = Thread", "@g@ = getattr(@g@, 'x')", "@g@ = hash(@g@)", "@g@ = id(@g@)",
    # values and operations at the edges
    "@g@ = assert_fz = 1", "assert (@g@, 'a tuple is always true')", "assert @g@, @g@", "@g@ += 1",
    "global @g@\n@g@ += 1", "@g@ = [None] * 10 ** 9", "@g@ = [0] * -1", "@g@ = (0,) * 10 ** 7",
    "@g@ = 10 ** 10 ** 8", "@g@ = 10 ** 5000", "@g@ = -10 ** 4400", "@g@ = 1 << 10 ** 6", "@g@ = -@g@ // 0",
    "@g@ = @g@ % 0", "@g@ = 1 < @g@ < 3", "@g@ = @g@ is None", "@g@ = 1 if @g@ else 2", "@g@ = not @g@",
    "@g@ = len(@g@)", "@g@ = max()", "@g@ = min(@g@, 1)", "@g@ = range(3)", "@g@ = tuple(@g@)",
    "@g@ = int('5')", "@g@ = isinstance(@g@, int)", "@g@ = @g@.__class__", "@g@ = @g@.append(1)",
    "@g@[0] = 1", "@g@[-1] = 1", "@g@[10 ** 100] = 1", "@g@[True] = 1", "@g@[None] = 1", "@g@.f = 1",
    "@g@[0][0] = 1", "@g@[0:1] = [1]", "del @g@[0]", "@g@ = (@g@, @g@)", "@g@ = [@g@, @g@]",
    # the verification primitives, used well and badly
    "@g@ = choose(range(10 ** 9))", "@g@ = choose()", "@g@ = choose([])", "@g@ = choose([1, 2, 3])",
    "@g@ = choose(*[1, 2])", "@g@ = choose(range(3), range(4))", "@g@ = choose(True, 1)",
    "@g@ = choose(range(-5))", "@g@ = choose((1, 2))", "assume(@g@ == 0)", "assume(False)", "assume()",
    "wait_until(False)", "wait_until(@g@)", "wait_until(choose(True, False))",
    "wait_until(@g@ == 10 ** 10 ** 8)", "with indivisible():\n    @g@ = @g@ + 1",
    "with indivisible():\n    while True:\n        pass", "with indivisible():\n    @m@.acquire()",
    "with indivisible():\n    wait_until(False)", "with atomic():\n    @g@ = 1\n    commit()", "commit()",
    "with atomic():\n    with atomic():\n        pass", "with indivisible(), atomic():\n    pass",
    "with indivisible() as q_fz:\n    pass", "with indivisible():\n    Thread(target=@f@).start()",
    # loops, counters and recursion that never end
    "while True:\n    pass", "while True:\n    @g@ = @g@ + 1", "k_fz = 0\nwhile True:\n    k_fz += 1",
    "def rec_fz(n):\n    return rec_fz(n + 1)\nrec_fz(0)", "def rec_fz():\n    rec_fz()\nThread(target=rec_fz).start()",
    "def spin_fz():\n    k = 0\n    while True:\n        k += 1\nThread(target=spin_fz).start()",
    "def count_fz():\n    global @g@\n    while True:\n        @g@ = @g@ + 1\nThread(target=count_fz).start()",
    "def fork_fz():\n    while True:\n        Thread(target=fork_fz).start()\nThread(target=fork_fz).start()",
    # threads and locks
    "Thread(target=@f@).start()", "for i_fz in range(200):\n    Thread(target=@f@).start()",
    "Thread(target=@f@, args=(1, 2, 3)).start()", "Thread(target=@f@, kwargs={}).start()",
    "Thread(target=lambda: None).start()", "Thread(target=@g@).start()", "Thread().start()",
    "t_fz = Thread(target=@f@)\nt_fz.start()\nt_fz.start()", "t_fz = Thread(target=@f@)\nt_fz.join()",
    "@m@.release()", "@m@.acquire()\n@m@.acquire()", "with @m@:\n    with @m@:\n        pass",
    "@g@ = Lock()", "@g@ = RLock()", "@g@ = Condition(@m@)", "@g@ = Condition()", "@g@ = Semaphore(-1)",
    "@g@ = Semaphore(10 ** 100)", "@g@ = Lock(1)", "wait(@g@)", "notify(@g@)", "notify_all(@m@)",
    "@m@.wait()", "@m@.notify()",
    "class T_fz(Thread):\n    def run(self):\n        global @g@\n        @g@ = 1\nT_fz().start()",
    # declarations
    "exclusive(@g@, lambda t: True)", "exclusive(@g@, lambda t: @g@.x)", "exclusive(@g@, lambda: 1)",
    "exclusive(@g@, 5)", "guarded_by(@g@, @m@)", "guarded_by(@g@, @g@)", "thread_local(@g@, 0)",
    "thread_local(@g@, -1)", "thread_local(@g@, 10 ** 100)", "exclusive(@g@, lambda t: choose(True, False))",
    # invariants with side effects, or that never return
    "@invariant\ndef inv_fz():\n    global @g@\n    @g@ = @g@ + 1\n    return True",
    "@invariant\ndef inv_fz():\n    @m@.acquire()\n    return True",
    "@invariant\ndef inv_fz():\n    assert @g@ == @g@\n    return True",
    "@invariant\ndef inv_fz():\n    assume(False)\n    return True",
    "@invariant\ndef inv_fz():\n    return choose(True, False)", "@invariant\ndef inv_fz():\n    return inv_fz()",
    "@invariant\ndef inv_fz():\n    while True:\n        pass",
    "@invariant\ndef inv_fz():\n    Thread(target=@f@).start()\n    return True",
    "@invariant\ndef inv_fz():\n    return 10 ** 10 ** 8 > 0", "@invariant\ndef inv_fz(a):\n    return a",
    "@invariant\ndef inv_fz():\n    wait_until(False)\n    return True",
    "@invariant\ndef inv_fz():\n    return [0] * 10", "@invariant\ndef inv_fz():\n    pass",
    "@invariant\nclass InvK_fz:\n    pass", "@invariant\ndef inv_fz():\n    return @g@ != 10 ** 4400",
    "@synchronized\ndef sync_fz():\n    pass",
]

# Statements that create the file @P@ if Python ever executes them (@P@ is the canary's path).
CANARIES = [
    "open(@P@, 'w').close()", "__import__('os').mkdir(@P@)", "import os\nos.mkdir(@P@)",
    "exec('open(' + repr(@P@) + ', \"w\").close()')", "eval(\"open(\" + repr(@P@) + \", 'w')\")",
    "assert False, open(@P@, 'w')", "@g@ = open(@P@, 'w')", "def canary_fz(p=open(@P@, 'w')):\n    pass",
    "@invariant\ndef canary_inv():\n    open(@P@, 'w').close()\n    return True",
    "class CanaryK:\n    f = open(@P@, 'w')", "Thread(target=lambda: open(@P@, 'w')).start()",
    "exclusive(@g@, lambda t: open(@P@, 'w') is None)", "wait_until(open(@P@, 'w') is None)",
    "@g@ = choose(open(@P@, 'w'), 1)", "getattr(__builtins__, 'open')(@P@, 'w')", "with open(@P@, 'w'):\n    pass",
    "__import__('pathlib').Path(@P@).touch()", "@(lambda fn: open(@P@, 'w') and fn)\ndef canary_deco():\n    pass",
    "f'{open(@P@, \"w\")}'", "canary_ann: open(@P@, 'w') = 1", "Thread(target=@f@, args=(open(@P@, 'w'),)).start()",
    "@g@ = [open(@P@, 'w') for _ in range(1)]", "@g@ = {open(@P@, 'w'): 1}",
]

WRAPPERS = [
    "with indivisible():\n    pass", "with atomic():\n    pass", "if True:\n    pass", "if @g@:\n    pass",
    "while True:\n    pass", "while @g@ < 3:\n    pass", "for i_fz in range(2):\n    pass", "with @m@:\n    pass",
    "try:\n    pass\nfinally:\n    pass", "if @g@:\n    pass\nelse:\n    pass",
    "with indivisible():\n    with atomic():\n        pass",
]

DEPTHS = [50, 99, 100, 101, 199, 200, 201, 300, 500, 1000]


@contextlib.contextmanager
def unlimited_int_digits() -> Iterator[None]:
    """``ast.unparse`` of a 5001-digit constant needs the int <-> str limit lifted; put it back after."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(old)


class Names:
    """The names a snippet can use: the model's own globals, functions and locks, so snippets interact."""

    def __init__(self, tree: ast.Module) -> None:
        self.globals: list[str] = []
        self.functions: list[str] = []
        self.locks: list[str] = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                self.functions.append(node.name)
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            self.globals.append(n.id)
                            if isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") in (
                                    "Lock", "RLock", "Condition", "Semaphore"):
                                self.locks.append(n.id)

    def fill(self, template: str, rng: random.Random, canary: str | None = None) -> str:
        text = template.replace("@g@", rng.choice(self.globals or ["x"]))
        text = text.replace("@f@", rng.choice(self.functions or ["f"]))
        text = text.replace("@m@", rng.choice(self.locks or self.globals or ["m"]))
        if canary is not None:
            text = text.replace("@P@", repr(canary))
        return text


def _bodies(tree: ast.AST) -> list[list[ast.stmt]]:
    out = []
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                out.append(body)
    return out


def _expr_slots(tree: ast.AST) -> list[tuple[ast.AST, str, int | None]]:
    """Every place that holds an expression that is read (not an assignment target)."""
    out: list[tuple[ast.AST, str, int | None]] = []
    for node in ast.walk(tree):
        for name, value in ast.iter_fields(node):
            if isinstance(value, ast.expr) and not isinstance(getattr(value, "ctx", ast.Load()), ast.Store | ast.Del):
                out.append((node, name, None))
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    if isinstance(v, ast.expr) and not isinstance(getattr(v, "ctx", ast.Load()), ast.Store | ast.Del):
                        out.append((node, name, i))
    return out


def _set_slot(slot: tuple[ast.AST, str, int | None], new: ast.expr) -> None:
    node, name, i = slot
    if i is None:
        setattr(node, name, new)
    else:
        getattr(node, name)[i] = new


def _parse_stmts(text: str) -> list[ast.stmt] | None:
    try:
        return ast.parse(text).body
    except SyntaxError:
        return None


def _parse_expr(text: str) -> ast.expr:
    with unlimited_int_digits():
        return ast.parse(text, mode="eval").body


def swap_operator(tree: ast.Module, rng: random.Random, names: Names) -> str | None:
    kinds = ast.BinOp | ast.AugAssign | ast.Compare | ast.UnaryOp | ast.BoolOp
    nodes = [n for n in ast.walk(tree) if isinstance(n, kinds)]
    if not nodes:
        return None
    n = rng.choice(nodes)
    if isinstance(n, ast.BinOp | ast.AugAssign):
        n.op = rng.choice(BIN_OPS)()
    elif isinstance(n, ast.Compare):
        i = rng.randrange(len(n.ops))
        n.ops[i] = rng.choice(CMP_OPS)()
    elif isinstance(n, ast.UnaryOp):
        n.op = rng.choice(UNARY_OPS)()
    else:
        n.op = rng.choice(BOOL_OPS)()
    return f"swap-op {type(n).__name__}"


def delete_statement(tree: ast.Module, rng: random.Random, names: Names) -> str | None:
    body = rng.choice(_bodies(tree))
    del body[rng.randrange(len(body))]
    if not body and rng.random() < 0.9:
        body.append(ast.Pass())
    return "delete-stmt"


def duplicate_statement(tree: ast.Module, rng: random.Random, names: Names) -> str | None:
    body = rng.choice(_bodies(tree))
    i = rng.randrange(len(body))
    body.insert(i + rng.randint(0, 1), copy.deepcopy(body[i]))
    return "duplicate-stmt"


def move_statement(tree: ast.Module, rng: random.Random, names: Names) -> str | None:
    bodies = _bodies(tree)
    src, dst = rng.choice(bodies), rng.choice(bodies)
    stmt = src.pop(rng.randrange(len(src)))
    if not src:
        src.append(ast.Pass())
    dst.insert(rng.randint(0, len(dst)), stmt)
    return "move-stmt"


def edge_value(tree: ast.Module, rng: random.Random, names: Names) -> str | None:
    slots = _expr_slots(tree)
    consts = [s for s in slots if isinstance(_get_slot(s), ast.Constant)]
    pool = consts if consts and rng.random() < 0.7 else slots
    if not pool:
        return None
    text = BIG_LITERAL if rng.random() < 0.08 else rng.choice(EDGE_VALUES)
    _set_slot(rng.choice(pool), _parse_expr(text))
    return f"edge-value {text[:20]}"


def small_value(tree: ast.Module, rng: random.Random, names: Names) -> str | None:
    """A constant replaced by another value of the language: the mutation most likely to stay a model."""
    consts = [s for s in _expr_slots(tree) if isinstance(_get_slot(s), ast.Constant)]
    if not consts:
        return None
    text = rng.choice(SMALL_VALUES)
    _set_slot(rng.choice(consts), _parse_expr(text))
    return f"small-value {text}"


def _get_slot(slot: tuple[ast.AST, str, int | None]) -> object:
    node, name, i = slot
    value = getattr(node, name)
    return value if i is None else value[i]


def rename(tree: ast.Module, rng: random.Random, names: Names) -> str | None:
    if rng.random() < 0.25:
        attrs = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
        if attrs:
            a = rng.choice(attrs)
            a.attr = rng.choice(ATTRS)
            return f"rename-attr {a.attr}"
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
    if not found:
        return None
    n = rng.choice(found)
    own = names.globals + names.functions
    n.id = rng.choice(own) if own and rng.random() < 0.3 else rng.choice(NAMES)
    return f"rename {n.id}"


def insert_snippet(tree: ast.Module, rng: random.Random, names: Names) -> str | None:
    template = rng.choice(SNIPPETS)
    stmts = _parse_stmts(names.fill(template, rng))
    if stmts is None:
        return None
    body = tree.body if rng.random() < 0.5 else rng.choice(_bodies(tree))
    at = rng.randint(0, len(body))
    body[at:at] = stmts
    return f"insert {template.splitlines()[0][:40]}"


def wrap_statements(tree: ast.Module, rng: random.Random, names: Names) -> str | None:
    wrapper = _parse_stmts(names.fill(rng.choice(WRAPPERS), rng))
    if wrapper is None:
        return None
    body = rng.choice(_bodies(tree))
    i = rng.randrange(len(body))
    j = rng.randint(i + 1, len(body))
    outer = wrapper[0]
    inner = outer
    while isinstance(getattr(inner, "body", [None])[0], ast.With | ast.If | ast.While | ast.For | ast.Try):
        inner = inner.body[0]  # type: ignore[attr-defined]
    inner.body = body[i:j]  # type: ignore[attr-defined]
    body[i:j] = [outer]
    return f"wrap {type(outer).__name__}"


def replace_expression(tree: ast.Module, rng: random.Random, names: Names) -> str | None:
    slots = _expr_slots(tree)
    if not slots:
        return None
    choices = [
        "choose(1, 2)", "choose(range(3))", "choose([1, 2])", "lambda: 1", "[i for i in range(2)]",
        "f'{1}'", "(yield)", "{1: 2}", "{1}", "'str'", "@g@[1:]", "tid()", "@m@.owner", "(1, *@g@)",
        "@f@(k=1)", "abs(-1)", "len(@g@)", "(@g@ := 1)", "1 if @g@ else 0", "@g@ is True", "None in @g@",
        "10 ** 10 ** 8", "2 ** 10 ** 7", "@g@ << 10 ** 9", "'a' * 10 ** 9", "choose(range(10 ** 9))", "await @g@",
    ]
    text = names.fill(rng.choice(choices), rng)
    try:
        _set_slot(rng.choice(slots), _parse_expr(text))
    except SyntaxError:
        return None
    return f"replace-expr {text[:30]}"


def decorate(tree: ast.Module, rng: random.Random, names: Names) -> str | None:
    defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    if not defs:
        return None
    d = rng.choice(defs)
    deco = rng.choice(["invariant", "synchronized", "staticmethod", "property", "unknown_fz", "Thread",
                       "invariant()", "functools.cache", "(lambda f: f)"])
    d.decorator_list.insert(0, _parse_expr(deco))
    return f"decorate {deco}"


def change_function(tree: ast.Module, rng: random.Random, names: Names) -> str | None:
    defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    if not defs:
        return None
    d = rng.choice(defs)
    kind = rng.choice(["recursive", "param", "vararg", "kwonly", "global", "return"])
    if kind == "recursive":
        args = ", ".join(a.arg for a in d.args.args)
        d.body.insert(0, _parse_stmts(f"{d.name}({args})")[0])  # type: ignore[index]
    elif kind == "param":
        d.args.args.append(ast.arg(arg="extra_fz"))
        if rng.random() < 0.5:
            d.args.defaults.append(_parse_expr(rng.choice(EDGE_VALUES)))
    elif kind == "vararg":
        d.args.vararg = ast.arg(arg="rest_fz")
    elif kind == "kwonly":
        d.args.kwonlyargs.append(ast.arg(arg="kw_fz"))
        d.args.kw_defaults.append(None)
    elif kind == "global":
        d.body.insert(0, ast.Global(names=[rng.choice(names.globals or ["x"])]))
    else:
        d.body.insert(rng.randint(0, len(d.body)), ast.Return(value=_parse_expr(rng.choice(EDGE_VALUES))))
    return f"function {kind}"


AST_MUTATORS: list[tuple[Callable[[ast.Module, random.Random, Names], str | None], int]] = [
    (swap_operator, 10), (delete_statement, 8), (duplicate_statement, 6), (move_statement, 5),
    (edge_value, 10), (rename, 8), (insert_snippet, 16), (wrap_statements, 7), (replace_expression, 8),
    (decorate, 3), (change_function, 5), (small_value, 6),
]
# For a share of inputs: mutations that keep most models inside the language, so the search runs.
MILD_MUTATORS: list[tuple[Callable[[ast.Module, random.Random, Names], str | None], int]] = [
    (swap_operator, 10), (delete_statement, 4), (duplicate_statement, 6), (move_statement, 2),
    (small_value, 10), (wrap_statements, 4),
]


def deep_nesting(rng: random.Random, depth: int) -> str:
    """A construct nested ``depth`` deep, as text: ``ast.unparse`` itself recurses and cannot build it."""
    shape = rng.choice(["parens", "unary", "not", "binop", "ifexp", "tuple", "list", "call", "subscript",
                        "attribute", "compare", "elif", "if-block", "while-block", "with-block", "def-block"])
    expr = {
        "parens": "(" * depth + "1" + ")" * depth,
        "unary": "- " * depth + "1",
        "not": "not " * depth + "True",
        "binop": " + ".join(["1"] * depth),
        "ifexp": "(1 if True else " * depth + "0" + ")" * depth,
        "tuple": "(" * depth + "1" + ",)" * depth,
        "list": "[" * depth + "]" * depth,
        "call": "abs(" * depth + "1" + ")" * depth,
        "subscript": "deep_a" + "[0]" * depth,
        "attribute": "deep_a" + ".f" * depth,
        "compare": " < ".join(["1"] * depth),
    }.get(shape)
    if expr is not None:
        where = rng.choice(["thread", "module", "assert"])
        if where == "module":
            return f"deep_a = [0]\ndeep_x = {expr}\n"
        if where == "assert":
            return f"deep_a = [0]\nassert {expr}\n"
        return (f"deep_a = [0]\ndeep_x = 0\ndef deep_fz():\n    global deep_x\n    deep_x = {expr}\n"
                "Thread(target=deep_fz).start()\n")
    if shape == "elif":
        arms = "".join(f"    elif deep_x == {i}:\n        deep_x = {i + 1}\n" for i in range(1, depth))
        return ("deep_x = 0\ndef deep_fz():\n    global deep_x\n    if deep_x == 0:\n        deep_x = 1\n"
                f"{arms}    else:\n        deep_x = -1\nThread(target=deep_fz).start()\n")
    head = {"if-block": "if True:", "while-block": "while deep_x < 1:", "with-block": "with indivisible():",
            "def-block": None}[shape]
    lines = ["deep_x = 0", "def deep_fz():", "    global deep_x"]
    for i in range(depth):
        lines.append("    " * (i + 1) + (head or f"def deep_{i}():"))
    lines.append("    " * (depth + 1) + "deep_x = 1")
    lines.append("Thread(target=deep_fz).start()")
    return "\n".join(lines) + "\n"


def big_input(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["message", "statements", "thread-statements", "long-line", "pow"])
    if kind == "message":
        return kind, ('def big_fz():\n    assert False, "' + "A" * 5_000_000 + '"\nThread(target=big_fz).start()\n')
    if kind == "statements":
        return kind, "big_x = 0\n" * 100_000
    if kind == "thread-statements":
        return kind, "big_x = 0\ndef big_fz():\n    global big_x\n" + "    big_x = 1\n" * 100_000 + \
            "Thread(target=big_fz).start()\n"
    if kind == "long-line":
        return kind, "big_x = " + " + ".join(["1"] * 100_000) + "\n"
    return kind, "big_x = 10 ** 10 ** 8\ndef big_fz():\n    global big_x\n    big_x = big_x * big_x\n" \
        "Thread(target=big_fz).start()\n"


def insert_at_line(text: str, rng: random.Random, block: str) -> str:
    """Insert a module-level block at a line where a top-level statement starts (or at the end)."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line and not line[0].isspace() and not line.startswith(
        (")", "]", "}", "else", "elif", "except", "finally", "@", "#"))]
    at = rng.choice(starts + [len(lines)])
    return "\n".join(lines[:at] + [block.rstrip("\n")] + lines[at:])


def mutate_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Text-level mutations: the bytes a parser of Python source meets in the wild."""
    kind = rng.choice(["flip", "truncate", "non-utf8", "bom", "coding-latin1", "coding-bogus", "bom-latin1",
                       "nul", "crlf", "cr", "tabs", "mixed-tabs", "formfeed", "zero-width", "empty",
                       "shebang", "surrogate", "utf16"])
    if kind == "flip":
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            if b:
                b[rng.randrange(len(b))] ^= rng.randint(1, 255)
        return bytes(b), kind
    if kind == "truncate":
        return data[: rng.randint(0, len(data))], kind
    if kind == "non-utf8":
        at = rng.randint(0, len(data))
        junk = rng.choice([b"\xff", b"\xfe\xff", b"\x80", b"\xc3\x28", b"# \xe9t\xe9\n", b"\xed\xa0\x80"])
        return data[:at] + junk + data[at:], kind
    if kind == "bom":
        return b"\xef\xbb\xbf" + data, kind
    if kind == "coding-latin1":
        return b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + data.replace(b"'str'", b"'\xe9'"), kind
    if kind == "coding-bogus":
        return b"# coding: klingon\n" + data, kind
    if kind == "bom-latin1":
        return b"\xef\xbb\xbf# coding: latin-1\n" + data, kind
    if kind == "nul":
        at = rng.randint(0, len(data))
        return data[:at] + b"\x00" + data[at:], kind
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n"), kind
    if kind == "cr":
        return data.replace(b"\n", b"\r"), kind
    if kind == "tabs":
        return data.replace(b"    ", b"\t"), kind
    if kind == "mixed-tabs":
        lines = data.split(b"\n")
        idx = [i for i, line in enumerate(lines) if line.startswith(b"    ")]
        for i in rng.sample(idx, k=min(len(idx), rng.randint(1, 3))):
            lines[i] = b"\t" + lines[i][4:] if rng.random() < 0.5 else b"  \t" + lines[i][4:]
        return b"\n".join(lines), kind
    if kind == "formfeed":
        return data.replace(b"\n", b"\n\x0c", 3), kind
    if kind == "zero-width":
        at = rng.randint(0, len(data))
        return data[:at] + "\u200b".encode() + data[at:], kind
    if kind == "empty":
        return rng.choice([b"", b"\n", b"   \n", b"# only a comment\n", b"\xef\xbb\xbf"]), kind
    if kind == "shebang":
        return b"#!/usr/bin/env python3\n" + data, kind
    if kind == "surrogate":
        return data + b"s_fz = '\xed\xb2\x80'\n", kind
    return data.decode("utf-8", "replace").encode("utf-16"), kind


def mutate_model(source: str, rng: random.Random, canary: str | None) -> tuple[bytes, list[str]]:
    """One fuzz input from one seed model: AST mutations, then rarer text-level ones, maybe a canary."""
    tree = ast.parse(source)
    names = Names(tree)
    ops: list[str] = []
    mutators = MILD_MUTATORS if rng.random() < 0.4 else AST_MUTATORS
    funcs = [f for f, _ in mutators]
    weights = [w for _, w in mutators]
    for _ in range(1 + min(5, int(rng.expovariate(0.9)))):
        f = rng.choices(funcs, weights)[0]
        try:
            op = f(tree, rng, names)
        except (IndexError, ValueError):
            op = None  # a mutation that does not fit this tree
        if op:
            ops.append(op)
    try:
        with unlimited_int_digits():
            text = ast.unparse(ast.fix_missing_locations(tree))
    except (RecursionError, ValueError, AttributeError, TypeError):
        text, ops = source, ops + ["unparse-failed"]
    if rng.random() < 0.05:
        depth = rng.choice(DEPTHS)
        text = insert_at_line(text, rng, deep_nesting(rng, depth))
        ops.append(f"deep {depth}")
    if rng.random() < 0.012:
        kind, block = big_input(rng)
        text = text + "\n" + block
        ops.append(f"big {kind}")
    if canary is not None:
        template = rng.choice(CANARIES)
        text = insert_at_line(text, rng, names.fill(template, rng, canary))
        ops.append(f"canary {template.splitlines()[0][:30]}")
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.15:
        data, kind = mutate_bytes(data, rng)
        ops.append(f"bytes {kind}")
    return data, ops
