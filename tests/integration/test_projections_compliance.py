"""Compliance positions chained year to year (§80.1427(a)(5), (b)), computed by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from projections_helpers import apply_all

from ledger import Ledger
from projections import Views

RF_ONLY = {"CB": 0, "BBD": 0, "AB": 0, "RF": 1_000_000}


def supply(year: int, batch: str, gallons: int) -> list[dict[str, Any]]:
    """1001 makes `gallons` of ethanol (EV 1.0 → as many D6 RINs), 2001 blends it and
    separates the RINs, and sells them to the obligated party 3001."""
    rins = {"d_code": 6, "vintage": year, "quantity": gallons}
    return [
        {"type": "generate", "date": f"{year}-06-01", "party": "1001", "facility": "20001",
         "batch": batch, "fuel": "ethanol", "d_code": 6, "volume": gallons},
        {"type": "transfer", "date": f"{year}-06-02", "from": "1001", "to": "2001",
         "rins": {**rins, "k": 1}, "volume": gallons},
        {"type": "separate", "date": f"{year}-06-03", "party": "2001", "reason": "blending",
         "rins": {**rins, "k": 1}, "volume": gallons},
        {"type": "transfer", "date": f"{year}-06-04", "from": "2001", "to": "3001",
         "rins": {**rins, "k": 2}},
    ]


def retire(day: str, year: int, vintage: int, quantity: int) -> dict[str, Any]:
    return {"type": "retire", "date": day, "party": "3001", "reason": "compliance",
            "compliance_year": year, "rins": {"d_code": 6, "vintage": vintage, "k": 2,
                                              "quantity": quantity}}


def test_prior_year_cap_deficit_carried_then_violation(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    apply_all(ledger, [
        {"type": "register_party", "party": "1001", "name": "P", "roles": ["producer"],
         "facilities": ["20001"]},
        {"type": "register_party", "party": "2001", "name": "B", "roles": ["blender"]},
        {"type": "register_party", "party": "3001", "name": "R", "roles": ["obligated_party"]},
        *supply(2024, "00001", 300_000),
        *supply(2025, "00001", 650_000),
        *supply(2026, "00001", 1_000_000),
        {"type": "report_obligation", "party": "3001", "year": 2025, "rvo": RF_ONLY},
        {"type": "report_obligation", "party": "3001", "year": 2026, "rvo": RF_ONLY},
        retire("2026-02-15", 2025, 2024, 300_000),
        retire("2026-02-15", 2025, 2025, 650_000),
        retire("2027-02-15", 2026, 2026, 1_000_000),
    ])
    views = Views(ledger)
    rf_2025 = next(r for r in views.compliance(2025) if r["category"] == "RF")
    # Prior-year RINs count at most 20 % × 1,000,000 = 200,000 of the 300,000 retired
    # (§80.1427(a)(5)); applied 650,000 + 200,000 = 850,000; deficit 1,000,000 − 850,000 =
    # 150,000, carried into 2026 (no deficit was carried into 2025, §80.1427(b)(1)).
    assert rf_2025 == {
        "party": "3001", "year": 2025, "category": "RF", "rvo": 1_000_000,
        "deficit_carried_in": 0, "current_year_rins": 650_000, "prior_year_rins": 300_000,
        "prior_year_applied": 200_000, "applied": 850_000, "deficit": 150_000,
        "status": "deficit_carried",
    }
    # D6 RINs count only toward RF (§80.1427(a)(2)); the other RVOs are 0 and met.
    others = [(r["category"], r["applied"], r["status"]) for r in views.compliance(2025)
              if r["category"] != "RF"]
    assert others == [("CB", 0, "compliant"), ("BBD", 0, "compliant"), ("AB", 0, "compliant")]
    rf_2026 = next(r for r in views.compliance(2026, party="3001") if r["category"] == "RF")
    # 2026: RVO 1,000,000 + carried 150,000 = 1,150,000; applied 1,000,000; deficit 150,000 a
    # second year running → violation (§80.1427(b)(1)(ii)).
    assert (rf_2026["rvo"], rf_2026["deficit_carried_in"], rf_2026["applied"],
            rf_2026["deficit"], rf_2026["status"]) == (
        1_150_000, 150_000, 1_000_000, 150_000, "violation")


def test_latest_obligation_report_wins(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    apply_all(ledger, [
        {"type": "register_party", "party": "3001", "name": "R", "roles": ["obligated_party"]},
        {"type": "report_obligation", "party": "3001", "year": 2025, "rvo": RF_ONLY},
        {"type": "report_obligation", "party": "3001", "year": 2025,
         "rvo": {"CB": 0, "BBD": 0, "AB": 0, "RF": 400}},
    ])
    rf = next(r for r in Views(ledger).compliance(2025) if r["category"] == "RF")
    # The second report (RF 400) replaces the first; nothing retired → deficit 400.
    assert (rf["rvo"], rf["deficit"], rf["status"]) == (400, 400, "deficit_carried")
