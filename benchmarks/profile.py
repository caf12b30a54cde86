"""Profile one search under pyinstrument, to see what dominates the search time.

    python benchmarks/profile.py MODEL.py [--reduction none] [--search dfs] [--max-states N]
                                 [--time-limit S] [--include-compile] [--html OUT] [--interval S]
    python benchmarks/profile.py --counter 4,5 [...]

The model is compiled once before profiling (a one-state run), so the profile shows the search only;
``--include-compile`` profiles compilation too. The text profile goes to stdout; ``--html OUT`` writes
pyinstrument's interactive page as well.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# This file shares its name with the standard library's ``profile`` (which cProfile imports): keep this
# directory off sys.path so that nothing imports this script by that name.
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    del sys.path[0]


def _load_run() -> ModuleType:
    """benchmarks/run.py, for its counter variants."""
    spec = importlib.util.spec_from_file_location("movers_bench_run", HERE / "run.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    run = _load_run()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?", type=Path, help="the model file (or use --counter)")
    ap.add_argument(
        "--counter",
        type=run.parse_counter,
        metavar="K,L",
        help="profile examples/counter_bench.py with K and L instead of MODEL",
    )
    ap.add_argument("--reduction", default="none")
    ap.add_argument("--search", default="dfs", choices=["dfs", "bfs"])
    ap.add_argument("--max-states", type=int)
    ap.add_argument("--time-limit", type=float)
    ap.add_argument("--include-compile", action="store_true", help="profile the compilation too")
    ap.add_argument("--html", type=Path, metavar="OUT", help="also write pyinstrument's HTML page to OUT")
    ap.add_argument("--interval", type=float, default=0.001, help="sampling interval in seconds")
    args = ap.parse_args(argv)
    if (args.model is None) == (args.counter is None):
        ap.error("give either MODEL or --counter K,L")
    model = args.model if args.model is not None else run.counter_variant(*args.counter)

    try:
        from pyinstrument import Profiler
    except ImportError:
        print(
            "benchmarks/profile.py needs pyinstrument: pip install pyinstrument (or pip install -e '.[bench]')",
            file=sys.stderr,
        )
        return 2
    try:
        import movers
    except ImportError:
        sys.path.insert(0, str(ROOT / "src"))
        import movers

    kw = {
        "reduction": args.reduction,
        "search": args.search,
        "max_states": args.max_states,
        "time_limit": args.time_limit,
    }
    if not args.include_compile:
        movers.check(str(model), reduction=args.reduction, search=args.search, max_states=1)
    profiler = Profiler(interval=args.interval)
    profiler.start()
    try:
        r = movers.check(str(model), **kw)
    finally:
        profiler.stop()
    s = r.stats
    print(
        f"{model}: {r.verdict} ({args.reduction}, {args.search}) states={s.states:,} "
        f"transitions={s.transitions:,} seconds={s.seconds:.3f} "
        f"states/s={s.states_per_second:,.0f}" + (f" error={r.error}" if r.error else "")
    )
    if args.html:
        args.html.write_text(profiler.output_html())
        print(f"wrote {args.html}")
    print(profiler.output_text(unicode=True, color=sys.stdout.isatty()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
