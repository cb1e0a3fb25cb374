"""Each export's ERVO deadline (§80.1430(f), §80.1427(c)(1)): thirty days after the export.

An exporter fulfils the ERVO of each discrete volume it exports within thirty days of the export
(§80.1430(f)) and shows the RINs retired by then (§80.1427(c)(1)). The ledger records an export
as the exporter's separation of the fuel's RINs on export (§80.1429(b)(3)): one row per such
separation, with the volume, its date and the last day its ERVO may be met. A row, not a yearly
status: the deadline binds each exported volume, not the compliance year.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from sqlite_utils import Database

from projections.batch import Batch
from projections.facts import Fact
from projections.holdings import where
from projections.schema import Table

#: §80.1430(f): "within thirty days of export"
ERVO_DAYS = timedelta(days=30)
DEADLINES = Table(
    "ervo_deadlines",
    "Each export (a separation on export, §80.1429(b)(3)) and the last day its ERVO must be met, "
    "thirty days after it (§80.1430(f), §80.1427(c)(1)).",
    {
        "notification_id": (int, "position of the export separation in the notification log"),
        "party": (str, "the exporter"),
        "export_date": (str, "the date of the export (ISO)"),
        "volume": (str, "gallons exported (exact decimal text)"),
        "gallon_rins": (int, "gallon-RINs separated on the export (§80.1429(b)(3))"),
        "d_codes": (str, "the D codes of the RINs separated, comma-separated"),
        "deadline": (str, "export date + 30 days: the last day to meet the ERVO (ISO)"),
        "required_by": (str, "the paragraph setting the deadline"),
        "client_id": (str, "the command id of the separation, if any"),
    },
    pk=("notification_id",),
)
TABLES = (DEADLINES,)
KINDS = frozenset({"separated"})
COLUMNS = ["party", "export_date", "volume", "gallon_rins", "d_codes", "deadline",
           "required_by"]


def deadline(exported: date) -> date:
    """The last day to fulfil an export's ERVO: thirty days after it (§80.1430(f))."""
    return exported + ERVO_DAYS


def project(fact: Fact, batch: Batch) -> None:
    """One row per separation on export: its ERVO deadline (§80.1430(f), §80.1427(c)(1))."""
    event = fact.event
    if event.reason != "export":
        return
    d_codes = ",".join(str(d) for d in sorted({b.key.d_code for b in fact.blocks}))
    batch.add(DEADLINES, (
        fact.notification_id, fact.party, fact.effective_date,
        None if event.volume is None else str(event.volume),
        sum(b.gallon_rins for b in fact.blocks), d_codes,
        deadline(event.effective_date).isoformat(), "§80.1430(f)", event.client_id,
    ))


def deadlines(db: Database, party: str | None = None) -> list[dict[str, Any]]:
    """Exports by date (one exporter's, if `party`), each with its ERVO deadline."""
    clause, params = where(("party = ?", party))
    return [
        {column: row[column] for column in COLUMNS}
        for row in db.query(
            f"SELECT * FROM ervo_deadlines WHERE {clause} "
            "ORDER BY export_date, notification_id", params,
        )
    ]
