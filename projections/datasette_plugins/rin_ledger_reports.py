"""A Datasette plugin (loaded by `rin serve` with `--plugins-dir`): the RIN Activity Report
(§80.1451(c)(2)) as a SQL function, `rin_activity(party, year)`, a JSON array of the rows
`rin activity` prints, computed by the same code (projections/activity.py) over the views the
connection reads. The saved query `activity_report` spreads it into columns."""

from __future__ import annotations

import sqlite3

import orjson
from datasette import hookimpl  # type: ignore[import-untyped]
from sqlite_utils import Database

from projections import activity


def activity_json(connection: sqlite3.Connection, party: str, year: object) -> str:
    """The party's activity rows for every quarter of `year`, as JSON (amounts exact: fuel
    volumes as decimal text)."""
    if not str(year).isdigit():
        return "[]"
    rows = activity.activity(Database(connection), str(party), int(str(year)))
    return orjson.dumps(rows, default=str).decode()


@hookimpl  # type: ignore[untyped-decorator]
def prepare_connection(conn: sqlite3.Connection) -> None:
    conn.create_function("rin_activity", 2, lambda party, year: activity_json(conn, party, year))
