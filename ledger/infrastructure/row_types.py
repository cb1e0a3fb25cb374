"""Stored rows of the wrong SQL type: SQLite keeps whatever plain SQL writes in a column (a text
version, a NULL state, an id that is no UUID), which the event store library cannot read back.
`verify` names such rows first, instead of crashing on them (issue 9, item 1)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.application import Application

#: a stored event's or snapshot's columns as the ledger writes them
STORED_ROW = ("typeof(originator_id) != 'text' OR length(originator_id) != 32 "
              "OR originator_id GLOB '*[^0-9a-f]*' OR typeof(originator_version) != 'integer' "
              "OR typeof(topic) != 'text' OR typeof(state) NOT IN ('blob', 'text')")
#: a head row: a hash, and a key and signature that are text or absent
HEAD_ROW = ("typeof(hash) != 'text' OR typeof(key) NOT IN ('text', 'null') "
            "OR typeof(signature) NOT IN ('text', 'null')")
SHOWN = 5  # rows named per table; the rest are counted


def malformed_rows(app: Application[UUID], heads: str, query: Any) -> list[str]:
    """Each SQLite table's rows whose columns are not of the types the ledger writes (none on
    PostgreSQL, whose columns are typed)."""
    if "SQLITE_DBNAME" not in app.env:
        return []
    events = app.recorder.events_table_name  # type: ignore[attr-defined]
    tables = [(events, "'notification ' || rowid", STORED_ROW)]
    if app.snapshots is not None:  # a WITHOUT ROWID table: located by aggregate and version
        tables.append((app.snapshots.recorder.events_table_name,  # type: ignore[attr-defined]
                       "quote(originator_id) || ' version ' || quote(originator_version)",
                       STORED_ROW))
    tables.append((heads, "'notification ' || notification_id", HEAD_ROW))
    problems: list[str] = []
    for table, where, condition in tables:
        rows = query(app, f"SELECT {where} FROM {table} WHERE {condition}")
        if rows:
            shown = ", ".join(str(row[0])[:60] for row in rows[:SHOWN])
            more = f" and {len(rows) - SHOWN:,} more" if len(rows) > SHOWN else ""
            problems.append(f"{table} rows at {shown}{more}: a column holds a value of a type the "
                            "ledger never writes (edited with plain SQL); nothing else can be "
                            "checked until they are restored")
    return problems
