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


def test_verify_names_an_index_rewritten_to_hide_a_lock(tmp_path: Path) -> None:
    """The attack on the index itself: made empty under another condition, then its definition
    rewritten through `writable_schema` to the ledger's, so SQLite searches it and finds no
    lock. A spend from the locked batch still stores nothing (the save's read check finds the
    status record the command did not see, so the line never commits), `verify` names the
    index (the walk of the log sees the record it hides), and after the `REINDEX` it advises
    the spend is refused for the lock (§80.1474(b)(1))."""
    lines = [orjson.loads(line) for line in (EXAMPLES / "locks.jsonl").read_bytes().splitlines()]
    locked = next(i for i, line in enumerate(lines) if line["type"] == "lock") + 1
    assert lines[locked]["id"] == "t-locked"
    # the same spend asking for no QAP status: the index hides the batch's whole status record
    spend = {**lines[locked], "rins": {k: v for k, v in lines[locked]["rins"].items()
                                       if k != "qap"}}
    with Ledger(tmp_path) as ledger:
        for _ in ledger.apply_many(lines[:locked]):
            pass
        assert ledger.audit() == []
        end = ledger.position()
    with sqlite3.connect(tmp_path / "events.sqlite") as db:
        genuine = db.execute("SELECT sql FROM sqlite_master WHERE name = ?",
                             (OPENED_INDEX,)).fetchone()[0]
        db.execute(f"DROP INDEX {OPENED_INDEX}")
        db.execute(f"CREATE INDEX {OPENED_INDEX} ON stored_events (topic) "
                   "WHERE topic IN ('nothing')")
        db.execute("PRAGMA writable_schema = ON")
        db.execute("UPDATE sqlite_master SET sql = ? WHERE name = ?", (genuine, OPENED_INDEX))
    with Ledger(tmp_path) as ledger:
        assert ledger.apply(spend).status == "rejected"
        assert ledger.position() == end
        problems = ledger.audit()
    assert len(problems) == 1 and "BatchStatus.Opened" in problems[0], problems
    assert "REINDEX rin_opened" in problems[0]
    with sqlite3.connect(tmp_path / "events.sqlite") as db:
        db.execute(f"REINDEX {OPENED_INDEX}")
    with Ledger(tmp_path) as ledger:
        assert ledger.audit() == []
        assert ledger.apply(spend).rule == "LOCK-HELD"
