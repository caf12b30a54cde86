"""The comparison of ``movers compare``: one row per reduction on the same model, each measured against the
baseline row, the reduction that explores every interleaving (``movers.reduce.BASELINE``).

A row's ratio is computed here, once, for every format (report/registry.py): its states over the states of
the first baseline row that was not refused; none for a refused row, without such a baseline row, or when
the baseline stored no state. It is ``incomplete`` when either row was cut short by a limit: it then compares
parts, not wholes (the text table says so beside it).
"""

from __future__ import annotations

from dataclasses import dataclass

from movers.report.result import Result


@dataclass(frozen=True)
class Ratio:
    value: float | None = None
    incomplete: bool = False


@dataclass
class Row:
    result: Result
    # The row the others are measured against (set from movers.reduce.BASELINE by ``comparison``).
    baseline: bool = False
    # ``compare --atomicity``: the same reduction's standard search (no atomicity checking), as in Figure 1
    # of papers/003.
    standard: Result | None = None

    @property
    def refused(self) -> bool:
        return self.result.verdict == "error"

    @property
    def standard_states(self) -> int | None:
        """The states of the standard search, None without one or when it refused the model."""
        if self.standard is None or self.standard.verdict == "error":
            return None
        return self.standard.stats.states


@dataclass
class Comparison:
    model: str
    rows: list[Row]
    # The --atomicity mode of the instrumented rows (None without --atomicity).
    atomicity: str | None = None

    @property
    def with_standard(self) -> bool:
        """Whether the rows have their standard searches beside them (their own columns)."""
        return any(row.standard is not None for row in self.rows)

    def ratios(self) -> list[Ratio]:
        return ratios(self.rows)


def ratios(rows: list[Row]) -> list[Ratio]:
    """Each row's states against the baseline's: the one rule of every format."""
    base = next((row.result for row in rows if row.baseline and not row.refused), None)
    if base is None or not base.stats.states:
        return [Ratio() for _ in rows]
    return [Ratio() if row.refused else
            Ratio(row.result.stats.states / base.stats.states, "incomplete" in (base.verdict, row.result.verdict))
            for row in rows]


def comparison(results: list[Result], model: str, standard: dict[str, Result] | None = None,
               atomicity: str | None = None) -> Comparison:
    """The comparison of ``results`` (one per reduction, in order), with the standard searches by reduction."""
    from movers.reduce import BASELINE

    standard = standard or {}
    return Comparison(model, [Row(r, baseline=r.reduction == BASELINE, standard=standard.get(r.reduction))
                              for r in results], atomicity)


__all__ = ["Comparison", "Ratio", "Row", "comparison", "ratios"]
