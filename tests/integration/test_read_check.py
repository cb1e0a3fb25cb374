"""The recorders' check over what a save only read (ledger/infrastructure/read_check.py): a save
naming an aggregate it read at a version the store has moved past is refused as a conflict and
stores nothing; the PostgreSQL recorder passes the library's own application-recorder test case."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse
from uuid import UUID, uuid4

import eventsourcing.tests.persistence as base
import pytest
from eventsourcing.persistence import ApplicationRecorder, IntegrityError, StoredEvent
from eventsourcing.sqlite import SQLiteDatastore

from ledger.infrastructure.read_check import UNCHANGED
from ledger.infrastructure.sqlite_recorder import BatchSQLiteApplicationRecorder

POSTGRES_URL = os.environ.get("RIN_TEST_POSTGRES_URL")
needs_postgres = pytest.mark.skipif(not POSTGRES_URL, reason="needs RIN_TEST_POSTGRES_URL")


def postgres_recorder(schema: str, pool_size: int = 1) -> ApplicationRecorder:
    import psycopg
    from eventsourcing.postgres import PostgresDatastore

    from ledger.infrastructure.postgres_recorder import LedgerPostgresRecorder

    assert POSTGRES_URL is not None
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    url = urlparse(POSTGRES_URL)
    datastore = PostgresDatastore(url.path.lstrip("/"), url.hostname or "localhost",
                                  url.port or 5432, url.username or "", url.password or "",
                                  schema=schema, pool_size=pool_size)
    recorder = LedgerPostgresRecorder(datastore, events_table_name="stored_events")
    recorder.create_table()
    return recorder


def drop(schema: str) -> None:
    import psycopg

    assert POSTGRES_URL is not None
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=needs_postgres)])
def recorder(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ApplicationRecorder]:
    if request.param == "sqlite":
        sqlite = BatchSQLiteApplicationRecorder(SQLiteDatastore(str(tmp_path / "e.sqlite")))
        sqlite.create_table()
        yield sqlite
        return
    schema = f"test_{uuid4().hex[:12]}"
    yield postgres_recorder(schema)
    drop(schema)


def event(originator: UUID, version: int) -> StoredEvent:
    return StoredEvent(originator_id=originator, originator_version=version, topic="t",
                       state=b"{}")


def test_a_save_whose_read_moved_is_a_conflict_and_stores_nothing(
    recorder: ApplicationRecorder
) -> None:
    read, absent, written = uuid4(), uuid4(), uuid4()
    recorder.insert_events([event(read, 1), event(read, 2)])
    for stale in ({read: 1}, {read: 0}, {absent: 1}, {read: 2, absent: 3}):
        with pytest.raises(IntegrityError):
            recorder.insert_events([event(written, 1)], **{UNCHANGED: stale})
        assert recorder.select_events(written) == []
    # read at the versions stored (an absent one at 0): the save goes through
    ids = recorder.insert_events([event(written, 1)], **{UNCHANGED: {read: 2, absent: 0}})
    assert ids == [3]
    assert [e.originator_version for e in recorder.select_events(written)] == [1]


@needs_postgres
class TestLedgerPostgresRecorder(base.ApplicationRecorderTestCase):
    """The library's ApplicationRecorderTestCase, on our PostgreSQL recorder."""

    def setUp(self) -> None:
        self.schema = f"test_{uuid4().hex[:12]}"
        super().setUp()

    def tearDown(self) -> None:
        super().tearDown()
        drop(self.schema)

    def create_recorder(self) -> ApplicationRecorder:
        return postgres_recorder(self.schema)
