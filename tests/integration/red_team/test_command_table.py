"""Red team on `rin_commands`, where new stores keep their command records
(ledger/infrastructure/command_table.py): an edited, deleted, inserted, re-pointed or
duplicated row is named by `verify` (table, notification id, client id), and the rows' fold
into the head rows means that a deleted last row, or a consistent rewrite, fails the head rows
or, with a key, their signatures.

The market (red_team/attacker.py): 7 lines without ids store notifications 1-10; then the 210
transfers t-0000 … t-0209 store 2 events each, so the row of t-n is at notification 12 + 2n
and names the events at 11 + 2n and 12 + 2n.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson

from ledger.application.command_input import parse_command
from ledger.application.handlers import digest
from ledger.application.ledger import Ledger
from ledger.infrastructure.command_table import link
from red_team.attacker import build, files, make_key, verify
from red_team.rewrite import rewrite_history

NEXT = {"type": "transfer", "id": "t-next", "date": "2024-03-08", "from": "2001", "to": "3001",
        "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 10}}


def row(db: sqlite3.Connection, client_id: str) -> tuple[int, str, str, list[str], int, str]:
    at, cid, dig, events, previous, chain = db.execute(
        "SELECT notification_id, client_id, digest, events, previous, chain FROM rin_commands "
        "WHERE client_id = ?", (client_id,)).fetchone()
    return at, cid, dig, orjson.loads(events), previous, chain


def test_the_rows_are_where_the_market_puts_them(data: Path) -> None:
    """Checked by hand (module docstring): no record events, one row per transfer."""
    with files(data) as db:
        assert db.execute("SELECT COUNT(*) FROM stored_events WHERE topic LIKE "
                          "'%CommandRecord%'").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*), MIN(notification_id), MAX(notification_id) FROM "
                          "rin_commands").fetchone() == (210, 12, 430)
        at, _, _, events, previous, _ = row(db, "t-0005")
        names = [f"{oid}:{version}" for oid, version in db.execute(
            "SELECT originator_id, originator_version FROM stored_events WHERE rowid IN (21, 22)"
            " ORDER BY rowid")]
    assert (at, previous, events) == (22, 20, names)
    assert verify(data).exit_code == 0


def test_an_edited_digest_is_named(data: Path) -> None:
    """A digest edited makes the real line `rejected` ("a different command") when re-sent."""
    with files(data) as db:
        db.execute("UPDATE rin_commands SET digest = 'f00d' WHERE client_id = 't-0005'")
    out = verify(data)
    assert out.exit_code == 1
    assert ("rin_commands row at notification 22 (command 't-0005'): its chain does not hold: "
            "edited or forged") in out.output
    with files(data) as db:  # its chain recomputed too: the row after it, and the head rows
        at, cid, dig, events, previous, _ = row(db, "t-0005")
        before = db.execute("SELECT chain FROM rin_commands WHERE notification_id = 20"
                            ).fetchone()[0]
        db.execute("UPDATE rin_commands SET chain = ? WHERE notification_id = 22",
                   (link(before, at, cid, dig, events, previous),))
    out = verify(data)
    assert ("rin_commands row at notification 24 (command 't-0006'): its chain does not hold"
            in out.output)
    assert "rin_heads row at notification 396: stored head" in out.output  # its transaction's


def test_a_deleted_row_is_named_by_the_row_after_it(data: Path) -> None:
    """Deleting t-0005's row would let a re-applied file apply that line twice."""
    with files(data) as db:
        db.execute("DELETE FROM rin_commands WHERE client_id = 't-0005'")
    out = verify(data)
    assert out.exit_code == 1
    assert ("rin_commands row at notification 24 (command 't-0006'): says the row before it is "
            "at notification 22, but that is at 20: a row between deleted") in out.output
    assert "history up to it changed" in out.output


def test_the_deleted_last_row_is_found_by_its_head(data: Path) -> None:
    with files(data) as db:
        db.execute("DELETE FROM rin_commands WHERE client_id = 't-0209'")
    out = verify(data)
    assert out.exit_code == 1
    assert "rin_heads row at notification 430: stored head" in out.output
    assert "head.json at notification 430" in out.output


def forge(db: sqlite3.Connection, at: int, client_id: str, events: list[str],
          previous: int, chain_before: str) -> None:
    parsed = parse_command({**NEXT, "id": client_id})
    chain = link(chain_before, at, client_id, digest(parsed), events, previous)
    db.execute("INSERT INTO rin_commands VALUES (?, ?, ?, ?, ?, ?)",
               (at, client_id, digest(parsed), orjson.dumps(events).decode(), previous, chain))


def test_a_forged_row_for_a_line_not_applied_is_named(data: Path) -> None:
    """A row for `t-next` after the last transfer without an id (notifications 9-10), its
    chain computed as the ledger would: the line becomes a silent duplicate, and verify names
    the row after it, whose `previous` no longer points at the row before it."""
    with files(data) as db:
        names = [f"{oid}:{version}" for oid, version in db.execute(
            "SELECT originator_id, originator_version FROM stored_events WHERE rowid IN (9, 10)"
            " ORDER BY rowid")]
        forge(db, 10, "t-next", names, 0, "")
    with Ledger(data) as ledger:
        assert ledger.apply(NEXT).status == "duplicate"  # what the forgery achieves
    out = verify(data)
    assert out.exit_code == 1
    assert ("rin_commands row at notification 12 (command 't-0000'): says the row before it is "
            "at notification 0, but that is at 10: a row between deleted, or one inserted"
            ) in out.output


def test_a_forged_row_pointing_past_the_log_is_named(data: Path) -> None:
    with files(data) as db:
        _, _, _, events, _, chain = row(db, "t-0209")
        forge(db, 999, "t-next", events, 430, chain)
    out = verify(data)
    assert out.exit_code == 1
    assert ("rin_commands row at notification 999 (command 't-next'): past the last stored "
            "notification (430)") in out.output


def test_a_row_re_pointed_at_other_events_is_named(data: Path) -> None:
    """t-0005's row made to name t-0004's events, its chain recomputed: the events it names
    are not the ones just before it."""
    with files(data) as db:
        _, _, _, theirs, _, _ = row(db, "t-0004")
        db.execute("UPDATE rin_commands SET events = ? WHERE client_id = 't-0005'",
                   (orjson.dumps(theirs).decode(),))
    rewrite_history(data)  # every row's chain and every head recomputed
    out = verify(data)
    assert out.exit_code == 1
    assert ("rin_commands row at notification 22 (command 't-0005'): the events it names ("
            f"{theirs[0]}, {theirs[1]}) are not the ones stored just before it") in out.output


def test_a_row_moved_to_another_notification_is_named(data: Path) -> None:
    """t-0005's row moved from 22 to 21 (its first event), chains and heads recomputed."""
    with files(data) as db:
        db.execute("UPDATE rin_commands SET notification_id = 21 WHERE client_id = 't-0005'")
    rewrite_history(data)
    out = verify(data)
    assert out.exit_code == 1
    assert "rin_commands row at notification 21 (command 't-0005'): the events it names" \
        in out.output


def test_a_client_id_held_by_two_rows_is_named(data: Path) -> None:
    """The table rebuilt without its UNIQUE key, t-0005 given a second row at the last
    transfer without an id."""
    with files(data) as db:
        db.executescript(
            "ALTER TABLE rin_commands RENAME TO old; CREATE TABLE rin_commands "
            "(notification_id INTEGER PRIMARY KEY, client_id TEXT, digest TEXT, events TEXT, "
            "previous INTEGER, chain TEXT); INSERT INTO rin_commands SELECT * FROM old; "
            "DROP TABLE old")
        _, _, dig, _, _, _ = row(db, "t-0005")
        db.execute("INSERT INTO rin_commands VALUES (10, 't-0005', ?, '[]', 0, '')", (dig,))
    out = verify(data)
    assert out.exit_code == 1
    assert "rin_commands: 2 rows of command 't-0005': inserted" in out.output


def test_every_row_deleted_and_every_head_recomputed_needs_the_key(tmp_path: Path) -> None:
    """The limit the README states (a deleted record with every later head recomputed), and
    what the key adds: the recomputed heads' signatures do not hold."""
    key = make_key(tmp_path)
    data = tmp_path / "data"
    build(data, key)
    with files(data) as db:
        db.execute("DELETE FROM rin_commands WHERE client_id = 't-0209'")
    rewrite_history(data)
    assert verify(data).exit_code == 0
    out = verify(data, "--public-key", f"{key}.pub")
    assert out.exit_code == 1 and "signature does not hold" in out.output
