"""The PostgreSQL application recorder: the library's, also checking that what a save only
read is unchanged (ledger/read_check.py). Imported only for a PostgreSQL store (psycopg)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import ProgrammingError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from psycopg import Cursor
from psycopg.rows import DictRow
from psycopg.sql import SQL, Identifier

from ledger.read_check import UNCHANGED, check_unchanged


class CheckedPostgresRecorder(PostgresApplicationRecorder):
    """`PostgresApplicationRecorder` that refuses a save if an aggregate it read has moved."""

    def __init__(self, datastore: PostgresDatastore, **kwargs: Any) -> None:
        super().__init__(datastore, **kwargs)
        if datastore.enable_db_functions:  # its insert function would skip the check
            raise ProgrammingError("the ledger needs POSTGRES_ENABLE_DB_FUNCTIONS off")

    def _insert_stored_events(
        self, curs: Cursor[DictRow], stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> None:
        unchanged = kwargs.pop(UNCHANGED, None)
        # The library's EXCLUSIVE table lock serialises the writers: taken before the check,
        # nobody can store anything until this transaction ends, and each statement after it
        # reads every commit made before (READ COMMITTED). A failed check inserts nothing.
        self._lock_table(curs)
        check_unchanged(unchanged, lambda chunk: self._latest(curs, chunk))
        super()._insert_stored_events(curs, stored_events, **kwargs)

    def _latest(self, curs: Cursor[DictRow], ids: list[UUID]) -> dict[UUID, int]:
        curs.execute(SQL(
            "SELECT originator_id, MAX(originator_version) AS version FROM {}.{} "
            "WHERE originator_id = ANY(%s) GROUP BY originator_id"
        ).format(Identifier(self.datastore.schema), Identifier(self.events_table_name)),
            (ids,))
        return {UUID(str(row["originator_id"])): row["version"] for row in curs.fetchall()}


TOPIC = f"{__name__}:{CheckedPostgresRecorder.__name__}"
