"""§80.1426 paragraphs the ledger got wrong or left to the caller, each broken on purpose.

Every test here failed on the code before this change (it accepted the line, or refused it
under another paragraph); every number is worked by hand from the regulation text.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from markets import ok, register_all

from ledger import Ledger, Result
from ledger.domain.errors import RuleViolation
from ledger.domain.party import Party
from ledger.domain.rin import BlockKey, RinBlock
from ledger.rules.s1426.delayed import DelayedHistory, check_retirement
from ledger.rules.s1426.generation import GenerationInput, check_delayed, compute_generation

PARTIES = [
    ("1001", ["producer"], ["20001"]),
    ("1002", ["producer"], ["20011"]),
    ("2001", ["blender"], []),
    ("5001", ["importer"], ["50001"]),
    ("9101", ["foreign_producer", "producer"], ["91001"]),
    ("9201", ["foreign_producer"], []),
]


def apply(ledger: Ledger, **cmd: Any) -> Result:
    return ledger.apply(cmd)


def refused(ledger: Ledger, cmd: dict[str, Any], rule: str, citation: str, field: str) -> str:
    before = ledger.position()
    result = ledger.apply(cmd)
    assert (result.status, result.rule, result.citation, result.field) == (
        "rejected", rule, citation, field), result.error
    assert ledger.position() == before, "a rejection stores nothing"
    assert result.error is not None and result.error.startswith(f"{citation}: ")
    return result.error


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path) as book:
        register_all(book, PARTIES)
        yield book


def inp(**fields: Any) -> GenerationInput:
    return GenerationInput(**fields)


def gen(party: str, facility: str, batch: str, on: str, **more: Any) -> dict[str, Any]:
    return {"type": "generate", "date": on, "party": party, "facility": facility,
            "batch": batch, **more}


# --- (g) delayed RINs -------------------------------------------------------------------------


def rins(d_code: int, k: int, quantity: int, vintage: int = 2010) -> dict[str, int]:
    return {"d_code": d_code, "vintage": vintage, "k": k, "quantity": quantity}


def retire_delayed(quantity: int, k: int = 2, on: str = "2011-04-01") -> dict[str, Any]:
    return {"type": "retire", "date": on, "party": "1001", "reason": "delayed_rin",
            "rins": rins(6, k, quantity)}


def delayed(batch: str, volume: int, on: str = "2011-04-15", month: int = 10) -> dict[str, Any]:
    # new pathway effective 2011-03-01: window 2010-07-01 .. 2011-02-28, deadline 2011-04-30
    return gen("1001", "20001", batch, on, fuel="biodiesel", d_code=4, volume=volume,
               production_start=f"2010-{month:02d}-01", production_end=f"2010-{month:02d}-28",
               pathway_effective_date="2011-03-01")


@pytest.fixture
def sold_f6(ledger: Ledger) -> Ledger:
    """1001 generated (f)(6) RINs in 2010 and sold 12,000 with fuel; it holds 32,000 K=2 D6."""
    # (f)(6)(i): 1.0 × 15,000 gal of ethanol = 15,000 D6 gallon-RINs, vintage 2010
    ok(ledger, **gen("1001", "20001", "F0001", "2010-10-15", fuel="ethanol", d_code=6,
                     volume=15_000, ghg_exempt=True))
    # 12,000 of them go to 2001 with 8,000 gal (12,000 ≤ 2.5 × 8,000): the (g)(5)(i) limit
    ok(ledger, type="transfer", date="2010-10-20", **{"from": "1001"}, to="2001",
       rins=rins(6, 1, 12_000), volume=8_000)
    # 1002's ordinary D6 ethanol, 1.0 × 20,000 = 20,000, also reaches 2001 with its fuel
    ok(ledger, **gen("1002", "20011", "E0001", "2010-10-15", fuel="ethanol", d_code=6,
                     volume=20_000))
    ok(ledger, type="transfer", date="2010-10-20", **{"from": "1002"}, to="2001",
       rins=rins(6, 1, 20_000), volume=20_000)
    ok(ledger, type="separate", date="2010-10-25", party="2001", reason="blending",
       rins=rins(6, 1, 32_000), volume=28_000)
    # 12,000 + 20,000 = 32,000 separated D6 2010 RINs back to 1001
    ok(ledger, type="transfer", date="2010-10-26", **{"from": "2001"}, to="1001",
       rins=rins(6, 2, 32_000))
    return ledger


def test_g5_retired_rins_have_k_code_2(sold_f6: Ledger) -> None:
    # 1001 still holds 15,000 − 12,000 = 3,000 assigned (K=1) RINs of F0001
    refused(sold_f6, retire_delayed(3_000, k=1), "DELAYED-RETIRE-K2", "§80.1426(g)(5)(iii)",
            "rins")


def test_g5_no_more_retired_than_f6_rins_sold(sold_f6: Ledger) -> None:
    # limit: the 12,000 (f)(6) gallon-RINs 1001 generated in the window and transferred
    error = refused(sold_f6, retire_delayed(12_001), "DELAYED-RETIRE-LIMIT",
                    "§80.1426(g)(5)(i)", "rins")
    assert "0 + 12,001 = 12,001 gallon-RINs of 2010" in error and "the 12,000" in error
    ok(sold_f6, **retire_delayed(10_000))
    # 10,000 + 2,001 = 12,001 > 12,000, even split over two retirements
    refused(sold_f6, retire_delayed(2_001, on="2011-04-02"), "DELAYED-RETIRE-LIMIT",
            "§80.1426(g)(5)(i)", "rins")
    ok(sold_f6, **retire_delayed(2_000, on="2011-04-02"))


def test_g5_retired_rins_are_d6_and_of_the_original_year() -> None:
    history = DelayedHistory(original={2010: 12_000})
    key = BlockKey(2, 2010, "1002", "20011", "E0001", 10, 6, date(2010, 10, 15), "ethanol")
    check_retirement(history, [RinBlock(key, 1, 100)])
    with pytest.raises(RuleViolation) as d4:
        check_retirement(history, [RinBlock(key.__class__(
            2, 2010, "1002", "20011", "B0001", 15, 4, date(2010, 10, 15), "biodiesel"), 1, 100)])
    assert d4.value.citation == "§80.1426(g)(5)(ii)"
    for vintage in (2011, 2012):  # no (f)(6) RINs of 2011 were sold; 2012 is never allowed
        later = BlockKey(2, vintage, "1002", "20011", "E0001", 10, 6, date(vintage, 1, 5),
                         "ethanol")
        with pytest.raises(RuleViolation) as year:
            check_retirement(history, [RinBlock(later, 1, 100)])
        assert year.value.citation == "§80.1426(g)(5)(iv)"


def test_g6_delayed_rins_equal_the_rins_retired(sold_f6: Ledger) -> None:
    ok(sold_f6, **retire_delayed(12_000))
    # 1.5 × 8,001 = 12,001.5 → 12,002 ≠ 12,000; 1.5 × 7,999 = 11,998.5 → 11,999 ≠ 12,000
    error = refused(sold_f6, delayed("DRN01", 8_001), "DELAYED-EQUALS-RETIRED", "§80.1426(g)(6)",
                    "volume")
    assert "0 + 12,002 = 12,002 delayed gallon-RINs of 2010, but 12,000" in error
    refused(sold_f6, delayed("DRN01", 7_999), "DELAYED-EQUALS-RETIRED", "§80.1426(g)(6)",
            "volume")
    # 1.5 × 8,000 = 12,000 = the RINs retired
    code = ok(sold_f6, **delayed("DRN01", 8_000)).rin
    assert code == "1201010012000" "1DRN01154" "00000001" "00012000"
    # (g)(5): "prior to generating delayed RINs" — no retirement afterwards
    refused(sold_f6, retire_delayed(1, on="2011-04-20"), "DELAYED-RETIRE-FIRST",
            "§80.1426(g)(5)", "reason")


def test_g5_a_party_that_sold_f6_rins_retires_before_generating_delayed_rins(
    sold_f6: Ledger,
) -> None:
    # 1001 generated 15,000 (f)(6) RINs on 2010-10-15 (in 2010-07-01 .. 2011-12-31) and
    # transferred 12,000 of them: (g)(5), not (g)(7), applies; it retired none by 2011-04-15
    error = refused(sold_f6, delayed("DRN01", 10_000), "DELAYED-RETIRE-FIRST", "§80.1426(g)(5)",
                    "batch")
    assert "generated 12,000 gallon-RINs under (f)(6)" in error and "retired none" in error
    # a (g)(5) retirement dated after the generation does not count: "prior to generating"
    ok(sold_f6, **retire_delayed(12_000, on="2011-04-20"))
    refused(sold_f6, delayed("DRN01", 8_000), "DELAYED-RETIRE-FIRST", "§80.1426(g)(5)", "batch")
    # generated on 2011-04-20, the retirement's own date: 1.5 × 8,000 = 12,000 = 12,000 retired
    ok(sold_f6, **delayed("DRN01", 8_000, on="2011-04-20"))


def test_g9_all_delayed_rins_on_one_date(ledger: Ledger) -> None:
    # 1001 retired nothing: (g)(7), RINs by volume. 1.5 × 1,000 = 1,500 on 15 April 2011
    ok(ledger, **delayed("DRN01", 1_000))
    ok(ledger, **delayed("DRN02", 1_000, month=11))  # same date: allowed
    refused(ledger, delayed("DRN03", 1_000, on="2011-04-16", month=12), "DELAYED-ONE-DATE",
            "§80.1426(g)(9)", "date")


def test_g3_the_whole_production_period_lies_in_the_window() -> None:
    # pathway effective 2011-02-15: fuel produced from 2010-07-01 to 2011-02-14 qualifies
    effective, on = date(2011, 2, 15), date(2011, 3, 1)
    assert check_delayed("DRN01", date(2011, 2, 1), on, effective, date(2011, 2, 14)) == 2011
    with pytest.raises(RuleViolation) as exc:
        check_delayed("DRN01", date(2011, 2, 1), on, effective, date(2011, 2, 28))
    assert (exc.value.citation, exc.value.field) == ("§80.1426(g)(3)", "production_end")


# --- (c) who may generate ---------------------------------------------------------------------


def imported(batch: str = "I0001", **more: Any) -> dict[str, Any]:
    # renewable diesel, EV 1.7: 1.7 × 1,000 gal = 1,700 D4 gallon-RINs
    return gen("5001", "50001", batch, "2024-01-31", fuel="renewable_diesel", d_code=4,
               volume=1_000, **more)


def test_c4_importer_names_a_registered_foreign_producer(ledger: Ledger) -> None:
    # the contract's generate line names no source: such a batch is taken as stated
    assert ok(ledger, **imported(batch="I0009")).rin is not None
    error = refused(ledger, imported(foreign_producer="9999"), "GEN-IMPORT-FOREIGN",
                    "§80.1426(c)(4)", "foreign_producer")
    assert "party 9999 is not registered" in error
    error = refused(ledger, imported(foreign_producer="1002"), "GEN-IMPORT-FOREIGN",
                    "§80.1426(c)(4)", "foreign_producer")
    assert "registered as producer, not as a foreign producer" in error
    code = ok(ledger, **imported(foreign_producer="9201")).rin
    assert code is not None and code.endswith("00000001" "00001700")


def test_c5_no_rins_for_a_rin_generating_foreign_producers_fuel(ledger: Ledger) -> None:
    error = refused(ledger, imported(foreign_producer="9101"), "GEN-IMPORT-ASSIGNED",
                    "§80.1426(c)(5)", "foreign_producer")
    assert "registered to generate RINs" in error


def test_c6_renewable_fuel_feedstock_of_another_party(ledger: Ledger) -> None:
    # renewable diesel from ethanol: FE = 10,000 lb × 1 × 1 × 12,800 Btu/lb; all renewable, so
    # (f)(3)(vi): 1.7 × 1,000 × FE / FE = 1,700 gallon-RINs
    line = gen("1002", "20011", "J0001", "2024-02-29", fuel="renewable_diesel", d_code=4,
               volume=1_000, feedstocks=[{"type": "ethanol", "mass_lb": 10_000, "moisture": 0,
                                          "converted_fraction": 1,
                                          "heating_value_btu_per_lb": 12_800}])
    # 1002 never generated RINs for ethanol: the ethanol was another party's
    refused(ledger, line, "GEN-OTHER-PARTY-FUEL", "§80.1426(c)(6)", "feedstocks[0].type")
    ok(ledger, **gen("1002", "20011", "E0001", "2024-01-31", fuel="ethanol", d_code=6,
                     volume=1_000))
    ok(ledger, **line)  # its own ethanol may be the feedstock now


def test_c7_heating_oil_needs_end_user_affidavits() -> None:
    base: dict[str, Any] = {"fuel": "other", "d_code": 5, "volume": 1_000,
                            "equivalence_value": "1.1", "heating_oil": True}
    with pytest.raises(RuleViolation) as exc:
        compute_generation(inp(**base))
    assert (exc.value.citation, exc.value.field) == ("§80.1426(c)(7)", "end_user_affidavits")
    (y,) = compute_generation(inp(**base, end_user_affidavits=True))
    assert y.gallon_rins == 1_100  # 1.1 × 1,000


# --- (f)(4), (f)(5) ---------------------------------------------------------------------------


@pytest.mark.parametrize("d_code", [3, 7])
def test_f5_i_b_food_waste_is_not_cellulosic(d_code: int) -> None:
    with pytest.raises(RuleViolation) as exc:
        compute_generation(inp(fuel="ethanol", d_code=d_code, volume=1_000,
                                           waste="food"))
    assert (exc.value.citation, exc.value.field) == ("§80.1426(f)(5)(i)(B)", "d_code")
    (y,) = compute_generation(inp(fuel="ethanol", d_code=6, volume=1_000,
                                              waste="food"))
    assert (y.gallon_rins, y.paragraph) == (1_000, "§80.1426(f)(5)(iv)(B)")  # 1.0 × 1,000


def test_f4_iv_b_method_c_needs_ten_percent() -> None:
    base: dict[str, Any] = {"fuel": "renewable_diesel", "d_code": 4, "volume": 100_000}
    with pytest.raises(RuleViolation) as low:
        compute_generation(inp(**base, renewable_fraction="0.05",
                                           renewable_fraction_method="C"))
    assert low.value.citation == "§80.1426(f)(4)(iv)(B)"
    # 1.7 × 100,000 × 0.10 = 17,000 (method C at exactly 10 %); 1.7 × 100,000 × 0.05 = 8,500
    for r, method, rins_ in (("0.10", "C", 17_000), ("0.05", "B", 8_500), ("0.05", "approved",
                                                                             8_500)):
        (y,) = compute_generation(inp(**base, renewable_fraction=r,
                                                  renewable_fraction_method=method))
        assert y.gallon_rins == rins_


def test_f4_method_is_recorded_on_the_generated_event(ledger: Ledger) -> None:
    ok(ledger, **gen("1002", "20011", "R0001", "2024-01-31", fuel="renewable_diesel", d_code=4,
                     volume=100_000, renewable_fraction="0.35", renewable_fraction_method="C"))
    (event,) = [e for e in ledger.log.history(Party.create_id("1002"))
                if isinstance(e, Party.Generated)]
    assert event.renewable_fraction_method == "C"
    assert event.rin.gallon_rins == 59_500  # 1.7 × 100,000 × 0.35


def test_v1_generated_events_upcast_without_a_method(tmp_path: Path) -> None:
    from test_upcasting import load_v1_store

    ledger = load_v1_store(tmp_path)
    generated = [e for e in ledger.log.history(Party.create_id("1001"))
                 if isinstance(e, Party.Generated)]
    assert generated and all(e.renewable_fraction_method is None for e in generated)


@pytest.mark.parametrize(
    ("feedstock", "citation"),
    [("vegetable_oil", "§80.1426(f)(1)(v)(A)"), ("sugar", "§80.1426(f)(1)(v)(B)"),
     ("starch", "§80.1426(f)(1)(v)(B)")],
)
def test_f1_v_separated_oil_sugar_starch_earn_no_cellulosic_rins(
    feedstock: str, citation: str
) -> None:
    one = {"type": feedstock, "mass_lb": 1_000, "moisture": 0, "converted_fraction": 1}
    for d_code in (3, 7):
        with pytest.raises(RuleViolation) as exc:
            compute_generation(inp(fuel="ethanol", d_code=d_code, volume=1_000,
                                               feedstocks=[one]))
        assert (exc.value.citation, exc.value.field) == (citation, "feedstocks[0].d_code")
    # D6 is allowed: one renewable feedstock, (f)(3)(vi): 1.0 × 1,000 × FE / FE = 1,000
    (y,) = compute_generation(inp(fuel="ethanol", d_code=6, volume=1_000,
                                              feedstocks=[one]))
    assert y.gallon_rins == 1_000


def test_g5_a_party_without_f6_rins_sold_may_retire_none() -> None:
    # no (f)(6) RINs transferred: the (g)(5)(i) limit is 0 gallon-RINs
    key = BlockKey(2, 2010, "1002", "20011", "E0001", 10, 6, date(2010, 10, 15), "ethanol")
    with pytest.raises(RuleViolation) as exc:
        check_retirement(DelayedHistory(), [RinBlock(key, 1, 1)])
    assert exc.value.citation == "§80.1426(g)(5)(i)"


def test_c3_i_a_facilitys_years_count_from_its_first_batch(ledger: Ledger) -> None:
    # 1001 generated at 20001 in 2022: 2024 is the facility's year 2024 − 2022 + 1 = 3
    ok(ledger, **gen("1001", "20001", "E0001", "2022-05-31", fuel="ethanol", d_code=6,
                     volume=1_000))
    line = gen("1001", "20001", "00001", "2024-03-31", fuel="ethanol", d_code=6,
               volume=100_000, generate_rins=False)
    error = refused(ledger, {**line, "new_facility_year": 1}, "GEN-NEW-FACILITY-YEAR",
                    "§80.1426(c)(3)(i)", "new_facility_year")
    assert "calendar year 3, not 1" in error
    ok(ledger, **line, new_facility_year=3)  # 100,000 < 125,000 gal in its third year
    result = apply(ledger, **line, id="zero", new_facility_year=0)
    assert (result.status, result.field) == ("rejected", "new_facility_year")  # not a crash
