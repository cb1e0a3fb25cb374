"""The Party aggregate's command methods, with no store: construct a party, call a method, read
`collect_events()`. A refusal raises the rule's error and leaves no pending event.

Numbers are worked by hand from the regulation: ethanol EV 1.0 (§80.1415(b)(1)), so V_RIN =
standardized gallons (§80.1426(f)(1)); serials run 1..V_RIN (§80.1426(d)(2)).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from ledger.domain import commands as c
from ledger.domain.errors import LedgerError
from ledger.domain.party import Party
from ledger.domain.rin import BatchId, BlockKey, RinBlock
from ledger.domain.vocabulary import FuelDirection, Role

ON = date(2024, 3, 1)
KEY = BlockKey(1, 2024, "4001", "40001", "00001", 10, 6, date(2024, 1, 10), "ethanol")


def no_invalid(block: RinBlock) -> int:
    return 0


def command(**fields: Any) -> Any:
    return c.validate_command(fields)


def party(party_id: str = "4001", roles: tuple[str, ...] = ("producer", "obligated_party",
          "refiner"), facilities: tuple[str, ...] = ("40001",)) -> Party:
    made = Party.register(party_id, f"Party {party_id}", list(roles), list(facilities))
    made.collect_events()
    return made


def ethanol(p: Party, gallons: int = 10_000, batch: str = "00001", on: str = "2024-01-10"
            ) -> list[RinBlock]:
    blocks = p.generate(command(type="generate", date=on, party=p.party_id,
                                facility=p.facilities[0], batch=batch, fuel="ethanol",
                                d_code=6, volume=str(gallons)))
    p.collect_events()
    return blocks


def refused(rule: str, call: Any, *aggregates: Any) -> LedgerError:
    with pytest.raises(LedgerError) as caught:
        call()
    assert getattr(caught.value, "rule_id", caught.value.citation) == rule, caught.value
    for aggregate in aggregates:
        assert aggregate.pending_events == []
    return caught.value


def test_register_triggers_registered_with_roles_as_enum() -> None:
    made = Party.register("1001", "Producer", ["producer"], ["20001"], "r-1")
    [event] = made.collect_events()
    assert isinstance(event, Party.Registered)
    assert (event.party_id, event.roles, event.facilities, event.client_id) == (
        "1001", [Role.PRODUCER], ["20001"], "r-1")
    assert made.roles == [Role.PRODUCER]
    refused("REG-ROLES", lambda: Party.register("1002", "X", ["trader"], []))
    refused("REG-DUPLICATE", lambda: Party.register("1001", "X", ["producer"], [],
                                                   registered=True))


def test_generate_triggers_generated_and_assigned_with_exact_serials() -> None:
    p = party()
    blocks = p.generate(command(type="generate", date="2024-01-10", party="4001",
                                facility="40001", batch="00001", fuel="ethanol", d_code=6,
                                volume="10000"))
    generated, assigned = p.collect_events()
    assert blocks == [RinBlock(KEY, 1, 10_000)]
    assert isinstance(generated, Party.Generated) and generated.rin == blocks[0]
    assert generated.standardized_volume == Decimal(10_000)
    assert isinstance(assigned, Party.Assigned) and assigned.rins == blocks
    # the facts later rules read, kept by `apply`, with int years
    assert p.facts.generated_block(BatchId(2024, "4001", "40001", "00001")) == blocks[0]
    assert p.produced == {2024: Decimal(10_000)}
    assert p.facts.fuels == {"ethanol": date(2024, 1, 10)}
    assert p.facts.first_year == {"40001": 2024}


def test_a_refused_generation_triggers_nothing() -> None:
    p = party()
    ethanol(p)
    refused("RIN-BATCH-UNIQUE", lambda: ethanol(p), p)  # §80.1425(e): batch 00001 again
    refused("REG-GENERATOR", lambda: p.generate(command(
        type="generate", date="2024-01-10", party="4001", facility="49999", batch="00002",
        fuel="ethanol", d_code=6, volume="10")), p)
    assert p.version == 3  # registered, generated, assigned


def test_transfer_out_and_receive_move_the_same_ranges() -> None:
    seller, buyer = party(), party("2001", ("blender",), ())
    ethanol(seller)
    selector = c.ByAttributes(d_code=6, vintage=2024, k=1, quantity=4_000)
    refused("TRANSFER-SELF", lambda: seller.transfer_out(
        "4001", selector, ON, no_invalid, volume=Decimal(4_000), ptd=None, price=None,
        reason_code=10, client_id=None), seller)
    refused("ASSIGNED-WITH-FUEL", lambda: seller.transfer_out(  # K=1 moves with its fuel
        "2001", selector, ON, no_invalid, volume=None, ptd=None, price=None, reason_code=10,
        client_id=None), seller)
    refused("INVALID-TRANSFER", lambda: seller.transfer_out(
        "2001", selector, ON, lambda b: 1, volume=Decimal(4_000), ptd=None, price=None,
        reason_code=10, client_id=None), seller)
    blocks = seller.transfer_out("2001", selector, ON, no_invalid, volume=Decimal(4_000),
                                 ptd="PTD-1", price=None, reason_code=10, client_id="t-1")
    assert blocks == [RinBlock(KEY, 1, 4_000)]  # FIFO from serial 1
    buyer.receive("4001", blocks, ON, volume=Decimal(4_000), ptd="PTD-1", price=None,
                  reason_code=10, client_id="t-1")
    [out], [came] = seller.collect_events(), buyer.collect_events()
    assert isinstance(out, Party.TransferredOut) and isinstance(came, Party.TransferredIn)
    assert (out.to_party, out.rins, came.from_party, came.rins) == ("2001", blocks, "4001",
                                                                     blocks)
    assert seller.holdings.held_gallon_rins(RinBlock(KEY, 1, 10_000), ON) == 6_000
    assert seller.fuel.available(ON) == 6_000


def test_move_fuel_checks_what_the_seller_owns() -> None:
    seller = party()
    ethanol(seller, 100)
    refused("FUEL-NOT-OWNED", lambda: seller.move_fuel(
        FuelDirection.DELIVERED, "2001", Decimal(101), ON, ptd=None, client_id=None), seller)
    seller.move_fuel(FuelDirection.DELIVERED, "2001", Decimal(100), ON, ptd=None,
                     client_id=None)
    [moved] = seller.collect_events()
    assert (moved.direction, moved.volume, moved.counterparty) == ("delivered", 100, "2001")


def test_separation_limit_b7_reads_the_facts_of_the_year() -> None:
    """(b)(7)(v): D6 limit = RVO_RF − RVO_AB = 5,000 − 1,000 = 4,000 own gallon-RINs."""
    p = party()
    ethanol(p)
    p.report_obligation(command(type="report_obligation", party="4001", year=2024,
                                rvo={"CB": 0, "BBD": 0, "AB": 1_000, "RF": 5_000}))
    p.collect_events()

    def separate(quantity: int) -> None:
        p.separate(command(type="separate", date="2024-03-01", party="4001",
                           reason="obligated_party", volume=str(quantity),
                           rins={"d_code": 6, "vintage": 2024, "k": 1, "quantity": quantity}),
                   no_invalid)

    separate(3_000)
    [event] = p.collect_events()
    assert isinstance(event, Party.Separated) and event.paragraph == "§80.1429(b)(1)"
    assert p.facts.unblended[2024].own == {6: 3_000}
    refused("SEP-OBLIGATED-CAP", lambda: separate(1_001), p)
    separate(1_000)
    assert p.facts.unblended[2024].own == {6: 4_000}


def test_remedial_retirement_counts_invalid_rins_retired_for_the_year() -> None:
    """§80.1474(b): 500 of the 1,000 retired for 2024 are invalid; 300 replaced, 200 left."""
    p = party("3001", ("obligated_party", "refiner"), ())
    k2 = BlockKey(2, 2024, "1001", "20001", "00001", 10, 6, date(2024, 1, 31), "ethanol")
    p.holdings.add(RinBlock(k2, 1, 2_100), date(2024, 3, 1))
    found: list[RinBlock] = []  # the regulator's findings (another aggregate's)

    def invalid(block: RinBlock) -> int:
        return sum(max(0, min(block.end, bad.end) - max(block.start, bad.start) + 1)
                   for bad in found)

    def retire(reason: str, quantity: int) -> None:
        p.retire(command(type="retire", date="2025-01-15", party="3001", reason=reason,
                         compliance_year=2024,
                         rins={"d_code": 6, "vintage": 2024, "k": 2, "quantity": quantity}),
                 invalid)

    retire("compliance", 1_000)  # serials 1-1,000
    found.append(RinBlock(k2, 1, 500))
    retire("remedial_invalid", 300)  # serials 1,001-1,300
    p.collect_events()
    error = refused("REPLACE-NEEDED", lambda: retire("remedial_invalid", 201), p)
    assert "200 invalid gallon-RINs used for 2024 left to replace, not 201" in str(error)
    retire("remedial_invalid", 200)
    [event] = p.collect_events()
    assert isinstance(event, Party.Retired) and event.reason_code == 110


def test_b10_replacement_rins_are_kept_and_only_retired_as_replacements() -> None:
    p = party("1001", ("producer",), ("20001",))
    ethanol(p)
    p.separate(command(type="separate", date="2024-02-03", party="1001", reason="replacement",
                       rins={"d_code": 6, "vintage": 2024, "k": 1, "quantity": 4_000}),
               no_invalid)
    p.collect_events()
    k2 = RinBlock(BlockKey(2, 2024, "1001", "20001", "00001", 10, 6, date(2024, 1, 10),
                           "ethanol"), 1, 4_000)
    assert p.facts.replacement == [k2]
    refused("SEP-REPLACEMENT-ONLY", lambda: p.retire(command(
        type="retire", date="2025-01-15", party="1001", reason="contaminated",
        rins={"code": k2.code}), no_invalid), p)


def test_delayed_rins_one_date_from_the_facts() -> None:
    """§80.1426(g)(9): all delayed RINs on one date; 1,000 gal biodiesel × EV 1.5 = 1,500."""
    p = party("1002", ("producer",), ("20002",))

    def delayed(batch: str, on: str, start: str) -> list[RinBlock]:
        return p.generate(command(
            type="generate", date=on, party="1002", facility="20002", batch=batch,
            fuel="biodiesel", d_code=4, volume=1_000, production_start=start,
            production_end=start, pathway_effective_date="2011-03-01"))

    [block] = delayed("DRN01", "2011-04-15", "2010-10-01")
    generated, assigned, separated = p.collect_events()
    assert isinstance(generated, Party.Generated) and isinstance(assigned, Party.Assigned)
    assert generated.production_date == date(2010, 7, 1)  # §80.1426(g)(10)(i)
    assert block.gallon_rins == 1_500 and block.key.vintage == 2010
    assert isinstance(separated, Party.Separated) and separated.reason == "delayed"
    assert p.delayed_history().generated == {2010: 1_500}
    refused("DELAYED-ONE-DATE", lambda: delayed("DRN02", "2011-04-20", "2011-01-10"), p)


def test_split_names_daughters_and_refuses_more_than_held() -> None:
    p = party()
    ethanol(p)
    parent = RinBlock(KEY, 1, 10_000)
    refused("SPLIT-SUM", lambda: p.split(command(type="split", date="2024-03-01",
                                                 party="4001", rin=parent.code,
                                                 sizes=[4_000, 5_000])), p)
    daughters = p.split(command(type="split", date="2024-03-01", party="4001",
                                rin=parent.code, sizes=[4_000, 6_000]))
    assert daughters == [RinBlock(KEY, 1, 4_000), RinBlock(KEY, 4_001, 10_000)]
    [event] = p.collect_events()
    assert isinstance(event, Party.Split) and event.parent == parent
    assert p.split_cuts == {"2024400140001" "00001": [4_001]}
