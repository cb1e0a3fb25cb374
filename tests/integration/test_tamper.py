"""Tamper evidence: edit the SQLite event store behind the ledger's back and see it named.

Each test changes, deletes, swaps or inserts stored rows with plain `sqlite3`, then checks that
`verify_chain` names the first broken event (party, version, notification id), and that an
auditor's exported head proves history before it unchanged.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.persistence import IntegrityError
from markets import three_party_market
from store_access import app_of

from ledger.application.command_input import parse_command
from ledger.application.handlers import UnitOfWork, handle
from ledger.application.ledger import Ledger
from ledger.domain.party import Party
from ledger.infrastructure.chain import CHAIN_KEY, link, verify_chain

TABLE = "stored_events"
# One ethanol batch of 100,000 standardized gallons × EV 1.0 = 100,000 gallon-RINs (§80.1415),
# 40,000 of them sold with 16,000 gallons (40,000 / 16,000 = 2.5 per gallon), separated on
# blending, and 10,000 separated RINs sold on.
COMMANDS: list[dict[str, Any]] = three_party_market(separated=40_000)
LATER = {"type": "transfer", "date": "2024-03-01", "from": "2001", "to": "3001",
         "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 5000}}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    with Ledger(tmp_path) as ledger:
        for command in COMMANDS:
            assert ledger.apply(command).status == "applied"
        assert verify_chain(app_of(ledger)) == []
    return tmp_path


@pytest.fixture
def db(data: Path) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(data / "events.sqlite")
    yield connection
    connection.commit()
    connection.close()


def problems(data: Path, head: dict[str, Any] | None = None) -> list[str]:
    with Ledger(data) as ledger:
        return verify_chain(app_of(ledger), head)


def row(db: sqlite3.Connection, party: str, version: int) -> tuple[int, bytes]:
    """(notification id, state) of one party's stored event."""
    found = db.execute(
        f"SELECT rowid, state FROM {TABLE} WHERE originator_id=? AND originator_version=?",
        (Party.create_id(party).hex, version),
    ).fetchone()
    assert found is not None, (party, version)
    return found[0], found[1]


def set_state(db: sqlite3.Connection, rowid: int, state: bytes) -> None:
    db.execute(f"UPDATE {TABLE} SET state=? WHERE rowid=?", (state, rowid))
    db.commit()


def test_untouched_history_verifies_and_events_decode_without_chain(data: Path) -> None:
    assert problems(data) == []
    with Ledger(data) as ledger:
        # 100,000 generated − 40,000 sold = 60,000 K=1 left with the producer
        assert ledger.holdings("1001") == [
            {"party": "1001", "d_code": 6, "vintage": 2024, "k": 1, "gallon_rins": 60_000}
        ]
        events = ledger.log.history(Party.create_id("1001"))
        assert all(CHAIN_KEY not in vars(event) for event in events)


def test_stored_chain_is_sha256_of_previous_chain_and_canonical_event(
    db: sqlite3.Connection,
) -> None:
    _, first = row(db, "1001", 1)
    _, second = row(db, "1001", 2)
    state = json.loads(second)
    body = {"originator_id": str(Party.create_id("1001")), "originator_version": 2,
            "topic": "rin_ledger:Party.Generated",
            "state": {k: v for k, v in state.items() if k != CHAIN_KEY}}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    previous = json.loads(first)[CHAIN_KEY]
    expected = hashlib.sha256(previous.encode() + canonical.encode()).hexdigest()
    assert state[CHAIN_KEY] == expected


def test_changed_gallon_count_names_the_event(data: Path, db: sqlite3.Connection) -> None:
    rowid, state = row(db, "1001", 3)  # Assigned: serials 1-100,000 with 100,000 gallons
    assert b"0000000100100000" in state
    set_state(db, rowid, state.replace(b"0000000100100000", b"0000000100900000"))
    assert problems(data) == [
        f"party 1001 version 3 (notification {rowid}): "
        "chain mismatch: stored bytes changed, reordered or inserted"
    ]


def test_deleted_row_names_the_gap(data: Path, db: sqlite3.Connection) -> None:
    deleted, _ = row(db, "2001", 2)
    following, _ = row(db, "2001", 3)
    db.execute(f"DELETE FROM {TABLE} WHERE rowid=?", (deleted,))
    db.commit()
    assert problems(data) == [
        f"party 2001 version 3 (notification {following}): version 2 missing: deleted"
    ]


def test_swapped_rows_name_the_first_of_them(data: Path, db: sqlite3.Connection) -> None:
    first, first_state = row(db, "2001", 3)
    second, second_state = row(db, "2001", 4)
    set_state(db, first, second_state)
    set_state(db, second, first_state)
    found = problems(data)
    assert found[0].startswith(f"party 2001 version 3 (notification {first}): chain mismatch")
    assert found[1].startswith(f"party 2001 version 4 (notification {second}): chain mismatch")


def test_forged_row_is_named(data: Path, db: sqlite3.Connection) -> None:
    _, state = row(db, "3001", 2)  # 10,000 K=2 RINs in: forge a second, identical receipt
    db.execute(f"INSERT INTO {TABLE} VALUES (?,?,?,?)",
               (Party.create_id("3001").hex, 3, "rin_ledger:Party.TransferredIn", state))
    db.commit()
    forged = db.execute(f"SELECT MAX(rowid) FROM {TABLE}").fetchone()[0]
    assert problems(data) == [
        f"party 3001 version 3 (notification {forged}): "
        "chain mismatch: stored bytes changed, reordered or inserted"
    ]


def test_forged_row_without_chain_is_named(data: Path, db: sqlite3.Connection) -> None:
    _, state = row(db, "3001", 2)
    unchained = {k: v for k, v in json.loads(state).items() if k != CHAIN_KEY}
    db.execute(f"INSERT INTO {TABLE} VALUES (?,?,?,?)",
               (Party.create_id("3001").hex, 3, "rin_ledger:Party.TransferredIn",
                json.dumps(unchained).encode()))
    db.commit()
    forged = db.execute(f"SELECT MAX(rowid) FROM {TABLE}").fetchone()[0]
    assert problems(data) == [
        f"party 3001 version 3 (notification {forged}): no chain: inserted or rewritten"
    ]


def rechain(db: sqlite3.Connection, party: str, version: int, state: dict[str, Any]) -> None:
    """A forger who knows the scheme: rewrite one event and re-link the rest of its stream."""
    oid = Party.create_id(party)
    rows = db.execute(
        f"SELECT rowid, originator_version, topic, state FROM {TABLE} WHERE originator_id=? "
        "ORDER BY originator_version", (oid.hex,)).fetchall()
    previous = ""
    for rowid, v, topic, stored in rows:
        current = state if v == version else json.loads(stored)
        current[CHAIN_KEY] = link(previous, oid, v, topic, current)
        previous = current[CHAIN_KEY]
        set_state(db, rowid, json.dumps(current).encode())


def test_exported_head_proves_history_before_it_unchanged(
    data: Path, db: sqlite3.Connection
) -> None:
    with Ledger(data) as ledger:
        head = ledger.head()
        assert ledger.apply(LATER).status == "applied"
        # the head up to the exported id is recomputed equal after more history is appended
        assert ledger.head(head["notification_id"]) == head
        assert ledger.head()["notification_id"] > head["notification_id"]
        assert verify_chain(app_of(ledger), head) == []
    # a forger rewrites the producer's Assigned event to 900,000 RINs and re-links its chain
    _, state = row(db, "1001", 3)
    forged = json.loads(state.replace(b"0000000100100000", b"0000000100900000"))
    rechain(db, "1001", 3, forged)
    with Ledger(data) as ledger:
        found = verify_chain(app_of(ledger), head)
        recomputed = ledger.head(head["notification_id"])
    assert recomputed["hash"] != head["hash"]
    assert found == [
        f"head at notification {head['notification_id']:,} was {head['hash']}, recomputed "
        f"{recomputed['hash']}: history up to that point changed"
    ]


def test_tampering_after_the_head_leaves_it_standing(data: Path, db: sqlite3.Connection) -> None:
    with Ledger(data) as ledger:
        head = ledger.head()
        assert ledger.apply(LATER).status == "applied"
    # the later receipt: serials 10,001-15,000 (FIFO after 1-10,000 went first) → 10,001-19,000
    last, state = row(db, "3001", 3)
    assert b"0001000100015000" in state
    set_state(db, last, state.replace(b"0001000100015000", b"0001000100019000"))
    with Ledger(data) as ledger:
        assert ledger.head(head["notification_id"]) == head
        found = verify_chain(app_of(ledger), head)
    assert found == [
        f"party 3001 version 3 (notification {last}): "
        "chain mismatch: stored bytes changed, reordered or inserted"
    ]


def test_snapshots_are_not_chained(tmp_path: Path) -> None:
    """Party snapshots every 200 events (application.py) must not disturb the chain."""
    with Ledger(tmp_path) as ledger:
        for command in COMMANDS[:4]:
            ledger.apply(command)
        moves = [{"type": "transfer_fuel", "date": "2024-02-01", "from": "1001", "to": "2001",
                  "volume": "1"} for _ in range(205)]
        assert all(r.status == "applied" for r in ledger.apply_many(moves, batch_size=50))
        assert app_of(ledger).snapshots is not None
        assert list(app_of(ledger).snapshots.get(Party.create_id("1001")))  # snapshot at 200
        assert verify_chain(app_of(ledger)) == []


def test_failed_concurrent_save_does_not_poison_the_chain(data: Path) -> None:
    """A save that lost an optimistic-concurrency race forgets the chains it computed."""
    move = {"type": "transfer_fuel", "date": "2024-02-05", "from": "1001", "to": "2001",
            "volume": "1"}
    with Ledger(data) as slow, Ledger(data) as fast:
        uow = UnitOfWork(app_of(slow))
        handle(uow, parse_command(move))
        assert fast.apply(move).status == "applied"  # takes the same versions first
        with pytest.raises(IntegrityError):
            uow.save()
        assert slow.apply(move).status == "applied"
        assert verify_chain(app_of(slow)) == []
