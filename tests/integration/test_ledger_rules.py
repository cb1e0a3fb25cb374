"""Every write-side rule applied through the `Ledger`: a command that breaks it on purpose is
rejected with its rule id, citation, field and numbers, and a command that keeps it is applied.

Rules of §80.1425 (RIN-BATCH-UNIQUE), §80.1428, §80.1429, §80.1450, §80.1427 (retirement and
CMP-*) and the EMTS reason lists.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from markets import ok, register_all

from ledger import Ledger, Result

PARTIES = [
    ("1001", ["producer"], ["20001"]),
    ("1002", ["producer"], ["20011"]),
    ("2001", ["blender"], []),
    ("3001", ["obligated_party"], []),
    ("4001", ["producer", "obligated_party"], ["40001"]),
    ("5001", ["importer", "obligated_party"], ["50001"]),
    ("6001", ["small_refiner"], []),
    ("8001", ["producer"], ["80001"]),
]
# 1001's ethanol batch E0001: 10,000 gal × EV 1.0 = 10,000 gallon-RINs, RR 10, D6, K=1
ETHANOL = "12024100120001E0001106" "00000001" "00010000"
# 1002's biodiesel batch B0001: 40,000 gal × EV 1.5 = 60,000 gallon-RINs, RR 15, D4, K=1
BIODIESEL = "12024100220011B0001154" "00000001" "00060000"


def refused(
    ledger: Ledger, cmd: dict[str, Any], rule_id: str, citation: str, field: str, message: str
) -> None:
    """Apply `cmd`, which must be rejected under `rule_id` with exactly this message."""
    before = ledger.position()
    result = ledger.apply(cmd)
    assert result.status == "rejected"
    assert result.rule == rule_id
    assert result.citation == citation
    assert result.field == field
    assert result.error == f"{citation}: {message}"
    assert ledger.position() == before, "a rejection stores nothing"


def rins(d_code: int, k: int, quantity: int, vintage: int = 2024) -> dict[str, int]:
    return {"d_code": d_code, "vintage": vintage, "k": k, "quantity": quantity}


def generate(
    ledger: Ledger, party: str, facility: str, batch: str, fuel: str, d_code: int, volume: int,
    on: str = "2024-01-31",
) -> Result:
    return ok(ledger, type="generate", date=on, party=party, facility=facility, batch=batch,
              fuel=fuel, d_code=d_code, volume=volume)


def transfer(ledger: Ledger, seller: str, buyer: str, selector: dict[str, Any], on: str,
             volume: int | None = None) -> dict[str, Any]:
    cmd: dict[str, Any] = {"type": "transfer", "date": on, "from": seller, "to": buyer,
                           "rins": selector}
    if volume is not None:
        cmd["volume"] = volume
    return cmd


def separate(party: str, reason: str, selector: dict[str, Any], on: str = "2024-02-10",
             **extra: Any) -> dict[str, Any]:
    return {"type": "separate", "date": on, "party": party, "reason": reason, "rins": selector,
            **extra}


def retire(party: str, reason: str, selector: dict[str, Any], on: str = "2025-01-15",
           **extra: Any) -> dict[str, Any]:
    return {"type": "retire", "date": on, "party": party, "reason": reason, "rins": selector,
            **extra}


def held(ledger: Ledger, party: str) -> dict[tuple[int, int, int], int]:
    return ledger.party(party).holdings.totals()


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    """Registered parties, and two generated batches: 10,000 D6 (1001) and 60,000 D4 (1002)."""
    with Ledger(tmp_path) as book:
        register_all(book, PARTIES)
        assert generate(book, "1001", "20001", "E0001", "ethanol", 6, 10_000).rin == ETHANOL
        assert generate(book, "1002", "20011", "B0001", "biodiesel", 4, 40_000).rin == BIODIESEL
        yield book


def give_blender(ledger: Ledger, quantity: int = 10_000, volume: int = 10_000) -> None:
    """1001 → 2001: D6 K=1 gallon-RINs with their ethanol on 5 Feb 2024."""
    ok(ledger, **transfer(ledger, "1001", "2001", rins(6, 1, quantity), "2024-02-05", volume))


# --- §80.1425(e): batch numbers ----------------------------------------------------------------

def test_rin_batch_unique(ledger: Ledger) -> None:
    cmd = {"type": "generate", "date": "2024-02-29", "party": "1001", "facility": "20001",
           "batch": "E0001", "fuel": "ethanol", "d_code": 6, "volume": 500}
    refused(ledger, cmd, "RIN-BATCH-UNIQUE", "§80.1425(e)", "batch",
            "batch E0001 was already used in 2024")
    ok(ledger, **{**cmd, "batch": "E0002"})
    # a new year starts a new set of batch numbers
    ok(ledger, **{**cmd, "date": "2025-01-31"})


def test_malformed_code_in_a_command_cites_its_field(ledger: Ledger) -> None:
    cmd = {"type": "split", "date": "2024-02-01", "party": "1001", "rin": "9" + ETHANOL[1:],
           "sizes": [1, 9_999]}
    refused(ledger, cmd, "RIN-K", "§80.1425(a)", "rin.K", "K must be 1 or 2, got '9'")


# --- §80.1450: registration ---------------------------------------------------------------------

def test_reg_roles(ledger: Ledger) -> None:
    cmd = {"type": "register_party", "party": "9001", "name": "X", "roles": ["wizard", "blender"]}
    refused(ledger, cmd, "REG-ROLES", "§80.1450", "roles",
            "unknown role(s) wizard; known: blender, broker, exporter, foreign_producer, importer, "
            "obligated_party, producer, qap_auditor, refiner, regulator, rin_owner, small_refiner")
    ok(ledger, **{**cmd, "roles": ["blender"]})


def test_reg_duplicate(ledger: Ledger) -> None:
    cmd = {"type": "register_party", "party": "1001", "name": "Again", "roles": ["blender"]}
    refused(ledger, cmd, "REG-DUPLICATE", "§80.1450", "party", "party 1001 is already registered")
    ok(ledger, **{**cmd, "party": "1003"})


def test_reg_unregistered_buyer_and_generator(ledger: Ledger) -> None:
    refused(ledger, transfer(ledger, "1001", "9999", rins(6, 1, 100), "2024-02-05", 100),
            "REG-UNREGISTERED", "§80.1428(b)(2)", "to", "party 9999 is not registered")
    refused(ledger, {"type": "generate", "date": "2024-01-31", "party": "9998",
                     "facility": "20001", "batch": "00001", "fuel": "ethanol", "d_code": 6,
                     "volume": 100},
            "REG-UNREGISTERED", "§80.1428(b)(2)", "party", "party 9998 is not registered")
    ok(ledger, **transfer(ledger, "1001", "2001", rins(6, 1, 100), "2024-02-05", 100))


def test_reg_generator_role_and_facility(ledger: Ledger) -> None:
    cmd = {"type": "generate", "date": "2024-02-29", "party": "2001", "facility": "20001",
           "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 100}
    refused(ledger, cmd, "REG-GENERATOR", "§80.1450(b)", "party",
            "party 2001 is registered as blender, not as a producer or importer")
    refused(ledger, {**cmd, "party": "1001", "facility": "20002"}, "REG-GENERATOR",
            "§80.1450(b)", "facility",
            "facility 20002 is not registered to party 1001 (registered: 20001)")
    ok(ledger, **{**cmd, "party": "1001"})


# --- §80.1428(a): assigned RINs move with fuel ---------------------------------------------------

def test_assigned_with_fuel_k1_transfer_without_volume(ledger: Ledger) -> None:
    refused(ledger, transfer(ledger, "1001", "2001", rins(6, 1, 1_000), "2024-02-05"),
            "ASSIGNED-WITH-FUEL", "§80.1428(a)(3)", "volume",
            "1,000 assigned gallon-RINs transferred without a volume of renewable fuel")
    give_blender(ledger, 1_000, 1_000)
    assert held(ledger, "2001") == {(6, 2024, 1): 1_000}
    assert held(ledger, "1001") == {(6, 2024, 1): 9_000}  # 10,000 − 1,000


def test_assigned_per_gallon(ledger: Ledger) -> None:
    refused(ledger, transfer(ledger, "1001", "2001", rins(6, 1, 3_000), "2024-02-05", 1_000),
            "ASSIGNED-PER-GALLON", "§80.1428(a)(4)", "volume",
            "3,000 assigned gallon-RINs with 1,000 gallons is more than 2.5 per gallon")
    # 2,500 = 2.5 × 1,000: exactly at the limit
    ok(ledger, **transfer(ledger, "1001", "2001", rins(6, 1, 2_500), "2024-02-05", 1_000))
    # biodiesel: 60,000 RINs with 24,000 gal = 2.5 × 24,000 → allowed; with 23,999 it is not
    refused(ledger, transfer(ledger, "1002", "2001", rins(4, 1, 60_000), "2024-02-05", 23_999),
            "ASSIGNED-PER-GALLON", "§80.1428(a)(4)", "volume",
            "60,000 assigned gallon-RINs with 23,999 gallons is more than 2.5 per gallon")
    ok(ledger, **transfer(ledger, "1002", "2001", rins(4, 1, 60_000), "2024-02-05", 24_000))


def test_separated_rins_transfer_without_fuel(ledger: Ledger) -> None:
    give_blender(ledger)
    ok(ledger, **separate("2001", "blending", rins(6, 1, 10_000), volume=10_000))
    ok(ledger, **transfer(ledger, "2001", "3001", rins(6, 2, 4_000), "2024-02-11"))
    ok(ledger, **transfer(ledger, "3001", "1002", rins(6, 2, 4_000), "2024-02-12"))
    assert held(ledger, "1002")[(6, 2024, 2)] == 4_000


def test_fuel_not_owned(ledger: Ledger) -> None:
    fuel = {"type": "transfer_fuel", "date": "2024-02-01", "from": "1001", "to": "2001"}
    refused(ledger, {**fuel, "volume": 10_001}, "FUEL-NOT-OWNED", "§80.1428(a)(3)", "volume",
            "party 1001 delivers 10,001 gallons but owns 10,000 movable on 2024-02-01")
    ok(ledger, **{**fuel, "volume": 10_000})
    # with the fuel gone, even RINs at 2.5/gal cannot travel: no fuel is left to carry them
    refused(ledger, transfer(ledger, "1001", "2001", rins(6, 1, 100), "2024-02-02", 40),
            "FUEL-NOT-OWNED", "§80.1428(a)(3)", "volume",
            "party 1001 delivers 40 gallons but owns 0 movable on 2024-02-02")


def test_fuel_backdated_delivery_would_go_negative_later(ledger: Ledger) -> None:
    fuel = {"type": "transfer_fuel", "from": "1001", "to": "2001"}
    ok(ledger, **fuel, date="2024-02-05", volume=10_000)  # 10,000 − 10,000 = 0 from 5 Feb
    # on 3 Feb 1001 still owned 10,000, but selling 1 then leaves −1 on 5 Feb
    refused(ledger, {**fuel, "date": "2024-02-03", "volume": 1}, "FUEL-NOT-OWNED",
            "§80.1428(a)(3)", "volume",
            "party 1001 delivers 1 gallons but owns 0 movable on 2024-02-03")


def test_transfer_self(ledger: Ledger) -> None:
    refused(ledger, transfer(ledger, "1001", "1001", rins(6, 1, 100), "2024-02-05", 100),
            "TRANSFER-SELF", "§80.1428(a)(3)", "to", "party 1001 cannot transfer to itself")


def test_rins_not_held_more_than_owned(ledger: Ledger) -> None:
    refused(ledger, transfer(ledger, "1001", "2001", rins(6, 1, 10_001), "2024-02-05", 10_001),
            "RINS-NOT-HELD", "§80.1428", "rins.quantity",
            "10,001 gallon-RINs of D6 vintage 2024 K=1 asked, 10,000 held and movable on "
            "2024-02-05")
    refused(ledger, transfer(ledger, "2001", "3001", {"code": ETHANOL}, "2024-02-05"),
            "RINS-NOT-HELD", "§80.1428", "rins.code",
            f"10,000 gallon-RINs of {ETHANOL} asked, 0 held and movable on 2024-02-05")


def test_rins_not_held_before_they_were_acquired(ledger: Ledger) -> None:
    """No holding is negative on any date: RINs move only on or after the day they arrived."""
    give_blender(ledger)  # 2001 acquires 10,000 D6 on 5 Feb
    refused(ledger, transfer(ledger, "2001", "6001", rins(6, 1, 1_000), "2024-02-04", 1_000),
            "RINS-NOT-HELD", "§80.1428", "rins.quantity",
            "1,000 gallon-RINs of D6 vintage 2024 K=1 asked, 0 held and movable on 2024-02-04")
    # the seller gave them up on 5 Feb, so it cannot move them on 3 Feb either (that would
    # leave 1001 at −1,000 on 5 Feb)
    refused(ledger, transfer(ledger, "1001", "6001", rins(6, 1, 1_000), "2024-02-03", 1_000),
            "RINS-NOT-HELD", "§80.1428", "rins.quantity",
            "1,000 gallon-RINs of D6 vintage 2024 K=1 asked, 0 held and movable on 2024-02-03")
    # the generation date itself is fine for the producer, and the 5th for the buyer
    ok(ledger, **transfer(ledger, "2001", "6001", rins(6, 1, 1_000), "2024-02-05", 1_000))


def test_split_held(ledger: Ledger) -> None:
    refused(ledger, {"type": "split", "date": "2024-02-01", "party": "2001", "rin": ETHANOL,
                     "sizes": [4_000, 6_000]},
            "SPLIT-HELD", "§80.1428(d)", "rin",
            f"{ETHANOL} has 10,000 gallon-RINs, 0 of them held and movable")
    # 1001 holds it from 31 Jan; a split dated 30 Jan is before it existed
    refused(ledger, {"type": "split", "date": "2024-01-30", "party": "1001", "rin": ETHANOL,
                     "sizes": [4_000, 6_000]},
            "SPLIT-HELD", "§80.1428(d)", "rin",
            f"{ETHANOL} has 10,000 gallon-RINs, 0 of them held and movable")


def test_split_sum_and_daughters(ledger: Ledger) -> None:
    cmd = {"type": "split", "date": "2024-02-01", "party": "1001", "rin": ETHANOL}
    refused(ledger, {**cmd, "sizes": [4_000, 5_000]}, "SPLIT-SUM", "§80.1428(d)(2)", "sizes",
            "daughters of 9,000 gallon-RINs do not sum to the parent's 10,000")
    result = ok(ledger, **cmd, sizes=[4_000, 6_000])
    # daughters keep every field but S and E: 1-4,000 and 4,001-10,000 (4,000 + 6,000 = 10,000)
    prefix = ETHANOL[:22]
    assert result.rins == [f"{prefix}0000000100004000", f"{prefix}0000400100010000"]
    ok(ledger, **transfer(ledger, "1001", "2001", {"code": result.rins[1]}, "2024-02-05", 6_000))
    assert [b["rin"] for b in ledger.blocks("2001")] == [result.rins[1]]
    assert [b["rin"] for b in ledger.blocks("1001")] == [result.rins[0]]


# --- §80.1429: separation -----------------------------------------------------------------------

def test_sep_assigned_only(ledger: Ledger) -> None:
    give_blender(ledger)
    ok(ledger, **separate("2001", "blending", rins(6, 1, 4_000), volume=4_000))
    refused(ledger, separate("2001", "blending", rins(6, 2, 1_000), volume=1_000),
            "SEP-ASSIGNED-ONLY", "§80.1429(c)", "rins",
            "these RINs have K=2; only K=1 RINs are separated")
    # K goes 1 → 2 with the same serials: 4,000 K=2 and 6,000 K=1 (10,000 − 4,000)
    assert held(ledger, "2001") == {(6, 2024, 2): 4_000, (6, 2024, 1): 6_000}
    separated = [b["rin"] for b in ledger.blocks("2001") if b["k"] == 2]
    assert separated == ["2" + ETHANOL[1:22] + "0000000100004000"]
    refused(ledger, separate("2001", "blending", {"code": separated[0]}, volume=4_000),
            "SEP-ASSIGNED-ONLY", "§80.1429(c)", "rins",
            "these RINs have K=2; only K=1 RINs are separated")


def test_sep_volume(ledger: Ledger) -> None:
    give_blender(ledger)
    refused(ledger, separate("2001", "blending", rins(6, 1, 1_000)), "SEP-BLEND-PER-GALLON",
            "§80.1429(b)(2)", "volume", "separation for blending needs the volume of fuel")
    ok(ledger, **separate("2001", "blending", rins(6, 1, 1_000), volume=1_000))


def test_sep_obligated(ledger: Ledger) -> None:
    give_blender(ledger)
    refused(ledger, separate("2001", "obligated_party", rins(6, 1, 1_000), volume=1_000),
            "SEP-OBLIGATED", "§80.1429(b)(1)", "reason",
            "the party is registered as blender, not as an obligated party")
    ok(ledger, **transfer(ledger, "2001", "3001", rins(6, 1, 1_000), "2024-02-06", 1_000))
    ok(ledger, **separate("3001", "obligated_party", rins(6, 1, 1_000), volume=1_000))
    assert held(ledger, "3001") == {(6, 2024, 2): 1_000}


def test_sep_blend_per_gallon(ledger: Ledger) -> None:
    give_blender(ledger)
    refused(ledger, separate("2001", "blending", rins(6, 1, 10_000), volume=3_000),
            "SEP-BLEND-PER-GALLON", "§80.1429(b)(2)", "volume",
            "10,000 gallon-RINs separated for 3,000 gallons is more than 2.5 per gallon")
    # 7,500 = 2.5 × 3,000
    ok(ledger, **separate("2001", "blending", rins(6, 1, 7_500), volume=3_000))
    # 3,000 of 10,000 gallons blended: 7,000 left to blend
    assert ledger.party("2001").fuel.balance(date(2024, 2, 10)) == 7_000


def test_sep_export_per_gallon(ledger: Ledger) -> None:
    give_blender(ledger)
    refused(ledger, separate("2001", "export", rins(6, 1, 2_501), volume=1_000),
            "SEP-EXPORT-PER-GALLON", "§80.1429(b)(3)", "volume",
            "2,501 gallon-RINs separated for 1,000 gallons is more than 2.5 per gallon")
    ok(ledger, **separate("2001", "export", rins(6, 1, 2_500), volume=1_000))


def test_sep_biogas(ledger: Ledger) -> None:
    give_blender(ledger)
    refused(ledger, separate("2001", "biogas_electricity", rins(6, 1, 1_000), volume=1_000),
            "SEP-BIOGAS", "§80.1429(b)(5)", "rins", "these RINs were generated for ethanol")
    generate(ledger, "8001", "80001", "G0001", "biogas", 3, 5_000)
    ok(ledger, **separate("8001", "biogas_electricity", rins(3, 1, 5_000), volume=5_000))
    assert held(ledger, "8001") == {(3, 2024, 2): 5_000}


def test_sep_biodiesel_80_b100_vs_b20(ledger: Ledger) -> None:
    # 60,000 D4 gallon-RINs with 40,000 gal: 1.5 per gallon
    ok(ledger, **transfer(ledger, "1002", "2001", rins(4, 1, 60_000), "2024-02-05", 40_000))
    blend = separate("2001", "blending", rins(4, 1, 60_000), volume=40_000)
    refused(ledger, {**blend, "blend_percent": 100}, "SEP-BIODIESEL-80", "§80.1429(b)(6)",
            "blend_percent", "biodiesel blended at 100% is above 80 volume per cent")
    refused(ledger, {**blend, "blend_percent": "80.1"}, "SEP-BIODIESEL-80", "§80.1429(b)(6)",
            "blend_percent", "biodiesel blended at 80.1% is above 80 volume per cent")
    refused(ledger, blend, "SEP-BIODIESEL-80", "§80.1429(b)(6)", "blend_percent",
            "biodiesel RINs separated on blending need blend_percent")
    ok(ledger, **blend, blend_percent=20)
    assert held(ledger, "2001") == {(4, 2024, 2): 60_000}


def test_sep_biodiesel_80_does_not_bind_an_obligated_party(ledger: Ledger) -> None:
    """(b)(6)(i): the 80 % limit does not apply to biodiesel owned by obligated parties."""
    ok(ledger, **transfer(ledger, "1002", "3001", rins(4, 1, 60_000), "2024-02-05", 40_000))
    ok(ledger, **separate("3001", "blending", rins(4, 1, 60_000), volume=40_000,
                          blend_percent=100))


def test_sep_obligated_cap_b7_producer_separating_its_own_rins(ledger: Ledger) -> None:
    generate(ledger, "4001", "40001", "E0001", "ethanol", 6, 10_000)
    own = separate("4001", "obligated_party", rins(6, 1, 3_000), volume=3_000)
    refused(ledger, own, "SEP-OBLIGATED-CAP", "§80.1429(b)(7)", "reason",
            "no RVO reported for 2024, so the D6 limit is 0")
    ok(ledger, type="report_obligation", party="4001", year=2024,
       rvo={"CB": 100, "BBD": 400, "AB": 1_000, "RF": 5_000})
    # (b)(7)(v): D6 limit = RVO_RF − RVO_AB = 5,000 − 1,000 = 4,000
    ok(ledger, **own)
    refused(ledger, separate("4001", "obligated_party", rins(6, 1, 1_001), volume=1_001),
            "SEP-OBLIGATED-CAP", "§80.1429(b)(7)", "rins",
            "3,000 + 1,001 D6 gallon-RINs separated in 2024 exceeds the limit of 4,000")
    ok(ledger, **separate("4001", "obligated_party", rins(6, 1, 1_000), volume=1_000))
    assert held(ledger, "4001") == {(6, 2024, 2): 4_000, (6, 2024, 1): 6_000}


def test_sep_obligated_cap_b7_other_d_codes(ledger: Ledger) -> None:
    """(b)(7)(i)-(iv): D3 ≤ CB, D4 ≤ BBD, D5 ≤ AB − CB − BBD, D7 ≤ max(BBD, CB)."""
    ok(ledger, type="report_obligation", party="4001", year=2024,
       rvo={"CB": 100, "BBD": 400, "AB": 1_000, "RF": 5_000})
    generate(ledger, "4001", "40001", "R0007", "renewable_diesel", 7, 1_000)  # × 1.7 = 1,700
    # D7 limit = max(400, 100) = 400
    refused(ledger, separate("4001", "obligated_party", rins(7, 1, 401), volume=401),
            "SEP-OBLIGATED-CAP", "§80.1429(b)(7)", "rins",
            "0 + 401 D7 gallon-RINs separated in 2024 exceeds the limit of 400")
    ok(ledger, **separate("4001", "obligated_party", rins(7, 1, 400), volume=400))


def test_sep_obligated_cap_does_not_bind_rins_bought_from_others(ledger: Ledger) -> None:
    ok(ledger, **transfer(ledger, "1001", "3001", rins(6, 1, 10_000), "2024-02-05", 10_000))
    ok(ledger, **separate("3001", "obligated_party", rins(6, 1, 10_000), volume=10_000))


def test_sep_importer_cap_b9(ledger: Ledger) -> None:
    ok(ledger, **transfer(ledger, "1001", "5001", rins(6, 1, 10_000), "2024-02-05", 10_000))
    ok(ledger, type="report_obligation", party="5001", year=2024,
       rvo={"CB": 0, "BBD": 0, "AB": 500, "RF": 2_000})
    # (b)(9)(v): D6 limit = RVO_RF − RVO_AB = 2,000 − 500 = 1,500
    refused(ledger, separate("5001", "obligated_party", rins(6, 1, 1_501), volume=1_501),
            "SEP-IMPORTER-CAP", "§80.1429(b)(9)", "rins",
            "0 + 1,501 D6 gallon-RINs separated in 2024 exceeds the limit of 1,500")
    ok(ledger, **separate("5001", "obligated_party", rins(6, 1, 1_500), volume=1_500))
    refused(ledger, separate("5001", "obligated_party", rins(6, 1, 1), volume=1),
            "SEP-IMPORTER-CAP", "§80.1429(b)(9)", "rins",
            "1,500 + 1 D6 gallon-RINs separated in 2024 exceeds the limit of 1,500")


def test_sep_small_refiner(ledger: Ledger) -> None:
    give_blender(ledger)
    refused(ledger, separate("2001", "small_refiner", rins(6, 1, 1_000), volume=1_000),
            "SEP-SMALL-REFINER", "§80.1429(b)(8)", "reason",
            "the party is registered as blender")
    ok(ledger, **transfer(ledger, "2001", "6001", rins(6, 1, 2_000), "2024-02-06", 2_000))
    ok(ledger, **separate("6001", "small_refiner", rins(6, 1, 2_000), volume=2_000))
    assert held(ledger, "6001") == {(6, 2024, 2): 2_000}


def test_sep_replacement(ledger: Ledger) -> None:
    give_blender(ledger, 1_000, 1_000)
    refused(ledger, separate("2001", "replacement", rins(6, 1, 1_000)), "SEP-REPLACEMENT",
            "§80.1429(b)(10)", "rins", "these RINs were generated by 1001, not by 2001")
    ok(ledger, **separate("1001", "replacement", rins(6, 1, 9_000)))
    assert held(ledger, "1001") == {(6, 2024, 2): 9_000}


def test_emts_separation_reason(ledger: Ledger) -> None:
    give_blender(ledger)
    refused(ledger, separate("2001", "because", rins(6, 1, 1_000), volume=1_000),
            "EMTS-SEPARATION-REASON", "§80.1429(b)", "reason",
            "unknown separation reason 'because'; known: obligated_party, blending, neat_use, "
            "biogas_electricity, upstream_delegation, export, heating_oil_jet, nonroad, "
            "designated_heating_oil_jet, delayed, small_refiner, replacement")
    ok(ledger, **separate("2001", 20, rins(6, 1, 1_000), volume=1_000))  # EMTS 20 = blending


# --- §80.1427 and the EMTS retirement reasons: retirement -------------------------------------

def obligated_with_k2(ledger: Ledger, d_code: int = 6, quantity: int = 10_000,
                      vintage: int = 2024) -> None:
    """3001 buys K=1 RINs with fuel and separates them as an obligated party."""
    day = f"{vintage}-07-05"
    ok(ledger, **transfer(ledger, "1001" if d_code != 4 else "1002", "3001",
                          rins(d_code, 1, quantity, vintage), day, quantity))
    ok(ledger, **separate("3001", "obligated_party", rins(d_code, 1, quantity, vintage),
                          on=day, volume=quantity))


def test_retire_year(ledger: Ledger) -> None:
    obligated_with_k2(ledger)
    refused(ledger, retire("3001", "compliance", rins(6, 2, 100)), "RETIRE-YEAR",
            "§80.1427(a)(1)", "compliance_year", "retirement for compliance needs compliance_year")
    refused(ledger, retire("3001", "spill", rins(6, 2, 100), compliance_year=2024),
            "RETIRE-YEAR", "§80.1427(a)(1)", "compliance_year",
            "a retirement for spill takes no compliance_year or category")
    refused(ledger, retire("3001", "spill", rins(6, 2, 100), category="CB"),
            "RETIRE-YEAR", "§80.1427(a)(1)", "category",
            "a retirement for spill takes no compliance_year or category")
    ok(ledger, **retire("3001", "spill", rins(6, 2, 100)))
    ok(ledger, **retire("3001", "compliance", rins(6, 2, 100), compliance_year=2024))
    assert held(ledger, "3001") == {(6, 2024, 2): 9_800}  # 10,000 − 100 − 100


def test_retire_obligated(ledger: Ledger) -> None:
    give_blender(ledger)
    ok(ledger, **separate("2001", "blending", rins(6, 1, 1_000), volume=1_000))
    refused(ledger, retire("2001", "compliance", rins(6, 2, 1_000), compliance_year=2024),
            "RETIRE-OBLIGATED", "§80.1427(a)(1)", "party",
            "party 2001 is registered as blender, not as an obligated party or exporter")
    ok(ledger, **retire("2001", "contaminated", rins(6, 2, 1_000)))  # anyone may retire so


def test_emts_retirement_reason(ledger: Ledger) -> None:
    obligated_with_k2(ledger)
    refused(ledger, retire("3001", "lost", rins(6, 2, 100)), "EMTS-RETIREMENT-REASON",
            "§80.1434(a)", "reason",
            "unknown retirement reason 'lost'; known: spill, contaminated, import_correction, "
            "ocean_vessel, invalid_rin, volume_error, enforcement, compliance, "
            "non_qualifying_use, delayed_rin, remedial_invalid, remedial_compliance")
    ok(ledger, **retire("3001", 10, rins(6, 2, 100)))  # EMTS 10 = spill


def test_cmp_k2_compliance_retirement_of_assigned_rins(ledger: Ledger) -> None:
    ok(ledger, **transfer(ledger, "1001", "3001", rins(6, 1, 10_000), "2024-02-05", 10_000))
    refused(ledger, retire("3001", "compliance", rins(6, 1, 1_000), compliance_year=2024),
            "CMP-K2", "§80.1427(a)(8)", "k",
            "K is 1; only separated RINs (K=2) are retired for compliance")
    ok(ledger, **separate("3001", "obligated_party", rins(6, 1, 1_000), volume=1_000))
    ok(ledger, **retire("3001", "compliance", rins(6, 2, 1_000), compliance_year=2024))
    assert held(ledger, "3001") == {(6, 2024, 1): 9_000}


def test_cmp_vintage_expired_and_future(ledger: Ledger) -> None:
    generate(ledger, "1001", "20001", "E2022", "ethanol", 6, 1_000, on="2022-06-30")
    generate(ledger, "1001", "20001", "E2023", "ethanol", 6, 1_000, on="2023-06-30")
    obligated_with_k2(ledger, quantity=1_000, vintage=2022)
    obligated_with_k2(ledger, quantity=1_000, vintage=2023)
    obligated_with_k2(ledger, quantity=1_000, vintage=2024)
    refused(ledger, retire("3001", "compliance", rins(6, 2, 1_000, 2022), compliance_year=2024),
            "CMP-VINTAGE", "§80.1427(a)(6)(i)", "vintage",
            "a 2022 RIN is expired for compliance year 2024 (§80.1428(c)); only 2023 and 2024 "
            "RINs count")
    refused(ledger, retire("3001", "compliance", rins(6, 2, 1_000, 2024), compliance_year=2023),
            "CMP-VINTAGE", "§80.1427(a)(6)(i)", "vintage",
            "a 2024 RIN cannot count for compliance year 2023, before it was made")
    ok(ledger, **retire("3001", "compliance", rins(6, 2, 1_000, 2023), compliance_year=2024))
    ok(ledger, **retire("3001", "compliance", rins(6, 2, 1_000, 2022), compliance_year=2023))


def test_cmp_d7_designation(ledger: Ledger) -> None:
    # 1,000 gal renewable diesel × EV 1.7 = 1,700 D7 gallon-RINs
    generate(ledger, "1001", "20001", "R0007", "renewable_diesel", 7, 1_000)
    obligated_with_k2(ledger, d_code=7, quantity=1_700)
    d7 = rins(7, 2, 1_000)
    refused(ledger, retire("3001", "compliance", d7, compliance_year=2024),
            "CMP-D7-DESIGNATION", "§80.1427(a)(3)(ii)", "category",
            "a D7 RIN must be designated to CB or BBD, got None")
    obligated_with_k2(ledger, d_code=6, quantity=1_000)
    refused(ledger, retire("3001", "compliance", rins(6, 2, 1_000), compliance_year=2024,
                           category="CB"),
            "CMP-D7-DESIGNATION", "§80.1427(a)(3)(ii)", "category",
            "only D7 RINs take a CB/BBD designation; this is a D6 RIN designated 'CB'")
    ok(ledger, **retire("3001", "compliance", d7, compliance_year=2024, category="CB"))
    ok(ledger, **retire("3001", "compliance", rins(7, 2, 700), compliance_year=2024,
                        category="BBD"))
