"""The PostgreSQL application recorder: the library's, also checking that what a save only read
is unchanged (ledger/infrastructure/read_check.py) and storing each transaction's head row
(ledger/infrastructure/heads.py). Imported only for a PostgreSQL store (psycopg).

The steps inside the saving transaction are hooked in
ledger/infrastructure/eventsourcing_adapter.py (`PostgresSaveHooks`), which says why.
The library's optional database functions (POSTGRES_ENABLE_DB_FUNCTIONS) bypass both hooks, so
this recorder refuses to start with them on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Notification, ProgrammingError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from psycopg import Cursor
from psycopg.rows import DictRow
from psycopg.sql import SQL, Identifier

from ledger.infrastructure.command_table import CommandWriter
from ledger.infrastructure.command_table import create_postgres as create_commands
from ledger.infrastructure.eventsourcing_adapter import PostgresSaveHooks
from ledger.infrastructure.heads import TABLE, HeadWriter, create_postgres, notification
from ledger.infrastructure.read_check import check_unchanged


class LedgerPostgresRecorder(PostgresSaveHooks, PostgresApplicationRecorder):
    """`PostgresApplicationRecorder` that refuses a save if an aggregate it read has moved, and
    stores the head row of each committed transaction."""

    def __init__(self, datastore: PostgresDatastore, **kwargs: Any) -> None:
        super().__init__(datastore, **kwargs)
        if datastore.enable_db_functions:  # its insert function would skip both hooks
            raise ProgrammingError("the ledger needs POSTGRES_ENABLE_DB_FUNCTIONS off")
        self.heads = HeadWriter(f'"{datastore.schema}".{TABLE}', marker="%s")
        self.sql_create_statements.append(SQL(create_postgres(self.heads.table)))  # type: ignore[arg-type]
        self.commands = CommandWriter(f'"{datastore.schema}".rin_commands', marker="%s")
        self.sql_create_statements.append(SQL(create_commands(self.commands.table)))  # type: ignore[arg-type]

    def before_insert(self, curs: Cursor[DictRow], unchanged: Any,
                      commands: Sequence[Any] = ()) -> None:
        """A failed read check, key check or command id already stored inserts nothing (the
        table lock is held)."""
        check_unchanged(unchanged, lambda chunk: self._latest(curs, chunk))
        self.heads.admit(self._query(curs), f'SELECT MAX(notification_id) FROM '
                         f'"{self.datastore.schema}"."{self.events_table_name}"')
        self.commands.refuse_stored(self._query(curs), commands)

    def after_insert(
        self, curs: Cursor[DictRow], ids: Sequence[int], stored_events: Sequence[StoredEvent],
        commands: Sequence[Any] = (),
    ) -> None:
        rows = self.commands.insert(self._query(curs), ids, commands)
        self.heads.record(self._query(curs), ids, stored_events, self._gap(curs), rows)

    def _latest(self, curs: Cursor[DictRow], ids: list[UUID]) -> dict[UUID, int]:
        curs.execute(SQL(
            "SELECT originator_id, MAX(originator_version) AS version FROM {}.{} "
            "WHERE originator_id = ANY(%s) GROUP BY originator_id"
        ).format(Identifier(self.datastore.schema), Identifier(self.events_table_name)),
            (ids,))
        return {UUID(str(row["originator_id"])): row["version"] for row in curs.fetchall()}

    @staticmethod
    def _query(curs: Cursor[DictRow]) -> Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]:
        """A `heads.Query` on the transaction's cursor."""
        def query(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
            curs.execute(sql, params)
            if not sql.startswith("SELECT"):
                return []
            return [tuple(row.values()) for row in curs.fetchall()]
        return query

    def _gap(self, curs: Cursor[DictRow]) -> Callable[[int, int], list[Notification]]:
        """The notifications stored strictly between two ids, in id order."""
        table = f'"{self.datastore.schema}"."{self.events_table_name}"'

        def between(after: int, before: int) -> list[Notification]:
            curs.execute(f"SELECT notification_id, originator_id, originator_version, topic, "
                         f"state FROM {table} WHERE notification_id > %s AND "
                         "notification_id < %s ORDER BY notification_id", (after, before))
            return [notification(tuple(row.values())) for row in curs.fetchall()]
        return between


TOPIC = f"{__name__}:{LedgerPostgresRecorder.__name__}"
