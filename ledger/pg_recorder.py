"""The PostgreSQL application recorder, storing each transaction's head row (ledger/heads.py).

This is the one place that uses a private hook of eventsourcing 9.5.6's
`PostgresApplicationRecorder`: `_fetch_ids_after_insert_events` runs inside the transaction
that inserted the events, after the table lock (`LOCK TABLE … IN EXCLUSIVE MODE`) serialized it
with every other writer, and is the first point where the notification ids are known. The
head row must be written there, in the same transaction, or a crash between the two would
leave events no head covers. (The library's optional database functions,
POSTGRES_ENABLE_DB_FUNCTIONS, bypass this hook: the ledger does not turn them on.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import Notification, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from psycopg import Cursor
from psycopg.rows import DictRow
from psycopg.sql import SQL

from ledger.heads import TABLE, HeadWriter, create_postgres, notification


class HeadedPostgresApplicationRecorder(PostgresApplicationRecorder):
    """`PostgresApplicationRecorder` that also stores the head row of each transaction."""

    def __init__(self, datastore: PostgresDatastore, events_table_name: str = "stored_events",
                 ) -> None:
        super().__init__(datastore, events_table_name=events_table_name)
        self.heads = HeadWriter(f'"{datastore.schema}".{TABLE}', marker="%s")
        self.sql_create_statements.append(SQL(create_postgres(self.heads.table)))  # type: ignore[arg-type]

    def _fetch_ids_after_insert_events(
        self, curs: Cursor[DictRow], stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        ids = super()._fetch_ids_after_insert_events(curs, stored_events, **kwargs)
        if ids:
            self.heads.record(self._query(curs), ids, stored_events, self._gap(curs))
        return ids

    @staticmethod
    def _query(curs: Cursor[DictRow]) -> Any:
        def query(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
            curs.execute(sql, params)
            if not sql.startswith("SELECT"):
                return []
            return [tuple(row.values()) for row in curs.fetchall()]
        return query

    def _gap(self, curs: Cursor[DictRow]) -> Any:
        table = f'"{self.datastore.schema}"."{self.events_table_name}"'

        def between(after: int, before: int) -> list[Notification]:
            curs.execute(f"SELECT notification_id, originator_id, originator_version, topic, "
                         f"state FROM {table} WHERE notification_id > %s AND "
                         "notification_id < %s ORDER BY notification_id", (after, before))
            return [notification(tuple(row.values())) for row in curs.fetchall()]
        return between


TOPIC = f"{__name__}:{HeadedPostgresApplicationRecorder.__name__}"
