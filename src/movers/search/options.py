"""What a check is asked to do: one frozen ``Options`` built once, from the command line (``cli.py``) or from
the Python API (``movers.check``), validated in one place (``problem``), and passed whole from the command
line to the checker to the search.

The limits are their own small value (``Limits``), since the budget they give (time, memory) is enforced
everywhere the time goes (``search/limits.py``), not only in the search loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from movers.search.limits import Budget, default_max_memory_mb, problems

# What one step is (``--granularity``): lang/granularity.py; the first is the default.
GRANULARITIES = ("access", "statement")

__all__ = ["ATOMICITY", "BACKENDS", "FAIRNESS", "GRANULARITIES", "LIVENESS", "Limits", "Options", "SEARCHES",
           "SYMMETRY"]

# The searches (``--search``); search/ has one module per strategy.
SEARCHES = ("dfs", "bfs")
ATOMICITY = ("commit", "reduction", "auto")
SYMMETRY = ("threads", "off")
# ``--liveness`` (liveness/properties.py) and ``--fairness`` (search/fair_cycles.py); weak is the default.
LIVENESS = ("termination", "starvation", "ltl")
FAIRNESS = ("weak", "strong", "none")
# ``--backend``: where the workers of the partitioned search run; the first is the default.
BACKENDS = ("processes", "ray")
RAY_INSTALL = "pip install 'movers[ray]'"


def have_ray() -> bool:
    """Whether Ray is installed, without importing it (the plain install never imports Ray)."""
    import importlib.util

    return importlib.util.find_spec("ray") is not None


@dataclass(frozen=True)
class Limits:
    """``max_memory`` is in MB; None means the default ceiling (``limits.default_max_memory_mb``)."""

    max_states: int | None = None
    time_limit: float | None = None
    max_depth: int | None = None
    max_memory: float | None = None

    def budget(self) -> Budget:
        """The time and memory part, enforced wherever the time goes (``movers.search.limits``)."""
        mem = self.max_memory if self.max_memory is not None else default_max_memory_mb()
        return Budget(self.time_limit, mem)

    def problem(self) -> str | None:
        bad = problems(max_states=self.max_states, time_limit=self.time_limit, max_depth=self.max_depth,
                       max_memory=self.max_memory)
        return f"{bad[0][0]} {bad[0][1]}" if bad else None


@dataclass(frozen=True)
class Options:
    """Everything a check is asked to do, but the model. The defaults are the command line's."""

    reduction: str = "none"
    search: str = "dfs"
    limits: Limits = field(default_factory=Limits)
    # The depth-first visited store: "exact", "hashcompact" (64-bit fingerprints) or "bitstate" (2^bits
    # bits), search/fingerprints.py.
    store: str = "exact"
    bits: int = 26
    # "threads": remember states up to a renaming of the threads (semantics/symmetry.py); "off".
    symmetry: str = "off"
    # Processes of the partitioned search (search/parallel.py); 1: the sequential search.
    workers: int = 1
    # Checking ``with atomic():`` blocks: "commit", "reduction", "auto", or None (docs/atomicity.md). The
    # checker also runs "proof", ``auto``'s first search, internally.
    atomicity: str | None = None
    # Distinct violations to find before stopping (--max-violations; --all-violations: no bound).
    max_violations: int = 1
    # With a guessed classification, a violated guess refines it and restarts (Stoller & Cohen, section 8).
    refine: bool = True
    infer_locks: bool = True
    # What one step is: "access" (at most one access to shared memory, as CPython interleaves) or "statement"
    # (one statement, the papers' granularity): lang/granularity.py, docs/language.md section 8.
    granularity: str = "access"
    # ``--races``: report a state where two threads' next steps are conflicting accesses that no
    # synchronisation orders (instrument/races.py). Off by default: flag-based algorithms race by design.
    races: bool = False
    # ``--liveness``: the property the fair-cycle search checks (search/fair_cycles.py), or None (safety only);
    # ``--fairness``: which cycles count (None: weak, when --liveness is given).
    liveness: str | None = None
    fairness: str | None = None
    # -- bug hunting (search/simulate.py, search/swarm.py): not proofs ------------------------------------------
    # ``--simulate``: random walks from the initial state (TLC's simulation mode) instead of a search;
    # ``--swarm N``: N diversified depth-first searches over bitstate stores, in processes (SPIN's swarm);
    # ``--seed``: the walks' random choices, or the swarm members' hash seeds and orders (None: drawn, printed).
    simulate: bool = False
    swarm: int | None = None
    seed: int | None = None
    # ``--backend``: where the partitioned search's workers run, "processes" (this machine,
    # search/parallel.py) or "ray" (Ray actors, search/ray_backend.py); ``--address``: the Ray cluster to join
    # (None: a local one for the run).
    backend: str = "processes"
    address: str | None = None

    @property
    def fairness_mode(self) -> str:
        return self.fairness or "weak"

    def but(self, **changes: Any) -> Options:
        """A copy with some fields changed (``dataclasses.replace``)."""
        return replace(self, **changes)

    def problem(self) -> str | None:
        """What these options refuse, whatever the model (the message the command line prints as
        ``movers: error: …``, or of an ``error`` result), or None. The reductions' refusals come from what each
        declares it supports (``reduce.refusal``). The model may refuse more (``--atomicity`` without an atomic
        block, ``--reduction transactions`` without suitable exclusive access predicates): ``Result.refused``."""
        from movers.reduce import REDUCTIONS

        if not isinstance(self.reduction, str) or self.reduction not in REDUCTIONS:
            return f"unknown reduction '{self.reduction}' (known: {', '.join(REDUCTIONS)})"
        if self.search not in SEARCHES:
            return f"unknown search '{self.search}' (dfs or bfs)"
        if self.granularity not in GRANULARITIES:
            return f"unknown granularity '{self.granularity}' (access or statement)"
        return (self.limits.problem() or self._violations_problem() or self._workers_problem()
                or self._backend_problem()
                or self._symmetry_problem() or self._store_problem() or self._atomicity_problem()
                or self._races_problem() or self._liveness_problem() or self._hunt_problem())

    def _violations_problem(self) -> str | None:
        from movers.reduce import capabilities

        n = self.max_violations
        if type(n) is not int or n < 1:
            return f"--max-violations must be a positive number (got {n!r})"
        if n > 1:
            workers = type(self.workers) is int and self.workers > 1
            why = [w for w, bad in (("--search bfs", self.search != "dfs"), (f"--workers {self.workers}", workers),
                                    (f"--reduction {self.reduction}", not capabilities(self.reduction).all_violations))
                   if bad]
            if why:
                return ("--all-violations / --max-violations: with the depth-first search only, not with "
                        + ", ".join(why))
        return None

    def _workers_problem(self) -> str | None:
        from movers.reduce import capabilities, names_text, supporting

        n = self.workers
        if type(n) is not int or n < 1:
            return f"--workers must be a positive number (got {n!r})"
        if n == 1:
            return None
        why = [w for w, bad in (
            (f"--reduction {self.reduction}", not capabilities(self.reduction).workers),
            ("--search bfs", self.search != "dfs"), ("--atomicity", self.atomicity is not None),
            ("--symmetry threads", self.symmetry != "off"), ("--store bitstate", self.store == "bitstate"),
            ("--max-depth", self.limits.max_depth is not None)) if bad]
        if not why:
            return None
        return (f"--workers {n}: the parallel search is the full search (--reduction "
                f"{names_text(supporting(lambda c: c.workers))}, depth-first, exact or hashcompact store) for now, "
                f"not with {', '.join(why)}")

    def _backend_problem(self) -> str | None:
        if self.backend not in BACKENDS:
            return f"unknown --backend '{self.backend}' (known: {', '.join(BACKENDS)})"
        if self.backend != "ray":
            return f"--address needs --backend ray (got --backend {self.backend})" if self.address else None
        if self.address is not None and (not isinstance(self.address, str) or not self.address):
            return f"--address must be a Ray cluster's address, such as 10.0.0.1:6379 (got {self.address!r})"
        if self.workers == 1:
            # One actor is still the partitioned search: the refusals of --workers apply.
            problem = self.but(workers=2)._workers_problem()
            if problem:
                return problem.replace("--workers 2", "--backend ray")
        why = [w for w, bad in (("--races", self.races), ("--liveness", self.liveness is not None),
                                ("--max-violations / --all-violations", self.max_violations != 1)) if bad]
        if why:
            return f"--backend ray: not with {', '.join(why)} (the partitioned search does not do them yet)"
        if not have_ray():
            return f"--backend ray needs Ray, which is not installed: {RAY_INSTALL}"
        return None

    def _symmetry_problem(self) -> str | None:
        from movers.reduce import capabilities, supporting

        if self.symmetry not in SYMMETRY:
            return f"unknown --symmetry '{self.symmetry}' (threads or off)"
        if self.symmetry == "off":
            return None
        if not capabilities(self.reduction).symmetry:
            ok = supporting(lambda c: c.symmetry)
            return (f"--symmetry threads: only with --reduction {', '.join(ok[:-1])} or {ok[-1]} for now (--reduction "
                    f"{self.reduction} is not shown to decide alike for threads that differ only in their numbers: "
                    "docs/reductions.md, \"Symmetry with ample sets\")")
        if self.search != "dfs":
            return "--symmetry threads needs --search dfs (the breadth-first search keeps every state)"
        if self.atomicity is not None:
            return "--symmetry threads: not with --atomicity (its phases are per thread)"
        return None

    def _store_problem(self) -> str | None:
        from movers.reduce import capabilities
        from movers.search.fingerprints import BITS_RANGE, STORES, memory_problem

        store, bits = self.store, self.bits
        if store == "exact":
            return None
        if store not in STORES:
            return f"unknown --store '{store}' (known: {', '.join(STORES)})"
        if self.search != "dfs":
            return (f"--store {store} needs --search dfs: a breadth-first search keeps every state for its "
                    "counterexample paths, so a lossy store would save nothing")
        if store not in capabilities(self.reduction).stores:
            return (f"--store {store}: not with --reduction {self.reduction}, whose passes re-expand every "
                    "stored state (it needs the states themselves)")
        if store == "bitstate":
            if not (type(bits) is int and BITS_RANGE[0] <= bits <= BITS_RANGE[1]):
                return (f"--bits {bits}: the bit array has 2^bits bits; give {BITS_RANGE[0]} to {BITS_RANGE[1]} "
                        f"({2 ** BITS_RANGE[1] // 8 // 2**20:,} MB at most)")
            return memory_problem(bits, self.limits.max_memory)
        return None

    def _atomicity_problem(self) -> str | None:
        from movers.reduce import capabilities, names_text, supporting

        mode = self.atomicity
        if mode is None:
            return None
        # "proof": --atomicity auto's first pass (Checker._run_auto), never given by a user.
        if mode not in ATOMICITY and mode != "proof":
            return f"unknown --atomicity '{mode}' (known: {', '.join(ATOMICITY)})"
        needed = "reduction" if mode == "proof" else mode
        if needed in capabilities(self.reduction).atomicity:
            return None
        allowed = supporting(lambda c: needed in c.atomicity)
        return (f"--atomicity {mode}: only with --reduction {names_text(allowed)} for now; no other reduction is "
                f"shown yet to preserve atomicity violations (--reduction {self.reduction} refused)")

    def _races_problem(self) -> str | None:
        from movers.reduce import capabilities, supporting

        if type(self.races) is not bool:
            return f"races must be True or False (got {self.races!r})"
        if not self.races:
            return None
        if self.granularity != "access":
            return ("--races needs --granularity access: a race is two single accesses, and a statement step makes "
                    "several at once, atomically")
        if not capabilities(self.reduction).races:
            ok = supporting(lambda c: c.races)
            return (f"--races: only with --reduction {', '.join(ok[:-1])} or {ok[-1]}; --reduction "
                    f"{self.reduction} may not reach every state where two conflicting accesses are both next "
                    "(docs/reductions.md)")
        if type(self.workers) is int and self.workers > 1:
            return f"--races: not with --workers {self.workers} (the parallel search does not look for races yet)"
        if self.atomicity is not None:
            return "--races: not with --atomicity (check the two separately)"
        return None

    def _liveness_problem(self) -> str | None:
        """What ``--liveness`` refuses: everything but the full depth-first search of the exact graph, which
        the fair-cycle search builds whole (a reduction, a symmetry quotient or a lossy store may lose cycles)."""
        from movers.liveness.properties import unavailable
        from movers.reduce import capabilities, names_text, supporting

        if self.liveness is None:
            return "--fairness needs --liveness" if self.fairness is not None else None
        if self.liveness not in LIVENESS:
            return f"unknown --liveness '{self.liveness}' (known: {', '.join(LIVENESS)})"
        if self.fairness is not None and self.fairness not in FAIRNESS:
            return f"unknown --fairness '{self.fairness}' (known: {', '.join(FAIRNESS)})"
        why = [w for w, bad in (
            (f"--reduction {self.reduction}", not capabilities(self.reduction).liveness),
            ("--search bfs", self.search != "dfs"),
            (f"--workers {self.workers}", type(self.workers) is int and self.workers > 1),
            ("--symmetry threads", self.symmetry != "off"), (f"--store {self.store}", self.store != "exact"),
            ("--max-depth", self.limits.max_depth is not None), ("--atomicity", self.atomicity is not None),
            ("--max-violations / --all-violations", self.max_violations != 1)) if bad]
        if why:
            return (f"--liveness {self.liveness}: the fair-cycle search builds the whole state graph of --reduction "
                    f"{names_text(supporting(lambda c: c.liveness))} (exact store, one process) for now, not with "
                    f"{', '.join(why)}")
        return unavailable(self.liveness)

    def _hunt_problem(self) -> str | None:
        """What ``--simulate`` and ``--swarm N`` refuse. A walk follows every enabled step, so it runs on the
        full system (``--reduction none``); a swarm member is the usual depth-first search over a bitstate
        store, with any reduction that runs on one (not an incremental one: its passes need the states)."""
        from movers.reduce import capabilities, names_text, supporting

        seed = self.seed
        if seed is not None and (type(seed) is not int or seed < 0):
            return f"--seed must be a non-negative integer (got {seed!r})"
        n = self.swarm
        if not self.simulate and n is None:
            return "--seed needs --simulate or --swarm N" if seed is not None else None
        if self.simulate and n is not None:
            return "--simulate and --swarm: give one (random walks, or diversified depth-first searches)"
        if n is not None and (type(n) is not int or n < 1):
            return f"--swarm must be a positive number (got {n!r})"
        what = "--simulate" if self.simulate else f"--swarm {n}"
        why = [w for w, bad in (
            ("--search bfs", self.search != "dfs"),
            (f"--workers {self.workers}", type(self.workers) is int and self.workers > 1),
            ("--backend ray", self.backend == "ray"),  # the members are processes of this machine, for now
            ("--liveness", self.liveness is not None), ("--atomicity", self.atomicity is not None),
            ("--max-violations / --all-violations", self.max_violations != 1)) if bad]
        if self.simulate:
            why += [w for w, bad in ((f"--reduction {self.reduction}", self.reduction != "none"),
                                     ("--symmetry threads", self.symmetry != "off"),
                                     (f"--store {self.store}", self.store != "exact")) if bad]
        else:
            caps = capabilities(self.reduction)
            why += [w for w, bad in ((f"--reduction {self.reduction}", "bitstate" not in caps.stores
                                      or caps.incremental),
                                     ("--store hashcompact", self.store == "hashcompact")) if bad]
        if why:
            usual = ("random walks over every enabled step (--reduction none, exact identity of states, one "
                     "process)" if self.simulate else
                     "depth-first searches over bitstate stores, one per process (--reduction "
                     f"{names_text(supporting(lambda c: 'bitstate' in c.stores and not c.incremental))})")
            return f"{what}: {usual}; not with {', '.join(why)}"
        if n is not None:
            from movers.search.fingerprints import BITS_RANGE, array_mb

            bits = self.bits
            if not (type(bits) is int and BITS_RANGE[0] <= bits <= BITS_RANGE[1]):
                return f"--bits {bits}: the bit array has 2^bits bits; give {BITS_RANGE[0]} to {BITS_RANGE[1]}"
            # Every member allocates its own bit array: together they must fit.
            mem = self.limits.max_memory if self.limits.max_memory is not None else default_max_memory_mb()
            if mem is not None and n * array_mb(bits) > mem:
                return (f"--swarm {n} --bits {bits}: the members' bit arrays take {n * array_mb(bits):,.0f} MB "
                        f"together, more than the memory limit ({mem:,.0f} MB): give fewer --bits")
        return None
