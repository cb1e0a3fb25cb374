"""A Party's state is bounded by what is open, not by its history (§80.1452; issue 15): a
completed sell/buy pair leaves nothing in either side's trade book, so the snapshot of a party
after 300 completed pairs is the size of one after 10; a sell released after its date leaves only
its reservation's life (first day, day released, exact ranges, K=1 fuel), which the rules still
read; one released on its own date leaves nothing; nor does a day whose fuel changes net to zero.

Ethanol, EV 1.0: 10,000 gallons generate serials 1..10,000 on 10 January 2024 (§80.1426(f)(1));
each pair moves the next 10 gallon-RINs (first in, first out) and 10 gallons on 1 March.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from eventsourcing.domain import Snapshot

from ledger.domain.fuel_book import FuelBook
from ledger.domain.party import Party
from ledger.domain.rin import RinBlock
from ledger.domain.trade_book import Reservation, Status
from tests.transcoder import ledger_transcoder
from tests.unit.domain.test_party import KEY, ethanol, no_invalid, party
from tests.unit.domain.test_party_trades import BUY, ON, SELL, cmd


def stored(aggregate: Party) -> bytes:
    """The aggregate's snapshot state as the store holds it."""
    return ledger_transcoder().encode(Snapshot.take(aggregate).state)


def traded(pairs: int) -> tuple[Party, Party]:
    """Seller 4001 and buyer 2001 after `pairs` completed sell/buy pairs of 10 each."""
    seller, buyer = party(), party("2001", ("blender",), ())
    ethanol(seller)
    for n in range(pairs):
        sell = seller.post_sell(cmd(SELL, id=f"S{n}", rins={**SELL["rins"], "quantity": 10},
                                    volume=10), no_invalid)
        buyer.offered(sell)
        buy = buyer.post_buy(cmd(BUY, id=f"B{n}", rins={**BUY["rins"], "quantity": 10},
                                 volume=10))
        seller.offered(buy)
        buyer.accept(buy, sell, seller.deliver(sell, buy, no_invalid))
    seller.collect_events()
    buyer.collect_events()
    return seller, buyer


def test_completed_pairs_leave_nothing_in_either_trade_book() -> None:
    seller, buyer = traded(300)
    assert buyer.holdings.totals() == {(6, 2024, 1): 3_000}  # the pairs did complete
    for side in (seller, buyer):
        assert (side.trades.open, side.trades.lives, side.trades.sells_by_key) == ({}, {}, {})
        assert ledger_transcoder().encode(side.trades) == b'{"_type_":"trade_book","_data_":' \
            b'{"open":[],"lives":[]}}'


def test_the_snapshot_after_300_pairs_is_the_size_of_one_after_10() -> None:
    """Only serial numbers' digits differ (3,001 against 101 left with the seller, 3,000 against
    100 with the buyer): a few bytes, where every posting kept would add hundreds each."""
    (few_seller, few_buyer), (many_seller, many_buyer) = traded(10), traded(300)
    assert abs(len(stored(many_seller)) - len(stored(few_seller))) <= 8
    assert abs(len(stored(many_buyer)) - len(stored(few_buyer))) <= 8


def test_a_released_sell_keeps_its_life_and_one_released_on_its_date_nothing() -> None:
    seller = party()
    ethanol(seller)
    for pid in ("S1", "S2"):
        seller.post_sell(cmd(SELL, id=pid, rins={**SELL["rins"], "quantity": 100}, volume=100),
                         no_invalid)
    seller.cancel(cmd({"type": "cancel_trade", "date": "2024-03-01", "party": "4001",
                       "trade": "S1"}))  # on its own date: its life is empty
    seller.cancel(cmd({"type": "cancel_trade", "date": "2024-03-05", "party": "4001",
                       "trade": "S2"}))
    assert seller.trades.open == {}
    assert seller.trades.lives == {"S2": Reservation(
        "S2", ON, (RinBlock(KEY, 101, 200),), Decimal(100), Status.CANCELLED, date(2024, 3, 5))}
    assert seller.trades.reserved(KEY, date(2024, 3, 4)).intervals == ((101, 200),)
    assert seller.trades.reserved(KEY, date(2024, 3, 5)).intervals == ()


def test_a_day_whose_fuel_changes_net_to_zero_leaves_no_entry() -> None:
    """10,000 gallons on 10 January; 400 received and delivered on 1 March (assigned RINs
    traded through); 100 delivered on 2 March: the book keeps 10 January and 2 March only, and
    every balance is as before."""
    book = FuelBook([(date(2024, 1, 10), Decimal(10_000))])
    book.receive(Decimal(400), ON)
    book.deliver(Decimal(400), ON)
    book.deliver(Decimal(100), date(2024, 3, 2))
    assert list(book.changes()) == [(date(2024, 1, 10), 10_000), (date(2024, 3, 2), -100)]
    assert [book.balance(d) for d in (date(2024, 1, 9), ON, date(2024, 3, 2))] == [
        0, 10_000, 9_900]
    assert book.available(ON) == 9_900
    stored = FuelBook([(date(2024, 1, 10), Decimal(10_000)), (ON, Decimal(0))])  # as v5 kept
    assert list(stored.changes()) == [(date(2024, 1, 10), 10_000)]
