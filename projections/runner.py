"""The catch-up follower: reads the ledger's notification log and keeps the views exactly once.

SQLite has no subscriptions, so `project` reads `select_notifications` from the last tracked
position in batches (about 1,000 events a transaction, one tracking record per batch) and
`rebuild` empties the views and starts from 0. CommandRecord events are skipped.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eventsourcing.persistence import IntegrityError, Tracking

from ledger.invalidation import BatchInvalidation
from ledger.ledger import Ledger
from projections import (
    compliance,
    holdings,
    invalid,
    journal,
    lineage,
    market,
    parties,
    quarterly,
)
from projections.batch import Batch
from projections.facts import COMMAND_TOPIC, Fact, kind_of
from projections.tracking import ViewRecorder

VIEWS_FILE = "views.sqlite"
BATCH_SIZE = 1000
VIEW_MODULES = (holdings, quarterly, compliance, lineage, journal, market, invalid)
TABLES = tuple(t for m in (parties, *VIEW_MODULES) for t in m.TABLES)
SQL_VIEWS = (holdings.CURRENT_VIEW,)
Progress = Callable[[int, int], None]


def views_path(ledger: Ledger) -> Path:
    """`<data>/views.sqlite`, next to the SQLite event store (or under RIN_DATA for PostgreSQL)."""
    events = ledger.app.env.get("SQLITE_DBNAME")
    folder = Path(events).parent if events else Path(os.environ.get("RIN_DATA", "./rin-data"))
    return folder / VIEWS_FILE


def open_views(path: str | os.PathLike[str]) -> ViewRecorder:
    """The read-model file (its folder made if need be: a PostgreSQL ledger has no data folder)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return ViewRecorder(path, TABLES, SQL_VIEWS)


def project(
    ledger: Ledger, path: str | os.PathLike[str] | None = None, *, batch_size: int = BATCH_SIZE,
    progress: Progress | None = None, stop: int | None = None,
) -> int:
    """Bring the views up to date from the last tracked position; return the new position."""
    recorder = open_views(path or views_path(ledger))
    try:
        return follow(ledger, recorder, batch_size, progress, stop)
    finally:
        recorder.close()


def rebuild(
    ledger: Ledger, path: str | os.PathLike[str] | None = None, *, batch_size: int = BATCH_SIZE,
    progress: Progress | None = None, stop: int | None = None,
) -> int:
    """Empty the views and project every event from the start of the log."""
    recorder = open_views(path or views_path(ledger))
    try:
        recorder.clear(ledger.app.name)
        return follow(ledger, recorder, batch_size, progress, stop)
    finally:
        recorder.close()


def follow(
    ledger: Ledger, recorder: ViewRecorder, batch_size: int, progress: Progress | None,
    stop: int | None,
) -> int:
    """Project batches until the log (or `stop`) is reached; one transaction per batch."""
    app = ledger.app
    name = app.name
    total = stop if stop is not None else app.recorder.max_notification_id() or 0
    position = recorder.max_tracking_id(name) or 0
    owners = load_owners(recorder)
    while True:
        notifications = app.recorder.select_notifications(
            position, batch_size, stop, inclusive_of_start=False
        )
        if not notifications:
            return position
        batch = Batch()
        for notification in notifications:
            if not notification.topic.startswith(COMMAND_TOPIC):
                apply_event(notification.id, app.mapper.to_domain_event(notification), owners,
                            batch)
        last = notifications[-1].id
        try:
            recorder.record(batch, Tracking(name, last), finisher(batch))
        except (IntegrityError, sqlite3.IntegrityError):
            # Another follower recorded this position first: resume from where it got to.
            position = recorder.max_tracking_id(name) or 0
            owners = load_owners(recorder)
            continue
        position = last
        if progress is not None:
            progress(position, max(total, position))


def apply_event(notification_id: int, event: Any, owners: dict[str, str], batch: Batch) -> None:
    """Add one domain event's rows to `batch` in every view."""
    if isinstance(event, BatchInvalidation.Event | BatchInvalidation.Opened):
        invalid.project_finding(notification_id, event, batch)
        return
    kind = kind_of(event)
    if kind == "registered":
        owners[str(event.originator_id)] = event.party_id
        parties.register(notification_id, event, batch)
    owner = owners.get(str(event.originator_id))
    if owner is None:
        return  # not a Party event
    fact = Fact(notification_id, owner, kind, event)
    for module in VIEW_MODULES:
        module.project(fact, batch)


def finisher(batch: Batch) -> Callable[[Any], None] | None:
    """Recompute the compliance positions of the parties this batch touched, including those
    that retired for compliance RINs of a batch it found invalid (§80.1431(b)(2))."""
    invalidated = invalid.invalidated_batches(batch)
    if not batch.compliance_parties and not invalidated:
        return None
    return lambda db: compliance.refresh(
        db, batch.compliance_parties | invalid.retirers(db, invalidated)
    )


def load_owners(recorder: ViewRecorder) -> dict[str, str]:
    with recorder.datastore.transaction(commit=False) as c:
        c.execute("SELECT originator_id, party FROM parties")
        return {row["originator_id"]: row["party"] for row in c.fetchall()}
