"""Thread-locality by static escape analysis: Dwyer, Hatcliff, Robby & Ranganath (papers/002), section 5.1
and appendix A, strategy (S).

Before the search, decide for every node of the program whether it is *statically thread-local*: in every
state in which a thread executes it, the node reads no global that any thread writes, writes no global, and
every heap object it may access (a field, an element, a lock or monitor, a condition's wait set) is one that
no thread other than the one executing it can reach. Algorithm 2's ``checkC1`` then takes a thread's step as
independent when every node the step runs is statically thread-local (``escape.StaticThreadLocal``).

**The analysis.** The paper adapts Ruf's analysis: unification-based alias sets, cloned per calling context.
Here it is an inclusion-based (Andersen-style) points-to analysis over *allocation sites*, flow-insensitive
and context-insensitive, followed by an escape closure:

1. Points-to. Every allocation in the source (a model class instance, a list, a Lock, RLock, Semaphore,
   Condition or Thread) is a site. The compiler records, on every node, where the node copies references
   (``Node.flows``: into a local, a global, a field or element, a return value, the parameters of a callee,
   a Thread's arguments) and the objects the node accesses (``Node.uses``), both as abstract values over
   locals, globals, fields and sites (``lang/function.Facts``). The analysis solves the inclusion
   constraints to a fixpoint: ``pts(v)`` is the set of sites whose objects variable, field or return value
   ``v`` may hold. Fields are per site and name; a list's elements are one field ``[]`` of its site; a tuple
   is the union of its items (tuples are immutable and hold no locks: smashing them loses nothing that
   matters to escape). Method calls are resolved on the fly, by the classes of the receiver's sites (the
   machine dispatches on the receiver's class exactly so). All calls of one function share its parameters
   and its return value (context-insensitive).
2. Escape. A site *escapes* when an object from it may become reachable by two threads. The roots: every
   site a global may point to; every started thread object (a ``Thread`` subclass instance is the new
   thread's ``self``; a ``Thread(target=…, args=…)`` object holds the arguments the new thread receives);
   every site allocated by module-level code (its objects are built before any thread runs and handed to
   the threads). Escape is closed under the fields: whatever a field or element of an escaping site may
   hold escapes.
3. Nodes. A node is statically thread-local when it is not ``start`` or ``join`` (a thread's creation is
   ordered by thread ids, a ``join`` waits for another thread), not an ``indivisible`` block (it runs code
   the verdict of one node does not cover), not module-level code, writes no global, reads only globals no
   thread ever writes (module-level constants: reading one commutes with every step), and every object it
   uses belongs to a site that does not escape (for a Condition, its lock as well).

**Why it is sound.** Claim: in every reachable state, an object of a site that does not escape is reachable
by at most one thread. Objects become reachable by a thread only through its frames, which are filled from
the globals, from values the thread computes (loads from objects it reaches, allocations, calls and
returns within the thread) and, once, from ``start`` (the new thread's ``self`` or arguments); the points-to
sets over-approximate every value every variable, field and return value may hold in any execution
(flow-insensitive inclusion constraints over every copy the compiler records). So an object of site s can
reach a second thread only if s is pointed to by a global, is started or is an argument of a started
thread, or is stored in (reachable from) an object of such a site: exactly the escape roots and closure.
An object allocated by a thread that stays out of these stays reachable from its allocator only. A node
that uses only objects of non-escaping sites therefore touches objects no other thread can reach, in every
state, which is section 5's *thread-local at s* for every s; with no writable global it is independent of
every transition of every other thread (Definition 3), and only the executing thread can change that
(Preservation of Independence, appendix C.1.1).

Assumptions, each kept by the compiler or the language: a model is one module with no reflection (no
``getattr``, no function values, no ``globals()``): every copy of a reference is one of the recorded flows;
length and class of an object never change (``len(a)``, truth of a list, and the class lookup of a method
call read nothing mutable, so they are not accesses); a Condition's lock is fixed at creation; objects made
by module-level code are shared; a started thread object escapes with everything it reaches; a method call
passes its receiver to the callee's ``self``; a function called from several places joins their arguments.

**Limits, compared with the dynamic analysis (D).** A site escapes if *some* object from it, in *some*
execution, at *some* time, is shared: an object that is thread-local for most of its life (built by main,
then handed to a worker: Independent Work 2; initialised before being published: Deadlock, Bounded Buffer)
is never thread-local statically, while (D) sees it thread-local in the states where it is. A Thread
subclass instance is never thread-local (it is started), so its fields never are. Contexts are merged:
a helper called once with a shared object and once with a local one treats both as shared. Steps that
call a function are left to (D) by ``escape.StaticThreadLocal``. In exchange, the verdict costs nothing per
state (section 8: (SDA) skips the heap scan for these steps).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from movers.ir.program import Code, Node, Program

# A site is the compiler's allocation-site key: (code name, line, column, class name).
Site = tuple[str, int, int, str]
# Node kinds never statically thread-local (see the module docstring, point 3).
# "thread-end" and "is-alive" (lang/timeouts.py): a thread's end, which another thread's ``t.is_alive()`` observes.
NEVER_LOCAL = frozenset({"start", "join", "indivisible", "atomic-step", "thread-end", "is-alive"})
ELEMENTS = "[]"


def site_text(site: Site) -> str:
    code, line, col, cls = site
    return f"{cls} allocated at line {line}:{col + 1} ({code})"


@dataclass
class StaticLocality:
    """The result of ``analyse``: which sites escape (and why), which nodes are statically thread-local."""

    program: Program
    pts: dict[tuple[Any, ...], set[Site]]
    escaping: dict[Site, str]  # site -> why it escapes
    sites: set[Site]
    constants: frozenset[str]
    _local: dict[tuple[int, int], bool] = field(default_factory=dict)
    _codes: dict[int, Code] = field(default_factory=dict)

    def node_local(self, code: Code, pc: int) -> bool:
        """Is node ``pc`` of ``code`` statically thread-local? (Algorithm 2's static-thread-local(α).)"""
        key = (id(code), pc)
        v = self._local.get(key)
        if v is None:
            v = self._local[key] = self._decide(code, code.nodes[pc]) is None
            self._codes[id(code)] = code  # keep the code alive while its id is a key
        return v

    def why_not_local(self, code: Code, pc: int) -> str | None:
        """Why node ``pc`` of ``code`` is not statically thread-local (None when it is)."""
        return self._decide(code, code.nodes[pc])

    def escapes(self, site: Site) -> bool:
        return site in self.escaping

    def objects_used(self, code: Code, node: Node) -> set[Site]:
        """The sites of every object ``node`` may access (a Condition's lock included)."""
        out: set[Site] = set()
        for av in node.uses:
            out |= self.eval(code, av)
        for s in list(out):
            if s[3] == "Condition":
                out |= self.pts.get(("field", s, "lock"), set())
        return out

    def eval(self, code: Code, av: frozenset[Any]) -> set[Site]:
        return _eval(self.pts, self.program, code, av)

    def _decide(self, code: Code, node: Node) -> str | None:
        if code is self.program.init:
            return "module-level code"
        if node.kind in NEVER_LOCAL:
            return f"a {node.kind} step"
        if node.writes:
            return "writes global " + ", ".join(sorted(node.writes))
        shared_reads = node.reads - self.constants
        if shared_reads:
            return "reads global " + ", ".join(sorted(shared_reads)) + ", which some thread writes"
        for s in sorted(self.objects_used(code, node)):
            if s in self.escaping:
                return f"uses an object of the {site_text(s)}, which escapes: {self.escaping[s]}"
        return None

    def describe(self) -> str:
        """A report: every allocation site (escaping or local, and why), then each code's statically
        thread-local steps."""
        lines = ["allocation sites:"]
        for s in sorted(self.sites, key=lambda s: (s[1], s[2], s[0])):
            why = self.escaping.get(s)
            lines.append(f"  {site_text(s)}: " + (f"escapes ({why})" if why else "thread-local"))
        for code in self.program.codes():
            steps = [(pc, n) for pc, n in enumerate(code.nodes) if n.costly]
            if not steps:
                continue
            local = sum(1 for pc, _ in steps if self.node_local(code, pc))
            lines.append(f"{code.name}: {local} of {len(steps)} steps statically thread-local")
            for pc, n in steps:
                why = self.why_not_local(code, pc)
                mark = "local " if why is None else "shared"
                lines.append(f"  {mark} line {n.line:>4} {n.source}" + (f"  [{why}]" if why else ""))
        return "\n".join(lines)


# -- points-to ------------------------------------------------------------------------------------------------


def _all_codes(program: Program) -> list[Code]:
    return [program.init, *(c for c in program.codes() if c is not program.init)]


def _eval(pts: dict[tuple[Any, ...], set[Site]], program: Program, code: Code, av: Iterable[Any]) -> set[Site]:
    """The sites an abstract value (``lang/function.AV``) may denote, in ``code``, under ``pts``."""
    out: set[Site] = set()
    for term in av:
        kind = term[0]
        if kind == "new":
            out.add(term[1])
        elif kind == "local":
            out |= pts.get(("local", code, term[1]), set())
        elif kind == "global":
            out |= pts.get(("global", term[1]), set())
        elif kind == "field":
            for s in _eval(pts, program, code, term[1]):
                out |= pts.get(("field", s, term[2]), set())
        elif kind == "element":
            for s in _eval(pts, program, code, term[1]):
                out |= pts.get(("field", s, ELEMENTS), set())
        elif kind == "reach":
            # What a comparison of lists reads: the lists and, through their elements, every list inside.
            seen: set[Site] = set()
            work = list(_eval(pts, program, code, term[1]))
            while work:
                s = work.pop()
                if s not in seen:
                    seen.add(s)
                    work.extend(pts.get(("field", s, ELEMENTS), ()))
            out |= seen
        elif kind == "return":
            out |= pts.get(("return", term[1]), set())
        elif kind == "method_return":
            for s in _eval(pts, program, code, term[1]):
                callee = _dispatch(program, s, term[2])
                if callee is not None:
                    out |= pts.get(("return", callee), set())
        else:  # pragma: no cover - the compiler makes no other term
            raise ValueError(f"unknown abstract value term {term!r}")
    return out


def _dispatch(program: Program, site: Site, method: str) -> Code | None:
    """The code ``method`` runs on an object of ``site`` (None for built-in objects)."""
    cls = program.classes.get(site[3])
    return cls.lookup(method) if cls is not None else None


def _targets(program: Program, code: Code, pts: dict[tuple[Any, ...], set[Site]], dest: tuple[Any, ...]
             ) -> Iterator[tuple[Any, ...]]:
    """The points-to variables a store into ``dest`` writes."""
    kind = dest[0]
    if kind == "local":
        yield ("local", code, dest[1])
    elif kind == "global":
        yield ("global", dest[1])
    elif kind == "return":
        yield ("return", code)
    elif kind == "field":
        for s in _eval(pts, program, code, dest[1]):
            yield ("field", s, dest[2])
    elif kind == "element":
        for s in _eval(pts, program, code, dest[1]):
            yield ("field", s, ELEMENTS)
    else:  # pragma: no cover
        raise ValueError(f"unknown store destination {dest!r}")


class _Solver:
    """Inclusion constraints solved by naive iteration (models are small: a few hundred nodes)."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.pts: dict[tuple[Any, ...], set[Site]] = {}
        self.started: set[Site] = set()
        self.sites: set[Site] = set()
        self.changed = False

    def add(self, var: tuple[Any, ...], sites: set[Site]) -> None:
        if not sites:
            return
        cur = self.pts.setdefault(var, set())
        if not sites <= cur:
            cur |= sites
            self.changed = True

    def params(self, callee: Code, args: list[set[Site]]) -> None:
        for k, a in enumerate(args[: len(callee.params)]):
            self.add(("local", callee, k), a)

    def flow(self, code: Code, f: tuple[Any, ...]) -> None:
        program, pts = self.program, self.pts
        kind = f[0]
        if kind == "store":
            vals = _eval(pts, program, code, f[2])
            for var in list(_targets(program, code, pts, f[1])):
                self.add(var, vals)
        elif kind == "call":
            self.params(f[1], [_eval(pts, program, code, a) for a in f[2]])
        elif kind == "method_call":
            args = [_eval(pts, program, code, a) for a in f[3]]
            for s in _eval(pts, program, code, f[1]):
                callee = _dispatch(program, s, f[2])
                if callee is not None:
                    self.params(callee, [{s}, *args])
        elif kind == "thread":
            # Thread(target=code, args=…): the new thread's parameters receive the arguments' items.
            items = _eval(pts, program, code, f[3])
            self.params(f[2], [items] * len(f[2].params))
        elif kind == "start":
            for s in _eval(pts, program, code, f[1]):
                if s not in self.started:
                    self.started.add(s)
                    self.changed = True
                cls = program.classes.get(s[3])
                run = cls.lookup("run") if cls is not None and cls.is_thread else None
                if run is not None:
                    self.params(run, [{s}])
        else:  # pragma: no cover
            raise ValueError(f"unknown flow {f!r}")

    def solve(self) -> None:
        work = [(code, f) for code in _all_codes(self.program) for n in code.nodes for f in n.flows]
        for _, f in work:
            self.sites |= _sites_named(f)
        self.changed = True
        while self.changed:
            self.changed = False
            for code, f in work:
                self.flow(code, f)


def _sites_named(x: Any) -> set[Site]:
    """Every allocation site mentioned in a flow or abstract value."""
    out: set[Site] = set()
    work = [x]
    while work:
        v = work.pop()
        if isinstance(v, tuple) and len(v) == 2 and v[0] == "new":
            out.add(v[1])
        elif isinstance(v, (tuple, frozenset)):
            work.extend(v)
    return out


# -- escape -----------------------------------------------------------------------------------------------------


def _escaping(solver: _Solver) -> dict[Site, str]:
    """Sites whose objects may be reachable by two threads, each with the reason (its first route)."""
    pts = solver.pts
    why: dict[Site, str] = {}
    work: list[Site] = []

    def root(s: Site, reason: str) -> None:
        if s not in why:
            why[s] = reason
            work.append(s)

    for s in sorted(solver.sites):
        if s[0] == "<module>":
            root(s, "allocated by module-level code")
    for var in sorted((v for v in pts if v[0] == "global"), key=lambda v: v[1]):
        for s in sorted(pts[var]):
            root(s, f"stored in global {var[1]}")
    for s in sorted(solver.started):
        root(s, "a started thread object")
    fields_of: dict[Site, list[tuple[str, set[Site]]]] = {}
    for var, sites in pts.items():
        if var[0] == "field":
            fields_of.setdefault(var[1], []).append((var[2], sites))
    while work:
        s = work.pop()
        for name, sites in sorted(fields_of.get(s, ()), key=lambda x: x[0]):
            what = "an element" if name == ELEMENTS else f"field {name}"
            for t in sorted(sites):
                root(t, f"{what} of the escaping {site_text(s)}")
    return why


def _constants(program: Program) -> frozenset[str]:
    """Globals no thread (nor any function) ever writes: after module initialisation they never change."""
    written: set[str] = set()
    for code in program.codes():
        for n in program.thread_nodes(code):
            written |= n.writes
    return frozenset(g for g in program.globals if g not in written)


def analyse(program: Program) -> StaticLocality:
    """Run the static escape analysis on a compiled program (see the module docstring)."""
    solver = _Solver(program)
    solver.solve()
    return StaticLocality(program, solver.pts, _escaping(solver), solver.sites, _constants(program))


def points_to(program: Program) -> Callable[[Code, frozenset[Any]], set[Site]]:
    """The points-to half of the analysis alone: the sites an abstract value of a code may denote (the
    compiler asks it which comparisons may compare lists, ``lang/compiler.resolve_comparisons``)."""
    solver = _Solver(program)
    solver.solve()
    return lambda code, av: _eval(solver.pts, program, code, av)


__all__ = ["analyse", "points_to", "StaticLocality", "Site", "site_text", "NEVER_LOCAL"]
