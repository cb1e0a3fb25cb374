"""Issue 9, attacks 8 and 12 on the library's side: a store that cannot be opened, or that
fails on a save, raises `StoreError` (not a refusal, not a library traceback), naming the last
committed line; a failed save leaves the ledger's memory as the store is, so the next command
is judged on what was stored, not on what was lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Store
from eventsourcing.persistence import OperationalError
from store_access import app_of

from ledger import Ledger
from ledger.application.store_failures import StoreError
from ledger.domain.party import Party
from red_team.test_exactly_once import failing_after, sale, setup, stored_sales


def test_a_malformed_events_file_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "events.sqlite").write_bytes(b"not a database " * 400)
    with pytest.raises(StoreError, match="file is not a database") as failure:
        Ledger(tmp_path)
    assert failure.value.last_committed_line is None


def test_a_postgresql_server_down_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"Connection refused|connection failed"):
        Ledger(tmp_path, store="postgresql://rin:rin@127.0.0.1:1/rin",
               env={"POSTGRES_CONNECT_TIMEOUT": "2"})


def test_a_failed_save_stores_nothing_and_the_ledger_forgets_it(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    with store.ledger() as ledger:
        assert {r.status for r in ledger.apply_many(setup())} == {"applied"}
        recorder = app_of(ledger).recorder
        monkeypatch.setattr(recorder, "insert_events", failing_after(
            0, recorder.insert_events, OperationalError("database or disk is full (injected)")))
        with pytest.raises(StoreError, match="disk is full"):
            ledger.apply(sale(), 5)
        monkeypatch.undo()
        assert stored_sales(ledger) == 1  # the first sale only
        # the same line again: applied once, from what the store holds (990 left, not 980)
        assert ledger.apply(sale(), 5).status == "applied"
        producer = ledger.party("1001")
        stored = list(ledger.log.history(Party.create_id("1001")))
        assert producer.version == len(stored)
        assert ledger.holdings("1001")[0]["gallon_rins"] == 1_000 - 2 * 10
