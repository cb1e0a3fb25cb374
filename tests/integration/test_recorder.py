"""Our multi-row SQLite recorder passes the library's own application-recorder test cases."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from uuid import uuid4

import eventsourcing.tests.persistence as base
from eventsourcing.persistence import StoredEvent
from eventsourcing.sqlite import SQLiteDatastore
from eventsourcing.utils import get_topic
from store_access import app_of

from ledger import Ledger
from ledger.infrastructure.settings import store_env
from ledger.infrastructure.sqlite_recorder import (
    CHECKPOINT_PAGES,
    ROWS_PER_STATEMENT,
    TOPIC,
    BatchSQLiteApplicationRecorder,
)


class FileRecorder:
    """Each test gets a fresh recorder on its own SQLite file (threads need a real file)."""

    def setUp(self) -> None:
        self.folder = tempfile.TemporaryDirectory()
        super().setUp()  # type: ignore[misc]

    def tearDown(self) -> None:
        super().tearDown()  # type: ignore[misc]
        self.folder.cleanup()

    def create_recorder(self) -> BatchSQLiteApplicationRecorder:
        datastore = SQLiteDatastore(os.path.join(self.folder.name, "events.sqlite"))
        recorder = BatchSQLiteApplicationRecorder(datastore)
        recorder.create_table()
        return recorder


class TestBatchRecorder(FileRecorder, base.ApplicationRecorderTestCase):
    """The library's ApplicationRecorderTestCase, on our recorder."""


class TestBatchRecorderNonInterleaving(FileRecorder, base.NonInterleavingNotificationIDsBaseCase):
    """Two concurrent transactions' notification ids never interleave."""


def test_ids_follow_the_events_across_statements(tmp_path: Path) -> None:
    """More events than one statement takes: ids are contiguous and in the events' order."""
    recorder = BatchSQLiteApplicationRecorder(SQLiteDatastore(str(tmp_path / "e.sqlite")))
    recorder.create_table()
    count = ROWS_PER_STATEMENT * 2 + 7  # 500 × 2 + 7 = 1,007 events, three statements
    originators = [uuid4() for _ in range(3)]
    events = [
        StoredEvent(originator_id=originators[i % 3], originator_version=i, topic="t",
                    state=str(i).encode())
        for i in range(count)
    ]
    assert recorder.insert_events(events) == list(range(1, count + 1))
    read = recorder.select_notifications(start=1, limit=count)
    assert [n.state for n in read] == [e.state for e in events]


def test_the_ledger_uses_it(tmp_path: Path) -> None:
    assert store_env(tmp_path)["APPLICATION_RECORDER_TOPIC"] == TOPIC
    assert get_topic(BatchSQLiteApplicationRecorder) == TOPIC
    with Ledger(tmp_path) as ledger:
        assert type(app_of(ledger).recorder) is BatchSQLiteApplicationRecorder


def test_a_save_sets_the_longer_checkpoint_interval(tmp_path: Path) -> None:
    recorder = BatchSQLiteApplicationRecorder(SQLiteDatastore(str(tmp_path / "e.sqlite")))
    recorder.create_table()
    recorder.insert_events([StoredEvent(originator_id=uuid4(), originator_version=1, topic="t",
                                        state=b"{}")])
    with recorder.datastore.transaction(commit=False) as c:
        c.execute("PRAGMA wal_autocheckpoint")
        assert c.fetchone()[0] == CHECKPOINT_PAGES == 10_000  # SQLite's default is 1,000
