from __future__ import annotations

import os
import resource
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

import movers

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run(src: str, **kw):
    """Check a model given as (dedented) source text."""
    return movers.check(textwrap.dedent(src).lstrip("\n") + "\n", **kw)


def states(src: str, **kw) -> int:
    r = run(src, **kw)
    assert r.verdict == "ok", (r.verdict, r.error, r.violations)
    return r.stats.states


def agrees_with_none(path, reduction: str, fewer_states: bool = True, **kw):
    """Check ``path`` with ``none`` and with ``reduction``: same verdict, same kind of violation, and (for
    reductions whose states are states of the full system) never more states."""
    base = movers.check(path, **kw)
    r = movers.check(path, reduction=reduction, **kw)
    assert r.verdict == base.verdict, (r.error, [(v.kind, v.message) for v in r.violations])
    if base.violations:
        assert r.violations[0].kind == base.violations[0].kind
    elif fewer_states:
        assert r.stats.states <= base.stats.states
    return r


def search_summary(r: movers.Result) -> tuple:
    """What two runs of the same search must agree on, state for state: verdict, states, transitions, each
    violation (kind, message) and the length of its trace."""
    return (r.verdict, r.stats.states, r.stats.transitions, tuple((v.kind, v.message) for v in r.violations),
            tuple(len(v.trace) for v in r.violations))


@pytest.fixture
def check():
    return run


# -- how far a child process has got, whatever the machine's load -----------------------------------------------
# The machine running the tests may be shared and busy: a child can be given a fraction of a core, so wall-clock
# delays ("send Ctrl-C after 1 s") and durations ("ends within 10 s") measure the load, not the child. Its CPU
# time measures what it did: these wait for, and bound, CPU seconds instead (Linux's /proc; elsewhere the wall
# clock, as before).


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def tree_cpu(pid: int) -> float | None:
    """CPU seconds (user and system) used so far by process ``pid`` and its live descendants (the workers of
    ``--workers``), or None without /proc."""
    me = _stat(pid)
    if me is None:
        return None
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {pid: int(me[11]) + int(me[12])}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != pid:
            st = _stat(int(entry))
            if st is not None:
                parents[int(entry)] = int(st[1])
                ticks[int(entry)] = int(st[11]) + int(st[12])
    tree, grew = {pid}, True
    while grew:
        more = {c for c, p in parents.items() if p in tree} - tree
        grew = bool(more)
        tree |= more
    return sum(ticks[p] for p in tree) / os.sysconf("SC_CLK_TCK")


def wait_for_cpu(proc: subprocess.Popen, seconds: float, timeout: float = 600) -> float:
    """Wait until ``proc`` (with its descendants) has used ``seconds`` of CPU time, or has ended; returns the CPU
    time it had used. Without /proc, sleeps ``seconds`` of wall-clock time."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            return seconds
        used = tree_cpu(proc.pid)
        if used is None:
            time.sleep(seconds)
            return seconds
        if used >= seconds:
            return used
        assert time.monotonic() < deadline, f"the child used {used:.1f} s of CPU in {timeout} s"
        time.sleep(0.02)


def children_cpu() -> float:
    """CPU seconds used by the child processes this process has waited for (``subprocess.run`` and
    ``communicate`` wait): the difference around a run is that run's CPU time, its own children's included."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
