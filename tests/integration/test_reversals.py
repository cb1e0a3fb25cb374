"""`reverse` through the Ledger on a real store (EMTS unretire and remedial trades, §80.1452(d),
(c)(13); design.md "reverse"): a reversed trade returns its exact ranges and K=1 fuel buyer →
seller, a reversed retirement holds its ranges again and stops counting for compliance; the
originals stay; each refusal names its rule and stores nothing; `trace`, holdings, quarterly
and compliance show the reversals, and `verify` (conservation, rebuild = incremental) holds.

The hand-worked market: 1001 generates 10,000 gallons of ethanol on 2 January 2024 (EV 1.0,
serials 1..10,000, D6, §80.1426(f)(1)) and transfers them all with their fuel to the blender
2001 on the 3rd; 2001 separates 5,000 on blending (§80.1429(b)(2)): the lowest serials are
picked first, so 1..5,000 become K=2 and 5,001..10,000 stay K=1 with 5,000 gallons.
3001, obligated for 4,000 RF gallon-RINs in 2024, trades with 2001.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from ledger import Ledger
from ledger.domain.trade_book import Status
from projections import Views
from tests import applying
from tests.applying import ok
from tests.markets import REGISTRATIONS
from tests.postings import postings

K1 = "1202410012000100001106{:08d}{:08d}"
K2 = "2202410012000100001106{:08d}{:08d}"
MARKET: list[dict[str, Any]] = [
    *REGISTRATIONS,
    {"type": "generate", "id": "g1", "date": "2024-01-02", "party": "1001",
     "facility": "20001", "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10_000},
    {"type": "transfer", "id": "t0", "date": "2024-01-03", "from": "1001", "to": "2001",
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 10_000}, "volume": 10_000},
    {"type": "separate", "id": "sep1", "date": "2024-01-04", "party": "2001",
     "reason": "blending", "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 5_000},
     "volume": 5_000},
    {"type": "report_obligation", "id": "o1", "party": "3001", "year": 2024,
     "rvo": {"CB": 0, "BBD": 0, "AB": 0, "RF": 4_000}},
]
SELL = {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "2001", "to": "3001",
        "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 1_000}, "volume": 1_000,
        "price": "0.90"}
BUY = {"type": "buy", "id": "B1", "date": "2024-01-05", "party": "3001", "from": "2001",
       "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 1_000}, "volume": 1_000,
       "match": "S1"}
K2_TRADE = {"type": "transfer", "id": "t2", "date": "2024-01-06", "from": "2001", "to": "3001",
            "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 4_000}}
RETIRE = {"type": "retire", "id": "r1", "date": "2025-02-01", "party": "3001",
          "reason": "compliance", "compliance_year": 2024,
          "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 4_000}}


def reverse(command: str, party: str, on: str, reason: Any, rid: str = "R1") -> dict[str, Any]:
    return {"type": "reverse", "id": rid, "date": on, "party": party, "command": command,
            "reason": reason}


@pytest.fixture
def ledger(store: Any) -> Any:
    """The market on each store (SQLite, and PostgreSQL when RIN_TEST_POSTGRES_URL is set)."""
    with store.ledger() as opened:
        ok(opened, *MARKET)
        yield opened


@pytest.fixture
def views(ledger: Ledger, store: Any) -> Views:
    """The read models in this test's own folder (a PostgreSQL ledger's default is the process's
    data folder, which other tests share)."""
    return Views(ledger, store.data / "views.sqlite")


def refused(ledger: Ledger, cmd: dict[str, Any], rule: str, field: str) -> str:
    result = applying.refused(ledger, cmd, rule)
    assert result.field == field, result
    return str(result.error)


def held(ledger: Ledger, party: str) -> dict[tuple[int, int, int], int]:
    return ledger.party(party).holdings.totals()


def clean(ledger: Ledger, views: Views) -> None:
    assert ledger.audit() == []
    assert views.verify() == []  # conservation, by date, and rebuild = incremental


def test_a_trade_reversed_returns_its_exact_ranges_and_fuel(ledger: Ledger, views: Views) -> None:
    ok(ledger, SELL, BUY)  # serials 5,001..6,000 K=1 with 1,000 gallons to 3001
    assert held(ledger, "3001") == {(6, 2024, 1): 1_000}
    ok(ledger, reverse("S1", "2001", "2024-01-10", "030"))
    assert held(ledger, "3001") == {}
    assert held(ledger, "2001") == {(6, 2024, 1): 5_000, (6, 2024, 2): 5_000}
    assert ledger.party("3001").fuel.balance(date(2024, 1, 10)) == 0
    assert ledger.party("2001").fuel.balance(date(2024, 1, 10)) == 5_000
    # the original stays: the sell is still completed, the trade still in the log
    assert postings(ledger, "2001")["S1"].status is Status.COMPLETED
    events = {type(e.event).__name__: e.event for e in ledger.log.events()}
    for name in ("TradeReversedOut", "TradeReversedIn"):
        assert (events[name].reverses, events[name].reason_code, events[name].rins[0].code
                ) == ("S1", 30, K1.format(5_001, 6_000))
    trace = views.trace(K1.format(5_001, 6_000))
    # oldest first; within a date in log order, which for one command is not meaningful
    assert sorted((r["date"], r["event"], r["party"], r["counterparty"]) for r in trace[-4:]
                  ) == [
        ("2024-01-05", "transferred_in", "3001", "2001"),
        ("2024-01-05", "transferred_out", "2001", "3001"),
        ("2024-01-10", "trade_reversed_in", "2001", "3001"),
        ("2024-01-10", "trade_reversed_out", "3001", "2001"),
    ], trace
    assert views.holdings(party="3001", as_of=date(2024, 1, 9)) == [
        {"party": "3001", "d_code": 6, "vintage": 2024, "k": 1, "gallon_rins": 1_000}]
    assert views.holdings(party="3001", as_of=date(2024, 1, 10)) == []
    q1 = {r["party"]: (r["assigned_rins"], r["volume"]) for r in views.quarterly(2024)
          if r["date"] == date(2024, 3, 31)}
    assert (q1["2001"], q1.get("3001", (0, 0))) == ((5_000, 5_000), (0, 0)), q1
    clean(ledger, views)


def test_a_retirement_reversed_counts_for_compliance_no_more(ledger: Ledger, views: Views) -> None:
    ok(ledger, K2_TRADE, RETIRE)

    def rf() -> tuple[int, str]:
        [row] = [r for r in views.compliance(2024, "3001") if r["category"] == "RF"]
        return row["applied"], row["status"]

    assert rf() == (4_000, "compliant")
    ok(ledger, reverse("r1", "3001", "2025-02-10", "compliance"))  # EMTS 80, its own code
    assert held(ledger, "3001") == {(6, 2024, 2): 4_000}
    assert rf()[0] == 0
    assert ledger.party("3001").facts.applied.get(2024, []) == []
    ok(ledger, {**RETIRE, "id": "r2", "date": "2025-02-11"})  # retired again: counts again
    assert rf() == (4_000, "compliant")
    [event] = [e.event for e in ledger.log.events() if type(e.event).__name__ == "Unretired"]
    assert (event.reverses, event.reason_code, event.compliance_year, event.rins[0].code) == (
        "r1", 80, 2024, K2.format(1, 4_000))
    assert [r["event"] for r in views.trace(K2.format(1, 4_000))][-3:] == [
        "retired", "unretired", "retired"]
    clean(ledger, views)


def test_a_fast_path_transfer_reversed_and_refused_once_the_buyer_moved_them(
        ledger: Ledger, views: Views) -> None:
    ok(ledger, K2_TRADE, {**K2_TRADE, "id": "t3", "date": "2024-01-07",
                          "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 1_000}})
    ok(ledger, {"type": "transfer", "id": "t4", "date": "2024-01-08", "from": "3001",
                "to": "1001", "rins": {"code": K2.format(4_001, 5_000)}})
    error = refused(ledger, reverse("t3", "2001", "2024-01-09", "080"), "RINS-NOT-HELD",
                    "command")
    assert K2.format(4_001, 5_000) in error
    ok(ledger, reverse("t2", "2001", "2024-01-09", "remedial_duplicate"))
    assert held(ledger, "3001") == {}
    assert held(ledger, "2001") == {(6, 2024, 1): 5_000, (6, 2024, 2): 4_000}
    clean(ledger, views)


def test_what_cannot_be_reversed_is_refused_naming_the_rule(ledger: Ledger, views: Views) -> None:
    ok(ledger, SELL, BUY, {**SELL, "id": "S2"}, K2_TRADE, RETIRE)  # S2 waits: nothing matches
    refused(ledger, reverse("nothing", "2001", "2024-01-10", "030"), "REVERSE-ORIGINAL",
            "command")
    refused(ledger, reverse("sep1", "2001", "2024-01-10", "030"), "REVERSE-ORIGINAL", "command")
    assert "sell" in refused(ledger, reverse("B1", "3001", "2024-01-10", "030"),
                             "REVERSE-ORIGINAL", "command")
    refused(ledger, reverse("S2", "2001", "2024-01-10", "030"), "REVERSE-ORIGINAL", "command")
    refused(ledger, reverse("S1", "3001", "2024-01-10", "030"), "REVERSE-PARTY", "party")
    refused(ledger, reverse("t2", "3001", "2024-01-10", "030"), "REVERSE-PARTY", "party")
    refused(ledger, reverse("r1", "2001", "2025-02-10", "80"), "REVERSE-PARTY", "party")
    refused(ledger, reverse("S1", "2001", "2024-01-04", "030"), "REVERSE-DATE", "date")
    refused(ledger, reverse("r1", "3001", "2025-01-31", "80"), "REVERSE-DATE", "date")
    refused(ledger, reverse("S1", "2001", "2024-01-10", "010"), "REVERSE-REASON", "reason")
    refused(ledger, reverse("r1", "3001", "2025-02-10", "spill"), "REVERSE-REASON", "reason")
    ok(ledger, reverse("S1", "2001", "2024-01-10", "030"))
    refused(ledger, reverse("S1", "2001", "2024-01-11", "030", rid="R2"), "REVERSE-ONCE",
            "command")
    refused(ledger, reverse("R1", "2001", "2024-01-11", "030", rid="R3"), "REVERSE-ORIGINAL",
            "command")  # a reversal is not reversed
    assert ledger.apply(reverse("S1", "2001", "2024-01-10", "030")).status == "duplicate"
    clean(ledger, views)


def test_a_reversal_of_a_locked_batch_is_refused_until_the_lock_is_lifted(
        ledger: Ledger, views: Views) -> None:
    """§80.1474(b)(1), docs/locks.md: no command uses a locked batch's RINs while the lock holds,
    nor dated within its life once lifted; a reversal moves them as much as a transfer does."""
    ok(ledger, K2_TRADE, RETIRE, SELL, BUY)
    batch = K1.format(1, 10_000)
    ok(ledger, {"type": "lock", "date": "2025-02-05", "batch": batch, "reason": "feedstock"})
    for line in (reverse("r1", "3001", "2025-02-10", "compliance"),  # an unretire
                 reverse("S1", "2001", "2025-02-10", "030")):  # a trade's sell
        assert "locked" in refused(ledger, line, "LOCK-HELD", "command")
    ok(ledger, {"type": "unlock", "date": "2025-02-20", "batch": batch, "reason": "cleared"})
    refused(ledger, reverse("r1", "3001", "2025-02-19", "compliance"), "LOCK-HELD", "command")
    ok(ledger, reverse("r1", "3001", "2025-02-20", "compliance"),
       reverse("S1", "2001", "2025-02-20", "030", rid="R2"))
    assert held(ledger, "3001") == {(6, 2024, 2): 4_000}
    clean(ledger, views)


def test_a_reversal_in_the_same_batch_as_its_original(ledger: Ledger, views: Views) -> None:
    results = list(ledger.apply_many([K2_TRADE, reverse("t2", "2001", "2024-01-06", "030")]))
    assert [r.status for r in results] == ["applied", "applied"], results
    assert held(ledger, "3001") == {}
    clean(ledger, views)


def test_views_rebuilt_equal_the_incremental_after_reversals(tmp_path: Path) -> None:
    with Ledger(tmp_path / "d") as ledger:
        ok(ledger, *MARKET, SELL, BUY, K2_TRADE, RETIRE)
        views = Views(ledger)
        views.project()
        ok(ledger, reverse("S1", "2001", "2024-01-10", "030"),
           reverse("r1", "3001", "2025-02-10", "80", rid="R2"))
        incremental = (views.holdings(), views.compliance(2024), views.trace(K2.format(1, 10)))
        views.rebuild()
        assert (views.holdings(), views.compliance(2024), views.trace(K2.format(1, 10))) == (
            incremental)
        clean(ledger, views)
