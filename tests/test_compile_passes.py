"""The compiler's passes do their work once (issue 25, Engine III: a model's compilation is part of every
check's time to verdict).

What changed is how the compiler reads a model, never what it makes of it: the module's tree is listed once
for the passes that only read it, as long as none has changed it (``syntax.walked``, ``resolve_listed``,
``ModuleCompiler.module_nodes``); a first pass at access granularity that is compiled again writes no code
(``ModuleCompiler.held``); the modelled library's files are parsed once per process; ``codegen._overwritten``
and ``granularity._clear_dead`` are one backward pass each. ``test_same_program_as_reference`` compiles every
example and corpus program, at both granularities, with the reference implementations put back (the
quadratic rescans, ``ast.walk``, ``ast.fix_missing_locations``, the recursive ``own_nodes``, every pass
writing its code) and compares the generated text and every node."""

from __future__ import annotations

import ast
import dataclasses
import random
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from movers import checker
from movers.checker import compile_source
from movers.ir.program import Program
from movers.lang import (
    codegen,
    compiler,
    comprehensions,
    function,
    functions_model,
    granularity,
    imports,
    syntax,
)
from movers.lang import library as library_mod
from movers.lang.syntax import children, fix_locations, walked

MODELS = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests" / "corpus").glob("*.py"))
GRANULARITIES = ("access", "statement")

# A model whose first compilation at access granularity is compiled again (its comparisons are found plain).
FILTER = textwrap.dedent("""
    from movers.lang import *

    level = [0] * 2
    victim = [0] * 2

    def proc(i, a):
        level[i] = 1
        victim[1] = i
        while level[a] >= 1 and victim[1] == i:
            pass
        level[i] = 0

    Thread(target=proc, args=(0, 1)).start()
    Thread(target=proc, args=(1, 0)).start()
""")

QUEUE = textwrap.dedent("""
    import queue
    import threading

    q = queue.SimpleQueue()

    def producer():
        q.put(1)

    def consumer():
        x = q.get()

    threading.Thread(target=producer).start()
    threading.Thread(target=consumer).start()
""")


# -- the reference implementations ------------------------------------------------------------------------------


def _ref_overwritten(lines: list[str], i: int) -> bool:
    ind = len(lines[i]) - len(lines[i].lstrip())
    for line in lines[i + 1:]:
        if len(line) - len(line.lstrip()) < ind:
            return False
        if re.search(r"\bpc\b", line):
            rest = line[ind:]
            return (len(line) - len(line.lstrip()) == ind and rest.startswith("pc = ")
                    and re.search(r"\bpc\b", rest[5:]) is None)
    return False


def _ref_simplified(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        prev = out[-1] if out else ""
        m = codegen._LITERAL.match(prev)
        if m is not None:
            ind, x = m[1], m[2]
            if line in (f"{ind}if type({x}) is bool: {x} = TRUE if {x} else FALSE",
                        f"{ind}if type({x}) is not int: {x} = {x}.value if type({x}) is Bool else _val({x})"):
                continue
        out.append(line)
    return [line for i, line in enumerate(out) if not (codegen._PC.match(line) and _ref_overwritten(out, i))]


def _ref_clear_dead(stmts: list[ast.stmt], live_after: set[str], temps: set[str], at: ast.AST) -> list[ast.stmt]:
    used = granularity._temps_used
    out: list[ast.stmt] = []
    for i, s in enumerate(stmts):
        later = live_after | used(stmts[i + 1:], temps)
        if isinstance(s, ast.If):
            dying = sorted(used([s.test], temps) - later - used(s.body + s.orelse, temps))
            s.body = granularity._clears(dying, at) + _ref_clear_dead(s.body, later, temps, at)
            s.orelse = granularity._clears(dying, at) + _ref_clear_dead(s.orelse, later, temps, at)
            out.append(s)
        else:
            out.append(s)
            out.extend(granularity._clears(sorted(used([s], temps) - later), at))
    return out


def _ref_own_nodes(fn: ast.AST) -> list[ast.AST]:
    out: list[ast.AST] = []

    def visit(n: ast.AST) -> None:
        out.append(n)
        if isinstance(n, (ast.FunctionDef, ast.Lambda, ast.AsyncFunctionDef, ast.ClassDef)):
            args = getattr(n, "args", None)
            if args is not None:
                for d in [*args.defaults, *args.kw_defaults]:
                    if d is not None:
                        visit(d)
            return
        for child in ast.iter_child_nodes(n):
            visit(child)

    for b in ([fn.body] if isinstance(fn, ast.Lambda) else list(getattr(fn, "body", []))):  # type: ignore[attr-defined]
        visit(b)
    return out


def _ref_compile_model(source: str, filename: str = "<model>", granularity: str = "access") -> Program:
    """``compile_model`` as it was: every pass writes its code."""
    mc = compiler.ModuleCompiler(source, filename, granularity)
    program = mc.compile()
    if granularity == "access" and (mc.plain_found or mc.compared_at_found or mc.truths_plain_found):
        again = compiler.ModuleCompiler(source, filename, granularity, plain=mc.plain_found,
                                        compared_at=mc.compared_at_found, truths_plain_at=mc.truths_plain_found)
        program = again.compile()
        if again.truths_contradicted:
            program = compiler.ModuleCompiler(source, filename, granularity, plain=mc.plain_found,
                                              compared_at=mc.compared_at_found).compile()
    return program


def _reference(monkeypatch: pytest.MonkeyPatch) -> None:
    def ref_walked(node: ast.AST) -> list[ast.AST]:
        return list(ast.walk(node))

    for mod in (syntax, compiler, granularity, function, comprehensions, imports, library_mod):
        if hasattr(mod, "walked"):
            monkeypatch.setattr(mod, "walked", ref_walked)
    for mod in (syntax, granularity, functions_model):
        if hasattr(mod, "children"):
            monkeypatch.setattr(mod, "children", lambda n: list(ast.iter_child_nodes(n)))
    monkeypatch.setattr(granularity, "fix_locations", ast.fix_missing_locations)
    monkeypatch.setattr(granularity, "_clear_dead", _ref_clear_dead)
    monkeypatch.setattr(codegen, "_simplified", _ref_simplified)
    monkeypatch.setattr(functions_model, "own_nodes", _ref_own_nodes)
    monkeypatch.setattr(compiler, "own_nodes", _ref_own_nodes)
    monkeypatch.setattr(function, "own_nodes", _ref_own_nodes)
    monkeypatch.setattr(compiler, "compile_model", _ref_compile_model)
    monkeypatch.setattr(checker, "compile_model", _ref_compile_model)


# -- what a program is, for the comparison ------------------------------------------------------------------------


def _canon(v: Any) -> str:
    if isinstance(v, (set, frozenset)):
        return "{" + ",".join(sorted(_canon(x) for x in v)) + "}"
    if isinstance(v, (tuple, list)):
        return "(" + ",".join(_canon(x) for x in v) + ")"
    if isinstance(v, dict):
        return "{" + ",".join(sorted(_canon(k) + ":" + _canon(x) for k, x in v.items())) + "}"
    return re.sub(r" at 0x[0-9a-f]+", "", repr(v))


def _fields(obj: Any, skip: tuple[str, ...] = ()) -> str:
    out = []
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if f.name in skip or f.name.startswith("fast") or (callable(v) and not isinstance(v, type)):
            continue
        out.append(f"{f.name}={_canon(v)}")
    return " ".join(out)


def _described(program: Program) -> list[str]:
    """Every Code's generated text and fields, and every node's static facts, in a fixed order."""
    codes = [("<init>", program.init), *sorted(program.functions.items())]
    codes += [(f"{c}.{m}", code) for c, info in sorted(program.classes.items())
              for m, code in sorted(info.methods.items())]
    out = [_canon(program.globals)]
    for name, code in codes:
        out += [name, code.fast_source, _fields(code, skip=("nodes",))]
        out += [_fields(n) for n in code.nodes]
    return out


def _compiled(path: Path, granularity: str) -> list[str]:
    try:
        return _described(compile_source(path.read_text(), str(path), granularity))
    except Exception as e:  # noqa: BLE001  (a refused model must be refused the same way)
        return [f"{type(e).__name__}: {e}"]


# -- the tests ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_same_program_as_reference(granularity: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every example and corpus program compiles to the same generated text and the same nodes as with the
    reference implementations (module docstring)."""
    fast = {p.name: _compiled(p, granularity) for p in MODELS}
    _reference(monkeypatch)
    slow = {p.name: _compiled(p, granularity) for p in MODELS}
    assert [name for name in fast if fast[name] != slow[name]] == []
    assert sum(1 for v in fast.values() if len(v) > 1) > len(MODELS) // 2  # most compile (not all refused)


def _count_module_walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    walks = [0]
    real_walk, real_walked = ast.walk, syntax.walked

    def walk(node: ast.AST) -> Any:
        walks[0] += isinstance(node, ast.Module)
        return real_walk(node)

    def counted(node: ast.AST) -> list[ast.AST]:
        walks[0] += isinstance(node, ast.Module)
        return real_walked(node)

    monkeypatch.setattr(ast, "walk", walk)
    for mod in (syntax, compiler, granularity, function, comprehensions, imports, library_mod):
        if hasattr(mod, "walked"):
            monkeypatch.setattr(mod, "walked", counted)
    return walks


def _count_passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    passes = [0]
    real = compiler.ModuleCompiler._compile

    def counted(self: compiler.ModuleCompiler) -> Program:
        passes[0] += 1
        return real(self)

    monkeypatch.setattr(compiler.ModuleCompiler, "_compile", counted)
    return passes


@pytest.mark.parametrize(("source", "most"), [(FILTER, 3), (QUEUE, 7)], ids=["filter", "queue"])
def test_module_listed_a_few_times_per_pass(source: str, most: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole module is listed three times a pass (the imports' check, shared with the library's look-up
    and ``_survey`` when neither changes the tree; ``_lift_all``, shared with ``_list_globals`` and
    ``_bound_methods``; the invariants' constants), not once per question (17 times before); a model that
    uses the library is listed again once it is added, and by the library's own rewritings."""
    compile_source(source, "m.py", "access")
    walks = _count_module_walks(monkeypatch)
    passes = _count_passes(monkeypatch)
    compile_source(source, "m.py", "access")
    assert passes[0] >= 1
    assert walks[0] <= most * passes[0]


def test_first_pass_compiled_again_writes_no_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """At access granularity a first pass whose comparisons are then found plain is compiled again: only the
    kept pass's code is written (one ``_run_source`` per Code with generated text)."""
    passes = _count_passes(monkeypatch)
    runs: list[str] = []
    real = codegen._run_source

    def run_source(source: str, namespace: dict[str, Any]) -> bool:
        runs.append(source)
        return real(source, namespace)

    monkeypatch.setattr(codegen, "_run_source", run_source)
    program = compile_source(FILTER, "filter.py", "access")
    assert passes[0] == 2
    codes = [program.init, *program.functions.values()]
    assert len(runs) == sum(1 for c in codes if c.fast_source)
    assert all(any(r in c.fast_source for c in codes) for r in runs)


def test_library_files_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The modelled library's files are parsed and resolved once per process: a model that uses it parses
    only itself afterwards."""
    compile_source(QUEUE, "q.py", "statement")
    parses: list[str] = []
    real = ast.parse

    def parse(source: Any, filename: str = "<unknown>", *a: Any, **k: Any) -> ast.AST:
        parses.append(filename)
        return real(source, filename, *a, **k)

    monkeypatch.setattr(ast, "parse", parse)
    compile_source(QUEUE, "q.py", "statement")
    assert parses == ["q.py"]


@pytest.mark.parametrize("offset", [0, 7, 120])
def test_library_definitions_are_new_trees_as_parsed(offset: int) -> None:
    """Each model gets new trees of the library's definitions (a compilation changes them), the same, with
    their positions, as parsing the file would give."""
    for name in library_mod.FILES:
        a, b = library_mod._definitions(name, offset), library_mod._definitions(name, offset)
        parsed = library_mod._parsed(name, offset)
        assert [ast.dump(d, include_attributes=True) for d in a] == [ast.dump(d, include_attributes=True)
                                                                     for d in parsed]
        assert not {id(n) for d in a for n in ast.walk(d)} & {id(n) for d in b for n in ast.walk(d)}


def test_walked_and_children_are_ast_walks() -> None:
    for path in MODELS:
        tree = ast.parse(path.read_text())
        assert [id(n) for n in walked(tree)] == [id(n) for n in ast.walk(tree)]
        for n in ast.walk(tree):
            assert [id(c) for c in children(n)] == [id(c) for c in ast.iter_child_nodes(n)]
        for fn in tree.body:
            assert [id(n) for n in functions_model.own_nodes(fn)] == [id(n) for n in _ref_own_nodes(fn)]


def test_fix_locations_is_fix_missing_locations() -> None:
    rng = random.Random(7)
    for path in MODELS[:20]:
        tree = ast.parse(path.read_text())
        twin = ast.parse(path.read_text())
        # Take away some positions (as the lowering's new nodes lack them), the same in both trees.
        for n, m in zip(ast.walk(tree), ast.walk(twin), strict=True):
            for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                if hasattr(n, attr) and rng.random() < 0.3:
                    delattr(n, attr)
                    delattr(m, attr)
        fix_locations(tree)
        ast.fix_missing_locations(twin)
        assert ast.dump(tree, include_attributes=True) == ast.dump(twin, include_attributes=True)


def test_overwritten_is_the_rescan() -> None:
    """``_overwritten``'s backward pass finds the ``pc = k`` lines the forward rescan of each found."""
    rng = random.Random(3)
    lines_of = ["pc = 3", "pc = -1", "pc = pc + 1", "x = pc", "y = 1", "if a:", "pcx = 2", "pc = (1, 2)", "",
                "return g, heap, pc", "pc = _l3", "_pc = 4", "else:"]
    for _ in range(5000):
        lines = [" " * (4 * rng.randrange(4)) + rng.choice(lines_of) for _ in range(rng.randrange(1, 14))]
        expected = {i for i, line in enumerate(lines) if codegen._PC.match(line) and _ref_overwritten(lines, i)}
        assert codegen._overwritten(lines) == expected, lines
        assert codegen._simplified(lines) == _ref_simplified(lines)


def test_overwritten_in_a_block() -> None:
    lines = ["pc = 3", "if x:", "    pc = 4", "    pc = 5", "pc = 6", "return g, heap, pc"]
    assert codegen._overwritten(lines) == {2}  # pc = 3 is read in the block; pc = 5 at its end; pc = 6 returned
    assert codegen._overwritten(["    pc = 1", "    x = 2", "    pc = _l1", "pc = 3"]) == {0}
