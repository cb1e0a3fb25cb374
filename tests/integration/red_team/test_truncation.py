"""Issue 9, item 4 (attack 4): truncation.

SQLite reuses deleted tail rowids; with `views.sqlite` gone, a deleted tail or a 0-byte events
file verified as a healthy, smaller ledger. Now the store's head rows name its last
notification, and `head.json` beside the data keeps the latest head in a second place: a
deleted tail, a deleted middle or an emptied file is named without any exported head, and a
write onto a store that lost its tail is refused. (Rolling back the store AND head.json to an
earlier consistent state is caught only by a head kept elsewhere: `--against`.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ledger.application.ledger import Ledger
from ledger.infrastructure.heads import StoreTruncated
from red_team.attacker import build, files, rin, verify

MORE = {"type": "transfer", "date": "2024-03-09", "from": "2001", "to": "3001",
        "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 10}}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    build(tmp_path)
    assert not (tmp_path / "views.sqlite").exists()
    return tmp_path


def last_id(data: Path) -> int:
    with files(data) as db:
        return int(db.execute("SELECT MAX(rowid) FROM stored_events").fetchone()[0])


def test_a_deleted_tail_is_named_and_the_store_refuses_writes(data: Path) -> None:
    end = last_id(data)
    with files(data) as db:
        db.execute("DELETE FROM stored_events WHERE rowid > ?", (end - 5,))
    out = verify(data)
    assert out.exit_code == 1
    assert f"rin_heads row at notification {end:,} is past the last stored notification " \
           f"({end - 5:,}): the tail was deleted" in out.output
    with Ledger(data) as ledger, pytest.raises(StoreTruncated):
        ledger.apply(MORE)  # its events would reuse the deleted rowids
    assert last_id(data) == end - 5


def test_a_deleted_tail_with_its_head_rows_is_named_by_head_json(data: Path) -> None:
    end = last_id(data)
    with files(data) as db:
        db.execute("DELETE FROM stored_events WHERE rowid > ?", (end - 5,))
        db.execute("DELETE FROM rin_heads WHERE notification_id > ?", (end - 5,))
    out = verify(data)
    assert out.exit_code == 1
    assert f"head.json is at notification {end:,}, past the last stored notification" in \
        out.output


def test_a_deleted_middle_is_named(data: Path) -> None:
    with files(data) as db:
        db.execute("DELETE FROM stored_events WHERE rowid IN (100, 101)")
    out = verify(data)
    assert out.exit_code == 1
    assert "notifications 100-101 missing from stored_events: deleted" in out.output


def test_an_emptied_events_file_is_named(data: Path) -> None:
    end = last_id(data)
    for suffix in ("-wal", "-shm"):
        (data / f"events.sqlite{suffix}").unlink(missing_ok=True)
    os.truncate(data / "events.sqlite", 0)
    out = verify(data)
    assert out.exit_code == 1, out.output
    assert f"head.json is at notification {end:,}, past the last stored notification (0): " \
           "the store was truncated" in out.output


def test_a_rollback_of_store_and_head_json_needs_a_head_kept_elsewhere(data: Path,
                                                                      tmp_path: Path) -> None:
    exported = tmp_path / "exported.json"
    exported.write_text(rin(data, "verify", "--head").stdout)
    end = last_id(data)
    with files(data) as db:  # roll back to the head of the first transaction, everywhere
        first = db.execute("SELECT notification_id, hash FROM rin_heads ORDER BY "
                           "notification_id LIMIT 1").fetchone()
        db.execute("DELETE FROM stored_events WHERE rowid > ?", (first[0],))
        db.execute("DELETE FROM rin_heads WHERE notification_id > ?", (first[0],))
        db.execute("DELETE FROM rin_commands WHERE notification_id > ?", (first[0],))
        db.execute("DELETE FROM stored_snapshots")  # they would name versions now gone
    (data / "head.json").write_text(json.dumps({"notification_id": first[0], "hash": first[1]}))
    assert verify(data).exit_code == 0, verify(data).output  # consistent: the stated limit
    out = verify(data, "--against", str(exported))
    assert out.exit_code == 1
    assert f"the exported head is at notification {end:,}, past the last stored" in out.output
