"""Issue 15: `verify` compares the views with their rebuild by one `UNION` and the row counts,
and counts rows only when they differ (projections/invariants.py `table_difference`). These
tamper a copy of the views and check the comparison finds each difference, counted as
multisets (a row repeated in one copy only counts as many times as it is repeated)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from red_team.attacker import build
from sqlite_utils import Database

from ledger.application.ledger import Ledger
from projections import Views
from projections.invariants import table_differences

TABLE = "holdings_history"  # a two-column primary key, (notification_id, seq): SQLite lets
# its columns hold NULL, so an attacker can store one row twice


@pytest.fixture
def views(tmp_path: Path) -> tuple[Path, Path]:
    """The market's views and an equal copy standing for their rebuild."""
    build(tmp_path)
    with Ledger(tmp_path) as ledger:
        Views(ledger).project()
    path, fresh = tmp_path / "views.sqlite", tmp_path / "fresh.sqlite"
    shutil.copyfile(path, fresh)
    return path, fresh


def tamper(path: Path, *statements: str) -> None:
    db = Database(path)
    for sql in statements:
        db.execute(sql.format(table=TABLE, last=f"(SELECT MAX(notification_id) FROM {TABLE})"))
    db.conn.commit()
    db.close()


def said(extra: int, missing: int) -> list[str]:
    return [f"view {TABLE} differs from a rebuild: {extra} rows not in the rebuild, "
            f"{missing} rows missing"]


def test_equal_copies_have_no_difference(views: tuple[Path, Path]) -> None:
    assert table_differences(*views) == []


def test_a_deleted_row_is_missing(views: tuple[Path, Path]) -> None:
    path, fresh = views
    tamper(path, "DELETE FROM {table} WHERE seq = 0 AND notification_id = {last}")
    assert table_differences(path, fresh) == said(0, 1)


def test_a_changed_row_is_one_extra_and_one_missing(views: tuple[Path, Path]) -> None:
    path, fresh = views
    tamper(path, "UPDATE {table} SET seq = 99 WHERE seq = 0 AND notification_id = {last}")
    assert table_differences(path, fresh) == said(1, 1)


def test_a_row_stored_twice_counts_twice(views: tuple[Path, Path]) -> None:
    """The changed row (seq NULL) stored twice: two rows not in the rebuild, its original
    missing; the row counts differ by one, and a comparison of distinct rows would say 1."""
    path, fresh = views
    tamper(path, "UPDATE {table} SET seq = NULL WHERE seq = 0 AND notification_id = {last}",
           "INSERT INTO {table} SELECT * FROM {table} WHERE seq IS NULL")
    assert table_differences(path, fresh) == said(2, 1)


def test_a_row_repeated_instead_of_another_is_found(views: tuple[Path, Path]) -> None:
    """Equal row counts and the same distinct rows, yet not the same rows: one copy holds
    row A twice and B once, the other A once and B twice."""
    path, fresh = views
    nulled = ("UPDATE {table} SET seq = NULL WHERE seq IN (0, 1) AND notification_id = "
              "(SELECT MAX(notification_id) FROM {table} WHERE seq = 1)")
    tamper(path, nulled, "INSERT INTO {table} SELECT * FROM {table} WHERE seq IS NULL "
                         "ORDER BY rowid LIMIT 1")
    tamper(fresh, nulled, "INSERT INTO {table} SELECT * FROM {table} WHERE seq IS NULL "
                          "ORDER BY rowid DESC LIMIT 1")
    assert table_differences(path, fresh) == said(1, 1)


def test_rows_repeated_alike_in_both_copies_are_equal(views: tuple[Path, Path]) -> None:
    """The union's distinct rows are fewer than each copy's, yet the copies are the same."""
    path, fresh = views
    for copy in views:
        tamper(copy, "UPDATE {table} SET seq = NULL WHERE seq = 0 AND notification_id = {last}",
               "INSERT INTO {table} SELECT * FROM {table} WHERE seq IS NULL")
    assert table_differences(path, fresh) == []
