"""The statistics of a search, the same for every strategy and reduction, so that ratios between reductions
mean something (docs/cli.md, "stats"): distinct states stored, atomic steps executed (a move of k steps counts
k), the deepest path, time and peak memory."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Stats:
    states: int = 0
    transitions: int = 0
    max_depth: int = 0
    seconds: float = 0.0
    peak_memory_mb: float = 0.0
    # Moves explored (a move of k steps counts once); equals transitions for --reduction none.
    moves: int = 0
    # Transactions executed (--reduction transactions): moves that ran a whole transaction.
    transactions: int = 0

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        del d["moves"]
        if not self.transactions:
            del d["transactions"]
        else:
            d["steps_per_transaction"] = round(self.transitions / self.transactions, 2)
        return d
