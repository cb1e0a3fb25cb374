"""Each aggregate's version at a log position: the last version stored with a notification id
at or before it. What a reader at one position loads, so that reads of several aggregates see
one committed state (a transaction's events have consecutive notification ids), whatever
writers store meanwhile. Notification ids are SQLite's rowids, PostgreSQL's notification_id."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any
from uuid import UUID

from eventsourcing.persistence import ApplicationRecorder
from eventsourcing.sqlite import SQLiteApplicationRecorder


def versions_at(
    recorder: ApplicationRecorder, ids: Collection[UUID], position: int
) -> dict[UUID, int]:
    """The version of each of `ids` at notification `position`; absent: no event by then."""
    if not ids:
        return {}
    if isinstance(recorder, SQLiteApplicationRecorder):
        return _sqlite(recorder, ids, position)
    return _postgres(recorder, ids, position)


def _sqlite(
    recorder: SQLiteApplicationRecorder, ids: Collection[UUID], position: int
) -> dict[UUID, int]:
    marks = ",".join("?" * len(ids))
    with recorder.datastore.transaction(commit=False) as c:
        c.execute(
            f"SELECT originator_id, MAX(originator_version) FROM {recorder.events_table_name} "
            f"WHERE originator_id IN ({marks}) AND rowid <= ? GROUP BY originator_id",
            [*(i.hex for i in ids), position],
        )
        return {UUID(row[0]): row[1] for row in c.fetchall()}


def _postgres(recorder: Any, ids: Collection[UUID], position: int) -> dict[UUID, int]:
    from psycopg.sql import SQL, Identifier  # only a PostgreSQL store has psycopg

    with recorder.datastore.transaction(commit=False) as curs:
        curs.execute(SQL(
            "SELECT originator_id, MAX(originator_version) AS version FROM {}.{} "
            "WHERE originator_id = ANY(%s) AND notification_id <= %s GROUP BY originator_id"
        ).format(Identifier(recorder.datastore.schema), Identifier(recorder.events_table_name)),
            (list(ids), position))
        return {UUID(str(row["originator_id"])): row["version"] for row in curs.fetchall()}
