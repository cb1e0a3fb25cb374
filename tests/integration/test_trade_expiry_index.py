"""`expire_trades` reads the pending postings, not every posting ever (§80.1452; design.md
"expire_trades"), and the window setting reaches a library caller's `Ledger(env=…)`.

The market: 1001 generates 10,000 gallons of ethanol on 2 January 2024 and moves 5,000 with
their fuel to 2001; both post sells to the obligated party 3001 on Friday 5 January 2024.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from ledger import Ledger
from ledger.application.unit_of_work import UnitOfWork
from ledger.domain.party import Party
from ledger.domain.trade_book import Status
from ledger.infrastructure.pending_postings import TOPICS
from tests.applying import ok
from tests.markets import REGISTRATIONS
from tests.postings import status
from tests.store_access import app_of

MARKET: list[dict[str, Any]] = [
    *REGISTRATIONS,
    {"type": "generate", "id": "g1", "date": "2024-01-02", "party": "1001",
     "facility": "20001", "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10_000},
    {"type": "transfer", "id": "t0", "date": "2024-01-02", "from": "1001", "to": "2001",
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 5_000}, "volume": 5_000},
]


def sell(pid: str, seller: str, quantity: int = 10) -> dict[str, Any]:
    return {"type": "sell", "id": pid, "date": "2024-01-05", "party": seller, "to": "3001",
            "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": quantity},
            "volume": quantity}


def cancel(pid: str, seller: str) -> dict[str, Any]:
    return {"type": "cancel_trade", "id": f"c-{pid}", "date": "2024-01-05", "party": seller,
            "trade": pid}


def test_expiry_loads_only_the_parties_with_a_stale_pending_posting(tmp_path: Path) -> None:
    """1001 posted and cancelled 20 sells, 2001 has one pending: on 23 January 2024 (the 11th
    business day after the 5th, 15 January being a holiday) only 2001 has anything to expire."""
    with Ledger(tmp_path / "d") as ledger:
        ok(ledger, *MARKET)
        for n in range(20):
            ok(ledger, sell(f"S{n}", "1001"), cancel(f"S{n}", "1001"))
        ok(ledger, sell("P1", "2001"))
        app = app_of(ledger)
        assert sorted(app.pending_postings.up_to(ledger.position()).pending) == ["P1"]
        parties = UnitOfWork(app).posting_parties(date(2024, 1, 23))
        assert [p.party_id for p in parties] == ["2001"]
        assert UnitOfWork(app).posting_parties(date(2024, 1, 22)) == []  # 10 days: not stale
        ok(ledger, {"type": "expire_trades", "id": "E1", "date": "2024-01-23"})
        assert status(ledger, "2001", "P1") is Status.EXPIRED
        assert app.pending_postings.up_to(ledger.position()).pending == {}
        assert ledger.audit() == []


def spy_on_reads(ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Where each read of the index's topics starts, from now on."""
    recorder = app_of(ledger).recorder
    starts: list[int] = []
    select = recorder.select_notifications

    def spy(start: Any, limit: int, *args: Any, **kwargs: Any) -> Any:
        if tuple(kwargs.get("topics") or ()) == TOPICS:
            starts.append(start)
        return select(start, limit, *args, **kwargs)

    monkeypatch.setattr(recorder, "select_notifications", spy)
    return starts


def test_the_index_reads_nothing_back_of_the_ledgers_own_saves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once read up to now, the index notes each of this ledger's saves from its events: an
    expiry after them reads no posting back from the store, and still expires both."""
    with Ledger(tmp_path / "d") as ledger:
        ok(ledger, *MARKET, sell("S1", "1001"),
           {"type": "expire_trades", "id": "E1", "date": "2024-01-08"})
        starts = spy_on_reads(ledger, monkeypatch)
        ok(ledger, sell("S2", "2001"), {"type": "expire_trades", "id": "E2",
                                        "date": "2024-01-23"})
        assert starts == []
        assert {p: status(ledger, p, s)
                for p, s in (("1001", "S1"), ("2001", "S2"))} == {
            "1001": Status.EXPIRED, "2001": Status.EXPIRED}
        assert app_of(ledger).pending_postings.up_to(ledger.position()).pending == {}


def test_the_index_reads_what_another_writer_stored_since_it_last_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A posting another writer stored is read from the store (from where the index had read
    to, no earlier), even after a save of this ledger's own that came after it, and expires."""
    with Ledger(tmp_path / "d") as ledger:
        ok(ledger, *MARKET, sell("S1", "1001"),
           {"type": "expire_trades", "id": "E1", "date": "2024-01-08"})
        read_to = ledger.position()
        with Ledger(tmp_path / "d") as other:
            ok(other, sell("S2", "2001"))
        ok(ledger, sell("S3", "2001"))  # after S2: its events alone are not all that is new
        starts = spy_on_reads(ledger, monkeypatch)
        ok(ledger, {"type": "expire_trades", "id": "E2", "date": "2024-01-23"})
        assert starts and min(starts) >= read_to, (starts, read_to)
        assert {s: status(ledger, p, s) for p, s in (("1001", "S1"), ("2001", "S2"),
                                                     ("2001", "S3"))} == {
            "S1": Status.EXPIRED, "S2": Status.EXPIRED, "S3": Status.EXPIRED}
        starts.clear()
        ok(ledger, sell("S4", "2001"))
        assert list(app_of(ledger).pending_postings.up_to(ledger.position()).pending) == ["S4"]
        assert starts == []


def test_a_closing_in_the_index_removes_the_posting(tmp_path: Path) -> None:
    with Ledger(tmp_path / "d") as ledger:
        ok(ledger, *MARKET, sell("S1", "1001"), sell("S2", "2001"), cancel("S1", "1001"))
        index = app_of(ledger).pending_postings.up_to(ledger.position())
        assert list(index.pending) == ["S2"]
        assert index.pending["S2"] == (Party.create_id("2001"), date(2024, 1, 5))


def test_the_window_setting_in_a_library_callers_env(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`Ledger(env={"RIN_TRADE_WINDOW": "2"})`: a posting of Friday 5 January is pending on
    Tuesday the 9th (2 business days) and expires on the 10th; the process environment's value
    gives way to the caller's."""
    monkeypatch.setenv("RIN_TRADE_WINDOW", "30")
    with Ledger(tmp_path / "d", env={"RIN_TRADE_WINDOW": "2"}) as ledger:
        ok(ledger, *MARKET, sell("S1", "1001"),
           {"type": "expire_trades", "id": "E1", "date": "2024-01-09"})
        assert status(ledger, "1001", "S1") is Status.PENDING
        ok(ledger, {"type": "expire_trades", "id": "E2", "date": "2024-01-10"})
        assert status(ledger, "1001", "S1") is Status.EXPIRED


@pytest.mark.parametrize("window", ["two", "-1", ""])
def test_a_bad_window_in_env_is_refused_naming_it(tmp_path: Path, window: str) -> None:
    with pytest.raises(ValueError, match="RIN_TRADE_WINDOW"):
        Ledger(tmp_path / "d", env={"RIN_TRADE_WINDOW": window})
