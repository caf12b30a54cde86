"""Fuzz inputs: a model (mutated from a seed) and a command line, and how the run is set up.

``make_case(seed, index)`` depends on nothing but its arguments (each input has its own ``random.Random``
seeded by the pair), so any input of a campaign can be regenerated alone to replay it.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import asdict, dataclass, field
from typing import Any

from movers.reduce import REDUCTIONS as REGISTRY

from .corpus import seeds
from .hostile import TRAIL_MUTATIONS, hostile_file_name, inject
from .mutate import mutate_model

# Every registered reduction (the twelve of issue 21), so that a new one is fuzzed from the day it exists.
REDUCTIONS = list(REGISTRY)
TRAIL = "bug.trail"
HTML = "report.html"
BITS = ["4", "6", "8", "10", "12", "16", "20", "26"]
# The time limit of ordinary inputs, with the slack the oracle allows on top of it: compilation and
# initialisation count, and the contract is "about the limit", not "within the limit".
SLACK = 5.0
# Budget of a run that was promised no time limit (a refused or absent --time-limit): it must still end.
NO_LIMIT_BUDGET = 20.0
# A real interpreter start (the subprocess share) costs this much more than a fork.
STARTUP = 1.5


def load_factor() -> float:
    """How much slower than a quiet machine a run is now: the runnable processes per core, at least 1 (a
    campaign beside a loaded test suite must not call a slow start a hang)."""
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


@dataclass
class Case:
    seed: int
    index: int
    kind: str                        # model | cli | sigint | proc
    argv: list[str]                  # relative to the case's directory
    files: dict[str, bytes] = field(default_factory=dict)
    special: dict[str, str] = field(default_factory=dict)  # name -> "fifo" | "dir" | "symlink-loop"
    mode: str = "fork"               # fork | proc
    stdout: str = "file"             # file | closed | broken | full
    sigint: list[float] = field(default_factory=list)
    canary: bool = False
    time_limit: float | None = None  # the limit the command line promises, all rows of compare included
    origin: str = ""
    # Commands run first in the case's directory (``check --trail`` before a ``replay``); not judged.
    pre: list[list[str]] = field(default_factory=list)
    # How the trail that ``pre`` wrote is corrupted before the run (hostile.TRAIL_MUTATIONS), or None.
    trail_mutation: str | None = None
    # Files the run writes that the oracle reads (``--html``, ``--trail``).
    outputs: list[str] = field(default_factory=list)
    # The same run without --workers: the oracle compares the verdicts.
    sequential_argv: list[str] | None = None

    @property
    def json(self) -> bool:
        return "--json" in self.argv or option(self.argv, "--format") == "json"

    @property
    def command(self) -> str:
        return self.argv[0] if self.argv else ""

    def budget(self, load: float = 1.0) -> float:
        """Wall seconds the oracle allows before it calls the run a hang, on a machine whose ``load_factor`` is
        ``load``: the time limit is wall time and holds whatever the load, the slack (an interpreter's start,
        compilation, the report) is CPU work that a busy machine stretches."""
        base = SLACK + (self.time_limit if self.time_limit is not None else NO_LIMIT_BUDGET)
        return base + (STARTUP if self.mode == "proc" else 0.0) + (SLACK + STARTUP) * (load - 1.0)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["files"] = {k: v.decode("latin-1") for k, v in self.files.items()}
        return d

    def option(self, name: str) -> str | None:
        return option(self.argv, name)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Case:
        d = dict(d)
        d["files"] = {k: v.encode("latin-1") for k, v in d["files"].items()}
        return cls(**d)


def option(argv: list[str], name: str) -> str | None:
    """The value of ``--name V`` or ``--name=V`` in argv (the last one wins, as argparse does)."""
    value = None
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            value = argv[i + 1]
        elif a.startswith(name + "="):
            value = a.split("=", 1)[1]
    return value


def _limits(rng: random.Random, rows: int) -> tuple[list[str], float]:
    states = rng.choice(["200", "1000", "5000"])
    limit = rng.choices([0.5, 1.0, 2.0], [3, 6, 1])[0]
    argv = ["--max-states", states, "--time-limit", str(limit)]
    return argv, limit * rows


def _check_flags(rng: random.Random, case: Case | None = None) -> list[str]:
    argv = ["--reduction", rng.choice(REDUCTIONS)]
    for flag, p in (("--json", 0.5), ("--quiet", 0.2), ("--no-refine", 0.15), ("--show-classification", 0.15),
                    ("--show-locks", 0.15), ("--no-infer-locks", 0.1), ("--full-state", 0.1)):
        if rng.random() < p:
            argv.append(flag)
    if rng.random() < 0.5:
        argv += ["--search", rng.choice(["dfs", "bfs"])]
    if rng.random() < 0.15:
        argv += ["--max-depth", str(rng.choice([1, 5, 50, 1000]))]
    # The surfaces of issue 21: lossy stores, processes, trails, reports, formats, several violations.
    if rng.random() < 0.25:
        if rng.random() < 0.4:
            argv += ["--store", "hashcompact"]
        else:
            argv += ["--store", "bitstate", "--bits", rng.choice(BITS)]
    if rng.random() < 0.1:
        argv += ["--workers", "2"]
    if rng.random() < 0.05:
        argv += ["--symmetry", "threads"]
    if rng.random() < 0.05:
        argv += ["--atomicity", rng.choice(["commit", "reduction", "auto"])]
    if rng.random() < 0.1:
        argv += rng.choice([["--all-violations"], ["--max-violations", "3"]])
    if rng.random() < 0.8:
        argv = _consistent(argv)
    if case is not None:
        if rng.random() < 0.15:
            argv += ["--trail", TRAIL]
            case.outputs.append(TRAIL)
        if rng.random() < 0.15:
            argv += ["--html", HTML]
            case.outputs.append(HTML)
    if rng.random() < 0.15:
        if "--json" in argv:
            argv.remove("--json")
        argv += ["--format", rng.choice(["text", "json", "sarif", "junit"])]
    return argv


def _consistent(argv: list[str]) -> list[str]:
    """Most runs of the new options in a combination the command line accepts (the rest test refusals):
    lossy stores and processes search depth-first; processes and symmetry only under ``none``."""
    def drop(name: str, values: int) -> None:
        while name in argv:
            i = argv.index(name)
            del argv[i: i + 1 + values]

    argv = list(argv)
    if "--store" in argv or "--workers" in argv:
        drop("--search", 1)
        if argv[argv.index("--reduction") + 1] == "transactions":
            argv[argv.index("--reduction") + 1] = "none"
    if "--workers" in argv or "--symmetry" in argv:
        argv[argv.index("--reduction") + 1] = "none"
        drop("--atomicity", 1)
    if "--workers" in argv:
        drop("--max-depth", 1)
        drop("--symmetry", 1)
        drop("--all-violations", 0)
        drop("--max-violations", 1)
        if "bitstate" in argv:
            drop("--bits", 1)
            drop("--store", 1)
    return argv


def _model_argv(rng: random.Random, model: str, case: Case | None = None) -> tuple[list[str], float]:
    if rng.random() < 0.85:
        limits, limit = _limits(rng, 1)
        argv = ["check", model, *_check_flags(rng, case), *limits]
    else:
        names = rng.sample(REDUCTIONS, rng.randint(1, 4))
        limits, limit = _limits(rng, len(names))
        argv = ["compare", model, "--reductions", ",".join(names), *limits]
        if rng.random() < 0.6:
            argv.append("--json")
        if rng.random() < 0.4:
            argv += ["--search", rng.choice(["dfs", "bfs"])]
        if case is not None and rng.random() < 0.15:
            argv += ["--html", HTML]
            case.outputs.append(HTML)
    argv = argv[:2] + _shuffled_options(argv[2:], rng)
    if case is not None and "--workers" in argv:
        i = argv.index("--workers")
        case.sequential_argv = argv[:i] + argv[i + 2:]
    return argv, limit


def _replay_case(rng: random.Random, case: Case, model: str) -> None:
    """``check --trail`` first, then ``replay`` of the trail it wrote, pristine or corrupted (or written from
    scratch when the check found nothing)."""
    limits, _ = _limits(rng, 1)
    flags = [a for a in _check_flags(rng) if a not in ("--json",)]
    for opt in ("--workers", "--format"):  # the trail is what matters here, not how the check reports
        if opt in flags:
            i = flags.index(opt)
            del flags[i: i + 2]
    case.pre = [["check", model, *flags, *limits, "--trail", TRAIL, "--quiet"]]
    case.trail_mutation = "none" if rng.random() < 0.3 else rng.choice(TRAIL_MUTATIONS)
    argv = ["replay", model, TRAIL]
    if rng.random() < 0.5:
        argv.append("--json")
    if rng.random() < 0.3:
        argv.append("--full-state")
    if rng.random() < 0.3:
        argv += ["--html", HTML]
        case.outputs.append(HTML)
    # A trail that no longer fits makes replay check the model (unbounded without a limit, as a check is).
    argv += ["--time-limit", "1.0"]
    case.argv = argv
    case.time_limit = 1.0


def _shuffled_options(options: list[str], rng: random.Random) -> list[str]:
    """The options in a random order (their order must not matter), each still followed by its value."""
    groups: list[list[str]] = []
    for a in options:
        if a.startswith("--") or not groups:
            groups.append([a])
        else:
            groups[-1].append(a)
    rng.shuffle(groups)
    return [a for g in groups for a in g]


def _mutated_model(rng: random.Random, canary: bool, case_id: str, canary_dir: str) -> tuple[bytes, str]:
    seed = rng.choice(seeds())
    path = f"{canary_dir}/{case_id}" if canary else None
    data, ops = mutate_model(seed.source, rng, path)
    return data, f"{seed.name}: {'; '.join(ops)}"


# Values for the limit options: valid, zero, negative, not a number, huge, and not numbers at all.
TIME_LIMITS = ["1", "0.5", "0", "-1", "nan", "NaN", "inf", "-inf", "1e308", "1e-300", "0.0001", "abc", "",
               "1e999", "10" * 30]
STATE_LIMITS = ["5000", "1", "0", "-1", "abc", "", "1.5", str(10**30), "0x10", "1_000"]


def _cli_case(rng: random.Random, case: Case, canary_dir: str) -> None:
    """Random flag combinations and odd paths: the command line is what users get wrong most."""
    model_src, origin = _mutated_model(rng, case.canary, case_id(case.seed, case.index), canary_dir) \
        if rng.random() < 0.5 else (rng.choice(seeds()).source.encode(), "seed")
    path_kind = rng.choice(["model.py", "model.py", "model.py", "missing.py", "dir", "empty-arg", "no-suffix",
                            "no-suffix-missing", "fifo", "symlink-loop", "dev-null", "long-name", "space name.py",
                            "dash", "true"])
    path = {"model.py": "model.py", "missing.py": "missing.py", "dir": "adir.py", "empty-arg": "",
            "no-suffix": "pass", "no-suffix-missing": "True", "fifo": "fifo.py", "symlink-loop": "loop.py",
            "dev-null": "/dev/null", "long-name": "m" * 300 + ".py", "space name.py": "space name.py",
            "dash": "-", "true": "True"}[path_kind]
    if path_kind in ("model.py", "no-suffix", "space name.py"):
        case.files[path] = model_src
    elif path_kind == "dir":
        case.special[path] = "dir"
    elif path_kind == "fifo":
        case.special[path] = "fifo"
    elif path_kind == "symlink-loop":
        case.special[path] = "symlink-loop"
    command = rng.choice(["check", "check", "compare"])
    argv = [command, path]
    limit: float | None = None
    if command == "check":
        if rng.random() < 0.7:
            argv += ["--reduction", rng.choice(REDUCTIONS + ["bogus", "", "None", "static_por", "NONE"])]
        if rng.random() < 0.3:
            argv += ["--search", rng.choice(["dfs", "bfs", "xyz", ""])]
        if rng.random() < 0.2:
            argv += ["--max-depth", rng.choice(STATE_LIMITS)]
        if rng.random() < 0.1:
            argv += ["--atomicity", rng.choice(["commit", "reduction", "auto", ""])]
        for flag in ("--json", "--quiet", "--no-refine", "--show-classification", "--show-locks",
                     "--no-infer-locks", "--infer-locks"):
            if rng.random() < 0.2:
                argv.append(flag)
    else:
        if rng.random() < 0.7:
            argv += ["--reductions", rng.choice(["", ",", "none,none", "bogus", "none, optimistic", " ",
                                                 ",".join(REDUCTIONS), "transactions,none", "static-por"])]
        if rng.random() < 0.5:
            argv.append("--json")
    states = rng.choice(STATE_LIMITS)
    t = rng.choice(TIME_LIMITS)
    argv += ["--max-states", states]
    if rng.random() < 0.9:
        argv += ["--time-limit", t]
        limit = _promised(t)
    if rng.random() < 0.05:
        argv.append(rng.choice(["--bogus", "--json=1", "-x", "--max-states"]))
    rows = 1 if command == "check" else 4
    case.argv = argv
    case.time_limit = None if limit is None else limit * rows
    case.origin = f"cli {path_kind}; {origin}"


def _promised(t: str) -> float | None:
    """The time limit a --time-limit value promises: a positive finite number, or none at all."""
    try:
        v = float(t)
    except ValueError:
        return None
    return v if math.isfinite(v) and v > 0 and v < 1e6 else None


def case_id(seed: int, index: int) -> str:
    return f"s{seed}-i{index}"


def make_case(seed: int, index: int, canary_dir: str) -> Case:
    rng = random.Random(f"movers-fuzz/{seed}/{index}")
    kind = rng.choices(["model", "cli", "sigint", "proc", "replay"], [74, 9, 5, 4, 8])[0]
    case = Case(seed, index, kind, [], canary=rng.random() < 0.3)
    if kind == "cli":
        _cli_case(rng, case, canary_dir)
        return case
    if rng.random() < 0.7 or kind != "replay":
        data, origin = _mutated_model(rng, case.canary, case_id(seed, index), canary_dir)
    else:  # a model that compiles, so that the trail is a real one more often
        seed_model = rng.choice(seeds())
        data, origin = seed_model.source.encode(), seed_model.name
    # Hostile strings where the model may print them, and hostile file names.
    if rng.random() < (0.3 if kind == "replay" else 0.12):
        text, op = inject(data.decode("utf-8", "surrogateescape"), rng)
        data = text.encode("utf-8", "surrogatepass")
        origin += f"; {op}"
    model = hostile_file_name(rng) if rng.random() < 0.05 else "model.py"
    case.files[model] = data
    if kind == "replay":
        _replay_case(rng, case, model)
    else:
        case.argv, case.time_limit = _model_argv(rng, model, case)
    case.origin = origin
    if kind == "sigint":
        # A fork starts at once, so any moment is fair once the console script has had a few milliseconds
        # to install its handler: compilation, initialisation, search, report.
        first = 0.02 + rng.choice([0.0, 0.01, 0.05, 0.2, 0.5]) * rng.random()
        case.sigint = [first] + ([first + rng.random() * 0.2] if rng.random() < 0.5 else [])
    elif kind == "proc":
        case.mode = "proc"
        case.stdout = rng.choice(["file", "closed", "broken", "full"])
        if case.stdout == "file" or rng.random() < 0.3:
            # After the interpreter has started: Ctrl-C during Python's own imports is not movers' to handle.
            first = STARTUP + rng.random()
            case.sigint = [first] + ([first + rng.random() * 0.3] if rng.random() < 0.5 else [])
    return case
