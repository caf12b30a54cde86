"""Text output for people: the verdict, the statistics, and a counterexample as a table of steps."""

from __future__ import annotations

import math

from rich.console import Console
from rich.table import Table
from rich.text import Text

from movers.report.compare import Comparison, Ratio
from movers.report.result import THREAD_EVENTS, Result, TraceStep
from movers.report.safe import printable
from movers.report.shorten import entries_text, short_entries
from movers.search.fingerprints import MAX_OMISSION

VERDICT_STYLE = {"ok": "bold green", "violation": "bold red", "incomplete": "bold yellow", "error": "bold red"}
LIMIT_TEXT = {
    "max-states": "the state limit (--max-states) was reached",
    "time-limit": "the time limit (--time-limit) was reached",
    "max-depth": "the depth limit (--max-depth) cut some paths",
    "memory": "the memory limit (--max-memory) was reached",
    "interrupted": "interrupted",
    "coverage": "the lossy store (--store) may have missed too many states",
    "not-a-proof": "every swarm member ended without finding one, which proves nothing",
    "worker-lost": "a worker of the search (a Ray actor) died before the search ended",
}


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def stats_line(result: Result) -> str:
    s = result.stats
    rate = f"{s.states_per_second:,.0f}" if s.seconds > 0 else "-"
    line = (f"{s.states:,} states, {s.transitions:,} transitions, max depth {s.max_depth}, "
            f"{s.seconds:.2f} s ({rate} states/s), peak memory {s.peak_memory_mb:.1f} MB")
    if s.transactions:
        line += (f"\n{_count(s.transactions, 'transaction')}, "
                 f"{s.transitions / s.transactions:.1f} steps per transaction")
    elif s.moves and s.moves != s.transitions:
        line += f"\n{_count(s.moves, 'move')}, {s.transitions / s.moves:.1f} steps per move"
    store = store_line(result.store)
    if store:
        line += "\n" + store
    return line


def store_line(store: dict) -> str:
    """What a lossy visited store may have missed (nothing for the exact store). Missing fields print as "?",
    never as a crash: the report of a search stopped early is still a report."""
    kind = store.get("kind", "exact")
    if kind == "hashcompact":
        return (f"store: hash compaction, {store.get('fingerprint_bits', 64)}-bit fingerprints; probability that a "
                f"collision hid a state: at most {_probability(store.get('collision_probability'))}")
    if kind == "bitstate":
        factor = store.get("hash_factor")
        return (f"store: bitstate, 2^{store.get('bits', '?')} bits, {store.get('hashes', '?')} hashes, hash factor "
                f"{'?' if factor is None else f'{factor:,}'}; expected coverage "
                f"{_percent(store.get('expected_coverage'))} (of the states met; more --bits reach more)")
    return ""


def _percent(coverage: float | None) -> str:
    """A coverage as a percentage, rounded down (99.899% is not 99.9%, the threshold of an ``ok``)."""
    if coverage is None:
        return "?%"
    return f"{math.floor(coverage * 10_000) / 100:g}%"


def _probability(p: float | None) -> str:
    """A probability in two digits, rounded up (it is printed as a bound)."""
    if p is None:
        return "?"
    if p <= 0:
        return "0"
    if p >= 1:
        return "1"
    e = math.floor(math.log10(p))
    m = math.ceil(round(p / 10.0**e * 10, 9)) / 10
    if m >= 10:
        m, e = 1.0, e + 1
    return f"{m:.1f}e{e:+03d}"


def headline(result: Result) -> str:
    """The verdict's line. A lossy store never gives "verified": it found no violation in the states it
    stored, and says how many and how much it may have missed."""
    if result.headline:
        return result.headline
    store, n = result.store, _count(result.stats.states, "state")
    kind = store.get("kind", "exact")
    if result.verdict == "ok":
        if kind == "hashcompact":
            return (f"no violation found in {n} (hash compaction, probability of a missed state at most "
                    f"{_probability(store.get('collision_probability'))})")
        if kind == "bitstate":
            return f"no violation found in {n} (bitstate, expected coverage {_percent(store.get('expected_coverage'))})"
        return "verified: no violation in any interleaving"
    if result.verdict == "incomplete" and result.limit == "coverage":
        threshold = f"{100 * MAX_OMISSION:g}%"
        if kind == "hashcompact":
            return (f"incomplete: no violation found in {n}, but the probability that hash compaction missed a "
                    f"state is up to {_probability(store.get('collision_probability'))}, above {threshold} "
                    "(--store exact misses none)")
        return (f"incomplete: no violation found in {n}, but the bitstate store's expected coverage is "
                f"{_percent(store.get('expected_coverage'))}, below {100 - 100 * MAX_OMISSION:g}% (more --bits "
                "reach more)")
    if result.verdict == "incomplete" and result.hunt is not None:
        what = "random walks" if result.hunt.get("mode") == "simulate" else "the swarm"
        return (f"incomplete: no violation found by {what} (not a proof); "
                + LIMIT_TEXT.get(result.limit or "", "stopped early"))
    if result.verdict == "incomplete":
        return "incomplete: " + LIMIT_TEXT.get(result.limit or "", "search stopped early")
    if result.verdict == "error":
        return f"error: {result.error}"
    return "violation found"


def _library_call(st: TraceStep) -> str | None:
    """The library method a step runs in (``queue.Queue.put`` for ``(in queue.Queue.put) with …``), or None."""
    if st.source.startswith("(in ") and ") " in st.source:
        return st.source[4:st.source.index(") ")]
    return None


# Where a liveness violation's lasso (``Violation.cycle_start``) turns into its cycle.
CYCLE_MARK = "-- the cycle starts here, and repeats forever --"
STUTTER_MARK = "-- the cycle: the last state repeats forever, no thread moving --"


def trace_rows(trace: list[TraceStep], library_steps: bool = False) -> list[tuple[str, TraceStep, str, str]]:
    """The rows of a counterexample's table: (step number or range, the step, source, changes). Unless
    ``library_steps``, the steps a thread takes in a call of the modelled library (lang/library) right after
    its call, at the same line of the model, fold into the call's row, as one line of the user's code: its
    changes are what the steps changed together, and a note says how many steps it was and in which methods
    (``--library-steps`` shows each)."""
    rows: list[tuple[str, TraceStep, str, str]] = []
    i = 0
    while i < len(trace):
        st = trace[i]
        j = i + 1
        if not library_steps:
            while (j < len(trace) and trace[j].thread == st.thread and trace[j].line == st.line
                   and _library_call(trace[j]) is not None):
                j += 1
        if j - i == 1:
            rows.append((str(i + 1), st, st.shown_source(), st.changes_text()))
        else:
            methods = list(dict.fromkeys(m for m in map(_library_call, trace[i:j]) if m))
            changes: dict[str, str] = {}
            for step in trace[i:j]:
                changes.update(step.changes)
            shown = st.source if _library_call(st) is None else st.shown_source()
            note = f"  [{j - i} steps, in {', '.join(methods)}]"
            rows.append((f"{i + 1}-{j}", st, shown + note, entries_text(changes, THREAD_EVENTS)))
        i = j
    return rows


def print_result(
    result: Result, console: Console, model: str = "", show_classification: bool = False, show_locks: bool = False,
    full_state: bool = False, library_steps: bool = False,
) -> None:
    if result.verdict == "error":
        console.print(Text(f"error: {printable(result.error or '', True)}", style="red"), soft_wrap=True)
        return
    head = headline(result)
    console.print(Text(printable(head, True), style=VERDICT_STYLE[result.verdict])
                  + Text(f"  ({result.reduction} reduction"
                         + (f", {result.granularity} granularity)" if result.granularity else ")")))
    console.print(stats_line(result), soft_wrap=True)
    if result.notes:
        restarts = sum(1 for n in result.notes if n.startswith("refined"))
        if restarts and not show_classification:
            times = "once" if restarts == 1 else f"{restarts} times"
            console.print(f"the classification was refined {times} "
                          "(--show-classification lists the final one and each refinement)")
        for n in result.notes:
            if show_classification or not n.startswith("refined"):
                console.print(Text("note: " + printable(n), style="dim"), soft_wrap=True)
    if show_classification and result.classification:
        table = Table(title="classification of locations", title_justify="left", show_edge=False)
        table.add_column("location")
        table.add_column("classified")
        for loc, how in result.classification.items():
            table.add_row(Text(printable(loc)), Text(printable(how)))
        console.print(table)
    if show_locks:
        if result.locks:
            table = Table(title="inferred protecting locks", title_justify="left", show_edge=False)
            table.add_column("location")
            table.add_column("protected by")
            for loc, locks in result.locks.items():
                table.add_row(Text(printable(loc)), Text(printable(locks)))
            console.print(table)
        else:
            console.print("no location is protected by a lock (see --show-classification)")
    for v in result.violations:
        console.print()
        # A deadlock's message has a line per thread; an assertion's is the model's own text, on one line.
        message = printable(v.message, newlines=v.kind != "assertion")
        console.print(Text(f"{v.kind}: ", style="bold red") + Text(message), soft_wrap=True)
        if v.values:
            console.print(Text(printable("  where " + entries_text(v.values))),
                          soft_wrap=True)
        if not v.trace:
            if v.cycle_start is not None:  # the initial state's stutter loop
                console.print(STUTTER_MARK)
            continue
        where = f" in {model}" if model else ""
        n = len(v.trace)
        table = Table(title=Text(f"counterexample: {n} step{'s' if n != 1 else ''}{printable(where)}"),
                      title_justify="left",
                      show_edge=False)
        table.add_column("step", justify="right")
        table.add_column("thread")
        table.add_column("line", no_wrap=True)
        table.add_column("source", overflow="fold")
        table.add_column("changes", overflow="fold")
        marked = v.cycle_start is None
        for label, st, source, changes in trace_rows(v.trace, library_steps):
            if not marked and int(label.split("-")[0]) > v.cycle_start:  # type: ignore[operator]
                table.add_row("", "", "", Text(CYCLE_MARK, style="bold"), "")
                marked = True
            # Text, not markup: model source may contain brackets.
            table.add_row(label, Text(printable(st.who)), str(st.line), Text(printable(source, True)),
                          Text(printable(changes)))
        if not marked:  # a stutter loop: the last state repeats, no thread moving
            table.add_row("", "", "", Text(STUTTER_MARK, style="bold"), "")
        console.print(table)
        if v.state and "threads" in v.state and (full_state or v.kind in ("deadlock", "race")):
            print_state(v.state, console, globals_too=full_state)


def print_compare(comparison: Comparison, console: Console) -> None:
    """One row per reduction. With the standard searches (``compare --atomicity``), their states stand beside
    the instrumented ones, as in Figure 1 of papers/003."""
    from movers.reduce import BASELINE

    table = Table(title=Text(f"movers compare {printable(comparison.model)}"), title_justify="left")
    cols = ["reduction", "verdict", "states", "transitions", "moves", "steps/move", "seconds", "states/s",
            "peak MB", f"states vs {BASELINE}"]
    if comparison.with_standard:
        cols[2:3] = ["standard states", "instrumented states", "instrumented/standard"]
    for col in cols:
        table.add_column(col, justify="left" if col in ("reduction", "verdict") else "right")
    for row, ratio in zip(comparison.rows, comparison.ratios(), strict=True):
        r, s = row.result, row.result.stats
        per_move = f"{s.transitions / s.moves:.2f}" if s.moves else ""
        states = [f"{s.states:,}"]
        if comparison.with_standard:
            n = row.standard_states or 0
            states = [f"{n:,}" if n else "", f"{s.states:,}" if not row.refused else "",
                      f"{s.states / n:.2f}" if n and not row.refused else ""]
        table.add_row(r.reduction, Text(printable(compare_verdict(r))), *states, f"{s.transitions:,}",
                      f"{s.moves:,}", per_move, f"{s.seconds:.3f}", f"{s.states_per_second:,.0f}",
                      f"{s.peak_memory_mb:.1f}", _ratio_text(ratio))
    console.print(table)


def _ratio_text(ratio: Ratio) -> str:
    if ratio.value is None:
        return ""
    # A ratio to a search cut short compares parts, not wholes.
    return f"{ratio.value:.2f}" + (" (incomplete)" if ratio.incomplete else "")


def compare_verdict(r: Result) -> str:
    """A row's verdict in a comparison: the kind of a violation, the limit of an incomplete search, the reason
    of a refusal (its first clause)."""
    if r.verdict == "violation":
        return f"violation ({r.violations[0].kind})"
    if r.verdict == "incomplete" and r.limit:
        return f"incomplete ({r.limit})"
    if r.verdict == "error":
        return "refused: " + (r.error or "").split(";")[0].removeprefix("--reduction ")
    return r.verdict


def print_state(state: dict, console: Console, globals_too: bool = True) -> None:
    """The state where a violation shows: each thread (a deadlock's snapshot, as Java PathFinder prints it) and,
    with ``globals_too`` (``--full-state``), the globals and the heap by path."""
    threads = Table(title="threads at the end of the trace", title_justify="left", show_edge=False)
    for col in ("thread", "status", "waits for", "holds", "stack (innermost last)", "locals"):
        threads.add_column(col, overflow="fold")
    for th in state["threads"]:
        stack = " > ".join(f"{f['function']}:{f['line']}" for f in th["stack"])
        local = entries_text(th["locals"])
        threads.add_row(Text(printable(th.get("name") or str(th["thread"]))), th["status"],
                        Text(printable(th.get("waits") or "")), Text(printable(", ".join(th["holds"]))),
                        Text(printable(stack)), Text(printable(local)))
    console.print(threads)
    if globals_too:
        shared = Table(title="globals and heap", title_justify="left", show_edge=False)
        shared.add_column("name", overflow="fold")
        shared.add_column("value", overflow="fold")
        for k, v in short_entries(state["globals"]):
            shared.add_row(Text(printable(k)), Text(printable(v or "")))
        console.print(shared)

