"""Whether a compiled engine pays (issue 25, item 4): build the engine's hot modules with mypyc or Cython from a
copy of this tree's ``src/``, in a temporary virtual environment, and time pure against compiled end to end.

The rule the build would have to meet to ship: at least 1.5x faster end to end, with the same results as pure
Python. So this script checks, before it prints a ratio, that both engines store the same number of states
and reach the same verdict on every model; it then prints CPU times and pure ÷ compiled per model.

What is compiled (``MYPYC_MODULES``): the modules a cProfile of the counter, dining philosophers and a monitor
shows on top (the plain search's loop, the transition system, the state's canonical walk, the stores, the
machine context and the runtime operations the closures call). What no compiler can touch: the fast path,
Python source that ``lang/codegen.py`` generates per model at run time and ``exec``s, and (for mypyc) the
compiled model's closures in ``lang/``, whose compiler classes are mixins and whose objects get attributes at
run time, which mypyc's native classes refuse. mypyc also needs ``MYPYC_PATCHES`` on the copy (never on this
tree): a compiled method cannot carry the ``checks_nothing`` mark, and a guard stores a tuple where the
context's annotation says list. Cython (``--compiler cython``, pure-Python mode, annotations not enforced)
compiles almost any module unchanged, so it takes the whole engine (``CYTHON_MODULES``), closures included.
The numbers, and why neither build is kept: benchmarks/README.md, section "A compiled engine".

Every run is a fresh process (``run.py``'s child, with the copy's or this tree's ``src`` first on
PYTHONPATH), the two builds interleaved round by round; a figure is the median CPU time
(``time.process_time``, compilation of the model excluded) of ``--repeat`` runs.

    python benchmarks/compiled.py [--compiler mypyc|cython] [--repeat 3] [--dir DIR] [--models M.py ...]
                                  [--tests tests/test_engine.py ...]

``--dir DIR`` keeps the build there (and reuses it when it is already built); ``--tests`` also runs those
test files against the compiled build. Needs network access to PyPI (pip installs mypy or Cython into the
temporary environment) and gcc; the project's own environment is not touched.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import baseline  # noqa: E402  (benchmarks/baseline.py: the unrolled counter)
import run  # noqa: E402  (benchmarks/run.py: the fresh-process child)

MYPYC_MODULES = [
    "movers/search/plain.py",
    "movers/search/dfs.py",
    "movers/search/store.py",
    "movers/search/fingerprints.py",
    "movers/semantics/system.py",
    "movers/semantics/state.py",
    "movers/ir/machine.py",
    "movers/lang/runtime_ops.py",
]
# Left out, and why: ir/exceptions.py and reduce/base.py crash mypyc (an internal error on a ``for`` over an
# Any-typed sequence); ir/program.py (ClassInfo gets attributes at run time), lang/concurrency.py (a mixin of
# the model compiler), search/base.py (Strategy is subclassed by interpreted code), reduce/none.py (a class
# attribute read through the class) fail at import or at run time once compiled.

# A regular expression over one file of the copy, its replacement, and how many times it must match.
_MARK = r'getattr\(([\w.]+), "checks_nothing", False\)'
_MARK_NEW = (r'(getattr(\1, "checks_nothing", False) or (getattr(\1, "__name__", None) == "check_state"'
             r' and type(getattr(\1, "__self__", None)).__name__ == "TransitionSystem"))')
MYPYC_PATCHES: list[tuple[str, str, str, int]] = [
    # A compiled method has no __dict__: drop the mark, and let its readers recognise the method itself.
    ("movers/semantics/system.py", r"\n    check_state\.checks_nothing = True[^\n]*", "", 1),
    ("movers/search/plain.py", _MARK, _MARK_NEW, 1),
    ("movers/search/dfs.py", _MARK, _MARK_NEW, 1),
    ("movers/search/parallel.py", _MARK, _MARK_NEW, 1),
    # Guards store the frame's locals as a tuple (``c.loc = top[2:]``): mypyc checks the declared list type.
    ("movers/ir/machine.py", r"self\.loc: list\[Any\] = ", "self.loc: Any = ", 1),
]

CYTHON_MODULES = ["movers/search/*.py", "movers/semantics/*.py", "movers/ir/*.py", "movers/lang/*.py",
                  "movers/reduce/*.py", "movers/checker.py"]
# Cython 3.3 generates C that gcc rejects for this one ("too few arguments", line 457's call).
CYTHON_EXCLUDE = {"movers/lang/functions_model.py"}


def default_models(out_dir: Path) -> list[tuple[Path, str | None]]:
    """The three shapes measured by default, with the granularity each runs at (None: the default):
    baseline.py's unrolled counter (K=4, L=3: 183,215 states, statement granularity as baseline.py runs it),
    dining philosophers keeping their forks in locals (the ordered example, 6 rounds: 26,394 states) and a
    monitor with ``@synchronized``, ``wait`` and ``notify_all`` (dwyer_replicated_workers: 12,738 states)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    counter = out_dir / "counter_unrolled_K4_L3.py"
    counter.write_text(baseline.model_source(4, 3))
    dp = out_dir / "dining_philosophers_ordered_R6.py"
    dp.write_text((ROOT / "examples" / "dining_philosophers_ordered.py").read_text()
                  .replace("\nROUNDS = 2\n", "\nROUNDS = 6\n"))
    return [(counter, "statement"), (dp, None), (ROOT / "examples" / "dwyer_replicated_workers.py", None)]


def _sh(argv: list[str], cwd: Path | None = None, quiet: bool = True) -> None:
    print("$", " ".join(argv), flush=True)
    proc = subprocess.run(argv, cwd=cwd, capture_output=quiet, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(argv)}\n{(proc.stderr or '')[-3000:]}"
                         f"{(proc.stdout or '')[-3000:]}")


def apply_patches(src: Path) -> None:
    for rel, pattern, new, count in MYPYC_PATCHES:
        path = src / rel
        text, n = re.subn(pattern, new, path.read_text())
        if n != count:
            raise SystemExit(f"{rel}: the patch {pattern!r} matched {n} times, not {count}: update MYPYC_PATCHES")
        path.write_text(text)


def build(compiler: str, work: Path) -> Path:
    """A copy of src/ with the compiled extension modules beside their sources; its path."""
    src = work / "src"
    stamp = work / f"built-{compiler}"
    if stamp.exists():
        return src
    venv = work / "venv"
    if not venv.exists():
        _sh([sys.executable, "-m", "venv", str(venv)])
    py = venv / "bin" / "python"
    # The engine's own dependencies too: mypyc type-checks what the compiled modules import.
    _sh([str(py), "-m", "pip", "install", "-q", "mypy" if compiler == "mypyc" else "cython", "setuptools",
         "bitarray>=2.8", "rich>=13"])
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
    shutil.copy(ROOT / "pyproject.toml", work)  # mypy's settings, for mypyc (its modules with errors ignored)
    if compiler == "mypyc":
        apply_patches(src)
        _sh([str(venv / "bin" / "mypyc"), *MYPYC_MODULES], cwd=src)
    else:
        files = sorted(str(p.relative_to(src)) for g in CYTHON_MODULES for p in src.glob(g)
                       if p.name != "__init__.py" and str(p.relative_to(src)) not in CYTHON_EXCLUDE)
        _sh([str(venv / "bin" / "cythonize"), "-i", "-3", "-j", "2", "-X", "annotation_typing=False",
             "-X", "binding=True", *files], cwd=src)
    stamp.write_text("")
    return src


def loaded_compiled(src: Path) -> bool:
    """Whether importing movers from ``src`` loads the compiled search loop (a .so, not plain.py)."""
    code = "import movers.search.plain as p; print(p.__file__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(src), check=True)
    return out.stdout.strip().endswith(".so")


def _env(src: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(src), env.get("PYTHONPATH")) if p)
    return env


def run_one(src: Path, model: Path, granularity: str | None) -> dict[str, Any]:
    argv = [sys.executable, "-c", run.CHILD, str(model), "none", "dfs", "-", "-", granularity or "-"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=_env(src))
    for line in proc.stdout.splitlines():
        if line.startswith(run.MARKER):
            r = json.loads(line[len(run.MARKER):])
            return {"states": r["stats"]["states"], "verdict": r["verdict"], "cpu": r["measure"]["cpu_seconds"]}
    raise SystemExit(f"{model} crashed under {src}: {proc.stderr.strip()[-2000:]}")


def measure(compiled: Path, models: list[tuple[Path, str | None]], repeat: int) -> list[dict[str, Any]]:
    rows = []
    for model, gran in models:
        runs: dict[str, list[dict[str, Any]]] = {"pure": [], "compiled": []}
        for _ in range(repeat):  # interleaved: both builds see the same machine
            runs["pure"].append(run_one(ROOT / "src", model, gran))
            runs["compiled"].append(run_one(compiled, model, gran))
        seen = {(r["states"], r["verdict"]) for rs in runs.values() for r in rs}
        if len(seen) != 1:
            raise SystemExit(f"{model.name}: pure and compiled disagree: {sorted(seen)}")
        pure = statistics.median(r["cpu"] for r in runs["pure"])
        comp = statistics.median(r["cpu"] for r in runs["compiled"])
        rows.append({"model": model.stem, "granularity": gran or "access", "states": runs["pure"][0]["states"],
                     "verdict": runs["pure"][0]["verdict"], "pure_cpu": pure, "compiled_cpu": comp,
                     "speedup": pure / comp})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", choices=["mypyc", "cython"], default="mypyc")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", type=Path, help="build here and keep it (default: a temporary directory)")
    ap.add_argument("--models", type=Path, nargs="*", help="models to time (default: the three of default_models)")
    ap.add_argument("--tests", nargs="*", default=[], help="test files to run against the compiled build too")
    args = ap.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix=f"movers-{args.compiler}-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        compiled = build(args.compiler, work.resolve())
        if not loaded_compiled(compiled):
            raise SystemExit(f"{compiled}: the compiled modules are not the ones imported")
        models = [(m.resolve(), None) for m in args.models] if args.models else default_models(run.RESULTS / "models")
        rows = measure(compiled, models, args.repeat)
        print(f"\n{args.compiler}, --reduction none, median of {args.repeat} (CPU s, fresh processes, interleaved)")
        print(f"{'model':36} {'granularity':11} {'states':>9} {'verdict':10} {'pure':>7} {'compiled':>8} "
              f"{'pure÷comp':>9}")
        for r in rows:
            print(f"{r['model']:36} {r['granularity']:11} {r['states']:>9,} {r['verdict']:10} "
                  f"{r['pure_cpu']:>7.3f} {r['compiled_cpu']:>8.3f} {r['speedup']:>9.2f}")
        if args.tests:
            # The project's interpreter, with the compiled copy first on the path.
            code = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                                   *args.tests], cwd=ROOT, env=_env(compiled)).returncode
            print(f"tests against the compiled build: exit {code}")
    finally:
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
