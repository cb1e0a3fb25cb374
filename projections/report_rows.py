"""Typed rows of the reports whose values were mixed (ISO strings beside `Decimal`s and ints):
one frozen dataclass a row, readable as a mapping too (ledger/application/rows.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from ledger.application.rows import Row


@dataclass(frozen=True, slots=True, eq=False)
class QuarterEnd(Row):
    """The §80.1428(a)(5) check of one party on one quarter end: assigned gallon-RINs owned
    against 2.5 × the gallons of renewable fuel owned that day."""

    party: str
    date: date
    assigned_rins: int
    volume: Decimal
    limit: Decimal
    excess: Decimal
    ok: bool

    @classmethod
    def of(cls, row: dict[str, Any]) -> QuarterEnd:
        """A row of `projections.quarterly.quarterly`, typed."""
        return cls(
            row["party"], date.fromisoformat(row["date"]), int(row["assigned_rins"]),
            Decimal(row["volume"]), Decimal(row["limit"]), Decimal(row["excess"]),
            bool(row["ok"]),
        )
