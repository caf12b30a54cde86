"""``--backend ray`` (search/ray_backend.py): the partitioned search on Ray actors stores the sequential search's
states, finds every bug twin's violation with a trace that replays, keeps the limits, and ends with exit code 3
when an actor is killed. The cluster checks run once, in tests/ray_cluster_checks.py, inside a private network
namespace (``unshare -n``: only loopback, so Ray listens nowhere else), skipped where one cannot be made or Ray
is not installed. The rest needs no cluster."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Any

import pytest
from conftest import EXAMPLES, ROOT

import movers
from movers.search.options import Options
from movers.search.ray_backend import have_ray

SRC = str(ROOT / "src")


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def _namespace() -> list[str] | None:
    """The command prefix that runs a program in a private network namespace, or None."""
    tool = shutil.which("unshare")
    if tool is None:
        return None
    for prefix in ([tool, "-n"], [tool, "-rn"]) if os.geteuid() == 0 else ([tool, "-rn"],):
        try:
            if subprocess.run([*prefix, "true"], capture_output=True, timeout=30).returncode == 0:
                return prefix
        except (OSError, subprocess.TimeoutExpired):
            pass
    return None


def _cluster_checks() -> dict[str, Any]:
    """Run tests/ray_cluster_checks.py: one local two-actor Ray cluster for every check, in a private network
    namespace. The timeout is the guard against a hang (a killed actor must end the run, not stall it)."""
    if not have_ray():
        pytest.skip("Ray is not installed (pip install 'movers[ray]')")
    prefix = _namespace()
    if prefix is None:
        pytest.skip("cannot make a private network namespace (unshare -n, or unshare -rn unprivileged): Ray would "
                    "listen on every interface")
    p = subprocess.run([*prefix, sys.executable, str(ROOT / "tests" / "ray_cluster_checks.py")],
                       capture_output=True, text=True, timeout=600, env=_env(), cwd=ROOT)
    assert p.returncode == 0, p.stderr[-4000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_two_actor_cluster() -> None:
    # One test, so that the cluster (seconds to start) runs once whatever pytest-xdist does.
    cluster = _cluster_checks()
    assert cluster["interfaces_up"] == ["lo"]  # Ray listened on loopback only

    # The sequential state count, with both stores.
    for c in cluster["counts"]:
        assert c["one"][0] == "ok" and c["ray"] == c["one"], c
        assert "2 Ray actors" in c["notes"][0], c
    assert {c["store"] for c in cluster["counts"]} == {"exact", "hashcompact"}
    assert len({c["model"] for c in cluster["counts"]}) >= 30  # every example verified within 20,000 states

    # Every bug twin's violation, its trace replayed to the same violation.
    bugs = cluster["bugs"]
    assert len(bugs) == len(list(EXAMPLES.glob("*_bug.py"))) >= 5
    for b in bugs:
        assert b["verdict"] == "violation" and b["kind"] == b["expected"], b
        assert b["replayed"] == "violation" and b["replayed_kind"] == b["kind"] and b["same_steps"], b

    # --address: a second process joins the cluster; an address where none answers is exit code 2, at once.
    joined = cluster["address"]
    assert joined["exit"] == 1 and joined["verdict"] == "violation", joined
    assert "2 Ray actors" in joined["notes"][0], joined
    assert cluster["no_cluster"]["exit"] == 2, cluster["no_cluster"]
    assert "no Ray cluster answers there" in cluster["no_cluster"]["output"], cluster["no_cluster"]

    # Ctrl-C.
    interrupted = cluster["interrupted"]
    assert interrupted["exit"] == 3 and interrupted["output"].startswith("incomplete: interrupted"), interrupted

    # The limits.
    assert cluster["max_states"] == ["incomplete", "max-states", 3_000]
    verdict, limit, states = cluster["time_limit"]
    assert (verdict, limit) == ("incomplete", "time-limit") and states > 0

    # An actor killed during the search: exit code 3 with the error, not a hang.
    killed = cluster["killed"]
    assert killed["exit"] == 3, killed
    assert "incomplete: a worker of the search (a Ray actor) died" in killed["output"], killed
    assert "a Ray actor died during the search" in killed["output"], killed


# -- without a cluster ----------------------------------------------------------------------------------------------


def test_refusals() -> None:
    assert "--address needs --backend ray" in (Options(address="10.0.0.1:6379").problem() or "")
    assert "unknown --backend" in (Options(backend="dask").problem() or "")
    for kw, word in (({"store": "bitstate"}, "--store bitstate"), ({"reduction": "static-por"}, "static-por"),
                     ({"races": True}, "--races"), ({"max_violations": 3}, "--max-violations")):
        problem = Options(backend="ray", **kw).problem() or ""  # type: ignore[arg-type]
        assert word in problem, (kw, problem)
    r = movers.check(EXAMPLES / "racy_counter.py", backend="ray", store="bitstate")
    assert r.verdict == "error" and r.refused


def test_without_ray_exit_2_says_how_to_install_it() -> None:
    # The plain install: Ray cannot be imported (sys.modules["ray"] = None makes it so).
    code = ("import sys; sys.modules['ray'] = None\n"
            "from movers.cli import main\n"
            f"sys.exit(main(['check', '--backend', 'ray', '--workers', '2', {str(EXAMPLES / 'racy_counter.py')!r}]))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=_env())
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "pip install 'movers[ray]'" in p.stdout + p.stderr


def test_the_plain_search_does_not_import_ray() -> None:
    code = ("import sys, movers\n"
            f"r = movers.check({str(EXAMPLES / 'racy_counter.py')!r}, workers=2)\n"
            "assert r.verdict == 'violation', r.verdict\n"
            "print('ray' in sys.modules)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=_env())
    assert p.returncode == 0 and p.stdout.strip() == "False", (p.stdout, p.stderr)


def test_the_owner_is_the_same_in_every_process() -> None:
    # Actors are separate interpreters: the owner of a state must not depend on addresses or on the string hash
    # seed (Python's own hash of a state would send one state to two owners, and it would be stored twice).
    code = ("import movers\n"
            "from movers.checker import Checker, load\n"
            "from movers.reduce import make_reduction\n"
            "from movers.search import ray_backend as rb, parallel\n"
            "from movers.search.options import Options\n"
            f"p = load({str(EXAMPLES / 'symmetric_workers.py')!r})\n"
            "ts = make_reduction('none', Checker(p, Options()).system()).system\n"
            "rb.install_statics(rb.number_statics(p, ts))\n"
            "ex, s, seen, out = parallel._expander(ts), ts.initial(), set(), []\n"
            "todo = [s]\n"
            "while todo and len(out) < 2000:\n"
            "    s = todo.pop()\n"
            "    if s in seen: continue\n"
            "    seen.add(s); out.append(rb.stable_hash(s[2][:2]) % 7)\n"
            "    todo.extend(x for x in ex(s) if type(x) is tuple)\n"
            "print(out)")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                           env=_env(PYTHONHASHSEED=seed)) for seed in ("1", "2")]
    for p in runs:
        assert p.returncode == 0, p.stderr
    first = json.loads(runs[0].stdout)
    assert first == json.loads(runs[1].stdout) and len(set(first)) > 1


def test_statics_are_numbered_alike_in_every_actor() -> None:
    # Fresh processes (the actors), whatever their string hash seed, number a program's objects alike: states
    # cross between actors with those objects as numbers.
    path = EXAMPLES / "dwyer_bounded_buffer_bug.py"
    modules = sorted(m for m in sys.modules if m.startswith("movers.") and sys.modules[m] is not None)
    code = ("from movers.search import ray_backend as rb\nfrom movers.search.options import Options\n"
            f"rb.import_modules({modules!r})\nfrom movers.checker import build_system\n"
            f"p, ts = build_system(open({str(path)!r}).read(), {str(path)!r}, Options())\n"
            "print(repr(rb.install_statics(rb.number_statics(p, ts))))")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                           env=_env(PYTHONHASHSEED=seed)) for seed in ("1", "2")]
    for p in runs:
        assert p.returncode == 0, p.stderr
    first = eval(runs[0].stdout)  # noqa: S307  (our own subprocess's repr of a list of strings)
    assert first == eval(runs[1].stdout) and len(first) > 40  # noqa: S307
