"""Issue 14's command-line traps tried again by a new user with other inputs: the reports added
since (activity, transactions, generation, annual, attest, late, market, export), a mistyped
transaction file, two output formats at once, `-h` everywhere, exact progress counts. Each
expectation is a sentence of docs/cli.md or the README ("No silent traps", "Output formats")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_cli_conventions import SAMPLE, on_a_terminal
from typer.main import get_command
from typer.testing import CliRunner

from ledger.cli.main import app

runner = CliRunner()
#: every report of the README's "regulator's reports" and "Late submissions…" sections, with the
#: arguments it needs beside --party
PARTY_REPORTS = {
    "activity": ["--year", "2024", "--quarter", "1"],
    "transactions": ["--year", "2024"],
    "generation": ["--year", "2024"],
    "annual": ["--year", "2024"],
    "attest": ["--year", "2024", "--seed", "1"],
}
REPORTS = {  # every command docs/cli.md calls a report, with arguments that work on the sample
    "holdings": [], "quarterly": ["--year", "2024"], "compliance": ["--year", "2024"],
    "ptd": [], "trades": [], "invalid": [], "late": ["--year", "2024"],
    "market": ["--table", "available"],
    **{name: ["--party", "2001", *args] for name, args in PARTY_REPORTS.items()},
}


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("sample")
    assert runner.invoke(app, ["--data", str(data), "apply", str(SAMPLE)]).exit_code == 0
    return data


@pytest.mark.parametrize("name", list(PARTY_REPORTS))
def test_every_regulator_report_names_a_party_never_registered(sample: Path, name: str) -> None:
    """docs/cli.md: a report for a `--party` that was never registered exits 2 saying which,
    nothing on stdout. (These reports print an empty report, exit 0.)"""
    result = runner.invoke(app, ["--data", str(sample), name, "--party", "9999",
                                 *PARTY_REPORTS[name]])
    assert (result.exit_code, result.stdout) == (2, ""), result.output
    assert "party 9999 is not registered" in result.stderr


def test_export_for_a_party_never_registered_exits_2_and_writes_no_file(sample: Path,
                                                                        tmp_path: Path) -> None:
    """The EMTS export of a party the ledger never recorded is a mistake, not an empty file."""
    out = tmp_path / "9999.xml"
    result = runner.invoke(app, ["--data", str(sample), "export", "--party", "9999", "--from",
                                 "2024-01-01", "--to", "2024-12-31", "--format", "emts-xml",
                                 "--output", str(out)])
    assert result.exit_code == 2, result.output
    assert "party 9999 is not registered" in result.stderr and not out.exists()


@pytest.mark.parametrize("name", list(REPORTS))
def test_every_report_takes_the_four_output_formats(name: str) -> None:
    """docs/cli.md: every report takes `--table`, `--json`, `--csv` or `--nl`."""
    result = runner.invoke(app, [name, "-h"], terminal_width=200)
    assert result.exit_code == 0, result.output
    missing = [option for option in ("--table", "--json", "--csv", "--nl")
               if option not in result.stdout]
    assert missing == [], f"{name} -h lists no {missing}"


@pytest.mark.parametrize("name", list(REPORTS))
def test_two_formats_at_once_are_refused_before_the_store_is_opened(sample: Path,
                                                                    name: str) -> None:
    """docs/cli.md: `--json --csv` is an error, exit 2, before the store is opened: no report
    is computed (its title, "at notification N", is never printed)."""
    result = runner.invoke(app, ["--data", str(sample), name, *REPORTS[name], "--json", "--csv"])
    assert (result.exit_code, result.stdout) == (2, ""), result.output
    assert "at notification" not in result.stderr, result.stderr


def test_a_mistyped_transaction_file_creates_no_ledger(tmp_path: Path) -> None:
    """`rin apply` of a file that does not exist exits 2 (unreadable input) and, as bad input
    changes nothing, leaves no empty ledger behind for `verify` to call sound. (It creates
    `<data>/events.sqlite`; the README's own tour from a wheel, with no `examples/`, then runs
    every report on that empty ledger.)"""
    data = tmp_path / "rin-data"
    result = runner.invoke(app, ["--data", str(data), "apply", str(tmp_path / "sampel.jsonl")])
    assert result.exit_code == 2 and "unreadable input" in result.stderr
    assert not data.exists(), list(data.iterdir())


def test_every_command_answers_dash_h() -> None:
    """`-h` or `--help` on every command, each with a usage line."""
    root = get_command(app)
    names = sorted(getattr(root, "commands", {}))
    assert {"apply", "activity", "export", "late", "market", "serve", "verify"} <= set(names)
    for name in names:
        for flag in ("-h", "--help"):
            result = runner.invoke(app, [name, flag])
            assert result.exit_code == 0 and "Usage" in result.stdout, (name, flag, result.output)


def test_progress_counts_a_file_without_a_final_newline_exactly(tmp_path: Path) -> None:
    """Counts are exact (docs/cli.md): the sample's 16 lines with the last newline dropped are
    still 16 lines."""
    lines = SAMPLE.read_bytes().rstrip(b"\n")
    assert lines.count(b"\n") == 15
    trimmed = tmp_path / "trimmed.jsonl"
    trimmed.write_bytes(lines)
    status, text = on_a_terminal("--data", str(tmp_path / "d"), "apply", str(trimmed))
    assert status == 0, text
    assert "16 of 16 lines" in text and "15 of" not in text, text


def test_an_empty_store_url_is_refused_not_taken_for_the_data_folder(tmp_path: Path) -> None:
    """The README's `rin --store "$RIN_TEST_POSTGRES_URL" … apply` with the variable unset
    (no server started) passes `--store ""`: a URL that is not `postgresql://…` should be
    refused, exit 2, as other malformed URLs are, rather than silently writing a SQLite ledger
    into `--data` and exiting 0 as if the ledger were on PostgreSQL."""
    data = tmp_path / "pg"
    result = runner.invoke(app, ["--store", "", "--data", str(data), "apply", str(SAMPLE)])
    assert result.exit_code == 2, result.output
    assert "--store" in result.stderr and not data.exists()


def test_the_readme_states_the_every_rule_files_refusal_count() -> None:
    """The README's comment on `apply examples/every_rule.jsonl` says how many refusals a user
    will see; it must be the count of `examples/every_rule.expected` (the README said 96 while
    the file refuses 107 lines; test_readme.py checks only the exit status)."""
    root = SAMPLE.parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"apply examples/every_rule\.jsonl +# (\d+) refusals", readme)
    assert stated is not None
    expected = (root / "examples" / "every_rule.expected").read_text(encoding="utf-8")
    assert int(stated.group(1)) == len(expected.splitlines())


@pytest.mark.parametrize("name", list(REPORTS))
def test_quiet_after_the_command_prints_nothing_but_the_rows(sample: Path, name: str) -> None:
    """docs/cli.md: `--quiet`/`-q`, before or after the command, prints nothing but the results
    asked for and errors. (The regulator reports still print their title and head on stderr.)"""
    result = runner.invoke(app, [name, *REPORTS[name], "--data", str(sample), "-q", "--json"])
    assert result.exit_code == 0, result.output
    assert result.stderr == "" and result.stdout.startswith("[")
