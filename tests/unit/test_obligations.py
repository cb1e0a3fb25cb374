"""RVOs from the §80.1405 standards (§80.1407(a)), and RVOs given directly."""

from __future__ import annotations

from decimal import Decimal

import pytest

from ledger.domain.errors import RuleViolation
from ledger.domain.standards import load_standards
from ledger.rules.s1407_obligations import Category, compute_rvo, validate_rvo

CB, BBD, AB, RF = Category.CB, Category.BBD, Category.AB, Category.RF


# --- the standards table -------------------------------------------------------------------


def test_table_covers_2010_to_2025_with_the_four_categories() -> None:
    table = load_standards()
    assert sorted(table) == list(range(2010, 2026))
    for row in table.values():
        assert set(row) == set(Category)


def test_no_cellulosic_standard_in_2011_and_2012_only() -> None:
    table = load_standards()
    assert [year for year, row in table.items() if row[CB] is None] == [2011, 2012]


def test_supplemental_standard_is_added_to_the_base() -> None:
    table = load_standards()
    assert table[2022][RF] == Decimal("11.73")  # 11.59 + 0.14 supplemental
    assert table[2023][RF] == Decimal("12.10")  # 11.96 + 0.14 supplemental
    assert table[2024][RF] == Decimal("12.50")  # no supplemental


# --- compute_rvo ---------------------------------------------------------------------------


def test_2024_party() -> None:
    rvo = compute_rvo(2024, Decimal(900_000), Decimal(300_000))
    # GV + DV = 900,000 + 300,000 = 1,200,000
    assert rvo == {
        CB: 7_080,  # 0.59 % × 1,200,000 = 7,080
        BBD: 33_840,  # 2.82 % × 1,200,000 = 33,840
        AB: 45_480,  # 3.79 % × 1,200,000 = 45,480
        RF: 150_000,  # 12.50 % × 1,200,000 = 150,000
    }


def test_2022_and_2023_renewable_fuel_include_the_supplemental_standard() -> None:
    # (11.59 + 0.14) % × 1,000,000 = 11.73 % × 1,000,000 = 117,300
    assert compute_rvo(2022, Decimal(1_000_000), Decimal(0))[RF] == 117_300
    # (11.96 + 0.14) % × 1,000,000 = 12.10 % × 1,000,000 = 121,000
    assert compute_rvo(2023, Decimal(0), Decimal(1_000_000))[RF] == 121_000


def test_no_cellulosic_standard_means_no_cellulosic_rvo() -> None:
    assert compute_rvo(2011, Decimal(1_000_000), Decimal(0)) == {
        CB: 0,  # no standard in force
        BBD: 6_900,  # 0.69 % × 1,000,000 = 6,900
        AB: 7_800,  # 0.78 % × 1,000,000 = 7,800
        RF: 80_100,  # 8.01 % × 1,000,000 = 80,100
    }


def test_rounds_to_the_nearest_gallon_rin_halves_up() -> None:
    # 2013 CB is 0.0005 %
    assert compute_rvo(2013, Decimal(100_000), Decimal(0))[CB] == 1  # 0.0005 % × 100,000 = 0.5 → 1
    assert compute_rvo(2013, Decimal(500_000), Decimal(0))[CB] == 3  # × 500,000 = 2.5 → 3
    assert compute_rvo(2013, Decimal(99_999), Decimal(0))[CB] == 0  # × 99,999 = 0.499995 → 0
    # 12.50 % × 1,000.5 = 125.0625 → 125
    assert compute_rvo(2024, Decimal("1000.5"), Decimal(0))[RF] == 125


def test_zero_volumes_pass_with_zero_rvos() -> None:
    assert compute_rvo(2010, Decimal(0), Decimal(0)) == {CB: 0, BBD: 0, AB: 0, RF: 0}


@pytest.mark.parametrize("year", [2009, 2026])
def test_OBL_STANDARD_YEAR_breaks_without_a_standards_row(year: int) -> None:
    with pytest.raises(RuleViolation) as exc:
        compute_rvo(year, Decimal(1_000), Decimal(1_000))
    assert exc.value.rule_id == "OBL-STANDARD-YEAR"
    assert exc.value.citation == "§80.1405"
    assert str(year) in exc.value.message


def test_OBL_STANDARD_YEAR_passes_for_the_first_and_last_year() -> None:
    assert compute_rvo(2010, Decimal(1_000_000), Decimal(0))[RF] == 82_500  # 8.25 % × 1,000,000
    assert compute_rvo(2025, Decimal(1_000_000), Decimal(0))[RF] == 131_300  # 13.13 % × 1,000,000


@pytest.mark.parametrize(
    ("gasoline", "diesel", "field"),
    [
        (Decimal(-1), Decimal(0), "gasoline_volume"),
        (Decimal(0), Decimal("-0.5"), "diesel_volume"),
        (Decimal("NaN"), Decimal(0), "gasoline_volume"),
        (Decimal(0), Decimal("Infinity"), "diesel_volume"),
    ],
)
def test_OBL_VOLUME_breaks_on_negative_or_non_finite_volumes(
    gasoline: Decimal, diesel: Decimal, field: str
) -> None:
    with pytest.raises(RuleViolation) as exc:
        compute_rvo(2024, gasoline, diesel)
    assert exc.value.rule_id == "OBL-VOLUME"
    assert exc.value.citation == "§80.1407(a)"
    assert exc.value.field == field


def test_OBL_VOLUME_message_gives_the_volume_with_separators() -> None:
    with pytest.raises(RuleViolation) as exc:
        compute_rvo(2024, Decimal(0), Decimal(-1_250_000))
    assert "-1,250,000 gallons" in exc.value.message


# --- validate_rvo --------------------------------------------------------------------------


def test_validate_rvo_passes_and_fills_missing_categories_with_zero() -> None:
    assert validate_rvo({"RF": 1_000_000, "CB": 5}) == {CB: 5, BBD: 0, AB: 0, RF: 1_000_000}
    assert validate_rvo({}) == {CB: 0, BBD: 0, AB: 0, RF: 0}


def test_OBL_RVO_CATEGORY_breaks_on_an_unknown_category() -> None:
    with pytest.raises(RuleViolation) as exc:
        validate_rvo({"RF": 10, "D6": 10})
    assert exc.value.rule_id == "OBL-RVO-CATEGORY"
    assert exc.value.citation == "§80.1407(a)"
    assert "D6" in exc.value.message


@pytest.mark.parametrize("value", [-1, 1.5, "100", True, Decimal(100)])
def test_OBL_RVO_VALUE_breaks_on_a_non_whole_or_negative_value(value: object) -> None:
    with pytest.raises(RuleViolation) as exc:
        validate_rvo({"BBD": value})
    assert exc.value.rule_id == "OBL-RVO-VALUE"
    assert exc.value.citation == "§80.1407(a)"
    assert exc.value.field == "rvo.BBD"


def test_OBL_RVO_VALUE_passes_zero() -> None:
    assert validate_rvo({"BBD": 0})[BBD] == 0
