"""Session 9 red team (a19): the event store's own tables as the ledger made them.

`verify` compares each stored snapshot with the replay of its aggregate's events, reading the
row at a version in ascending order (`SnapshotCheck.reached`); the ledger loads an aggregate's
latest snapshot in descending order. With the table's primary key dropped (the table made
again without it, which plain `sqlite3` allows) and an index on (id, version), two rows at one
version are read in opposite orders: `verify` compares the genuine row and finds it equal, the
ledger loads the forged one. The attacker without a key recomputes the seal's digest, so the
forged snapshot is used: the party becomes a producer, and `verify` said all holds.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson

from ledger.application.ledger import Ledger
from ledger.domain.party import Party
from ledger.infrastructure.chain import SEAL_KEY
from ledger.infrastructure.snapshot_seal import body_digest
from red_team.attacker import files, verify
from red_team.test_snapshot_tamper import MINT, make_producer

UNKEYED = ("CREATE TABLE {table} (originator_id TEXT, originator_version INTEGER, topic TEXT, "
           "state BLOB)")


def remake_without_key(db: sqlite3.Connection, table: str) -> None:
    """`table` made again with the same columns and rows, without its primary key."""
    db.execute(f"ALTER TABLE {table} RENAME TO old_{table}")
    db.execute(UNKEYED.format(table=table))
    db.execute(f"INSERT INTO {table} SELECT * FROM old_{table}")
    db.execute(f"DROP TABLE old_{table}")


def forge_duplicate_snapshot(data: Path, party: str) -> int:
    """A second row at the party's latest snapshot's version, made a producer and resealed
    (the digest recomputed, as anyone can without a key), stored after the genuine one, and an
    index that the ledger's descending read walks backwards. Returns the version."""
    oid = Party.create_id(party).hex
    with files(data) as db:
        version, topic, raw = db.execute(
            "SELECT originator_version, topic, state FROM stored_snapshots WHERE "
            "originator_id = ? ORDER BY originator_version DESC LIMIT 1", (oid,)).fetchone()
        state = orjson.loads(raw)
        make_producer(state["state"])
        body = orjson.dumps({k: v for k, v in state.items() if k != SEAL_KEY})
        state[SEAL_KEY]["digest"] = body_digest(body)
        remake_without_key(db, "stored_snapshots")
        db.execute("INSERT INTO stored_snapshots VALUES (?, ?, ?, ?)",
                   (oid, version, topic, orjson.dumps(state)))
        db.execute("CREATE INDEX by_version ON stored_snapshots (originator_id, "
                   "originator_version)")
    return int(version)


def test_a_forged_snapshot_row_beside_the_genuine_one_is_named(data: Path) -> None:
    forge_duplicate_snapshot(data, "3001")
    with Ledger(data) as ledger:  # what is at stake: the ledger loads the forged row
        assert "producer" in ledger.party("3001").roles
    out = verify(data)
    assert out.exit_code == 1, out.output
    assert "stored_snapshots: its schema is not the ledger's" in out.output, out.output
    with Ledger(data) as ledger:
        assert ledger.apply(MINT).status == "applied"  # the forged role decides a command


def test_a_view_in_place_of_the_snapshots_table_is_named(data: Path) -> None:
    """A view reads like the table (and INSTEAD OF triggers are already named): its rows can
    be anything a query computes."""
    with files(data) as db:
        db.execute("ALTER TABLE stored_snapshots RENAME TO hidden")
        db.execute("CREATE VIEW stored_snapshots AS SELECT * FROM hidden")
    out = verify(data)
    assert out.exit_code == 1, out.output
    assert "stored_snapshots: a view, not the ledger's table" in out.output, out.output


def test_a_heads_table_without_its_key_is_named(data: Path) -> None:
    """Without its key a second head row at one notification is passed over by the walk
    (`heads_before` names only rows past the last notification seen)."""
    with files(data) as db:
        at = db.execute("SELECT notification_id FROM rin_heads ORDER BY notification_id "
                        "LIMIT 1").fetchone()[0]  # not the last: the walk goes on past it
        db.execute("ALTER TABLE rin_heads RENAME TO old_heads")
        db.execute("CREATE TABLE rin_heads (notification_id INTEGER, hash TEXT NOT NULL, "
                   "key TEXT, signature TEXT)")
        db.execute("INSERT INTO rin_heads SELECT * FROM old_heads")
        db.execute("DROP TABLE old_heads")
        db.execute("INSERT INTO rin_heads VALUES (?, ?, NULL, NULL)", (at, "0" * 64))
    out = verify(data)
    assert out.exit_code == 1, out.output
    assert "rin_heads: its schema is not the ledger's" in out.output, out.output


def test_a_head_row_below_every_notification_is_named(data: Path) -> None:
    """The walk reads head rows from notification 0 up (`stored_heads`): one inserted at a
    negative id was read by nothing and `verify` said all holds."""
    with files(data) as db:
        db.execute("INSERT INTO rin_heads VALUES (-1, ?, NULL, NULL)", ("0" * 64,))
    out = verify(data)
    assert out.exit_code == 1, out.output
    assert "rin_heads rows at notification -1" in out.output, out.output
