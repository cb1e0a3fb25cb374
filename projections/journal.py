"""The journal: one flat row per event, for browsing and for `--known-at` timestamps."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlite_utils import Database

from projections.batch import Batch
from projections.facts import Fact
from projections.schema import Table

JOURNAL = Table(
    "journal",
    "Every Party event in the order the ledger recorded it, flattened.",
    {
        "notification_id": (int, "position of the event in the notification log"),
        "effective_date": (str, "the transaction date (ISO); empty for registrations"),
        "recorded": (str, "when the ledger recorded the event (UTC ISO timestamp)"),
        "event": (str, "the event type"),
        "party": (str, "the party whose event it is"),
        "counterparty": (str, "the other party of a transfer or fuel movement"),
        "d_code": (int, "D code of the RINs named"),
        "vintage": (int, "vintage of the RINs named"),
        "k": (int, "K of the RINs as the event names them"),
        "gallon_rins": (int, "gallon-RINs named by the event"),
        "volume": (str, "standardized gallons of fuel (exact decimal text)"),
        "reason": (str, "separation or retirement reason, or fuel direction"),
        "client_id": (str, "the command id that caused the event, if any"),
        "rins": (str, "the 38-character codes of the blocks named, space-separated"),
    },
    pk=("notification_id",),
    indexes=(("recorded",),),
    index_late=True,
)
TABLES = (JOURNAL,)
KINDS = None  # every Party event


def stamp(moment: datetime) -> str:
    """An aware time as UTC ISO text with microseconds, so that text order is time order."""
    if moment.tzinfo is not UTC:  # the log's own timestamps are UTC already: no conversion
        moment = moment.astimezone(UTC)
    return moment.isoformat(timespec="microseconds")


def project(fact: Fact, batch: Batch) -> None:
    event, blocks = fact.event, fact.blocks
    if blocks:
        first = blocks[0].key
        named: tuple[int | None, ...] = (
            first.d_code, first.vintage, first.k, sum([b.gallon_rins for b in blocks]))
    else:
        named = (None, None, None, None)
    volume = getattr(event, "standardized_volume", None) or getattr(event, "volume", None)
    batch.add(JOURNAL, (
        fact.notification_id, fact.effective_date, stamp(event.timestamp), fact.kind, fact.party,
        fact.counterparty, *named, None if volume is None else str(volume),
        getattr(event, "reason", None) or getattr(event, "direction", None),
        getattr(event, "client_id", None), " ".join(fact.codes) or None,
    ))


def position_at(db: Database, moment: datetime) -> int:
    """The last notification id recorded at or before `moment` (naive means UTC); 0 if none."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    row = next(db.query(
        "SELECT MAX(notification_id) AS n FROM journal WHERE recorded <= ?", [stamp(moment)]
    ))
    return int(row["n"] or 0)
