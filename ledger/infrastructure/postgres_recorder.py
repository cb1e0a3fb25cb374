"""The PostgreSQL application recorder: the library's table, notification ids, table lock and
NOTIFY channel, with the saving transaction written here in three round trips, and in it the
ledger's own steps: the check that what a save only read is unchanged
(ledger/infrastructure/read_check.py) and the head row of the transaction
(ledger/infrastructure/heads.py). Imported only for a PostgreSQL store (psycopg).

9.5.6's `insert_events` waits for the server about seven times a save, eight with the ledger's
steps hooked into it (docs/performance.md, "PostgreSQL"); it also commits the events when a
step after the insert raises, so every refusal had to be made before it. Here, in psycopg's
pipeline mode:

1. BEGIN, the lock timeout, `LOCK TABLE … IN EXCLUSIVE MODE` (writers one at a time, so
   notification ids are issued in commit order, as the library promises), then the read check's
   versions, the last head row and the last notification id: one round trip; a refusal is
   raised here, before anything is inserted;
2. NOTIFY and one multi-row INSERT … RETURNING of the events (parallel arrays sent in binary,
   fed in order): one round trip;
3. the head row folded over the new ids, and COMMIT: one round trip.

BEGIN and COMMIT travel with the first and last. An exception anywhere inside rolls the whole
transaction back. `insert_in_transaction` is the whole of it on one cursor: rows that must
commit with the events go next to its steps (a statement without results adds no round trip).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import (
    InterfaceError,
    Notification,
    OperationalError,
    ProgrammingError,
    StoredEvent,
)
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from eventsourcing.utils import retry
from psycopg import Cursor
from psycopg.rows import DictRow
from psycopg.sql import SQL, Identifier

from ledger.infrastructure.command_table import COMMANDS, CommandWriter, refused_at_commit
from ledger.infrastructure.command_table import create_postgres as create_commands
from ledger.infrastructure.heads import TABLE, HeadWriter, create_postgres, notification
from ledger.infrastructure.read_check import IDS_PER_QUERY, UNCHANGED, check_unchanged
from ledger.infrastructure.writer_turn import PostgresTurn

BEGIN, COMMIT = SQL("BEGIN"), SQL("COMMIT")


class LedgerPostgresRecorder(PostgresApplicationRecorder):
    """`PostgresApplicationRecorder` whose saves refuse a read that moved and store the head row
    of each committed transaction, in three round trips."""

    def __init__(self, datastore: PostgresDatastore, **kwargs: Any) -> None:
        super().__init__(datastore, **kwargs)
        if datastore.enable_db_functions:  # the library's insert function: not what runs here
            raise ProgrammingError("the ledger needs POSTGRES_ENABLE_DB_FUNCTIONS off")
        self.heads = HeadWriter(f'"{datastore.schema}".{TABLE}', marker="%s")
        self.sql_create_statements.append(SQL(create_postgres(self.heads.table)))  # type: ignore[arg-type]
        self.commands = CommandWriter(f'"{datastore.schema}".rin_commands', marker="%s")
        self.sql_create_statements.append(SQL(create_commands(self.commands.table)))  # type: ignore[arg-type]
        table = SQL("{}.{}").format(Identifier(datastore.schema),
                                    Identifier(self.events_table_name))
        self._insert_rows = SQL(
            "INSERT INTO {t} (originator_id, originator_version, topic, state) "
            "SELECT i, v, t, s FROM unnest(%b::uuid[], %b::bigint[], %b::text[], %b::bytea[]) "
            "WITH ORDINALITY AS e(i, v, t, s, n) ORDER BY n RETURNING notification_id"
        ).format(t=table)
        self._latest = SQL(
            "SELECT originator_id AS id, MAX(originator_version) AS version FROM {t} "
            "WHERE originator_id = ANY(%b::uuid[]) GROUP BY originator_id"
        ).format(t=table)
        self._notify = SQL("NOTIFY {}").format(Identifier(self.channel_name))
        self._table = table
        self.turn = PostgresTurn(datastore, f"{datastore.schema}.{self.events_table_name}")

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        """Store `stored_events` in one transaction and return their notification ids in order;
        `unchanged` (keyword): {aggregate id: version} this save read and leaves as it is."""
        if not stored_events:
            return None
        # BEGIN and COMMIT are statements of the pipeline: psycopg's `transaction()` in
        # pipeline mode syncs on entering and before COMMIT (two more round trips). Leaving the
        # pipeline sends the head row and COMMIT and raises their errors; an exception leaves
        # the pool's connection block, which rolls back the transaction still open (psycopg_pool
        # `connection()`), so nothing of a refused or failed save is kept.
        try:
            with self.datastore.get_connection() as conn, conn.pipeline(), conn.cursor() as curs:
                curs.execute(BEGIN)
                ids = self.insert_in_transaction(curs, stored_events, kwargs.get(UNCHANGED),
                                                 kwargs.get(COMMANDS, ()))
                curs.execute(COMMIT)
        except Exception as error:
            refused = refused_at_commit(error)  # ledger/infrastructure/command_table.py
            if refused is error:
                raise
            raise refused from error
        return ids

    def insert_in_transaction(
        self, curs: Cursor[DictRow], stored_events: Sequence[StoredEvent], unchanged: Any,
        commands: Sequence[Any] = (),
    ) -> list[int]:
        """The steps of a save on the transaction's cursor `curs` (in pipeline mode); raises,
        inserting nothing, if a read moved, the store wants a key this writer lacks, or the
        store lost its tail."""
        last_stored = self._lock_and_admit(curs, unchanged)
        self.commands.refuse_stored(self._query(curs), commands)  # a command id already stored
        ids = self._insert(curs, stored_events)
        rows = self.commands.insert(self._query(curs), ids, commands)  # ledger/.../command_table.py
        self.heads.record(self._query(curs), ids, stored_events, self._gap(curs, last_stored),
                          rows)
        return ids

    def _lock_and_admit(self, curs: Cursor[DictRow], unchanged: Any) -> int:
        """Round trip 1: the table lock, then what the refusals read; returns the last
        notification id stored (0: none)."""
        if not self.turn.held:  # a share of the writers' turn (ledger/.../writer_turn.py)
            curs.execute(self.turn.SHARE, (self.turn.name,), prepare=True)
        for statement in self.lock_table_statements:
            curs.execute(statement, prepare=True)
        conn = curs.connection
        ids = list(unchanged or ())
        chunks = [ids[first:first + IDS_PER_QUERY] for first in range(0, len(ids), IDS_PER_QUERY)]
        latest = [conn.cursor() for _ in chunks]
        for cursor, chunk in zip(latest, chunks, strict=True):
            cursor.execute(self._latest, (chunk,), prepare=True)
        head, stored = conn.cursor(), conn.cursor()
        head.execute(self.heads.last_head_sql, prepare=True)
        stored.execute(self.max_notification_id_statement, prepare=True)
        versions = iter([{UUID(str(row["id"])): row["version"] for row in cursor.fetchall()}
                         for cursor in latest])  # the first fetch flushes the pipeline
        check_unchanged(unchanged, lambda _chunk: next(versions))
        row = stored.fetchone()
        last_stored = int(row["max"]) if row and row["max"] is not None else 0
        self.heads.admit_rows([tuple(r.values()) for r in head.fetchall()], last_stored)
        return last_stored

    def _insert(self, curs: Cursor[DictRow], stored_events: Sequence[StoredEvent]) -> list[int]:
        """Round trip 2: NOTIFY and the events, fed in order, so that sorted ids are theirs."""
        curs.execute(self._notify, prepare=True)
        curs.execute(self._insert_rows, (
            [e.originator_id for e in stored_events],
            [e.originator_version for e in stored_events],
            [e.topic for e in stored_events],
            [e.state for e in stored_events],
        ), prepare=True)
        return sorted(row["notification_id"] for row in curs.fetchall())

    @staticmethod
    def _query(curs: Cursor[DictRow]) -> Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]:
        """A `heads.Query` on the transaction's cursor (an INSERT is sent with the COMMIT)."""
        def query(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
            curs.execute(sql, params, prepare=True)
            if not sql.startswith("SELECT"):
                return []
            return [tuple(row.values()) for row in curs.fetchall()]
        return query

    def _gap(
        self, curs: Cursor[DictRow], last_stored: int
    ) -> Callable[[int, int], list[Notification]]:
        """The notifications stored strictly between two ids, in id order: none to read when the
        last head is at the last stored event (a store begun by release 1 has events after it)."""
        def between(after: int, before: int) -> list[Notification]:
            if last_stored <= after:
                return []
            curs.execute(SQL("SELECT notification_id, originator_id, originator_version, topic, "
                             "state FROM {t} WHERE notification_id > %s AND notification_id < %s "
                             "ORDER BY notification_id").format(t=self._table), (after, before))
            return [notification(tuple(row.values())) for row in curs.fetchall()]
        return between


TOPIC = f"{__name__}:{LedgerPostgresRecorder.__name__}"
