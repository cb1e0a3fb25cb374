"""The one settings module (ledger/infrastructure/settings.py) and the one retry policy
(ledger/infrastructure/retry.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ledger import Ledger
from ledger.infrastructure.retry import RETRY, Retry
from ledger.infrastructure.settings import (
    DEFAULT_DATA,
    EVENTS_FILE,
    data_folder,
    store_env,
    store_folder,
)
from projections import views_path


def test_the_data_folder_is_the_argument_else_rin_data_else_rin_data_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RIN_DATA", raising=False)
    assert DEFAULT_DATA == "./rin-data"
    assert data_folder() == Path("rin-data")
    monkeypatch.setenv("RIN_DATA", str(tmp_path / "env"))
    assert data_folder() == tmp_path / "env"
    assert data_folder(tmp_path / "given") == tmp_path / "given"


def test_a_sqlite_store_lives_in_its_data_folder_with_its_views(tmp_path: Path) -> None:
    env = store_env(tmp_path / "d")
    assert env["SQLITE_DBNAME"] == str(tmp_path / "d" / EVENTS_FILE)
    assert store_folder(env) == tmp_path / "d"
    with Ledger(tmp_path / "d") as ledger:
        assert ledger.folder == tmp_path / "d"
        assert views_path(ledger) == tmp_path / "d" / "views.sqlite"


def test_a_postgresql_store_keeps_its_views_in_the_data_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIN_DATA", str(tmp_path / "views-here"))
    env = store_env(store="postgresql://u:p%40ss@db.example:6543/ledger")
    assert (env["POSTGRES_HOST"], env["POSTGRES_PORT"], env["POSTGRES_USER"],
            env["POSTGRES_PASSWORD"], env["POSTGRES_DBNAME"]) == (
        "db.example", "6543", "u", "p@ss", "ledger")
    assert store_folder(env) == tmp_path / "views-here"


def test_a_postgresql_ledger_given_a_data_folder_keeps_its_views_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`Ledger(data, store=url)`: the views, head and keys go in `data`, not in RIN_DATA or
    ./rin-data, where two ledgers on two PostgreSQL schemas would share one views file."""
    monkeypatch.setenv("RIN_DATA", str(tmp_path / "shared"))
    env = store_env(tmp_path / "mine", "postgresql://u@db.example/ledger")
    assert store_folder(env) == tmp_path / "mine"


def test_url_options_are_refused_not_dropped() -> None:
    with pytest.raises(ValueError, match="PGSSLMODE"):
        store_env(store="postgresql://u@h/db?sslmode=require")


def test_the_policy_tries_thirty_times_and_the_last_is_known() -> None:
    assert list(RETRY.tries()) == list(range(30))
    assert not RETRY.last(28) and RETRY.last(29)


def test_a_pause_grows_with_the_attempt_and_never_passes_the_longest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)
    monkeypatch.setattr("random.uniform", lambda low, high: high)  # the longest it may wait
    policy = Retry(attempts=10, longest_pause=0.05, first_pause=0.001)
    for attempt in range(10):
        policy.pause(attempt)
    assert waits == [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.05, 0.05, 0.05, 0.05]
