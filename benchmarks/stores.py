"""The visited stores' cost (issue 25): CPU of ``--store hashcompact`` and ``bitstate`` as a ratio of the exact
store's, and the exact store's bytes per state, on one model of each shape.

    python benchmarks/stores.py [--repeat 3] [--src DIR ...] [--models NAME ...] [--out benchmarks/results/stores.md]
                                [--reduction NAME ...]

Shapes (``models``): the unrolled counter (K=4, L=3: ``baseline.py``'s model), dining philosophers keeping lock
references in locals (``dining_philosophers_ordered.py``, 12 rounds), two monitors (Dwyer et al.'s
readers-writers with 3 readers and replicated workers with 3 workers: ``@synchronized`` methods,
``wait``/``notify_all``, objects on the heap) and an executor program of the corpus
(``tests/corpus/pool_map_locked.py`` mapping over three deposits). Every run is a fresh process (``scale.py``'s
child: CPU seconds are ``time.process_time`` of the check alone, bytes per state the growth of the peak
resident set divided by the states stored; the store's own bytes per state, the size of its set or table,
keys and interned parts, in one more run of the exact store), each figure the median of ``--repeat`` rounds;
within a round every build, model and store runs once, so that builds compared (``--src``: a ``src``
directory each, this tree's by default) share the machine's load alike. Writes a Markdown table (printed too).

``--reduction NAME`` (repeatable) measures the stores under those reductions instead of ``none``, where the
general depth-first search (``dfs.py``) asks the store, not the plain one: by default on Dwyer et al.'s
readers-writers with 3 readers and the replicated workers as the example has them (``REDUCED``). A reduction
that refuses a lossy store (``transactions`` re-expands stored states) gets the exact store's row only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import baseline  # noqa: E402  (the unrolled counter's model)
import run  # noqa: E402
from scale import CHILD, MARKER  # noqa: E402

# The store's own size, after the search: its set (or table) and keys, the interned parts and what they hold,
# each object counted once; the program's code and classes, which the parts share, are not counted.
STORE_SIZE = r"""
import sys, movers
from movers.search import plain, fingerprints
made = []
def make_store(*a, **k):
    made.append(fingerprints.make_store(*a, **k))
    return made[-1]
plain.make_store = make_store
__import__("movers.search.dfs").search.dfs.make_store = make_store
DATA = (tuple, list, dict, set, int, bytes, str, float, bool, type(None))
def size(root):
    seen, todo, total = set(), [root], 0
    while todo:
        o = todo.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        t = type(o)
        if t in (tuple, list, set):
            todo.extend(o)
        elif isinstance(o, dict):  # the exact store's keys are a dict's (store.py's KeySet)
            todo.extend(o)
            todo.extend(o.values())
        elif not isinstance(o, DATA) and type(o).__name__ not in ("Bool", "Ref", "array", "bitarray"):
            continue
        total += sys.getsizeof(o)
    return total
r = movers.check(sys.argv[1], **__import__("json").loads(sys.argv[2]))
st = made[-1]
keys = st.keys if isinstance(st.keys, (set, dict)) else getattr(st.keys, "table", getattr(st.keys, "array", None))
print(MARKER + str(size([keys, st.parts, st._list, getattr(st, "objects", {})]) / max(r.stats.states, 1)))
""".replace("MARKER", repr(MARKER))

STORES: list[tuple[str, dict[str, Any]]] = [
    ("exact", {}),
    ("hashcompact", {"store": "hashcompact"}),
    ("bitstate", {"store": "bitstate", "bits": 26}),
]


def variant(path: Path, name: str, *edits: tuple[str, str]) -> Path:
    """``path`` with each (old, new) text replaced, written to results/models/``name``.py."""
    text = path.read_text()
    for old, new in edits:
        assert old in text, (path, old)
        text = text.replace(old, new)
    out = run.RESULTS / "models" / f"{name}.py"
    out.write_text(text)
    return out


def models() -> list[Path]:
    """One model of each shape, each of 100,000 to 250,000 states (where fixed costs, the compiled program and
    a Python set's fourfold growth below 50,000 entries, no longer weigh on bytes per state)."""
    (run.RESULTS / "models").mkdir(parents=True, exist_ok=True)
    counter = run.RESULTS / "models" / "counter_unrolled_K4_L3.py"
    counter.write_text(baseline.model_source(4, 3))
    ex, corpus = run.EXAMPLES, ROOT / "tests" / "corpus"
    return [
        counter,
        variant(ex / "dining_philosophers_ordered.py", "dining_philosophers_ordered_R12",
                ("ROUNDS = 2", "ROUNDS = 12")),
        variant(ex / "dwyer_readers_writers.py", "dwyer_readers_writers_R3", ("READERS = 2", "READERS = 3")),
        variant(ex / "dwyer_replicated_workers.py", "dwyer_replicated_workers_W3", ("WORKERS = 2", "WORKERS = 3")),
        variant(corpus / "pool_map_locked.py", "pool_map_locked_3", ("[10, 20]", "[10, 20, 40]"),
                ("balance == 30", "balance == 70"), ("assert sorted(seen) in ([10, 30], [20, 30]), seen",
                                                     "assert len(seen) == 3, seen")),
    ]


def reduced_models() -> list[Path]:
    """The models of ``--reduction``: two monitors, where the reductions store far fewer states than none."""
    (run.RESULTS / "models").mkdir(parents=True, exist_ok=True)
    ex = run.EXAMPLES
    return [variant(ex / "dwyer_readers_writers.py", "dwyer_readers_writers_R3", ("READERS = 2", "READERS = 3")),
            ex / "dwyer_replicated_workers.py"]


def once(src: Path, model: Path, kw: dict[str, Any]) -> dict[str, Any] | None:
    """One run, or None where the checker refuses the options (a lossy store under ``transactions``)."""
    env = dict(os.environ, PYTHONPATH=str(src))
    p = subprocess.run([sys.executable, "-c", CHILD, str(model), json.dumps(kw)], capture_output=True, text=True,
                       env=env, timeout=3600)
    for line in p.stdout.splitlines():
        if line.startswith(MARKER):
            out = dict(json.loads(line[len(MARKER):]))
            return None if out["verdict"] == "error" else out
    raise SystemExit(f"{model} {kw}: {p.stderr.strip().splitlines()[-1:]}")


def store_bytes(src: Path, model: Path, kw: dict[str, Any]) -> float:
    """The store's own bytes per state (``STORE_SIZE``), in a fresh process."""
    env = dict(os.environ, PYTHONPATH=str(src))
    p = subprocess.run([sys.executable, "-c", STORE_SIZE, str(model), json.dumps(kw)], capture_output=True,
                       text=True, env=env, timeout=3600)
    for line in p.stdout.splitlines():
        if line.startswith(MARKER):
            return float(line[len(MARKER):])
    return float("nan")  # a build whose store does not have these fields


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--src", type=Path, action="append", help="a build's src directory (repeatable)")
    ap.add_argument("--out", type=Path, default=run.RESULTS / "stores.md")
    ap.add_argument("--models", nargs="*", help="only the models whose names start so (default: all)")
    ap.add_argument("--reduction", action="append", help="measure under this reduction (repeatable; default none)")
    args = ap.parse_args(argv)
    srcs = args.src or [ROOT / "src"]
    reductions = args.reduction or ["none"]
    runs: dict[tuple[int, str, str, str], list[dict[str, Any] | None]] = {}
    every = models() if args.reduction is None else reduced_models()
    ms = [m for m in every if not args.models or m.stem.startswith(tuple(args.models))]
    for rnd in range(args.repeat):
        for b, src in enumerate(srcs):
            for model in ms:
                for red in reductions:
                    for label, kw in STORES:
                        print(f"round {rnd + 1}: {src} {model.stem} {red} {label} ...", file=sys.stderr, flush=True)
                        extra = {} if red == "none" else {"reduction": red}
                        runs.setdefault((b, model.stem, red, label), []).append(once(src, model, kw | extra))
    command = " ".join(["python benchmarks/stores.py", f"--repeat {args.repeat}",
                        *(f"--reduction {r}" for r in args.reduction or [])])
    lines = [
        "# Visited stores: CPU of the lossy stores against the exact store's, bytes per state",
        "",
        f"Generated by `{command}` on {time.strftime('%Y-%m-%d %H:%M')}: each run a fresh process, "
        f"`--reduction {' / '.join(reductions)}`, depth-first; CPU seconds are the median of the rounds; "
        "bytes per state is the growth of the peak resident set during the check divided by the states stored "
        "(the interned parts and the search stack included).",
        "",
        "| build | model | reduction | store | states | bytes/state (process) | bytes/state (store) | CPU s "
        "| ÷ exact |",
        "|---|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for b, src in enumerate(srcs):
        for model in ms:
            for red in reductions:
                exact_cpu = None
                for label, _ in STORES:
                    rs = [r for r in runs[(b, model.stem, red, label)] if r is not None]
                    if not rs:
                        continue  # refused: this reduction needs the states themselves
                    states = rs[0]["stats"]["states"]
                    assert all(r["stats"]["states"] == states for r in rs), "a store gave different states in two runs"
                    cpu = statistics.median(r["measure"]["cpu"] for r in rs)
                    bps = statistics.median(r["measure"]["growth"] for r in rs) / max(states, 1)
                    exact_cpu = exact_cpu or cpu
                    extra = {} if red == "none" else {"reduction": red}
                    own = store_bytes(src, model, extra) if label == "exact" else float("nan")
                    lines.append(f"| {src} | {model.stem} | {red} | {label} | {states:,} | {bps:.0f} | {own:.0f} | "
                                 f"{cpu:.2f} | {cpu / exact_cpu:.2f} |")
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
