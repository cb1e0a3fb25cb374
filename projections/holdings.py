"""Holdings history: one row per block a party gained (+) or gave up (−), for as-of positions.

A position on day X as the ledger knew it at notification N is the SQL sum of the rows with
`effective_date <= X` and `notification_id <= N`; no event is replayed. A party may move a
gallon-RIN only on or after the date it acquired it, so no sum is negative on any date.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Any

from sqlite_utils import Database

from ledger.rin import RinBlock
from projections.batch import Batch
from projections.facts import Fact, batch_of
from projections.schema import Table

HISTORY = Table(
    "holdings_history",
    "Every change to a party's gallon-RINs, one row per block: + acquired, − disposed. "
    "Sum gallon_rins with effective_date <= X (and notification_id <= N) for a position.",
    {
        "notification_id": (int, "position of the event in the ledger's notification log"),
        "seq": (int, "index of the block within the event"),
        "party": (str, "4-digit company id of the holder"),
        "effective_date": (str, "the transaction date (ISO) the change takes effect"),
        "event": (str, "assigned, transferred_out, transferred_in, separated or retired"),
        "d_code": (int, "D code (§80.1425(g))"),
        "vintage": (int, "YYYY, the year the RIN was generated (§80.1425(b))"),
        "k": (int, "K: 1 assigned, 2 separated (§80.1425(a))"),
        "gallon_rins": (int, "signed change in gallon-RINs (+ acquired, − disposed)"),
        "rin": (str, "the block's 38-character batch-RIN code"),
        "batch": (str, "batch identity YYYYCCCCFFFFFBBBBB (§80.1425(e))"),
        "serial_start": (int, "SSSSSSSS, first gallon-RIN serial of the block"),
        "serial_end": (int, "EEEEEEEE, last gallon-RIN serial of the block"),
        "rr": (int, "RR, 10 × equivalence value"),
        "fuel": (str, "the renewable fuel the batch was generated for"),
        "generated": (str, "the batch's generation date (ISO)"),
    },
    pk=("notification_id", "seq"),
    # covering the as-of query (party, date, known-at), so it never reads the table itself
    indexes=(
        ("party", "effective_date", "notification_id", "d_code", "vintage", "k", "gallon_rins"),
        ("batch",), ("effective_date",),
    ),
)
TABLES = (HISTORY,)
CURRENT_VIEW = (
    "CREATE VIEW IF NOT EXISTS holdings AS SELECT party, d_code, vintage, k, "
    "SUM(gallon_rins) AS gallon_rins FROM holdings_history GROUP BY party, d_code, vintage, k "
    "HAVING SUM(gallon_rins) != 0"
)


def changes(fact: Fact) -> list[tuple[RinBlock, int]]:
    """The (block, sign) changes an event makes to its party's holdings."""
    kind, blocks = fact.kind, fact.blocks
    if kind in ("assigned", "transferred_in"):
        return [(b, 1) for b in blocks]
    if kind in ("transferred_out", "retired"):
        return [(b, -1) for b in blocks]
    if kind == "separated":  # §80.1429(c): K changes 1 → 2, serials unchanged
        return [(b, -1) for b in blocks] + [
            (RinBlock(b.key.with_k(2), b.start, b.end), 1) for b in blocks
        ]
    return []


def project(fact: Fact, batch: Batch) -> None:
    for seq, (block, sign) in enumerate(changes(fact)):
        key = block.key
        batch.add(HISTORY.name, {
            "notification_id": fact.notification_id, "seq": seq, "party": fact.party,
            "effective_date": fact.effective_date, "event": fact.kind, "d_code": key.d_code,
            "vintage": key.vintage, "k": key.k, "gallon_rins": sign * block.gallon_rins,
            "rin": block.code, "batch": batch_of(block), "serial_start": block.start,
            "serial_end": block.end, "rr": key.rr, "fuel": key.fuel,
            "generated": key.generated.isoformat(),
        })


def where(party: str | None, as_of: date | None, known_at: int | None) -> tuple[str, list[Any]]:
    """The WHERE clause selecting the rows known at `known_at` and effective by `as_of`."""
    clauses, params = ["1 = 1"], []
    for clause, value in (
        ("party = ?", party),
        ("effective_date <= ?", as_of.isoformat() if as_of else None),
        ("notification_id <= ?", known_at),
    ):
        if value is not None:
            clauses.append(clause)
            params.append(value)
    return " AND ".join(clauses), params


def holdings(
    db: Database, party: str | None = None, as_of: date | None = None,
    known_at: int | None = None, blocks: bool = False,
) -> list[dict[str, Any]]:
    """Gallon-RINs held per party, D code, vintage and K on `as_of`, as known at `known_at`."""
    if blocks:
        return held_blocks(db, party, as_of, known_at)
    clause, params = where(party, as_of, known_at)
    sql = (
        "SELECT party, d_code, vintage, k, SUM(gallon_rins) AS gallon_rins "
        f"FROM holdings_history WHERE {clause} GROUP BY party, d_code, vintage, k "
        "HAVING SUM(gallon_rins) != 0 ORDER BY party, d_code, vintage, k"
    )
    return [dict(row) for row in db.query(sql, params)]


def held_blocks(
    db: Database, party: str | None, as_of: date | None, known_at: int | None
) -> list[dict[str, Any]]:
    """One row per contiguous held block: acquired minus disposed serials per party and key."""
    clause, params = where(party, as_of, known_at)
    sql = (
        "SELECT party, substr(rin, 1, 22) AS prefix, d_code, vintage, k, serial_start, "
        f"serial_end, gallon_rins FROM holdings_history WHERE {clause}"
    )
    deltas: dict[tuple[str, str, int, int, int], dict[int, int]] = defaultdict(
        lambda: defaultdict(int)
    )
    for row in db.query(sql, params):
        sign = 1 if row["gallon_rins"] > 0 else -1
        points = deltas[(row["party"], row["prefix"], row["d_code"], row["vintage"], row["k"])]
        points[row["serial_start"]] += sign
        points[row["serial_end"] + 1] -= sign
    out = []
    for (holder, prefix, d_code, vintage, k), points in sorted(deltas.items()):
        for start, end in covered(points):
            out.append({
                "party": holder, "rin": f"{prefix}{start:08d}{end:08d}", "d_code": d_code,
                "vintage": vintage, "k": k, "gallon_rins": end - start + 1,
            })
    return out


def covered(points: dict[int, int]) -> list[tuple[int, int]]:
    """The serial intervals whose running count of (+1 at start, −1 after end) is positive."""
    runs: list[tuple[int, int]] = []
    count, opened = 0, 0
    for point in sorted(points):
        before, count = count, count + points[point]
        if before <= 0 < count:
            opened = point
        elif count <= 0 < before:
            if runs and runs[-1][1] == opened - 1:
                opened = runs.pop()[0]
            runs.append((opened, point - 1))
    return runs
