"""§80.1430(f) with §80.1427(c)(1): each export's ERVO is met within thirty days of the export;
the read model reports every export (a separation on export, §80.1429(b)(3)) with that deadline.

Failed before this change: there was no such report."""

from __future__ import annotations

from test_ledger_rules import give_blender, ledger, ok, rins, separate

from ledger import Ledger
from projections.views import Views

__all__ = ["ledger"]  # the fixture, used by name


def test_each_export_reports_its_ervo_deadline_thirty_days_later(ledger: Ledger) -> None:
    give_blender(ledger)  # 2001 holds 10,000 D6 K=1 with 10,000 gal of ethanol
    # 2,500 ≤ 2.5 × 1,000 gal exported on 2024-02-10 (§80.1429(b)(3))
    ok(ledger, **separate("2001", "export", rins(6, 1, 2_500), volume=1_000))
    # a blending separation is no export: no row
    ok(ledger, **separate("2001", "blending", rins(6, 1, 1_000), volume=1_000))
    ok(ledger, **separate("2001", "export", rins(6, 1, 500), on="2024-12-15", volume=200))
    rows = Views(ledger).ervo_deadlines("2001")
    # 2024-02-10 + 30 days: 19 days to 29 February (leap year), 11 into March = 2024-03-11;
    # 2024-12-15 + 30 days: 16 days to 31 December, 14 into January = 2025-01-14
    assert rows == [
        {"party": "2001", "export_date": "2024-02-10", "volume": "1000", "gallon_rins": 2_500,
         "d_codes": "6", "deadline": "2024-03-11", "required_by": "§80.1430(f)"},
        {"party": "2001", "export_date": "2024-12-15", "volume": "200", "gallon_rins": 500,
         "d_codes": "6", "deadline": "2025-01-14", "required_by": "§80.1430(f)"},
    ]
    assert Views(ledger).ervo_deadlines("1001") == []
