"""The report formats, in one registry: each renders the result of a check (or a replay) and, where it has
one, the comparison of ``movers compare`` (report/compare.py), as the text to write.

``movers check --format`` offers the formats written on standard output (``FORMATS[name].stdout``);
``--html FILE`` writes the ``html`` format's page. A format for programs (``machine``) is written whole,
Ctrl-C ignored while it is; text for people is rendered by rich into the console the ``View`` makes, and a
refused model is said on standard error instead (cli.py).

Adding a format is one entry here and its renderers in their own module. Only the standard library is
imported at the top: the command line reads the names before the checker's modules are loaded.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from movers.report.compare import Comparison
    from movers.report.result import Result


def plain_console() -> Console:
    """A console that renders into a string, without colours, 160 columns wide (as piped output is)."""
    from rich.console import Console

    return Console(file=io.StringIO(), width=160, color_system=None)


@dataclass(frozen=True)
class View:
    """What a report shows beyond its result, as the command line asks for it."""

    model: str = ""
    show_classification: bool = False
    show_locks: bool = False
    full_state: bool = False
    # ``replay --full-state``: the state after every step (text).
    step_states: bool = False
    # ``--library-steps``: each step taken inside the modelled library on a row of its own (text).
    library_steps: bool = False
    # A last line for people (text), such as why --show-locks shows nothing.
    hint: str = ""
    # Makes the console a text report is rendered into: into a ``StringIO`` for the text to be returned.
    console: Callable[[], Console] = field(default=plain_console)


@dataclass(frozen=True)
class Format:
    name: str
    of_result: Callable[[Result, View], str]
    # None: the format has no report of a comparison (``movers compare`` offers text, json and html).
    of_comparison: Callable[[Comparison, View], str] | None = None
    # For programs: written whole, Ctrl-C ignored meanwhile; a refused model is in it too.
    machine: bool = False
    # Offered by --format (written on standard output); html is written to a file by --html.
    stdout: bool = True

    def check(self, result: Result, view: View) -> str:
        """The report of one check or replay."""
        return self.of_result(result, view)

    def compare(self, comparison: Comparison, view: View) -> str:
        """The report of ``movers compare``."""
        if self.of_comparison is None:
            raise ValueError(f"the {self.name} format has no report of a comparison")
        return self.of_comparison(comparison, view)


def _rendered(console: Console) -> str:
    # A console that writes elsewhere (a terminal, a file) has written the report itself.
    buf = console.file
    return buf.getvalue() if isinstance(buf, io.StringIO) else ""


def _text_check(result: Result, view: View) -> str:
    from movers.report.steps import print_step_states
    from movers.report.text import print_result

    out = view.console()
    print_result(result, out, view.model, show_classification=view.show_classification, show_locks=view.show_locks,
                 full_state=view.full_state, library_steps=view.library_steps)
    if view.step_states:
        for v in result.violations:
            print_step_states(v, out)
    if view.hint:
        out.print(view.hint)
    return _rendered(out)


def _text_compare(comparison: Comparison, view: View) -> str:
    from movers.report.text import print_compare

    out = view.console()
    print_compare(comparison, out)
    return _rendered(out)


def _json_check(result: Result, view: View) -> str:
    import json

    return json.dumps(result.to_json()) + "\n"


def _json_compare(comparison: Comparison, view: View) -> str:
    """A list of rows: each a check's object with its ``ratio``, and with ``--atomicity`` the mode and the
    states of the standard search."""
    import json

    rows = []
    for row, ratio in zip(comparison.rows, comparison.ratios(), strict=True):
        d = dict(row.result.to_json(), ratio=ratio.value)
        if row.standard is not None:
            d["atomicity"] = comparison.atomicity
            d["standard_states"] = row.standard.stats.states
        rows.append(d)
    return json.dumps(rows) + "\n"


def _sarif_check(result: Result, view: View) -> str:
    import json

    from movers.report.formats import to_sarif

    return json.dumps(to_sarif(result, view.model), indent=1) + "\n"


def _junit_check(result: Result, view: View) -> str:
    from movers.report.formats import to_junit

    return to_junit(result, view.model) + "\n"


def _html_check(result: Result, view: View) -> str:
    from movers.report.html import render_result

    return render_result(result, view.model)


def _html_compare(comparison: Comparison, view: View) -> str:
    from movers.report.html import compare_page

    return compare_page(comparison)


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("text", _text_check, _text_compare),
    Format("json", _json_check, _json_compare, machine=True),
    Format("sarif", _sarif_check, machine=True),
    Format("junit", _junit_check, machine=True),
    Format("html", _html_check, _html_compare, stdout=False),
)}


def stdout_formats() -> list[str]:
    """The names --format offers, in the registry's order."""
    return [name for name, f in FORMATS.items() if f.stdout]


__all__ = ["FORMATS", "Format", "View", "plain_console", "stdout_formats"]
