"""The read models on PostgreSQL, so that several processes or machines share one read side:
the same tables (projections/schema.py), kept exactly once by the library's
`PostgresTrackingRecorder` — a batch's rows and its tracking record commit in one transaction,
under a lock on the tracking table, and only if the views are still tracked where the batch
started (as on SQLite, projections/tracking.py).

Chosen by a `postgresql://` URL as the views' location (`Views(ledger, url)`, `RIN_VIEWS`), in
the schema `RIN_VIEWS_SCHEMA` (default `rin_views`). The report queries are the SQLite ones,
run through `PgDatabase`, the few calls of sqlite-utils' `Database` they make (`query`,
`execute`, `conn.executemany`, `db[table]`) on a psycopg cursor: `?` marks become `%s`, and
PostgreSQL's NUMERIC sums of integers come back as ints, as SQLite gives them. A table others
are derived from gets a `rowid` column, SQLite's implicit one. Datasette and `verify`'s checks
of the views file stay on SQLite.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any, cast
from urllib.parse import unquote, urlparse

from eventsourcing.persistence import IntegrityError, Tracking
from eventsourcing.postgres import PostgresDatastore, PostgresTrackingRecorder
from psycopg import Cursor
from psycopg.rows import DictRow
from sqlite_utils import Database

from ledger.infrastructure.eventsourcing_adapter import TrackingInTransaction
from projections.batch import Batch
from projections.schema import Table, View

URL_PREFIXES = ("postgresql://", "postgres://")
SCHEMA_VARIABLE = "RIN_VIEWS_SCHEMA"
SCHEMA = "rin_views"
TRACKING = "notification_tracking"  # the library's default name for the tracking table
TYPES = {int: "BIGINT", str: "TEXT", float: "DOUBLE PRECISION"}


def is_url(location: object) -> bool:
    """Whether a views location names a PostgreSQL database rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(URL_PREFIXES)


def plain(value: Any) -> Any:
    """A value as SQLite returns it: an integral NUMERIC (a SUM of BIGINTs) as an int."""
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    return value


def dialect(sql: str) -> str:
    """SQLite's `?` parameters as psycopg's `%s` (a literal `%` doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


class PgCursorResult:
    """What `Database.execute` returns, as far as the views read it: rows as tuples."""

    def __init__(self, cursor: Cursor[DictRow]) -> None:
        self._cursor = cursor

    def fetchone(self) -> tuple[Any, ...] | None:
        row = self._cursor.fetchone() if self._cursor.description else None
        return None if row is None else tuple(plain(v) for v in row.values())

    def fetchall(self) -> list[tuple[Any, ...]]:
        if not self._cursor.description:
            return []
        return [tuple(plain(v) for v in row.values()) for row in self._cursor.fetchall()]

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.fetchall())


class PgConnection:
    """`Database.conn` as the batch writer uses it: `executemany` of prepared statements."""

    def __init__(self, cursor: Cursor[DictRow]) -> None:
        self._cursor = cursor

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._cursor.executemany(dialect(sql), list(rows))


class PgTable:
    """`Database[name]` as projections/schema.py uses it: exists, create, create_index."""

    def __init__(self, db: PgDatabase, name: str) -> None:
        self.db, self.name = db, name

    def exists(self) -> bool:
        found = self.db.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_name = ?", [self.name]).fetchone()
        return found is not None

    def create(self, columns: dict[str, type], pk: str | Sequence[str]) -> None:
        keys = [pk] if isinstance(pk, str) else list(pk)
        defined = [f'"{name}" {TYPES[kind]}' for name, kind in columns.items()]
        if self.name in self.db.sources:
            defined.append("rowid BIGSERIAL")
        keyed = ", ".join(f'"{key}"' for key in keys)
        self.db.execute(f'CREATE TABLE "{self.name}" ({", ".join(defined)}, PRIMARY KEY ({keyed}))')

    def create_index(self, columns: Sequence[str], index_name: str | None = None,
                     if_not_exists: bool = True) -> None:
        """sqlite-utils' `Table.create_index`: named `index_name` or idx_<table>_<columns>
        (cut to PostgreSQL's 63 bytes)."""
        name = (index_name or f"idx_{self.name}_{'_'.join(columns)}")[:63]
        listed = ", ".join(f'"{column}"' for column in columns)
        exists = "IF NOT EXISTS " if if_not_exists else ""
        self.db.execute(f'CREATE INDEX {exists}"{name}" ON "{self.name}" ({listed})')


class PgDatabase:
    """The part of sqlite-utils' `Database` the views use, on a psycopg cursor in a
    transaction (its search_path the views' schema)."""

    def __init__(self, cursor: Cursor[DictRow], sources: Iterable[str] = ()) -> None:
        self._cursor = cursor
        self.conn = PgConnection(cursor)
        #: the tables others are derived from: they get a `rowid` column
        self.sources = frozenset(sources)

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> PgCursorResult:
        self._cursor.execute(dialect(sql), list(params or []))
        return PgCursorResult(self._cursor)

    def query(self, sql: str, params: Sequence[Any] | None = None) -> Iterator[dict[str, Any]]:
        self._cursor.execute(dialect(sql), list(params or []))
        for row in self._cursor.fetchall():
            yield {key: plain(value) for key, value in row.items()}

    def __getitem__(self, name: str) -> PgTable:
        return PgTable(self, name)

    def close(self) -> None:
        """The cursor's transaction is its owner's to end."""


def datastore(url: str, schema: str | None = None) -> PostgresDatastore:
    """The library's PostgreSQL datastore for a `postgresql://user:password@host:port/db` URL."""
    parts = urlparse(url)
    return PostgresDatastore(
        parts.path.lstrip("/") or "rin", parts.hostname or "localhost", parts.port or 5432,
        unquote(parts.username or "postgres"), unquote(parts.password or ""),
        schema=schema or os.environ.get(SCHEMA_VARIABLE) or SCHEMA, pool_size=2,
        max_overflow=2,
    )


class PgTracking(TrackingInTransaction, PostgresTrackingRecorder):
    """The library's PostgreSQL tracking recorder, its record written in our transaction."""


class PgViewRecorder:
    """The views' tables and tracking in one PostgreSQL schema: `ViewRecorder`'s interface."""

    def __init__(self, url: str, tables: Iterable[Table] = (), sql_views: Iterable[View] = (),
                 layout: int = 0, schema: str | None = None) -> None:
        self.datastore = datastore(url, schema)
        with self.datastore.transaction(commit=True) as curs:  # one process at a time: two
            # `CREATE SCHEMA IF NOT EXISTS` at once race on pg_namespace's unique index
            curs.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.datastore.schema,))
            curs.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.datastore.schema}"')
        self.tracking = PgTracking(self.datastore, tracking_table_name=TRACKING)
        self.tables = tuple(tables)
        self.sql_views = tuple(sql_views)
        self.layout = layout
        self.sources = {t.derived_from for t in self.tables if t.derived_from}
        self.create_table()

    def _db(self, curs: Cursor[DictRow]) -> Database:
        """A `PgDatabase` posing as the `Database` the view modules are typed for, its
        connection reading the views' schema first (the connections are the views' own)."""
        curs.execute(f'SET search_path TO "{self.datastore.schema}"')
        return cast(Database, PgDatabase(curs, self.sources))

    def create_table(self) -> None:
        """The tracking table, then the views' tables and SQL views, under a lock so that
        processes starting together create them once; another layout's tables are dropped.
        The library's `CREATE TABLE IF NOT EXISTS` of the tracking table races between
        processes ("already exists"), so it runs while this transaction holds an advisory
        lock on the schema's name."""
        with self.datastore.transaction(commit=True) as curs:
            curs.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.datastore.schema,))
            self.tracking.create_table()
        with self.datastore.transaction(commit=True) as curs:
            db = self._db(curs)
            curs.execute(f'LOCK TABLE "{TRACKING}" IN EXCLUSIVE MODE')
            curs.execute("CREATE TABLE IF NOT EXISTS views_layout (layout INTEGER)")
            curs.execute("SELECT layout FROM views_layout")
            row = curs.fetchone()
            if row is None or row["layout"] != self.layout:
                self._drop(curs)
                curs.execute(f"DELETE FROM {TRACKING}")
                curs.execute("DELETE FROM views_layout")
                curs.execute("INSERT INTO views_layout VALUES (%s)", (self.layout,))
            for table in self.tables:
                table.create(db)
            for view in self.sql_views:
                curs.execute(view.create_sql().replace(
                    "CREATE VIEW IF NOT EXISTS", "CREATE OR REPLACE VIEW"))

    def _drop(self, curs: Cursor[DictRow]) -> None:
        for view in self.sql_views:
            curs.execute(f'DROP VIEW IF EXISTS "{view.name}"')
        for table in self.tables:
            curs.execute(f'DROP TABLE IF EXISTS "{table.name}" CASCADE')

    def max_tracking_id(self, application_name: str) -> int | None:
        tracked: int | None = self.tracking.max_tracking_id(application_name)
        return tracked

    def record(
        self, batch: Batch, tracking: Tracking, finish: Callable[[Database], None] | None = None,
        after: int | None = None,
    ) -> None:
        """As `ViewRecorder.record`: rows, derived rows, `finish` and the tracking record in one
        transaction, refused (`IntegrityError`) if the views moved from `after` meanwhile."""
        with self.datastore.transaction(commit=True) as curs:
            db = self._db(curs)
            curs.execute(f'LOCK TABLE "{TRACKING}" IN EXCLUSIVE MODE')
            tracked = db.execute(f"SELECT MAX(notification_id) FROM {TRACKING} "
                                 "WHERE application_name = ?", [tracking.application_name])
            position = tracked.fetchone()[0] or 0
            if after is not None and position != after:
                raise IntegrityError(
                    f"the views moved to notification {position:,} from {after:,}")
            reached = {
                table: db.execute(
                    f'SELECT COALESCE(MAX(rowid), 0) FROM "{table.derived_from}"').fetchone()[0]
                for table in self.tables if table.derived_from is not None
            }
            batch.write(db)
            for table, rowid in reached.items():
                db.execute(table.derive_sql(), [rowid])
            if finish is not None:
                finish(db)
            self.tracking.insert_tracking_in(curs, tracking)  # type: ignore[arg-type]

    def clear(self, application_name: str) -> None:
        """Drop the views' tables and forget the position: the next run starts from 0."""
        with self.datastore.transaction(commit=True) as curs:
            db = self._db(curs)
            curs.execute(f'LOCK TABLE "{TRACKING}" IN EXCLUSIVE MODE')
            self._drop(curs)
            curs.execute(f"DELETE FROM {TRACKING} WHERE application_name = %s",
                         (application_name,))
            for table in self.tables:
                table.create(db)
            for view in self.sql_views:
                curs.execute(view.create_sql().replace(
                    "CREATE VIEW IF NOT EXISTS", "CREATE OR REPLACE VIEW"))

    def ask(self, query: Callable[..., Any], *args: Any) -> list[Any]:
        """A report query's rows, read in one transaction."""
        with self.datastore.transaction(commit=False) as curs:
            return list(query(self._db(curs), *args))

    def close(self) -> None:
        self.datastore.close()
