"""`ViewRecorder`: the read models' SQLite file, kept exactly once by the library's tracking.

Built on `eventsourcing.sqlite.SQLiteTrackingRecorder`, so its datastore, transactions and
tracking table are the library's: a batch's rows and its one tracking record (the batch's last
notification id) commit in one transaction, and a position recorded twice raises
`IntegrityError` and rolls the rows back.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from eventsourcing.persistence import Tracking
from eventsourcing.sqlite import SQLiteCursor, SQLiteDatastore, SQLiteTrackingRecorder
from sqlite_utils import Database

from projections.batch import Batch
from projections.schema import Table


def wrap(cursor: SQLiteCursor) -> Database:
    """A sqlite-utils Database on the cursor's connection: inside the open transaction its
    writes use savepoints, never commits."""
    return Database(cursor.sqlite_cursor.connection, recursive_triggers=False,
                    execute_plugins=False)


class ViewRecorder(SQLiteTrackingRecorder):
    """A tracking recorder whose file also holds the read-model tables."""

    def __init__(
        self, path: str | os.PathLike[str], tables: Iterable[Table] = (),
        sql_views: Iterable[str] = (),
    ) -> None:
        super().__init__(SQLiteDatastore(str(path), lock_timeout=30))
        self.tables = tuple(tables)
        self.sql_views = tuple(sql_views)
        self.create_table()

    def _create_table(self, c: SQLiteCursor) -> None:
        super()._create_table(c)
        db = wrap(c)
        for table in self.tables:
            table.create(db)
        for statement in self.sql_views:
            c.execute(statement)

    def record(
        self, batch: Batch, tracking: Tracking, finish: Callable[[Database], None] | None = None
    ) -> None:
        """Write a batch's rows, then `finish` (derived tables), then its tracking record, all in
        one transaction."""
        with self.datastore.transaction(commit=True) as c:
            db = wrap(c)
            batch.write(db)
            if finish is not None:
                finish(db)
            self._insert_tracking(c, tracking)

    def clear(self, application_name: str) -> None:
        """Empty every view table and forget the position: the next run starts from 0."""
        with self.datastore.transaction(commit=True) as c:
            for table in self.tables:
                c.execute(f'DELETE FROM "{table.name}"')
            c.execute("DELETE FROM tracking WHERE application_name = ?", (application_name,))

    def close(self) -> None:
        self.datastore.close()
