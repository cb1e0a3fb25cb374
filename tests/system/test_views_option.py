"""Issue 14, several machines: `--views` (env RIN_VIEWS) puts the read models where the user
says — a SQLite file outside the data folder, or a PostgreSQL database that several processes
or machines share — before or after the command; a bad location exits 2 naming the option, and
`rin verify`, which compares a SQLite views file with its rebuild, refuses PostgreSQL views."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from uuid import uuid4

import orjson
import pytest
from typer.testing import CliRunner

from ledger.cli.main import app
from projections.pg_views import SCHEMA_VARIABLE

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample.jsonl"
URL = os.environ.get("RIN_TEST_POSTGRES_URL")


def applied(data: Path) -> None:
    result = CliRunner().invoke(app, ["--data", str(data), "apply", str(SAMPLE)])
    assert result.exit_code == 0, result.output


def test_views_in_a_file_of_the_users_choice_before_or_after_the_command(tmp_path: Path) -> None:
    data, elsewhere = tmp_path / "data", tmp_path / "elsewhere"
    elsewhere.mkdir()
    applied(data)
    runner = CliRunner()
    chosen = runner.invoke(app, ["--data", str(data), "--views", str(elsewhere / "v.sqlite"),
                                 "holdings", "--json"])
    assert chosen.exit_code == 0, chosen.output
    assert (elsewhere / "v.sqlite").is_file() and not (data / "views.sqlite").exists()
    after = runner.invoke(app, ["holdings", "--json", "--data", str(data),
                                "--views", str(elsewhere / "w.sqlite")])
    default = runner.invoke(app, ["--data", str(data), "holdings", "--json"])
    assert (elsewhere / "w.sqlite").is_file() and (data / "views.sqlite").is_file()
    # the sample: 2001 keeps 20,000 D6 K=2 (120,000 separated − 100,000 sold to 3001)
    rows = orjson.loads(chosen.stdout)
    assert {"party": "2001", "d_code": 6, "vintage": 2024, "k": 2, "gallon_rins": 20_000} in rows
    assert orjson.loads(after.stdout) == rows == orjson.loads(default.stdout)


def test_a_views_file_in_no_folder_exits_2_naming_the_option(tmp_path: Path) -> None:
    applied(tmp_path)
    result = CliRunner().invoke(app, ["--data", str(tmp_path), "--views",
                                      str(tmp_path / "missing" / "v.sqlite"), "holdings"])
    assert result.exit_code == 2
    assert "--views" in result.output and "no such folder" in result.output


def test_verify_refuses_postgresql_views_and_changes_nothing(tmp_path: Path) -> None:
    applied(tmp_path)
    result = CliRunner().invoke(app, ["--data", str(tmp_path), "--views",
                                      "postgresql://nobody@localhost:1/none", "verify"])
    assert result.exit_code == 2
    assert "SQLite views file" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "views.sqlite").exists()


def rin(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`rin` in a process of its own, as a second service instance would run it."""
    return subprocess.run([sys.executable, "-c", "from ledger.cli.main import main; main()",
                           *args], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=600)


@pytest.mark.skipif(URL is None, reason="RIN_TEST_POSTGRES_URL is not set")
def test_two_processes_share_one_read_side_in_postgresql(tmp_path: Path) -> None:
    """One process projects the sample into PostgreSQL views; a second, after more lines are
    applied, reads them there (its catch-up projects only the new events) and answers what
    the SQLite views of the same ledger answer."""
    import psycopg

    assert URL is not None
    schema = f"views_{uuid4().hex[:12]}"
    env = {**os.environ, SCHEMA_VARIABLE: schema}
    data = tmp_path / "data"
    try:
        applied(data)
        first = rin("--data", str(data), "--views", URL, "holdings", "--json", env=env)
        assert first.returncode == 0, first.stderr
        more = tmp_path / "more.jsonl"
        more.write_text(orjson.dumps({
            "type": "transfer", "id": "t-more", "date": "2025-01-15", "from": "2001",
            "to": "3001", "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 1_000},
        }).decode() + "\n", encoding="utf-8")
        extra = CliRunner().invoke(app, ["--data", str(data), "apply", str(more)])
        assert extra.exit_code == 0, extra.output
        second = rin("holdings", "--json", "--data", str(data), "--views", URL, env=env)
        local = rin("--data", str(data), "holdings", "--json", env=env)
        assert second.returncode == 0 and local.returncode == 0, second.stderr + local.stderr
        assert orjson.loads(second.stdout) == orjson.loads(local.stdout)
        # 2001 gave 3001 1,000 more since the first process projected
        assert orjson.loads(second.stdout) != orjson.loads(first.stdout)
        with psycopg.connect(URL) as connection:
            tables = connection.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = %s",
                [schema]).fetchone()
        assert tables is not None and tables[0] > 0  # the views live in PostgreSQL
    finally:
        with psycopg.connect(URL, autocommit=True) as connection:
            connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
