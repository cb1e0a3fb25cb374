"""A reservation's life, with no store (§80.1452(d); design.md: "No command dated within a
reservation's life may use its ranges"): a sell holds its ranges and K=1 fuel from its date until
it completes or is released, so a command sent later but dated inside that life, or before it
while it lasts, is refused; one dated on or after the release is not.

Ethanol, EV 1.0: 10,000 gallons generate serials 1..10,000 on 10 January 2024 (§80.1426(f)(1)).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from ledger.domain import commands as c
from ledger.domain.fuel_book import FuelBook
from ledger.domain.party import Party
from ledger.domain.rin import BlockKey, RinBlock
from ledger.domain.trade_book import free_fuel
from ledger.domain.vocabulary import FuelDirection
from tests.unit.domain.test_party import KEY, ethanol, no_invalid, party, refused

D = date


def sell(on: str = "2024-01-12", quantity: int = 4_000, pid: str = "S1", **rins: Any) -> Any:
    return c.validate_command({
        "type": "sell", "id": pid, "date": on, "party": "4001", "to": "2001",
        "rins": rins or {"d_code": 6, "vintage": 2024, "k": 1, "quantity": quantity},
        "volume": quantity})


def cancel(on: str, pid: str = "S1") -> Any:
    return c.validate_command({"type": "cancel_trade", "id": f"C-{pid}", "date": on,
                               "party": "4001", "trade": pid})


def seller_with_cancelled_sell() -> Party:
    """S1 reserves serials 1..4,000 and 4,000 gallons from 12 to 20 January (cancelled)."""
    seller = party()
    ethanol(seller)
    seller.post_sell(sell(), no_invalid)
    seller.cancel(cancel("2024-01-20"))
    seller.collect_events()
    return seller


def test_free_fuel_is_the_lowest_balance_less_reservations_from_the_date_on() -> None:
    """10,000 gallons; 4,000 reserved 12-20 January; 3,000 delivered on the 25th."""
    book = FuelBook([(D(2024, 1, 10), Decimal(10_000)), (D(2024, 1, 25), Decimal(-3_000))])
    held = [(D(2024, 1, 12), D(2024, 1, 20), Decimal(4_000))]

    def free(on: date) -> Decimal:
        return free_fuel(book.changes_after(on), book.balance(on), on, held)

    assert free(D(2024, 1, 11)) == 6_000  # the reservation starts the next day
    assert free(D(2024, 1, 15)) == 6_000
    assert free(D(2024, 1, 20)) == 7_000  # released: only the later delivery binds
    assert free(D(2024, 1, 26)) == 7_000
    assert free_fuel(book.changes_after(D(2024, 1, 15)), book.balance(D(2024, 1, 15)),
                     D(2024, 1, 15), [(D(2024, 1, 12), None, Decimal(4_000))]) == 3_000


def test_a_back_dated_spend_inside_a_closed_life_is_refused_on_or_after_it_is_not() -> None:
    seller = seller_with_cancelled_sell()
    code = RinBlock(KEY, 1, 10).code
    for on in ("2024-01-11", "2024-01-12", "2024-01-19"):  # before, at the start, inside
        refused("TRADE-RESERVED", lambda on=on: seller.retire(c.validate_command({
            "type": "retire", "id": "x", "date": on, "party": "4001", "reason": "spill",
            "rins": {"code": code}}), no_invalid), seller)
    seller.retire(c.validate_command({"type": "retire", "id": "x", "date": "2024-01-20",
                                      "party": "4001", "reason": "spill",
                                      "rins": {"code": code}}), no_invalid)


def test_a_back_dated_sell_inside_a_closed_life_picks_around_it() -> None:
    """By attributes on the 15th the FIFO pick skips 1..4,000 (reserved that day by S1)."""
    seller = seller_with_cancelled_sell()
    posted = seller.post_sell(sell("2024-01-15", 100, "S2"), no_invalid)
    assert posted.rins == (RinBlock(KEY, 4_001, 4_100),)
    later = seller.post_sell(sell("2024-01-20", 100, "S3"), no_invalid)
    assert later.rins == (RinBlock(KEY, 1, 100),)  # released on the 20th


def test_back_dated_fuel_inside_a_closed_k1_life_is_held_back() -> None:
    """10,000 gallons, 4,000 of them reserved 12-20 January: a delivery dated the 15th may take
    6,000 at most; one dated the 20th all 10,000."""
    seller = seller_with_cancelled_sell()
    refused("TRADE-RESERVED", lambda: seller.move_fuel(
        FuelDirection.DELIVERED, "2001", Decimal(6_001), D(2024, 1, 15), ptd=None,
        client_id=None), seller)
    seller.move_fuel(FuelDirection.DELIVERED, "2001", Decimal(6_000), D(2024, 1, 15), ptd=None,
                     client_id=None)
    seller.move_fuel(FuelDirection.DELIVERED, "2001", Decimal(4_000), D(2024, 1, 20), ptd=None,
                     client_id=None)


def test_a_completed_sells_life_is_empty() -> None:
    """Completed on its own date, its ranges left then: nothing of it is reserved on any date."""
    seller = party()
    ethanol(seller)
    posting = seller.post_sell(sell(), no_invalid)
    seller.close("S1", posting.status.COMPLETED, D(2024, 1, 12), None, client_id="B1")
    assert seller.trades.reserved(KEY, D(2024, 1, 11)).intervals == ()
    assert seller.trades.fuel_reservations(D(2024, 1, 11)) == []


def test_a_pick_on_a_day_before_reserved_ranges_arrived_does_not_fail() -> None:
    """4001 receives serials 1..500 of 5001's batch on 20 January and sells them that day; a pick
    by attributes dated the 15th (when those were not yet held) takes its own ethanol."""
    seller = party()
    ethanol(seller)
    other = BlockKey(1, 2024, "5001", "50001", "00001", 10, 6, D(2024, 1, 2), "ethanol")
    seller.receive("5001", [RinBlock(other, 1, 500)], D(2024, 1, 20), volume=Decimal(500),
                   ptd=None, price=None, reason_code=10, client_id="t1")
    seller.post_sell(sell("2024-01-20", 500, "S1", code=RinBlock(other, 1, 500).code),
                     no_invalid)
    picked = seller.post_sell(sell("2024-01-15", 100, "S2"), no_invalid)
    assert picked.rins == (RinBlock(KEY, 1, 100),)
