"""Issue 9, item 3 (attack 3): idempotency records are unprotected.

Deleting command records let a re-applied file apply lines a second time, and a record forged
for a line not yet applied made the real line a silent `duplicate`. Now deleting records
breaks the head rows (so `verify` fails before anyone re-applies the file), and a forged record
names events that are not the ones stored just before it. With a key, the signed heads cover
both: an attacker who recomputes the head rows breaks their signatures.

These attacks are on a store of release 2's format, whose records are `CommandRecord` events
(such a store keeps writing them); those on the rows of `rin_commands`, where new stores keep
their records, are in test_command_table.py.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from store_access import app_of

from ledger.application.command_input import parse_command
from ledger.application.handlers import digest
from ledger.application.ledger import Ledger
from ledger.infrastructure.command_records import CommandRecord
from red_team.attacker import MARKET, build, files, make_key, verify
from red_team.rewrite import rewrite_history

NEXT = {"type": "transfer", "id": "t-next", "date": "2024-03-08", "from": "2001", "to": "3001",
        "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 10}}


def test_deleting_records_fails_verify(tmp_path: Path) -> None:
    build(tmp_path, record_events=True)
    with files(tmp_path) as db:
        deleted = db.execute("DELETE FROM stored_events WHERE topic = ? AND rowid IN (SELECT "
                             "rowid FROM stored_events WHERE topic = ? LIMIT 7)",
                             (CommandRecord.Applied.TOPIC, CommandRecord.Applied.TOPIC)).rowcount
    assert deleted == 7
    out = verify(tmp_path)
    assert out.exit_code == 1
    assert "missing from stored_events: deleted" in out.output
    assert "history up to it changed" in out.output


def test_deleting_records_and_recomputing_heads_fails_with_the_key(tmp_path: Path) -> None:
    """The last record deleted, the gap closed by moving the rows after it down one rowid,
    every head row and head.json recomputed: only the signatures give it away."""
    key = make_key(tmp_path)
    data = tmp_path / "data"
    build(data, key, record_events=True)
    with files(data) as db:
        gone = db.execute("SELECT MAX(rowid) FROM stored_events WHERE topic = ?",
                          (CommandRecord.Applied.TOPIC,)).fetchone()[0]
        db.execute("DELETE FROM stored_events WHERE rowid = ?", (gone,))
        db.execute("UPDATE stored_events SET rowid = rowid - 1 WHERE rowid > ?", (gone,))
        db.execute("UPDATE rin_heads SET notification_id = notification_id - 1 "
                   "WHERE notification_id >= ?", (gone,))
    rewrite_history(data)
    assert verify(data).exit_code == 0  # without the key: the limit the README states
    out = verify(data, "--public-key", f"{key}.pub")
    assert out.exit_code == 1 and "signature does not hold" in out.output


def forge_record(data: Path, command: dict[str, object], names: list[str]) -> None:
    """Append a command record for `command` naming `names`, with a correct chain."""
    parsed = parse_command(command)
    record = CommandRecord.applied(str(command["id"]), digest(parsed), names)
    with Ledger(data) as ledger:
        stored = app_of(ledger).mapper.to_stored_event(record.collect_events()[0])
    with files(data) as db:
        db.execute("INSERT INTO stored_events VALUES (?, ?, ?, ?)",
                   (stored.originator_id.hex, 1, stored.topic, stored.state))


def test_a_forged_record_for_a_line_not_yet_applied_is_named(tmp_path: Path) -> None:
    build(tmp_path, record_events=True)
    with files(tmp_path) as db:  # it names the last command's events, as a real one would
        last = orjson.loads(db.execute("SELECT state FROM stored_events ORDER BY rowid DESC "
                                       "LIMIT 1").fetchone()[0])
    forge_record(tmp_path, NEXT, last["events"])
    with Ledger(tmp_path) as ledger:
        assert ledger.apply(NEXT).status == "duplicate"  # what the forgery achieves
    out = verify(tmp_path)
    assert out.exit_code == 1
    assert "command record 't-next'" in out.output
    assert "are not the ones stored just before it" in out.output


def test_a_forged_record_in_release_1_form_is_named(tmp_path: Path) -> None:
    """A record without its events (as release 1 wrote them) after heads began is forged."""
    build(tmp_path, record_events=True)
    parsed = parse_command(NEXT)
    with Ledger(tmp_path) as ledger:
        stored = app_of(ledger).mapper.to_stored_event(
            CommandRecord.applied("t-next", digest(parsed), []).collect_events()[0])
    state = orjson.loads(stored.state)
    del state["events"], state["class_version"]
    with files(tmp_path) as db:
        db.execute("INSERT INTO stored_events VALUES (?, ?, ?, ?)",
                   (stored.originator_id.hex, 1, stored.topic, orjson.dumps(state)))
    out = verify(tmp_path)
    assert out.exit_code == 1 and "names no events, yet was stored after" in out.output


def test_every_real_record_names_the_events_just_before_it(tmp_path: Path) -> None:
    """Checked by hand for the last line: a transfer stores TransferredOut (seller) and
    TransferredIn (buyer), then its record names exactly those two."""
    build(tmp_path, record_events=True)
    with files(tmp_path) as db:
        rows = db.execute("SELECT originator_id, originator_version, topic, state FROM "
                          "stored_events ORDER BY rowid DESC LIMIT 3").fetchall()
    record, buyer, seller = rows
    assert orjson.loads(record[3])["client_id"] == MARKET[-1]["id"]
    assert orjson.loads(record[3])["events"] == [f"{seller[0]}:{seller[1]}",
                                                 f"{buyer[0]}:{buyer[1]}"]
    assert (seller[2], buyer[2]) == ("rin_ledger:Party.TransferredOut",
                                     "rin_ledger:Party.TransferredIn")


def test_release_1_records_still_make_their_lines_duplicates(tmp_path: Path) -> None:
    """Records stored by release 1 (no events named, CommandRecord.Applied v1) are upcast."""
    import shutil

    shutil.copytree(Path(__file__).parents[2] / "data" / "store_r1", tmp_path / "r1")
    again = {"type": "transfer", "id": "fx-0209", "date": "2024-03-01", "from": "2001",
             "to": "3001", "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 10}}
    with Ledger(tmp_path / "r1") as ledger:
        assert ledger.apply(again).status == "duplicate"
        assert ledger.apply({**again, "id": "fresh"}).status == "applied"
    assert verify(tmp_path / "r1").exit_code == 0
