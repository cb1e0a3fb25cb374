"""`rin demo`: the small market applies cleanly and its reports give the hand-computed figures."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from ledger import Ledger
from ledger.cli.main import app
from projections import Views


def test_rin_demo_runs_end_to_end_and_is_idempotent(tmp_path: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(app, ["--data", str(tmp_path), "demo"])
    assert first.exit_code == 0, first.output
    assert "239 lines applied, 0 already applied, 0 rejected" in first.output
    assert "all invariants hold" in first.output
    again = runner.invoke(app, ["--data", str(tmp_path), "demo", "--quiet"])
    assert again.exit_code == 0
    assert "0 lines applied, 239 already applied, 0 rejected" in again.output


def test_demo_figures(tmp_path: Path) -> None:
    CliRunner().invoke(app, ["--data", str(tmp_path), "demo", "--quiet"])
    with Ledger(tmp_path) as ledger:
        views = Views(ledger)
        cb = {(r["party"], r["category"]): r for r in views.compliance(2024)}
        # 3001: (28,000,000 + 8,000,000) × 0.59 % = 212,400 CB; 12 × 10,000 D3 retired
        assert (cb["3001", "CB"]["rvo"], cb["3001", "CB"]["applied"]) == (212_400, 120_000)
        assert (cb["3001", "CB"]["deficit"], cb["3001", "CB"]["status"]) == (
            92_400, "deficit_carried")
        # RF: 12.50 % × 36,000,000 = 4,500,000 ≤ 120,000 D3 + 1,440,000 D4 + 2,940,000 D6
        assert cb["3001", "RF"]["applied"] == 4_500_000
        assert cb["3001", "RF"]["status"] == "compliant"
        # 1002 keeps 30,000 assigned D4 RINs after selling their 20,000 gal without them
        sep30 = [r for r in views.quarterly(2024, "1002") if str(r["date"]) == "2024-09-30"]
        assert sep30[0]["assigned_rins"] == 30_000 and sep30[0]["excess"] == 30_000
        assert sep30[0]["ok"] is False
        # 3002: 12 × 197,477 D6 received − 1,600,000 retired − 5,000 spilled = 764,724
        assert ledger.holdings("3002") == [
            {"party": "3002", "d_code": 6, "vintage": 2024, "k": 2, "gallon_rins": 764_724}
        ]
