"""Run a model under CPython with the shim (``movers.lang.runtime``) and say what its assertions did.

``run_source(source, filename)`` executes the model's text in this process, as ``python model.py`` would
(module-level code, then the threads it started, on real threads, joined), and returns the run's
``Outcome``s: each exception a thread or the module raised, with the model line it was raised at. The
schedule is one CPython takes: whatever its scheduler does, with the switch interval given (a short one
interleaves the threads more). A run whose threads are still alive after ``timeout`` seconds (a deadlock,
a model that loops forever) is cut short: its outcomes so far are still outcomes of a schedule CPython
took, but its threads cannot be stopped, so the caller must not run more models in the same process.

As a script, ``python tests/cpython_runs.py SWITCH TIMEOUT MODEL`` runs the model file once and prints one
JSON line, ``{"outcomes": [[kind, line, message], …], "ended": true|false}``, then exits at once (threads
that never end cannot keep it alive).

Kinds: ``assertion`` (an ``AssertionError``), ``runtime-error`` (any other exception), ``inconclusive``
(``wait_until`` on a false value: a limit of the shim, not an outcome of the model).
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from movers.lang import runtime


@dataclass(frozen=True)
class Outcome:
    kind: str  # "assertion", "runtime-error" or "inconclusive"
    line: int  # the model's line the exception was raised at (0: not in the model's text)
    message: str


def _outcome(e: BaseException, tb: TracebackType | None, filename: str) -> Outcome:
    line = 0
    for frame in traceback.extract_tb(tb):
        if frame.filename == filename and frame.lineno is not None:
            line = frame.lineno  # the innermost frame in the model
    if isinstance(e, AssertionError):
        return Outcome("assertion", line, str(e))
    if isinstance(e, RuntimeError) and "cannot wait" in str(e):
        return Outcome("inconclusive", line, str(e))
    return Outcome("runtime-error", line, f"{type(e).__name__}: {e}")


def run_source(source: str, filename: str, *, switch: float | None = None, seed: int = 0,
               timeout: float = 10.0) -> tuple[list[Outcome], bool]:
    """One run of the model under CPython (see the module docstring): its outcomes, and whether it ended
    (every thread finished within ``timeout`` seconds)."""
    code = compile(source, filename, "exec")
    started: list[threading.Thread] = []
    outcomes: list[Outcome] = []
    start = runtime.Thread.start

    def record_start(self: runtime.Thread) -> None:
        started.append(self)
        start(self)

    def hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            outcomes.append(_outcome(args.exc_value, args.exc_traceback, filename))

    old_hook, old_switch = threading.excepthook, sys.getswitchinterval()
    runtime._reset_tids()
    runtime._failures.clear()
    random.seed(seed)
    runtime.Thread.start = record_start  # type: ignore[method-assign]
    threading.excepthook = hook
    if switch is not None:
        sys.setswitchinterval(switch)
    try:
        try:
            exec(code, {"__name__": "__main__"})  # noqa: S102  (a test model, run as `python model.py` would)
        except runtime._Pruned:
            pass  # assume(False) in module-level code: the module ends quietly
        except Exception as e:  # noqa: BLE001  (the model's own exception is the outcome)
            outcomes.append(_outcome(e, e.__traceback__, filename))
        deadline = time.monotonic() + timeout
        while True:
            alive = [t for t in list(started) if t.is_alive()]
            if not alive:
                break
            if time.monotonic() > deadline:
                return list(outcomes), False
            alive[0].join(0.05)
    finally:
        sys.setswitchinterval(old_switch)
        threading.excepthook = old_hook
        runtime.Thread.start = start  # type: ignore[method-assign]
        runtime._failures.clear()
    return outcomes, True


def main(argv: list[str]) -> None:
    switch, timeout, path = float(argv[0]), float(argv[1]), argv[2]
    with open(path, encoding="utf-8") as f:
        source = f.read()
    outcomes, ended = run_source(source, path, switch=switch, timeout=timeout)
    line: dict[str, Any] = {"outcomes": [[o.kind, o.line, o.message] for o in outcomes], "ended": ended}
    print(json.dumps(line), flush=True)
    os._exit(0)  # now: neither threads that never end nor the shim's atexit handler may change the status


if __name__ == "__main__":
    main(sys.argv[1:])
