"""EMTS postings and their status (§80.1452(c)): every sell and buy, pending until closed.

Rows are only ever added, as the log is (exactly once, batch by batch): one row per posting when
it is posted, one per posting when it closes; `rin trades` joins them, a posting without a
closing being `pending`.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Any

from sqlite_utils import Database

from projections.batch import Batch
from projections.facts import Fact
from projections.schema import Table

POSTINGS = Table(
    "trade_postings",
    "Every EMTS sell and buy as posted (§80.1452(c)), with the exact ranges a sell reserved.",
    {
        "id": (str, "the posting's id (its line's `id`)"),
        "side": (str, "sell or buy"),
        "party": (str, "who posted it"),
        "partner": (str, "the trading partner it names"),
        "date": (str, "the transfer date (ISO)"),
        "d_code": (int, "D code"),
        "vintage": (int, "RIN year"),
        "k": (int, "1 assigned, 2 separated"),
        "quantity": (int, "gallon-RINs"),
        "volume": (str, "gallons of fuel with assigned RINs (exact decimal text), if any"),
        "price": (str, "price per gallon-RIN, if given"),
        "gallon_price": (str, "price per gallon of fuel with its RINs, if given"),
        "reason": (str, "EMTS buy/sell reason code, as EMTS writes it (010 …)"),
        "broker": (str, "broker or agent's company id (§80.1454(a)(3)(ii)), if any"),
        "ptd": (str, "PTD reference, if any"),
        "match": (str, "the posting it named in `match`, if any"),
        "rins": (str, "a sell's reserved ranges, 38-character codes separated by spaces"),
        "notification_id": (int, "position of the posting in the notification log"),
    },
    pk=("id",),
    indexes=(("party",), ("partner",)),
    index_late=True,  # no query during a rebuild reads it: indexed once at its end
)
CLOSINGS = Table(
    "trade_closings",
    "How and when each posting ended: completed, cancelled (060), denied (050) or expired.",
    {
        "id": (str, "the posting's id"),
        "status": (str, "completed, cancelled, denied or expired"),
        "closed_on": (str, "effective date of the closing (ISO)"),
        "reason": (str, "EMTS code of a cancel (060) or deny (050); empty otherwise"),
        "counterpart": (str, "the posting that completed it"),
        "notification_id": (int, "position of the closing in the notification log"),
    },
    pk=("id",),
)
TABLES = (POSTINGS, CLOSINGS)
KINDS = frozenset({"trade_posted", "trade_closed"})
COLUMNS = ["id", "side", "party", "partner", "status", "date", "d_code", "vintage", "k",
           "quantity", "volume", "match", "price", "gallon_price", "reason", "broker", "ptd",
           "closed_on", "closing_reason", "counterpart"]
STATUSES = ("pending", "completed", "cancelled", "denied", "expired")


def code(value: int | None) -> str | None:
    """An EMTS buy/sell code as EMTS writes it: three digits (reference.md §5)."""
    return None if value is None else f"{value:03d}"


def text(value: Any) -> str | None:
    return None if value is None else str(value)


def project(fact: Fact, batch: Batch) -> None:
    event = fact.event
    if fact.kind == "trade_closed":
        batch.add(CLOSINGS, (event.posting, str(event.status), fact.effective_date,
                             code(event.reason_code), event.counterpart, fact.notification_id))
        return
    batch.add(POSTINGS, (
        event.client_id, str(event.side), fact.party, event.partner, fact.effective_date,
        event.d_code, event.vintage, event.k, event.quantity, text(event.volume),
        text(event.price), text(event.gallon_price), code(event.reason_code), event.broker,
        event.ptd, event.match, " ".join(fact.codes), fact.notification_id,
    ))


def trades(db: Database, party: str | None = None, status: str | None = None
           ) -> list[dict[str, Any]]:
    """Postings in posting order; `party` as poster or partner; `status` as it stands."""
    clause, params = "1 = 1", []
    if party is not None:
        clause, params = f"{clause} AND (p.party = ? OR p.partner = ?)", [party, party]
    if status is not None:
        clause, params = f"{clause} AND coalesce(c.status, 'pending') = ?", [*params, status]
    rows = db.query(
        "SELECT p.*, coalesce(c.status, 'pending') AS status, c.closed_on, "
        "c.reason AS closing_reason, c.counterpart FROM trade_postings p "
        f"LEFT JOIN trade_closings c ON c.id = p.id WHERE {clause} ORDER BY p.notification_id",
        params,
    )
    return [{column: row[column] for column in COLUMNS} for row in rows]


Reservations = dict[tuple[str, str], list[tuple[int, int]]]


def reservations(db: Database, as_of: date | None, known_at: int | None) -> Reservations:
    """(seller, 22-character code prefix) → the serial ranges pending sells reserve on `as_of`
    as known at `known_at` (§80.1452): posted by then and not yet closed."""
    day = as_of.isoformat() if as_of is not None else "9999-12-31"
    known = known_at if known_at is not None else 2**62
    out: Reservations = defaultdict(list)
    for row in db.query(
        "SELECT p.party, p.rins FROM trade_postings p LEFT JOIN trade_closings c ON c.id = p.id "
        "AND c.notification_id <= ? AND c.closed_on <= ? WHERE p.side = 'sell' AND p.date <= ? "
        "AND p.notification_id <= ? AND c.id IS NULL", [known, day, day, known],
    ):
        for rin in row["rins"].split():
            out[(row["party"], rin[:22])].append((int(rin[22:30]), int(rin[30:38])))
    return out
