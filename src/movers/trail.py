"""Trails: a violation saved to a file (``movers check --trail FILE``) and replayed (``movers replay MODEL
TRAIL``), as SPIN's ``.trail`` files are, so that a counterexample becomes a regression test.

A trail is a JSON object::

    {"movers_trail": 1, "model": "examples/racy_counter.py", "model_sha256": "…", "reduction": "none",
     "atomicity": null, "kind": "assertion", "message": "…", "steps": [[0, []], [1, []], [0, [1]], …]}

``steps`` are the atomic steps of the counterexample: the thread that moved and the resolution of its
choices (``choose``, which waiter a ``notify`` woke), whatever reduction found them. Replaying executes
them one by one from the initial state on the program (with commit-atomicity's shadow store when the
trail was found with ``--atomicity commit``), checking the model's properties after every step and, at the
end, for a deadlock. The outcome is the exit code of ``replay``:

- 1: the violation happens again (of the same kind), reported with its trace;
- 0: every step runs and nothing goes wrong: the model no longer has this violation;
- 2: the trail does not fit the model (a thread that cannot move there, a choice the step does not have, a
  file that is not a trail); the model's hash, kept in the trail, says whether the model changed.

A violation of an *inferred* classification (``discipline`` found by ``optimistic`` or ``transactions``
with ``--no-refine``) depends on the search that inferred it and is not replayed: only declared
predicates are checked on the way.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from movers.report.result import Result, Stats
from movers.report.steps import attach_states
from movers.report.trace import violation

SCHEMA = 1


class TrailError(Exception):
    """The trail cannot be read, or does not fit the model (``movers replay`` exits with 2)."""


def model_hash(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def trail_of(result: Result, source: str, model: str, atomicity: str | None = None) -> dict[str, Any]:
    """The trail of ``result``'s violation (it must have one)."""
    v = result.violations[0]
    return {
        "movers_trail": SCHEMA, "model": model, "model_sha256": model_hash(source), "reduction": result.reduction,
        "atomicity": atomicity, "kind": v.kind, "message": v.message,
        "steps": [[t, list(c)] for t, c in v.steps],
    }


def write_trail(path: str | os.PathLike[str], result: Result, source: str, model: str,
                atomicity: str | None = None) -> None:
    data = trail_of(result, source, model, atomicity)
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
    if not isinstance(data, dict) or "movers_trail" not in data:
        raise TrailError(f"{path}: not a movers trail (no 'movers_trail' field)")
    if data["movers_trail"] != SCHEMA:
        raise TrailError(f"{path}: trail schema {data['movers_trail']!r}; this movers reads schema {SCHEMA}")
    steps = data.get("steps")
    if not isinstance(steps, list) or not all(
            isinstance(s, list) and len(s) == 2 and type(s[0]) is int and isinstance(s[1], list)
            and all(type(c) is int for c in s[1]) for s in steps):
        raise TrailError(f"{path}: the trail's steps are not [thread, [choices]] pairs")
    return data


def replay(model: str | os.PathLike[str], trail: dict[str, Any]) -> Result:
    """Re-run ``trail`` on ``model`` (module docstring). Raises TrailError when it does not fit; a model that
    does not compile gives verdict "error"."""
    from movers.analysis.classify import Refine
    from movers.checker import Checker, init_violation, load, peak_memory_mb
    from movers.lang.errors import ModelSyntaxError
    from movers.semantics.system import InitError

    try:
        program = load(Path(model))
    except ModelSyntaxError as e:
        return Result("error", "none", error=str(e))
    except OSError as e:
        return Result("error", "none", error=f"{model}: cannot read the model: {e.strerror or e}")
    changed = "model_sha256" in trail and model_hash(program.source) != trail["model_sha256"]
    atomicity = trail.get("atomicity") if trail.get("atomicity") == "commit" else None
    checker = Checker(program, "none", atomicity=atomicity)
    ts = checker.system()
    steps = [(int(t), tuple(c)) for t, c in trail["steps"]]
    while True:
        try:
            outcome = _run_steps(ts, steps, changed)
            break
        except Refine as r:
            # Commit-atomicity's commit points come from a classification guessed and refined as the run goes
            # (as in the check): refine, and run the trail again from the start.
            checker.atomicity_classification.apply(r)  # type: ignore[union-attr]
        except InitError as e:
            return Result("violation", "none", Stats(), [init_violation(e)], model=program.filename)
    state, found, done = outcome
    if found is None:
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
    # A replay is the place to study one counterexample: it carries the state after every step.
    attach_states(v, system)
    notes = [f"replayed {done} of the trail's {len(steps)} steps"
             + ("" if not changed else "; the model changed since the trail was written")]
    if found[0] != trail.get("kind"):
        notes.append(f"the trail recorded a violation of kind {trail.get('kind')}; this one is {found[0]}")
    return Result("violation", "none", stats, [v], model=program.filename, notes=notes,
                  headline="replayed: the violation happens again")


def _run_steps(ts: Any, steps: list[tuple[int, tuple[int, ...]]], changed: bool) -> tuple[Any, Any, int]:
    """Execute ``steps`` from the initial state: (the last state, the violation met or None, steps run)."""
    state = ts.initial()
    found: tuple[str, str] | None = None
    done = 0
    for k, (t, choices) in enumerate(steps, 1):
        if t < 0 or t >= len(state[2]) or not state[2][t] or not ts.enabled(state, t):
            raise TrailError(_misfit(k, f"thread {t} cannot move there", changed))
        o = next((o for o in ts.execute(state, t) if o.choices == choices), None)
        if o is None:
            raise TrailError(_misfit(k, f"thread {t}'s step has no resolution {list(choices)}", changed))
        done = k
        if o.violation is not None:
            found = o.violation
            break
        if o.state is None:
            raise TrailError(_misfit(k, "an assume() pruned this run", changed))
        state = o.state
        v = ts.check_state(state)
        if v is not None:
            found = v
            break
    return state, found, done


def _misfit(k: int, why: str, changed: bool) -> str:
    return (f"the trail does not fit the model at step {k}: {why}"
            + (" (the model changed since the trail was written)" if changed else ""))


__all__ = ["SCHEMA", "TrailError", "model_hash", "read_trail", "replay", "trail_of", "write_trail"]
