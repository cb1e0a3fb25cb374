"""The views' tracking recorder passes the library's own test case, and a batch's rows commit
with its tracking record or not at all."""

from __future__ import annotations

import tempfile
from pathlib import Path

import eventsourcing.tests.persistence as base
import pytest
from eventsourcing.persistence import IntegrityError, Tracking
from sqlite_utils import Database

from projections.batch import Batch
from projections.market import MARKET
from projections.runner import SQL_VIEWS, TABLES, open_views
from projections.tracking import ViewRecorder

ROW = {"month": "2024-01", "d_code": 6, "generated": 1, "separated": 0, "retired": 0}


class TestViewTracking(base.TrackingRecorderTestCase):
    """eventsourcing's TrackingRecorderTestCase, run against our recorder class."""

    def create_recorder(self) -> ViewRecorder:
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        recorder = ViewRecorder(Path(folder.name) / "views.sqlite", TABLES, SQL_VIEWS)
        self.addCleanup(recorder.close)
        return recorder


def rows(path: Path) -> list[dict[str, object]]:
    db = Database(path)
    try:
        return list(db.query("SELECT * FROM market_monthly"))
    finally:
        db.close()


def one_row_batch(generated: int) -> Batch:
    batch = Batch()
    batch.bump(MARKET, ("2024-01", 6), (generated, 0, 0))
    return batch


def test_rows_and_tracking_commit_together(tmp_path: Path) -> None:
    path = tmp_path / "views.sqlite"
    recorder = open_views(path)
    recorder.record(one_row_batch(1), Tracking("RinLedger", 5))
    # The same position again: the tracking insert fails and the batch's rows roll back.
    with pytest.raises(IntegrityError):
        recorder.record(one_row_batch(1_000), Tracking("RinLedger", 5))
    recorder.close()
    assert rows(path) == [ROW]


def test_sqlite_utils_writes_use_savepoints_inside_the_transaction(tmp_path: Path) -> None:
    """insert_all inside our transaction must not commit: a failure afterwards undoes it."""
    path = tmp_path / "views.sqlite"
    recorder = open_views(path)
    batch = Batch()
    batch.add(MARKET, tuple(ROW.values()))

    def fail(db: Database) -> None:
        assert db.conn.in_transaction  # still the one transaction the rows went into
        raise RuntimeError("crash between the rows and the tracking record")

    with pytest.raises(RuntimeError):
        recorder.record(batch, Tracking("RinLedger", 1), fail)
    assert recorder.max_tracking_id("RinLedger") is None
    recorder.close()
    assert rows(path) == []
