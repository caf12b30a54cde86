"""Trails: a violation saved to a file (``movers check --trail FILE``) and replayed (``movers replay MODEL
TRAIL``), as SPIN's ``.trail`` files are, so that a counterexample becomes a regression test.

A trail is a JSON object::

    {"movers_trail": 1, "model": "examples/racy_counter.py", "model_sha256": "…", "reduction": "none",
     "atomicity": null, "options": {"search": "dfs", "refine": true, …}, "kind": "assertion",
     "message": "…", "steps": [[0, []], [1, []], [0, [1]], …]}

``steps`` are the atomic steps of the counterexample: the thread that moved and the resolution of its
choices (``choose``, which waiter a ``notify`` woke), whatever reduction found them. ``reduction``,
``atomicity`` and ``options`` are the check's options it was found with (``options`` is absent from trails
written before it was kept: the defaults then). Replaying executes the steps one by one from the initial
state on the program (with commit-atomicity's shadow store when the trail was found with ``--atomicity
commit``), checking the model's properties after every step and, at the end, for a deadlock. The outcome
is the exit code of ``replay``:

- 1: the violation happens again (of the same kind), reported with its trace;
- 0: every step runs and nothing goes wrong: the model no longer has this violation;
- when the trail stops fitting the model (a thread that cannot move there, a choice the step does not have,
  an ``assume()`` that prunes the run: the model changed, typically because the bug was fixed), a note says
  at which step and what the trail expected there, and the model is checked with the trail's options
  within the usual limits: that check's verdict is the outcome (0 verified, 1 with the violation it finds,
  3 incomplete);
- 2: the file is not a trail, or the model does not compile.

A liveness violation (``--liveness``) is a lasso: its trail also has ``cycle_start``, the index of the
cycle's first step (null for every other kind), and its options the property and the fairness. Replaying it
runs the steps, then checks the lasso itself rather than searching (``lasso_violation``): the cycle comes back
to its first state (no step: the stutter loop of a state where no thread can move), it is fair under the
trail's fairness, and it violates the property; if not, the violation no longer happens (0).

A violation of an *inferred* classification (``discipline`` found by ``optimistic`` or ``transactions``
with ``--no-refine``) depends on the search that inferred it and is not replayed: only declared
predicates are checked on the way.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from movers.report.result import Result, Stats
from movers.report.steps import attach_states
from movers.report.trace import violation

SCHEMA = 1


class TrailError(Exception):
    """The file is not a trail (``movers replay`` exits with 2)."""


def model_hash(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


# The check's options a trail keeps beyond its reduction and --atomicity, with their defaults (a trail that
# lacks one was found with the default), and the types they take.
OPTIONS: dict[str, Any] = {"search": "dfs", "refine": True, "infer_locks": True, "symmetry": "off",
                           "store": "exact", "bits": 26, "max_depth": None, "granularity": "access", "races": False,
                           "liveness": None, "fairness": None}
_OPTION_TYPES: dict[str, tuple[type, ...]] = {"search": (str,), "refine": (bool,), "infer_locks": (bool,),
                                              "symmetry": (str,), "store": (str,), "bits": (int,),
                                              "max_depth": (int, type(None)), "granularity": (str,),
                                              "races": (bool,), "liveness": (str, type(None)),
                                              "fairness": (str, type(None))}


def trail_of(result: Result, source: str, model: str, atomicity: str | None = None,
             options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The trail of ``result``'s violation (it must have one); ``options``: the check's (``OPTIONS``)."""
    v = result.violations[0]
    kept = dict(OPTIONS, search=result.search, granularity=result.granularity or OPTIONS["granularity"])
    kept.update({k: x for k, x in (options or {}).items() if k in OPTIONS})
    return {
        "movers_trail": SCHEMA, "model": model, "model_sha256": model_hash(source), "reduction": result.reduction,
        "atomicity": atomicity, "options": kept, "kind": v.kind, "message": v.message,
        "steps": [[t, list(c)] for t, c in v.steps], "cycle_start": v.cycle_start,
    }


def write_trail(path: str | os.PathLike[str], result: Result, source: str, model: str,
                atomicity: str | None = None, options: dict[str, Any] | None = None) -> None:
    data = trail_of(result, source, model, atomicity, options)
    # One field a line, the steps on one line: readable, and a diff of two trails shows what changed.
    lines = [f" {json.dumps(k)}: {json.dumps(v)}" for k, v in data.items()]
    Path(path).write_text("{\n" + ",\n".join(lines) + "\n}\n")


def read_trail(path: str | os.PathLike[str]) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except OSError as e:
        raise TrailError(f"{path}: cannot read the trail: {e.strerror or e}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise TrailError(f"{path}: not a trail (not JSON: {e})") from None
    except RecursionError:
        # Python's JSON decoder recurses once per nested array or object.
        raise TrailError(f"{path}: not a trail (JSON nested too deeply to read)") from None
    if not isinstance(data, dict) or "movers_trail" not in data:
        raise TrailError(f"{path}: not a movers trail (no 'movers_trail' field)")
    # `type(...) is int`: true == 1 in Python, but `"movers_trail": true` names no schema.
    if type(data["movers_trail"]) is not int or data["movers_trail"] != SCHEMA:
        raise TrailError(f"{path}: trail schema {json.dumps(data['movers_trail'])}; this movers reads schema {SCHEMA}")
    steps = data.get("steps")
    if not isinstance(steps, list) or not all(
            isinstance(s, list) and len(s) == 2 and type(s[0]) is int and isinstance(s[1], list)
            and all(type(c) is int for c in s[1]) for s in steps):
        raise TrailError(f"{path}: the trail's steps are not [thread, [choices]] pairs")
    for name in ("model", "model_sha256", "reduction", "kind", "message"):
        if name in data and not isinstance(data[name], str):
            raise TrailError(f"{path}: the trail's {name!r} is not a string")
    start = data.get("cycle_start")
    if start is not None and not (type(start) is int and 0 <= start <= len(steps)):
        raise TrailError(f"{path}: the trail's 'cycle_start' is not null or an index of its steps")
    if start is not None and not isinstance(data.get("options", {}).get("liveness"), str):
        raise TrailError(f"{path}: the trail has a cycle but no 'liveness' option saying what it violates")
    if data.get("atomicity") is not None and not isinstance(data["atomicity"], str):
        raise TrailError(f"{path}: the trail's 'atomicity' is not a string or null")
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise TrailError(f"{path}: the trail's 'options' is not an object")
    for name, value in options.items():
        if name not in OPTIONS:
            raise TrailError(f"{path}: the trail has an unknown option {name!r} (known: {', '.join(OPTIONS)})")
        # `type(...)`, not isinstance: true is not a number of bits.
        if type(value) not in _OPTION_TYPES[name]:
            raise TrailError(f"{path}: the trail's option {name!r} is {json.dumps(value)}, not a "
                             + " or ".join("null" if t is type(None) else t.__name__ for t in _OPTION_TYPES[name]))
    from movers.search.options import Limits, Options

    options = check_options(data)
    problem = Options(data.get("reduction", "none"), options["search"], Limits(max_depth=options["max_depth"]),
                      store=options["store"], bits=options["bits"], symmetry=options["symmetry"],
                      atomicity=data.get("atomicity"), granularity=options["granularity"],
                      races=options["races"], liveness=options["liveness"], fairness=options["fairness"]).problem()
    if problem:
        raise TrailError(f"{path}: the trail's options are refused: {problem}")
    return data


def check_options(trail: dict[str, Any]) -> dict[str, Any]:
    """The options of ``movers.check`` beyond the reduction and --atomicity that ``trail`` was found with."""
    options = {**OPTIONS, **trail.get("options", {})}
    if "granularity" not in trail.get("options", {}):
        options["granularity"] = "statement"  # a trail written before --granularity was found at statements
    return options


def replay(model: str | os.PathLike[str], trail: dict[str, Any], *, max_states: int | None = None,
           time_limit: float | None = None, max_memory: float | None = None,
           progress: Callable[[Stats], None] | None = None,
           misfit: Callable[[str], None] | None = None) -> Result:
    """Re-run ``trail`` on ``model`` (module docstring); never raises for a trail that ``read_trail`` took.
    Where the trail does not fit the model, ``misfit`` (if given) is called with where and why, and the
    result is that of checking the model with the trail's options: a note says where the trail stopped
    fitting. The limits (``movers.check``'s) cover the whole replay; a model that does not compile gives
    verdict "error"."""
    from movers.checker import check, peak_memory_mb
    from movers.search.explore import Limits
    from movers.search.limits import LimitReached, enforce, stop_reason

    budget = Limits(max_states, time_limit, None, max_memory).budget()
    try:
        with enforce(budget):
            outcome = _replay(model, trail)
            if isinstance(outcome, Result) and not _guessed_discipline(outcome, trail):
                return outcome
            if isinstance(outcome, Result):
                # The trail's violation broke a classification the reduction guessed (--no-refine): the plain
                # program has no guesses to break, so only the check with the trail's options can tell.
                outcome = (f"the trail's {trail.get('kind')} violation is of a classification that --reduction "
                           f"{trail.get('reduction')} guessed, which the program replayed alone does not have")
            elif misfit is not None:
                misfit(outcome)
            options = check_options(trail)
            result = check(Path(model), reduction=trail.get("reduction", "none"), atomicity=trail.get("atomicity"),
                           max_states=max_states, time_limit=time_limit, max_memory=max_memory,
                           progress=progress, **options)
    except (LimitReached, KeyboardInterrupt, MemoryError) as e:
        return Result("incomplete", "none", Stats(peak_memory_mb=round(peak_memory_mb(budget), 1)),
                      limit=stop_reason(e), model=os.fspath(model))
    if result.verdict != "error":
        given = [f"--reduction {result.reduction}"] + ([f"--atomicity {trail['atomicity']}"]
                                                         if trail.get("atomicity") else [])
        given += [_flag(k, v) for k, v in options.items() if v != OPTIONS[k]]
        result.notes.insert(0, f"{outcome}; so the model was checked instead, with the trail's options "
                               f"({' '.join(given)})")
    return result


def _guessed_discipline(outcome: Result, trail: dict[str, Any]) -> bool:
    """A replay that found nothing of a trail whose ``discipline`` violation came from a guessed (not declared)
    classification: declared predicates are checked on the replayed program, guesses are the reduction's."""
    from movers.reduce import REDUCTIONS, capabilities

    reduction = trail.get("reduction", "none")
    return (outcome.verdict == "ok" and trail.get("kind") == "discipline" and reduction in REDUCTIONS
            and capabilities(reduction).classifies)


def _flag(name: str, value: Any) -> str:
    if name == "races":
        return "--races" if value else ""
    if name in ("refine", "infer_locks"):
        return f"--{'' if value else 'no-'}{name.replace('_', '-')}"
    return f"--{name.replace('_', '-')} {value}"


def _replay(model: str | os.PathLike[str], trail: dict[str, Any]) -> Result | str:
    """The result of running the trail's steps on the model, or why and where the trail does not fit."""
    from movers.analysis.classify import Refine
    from movers.checker import Checker, init_violation, load, peak_memory_mb
    from movers.lang.errors import ModelSyntaxError
    from movers.search.limits import settle
    from movers.search.options import Options
    from movers.semantics.system import InitError

    try:
        program = load(Path(model), granularity=check_options(trail)["granularity"])
    except ModelSyntaxError as e:
        return Result("error", "none", error=str(e))
    except OSError as e:
        return Result("error", "none", error=f"{model}: cannot read the model: {e.strerror or e}")
    # None: the trail does not say (it has no hash).
    changed = model_hash(program.source) != trail["model_sha256"] if "model_sha256" in trail else None
    atomicity = trail.get("atomicity") if trail.get("atomicity") == "commit" else None
    checker = Checker(program, Options(atomicity=atomicity, races=check_options(trail)["races"]))
    ts = checker.system()
    steps = [(int(t), tuple(c)) for t, c in trail["steps"]]
    states: list[Any] = []
    while True:
        try:
            states.clear()
            outcome = _run_steps(ts, steps, changed, states)
            break
        except Refine as r:
            # Commit-atomicity's commit points come from a classification guessed and refined as the run goes
            # (as in the check): refine, and run the trail again from the start.
            checker.atomicity_classification.apply(r)  # type: ignore[union-attr]
        except InitError as e:
            settle()
            return Result("violation", "none", Stats(), [init_violation(e)], model=program.filename)
        except _Misfit as e:
            return str(e)
    settle()  # the outcome is known: building its report is not cut short by the limits
    state, found, done = outcome
    start = trail.get("cycle_start")
    if found is None and start is not None:
        opts = check_options(trail)
        why = lasso_violation(ts, states, steps, start, opts["liveness"], opts["fairness"] or "weak")
        found = None if why is None else ("liveness", why)
    elif found is None:
        dead = ts.deadlock(state)
        if dead:
            found = ("deadlock", dead)
    stats = Stats(states=done + 1, transitions=done, moves=done, max_depth=done,
                  peak_memory_mb=round(peak_memory_mb(), 1))
    if found is None:
        return Result("ok", "none", stats, model=program.filename, headline="replayed: the violation no longer happens",
                      notes=[f"replayed {done} steps: the violation ({trail.get('kind')}) no longer happens"])
    system = getattr(ts, "replay_system", ts)
    v = violation(system, found[0], found[1], steps[:done])
    if found[0] == "liveness":
        v.cycle_start = start
    # A replay is the place to study one counterexample: it carries the state after every step.
    attach_states(v, system)
    notes = [f"replayed {done} of the trail's {len(steps)} steps"
             + ("" if not changed else "; the model changed since the trail was written")]
    if found[0] != trail.get("kind"):
        notes.append(f"the trail recorded a violation of kind {trail.get('kind')}; this one is {found[0]}")
    return Result("violation", "none", stats, [v], model=program.filename, notes=notes,
                  headline="replayed: the violation happens again")


class _Misfit(Exception):
    """The trail does not fit the model: where and why."""


def _run_steps(ts: Any, steps: list[tuple[int, tuple[int, ...]]], changed: bool | None,
               states: list[Any]) -> tuple[Any, Any, int]:
    """Execute ``steps`` from the initial state: (the last state, the violation met or None, steps run); each
    state on the way (the initial one first) is appended to ``states``."""
    state = ts.initial()
    states.append(state)
    found: tuple[str, str] | None = ts.check_state(state)  # an invariant broken from the start: 0 steps
    done = 0
    for k, (t, choices) in enumerate(steps if found is None else [], 1):
        threads = state[2]
        if t < 0 or t >= len(threads):
            raise _Misfit(_misfit(k, f"the trail moves thread {t}; the model has {len(threads)} threads there",
                                  changed))
        if not threads[t]:
            raise _Misfit(_misfit(k, f"the trail moves thread {t}, which has ended there in the model", changed))
        node = _next(state, t)
        if not ts.enabled(state, t):
            raise _Misfit(_misfit(k, f"the trail moves thread {t}, which is blocked there in the model "
                                     f"({_at(node)})", changed))
        outs = ts.execute(state, t)
        o = next((o for o in outs if o.choices == choices), None)
        if o is None:
            has = ("no choice to resolve" if all(not o.choices for o in outs) else
                   "the choices " + " or ".join(str(list(o.choices)) for o in outs))
            raise _Misfit(_misfit(k, f"the trail resolves thread {t}'s step with the choices {list(choices)}; "
                                     f"the model's step there ({_at(node)}) has {has}", changed))
        done = k
        if o.violation is not None:
            found = o.violation
            break
        if o.state is None:
            raise _Misfit(_misfit(k, f"an assume() pruned the trail's run (thread {t}, {_at(node)})", changed))
        state = o.state
        states.append(state)
        v = ts.check_state(state)
        if v is not None:
            found = v
            break
    return state, found, done


def lasso_violation(ts: Any, states: list[Any], steps: list[tuple[int, tuple[int, ...]]], start: int,
                    liveness: str, fairness: str) -> str | None:
    """What the lasso whose states are ``states`` (``steps`` from the initial state, the cycle from step
    ``start`` on) violates of ``--liveness liveness`` under ``fairness`` (docs/liveness.md), checked on the run
    itself, not by a search: the cycle must come back to its first state (or, with no step, be the stutter
    loop of a state where no thread can move) and be fair; then termination fails unless every thread has
    ended there, starvation where a thread waits at every state of the cycle without moving, ``ltl`` where
    the run's word (each state's true ``@predicate`` functions) falsifies a formula. None: it violates
    nothing (the model changed)."""
    from movers.liveness.ltl import holds_on_lasso, parse
    from movers.liveness.properties import fairness_text, waiting

    if len(states) != len(steps) + 1:
        return None
    cycle = states[start:-1] if start < len(steps) else states[-1:]
    if start < len(steps) and states[start] != states[-1]:
        return None  # the cycle does not close
    count = len(states[-1][2])
    stutter = start == len(steps)
    ended = stutter and ts.ended(states[-1])  # the program has ended (daemon threads stop with it)
    if stutter and not ended and any(ts.enabled(states[-1], t) for t in range(count)):
        return None  # no stutter loop where a thread can move
    moved = {t for t, _ in steps[start:]}
    for t in range(count):
        if t in moved or fairness == "none" or ended:
            continue
        enabled = [ts.enabled(s, t) for s in cycle]
        if all(enabled) or (fairness == "strong" and any(enabled)):
            return None  # an unfair cycle: t could move and never does
    if liveness == "termination":
        if ended:
            return None
        return f"the program does not terminate {fairness_text(fairness)}: the cycle repeats forever"
    if liveness == "starvation":
        for t in range(count):
            if t not in moved and all(waiting(ts, s, t) for s in cycle):
                return f"thread {t} starves {fairness_text(fairness)}: waiting at {_at(_next(cycle[0], t))}"
        return None
    stem = [ts.atoms(s) for s in states[:start]]
    loop = [ts.atoms(s) for s in cycle]
    for d in ts.program.ltl_formulas:
        if not holds_on_lasso(parse(d.formula), stem, loop):
            return f"ltl {d.name} `{d.formula}` (line {d.line}) fails {fairness_text(fairness)}"
    return None


def _next(state: Any, t: int) -> Any:
    """Thread ``t``'s next node."""
    top = state[2][t][-1]
    return top[0].nodes[top[1]]


def _at(node: Any) -> str:
    return f"line {node.line}: {node.source}" if node.source else f"line {node.line}"


def _misfit(k: int, why: str, changed: bool | None) -> str:
    return (f"the trail does not fit the model at step {k}: {why}"
            + {True: " (the model changed since the trail was written)", None: "",
               False: " (the model has not changed since the trail was written)"}[changed])


__all__ = ["OPTIONS", "SCHEMA", "TrailError", "check_options", "model_hash", "read_trail", "replay", "trail_of",
           "write_trail"]
