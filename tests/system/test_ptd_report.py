"""§80.1428(a)(6), §80.1453(a): every transfer needs a PTD; the ledger reports those recorded
without a PTD reference (`rin ptd --missing`). On 89ea268 there was no such report at all."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from ledger import Ledger
from ledger.cli.main import app
from projections import Views


def test_transfers_without_a_ptd_reference_are_reported(tmp_path: Path) -> None:
    lines = [
        {"type": "register_party", "party": "1001", "name": "P", "roles": ["producer"],
         "facilities": ["20001"]},
        {"type": "register_party", "party": "2001", "name": "B", "roles": ["blender"]},
        {"type": "register_party", "party": "3001", "name": "O", "roles": ["obligated_party"]},
        # 1.0 × 10,000 gal = 10,000 D6 gallon-RINs, with 10,000 gal of ethanol
        {"type": "generate", "date": "2024-01-31", "party": "1001", "facility": "20001",
         "batch": "E0001", "fuel": "ethanol", "d_code": 6, "volume": 10_000},
        # assigned RINs with their fuel and a PTD: 4,000 ≤ 2.5 × 4,000
        {"type": "transfer", "date": "2024-02-05", "from": "1001", "to": "2001", "ptd": "P-1",
         "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 4_000}, "volume": 4_000},
        # assigned RINs without one: §80.1428(a)(6)
        {"type": "transfer", "date": "2024-02-06", "from": "1001", "to": "2001",
         "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 1_000}, "volume": 1_000},
        # fuel alone without one: §80.1453(a)(11)(iii), 10,000 − 5,000 = 5,000 gal left; 2,000 go
        {"type": "transfer_fuel", "date": "2024-02-07", "from": "1001", "to": "2001",
         "volume": 2_000},
        {"type": "separate", "date": "2024-02-08", "party": "2001", "reason": "blending",
         "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 5_000}, "volume": 5_000},
        # separated RINs without one: §80.1429(d)
        {"type": "transfer", "date": "2024-02-09", "from": "2001", "to": "3001",
         "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 5_000}},
    ]
    with Ledger(tmp_path) as ledger:
        for line in lines:
            assert ledger.apply(line).status == "applied"
        views = Views(ledger)
        missing = [(r["date"], r["party"], r["transfer"], r["gallon_rins"], r["volume"],
                    r["required_by"]) for r in views.ptd(missing=True)]
        assert missing == [
            ("2024-02-06", "1001", "assigned_rins", 1_000, "1000", "§80.1428(a)(6)"),
            ("2024-02-07", "1001", "fuel", 0, "2000", "§80.1453(a)(11)(iii)"),
            ("2024-02-09", "2001", "separated_rins", 5_000, None, "§80.1429(d)"),
        ]
        every = views.ptd(party="1001")
        assert [(r["date"], r["ptd"]) for r in every] == [
            ("2024-02-05", "P-1"), ("2024-02-06", None), ("2024-02-07", None)]
    out = CliRunner().invoke(app, ["--data", str(tmp_path), "ptd", "--missing", "--json"])
    assert out.exit_code == 0, out.output
    assert out.output.count("required_by") == 3
