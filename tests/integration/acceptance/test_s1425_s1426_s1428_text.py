"""Held-out acceptance cases for §80.1425, §80.1426 and §80.1428, written from the regulation's
text (/work/shared/regulation/000-002, formulas in reference.md §1-2), not from the code.

Each case is a small market driven through the public `Ledger` API with transaction lines as
dicts (design.md "Interfaces"); every expected number is worked by hand in a comment.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from ledger import Ledger, Result
from ledger.domain.rin import format_code, parse_code
from projections import Views

PARTIES: list[tuple[str, list[str], list[str]]] = [
    ("1001", ["producer"], ["20001", "20002"]),
    ("1002", ["producer"], ["20011"]),
    ("2001", ["blender"], []),
    ("3001", ["obligated_party", "refiner"], []),
    ("5001", ["importer"], ["50001"]),
    ("9101", ["foreign_producer", "producer"], ["91001"]),  # RIN-generating foreign producer
    ("9201", ["foreign_producer"], []),  # non-RIN-generating foreign producer, registered
]


def ok(ledger: Ledger, cmd: dict[str, Any]) -> Result:
    result = ledger.apply(cmd)
    assert result.status == "applied", result.error
    return result


def refused(ledger: Ledger, cmd: dict[str, Any], citation: str, field: str) -> Result:
    """The line is refused citing `citation` and naming `field`, and nothing is stored."""
    before = ledger.position()
    result = ledger.apply(cmd)
    assert (result.status, result.citation, result.field) == ("rejected", citation, field), (
        result.status, result.citation, result.field, result.error)
    assert result.error is not None and result.error.startswith(f"{citation}: ")
    assert ledger.position() == before, "a refused line stores nothing"
    return result


@pytest.fixture
def book(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path) as ledger:
        for party, roles, facilities in PARTIES:
            ok(ledger, {"type": "register_party", "party": party, "name": f"P{party}",
                        "roles": roles, "facilities": facilities})
        yield ledger


def gen(batch: str, on: str = "2024-03-15", party: str = "1001", facility: str = "20001",
        **more: Any) -> dict[str, Any]:
    line = {"type": "generate", "date": on, "party": party, "facility": facility,
            "batch": batch}
    return line | more


def rins(d: int, k: int, n: int, vintage: int = 2024) -> dict[str, int]:
    return {"d_code": d, "vintage": vintage, "k": k, "quantity": n}


def transfer(seller: str, buyer: str, selector: dict[str, Any], on: str = "2024-03-20",
             volume: Any = None, **more: Any) -> dict[str, Any]:
    line = {"type": "transfer", "date": on, "from": seller, "to": buyer, "rins": selector}
    if volume is not None:
        line["volume"] = volume
    return line | more


def held(ledger: Ledger, party: str) -> list[tuple[int, int, int, int]]:
    return [(r["d_code"], r["vintage"], r["k"], r["gallon_rins"]) for r in ledger.holdings(party)]


def codes(ledger: Ledger, party: str) -> list[str]:
    return [r["rin"] for r in ledger.blocks(party)]


# --- §80.1425: the 38-digit code, both ways, field by field ---------------------------------


def test_1425_code_fields_at_generation_and_parse_back(book: Ledger) -> None:
    # ethanol EV 1.0 × 10,000 gal = 10,000 gallon-RINs: K=1 (a)(1), YYYY 2024 (b), CCCC 1001 (c),
    # FFFFF 20001 (d), BBBBB E0001 (e), RR 10 (f), D 6 (g), S 00000001 (h), E 00010000 (i)
    code = ok(book, gen("E0001", fuel="ethanol", d_code=6, volume=10_000)).rin
    assert code == "1" "2024" "1001" "20001" "E0001" "10" "6" "00000001" "00010000"
    assert len(code) == 38
    key, start, end = parse_code(code)
    assert (key.k, key.vintage, key.company, key.facility, key.batch, key.rr, key.d_code,
            start, end) == (1, 2024, "1001", "20001", "E0001", 10, 6, 1, 10_000)
    assert format_code(1, 2024, "1001", "20001", "E0001", 10, 6, 1, 10_000) == code


def test_1425_a2_separated_rin_has_k_2_and_same_other_fields(book: Ledger) -> None:
    ok(book, gen("E0001", fuel="ethanol", d_code=6, volume=10_000))
    # 10,000 RINs with 4,000 gal: 10,000 ≤ 2.5 × 4,000 (§80.1428(a)(4))
    ok(book, transfer("1001", "2001", rins(6, 1, 10_000), volume=4_000))
    ok(book, {"type": "separate", "date": "2024-03-21", "party": "2001", "reason": "blending",
              "rins": rins(6, 1, 10_000), "volume": 4_000})
    assert codes(book, "2001") == ["2" "2024" "1001" "20001" "E0001" "10" "6" "00000001"
                                   "00010000"]


def test_1425_b_year_is_the_calendar_year_of_generation(book: Ledger) -> None:
    code = ok(book, gen("E0001", on="2023-12-31", fuel="ethanol", d_code=6, volume=100)).rin
    assert code is not None and code[1:5] == "2023"
    code = ok(book, gen("E0001", on="2024-01-01", fuel="ethanol", d_code=6, volume=100)).rin
    assert code is not None and code[1:5] == "2024"  # (e): the same BBBBB in another year


def test_1425_cd_company_and_facility_are_the_generators_registration(book: Ledger) -> None:
    code = ok(book, gen("E0001", facility="20002", fuel="ethanol", d_code=6, volume=100)).rin
    assert code is not None and (code[5:9], code[9:14]) == ("1001", "20002")
    # a facility not registered to 1001 (20011 is 1002's)
    refused(book, gen("E0002", facility="20011", fuel="ethanol", d_code=6, volume=100),
            "§80.1450(b)", "facility")


def test_1425_e_no_two_batches_of_a_producer_share_bbbbb_in_a_year(book: Ledger) -> None:
    ok(book, gen("B0001", fuel="ethanol", d_code=6, volume=100))
    refused(book, gen("B0001", on="2024-05-01", facility="20002", fuel="biodiesel", d_code=4,
                      volume=100), "§80.1425(e)", "batch")
    # another producer may choose the same number: the rule binds each producer's batches
    ok(book, gen("B0001", party="1002", facility="20011", fuel="ethanol", d_code=6, volume=100))


@pytest.mark.parametrize(("fuel", "ev", "rr", "gallon_rins"), [
    ("ethanol", None, "10", 1_000),            # 1.0 × 1,000
    ("biodiesel", None, "15", 1_500),          # 1.5 × 1,000
    ("butanol", None, "13", 1_300),            # 1.3 × 1,000
    ("renewable_diesel", None, "17", 1_700),   # 1.7 × 1,000
    ("renewable_diesel", "1.6", "16", 1_600),  # approved lower value, 1.6 × 1,000
])
def test_1425_f_rr_is_ten_times_ev(book: Ledger, fuel: str, ev: str | None, rr: str,
                                    gallon_rins: int) -> None:
    more = {} if ev is None else {"equivalence_value": ev}
    code = ok(book, gen("X0001", fuel=fuel, d_code=4 if fuel != "ethanol" else 6, volume=1_000,
                        **more)).rin
    assert code is not None and code[19:21] == rr
    assert int(code[30:38]) == gallon_rins


@pytest.mark.parametrize(("bad", "field"), [
    ("3" "2024" "1001" "20001" "E0001" "10" "6" "00000001" "00010000", "rins.code.K"),
    ("1" "2024" "1001" "20001" "E0001" "10" "8" "00000001" "00010000", "rins.code.D"),
    ("1" "2024" "1001" "20001" "E0001" "10" "6" "00000000" "00010000", "rins.code.SSSSSSSS"),
    ("1" "2024" "1001" "20001" "E0001" "10" "6" "00000009" "00000008", "rins.code.EEEEEEEE"),
])
def test_1425_bad_codes_are_refused_by_field(book: Ledger, bad: str, field: str) -> None:
    ok(book, gen("E0001", fuel="ethanol", d_code=6, volume=10_000))
    result = book.apply(transfer("1001", "2001", {"code": bad}, volume=4_000))
    assert (result.status, result.field) == ("rejected", field), result.error
    assert result.citation is not None and result.citation.startswith("§80.1425")


# --- §80.1426(f): how many gallon-RINs ----------------------------------------------------


def test_1426_f3ii_single_fuel(book: Ledger) -> None:
    # biodiesel, D4: V_RIN = EV × Vs = 1.5 × 10,000 = 15,000
    assert ok(book, gen("B0001", fuel="biodiesel", d_code=4, volume=10_000)).rin == (
        "1202410012000" "1B000115400000001" "00015000")


def test_1426_f3iii_mixed_fuel_types_one_d_code(book: Ledger) -> None:
    # ethanol 6,000 gal (EV 1.0) + butanol 4,000 gal (EV 1.3), both D6:
    # V_RIN = 1.0 × 6,000 + 1.3 × 4,000 = 6,000 + 5,200 = 11,200, one batch
    result = ok(book, gen("M0001", fuel="ethanol", d_code=6, components=[
        {"fuel": "ethanol", "volume": 6_000}, {"fuel": "butanol", "volume": 4_000}]))
    assert len(result.rins) == 1
    assert result.rins[0][21] == "6" and int(result.rins[0][30:]) == 11_200


def test_1426_f3v_mixed_d_codes_one_batch_per_d_code(book: Ledger) -> None:
    # biodiesel D4 8,000 gal: 1.5 × 8,000 = 12,000; ethanol D6 5,000 gal: 1.0 × 5,000 = 5,000
    result = ok(book, gen("M0001", fuel="ethanol", batches={4: "M0004", 6: "M0006"}, components=[
        {"fuel": "biodiesel", "volume": 8_000, "d_code": 4},
        {"fuel": "ethanol", "volume": 5_000, "d_code": 6}]))
    assert result.rins == [
        "1" "2024" "1001" "20001" "M0004" "15" "4" "00000001" "00012000",
        "1" "2024" "1001" "20001" "M0006" "10" "6" "00000001" "00005000",
    ]


def test_1426_f3iv_pathway_change_needs_a_new_batch_identifier(book: Ledger) -> None:
    ok(book, gen("P0001", on="2024-03-10", fuel="ethanol", d_code=6, volume=1_000,
                 production_start="2024-03-01", production_end="2024-03-09"))
    # from 10 March another pathway (D5): the batch identifier must change
    refused(book, gen("P0001", on="2024-03-31", fuel="ethanol", d_code=5, volume=1_000,
                      production_start="2024-03-10", production_end="2024-03-31"),
            "§80.1425(e)", "batch")
    ok(book, gen("P0002", on="2024-03-31", fuel="ethanol", d_code=5, volume=1_000,
                 production_start="2024-03-10", production_end="2024-03-31"))


def test_1426_f3vi_several_feedstocks_processed_together(book: Ledger) -> None:
    # renewable diesel EV 1.7, Vs 10,000 gal:
    # woody biomass (D7): FE = 10,000 lb × (1 − 0.2) × 0.5 × 8,400 = 33,600,000 Btu
    # tallow (D4):        FE =  2,000 lb × (1 − 0)   × 1.0 × 16,200 = 32,400,000 Btu
    # ΣFE = 66,000,000; D7: 1.7 × 10,000 × 33.6/66 = 8,654.5454… → 8,655
    #                   D4: 1.7 × 10,000 × 32.4/66 = 8,345.4545… → 8,345 (sum 17,000)
    result = ok(book, gen("F0001", fuel="renewable_diesel", volume=10_000,
                          batches={4: "F0004", 7: "F0007"}, feedstocks=[
        {"type": "woody_biomass", "mass_lb": 10_000, "moisture": "0.2",
         "converted_fraction": "0.5", "d_code": 7},
        {"type": "tallow", "mass_lb": 2_000, "moisture": 0, "converted_fraction": 1,
         "d_code": 4}]))
    assert [(c[14:19], c[19:22], int(c[30:])) for c in result.rins] == [
        ("F0004", "174", 8_345), ("F0007", "177", 8_655)]


def test_1426_f4_method_a_co_processed(book: Ledger) -> None:
    # renewable diesel EV 1.7, Vs 10,000 gal, co-processed:
    # vegetable oil (renewable, D4): FE_R = 1,000 × 1 × 1 × 17,000 = 17,000,000
    # crude oil (non-renewable):    FE_NR = 9,000 × 1 × 1 × 19,100 = 171,900,000
    # V_RIN = 1.7 × 10,000 × 17,000,000 / 188,900,000 = 1,529.910… → 1,530   ((a)(4), (f)(4))
    code = ok(book, gen("C0001", fuel="renewable_diesel", d_code=4, volume=10_000, feedstocks=[
        {"type": "vegetable_oil", "mass_lb": 1_000, "moisture": 0, "converted_fraction": 1},
        {"type": "crude_oil", "mass_lb": 9_000, "moisture": 0, "converted_fraction": 1,
         "renewable": False}])).rin
    assert code is not None and int(code[30:]) == 1_530


def test_1426_f4_method_b_renewable_fraction(book: Ledger) -> None:
    # V_RIN = EV × Vs × R = 1.7 × 10,000 × 0.05 = 850 (ASTM D6866 method B, (f)(4)(iv)(A))
    code = ok(book, gen("C0001", fuel="renewable_diesel", d_code=4, volume=10_000,
                        renewable_fraction="0.05", renewable_fraction_method="B")).rin
    assert code is not None and int(code[30:]) == 850
    # method C only when renewable content is 10 % or more, (f)(4)(iv)(B)
    refused(book, gen("C0002", fuel="renewable_diesel", d_code=4, volume=10_000,
                      renewable_fraction="0.05", renewable_fraction_method="C"),
            "§80.1426(f)(4)(iv)(B)", "renewable_fraction_method")
    # 1.7 × 10,000 × 0.12 = 2,040
    code = ok(book, gen("C0003", fuel="renewable_diesel", d_code=4, volume=10_000,
                        renewable_fraction="0.12", renewable_fraction_method="C")).rin
    assert code is not None and int(code[30:]) == 2_040


def test_1426_f5_yard_and_food_waste(book: Ledger) -> None:
    # yard waste is cellulosic: ethanol D3, 1.0 × 1,000 = 1,000
    code = ok(book, gen("Y0001", fuel="ethanol", d_code=3, volume=1_000, waste="yard")).rin
    assert code is not None and (code[21], int(code[30:])) == ("3", 1_000)
    refused(book, gen("Y0002", fuel="ethanol", d_code=6, volume=1_000, waste="yard"),
            "§80.1426(f)(5)(i)(A)", "d_code")
    # food waste is deemed non-cellulosic: no D3; D6 1.0 × 2,000 = 2,000
    refused(book, gen("W0001", fuel="ethanol", d_code=3, volume=2_000, waste="food"),
            "§80.1426(f)(5)(i)(B)", "d_code")
    code = ok(book, gen("W0002", fuel="ethanol", d_code=6, volume=2_000, waste="food")).rin
    assert code is not None and int(code[30:]) == 2_000


def test_1426_f5v_msw_cellulosic_portion(book: Ledger) -> None:
    # V_RIN = EV × Vs × R = 1.0 × 10,000 × 0.6 = 6,000 cellulosic (D3) gallon-RINs
    code = ok(book, gen("S0001", fuel="ethanol", d_code=3, volume=10_000, waste="msw",
                        renewable_fraction="0.6")).rin
    assert code is not None and (code[21], int(code[30:])) == ("3", 6_000)


def test_1426_f6_exempt_fuel_is_d6(book: Ledger) -> None:
    # V_RIN = EV × Vs = 1.0 × 5,000; D code 6, (f)(6)(i)-(ii)
    code = ok(book, gen("G0001", fuel="ethanol", d_code=6, volume=5_000, ghg_exempt=True)).rin
    assert code is not None and (code[21], int(code[30:])) == ("6", 5_000)
    refused(book, gen("G0002", fuel="ethanol", d_code=5, volume=5_000, ghg_exempt=True),
            "§80.1426(f)(6)(ii)", "d_code")


def test_1426_f7_heating_value_default_or_given(book: Ledger) -> None:
    # two D4 feedstocks + non-renewable: E given for one (measured), default for the other
    # vegetable oil E measured 16,000: FE = 1,000 × 1 × 1 × 16,000 = 16,000,000
    # natural gas (NR) default 19,700: FE = 1,000 × 1 × 1 × 19,700 = 19,700,000
    # V_RIN = 1.5 × 1,000 × 16,000,000 / 35,700,000 = 672.268… → 672
    code = ok(book, gen("H0001", fuel="biodiesel", d_code=4, volume=1_000, feedstocks=[
        {"type": "vegetable_oil", "mass_lb": 1_000, "moisture": 0, "converted_fraction": 1,
         "heating_value_btu_per_lb": 16_000},
        {"type": "natural_gas", "mass_lb": 1_000, "moisture": 0, "converted_fraction": 1,
         "renewable": False}])).rin
    assert code is not None and int(code[30:]) == 672
    refused(book, gen("H0002", fuel="biodiesel", d_code=4, volume=1_000, feedstocks=[
        {"type": "algae", "mass_lb": 1_000, "moisture": 0, "converted_fraction": 1}]),
        "§80.1426(f)(7)(iv)", "feedstocks[0].heating_value_btu_per_lb")


def test_1426_f8i_ethanol_temperature(book: Ledger) -> None:
    # Vs = Va × (−0.0006301 × T + 1.0378); 250,000 gal at 68 °F:
    # −0.0006301 × 68 = −0.0428468; factor 0.9949532; Vs = 248,738.3 → 248,738 gallon-RINs
    code = ok(book, gen("T0001", fuel="ethanol", d_code=6, measured_volume=250_000,
                        temperature_f=68)).rin
    assert code is not None and int(code[30:]) == 248_738
    # 100,000 gal at 40 °F: factor 1.0378 − 0.025204 = 1.012596; Vs = 101,259.6 → 101,260
    code = ok(book, gen("T0002", fuel="ethanol", d_code=6, measured_volume=100_000,
                        temperature_f=40)).rin
    assert code is not None and int(code[30:]) == 101_260


def test_1426_f8ii_biodiesel_temperature_method_a(book: Ledger) -> None:
    # Vs = Va × (−0.00045767 × T + 1.02746025); 10,000 gal at 80 °F:
    # −0.00045767 × 80 = −0.0366136; factor 0.99084665; Vs = 9,908.4665
    # V_RIN = 1.5 × 9,908.4665 = 14,862.69975 → 14,863
    code = ok(book, gen("T0003", fuel="biodiesel", d_code=4, measured_volume=10_000,
                        temperature_f=80)).rin
    assert code is not None and int(code[30:]) == 14_863


def test_1426_f8iii_other_fuels_give_their_standardized_volume(book: Ledger) -> None:
    refused(book, gen("T0004", fuel="butanol", d_code=6, measured_volume=1_000,
                      temperature_f=70), "§80.1426(f)(8)(iii)", "measured_volume")


def test_ev_biogas_electricity_and_other_fuel(book: Ledger) -> None:
    # CNG from biogas: 7,700,000 Btu / 77,000 = 100 gal × 1.0 = 100 D3 gallon-RINs, RR 10
    code = ok(book, gen("N0001", fuel="biogas", d_code=3, btu=7_700_000)).rin
    assert code is not None and (code[19:21], int(code[30:])) == ("10", 100)
    # electricity: 2,260 kWh / 22.6 = 100 gal × 1.0 = 100
    code = ok(book, gen("N0002", fuel="electricity", d_code=3, kwh=2_260)).rin
    assert code is not None and (code[19:21], int(code[30:])) == ("10", 100)
    # other fuel: EV = (0.9 / 0.972) × (100,000 / 77,000) = 0.92593 × 1.29870 = 1.2025 → 1.2
    # V_RIN = 1.2 × 1,000 = 1,200, RR 12
    code = ok(book, gen("N0003", fuel="other", d_code=5, volume=1_000, renewable_fraction="0.9",
                        energy_content_btu_per_gal=100_000)).rin
    assert code is not None and (code[19:21], int(code[30:])) == ("12", 1_200)
    # biodiesel at EV 1.7 is not its §80.1415 value
    refused(book, gen("N0004", fuel="biodiesel", d_code=4, volume=1_000, equivalence_value="1.7"),
            "§80.1415(b)", "equivalence_value")


# --- §80.1426(d): batch limits; (e) assignment ---------------------------------------------


def test_1426_d1i_at_most_99999999_gallon_rins(book: Ledger) -> None:
    # biodiesel 66,666,666 × 1.5 = 99,999,999: allowed, serials 00000001-99999999 ((d)(2))
    code = ok(book, gen("L0001", fuel="biodiesel", d_code=4, volume=66_666_666)).rin
    assert code is not None and code[22:] == "00000001" "99999999"
    # 66,666,667 × 1.5 = 100,000,000.5 → 100,000,001 > 99,999,999
    refused(book, gen("L0002", fuel="biodiesel", d_code=4, volume=66_666_667),
            "§80.1426(d)(1)(i)", "volume")


def test_1426_d1ii_a_batch_is_at_most_one_calendar_month(book: Ledger) -> None:
    ok(book, gen("L0003", on="2024-02-01", fuel="ethanol", d_code=6, volume=100,
                 production_start="2024-01-01", production_end="2024-01-31"))
    refused(book, gen("L0004", on="2024-02-05", fuel="ethanol", d_code=6, volume=100,
                      production_start="2024-01-15", production_end="2024-02-01"),
            "§80.1426(d)(1)(ii)", "production_end")


def test_1426_e_generated_rins_are_assigned_k1(book: Ledger) -> None:
    ok(book, gen("E0001", fuel="ethanol", d_code=6, volume=1_000))
    assert held(book, "1001") == [(6, 2024, 1, 1_000)]


# --- §80.1426(a), (c): who may generate ------------------------------------------------


def test_1426_only_producers_and_importers_generate(book: Ledger) -> None:
    refused(book, gen("E0001", party="2001", facility="20001", fuel="ethanol", d_code=6,
                      volume=100), "§80.1450(b)", "party")


def test_1426_a2_c4_importer_names_a_registered_foreign_producer(book: Ledger) -> None:
    imp = {"party": "5001", "facility": "50001", "fuel": "ethanol", "d_code": 6,
           "volume": 1_000}
    # design.md's generate line has no foreign_producer: a batch that names none is taken as
    # the importer states it (1,000 gal ethanol, EV 1.0 → 1,000 D6)
    assert ok(book, gen("I0009", **imp)).rin is not None
    # a foreign producer that is not registered, or registered as something else
    refused(book, gen("I0001", foreign_producer="9999", **imp), "§80.1426(c)(4)",
            "foreign_producer")
    refused(book, gen("I0001", foreign_producer="2001", **imp), "§80.1426(c)(4)",
            "foreign_producer")
    code = ok(book, gen("I0001", foreign_producer="9201", **imp)).rin
    assert code is not None and code[5:14] == "5001" "50001"  # CCCC/FFFFF are the importer's


def test_1426_c5_importer_generates_none_for_rin_generating_foreign_producer(book: Ledger) -> None:
    refused(book, gen("I0002", party="5001", facility="50001", fuel="ethanol", d_code=6,
                      volume=1_000, foreign_producer="9101"), "§80.1426(c)(5)", "foreign_producer")
    # the RIN-generating foreign producer itself generates for its fuel
    ok(book, gen("F0001", party="9101", facility="91001", fuel="ethanol", d_code=6, volume=1_000))


def test_1426_c2_small_producer_counts_all_its_production_in_the_year(book: Ledger) -> None:
    # 1002 produced 9,999 gal with RINs in 2024; +1 gal without RINs makes 10,000, not < 10,000
    ok(book, gen("E0001", party="1002", facility="20011", fuel="ethanol", d_code=6,
                 volume=9_999))
    refused(book, gen("E0002", party="1002", facility="20011", fuel="ethanol", d_code=6,
                      volume=1, generate_rins=False), "§80.1426(c)(2)", "annual_volume")


def test_1426_c2_c3_small_and_new_producers(book: Ledger) -> None:
    # 9,999 gal a year: < 10,000, no RINs needed
    ok(book, gen("E0001", fuel="ethanol", d_code=6, volume=9_999, generate_rins=False))
    # a new facility (year 1): 9,999 + 115,000 = 124,999 < 125,000
    ok(book, gen("E0002", facility="20002", fuel="ethanol", d_code=6, volume=115_000,
                 generate_rins=False, new_facility_year=1))
    # 124,999 + 1 = 125,000: not less than 125,000
    refused(book, gen("E0003", facility="20002", fuel="ethanol", d_code=6, volume=1,
                      generate_rins=False, new_facility_year=1), "§80.1426(c)(3)",
            "annual_volume")


def test_1426_c6_c7_c8_prohibitions(book: Ledger) -> None:
    # (c)(6): 1002 never produced ethanol; ethanol as its feedstock was another party's
    refused(book, gen("R0001", party="1002", facility="20011", fuel="renewable_diesel",
                      d_code=4, volume=1_000, feedstocks=[
                          {"type": "ethanol", "mass_lb": 1_000, "moisture": 0,
                           "converted_fraction": 1, "heating_value_btu_per_lb": 12_800}]),
            "§80.1426(c)(6)", "feedstocks[0].type")
    # (c)(7): renewable fuel oil as heating oil needs end users' affidavits
    refused(book, gen("R0002", fuel="other", d_code=5, volume=1_000, equivalence_value="1.1",
                      heating_oil=True), "§80.1426(c)(7)", "end_user_affidavits")
    ok(book, gen("R0002", fuel="other", d_code=5, volume=1_000, equivalence_value="1.1",
                 heating_oil=True, end_user_affidavits=True))
    # (c)(8): no RINs for a biointermediate
    refused(book, gen("R0003", fuel="ethanol", d_code=6, volume=1_000, biointermediate=True),
            "§80.1426(c)(8)", "biointermediate")


# --- §80.1426(g): delayed RINs ---------------------------------------------------------------


def drn(batch: str, on: str, start: str, end: str, party: str = "1002",
        facility: str = "20011") -> dict[str, Any]:
    # new pathway effective 2011-03-01: fuel of 2010-07-01 .. 2011-02-28 ((g)(3)(i)),
    # generated by 2011-03-01 + 60 days = 2011-04-30 ((g)(4))
    return gen(batch, on=on, party=party, facility=facility, fuel="biodiesel", d_code=4,
               volume=10_000, production_start=start, production_end=end,
               pathway_effective_date="2011-03-01")


def test_1426_g7_g10_g11_delayed_rins_without_f6_rins(book: Ledger) -> None:
    # 1002 generated no (f)(6) RINs: (g)(7) V_RIN = 1.5 × 10,000 = 15,000, vintage 2010 ((g)(10)),
    # generated assigned and separated at once ((g)(11)): held as K=2
    code = ok(book, drn("DRN01", "2011-04-15", "2010-08-01", "2010-08-31")).rin
    assert code is not None and code[1:5] == "2010" and int(code[30:]) == 15_000
    assert held(book, "1002") == [(4, 2010, 2, 15_000)]
    assert codes(book, "1002") == ["2" + code[1:]]


def test_1426_g3_g4_window_and_deadline(book: Ledger) -> None:
    # produced 2011-03-05, on/after the effective date 2011-03-01
    refused(book, drn("DRN02", "2011-04-15", "2011-03-01", "2011-03-05"), "§80.1426(g)(3)",
            "production_start")
    # produced before 1 July 2010
    refused(book, drn("DRN03", "2011-04-15", "2010-06-01", "2010-06-30"), "§80.1426(g)(3)",
            "production_start")
    # 2011-04-30 is day 60: allowed; 2011-05-01 is day 61
    refused(book, drn("DRN04", "2011-05-01", "2010-09-01", "2010-09-30"), "§80.1426(g)(4)",
            "generated_on")
    ok(book, drn("DRN05", "2011-04-30", "2010-09-01", "2010-09-30"))


def test_1426_g9_all_delayed_rins_of_a_producer_on_one_date(book: Ledger) -> None:
    ok(book, drn("DRN06", "2011-04-15", "2010-08-01", "2010-08-31"))
    result = book.apply(drn("DRN07", "2011-04-16", "2010-09-01", "2010-09-30"))
    assert (result.status, result.citation) == ("rejected", "§80.1426(g)(9)"), result.error


# --- §80.1428(a): assigned RINs ------------------------------------------------------------


@pytest.fixture
def market(book: Ledger) -> Ledger:
    """1001's ethanol batch: 1.0 × 10,000 gal = 10,000 D6 K=1 gallon-RINs."""
    ok(book, gen("E0001", on="2024-03-01", fuel="ethanol", d_code=6, volume=10_000))
    return book


def test_1428_a3_assigned_rins_move_only_with_fuel(market: Ledger) -> None:
    refused(market, transfer("1001", "2001", rins(6, 1, 1_000)), "§80.1428(a)(3)", "volume")


def test_1428_a4_at_most_2_5_gallon_rins_per_gallon(market: Ledger) -> None:
    # 4,001 gallon-RINs with 1,600 gal: 2.5 × 1,600 = 4,000 < 4,001
    refused(market, transfer("1001", "2001", rins(6, 1, 4_001), volume=1_600), "§80.1428(a)(4)",
            "volume")
    # 4,000 ≤ 4,000
    ok(market, transfer("1001", "2001", rins(6, 1, 4_000), volume=1_600))
    # 2.5 × 399.6 = 999: 999 allowed with 399.6 gal
    ok(market, transfer("1001", "2001", rins(6, 1, 999), volume="399.6"))
    assert held(market, "2001") == [(6, 2024, 1, 4_999)]


def test_1428_a2_no_separation_outside_1429(market: Ledger) -> None:
    ok(market, transfer("1001", "2001", rins(6, 1, 10_000), volume=4_000))
    result = market.apply({"type": "separate", "date": "2024-03-21", "party": "2001",
                           "reason": "because", "rins": rins(6, 1, 1_000), "volume": 400})
    assert result.status == "rejected" and result.citation is not None
    assert result.citation.startswith("§80.1429") or result.citation.startswith("§80.1428")


def test_1428_a5_quarter_end_check(market: Ledger) -> None:
    # 2001 receives 10,000 RINs with 4,000 gal (3 Mar), then sells 2,000 gal without RINs.
    # 31 Mar: RINs 10,000; fuel 2,000 gal; limit 2.5 × 2,000 = 5,000; excess 5,000
    ok(market, transfer("1001", "2001", rins(6, 1, 10_000), on="2024-03-03", volume=4_000))
    ok(market, {"type": "transfer_fuel", "date": "2024-03-10", "from": "2001", "to": "3001",
                "volume": 2_000})
    rows = {(r["party"], r["date"]): r for r in Views(market).quarterly(2024)}
    march = rows[("2001", date(2024, 3, 31))]
    assert (march["assigned_rins"], int(float(march["volume"])), int(float(march["limit"])),
            int(float(march["excess"])), march["ok"]) == (10_000, 2_000, 5_000, 5_000, False)
    # 3001 owns 2,000 gal and no assigned RINs: 0 ≤ 5,000
    assert rows[("3001", date(2024, 3, 31))]["ok"] in (True, 1)
    # all four dates of (a)(5)(ii) are checked
    assert sorted({d for _, d in rows}) == [date(2024, 3, 31), date(2024, 6, 30),
                                             date(2024, 9, 30), date(2024, 12, 31)]


# --- §80.1428(b): separated RINs ------------------------------------------------------------


def test_1428_b2_b3_separated_rins_transfer_any_number_of_times(market: Ledger) -> None:
    ok(market, transfer("1001", "2001", rins(6, 1, 10_000), volume=4_000))
    ok(market, {"type": "separate", "date": "2024-03-21", "party": "2001", "reason": "blending",
                "rins": rins(6, 1, 10_000), "volume": 4_000})
    for n, (seller, buyer) in enumerate([("2001", "3001"), ("3001", "1002"), ("1002", "3001")]):
        ok(market, transfer(seller, buyer, rins(6, 2, 10_000), on=f"2024-04-0{n + 1}"))
    assert held(market, "3001") == [(6, 2024, 2, 10_000)]
    refused(market, transfer("3001", "4444", rins(6, 2, 10), on="2024-04-05"),
            "§80.1428(b)(2)", "to")


# --- §80.1428(c): expiry -----------------------------------------------------------------


def test_1428_c_a_rin_is_valid_the_year_generated_and_the_next(book: Ledger) -> None:
    ok(book, gen("E0001", on="2022-03-01", fuel="ethanol", d_code=6, volume=10_000))
    ok(book, transfer("1001", "3001", rins(6, 1, 10_000, 2022), on="2022-03-02", volume=4_000))
    ok(book, {"type": "separate", "date": "2022-03-03", "party": "3001",
              "reason": "obligated_party", "rins": rins(6, 1, 10_000, 2022), "volume": 4_000})
    retire = {"type": "retire", "date": "2024-02-01", "party": "3001", "reason": "compliance",
              "rins": rins(6, 2, 1_000, 2022)}
    # a 2022 RIN for 2024 compliance is expired
    result = book.apply(retire | {"compliance_year": 2024})
    assert result.status == "rejected" and "§80.1428(c)" in (result.error or ""), result.error
    # for 2023, the following calendar year, it is valid
    ok(book, retire | {"compliance_year": 2023})


# --- §80.1428(d): split ------------------------------------------------------------------


def test_1428_d_split_daughters_seen_and_moved_by_their_own_codes(market: Ledger) -> None:
    parent = "1" "2024" "1001" "20001" "E0001" "10" "6" "00000001" "00010000"
    # (d)(2): 3,000 + 7,000 = 10,000; (d)(1): all but S/E identical
    refused(market, {"type": "split", "date": "2024-03-02", "party": "1001", "rin": parent,
                     "sizes": [3_000, 6_999]}, "§80.1428(d)(2)", "sizes")
    daughters = ok(market, {"type": "split", "date": "2024-03-02", "party": "1001",
                            "rin": parent, "sizes": [3_000, 7_000]}).rins
    first = parent[:22] + "00000001" "00003000"
    second = parent[:22] + "00003001" "00010000"
    assert daughters == [first, second]
    assert codes(market, "1001") == [first, second]
    assert [(r["rin"], r["gallon_rins"]) for r in Views(market).holdings("1001", blocks=True)] \
        == [(first, 3_000), (second, 7_000)]
    # the second daughter moves by its code: 7,000 ≤ 2.5 × 2,800
    ok(market, transfer("1001", "2001", {"code": second}, volume=2_800))
    assert codes(market, "2001") == [second]
    # and is separated by its code: the same serials with K=2
    ok(market, {"type": "separate", "date": "2024-03-21", "party": "2001", "reason": "blending",
                "rins": {"code": second}, "volume": 2_800})
    assert codes(market, "2001") == ["2" + second[1:]]
    ok(market, transfer("2001", "3001", {"code": "2" + second[1:]}, on="2024-03-22"))
    assert codes(market, "3001") == ["2" + second[1:]]
    assert codes(market, "1001") == [first]


def test_1428_a6_transfers_without_a_ptd_are_reported(market: Ledger) -> None:
    ok(market, transfer("1001", "2001", rins(6, 1, 1_000), volume=400, ptd="PTD-1"))
    ok(market, transfer("1001", "2001", rins(6, 1, 1_000), volume=400))
    missing = Views(market).ptd(missing=True)
    assert [(r["party"], r["gallon_rins"], r["required_by"]) for r in missing] == [
        ("1001", 1_000, "§80.1428(a)(6)")]


# --- further cases from the text ---------------------------------------------------------


def test_1426_f8_at_60_f_the_correlations_are_not_special_cased(book: Ledger) -> None:
    # ethanol at 60 °F: 1.0378 − 0.0006301 × 60 = 1.0378 − 0.037806 = 0.999994
    # Vs = 100,000 × 0.999994 = 99,999.4 → 99,999
    code = ok(book, gen("T0005", fuel="ethanol", d_code=6, measured_volume=100_000,
                        temperature_f=60)).rin
    assert code is not None and int(code[30:]) == 99_999
    # biodiesel at 60 °F: 1.02746025 − 0.00045767 × 60 = 1.02746025 − 0.0274602 = 1.00000005
    # V_RIN = 1.5 × 10,000 × 1.00000005 = 15,000.00075 → 15,000
    code = ok(book, gen("T0006", fuel="biodiesel", d_code=4, measured_volume=10_000,
                        temperature_f=60)).rin
    assert code is not None and int(code[30:]) == 15_000


def test_1426_c2_importer_below_10000_gallons_need_not_generate(book: Ledger) -> None:
    ok(book, gen("I0003", party="5001", facility="50001", fuel="ethanol", d_code=6,
                 volume=9_999, generate_rins=False))
    refused(book, gen("I0004", party="5001", facility="50001", fuel="ethanol", d_code=6,
                      volume=1, generate_rins=False), "§80.1426(c)(2)", "annual_volume")


def test_1426_c3_the_new_producer_allowance_is_not_for_importers(book: Ledger) -> None:
    # (c)(3) is for "new renewable fuel producers" and their "production facility"; an
    # importer of 50,000 gal a year falls under (c)(2) alone: 50,000 is not < 10,000
    refused(book, gen("I0005", party="5001", facility="50001", fuel="ethanol", d_code=6,
                      volume=50_000, generate_rins=False, new_facility_year=1),
            "§80.1426(c)(3)", "new_facility_year")


def test_1426_c3i_at_most_three_years(book: Ledger) -> None:
    # calendar year 4 of a new facility: (c)(3) no longer applies, and 50,000 ≥ 10,000
    result = book.apply(gen("E0009", facility="20002", fuel="ethanol", d_code=6, volume=50_000,
                            generate_rins=False, new_facility_year=4))
    assert result.status == "rejected" and result.citation in (
        "§80.1426(c)(2)", "§80.1426(c)(3)(i)"), result.error
    ok(book, gen("E0010", facility="20002", fuel="ethanol", d_code=6, volume=50_000,
                 generate_rins=False, new_facility_year=3))


def test_1428_a4_the_fuel_sent_with_assigned_rins_is_fuel_owned(market: Ledger) -> None:
    # 1001 sells its 10,000 gal without RINs, then tries 1,000 RINs "with" 400 gal it lacks
    ok(market, {"type": "transfer_fuel", "date": "2024-03-05", "from": "1001", "to": "3001",
                "volume": 10_000})
    refused(market, transfer("1001", "2001", rins(6, 1, 1_000), volume=400), "§80.1428(a)(3)",
            "volume")


def test_1428_a5_generator_owns_its_batch_and_fuel(market: Ledger) -> None:
    # 10,000 assigned gallon-RINs with 10,000 gal: limit 2.5 × 10,000 = 25,000, no excess
    row = next(r for r in Views(market).quarterly(2024, party="1001")
               if r["date"] == date(2024, 3, 31))
    assert (row["assigned_rins"], int(float(row["limit"])), int(float(row["excess"]))) == (
        10_000, 25_000, 0)


def test_1428_d_a_partial_block_can_be_divided_and_a_k2_split_keeps_k2(market: Ledger) -> None:
    # FIFO 6,000 of 10,000 to 2001 (2,400 gal: 6,000 ≤ 6,000): serials 1-6,000; 1001 keeps the rest
    ok(market, transfer("1001", "2001", rins(6, 1, 6_000), volume=2_400))
    prefix = "1" "2024" "1001" "20001" "E0001" "10" "6"
    assert codes(market, "1001") == [prefix + "00006001" "00010000"]
    assert codes(market, "2001") == [prefix + "00000001" "00006000"]
    ok(market, {"type": "separate", "date": "2024-03-21", "party": "2001", "reason": "blending",
                "rins": rins(6, 1, 6_000), "volume": 2_400})
    separated = "2" + prefix[1:] + "00000001" "00006000"
    # (d)(2) 2,000 + 4,000 = 6,000; (d)(1) K stays 2 and every field but S/E is kept
    daughters = ok(market, {"type": "split", "date": "2024-03-22", "party": "2001",
                            "rin": separated, "sizes": [2_000, 4_000]}).rins
    assert daughters == ["2" + prefix[1:] + "00000001" "00002000",
                         "2" + prefix[1:] + "00002001" "00006000"]
    # a block held only in part is not divided: 1001 holds 6,001-10,000, not 1-10,000
    result = market.apply({"type": "split", "date": "2024-03-22", "party": "1001",
                           "rin": prefix + "00000001" "00010000", "sizes": [5_000, 5_000]})
    assert result.status == "rejected" and (result.citation or "").startswith("§80.1428")


def test_1426_c3i_years_count_from_the_first_gallon_even_without_rins(book: Ledger) -> None:
    # facility 20002 made its first gallon in 2020 (recorded without RINs, year 1 of (c)(3)),
    # so 2024 is its calendar year 2024 − 2020 + 1 = 5: no longer "new"
    ok(book, gen("E0001", on="2020-06-30", facility="20002", fuel="ethanol", d_code=6,
                 volume=50_000, generate_rins=False, new_facility_year=1))
    result = book.apply(gen("E0002", facility="20002", fuel="ethanol", d_code=6, volume=50_000,
                            generate_rins=False, new_facility_year=1))
    assert (result.status, result.citation, result.field) == (
        "rejected", "§80.1426(c)(3)(i)", "new_facility_year"), result.error


def test_1428_d_separated_daughters_stay_apart(market: Ledger) -> None:
    parent = "1" "2024" "1001" "20001" "E0001" "10" "6" "00000001" "00010000"
    ok(market, {"type": "split", "date": "2024-03-02", "party": "1001", "rin": parent,
                "sizes": [3_000, 7_000]})
    # both daughters FIFO to 2001 with 4,000 gal (10,000 ≤ 10,000), separated together
    ok(market, transfer("1001", "2001", rins(6, 1, 10_000), volume=4_000))
    ok(market, {"type": "separate", "date": "2024-03-21", "party": "2001", "reason": "blending",
                "rins": rins(6, 1, 10_000), "volume": 4_000})
    k2 = "2" + parent[1:22]
    expected = [k2 + "00000001" "00003000", k2 + "00003001" "00010000"]
    assert codes(market, "2001") == expected
    ok(market, transfer("2001", "3001", rins(6, 2, 10_000), on="2024-03-22"))
    assert codes(market, "3001") == expected
    assert [r["rin"] for r in Views(market).holdings("3001", blocks=True)] == expected
    refused(market, transfer("3001", "2001", {"code": k2 + "00000001" "00010000"},
                             on="2024-03-23"), "§80.1428(d)", "rins.code")


def test_1426_g9_g10_one_date_vintages_of_production_years(book: Ledger) -> None:
    # all on 2011-04-15 ((g)(9)); 2010 fuel → vintage 2010, 2011 fuel → vintage 2011 ((g)(10))
    first = ok(book, drn("DRN01", "2011-04-15", "2010-08-01", "2010-08-31")).rin
    second = ok(book, drn("DRN02", "2011-04-15", "2011-01-01", "2011-01-31")).rin
    assert first is not None and second is not None
    assert (first[1:5], second[1:5]) == ("2010", "2011")
    assert held(book, "1002") == [(4, 2010, 2, 15_000), (4, 2011, 2, 15_000)]


@pytest.mark.parametrize("wrong", [
    "1" "2024" "1001" "20001" "E0001" "15" "6" "00000001" "00010000",  # RR of biodiesel
    "1" "2024" "1001" "20001" "E0001" "10" "4" "00000001" "00010000",  # another D code
    "1" "2023" "1001" "20001" "E0001" "10" "6" "00000001" "00010000",  # another year
    "1" "2024" "1001" "20002" "E0001" "10" "6" "00000001" "00010000",  # another facility
])
def test_1425_a_code_differing_in_any_field_names_no_held_block(market: Ledger,
                                                                wrong: str) -> None:
    refused(market, transfer("1001", "2001", {"code": wrong}, volume=4_000), "§80.1428",
            "rins.code")
    # the right code moves the block: 10,000 ≤ 2.5 × 4,000
    right = "1" "2024" "1001" "20001" "E0001" "10" "6" "00000001" "00010000"
    ok(market, transfer("1001", "2001", {"code": right}, volume=4_000))
