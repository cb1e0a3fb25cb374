"""Acceptance cases written from the text of §80.1429, §80.1427 and §80.1407 (reference.md §4),
paragraph by paragraph, each a small market driven through the public `Ledger` API with
transaction lines as dicts. Every expected number is computed by hand from the text in a comment;
none is copied from the ledger's output.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ledger import Ledger
from projections import Views

# Who is who. 1001 makes every kind of fuel; 4001 and 5001 make (or import) their own.
PARTIES: list[tuple[str, list[str], list[str]]] = [
    ("1001", ["producer"], ["20001"]),
    ("2001", ["blender"], []),
    ("3001", ["obligated_party", "refiner"], []),  # a refiner: (b)(9) does not reach it
    ("4001", ["producer", "obligated_party", "refiner"], ["40001"]),  # refiner making its own fuel
    ("5001", ["importer", "obligated_party"], ["50001"]),  # obligated only by importing
    ("5002", ["obligated_party", "blender"], []),  # obligated only by adding blendstocks
    ("5003", ["obligated_party", "refiner"], []),  # states each year's basis in its report
    ("6001", ["small_refiner"], []),
    ("6002", ["small_refiner", "obligated_party"], []),  # (b)(8)(ii): otherwise obligated
    ("7001", ["exporter"], []),
]
#: fuel and EV per D code as 1001 and 4001 make it (§80.1415: ethanol 1.0, biodiesel 1.5,
#: renewable diesel 1.7); cellulosic ethanol is D3, sugarcane ethanol D5, corn ethanol D6
FUEL = {3: "ethanol", 4: "biodiesel", 5: "ethanol", 6: "ethanol", 7: "renewable_diesel"}
RVO_2024 = {"CB": 100, "BBD": 400, "AB": 1_000, "RF": 5_000}


def apply(ledger: Ledger, **cmd: Any) -> None:
    result = ledger.apply(cmd)
    assert result.status == "applied", result.error


def refused(ledger: Ledger, rule: str, citation: str, **cmd: Any) -> str:
    """The line is rejected under `rule`, its message starting with `citation`."""
    result = ledger.apply(cmd)
    assert result.status == "rejected", f"applied, but {citation} forbids it"
    assert (result.rule, result.citation) == (rule, citation), result.error
    assert result.error is not None and result.error.startswith(f"{citation}: ")
    return result.error


def rins(d_code: int, quantity: int, vintage: int = 2024, k: int = 1,
         company: str | None = None) -> dict[str, Any]:
    selector: dict[str, Any] = {"d_code": d_code, "vintage": vintage, "k": k,
                                "quantity": quantity}
    if company:
        selector["company"] = company
    return selector


def gallons_for(quantity: int) -> int:
    """The fewest whole gallons that carry `quantity` assigned RINs at 2.5 a gallon."""
    return -(-quantity * 2 // 5)


def make(ledger: Ledger, party: str, facility: str, d_code: int, gallons: int,
         year: int = 2024) -> None:
    batch = f"{'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[year - 2005]}{d_code}{party[-1]}{gallons % 100:02d}"
    apply(ledger, type="generate", date=f"{year}-01-31", party=party, facility=facility,
          batch=batch, fuel=FUEL[d_code], d_code=d_code, volume=gallons)


def buy_assigned(ledger: Ledger, buyer: str, d_code: int, quantity: int,
                 vintage: int = 2024) -> int:
    """`buyer` buys `quantity` assigned RINs from 1001 with the fewest gallons allowed."""
    volume = gallons_for(quantity)
    apply(ledger, type="transfer", date=f"{vintage}-02-05", to=buyer, volume=volume,
          rins=rins(d_code, quantity, vintage), **{"from": "1001"})
    return volume


def separate(party: str, reason: str | int, selector: dict[str, Any], volume: int | None,
             on: str = "2024-03-10", **extra: Any) -> dict[str, Any]:
    cmd: dict[str, Any] = {"type": "separate", "date": on, "party": party, "reason": reason,
                           "rins": selector, **extra}
    if volume is not None:
        cmd["volume"] = volume
    return cmd


def report(ledger: Ledger, party: str, year: int, rvo: dict[str, int] | None = None,
           **extra: Any) -> None:
    cmd: dict[str, Any] = {"type": "report_obligation", "party": party, "year": year, **extra}
    if rvo is not None:
        cmd["rvo"] = rvo
    apply(ledger, **cmd)


def own_separated_rins(ledger: Ledger, party: str, d_code: int, quantity: int,
                       vintage: int) -> None:
    """`party` (an obligated refiner, so no (b)(7)/(b)(9) limit on bought RINs) buys assigned
    RINs with fuel and separates them under (b)(1): it then owns `quantity` K=2 RINs."""
    volume = buy_assigned(ledger, party, d_code, quantity, vintage)
    apply(ledger, **separate(party, "obligated_party", rins(d_code, quantity, vintage), volume,
                             on=f"{vintage}-02-06"))


def retire(ledger: Ledger, party: str, year: int, d_code: int, quantity: int, vintage: int,
           category: str | None = None, **extra: Any) -> dict[str, Any]:
    cmd: dict[str, Any] = {"type": "retire", "date": f"{year + 1}-02-15", "party": party,
                           "reason": "compliance", "compliance_year": year,
                           "rins": rins(d_code, quantity, vintage, k=2), **extra}
    if category:
        cmd["category"] = category
    return cmd


def positions(ledger: Ledger, year: int, party: str) -> dict[str, dict[str, Any]]:
    return {row["category"]: row for row in Views(ledger).compliance(year, party)}


def summary(row: dict[str, Any]) -> tuple[int, int, int, str]:
    return row["rvo"], row["applied"], row["deficit"], row["status"]


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    """The parties, and 1001's fuel: 100,000 gal of each D code's fuel in 2022-2024 (D3, D5 and
    D6 100,000 RINs each; D4 × 1.5 = 150,000; D7 × 1.7 = 170,000)."""
    with Ledger(tmp_path) as book:
        for party, roles, facilities in PARTIES:
            apply(book, type="register_party", party=party, name=f"Party {party}", roles=roles,
                  facilities=facilities)
        for year in (2022, 2023, 2024):
            for d_code in FUEL:
                make(book, "1001", "20001", d_code, 100_000, year)
        yield book


# === §80.1429(b)(7): obligated party, RINs it generated for fuel it has not blended ===========

#: (b)(7)(i)-(v) with RVO_2024: D3 = CB = 100; D4 = BBD = 400; D7 = max(BBD 400, CB 100) = 400;
#: D5 = AB − CB − BBD = 1,000 − 100 − 400 = 500; D6 = RF − AB = 5,000 − 1,000 = 4,000.
#: With CB 600 > BBD 400, (b)(7)(iii) D7 = max(400, 600) = 600.
B7_LIMITS = [
    (3, RVO_2024, 100), (4, RVO_2024, 400), (7, RVO_2024, 400), (5, RVO_2024, 500),
    (6, RVO_2024, 4_000), (7, {"CB": 600, "BBD": 400, "AB": 1_500, "RF": 5_000}, 600),
]


@pytest.mark.parametrize(("d_code", "rvo", "limit"), B7_LIMITS)
def test_b7_limit_per_d_code_on_own_rins(
    ledger: Ledger, d_code: int, rvo: dict[str, int], limit: int
) -> None:
    make(ledger, "4001", "40001", d_code, 10_000)
    report(ledger, "4001", 2024, rvo)
    # two separations adding up to the limit pass: "gallon-RINs separated in a calendar year"
    apply(ledger, **separate("4001", "obligated_party", rins(d_code, limit - 1), limit - 1))
    apply(ledger, **separate("4001", 10, rins(d_code, 1), 1, on="2024-11-30"))
    error = refused(ledger, "SEP-OBLIGATED-CAP", "§80.1429(b)(7)",
                    **separate("4001", "obligated_party", rins(d_code, 1), 1, on="2024-12-31"))
    assert f"{limit:,}" in error


#: 2023 RVOs {CB 50, BBD 100, AB 300, RF 1,000}, nothing retired: each deficit is carried
#: ((b)(1)(i): none was carried into 2023), so §80.1407 gives RVO_2024 = RVO_2024 + D_2023:
#: CB 150, BBD 500, AB 1,300, RF 6,000. (b)(7): D3 150; D4 500; D7 max(500, 150) = 500;
#: D5 1,300 − 150 − 500 = 650; D6 6,000 − 1,300 = 4,700.
@pytest.mark.parametrize(("d_code", "limit"), [(3, 150), (4, 500), (7, 500), (5, 650),
                                               (6, 4_700)])
def test_b7_limit_uses_the_rvo_with_the_deficit_carried_in(
    ledger: Ledger, d_code: int, limit: int
) -> None:
    make(ledger, "4001", "40001", d_code, 10_000)
    report(ledger, "4001", 2023, {"CB": 50, "BBD": 100, "AB": 300, "RF": 1_000})
    report(ledger, "4001", 2024, RVO_2024)
    assert {c: r["rvo"] for c, r in positions(ledger, 2024, "4001").items()} == {
        "CB": 150, "BBD": 500, "AB": 1_300, "RF": 6_000}
    apply(ledger, **separate("4001", "obligated_party", rins(d_code, limit), limit))
    refused(ledger, "SEP-OBLIGATED-CAP", "§80.1429(b)(7)",
            **separate("4001", "obligated_party", rins(d_code, 1), 1))


def test_b7_deficit_not_allowed_to_carry_does_not_raise_the_limit(ledger: Ledger) -> None:
    make(ledger, "4001", "40001", 6, 10_000)
    report(ledger, "4001", 2022, {"RF": 500})  # nothing retired: D = 500 carried into 2023
    report(ledger, "4001", 2023, {"RF": 1_000})  # RVO 1,500, nothing retired: a second
    # deficit running, which (b)(1)(i) does not let into 2024 (a violation, not a carryover)
    assert positions(ledger, 2023, "4001")["RF"]["status"] == "violation"
    report(ledger, "4001", 2024, RVO_2024)
    # RVO_RF,2024 = 5,000 (+ 0 carried): D6 limit 5,000 − 1,000 = 4,000
    apply(ledger, **separate("4001", "obligated_party", rins(6, 4_000), 4_000))
    refused(ledger, "SEP-OBLIGATED-CAP", "§80.1429(b)(7)",
            **separate("4001", "obligated_party", rins(6, 1), 1))


def test_b7_does_not_limit_rins_bought_with_fuel(ledger: Ledger) -> None:
    """(b)(7) limits "RINs that an obligated party generates"; RINs a refiner bought with fuel
    are separated under (b)(1) without limit (a refiner is not a (b)(9) party)."""
    make(ledger, "4001", "40001", 6, 10_000)
    report(ledger, "4001", 2024, RVO_2024)  # D6 limit 4,000
    volume = buy_assigned(ledger, "4001", 6, 6_000)
    apply(ledger, **separate("4001", "obligated_party", rins(6, 6_000, company="1001"), volume))
    # own RINs: 0 + 4,000 ≤ 4,000; 4,000 + 1 > 4,000
    apply(ledger, **separate("4001", "obligated_party", rins(6, 4_000, company="4001"), 4_000))
    refused(ledger, "SEP-OBLIGATED-CAP", "§80.1429(b)(7)",
            **separate("4001", "obligated_party", rins(6, 1, company="4001"), 1))


def test_b7_does_not_count_own_rins_separated_on_blending(ledger: Ledger) -> None:
    """(b)(7) limits RINs for fuel "that has not been blended"; (b)(2) blending is not such."""
    make(ledger, "4001", "40001", 6, 20_000)  # 20,000 own D6
    report(ledger, "4001", 2024, RVO_2024)  # D6 limit 4,000
    apply(ledger, **separate("4001", "blending", rins(6, 10_000), 4_000))  # 2.5 a gallon
    apply(ledger, **separate("4001", "obligated_party", rins(6, 4_000), 4_000))
    refused(ledger, "SEP-OBLIGATED-CAP", "§80.1429(b)(7)",
            **separate("4001", "obligated_party", rins(6, 1), 1))


def test_b7_limit_from_an_rvo_computed_under_s1407(ledger: Ledger) -> None:
    make(ledger, "4001", "40001", 6, 100_000)
    # §80.1407 with the 2024 standards on GV + DV = 800,000 + 200,000 = 1,000,000 gal:
    # AB 3.79 % = 37,900; RF 12.50 % = 125,000; D6 limit 125,000 − 37,900 = 87,100
    report(ledger, "4001", 2024, gasoline_volume=800_000, diesel_volume=200_000)
    apply(ledger, **separate("4001", "obligated_party", rins(6, 87_100), 87_100))
    refused(ledger, "SEP-OBLIGATED-CAP", "§80.1429(b)(7)",
            **separate("4001", "obligated_party", rins(6, 1), 1))


# === §80.1429(b)(9): parties obligated solely by importing, blendstocks or §80.1408 ===========

def test_b9_counts_own_and_bought_rins_together(ledger: Ledger) -> None:
    make(ledger, "5001", "50001", 6, 1_000)  # 1,000 own D6 (imported, RINs by the importer)
    volume = buy_assigned(ledger, "5001", 6, 5_000)
    report(ledger, "5001", 2024, RVO_2024)  # (b)(9)(v) D6 limit 5,000 − 1,000 = 4,000
    apply(ledger, **separate("5001", "obligated_party", rins(6, 3_000, company="1001"), volume))
    apply(ledger, **separate("5001", "obligated_party", rins(6, 1_000, company="5001"), 1_000))
    # 3,000 + 1,000 = 4,000 separated; one more is over: (b)(7) on own RINs (1,000) is not the
    # limit that binds, (b)(9) on all of them is
    refused(ledger, "SEP-IMPORTER-CAP", "§80.1429(b)(9)",
            **separate("5001", "obligated_party", rins(6, 1, company="1001"), 1))


def test_b9_excepts_b2_to_b5_separations(ledger: Ledger) -> None:
    """(b)(9) "Except as provided in paragraphs (b)(2) through (5)": blending, export and neat
    use do not use up the limit."""
    volume = buy_assigned(ledger, "5001", 6, 10_000)  # 4,000 gal
    report(ledger, "5001", 2024, RVO_2024)  # D6 limit 4,000
    apply(ledger, **separate("5001", "blending", rins(6, 2_500), 1_000))
    apply(ledger, **separate("5001", "export", rins(6, 2_500), 1_000))
    apply(ledger, **separate("5001", "neat_use", rins(6, 1_000), 1_000))
    assert volume == 4_000
    apply(ledger, type="transfer", date="2024-02-06", to="5001", volume=2_000,
          rins=rins(6, 5_000), **{"from": "1001"})
    apply(ledger, **separate("5001", "obligated_party", rins(6, 4_000), 1_600))
    refused(ledger, "SEP-IMPORTER-CAP", "§80.1429(b)(9)",
            **separate("5001", "obligated_party", rins(6, 1), 1))


@pytest.mark.parametrize(("party", "basis", "capped"), [
    ("5002", None, True),  # obligated by blendstocks only (roles)
    ("5003", ["importing"], True),  # a refiner whose RVO this year arises from imports only
    ("5003", ["blendstocks"], True),
    ("5003", ["s80_1408"], True),  # an RVO under §80.1408
    ("5003", ["refining", "importing"], False),  # not "solely": no (b)(9) limit
    ("3001", None, False),  # a refiner
])
def test_b9_reaches_blendstock_and_s1408_parties_only_when_solely(
    ledger: Ledger, party: str, basis: list[str] | None, capped: bool
) -> None:
    volume = buy_assigned(ledger, party, 6, 5_000)
    report(ledger, party, 2024, RVO_2024, **({"basis": basis} if basis else {}))
    # (b)(9)(v) D6 limit 4,000 on bought RINs if capped, none if not (bought: no (b)(7) limit)
    apply(ledger, **separate(party, "obligated_party", rins(6, 4_000), volume))
    cmd = separate(party, "obligated_party", rins(6, 1), 1)
    if capped:
        refused(ledger, "SEP-IMPORTER-CAP", "§80.1429(b)(9)", **cmd)
    else:
        apply(ledger, **cmd)


def test_b9_limit_per_d_code_with_deficit_carried_in(ledger: Ledger) -> None:
    volume = buy_assigned(ledger, "5001", 4, 1_000)
    report(ledger, "5001", 2023, {"BBD": 100, "AB": 100, "RF": 100})  # nothing retired
    report(ledger, "5001", 2024, RVO_2024)
    # RVO_BBD,2024 = 400 + 100 = 500: (b)(9)(ii) D4 limit 500
    apply(ledger, **separate("5001", "obligated_party", rins(4, 500), volume))
    refused(ledger, "SEP-IMPORTER-CAP", "§80.1429(b)(9)",
            **separate("5001", "obligated_party", rins(4, 1), 1))


def test_b9_counts_b10_separations(ledger: Ledger) -> None:
    """(b)(10) is not among the exceptions (b)(2)-(5), (8) of (b)(9)."""
    make(ledger, "5001", "50001", 6, 1_000)
    volume = buy_assigned(ledger, "5001", 6, 5_000)
    report(ledger, "5001", 2024, RVO_2024)  # D6 limit 4,000
    apply(ledger, **separate("5001", "replacement", rins(6, 1_000, company="5001"), None))
    apply(ledger, **separate("5001", "obligated_party", rins(6, 3_000, company="1001"), volume))
    refused(ledger, "SEP-IMPORTER-CAP", "§80.1429(b)(9)",  # 1,000 + 3,000 + 1 > 4,000
            **separate("5001", "obligated_party", rins(6, 1, company="1001"), 1))


# === §80.1429(b)(1)-(b)(5): who separates, and at most 2.5 RINs a gallon =====================

def test_b1_only_an_obligated_party_owning_the_volume(ledger: Ledger) -> None:
    volume = buy_assigned(ledger, "2001", 6, 10_000)  # a blender, 4,000 gal
    refused(ledger, "SEP-OBLIGATED", "§80.1429(b)(1)",
            **separate("2001", "obligated_party", rins(6, 10_000), volume))
    buy_assigned(ledger, "3001", 6, 10_000)  # 4,000 gal
    # the RINs assigned to 3,999 gal are at most 2.5 × 3,999 = 9,997.5 < 10,000
    refused(ledger, "SEP-OBLIGATED-PER-GALLON", "§80.1429(b)(1)",
            **separate("3001", "obligated_party", rins(6, 10_000), 3_999))
    refused(ledger, "SEP-OBLIGATED-PER-GALLON", "§80.1429(b)(1)",
            **separate("3001", "obligated_party", rins(6, 10_000), None))
    apply(ledger, **separate("3001", "obligated_party", rins(6, 10_000), 4_000))


def test_b2_at_most_2_5_rins_per_gallon_blended(ledger: Ledger) -> None:
    buy_assigned(ledger, "2001", 6, 40_000)  # 16,000 gal
    # 25,000 over 10,000 gal = 2.5 exactly; then 15,000 over 5,999 gal > 2.5 × 5,999 = 14,997.5
    apply(ledger, **separate("2001", "blending", rins(6, 25_000), 10_000))
    refused(ledger, "SEP-BLEND-PER-GALLON", "§80.1429(b)(2)",
            **separate("2001", "blending", rins(6, 15_000), 5_999))
    refused(ledger, "SEP-BLEND-PER-GALLON", "§80.1429(b)(2)",
            **separate("2001", 20, rins(6, 15_000), None))
    apply(ledger, **separate("2001", 20, rins(6, 15_000), 6_000))


def test_b3_at_most_2_5_rins_per_gallon_exported(ledger: Ledger) -> None:
    buy_assigned(ledger, "7001", 6, 20_000)  # 8,000 gal
    refused(ledger, "SEP-EXPORT-PER-GALLON", "§80.1429(b)(3)",
            **separate("7001", "export", rins(6, 10_001), 4_000))  # 10,001 > 2.5 × 4,000
    apply(ledger, **separate("7001", 50, rins(6, 10_000), 4_000))


def test_b4_neat_use_bounded_by_the_volume(ledger: Ledger) -> None:
    buy_assigned(ledger, "2001", 6, 10_000)  # 4,000 gal
    refused(ledger, "SEP-NEAT-PER-GALLON", "§80.1429(b)(4)",
            **separate("2001", "neat_use", rins(6, 5_001), 2_000))
    apply(ledger, **separate("2001", "neat_use", rins(6, 5_000), 2_000))


def test_b5_only_rins_generated_for_biogas_or_electricity(ledger: Ledger) -> None:
    buy_assigned(ledger, "2001", 6, 1_000)
    refused(ledger, "SEP-BIOGAS", "§80.1429(b)(5)",
            **separate("2001", "biogas_electricity", rins(6, 1_000), 400))


def test_c_separated_rins_have_k_2(ledger: Ledger) -> None:
    volume = buy_assigned(ledger, "2001", 6, 1_000)
    apply(ledger, **separate("2001", "blending", rins(6, 1_000), volume))
    assert ledger.holdings("2001") == [
        {"party": "2001", "d_code": 6, "vintage": 2024, "k": 2, "gallon_rins": 1_000}]


# === §80.1429(b)(6): biodiesel RINs on (b)(2) only at 80 % or less ===========================

def _biodiesel(ledger: Ledger, party: str) -> int:
    return buy_assigned(ledger, party, 4, 15_000)  # 6,000 gal (1001's biodiesel, EV 1.5)


@pytest.mark.parametrize("reason", ["blending", 20, "upstream_delegation", 40,
                                    "heating_oil_jet", 60, "nonroad", 70])
def test_b6_biodiesel_above_80_percent_is_refused_on_b2(ledger: Ledger, reason: str | int) -> None:
    _biodiesel(ledger, "2001")
    refused(ledger, "SEP-BIODIESEL-80", "§80.1429(b)(6)",
            **separate("2001", reason, rins(4, 1_500), 1_000, blend_percent="80.1"))
    refused(ledger, "SEP-BIODIESEL-80", "§80.1429(b)(6)",
            **separate("2001", reason, rins(4, 1_500), 1_000))  # the concentration unknown
    apply(ledger, **separate("2001", reason, rins(4, 1_500), 1_000, blend_percent=80))


def test_b6_i_obligated_party_and_exports_are_excepted(ledger: Ledger) -> None:
    _biodiesel(ledger, "3001")
    apply(ledger, **separate("3001", "blending", rins(4, 1_500), 1_000, blend_percent=99))
    _biodiesel(ledger, "7001")
    apply(ledger, **separate("7001", "export", rins(4, 1_500), 1_000, blend_percent=100))


def test_b6_ii_neat_use_under_b4_is_excepted(ledger: Ledger) -> None:
    _biodiesel(ledger, "2001")
    apply(ledger, **separate("2001", "neat_use", rins(4, 1_500), 1_000, blend_percent=100))
    apply(ledger, **separate("2001", 30, rins(4, 1_500), 1_000))


def test_b6_binds_only_biodiesel(ledger: Ledger) -> None:
    buy_assigned(ledger, "2001", 7, 1_700)  # renewable diesel (non-ester), not biodiesel
    apply(ledger, **separate("2001", "blending", rins(7, 1_700), 680, blend_percent=95))


# === §80.1429(b)(8): small refiners separate only on blending or use ========================

def test_b8_small_refiner_separates_only_fuel_it_blends_or_uses(ledger: Ledger) -> None:
    buy_assigned(ledger, "6001", 6, 20_000)  # 8,000 gal
    apply(ledger, **separate("6001", "blending", rins(6, 2_500), 1_000))
    apply(ledger, **separate("6001", "neat_use", rins(6, 2_500), 1_000))
    apply(ledger, **separate("6001", "small_refiner", rins(6, 2_500), 1_000))
    refused(ledger, "SEP-SMALL-REFINER", "§80.1429(b)(8)",
            **separate("6001", "export", rins(6, 2_500), 1_000))
    refused(ledger, "SEP-SMALL-REFINER-PER-GALLON", "§80.1429(b)(8)",
            **separate("6001", "small_refiner", rins(6, 2_501), 1_000))
    refused(ledger, "SEP-SMALL-REFINER", "§80.1429(b)(8)",
            **separate("6001", "replacement", rins(6, 2_500), None))


def test_b8_ii_does_not_bind_a_small_refiner_otherwise_obligated(ledger: Ledger) -> None:
    volume = buy_assigned(ledger, "6002", 6, 2_500)
    apply(ledger, **separate("6002", "obligated_party", rins(6, 2_500), volume))
    buy_assigned(ledger, "2001", 6, 2_500)  # nor is (b)(8) a reason for others
    refused(ledger, "SEP-SMALL-REFINER", "§80.1429(b)(8)",
            **separate("2001", "small_refiner", rins(6, 2_500), 1_000))


# === §80.1429(b)(10): a producer separates its own RINs for replacement ======================

def test_b10_only_rins_the_party_generated(ledger: Ledger) -> None:
    apply(ledger, **separate("1001", "replacement", rins(6, 1_000), None))
    buy_assigned(ledger, "2001", 6, 1_000)
    refused(ledger, "SEP-REPLACEMENT", "§80.1429(b)(10)",
            **separate("2001", "replacement", rins(6, 1_000), None))


# === §80.1427(a)(2), (a)(3): which D codes count toward which RVO ===========================

RVO_EACH_100 = {"CB": 100, "BBD": 100, "AB": 100, "RF": 100}


@pytest.mark.parametrize(("d_code", "category", "counts"), [
    (3, None, {"CB", "AB", "RF"}),  # (a)(2)(i), (iii), (iv)
    (4, None, {"BBD", "AB", "RF"}),  # (a)(2)(ii), (iii), (iv)
    (5, None, {"AB", "RF"}),  # (a)(2)(iii), (iv)
    (6, None, {"RF"}),  # (a)(2)(iv)
    (7, "CB", {"CB", "AB", "RF"}),  # (a)(3)(ii): never both CB and BBD
    (7, "BBD", {"BBD", "AB", "RF"}),
])
def test_a2_a3_nesting(ledger: Ledger, d_code: int, category: str | None,
                       counts: set[str]) -> None:
    own_separated_rins(ledger, "3001", d_code, 100, 2024)
    report(ledger, "3001", 2024, RVO_EACH_100)
    apply(ledger, **retire(ledger, "3001", 2024, d_code, 100, 2024, category))
    # (a)(3)(i): the same 100 gallon-RINs count toward every RVO they are valid for
    for name, row in positions(ledger, 2024, "3001").items():
        expected = (100, 0, "compliant") if name in counts else (0, 100, "deficit_carried")
        assert (row["applied"], row["deficit"], row["status"]) == expected, name


def test_a1_a2_a3_four_rvos_together(ledger: Ledger) -> None:
    for d_code, quantity in ((3, 100), (4, 200), (5, 200), (6, 500)):
        own_separated_rins(ledger, "3001", d_code, quantity, 2024)
        apply(ledger, **retire(ledger, "3001", 2024, d_code, quantity, 2024))
    report(ledger, "3001", 2024, {"CB": 100, "BBD": 200, "AB": 500, "RF": 1_000})
    rows = positions(ledger, 2024, "3001")
    # CB: D3 100; BBD: D4 200; AB: 100 + 200 + 200 = 500; RF: 500 + 500 = 1,000
    assert {c: summary(r) for c, r in rows.items()} == {
        "CB": (100, 100, 0, "compliant"), "BBD": (200, 200, 0, "compliant"),
        "AB": (500, 500, 0, "compliant"), "RF": (1_000, 1_000, 0, "compliant")}


def test_a3_ii_d7_must_be_designated_and_only_d7(ledger: Ledger) -> None:
    own_separated_rins(ledger, "3001", 7, 100, 2024)
    own_separated_rins(ledger, "3001", 4, 100, 2024)
    refused(ledger, "CMP-D7-DESIGNATION", "§80.1427(a)(3)(ii)",
            **retire(ledger, "3001", 2024, 7, 100, 2024))
    refused(ledger, "CMP-D7-DESIGNATION", "§80.1427(a)(3)(ii)",
            **retire(ledger, "3001", 2024, 4, 100, 2024, "BBD"))


# === §80.1427(a)(5): prior-year RINs at most 20 % of each RVO ===============================

def test_a5_prior_year_rins_capped_at_20_percent(ledger: Ledger) -> None:
    own_separated_rins(ledger, "3001", 6, 300, 2023)
    own_separated_rins(ledger, "3001", 6, 700, 2024)
    report(ledger, "3001", 2024, {"RF": 1_000})
    apply(ledger, **retire(ledger, "3001", 2024, 6, 300, 2023))
    apply(ledger, **retire(ledger, "3001", 2024, 6, 700, 2024))
    rf = positions(ledger, 2024, "3001")["RF"]
    # prior-year: min(300, 0.20 × 1,000 = 200) = 200; applied 200 + 700 = 900; D = 100
    assert (rf["prior_year_rins"], rf["prior_year_applied"], rf["current_year_rins"]) == (
        300, 200, 700)
    assert summary(rf) == (1_000, 900, 100, "deficit_carried")


def test_a5_cap_is_20_percent_of_the_rvo_with_the_deficit_carried_in(ledger: Ledger) -> None:
    own_separated_rins(ledger, "3001", 6, 400, 2023)
    own_separated_rins(ledger, "3001", 6, 1_200, 2024)
    report(ledger, "3001", 2023, {"RF": 500})  # nothing retired for 2023: D = 500 carried
    report(ledger, "3001", 2024, {"RF": 1_000})
    apply(ledger, **retire(ledger, "3001", 2024, 6, 400, 2023))
    apply(ledger, **retire(ledger, "3001", 2024, 6, 1_200, 2024))
    rf = positions(ledger, 2024, "3001")["RF"]
    # RVO_RF,2024 = 1,000 + 500 = 1,500; prior cap 0.20 × 1,500 = 300 (not 200);
    # applied 300 + min(1,200, 1,500 − 300) = 1,500; D = 0
    assert (rf["deficit_carried_in"], rf["prior_year_applied"]) == (500, 300)
    assert summary(rf) == (1_500, 1_500, 0, "compliant")


# === §80.1427(a)(6): vintage i or i−1; a RIN used for one year counts for no other ==========

def test_a6_i_only_vintage_i_or_i_minus_1(ledger: Ledger) -> None:
    own_separated_rins(ledger, "3001", 6, 100, 2022)
    apply(ledger, type="generate", date="2025-01-31", party="1001", facility="20001",
          batch="Z2025", fuel="ethanol", d_code=6, volume=1_000)
    own_separated_rins(ledger, "3001", 6, 100, 2025)
    refused(ledger, "CMP-VINTAGE", "§80.1427(a)(6)(i)",
            **retire(ledger, "3001", 2024, 6, 100, 2022))
    refused(ledger, "CMP-VINTAGE", "§80.1427(a)(6)(i)",
            **retire(ledger, "3001", 2024, 6, 100, 2025))


def test_a6_ii_rins_used_for_one_year_count_for_no_other(ledger: Ledger) -> None:
    own_separated_rins(ledger, "3001", 6, 1_500, 2023)
    report(ledger, "3001", 2023, {"RF": 1_000})
    report(ledger, "3001", 2024, {"RF": 1_000})
    apply(ledger, **retire(ledger, "3001", 2023, 6, 1_500, 2023))
    # 2023: applied min(1,500, 1,000) = 1,000 ≤ RVO; the 500 over count for 2024 neither
    assert summary(positions(ledger, 2023, "3001")["RF"]) == (1_000, 1_000, 0, "compliant")
    rf = positions(ledger, 2024, "3001")["RF"]
    assert (rf["prior_year_rins"], rf["applied"], rf["deficit"]) == (0, 0, 1_000)
    # nor can the retired RINs be retired again for 2024
    assert ledger.apply(retire(ledger, "3001", 2024, 6, 1, 2023)).status == "rejected"


def test_a8_only_separated_rins(ledger: Ledger) -> None:
    buy_assigned(ledger, "3001", 6, 100)
    report(ledger, "3001", 2024, {"RF": 100})
    refused(ledger, "CMP-K2", "§80.1427(a)(8)",
            **{**retire(ledger, "3001", 2024, 6, 100, 2024), "rins": rins(6, 100, k=1)})


# === §80.1427(b): deficits and their carryover ==============================================

def test_b1_deficit_carried_then_met_then_carried_again(ledger: Ledger) -> None:
    for vintage, quantity in ((2022, 600), (2023, 1_400), (2024, 900)):
        own_separated_rins(ledger, "3001", 6, quantity, vintage)
    for year in (2022, 2023, 2024):
        report(ledger, "3001", year, {"RF": 1_000})
    apply(ledger, **retire(ledger, "3001", 2022, 6, 600, 2022))
    apply(ledger, **retire(ledger, "3001", 2023, 6, 1_400, 2023))
    apply(ledger, **retire(ledger, "3001", 2024, 6, 900, 2024))
    # (b)(2) D_2022 = 1,000 − 600 = 400, carried ((b)(1)(i): none carried into 2022);
    # 2023: RVO 1,000 + 400 = 1,400 met by 1,400 → compliant, nothing carried into 2024;
    # 2024: D = 1,000 − 900 = 100, allowed to carry since none came into 2024
    assert summary(positions(ledger, 2022, "3001")["RF"]) == (1_000, 600, 400, "deficit_carried")
    rf_2023 = positions(ledger, 2023, "3001")["RF"]
    assert rf_2023["deficit_carried_in"] == 400
    assert summary(rf_2023) == (1_400, 1_400, 0, "compliant")
    assert summary(positions(ledger, 2024, "3001")["RF"]) == (1_000, 900, 100, "deficit_carried")


def test_b1_i_no_deficit_two_years_running(ledger: Ledger) -> None:
    own_separated_rins(ledger, "3001", 6, 600, 2022)
    own_separated_rins(ledger, "3001", 6, 1_300, 2023)
    for year in (2022, 2023, 2024):
        report(ledger, "3001", year, {"RF": 1_000})
    apply(ledger, **retire(ledger, "3001", 2022, 6, 600, 2022))
    apply(ledger, **retire(ledger, "3001", 2023, 6, 1_300, 2023))
    # 2023: RVO 1,400, applied 1,300, D = 100 with a deficit carried in: a violation
    assert summary(positions(ledger, 2023, "3001")["RF"]) == (1_400, 1_300, 100, "violation")
    # the 2023 deficit was not allowed to carry, so it is not part of RVO_2024
    assert positions(ledger, 2024, "3001")["RF"]["deficit_carried_in"] == 0


def test_b1_iv_the_same_compliance_approach(ledger: Ledger) -> None:
    own_separated_rins(ledger, "3001", 6, 1_100, 2024)
    report(ledger, "3001", 2023, {"RF": 100}, approach="aggregate")  # D = 100 carried
    report(ledger, "3001", 2024, {"RF": 1_000}, approach="refinery")
    apply(ledger, **retire(ledger, "3001", 2024, 6, 1_100, 2024))
    # 2024 meets RVO 1,100, but the deficit came in under another approach
    assert positions(ledger, 2024, "3001")["RF"]["status"] == "violation"


# === §80.1427(a)(7) and (b)(1)(iii): biomass-based diesel in 2010 =============================

def _bbd_2010(ledger: Ledger, holdings: dict[int, int]) -> None:
    for vintage in holdings:
        make(ledger, "1001", "20001", 4, 10_000, vintage)
    for vintage, quantity in holdings.items():
        own_separated_rins(ledger, "3001", 4, quantity, vintage)


def test_a7_2008_and_2009_rins_for_2010_bbd(ledger: Ledger) -> None:
    _bbd_2010(ledger, {2008: 100, 2009: 150, 2010: 800})
    report(ledger, "3001", 2010, {"BBD": 1_000, "AB": 1_000, "RF": 1_000})
    for vintage, quantity in ((2008, 100), (2009, 150), (2010, 800)):
        apply(ledger, **retire(ledger, "3001", 2010, 4, quantity, vintage))
    rows = positions(ledger, 2010, "3001")
    # (a)(7)(iii): 2008 ≤ 0.087 × 1,000 = 87; 2008 + 2009 ≤ 200: min(87 + 150, 200) = 200;
    # (a)(7)(ii): applied 200 + 800 = 1,000
    assert rows["BBD"]["prior_year_applied"] == 200
    assert summary(rows["BBD"]) == (1_000, 1_000, 0, "compliant")
    # AB and RF follow (a)(1): 2008 RINs do not count, 2009 ≤ 200: 150 + 800 = 950
    assert summary(rows["AB"]) == (1_000, 950, 50, "deficit_carried")


def test_a7_i_reduced_rvo_and_b1_iii_57_percent(ledger: Ledger) -> None:
    _bbd_2010(ledger, {2010: 230})
    report(ledger, "3001", 2010, {"BBD": 1_000}, bbd_2010_reduction=200)
    apply(ledger, **retire(ledger, "3001", 2010, 4, 230, 2010))
    bbd = positions(ledger, 2010, "3001")["BBD"]
    # RVO 1,000 − 200 = 800; D = 800 − 230 = 570 ≤ 0.57 × 1,000 (before the reduction): carried
    assert summary(bbd) == (800, 230, 570, "deficit_carried")


def test_b1_iii_more_than_57_percent_is_not_carried(ledger: Ledger) -> None:
    _bbd_2010(ledger, {2010: 429})
    report(ledger, "3001", 2010, {"BBD": 1_000})
    apply(ledger, **retire(ledger, "3001", 2010, 4, 429, 2010))
    # D = 1,000 − 429 = 571 > 570 = 0.57 × 1,000
    assert summary(positions(ledger, 2010, "3001")["BBD"]) == (1_000, 429, 571, "violation")


# === §80.1427(c): exporters' ERVOs ===========================================================

def test_c_ervo_with_the_20_percent_cap_and_a_rules(ledger: Ledger) -> None:
    own_separated_rins(ledger, "3001", 6, 300, 2023)
    own_separated_rins(ledger, "3001", 6, 900, 2024)
    own_separated_rins(ledger, "3001", 7, 100, 2024)
    for d_code, quantity, vintage in ((6, 300, 2023), (6, 900, 2024), (7, 100, 2024)):
        apply(ledger, type="transfer", date="2024-04-01", to="7001",
              rins=rins(d_code, quantity, vintage, k=2), **{"from": "3001"})
    report(ledger, "7001", 2024, {"RF": 1_000})
    refused(ledger, "CMP-D7-DESIGNATION", "§80.1427(a)(3)(ii)",  # (c)(2) applies (a)(3)
            **retire(ledger, "7001", 2024, 7, 100, 2024))
    apply(ledger, **retire(ledger, "7001", 2024, 6, 300, 2023))
    apply(ledger, **retire(ledger, "7001", 2024, 6, 700, 2024))
    rf = positions(ledger, 2024, "7001")["RF"]
    # (c)(3): prior-year at most 0.20 × 1,000 = 200; applied 200 + 700 = 900
    assert (rf["prior_year_applied"], rf["applied"], rf["deficit"]) == (200, 900, 100)
    # (c)(2) does not apply (b): an exporter carries no deficit; §80.1430(f) wants each ERVO met
    # within 30 days of the export, so the 100 short is a violation
    assert rf["status"] == "violation"


def test_c_an_ervo_shortfall_is_not_carried_into_the_next_ervo(ledger: Ledger) -> None:
    report(ledger, "7001", 2023, {"RF": 500})  # nothing retired: 500 short, a violation
    report(ledger, "7001", 2024, {"RF": 1_000})
    assert summary(positions(ledger, 2023, "7001")["RF"]) == (500, 0, 500, "violation")
    rf = positions(ledger, 2024, "7001")["RF"]
    # ERVO_2024 is §80.1430(b)'s 1,000 alone: nothing carried in; (c)(3) cap 0.20 × 1,000 = 200
    assert (rf["rvo"], rf["deficit_carried_in"]) == (1_000, 0)
    assert positions(ledger, 2025, "7001") == {}


# === §80.1407: RVO = STD × (GV + DV) + D_i−1 ================================================

def test_s1407_rvo_from_volumes_plus_the_deficit_carried_in(ledger: Ledger) -> None:
    report(ledger, "3001", 2023, {"RF": 1_000, "AB": 10})  # nothing retired: both carried
    report(ledger, "3001", 2024, gasoline_volume=800_000, diesel_volume=200_000)
    rows = positions(ledger, 2024, "3001")
    # 1,000,000 gal × 2024 standards: CB 0.59 % = 5,900; BBD 2.82 % = 28,200;
    # AB 3.79 % = 37,900 (+ 10); RF 12.50 % = 125,000 (+ 1,000)
    assert {c: (r["rvo"], r["deficit_carried_in"]) for c, r in rows.items()} == {
        "CB": (5_900, 0), "BBD": (28_200, 0), "AB": (37_910, 10), "RF": (126_000, 1_000)}


def test_s1407_no_cellulosic_standard_in_2011(ledger: Ledger) -> None:
    report(ledger, "3001", 2011, gasoline_volume=1_000_000, diesel_volume=0)
    rows = positions(ledger, 2011, "3001")
    # 2011: CB none in force → 0; BBD 0.69 % = 6,900; AB 0.78 % = 7,800; RF 8.01 % = 80,100
    assert {c: r["rvo"] for c, r in rows.items()} == {
        "CB": 0, "BBD": 6_900, "AB": 7_800, "RF": 80_100}


def test_rin_compliance_applied_never_exceeds_the_rvo(ledger: Ledger) -> None:
    own_separated_rins(ledger, "3001", 4, 5_000, 2024)
    report(ledger, "3001", 2024, {"CB": 0, "BBD": 1_000, "AB": 2_000, "RF": 4_000})
    apply(ledger, **retire(ledger, "3001", 2024, 4, 5_000, 2024))
    rows = positions(ledger, 2024, "3001")
    # 5,000 D4 retired: BBD applied 1,000, AB 2,000, RF 4,000, each capped at its RVO
    for row in rows.values():
        assert row["applied"] <= row["rvo"]
        assert row["deficit"] == row["rvo"] - row["applied"]
    assert [rows[c]["applied"] for c in ("BBD", "AB", "RF")] == [1_000, 2_000, 4_000]


def test_b1_ii_the_year_a_deficit_is_carried_into_is_reported_without_its_own_report(
    ledger: Ledger,
) -> None:
    """§80.1427(b)(1)(ii): a party carrying D_2023 must meet 2024's requirement, RVO_2024 =
    0 + D_2023 by §80.1407, whether or not it reports 2024; `rin compliance --year 2024` shows it,
    with the same RVO the (b)(7) limit is computed from."""
    report(ledger, "3001", 2023, {"RF": 500})  # nothing retired: D_RF,2023 = 500, carried
    rf = positions(ledger, 2024, "3001")["RF"]
    # nothing retired for 2024 yet: applied 0, D = 500 with a deficit carried in
    assert (rf["rvo"], rf["deficit_carried_in"], rf["applied"], rf["deficit"], rf["status"]) == (
        500, 500, 0, 500, "violation")
    own_separated_rins(ledger, "3001", 6, 500, 2024)
    apply(ledger, **retire(ledger, "3001", 2024, 6, 500, 2024))
    assert summary(positions(ledger, 2024, "3001")["RF"]) == (500, 500, 0, "compliant")
    assert positions(ledger, 2025, "3001") == {}  # nothing carried into 2025


def test_a7_i_the_reduction_is_for_the_2010_bbd_rvo_only(ledger: Ledger) -> None:
    """(a)(7)(i) reduces "the value of RVO_BBD,2010"; a 2011 report stating one is refused, not
    reported with a reduction silently left out."""
    refused(ledger, "CMP-BBD-2010-REDUCTION", "§80.1427(a)(7)(i)", type="report_obligation",
            party="3001", year=2011, rvo={"BBD": 1_000}, bbd_2010_reduction=300)
    assert positions(ledger, 2011, "3001") == {}


def test_b7_iv_a_negative_difference_allows_no_d5_rin(ledger: Ledger) -> None:
    make(ledger, "4001", "40001", 5, 10_000)
    report(ledger, "4001", 2024, {"CB": 100, "BBD": 400, "AB": 400, "RF": 5_000})
    # (b)(7)(iv): 400 − 100 − 400 = −100: not one D5 gallon-RIN may be separated
    error = refused(ledger, "SEP-OBLIGATED-CAP", "§80.1429(b)(7)",
                    **separate("4001", "obligated_party", rins(5, 1), 1))
    assert error.endswith("exceeds the limit of 0")


def test_b1_iii_a_2010_bbd_deficit_within_57_percent_is_part_of_rvo_bbd_2011(
    ledger: Ledger,
) -> None:
    _bbd_2010(ledger, {2010: 430})
    report(ledger, "3001", 2010, {"BBD": 1_000})
    report(ledger, "3001", 2011, {"BBD": 1_000})
    apply(ledger, **retire(ledger, "3001", 2010, 4, 430, 2010))
    # D_BBD,2010 = 1,000 − 430 = 570 ≤ 0.57 × 1,000: carried; RVO_BBD,2011 = 1,000 + 570
    bbd = positions(ledger, 2011, "3001")["BBD"]
    assert (bbd["rvo"], bbd["deficit_carried_in"]) == (1_570, 570)


def test_a7_only_d4_of_2008_2009_for_2010_bbd_and_for_no_other_year(ledger: Ledger) -> None:
    make(ledger, "1001", "20001", 6, 10_000, 2008)
    _bbd_2010(ledger, {2008: 200})
    own_separated_rins(ledger, "3001", 6, 100, 2008)
    report(ledger, "3001", 2010, {"BBD": 1_000, "RF": 1_000})
    report(ledger, "3001", 2011, {"BBD": 1_000})
    refused(ledger, "CMP-VINTAGE", "§80.1427(a)(6)(i)",  # a 2008 D6 RIN for 2010 RF
            **retire(ledger, "3001", 2010, 6, 100, 2008))
    refused(ledger, "CMP-VINTAGE", "§80.1427(a)(6)(i)",  # a 2008 D4 RIN for 2011
            **retire(ledger, "3001", 2011, 4, 100, 2008))
    apply(ledger, **retire(ledger, "3001", 2010, 4, 100, 2008))


def test_a5_the_cap_is_per_rvo(ledger: Ledger) -> None:
    own_separated_rins(ledger, "3001", 4, 300, 2023)
    report(ledger, "3001", 2024, {"BBD": 1_000, "AB": 1_000, "RF": 2_000})
    apply(ledger, **retire(ledger, "3001", 2024, 4, 300, 2023))
    rows = positions(ledger, 2024, "3001")
    # 300 prior-year D4: BBD min(300, 200) = 200; AB min(300, 200) = 200; RF min(300, 400) = 300
    assert [rows[c]["prior_year_applied"] for c in ("BBD", "AB", "RF")] == [200, 200, 300]


def test_a9_rinnum_is_e_minus_s_plus_1(ledger: Ledger) -> None:
    own_separated_rins(ledger, "3001", 6, 1_234, 2024)
    (block,) = Views(ledger).holdings(party="3001", blocks=True)
    code = block["rin"]
    # the code's SSSSSSSS..EEEEEEEE (characters 23-30 and 31-38) give E − S + 1 = 1,234
    assert int(code[30:38]) - int(code[22:30]) + 1 == 1_234
    report(ledger, "3001", 2024, {"RF": 2_000})
    apply(ledger, type="retire", date="2025-02-01", party="3001", reason="compliance",
          compliance_year=2024, rins={"code": code})
    rf = positions(ledger, 2024, "3001")["RF"]
    assert (rf["current_year_rins"], rf["applied"], rf["deficit"]) == (1_234, 1_234, 766)
