"""The checks of ``--backend ray`` that need a Ray cluster, run by tests/test_ray_backend.py in one process inside
a private network namespace (so that Ray, which listens on every interface, listens on loopback only), with one
local two-actor cluster shared by all of them (starting Ray takes seconds). Prints one JSON object: each
check's findings, which the tests assert on. Not a test module (pytest does not collect it)."""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
# A counter with more states than a few rounds take: the actor is killed while the search runs.
BIG = (EXAMPLES / "counter_bench.py").read_text().replace("K = 3", "K = 5").replace("L = 4", "L = 6")


def loopback_up() -> list[str]:
    """Bring the namespace's loopback up (what ``ip link set lo up`` does, without iproute2); the interfaces
    that are up, which must be loopback only."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))
        up = []
        for _, name in socket.if_nameindex():
            f = struct.unpack("16sH", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, struct.pack("16sH", name.encode(), 0)))[1]
            if f & IFF_UP:
                up.append(name)
    return up


def main() -> None:
    out: dict[str, object] = {"interfaces_up": loopback_up()}
    import ray

    import movers
    from movers.cli import main as cli
    from movers.search import ray_backend
    from movers.trail import read_trail, replay, write_trail

    t = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    out["ray_start_s"] = round(time.perf_counter() - t, 1)

    # The sequential state count, with both stores the partitioned search takes: every example the sequential
    # search verifies within 20,000 states (about a second each, most of it the actors' start), with the exact
    # store, and three of them with hashcompact as well.
    counts = []
    hashcompact = {"symmetric_workers", "atomicity_acquire2", "dining_philosophers_ordered"}
    for path in sorted(EXAMPLES.glob("*.py")):
        one = movers.check(path, max_states=20_000)
        if one.verdict != "ok":
            continue
        name = path.stem
        for store in ("exact", "hashcompact") if name in hashcompact else ("exact",):
            many = movers.check(path, workers=2, backend="ray", store=store, time_limit=300)
            counts.append({"model": name, "store": store, "one": [one.verdict, one.stats.states, one.stats.transitions],
                           "ray": [many.verdict, many.stats.states, many.stats.transitions],
                           "notes": many.notes, "error": many.error})
    out["counts"] = counts

    # Every bug twin's violation, with a trace that replays (movers replay) to the same violation.
    bugs = []
    for path in sorted(EXAMPLES.glob("*_bug.py")):
        r = movers.check(path, workers=2, backend="ray", time_limit=300)
        seq = movers.check(path)
        item: dict[str, object] = {"model": path.stem, "verdict": r.verdict, "error": r.error,
                                   "expected": seq.violations[0].kind if seq.violations else None}
        if r.violations:
            v = r.violations[0]
            trail = Path(f"/tmp/movers-ray-{path.stem}.trail")
            write_trail(trail, r, path.read_text(), str(path), None)
            again = replay(path, read_trail(trail))
            trail.unlink()
            item.update(kind=v.kind, steps=len(v.trace), replayed=again.verdict,
                        replayed_kind=again.violations[0].kind if again.violations else None,
                        same_steps=[(s.thread, s.line, s.changes) for s in v.trace]
                        == [(s.thread, s.line, s.changes) for s in (again.violations[0].trace if again.violations
                                                                    else [])])
        bugs.append(item)
    out["bugs"] = bugs

    # Another process joins this cluster with --address (here as a user would: the command line).
    address = ray.get_runtime_context().gcs_address
    p = subprocess.run([sys.executable, "-m", "movers", "check", "--backend", "ray", "--address", address,
                        "--workers", "2", "--json", str(EXAMPLES / "dwyer_deadlock_bug.py")],
                       capture_output=True, text=True, timeout=300)
    joined = json.loads(p.stdout) if p.stdout.startswith("{") else {}
    out["address"] = {"exit": p.returncode, "verdict": joined.get("verdict"), "notes": joined.get("notes"),
                      "stderr": p.stderr[-2000:]}
    p = subprocess.run([sys.executable, "-m", "movers", "check", "--backend", "ray", "--address", "127.0.0.1:1",
                        str(EXAMPLES / "racy_counter.py")], capture_output=True, text=True, timeout=300)
    out["no_cluster"] = {"exit": p.returncode, "output": p.stdout + p.stderr}

    # Ctrl-C (SIGINT) during the search: exit code 3, "interrupted", the actors stopped.
    huge = Path("/tmp/movers-ray-huge.py")
    huge.write_text((EXAMPLES / "counter_bench.py").read_text().replace("K = 3", "K = 6").replace("L = 4", "L = 5"))
    p = subprocess.Popen([sys.executable, "-m", "movers", "check", "--backend", "ray", "--address", address,
                          "--workers", "2", "--time-limit", "300", str(huge)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    # Once the search runs: its first progress line on stderr (after LOG_EVERY seconds of search), however long
    # the start took on a loaded machine. Ray's own warnings come on stderr too, and are passed over.
    assert p.stderr is not None
    for line in p.stderr:
        if line.startswith("movers: "):
            break
    p.send_signal(signal.SIGINT)
    stdout, _ = p.communicate(timeout=120)
    huge.unlink()
    out["interrupted"] = {"exit": p.returncode, "output": stdout}

    # --max-states is never passed; the time limit ends the search.
    r = movers.check(source=BIG, workers=2, backend="ray", max_states=3_000, time_limit=300)
    out["max_states"] = [r.verdict, r.limit, r.stats.states]
    r = movers.check(source=BIG, workers=2, backend="ray", time_limit=2)
    out["time_limit"] = [r.verdict, r.limit, r.stats.states]

    # An actor killed during the search: the command line ends (exit code 3) with the error, never hangs.
    seen = threading.Event()

    def kill_one() -> None:
        seen.wait(120)
        actors = list(ray_backend.CURRENT)
        if actors:
            ray.kill(actors[1])

    killer = threading.Thread(target=kill_one, daemon=True)
    killer.start()
    big = Path("/tmp/movers-ray-big.py")
    big.write_text(BIG)
    real_rounds = ray_backend._rounds

    def rounds(ray_, actors, options, progress, *rest):  # type: ignore[no-untyped-def]
        # The first progress report means rounds have run for half a second: the killer kills then.
        def hook(stats):  # type: ignore[no-untyped-def]
            seen.set()
            if progress is not None:
                progress(stats)

        return real_rounds(ray_, actors, options, hook, *rest)

    ray_backend._rounds = rounds  # type: ignore[assignment]
    buf = io.StringIO()
    t = time.perf_counter()
    with contextlib.redirect_stdout(buf):
        code = cli(["check", "--backend", "ray", "--workers", "2", "--time-limit", "300", str(big)])
    ray_backend._rounds = real_rounds  # type: ignore[assignment]
    out["killed"] = {"exit": code, "output": buf.getvalue(), "seconds": round(time.perf_counter() - t, 1)}
    big.unlink()
    ray.shutdown()
    print(json.dumps(out))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main()
