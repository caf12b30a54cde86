"""How long compiling each shape's model takes (issue 25, Engine III: compiling is part of every check's time
to verdict, and ``run.py``'s measured check compiles again after its warm-up).

In one warm process (each model compiled once first, so that the generated code's compiled chunks,
``codegen._COMPILED``, and the modelled library's parsed files are cached, as in a benchmark's measured
check), each shape's model (``shapes.SHAPES``, the large size) is compiled ``--repeat`` times at each
granularity, ``checker.compile_source`` as ``movers check`` calls it; the figure is the median CPU time
(``time.process_time``) in milliseconds. Compare two builds by running this script with each one's ``src/``
first on ``PYTHONPATH``, interleaved.

    python benchmarks/compile_time.py [--shapes a,b] [--repeat 7] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import shapes  # noqa: E402  (benchmarks/shapes.py: the models)

from movers.checker import compile_source  # noqa: E402


def compile_ms(source: str, name: str, granularity: str, repeat: int) -> float:
    compile_source(source, name, granularity)  # warm: the caches a measured check finds filled
    times = []
    for _ in range(repeat):
        start = time.process_time()
        compile_source(source, name, granularity)
        times.append(time.process_time() - start)
    return statistics.median(times) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=",".join(shapes.ORDER))
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write the figures as JSON")
    args = ap.parse_args(argv)
    out = {}
    for name in args.shapes.split(","):
        spec = shapes.SHAPES[name]
        source = spec[2](*spec[5])
        for granularity in shapes.GRANULARITIES:
            ms = compile_ms(source, name, granularity, args.repeat)
            out[f"{name}@{granularity}"] = ms
            print(f"{name:12} {granularity:9} {ms:7.1f} ms", flush=True)
    if args.json:
        args.json.write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
