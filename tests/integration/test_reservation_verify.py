"""`verify`'s dated checks over reservations (§80.1452(d)): on every date what sells reserve is
held, reserved once, and (K=1) backed by fuel owned. Events the rules would refuse, made by
hand past them, are each found and dated.

1001 generates 10,000 gallons of ethanol on 10 January 2024 (serials 1..10,000, EV 1.0).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

from ledger.domain.commands import validate_command
from ledger.domain.party import Party
from ledger.domain.rin import RinBlock
from ledger.domain.trade_book import Status
from ledger.domain.vocabulary import FuelDirection
from projections.facts import Fact
from projections.invariants import DatedChecks

GENERATE = {"type": "generate", "id": "g1", "date": "2024-01-10", "party": "1001",
            "facility": "20001", "batch": "00001", "fuel": "ethanol", "d_code": 6,
            "volume": 10_000}


def producer() -> Party:
    made = Party.register("1001", "Prairie", ["producer"], ["20001"])
    made.generate(validate_command(GENERATE))
    return made


def posted(party: Party, on: date, block: RinBlock, volume: int | None, pid: str) -> None:
    """A sell's posting stored past the rules."""
    party.trigger_event(
        Party.TradePosted, effective_date=on, client_id=pid, side="sell", partner="2001",
        d_code=6, vintage=2024, k=1, quantity=block.gallon_rins,
        volume=Decimal(volume) if volume else None, company=None, facility=None, batch=None,
        rins=[block], price=None, gallon_price=None, ptd=None, broker=None, reason_code=10,
        match=None)


def problems(party: Party, tmp_path: Path) -> list[str]:
    events: list[Any] = party.collect_events()
    dated = DatedChecks(tmp_path / "dated.sqlite")
    for n, event in enumerate(events, 1):
        dated.add(Fact.of(n, "1001", event))
    return dated.problems()


def test_reserved_fuel_delivered_away_inside_the_reservation_is_found(tmp_path: Path) -> None:
    seller = producer()
    block = RinBlock(next(seller.holdings.blocks()).key, 1, 4_000)
    posted(seller, date(2024, 1, 12), block, 4_000, "S1")
    seller.trigger_event(Party.FuelMoved, effective_date=date(2024, 1, 15), client_id=None,
                         direction=FuelDirection.DELIVERED, volume=Decimal(7_000),
                         counterparty="2001", ptd=None, facility=None)
    assert problems(seller, tmp_path) == [
        "party 1001 has 4,000 gallons of fuel reserved by sells on 2024-01-15, owning 3,000"]


def test_a_reservation_dated_before_the_rins_were_held_is_found(tmp_path: Path) -> None:
    seller = producer()
    block = RinBlock(next(seller.holdings.blocks()).key, 1, 100)
    posted(seller, date(2024, 1, 5), block, None, "S1")
    [problem] = problems(seller, tmp_path)
    assert problem.endswith("reserved twice or not held on 2024-01-05"), problem


def test_a_range_reserved_by_two_sells_on_one_day_is_found(tmp_path: Path) -> None:
    seller = producer()
    block = RinBlock(next(seller.holdings.blocks()).key, 1, 100)
    posted(seller, date(2024, 1, 12), block, None, "S1")
    seller.close("S1", Status.CANCELLED, date(2024, 1, 20), 60, client_id="C1")
    posted(seller, date(2024, 1, 15), block, None, "S2")
    [problem] = problems(seller, tmp_path)
    assert problem.endswith("reserved twice or not held on 2024-01-15"), problem


def test_a_clean_life_has_no_problem(tmp_path: Path) -> None:
    seller = producer()
    block = RinBlock(next(seller.holdings.blocks()).key, 1, 100)
    posted(seller, date(2024, 1, 12), block, 100, "S1")
    seller.close("S1", Status.CANCELLED, date(2024, 1, 20), 60, client_id="C1")
    posted(seller, date(2024, 1, 20), block, 100, "S2")
    assert problems(seller, tmp_path) == []
