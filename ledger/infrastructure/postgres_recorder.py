"""The PostgreSQL application recorder: the library's table, notification ids, table lock and
NOTIFY channel, with the saving transaction written here in two round trips, and in it the
ledger's own steps: the check that what a save only read is unchanged
(ledger/infrastructure/read_check.py), the command rows (ledger/infrastructure/command_table.py)
and the head row of the transaction (ledger/infrastructure/heads.py). Imported only for a
PostgreSQL store (psycopg).

9.5.6's `insert_events` waits for the server about seven times a save, eight with the ledger's
steps hooked into it (docs/performance.md, "PostgreSQL"). Here, in psycopg's pipeline mode
(docs/postgres.md):

1. BEGIN, the lock timeout and one call of the save function `rin_save_v1`
   (ledger/infrastructure/postgres_function.py): under `LOCK TABLE … IN EXCLUSIVE MODE`
   (writers one at a time, so notification ids are issued in commit order, as the library
   promises) it reads what the refusals need (the read check's versions, the last head row, the
   last notification id, this save's command ids already stored, the last command row) and,
   only if no refusal applies, NOTIFYs and inserts the events (parallel arrays sent in binary,
   fed in order), so a refused save draws no notification id: one round trip. The refusal is
   raised here, with the ledger's message, from what the function returns;
2. the command rows (parallel arrays again), the rows of the pending postings the save opens
   and closes (ledger/infrastructure/pending_table.py), the head row folded over the new ids,
   and COMMIT: one round trip.

An exception anywhere inside rolls the whole transaction back. `insert_in_transaction` is the
whole of it on one cursor: rows that must commit with the events go next to its steps (a
statement without results adds no round trip).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.persistence import (
    IntegrityError,
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

from ledger.infrastructure import pending_table
from ledger.infrastructure.command_table import (
    COMMANDS,
    FIELDS,
    CommandRow,
    CommandWriter,
    refused_at_commit,
)
from ledger.infrastructure.command_table import TABLE as COMMAND_TABLE
from ledger.infrastructure.command_table import create_postgres as create_commands
from ledger.infrastructure.heads import TABLE, HeadWriter, create_postgres, notification
from ledger.infrastructure.postgres_function import NAME, call_statement, create_statement
from ledger.infrastructure.read_check import UNCHANGED, check_unchanged
from ledger.infrastructure.save_outcome import Outcome, Outcomes
from ledger.infrastructure.snapshot_in_save import SNAPSHOTS
from ledger.infrastructure.snapshot_in_save import insert_postgres as insert_snapshots
from ledger.infrastructure.store_refusals import LockTimeout, lock_timed_out
from ledger.infrastructure.writer_turn import PostgresTurn

BEGIN, COMMIT = SQL("BEGIN"), SQL("COMMIT")


class LedgerPostgresRecorder(Outcomes, PostgresApplicationRecorder):
    """`PostgresApplicationRecorder` whose saves refuse a read that moved and store the head row
    of each committed transaction, in two round trips; its last save's outcome
    (ledger/infrastructure/save_outcome.py)."""

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
        self.sql_create_statements.append(SQL(create_statement(  # type: ignore[arg-type]
            datastore.schema, self.events_table_name, TABLE, COMMAND_TABLE, self.channel_name)))
        self._save = SQL(call_statement(datastore.schema))
        self._insert_commands = SQL(
            f"INSERT INTO {self.commands.table} ({FIELDS}) "
            "SELECT * FROM unnest(%b::bigint[], %b::text[], %b::text[], %b::text[], "
            "%b::bigint[], %b::text[])")
        self._table = table
        self.turn = PostgresTurn(datastore, f"{datastore.schema}.{self.events_table_name}")
        self.pending = f'"{datastore.schema}".{pending_table.TABLE}'
        self._insert_pending = SQL(
            f"INSERT INTO {self.pending} (posting, originator_id, effective_date) "
            "SELECT * FROM unnest(%b::text[], %b::text[], %b::text[])")
        self._delete_pending = SQL(f"DELETE FROM {self.pending} WHERE posting = ANY(%b::text[])")

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        """Store `stored_events` in one transaction and return their notification ids in order;
        `unchanged` (keyword): {aggregate id: version} this save read and leaves as it is.
        Retried by the library when the connection fails; once a try has sent its COMMIT and
        lost the answer, the save's outcome stays `UNKNOWN` unless a later try commits (if the
        lost one had, the later one conflicts with it)."""
        if not stored_events:
            return None
        earlier = self.outcome  # what the tries before this one left
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
                insert_snapshots(curs, kwargs.get(SNAPSHOTS), stored_events)  # savepoint, last
                curs.execute(COMMIT)
                self.outcome = Outcome.UNKNOWN  # COMMIT is sent as the pipeline ends
        except Exception as error:
            if isinstance(error, IntegrityError):  # a refusal: this try stored nothing
                self.outcome = earlier
            if lock_timed_out(error):  # once, not again and again by the library's retry
                raise LockTimeout(str(error)) from error
            refused = refused_at_commit(error)  # ledger/infrastructure/command_table.py
            if refused is error:
                raise
            raise refused from error
        self.outcome = Outcome.STORED
        return ids

    def create_table(self) -> None:
        """The library's tables, then the ledger's table of pending postings."""
        super().create_table()
        self.keep_pending_table()

    def keep_pending_table(self) -> None:
        """Make the pending postings' table if the store has none (one begun before it),
        filled from its log (ledger/infrastructure/pending_table.py), in one transaction; run
        under the set-up lock, as every store's tables are (ledger/infrastructure/
        postgres_setup.py)."""
        with self.datastore.transaction(commit=False) as curs:
            curs.execute("SELECT to_regclass(%s) AS t", (self.pending,))
            row = curs.fetchone()
            if row is not None and row["t"] is not None:
                return
        with self.datastore.transaction(commit=True) as curs:
            curs.execute(SQL(pending_table.create_postgres(self.pending)))
            self._send_pending(curs, pending_table.from_log(
                self._marked(curs), self._table.as_string(), "notification_id"), [])

    def pending_postings(self) -> tuple[int, list[pending_table.Row]]:
        """(the last notification id, the pending postings' rows) as of one commit (one
        statement: one snapshot; saves commit one at a time, under the table lock)."""
        with self.datastore.transaction(commit=False) as curs:
            return pending_table.read(self._marked(curs), self._table.as_string(),
                                      "notification_id", self.pending)

    def _send_pending(self, curs: Cursor[DictRow], rows: Sequence[pending_table.Row],
                      closed: Sequence[str]) -> None:
        """Queue the pending postings' rows a save inserts and deletes (parallel arrays)."""
        if rows:
            curs.execute(self._insert_pending, tuple(map(list, zip(*rows, strict=True))),
                         prepare=True)
        if closed:
            curs.execute(self._delete_pending, (list(closed),), prepare=True)

    def stored_at(self, originator_id: UUID, version: int) -> list[StoredEvent]:
        """The aggregate's stored event at `version`, read under a SHARE lock of the events
        table: it waits, at most the lock timeout, for every save's EXCLUSIVE lock, which a
        save holds until its commit has ended. Read without it, a commit whose answer was lost
        while the server was still making it durable was not found, its lines called not
        stored, then it landed (helper-69)."""
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(self.lock_table_statements[0])  # SET LOCAL lock_timeout
            curs.execute(SQL("LOCK TABLE {} IN SHARE MODE").format(self._table))
            curs.execute(SQL("SELECT originator_id, originator_version, topic, state FROM {} "
                             "WHERE originator_id = %s AND originator_version = %s").format(
                self._table), (originator_id, version))
            return [StoredEvent(originator_id=row["originator_id"],
                                originator_version=row["originator_version"],
                                topic=row["topic"], state=bytes(row["state"]))
                    for row in curs.fetchall()]

    def insert_in_transaction(
        self, curs: Cursor[DictRow], stored_events: Sequence[StoredEvent], unchanged: Any,
        commands: Sequence[Any] = (),
    ) -> list[int]:
        """The steps of a save on the transaction's cursor `curs` (in pipeline mode); raises,
        inserting nothing, if a read moved, a command id or an event's version is stored, the
        store wants a key this writer lacks, or the store lost its tail."""
        self.commands.check_schema(self._query(curs))  # once a process
        curs.execute(self.lock_table_statements[0], prepare=True)  # SET LOCAL lock_timeout
        if not self.turn.held:  # a share of the writers' turn (ledger/.../writer_turn.py)
            curs.execute(self.turn.SHARE, (self.turn.name,), prepare=True)  # within the timeout
        read = dict(unchanged or {})
        signer = self.heads.signer
        curs.execute(self._save, (
            list(read), list(read.values()), [a.client_id for a in commands],
            signer.fingerprint if signer else None,
            [e.originator_id for e in stored_events],
            [e.originator_version for e in stored_events],
            [e.topic for e in stored_events],
            [e.state for e in stored_events],
        ), prepare=True)
        saved = curs.fetchone()  # flushes the pipeline: round trip 1
        if saved is None:
            raise ProgrammingError(f"{NAME} returned no row")
        last_stored = self._admit(saved, unchanged)
        ids = list(saved["ids"])
        last_command = [] if saved["command_id"] is None else [
            (saved["command_id"], saved["command_chain"])]
        rows = self.commands.chained(last_command, ids, commands)
        self._send_commands(curs, rows)
        self._send_pending(curs, *pending_table.saved(stored_events))
        self.heads.record(self._query(curs), ids, stored_events, self._gap(curs, last_stored),
                          rows)
        return ids

    def _admit(self, saved: DictRow, unchanged: Any) -> int:
        """Raise the refusal the save function made, with the ledger's message for it; return
        the last notification id stored before the save (0: none)."""
        latest = dict(zip(saved["latest_ids"] or (), saved["latest_versions"] or (),
                          strict=True))
        check_unchanged(unchanged, lambda _chunk: latest)
        last_stored = int(saved["last_stored"])
        head = saved["head_id"]
        self.heads.admit_rows([] if head is None else [
            (head, saved["head_hash"], saved["head_key"])], last_stored)
        if saved["taken"] is not None:
            raise IntegrityError(f"command id {saved['taken']!r} already applied")
        if saved["refused"] == "conflict":
            raise IntegrityError("an event's aggregate and version is already stored "
                                 "(another writer saved it first)")
        if saved["refused"] is not None:  # the function and this check disagree: a bug
            raise ProgrammingError(f"{NAME} refused the save ({saved['refused']}) but the "
                                   "recorder's own check admits it")
        return last_stored

    def _send_commands(self, curs: Cursor[DictRow], rows: Sequence[CommandRow]) -> None:
        """Queue the command rows: one INSERT of parallel arrays sent in binary, the same
        statement whatever the count (the multi-row VALUES the SQLite writer sends is parsed
        by psycopg in Python, a statement a save: docs/postgres.md)."""
        if not rows:
            return
        curs.execute(self._insert_commands, (
            [r.notification_id for r in rows], [r.client_id for r in rows],
            [r.digest for r in rows], [orjson.dumps(r.events).decode() for r in rows],
            [r.previous for r in rows], [r.chain for r in rows],
        ), prepare=True)

    @staticmethod
    def _query(curs: Cursor[DictRow]) -> Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]:
        """A `heads.Query` on the transaction's cursor (an INSERT is sent with the COMMIT)."""
        def query(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
            curs.execute(sql, params, prepare=True)
            if not sql.startswith("SELECT"):
                return []
            return [tuple(row.values()) for row in curs.fetchall()]
        return query

    @classmethod
    def _marked(cls, curs: Cursor[DictRow]) -> pending_table.Query:
        """`_query` for SQL written with SQLite's `?` markers (ledger/infrastructure/
        pending_table.py writes for both stores)."""
        query = cls._query(curs)
        return lambda sql, params: query(sql.replace("?", "%s"), params)

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
