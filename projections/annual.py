"""The annual compliance report (§80.1451(a)(1)): per RVO category, the RVO ((vi), including a
deficit carried in, as §80.1407(a) defines it), the deficit carried in ((vii)), current- and
prior-year RINs retired for compliance ((viii), (ix)) and the invalid ones among them ((xvi),
(xvii)), and the deficit carried into the next year ((xii)).

Read from the compliance read models (projections/compliance.py: obligation reports, retired
blocks, invalid ranges), as known at any notification. A RIN counts in every category it is
valid for (§80.1427(a)(2), a D7 RIN in the one it was designated for, (a)(3)(ii)); retired
counts include invalid RINs, which `rin compliance` leaves out of `applied` (§80.1431(b)(2)).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlite_utils import Database

from ledger.rules.s1407_obligations import Category
from ledger.rules.s1427_compliance import Status, valid_for
from projections.compliance import positions
from projections.invalid import invalid_retired
from projections.rin_transactions import upto

COLUMNS = ["party", "year", "category", "rvo", "deficit_carried_in", "current_year_retired",
           "prior_year_retired", "current_year_invalid", "prior_year_invalid",
           "deficit_carried_out"]


def retired_for(db: Database, party: str, year: int, known_at: int | None
                ) -> tuple[dict[tuple[Category, int], int], dict[tuple[Category, int], int]]:
    """Gallon-RINs retired for compliance year `year` per (category, vintage), and the invalid
    part of them, as known at `known_at`."""
    invalid = invalid_retired(db, party, known_at)
    retired: dict[tuple[Category, int], int] = defaultdict(int)
    bad: dict[tuple[Category, int], int] = defaultdict(int)
    for row in db.query(
        "SELECT notification_id, seq, d_code, vintage, category, gallon_rins FROM "
        "compliance_retirements WHERE party = ? AND compliance_year = ? AND notification_id <= ?",
        [party, year, upto(known_at)],
    ):
        for category in valid_for(row["d_code"], row["category"]):
            retired[(category, row["vintage"])] += row["gallon_rins"]
            bad[(category, row["vintage"])] += invalid.get((row["notification_id"], row["seq"]), 0)
    return retired, bad


def annual(db: Database, party: str, year: int, known_at: int | None = None
           ) -> list[dict[str, Any]]:
    """One row per category, CB, BBD, AB, RF, for a party with an obligation by `year`; none
    for a party that never reported one."""
    found = [p for p in positions(db, party, known_at) if p.year == year]
    if not found:
        return []
    retired, bad = retired_for(db, party, year, known_at)
    return [{
        "party": party, "year": year, "category": str(p.category), "rvo": p.rvo,
        "deficit_carried_in": p.deficit_carried_in,
        "current_year_retired": retired[(Category(p.category), year)],
        "prior_year_retired": retired[(Category(p.category), year - 1)],
        "current_year_invalid": bad[(Category(p.category), year)],
        "prior_year_invalid": bad[(Category(p.category), year - 1)],
        # §80.1427(b)(1): a deficit is carried only where the year may carry one
        "deficit_carried_out": p.deficit if p.status == Status.DEFICIT_CARRIED else 0,
    } for p in found]
