"""`rin activity`, `transactions`, `generation`, `annual` and `attest` on the command line: the
design's columns in JSON and CSV, each row carrying the chain head it was computed at, which
`rin verify --against` then proves; `--known-at` as a notification id or a time; bad arguments
exit 2."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from markets import activity_market
from typer.testing import CliRunner

from ledger.cli.main import app
from projections import activity, annual, attest, generation_report, rin_transactions


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cli")
    lines = folder / "market.jsonl"
    lines.write_text("".join(json.dumps(line) + "\n" for line in activity_market()),
                     encoding="utf-8")
    assert CliRunner().invoke(app, ["--data", str(folder / "data"), "apply", str(lines)]
                              ).exit_code == 0
    return folder / "data"


def rin(data: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--data", str(data), *args])
    return result.exit_code, result.stdout


REPORTS = [
    (["activity", "--party", "2001", "--year", "2024", "--quarter", "1"], activity.COLUMNS, 2),
    (["transactions", "--party", "2001", "--year", "2024", "--quarter", "1"],
     rin_transactions.COLUMNS, 5),
    (["generation", "--party", "1001", "--year", "2024"], generation_report.COLUMNS, 1),
    (["annual", "--party", "3001", "--year", "2024"], annual.COLUMNS, 4),
    (["attest", "--party", "2001", "--year", "2024", "--seed", "7"], attest.COLUMNS, 5 + 8),
]


@pytest.mark.parametrize(("args", "columns", "count"), REPORTS)
def test_json_and_csv_rows_carry_the_head(data: Path, args: list[str], columns: list[str],
                                          count: int) -> None:
    code, out = rin(data, "verify", "--head")
    head = json.loads(out)
    code, out = rin(data, *args, "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == count
    assert all(list(row) == [*columns, "head"] and row["head"] == head for row in rows)
    code, out = rin(data, *args, "--csv")
    table = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and list(table[0]) == [*columns, "head"] and len(table) == count
    assert json.loads(table[0]["head"]) == head


@pytest.mark.parametrize(("args", "columns", "count"), REPORTS)
def test_one_output_option_for_every_report(data: Path, args: list[str], columns: list[str],
                                            count: int) -> None:
    """The shared output options (ledger/cli/output.py `tabular`): `--nl` one object a line,
    each with its head; `--table` the default; two formats at once exit 2 naming them."""
    code, out = rin(data, *args, "--nl")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) == count and all(list(row) == [*columns, "head"]
                                                     for row in lines)
    assert rin(data, *args, "--table") == rin(data, *args)
    result = CliRunner().invoke(app, ["--data", str(data), *args, "--json", "--nl"])
    assert result.exit_code == 2 and "--json and --nl: choose one output format" in result.stderr


def test_a_reports_head_proves_its_history(data: Path, tmp_path: Path) -> None:
    """The head of a report as known at notification 30 is the ledger's head there: verify
    --against it holds; a head whose hash is not the ledger's is refused (exit 1)."""
    code, out = rin(data, "activity", "--party", "2001", "--year", "2024", "--known-at", "30",
                    "--json")
    head = json.loads(out)[0]["head"]
    assert code == 0 and head["notification_id"] == 30
    saved = tmp_path / "head.json"
    saved.write_text(json.dumps(head), encoding="utf-8")
    assert rin(data, "verify", "--against", str(saved))[0] == 0
    saved.write_text(json.dumps({**head, "hash": "0" * 64}), encoding="utf-8")
    assert rin(data, "verify", "--against", str(saved))[0] == 1


def test_known_at_a_time_before_anything_was_recorded(data: Path) -> None:
    code, out = rin(data, "transactions", "--party", "2001", "--year", "2024",
                    "--known-at", "2000-01-01T00:00:00", "--json")
    assert (code, json.loads(out)) == (0, [])
    code, out = rin(data, "activity", "--party", "2001", "--year", "2024", "--quarter", "1",
                    "--known-at", "2000-01-01T00:00:00", "--json")
    assert code == 0
    assert {row["head"]["notification_id"] for row in json.loads(out)} == {0}
    assert all(row["current_purchased"] == 0 for row in json.loads(out))


@pytest.mark.parametrize("args", [
    ["activity", "--party", "2001", "--year", "2024", "--quarter", "5"],
    ["activity", "--party", "12", "--year", "2024"],
    ["activity", "--year", "2024"],
    ["annual", "--party", "3001", "--year", "2024", "--known-at", "yesterday"],
    ["attest", "--party", "2001", "--year", "2024"],
    ["attest", "--party", "2001", "--year", "2024", "--seed", "-1"],
    ["transactions", "--party", "2001", "--year", "1999"],
])
def test_bad_arguments_exit_2(data: Path, args: list[str]) -> None:
    assert rin(data, *args)[0] == 2


def test_activity_table_has_a_line_per_amount(data: Path) -> None:
    """21 columns do not fit a terminal: the table turns the report, a column per row."""
    code, out = rin(data, "activity", "--party", "2001", "--year", "2024", "--quarter", "1")
    lines = {line.split("│")[1].strip(): line for line in out.splitlines() if "│" in line}
    assert code == 0 and "Q1 assigned" in out and "Q1 separated" in out
    assert set(lines) == set(activity.AMOUNTS)
    # F: 4,000 bought on the assigned row, none on the separated row
    assert [cell.strip() for cell in lines["current_purchased"].split("│")[2:4]] == [
        "4,000", "0"]
