"""A fuzz campaign: generate inputs, run them on a pool of warm workers, judge them, keep the failures.

The parent only generates, dispatches and judges; each worker (``worker.py``) runs one input at a time in
a fork of itself and is the watchdog of that fork. A worker that stops answering is killed with its process
group and replaced, so one bad input costs its budget, never the campaign.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .cases import TRAIL, Case, case_id, load_factor, make_case
from .hostile import mutate_trail
from .oracle import CATEGORIES, Finding, Outcome, judge

WORKER = Path(__file__).with_name("worker.py")
# Fixed, so that a seed gives the same model text wherever the campaign writes its output.
CANARY_DIR = os.path.join(tempfile.gettempdir(), "movers-fuzz-canary")
# Extra seconds a worker may take beyond a job's budget before it is presumed stuck itself.
WORKER_GRACE = 15.0
KEEP_PER_SIGNATURE = 3


class Worker:
    """One warm worker process and the protocol to it: a JSON job per line, a JSON reply per line."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1, start_new_session=True)
        self._read(60.0)

    def _read(self, timeout: float) -> dict | None:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        return json.loads(line) if line else None

    def run(self, job: dict, timeout: float) -> dict | None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return None
        return self._read(timeout)

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the worker's session: itself and its forks
        except ProcessLookupError:
            pass
        self.proc.wait()


@dataclass
class Record:
    case: Case
    outcome: Outcome
    findings: list[Finding]


@dataclass
class Totals:
    inputs: int = 0
    by_code: Counter = field(default_factory=Counter)
    by_category: Counter = field(default_factory=Counter)
    signatures: dict[str, list[Record]] = field(default_factory=dict)
    counts: Counter = field(default_factory=Counter)  # inputs per signature
    failing: int = 0
    late_canaries: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, r: Record) -> None:
        self.inputs += 1
        code = r.outcome.code
        self.by_code["hang" if r.outcome.killed else f"sig{r.outcome.signal}" if code is None else str(code)] += 1
        for cat in {f.category for f in r.findings}:
            self.by_category[cat] += 1
        self.failing += bool(r.findings)
        for sig in dict.fromkeys(f.signature for f in r.findings):
            kept = self.signatures.setdefault(sig, [])
            self.counts[sig] += 1
            # The smallest few inputs of each failure are enough to replay and minimise it.
            kept.append(dataclasses.replace(r, outcome=dataclasses.replace(
                r.outcome, stdout=r.outcome.stdout[:100_000], stderr=r.outcome.stderr[:100_000],
                files={n: d[:100_000] if d else d for n, d in r.outcome.files.items()})))
            kept.sort(key=lambda x: sum(len(v) for v in x.case.files.values()))
            del kept[KEEP_PER_SIGNATURE:]

    @property
    def failed(self) -> int:
        return self.failing

    def table(self) -> str:
        codes = ", ".join(f"{k}: {v}" for k, v in sorted(self.by_code.items()))
        rows = [("inputs", str(self.inputs)), ("by exit code", codes),
                ("tracebacks", str(self.by_category["traceback"])),
                ("hangs past a limit", str(self.by_category["hang"])),
                ("exit codes outside 0-3", str(self.by_category["exit-code"])),
                ("invalid JSON (or not the schema)", str(self.by_category["json"])),
                ("canaries triggered", str(self.by_category["canary"])),
                ("raw control characters", str(self.by_category["control"])),
                ("model strings not escaped", str(self.by_category["markup"])),
                ("HTML pages not well-formed", str(self.by_category["html"])),
                ("SARIF/JUnit not well-formed", str(self.by_category["format"])),
                ("trails", str(self.by_category["trail"])),
                ("lossy stores as proofs", str(self.by_category["lossy"])),
                ("--workers", str(self.by_category["workers"])),
                ("other contract failures", str(self.by_category["other"])),
                ("inputs failing", str(self.failed + len(self.late_canaries))),
                ("distinct failures", str(len(self.signatures))),
                ("seconds", f"{self.seconds:.1f}")]
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


class Pool:
    """``jobs`` workers fed from one queue; ``run`` returns the records in the order of the cases."""

    def __init__(self, jobs: int, work: Path) -> None:
        self.jobs = max(1, jobs)
        self.work = work
        work.mkdir(parents=True, exist_ok=True)
        os.makedirs(CANARY_DIR, exist_ok=True)
        self.workers: list[Worker | None] = [None] * self.jobs

    def close(self) -> None:
        for w in self.workers:
            if w is not None:
                w.close()

    def _job(self, case: Case, name: str, directory: Path, reference: str = "",
             argv: list[str] | None = None) -> tuple[dict, float]:
        """The job of the case's run, or (``reference``: a tag) of a run beside it: an ordinary fork whose
        output goes to ``TAG.out`` and ``TAG.err``."""
        job = {"id": name, "argv": argv or case.argv, "cwd": str(directory),
               "mode": "fork" if reference else case.mode,
               "stdout": "file" if reference else case.stdout, "sigint": [] if reference else case.sigint,
               "stdout_path": str(directory / (f"{reference}.out" if reference else "stdout")),
               "stderr_path": str(directory / (f"{reference}.err" if reference else "stderr")),
               "canary": os.path.join(CANARY_DIR, case_id(case.seed, case.index)) if case.canary else None,
               "budget": case.budget(load_factor()) + 0.5}
        return job, job["budget"] + 1.0 + WORKER_GRACE

    def _beside(self, slot: int, case: Case, name: str, directory: Path, tag: str,
                argv: list[str] | None = None) -> int | None:
        reply = self._send(slot, *self._job(case, name, directory, tag, argv))
        return reply.get("code") if reply else None

    def _execute(self, slot: int, case: Case, name: str) -> Record:
        directory = materialize(case, self.work / name)
        pre_codes = [self._beside(slot, case, name, directory, f"pre{k}", argv) for k, argv in enumerate(case.pre)]
        if case.trail_mutation is not None:
            corrupt_trail(case, directory / TRAIL)
        reference_code = self._beside(slot, case, name, directory, "ref") if case.stdout != "file" else None
        sequential_code = None
        if case.sequential_argv:
            sequential_code = self._beside(slot, case, name, directory, "seq", case.sequential_argv)
        for out_name in case.outputs:  # written by this run, not by a run beside it
            _remove(str(directory / out_name))
        job, timeout = self._job(case, name, directory)
        if job["canary"]:
            _remove(job["canary"])
        reply = self._send(slot, job, timeout)
        if reply is None:
            reply = {"code": None, "signal": None, "wall": timeout, "killed": True, "canary_fired": False}
        out = Outcome(reply.get("code"), reply.get("signal"), reply.get("wall", 0.0), reply.get("killed", False),
                      reply.get("canary_fired", False), _read(directory / "stdout"), _read(directory / "stderr"),
                      reference_code, files={n: _read_file(directory / n) for n in case.outputs},
                      pre_codes=pre_codes, sequential_code=sequential_code, leaked=reply.get("leaked", 0),
                      budget=job["budget"] - 0.5)
        if job["canary"]:
            _remove(job["canary"])
        return Record(case, out, judge(case, out))

    def _send(self, slot: int, job: dict, timeout: float) -> dict | None:
        w = self.workers[slot]
        if w is None or w.proc.poll() is not None:
            w = self.workers[slot] = Worker()
        reply = w.run(job, timeout)
        if reply is None or "harness_error" in reply:
            w.close()
            self.workers[slot] = None
            if reply is not None:
                raise RuntimeError(f"fuzz worker failed on {job['id']}: {reply['harness_error']}")
        return reply

    def run(self, cases: Iterable[tuple[Case, str]], on_record: Callable[[Record], None] | None = None,
            keep: Callable[[Record], bool] = lambda r: bool(r.findings)) -> list[Record]:
        """Run every (case, name); the directory of a case is deleted unless ``keep`` says otherwise."""
        feed = enumerate(cases)  # lazily: a campaign's inputs need not all be in memory at once
        results: dict[int, Record] = {}
        lock = threading.Lock()
        errors: list[BaseException] = []

        def loop(slot: int) -> None:
            while not errors:
                with lock:
                    item = next(feed, None)
                if item is None:
                    return
                i, (case, name) = item
                try:
                    rec = self._execute(slot, case, name)
                except BaseException as e:  # noqa: BLE001 - reported by the main thread
                    errors.append(e)
                    return
                if not keep(rec):
                    shutil.rmtree(self.work / name, ignore_errors=True)
                with lock:
                    results[i] = rec
                    if on_record:
                        on_record(rec)

        threads = [threading.Thread(target=loop, args=(s,), daemon=True) for s in range(self.jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return [results[i] for i in sorted(results)]


def materialize(case: Case, directory: Path) -> Path:
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    for name, data in case.files.items():
        (directory / name).write_bytes(data)
    for name, kind in case.special.items():
        if kind == "fifo":
            os.mkfifo(directory / name)
        elif kind == "dir":
            (directory / name).mkdir()
        elif kind == "symlink-loop":
            os.symlink(name, directory / name)
    return directory


def corrupt_trail(case: Case, path: Path) -> None:
    """Apply the case's trail mutation to the trail its ``pre`` run wrote (or to a synthetic one)."""
    rng = random.Random(f"movers-fuzz/{case.seed}/{case.index}/trail")
    data, _ = mutate_trail(_read_file(path), rng, case.trail_mutation or "none")
    _remove(str(path))
    if case.trail_mutation == "dir":
        path.mkdir()
    elif data is not None:
        path.write_bytes(data)


# What the oracle reads of a file a run writes (an HTML page of a huge model can be large).
OUTPUT_CAP = 4_000_000


def _read_file(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(OUTPUT_CAP)
    except OSError:
        return None


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def slug(signature: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", signature).strip("_")[:100]


def save(record: Record, directory: Path) -> Path:
    """Write a failing input so that ``python -m tests.fuzz --replay DIR/case.json`` runs it again."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in record.case.files.items():
        (directory / name).write_bytes(data)
    (directory / "case.json").write_text(json.dumps(record.case.to_dict(), indent=1))
    (directory / "stdout").write_bytes(record.outcome.stdout[:200_000])
    (directory / "stderr").write_bytes(record.outcome.stderr[:200_000])
    for out_name, data in record.outcome.files.items():
        if data is not None:
            (directory / f"written-{out_name}").write_bytes(data[:200_000])
    o = record.outcome
    lines = [f"argv: movers {' '.join(repr(a) if (' ' in a or not a) else a for a in record.case.argv)}",
             f"mode: {record.case.mode}, stdout: {record.case.stdout}, sigint: {record.case.sigint}",
             f"exit: {o.code}, signal: {o.signal}, wall: {o.wall:.2f} s, killed: {o.killed}",
             f"origin: {record.case.origin}", ""]
    lines += [f"[{f.category}] {f.signature}\n    {f.detail[-800:]}" for f in record.findings]
    # Hostile file names are str with lone surrogates (undecodable bytes): written as escapes.
    (directory / "findings.txt").write_text("\n".join(lines) + "\n", errors="backslashreplace")
    return directory


def campaign(seed: int, count: int, jobs: int, out: Path, progress: Callable[[str], None] | None = None,
             start: int = 0) -> Totals:
    """Run inputs ``start .. start+count-1`` of ``seed``; failures are saved under ``out/cases``."""
    totals = Totals()
    t0 = time.monotonic()
    pool = Pool(jobs, out / "work")
    last = [t0]

    def on_record(r: Record) -> None:
        totals.add(r)
        if r.findings:
            save(r, out / "cases" / case_id(r.case.seed, r.case.index))
        if progress and time.monotonic() - last[0] > 10:
            last[0] = time.monotonic()
            progress(f"{totals.inputs}/{count} inputs, {totals.failed} failing, "
                     f"{len(totals.signatures)} distinct, {last[0] - t0:.0f} s")

    cases = ((make_case(seed, i, CANARY_DIR), case_id(seed, i)) for i in range(start, start + count))
    try:
        pool.run(cases, on_record)
    finally:
        pool.close()
        totals.seconds = time.monotonic() - t0
        shutil.rmtree(out / "work", ignore_errors=True)
    # A canary that appears after its run was judged (a detached process, a late write) still counts.
    late = sorted(n for n in os.listdir(CANARY_DIR) if n.startswith(f"s{seed}-i"))
    if late:
        totals.by_category["canary"] += len(late)
        totals.late_canaries = late
    write_summary(totals, out)
    return totals


def write_summary(totals: Totals, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, object] = {
        sig: {"inputs": totals.counts[sig], "smallest": [case_id(r.case.seed, r.case.index) for r in rs]}
        for sig, rs in totals.signatures.items()}
    if totals.late_canaries:
        summary["canary: fired after its run"] = {"inputs": len(totals.late_canaries),
                                                  "smallest": totals.late_canaries[:KEEP_PER_SIGNATURE]}
    (out / "summary.json").write_text(json.dumps({"table": totals.table(), "signatures": summary}, indent=1))


def reproduces(pool: Pool, cases: list[Case], signature: str, tag: str) -> list[bool]:
    named = [(c, f"{tag}-{k}") for k, c in enumerate(cases)]
    recs = pool.run(named, keep=lambda r: False)
    return [any(f.signature == signature for f in r.findings) for r in recs]


def minimize(pool: Pool, record: Record, signature: str, max_trials: int = 150) -> Case:
    """A smaller input with the same failure: fewer options, then fewer lines (delta debugging)."""
    case = dataclasses.replace(record.case, files=dict(record.case.files), argv=list(record.case.argv))
    trials = 0
    tag = f"min-{case_id(case.seed, case.index)}"
    # Options first: each (option, value) group other than the limits, which the oracle needs.
    groups = _option_groups(case.argv[2:])
    i = 0
    while i < len(groups) and trials < max_trials:
        if groups[i][0] in ("--time-limit", "--max-states"):
            i += 1
            continue
        trial = dataclasses.replace(case, argv=case.argv[:2] + [a for g in groups[:i] + groups[i + 1:] for a in g])
        trials += 1
        if reproduces(pool, [trial], signature, tag)[0]:
            case, groups = trial, groups[:i] + groups[i + 1:]
        else:
            i += 1
    name = next((n for n in case.files if n.endswith(".py") or n == "pass"), None)
    if name is None:
        return case
    lines = case.files[name].split(b"\n")
    chunk = max(1, len(lines) // 2)
    while chunk >= 1 and trials < max_trials:
        starts = list(range(0, len(lines), chunk))
        candidates = [lines[:s] + lines[s + chunk:] for s in starts]
        batch = [dataclasses.replace(case, files={**case.files, name: b"\n".join(c)}) for c in candidates]
        batch = batch[: max(1, max_trials - trials)]
        trials += len(batch)
        hits = reproduces(pool, batch, signature, tag)
        if any(hits):
            k = hits.index(True)
            lines, case = candidates[k], batch[k]
            chunk = min(chunk, max(1, len(lines) // 2))
        elif chunk == 1:
            break
        else:
            chunk //= 2
    return case


def _option_groups(options: list[str]) -> list[list[str]]:
    groups: list[list[str]] = []
    for a in options:
        if a.startswith("--") or not groups:
            groups.append([a])
        else:
            groups[-1].append(a)
    return groups


def findings_by_category(records: list[Record]) -> dict[str, int]:
    c: Counter = Counter()
    for r in records:
        for cat in {f.category for f in r.findings}:
            c[cat] += 1
    return {k: c[k] for k in CATEGORIES}
