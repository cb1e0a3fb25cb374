"""Compliance by retired RINs (§80.1427): retirement checks, D-code nesting, positions, deficits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.domain.errors import RuleViolation
from ledger.rules.s1407_obligations import Category
from ledger.rules.s1427_compliance import (
    CompliancePosition,
    Retirement,
    check_compliance_retirement,
    compliance_positions,
    valid_for,
)

CB, BBD, AB, RF = Category.CB, Category.BBD, Category.AB, Category.RF


def _rf_only(rvo: int) -> dict[Category, int]:
    return {CB: 0, BBD: 0, AB: 0, RF: rvo}


# --- retirement-time checks ----------------------------------------------------------------


def test_CMP_K2_breaks_on_an_assigned_rin() -> None:
    with pytest.raises(RuleViolation) as exc:
        check_compliance_retirement(1, 2024, 6, 2024, None)
    assert exc.value.rule_id == "CMP-K2"
    assert exc.value.citation == "§80.1427(a)(8)"


def test_CMP_K2_passes_a_separated_rin() -> None:
    check_compliance_retirement(2, 2024, 6, 2024, None)


@pytest.mark.parametrize(
    ("vintage", "d_code", "year"),
    [
        (2022, 6, 2024),  # older than i − 1: expired (§80.1428(c))
        (2025, 6, 2024),  # not yet generated in year i
        (2008, 6, 2010),  # (a)(7) admits 2008 RINs for 2010 BBD only, i.e. D4 here
        (2008, 5, 2010),
        (2009, 4, 2011),  # the (a)(7) exception is for compliance year 2010 only
        (2008, 4, 2011),
    ],
)
def test_CMP_VINTAGE_breaks_outside_i_and_i_minus_1(vintage: int, d_code: int, year: int) -> None:
    with pytest.raises(RuleViolation) as exc:
        check_compliance_retirement(2, vintage, d_code, year, None)
    assert exc.value.rule_id == "CMP-VINTAGE"
    assert exc.value.citation == "§80.1427(a)(6)(i)"


def test_CMP_VINTAGE_message_names_expiry() -> None:
    with pytest.raises(RuleViolation) as exc:
        check_compliance_retirement(2, 2022, 6, 2024, None)
    assert "expired" in exc.value.message and "§80.1428(c)" in exc.value.message


@pytest.mark.parametrize(
    ("vintage", "d_code", "year"),
    [
        (2024, 6, 2024),  # year i
        (2023, 6, 2024),  # year i − 1
        (2009, 6, 2010),  # 2009 is i − 1 for every D code in 2010
        (2008, 4, 2010),  # §80.1427(a)(7): 2008 biomass-based diesel RINs for 2010
        (2009, 4, 2010),
    ],
)
def test_CMP_VINTAGE_passes_i_i_minus_1_and_2010_bbd(vintage: int, d_code: int, year: int) -> None:
    check_compliance_retirement(2, vintage, d_code, year, None)


@pytest.mark.parametrize(
    ("d_code", "category"),
    [(7, None), (7, "AB"), (7, "RF"), (7, "CB,BBD"), (6, "CB"), (4, "BBD"), (3, "CB")],
)
def test_CMP_D7_DESIGNATION_breaks(d_code: int, category: str | None) -> None:
    with pytest.raises(RuleViolation) as exc:
        check_compliance_retirement(2, 2024, d_code, 2024, category)
    assert exc.value.rule_id == "CMP-D7-DESIGNATION"
    assert exc.value.citation == "§80.1427(a)(3)(ii)"
    assert exc.value.field == "category"


@pytest.mark.parametrize(("d_code", "category"), [(7, "CB"), (7, "BBD"), (4, None), (3, None)])
def test_CMP_D7_DESIGNATION_passes(d_code: int, category: str | None) -> None:
    check_compliance_retirement(2, 2024, d_code, 2024, category)


def test_a_retirement_cannot_be_built_with_an_undesignated_d7() -> None:
    with pytest.raises(RuleViolation) as exc:
        Retirement(d_code=7, vintage=2024, gallon_rins=10, category=None)
    assert exc.value.rule_id == "CMP-D7-DESIGNATION"


@pytest.mark.parametrize("d_code", [1, 2, 8])
def test_d_codes_outside_3_to_7_are_refused_under_RIN_D(d_code: int) -> None:
    with pytest.raises(RuleViolation) as exc:
        check_compliance_retirement(2, 2024, d_code, 2024, None)
    assert exc.value.rule_id == "RIN-D"


# --- D-code nesting, §80.1427(a)(2) and (a)(3)(ii) -----------------------------------------


@pytest.mark.parametrize(
    ("d_code", "designated", "expected"),
    [
        (3, None, {CB, AB, RF}),
        (4, None, {BBD, AB, RF}),
        (5, None, {AB, RF}),
        (6, None, {RF}),
        (7, "CB", {CB, AB, RF}),
        (7, "BBD", {BBD, AB, RF}),
    ],
)
def test_valid_for(d_code: int, designated: str | None, expected: set[Category]) -> None:
    assert valid_for(d_code, designated) == frozenset(expected)


def test_d4_rins_count_toward_bbd_ab_and_rf_at_once() -> None:
    positions = compliance_positions(
        "P", 2024, {CB: 0, BBD: 1_000, AB: 1_500, RF: 5_000},
        [Retirement(4, 2024, 1_000, None)], None,
    )
    assert positions[CB].applied == 0
    assert (positions[BBD].applied, positions[BBD].deficit) == (1_000, 0)  # 1,000 − 1,000 = 0
    assert (positions[AB].applied, positions[AB].deficit) == (1_000, 500)  # 1,500 − 1,000 = 500
    assert (positions[RF].applied, positions[RF].deficit) == (1_000, 4_000)  # 5,000 − 1,000


def test_d7_designated_cb_counts_to_cb_ab_rf_not_bbd() -> None:
    positions = compliance_positions(
        "P", 2024, {CB: 100, BBD: 100, AB: 100, RF: 100},
        [Retirement(7, 2024, 100, "CB")], None,
    )
    assert {c: p.applied for c, p in positions.items()} == {CB: 100, BBD: 0, AB: 100, RF: 100}
    assert positions[BBD].deficit == 100  # 100 − 0


def test_d7_designated_bbd_counts_to_bbd_ab_rf_not_cb() -> None:
    positions = compliance_positions(
        "P", 2024, {CB: 100, BBD: 100, AB: 100, RF: 100},
        [Retirement(7, 2024, 100, "BBD")], None,
    )
    assert {c: p.applied for c, p in positions.items()} == {CB: 0, BBD: 100, AB: 100, RF: 100}


# --- positions, the 20 % cap and deficits --------------------------------------------------


def _deficit_year() -> dict[Category, CompliancePosition]:
    """2024: RVO_RF 1,000,000; 300,000 D6 of 2023 and 650,000 D6 of 2024 retired."""
    return compliance_positions(
        "Refiner", 2024, _rf_only(1_000_000),
        [Retirement(6, 2023, 300_000, None), Retirement(6, 2024, 650_000, None)], None,
    )


def test_prior_year_cap_and_deficit_carried() -> None:
    rf = _deficit_year()[RF]
    assert rf == CompliancePosition(
        party="Refiner",
        year=2024,
        category="RF",
        rvo=1_000_000,
        deficit_carried_in=0,
        current_year_rins=650_000,
        prior_year_rins=300_000,
        prior_year_applied=200_000,  # min(300,000, 0.20 × 1,000,000 = 200,000)
        applied=850_000,  # 650,000 + 200,000
        deficit=150_000,  # 1,000,000 − 850,000
        status="deficit_carried",
    )


def test_the_other_rvos_of_an_rf_only_party_are_compliant_at_zero() -> None:
    positions = _deficit_year()
    for category in (CB, BBD, AB):
        assert (positions[category].rvo, positions[category].status) == (0, "compliant")
        assert positions[category].current_year_rins == 0  # D6 counts only toward RF


def test_a_second_deficit_in_a_row_is_a_violation() -> None:
    rf = compliance_positions(
        "Refiner", 2025, _rf_only(1_000_000),
        [Retirement(6, 2025, 1_000_000, None)], _deficit_year(),
    )[RF]
    assert rf.deficit_carried_in == 150_000
    assert rf.rvo == 1_150_000  # 1,000,000 + 150,000 carried in
    assert rf.applied == 1_000_000
    assert rf.deficit == 150_000  # 1,150,000 − 1,000,000
    assert rf.status == "violation"


def test_a_carried_deficit_made_good_is_compliant_with_the_cap_on_the_full_rvo() -> None:
    rf = compliance_positions(
        "Refiner", 2025, _rf_only(1_000_000),
        [Retirement(6, 2024, 300_000, None), Retirement(6, 2025, 920_000, None)], _deficit_year(),
    )[RF]
    assert rf.prior_year_applied == 230_000  # min(300,000, 0.20 × 1,150,000 = 230,000)
    assert rf.applied == 1_150_000  # 920,000 + 230,000
    assert (rf.deficit, rf.status) == (0, "compliant")  # 1,150,000 − 1,150,000


def test_a_violation_is_not_carried_into_the_next_rvo() -> None:
    violated = compliance_positions(
        "Refiner", 2025, _rf_only(1_000_000), [], _deficit_year()
    )
    assert violated[RF].status == "violation"
    rf = compliance_positions("Refiner", 2026, _rf_only(500), [], violated)[RF]
    assert (rf.deficit_carried_in, rf.rvo) == (0, 500)
    assert rf.status == "deficit_carried"  # 500 short, and nothing was carried into 2026


def test_the_prior_year_cap_rounds_down() -> None:
    rf = compliance_positions(
        "P", 2024, _rf_only(1_003), [Retirement(6, 2023, 1_003, None)], None
    )[RF]
    assert rf.prior_year_applied == 200  # 0.20 × 1,003 = 200.6 → 200
    assert rf.deficit == 803  # 1,003 − 200


def test_expired_rins_are_never_counted() -> None:
    rf = compliance_positions(
        "P", 2024, _rf_only(1_000),
        [Retirement(6, 2022, 500, None), Retirement(6, 2025, 500, None)], None,
    )[RF]
    assert (rf.current_year_rins, rf.prior_year_rins, rf.applied) == (0, 0, 0)


def test_an_exporter_ervo_uses_the_same_20_percent_cap() -> None:
    # §80.1427(c)(3): ERVO 10,000; 3,000 prior-year RINs, at most 0.20 × 10,000 = 2,000 count
    rf = compliance_positions(
        "Exporter", 2024, _rf_only(10_000),
        [Retirement(6, 2023, 3_000, None), Retirement(6, 2024, 7_000, None)], None,
    )[RF]
    assert (rf.prior_year_applied, rf.applied, rf.deficit) == (2_000, 9_000, 1_000)


# --- compliance approach, §80.1427(b)(1)(iv) -----------------------------------------------


def test_approach_change_with_a_carried_deficit_is_a_violation() -> None:
    rf = compliance_positions(
        "Refiner", 2025, _rf_only(1_000_000),
        [Retirement(6, 2025, 1_150_000, None)], _deficit_year(),
        approach="refinery-by-refinery", previous_approach="aggregate",
    )[RF]
    assert rf.deficit == 0  # 1,150,000 − 1,150,000: the RVO itself is met
    assert rf.status == "violation"


@pytest.mark.parametrize(
    ("approach", "previous_approach"),
    [("aggregate", "aggregate"), (None, "aggregate"), ("aggregate", None)],
)
def test_same_or_unknown_approach_with_a_carried_deficit_passes(
    approach: str | None, previous_approach: str | None
) -> None:
    rf = compliance_positions(
        "Refiner", 2025, _rf_only(1_000_000),
        [Retirement(6, 2025, 1_150_000, None)], _deficit_year(),
        approach=approach, previous_approach=previous_approach,
    )[RF]
    assert rf.status == "compliant"


def test_approach_change_without_a_carried_deficit_is_no_matter() -> None:
    rf = compliance_positions(
        "Refiner", 2024, _rf_only(1_000), [Retirement(6, 2024, 900, None)], None,
        approach="refinery-by-refinery", previous_approach="aggregate",
    )[RF]
    assert (rf.deficit, rf.status) == (100, "deficit_carried")  # 1,000 − 900


# --- biomass-based diesel in 2010, §80.1427(a)(7) and (b)(1)(iii) --------------------------


def test_2010_bbd_counts_2008_and_2009_under_both_caps() -> None:
    retired = [
        Retirement(4, 2008, 10_000, None),
        Retirement(4, 2009, 15_000, None),
        Retirement(4, 2010, 70_000, None),
    ]
    positions = compliance_positions(
        "P", 2010, {CB: 0, BBD: 100_000, AB: 50_000, RF: 0}, retired, None,
        bbd_2010_reduction=10_000,
    )
    bbd = positions[BBD]
    assert bbd.rvo == 90_000  # 100,000 − 10,000 (a)(7)(i) reduction
    assert bbd.current_year_rins == 70_000
    assert bbd.prior_year_rins == 25_000  # 10,000 of 2008 + 15,000 of 2009
    # 2008: min(10,000, 0.087 × 90,000 = 7,830) = 7,830
    # 2008 + 2009: min(7,830 + 15,000 = 22,830, 0.20 × 90,000 = 18,000) = 18,000
    assert bbd.prior_year_applied == 18_000
    assert bbd.applied == 88_000  # 70,000 + 18,000
    assert bbd.deficit == 2_000  # 90,000 − 88,000
    assert bbd.status == "deficit_carried"  # 2,000 ≤ 0.57 × 100,000 = 57,000
    ab = positions[AB]  # the 2008 RINs are expired for every RVO but 2010 BBD
    assert ab.prior_year_rins == 15_000  # 2009 only
    assert ab.prior_year_applied == 10_000  # min(15,000, 0.20 × 50,000 = 10,000)
    assert ab.rvo == 50_000  # the (a)(7)(i) reduction is for BBD only


def test_2010_bbd_the_2008_cap_binds_alone() -> None:
    bbd = compliance_positions(
        "P", 2010, {BBD: 90_000},
        [Retirement(4, 2008, 10_000, None), Retirement(4, 2009, 5_000, None)], None,
    )[BBD]
    # min(10,000, 0.087 × 90,000 = 7,830) + 5,000 = 12,830 ≤ 0.20 × 90,000 = 18,000
    assert bbd.prior_year_applied == 12_830


def test_2010_bbd_deficit_over_57_percent_of_the_unadjusted_rvo_is_a_violation() -> None:
    bbd = compliance_positions(
        "P", 2010, {BBD: 100_000}, [Retirement(4, 2010, 20_000, None)], None,
        bbd_2010_reduction=20_000,
    )[BBD]
    assert bbd.rvo == 80_000  # 100,000 − 20,000
    assert bbd.deficit == 60_000  # 80,000 − 20,000
    assert bbd.status == "violation"  # 60,000 > 0.57 × 100,000 = 57,000


def test_2010_bbd_deficit_of_exactly_57_percent_is_carried() -> None:
    bbd = compliance_positions(
        "P", 2010, {BBD: 100_000}, [Retirement(4, 2010, 23_000, None)], None,
        bbd_2010_reduction=20_000,
    )[BBD]
    # 80,000 − 23,000 = 57,000 ≤ 0.57 × 100,000 = 57,000 (the adjusted 0.57 × 80,000 = 45,600
    # would refuse it)
    assert (bbd.deficit, bbd.status) == (57_000, "deficit_carried")
    nxt = compliance_positions("P", 2011, {BBD: 10_000}, [], {BBD: bbd})[BBD]
    assert nxt.rvo == 67_000  # 10,000 + 57,000 carried into 2011


def test_the_2010_reduction_applies_to_2010_bbd_only() -> None:
    bbd = compliance_positions("P", 2011, {BBD: 1_000}, [], None, bbd_2010_reduction=500)[BBD]
    assert bbd.rvo == 1_000


# --- property ------------------------------------------------------------------------------

# (D code, years before the compliance year, gallon-RINs, D7 designation 0 → CB / 1 → BBD)
_retirement_specs = st.tuples(
    st.integers(3, 7), st.integers(0, 3), st.integers(1, 10**8), st.integers(0, 1)
)


@given(
    year=st.integers(2010, 2025),
    base=st.fixed_dictionaries({c: st.integers(0, 10**9) for c in Category}),
    specs=st.lists(_retirement_specs, max_size=8),
    carried=st.integers(0, 10**8),
    reduction=st.integers(0, 10**8),
)
def test_position_invariants(
    year: int,
    base: dict[Category, int],
    specs: list[tuple[int, int, int, int]],
    carried: int,
    reduction: int,
) -> None:
    retired = [
        Retirement(d, year - back, n, ("CB", "BBD")[pick] if d == 7 else None)
        for d, back, n, pick in specs
    ]
    previous = {
        c: CompliancePosition("P", year - 1, c, carried, 0, 0, 0, 0, 0, carried, "deficit_carried")
        for c in Category
    }
    positions = compliance_positions("P", year, base, retired, previous, None, None, reduction)
    for p in positions.values():
        assert p.applied <= p.current_year_rins + p.rvo * 20 // 100  # floor(0.20 × rvo)
        assert p.deficit >= 0
        assert p.deficit + p.applied >= p.rvo
        assert p.prior_year_applied <= p.prior_year_rins
