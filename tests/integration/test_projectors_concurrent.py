"""Two processes projecting one views file at once, while a writer stores more, count every
event once (the views equal a rebuild from scratch) and neither fails.

Before: a follower's transaction read first (where the derived tables had got to) and wrote
after, so once another follower committed in between, SQLite refused the write at once
("database is locked": the follower process died) instead of waiting for the lock. Now the
transaction takes the write lock first, and records a batch only if the views are still tracked
at the position it started after (rows of keyed tables would conflict anyway, but the counters
of market_monthly would add up twice); a follower that finds them moved resumes from there.
"""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.persistence import IntegrityError, Tracking
from sqlite_utils import Database

from ledger import Ledger
from projections import rebuild
from projections.batch import Batch
from projections.invariants import dump
from projections.market import MARKET
from projections.runner import open_views, project

ROOT = Path(__file__).resolve().parents[2]


def project_until(data: str, views: str, stop: Any, done: Any) -> None:
    """A follower process: small batches, over and over, until told to stop."""
    with Ledger(data) as ledger:
        while not stop.is_set():
            project(ledger, views, batch_size=7)
        project(ledger, views, batch_size=7)
    done.set()


def market(lines: int) -> list[str]:
    made = subprocess.run([sys.executable, str(ROOT / "scripts" / "simulate.py"), "--lines",
                           str(lines), "--seed", "5"], capture_output=True, text=True, check=True)
    return made.stdout.splitlines()


def project_while_writing(data: Path, views: str, lines: list[str]) -> Ledger:
    """Apply the first 100 lines, start two follower processes on `views`, apply the rest in
    small transactions while they follow, and stop them; the writer's Ledger, still open."""
    ledger = Ledger(data)
    assert {r.status for r in ledger.apply_many(lines[:100])} == {"applied"}
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    followers = []
    for _ in range(2):
        done = context.Event()
        process = context.Process(target=project_until, args=(str(data), views, stop, done))
        process.start()
        followers.append((process, done))
    for first in range(100, len(lines), 5):
        assert {r.status for r in ledger.apply_many(lines[first:first + 5])} == {"applied"}
    stop.set()
    for process, done in followers:
        process.join(180)
        assert process.exitcode == 0 and done.is_set()
    return ledger


def test_two_projecting_processes_count_each_event_once(tmp_path: Path) -> None:
    data, views = tmp_path / "data", tmp_path / "views.sqlite"
    with project_while_writing(data, str(views), market(600)) as ledger:
        project(ledger, views)
        rebuilt = tmp_path / "rebuilt.sqlite"
        rebuild(ledger, rebuilt)
        incremental, fresh = dump(views), dump(rebuilt)
        assert fresh["holdings_history"]  # something was projected
        for table, rows in fresh.items():
            assert incremental[table] == rows, f"{table}: {len(rows)} rows rebuilt"


def refuses_a_batch_after_a_moved_position(recorder: Any) -> None:
    """A second follower's batch that also started after 0, up to 8: its events 1-5 are
    already counted, so it is refused whole, its +1 to market_monthly rolled back."""
    batch = Batch()
    batch.bump(MARKET, ("2024-01", 6), (1, 0, 0))
    recorder.record(batch, Tracking("RinLedger", 5), after=0)
    with pytest.raises(IntegrityError, match="moved to notification 5 from 0"):
        recorder.record(batch, Tracking("RinLedger", 8), after=0)
    assert recorder.max_tracking_id("RinLedger") == 5


def test_a_batch_recorded_after_a_moved_position_is_refused_and_rolled_back(
    tmp_path: Path,
) -> None:
    path = tmp_path / "views.sqlite"
    recorder = open_views(path)
    try:
        refuses_a_batch_after_a_moved_position(recorder)
    finally:
        recorder.close()
    db = Database(path)
    try:
        assert [r["generated"] for r in db.query("SELECT * FROM market_monthly")] == [1]
    finally:
        db.close()
