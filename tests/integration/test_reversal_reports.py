"""Reversals (EMTS remedial trades and unretire, §80.1452(d)) and locks (§80.1474(b)(1)) in the
regulator's reports: the transaction report (§80.1451(c)(1)) shows a `reverse` row, the activity
report (§80.1451(c)(2)) moves a reversed trade's RINs back as purchased / sold and an unretired
retirement's as `reinstated`, the attest (§80.1464) counts them in those populations and its
roll-forward agrees, and EPA's tables treat an unretired retirement as not retired and count a
locked batch's RINs as locked.

The market is test_reversals.py's, worked by hand: 1001 generates 10,000 D6 2024 gallon-RINs
(serials 1..10,000) on 2 January 2024 and transfers them with 10,000 gallons to 2001 on the 3rd
(`t0`); 2001 separates 5,000 on the 4th (serials 1..5,000 become K=2, 5,000 gallons used); on the
5th 2001 sells 1,000 K=1 (5,001..6,000, with 1,000 gallons) to 3001 (S1/B1) and on the 6th
transfers 4,000 K=2 (1..4,000) to it (`t2`).
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from test_reversals import BUY, K1, K2, K2_TRADE, MARKET, RETIRE, SELL, clean, ok, reverse

from ledger import Ledger
from projections import Views

TRADE_REVERSED = reverse("S1", "2001", "2024-04-10", "030")  # in Q2: 1,000 K=1 back to 2001
UNRETIRE = reverse("r1", "3001", "2025-04-02", "compliance", rid="R2")  # RETIRE is 2025-02-01


@pytest.fixture
def ledger(store: Any) -> Any:
    with store.ledger() as opened:
        ok(opened, *MARKET, SELL, BUY, K2_TRADE)
        yield opened


def amounts(rows: list[dict[str, Any]], *columns: str) -> dict[tuple[int, str], tuple[Any, ...]]:
    return {(r["quarter"], r["assignment"]): tuple(r[c] for c in columns) for r in rows}


CURRENT = ("current_start", "current_purchased", "current_sold", "current_separated",
           "current_end", "fuel_end")


def test_a_reversed_trade_is_a_reverse_transaction_and_moves_rins_back(ledger: Ledger) -> None:
    ok(ledger, TRADE_REVERSED)
    views = Views(ledger)
    back = {"type": "reverse", "date": "2024-04-10", "rin": K1.format(5_001, 6_000), "k": 1,
            "gallon_rins": 1_000, "price": None, "gallon_price": None, "reason": "030",
            "broker": None, "id": "R1"}
    assert views.transactions("2001", 2024, 2) == [{"party": "2001", "partner": "3001", **back}]
    assert views.transactions("3001", 2024, 2) == [{"party": "3001", "partner": "2001", **back}]
    # 2001, Q1: purchased 10,000 (t0), sold 1,000 (S1), separated 5,000: end 10,000 − 1,000 −
    # 5,000 = 4,000 K=1 and 4,000 gallons (10,000 − 5,000 used − 1,000 sold); K=2: + 5,000
    # separated − 4,000 sold (t2) = 1,000. Q2: the remedial buy back: 4,000 + 1,000 = 5,000 K=1
    # and 5,000 gallons; K=2 unchanged.
    assert amounts(views.activity("2001", 2024), *CURRENT) == {
        (1, "assigned"): (0, 10_000, 1_000, 5_000, 4_000, 4_000),
        (1, "separated"): (0, 0, 4_000, 5_000, 1_000, 4_000),
        (2, "assigned"): (4_000, 1_000, 0, 0, 5_000, 5_000),
        (2, "separated"): (1_000, 0, 0, 0, 1_000, 5_000),
        (3, "assigned"): (5_000, 0, 0, 0, 5_000, 5_000),
        (3, "separated"): (1_000, 0, 0, 0, 1_000, 5_000),
        (4, "assigned"): (5_000, 0, 0, 0, 5_000, 5_000),
        (4, "separated"): (1_000, 0, 0, 0, 1_000, 5_000),
    }
    # 3001, Q1: bought 1,000 K=1 with 1,000 gallons and 4,000 K=2; Q2: the remedial sell back
    q2 = amounts(views.activity("3001", 2024, 2), *CURRENT)
    assert q2 == {(2, "assigned"): (1_000, 0, 1_000, 0, 0, 0),
                  (2, "separated"): (4_000, 0, 0, 0, 4_000, 0)}
    # attest: purchased 2001 = t0 and the remedial buy R1; sold = S1 (its own posting) and t2
    rows = {r["type"]: r for r in views.attest("2001", 2024, seed=7)}
    assert (rows["purchased"]["population"], sorted(rows["purchased"]["sampled"])) == (
        2, ["R1", "t0"])
    assert (rows["sold"]["population"], sorted(rows["sold"]["sampled"])) == (2, ["S1", "t2"])
    assert rows["reinstated"]["population"] == 0
    assert all(r["matches"] for r in views.attest("2001", 2024, seed=7)
               if r["type"] == "rollforward")
    assert all(r["matches"] for r in views.attest("3001", 2024, seed=7)
               if r["type"] == "rollforward")
    clean(ledger, views)  # verify: the activity identity holds for every party and quarter


def test_a_reversed_trade_exports_as_a_remedial_sell_and_buy(ledger: Ledger) -> None:
    """EMTS's remedial trade: 3001 sells the 1,000 K=1 RINs (and 1,000 gallons) back, 2001
    buys them back, each with code 030 and the reversal's id as the matching transaction."""
    ok(ledger, TRADE_REVERSED)
    views = Views(ledger)
    q2 = (date(2024, 4, 1), date(2024, 6, 30))
    common = {"RINQuantity": 1_000, "FuelCode": 6, "RINYear": 2024, "QAPServiceTypeCode": "30",
              "sources": [["1001", "20001", "00001"]], "AssignmentCode": 1,
              "BatchVolume": "1000", "RINPriceAmount": None, "TransferDate": "2024-04-10",
              "PTDNumber": None, "MatchingTransactionIdentifier": "R1"}
    assert views.emts_submissions("2001", *q2) == [
        {"block": "BuyTransactionDetail", "date": "2024-04-10", "fields": {
            **common, "BuyReasonCode": "030", "TransactionPartnerOrganizationIdentifier": "3001",
            "TransactionPartnerOrganizationName": "Lakeside"}}]
    assert views.emts_submissions("3001", *q2) == [
        {"block": "SellTransactionDetail", "date": "2024-04-10", "fields": {
            **common, "SellReasonCode": "030", "TransactionPartnerOrganizationIdentifier": "2001",
            "TransactionPartnerOrganizationName": "Gulf"}}]


def test_an_unretire_has_no_block_in_the_export(ledger: Ledger) -> None:
    """The schema's subset (projections/emts.xsd) has no unretire block: the export shows the
    retirement and nothing for its reversal."""
    ok(ledger, RETIRE, UNRETIRE)
    blocks = Views(ledger).emts_submissions("3001", date(2025, 1, 1), date(2025, 12, 31))
    assert [b["block"] for b in blocks] == ["RetireTransactionDetail"]


def test_an_unretired_retirement_is_reinstated(ledger: Ledger) -> None:
    ok(ledger, RETIRE, UNRETIRE)
    views = Views(ledger)
    assert views.transactions("3001", 2025, 2) == [{
        "party": "3001", "type": "reverse", "date": "2025-04-02", "partner": None,
        "rin": K2.format(1, 4_000), "k": 2, "gallon_rins": 4_000, "price": None,
        "gallon_price": None, "reason": "80", "broker": None, "id": "R2"}]  # its own code
    # 3001 in 2025: the 4,000 K=2 vintage 2024 RINs are prior-year. Q1: 4,000 − 4,000 retired
    # = 0; Q2: 0 + 4,000 reinstated = 4,000 (§80.1451(c)(2)(xvii)); Q3 starts there.
    prior = ("prior_start", "prior_retired", "reinstated", "prior_end")
    assert {q: v for q, v in amounts(views.activity("3001", 2025), *prior).items()
            if q[1] == "separated"} == {
        (1, "separated"): (4_000, 4_000, 0, 0),
        (2, "separated"): (0, 0, 4_000, 4_000),
        (3, "separated"): (4_000, 0, 0, 4_000),
        (4, "separated"): (4_000, 0, 0, 4_000),
    }
    rows = {r["type"]: r for r in views.attest("3001", 2025, seed=3)}
    assert (rows["reinstated"]["population"], rows["reinstated"]["sample_size"],
            rows["reinstated"]["sampled"]) == (1, 1, ["R2"])
    assert (rows["retired"]["population"], rows["retired"]["sampled"]) == (1, ["r1"])
    assert all(r["matches"] for r in views.attest("3001", 2025, seed=3)
               if r["type"] == "rollforward")
    clean(ledger, views)


def available(views: Views, known_at: int | None = None) -> dict[str, tuple[int, ...]]:
    return {r["assignment"]: (r["generated"], r["retired"], r["locked"], r["available"])
            for r in views.market_table("available", known_at) if r["vintage"] == 2024}


def test_market_tables_count_unretired_as_not_retired_and_locked_batches(
        ledger: Ledger) -> None:
    views = Views(ledger)
    ok(ledger, RETIRE)
    retired_at = views.known_position()
    # 10,000 generated; 5,000 separated moved to the separated row; 4,000 K=2 retired there
    assert available(views) == {"assigned": (5_000, 0, 0, 5_000),
                                "separated": (5_000, 4_000, 0, 1_000)}
    assert views.market_table("retirements") == [
        {"year": 2025, "d_code": 6, "reason": "80", "gallon_rins": 4_000}]
    ok(ledger, {"type": "lock", "date": "2025-03-01", "batch": K1.format(1, 10_000),
                "reason": "EPA review"})
    # the regulator's lock holds every RIN of the batch not retired: all 5,000 assigned and
    # 5,000 − 4,000 = 1,000 separated; none is available
    assert available(views) == {"assigned": (5_000, 0, 5_000, 0),
                                "separated": (5_000, 4_000, 1_000, 0)}
    assert available(views, retired_at)["assigned"] == (5_000, 0, 0, 5_000)  # as known then
    ok(ledger, {"type": "unlock", "date": "2025-03-20", "batch": K1.format(1, 10_000),
                "reason": "review closed"}, UNRETIRE)
    # unlocked, and the retirement unretired: retired no more, in either table
    assert available(views) == {"assigned": (5_000, 0, 0, 5_000),
                                "separated": (5_000, 0, 0, 5_000)}
    assert views.market_table("retirements") == []
    assert views.market_table("retirements", retired_at) == [
        {"year": 2025, "d_code": 6, "reason": "80", "gallon_rins": 4_000}]
    clean(ledger, views)
