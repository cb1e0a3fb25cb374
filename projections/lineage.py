"""Lineage: every event that touched a gallon-RIN, by batch and serial range, for `trace`.

A regulator traces any block from its generation to its retirement, and finds everyone touched
by a bad batch: the rows overlapping the block's batch (any K) and serials, oldest first.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from ledger.rin import parse_code
from projections.batch import Batch
from projections.facts import Fact, batch_of
from projections.schema import Table

LINEAGE = Table(
    "lineage",
    "One row per block an event names: generation, assignment, split daughters, transfers out "
    "and in, separation (the K=1 blocks separated) and retirement.",
    {
        "notification_id": (int, "position of the event in the notification log"),
        "seq": (int, "index of the block within the event"),
        "batch": (str, "batch identity YYYYCCCCFFFFFBBBBB (§80.1425(e))"),
        "serial_start": (int, "first gallon-RIN serial"),
        "serial_end": (int, "last gallon-RIN serial"),
        "effective_date": (str, "the transaction date (ISO)"),
        "event": (str, "generated, assigned, split, transferred_out, transferred_in, "
                       "separated or retired"),
        "party": (str, "the party whose event it is"),
        "counterparty": (str, "the other party of a transfer"),
        "rin": (str, "the block's 38-character batch-RIN code"),
        "k": (int, "K of the block as the event names it"),
        "gallon_rins": (int, "gallon-RINs in the block"),
    },
    pk=("notification_id", "seq"),
    indexes=(("batch", "serial_start"),),
)
TABLES = (LINEAGE,)
TRACED = {
    "generated", "assigned", "split", "transferred_out", "transferred_in", "separated", "retired",
}
COLUMNS = ["date", "event", "party", "counterparty", "rin", "k", "gallon_rins"]


def project(fact: Fact, batch: Batch) -> None:
    if fact.kind not in TRACED:
        return
    for seq, block in enumerate(fact.blocks):
        batch.add(LINEAGE.name, {
            "notification_id": fact.notification_id, "seq": seq, "batch": batch_of(block),
            "serial_start": block.start, "serial_end": block.end,
            "effective_date": fact.effective_date, "event": fact.kind, "party": fact.party,
            "counterparty": fact.counterparty, "rin": block.code, "k": block.key.k,
            "gallon_rins": block.gallon_rins,
        })


def trace(db: Database, code: str) -> list[dict[str, Any]]:
    """Every event that touched any gallon-RIN of block `code` (any K), oldest first; `rin` and
    `gallon_rins` describe the overlapping part."""
    key, start, end = parse_code(code)
    rows = db.query(
        "SELECT * FROM lineage WHERE batch = ? AND serial_start <= ? AND serial_end >= ? "
        "ORDER BY effective_date, notification_id, seq",
        [str(key.batch_id), end, start],
    )
    out = []
    for row in rows:
        low, high = max(start, row["serial_start"]), min(end, row["serial_end"])
        out.append({
            "date": row["effective_date"], "event": row["event"], "party": row["party"],
            "counterparty": row["counterparty"], "rin": f"{row['rin'][:22]}{low:08d}{high:08d}",
            "k": row["k"], "gallon_rins": high - low + 1,
        })
    return out
