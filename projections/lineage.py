"""Lineage: every event that touched a gallon-RIN, by batch and serial range, for `trace`.

A regulator traces any block from its generation to its retirement, and finds everyone touched
by a bad batch: the rows overlapping the block's batch (any K) and serials, oldest first.

`lineage` is a SQL view. An event that changes a party's holdings (assignment, transfer out or
in, separation, retirement) already has one holdings_history row per block it names, with the
same key, so only the blocks of events that change no holding (a generation's batch, a split's
daughters) are stored here, in `lineage_blocks`.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from ledger.domain.rin import parse_code
from projections.batch import Batch
from projections.facts import BATCH, Fact
from projections.schema import Table, View

#: the lineage view's columns: name → (SQLite type, description)
LINEAGE_COLUMNS: dict[str, tuple[type, str]] = {
    "notification_id": (int, "position of the event in the notification log"),
    "seq": (int, "index of the block within the event"),
    "batch": (str, "batch identity YYYYCCCCFFFFFBBBBB (§80.1425(e))"),
    "serial_start": (int, "first gallon-RIN serial"),
    "serial_end": (int, "last gallon-RIN serial"),
    "effective_date": (str, "the transaction date (ISO)"),
    "event": (str, "generated, assigned, split, transferred_out, transferred_in, separated, "
                   "retired, trade_reversed_out, trade_reversed_in or unretired"),
    "party": (str, "the party whose event it is"),
    "counterparty": (str, "the other party of a transfer"),
    "rin": (str, "the block's 38-character batch-RIN code"),
    "k": (int, "K of the block as the event names it"),
    "gallon_rins": (int, "gallon-RINs in the block"),
}
BLOCKS = Table(
    "lineage_blocks",
    "The blocks named by events that change no party's holdings: a generation's batch and a "
    "split's daughters. With holdings_history they make the lineage view.",
    {**LINEAGE_COLUMNS, "event": (str, "generated or split")},
    pk=("notification_id", "seq"),
    indexes=(("batch", "serial_start"),),
    index_late=True,
)
TABLES = (BLOCKS,)
KINDS = frozenset({"generated", "split"})
_NAMED = ", ".join(column for column in LINEAGE_COLUMNS if column != "gallon_rins")
LINEAGE = View(
    "lineage",
    "one row per block an event names: generation, assignment, split daughters, transfers out "
    "and in, separation (the K=1 blocks separated) and retirement.",
    {name: text for name, (_, text) in LINEAGE_COLUMNS.items()},
    f"SELECT {_NAMED}, abs(gallon_rins) AS gallon_rins FROM holdings_history "
    # a separation names its K=1 blocks: the K=2 rows it adds are not blocks it names
    "WHERE gallon_rins < 0 OR event != 'separated' "
    f"UNION ALL SELECT {_NAMED}, gallon_rins FROM lineage_blocks",
)
VIEWS = (LINEAGE,)
COLUMNS = ["date", "event", "party", "counterparty", "rin", "k", "gallon_rins"]


def project(fact: Fact, batch: Batch) -> None:
    for seq, (block, code) in enumerate(zip(fact.blocks, fact.codes, strict=True)):
        batch.add(BLOCKS, (
            fact.notification_id, seq, code[BATCH], block.start, block.end, fact.effective_date,
            fact.kind, fact.party, fact.counterparty, code, block.key.k, block.gallon_rins,
        ))


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
