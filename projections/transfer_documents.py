"""Product transfer documents (§80.1428(a)(6), §80.1453(a)): every transfer, and its PTD.

§80.1453(a) has the transferor give a PTD on each transfer of renewable fuel or separated RINs;
§80.1428(a)(6) records assigned RINs on the PTD of their fuel, and §80.1429(d) has a PTD go with
every transfer of separated RINs. The ledger cannot see paper, so a
transfer line carries a PTD reference (`ptd`). A transfer without one is still recorded: the
RINs and fuel did change hands, and refusing the fact would leave the ledger's owners wrong
while the missing document is the transferor's own recordkeeping violation. Instead every
transfer lacking a reference is reported here (`rin ptd --missing`), each with the paragraph
that required the document, for the party and its attest auditor (§80.1464) to follow up.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from projections.batch import Batch
from projections.facts import Fact
from projections.holdings import where
from projections.schema import Table

DOCUMENTS = Table(
    "transfer_documents",
    "Every transfer of RINs or renewable fuel, with the PTD reference its line gave (if any) and "
    "the paragraph requiring the PTD.",
    {
        "notification_id": (int, "position of the transferor's event in the notification log"),
        "effective_date": (str, "the transfer date (ISO)"),
        "party": (str, "the transferor, who owes the PTD (§80.1453(a))"),
        "counterparty": (str, "the transferee"),
        "transfer": (str, "assigned_rins (with their fuel), separated_rins or fuel (no RINs)"),
        "gallon_rins": (int, "gallon-RINs transferred (0 for fuel alone)"),
        "volume": (str, "gallons of renewable fuel transferred (exact decimal text), if any"),
        "ptd": (str, "the PTD reference the line gave; empty when none"),
        "required_by": (str, "the paragraph that requires the PTD"),
        "client_id": (str, "the command id of the transfer, if any"),
    },
    pk=("notification_id",),
)
TABLES = (DOCUMENTS,)
KINDS = frozenset({"transferred_out", "fuel_moved"})
COLUMNS = ["date", "party", "counterparty", "transfer", "gallon_rins", "volume", "ptd",
           "required_by", "client_id"]
#: what a transfer moved → the paragraph requiring its PTD
REQUIRED_BY = {
    "assigned_rins": "§80.1428(a)(6)",
    "separated_rins": "§80.1429(d)",
    "fuel": "§80.1453(a)(11)(iii)",
}


def project(fact: Fact, batch: Batch) -> None:
    """One row per transfer: assigned RINs need the PTD of §80.1428(a)(6), separated RINs the PTD of
    §80.1429(d) (§80.1453(a)).
    """
    event = fact.event
    if fact.kind == "fuel_moved":
        if event.direction != "delivered":
            return
        moved, gallon_rins = "fuel", 0
    else:
        k = fact.blocks[0].key.k if fact.blocks else 2
        moved = "assigned_rins" if k == 1 else "separated_rins"
        gallon_rins = sum(b.gallon_rins for b in fact.blocks)
    volume = getattr(event, "volume", None)
    batch.add(DOCUMENTS, (
        fact.notification_id, fact.effective_date, fact.party, fact.counterparty, moved,
        gallon_rins, None if volume is None else str(volume), event.ptd, REQUIRED_BY[moved],
        event.client_id,
    ))


def documents(
    db: Database, party: str | None = None, missing: bool = False
) -> list[dict[str, Any]]:
    """Transfers by date (a party's as transferor), only those without a PTD if `missing`."""
    clause, params = where(("party = ?", party))
    if missing:
        clause += " AND coalesce(ptd, '') = ''"
    return [
        {"date": row["effective_date"], **{c: row[c] for c in COLUMNS[1:]}}
        for row in db.query(
            f"SELECT * FROM transfer_documents WHERE {clause} "
            "ORDER BY effective_date, notification_id", params,
        )
    ]
