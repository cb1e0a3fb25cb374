"""A SQLite store finds the rare events that open a batch's invalidation record (§80.1431) or
status record (QAP verification or lock, §80.1471(e), §80.1474(b)(1)) by a partial index
(ledger/infrastructure/sqlite_recorder.py `opened`), not by reading its whole log: the same ids
as the log's, and a query plan that searches the index (issue 15: the log scans took 1.1 s of a
first command on a 1M-event store)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from uuid import UUID

import orjson
import pytest
from store_access import app_of, stored

from ledger import Ledger
from ledger.infrastructure.batch_status_index import BatchStatusIndex
from ledger.infrastructure.invalidation_index import OPENING, InvalidationIndex
from ledger.infrastructure.sqlite_recorder import OPENED_INDEX, OPENED_WHERE

EXAMPLES = Path(__file__).parents[2] / "ledger" / "examples"


@pytest.mark.parametrize("example", ["every_rule.jsonl", "locks.jsonl"])
def test_the_partial_index_finds_what_the_log_holds(tmp_path: Path, example: str) -> None:
    lines = [orjson.loads(line) for line in (EXAMPLES / example).read_bytes().splitlines()]
    with Ledger(tmp_path) as ledger:
        for _ in ledger.apply_many(lines):
            pass
        recorder = app_of(ledger).recorder
        end = ledger.position()
        for index in (InvalidationIndex, BatchStatusIndex):
            events = stored(ledger, topics=[index.OPENED.TOPIC])
            found = index(recorder).up_to(end).records
            assert found == {UUID(str(n.originator_id)) for n in events}
            # read in two steps, up to the first opening and then the rest: the same ids
            first = events[0].id if events else 1
            assert index(recorder).up_to(first).up_to(end).records == found
        opened = sum(len(stored(ledger, topics=[topic])) for topic in OPENING)
    assert opened >= 1  # the example really opens a record
    with sqlite3.connect(tmp_path / "events.sqlite") as db:
        plan = db.execute(f"EXPLAIN QUERY PLAN SELECT originator_id FROM stored_events WHERE "
                          f"{OPENED_WHERE} AND topic = ? AND rowid > ? AND rowid <= ? "
                          "ORDER BY rowid", (OPENING[0], 0, end)).fetchall()
    assert f"USING INDEX {OPENED_INDEX}" in plan[0][3]
