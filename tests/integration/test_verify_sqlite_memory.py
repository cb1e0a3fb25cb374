"""Issue 15: `rin verify`'s SQLite memory does not grow with the log (projections/sqlite_memory.py,
docs/verify-memory.md "Fifth round: memory"). Every connection verify opens to the views file
or to its scratch files (the rebuild, the dated checks) pins its page cache and keeps its
temporary b-trees on disk before it runs a statement that makes one (a `UNION`, a sort, an
index build): kept in memory, those hold a whole compared table (140 bytes an event measured).
The event store's reads follow its primary keys and make none."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from red_team.attacker import build

from ledger.application.ledger import Ledger
from projections import Views, sqlite_memory
from projections.invariants import table_differences
from projections.runner import open_views

#: statements for which SQLite builds a temporary b-tree (or may): what temp_store governs
TEMPORARY = re.compile(
    r"\b(EXCEPT|UNION|ORDER BY|GROUP BY|DISTINCT|CREATE (UNIQUE )?INDEX)\b", re.I)
BOUNDS = {re.sub(r"\s+", " ", p).lower() for p in ("cache_size = -2000", "temp_store = FILE")}


class Traced:
    """Every SQLite connection the process opens, with the statements it ran, in order."""

    def __init__(self) -> None:
        self.opened: list[tuple[str, list[str]]] = []

    def connect(self, real: Any) -> Any:
        def connect(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
            connection = real(database, *args, **kwargs)
            statements: list[str] = []
            connection.set_trace_callback(statements.append)
            self.opened.append((str(database), statements))
            return connection
        return connect

    def unbounded(self) -> list[str]:
        """Each connection outside the event store that made a temporary b-tree before both
        pragmas were set on it: its file and that statement."""
        found = []
        for database, statements in self.opened:
            if "events.sqlite" in database or database == ":memory:":
                continue
            pinned: set[str] = set()
            for sql in statements:
                said = re.sub(r"\s+", " ", sql.strip()).lower()
                if said.startswith("pragma "):
                    pinned.add(said.removeprefix("pragma "))
                elif TEMPORARY.search(sql) and not pinned >= BOUNDS:
                    found.append(f"{database}: {sql}")
                    break
        return found

    def files(self) -> set[str]:
        return {Path(d.removeprefix("file:").split("?")[0]).name for d, _ in self.opened}


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> Iterator[Traced]:
    tracer = Traced()
    monkeypatch.setattr(sqlite3, "connect", tracer.connect(sqlite3.connect))
    yield tracer


def test_every_connection_verify_opens_keeps_temporary_btrees_on_disk(
    tmp_path: Path, traced: Traced
) -> None:
    build(tmp_path)
    with Ledger(tmp_path) as ledger:
        assert Views(ledger).verify_all() == []
    # verify opened the views file, its rebuild and the dated checks' file, and compared
    assert {"views.sqlite", "dated.sqlite"} <= traced.files()
    everything = [s for _, statements in traced.opened for s in statements]
    assert any(" UNION " in s for s in everything) and any("CREATE INDEX" in s for s in everything)
    assert traced.unbounded() == []


def test_the_check_finds_a_connection_left_unbounded(
    tmp_path: Path, traced: Traced, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check itself: with the pragmas not set, the comparison's UNION is named."""
    build(tmp_path)
    with Ledger(tmp_path) as ledger:
        Views(ledger).project()
    monkeypatch.setattr(sqlite_memory, "bound", lambda connection, *schemas: connection)
    views = tmp_path / "views.sqlite"
    traced.opened.clear()
    assert table_differences(views, views) == []
    found = traced.unbounded()
    assert found and "UNION" in found[0]


def test_the_views_connections_read_back_the_bounds(tmp_path: Path) -> None:
    build(tmp_path)
    with Ledger(tmp_path) as ledger:
        Views(ledger).project()
    recorder = open_views(tmp_path / "views.sqlite")
    try:
        with recorder.datastore.transaction(commit=False) as c:
            c.execute("PRAGMA cache_size")
            cache = c.fetchone()[0]
            c.execute("PRAGMA temp_store")
            store = c.fetchone()[0]
    finally:
        recorder.close()
    assert (cache, store) == (-2000, 1)  # 1: FILE
