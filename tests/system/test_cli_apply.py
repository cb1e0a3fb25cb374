"""`rin apply`: one line per rejection (`line N: <citation>: <message>`), exit codes 0 / 1 / 2,
`--json` results, duplicate ids, and the shared sample file with its hand-computed results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ledger import Ledger
from ledger.cli.main import app

SAMPLE = Path(__file__).parents[1] / "data" / "sample.jsonl"  # a copy of shared/examples
# 1001's ethanol batch 00001: 10,000 gal × EV 1.0 = 10,000 gallon-RINs, RR 10, D6
CODE = "1" "2024" "1001" "20001" "00001" "10" "6" "00000001" "00010000"

LINES: list[dict[str, Any] | str] = [
    {"type": "register_party", "party": "1001", "name": "Prairie", "roles": ["producer"],
     "facilities": ["20001"]},
    {"type": "register_party", "party": "2001", "name": "Gulf", "roles": ["blender"]},
    {"type": "register_party", "party": "3001", "name": "Lakeside", "roles": ["obligated_party"]},
    {"type": "generate", "id": "g-1", "date": "2024-01-31", "party": "1001", "facility": "20001",
     "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10000},
    # 5: K=1 without fuel
    {"type": "transfer", "date": "2024-02-05", "from": "1001", "to": "2001",
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 1000}},
    # 6: 3,000 / 1,000 = 3 > 2.5 per gallon
    {"type": "transfer", "date": "2024-02-05", "from": "1001", "to": "2001",
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 3000}, "volume": 1000},
    # 7: unregistered buyer
    {"type": "transfer", "date": "2024-02-05", "from": "1001", "to": "9999",
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 1000}, "volume": 1000},
    "",  # 8: a blank line is counted, not applied
    {"type": "transfer", "id": "t-1", "date": "2024-02-05", "from": "1001", "to": "2001",
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 5000}, "volume": 5000},
    # 10: the same id again
    {"type": "transfer", "id": "t-1", "date": "2024-02-05", "from": "1001", "to": "2001",
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 5000}, "volume": 5000},
    {"type": "separate", "date": "2024-02-09", "party": "2001", "reason": "blending",
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 5000}, "volume": 5000},
    # 12: a blender does not retire for compliance
    {"type": "retire", "date": "2025-01-10", "party": "2001", "reason": "compliance",
     "compliance_year": 2024, "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 100}},
    "{not json",  # 13
    {"type": "transfer", "date": "2024-02-10", "from": "2001", "to": "3001",
     "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 5000}},
    # 15: moving separated RINs on a date before they were separated and bought (9 Feb)
    {"type": "transfer", "date": "2024-02-08", "from": "3001", "to": "1001",
     "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 1}},
    # 16: the same id with other content
    {"type": "generate", "id": "g-1", "date": "2024-01-31", "party": "1001", "facility": "20001",
     "batch": "00002", "fuel": "ethanol", "d_code": 6, "volume": 1},
]
REJECTIONS = [
    "line 5: §80.1428(a)(3): 1,000 assigned gallon-RINs transferred without a volume of "
    "renewable fuel",
    "line 6: §80.1428(a)(4): 3,000 assigned gallon-RINs with 1,000 gallons is more than 2.5 "
    "per gallon",
    "line 7: §80.1428(b)(2): party 9999 is not registered",
    "line 12: §80.1427(a)(1): party 2001 is registered as blender, not as an obligated party or "
    "exporter",
    "line 13: format: not valid JSON",
    "line 15: §80.1428: 1 gallon-RINs of D6 vintage 2024 K=2 asked, 0 held and movable on "
    "2024-02-08",
    "line 16: format: id: already used by a different command: g-1 was applied before as a "
    "generate of 2024-01-31",
]


def write(path: Path, lines: list[dict[str, Any] | str]) -> Path:
    path.write_text(
        "".join((json.dumps(line) if isinstance(line, dict) else line) + "\n" for line in lines),
        encoding="utf-8",
    )
    return path


def rin(data: Path, *args: str) -> Any:
    return CliRunner().invoke(app, ["--data", str(data), *args])


@pytest.fixture
def transactions(tmp_path: Path) -> Path:
    return write(tmp_path / "tx.jsonl", LINES)


def test_rejected_lines_are_printed_and_exit_is_1(tmp_path: Path, transactions: Path) -> None:
    result = rin(tmp_path / "data", "apply", str(transactions))
    assert result.exit_code == 1
    printed = result.stdout.splitlines()
    assert len(printed) == len(REJECTIONS)
    for line, expected in zip(printed, REJECTIONS, strict=True):
        if expected.endswith("not valid JSON"):
            assert line.startswith(expected)
        else:
            assert line == expected
    # the rest still applied: 3001 got the 5,000 separated gallon-RINs, 2001 has none left
    with Ledger(tmp_path / "data") as ledger:
        assert ledger.holdings("3001") == [
            {"party": "3001", "d_code": 6, "vintage": 2024, "k": 2, "gallon_rins": 5_000}
        ]
        assert ledger.holdings("2001") == []
        # 10,000 − 5,000 moved once (the duplicate moved nothing)
        assert ledger.holdings("1001")[0]["gallon_rins"] == 5_000


def test_json_results(tmp_path: Path, transactions: Path) -> None:
    result = rin(tmp_path / "data", "apply", "--json", str(transactions))
    assert result.exit_code == 1
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["line"] for r in rows] == [1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16]
    status = {r["line"]: r["status"] for r in rows}
    assert [n for n, s in status.items() if s == "rejected"] == [5, 6, 7, 12, 13, 15, 16]
    assert status[10] == "duplicate"
    assert all(r["error"] is None for r in rows if r["status"] != "rejected")
    generated = next(r for r in rows if r["line"] == 4)
    assert generated["rin"] == CODE
    per_gallon = next(r for r in rows if r["line"] == 6)
    assert per_gallon["error"] == (
        "§80.1428(a)(4): 3,000 assigned gallon-RINs with 1,000 gallons is more than 2.5 per gallon"
    )


def test_applying_the_same_file_again_is_all_duplicates_or_rejections(
    tmp_path: Path, transactions: Path
) -> None:
    rin(tmp_path / "data", "apply", str(transactions))
    again = rin(tmp_path / "data", "apply", "--json", str(transactions))
    rows = {json.loads(line)["line"]: json.loads(line) for line in again.stdout.splitlines()}
    assert rows[4]["status"] == rows[9]["status"] == rows[10]["status"] == "duplicate"
    assert rows[1]["status"] == "rejected"  # no id: registering 1001 again
    assert rows[1]["error"] == "§80.1450: party 1001 is already registered"


def test_all_applied_exits_0(tmp_path: Path) -> None:
    path = write(tmp_path / "ok.jsonl", LINES[:4])
    result = rin(tmp_path / "data", "apply", str(path))
    assert result.exit_code == 0
    assert result.stdout == ""


def test_missing_file_exits_2_and_applies_nothing(tmp_path: Path) -> None:
    good = write(tmp_path / "ok.jsonl", LINES[:4])
    result = rin(tmp_path / "data", "apply", str(good), str(tmp_path / "missing.jsonl"))
    assert result.exit_code == 2
    with Ledger(tmp_path / "data") as ledger:
        assert ledger.position() in (None, 0)


def test_lines_are_numbered_across_files(tmp_path: Path) -> None:
    first = write(tmp_path / "a.jsonl", LINES[:4])
    second = write(tmp_path / "b.jsonl", [LINES[5]])
    result = rin(tmp_path / "data", "apply", str(first), str(second))
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [REJECTIONS[1].replace("line 6", "line 5")]


def test_sample_file_applies_with_the_hand_computed_results(tmp_path: Path) -> None:
    result = rin(tmp_path / "data", "apply", "--json", str(SAMPLE))
    assert result.exit_code == 0, result.stdout
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["status"] for r in rows} == {"applied"}
    # 250,000 gal at 68 °F: 250,000 × (−0.0006301 × 68 + 1.0378) = 250,000 × 0.9949532
    # = 248,738.3 gal; × EV 1.0 = 248,738 gallon-RINs (RR 10, D6, serials 1-248,738)
    assert rows[4]["rin"] == "12024100120001000011060000000100248738"
    # 40,000 gal biodiesel × EV 1.5 = 60,000 gallon-RINs (RR 15, D4)
    assert rows[5]["rin"] == "12024100220011000011540000000100060000"
    with Ledger(tmp_path / "data") as ledger:
        # 3001 bought 100,000 D6 and 60,000 D4 (K=2), retired 90,000 D6 and 60,000 D4:
        # D6 100,000 − 90,000 = 10,000; D4 60,000 − 60,000 = 0
        assert ledger.holdings("3001") == [
            {"party": "3001", "d_code": 6, "vintage": 2024, "k": 2, "gallon_rins": 10_000}
        ]
        # 2001 separated 120,000 D6 and sold 100,000: 20,000 K=2 left; 1001 kept
        # 248,738 − 120,000 = 128,738 K=1
        assert ledger.holdings("2001") == [
            {"party": "2001", "d_code": 6, "vintage": 2024, "k": 2, "gallon_rins": 20_000}
        ]
        assert ledger.holdings("1001") == [
            {"party": "1001", "d_code": 6, "vintage": 2024, "k": 1, "gallon_rins": 128_738}
        ]
