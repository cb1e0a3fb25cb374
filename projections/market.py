"""Market statistics: gallon-RINs generated, separated and retired per D code per month, the
shape of EPA's public RIN data tables."""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from projections.batch import Batch
from projections.facts import Fact
from projections.schema import Table

MARKET = Table(
    "market_monthly",
    "Gallon-RINs generated, separated and retired per D code per month (by effective date).",
    {
        "month": (str, "YYYY-MM of the effective date"),
        "d_code": (int, "D code"),
        "generated": (int, "gallon-RINs generated (§80.1426)"),
        "separated": (int, "gallon-RINs separated (§80.1429)"),
        "retired": (int, "gallon-RINs retired, for compliance or any other reason"),
    },
    pk=("month", "d_code"),
)
TABLES = (MARKET,)
#: the counted kinds, in the order of their columns
KINDS = ("generated", "separated", "retired")


def project(fact: Fact, batch: Batch) -> None:
    if not fact.effective_date:
        return
    month, column = fact.effective_date[:7], KINDS.index(fact.kind)
    for block in fact.blocks:
        amounts = [0] * len(KINDS)
        amounts[column] = block.gallon_rins
        batch.bump(MARKET, (month, block.key.d_code), tuple(amounts))


def market(db: Database, year: int | None = None) -> list[dict[str, Any]]:
    """Rows `month, d_code, generated, separated, retired`, optionally for one year."""
    sql, params = "SELECT * FROM market_monthly", []
    if year is not None:
        sql += " WHERE month LIKE ?"
        params.append(f"{year}-%")
    return [dict(row) for row in db.query(sql + " ORDER BY month, d_code", params)]
