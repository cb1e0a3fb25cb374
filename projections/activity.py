"""The RIN Activity Report (§80.1451(c)(2)): per party and quarter, a row for assigned (K=1)
and one for separated (K=2) RINs, each with current-year (vintage Y) and prior-year (vintage
Y − 1) RINs owned at the start and end of the quarter, purchased, sold, retired (and the invalid
part, §80.1431(a)) and separated, the RINs generated, and the fuel owned at the quarter's end.

Holdings at the start and end come from the holdings history (projections/holdings.py); the
flows in between from the transaction report's rows (projections/rin_transactions.py): two read
models, so the identity per row and vintage class,
    end = start + purchased − sold − retired + generated (assigned row) ∓ separated,
is a real check (`rin verify`, projections/activity_check.py), not true by construction. A
reversed trade (EMTS remedial buy/sell, §80.1452(d)) is purchased back by the party that gave the
RINs and sold back by the one that got them; an unretired retirement's RINs are `reinstated`
(§80.1451(c)(2)(xvii)) and add to the end: + reinstated in the identity.
Vintages older than Y − 1 appear in no column. A delayed-RIN batch generated in Y of vintage
Y − 1 (§80.1426(g)(10)) counts in `generated` and in the prior class's identity.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from sqlite_utils import Database

from projections.invalid import invalid_sets, overlap
from projections.rin_transactions import quarter_of, upto

#: the two rows of §80.1451(c)(2): RINs assigned to a volume of fuel (K=1) and separated (K=2)
ASSIGNMENTS = (("assigned", 1), ("separated", 2))
#: the vintage classes: current-year (vintage Y) and prior-year (vintage Y − 1) RINs
CLASSES = (("current", 0), ("prior", 1))
#: the columns of design.md "Release 2": `party, year, quarter, assignment`, then the amounts
COLUMNS = [
    "party", "year", "quarter", "assignment", "current_start", "prior_start",
    "current_purchased", "prior_purchased", "current_sold", "prior_sold", "current_retired",
    "current_retired_invalid", "prior_retired", "prior_retired_invalid", "current_separated",
    "prior_separated", "current_end", "prior_end", "generated", "fuel_end", "reinstated",
]
AMOUNTS = COLUMNS[4:]
#: the flows reported per vintage class (rin_transactions `flow`); `generated` and
#: `reinstated` are reported once per row, summed over the two classes
FLOWS = ("purchased", "sold", "retired", "separated")
Slot = tuple[int, int]  # (K, vintage)


def quarter_days(year: int) -> list[date]:
    """The day before Q1 and each quarter's last day (§80.1451(f)(2) Table 1)."""
    return [date(year - 1, 12, 31), date(year, 3, 31), date(year, 6, 30), date(year, 9, 30),
            date(year, 12, 31)]


@dataclass
class QuarterActivity:
    """One party's quarter: holdings per (K, vintage) at its start and end, flows per
    (activity column, K, vintage), invalid gallon-RINs retired per (K, vintage), fuel at end."""

    party: str
    year: int
    quarter: int
    start: dict[Slot, int] = field(default_factory=lambda: defaultdict(int))
    end: dict[Slot, int] = field(default_factory=lambda: defaultdict(int))
    flows: dict[tuple[str, int, int], int] = field(default_factory=lambda: defaultdict(int))
    invalid: dict[Slot, int] = field(default_factory=lambda: defaultdict(int))
    fuel_end: Decimal = Decimal(0)

    def generated(self, k: int, vintage: int) -> int:
        """RINs generated into (K, vintage): always assigned, K=1 (§80.1426(e))."""
        return self.flows[("generated", 1, vintage)] if k == 1 else 0

    def rows(self) -> list[dict[str, Any]]:
        """The report's two rows, `assigned` then `separated`."""
        out = []
        for assignment, k in ASSIGNMENTS:
            row: dict[str, Any] = {"party": self.party, "year": self.year,
                                   "quarter": self.quarter, "assignment": assignment}
            for name, back in CLASSES:
                vintage = self.year - back
                row[f"{name}_start"] = self.start[(k, vintage)]
                row[f"{name}_end"] = self.end[(k, vintage)]
                for column in FLOWS:  # a separation's RINs are named K=1
                    row[f"{name}_{column}"] = self.flows[(column, 1 if column == "separated"
                                                          else k, vintage)]
                row[f"{name}_retired_invalid"] = self.invalid[(k, vintage)]
            row["generated"] = sum(self.generated(k, self.year - back) for _, back in CLASSES)
            row["fuel_end"] = self.fuel_end
            row["reinstated"] = sum(self.flows[("reinstated", k, self.year - back)]
                                    for _, back in CLASSES)
            out.append({column: row[column] for column in COLUMNS})
        return out

    def identity_problems(self) -> list[str]:
        """Each row and class whose end ≠ start + purchased − sold − retired + reinstated +
        generated ∓ separated (§80.1451(c)(2)(iii)-(xvii)), naming the numbers."""
        problems = []
        for (assignment, k), row in zip(ASSIGNMENTS, self.rows(), strict=True):
            sign = -1 if k == 1 else 1  # out of the assigned row, into the separated row
            for name, back in CLASSES:
                expected = (
                    row[f"{name}_start"] + row[f"{name}_purchased"] - row[f"{name}_sold"]
                    - row[f"{name}_retired"] + self.flows[("reinstated", k, self.year - back)]
                    + self.generated(k, self.year - back)
                    + sign * row[f"{name}_separated"]
                )
                if expected != row[f"{name}_end"]:
                    problems.append(
                        f"§80.1451(c)(2): party {self.party} {self.year} Q{self.quarter} "
                        f"{assignment} {name}-year RINs end at {row[f'{name}_end']:,} but start "
                        f"+ purchased − sold − retired + reinstated + generated ∓ separated is "
                        f"{expected:,}"
                    )
        return problems


def year_activity(db: Database, party: str, year: int, known_at: int | None = None
                  ) -> list[QuarterActivity]:
    """The party's four quarters of `year` as known at notification `known_at`."""
    quarters = rin_quarters(db, party, year, known_at)
    add_invalid(db, quarters, known_at)
    add_fuel(db, quarters, [day.isoformat() for day in quarter_days(year)], upto(known_at))
    return quarters


def rin_quarters(db: Database, party: str, year: int, known_at: int | None = None
                 ) -> list[QuarterActivity]:
    """The RINs of the party's four quarters, holdings and flows, without the invalid part and
    the fuel: all the identity reads."""
    last = upto(known_at)
    quarters = [QuarterActivity(party, year, q) for q in (1, 2, 3, 4)]
    days = [day.isoformat() for day in quarter_days(year)]
    vintages = [year, year - 1]
    balances = db.query(
        "SELECT k, vintage, " + ", ".join(
            f"SUM(CASE WHEN effective_date <= ? THEN gallon_rins ELSE 0 END) AS b{i}"
            for i in range(len(days))
        ) + " FROM holdings_history WHERE party = ? AND vintage IN (?, ?) "
        "AND effective_date <= ? AND notification_id <= ? GROUP BY k, vintage",
        [*days, party, *vintages, days[-1], last],
    )
    for row in balances:
        slot = (row["k"], row["vintage"])
        for i, quarter in enumerate(quarters):
            quarter.start[slot] = row[f"b{i}"]
            quarter.end[slot] = row[f"b{i + 1}"]
    for row in db.query(
        "SELECT quarter, flow, k, vintage, SUM(gallon_rins) AS n FROM rin_transactions "
        "WHERE party = ? AND year = ? AND vintage IN (?, ?) AND notification_id <= ? "
        "GROUP BY quarter, flow, k, vintage", [party, year, *vintages, last],
    ):
        quarters[row["quarter"] - 1].flows[(row["flow"], row["k"], row["vintage"])] = row["n"]
    return quarters


def add_invalid(db: Database, quarters: list[QuarterActivity], known_at: int | None) -> None:
    """The invalid part of each quarter's retired RINs (§80.1451(c)(2)(x), (xii)): serials
    found invalid (§80.1431(a)) by `known_at`, whenever found."""
    party, year = quarters[0].party, quarters[0].year
    found = invalid_sets(db, known_at=known_at)
    if not found:
        return
    for row in db.query(
        "SELECT effective_date, k, vintage, batch, serial_start, serial_end FROM retired_blocks "
        "WHERE party = ? AND effective_date BETWEEN ? AND ? AND vintage IN (?, ?) "
        "AND notification_id <= ?",
        [party, f"{year}-01-01", f"{year}-12-31", year, year - 1, upto(known_at)],
    ):
        n = overlap(found.get(row["batch"]), row["serial_start"], row["serial_end"])
        quarters[quarter_of(row["effective_date"]) - 1].invalid[(row["k"], row["vintage"])] += n


def add_fuel(db: Database, quarters: list[QuarterActivity], days: list[str], last: int) -> None:
    """Gallons of renewable fuel owned at each quarter's end (§80.1451(c)(2)(xvi))."""
    totals = [Decimal(0)] * len(quarters)
    for row in db.query(
        "SELECT effective_date, volume FROM fuel_history WHERE party = ? AND effective_date <= ? "
        "AND notification_id <= ?", [quarters[0].party, days[-1], last],
    ):
        for i, day in enumerate(days[1:]):
            if row["effective_date"] <= day:
                totals[i] += Decimal(row["volume"])
    for quarter, total in zip(quarters, totals, strict=True):
        quarter.fuel_end = total


def activity(db: Database, party: str, year: int, quarter: int | None = None,
             known_at: int | None = None) -> list[dict[str, Any]]:
    """The report's rows for `quarter` of `year` (every quarter if None), as known at
    `known_at`: `assigned` then `separated` per quarter."""
    return [row for q in year_activity(db, party, year, known_at)
            if quarter is None or q.quarter == quarter for row in q.rows()]
