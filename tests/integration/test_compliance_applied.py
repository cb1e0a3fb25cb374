"""§80.1427(a)(1), (a)(5), (a)(6)(ii), (b)(2): RINs applied to an RVO never exceed it.

(a)(1) is an equation, Σ(i) + Σ(i−1) = RVO_i: what is applied is at most the RVO. RINs retired for
year i beyond it are not applied to RVO_i, and (a)(6)(ii) forbids counting them for any other year
((a)(4) is reserved), so the excess is lost and the deficit D_i = RVO_i − applied is never negative.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from projections_helpers import apply_all

from ledger import Ledger
from ledger.rules.s1407_obligations import Category
from ledger.rules.s1427_compliance import Retirement, compliance_positions
from projections import Views

RF = Category.RF


def _rf(rvo: int) -> dict[Category, int]:
    return {Category.CB: 0, Category.BBD: 0, Category.AB: 0, RF: rvo}


def test_applied_is_at_most_the_rvo() -> None:
    rf = compliance_positions("P", 2024, _rf(4_000), [Retirement(6, 2024, 10_000, None)], None)[RF]
    # 10,000 retired against 4,000: applied min(4,000, 10,000) = 4,000; deficit 4,000 − 4,000 = 0
    assert (rf.current_year_rins, rf.applied, rf.deficit, rf.status) == (
        10_000, 4_000, 0, "compliant")


def test_prior_year_rins_count_up_to_their_cap_and_current_year_rins_fill_the_rest() -> None:
    rf = compliance_positions(
        "P", 2024, _rf(1_000),
        [Retirement(6, 2023, 300, None), Retirement(6, 2024, 900, None)], None,
    )[RF]
    # prior-year: min(300, 0.20 × 1,000 = 200) = 200; current-year: min(900, 1,000 − 200 = 800)
    # = 800; applied 200 + 800 = 1,000 (not 900 + 200 = 1,100); deficit 0
    assert (rf.prior_year_rins, rf.prior_year_applied, rf.applied, rf.deficit) == (
        300, 200, 1_000, 0)


def test_excess_in_one_year_does_not_reduce_the_next_years_rvo() -> None:
    """(a)(6)(ii): RINs used for 2024 cannot count for 2025, so 2025 starts from its own RVO."""
    y2024 = compliance_positions("P", 2024, _rf(4_000), [Retirement(6, 2024, 10_000, None)], None)
    rf = compliance_positions("P", 2025, _rf(3_000), [], y2024)[RF]
    # nothing retired for 2025: deficit 3,000 − 0 = 3,000 (no credit from the 6,000 excess)
    assert (rf.rvo, rf.deficit_carried_in, rf.applied, rf.deficit) == (3_000, 0, 0, 3_000)


def test_rin_compliance_reports_applied_within_the_rvo(tmp_path: Path) -> None:
    rins = {"d_code": 6, "vintage": 2024, "quantity": 10_000}
    commands: list[dict[str, Any]] = [
        {"type": "register_party", "party": "1001", "name": "P", "roles": ["producer"],
         "facilities": ["20001"]},
        {"type": "register_party", "party": "3001", "name": "R",
         "roles": ["obligated_party", "refiner"]},
        {"type": "generate", "date": "2024-06-01", "party": "1001", "facility": "20001",
         "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10_000},
        {"type": "transfer", "date": "2024-06-02", "from": "1001", "to": "3001",
         "rins": {**rins, "k": 1}, "volume": 10_000},
        {"type": "separate", "date": "2024-06-03", "party": "3001", "reason": "obligated_party",
         "rins": {**rins, "k": 1}, "volume": 10_000},
        {"type": "report_obligation", "party": "3001", "year": 2024,
         "rvo": {"CB": 0, "BBD": 0, "AB": 0, "RF": 4_000}},
        {"type": "retire", "date": "2025-02-15", "party": "3001", "reason": "compliance",
         "compliance_year": 2024, "rins": {**rins, "k": 2}},
    ]
    ledger = Ledger(tmp_path)
    apply_all(ledger, commands)
    rf = next(r for r in Views(ledger).compliance(2024) if r["category"] == "RF")
    # 10,000 retired, RVO 4,000: applied 4,000, deficit 0 (the old report said 10,000 applied)
    assert (rf["rvo"], rf["current_year_rins"], rf["applied"], rf["deficit"], rf["status"]) == (
        4_000, 10_000, 4_000, 0, "compliant")
