"""Compliance positions (§80.1427): each obligated party's four RVOs per year against the RINs it
retired for that year, with deficits carried year to year (§80.1427(b)).

Obligation reports and compliance retirements are kept as rows; the positions table is computed
from them by `ledger.rules.s1427_compliance.compliance_positions`, chained from the party's first
obligation year so that a deficit carried into a year is part of that year's RVO.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from sqlite_utils import Database

from ledger.rules.s1407_obligations import Category
from ledger.rules.s1427_compliance import (
    CompliancePosition,
    Retirement,
    YearReport,
    carries_deficits,
    chain_positions,
)
from ledger.rules.s1429_separation import APPLIED_REASONS
from projections.batch import Batch
from projections.batch_locks import locked_now
from projections.facts import Fact
from projections.invalid import STANDING, invalid_retired
from projections.schema import Table, View

OBLIGATIONS = Table(
    "obligations",
    "Every obligation report (§80.1407); the latest per party and year is the one in force.",
    {
        "notification_id": (int, "position of the report in the notification log"),
        "party": (str, "4-digit company id of the obligated party or exporter"),
        "year": (int, "compliance year"),
        "effective_date": (str, "date of the report (ISO), if given"),
        "source": (str, "given, or computed from gasoline and diesel volumes"),
        "approach": (str, "compliance approach, if stated (§80.1427(b)(1)(iv))"),
        "bbd_2010_reduction": (int, "reduction of RVO_BBD,2010 under §80.1427(a)(7)(i)"),
        **{c.value: (int, f"RVO_{c.value} in gallon-RINs, before any carried deficit")
           for c in Category},
    },
    pk=("notification_id",),
    indexes=(("party", "year"),),
)
POSITIONS = Table(
    "compliance",
    "Year-end compliance position per party, year and RVO (§80.1427); recomputed whenever a "
    "party's obligations or compliance retirements change.",
    {
        "party": (str, "4-digit company id"),
        "year": (int, "compliance year"),
        "category": (str, "CB, BBD, AB or RF"),
        "rvo": (int, "RVO in gallon-RINs, including any deficit carried in"),
        "deficit_carried_in": (int, "deficit carried in from the previous year (§80.1427(b))"),
        "current_year_rins": (int, "valid gallon-RINs of this year's vintage retired"),
        "prior_year_rins": (int, "valid gallon-RINs of last year's vintage retired"),
        "prior_year_applied": (int, "prior-year gallon-RINs counted, at most 20 % of the RVO "
                               "(§80.1427(a)(5))"),
        "applied": (int, "gallon-RINs applied to the RVO, never more than it (§80.1427(a)(1)); "
                    "the excess retired counts for no other year ((a)(6)(ii))"),
        "deficit": (int, "RVO − applied, never negative"),
        "status": (str, "compliant, deficit_carried or violation"),
    },
    pk=("party", "year", "category"),
)
TABLES = (OBLIGATIONS, POSITIONS)
COLUMNS = list(POSITIONS.columns)
RETIREMENTS = View(
    "compliance_retirements",
    "gallon-RINs retired for compliance (§80.1427(a)), or to replace invalid RINs retired for "
    "compliance (EMTS 110, §80.1474(b)), one row per retired block: the retired_blocks rows "
    "with those reasons that no reversal (EMTS unretire) has returned.",
    {
        "notification_id": "position of the retirement in the notification log",
        "seq": "index of the block within the event",
        "party": "4-digit company id of the retiring party",
        "compliance_year": "the year the RINs are retired for",
        "effective_date": "date of the retirement (ISO)",
        "d_code": "D code",
        "vintage": "year the RINs were generated",
        "category": "CB or BBD for a D7 RIN (§80.1427(a)(3)(ii)), else empty",
        "gallon_rins": "gallon-RINs retired",
    },
    "SELECT notification_id, seq, party, compliance_year, effective_date, d_code, vintage, "
    f"category, gallon_rins FROM retired_blocks r WHERE {STANDING} AND reason IN "
    f"({', '.join(repr(str(reason)) for reason in APPLIED_REASONS)})",
)
VIEWS = (RETIREMENTS,)
KINDS = frozenset({"obligation_reported", "retired", "unretired"})
SLOT = "compliance_year, d_code, vintage, category"


def project(fact: Fact, batch: Batch) -> None:
    event = fact.event
    if fact.kind == "obligation_reported":
        batch.add(OBLIGATIONS, (
            fact.notification_id, fact.party, event.year, fact.effective_date, event.source,
            event.approach, event.bbd_2010_reduction,
            *(int(event.rvo.get(c.value, 0)) for c in Category),
        ))
        batch.compliance_parties.add(fact.party)
    elif event.reason in APPLIED_REASONS:  # a retirement or its reversal, kept by `invalid`
        batch.compliance_parties.add(fact.party)


def positions(db: Database, party: str, known_at: int | None = None
              ) -> list[CompliancePosition]:
    """Every year's positions for `party`, from its first obligation year to its last year, as
    known at notification `known_at` (all that is known if None)."""
    known = 2**63 - 1 if known_at is None else known_at
    reports: dict[int, dict[str, Any]] = {}
    for row in db.query(
        "SELECT * FROM obligations WHERE party = ? AND notification_id <= ? "
        "ORDER BY notification_id", [party, known]
    ):
        reports[row["year"]] = row  # the latest report for a year wins
    if not reports:
        return []
    # §80.1431(b)(2): the gallon-RINs of a block found invalid, even after it was retired, are
    # not applied.
    invalid = invalid_retired(db, party, known_at)
    sums: dict[tuple[int, int, int, str | None], int] = defaultdict(int)
    for row in db.query(
        f"SELECT {SLOT}, SUM(gallon_rins) AS n FROM compliance_retirements WHERE party = ? "
        f"AND notification_id <= ? GROUP BY {SLOT}", [party, known],
    ):
        sums[slot(row)] += row["n"]
    if invalid:
        for row in db.query(
            f"SELECT notification_id, seq, {SLOT} FROM compliance_retirements WHERE party = ? "
            "AND notification_id <= ?", [party, known],
        ):
            sums[slot(row)] -= invalid.get((row["notification_id"], row["seq"]), 0)
    uncounted_while_locked(db, party, sums, invalid)
    retired: dict[int, list[Retirement]] = defaultdict(list)
    for (year, d_code, vintage, category), n in sorted(
        sums.items(), key=lambda item: (item[0][:3], item[0][3] or "")
    ):
        retired[year].append(Retirement(d_code, vintage, n, category))
    years = chain_positions(party, {
        year: YearReport(
            {c: int(report.get(c.value) or 0) for c in Category}, report.get("approach"),
            int(report.get("bbd_2010_reduction") or 0),
        )
        for year, report in reports.items()
    }, retired, carry=carries_deficits(roles(db, party)))
    return [positions[c] for positions in years.values() for c in Category]


def uncounted_while_locked(db: Database, party: str,
                           sums: dict[tuple[int, int, int, str | None], int],
                           invalid: dict[tuple[int, int], int]) -> None:
    """RINs of a batch a lock holds now, retired for compliance, stop counting in `applied`
    while the lock holds (§80.1474(b)(1), design.md "Locks"); the invalid part of a block is
    already left out (§80.1431(b)(2)), so only the rest is taken off."""
    locked = locked_now(db)
    if not locked:
        return
    marks = ", ".join("?" for _ in locked)
    reasons = ", ".join("?" for _ in APPLIED_REASONS)
    for row in db.query(
        f"SELECT notification_id, seq, {SLOT}, gallon_rins FROM retired_blocks WHERE party = ? "
        f"AND reason IN ({reasons}) AND batch IN ({marks})",
        [party, *(str(r) for r in APPLIED_REASONS), *sorted(locked)],
    ):
        sums[slot(row)] -= row["gallon_rins"] - invalid.get((row["notification_id"], row["seq"]), 0)


def roles(db: Database, party: str) -> list[str]:
    """The party's registered roles: an exporter's ERVO shortfall is not carried (§80.1427(c))."""
    rows = list(db.query("SELECT roles FROM parties WHERE party = ?", [party]))
    return list(json.loads(rows[0]["roles"])) if rows else []


def slot(row: Any) -> tuple[int, int, int, str | None]:
    """What retired gallon-RINs are summed by: compliance year, D code, vintage, category."""
    return row["compliance_year"], row["d_code"], row["vintage"], row["category"]


def refresh(db: Database, parties: set[str]) -> None:
    """Recompute the positions table rows of `parties`, inside the caller's transaction."""
    for party in sorted(parties):
        db.execute("DELETE FROM compliance WHERE party = ?", [party])
        db.conn.executemany(POSITIONS.insert_sql(), [
            tuple(str(getattr(p, column)) if column in ("category", "status")
                  else getattr(p, column) for column in COLUMNS)
            for p in positions(db, party)
        ])


def compliance(db: Database, year: int, party: str | None = None) -> list[dict[str, Any]]:
    """Rows `party, year, category, rvo, …, deficit, status` for `year`, CB, BBD, AB, RF order."""
    sql = "SELECT * FROM compliance WHERE year = ?"
    params: list[Any] = [year]
    if party is not None:
        sql += " AND party = ?"
        params.append(party)
    order = {c.value: i for i, c in enumerate(Category)}
    rows = [dict(row) for row in db.query(sql, params)]
    return sorted(rows, key=lambda r: (r["party"], order[r["category"]]))
