"""The tests' shared set-up: the three layers on `sys.path`, the `store` fixture, the guard that
keeps `tests/unit` off every store, and the `slow` marker.

`tests/unit` tests the domain and the rules with no store; `tests/integration` a `Ledger` on a
real store (SQLite, and PostgreSQL when RIN_TEST_POSTGRES_URL is set, see .ci/postgres.sh);
`tests/system` the `rin` command line end to end. `python -m pytest -m "not slow"` is the fast
inner loop; `python -m pytest` runs everything.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn
from uuid import uuid4

import pytest
from eventsourcing.application import Application
from hypothesis import settings
from layout import LAYERS, TESTS, is_slow

from ledger import Ledger

# A test module imports the helpers here (`markets`, `conftest`) and other test modules by their
# bare names (`from test_concurrency import generate`) from whichever layer they live in.
for _layer in LAYERS:
    if str(TESTS / _layer) not in sys.path:
        sys.path.insert(1, str(TESTS / _layer))

POSTGRES_URL = os.environ.get("RIN_TEST_POSTGRES_URL")

# Hypothesis's 200 ms deadline times a machine, not the contract: on the shared 2-core machine
# tests/unit/test_ranges.py took 294 ms for one example at load 11 and failed as flaky.
settings.register_profile("shared-machine", deadline=None)
settings.load_profile("shared-machine")


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
    with postgres_store(tmp_path) as made:
        yield made


@contextmanager
def postgres_store(data: Path) -> Iterator[Store]:
    """A PostgreSQL store in a schema of its own, dropped afterwards (RIN_TEST_POSTGRES_URL)."""
    import psycopg

    assert POSTGRES_URL is not None
    schema = f"test_{uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    try:
        yield Store(data, POSTGRES_URL, {"POSTGRES_SCHEMA": schema})
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")


# --- tests/unit opens no store -------------------------------------------------------------

def store_openers() -> list[tuple[Any, str]]:
    """(owner, attribute) of everything that opens a store: the ledger, any eventsourcing
    application (LedgerApp), SQLite (sqlite-utils and eventsourcing's SQLite recorders call
    `sqlite3.connect`) and PostgreSQL (`psycopg.connect`, and the pools' `Connection.connect`)."""
    openers: list[tuple[Any, str]] = [(Ledger, "__init__"), (Application, "__init__"),
                                      (sqlite3, "connect")]
    try:
        import psycopg
    except ImportError:  # the postgresql extra is not installed: nothing can connect to one
        return openers
    return [*openers, (psycopg, "connect"), (psycopg.Connection, "connect")]


@pytest.fixture(autouse=True)
def unit_tests_open_no_store(request: pytest.FixtureRequest,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail a `tests/unit` test the moment it constructs a `Ledger` or an application or
    connects to a database: unit tests exercise the domain and the rules alone (issue 11)."""
    if TESTS / "unit" not in request.path.parents:
        return
    for owner, name in store_openers():
        what = f"{getattr(owner, '__name__', owner)}.{name}"

        def refuse(*args: object, _what: str = what, **kwargs: object) -> NoReturn:
            pytest.fail(f"a unit test opened a store ({_what}); move it to tests/integration",
                        pytrace=False)

        monkeypatch.setattr(owner, name, refuse)


# --- the slow marker -----------------------------------------------------------------------

def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests in SLOW `slow` (the marker is registered in pyproject.toml)."""
    for item in items:
        if item.path.is_relative_to(TESTS) and is_slow(
                item.path.relative_to(TESTS).as_posix(), item.name):
            item.add_marker(pytest.mark.slow)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker, hand its tallies to the controller, which prints them all."""
    from long_profile import TALLIES

    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["tallies"] = {section: dict(counts) for section, counts in TALLIES.items()}


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: without xdist it is never called
def pytest_testnodedown(node: Any, error: object) -> None:
    """Add a finished worker's tallies to the controller's (see `pytest_sessionfinish`)."""
    from long_profile import merge

    merge(getattr(node, "workeroutput", {}).get("tallies", {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print what the counting tests ran (hostile inputs, state-machine steps; see long_profile),
    in every worker of a parallel run together."""
    from long_profile import summary

    for line in summary():
        terminalreporter.write_line(line)
