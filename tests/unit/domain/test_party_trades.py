"""EMTS postings on the Party aggregate, with no store (§80.1452): a sell reserves exact ranges
and fuel, reserved RINs are owned but not spendable, a posting closes once, and expiry counts
business days without weekends and US federal holidays as observed.

Ethanol, EV 1.0: 10,000 gallons generate serials 1..10,000 (§80.1426(d)(2), (f)(1)).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from eventsourcing.persistence import DecimalAsStr, JSONTranscoder

from ledger.domain import commands as c
from ledger.domain.business_days import business_days_after, is_business_day
from ledger.domain.party import Party
from ledger.domain.rin import RinBlock
from ledger.domain.trade_book import Reservation, Side, Status, Terms
from ledger.infrastructure.transcodings import register_transcodings
from ledger.rules import s1452_trades as trd
from tests.unit.domain.test_party import KEY, ethanol, no_invalid, party, refused

SELL = {"type": "sell", "id": "S1", "date": "2024-03-01", "party": "4001", "to": "2001",
        "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 4_000}, "volume": 4_000}
BUY = {"type": "buy", "id": "B1", "date": "2024-03-01", "party": "2001", "from": "4001",
       "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 4_000}, "volume": 4_000}
ON = date(2024, 3, 1)


def cmd(base: dict[str, Any], **changes: Any) -> Any:
    return c.validate_command({**base, **changes})


def seller_with_sell() -> Party:
    seller = party()
    ethanol(seller)
    seller.post_sell(cmd(SELL), no_invalid)
    return seller


def test_a_sell_reserves_its_exact_ranges_and_fuel_which_stay_owned() -> None:
    seller = seller_with_sell()
    [posted] = seller.collect_events()
    assert isinstance(posted, Party.TradePosted)
    assert (posted.client_id, posted.side, posted.partner, posted.reason_code) == (
        "S1", Side.SELL, "2001", 10)  # EMTS 010, standard trade
    assert posted.rins == [RinBlock(KEY, 1, 4_000)]  # FIFO, lowest serials (§80.1428)
    # still owned: holdings and fuel unchanged
    assert seller.holdings.totals() == {(6, 2024, 1): 10_000}
    assert seller.fuel.balance(ON) == 10_000
    assert seller.trades.reserved(KEY).intervals == ((1, 4_000),)
    assert seller.trades.reserved_volume() == 4_000


def test_reserved_rins_cannot_be_moved_separated_retired_split_or_reserved_again() -> None:
    seller = seller_with_sell()
    seller.collect_events()
    code = RinBlock(KEY, 1, 10).code  # serials 1-10, inside S1's reservation
    by_code = c.ByCode(code=code)
    refused("TRADE-RESERVED", lambda: seller.transfer_out(
        "2001", by_code, ON, no_invalid, volume=Decimal(10), ptd=None, price=None,
        reason_code=10, client_id=None), seller)
    refused("TRADE-RESERVED", lambda: seller.separate(cmd(
        {"type": "separate", "date": "2024-03-01", "party": "4001", "reason": "blending",
         "rins": {"code": code}, "volume": 10}), no_invalid), seller)
    refused("TRADE-RESERVED", lambda: seller.retire(cmd(
        {"type": "retire", "date": "2024-03-01", "party": "4001", "reason": "spill",
         "rins": {"code": code}}), no_invalid), seller)
    refused("TRADE-RESERVED", lambda: seller.split(cmd(
        {"type": "split", "date": "2024-03-01", "party": "4001", "rin": code,
         "sizes": [5, 5]})), seller)
    refused("TRADE-RESERVED", lambda: seller.post_sell(cmd(SELL, id="S2", rins={"code": code},
                                                           volume=10), no_invalid), seller)
    # by attributes: 6,000 free, 4,000 reserved; 6,001 is refused as reserved, not as unheld
    error = refused("TRADE-RESERVED", lambda: seller.post_sell(cmd(
        SELL, id="S3", rins={**SELL["rins"], "quantity": 6_001}, volume=6_001), no_invalid),
        seller)
    assert "6,000 free, 4,000 more reserved" in error.message
    refused("RINS-NOT-HELD", lambda: seller.post_sell(cmd(
        SELL, id="S4", rins={**SELL["rins"], "quantity": 10_001}, volume=10_001), no_invalid),
        seller)
    # reserved fuel: 10,000 owned, 4,000 reserved, so 6,001 gallons cannot leave
    refused("TRADE-RESERVED", lambda: seller.check_fuel(Decimal(6_001), ON), seller)
    # the free 6,000 pick around the reservation: serials 4,001..10,000
    seller.post_sell(cmd(SELL, id="S5", rins={**SELL["rins"], "quantity": 6_000},
                         volume=6_000), no_invalid)
    [posted] = seller.collect_events()
    assert posted.rins == [RinBlock(KEY, 4_001, 10_000)]


def test_cancel_releases_the_reservation_once() -> None:
    seller = seller_with_sell()
    seller.collect_events()
    cancel = {"type": "cancel_trade", "id": "X1", "date": "2024-03-02", "party": "4001",
              "trade": "S1"}
    refused("TRADE-CANCEL", lambda: seller.cancel(cmd(cancel, trade="S9")), seller)
    seller.cancel(cmd(cancel))
    [closed] = seller.collect_events()
    assert (closed.posting, closed.status, closed.reason_code) == ("S1", Status.CANCELLED, 60)
    assert seller.trades.reserved(KEY).intervals == ()
    assert seller.trades.reserved_volume() == 0
    refused("TRADE-CANCEL", lambda: seller.cancel(cmd(cancel)), seller)  # not pending now


def test_deny_is_the_partners_and_closes_with_050() -> None:
    seller = seller_with_sell()
    seller.collect_events()
    deny = {"type": "deny_trade", "id": "D1", "date": "2024-03-02", "trade": "S1"}
    refused("TRADE-DENY", lambda: seller.deny(cmd(deny, party="3001")), seller)  # not partner
    seller.deny(cmd(deny, party="2001"))
    [closed] = seller.collect_events()
    assert (closed.status, closed.reason_code) == (Status.DENIED, 50)
    refused("TRADE-DENY", lambda: seller.deny(cmd(deny, party="2001")), seller)


def test_deliver_moves_the_reserved_ranges_naming_both_postings() -> None:
    seller, buyer = seller_with_sell(), party("2001", ("blender",), ())
    seller.collect_events()
    buy = buyer.post_buy(cmd(BUY))
    sell = seller.trades.open["S1"]
    refused("INVALID-TRANSFER", lambda: seller.deliver(sell, buy, lambda b: 1), seller)
    blocks = seller.deliver(sell, buy, no_invalid)
    buyer.accept(buy, sell, blocks)
    closed, out = seller.collect_events()
    _, closed_buy, came = buyer.collect_events()
    assert (closed.status, closed.counterpart, closed_buy.counterpart) == (
        Status.COMPLETED, "B1", "S1")
    assert isinstance(out, Party.TransferredOut) and isinstance(came, Party.TransferredIn)
    assert out.rins == came.rins == [RinBlock(KEY, 1, 4_000)]
    assert out.postings == came.postings == ["S1", "B1"]
    assert (out.volume, out.to_party, came.from_party) == (4_000, "2001", "4001")
    assert seller.holdings.totals() == {(6, 2024, 1): 6_000}
    assert buyer.holdings.totals() == {(6, 2024, 1): 4_000}
    assert seller.fuel.balance(ON) == 6_000 and buyer.fuel.balance(ON) == 4_000
    assert seller.trades.reserved_volume() == 0


def test_a_k1_buy_needs_its_fuel_and_no_party_trades_with_itself() -> None:
    buyer = party("2001", ("blender",), ())
    refused("ASSIGNED-WITH-FUEL", lambda: buyer.post_buy(cmd(BUY, volume=None)), buyer)
    # 4,000 / 1,599 gallons > 2.5 per gallon (§80.1428(a)(4)); 1,600 is exactly 2.5
    refused("ASSIGNED-PER-GALLON", lambda: buyer.post_buy(cmd(BUY, volume=1_599)), buyer)
    refused("TRANSFER-SELF", lambda: buyer.post_buy(cmd(BUY, **{"from": "2001"})), buyer)
    assert buyer.post_buy(cmd(BUY, volume=1_600)).status is Status.PENDING


TERMS = Terms(ON, 6, 2024, 1, 4_000, Decimal(4_000))


def test_differences_name_every_field_in_the_contracts_order() -> None:
    other = Terms(date(2024, 3, 4), 4, 2023, 2, 3_999, Decimal(1_600), batch="00009")
    assert trd.differences(TERMS, [KEY], other) == [
        "d_code", "vintage", "k", "quantity", "date", "volume", "batch"]
    assert trd.differences(TERMS, [KEY], TERMS) == []
    # prices are not compared; the batch only where the buy names one
    assert trd.differences(TERMS, [KEY], Terms(ON, 6, 2024, 1, 4_000, Decimal(4_000),
                                               company="4001", batch="00001")) == []
    # K=2: volume is not compared
    k2 = Terms(ON, 6, 2024, 2, 10, None)
    assert trd.differences(k2, [KEY.with_k(2)], Terms(ON, 6, 2024, 2, 10, Decimal(3))) == []


def test_a_disagreeing_match_is_refused_naming_each_field() -> None:
    other = Terms(ON, 6, 2024, 1, 3_999, Decimal(1_600))
    error = refused("TRADE-MATCH", lambda: trd.check_agree(TERMS, [KEY], other, "S1", "B1",
                                                           "match"))
    assert error.message == ("sell S1 and buy B1 differ in quantity, volume: quantity 4000 "
                             "(sell) against 3999 (buy); volume 4000 (sell) against 1600 (buy)")
    assert error.field == "match"


def test_business_days_skip_weekends_and_observed_federal_holidays() -> None:
    """Friday 5 January 2024: the ten business days after it are 8-12 January, then (Monday
    15 January is Martin Luther King Jr. Day) 16-19 and 22 January."""
    posted = date(2024, 1, 5)
    assert not is_business_day(date(2024, 1, 15))  # MLK Day
    assert not is_business_day(date(2024, 1, 6))  # Saturday
    assert business_days_after(posted, date(2024, 1, 19)) == 9
    assert business_days_after(posted, date(2024, 1, 22)) == 10
    assert business_days_after(posted, date(2024, 1, 23)) == 11
    # observed: Independence Day 2026 is a Saturday, observed Friday 3 July
    assert not is_business_day(date(2026, 7, 3))
    assert business_days_after(date(2026, 7, 2), date(2026, 7, 6)) == 1


def test_expire_ends_postings_more_than_the_window_old() -> None:
    seller = party()
    ethanol(seller, on="2024-01-02")
    seller.post_sell(cmd(SELL, date="2024-01-05"), no_invalid)
    seller.collect_events()
    assert seller.expire(date(2024, 1, 22), 10, "E1") == []  # exactly 10: still pending
    assert seller.collect_events() == []
    assert seller.expire(date(2024, 1, 23), 10, "E2") == ["S1"]  # 11: expired
    [closed] = seller.collect_events()
    assert (closed.status, closed.effective_date, closed.client_id) == (
        Status.EXPIRED, date(2024, 1, 23), "E2")
    assert seller.trades.reserved_volume() == 0
    assert seller.expire(date(2024, 2, 23), 10, "E3") == []  # closed once


def test_a_trade_book_round_trips_through_the_stored_form() -> None:
    """A Party v6 snapshot's trade book comes back exactly, as plain JSON lists (one transcoded
    object, the book itself): the pending postings (sides, terms with their date and Decimal
    volume, reserved blocks, prices, broker) and the released sell's life, its first day, day
    released, status, ranges and fuel (§80.1452(d)); nothing else."""
    transcoder = JSONTranscoder()
    transcoder.register(DecimalAsStr())
    register_transcodings(transcoder)
    seller = seller_with_sell()
    seller.post_sell(cmd(SELL, id="S2", rins={**SELL["rins"], "quantity": 10}, volume="4.5",
                         price="1.10", broker="5001"), no_invalid)
    seller.cancel(cmd({"type": "cancel_trade", "date": "2024-03-02", "party": "4001",
                       "trade": "S1"}))
    stored = transcoder.encode({"trades": seller.trades})
    assert stored.count(b"_type_") == 1  # no per-posting object for the JSON hook to decode
    back = transcoder.decode(stored)["trades"]
    assert back.open == seller.trades.open
    assert list(back.open) == ["S2"]
    assert back.open["S2"].terms.volume == Decimal("4.5")
    assert (back.open["S2"].price, back.open["S2"].broker) == (Decimal("1.10"), "5001")
    assert back.lives == seller.trades.lives
    assert back.lives["S1"] == Reservation("S1", ON, (RinBlock(KEY, 1, 4_000),), Decimal(4_000),
                                           Status.CANCELLED, date(2024, 3, 2))
    assert back.fuel_released == [(date(2024, 3, 2), "S1")]
    assert back.sells_by_key == {KEY: ["S1", "S2"]}  # posting order


def test_reservations_are_named_in_posting_order_after_a_round_trip() -> None:
    """S1 reserves serials 1..100 from 1 March until it is cancelled on the 4th; S2, dated the
    5th, reserves them again. A transfer dated 2 March is refused naming both, S1 first, whether
    the book was replayed or read back from a snapshot."""
    transcoder = JSONTranscoder()
    transcoder.register(DecimalAsStr())
    register_transcodings(transcoder)
    seller = party()
    ethanol(seller)
    hundred = {**SELL["rins"], "quantity": 100}
    seller.post_sell(cmd(SELL, rins=hundred, volume=100), no_invalid)
    seller.cancel(cmd({"type": "cancel_trade", "date": "2024-03-04", "party": "4001",
                       "trade": "S1"}))
    seller.post_sell(cmd(SELL, id="S2", date="2024-03-05", rins=hundred, volume=100),
                     no_invalid)
    back = transcoder.decode(transcoder.encode({"trades": seller.trades}))["trades"]
    block = RinBlock(KEY, 1, 10)
    for book in (seller.trades, back):
        assert [life.id for life in book.reserving(block, date(2024, 3, 2))] == ["S1", "S2"]
        assert [trd.life(life) for life in book.reserving(block, date(2024, 3, 2))] == [
            "sell S1 (from 2024-03-01 until it was cancelled on 2024-03-04)",
            "pending sell S2 (from 2024-03-05)"]


def test_a_party_v5_trade_book_decodes_into_the_bounded_book() -> None:
    """A Party v5 snapshot kept every posting with its end, and the offers: it decodes to what a
    replay now keeps. Completed S1 and B9 leave nothing; S2, cancelled the day after its date,
    leaves its life; S3, cancelled on its own date, an empty one (nothing); pending S4 stays."""
    transcoder = JSONTranscoder()
    transcoder.register(DecimalAsStr())
    register_transcodings(transcoder)

    def v5(pid: str, side: str, serials: tuple[int, int] | None, status: str,
           closed_on: date | None) -> list[Any]:
        terms = {"date": ON, "d_code": 6, "vintage": 2024, "k": 1, "quantity": 100,
                 "volume": Decimal(100), "company": None, "facility": None, "batch": None,
                 "qap": None}
        rins = [RinBlock(KEY, *serials)] if serials else []
        return [pid, side, "4001", "2001", terms, rins, None, None, None, None, 10, None,
                status, closed_on, None, None]

    postings = [v5("S1", "sell", (1, 100), "completed", ON),
                v5("B9", "buy", None, "completed", ON),
                v5("S2", "sell", (101, 200), "cancelled", date(2024, 3, 4)),
                v5("S3", "sell", (201, 300), "cancelled", ON),
                v5("S4", "sell", (301, 400), "pending", None)]
    data = transcoder.encode({"postings": postings, "offers": {"B7": "2001"}})
    book = transcoder.decode(b'{"trades":{"_type_":"trade_book","_data_":' + data + b"}}"
                             )["trades"]
    assert list(book.open) == ["S4"]
    assert book.open["S4"].status is Status.PENDING
    assert book.lives == {
        "S2": Reservation("S2", ON, (RinBlock(KEY, 101, 200),), Decimal(100), Status.CANCELLED,
                          date(2024, 3, 4)),
        "S4": Reservation("S4", ON, (RinBlock(KEY, 301, 400),), Decimal(100)),
    }
    assert book.reserved(KEY, ON).intervals == ((101, 200), (301, 400))  # S3's: never held
    assert book.reserved(KEY, date(2024, 3, 4)).intervals == ((301, 400),)
    assert book.fuel_released == [(date(2024, 3, 4), "S2")]
