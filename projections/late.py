"""Late submissions (§80.1452(b)-(c)): each reportable event's recorded time against its
effective date, in business days (weekdays that are not US federal holidays as observed).

A generation, separation, sell or retirement is due within 5 business days, a buy within 10
(§80.1452(c)); a fast-path `transfer` is a sell for the seller and a buy for the buyer. A
two-sided trade's transfer events are not rows: its postings are the sell and the buy.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import UTC, date
from functools import lru_cache
from typing import Any

from sqlite_utils import Database

from ledger.domain.business_days import federal_holidays
from projections.batch import Batch
from projections.facts import Fact
from projections.schema import Table

#: business days allowed per submission type (§80.1452(b), (c))
DEADLINES = {"generate": 5, "separate": 5, "sell": 5, "retire": 5, "buy": 10}
LATE = Table(
    "late_submissions",
    "Every EMTS submission the ledger recorded, its effective date against the day it was "
    "recorded (UTC), in business days (§80.1452(b)-(c): 5, or 10 for a buy).",
    {
        "notification_id": (int, "position of the event in the notification log"),
        "party": (str, "the submitting party"),
        "command": (str, "the id of the command (line `id`, or the posting's id), if any"),
        "type": (str, "generate, separate, sell, buy or retire (a transfer: sell and buy)"),
        "date": (str, "the reportable event's effective date (ISO)"),
        "recorded": (str, "the UTC day the ledger recorded it (ISO)"),
        "business_days": (int, "business days after `date` up to and including `recorded`"),
        "deadline_days": (int, "business days allowed (§80.1452(b)-(c))"),
        "late": (int, "1 when business_days exceeds deadline_days"),
    },
    pk=("notification_id",),
    indexes=(("date",),),
    index_late=True,  # no query during a rebuild reads it: indexed once at its end
)
TABLES = (LATE,)
KINDS = frozenset({"generated", "separated", "retired", "trade_posted", "transferred_out",
                   "transferred_in"})
COLUMNS = ["party", "command", "type", "date", "recorded", "business_days", "deadline_days",
           "late"]
#: the submission type of each kind of event (a posting's is its side)
TYPES = {"generated": "generate", "separated": "separate", "retired": "retire",
         "transferred_out": "sell", "transferred_in": "buy"}


def weekdays_through(day: date) -> int:
    """Weekdays from 1 January of year 1 (a Monday) through `day`."""
    weeks, rest = divmod(day.toordinal(), 7)
    return 5 * weeks + min(rest, 5)


@lru_cache(maxsize=256)
def weekday_holidays(year: int) -> tuple[int, ...]:
    """The ordinals of `year`'s federal holidays (as observed) that fall on a weekday: the days
    `is_business_day` refuses besides weekends (ledger/domain/business_days.py)."""
    return tuple(sorted(day.toordinal() for day in federal_holidays(year)
                        if day.year == year and day.weekday() < 5))


@lru_cache(maxsize=65_536)
def elapsed(effective: date, recorded: date) -> int:
    """Business days after `effective` up to and including `recorded`, as
    `business_days_after` counts them, in time independent of the span (a back-dated history
    spans years): weekdays less the weekday holidays between."""
    if recorded <= effective:
        return 0
    low, high = effective.toordinal(), recorded.toordinal()
    holidays = sum(
        bisect_right(days, high) - bisect_right(days, low)
        for days in map(weekday_holidays, range(effective.year, recorded.year + 1))
    )
    return weekdays_through(recorded) - weekdays_through(effective) - holidays


def submission_type(fact: Fact) -> str | None:
    """The §80.1452 submission an event is, or None (a two-sided trade's transfer events)."""
    if fact.kind == "trade_posted":
        return str(fact.event.side)
    if fact.kind.startswith("transferred_") and fact.event.postings:
        return None
    return TYPES[fact.kind]


def project(fact: Fact, batch: Batch) -> None:
    kind = submission_type(fact)
    if kind is None or fact.effective_date is None:
        return
    effective = date.fromisoformat(fact.effective_date)
    moment = fact.event.timestamp
    recorded = (moment if moment.tzinfo is UTC else moment.astimezone(UTC)).date()
    days, deadline = elapsed(effective, recorded), DEADLINES[kind]
    batch.add(LATE, (fact.notification_id, fact.party, fact.event.client_id, kind,
                     fact.effective_date, recorded.isoformat(), days, deadline,
                     int(days > deadline)))


def late(db: Database, year: int, known_at: int | None = None, only_late: bool = False
         ) -> list[dict[str, Any]]:
    """Rows `party, command, type, date, recorded, business_days, deadline_days, late` of the
    events dated in `year`, as known at notification `known_at`, in log order."""
    sql = ("SELECT * FROM late_submissions WHERE date >= ? AND date <= ? "
           "AND notification_id <= ?")
    if only_late:
        sql += " AND late = 1"
    params = [f"{year:04d}-01-01", f"{year:04d}-12-31", known_at if known_at is not None
              else 2**62]
    return [{**{c: row[c] for c in COLUMNS}, "late": bool(row["late"])}
            for row in db.query(sql + " ORDER BY notification_id", params)]
