"""The shape of the import graph of ``src/movers`` (issue 22, item 4): no module imports another in a circle,
the reductions (``reduce/``) and the instrumentations (``instrument/``) do not import each other (what both
use is in ``analysis/``, below them), no package is in a cycle, and no module imports a ``_private`` name of
another package.

Every import counts: at module level, inside functions, and under ``if TYPE_CHECKING:`` (a type-only import
that closes a circle still says the two modules know each other). The graph is computed from the source with
``ast``, so a test here fails on the edit that breaks the rule, before any import runs."""

from __future__ import annotations

import ast
import textwrap
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"


@dataclass
class Graph:
    """Modules (dotted names) and their imports: ``edges[a]`` the modules ``a`` imports; ``private`` the
    ``(importer, module, name)`` of every ``_name`` imported from a module of another package, or read as an
    attribute of a module of another package."""

    modules: set[str] = field(default_factory=set)
    edges: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    private: list[tuple[str, str, str]] = field(default_factory=list)


def module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package(module: str) -> str:
    """The package a module belongs to: ``movers.reduce.ample`` -> ``reduce``; a top-level module (``movers``,
    ``movers.checker``) is a package of its own."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(top)"


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _absolute(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def import_graph(root: Path, top: str = "movers") -> Graph:
    """The import graph of the package ``top`` under ``root``."""
    g = Graph()
    files = {module_name(root, p): p for p in sorted((root / top).rglob("*.py"))}
    g.modules = set(files)
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        modules_bound: dict[str, str] = {}  # local name -> a module of the package it names
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == top:
                        g.edges[name].add(a.name)
                        if a.asname:
                            modules_bound[a.asname] = a.name
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(name, path.name == "__init__.py", node)
                if source.split(".")[0] != top:
                    continue
                for a in node.names:
                    sub = f"{source}.{a.name}"
                    if sub in files:  # ``from movers.lang import codegen``: the module itself
                        g.edges[name].add(sub)
                        modules_bound[a.asname or a.name] = sub
                    else:
                        g.edges[name].add(source)
                        if is_private(a.name) and package(source) != package(name):
                            g.private.append((name, source, a.name))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in modules_bound and is_private(node.attr)):
                target = modules_bound[node.value.id]
                if package(target) != package(name):
                    g.private.append((name, target, node.attr))
        g.edges[name].discard(name)
    return g


def module_cycles(g: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    work: list[tuple[str, Iterator[str]]] = []  # the depth-first path, each module with its successors left

    def enter(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        work.append((v, iter(sorted(w for w in g.edges.get(v, ()) if w in g.modules))))

    for start in sorted(g.modules):
        if start in index:
            continue
        enter(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on_stack.discard(x)
                        comp.append(x)
                        if x == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
            elif w not in index:
                enter(w)
            elif w in on_stack:
                low[v] = min(low[v], index[w])
    return out


def package_graph(g: Graph) -> Graph:
    p = Graph()
    for a, bs in g.edges.items():
        p.modules.add(package(a))
        for b in bs:
            if package(a) != package(b):
                p.modules.add(package(b))
                p.edges[package(a)].add(package(b))
    return p


def between(g: Graph, first: str, second: str) -> list[tuple[str, str]]:
    """Imports from a module of package ``first`` of a module of package ``second``, either way."""
    return sorted((a, b) for a, bs in g.edges.items() for b in bs
                  if {package(a), package(b)} == {first, second})


# -- the project's graph ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph() -> Graph:
    return import_graph(SRC)


def test_the_graph_sees_the_project(graph: Graph) -> None:
    # A graph that found nothing would pass every test below.
    assert {"movers.reduce.ample", "movers.analysis.escape", "movers.lang.function"} <= graph.modules
    assert "movers.analysis.escape" in graph.edges["movers.reduce.ample"]
    assert "movers.lang.codegen" in graph.edges["movers.lang.function"]  # ``from movers.lang import codegen``


def test_no_module_imports_another_in_a_circle(graph: Graph) -> None:
    assert module_cycles(graph) == []


def test_no_package_cycle(graph: Graph) -> None:
    assert module_cycles(package_graph(graph)) == []


def test_reductions_and_instrumentations_do_not_import_each_other(graph: Graph) -> None:
    assert between(graph, "reduce", "instrument") == []


def test_the_analyses_are_below_reductions_and_instrumentations(graph: Graph) -> None:
    above = {"reduce", "instrument", "search", "checker", "cli", "report", "trail", "testing"}
    assert sorted((a, b) for a, bs in graph.edges.items() for b in bs
                  if package(a) == "analysis" and package(b) in above) == []


def test_no_private_name_crosses_a_package(graph: Graph) -> None:
    assert graph.private == []


# -- the checks can fail ------------------------------------------------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / "movers" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    for d in [tmp_path / "movers", *(tmp_path / "movers").rglob("*")]:
        if d.is_dir() and not (d / "__init__.py").exists():
            (d / "__init__.py").write_text("")
    return tmp_path


def test_a_type_only_or_function_level_circle_is_found(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "reduce/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from movers.reduce.b import X\n",
        "reduce/b.py": "def f():\n    from movers.reduce import a\n",
    })
    assert module_cycles(import_graph(root)) == [["movers.reduce.a", "movers.reduce.b"]]


def test_an_import_between_reduce_and_instrument_is_found(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "reduce/a.py": "def f():\n    import movers.instrument.b\n",
        "instrument/b.py": "",
    })
    g = import_graph(root)
    assert between(g, "reduce", "instrument") == [("movers.reduce.a", "movers.instrument.b")]
    assert module_cycles(package_graph(g)) == []


def test_a_package_cycle_is_found(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "reduce/a.py": "from movers.instrument.b import Y\n",
        "instrument/b.py": "Y = 1\n",
        "instrument/c.py": "from movers.reduce import a\n",
    })
    g = import_graph(root)
    assert module_cycles(g) == []
    assert module_cycles(package_graph(g)) == [["instrument", "reduce"]]


def test_private_imports_across_packages_are_found(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "semantics/view.py": "def _value(): ...\n__version__ = '1'\n",
        "report/trace.py": "from movers.semantics.view import _value, __version__\n",
        "report/other.py": "from movers.semantics import view\nview._value()\n",
        "semantics/own.py": "from movers.semantics.view import _value\n",  # within its package: allowed
    })
    assert sorted(import_graph(root).private) == [("movers.report.other", "movers.semantics.view", "_value"),
                                                  ("movers.report.trace", "movers.semantics.view", "_value")]


def test_no_function_is_over_a_hundred_lines() -> None:
    # Architecture II: small functions a newcomer can read next to the paper (ruff's C90 holds complexity at 25).
    import ast as ast_
    from pathlib import Path as Path_

    src = Path_(__file__).resolve().parents[1] / "src" / "movers"
    long = []
    for path in sorted(src.rglob("*.py")):
        for node in ast_.walk(ast_.parse(path.read_text())):
            if isinstance(node, (ast_.FunctionDef, ast_.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > 100:
                    long.append(f"{path.relative_to(src)}:{node.lineno} {node.name} ({n} lines)")
    assert long == []
