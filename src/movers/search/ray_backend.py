"""``--backend ray``: the partitioned search of ``--workers N`` on N Ray actors, on one machine or a cluster.

Ray (Moritz et al., "Ray: A Distributed Framework for Emerging AI Applications", OSDI 2018) gives *actors*:
processes, placed by Ray on the cluster's nodes, whose methods are called remotely; a call returns *object
references* to its results, which Ray carries between nodes (its object store), and ``ray.get``/``ray.wait``
deliver them, or an error when the actor died. Ray does the transport, the placement and the failure
reporting; movers adds no protocol of its own.

**The same partition.** As with ``--workers`` (parallel.py), each actor *owns* the states whose hash of the
first two threads' stacks falls in its share, keeps them in its own visited store (``exact`` or
``hashcompact``), and searches depth-first from them; a successor owned by another actor goes to its owner in
a batch. Each state is stored by exactly one actor, so the states and transitions are the sequential
search's. Actors are separate interpreters, maybe on other machines, so the hash is not Python's (a code
object hashes by its address, a string by the process's seed) but ``stable_hash``: the same in every process.

**Rounds.** The driver (the checker's process) runs the search in rounds: each actor with work searches for a
time slice (``SLICE`` seconds, or until it has no work; the first rounds are shorter, ``FIRST_ROUND``
expansions and twice as many each round, so that the actors begin in step and a violation close to the
initial state costs few states), and returns its batches, one per owner, as object
references; the driver hands each owner the references of its batches for the next round (the states travel
from actor to actor through Ray's object store, not through the driver). The search is over when no actor
has work and no batch is under way: the driver sees both after each round, so no counter is needed, and no
actor ever calls another (two actors waiting on each other's calls deadlock in Ray unless each accepts two
calls at once). The driver owns the limits between rounds: the time limit, Ctrl-C, ``--max-memory`` (the
actors' resident memory added up, each reported after every round), and ``--max-states``, given to the
actors as shares of what is left, so that no round passes it.

**Violations.** The first violation an actor finds ends its round, and the search after the round. As with
``--workers``, each actor keeps per state its parent's global number and its position among the parent's
successors; the driver follows them back through the owners (``parents``), makes the states of that path
again from the initial state (``parallel._rebuild``), and the trace is replayed as always.

**The program in each actor.** Each actor compiles the model's source itself, as the checker did, and numbers
the program's code, class and function objects in an order that depends only on the program and the modules
of movers imported (the driver's, in every actor: ``number_statics``); states cross between actors with those
objects as numbers (``parallel.encode``). The driver checks that every actor numbered the same objects, by
their names. No state crosses to the driver: a violation's state is reported by its ``stable_hash``, which the
driver's own rebuilt path must reach.

**When an actor dies** (killed, or its node lost), Ray reports the actor's death to whoever waits for its
result: the search ends as incomplete (limit ``worker-lost``, exit code 3), the states stored so far counted
from the actors still alive. Ray itself notices a lost node after its health checks fail (about 30 s by
default), and the search ends then.
"""

from __future__ import annotations

import gc
import importlib
import os
import socket
import sys
import time
import types
import zlib
from array import array
from collections.abc import Callable
from typing import Any

from movers.ir.program import UNBOUND, Bool, ClassInfo, Code, Func, Ref
from movers.search import parallel
from movers.search.base import Found, Outcome
from movers.search.fingerprints import make_store
from movers.search.limits import LimitReached, default_max_memory_mb, poll, settle, stop_reason
from movers.search.options import RAY_INSTALL, Options, have_ray
from movers.search.stats import Stats
from movers.semantics.state import State

INSTALL = RAY_INSTALL
SLICE = 0.25  # seconds an actor searches in a round
FIRST_ROUND = 16  # expansions in the first round; each round may make twice as many as the last
NEVER = 1 << 62
# The actors of the search running now (driver side), for a test that kills one.
CURRENT: list[Any] = []
_STATIC_TYPES = (Code, ClassInfo, Func)


class WorkerLost(Exception):
    """An actor died during the search (killed, or its node lost): the search is incomplete."""


class ClusterUnavailable(Exception):
    """No Ray cluster to run on: ``--address`` names none that answers, or a local one could not start (the
    command line's error, exit code 2)."""


# -- the program's objects, numbered alike in every actor ----------------------------------------------------------


def number_statics(program: Any, ts: Any) -> list[Any]:
    """The code, class and function objects a state may hold, in an order that depends only on the program
    and movers' own modules: first the builtin classes of movers' modules (their public names), by module name
    and in the order of their definitions; then those reachable from the program, then from the system searched, in the
    order of a breadth-first walk of their attributes. The walk does not enter modules, classes or sets (a
    set's order is its elements' addresses)."""
    # The numbering of an earlier search in this process (a module-level list) is no builtin class.
    parallel._STATICS.clear()
    parallel._INDEX.clear()
    out: list[Any] = []
    seen: set[int] = set()
    for name in sorted(m for m in sys.modules if m == "movers" or m.startswith("movers.")):
        mod = sys.modules[name]
        if mod is None:
            continue
        for attr, v in list(vars(mod).items()):
            if attr.startswith("_"):  # a module's private caches (the last program's objects) are not its own
                continue
            todo = [v]
            while todo:
                x = todo.pop()
                t = type(x)
                if id(x) in seen:
                    continue
                if t is ClassInfo and x.builtin:
                    seen.add(id(x))
                    out.append(x)
                elif t is dict:
                    seen.add(id(x))
                    todo.extend(reversed(list(x.values())))
                elif t in (list, tuple):
                    seen.add(id(x))
                    todo.extend(reversed(x))
    skip = {id(m.__dict__) for m in list(sys.modules.values()) if m is not None}
    for root in (program, ts):
        walked = {id(root)}
        todo = [root]
        k = 0
        while k < len(todo):
            o = todo[k]
            k += 1
            if type(o) in _STATIC_TYPES and id(o) not in seen:
                seen.add(id(o))
                out.append(o)
            for r in gc.get_referents(o):
                if (id(r) in walked or id(r) in skip
                        or isinstance(r, (type, types.ModuleType, set, frozenset, str, bytes, int, float))):
                    continue
                walked.add(id(r))
                todo.append(r)
    return out


def install_statics(statics: list[Any]) -> list[str]:
    """Make ``statics`` the numbering of ``parallel.encode``/``decode``; their names, for the driver's check."""
    parallel._STATICS[:] = statics
    parallel._INDEX.clear()
    parallel._INDEX.update((id(o), i) for i, o in enumerate(statics))
    return [f"{type(o).__name__}:{o.name}" for o in statics]


def _crc(text: str) -> int:
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


_STATIC_HASH: dict[int, int] = {}
_NONE, _TRUE, _FALSE, _UNBOUND = _crc("None"), _crc("True"), _crc("False"), _crc("<unbound>")


def stable_hash(v: Any) -> int:
    """A hash of a state's part that is the same in every process (module docstring): the program's code, class
    and function objects by their names and lines, references by their index, strings by their CRC. Any value
    it does not know hashes by its type's name: coarser, never inconsistent, which is all the partition needs."""
    t = type(v)
    if t is tuple:
        return hash(tuple([stable_hash(x) for x in v]))
    if t is int:
        return v
    if t is Ref:
        return -3 - 2 * v.i
    if t in _STATIC_TYPES:
        h = _STATIC_HASH.get(id(v))
        if h is None:  # the program's objects live as long as the process: their ids are not reused
            h = _STATIC_HASH[id(v)] = _crc(f"{t.__name__}:{v.name}:{getattr(v, 'line', 0)}")
        return h
    if t is str:
        return _crc(v)
    if v is None:
        return _NONE
    if t is Bool:
        return _TRUE if v.value else _FALSE
    if v is UNBOUND:
        return _UNBOUND
    if t is float:
        return _crc(repr(v))
    return _crc(t.__name__)


class _Owner:
    """Which actor owns a state: a stable hash of its first two threads' stacks, remembered per pair of stacks
    (the same stack objects recur in many states)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.memo: dict[Any, int] = {}

    def __call__(self, s: State) -> int:
        key = s[2][:2]
        o = self.memo.get(key)
        if o is None:
            if len(self.memo) > 1 << 17:
                self.memo.clear()
            o = self.memo[key] = stable_hash(key) % self.n
        return o


# -- an actor ---------------------------------------------------------------------------------------------------


def import_modules(modules: list[str]) -> None:
    """Import movers' modules as the driver has them, so that their builtin classes are numbered alike."""
    for m in modules:
        try:
            importlib.import_module(m)
        except ImportError:
            pass


class Partition:
    """One actor: the states it owns, their parent pointers, its depth-first stack (module docstring)."""

    def __init__(self, w: int, n: int, build: Callable[[str, str, Options], tuple[Any, Any]], source: str,
                 filename: str, options: Options, modules: list[str]) -> None:
        gc.disable()  # as in the sequential search: states are acyclic, and the collector would rescan them
        self.w, self.n = w, n
        import_modules(modules)
        program, ts = build(source, filename, options)
        self.names = install_statics(number_statics(program, ts))
        self.kind = options.store
        self.store = make_store(options.store)
        self.visited, self.key = self.store.keys, self.store.key
        self.parent_of = array("q")
        self.position = array("I")
        # A stack entry: [state, its global number (index * n + w), its successors (None: not expanded), next].
        self.stack: list[list[Any]] = []
        self.pending: list[tuple[State, int, int]] = []  # received, not yet stored (a --max-states share)
        self.expand, self.deadlock = parallel._expander(ts), ts.deadlock
        self.check_state = None if getattr(ts.check_state, "checks_nothing", False) else ts.check_state
        self.owner = _Owner(n)
        self.transitions = 0
        init = ts.initial()
        if self.owner(init) == w:  # every actor makes the initial state; its owner starts from it
            self.pending.append((init, -1, 0))

    def describe(self) -> tuple[list[str], str, float | None]:
        """The names of the objects numbered (the driver checks that every actor has the same), the node this
        actor runs on, and the memory ceiling there (75% of it, as ``--max-memory``'s default)."""
        import ray

        return self.names, ray.get_runtime_context().get_node_id(), default_max_memory_mb()

    def work(self, quota: int | None, steps: int, *batches: bytes) -> tuple[Any, ...]:
        """One round: take the batches sent, search for up to SLICE seconds or ``steps`` expansions, storing at
        most ``quota`` new states. Returns the round's status (states stored, work left, memory, the violation
        found, or None) and, per actor, the batch for it (b"" for none)."""
        for data in batches:
            if data:
                self.pending.extend(parallel.decode(data))
        out: list[list[Any]] = [[] for _ in range(self.n)]
        self.quota = quota
        violation = self._search(out, time.perf_counter() + SLICE, steps)
        status = (len(self.parent_of), len(self.stack) + len(self.pending), self.transitions, _rss(), violation,
                  [len(b) for b in out])
        return (status, *[parallel.encode(b) if b else b"" for b in out])

    def _admit(self, s: State, parent: int, pos: int) -> int:
        """Store ``s`` if new: its global number; -1 if stored already; -2 if the round's share is used."""
        visited = self.visited
        k = self.key(s)
        n0 = len(visited)
        visited.add(k)
        if len(visited) == n0:
            return -1
        if self.quota is not None:
            if self.quota <= 0:
                visited.discard(k)
                return -2
            self.quota -= 1
        self.parent_of.append(parent)
        self.position.append(pos)
        return (len(self.parent_of) - 1) * self.n + self.w

    def _search(self, out: list[list[Any]], deadline: float, steps: int) -> tuple[Any, ...] | None:
        stack, pending = self.stack, self.pending
        while pending:
            s, parent, pos = pending[-1]
            number = self._admit(s, parent, pos)
            if number == -2:
                return None
            pending.pop()
            if number >= 0:
                stack.append([s, number, None, 0])
        w, owner = self.w, self.owner
        count = 0
        while stack:
            count += 1
            if count > steps or (count & 63 == 0 and time.perf_counter() > deadline):
                break
            entry = stack[-1]
            s, number, succ, i = entry
            if succ is None:
                if self.check_state is not None:
                    v = self.check_state(s)
                    if v is not None:
                        return (v[0], v[1], stable_hash(s), number, None)
                succ = self.expand(s)
                if not succ:
                    stack.pop()
                    dead = self.deadlock(s)
                    if dead:
                        return ("deadlock", dead, stable_hash(s), number, None)
                    continue
                entry[2] = succ
            home = s[2][:2]
            two = len(home) == 2
            pushed = False
            while i < len(succ):
                s2 = succ[i]
                i += 1
                self.transitions += 1
                if type(s2) is not tuple:
                    if s2 is None:  # an assume pruned the step
                        continue
                    return (s2.violation[0], s2.violation[1], stable_hash(s), number, (s2.thread, s2.choices))
                h = s2[2]
                # A step of a thread after the first two leaves them as they are: the state stays home.
                o = w if two and h[0] is home[0] and h[1] is home[1] else owner(s2)
                if o != w:
                    out[o].append((s2, number, i - 1))
                    continue
                number2 = self._admit(s2, number, i - 1)
                if number2 == -2:
                    entry[3] = i - 1
                    self.transitions -= 1  # counted again when the step is taken next round
                    return None
                if number2 >= 0:
                    stack.append([s2, number2, None, 0])
                    pushed = True
                    break
            entry[3] = i
            if not pushed:
                stack.pop()
        return None

    def parents(self, number: int) -> tuple[list[int], int]:
        """The positions on the path back from the state ``number`` while it stays among this actor's states,
        and the first number up that another actor owns (-1: the initial state was reached)."""
        segment = []
        while number >= 0 and number % self.n == self.w:
            i = number // self.n
            number = self.parent_of[i]
            if number >= 0:
                segment.append(self.position[i])
        return segment, number

    def report(self) -> tuple[int, int, dict[str, Any]]:
        rep = getattr(self.store, "report", None)
        return len(self.parent_of), self.transitions, rep() if rep is not None else {"kind": self.kind}


def _rss() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# -- the driver ---------------------------------------------------------------------------------------------------


def _start(ray: Any, options: Options) -> bool:
    """Join the cluster at ``--address``, or start a local one for this run; True if this run must shut it
    down. A process that already joined one (a test, a notebook) keeps it."""
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR",
                              "configure_logging": True}
    address = options.address
    if address and address != "auto":
        # Ray retries an address that does not answer for minutes: ask once, briefly, first.
        host, _, port = address.rpartition("://")[2].rpartition(":")
        try:
            socket.create_connection((host or "127.0.0.1", int(port)), timeout=10).close()
        except (OSError, ValueError) as e:
            raise ClusterUnavailable(f"--address {address}: no Ray cluster answers there ({e})") from None
    try:
        if address:
            ray.init(address=address, **kwargs)
        else:
            # A local cluster with a CPU per actor, whatever the machine has: the actors share its cores.
            ray.init(num_cpus=max(options.workers, os.cpu_count() or 1), **kwargs)
    except (ConnectionError, RuntimeError, ValueError, OSError) as e:
        where = f"the Ray cluster at --address {address}" if address else "a local Ray"
        raise ClusterUnavailable(f"--backend ray: cannot start or join {where}: {str(e).splitlines()[0]}") from None
    return True


def ray_search(ts: Any, program: Any, options: Options, build: Callable[[str, str, Options], tuple[Any, Any]],
               progress: Callable[[Stats], None] | None = None) -> Outcome:
    """Search ``ts`` (the system of ``program``) with ``options.workers`` Ray actors (module docstring); each
    actor makes its own with ``build(source, filename, options)`` (``checker.build_system``)."""
    import ray

    n = options.workers
    stats = Stats()
    start = time.perf_counter()
    init = ts.initial()
    v = ts.check_state(init)
    if v is not None:
        return Outcome(Found(v[0], v[1], [], init), stats, None)
    own = _start(ray, options)
    modules = sorted(m for m in sys.modules if m.startswith("movers.") and sys.modules[m] is not None)
    # Each actor takes one CPU and runs its rounds one at a time; SPREAD puts them on different nodes.
    actor_class: Any = ray.remote(num_cpus=1, max_restarts=0, scheduling_strategy="SPREAD")(Partition)
    actors: list[Any] = [actor_class.remote(w, n, build, program.source, program.filename, options, modules)
                         for w in range(n)]
    CURRENT[:] = actors
    limit: str | None = None
    lost: str | None = None
    found_v: tuple[Any, ...] | None = None
    stored = [0] * n
    try:
        try:
            every = _get(ray, [a.describe.remote() for a in actors])
            names = every[0][0]
            # Each actor's share of its node's memory ceiling: an actor that outgrows it ends the search
            # (limit "memory") before the node's out-of-memory killer ends the actor.
            nodes = [node for _, node, _ in every]
            caps = [mb / nodes.count(node) if mb else None for _, node, mb in every]
            for w, (got, _, _) in enumerate(every):
                if got != names:
                    at = next((i for i, (x, y) in enumerate(zip(got, names, strict=False)) if x != y),
                              min(len(got), len(names)))
                    raise RuntimeError(f"--backend ray: actor {w} compiled the model into other objects than actor 0 "
                                       f"(a different movers or Python on its node?): object {at} is "
                                       f"{got[at] if at < len(got) else 'missing'} there, "
                                       f"{names[at] if at < len(names) else 'missing'} in actor 0")
            found_v, limit = _rounds(ray, actors, options, progress, stats, start, stored, caps)
        except WorkerLost as e:
            lost = str(e)
            limit = "worker-lost"
        except (LimitReached, KeyboardInterrupt, MemoryError) as e:
            limit = stop_reason(e)
        settle()
        reports: list[Any] = []
        if lost is None:
            try:
                reports = _get(ray, [a.report.remote() for a in actors])
            except WorkerLost as e:
                lost, limit = str(e), "worker-lost"
        found = None
        if found_v is not None and lost is None:
            kind, message, target, number, step = found_v
            steps, state = _rebuild(ts, _chain(ray, actors, number, n), target)
            found = (Found(kind, message, steps + [step], None) if step is not None
                     else Found(kind, message, steps, state))
            limit = None
    finally:
        CURRENT.clear()
        for a in actors:
            try:
                ray.kill(a)
            except Exception:  # noqa: BLE001  (already dead: nothing to end)
                pass
        if own:
            ray.shutdown()
    if reports:
        stored = [r[0] for r in reports]
        stats.transitions = stats.moves = sum(r[1] for r in reports)
    stats.states = sum(stored)
    stats.seconds = time.perf_counter() - start
    out = Outcome(found, stats, limit)
    out.split = list(stored)  # type: ignore[attr-defined]
    out.store = parallel._store_report(options.store, [r[2] for r in reports], out.split)  # type: ignore[attr-defined]
    out.lost = lost  # type: ignore[attr-defined]
    return out


def _get(ray: Any, refs: list[Any]) -> list[Any]:
    """The results of ``refs``, waiting in short steps so that the time limit and Ctrl-C are heard; an actor's
    death is a WorkerLost, an exception in an actor an internal error."""
    pending = list(refs)
    try:
        while pending:
            _, pending = ray.wait(pending, num_returns=len(pending), timeout=0.05)
            if pending:
                poll()
        return list(ray.get(refs))
    except SystemError as e:
        # The time limit's alarm or Ctrl-C, raised by their signal handler while Ray's own code ran: Ray hands
        # it on as the cause of a SystemError.
        cause = e.__cause__ or e.__context__
        if isinstance(cause, (LimitReached, KeyboardInterrupt, MemoryError)):
            raise cause from None
        raise
    except ray.exceptions.RayActorError as e:
        raise WorkerLost(f"a Ray actor died during the search: {str(e).splitlines()[0]}") from None
    except ray.exceptions.RayTaskError as e:
        raise RuntimeError(f"--backend ray: an actor failed: {str(e).splitlines()[0]}") from None


def _quotas(options: Options, total: int, busy: list[int]) -> list[int | None]:
    """Each busy actor's share of the states --max-states leaves, so that no round passes it."""
    cap = options.limits.max_states
    if cap is None:
        return [None] * len(busy)
    left = max(0, cap - total)
    q, r = divmod(left, max(1, len(busy)))
    return [q + (1 if i < r else 0) for i in range(len(busy))]


def _rounds(ray: Any, actors: list[Any], options: Options, progress: Callable[[Stats], None] | None,
            stats: Stats, start: float, stored: list[int],
            caps: list[float | None]) -> tuple[tuple[Any, ...] | None, str | None]:
    """The rounds (module docstring), until no actor has work and no batch is under way, a violation, or a
    limit: (the violation, the limit); ``stored`` follows the states each actor stored (an actor's death
    leaves it as the last round left it); ``caps``: each actor's memory ceiling in MB (None: unknown)."""
    n = len(actors)
    inbox: list[list[Any]] = [[] for _ in range(n)]
    left = [1] * n  # each actor's work left after its last round (the initial state's owner has it at first)
    # The first rounds are short, then each twice the last, up to SLICE seconds: the actors start in step, so
    # that a violation a few states from the start costs few states (module docstring).
    steps = FIRST_ROUND
    cap_mb = options.limits.max_memory
    last = time.perf_counter()
    while True:
        poll()
        busy = [w for w in range(n) if left[w] or inbox[w]]
        if not busy:
            return None, None
        total = sum(stored)
        quotas = _quotas(options, total, busy)
        if options.limits.max_states is not None and total >= options.limits.max_states:
            return None, "max-states"
        calls = {}
        for w, q in zip(busy, quotas, strict=True):
            calls[w] = actors[w].work.options(num_returns=n + 1).remote(q, steps, *inbox[w])
        inbox = [[] for _ in range(n)]
        steps = min(2 * steps, NEVER)
        statuses = _get(ray, [calls[w][0] for w in busy])
        violation = None
        rss = 0
        over = False
        for w, st in zip(busy, statuses, strict=True):
            stored[w], left[w], transitions, mem, v, sent = st
            rss += mem
            cap = caps[w]
            over = over or (cap is not None and mem / 2**20 >= cap)
            if v is not None and violation is None:
                violation = v
            for o in range(n):
                if sent[o]:
                    inbox[o].append(calls[w][1 + o])
        if violation is not None:
            return violation, None
        if over or (cap_mb and rss / 2**20 >= cap_mb):
            return None, "memory"
        now = time.perf_counter()
        if progress is not None and now - last >= 0.5:
            last = now
            stats.states, stats.seconds = sum(stored), now - start
            progress(stats)


def _rebuild(ts: Any, positions: list[int], target: int) -> tuple[list[Any], State]:
    """The steps of the path that takes, from each state, the successor at the given position, and the state it
    reaches, made again from the initial state (as ``parallel._rebuild``); the actor reported the state by its
    ``stable_hash``, which the state reached must have."""
    expand, steps = parallel._expander(ts), ts.steps
    s = ts.initial()
    out: list[Any] = []
    for p in positions:
        nxt = expand(s)[p]
        o = next(o for o in steps(s) if o.violation is None and o.state == nxt)
        out.extend(o.steps)
        s = nxt
    if stable_hash(s) != target:
        raise RuntimeError("--backend ray: the path rebuilt does not reach the state an actor reported (a bug in "
                           "movers)")
    return out, s


def _chain(ray: Any, actors: list[Any], number: int, n: int) -> list[int]:
    """The positions from the initial state to the state ``number``: the owners' parent pointers, followed back."""
    positions: list[int] = []
    while number >= 0:
        segment, number = _get(ray, [actors[number % n].parents.remote(number)])[0]
        positions.extend(segment)
    positions.reverse()
    return positions


__all__ = ["INSTALL", "ClusterUnavailable", "Partition", "WorkerLost", "have_ray", "number_statics", "ray_search",
           "stable_hash"]
