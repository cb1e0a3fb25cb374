"""The command line behaves like the tools people use (issue 14, item 3): `-h`, `--version`,
completion, help written for users, global options before or after the command, one output
format shared by every report (two at once exit 2), exact JSON/CSV/NL and tables for people
as wide as the terminal, `--quiet`, `verify --json`."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from ledger.cli.main import app
from ledger.cli.options import Options, overridden

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample.jsonl"
RIN = [sys.executable, "-c", "from ledger.cli.main import main; main()"]
GLOBAL = ("--data", "--store", "--key", "--trade-window", "--quiet")
CODE = "12024100120001000011060000000100248738"  # 1001's ethanol batch in the sample
#: every report command with the arguments it needs
REPORTS = {
    "holdings": [], "quarterly": ["--year", "2024"], "compliance": ["--year", "2024"],
    "trace": [CODE], "invalid": [], "ptd": [], "trades": [],
}
runner = CliRunner()


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("sample")
    applied = runner.invoke(app, ["--data", str(data), "apply", str(SAMPLE)])
    assert applied.exit_code == 0, applied.output
    return data


def rin(*args: str) -> typer.testing.Result:
    return runner.invoke(app, list(args))


def commands() -> dict[str, typer.core.TyperCommand]:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    return dict(group.commands)  # type: ignore[arg-type]


def test_version_is_the_distributions() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["version"]
    result = rin("--version")
    assert (result.exit_code, result.stdout) == (0, f"rin-ledger {version}\n")


@pytest.mark.parametrize("name", ["", *commands()])
def test_dash_h_is_help_on_every_command(name: str) -> None:
    result = rin(*([name] if name else []), "-h")
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.stdout and result.stdout == rin(
        *([name] if name else []), "--help").stdout


def test_top_level_help_is_for_users_with_examples_and_completion() -> None:
    text = rin("--help").stdout
    assert "a ledger of Renewable Identification Numbers" in text
    assert "thin layer" not in text  # the developer docstring it used to print
    assert "Examples" in text and "rin --data ./ledger apply trades.jsonl" in text
    assert "--install-completion" in text and "--show-completion" in text
    assert "--json, --csv or --nl" in text


#: the commands that print no report rows (a result per line, the demo's own tables, a key)
#: commands that print no report rows: export writes EMTS XML, serve starts Datasette, examples
#: writes the example files
NOT_REPORTS = {"apply", "demo", "project", "keygen", "verify", "export", "serve", "examples"}


@pytest.mark.parametrize("name", sorted(set(commands()) - NOT_REPORTS))
def test_every_report_has_the_one_shared_output_option(name: str) -> None:
    declared = [opt for param in commands()[name].params for opt in getattr(param, "opts", [])]
    assert [declared.count(f"--{kind}") for kind in ("table", "json", "csv", "nl")] == [1] * 4, (
        f"rin {name}: decorate it with ledger.cli.output.tabular and print with "
        "emit(rows, columns, title=...) (docs/cli.md, 'Adding a report command')")


@pytest.mark.parametrize("name", list(commands()))
def test_every_command_takes_each_global_option_after_its_name_once(name: str) -> None:
    """Declared once: a command with a `--quiet` (or `--data`) of its own would shadow the
    global one (the global options are added to each command by ledger/cli/options.py)."""
    declared = [opt for param in commands()[name].params for opt in getattr(param, "opts", [])]
    assert [declared.count(option) for option in GLOBAL] == [1] * len(GLOBAL), declared


def test_global_options_after_the_command_equal_before_it_and_override(
        sample: Path, tmp_path: Path) -> None:
    before = rin("--data", str(sample), "holdings", "--json")
    after = rin("holdings", "--json", "--data", str(sample))
    overridden = rin("--data", str(tmp_path / "typo"), "holdings", "--data", str(sample), "--json")
    assert before.exit_code == after.exit_code == overridden.exit_code == 0, after.output
    assert json.loads(before.stdout) and before.stdout == after.stdout == overridden.stdout
    assert not (tmp_path / "typo").exists()


def test_a_global_option_given_after_the_command_is_taken_even_when_falsy(tmp_path: Path) -> None:
    """`--trade-window 0` after the command is 0 days, not "not given" (0 == False in Python)."""
    root = Options(tmp_path, trade_window=10, quiet=True)
    assert overridden(root, {"data": None, "store": None, "key": None, "trade_window": 0,
                             "quiet": False}) == Options(tmp_path, trade_window=0, quiet=True)
    with pytest.raises(typer.BadParameter, match="is not a folder"):
        overridden(root, {"data": SAMPLE})


@pytest.mark.parametrize("name", list(REPORTS))
@pytest.mark.parametrize("two", [("--json", "--csv"), ("--table", "--nl"), ("--csv", "--nl")])
def test_two_output_formats_at_once_exit_2_before_the_store_is_opened(
        tmp_path: Path, name: str, two: tuple[str, str]) -> None:
    """`--json --csv` silently gave JSON (issue 14). The folder does not exist: the format is
    refused first, and nothing is created."""
    result = rin("--data", str(tmp_path / "none"), name, *REPORTS[name], *two)
    assert result.exit_code == 2, result.output
    said = " ".join(result.stderr.replace("│", " ").split())  # the error box's lines joined
    assert f"{two[0]} and {two[1]}: choose one output format" in said
    assert result.stdout == "" and not (tmp_path / "none").exists()


@pytest.mark.parametrize("name", list(REPORTS))
def test_every_report_prints_json_csv_nl_and_a_table_of_the_same_rows(
        sample: Path, name: str) -> None:
    def out(*form: str) -> str:
        result = rin("--data", str(sample), name, *REPORTS[name], *form)
        assert result.exit_code == 0, result.output
        return result.stdout

    rows = json.loads(out("--json"))
    assert [json.loads(line) for line in out("--nl").splitlines()] == rows
    table = out("--table")
    assert table == out()  # the default
    parsed = list(csv.DictReader(io.StringIO(out("--csv"))))
    assert len(parsed) == len(rows)
    for row, text in zip(rows, parsed, strict=True):  # CSV is JSON's values as text, exactly
        assert text == {key: "" if value is None else
                        json.dumps(value) if isinstance(value, bool) else str(value)
                        for key, value in row.items()}


def test_csv_booleans_and_exact_amounts_and_table_separators(sample: Path) -> None:
    """1001's quarter-end on 2024-03-31: 128,738 assigned gallon-RINs with 128,738.3 gal
    (250,000 gal at 68 °F, §80.1426(f)(8)) × 2.5 = 321,845.75 allowed, ok."""
    common = ["--data", str(sample), "quarterly", "--year", "2024", "--party", "1001"]
    assert rin(*common, "--csv").stdout.splitlines()[1] == (
        "1001,2024-03-31,128738,128738.3,321845.75,0,true")
    [first, *_] = json.loads(rin(*common, "--json").stdout)
    assert (first["volume"], first["limit"], first["ok"]) == ("128738.3", "321845.75", True)
    table = rin(*common).stdout
    assert "128,738.3" in table and "321,845.75" in table and "true" in table
    assert "2024-03-31" in table and "2,024" not in rin("--data", str(sample), "holdings").stdout


def test_a_table_written_to_a_pipe_is_never_wrapped(sample: Path) -> None:
    """The trace table is 118 characters wide: piped, each row is one line, whatever width."""
    result = subprocess.run([*RIN, "--data", str(sample), "trace", CODE], cwd=ROOT,
                            capture_output=True, text=True, env={**os.environ, "COLUMNS": "60"},
                            check=False)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("│ 20")]
    assert len(rows) == len(json.loads(rin("--data", str(sample), "trace", CODE, "--json").stdout))
    assert all(CODE[1:22] in row for row in rows)  # the whole code on the row's line


def on_a_terminal(*args: str, columns: int = 100) -> tuple[int, str]:
    """Run `rin` with stdout and stderr on a pseudo-terminal `columns` wide: (status, text)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm"}
    process = subprocess.Popen([*RIN, *args], cwd=ROOT, stdin=subprocess.DEVNULL,
                               stdout=follower, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    text = b"".join(chunks).decode(errors="replace")
    return process.wait(timeout=120), re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)  # no styles


def test_a_table_on_a_terminal_fits_its_width(sample: Path) -> None:
    """Tables were forced to 160 columns (issue 14)."""
    status, text = on_a_terminal("--data", str(sample), "trace", CODE, columns=90)
    assert status == 0, text
    lines = [line for line in text.splitlines() if "│" in line or "┃" in line]
    assert lines and max(len(line) for line in lines) <= 90, max(lines, key=len)


def test_apply_progress_on_a_terminal_counts_lines_exactly_and_nothing_when_piped(
        tmp_path: Path) -> None:
    """The bar said "1 lines" for a 16-line file (issue 14); piped, it printed its last frame."""
    status, text = on_a_terminal("--data", str(tmp_path / "t"), "apply", str(SAMPLE))
    assert status == 0, text
    assert "16 of 16 lines" in text and " 1 lines" not in text
    piped = subprocess.run([*RIN, "--data", str(tmp_path / "p"), "apply", str(SAMPLE)], cwd=ROOT,
                           capture_output=True, text=True, check=False)
    assert (piped.returncode, piped.stdout, piped.stderr) == (
        0, "", "16 applied, 0 duplicate, 0 rejected\n")
    quiet = subprocess.run([*RIN, "--data", str(tmp_path / "q"), "apply", "-q", str(SAMPLE)],
                           cwd=ROOT, capture_output=True, text=True, check=False)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


def test_verify_json(sample: Path, tmp_path: Path) -> None:
    good = rin("--data", str(sample), "verify", "--json")
    assert good.exit_code == 0, good.output
    assert json.loads(good.stdout) == {"ok": True, "problems": []}
    broken = tmp_path / "broken"
    assert rin("--data", str(broken), "apply", str(SAMPLE)).exit_code == 0
    assert rin("--data", str(broken), "project", "-q").exit_code == 0
    import sqlite3  # the views' tracking edited by hand: verify names it

    with sqlite3.connect(broken / "views.sqlite") as db:
        db.execute("UPDATE tracking SET notification_id = 'abc'")
    db.close()
    plain, as_json = rin("--data", str(broken), "verify"), rin("--data", str(broken), "verify",
                                                               "--json")
    assert plain.exit_code == as_json.exit_code == 1, as_json.output
    found = json.loads(as_json.stdout)
    assert found["ok"] is False and found["problems"] == plain.stdout.splitlines()
    assert any("tracking says 'abc'" in problem for problem in found["problems"])


def test_quiet_everywhere(sample: Path, tmp_path: Path) -> None:
    for args in (["verify", "-q"], ["-q", "verify"], ["project", "--quiet"],
                 ["holdings", "-q", "--party", "2001"]):
        result = rin("--data", str(sample), *args)
        assert result.exit_code == 0 and result.stderr == "", (args, result.output)
    key = rin("keygen", str(tmp_path / "k.key"), "-q")
    assert (key.exit_code, key.stdout, key.stderr) == (0, "", "")
    assert (tmp_path / "k.key.pub").is_file()
