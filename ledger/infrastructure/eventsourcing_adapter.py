"""The one module that relies on private parts of eventsourcing 9.5.6: the recorders' steps
inside the saving transaction, and the read side's tracking record inside its own transaction
and its connections' settings. Each hook says why no public API serves, and
tests/integration/test_eventsourcing_pins.py fails if 9.5.6's behaviour it relies on changes.

Both hooks exist for the same two facts of tamper evidence and write skew: the head row of a
transaction (ledger/infrastructure/heads.py) and the read check of what a save only read
(ledger/infrastructure/read_check.py) must be written and made in the SAME transaction as the
events, after the writers' lock and once the notification ids are known. The public
`insert_events(stored_events, **kwargs)` opens and commits that transaction itself and offers
no callback inside it, so the SQLite recorder hooks the step it calls. The hooks are mixins
(listed before the library's recorder class). The PostgreSQL recorder needs no private hook: it
writes its saving transaction itself (ledger/infrastructure/postgres_recorder.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from eventsourcing.persistence import StoredEvent

from ledger.infrastructure.command_table import COMMANDS
from ledger.infrastructure.read_check import UNCHANGED
from ledger.infrastructure.snapshot_in_save import SNAPSHOTS

if TYPE_CHECKING:  # pragma: no cover
    from eventsourcing.persistence import Tracking
    from eventsourcing.sqlite import SQLiteConnection, SQLiteCursor


class SQLiteSaveHook:
    """For a `SQLiteApplicationRecorder`: the whole insert, inside the saving transaction.

    9.5.6's `insert_events` opens a transaction (`BEGIN`; SQLite's writer lock is taken by its
    first insert) and returns what `_insert_events(c, stored_events, **kwargs)` returns, the
    notification ids; it commits only if that returns, and rolls everything back if it raises.
    """

    def _insert_events(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        return self.insert_in_transaction(c, stored_events, kwargs.get(UNCHANGED),
                                          kwargs.get(COMMANDS, ()), kwargs.get(SNAPSHOTS))

    def insert_in_transaction(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], unchanged: Any,
        commands: Sequence[Any] = (), snapshots: Any = None,
    ) -> Sequence[int] | None:
        """Insert `stored_events` on the transaction's cursor `c`; return their ids in order.
        `unchanged`: what the save only read (ledger/infrastructure/read_check.py); `commands`:
        the transaction's command rows (ledger/infrastructure/command_table.py); `snapshots`:
        those due (ledger/infrastructure/snapshot_in_save.py)."""
        raise NotImplementedError


class ConnectionPragmas:
    """For a `SQLiteConnectionPool`: `PRAGMAS` run on every connection it makes.

    9.5.6's `SQLiteDatastore` sets only the lock timeout and WAL mode; the pool makes each
    connection by `_create_connection()`, the one place a per-connection setting can go.
    """

    PRAGMAS: tuple[str, ...] = ()

    def _create_connection(self) -> SQLiteConnection:
        connection: SQLiteConnection = cast(Any, super())._create_connection()
        for pragma in self.PRAGMAS:
            connection.cursor().execute(f"PRAGMA {pragma}")
        return connection


class TrackingInTransaction:
    """For a `SQLiteTrackingRecorder` (or a `PostgresTrackingRecorder`, whose
    `_insert_tracking(curs, tracking)` is the same step: projections/pg_views.py): its tracking
    record written on a transaction the caller opened, so the read models' rows and their
    position commit together (exactly once).

    9.5.6's public `insert_tracking(tracking)` opens and commits a transaction of its own; it
    calls `_insert_tracking(c, tracking)`, which raises `IntegrityError` for a position already
    recorded (single-row tracking: one not above the last), rolling back the caller's rows.
    """

    def insert_tracking_in(self, c: SQLiteCursor, tracking: Tracking) -> None:
        cast(Any, self)._insert_tracking(c, tracking)
