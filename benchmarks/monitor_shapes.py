"""CPU time and fallback rate of the generated code on monitor, call and indivisible shapes.

    PYTHONPATH=src python benchmarks/monitor_shapes.py [--shape NAME ...] [--reduction none] [--granularity G]

Shapes: ``monitor`` (a bounded buffer of 3 with ``@synchronized`` add/take, ``wait``/``notify_all``, two
producers and two consumers of N=4 items each: calls with arguments and a return value), ``monitor-n3``
(the same with N=3) and ``bluetooth`` (examples/atomicity_bluetooth.py with 6 threads: ``with indivisible()``,
``with atomic()``, ``if f():``). Each run prints the states, the CPU seconds of the whole check
(``time.process_time``, compilation included), states per CPU second, and the share of transitions that ran
on the closures (the fast path gave them up: ``TransitionSystem._run_closures``).

To compare two builds, run this file in a fresh process per measurement with each build's ``src`` first on
``PYTHONPATH``, interleaving the builds (benchmarks/README.md, "Monitors, calls and indivisible").
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# examples/bounded_buffer.py's class (Dwyer et al.'s Figure 3) with two producers and two consumers.
_EXAMPLE = (ROOT / "examples" / "bounded_buffer.py").read_text()
MONITOR = _EXAMPLE[_EXAMPLE.index("from movers.lang import *"):_EXAMPLE.index("def producer():")] + """def producer():
    for k in range(N):
        buf.add(k + 1)


def consumer():
    for k in range(N):
        v = buf.take()
        assert v > 0


Thread(target=producer).start()
Thread(target=producer).start()
Thread(target=consumer).start()
Thread(target=consumer).start()
"""


def shapes() -> dict[str, str]:
    bluetooth = (ROOT / "examples" / "atomicity_bluetooth.py").read_text().replace("THREADS = 2", "THREADS = 6")
    return {"monitor": MONITOR, "monitor-n3": MONITOR.replace("N = 4", "N = 3"), "bluetooth": bluetooth}


def measure(source: str, reduction: str, granularity: str) -> tuple[str, int, float, float]:
    """(verdict, states, CPU seconds, share of transitions on the closures)."""
    import movers
    from movers.semantics import system

    slow = [0]
    real = system.TransitionSystem._run_closures

    def counted(self: system.TransitionSystem, *a: object) -> object:
        slow[0] += 1
        return real(self, *a)  # type: ignore[arg-type]

    system.TransitionSystem._run_closures = counted  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "model.py"
        path.write_text(source)
        t0 = time.process_time()
        r = movers.check(str(path), reduction=reduction, granularity=granularity)
        cpu = time.process_time() - t0
    return r.verdict, r.stats.states, cpu, slow[0] / max(1, r.stats.transitions)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", action="append", choices=sorted(shapes()))
    ap.add_argument("--reduction", default="none")
    ap.add_argument("--granularity", default="access", choices=["access", "statement"])
    args = ap.parse_args(argv)
    for name in args.shape or sorted(shapes()):
        verdict, states, cpu, closures = measure(shapes()[name], args.reduction, args.granularity)
        print(f"{name}: {verdict} states={states:,} cpu={cpu:.3f}s states/s={states / cpu:,.0f} "
              f"on-closures={closures:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
