"""Reversals on the Party aggregate, with no store (EMTS unretire and remedial trades,
§80.1452(d), (c)(13)): the exact ranges go back, linked to the original's id; the wrong party,
a second reversal, a date before the original and a wrong reason are refused and trigger
nothing; a buyer must still hold (and not have reserved) what it gives back, and K=1 fuel
moves back with its RINs.

Ethanol, EV 1.0: 10,000 gallons generate serials 1..10,000 on 10 January 2024 (§80.1426(f)(1)).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from ledger.domain import commands as c
from ledger.domain.errors import InputError
from ledger.domain.party import Party
from ledger.domain.reversals import Original, Reversible
from ledger.domain.rin import RinBlock
from ledger.rules import s1452_reversals as rev
from tests.unit.domain.test_party import KEY, ethanol, no_invalid, party, refused

ON = date(2024, 1, 12)
LATER = date(2024, 1, 20)


def reverse(command: str, party_id: str, on: str = "2024-01-20", reason: Any = "030",
            rid: str = "R1") -> Any:
    return c.validate_command({"type": "reverse", "id": rid, "date": on, "party": party_id,
                               "command": command, "reason": reason})


def traded() -> tuple[Party, Party, Original]:
    """4001 transfers serials 1..4,000 with 4,000 gallons to 2001 on 12 January (`t1`)."""
    seller, buyer = party("4001"), party("2001", ("obligated_party",), ())
    ethanol(seller)
    selector = c.ByAttributes(d_code=6, vintage=2024, k=1, quantity=4_000)
    blocks = seller.transfer_out("2001", selector, ON, no_invalid, volume=Decimal(4_000),
                                 ptd=None, price=None, reason_code=10, client_id="t1")
    buyer.receive("4001", blocks, ON, volume=Decimal(4_000), ptd=None, price=None,
                  reason_code=10, client_id="t1")
    seller.collect_events()
    buyer.collect_events()
    original = Original("t1", Reversible.TRANSFER, seller.id, ON, tuple(blocks),
                        receiver="2001", volume=Decimal(4_000))
    return seller, buyer, original


def send_back(seller: Party, buyer: Party, original: Original, cmd: Any) -> list[RinBlock]:
    code = seller.check_reversal(original, cmd)
    blocks = buyer.give_back(original, seller.party_id, cmd.date, no_invalid, code, cmd.id)
    seller.take_back(original, buyer.party_id, cmd.date, code, cmd.id)
    return blocks


def test_a_reversed_trade_returns_the_exact_ranges_and_fuel() -> None:
    seller, buyer, original = traded()
    send_back(seller, buyer, original, reverse("t1", "4001"))
    [out] = buyer.collect_events()
    [back] = seller.collect_events()
    assert isinstance(out, Party.TradeReversedOut) and isinstance(back, Party.TradeReversedIn)
    for event in (out, back):
        assert (event.reverses, event.reason_code, event.rins, event.volume) == (
            "t1", 30, [RinBlock(KEY, 1, 4_000)], 4_000)  # EMTS 030, remedial
    assert (out.to_party, back.from_party) == ("4001", "2001")
    assert buyer.holdings.totals() == {}
    assert seller.holdings.totals() == {(6, 2024, 1): 10_000}
    assert (buyer.fuel.balance(LATER), seller.fuel.balance(LATER)) == (0, 10_000)
    assert buyer.fuel.balance(ON) == 4_000  # the trade itself stands: 12-19 January
    # back from the 20th: not movable on an earlier date (holdings on the date)
    assert seller.holdings.held_gallon_rins(RinBlock(KEY, 1, 4_000), date(2024, 1, 19)) == 0
    assert seller.facts.reversed == {"t1": LATER}


def test_only_the_party_that_gave_the_rins_reverses_once_and_not_before() -> None:
    seller, buyer, original = traded()
    refused("REVERSE-PARTY", lambda: buyer.check_reversal(original, reverse("t1", "2001")))
    refused("REVERSE-DATE",
            lambda: seller.check_reversal(original, reverse("t1", "4001", on="2024-01-11")))
    assert seller.check_reversal(original, reverse("t1", "4001", on="2024-01-12")) == 30
    send_back(seller, buyer, original, reverse("t1", "4001"))
    refused("REVERSE-ONCE",
            lambda: seller.check_reversal(original, reverse("t1", "4001", rid="R2")))


def test_a_reversed_trade_carries_a_remedial_code() -> None:
    seller, _, original = traded()
    for reason, code in (("030", 30), ("30", 30), ("80", 80), ("remedial_partner", 30),
                         ("remedial_duplicate", 80)):
        assert seller.check_reversal(original, reverse("t1", "4001", reason=reason)) == code
    for reason in ("010", "standard", "spill", "60", "050"):
        refused("REVERSE-REASON",
                lambda r=reason: seller.check_reversal(original, reverse("t1", "4001", reason=r)))


def test_a_reversal_reason_given_as_a_json_number_is_refused_naming_the_field() -> None:
    """design.md "Refusals are strict": a code field is a string ("030"), never the number 30."""
    for number in (30, 80, 30.0, True):
        with pytest.raises(InputError) as caught:
            reverse("t1", "4001", reason=number)
        assert caught.value.field == "reason", caught.value


def test_a_buyer_that_no_longer_holds_them_all_cannot_give_them_back() -> None:
    _, buyer, original = traded()
    buyer.transfer_out("4001", c.ByCode(code=RinBlock(KEY, 3_991, 4_000).code), LATER,
                       no_invalid, volume=Decimal(10), ptd=None, price=None, reason_code=10,
                       client_id="t2")
    buyer.collect_events()
    error = refused("RINS-NOT-HELD", lambda: buyer.give_back(
        original, "4001", LATER, no_invalid, 30, "R1"), buyer)
    assert error.field == "command"


def test_a_buyer_cannot_give_back_what_its_own_sell_reserved() -> None:
    _, buyer, original = traded()
    buyer.post_sell(c.validate_command({
        "type": "sell", "id": "S9", "date": "2024-01-15", "party": "2001", "to": "4001",
        "rins": {"code": RinBlock(KEY, 1, 10).code}, "volume": 10}), no_invalid)
    buyer.collect_events()
    refused("TRADE-RESERVED",
            lambda: buyer.give_back(original, "4001", LATER, no_invalid, 30, "R1"), buyer)


def test_a_reversed_retirement_holds_the_exact_ranges_again() -> None:
    holder = party("4001")
    ethanol(holder)
    holder.retire(c.validate_command({
        "type": "retire", "id": "r1", "date": "2024-01-15", "party": "4001", "reason": "spill",
        "rins": {"code": RinBlock(KEY, 1, 500).code}}), no_invalid)
    [retired] = holder.collect_events()
    original = Original("r1", Reversible.RETIRE, holder.id, retired.effective_date,
                        tuple(retired.rins), reason_code=retired.reason_code,
                        reason=retired.reason)
    refused("REVERSE-REASON", lambda: holder.unretire(reverse("r1", "4001", reason="030"),
                                                      original), holder)
    assert holder.unretire(reverse("r1", "4001", reason="10"), original) == [
        RinBlock(KEY, 1, 500)]
    [back] = holder.collect_events()
    assert isinstance(back, Party.Unretired)
    assert (back.reverses, back.reason_code, back.reason, back.rins) == (
        "r1", 10, "spill", [RinBlock(KEY, 1, 500)])  # the retirement's own code, EMTS 10
    assert holder.holdings.totals() == {(6, 2024, 1): 10_000}
    refused("REVERSE-ONCE", lambda: holder.unretire(reverse("r1", "4001", reason="spill",
                                                            rid="R2"), original), holder)


def test_the_original_must_be_a_retire_a_transfer_or_a_completed_sell() -> None:
    refused("REVERSE-ORIGINAL", lambda: rev.check_original(None, "nothing"))
    error = refused("REVERSE-ORIGINAL", lambda: rev.check_original(Original("B1", "buy"), "B1"))
    assert "sell" in str(error)
    refused("REVERSE-ORIGINAL", lambda: rev.check_original(Original("g1", "generate"), "g1"))
    pending = Original("S1", Reversible.SELL, None, ON, status="pending")
    assert rev.check_original(pending, "S1") is pending
    refused("REVERSE-ORIGINAL", lambda: rev.check_completed(pending))
