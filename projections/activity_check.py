"""`rin verify`'s check of the RIN Activity Report (§80.1451(c)(2)) for every party and quarter.

For each party, every quarter from the first year it held or moved a RIN to the last: each row
and vintage class ends where start + purchased − sold − retired + reinstated + generated ∓
separated puts it, each quarter starts where the one before ended, and a Q1's prior-year
start is the previous year's Q4 current-year end. Holdings and flows come from two read models
(projections/activity.py), so a flow a projector drops or a holding it mis-signs is found.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from sqlite_utils import Database

from projections import sqlite_memory
from projections.activity import ASSIGNMENTS, QuarterActivity, rin_quarters


@dataclass
class Checked:
    """What the check found, and how many party-quarters it checked."""

    problems: list[str] = field(default_factory=list)
    quarters: int = 0
    parties: int = 0


def continuity(before: QuarterActivity, after: QuarterActivity) -> list[str]:
    """`after` starts where `before` ended, in each row, for the vintages both report: within a
    year both classes, across a year-end the earlier year's current class (vintage Y − 1)."""
    vintages = {before.year, before.year - 1} & {after.year, after.year - 1}
    return [
        f"§80.1451(c)(2): party {after.party} {after.year} Q{after.quarter} {assignment} "
        f"vintage {vintage} starts at {after.start[(k, vintage)]:,}, but "
        f"{before.year} Q{before.quarter} ended at {before.end[(k, vintage)]:,}"
        for assignment, k in ASSIGNMENTS for vintage in sorted(vintages)
        if after.start[(k, vintage)] != before.end[(k, vintage)]
    ]


def check(db: Database) -> Checked:
    """The identity and continuity of every party's quarters."""
    found = Checked()
    spans = db.query(
        "SELECT party, MIN(year) AS first, MAX(year) AS last FROM (SELECT party, "
        "CAST(substr(effective_date, 1, 4) AS INTEGER) AS year FROM holdings_history "
        "UNION ALL SELECT party, year FROM rin_transactions) GROUP BY party ORDER BY party"
    )
    for span in list(spans):
        found.parties += 1
        previous: QuarterActivity | None = None
        for year in range(span["first"], span["last"] + 1):
            for quarter in rin_quarters(db, span["party"], year):
                found.problems += quarter.identity_problems()
                if previous is not None:
                    found.problems += continuity(previous, quarter)
                previous = quarter
                found.quarters += 1
    return found


def problems(path: str | os.PathLike[str]) -> list[str]:
    """The broken activity identities in the views file at `path` (empty: all hold)."""
    db = Database(os.fspath(path))
    sqlite_memory.bound(db.conn)  # its GROUP BY over every holdings row spills to disk
    try:
        return check(db).problems
    finally:
        db.close()
