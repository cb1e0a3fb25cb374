"""The `store` fixture: each test that takes it runs on a fresh SQLite folder and, when
RIN_TEST_POSTGRES_URL is set (see .ci/postgres.sh), again on a fresh PostgreSQL schema."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from uuid import uuid4

import pytest

from ledger import Ledger

POSTGRES_URL = os.environ.get("RIN_TEST_POSTGRES_URL")


@dataclass
class Store:
    """Where one test's events live: a data folder, and a PostgreSQL URL and schema if any."""

    data: Path
    url: str | None = None
    env: dict[str, str] = field(default_factory=dict)

    def ledger(self) -> Ledger:
        return Ledger(self.data, store=self.url, env=self.env)


@pytest.fixture(params=["sqlite", "postgresql"] if POSTGRES_URL else ["sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        yield Store(tmp_path)
        return
    import psycopg

    assert POSTGRES_URL is not None
    schema = f"test_{uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    yield Store(tmp_path, POSTGRES_URL, {"POSTGRES_SCHEMA": schema})
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA {schema} CASCADE")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print what the counting tests ran (hostile inputs, state-machine steps; see long_profile)."""
    from long_profile import summary

    for line in summary():
        terminalreporter.write_line(line)
