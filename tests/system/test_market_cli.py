"""`rin late`, `rin market` and `rin export` on the command line: JSON and CSV rows carry the
chain head they were computed at (a `head` object, as every report's), which `rin verify
--against` accepts; `--table`/`--json`/`--csv`/`--nl` are the shared output options;
`--known-at` gives the report and head of an earlier point; a bad argument exits 2 naming the
option, before any store is opened."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ledger import Ledger
from ledger.cli.main import app
from projections.emts_xml import NAMESPACE

Rin = Callable[..., tuple[int, str, str]]
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.jsonl"


@pytest.fixture
def rin(tmp_path: Path) -> Rin:
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str, str]:
        result = runner.invoke(app, ["--data", str(tmp_path / "data"), *args])
        return result.exit_code, result.stdout, result.stderr

    assert run("apply", str(SAMPLE))[0] == 0
    return run


def test_rows_carry_the_head_they_were_computed_at_and_it_verifies(
        rin: Rin, tmp_path: Path) -> None:
    code, out, _ = rin("market", "--table", "available", "--json")
    rows = json.loads(out)
    assert code == 0 and rows
    with Ledger(tmp_path / "data") as ledger:
        head = ledger.head()
    assert all(r["head"] == head for r in rows)
    kept = tmp_path / "head.json"
    kept.write_text(json.dumps(rows[0]["head"]))
    assert rin("verify", "--against", str(kept))[0] == 0


def test_known_at_gives_the_earlier_report_and_its_head(
        rin: Rin, tmp_path: Path) -> None:
    # the head just before the sample's first transfer: its two batches generated, its split
    # made, nothing moved, separated or retired
    with Ledger(tmp_path / "data") as ledger:
        first_transfer = next(logged.notification_id for page in ledger.log.pages(0)
                              for logged in page if "Transferred" in type(logged.event).__name__)
        earlier = ledger.head(first_transfer - 1)
    code, out, _ = rin("market", "--table", "available", "--known-at",
                       str(first_transfer - 1), "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0
    # the sample's two batches, nothing yet separated or retired: 248,738 D6 and 60,000 D4
    assert [(r["d_code"], r["assignment"], r["generated"], r["retired"], r["available"])
            for r in rows] == [("4", "assigned", "60000", "0", "60000"),
                               ("6", "assigned", "248738", "0", "248738")]
    assert {r["head"] for r in rows} == {json.dumps(earlier, separators=(",", ":"))}


def test_late_report_on_the_command_line(rin: Rin) -> None:
    code, out, _ = rin("late", "--year", "2025", "--json")
    assert code == 0
    assert [(r["party"], r["command"], r["type"], r["late"]) for r in json.loads(out)] == [
        ("3001", "r-0001", "retire", True), ("3001", "r-0002", "retire", True)]
    # nothing is dated 2023, before the ledger's first event: a year it never recorded exits 2
    # saying so (issue 14: an empty report, exit 0, read as "nothing late")
    code, out, said = rin("late", "--year", "2023", "--json")
    assert (code, out) == (2, "") and "no event is dated in 2023" in said
    code, out, _ = rin("late", "--year", "2024")
    assert code == 0 and "Submissions dated 2024" in out and "at notification" in out


def test_export_writes_xml_to_a_file(rin: Rin, tmp_path: Path) -> None:
    target = tmp_path / "1001.xml"
    code, out, _ = rin("export", "--party", "1001", "--from", "2024-01-01", "--to", "2024-12-31",
                       "--format", "emts-xml", "--output", str(target))
    assert code == 0 and out == ""
    root = ET.parse(target).getroot()
    assert [child.tag.removeprefix(f"{{{NAMESPACE}}}") for child in root][:4] == [
        "UserLoginText", "SubmittalCreationDate", "OrganizationIdentifier",
        "SubmittalCommentText"]
    assert root.findtext(f"{{{NAMESPACE}}}OrganizationIdentifier") == "1001"
    comment = root.findtext(f"{{{NAMESPACE}}}SubmittalCommentText") or ""
    with Ledger(tmp_path / "data") as ledger:
        head = ledger.head()
    assert json.loads(comment.split("; head ", 1)[1]) == head  # the head `verify --against` takes


@pytest.mark.parametrize(("args", "named"), [
    (["market", "--table", "holdings"], "--table"),
    (["late", "--year", "20x4"], "--year"),
    (["late", "--year", "2024", "--known-at", "yesterday"], "--known-at"),
    (["export", "--party", "1001", "--from", "2024-02-30", "--to", "2024-12-31"], "--from"),
    (["export", "--party", "1001", "--from", "2024-02-01", "--to", "2024-01-31"], "--to"),
    (["export", "--party", "1001", "--from", "2024-01-01", "--to", "2024-12-31",
      "--format", "csv"], "--format"),
    (["export", "--party", "10011", "--from", "2024-01-01", "--to", "2024-12-31"], "--party"),
    (["serve", "--port", "70000"], "--port"),
    (["serve", "--get", "views"], "--get"),
])
def test_a_bad_argument_exits_2_naming_it(tmp_path: Path, args: list[str], named: str) -> None:
    result = CliRunner().invoke(app, ["--data", str(tmp_path / "none"), *args])
    assert result.exit_code == 2
    assert named in result.stderr and "Traceback" not in result.stderr + result.stdout
    assert not (tmp_path / "none" / "events.sqlite").exists()


@pytest.mark.parametrize("report", [["market", "--table", "available"], ["late", "--year", "2024"]])
def test_one_output_option_two_at_once_exit_2(rin: Rin, report: list[str]) -> None:
    code, out, _ = rin(*report, "--nl")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and lines and all("head" in line for line in lines)
    code, _, said = rin(*report, "--json", "--csv")
    assert code == 2 and "choose one output format" in said
