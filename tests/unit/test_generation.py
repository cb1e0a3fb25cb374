"""Generation arithmetic and rules (§80.1426, §80.1415): every number below is worked by hand."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from ledger.domain.errors import RuleViolation
from ledger.domain.fuels import (
    APPROVED_EV,
    DEFAULT_EV,
    Fuel,
    other_fuel_ev,
    rr,
)
from ledger.rules.s1426.generation import (
    BatchYield,
    Feedstock,
    GenerationInput,
    check_delayed,
    check_small_producer_exemption,
    compute_generation,
    feedstock_energy,
    is_delayed,
)

D = Decimal


def generate(**fields: Any) -> list[BatchYield]:
    return compute_generation(GenerationInput(**fields))


def one(**fields: Any) -> BatchYield:
    (batch_yield,) = generate(**fields)
    return batch_yield


def breaks(rule_id: str, citation: str, call: Callable[[], object]) -> RuleViolation:
    with pytest.raises(RuleViolation) as exc:
        call()
    assert exc.value.rule_id == rule_id
    assert exc.value.citation == citation
    return exc.value


def fs(type_: str, mass: int | str, moisture: str = "0", cf: str = "1", **more: Any) -> dict:
    return {"type": type_, "mass_lb": mass, "moisture": moisture, "converted_fraction": cf, **more}


# --- fuels and equivalence values, §80.1415 ---------------------------------------------------


def test_default_equivalence_values_and_rr() -> None:
    expected = {
        Fuel.ETHANOL: D("1.0"), Fuel.BIODIESEL: D("1.5"), Fuel.BUTANOL: D("1.3"),
        Fuel.RENEWABLE_DIESEL: D("1.7"), Fuel.BIOGAS: D("1.0"), Fuel.ELECTRICITY: D("1.0"),
    }
    assert expected == DEFAULT_EV
    assert APPROVED_EV[Fuel.RENEWABLE_DIESEL] == {D("1.7"), D("1.6"), D("1.5")}
    assert [rr(D("1.0")), rr(D("1.5")), rr(D("1.3")), rr(D("1.7"))] == [10, 15, 13, 17]
    with pytest.raises(ValueError, match="tenths"):
        rr(D("1.25"))


def test_other_fuel_ev_formula() -> None:
    # (0.9 / 0.972) × (100,000 / 77,000) = 90,000 / 74,844 = 1.2025… → 1.2
    assert other_fuel_ev(D("0.9"), D(100_000)) == D("1.2")
    # (1 / 0.972) × (112,000 / 77,000) = 112,000 / 74,844 = 1.4964… → 1.5
    assert other_fuel_ev(D(1), D(112_000)) == D("1.5")
    # (0.5 / 0.972) × (37,422 / 77,000) = 18,711 / 74,844 = 0.25 exactly → 0.3 (halves up)
    assert other_fuel_ev(D("0.5"), D(37_422)) == D("0.3")


def test_other_fuel_generation_from_r_and_ec() -> None:
    # EV = 1.2 (above); 1.2 × 10,000 = 12,000, RR 12
    y = one(fuel="other", d_code=5, volume=10_000, renewable_fraction="0.9",
            energy_content_btu_per_gal=100_000)
    assert (y.gallon_rins, y.rr, y.equivalence_value) == (12_000, 12, D("1.2"))
    assert y.paragraph == "§80.1426(f)(3)(ii)"


def test_gen_ev_approved_alternative_passes() -> None:
    # renewable diesel approved at 1.6: 1.6 × 100,000 = 160,000, RR 16
    y = one(fuel="renewable_diesel", d_code=4, volume=100_000, equivalence_value="1.60")
    assert (y.gallon_rins, y.rr, y.equivalence_value) == (160_000, 16, D("1.6"))


@pytest.mark.parametrize(("fuel", "ev"), [("ethanol", "1.5"), ("renewable_diesel", "1.4")])
def test_gen_ev_breaks(fuel: str, ev: str) -> None:
    err = breaks("GEN-EV", "§80.1415(b)",
                 lambda: generate(fuel=fuel, d_code=6, volume=1_000, equivalence_value=ev))
    assert err.field == "equivalence_value"
    assert ev in err.message


def test_gen_ev_other_passes_with_approved_ev() -> None:
    # 2.0 × 1,000 = 2,000, RR 20
    y = one(fuel="other", d_code=5, volume=1_000, equivalence_value="2.0")
    assert (y.gallon_rins, y.rr) == (2_000, 20)


def test_gen_ev_other_breaks_without_ev() -> None:
    breaks("GEN-EV-OTHER", "§80.1415(c)(1)", lambda: generate(fuel="other", d_code=5, volume=1))


def test_gen_ev_other_breaks_on_hundredths() -> None:
    err = breaks("GEN-EV-OTHER", "§80.1415(c)(1)",
                 lambda: generate(fuel="other", d_code=5, volume=1, equivalence_value="1.25"))
    assert "1.25" in err.message


def test_rin_rr_breaks_when_ev_has_no_two_digit_rr() -> None:
    # 10.0 → RR 100; (0.01 / 0.972) × (100,000 / 77,000) = 1,000 / 74,844 = 0.013 → 0.0 → RR 0
    breaks("RIN-RR", "§80.1425(f)",
           lambda: generate(fuel="other", d_code=5, volume=1, equivalence_value="10.0"))
    breaks("RIN-RR", "§80.1425(f)",
           lambda: generate(fuel="other", d_code=5, volume=1, renewable_fraction="0.01",
                            energy_content_btu_per_gal=100_000))


# --- single fuel and temperature standardization, (f)(3)(ii) and (f)(8) -----------------------


def test_ethanol_measured_at_80_f() -> None:
    # Vs = 100,000 × (−0.0006301 × 80 + 1.0378) = 100,000 × 0.987392 = 98,739.2 → 98,739
    y = one(fuel="ethanol", d_code=6, measured_volume=100_000, temperature_f=80)
    assert y.standardized_volume == D("98739.2")
    assert (y.gallon_rins, y.rr, y.d_code) == (98_739, 10, 6)
    assert y.paragraph == "§80.1426(f)(3)(ii)"
    assert y.formula == (
        "Vs = 100,000 × (−0.0006301 × 80 + 1.0378) = 98,739.2; 1.0 × 98,739.2 = 98,739.2 → 98,739"
    )


def test_ethanol_measured_at_68_f() -> None:
    # Vs = 250,000 × (−0.0006301 × 68 + 1.0378) = 250,000 × 0.9949532 = 248,738.3 → 248,738
    y = one(fuel="ethanol", d_code=6, measured_volume=250_000, temperature_f=68)
    assert (y.standardized_volume, y.gallon_rins) == (D("248738.3"), 248_738)


def test_biodiesel_standardized_volume() -> None:
    # 1.5 × 10,000 = 15,000, RR 15
    y = one(fuel="biodiesel", d_code=4, volume=10_000)
    assert (y.gallon_rins, y.rr, y.equivalence_value) == (15_000, 15, D("1.5"))


def test_biodiesel_measured_at_60_f_method_a() -> None:
    # factor −0.00045767 × 60 + 1.02746025 = 1.00000005; Vs = 10,000.0005;
    # 1.5 × 10,000.0005 = 15,000.00075 → 15,000
    y = one(fuel="biodiesel", d_code=4, measured_volume=10_000, temperature_f=60)
    assert (y.standardized_volume, y.gallon_rins) == (D("10000.0005"), 15_000)


def test_biodiesel_measured_at_80_f_method_a() -> None:
    # Vs = 100,000 × (−0.00045767 × 80 + 1.02746025) = 100,000 × 0.99084665 = 99,084.665
    # 1.5 × 99,084.665 = 148,626.9975 → 148,627
    y = one(fuel="biodiesel", d_code=4, measured_volume=100_000, temperature_f=80)
    assert (y.standardized_volume, y.gallon_rins) == (D("99084.665"), 148_627)


def test_gen_temperature_holds_at_the_ends_of_the_tables_range() -> None:
    # 1,000 × (−0.0006301 × 302 + 1.0378) = 1,000 × 0.8475098 = 847.5098 → 848
    # 1,000 × (−0.0006301 × −58 + 1.0378) = 1,000 × 1.0743458 = 1,074.3458 → 1,074
    assert one(fuel="ethanol", d_code=6, measured_volume=1000, temperature_f=302).gallon_rins \
        == 848
    assert one(fuel="ethanol", d_code=6, measured_volume=1000, temperature_f=-58).gallon_rins \
        == 1074


@pytest.mark.parametrize("temperature", ["-999999", "-58.000001", "302.000001", 1000])
@pytest.mark.parametrize("fuel", ["ethanol", "biodiesel"])
def test_gen_temperature_breaks_outside_the_tables_range(fuel: str, temperature: object) -> None:
    # issue 9 attack 11: −999,999 °F turned 1,000 gallons of ethanol into 631,137 gallon-RINs
    err = breaks("GEN-TEMPERATURE", "§80.1426(f)(8)",
                 lambda: generate(fuel=fuel, d_code=6 if fuel == "ethanol" else 4,
                                  measured_volume=1000, temperature_f=temperature))
    assert err.field == "temperature_f" and "-58 °F to 302 °F" in err.message


def test_gen_standardize_passes_with_standardized_volume() -> None:
    # 1.7 × 10,000 = 17,000
    assert one(fuel="renewable_diesel", d_code=4, volume=10_000).gallon_rins == 17_000


def test_gen_standardize_breaks_for_other_fuels_measured() -> None:
    err = breaks("GEN-STANDARDIZE", "§80.1426(f)(8)(iii)",
                 lambda: generate(fuel="renewable_diesel", d_code=4, measured_volume=10_000,
                                  temperature_f=70))
    assert err.field == "measured_volume"


def test_biogas_by_btu() -> None:
    # 7,700,000 Btu / 77,000 = 100 gallons; 1.0 × 100 = 100
    y = one(fuel="biogas", d_code=3, btu=7_700_000)
    assert (y.gallon_rins, y.rr, y.standardized_volume) == (100, 10, D(100))
    # 115,500 / 77,000 = 1.5; 1.0 × 1.5 = 1.5 → 2 (halves round up)
    assert one(fuel="biogas", d_code=3, btu=115_500).gallon_rins == 2


def test_electricity_by_kwh() -> None:
    # 226,000 kWh / 22.6 = 10,000 gallons → 10,000
    y = one(fuel="electricity", d_code=3, kwh=226_000)
    assert (y.gallon_rins, y.rr) == (10_000, 10)
    # 1,000 / 22.6 = 44.247… (22.6 × 44 = 994.4, 5.6 / 22.6 = 0.248) → 44
    assert one(fuel="electricity", d_code=3, kwh=1_000).gallon_rins == 44


# --- partially renewable fuel, (f)(4) -----------------------------------------------------


def test_method_b_renewable_diesel_co_processed() -> None:
    # 1.7 × 100,000 × 0.35 = 59,500
    y = one(fuel="renewable_diesel", d_code=4, volume=100_000, renewable_fraction="0.35")
    assert (y.gallon_rins, y.rr, y.standardized_volume) == (59_500, 17, D(100_000))
    assert y.paragraph == "§80.1426(f)(4)(i)(B)"
    assert y.formula == "1.7 × 100,000 × 0.35 = 59,500"


def test_method_a_with_feedstock_energy() -> None:
    # FE_R  = 100,000 lb × (1 − 0.1) × 0.9 × 17,000 (vegetable oil) = 1,377,000,000 Btu
    # FE_NR = 100,000 lb × 1 × 1 × 19,100 (crude oil)               = 1,910,000,000 Btu
    # 1.7 × 100,000 × 1,377,000,000 / 3,287,000,000 = 234,090,000 / 3,287 = 71,216.92 → 71,217
    y = one(fuel="renewable_diesel", d_code=4, volume=100_000, feedstocks=[
        fs("vegetable_oil", 100_000, "0.1", "0.9"),
        fs("crude_oil", 100_000, renewable=False),
    ])
    assert (y.gallon_rins, y.d_code, y.standardized_volume) == (71_217, 4, D(100_000))
    assert y.paragraph == "§80.1426(f)(4)(i)(A)"
    assert y.formula == (
        "1.7 × 100,000 × 1,377,000,000 / 3,287,000,000 = ≈71,216.9151 → 71,217"
    )


def test_feedstock_energy_formula() -> None:
    # FE = 1,000 × (1 − 0.2) × 0.5 × 17,000 = 6,800,000
    assert feedstock_energy(Feedstock(**fs("vegetable_oil", 1_000, "0.2", "0.5"))) == 6_800_000
    # own E: 1,000 × 1 × 1 × 10,000 = 10,000,000
    own = Feedstock(**fs("algae", 1_000, heating_value_btu_per_lb=10_000))
    assert feedstock_energy(own) == 10_000_000


def test_gen_feedstock_e_breaks_without_default() -> None:
    err = breaks("GEN-FEEDSTOCK-E", "§80.1426(f)(7)(iv)",
                 lambda: generate(fuel="renewable_diesel", d_code=4, volume=1_000,
                                  feedstocks=[fs("algae", 1_000)]))
    assert err.field == "feedstocks[0].heating_value_btu_per_lb"


def test_only_non_renewable_feedstock_gives_gen_batch_empty() -> None:
    breaks("GEN-BATCH-EMPTY", "§80.1426(d)(2)",
           lambda: generate(fuel="renewable_diesel", d_code=4, volume=1_000,
                            feedstocks=[fs("crude_oil", 1_000, renewable=False)]))


# --- mixtures, (f)(3)(iii), (v), (vi) -------------------------------------------------------


def test_mixed_fuels_one_d_code() -> None:
    # 1.0 × 60,000 + 1.3 × 40,000 = 60,000 + 52,000 = 112,000;
    # EV 112,000 / 100,000 = 1.12 → 1.1, RR 11
    y = one(fuel="ethanol", d_code=6, components=[
        {"fuel": "ethanol", "volume": 60_000}, {"fuel": "butanol", "volume": 40_000},
    ])
    assert (y.gallon_rins, y.rr, y.standardized_volume, y.d_code) == (112_000, 11, 100_000, 6)
    assert y.paragraph == "§80.1426(f)(3)(iii)"
    assert y.formula == "1.0 × 60,000 + 1.3 × 40,000 = 112,000"


def test_mixed_fuels_different_d_codes() -> None:
    # ethanol D6: 1.0 × 50,000 = 50,000 RR 10; biodiesel D4: 1.5 × 30,000 = 45,000 RR 15
    d4, d6 = generate(fuel="biodiesel", components=[
        {"fuel": "ethanol", "volume": 50_000, "d_code": 6},
        {"fuel": "biodiesel", "volume": 30_000, "d_code": 4},
    ])
    assert (d4.d_code, d4.gallon_rins, d4.rr, d4.standardized_volume) == (4, 45_000, 15, 30_000)
    assert (d6.d_code, d6.gallon_rins, d6.rr, d6.standardized_volume) == (6, 50_000, 10, 50_000)
    assert d4.paragraph == d6.paragraph == "§80.1426(f)(3)(v)"


def test_several_feedstocks_several_d_codes() -> None:
    # FE_4 = 100,000 × 1 × 1 × 16,600 (waste cooking oil) = 1,660,000,000
    # FE_7 = 100,000 × 0.5 × 1 × 8,400 (woody biomass)    =   420,000,000; Σ 2,080,000,000
    # D4: 1.7 × 100,000 × 1,660 / 2,080 = 135,673.08 → 135,673
    # D7: 1.7 × 100,000 ×   420 / 2,080 =  34,326.92 →  34,327
    d4, d7 = generate(fuel="renewable_diesel", volume=100_000, feedstocks=[
        fs("woody_biomass", 100_000, "0.5", d_code=7),
        fs("waste_cooking_oil", 100_000, d_code=4),
    ])
    assert (d4.d_code, d4.gallon_rins, d7.d_code, d7.gallon_rins) == (4, 135_673, 7, 34_327)
    assert d4.paragraph == d7.paragraph == "§80.1426(f)(3)(vi)(A)"
    assert d4.rr == d7.rr == 17
    # volume shares 1,660/2,080 and 420/2,080 of 100,000 gallons
    assert abs(d4.standardized_volume - D("79807.6923")) < D("0.0001")
    assert abs(d7.standardized_volume - D("20192.3077")) < D("0.0001")


# --- waste feedstocks, (f)(5) ---------------------------------------------------------------


def test_gen_yard_cellulosic_passes() -> None:
    # 1.0 × 100,000 = 100,000
    y = one(fuel="ethanol", d_code=3, volume=100_000, waste="yard")
    assert (y.gallon_rins, y.paragraph) == (100_000, "§80.1426(f)(5)(iv)(A)")


def test_gen_yard_cellulosic_breaks() -> None:
    breaks("GEN-YARD-CELLULOSIC", "§80.1426(f)(5)(i)(A)",
           lambda: generate(fuel="ethanol", d_code=6, volume=100_000, waste="yard"))


def test_food_waste() -> None:
    # 1.5 × 20,000 = 30,000
    y = one(fuel="biodiesel", d_code=5, volume=20_000, waste="food")
    assert (y.gallon_rins, y.paragraph) == (30_000, "§80.1426(f)(5)(iv)(B)")


def test_gen_msw_passes() -> None:
    # 1.0 × 100,000 × 0.6 = 60,000
    y = one(fuel="ethanol", d_code=3, volume=100_000, waste="msw", renewable_fraction="0.6")
    assert (y.gallon_rins, y.paragraph) == (60_000, "§80.1426(f)(5)(v)")


def test_gen_msw_breaks_without_r_or_with_non_cellulosic_d() -> None:
    breaks("GEN-MSW", "§80.1426(f)(5)(v)",
           lambda: generate(fuel="ethanol", d_code=3, volume=1_000, waste="msw"))
    breaks("GEN-MSW", "§80.1426(f)(5)(v)",
           lambda: generate(fuel="ethanol", d_code=6, volume=1_000, waste="msw",
                            renewable_fraction="0.6"))


# --- exempt fuel, (f)(6) --------------------------------------------------------------------


def test_gen_exempt_d6_passes() -> None:
    # 1.0 × 100,000 = 100,000, D6
    y = one(fuel="ethanol", d_code=6, volume=100_000, ghg_exempt=True)
    assert (y.gallon_rins, y.d_code, y.paragraph) == (100_000, 6, "§80.1426(f)(6)(i)")


def test_gen_exempt_d6_breaks() -> None:
    err = breaks("GEN-EXEMPT-D6", "§80.1426(f)(6)(ii)",
                 lambda: generate(fuel="ethanol", d_code=5, volume=100_000, ghg_exempt=True))
    assert "D5" in err.message


# --- who may generate, (c) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "rule_id", "citation"),
    [
        ("biointermediate", "GEN-BIOINTERMEDIATE", "§80.1426(c)(8)"),
        ("feedstock_is_renewable_fuel_of_another_party", "GEN-OTHER-PARTY-FUEL",
         "§80.1426(c)(6)"),
    ],
)
def test_no_rins_rules(flag: str, rule_id: str, citation: str) -> None:
    base = {"fuel": "ethanol", "d_code": 6, "volume": 1_000}
    assert one(**base, **{flag: False}).gallon_rins == 1_000  # 1.0 × 1,000
    err = breaks(rule_id, citation, lambda: generate(**base, **{flag: True}))
    assert err.field == flag


def test_gen_small_producer() -> None:
    check_small_producer_exemption(D(9_999), None)
    check_small_producer_exemption(D(9_000), 4)
    err = breaks("GEN-SMALL-PRODUCER", "§80.1426(c)(2)",
                 lambda: check_small_producer_exemption(D(10_000), None))
    assert "10,000 gallons a year" in err.message
    # a new facility's (c)(3) allowance ends after its third calendar year
    breaks("GEN-SMALL-PRODUCER", "§80.1426(c)(2)",
           lambda: check_small_producer_exemption(D(50_000), 4))


def test_gen_new_producer() -> None:
    check_small_producer_exemption(D(124_999), 2)
    err = breaks("GEN-NEW-PRODUCER", "§80.1426(c)(3)",
                 lambda: check_small_producer_exemption(D(125_000), 3))
    assert "125,000" in err.message


# --- batch limits, (d) ----------------------------------------------------------------------


def test_gen_batch_max() -> None:
    # 1.0 × 99,999,999 = 99,999,999 passes; 99,999,999.5 rounds up to 100,000,000
    assert one(fuel="ethanol", d_code=6, volume=99_999_999).gallon_rins == 99_999_999
    err = breaks("GEN-BATCH-MAX", "§80.1426(d)(1)(i)",
                 lambda: generate(fuel="ethanol", d_code=6, volume=100_000_000))
    assert "100,000,000 gallon-RINs" in err.message
    breaks("GEN-BATCH-MAX", "§80.1426(d)(1)(i)",
           lambda: generate(fuel="ethanol", d_code=6, volume="99999999.5"))


def test_gen_batch_empty() -> None:
    # 1.0 × 0.5 = 0.5 → 1 (halves up); 1.0 × 0.4 → 0
    assert one(fuel="ethanol", d_code=6, volume="0.5").gallon_rins == 1
    breaks("GEN-BATCH-EMPTY", "§80.1426(d)(2)",
           lambda: generate(fuel="ethanol", d_code=6, volume="0.4"))


def test_gen_batch_month_passes() -> None:
    y = one(fuel="ethanol", d_code=6, volume=1_000, production_start=date(2024, 1, 1),
            production_end=date(2024, 1, 31))
    assert y.gallon_rins == 1_000


@pytest.mark.parametrize(
    ("start", "end"),
    [
        (date(2024, 1, 15), date(2024, 2, 2)),
        (date(2023, 1, 10), date(2024, 1, 20)),
        (date(2024, 1, 20), date(2024, 1, 10)),
    ],
)
def test_gen_batch_month_breaks(start: date, end: date) -> None:
    err = breaks("GEN-BATCH-MONTH", "§80.1426(d)(1)(ii)",
                 lambda: generate(fuel="ethanol", d_code=6, volume=1_000,
                                  production_start=start, production_end=end))
    assert err.field == "production_end"


# --- delayed RINs, (g) ----------------------------------------------------------------------


def test_is_delayed() -> None:
    assert is_delayed("DRN01")
    assert not is_delayed("00001")
    assert not is_delayed("D0001")


def test_vintage_of_ordinary_batch_is_generation_year() -> None:
    assert check_delayed("00001", None, date(2024, 1, 31), None) == 2024


def test_delayed_rins_pass_in_window() -> None:
    # canola biodiesel, pathway effective 2010-09-28; 2010-09-28 + 60 days = 2010-11-27
    assert check_delayed("DRN01", date(2010, 9, 1), date(2010, 11, 27), date(2010, 9, 28)) == 2010
    assert check_delayed("DRN02", date(2011, 12, 31), date(2012, 3, 15), date(2012, 3, 1)) == 2011


@pytest.mark.parametrize(
    ("produced", "effective"),
    [
        (date(2010, 6, 30), date(2010, 9, 28)),  # before 1 July 2010
        (date(2010, 9, 28), date(2010, 9, 28)),  # on the effective date: ordinary RINs
        (date(2012, 1, 2), date(2012, 3, 1)),  # after 31 December 2011
    ],
)
def test_gen_delayed_window_breaks(produced: date, effective: date) -> None:
    breaks("GEN-DELAYED-WINDOW", "§80.1426(g)(3)",
           lambda: check_delayed("DRN01", produced, effective, effective))


def test_gen_delayed_window_needs_production_start() -> None:
    breaks("GEN-DELAYED-WINDOW", "§80.1426(g)(3)",
           lambda: check_delayed("DRN01", None, date(2010, 10, 1), date(2010, 9, 28)))


def test_gen_delayed_deadline_breaks() -> None:
    # 2010-09-28 + 60 days = 2010-11-27, so 2010-11-28 is late
    err = breaks("GEN-DELAYED-DEADLINE", "§80.1426(g)(4)",
                 lambda: check_delayed("DRN01", date(2010, 9, 1), date(2010, 11, 28),
                                       date(2010, 9, 28)))
    assert "2010-11-27" in err.message
    breaks("GEN-DELAYED-DEADLINE", "§80.1426(g)(4)",
           lambda: check_delayed("DRN01", date(2010, 9, 1), date(2010, 10, 1), None))


# --- input shape ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"fuel": "ethanol", "d_code": 6, "volume": -1}, "greater than 0"),
        ({"fuel": "ethanol", "d_code": 6, "volume": "1.0000000000000001"},
         "no more than 15 decimal places"),
        ({"fuel": "ethanol", "d_code": 6, "volume": "1E+40"}, "plain decimal"),
        ({"fuel": "ethanol", "d_code": 6, "volume": 10**15 + 1},
         "no more than 15 digits before the decimal point"),
        ({"fuel": "ethanol", "d_code": 6, "volume": 1, "measured_volume": 1,
          "temperature_f": 60}, "exactly one of"),
        ({"fuel": "ethanol", "d_code": 6, "measured_volume": 1}, "go together"),
        ({"fuel": "ethanol", "d_code": 6, "btu": 77_000}, "btu is for fuel biogas"),
        ({"fuel": "biogas", "d_code": 3, "kwh": 22}, "kwh is for fuel electricity"),
        ({"fuel": "ethanol", "volume": 1}, "d_code is required"),
        ({"fuel": "ethanol", "d_code": 2, "volume": 1}, "D code must be one of"),
        ({"fuel": "ethanol", "d_code": 6, "volume": 1, "renewable_fraction": "1.2"},
         "less than or equal to 1"),
        ({"fuel": "ethanol", "d_code": 6, "volume": 1, "renewable_fraction": "0.5",
          "waste": "yard"}, "choose different formulas"),
        ({"fuel": "ethanol", "d_code": 6, "volume": 1, "energy_content_btu_per_gal": 1},
         "energy_content_btu_per_gal"),
        ({"fuel": "ethanol", "d_code": 6, "volume": 1,
          "feedstocks": [fs("crude_oil", 1, renewable=False, d_code=6)]}, "no d_code"),
        ({"fuel": "ethanol", "d_code": 6, "volume": 1, "party": "1001"}, "Extra inputs"),
        ({"fuel": "diesel", "d_code": 6, "volume": 1}, "Input should be"),
    ],
)
def test_malformed_input_is_rejected(fields: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        GenerationInput(**fields)


# --- properties -----------------------------------------------------------------------------

RENEWABLE_TYPES = ["starch", "sugar", "vegetable_oil", "waste_cooking_oil", "tallow", "manure",
                   "woody_biomass", "herbaceous_biomass", "yard_waste", "food_waste", "paper"]


@given(
    volume=st.decimals(min_value=100_000, max_value=10_000_000, places=2),
    feedstocks=st.lists(
        st.builds(
            lambda t, m, moist, cf, d: fs(t, m, str(moist), str(cf), d_code=d),
            st.sampled_from(RENEWABLE_TYPES),
            st.integers(1_000, 100_000),
            st.decimals(0, D("0.5"), places=2),
            st.decimals(D("0.5"), 1, places=2),
            st.sampled_from([3, 4, 5, 6, 7]),
        ).filter(  # (f)(1)(v): separated oil, sugar and starch never earn D3 or D7
            lambda f: not (f["type"] in {"vegetable_oil", "sugar", "starch"}
                           and f["d_code"] in (3, 7))
        ),
        min_size=1, max_size=5,
    ),
)
def test_feedstock_parts_sum_to_whole_batch(volume: Decimal, feedstocks: list[dict]) -> None:
    """(f)(3)(vi): the parts' gallon-RINs add up to EV × Vs within the rounding of each part."""
    yields = generate(fuel="renewable_diesel", volume=volume, feedstocks=feedstocks)
    whole = (D("1.7") * volume).quantize(D(1), ROUND_HALF_UP)
    assert abs(sum(y.gallon_rins for y in yields) - whole) <= D(len(yields) + 1) / 2
    assert abs(sum(y.standardized_volume for y in yields) - volume) < D("1e-15")
    assert [y.d_code for y in yields] == sorted({f["d_code"] for f in feedstocks})


temperatures = st.decimals(min_value=-40, max_value=150, places=1)


@given(
    fuel=st.sampled_from(["ethanol", "biodiesel"]),
    measured=st.decimals(min_value=1_000, max_value=10_000_000, places=3),
    t1=temperatures,
    t2=temperatures,
)
def test_standardized_volume_falls_as_temperature_rises(
    fuel: str, measured: Decimal, t1: Decimal, t2: Decimal
) -> None:
    low, high = sorted((t1, t2))
    cold = one(fuel=fuel, d_code=6, measured_volume=measured, temperature_f=low)
    warm = one(fuel=fuel, d_code=6, measured_volume=measured, temperature_f=high)
    assert cold.standardized_volume >= warm.standardized_volume
    assert cold.gallon_rins >= warm.gallon_rins


@given(
    measured=st.decimals(min_value=1, max_value=10_000_000, places=4),
    t=temperatures,
)
def test_ethanol_matches_decimal_half_up(measured: Decimal, t: Decimal) -> None:
    """The regulation's formula in plain Decimal arithmetic, rounded ROUND_HALF_UP."""
    with localcontext(prec=60):
        vs = measured * (D("-0.0006301") * t + D("1.0378"))
    y = one(fuel="ethanol", d_code=6, measured_volume=measured, temperature_f=t)
    assert y.standardized_volume == vs
    assert y.gallon_rins == vs.quantize(D(1), ROUND_HALF_UP)
