"""The report commands print JSON arrays, CSV and tables; metadata.json matches the schema."""

from __future__ import annotations

import json
from pathlib import Path

from projections_helpers import apply_all, sample_commands
from typer.testing import CliRunner

from ledger import Ledger
from ledger.cli.main import app
from projections.metadata import METADATA_FILE, render


def run(tmp_path: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["--data", str(tmp_path), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_reports_as_json_csv_and_table(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        apply_all(ledger, sample_commands())
    # As of 2024-02-07 (see test_projections_sample): 1001 128,738 D6 K1; 2001 60,000 D4 and
    # 120,000 D6, both K1.
    rows = json.loads(run(tmp_path, "holdings", "--as-of", "2024-02-07", "--json"))
    assert [(r["party"], r["d_code"], r["gallon_rins"]) for r in rows] == [
        ("1001", 6, 128_738), ("2001", 4, 60_000), ("2001", 6, 120_000)]
    csv = run(tmp_path, "quarterly", "--year", "2024", "--party", "1001", "--csv")
    assert csv.splitlines()[0] == "party,date,assigned_rins,volume,limit,excess,ok"
    # 128,738.3 gal × 2.5 = 321,845.75; booleans as JSON writes them (issue 14: not True)
    assert csv.splitlines()[1] == "1001,2024-03-31,128738,128738.3,321845.75,0,true"
    compliance = json.loads(run(tmp_path, "compliance", "--year", "2024", "--json"))
    assert [r["category"] for r in compliance] == ["CB", "BBD", "AB", "RF"]
    trace = json.loads(run(tmp_path, "trace", "12024100220011000011540000000100060000", "--json"))
    assert trace[-1]["event"] == "retired"
    assert "2024" in run(tmp_path, "holdings", "--blocks")
    run(tmp_path, "project", "--rebuild", "--quiet")


def test_metadata_json_matches_the_table_declarations() -> None:
    assert METADATA_FILE.read_text(encoding="utf-8") == render()
