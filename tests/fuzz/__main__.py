"""``python -m tests.fuzz``: a fuzz campaign by hand, the replay of one input, the minimisation of failures."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from .campaign import CANARY_DIR, Pool, Record, campaign, minimize, save, slug
from .cases import Case, case_id, make_case


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    p.add_argument("--seed", type=int, default=0, help="the campaign's seed (default 0)")
    p.add_argument("--count", type=int, default=1000, help="number of inputs (default 1000)")
    p.add_argument("--start", type=int, default=0, help="index of the first input (default 0)")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--out", type=Path, help="where failures are saved (default: a new temporary directory)")
    p.add_argument("--minimize", type=Path, metavar="DIR",
                   help="after the campaign, minimise one input per distinct failure and write it under DIR")
    p.add_argument("--index", type=int, help="run only input INDEX of --seed and print its verdict")
    p.add_argument("--replay", type=Path, metavar="CASE_JSON", help="run a saved input again")
    return p


def _run_one(case: Case, out: Path) -> int:
    pool = Pool(1, out / "work")
    try:
        rec = pool.run([(case, case_id(case.seed, case.index))], keep=lambda r: True)[0]
    finally:
        pool.close()
    print(f"movers {' '.join(case.argv)}   ({case.origin})".encode("utf-8", "backslashreplace").decode())
    print(f"exit {rec.outcome.code}, signal {rec.outcome.signal}, {rec.outcome.wall:.2f} s, "
          f"killed {rec.outcome.killed}; files in {out / 'work' / case_id(case.seed, case.index)}")
    for f in rec.findings:
        print(f"[{f.category}] {f.signature}\n    {f.detail[-1500:]}")
    return 1 if rec.findings else 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="movers-fuzz-"))
    if args.replay:
        return _run_one(Case.from_dict(json.loads(args.replay.read_text())), out)
    if args.index is not None:
        return _run_one(make_case(args.seed, args.index, CANARY_DIR), out)
    totals = campaign(args.seed, args.count, args.jobs, out, progress=lambda s: print(s, file=sys.stderr),
                      start=args.start)
    print(f"seed {args.seed}, inputs {args.start}..{args.start + args.count - 1}, failures in {out / 'cases'}")
    print(totals.table())
    if totals.signatures:
        print("\ndistinct failures (inputs, smallest input):")
        for sig, recs in sorted(totals.signatures.items(), key=lambda kv: -totals.counts[kv[0]]):
            print(f"  {totals.counts[sig]:5}  {sig}   [{case_id(recs[0].case.seed, recs[0].case.index)}]")
    if args.minimize and totals.signatures:
        _minimize_all(totals.signatures, args.minimize, args.jobs, out)
    if totals.late_canaries:
        print(f"canaries that fired after their runs: {', '.join(totals.late_canaries)}")
    return 1 if totals.signatures or totals.late_canaries else 0


def _minimize_all(signatures: dict[str, list[Record]], target: Path, jobs: int, out: Path) -> None:
    pool = Pool(jobs, out / "work-min")
    try:
        for n, (sig, recs) in enumerate(sorted(signatures.items())):
            hang = sig.startswith("hang")
            small = minimize(pool, recs[0], sig, max_trials=12 if hang else 120)
            rec = pool.run([(small, f"final-{n}")], keep=lambda r: False)[0]
            if not any(f.signature == sig for f in rec.findings):
                rec = recs[0]  # the failure is flaky when minimised: keep the original
            d = save(rec, target / f"{n:02d}-{slug(sig)}")
            print(f"minimised: {sig} -> {d}", file=sys.stderr)
    finally:
        pool.close()


if __name__ == "__main__":
    sys.exit(main())
