"""Batch QAP status (§80.1471(e)) and locks (§80.1474(b)(1)): every verification, lock and
unlock of a batch as a row, from which a batch's status and whether it is locked are read for any
effective date as known at any point of the log.

A lock's life runs from its date up to the date of the unlock that lifts it
(ledger/rules/s1474_locks.py); a verification's status holds from its date until a later one
replaces it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import date
from typing import Any

from sqlite_utils import Database

from ledger.domain.batch_status import BatchStatus
from ledger.rules.s1471_auditors import UNVERIFIED
from projections.batch import Batch
from projections.facts import EVENT_KINDS
from projections.schema import Table

EVENTS = Table(
    "batch_events",
    "Every QAP verification (§80.1471(e)), lock and unlock (§80.1474(b)(1)) of a batch.",
    {
        "notification_id": (int, "position of the event in the notification log"),
        "batch": (str, "batch identity YYYYCCCCFFFFFBBBBB (§80.1425(e))"),
        "event": (str, "verified, locked or unlocked"),
        "effective_date": (str, "the date it takes effect (ISO)"),
        "holder": (str, "who holds the lock: regulator, or the qap_auditor's company id"),
        "party": (str, "the submitting party's company id, if one was named"),
        "qap": (str, "Q, A or B: the status a verification gives"),
        "reason": (str, "the lock's or unlock's reason, free text"),
        "lifted": (str, "the holders whose locks an unlock lifted, as a JSON list"),
    },
    pk=("notification_id",),
    indexes=(("batch",),),
)
TABLES = (EVENTS,)
#: every BatchStatus event, as the runner tells them from Party events
STATUS_EVENTS = (BatchStatus.Event, BatchStatus.Opened)
FAR = "9999-12-31"


def project_status(notification_id: int, event: Any, batch: Batch) -> None:
    """One row per verification, lock or unlock; a lock or unlock changes the compliance of
    those who retired the batch's RINs (design.md "Locks")."""
    kind = EVENT_KINDS[type(event)]
    if kind == "status_opened":
        return
    name = event.batch
    batch.add(EVENTS, (
        notification_id, name, kind, event.effective_date.isoformat(),
        getattr(event, "holder", None), getattr(event, "party", None) or
        getattr(event, "auditor", None), getattr(event, "qap", None),
        getattr(event, "reason", None), json.dumps(getattr(event, "lifted", [])),
    ))
    if kind != "verified":
        batch.locks_changed.add(name)  # the finisher recomputes their retirers' positions


def rows(db: Database, known_at: int | None) -> list[dict[str, Any]]:
    known = known_at if known_at is not None else 2**62
    return [dict(r) for r in db.query(
        "SELECT * FROM batch_events WHERE notification_id <= ? ORDER BY notification_id",
        [known])]


def lock_lives(db: Database, known_at: int | None = None
               ) -> dict[str, list[tuple[str, str | None]]]:
    """Batch → the life [locked, unlocked) of each of its locks as known at `known_at`; None for
    one still in force."""
    open_locks: dict[str, dict[str, str]] = defaultdict(dict)
    lives: dict[str, list[tuple[str, str | None]]] = defaultdict(list)
    for row in rows(db, known_at):
        if row["event"] == "locked":
            open_locks[row["batch"]][row["holder"]] = row["effective_date"]
        elif row["event"] == "unlocked":
            for holder in json.loads(row["lifted"]):
                since = open_locks[row["batch"]].pop(holder)
                lives[row["batch"]].append((since, row["effective_date"]))
    for name, held in open_locks.items():
        lives[name].extend((since, None) for since in held.values())
    return lives


def locked_on(db: Database, as_of: date | None, known_at: int | None) -> set[str]:
    """The batches locked on `as_of` (now, if None) as known at `known_at`."""
    day = as_of.isoformat() if as_of is not None else FAR
    return {name for name, lives in lock_lives(db, known_at).items()
            if any(since <= day < (until or FAR) or (as_of is None and until is None)
                   for since, until in lives)}


def locked_now(db: Database) -> set[str]:
    """The batches a lock holds now: RINs of these retired for compliance stop counting."""
    return {name for name, lives in lock_lives(db).items()
            if any(until is None for _, until in lives)}


def qap_on(db: Database, as_of: date | None, known_at: int | None) -> dict[str, str]:
    """Batch → its QAP status on `as_of` as known at `known_at` (the latest verification
    effective by then); a batch not listed is unverified."""
    day = as_of.isoformat() if as_of is not None else FAR
    out: dict[str, str] = {}
    for row in rows(db, known_at):
        if row["event"] == "verified" and row["effective_date"] <= day:
            out[row["batch"]] = row["qap"]
    return out


def qap_of(statuses: dict[str, str], batch: str) -> str:
    return statuses.get(batch, UNVERIFIED)
