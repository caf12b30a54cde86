"""README.md and docs/cli.md list what the code has: every reduction of the registry, every option of each
subcommand's parser, the keywords of ``movers.check`` and ``Checker``, and the fields of ``Result`` and
its parts. A reduction, option, keyword or field added to the code without its documentation (or removed
from the code and left in the docs) fails here, so the reference cannot drift again (issue 21, item 16)."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import keyword
import re

import pytest
from conftest import ROOT

import movers
from movers.checker import Checker
from movers.cli import _parser
from movers.reduce import REDUCTIONS
from movers.report.result import Result, Stats, TraceStep, Violation

README = (ROOT / "README.md").read_text()
CLI = (ROOT / "docs" / "cli.md").read_text()
NAMES = list(REDUCTIONS)
# Fields of Checker that only its own second search (``--atomicity auto``) sets; the docs name them as such.
CHECKER_INTERNAL = {"atomicity_proved", "proved_with"}


def section(text: str, start: str, end: str | None = None) -> str:
    """From the line that starts with ``start`` to the next heading of the same or a higher level."""
    i = text.index(start)
    level = len(start) - len(start.lstrip("#"))
    if end is None:
        m = re.compile(rf"^#{{1,{level}}} ", re.M).search(text, i + len(start))
        return text[i: m.start() if m else len(text)]
    return text[i: text.index(end, i)]


def subcommands() -> dict[str, set[str]]:
    """The long options of each subcommand of the real parser (and ``""`` for ``movers`` itself)."""
    p = _parser()
    out = {"": {o for a in p._actions for o in a.option_strings if o.startswith("--") and o != "--help"}}
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    for name, sp in sub.choices.items():
        out[name] = {o for a in sp._actions for o in a.option_strings if o.startswith("--") and o != "--help"}
    return out


def options(text: str) -> set[str]:
    return set(re.findall(r"--[a-z][a-z-]*[a-z]", text))


# -- reductions ----------------------------------------------------------------------------------------------


def test_there_are_twelve_reductions() -> None:
    """The docs below say "twelve": a new reduction must update them."""
    assert len(NAMES) == 12


def test_readme_lists_every_reduction() -> None:
    part = section(README, "Twelve reductions", "`movers check model.py --atomicity`")
    listed = []
    for line in part.splitlines():
        if line.startswith("- `"):
            listed += re.findall(r"`([a-z][a-z+-]*)`", line.split(":")[0])
    assert listed == NAMES


@pytest.mark.parametrize("doc", ["README.md", "docs/README.md", "docs/cli.md", "docs/reductions.md"])
def test_every_list_of_reductions_is_complete(doc: str) -> None:
    """Any list of reduction names that starts as the registry does (``none, static-por, …``, quoted or not)
    is the whole registry, in its order: the compare default, the unknown-reduction message, the JSON field,
    the Python API."""
    text = (ROOT / doc).read_text()
    quoted = r'[`"]+[a-z][a-z+-]*[`"]+'
    # Quoted names may end with "or"/"and"; a bare list (a code span, a message) has commas only.
    # A command line that names some reductions on purpose (``--reductions none,static-por,…``) is no list.
    lists = [rf'[`"]+none[`"]+,\s*[`"]+static-por[`"]+(?:(?:,\s*(?:(?:or|and)\s+)?|\s+(?:or|and)\s+){quoted})*',
             r"(?<!--reductions )(?<![`\"\w-])none,\s*static-por(?:,\s*[a-z][a-z+-]*[a-z])*"]
    found = 0
    for pattern in lists:
        for m in re.finditer(pattern, text):
            names = re.findall(r"[a-z][a-z+-]*[a-z]", re.sub(r"\b(?:or|and)\b", " ", m.group(0)))
            found += 1
            assert names == NAMES, f"{doc}: {m.group(0)!r}"
    if doc == "docs/cli.md":
        assert found >= 4, "the compare default, the messages, the JSON field, the Python API"


def test_reductions_md_has_a_section_for_every_reduction() -> None:
    text = (ROOT / "docs" / "reductions.md").read_text()
    headings = "\n".join(re.findall(r"^#+ .*$", text, re.M)) + "\n" + section(text, "## Dwyer et al.")
    assert [n for n in NAMES if f"`{n}`" not in headings] == []


# -- command-line options ------------------------------------------------------------------------------------


def synopsis(text: str) -> dict[str, str]:
    """The synopsis block (```` ``` ```` then ``movers check``): each subcommand's lines."""
    block = re.search(r"```\n(movers check .*?)```", text, re.S)
    assert block, "no synopsis"
    out: dict[str, str] = {}
    current = None
    for line in block.group(1).splitlines():
        m = re.match(r"movers (\w+)|movers (--version)", line)
        if m:
            current = m.group(1) or ""
            line = line[m.end():] if m.group(1) else line
        assert current is not None
        out[current] = out.get(current, "") + " " + line
    return out


@pytest.mark.parametrize("doc", ["README.md", "docs/cli.md"])
def test_synopsis_lists_every_option_of_every_subcommand(doc: str) -> None:
    real = subcommands()
    shown = {k: options(v) for k, v in synopsis((ROOT / doc).read_text()).items()}
    assert shown == real


def table_options(part: str) -> set[str]:
    return {o for line in part.splitlines() if line.startswith("| `--") for o in options(line.split(" | ")[0])}


def test_check_options_table_lists_every_option() -> None:
    assert table_options(section(CLI, "## `movers check`")) == subcommands()["check"]


def test_compare_options_table_lists_every_option() -> None:
    assert table_options(section(CLI, "## `movers compare`")) == subcommands()["compare"]


def test_replay_section_names_every_option() -> None:
    assert subcommands()["replay"] <= options(section(CLI, "## `movers replay`"))


# -- Python API ----------------------------------------------------------------------------------------------


def documented_signature(text: str, call: str) -> ast.arguments:
    m = re.search(re.escape(call) + r"\((.*?)\)(?:`| -> |\.run\(\))", text, re.S)
    assert m, f"no signature for {call}"
    return ast.parse(f"def f({' '.join(m.group(1).split())}): pass").body[0].args  # type: ignore[attr-defined]


def value(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)  # Limits(): compared by name below


def params(args: ast.arguments) -> list[tuple[str, object, bool]]:
    """(name, default, keyword-only) of a parsed signature."""
    pos = args.posonlyargs + args.args
    defaults = [None] * (len(pos) - len(args.defaults)) + [value(d) for d in args.defaults]
    out = [(a.arg, d, False) for a, d in zip(pos, defaults, strict=True)]
    out += [(a.arg, None if d is None else value(d), True)
            for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    return out


def test_check_signature_is_the_code_s() -> None:
    real = [(p.name, None if p.default is inspect.Parameter.empty else p.default,
             p.kind is inspect.Parameter.KEYWORD_ONLY) for p in inspect.signature(movers.check).parameters.values()]
    assert params(documented_signature(CLI, "`movers.check")) == real


def test_every_keyword_of_check_is_explained() -> None:
    api = section(CLI, "## Python API")
    for name in inspect.signature(movers.check).parameters:
        assert re.search(rf"^- `{name}`|`{name}=|`{name}` ", api, re.M), name


def test_readme_names_every_keyword_of_check() -> None:
    missing = [n for n in inspect.signature(movers.check).parameters if n != "model" and f"`{n}`" not in README]
    assert missing == []


def test_checker_signature_is_the_code_s() -> None:
    fields = [f for f in dataclasses.fields(Checker) if f.init and f.name not in CHECKER_INTERNAL]
    shown = params(documented_signature(CLI, "`Checker"))
    assert [n for n, _, _ in shown] == [f.name for f in fields]
    for (name, default, _), f in zip(shown[1:], fields[1:], strict=True):
        if name not in ("limits", "options"):  # Options() in the docs, a default factory in the code
            assert default == f.default, name
    api = section(CLI, "## Python API")
    assert all(f"`{n}`" in api for n in CHECKER_INTERNAL)


def listed(paragraph: str) -> set[str]:
    return set(re.findall(r"`([a-z_]+)`", paragraph))


def properties(cls: type) -> set[str]:
    return {n for n, v in vars(cls).items() if isinstance(v, property)}


@pytest.mark.parametrize(("cls", "start"), [(Result, "`Result` (what"), (Stats, "- `Stats`:"),
                                             (Violation, "- `Violation`:"), (TraceStep, "- `TraceStep`:")])
def test_the_fields_of_the_result_are_documented(cls: type, start: str) -> None:
    api = section(CLI, "## Python API")
    i = api.index(start)
    end = api.find("\n- ", i + 3)
    blank = api.find("\n\n", i)
    paragraph = api[i: min(e for e in (end, blank) if e > 0)]
    fields = {f.name for f in dataclasses.fields(cls)}
    # Values that the paragraph quotes are not fields; every field is named, nothing that is not one.
    assert fields <= listed(paragraph), fields - listed(paragraph)
    # Also allowed: reductions ("with `none`"), keywords ("a failed `assert`"), JSON-only keys of the same object.
    known = fields | properties(cls) | set(NAMES) | set(keyword.kwlist) | {"steps_per_transaction"}
    assert listed(paragraph) <= known, listed(paragraph) - known


def test_the_json_table_lists_every_field() -> None:
    part = section(CLI, "### `--json`")
    rows = [line.split(" | ")[0] for line in part.splitlines() if line.startswith("| `")]
    top = {n for r in rows for n in re.findall(r"`([a-z_]+)`", r)}
    stats = {n for r in rows for n in re.findall(r"`stats\.([a-z_]+)`", r)}
    r = movers.check(source="x = 0\n")
    # ``limit`` only in an incomplete result, ``hunt`` only with --simulate or --swarm.
    assert top | {"stats"} == set(r.to_json()) | {"limit", "hunt"}
    assert stats == set(Stats().to_json()) | {"transactions", "steps_per_transaction"}
