"""Quarter-end check (§80.1428(a)(5)): assigned gallon-RINs owned ≤ 2.5 × renewable fuel owned.

On 31 March, 30 June, 30 September and 31 December of a year, per party: Σ assigned (K=1)
gallon-RINs owned (from the holdings history), Σ standardized gallons of renewable fuel owned
(from the fuel history below), the limit 2.5 × volume, and any excess. A report, not a refusal.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from decimal import Decimal
from typing import Any

from sqlite_utils import Database

from projections.batch import Batch
from projections.facts import Fact
from projections.schema import Table

RINS_PER_GALLON = Decimal("2.5")  # §80.1428(a)(5)
QUARTER_ENDS = ((3, 31), (6, 30), (9, 30), (12, 31))

FUEL = Table(
    "fuel_history",
    "Every change to a party's renewable fuel volume in standardized gallons: + received, "
    "produced or assigned with RINs; − delivered, transferred with RINs, or used in separation.",
    {
        "notification_id": (int, "position of the event in the ledger's notification log"),
        "party": (str, "4-digit company id of the owner"),
        "effective_date": (str, "the transaction date (ISO)"),
        "event": (str, "assigned, transferred_out, transferred_in, fuel_moved or separated"),
        "volume": (str, "signed change in standardized gallons, exact decimal text"),
    },
    pk=("notification_id",),
    indexes=(("party", "effective_date"),),
    index_late=True,
)
TABLES = (FUEL,)
#: the report's columns, one row per party and quarter end
COLUMNS = ["party", "date", "assigned_rins", "volume", "limit", "excess", "ok"]
KINDS = frozenset({"assigned", "transferred_in", "transferred_out", "fuel_moved", "separated",
                   "trade_reversed_in", "trade_reversed_out"})


def fuel_change(fact: Fact) -> Decimal | None:
    """The signed fuel volume an event moves in or out of its party's inventory."""
    event, kind = fact.event, fact.kind
    if kind in ("assigned", "transferred_in", "trade_reversed_in"):
        return event.volume or None
    if kind in ("transferred_out", "trade_reversed_out"):
        return -event.volume if event.volume else None
    if kind == "fuel_moved":
        moved: Decimal = event.volume
        return -moved if event.direction == "delivered" else moved
    if kind == "separated":
        return -event.fuel_used if event.fuel_used else None
    return None


def project(fact: Fact, batch: Batch) -> None:
    change = fuel_change(fact)
    if change is not None:
        batch.add(FUEL, (
            fact.notification_id, fact.party, fact.effective_date, fact.kind, str(change),
        ))


def quarter_ends(year: int) -> list[date]:
    return [date(year, month, day) for month, day in QUARTER_ENDS]


def quarterly(db: Database, year: int, party: str | None = None) -> list[dict[str, Any]]:
    """Rows `party, date, assigned_rins, volume, limit, excess, ok` for each quarter end.

    The §80.1428(a)(5) check on 31 March, 30 June, 30 September and 31 December.
    """
    return [row for on in quarter_ends(year) for row in check_on(db, on, party)]


def check_on(db: Database, on: date, party: str | None) -> list[dict[str, Any]]:
    """Every party that has owned assigned RINs or fuel by `on`, with both sums on that date.

    Both sums of §80.1428(a)(5) on one date.
    """
    filters, params = "effective_date <= ?", [on.isoformat()]
    if party is not None:
        filters += " AND party = ?"
        params.append(party)
    assigned: dict[str, int] = defaultdict(int)
    for row in db.query(
        "SELECT party, SUM(gallon_rins) AS n FROM holdings_history "
        f"WHERE k = 1 AND {filters} GROUP BY party", params,
    ):
        assigned[row["party"]] = row["n"]
    volume: dict[str, Decimal] = defaultdict(Decimal)
    for row in db.query(f"SELECT party, volume FROM fuel_history WHERE {filters}", params):
        volume[row["party"]] += Decimal(row["volume"])
    rows = []
    for holder in sorted(set(assigned) | set(volume)):
        limit = RINS_PER_GALLON * volume[holder]
        excess = max(Decimal(0), assigned[holder] - limit)
        rows.append({
            "party": holder, "date": on.isoformat(), "assigned_rins": assigned[holder],
            "volume": volume[holder], "limit": limit, "excess": excess, "ok": excess == 0,
        })
    return rows
