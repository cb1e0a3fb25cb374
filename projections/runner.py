"""The catch-up follower: reads the ledger's notification log and keeps the views exactly once.

SQLite has no subscriptions, so `project` reads the log through the ledger's read port
(`Ledger.log`, ledger/application/event_log.py) from the last tracked position in batches
(1,000 events a transaction, one tracking record per batch) and `rebuild` empties the views
and starts from 0. Only Party, BatchInvalidation and BatchStatus events are read: command
records are rows of `rin_commands`, outside the log (ledger/infrastructure/command_table.py),
or, in stores begun before issue 15, `CommandRecord` events, which are not read.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any
from uuid import UUID

from eventsourcing.persistence import IntegrityError, Tracking

from ledger.application.event_log import LoggedEvent
from ledger.application.follow import DOMAIN_TOPICS
from ledger.application.ledger import Ledger
from ledger.domain.invalidation import BatchInvalidation
from ledger.domain.party import Party
from ledger.infrastructure.settings import VIEWS_FILE
from projections import (
    batch_locks,
    compliance,
    emts_submissions,
    export_deadlines,
    generation_report,
    holdings,
    invalid,
    journal,
    late,
    lineage,
    market,
    market_tables,
    parties,
    pg_views,
    quarterly,
    rin_transactions,
    trades,
    transfer_documents,
)
from projections.batch import Batch
from projections.facts import Fact
from projections.tracking import ViewRecorder, complete, tracked

#: the views' storage: a SQLite file, or tables in PostgreSQL
Recorder = ViewRecorder | pg_views.PgViewRecorder

BATCH_SIZE = 1000
VIEW_MODULES = (
    holdings, quarterly, compliance, lineage, journal, market, invalid, transfer_documents,
    export_deadlines, trades, rin_transactions, generation_report,
    late, market_tables, emts_submissions,
)
TABLES = tuple(t for m in (parties, batch_locks, *VIEW_MODULES) for t in m.TABLES)
SQL_VIEWS = (*holdings.VIEWS, *compliance.VIEWS, *lineage.VIEWS, *market_tables.VIEWS)
#: the tables' layout, kept in the file's user_version: a file of an older one is projected anew
#: (2: compliance rows apply at most the RVO, §80.1427(a)(1); rows of layout 1 may not;
#: 3: a year a deficit is carried into has its rows without a report of its own,
#: §80.1427(b)(1)(ii), and the transfer_documents table; 4: the ervo_deadlines table,
#: §80.1430(f); 5: the EMTS postings, trade_postings and trade_closings, §80.1452; 6: reversals,
#: unretired_blocks, and compliance_retirements without the retirements they returned;
#: 7: batch_events, QAP verifications and locks, §80.1471(e), §80.1474(b)(1);
#: 8: rin_transactions and generated_batches, §80.1451(b)-(c);
#: 9: late_submissions, market_states, market_reasons, market_generation, emts_submissions;
#: 10: rin_transactions `flow` and its reversals, §80.1452(d))
LAYOUT = 10
#: the regulator's findings (§80.1431): events of a BatchInvalidation, not of a party
FINDINGS = (BatchInvalidation.Event, BatchInvalidation.Opened)
#: the topics of every event class of the aggregates the views follow (a store begun before
#: issue 15 also holds `CommandRecord` events, about a quarter of its log: never read)
TOPICS = DOMAIN_TOPICS  # the same topics as `Ledger.follow`
Progress = Callable[[int, int], None]
#: what else reads each Party event's fact as a rebuild makes it (`verify`'s replay), in log
#: order: one decoding of the log for both
Observer = Callable[[Fact], None]
#: each Party aggregate's id, as its 128-bit integer (hashing a UUID runs Python code, once per
#: event), → the party's company id
Owners = dict[int, str]


#: the views' location when not `<data>/views.sqlite`: a file or a PostgreSQL URL
VIEWS_VARIABLE = "RIN_VIEWS"


def views_path(ledger: Ledger) -> Path:
    """`<data>/views.sqlite`, next to the SQLite event store (or under RIN_DATA for PostgreSQL)."""
    return ledger.folder / VIEWS_FILE


def open_views(path: str | os.PathLike[str]) -> Recorder:
    """The read-model file (its folder made if need be: a PostgreSQL ledger has no data folder),
    or for a `postgresql://` URL the read models in that database (projections/pg_views.py)."""
    if pg_views.is_url(path):
        return pg_views.PgViewRecorder(str(path), TABLES, SQL_VIEWS, LAYOUT)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return ViewRecorder(path, TABLES, SQL_VIEWS, LAYOUT)


def views_location(ledger: Ledger) -> str | Path:
    """Where the views live: `RIN_VIEWS` (a file, or a `postgresql://` URL shared by several
    processes or machines), else `<data>/views.sqlite`."""
    return os.environ.get(VIEWS_VARIABLE) or views_path(ledger)


def project(
    ledger: Ledger, path: str | os.PathLike[str] | None = None, *, batch_size: int = BATCH_SIZE,
    progress: Progress | None = None, stop: int | None = None,
) -> int:
    """Bring the views up to date from the last tracked position; return the new position."""
    recorder = open_views(path or views_location(ledger))
    try:
        return follow(ledger, recorder, batch_size, progress, stop)
    except OutOfStep:
        recorder.close()
        return rebuild(ledger, path, batch_size=batch_size, progress=progress, stop=stop)
    finally:
        recorder.close()


def current(ledger: Ledger, db: sqlite3.Connection) -> bool:
    """Whether the views file open on `db` holds every table of the layout and is tracked at
    the log's last notification: nothing to project, so a report reads it straight away
    instead of opening the follower (its connection set-up was most of an as-of query)."""
    c = db.cursor()
    try:
        return (complete(c, TABLES, SQL_VIEWS, LAYOUT)
                and tracked(c, ledger.log.name) == ledger.log.position())
    except sqlite3.DatabaseError:  # no tracking table yet, or not a views file: project
        return False
    finally:
        c.close()


class OutOfStep(Exception):
    """The views' tracked position disagrees with their rows or the store (the tracking row
    was edited or deleted, or the store lost its tail): `project` rebuilds instead of looping."""


def rebuild(
    ledger: Ledger, path: str | os.PathLike[str] | None = None, *, batch_size: int = BATCH_SIZE,
    progress: Progress | None = None, stop: int | None = None, observe: Observer | None = None,
) -> int:
    """Empty the views and project every event from the start of the log; then create the
    large tables' indexes and the derived tables, each built once from all rows rather than
    grown batch by batch. `observe` is given every Party event's fact, in log order."""
    recorder = open_views(path or views_location(ledger))
    try:
        recorder.clear(ledger.log.name)
        position = follow(ledger, recorder, batch_size, progress, stop, observe)
        recorder.create_table()
        return position
    finally:
        recorder.close()


def follow(
    ledger: Ledger, recorder: Recorder, batch_size: int, progress: Progress | None,
    stop: int | None, observe: Observer | None = None,
) -> int:
    """Project batches up to `stop` (or the end of the log when called); one transaction per
    batch. Only the Party and BatchInvalidation events are read: a page of fewer than
    `batch_size` of them has read everything up to the end, which is then the position."""
    log = ledger.log
    name = log.name
    latest = log.position()
    end = stop if stop is not None else latest
    position = recorder.max_tracking_id(name) or 0
    if not isinstance(position, int):  # plain SQL can store any value in the views file
        raise OutOfStep(f"tracked at {position!r}, not a notification id")
    if position > latest:
        raise OutOfStep(f"tracked at {position:,}, past the store's end")
    owners: Owners | None = None  # loaded once there is something to project
    while position < end:
        for page in log.pages(position, stop=end, topics=TOPICS, size=batch_size):
            if position >= end:  # a full page reached `end`: the pager's empty last page
                break
            last = page[-1].notification_id if len(page) == batch_size else end
            if owners is None:
                owners = load_owners(recorder)
            batch = collect(page, owners, observe)
            try:
                recorder.record(batch, Tracking(name, last), finisher(batch), after=position)
            except (IntegrityError, sqlite3.IntegrityError):
                # Another follower recorded this position first: resume from where it got to.
                # If none did (the position did not move), the rows were there but the
                # tracking record was not: edited or deleted by hand.
                moved = recorder.max_tracking_id(name) or 0
                if moved <= position:
                    raise OutOfStep(
                        f"rows past notification {position:,} exist untracked") from None
                position, owners = moved, None
                break
            position = last
            if progress is not None:
                progress(position, end)
    return position


class Rebuilding:
    """A rebuild fed page by page by someone else's walk of the log (`rin verify`'s one pass,
    projections/verify_pass.py) instead of reading the log itself: the same rows, tracking and
    derived tables as `rebuild`."""

    def __init__(self, path: str | os.PathLike[str], name: str,
                 observe: Observer | None = None) -> None:
        self.recorder = open_views(path)
        self.name = name
        self.observe = observe
        self.owners: Owners = {}
        self.position = 0
        self.recorder.clear(name)

    def page(self, page: Sequence[LoggedEvent], last: int) -> None:
        """Project one page's events, tracked at `last` (the page's last notification id)."""
        batch = collect(page, self.owners, self.observe)
        self.recorder.record(batch, Tracking(self.name, last), finisher(batch),
                             after=self.position)
        self.position = last

    def finish(self) -> None:
        """The large tables' indexes and the derived tables, built once from all rows."""
        try:
            self.recorder.create_table()
        finally:
            self.recorder.close()

    def close(self) -> None:
        self.recorder.close()


def collect(page: Sequence[LoggedEvent], owners: Owners, observe: Observer | None = None
            ) -> Batch:
    """Every view's rows for a page of the log; each Party event's fact also to `observe`."""
    batch = Batch()
    for logged in page:
        fact = apply_event(logged.notification_id, logged.event, owners, batch)
        if fact is not None and observe is not None:
            observe(fact)
    return batch


def apply_event(notification_id: int, event: Any, owners: Owners, batch: Batch) -> Fact | None:
    """Add one domain event's rows to `batch` in every view that takes its kind; return its
    fact if it is a Party event."""
    if isinstance(event, FINDINGS):
        invalid.project_finding(notification_id, event, batch)
        return None
    if isinstance(event, batch_locks.STATUS_EVENTS):
        batch_locks.project_status(notification_id, event, batch)
        return None
    aggregate = event.originator_id.int
    if type(event) is Party.Registered:
        owners[aggregate] = event.party_id
        parties.register(notification_id, event, batch)
    owner = owners.get(aggregate)
    if owner is None:
        return None  # not a Party event
    fact = Fact.of(notification_id, owner, event)
    for project in projectors(fact.kind):
        project(fact, batch)
    return fact


@cache
def projectors(kind: str) -> tuple[Callable[[Fact, Batch], None], ...]:
    """The `project` functions of the views that take events of `kind` (each module's KINDS;
    None means every kind)."""
    return tuple(m.project for m in VIEW_MODULES if m.KINDS is None or kind in m.KINDS)


def finisher(batch: Batch) -> Callable[[Any], None] | None:
    """Recompute the compliance positions of the parties this batch touched, including those
    that retired for compliance RINs of a batch it found invalid (§80.1431(b)(2))."""
    if not batch.compliance_parties and not batch.invalidated and not batch.locks_changed:
        return None
    return lambda db: compliance.refresh(
        db, batch.compliance_parties
        | invalid.retirers(db, batch.invalidated | batch.locks_changed)
    )


def load_owners(recorder: Recorder) -> Owners:
    """Each Party aggregate's id → its company id, from the parties projected so far."""
    if isinstance(recorder, pg_views.PgViewRecorder):
        rows = recorder.ask(lambda db: db.query("SELECT originator_id, party FROM parties"))
        return {UUID(row["originator_id"]).int: row["party"] for row in rows}
    with recorder.datastore.transaction(commit=False) as c:
        c.execute("SELECT originator_id, party FROM parties")
        return {UUID(row["originator_id"]).int: row["party"] for row in c.fetchall()}
