"""No silent traps (issue 14, item 4): a read command on a folder holding no ledger exits 2
naming the folder and creates nothing (it used to make an empty store and `verify` said "all
invariants hold", exit 0); a party, year, batch or code the ledger never recorded exits 2
saying so (it used to print an empty table, exit 0); a known one with nothing to show is an
empty report, exit 0; long catch-ups show progress on a terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli_conventions import CODE, SAMPLE, on_a_terminal
from typer.testing import CliRunner

from ledger.cli.main import app
from projections import known

runner = CliRunner()
READS = {  # every command that only reads, with the arguments it needs
    "holdings": [], "quarterly": ["--year", "2024"], "compliance": ["--year", "2024"],
    "trace": [CODE], "invalid": [], "ptd": [], "trades": [], "project": [], "verify": [],
}


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("sample")
    assert runner.invoke(app, ["--data", str(data), "apply", str(SAMPLE)]).exit_code == 0
    return data


@pytest.mark.parametrize("name", list(READS))
@pytest.mark.parametrize("folder", ["missing", "empty"])
def test_a_read_command_on_a_folder_with_no_ledger_exits_2_naming_it(
        tmp_path: Path, name: str, folder: str) -> None:
    data = tmp_path / "rin-dta"  # a typo of rin-data
    if folder == "empty":
        data.mkdir()
    result = runner.invoke(app, ["--data", str(data), name, *READS[name]])
    assert result.exit_code == 2, result.output
    assert result.stderr == (f"no ledger in {data} (it has no events.sqlite); check --data or "
                             "RIN_DATA: `rin apply FILE` and `rin demo` create a ledger\n")
    assert result.stdout == ""
    assert (list(data.iterdir()) == []) if folder == "empty" else not data.exists()


def test_apply_creates_the_ledger_a_read_then_finds(tmp_path: Path) -> None:
    data = tmp_path / "new"
    assert runner.invoke(app, ["--data", str(data), "apply", str(SAMPLE)]).exit_code == 0
    assert runner.invoke(app, ["--data", str(data), "verify"]).exit_code == 0


@pytest.mark.parametrize("args, said", [
    (["holdings", "--party", "9999"], "party 9999 is not registered in this ledger (§80.1450)"),
    (["quarterly", "--year", "2024", "--party", "9999"], "party 9999 is not registered"),
    (["compliance", "--year", "2024", "--party", "4001"], "party 4001 is not registered"),
    (["ptd", "--party", "9999"], "party 9999 is not registered"),
    (["trades", "--party", "9999"], "party 9999 is not registered"),
    # the sample's events are dated 2024-01-31 to 2025-03-20
    (["compliance", "--year", "2031"],
     "no event is dated in 2031: this ledger's events are dated 2024 to 2025"),
    (["compliance", "--year", "2023"], "no event is dated in 2023"),
    (["invalid", "--batch", "202410012000100009"],
     "no RIN of batch 202410012000100009 was generated in this ledger"),
    (["trace", "12024100120009000011060000000100248738"],  # facility 20009: no such batch
     "CODE 12024100120009000011060000000100248738: no gallon-RIN of it was generated"),
    (["trace", "1202410012000100001106" "00248739" "00250000"],  # past the batch's serials
     "no gallon-RIN of it was generated"),
])
def test_a_name_the_ledger_never_recorded_exits_2_saying_so(
        sample: Path, args: list[str], said: str) -> None:
    for form in ([], ["--json"]):
        result = runner.invoke(app, ["--data", str(sample), *args, *form])
        assert result.exit_code == 2, result.output
        assert said in result.stderr and result.stdout == ""


@pytest.mark.parametrize("args", [
    ["holdings", "--party", "1002"],  # generated 60,000 D4, sold them all to 2001 (t-0002)
    ["holdings", "--party", "1001", "--as-of", "2023-12-31"],  # before its first generation
    ["trades", "--party", "2001"],  # the sample has no EMTS postings
    ["invalid", "--batch", "202410012000100001"],  # generated, never invalidated
])
def test_a_known_name_with_nothing_to_show_is_an_empty_report(
        sample: Path, args: list[str]) -> None:
    result = runner.invoke(app, ["--data", str(sample), *args, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == []


def test_a_year_with_rows_is_reported_outside_the_years_of_events(sample: Path) -> None:
    """1001 still holds its 128,738 assigned D6 RINs in 2030: the quarter-end rows are there."""
    result = runner.invoke(app, ["--data", str(sample), "quarterly", "--year", "2030",
                                 "--party", "1001", "--json"])
    assert result.exit_code == 0, result.output
    assert [row["assigned_rins"] for row in json.loads(result.stdout)] == [128_738] * 4


def test_a_reports_catch_up_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    """The first report on a large store sat silent while it projected (issue 14): on a
    terminal it shows a bar counting notifications; piped it prints nothing but the rows."""
    data = tmp_path / "demo"
    assert runner.invoke(app, ["--data", str(data), "demo", "--size", "300", "-q"]
                         ).exit_code == 0
    (data / "views.sqlite").unlink(missing_ok=True)  # start the views from nothing
    status, text = on_a_terminal("--data", str(data), "holdings")
    assert status == 0, text
    assert "projecting" in text and "notifications" in text
    (data / "views.sqlite").unlink()
    piped = runner.invoke(app, ["--data", str(data), "holdings", "--json"])
    assert piped.exit_code == 0 and piped.stderr == "", piped.stderr


def test_a_d_code_never_generated_is_named_for_reports_that_take_one(sample: Path) -> None:
    """No command takes a D code yet; `show(…, d_code=…)` names one never generated: the
    sample generated D6 (ethanol) and D4 (biodiesel) only."""
    path = sample / "views.sqlite"
    assert runner.invoke(app, ["--data", str(sample), "project", "-q"]).exit_code == 0
    assert known.unknown(path, d_code=6) == known.unknown(path, d_code=4) == []
    assert known.unknown(path, d_code=3) == ["no RIN of D code 3 was generated in this ledger"]
    assert known.unknown(path, party="1001", year=2024, batch="202410012000100001") == []
