"""A refused command stores nothing, even when a rule fails after a first event was triggered:
the unit of work discards what the command triggered on every aggregate it used
(ledger/application/unit_of_work.py), so neither this save nor a later one can store it, and
the next command decides on the aggregates as they were.

The failure is made on purpose: the buyer's side of a trade refuses (monkeypatched) after the
seller's `TransferredOut` was triggered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from markets import three_party_market

from ledger import Ledger
from ledger.domain.errors import RuleViolation
from ledger.domain.party import Party

POISON = "poison"


def trade(ptd: str, quantity: int) -> dict[str, Any]:
    return {"type": "transfer", "date": "2024-03-01", "from": "2001", "to": "3001", "ptd": ptd,
            "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": quantity}}


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    real = Party.receive

    def receive(self: Party, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("ptd") == POISON:
            raise RuleViolation("TEST-LATE", "§80.1428(a)", "refused after the seller's event",
                                "to")
        real(self, *args, **kwargs)

    monkeypatch.setattr(Party, "receive", receive)
    with Ledger(tmp_path) as book:
        # 2001 holds 40,000 − 10,000 = 30,000 K=1, of which 20,000 separated: 10,000 K=2 left
        results = list(book.apply_many(three_party_market(separated=20_000)))
        assert {r.status for r in results} == {"applied"}
        yield book


def k2_held(book: Ledger, party: str) -> int:
    return sum(r["gallon_rins"] for r in book.holdings(party) if r["k"] == 2)


def stored(book: Ledger, since: int) -> list[tuple[str, str]]:
    return [(type(logged.event).__name__, str(logged.event.originator_id))
            for logged in book.log.events(since)]


def test_a_refusal_after_a_trigger_stores_nothing_and_the_next_command_is_unaffected(
    ledger: Ledger,
) -> None:
    before = ledger.position()
    seller = ledger.party("2001").version
    result = ledger.apply(trade(POISON, 1_000))
    assert (result.status, result.rule) == ("rejected", "TEST-LATE")
    assert ledger.position() == before
    assert ledger.party("2001").version == seller and k2_held(ledger, "2001") == 10_000
    assert ledger.apply(trade("ok", 1_000)).status == "applied"
    # exactly the good trade: one event on each side; the seller's version follows on
    assert [topic for topic, _ in stored(ledger, before)] == ["TransferredOut", "TransferredIn"]
    assert ledger.party("2001").version == seller + 1
    assert (k2_held(ledger, "2001"), k2_held(ledger, "3001")) == (9_000, 10_000 + 1_000)


def test_in_a_batch_the_refused_line_leaves_no_event_for_the_save(ledger: Ledger) -> None:
    before = ledger.position()
    seller = ledger.party("2001").version
    # the poisoned line would take serials 1,001-3,000 (FIFO); the next line must get them
    results = list(ledger.apply_many([trade("a", 1_000), trade(POISON, 2_000), trade("b", 2_000)]))
    assert [(r.status, r.rule) for r in results] == [
        ("applied", None), ("rejected", "TEST-LATE"), ("applied", None)]
    assert [topic for topic, _ in stored(ledger, before)] == [
        "TransferredOut", "TransferredIn", "TransferredOut", "TransferredIn"]
    assert ledger.party("2001").version == seller + 2
    assert (k2_held(ledger, "2001"), k2_held(ledger, "3001")) == (7_000, 10_000 + 3_000)
    assert ledger.apply({"type": "transfer", "date": "2024-03-01", "from": "2001", "to": "3001",
                         "rins": {"d_code": 6, "vintage": 2024, "k": 2,
                                  "quantity": 7_001}}).rule == "RINS-NOT-HELD"
