"""Snapshots stored in their events' own database transaction: one commit (one flush of the
disk) per save, not two, and no moment at which the events are stored and their snapshot not
yet (issue 15, a single command's latency).

A snapshot is a cache (ledger/infrastructure/snapshot_seal.py): a snapshot that cannot be
stored must not cost the command its events. So it is inserted last, inside a savepoint; if its
insert fails, the savepoint alone is rolled back (`DueSnapshots.failure` says why) and the
events commit without it. If the database gives up the whole transaction instead (SQLite rolls
back on some errors, a full disk among them), `SnapshotsLostTheSave` is raised and the save is
made again without snapshots (`LedgerApp.save_in_order`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.persistence import StoredEvent

from ledger.infrastructure.chain import CHAIN_KEY

#: the keyword of `insert_events` that carries a save's `DueSnapshots`
SNAPSHOTS = "snapshots"
SAVEPOINT = "rin_snapshots"


class SnapshotsLostTheSave(Exception):
    """The snapshots' insert made the database roll back the whole transaction: nothing of the
    save was stored, and it is made again without them."""


@dataclass
class DueSnapshots:
    """The snapshots one save is due to store (`taken`, domain snapshots), sealed once their
    events are mapped: each seal binds to the chain of the event at its version, an event of
    this same save. `table`: the snapshot table; `failure`: why they were not stored, if so."""

    taken: list[Any]
    mapper: Any  # ledger/infrastructure/snapshot_seal.py SealingMapper
    table: str
    failure: Exception | None = None

    def rows(self, stored_events: Sequence[StoredEvent]) -> list[tuple[Any, ...]]:
        """(id, version, topic, state) of each snapshot, sealed to the chain of its aggregate's
        event at that version among `stored_events` (the save's, so nothing is read back; a
        snapshot at a version this save did not store is not stored)."""
        versions = {snapshot.originator_version for snapshot in self.taken}
        events = {(s.originator_id, s.originator_version): s for s in stored_events
                  if s.originator_version in versions}
        rows = []
        for snapshot in self.taken:
            event = events.get((snapshot.originator_id, snapshot.originator_version))
            if event is None:
                continue
            chain = str(orjson.loads(event.state)[CHAIN_KEY])
            stored = self.mapper.sealed_snapshot(snapshot, chain)
            rows.append((stored.originator_id, stored.originator_version, stored.topic,
                         stored.state))
        return rows


def insert_sqlite(c: Any, due: DueSnapshots | None, stored_events: Sequence[StoredEvent]) -> None:
    """On the saving transaction's cursor `c` (the library's `SQLiteCursor`), the due snapshots
    in a savepoint, after everything else the transaction stores."""
    if due is None or not due.taken:
        return
    try:
        rows = [(i.hex if isinstance(i, UUID) else i, *rest)
                for i, *rest in due.rows(stored_events)]
    except Exception as error:  # nothing inserted: the events commit without snapshots
        due.failure = error
        return
    if not rows:
        return
    connection = c.sqlite_cursor.connection
    c.execute(f"SAVEPOINT {SAVEPOINT}")
    try:
        c.executemany(f"INSERT INTO {due.table} VALUES (?,?,?,?)", rows)
    except sqlite3.Error as error:
        if not connection.in_transaction:
            raise SnapshotsLostTheSave(str(error)) from error
        c.execute(f"ROLLBACK TO {SAVEPOINT}")
        due.failure = error
    c.execute(f"RELEASE {SAVEPOINT}")


def insert_postgres(curs: Any, due: DueSnapshots | None,
                    stored_events: Sequence[StoredEvent]) -> None:
    """On the saving transaction's psycopg cursor `curs` (in pipeline mode), the due snapshots
    in a savepoint; the pipeline is synced once, only when there are snapshots, to learn
    whether their insert failed (PostgreSQL then skips the rest until the savepoint's
    rollback)."""
    if due is None or not due.taken:
        return
    try:
        rows = due.rows(stored_events)
    except Exception as error:
        due.failure = error
        return
    if not rows:
        return
    import psycopg

    curs.execute(f"SAVEPOINT {SAVEPOINT}")
    try:
        with curs.connection.pipeline():  # a nested pipeline syncs, raising, when it ends
            curs.executemany(f"INSERT INTO {due.table} (originator_id, originator_version, "
                             "topic, state) VALUES (%s, %s, %s, %s)", rows)
    except psycopg.Error as error:
        curs.execute(f"ROLLBACK TO SAVEPOINT {SAVEPOINT}")
        due.failure = error
    curs.execute(f"RELEASE SAVEPOINT {SAVEPOINT}")
