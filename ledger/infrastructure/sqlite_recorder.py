"""A SQLite application recorder that inserts a transaction's events in a few statements.

The library's `SQLiteApplicationRecorder` runs one INSERT per event to learn each rowid (the
notification id). This one sends up to `ROWS_PER_STATEMENT` events per multi-row
`INSERT … RETURNING rowid` (SQLite ≥ 3.35). SQLite does not promise the order of RETURNING rows,
but inside one write transaction an ordinary rowid table gives each new row the largest rowid
plus one, so the sorted rowids are the rows' insertion order, which is the events' order.
It also stores each transaction's command rows (ledger/infrastructure/command_table.py), head
row (ledger/infrastructure/heads.py) and due snapshots (ledger/infrastructure/snapshot_in_save.py)
in the same transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Notification, StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor, SQLiteDatastore

from ledger.infrastructure import pending_table
from ledger.infrastructure.command_table import CREATE_SQLITE as CREATE_COMMANDS
from ledger.infrastructure.command_table import CommandWriter
from ledger.infrastructure.eventsourcing_adapter import SQLiteSaveHook
from ledger.infrastructure.heads import CREATE_SQLITE, HeadWriter, notification
from ledger.infrastructure.invalidation_index import OPENING
from ledger.infrastructure.read_check import check_unchanged
from ledger.infrastructure.save_outcome import Outcome, Outcomes
from ledger.infrastructure.snapshot_in_save import DueSnapshots
from ledger.infrastructure.snapshot_in_save import insert_sqlite as insert_snapshots
from ledger.infrastructure.store_refusals import StoreRefused, is_integrity
from ledger.infrastructure.writer_turn import WriterTurn

#: 4 parameters a row; SQLite ≥ 3.32 allows 32,766 parameters a statement
ROWS_PER_STATEMENT = 500
#: WAL pages between automatic checkpoints (SQLite's default is 1,000): a batch dirties index
#: pages all over a large store, and a longer WAL lets a checkpoint write each page once for
#: many commits (on 12,000 lines after a 1M-event store: 6,386 / 6,733 → 7,053 / 7,264 events/s)
CHECKPOINT_PAGES = 10_000
#: the partial index of the rare events that open a batch's invalidation or status record
OPENED_INDEX = "rin_opened"
OPENED_WHERE = f"topic IN ({', '.join(repr(topic) for topic in OPENING)})"
#: originator ids remembered as their UUIDs (`convert_originator_id`): a store's parties and
#: batches are far fewer; a log of command records (one aggregate each) starts again when full
IDS_REMEMBERED = 20_000


class BatchSQLiteApplicationRecorder(SQLiteSaveHook, Outcomes, SQLiteApplicationRecorder):
    """`SQLiteApplicationRecorder` with multi-row inserts; same table, same notification ids;
    its last save's outcome (ledger/infrastructure/save_outcome.py)."""

    def __init__(self, datastore: SQLiteDatastore, events_table_name: str = "stored_events"):
        super().__init__(datastore, events_table_name)
        self._statements: dict[int, str] = {}
        self._ids: dict[str, UUID | str] = {}  # stored id → `convert_originator_id`'s
        self.heads = HeadWriter()
        self.commands = CommandWriter()
        pool = datastore.pool
        self.turn = WriterTurn(None if pool.is_sqlite_memory_mode
                               else pool.db_name.removeprefix("file:").split("?")[0])
        self.turn.timeout = float(pool.lock_timeout or self.turn.timeout)  # SQLite's lock's

    def convert_originator_id(self, originator_id: str) -> UUID | str:
        """The library's conversion of a stored id, remembered: every row read of one aggregate
        gets the same (immutable) UUID, not a new one built by UUID's constructor, which runs
        in Python (about 1.4 µs a row; a walk of the log reads every row)."""
        found = self._ids.get(originator_id)
        if found is None:
            found = super().convert_originator_id(originator_id)
            if len(self._ids) >= IDS_REMEMBERED:
                self._ids.clear()
            self._ids[originator_id] = found
        return found

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        """The library's save (its `insert_events`: a connection, a transaction, the inserts),
        holding a share of the writers' turn while it runs (ledger/infrastructure/
        writer_turn.py). A failure up to and with the commit stored nothing (SQLite rolls
        back); once the commit has returned, the save is `STORED` whatever fails after (the
        pool taking the connection back, the turn's release)."""
        with self.turn.saving(), self.datastore.get_connection(commit=True) as connection:
            with connection.transaction(commit=True) as c:
                ids = self._insert_events(c, stored_events, **kwargs)
            self.outcome = Outcome.STORED
        return ids

    def construct_create_table_statements(self) -> list[str]:
        return [*super().construct_create_table_statements(), CREATE_SQLITE, CREATE_COMMANDS,
                f"CREATE INDEX IF NOT EXISTS {OPENED_INDEX} ON {self.events_table_name} (topic) "
                f"WHERE {OPENED_WHERE}"]

    def opened(self, topic: str, after: int, stop: int) -> list[UUID]:
        """The aggregate ids of the `topic` events (one of `OPENING`) stored after `after` up
        to `stop`, found by the partial index of those rare events: the query repeats the
        index's condition word for word, which is what lets SQLite use it."""
        with self.datastore.transaction(commit=False) as c:
            c.execute(f"SELECT originator_id FROM {self.events_table_name} WHERE {OPENED_WHERE} "
                      "AND topic = ? AND rowid > ? AND rowid <= ? ORDER BY rowid",
                      (topic, after, stop))
            return [UUID(row[0]) for row in c.fetchall()]

    def pending_postings(self) -> tuple[int, list[pending_table.Row]]:
        """(the last notification id, the pending postings' rows) as of one commit."""
        with self.datastore.transaction(commit=False) as c:
            return pending_table.read(query_on(c), self.events_table_name, "rowid")

    def create_table(self) -> None:
        """The library's tables, then the ledger's table of pending postings."""
        super().create_table()
        self.keep_pending_table()

    def keep_pending_table(self) -> None:
        """Make the pending postings' table if the store has none (one begun before it),
        filled from its log (ledger/infrastructure/pending_table.py), in one write transaction:
        its first statement takes SQLite's write lock, so the log it reads is the last commit.
        Two processes making it at once each fill it whole, the second over the first."""
        with self.datastore.transaction(commit=False) as c:
            c.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                      (pending_table.TABLE,))
            if c.fetchall():
                return
        with self.datastore.transaction(commit=True) as c:
            c.execute(pending_table.CREATE_SQLITE)
            c.execute(f"DELETE FROM {pending_table.TABLE}")
            pending_table.insert_sqlite(c.execute, pending_table.from_log(
                query_on(c), self.events_table_name, "rowid"))

    def _statement(self, rows: int) -> str:
        """`INSERT INTO t VALUES (?,?,?,?),… RETURNING rowid` for `rows` rows, cached."""
        statement = self._statements.get(rows)
        if statement is None:
            values = ",".join(["(?,?,?,?)"] * rows)
            statement = f"INSERT INTO {self.events_table_name} VALUES {values} RETURNING rowid"
            self._statements[rows] = statement
        return statement

    def insert_in_transaction(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], unchanged: Any,
        commands: Sequence[Any] = (), snapshots: DueSnapshots | None = None,
    ) -> Sequence[int] | None:
        notification_ids = self._insert_rows(c, stored_events, commands)
        pending_table.write_sqlite(c.execute, stored_events)
        # After the inserts this transaction holds SQLite's write lock and reads the latest
        # commit: what the save only read cannot move until it ends
        # (ledger/infrastructure/read_check.py).
        check_unchanged(unchanged, lambda ids: self._latest(c, ids))
        insert_snapshots(c, snapshots, stored_events)  # last, in a savepoint of their own
        return notification_ids

    def _latest(self, c: SQLiteCursor, ids: list[UUID]) -> dict[UUID, int]:
        """The stored version of each of `ids` that has any event."""
        c.execute(
            f"SELECT originator_id, MAX(originator_version) FROM {self.events_table_name} "
            f"WHERE originator_id IN ({','.join('?' * len(ids))}) GROUP BY originator_id",
            [i.hex for i in ids],
        )
        return {UUID(row[0]): row[1] for row in c.fetchall()}

    def _insert_rows(self, c: SQLiteCursor, stored_events: Sequence[StoredEvent],
                     commands: Sequence[Any] = ()) -> list[int]:
        notification_ids: list[int] = []
        c.execute(f"PRAGMA wal_autocheckpoint={CHECKPOINT_PAGES}")  # per connection, no I/O
        for first in range(0, len(stored_events), ROWS_PER_STATEMENT):
            chunk = stored_events[first:first + ROWS_PER_STATEMENT]
            params: list[Any] = []
            for s in chunk:
                originator_id = s.originator_id
                params += (
                    originator_id.hex if isinstance(originator_id, UUID) else originator_id,
                    s.originator_version, s.topic, s.state,
                )
            try:
                c.execute(self._statement(len(chunk)), params)
            except Exception as error:
                refused = self._refusal(c, chunk, error)
                if refused is error:
                    raise
                raise refused from error
            notification_ids += sorted(row[0] for row in c.fetchall())
        if notification_ids:  # after the inserts, holding SQLite's write lock; a refusal here
            query = query_on(c)  # rolls the whole transaction back
            self.heads.admit(query)
            rows = self.commands.insert(query, notification_ids, commands)  # UNIQUE client id
            self.heads.record(query, notification_ids, stored_events, self._gap(c), rows)
        return notification_ids

    def _refusal(self, c: SQLiteCursor, chunk: Sequence[StoredEvent],
                 error: Exception) -> Exception:
        """A refused insert is a conflict (`error`) only if one of the events' versions is
        stored, another writer's; else the store's fault (a trigger or constraint the ledger did
        not make), named, and not retried (ledger/infrastructure/store_refusals.py)."""
        if not is_integrity(error):
            return error
        for s in chunk:
            c.execute(f"SELECT 1 FROM {self.events_table_name} WHERE originator_id = ? AND "
                      "originator_version = ?", (UUID(str(s.originator_id)).hex,
                                                 s.originator_version))
            if c.fetchone():
                return error
        return StoreRefused(f"{self.events_table_name} refused the transaction's events: "
                            f"{error}; not another writer: nothing was stored")

    def _gap(self, c: SQLiteCursor) -> Any:
        """The notifications stored strictly between two ids, in id order."""
        def between(after: int, before: int) -> list[Notification]:
            c.execute(f"SELECT rowid, originator_id, originator_version, topic, state FROM "
                      f"{self.events_table_name} WHERE rowid > ? AND rowid < ? ORDER BY rowid",
                      (after, before))
            return [notification(row) for row in c.fetchall()]
        return between


def query_on(c: SQLiteCursor) -> Any:
    """A `heads.Query` on the transaction's cursor."""
    def query(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        c.execute(sql, params)
        return [tuple(row) for row in c.fetchall()]
    return query


TOPIC = f"{__name__}:{BatchSQLiteApplicationRecorder.__name__}"
