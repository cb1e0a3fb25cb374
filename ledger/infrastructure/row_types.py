"""Stored rows of the wrong SQL type: SQLite keeps whatever plain SQL writes in a column (a text
version, a NULL state, an id that is no UUID), which the event store library cannot read back.
`verify` names such rows first, instead of crashing on them (issue 9, item 1)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.application import Application

from ledger.infrastructure import pending_table
from ledger.infrastructure.command_table import TABLE as COMMANDS_TABLE

#: a stored event's or snapshot's columns as the ledger writes them
STORED_ROW = ("typeof(originator_id) != 'text' OR length(originator_id) != 32 "
              "OR originator_id GLOB '*[^0-9a-f]*' OR typeof(originator_version) != 'integer' "
              "OR typeof(topic) != 'text' OR typeof(state) NOT IN ('blob', 'text')")
#: a head row: a hash, and a key and signature that are text or absent, at no negative id
HEAD_ROW = ("typeof(hash) != 'text' OR typeof(key) NOT IN ('text', 'null') "
            "OR typeof(signature) NOT IN ('text', 'null') "
            # below any notification: the walk reads head rows from id 0 up (`stored_heads`)
            "OR notification_id < 0")
SHOWN = 5  # rows named per table; the rest are counted


def altered_tables(app: Application[UUID], query: Any) -> list[str]:
    """The event store's tables (events, snapshots, head rows) whose schema is not the one the
    ledger's recorders create, or that a view stands in for (SQLite). Without its primary key a
    table can hold two rows at one version or notification, which `verify` and the ledger then
    read in opposite orders (an index walked forward by an ascending read, backward by the
    ledger's descending one): `verify` compared the genuine snapshot, the ledger loaded the
    forged one. A view's rows are whatever its query computes. The command table's schema is
    named by `command_table.schema_problem`, which also names any trigger."""
    statements = [*app.recorder.create_table_statements,  # type: ignore[attr-defined]
                  pending_table.CREATE_SQLITE]  # made by the ledger, not by the library
    if app.snapshots is not None:
        statements += app.snapshots.recorder.create_table_statements  # type: ignore[attr-defined]
    problems: list[str] = []
    for statement in statements:
        expected = statement.replace(" IF NOT EXISTS", "")
        table = expected.split()[2]
        found = query(app, "SELECT type, sql FROM sqlite_master WHERE name = ? AND type IN "
                      "('table', 'view')", (table,))
        if not found:  # a table a store of an earlier release did not have (head rows)
            continue
        kind, sql = found[0]
        if kind != "table":
            problems.append(f"{table}: a view, not the ledger's table (its rows are whatever "
                            "its query computes): replaced; nothing else can be checked until "
                            "the table is restored")
        elif sql != expected and table != COMMANDS_TABLE:
            problems.append(f"{table}: its schema is not the ledger's ({sql!r}, not "
                            f"{expected!r}): altered (without its primary key two rows can "
                            "stand at one place, one read by verify, another by the ledger); "
                            "nothing else can be checked until the table is restored")
    return problems


def malformed_rows(app: Application[UUID], heads: str, query: Any) -> list[str]:
    """Each SQLite table's rows whose columns are not of the types the ledger writes (none on
    PostgreSQL, whose columns are typed), after `altered_tables`, which comes first: a view
    has no rowid to locate its rows by."""
    if "SQLITE_DBNAME" not in app.env:
        return []
    altered = altered_tables(app, query)
    if altered:
        return altered
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
