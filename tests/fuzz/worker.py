"""The fuzz worker: a warm Python process that runs `movers` on many inputs, each in a fork of itself.

Spawning a Python process per input costs ~0.3 s, most of it importing; a fork of a process that has
already imported ``movers.cli`` costs a few milliseconds and still gives every input a process of its own:
real file descriptors for stdout and stderr, a real exit code, real signals, and no state that leaks from
one input to the next (recursion limit, int-digit limit, rlimits, caches). The worker is also the watchdog
of its children: a child that overruns its budget gets SIGABRT (faulthandler dumps its Python stack, which
names the loop it hangs in) and then SIGKILL.

A share of inputs must see a real interpreter start (stdout closed before Python starts, a broken pipe,
/dev/full, Ctrl-C at a random moment): those run as real subprocesses of the ``movers`` console script.

Run as a script (``python worker.py``): one JSON job per line on stdin, one JSON reply per line on stdout.
It imports nothing from the fuzz package, so it starts as fast as Python and movers allow.
"""

from __future__ import annotations

import faulthandler
import io
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
import traceback
from typing import Any

# Children may not take the machine down: a runaway model that allocates gets MemoryError instead.
MEMORY_LIMIT = 4 * 1024**3
# How long an aborted child may take to write its stack dump before it is killed.
ABORT_GRACE = 1.0


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _entry_point() -> Any:
    """The function the ``movers`` console script calls (pyproject: ``movers.cli:run``)."""
    import movers.cli

    return getattr(movers.cli, "run", None) or (lambda: sys.exit(movers.cli.main()))


def _exit_like_python(entry: Any) -> int:
    """Run ``entry`` as the body of ``python -c`` would run, and return the exit status Python would give.

    An uncaught exception prints a traceback and gives 1; KeyboardInterrupt kills the process with SIGINT
    (as CPython does since 3.8); a failed flush of stdout at exit prints "Exception ignored" and gives 120.
    """
    code: int
    try:
        # A Ctrl-C sent before now is held back until the console script runs: before that point a real
        # process would still be in Python's own start-up, which is not movers' to handle.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        entry()
        code = 0
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code & 0xFF
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        traceback.print_exc()
        _flush_at_exit()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    except BaseException:  # noqa: BLE001 - this is the interpreter's own last resort
        traceback.print_exc()
        code = 1
    # CPython gives 120 whatever the code was when the final flush of stdout fails.
    return code if _flush_at_exit() else 120


def _flush_at_exit() -> bool:
    ok = True
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        ok = False
        try:
            print("Exception ignored in: <_io.TextIOWrapper name='<stdout>'>", file=sys.stderr)
            traceback.print_exc()
        except BaseException:  # noqa: BLE001
            pass
    try:
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001
        pass
    return ok


def _child(job: dict[str, Any], entry: Any) -> None:
    """In the forked child: become ``movers ARGV`` with stdout and stderr on files, then exit."""
    code = 1
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        # A process group of its own, as a shell gives a command: Ctrl-C reaches every process of the run
        # (--workers forks), and the watchdog can stop them all.
        os.setpgid(0, 0)
        os.chdir(job["cwd"])
        _limit_memory()
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(job["stdout_path"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        err = os.open(job["stderr_path"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        for fd in (null, out, err):
            os.close(fd)
        # What CPython builds at start-up for a non-terminal stdout and stderr.
        sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
        sys.stderr = sys.__stderr__ = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", line_buffering=True
        )
        faulthandler.enable(file=2)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        sys.argv = ["movers", *job["argv"]]
        code = _exit_like_python(entry)
    finally:
        os._exit(code)


def _wait(pid: int, proc: subprocess.Popen[bytes] | None, job: dict[str, Any], start: float) -> dict[str, Any]:
    """Wait for a child, sending the planned SIGINTs, and abort it once it overruns its budget."""
    pidfd = os.pidfd_open(pid)
    try:
        sigints = sorted(job.get("sigint", []))
        budget = float(job["budget"])
        killed = False
        abort_at = start + budget
        while True:
            now = time.monotonic()
            next_event = min([abort_at] + [start + d for d in sigints])
            ready, _, _ = select.select([pidfd], [], [], max(0.0, next_event - now))
            if ready:
                break
            now = time.monotonic()
            while sigints and start + sigints[0] <= now:
                sigints.pop(0)
                _signal(pid, signal.SIGINT)
            if now >= abort_at:
                if not killed:
                    killed = True
                    _signal(pid, signal.SIGABRT)
                    abort_at = now + ABORT_GRACE
                else:
                    _signal(pid, signal.SIGKILL)
                    abort_at = now + 60
        wall = time.monotonic() - start
        if proc is not None:
            status = proc.wait()
            code, sig = (status, None) if status >= 0 else (None, -status)
        else:
            _, raw = os.waitpid(pid, 0)
            code = os.WEXITSTATUS(raw) if os.WIFEXITED(raw) else None
            sig = os.WTERMSIG(raw) if os.WIFSIGNALED(raw) else None
        return {"code": code, "signal": sig, "wall": wall, "killed": killed, "leaked": _reap_group(pid, killed)}
    finally:
        os.close(pidfd)


def _signal(pid: int, sig: int) -> None:
    """To the run's process group (its leader is the run), as a terminal sends Ctrl-C."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


# How long processes of a run's group may outlive it (a --workers process finishing its exit).
LEAK_GRACE = 2.0


def _group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) == pgid:
            out.append(int(entry))
    return out


def _reap_group(pgid: int, killed: bool) -> int:
    """Kill what is left of a run's process group; return how many were left running after the grace."""
    deadline = time.monotonic() + (0.0 if killed else LEAK_GRACE)
    members = _group_members(pgid)
    while members and time.monotonic() < deadline:
        time.sleep(0.05)
        members = _group_members(pgid)
    if members:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return 0 if killed else len(members)


def _subprocess(job: dict[str, Any]) -> tuple[int, subprocess.Popen[bytes]]:
    """Start the real console script, with stdout as the job asks: a file, closed, a broken pipe, /dev/full."""
    script = os.path.join(os.path.dirname(sys.executable), "movers")
    cmd = [script] if os.path.exists(script) else [
        sys.executable, "-c", "import sys; sys.argv[0] = 'movers'; from movers.cli import run; run()"]
    mode = job.get("stdout", "file")
    err = open(job["stderr_path"], "wb")
    close_fd1 = mode == "closed"

    def pre() -> None:
        _limit_memory()
        if close_fd1:
            os.close(1)

    out: Any = None
    if mode == "full":
        out = open("/dev/full", "wb")
    elif mode == "broken":
        out = subprocess.PIPE
    elif mode == "file":
        out = open(job["stdout_path"], "wb")
    env = dict(os.environ, PYTHONFAULTHANDLER="1")
    proc = subprocess.Popen(cmd + job["argv"], cwd=job["cwd"], stdin=subprocess.DEVNULL, stdout=out,
                            stderr=err, preexec_fn=pre, env=env, process_group=0)
    if mode == "broken":
        assert proc.stdout is not None
        proc.stdout.close()  # the reader went away before the first write: every write gets EPIPE
    elif out is not None:
        out.close()
    err.close()
    if mode != "file":
        open(job["stdout_path"], "wb").close()
    return proc.pid, proc


def run_job(job: dict[str, Any], entry: Any) -> dict[str, Any]:
    canary = job.get("canary")
    start = time.monotonic()
    if job.get("mode") == "proc":
        pid, proc = _subprocess(job)
        reply = _wait(pid, proc, job, start)
    else:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(job, entry)
        try:
            os.setpgid(pid, pid)  # also here, so that no signal can reach the group before the child made it
        except (PermissionError, ProcessLookupError):
            pass  # the child has already exec'd or exited
        reply = _wait(pid, None, job, start)
    reply["canary_fired"] = bool(canary) and os.path.lexists(canary)
    reply["id"] = job["id"]
    return reply


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the campaign's parent decides when to stop
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # nothing else may write on the protocol channel
    entry = _entry_point()
    print(json.dumps({"ready": True}), file=proto)
    for line in sys.stdin:
        job = json.loads(line)
        try:
            reply = run_job(job, entry)
        except Exception as e:  # noqa: BLE001 - a harness error is reported, not fatal to the campaign
            reply = {"id": job.get("id"), "harness_error": f"{type(e).__name__}: {e}"}
        print(json.dumps(reply), file=proto)


if __name__ == "__main__":
    main()
