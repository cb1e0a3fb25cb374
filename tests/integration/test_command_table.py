"""Storing command records as rows of `rin_commands` (ledger/infrastructure/command_table.py),
on each store: written in the transaction of their events (a failed row insert stores nothing),
a client id saved twice fails that whole save, the head covers the rows, and
`uow.record_of` answers with `.client_id`, `.digest` and `.events` in both formats."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import Store
from markets import three_party_market
from store_access import app_of, as_release_2, stored

from ledger import Ledger
from ledger.application.command_input import parse_command
from ledger.application.handlers import digest
from ledger.application.store_failures import StoreError
from ledger.application.unit_of_work import UnitOfWork
from ledger.infrastructure.chain import GENESIS, fold
from ledger.infrastructure.command_table import stored_rows

MARKET = three_party_market(separated=40_000)  # 7 lines without ids: notifications 1-10


def sale(client_id: str, quantity: int = 10) -> dict[str, Any]:
    return {"type": "transfer", "id": client_id, "date": "2024-03-01", "from": "2001",
            "to": "3001", "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": quantity}}


def test_a_batch_stores_one_row_per_id_after_its_events(store: Store) -> None:
    with store.ledger() as ledger:
        assert all(r.status == "applied" for r in ledger.apply_many(
            [*MARKET, sale("s-1"), sale("s-2")]))
        rows = list(stored_rows(app_of(ledger).recorder))
        log = [n.event for n in ledger.log.events()]
        assert ledger.position() == 14  # 10, then two events per sale
        assert ledger.audit() == []
    assert [(r.notification_id, r.client_id, r.previous) for r in rows] == [
        (12, "s-1", 0), (14, "s-2", 12)]
    # each row names its sale's two events, the seller's TransferredOut then the buyer's In
    assert rows[0].events == [f"{e.originator_id.hex}:{e.originator_version}" for e in log[10:12]]
    assert rows[1].events == [f"{e.originator_id.hex}:{e.originator_version}" for e in log[12:14]]
    assert rows[0].digest == digest(parse_command(sale("s-1")))


def test_a_second_save_of_an_id_fails_whole_and_is_reported_duplicate(store: Store) -> None:
    """Two ledgers on one store: the second's batch does not look ids up (optimistic), so its
    save meets the stored row, stores nothing, and the line is applied again one at a time
    and found to be a duplicate."""
    with store.ledger() as first, store.ledger() as second:
        assert all(r.status == "applied" for r in first.apply_many(MARKET))
        assert second.position() == 10
        assert first.apply(sale("s-1")).status == "applied"
        results = list(second.apply_many([sale("s-1"), sale("s-2")]))
        assert [r.status for r in results] == ["duplicate", "applied"]
        assert second.position() == 14  # s-1 stored once
        assert [r.client_id for r in stored_rows(app_of(second).recorder)] == ["s-1", "s-2"]
        assert second.audit() == []


def test_a_failed_row_insert_stores_none_of_the_transaction(tmp_path: Path) -> None:
    """A trigger refuses the row (SQLite reports it as a constraint failing, as for an id
    another writer stored first): the events, the head row and the row are all rolled back,
    and the save is a store fault naming the trigger, not a conflict retried 30 times: at the
    writer's first save with rows it finds the trigger; added after that, the refusal itself
    names its message (ledger/infrastructure/store_refusals.py)."""
    with Ledger(tmp_path) as ledger:
        assert all(r.status == "applied" for r in ledger.apply_many(MARKET))
        db = sqlite3.connect(tmp_path / "events.sqlite")
        refuse = ("CREATE TRIGGER refuse BEFORE INSERT ON rin_commands BEGIN "
                  "SELECT RAISE(ABORT, 'disk full'); END")
        db.execute(refuse)
        db.commit()
        heads = db.execute("SELECT COUNT(*) FROM rin_heads").fetchone()[0]
        with pytest.raises(StoreError, match=r"triggers the ledger did not make \(refuse on "
                                             r"rin_commands\)"):
            ledger.apply(sale("s-1"))
        assert ledger.position() == 10
        assert db.execute("SELECT COUNT(*) FROM rin_heads").fetchone()[0] == heads
        assert db.execute("SELECT COUNT(*) FROM rin_commands").fetchone()[0] == 0
        db.execute("DROP TRIGGER refuse")
        db.commit()
        assert ledger.apply(sale("s-1")).status == "applied"
        position = ledger.position()
        db.execute(refuse)
        db.commit()
        with pytest.raises(StoreError, match="rin_commands refused the row of command 's-2': "
                                             "disk full; not another writer"):
            ledger.apply(sale("s-2"))
        assert ledger.position() == position
        assert db.execute("SELECT COUNT(*) FROM rin_commands").fetchone()[0] == 1
        db.execute("DROP TRIGGER refuse")
        db.commit()
        db.close()
        assert ledger.audit() == []


@pytest.mark.parametrize("release_2", [False, True], ids=["rows", "record-events"])
def test_record_of_names_the_command_and_its_events(tmp_path: Path, release_2: bool) -> None:
    with Ledger(tmp_path) as ledger:
        if release_2:
            as_release_2(ledger)
        assert all(r.status == "applied" for r in ledger.apply_many([*MARKET, sale("s-1")]))
        log = [n.event for n in ledger.log.events()]
        record = UnitOfWork(app_of(ledger)).record_of("s-1")
        assert UnitOfWork(app_of(ledger)).record_of("nope") is None
    assert record is not None
    assert (record.client_id, record.digest) == ("s-1", digest(parse_command(sale("s-1"))))
    assert record.events == [f"{e.originator_id.hex}:{e.originator_version}" for e in log[10:12]]


def test_the_head_covers_the_rows(store: Store) -> None:
    """`rin verify --head` folds each row after its notification as the head rows do: the
    last head row equals the head, and the head is not the fold of the events alone."""
    with store.ledger() as ledger:
        assert all(r.status == "applied" for r in ledger.apply_many([*MARKET, sale("s-1")]))
        head = ledger.head()
        last = list(ledger.stored_heads())[-1]
        events_only = GENESIS
        for note in stored(ledger):
            events_only = fold(events_only, note)
    assert (last.notification_id, last.hash) == (head["notification_id"], head["hash"])
    assert head["notification_id"] == 12 and head["hash"] != events_only
