"""Issue 14, several machines: the read models in PostgreSQL (projections/pg_views.py), on the
real server (RIN_TEST_POSTGRES_URL; `.ci/postgres.sh` starts one, CI sets it).

- Every report answers from the PostgreSQL views exactly what it answers from SQLite's.
- A batch's rows and its tracking record commit together: a batch started after a position
  the views have moved past is refused whole.
- Two processes projecting into the same PostgreSQL views while a writer stores more count
  every event once: the tables equal a SQLite rebuild from scratch.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from test_projectors_concurrent import (
    market,
    project_while_writing,
    refuses_a_batch_after_a_moved_position,
)

from ledger import Ledger
from projections import Views, rebuild
from projections.invariants import dump
from projections.pg_views import SCHEMA_VARIABLE, PgViewRecorder
from projections.runner import LAYOUT, SQL_VIEWS, TABLES, project

URL = os.environ.get("RIN_TEST_POSTGRES_URL")
pytestmark = pytest.mark.skipif(URL is None, reason="RIN_TEST_POSTGRES_URL is not set")


@pytest.fixture
def schema(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A schema of this test's own for the views (and the child processes it starts)."""
    import psycopg

    name = f"views_{uuid4().hex[:12]}"
    monkeypatch.setenv(SCHEMA_VARIABLE, name)
    yield name
    assert URL is not None
    with psycopg.connect(URL, autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def pg_dump(schema: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every view table's rows in primary-key order, without PostgreSQL's added rowid."""
    assert URL is not None
    recorder = PgViewRecorder(URL, TABLES, SQL_VIEWS, LAYOUT, schema=schema)
    try:
        return {t.name: recorder.ask(lambda db, t=t: [
            tuple(v for k, v in row.items() if k != "rowid")
            for row in db.query(f'SELECT * FROM "{t.name}" ORDER BY {t.order_by()}')])
            for t in TABLES}
    finally:
        recorder.close()


def test_every_report_answers_the_same_from_postgresql(tmp_path: Path, schema: str) -> None:
    assert URL is not None
    with Ledger(tmp_path / "data") as ledger:
        assert {r.status for r in ledger.apply_many(market(1_500))} == {"applied"}
        sqlite, pg = Views(ledger, tmp_path / "views.sqlite"), Views(ledger, URL)
        assert pg.project() == sqlite.project() == ledger.position()
        code = sqlite.holdings(blocks=True)[0]["rin"]
        years = sorted({row["vintage"] for row in sqlite.holdings()})[-3:]
        asks = {
            "holdings": lambda v: v.holdings(),
            "as of": lambda v: [v.holdings(p, date(2024, 6, 30)) for p in ("1001", "1012")],
            "known at": lambda v: v.holdings(None, date(2025, 1, 1), ledger.position() // 2),
            "blocks": lambda v: v.holdings(None, blocks=True),
            "quarterly": lambda v: [v.quarterly(year) for year in years],
            "compliance": lambda v: [v.compliance(year) for year in years],
            "trace": lambda v: v.trace(code),
            "market": lambda v: v.market(),
            "invalid": lambda v: v.invalid(),
            "ptd": lambda v: v.ptd(),
            "trades": lambda v: v.trades(),
            "ervo": lambda v: v.ervo_deadlines(),
        }
        answered = {name: ask(sqlite) for name, ask in asks.items()}
        assert answered["compliance"] and answered["ptd"] and answered["trace"]
        for name, ask in asks.items():
            assert ask(pg) == answered[name], name
        assert pg_dump(schema) == dump(tmp_path / "views.sqlite")
        with pytest.raises(ValueError, match="SQLite views file"):
            pg.verify()


def test_a_batch_after_a_moved_position_is_refused_whole(schema: str) -> None:
    assert URL is not None
    recorder = PgViewRecorder(URL, TABLES, SQL_VIEWS, LAYOUT)
    try:
        refuses_a_batch_after_a_moved_position(recorder)
        generated = recorder.ask(lambda db: [r["generated"] for r in db.query(
            "SELECT generated FROM market_monthly")])
        assert generated == [1]  # the refused batch's +1 rolled back with its tracking
    finally:
        recorder.close()


def test_two_processes_projecting_into_postgresql_count_each_event_once(
    tmp_path: Path, schema: str
) -> None:
    """The followers are processes of their own, as on other machines: each its own Ledger on
    the events, all on the one PostgreSQL read side."""
    assert URL is not None
    with project_while_writing(tmp_path / "data", URL, market(600)) as ledger:
        assert project(ledger, URL) == ledger.position()
        rebuilt = tmp_path / "rebuilt.sqlite"
        rebuild(ledger, rebuilt)
        fresh = dump(rebuilt)
        assert fresh["holdings_history"]
        assert pg_dump(schema) == fresh
