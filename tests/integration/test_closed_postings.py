"""Postings that ended, read from the log (§80.1452; issue 15): a Party keeps only its pending
postings, so a `match`, `cancel_trade`, `deny_trade` or `reverse` naming a completed, denied,
cancelled or expired posting finds it by its command record and its poster's `TradeClosed`, and
is answered exactly as when every posting stayed in the party's state: the status word, the
"no posting" refusals, the reversal's exact ranges and K=1 fuel.

The hand-worked market of tests/integration/test_trades.py: 1001 holds serials 1..10,000 (K=1 D6
2024) and 10,000 gallons; every sell below picks first in, first out among what is free.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from ledger import Ledger
from tests.integration.test_trades import CODE, REGISTER, buy, ok, sell

LATER = "2024-01-08"


def cancel(trade: str, cid: str, party: str = "1001", on: str = LATER) -> dict[str, Any]:
    return {"type": "cancel_trade", "id": cid, "date": on, "party": party, "trade": trade}


def deny(trade: str, did: str, party: str = "2001", on: str = LATER) -> dict[str, Any]:
    return {"type": "deny_trade", "id": did, "date": on, "party": party, "trade": trade}


@pytest.fixture
def ledger(store: Any) -> Any:
    """S1 completed with B1 (serials 1..1,000); S2 (1,001..2,000) denied and S3 (2,001..3,000)
    cancelled on 8 January; S4 (3,001..4,000) expired on 1 February."""
    with store.ledger() as opened:
        ok(opened, *REGISTER, sell("S1", 1_000), buy("B1", 1_000, match="S1"),
           sell("S2", 1_000), sell("S3", 1_000), sell("S4", 1_000),
           deny("S2", "D1"), cancel("S3", "C1"),
           {"type": "expire_trades", "id": "E1", "date": "2024-02-01"})
        yield opened


def refusal(ledger: Ledger, cmd: dict[str, Any], rule: str) -> str:
    before = ledger.position()
    result = ledger.apply(cmd)
    assert (result.status, result.rule) == ("rejected", rule), result
    assert ledger.position() == before
    return result.error or ""


@pytest.mark.parametrize("cmd, rule, error", [
    (buy("B2", 1_000, match="S1"), "TRADE-MATCH-PENDING", "sell S1 is completed, not pending"),
    (buy("B2", 1_000, match="S2"), "TRADE-MATCH-PENDING", "sell S2 is denied, not pending"),
    (buy("B2", 1_000, match="S4"), "TRADE-MATCH-PENDING", "sell S4 is expired, not pending"),
    (buy("B2", 1_000, match="g1"), "TRADE-MATCH-PENDING",
     "g1 is not a sell posted by party 1001 to party 2001"),
    (buy("B2", 1_000, match="B1"), "TRADE-MATCH-PENDING",
     "B1 is not a sell posted by party 1001 to party 2001"),
    (cancel("S1", "C2"), "TRADE-CANCEL", "sell S1 is completed, not pending"),
    (cancel("S3", "C2"), "TRADE-CANCEL", "sell S3 is cancelled, not pending"),
    (cancel("B1", "C2", party="2001"), "TRADE-CANCEL", "buy B1 is completed, not pending"),
    (cancel("B1", "C2"), "TRADE-CANCEL", "party 1001 has no posting B1"),
    (cancel("nothing", "C2"), "TRADE-CANCEL", "party 1001 has no posting nothing"),
    (deny("S1", "D2"), "TRADE-DENY", "sell S1 is completed, not pending"),
    (deny("S2", "D2"), "TRADE-DENY", "sell S2 is denied, not pending"),
    (deny("S4", "D2"), "TRADE-DENY", "sell S4 is expired, not pending"),
    (deny("S1", "D2", party="3001"), "TRADE-DENY", "no posting S1 names party 3001 as partner"),
    (deny("B1", "D2", party="2001"), "TRADE-DENY", "no posting B1 names party 2001 as partner"),
    (deny("g1", "D2"), "TRADE-DENY", "no posting g1 names party 2001 as partner"),
    ({"type": "reverse", "id": "R1", "date": LATER, "party": "1001", "command": "S3",
      "reason": "030"}, "REVERSE-ORIGINAL",
     "sell S3 is cancelled, not completed: nothing moved to reverse"),
])
def test_a_posting_that_ended_is_named_by_its_status(ledger: Ledger, cmd: dict[str, Any],
                                                       rule: str, error: str) -> None:
    assert refusal(ledger, cmd, rule).endswith(error)
    assert ledger.party("1001").trades.open == {}  # nothing pending is kept for them


def test_a_completed_sell_is_reversed_with_its_exact_ranges_and_fuel(ledger: Ledger) -> None:
    ok(ledger, {"type": "reverse", "id": "R1", "date": LATER, "party": "1001", "command": "S1",
                "reason": "030"})
    assert ledger.holdings("2001") == []
    assert ledger.party("1001").holdings.totals() == {(6, 2024, 1): 10_000}
    assert ledger.party("2001").fuel.balance(date.fromisoformat(LATER)) == 0
    refusal(ledger, {"type": "reverse", "id": "R2", "date": LATER, "party": "1001",
                     "command": "S1", "reason": "030"}, "REVERSE-ONCE")
    assert ledger.audit() == []


def test_an_end_many_events_after_its_posting_is_found(ledger: Ledger) -> None:
    """S5 is cancelled after 80 more events at its poster: more than one page of the log."""
    ok(ledger, sell("S5", 1_000, on="2024-02-02"))
    for n in range(80):
        serial = 5_001 + n  # free: S5 holds 1,001..2,000 again (S2's were released)
        ok(ledger, {"type": "transfer", "date": "2024-02-02", "from": "1001", "to": "3001",
                    "rins": {"code": CODE.format(serial, serial)}, "volume": 1})
    ok(ledger, cancel("S5", "C5", on="2024-02-05"))
    assert refusal(ledger, cancel("S5", "C6", on="2024-02-05"), "TRADE-CANCEL").endswith(
        "sell S5 is cancelled, not pending")


def test_an_end_in_the_same_transaction_is_found(ledger: Ledger) -> None:
    """A batch is one transaction: S6's cancellation is not stored yet when C8 names S6."""
    results = list(ledger.apply_many([sell("S6", 1_000, on="2024-02-02"),
                                      cancel("S6", "C7", on="2024-02-02"),
                                      cancel("S6", "C8", on="2024-02-02"),
                                      deny("S6", "D8", on="2024-02-02")]))
    assert [r.status for r in results] == ["applied", "applied", "rejected", "rejected"]
    assert [r.error for r in results[2:]] == ["§80.1452(d): sell S6 is cancelled, not pending"] * 2
