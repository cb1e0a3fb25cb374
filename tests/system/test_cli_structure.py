"""The command line is thin and built explicitly: `ledger/cli/main.py` assembles the app from the
command modules, which import nothing back from it (no cycle, no registration by importing);
the CLI is the one part of `ledger` that imports `projections`; the report columns are the
read models' own (design.md "CLI")."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import typer
from projections_helpers import apply_all, sample_commands
from typer.testing import CliRunner

from ledger import Ledger
from ledger.cli.main import app
from projections import holdings, quarterly, trades

ROOT = Path(__file__).resolve().parents[2]
COMMAND_MODULES = ("apply", "demo", "reports", "regulator_reports", "trust", "market_reports",
                   "serve", "examples")


def test_every_command_in_the_order_help_lists_them() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    assert list(group.commands) == [
        "apply", "demo", "holdings", "quarterly", "compliance", "trace", "invalid", "ptd",
        "trades", "project", "activity", "transactions", "generation", "annual", "attest",
        "keygen", "verify", "late", "market", "export", "serve", "examples",
    ]


def test_command_modules_import_without_the_entry_point() -> None:
    """Importing a command module neither needs `ledger.cli.main` nor registers anything on it."""
    imports = "; ".join(f"import ledger.cli.{name}" for name in COMMAND_MODULES)
    loaded = subprocess.run(
        [sys.executable, "-c", f"{imports}; import sys; print('ledger.cli.main' in sys.modules)"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    ).stdout
    assert loaded.strip() == "False"


def imported_modules(path: Path) -> set[str]:
    """The modules a source file imports (absolute imports: the project uses no relative ones)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_only_the_cli_imports_projections() -> None:
    importers = {
        path.relative_to(ROOT).as_posix() for path in (ROOT / "ledger").rglob("*.py")
        if any(name.split(".")[0] == "projections" for name in imported_modules(path))
    }
    assert importers, "the CLI reads the read models"
    assert all(name.startswith("ledger/cli/") for name in importers), importers


def test_the_table_and_csv_columns_are_the_read_models(tmp_path: Path) -> None:
    """The CLI prints the columns the projections declare, in their order (design.md "CLI")."""
    with Ledger(tmp_path) as ledger:
        apply_all(ledger, sample_commands())
    runner = CliRunner()

    def header(*args: str) -> list[str]:
        result = runner.invoke(app, ["--data", str(tmp_path), *args, "--csv"])
        assert result.exit_code == 0, result.output
        return result.stdout.splitlines()[0].split(",")

    assert header("holdings") == holdings.COLUMNS == [
        "party", "d_code", "vintage", "k", "gallon_rins"]
    assert header("holdings", "--blocks") == holdings.BLOCK_COLUMNS == [
        "party", "rin", "d_code", "vintage", "k", "gallon_rins", "reserved", "qap",
        "locked"]
    assert header("trades") == trades.COLUMNS == [  # design.md "trades" rows, then the rest
        "id", "side", "party", "partner", "status", "date", "d_code", "vintage", "k",
        "quantity", "volume", "match", "price", "gallon_price", "reason", "broker", "ptd",
        "closed_on", "closing_reason", "counterpart"]
    assert header("quarterly", "--year", "2024") == quarterly.COLUMNS == [
        "party", "date", "assigned_rins", "volume", "limit", "excess", "ok"]
    rows = json.loads(runner.invoke(app, ["--data", str(tmp_path), "holdings", "--json"]).stdout)
    assert rows and all(list(row) == holdings.COLUMNS for row in rows)
