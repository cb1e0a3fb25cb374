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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn
from uuid import uuid4

import pytest
from eventsourcing.application import Application

from ledger import Ledger

TESTS = Path(__file__).parent
LAYERS = ("unit", "integration", "system")
# A test module imports the helpers here (`markets`, `conftest`) and other test modules by their
# bare names (`from test_concurrency import generate`) from whichever layer they live in.
for _layer in LAYERS:
    if str(TESTS / _layer) not in sys.path:
        sys.path.insert(1, str(TESTS / _layer))

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


# --- the slow marker -------------------------------------------------------------------------

#: The tests that take about 1 s or more on the project's 2-core machine, measured with
#: `python -m pytest --durations=60` (seconds in the comments): by file, the names of its slow
#: tests (every parametrization of each), or `ALL` for the whole file. `-m "not slow"` skips them.
ALL: tuple[str, ...] = ()
SLOW: dict[str, tuple[str, ...]] = {
    "system/test_crash_safety.py": ALL,  # SIGKILLs `rin apply`/`rin project` subprocesses: 55 s
    "system/test_readme.py": ALL,  # every command of README.md, in a shell
    "integration/test_model_based.py": ALL,  # the state machine and two broken ledgers: 38 s
    "unit/test_fuel_book.py": ("test_answers_equal_a_plain_dated_list",),  # hypothesis: 12 s
    "system/test_hostile_input.py": (  # the hostile streams: 7 s, 6 s
        "test_random_field_values_never_crash_and_store_nothing_when_rejected",
        "test_cli_on_binary_junk_exits_1_or_0_and_stores_nothing",
        "test_hostile_stream_stores_nothing_for_what_it_refuses",
    ),
    # a whole simulated market applied: 3.6 s; 2.6 s, 1.7 s; 2.2 s
    "integration/test_asof_rollup.py": (
        "test_the_rollup_equals_the_full_scan_on_a_simulated_market",),
    "integration/test_simulate.py": (
        "test_a_simulated_market_applies_with_no_rejection",
        "test_bad_lines_are_rejected_and_only_they",
    ),
    "integration/test_chain_mapping.py": (
        "test_every_event_of_a_market_maps_to_the_same_bytes",),
    # processes and threads racing on one store: 3.2 s, 3.0 s, 2.6 s, 1.2 s
    "integration/test_concurrency.py": ALL,
    "integration/test_stores.py": ("test_two_processes_never_spend_the_same_rins_twice",),
    "integration/red_team/test_write_skew.py": (
        "test_no_transfer_or_retirement_is_stored_after_the_finding",),
    "integration/red_team/test_threads.py": ALL,
    # `rin` run as a subprocess: 4.0 s, 2.2 s; store failures seen through it: 20 s in all
    "integration/test_projections_rebuild.py": (
        "test_killed_projection_resumes_without_loss_or_duplicates",
        "test_verify_cli_exit_codes",
    ),
    "integration/red_team/test_failures.py": (
        "test_attack_read_only_data_folder_exits_3",
        "test_attack_lock_held_beyond_the_timeout_exits_3",
        "test_attack_disk_full_exits_3_after_reporting_every_committed_line",
        "test_attack_read_only_store_file_exits_3",
        "test_attack_malformed_database_file_exits_3",
        "test_attack_postgresql_down_exits_3",
    ),
    "integration/red_team/test_input.py": (
        "test_bom_at_the_start_of_each_file_is_skipped_elsewhere_named",
        "test_attack_a_huge_line_is_refused_early_in_bounded_memory",
    ),
    "integration/red_team/test_keys.py": ("test_a_signed_store_refuses_writes_without_its_key",),
}


def is_slow(path: str, name: str) -> bool:
    """Whether test `name` (`test_y[sqlite]`) of the file at `path` relative to tests/ is slow."""
    names = SLOW.get(path)
    return names is not None and (names == ALL or name.partition("[")[0] in names)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests in SLOW `slow` (the marker is registered in pyproject.toml)."""
    for item in items:
        if item.path.is_relative_to(TESTS) and is_slow(
                item.path.relative_to(TESTS).as_posix(), item.name):
            item.add_marker(pytest.mark.slow)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print what the counting tests ran (hostile inputs, state-machine steps; see long_profile)."""
    from long_profile import summary

    for line in summary():
        terminalreporter.write_line(line)
