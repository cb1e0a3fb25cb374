"""`ViewRecorder`: the read models' SQLite file, kept exactly once by the library's tracking.

Built on `eventsourcing.sqlite.SQLiteTrackingRecorder`, so its datastore, transactions and
tracking table are the library's: a batch's rows and its one tracking record (the batch's last
notification id) commit in one transaction, and a position recorded twice raises
`IntegrityError` and rolls the rows back.

The file is in WAL mode (the library's choice) with `synchronous = NORMAL`: each commit is
atomic, but the WAL is synced at checkpoints rather than at every commit. A crash of the
program loses nothing; a power cut may undo the last batches, rows and tracking record together,
and the next run projects them again. SQLite may sort with a second thread (`threads = 2`):
a rebuild ends by building the large tables' indexes. Its page cache and temporary b-trees
are bounded (projections/sqlite_memory.py): a sort spills to disk, whatever the SQLite build.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from eventsourcing.persistence import IntegrityError, PersistenceError, Tracking
from eventsourcing.sqlite import (
    SQLiteConnectionPool,
    SQLiteCursor,
    SQLiteDatastore,
    SQLiteTrackingRecorder,
)
from sqlite_utils import Database

from ledger.infrastructure.eventsourcing_adapter import ConnectionPragmas, TrackingInTransaction
from ledger.infrastructure.settings import APPLICATION
from ledger.infrastructure.sqlite_files import database_problem, sqlite_path
from ledger.infrastructure.writer_turn import flock_within, open_turn_file
from projections import sqlite_memory
from projections.batch import Batch
from projections.schema import Table, View

LOCK_TIMEOUT = 30  # seconds to wait for another writer of the views file
PRAGMAS = ("synchronous = NORMAL", "threads = 2", *sqlite_memory.PRAGMAS)


def wrap(cursor: SQLiteCursor) -> Database:
    """A sqlite-utils Database on the cursor's connection: inside the open transaction its
    writes use savepoints, never commits."""
    return Database(cursor.sqlite_cursor.connection, recursive_triggers=False,
                    execute_plugins=False)


MIGRATION = "__migration__"  # the library's tracking record of its own table's layout


def complete(c: sqlite3.Cursor, tables: Iterable[Table], sql_views: Iterable[View], layout: int
             ) -> bool:
    """Whether the file is of `layout` (its user_version) and holds every table, index and SQL
    view the code defines, and the library's single-row tracking table with its migration
    record (which the library's `create_table` then leaves as it is)."""
    if c.execute("PRAGMA user_version").fetchone()[0] != layout:
        return False
    expected = {name.lower() for table in tables
                for name in (table.name, *table.index_names())}
    expected |= {view.name.lower() for view in sql_views} | {"tracking"}
    names = {row[0].lower() for row in c.execute("SELECT name FROM sqlite_master")}
    return expected <= names and c.execute(
        "SELECT 1 FROM tracking WHERE application_name = ?", (MIGRATION,)).fetchone() is not None


class NotAViewsFile(PersistenceError):
    """The file named as the views' is not one a writer may project into (`refusal`): a
    rebuild drops every table it finds, an event store's or another program's among them."""


EVENTS_TABLE = "stored_events"


def refusal(path: str | os.PathLike[str]) -> str | None:
    """Why the file at `path` is no views file to open, read or write, or None. Checked before
    any connection of the ledger's is made, on a read-only one of its own: a `file:` URI (SQLite
    opens it though no path check reads it), a device, FIFO or second name in its place or a
    link, FIFO or foreign journal beside it (ledger/infrastructure/sqlite_files.py), the event
    store itself (a link to `events.sqlite`: a rebuild emptied it), or another program's
    database (`foreign`)."""
    if isinstance(path, str) and path.startswith("file:"):  # a Path is a path, whatever its name
        return f"{path}: a views file is named by its path, not a file: URI"
    problem = database_problem(path)
    if problem is not None or not os.path.isfile(path):
        return problem
    try:
        db = sqlite3.connect(f"{Path(path).absolute().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return None  # what cannot be read is said by whoever reads it
    try:
        if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                      (EVENTS_TABLE,)).fetchone() is not None:
            return (f"{path} holds the event store's table {EVENTS_TABLE} (a link to "
                    "events.sqlite?): the views are never written into an event store; remove "
                    "it, or name another views file")
        if foreign(db):
            return (f"{path} is another program's database (tables, and no tracking of the "
                    "ledger's alone), which projecting would empty (a file of another layout "
                    "is emptied first); name another views file")
    except sqlite3.Error:
        return None
    finally:
        db.close()
    return None


def foreign(db: sqlite3.Connection) -> bool:
    """Whether the SQLite file open on `db` holds tables but no tracking of the views' alone:
    nothing named tracking (one edited into a SQL view is still a views file, and the rebuild
    restores it), or a tracking table with another application's position in it (another
    eventsourcing projection's file)."""
    found = {(kind, name.lower()) for kind, name in db.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view')")}
    if not any(kind == "table" for kind, _ in found):
        return False
    if ("table", "tracking") not in found:
        return all(name != "tracking" for _, name in found)
    try:
        names = {row[0] for row in db.execute("SELECT DISTINCT application_name FROM tracking")}
    except sqlite3.Error:  # columns of someone else's
        return True
    return not names <= {MIGRATION, APPLICATION}


def tracked(c: sqlite3.Cursor, application_name: str) -> object:
    """The position the views are tracked at (None before the first batch), read as it is."""
    row = c.execute("SELECT MAX(notification_id) FROM tracking WHERE application_name = ?",
                    (application_name,)).fetchone()
    return row[0] if row else None


@contextmanager
def setting_up(path: str) -> Iterator[None]:
    """The views file's set-up, one process at a time: a `flock` of the file `path` + `-setup`
    (never of the views file itself, whose closing would drop SQLite's own locks). Processes
    opening a fresh views file at once raced: the library's migration record collided
    (IntegrityError) and a transaction that read the layout before another's commit could not
    write (database is locked, with no wait); session 7, test_views_setup.py."""
    if path == ":memory:" or path.startswith("file:"):
        yield
        return
    fd = open_turn_file(f"{path}-setup")
    if fd is None:  # a folder this process cannot write: SQLite's own refusal says so
        yield
        return
    try:
        flock_within(fd, fcntl.LOCK_EX, LOCK_TIMEOUT, path)
        yield
    finally:
        os.close(fd)


class ViewConnections(ConnectionPragmas, SQLiteConnectionPool):
    """The library's SQLite connections to the views file, with the `PRAGMAS` set."""

    PRAGMAS = PRAGMAS


class ViewDatastore(SQLiteDatastore):
    """The library's SQLite datastore, over `ViewConnections`."""

    def __init__(self, path: str) -> None:
        super().__init__(path, lock_timeout=LOCK_TIMEOUT)
        # the library builds its own pool (its public attribute) here, before any connection
        # is made: replace it
        self.pool = ViewConnections(db_name=path, lock_timeout=LOCK_TIMEOUT)


class ViewRecorder(TrackingInTransaction, SQLiteTrackingRecorder):
    """A tracking recorder whose file also holds the read-model tables."""

    def __init__(
        self, path: str | os.PathLike[str], tables: Iterable[Table] = (),
        sql_views: Iterable[View] = (), layout: int = 0,
    ) -> None:
        refused = refusal(path)
        if refused is not None:  # before any connection is made
            raise NotAViewsFile(refused)
        super().__init__(ViewDatastore(sqlite_path(path)))
        self.path = sqlite_path(path)
        self.tables = tuple(tables)
        self.sql_views = tuple(sql_views)
        self.layout = layout
        self.create_table()

    def create_table(self) -> None:
        """The library's tracking table, then the read models' tables in a transaction of
        their own, unless the file already holds every one of them (`in_place`)."""
        with setting_up(self.path):  # one process at a time opens a file first (WAL mode)
            if self.in_place():
                return
            super().create_table()
            with self.datastore.transaction(commit=True) as c:
                self.create_views(c)

    def in_place(self) -> bool:
        """Whether the file already holds everything `create_table` would make (`complete`):
        then opening it reads its schema once, where creating each object "if not exists"
        took most of a small query's time (an as-of position)."""
        if not self.datastore.single_row_tracking:  # the library's other tracking layout
            return False
        with self.datastore.transaction(commit=False) as c:
            return complete(c.sqlite_cursor, self.tables, self.sql_views, self.layout)

    def create_views(self, c: SQLiteCursor) -> None:
        """Create what is missing; a file of another layout (its user_version) is emptied
        first, so that the views are projected again from the start in the current one."""
        c.execute("PRAGMA user_version")
        if c.fetchone()[0] != self.layout:
            self._empty(c)
            c.execute(f"PRAGMA user_version = {self.layout:d}")
        db = wrap(c)
        for table in self.tables:
            table.create(db)
        for view in self.sql_views:
            c.execute(view.create_sql())

    def _empty(self, c: SQLiteCursor) -> None:
        """Drop every read-model table and SQL view, whatever layout made them, and forget
        every position."""
        c.execute(
            "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name != 'tracking' AND name NOT LIKE 'sqlite_%'"
        )
        for kind, name in c.fetchall():
            c.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
        c.execute(
            "DELETE FROM tracking WHERE application_name != ?", (self.table_migration_identifier,)
        )

    def record(
        self, batch: Batch, tracking: Tracking, finish: Callable[[Database], None] | None = None,
        after: int | None = None,
    ) -> None:
        """Write a batch's rows, then what they add to the derived tables, then `finish`, then
        its tracking record, all in one transaction.

        With `after` (the position the batch starts after), the batch is recorded only if the
        views are still tracked there, else `IntegrityError`: another follower recorded first,
        maybe up to a different end, and these rows would count its events again. The write
        lock is taken first, so no other follower can record between that check and the commit.
        """
        with self.datastore.transaction(commit=True) as c:
            self._lock_and_check(c, tracking.application_name, after)
            db = wrap(c)
            reached = self._reached(db)
            batch.write(db)
            for table, rowid in reached.items():
                db.execute(table.derive_sql(), [rowid])
            if finish is not None:
                finish(db)
            self.insert_tracking_in(c, tracking)

    def _lock_and_check(self, c: SQLiteCursor, application_name: str, after: int | None
                        ) -> None:
        """Take the file's write lock (a write as the transaction's first statement waits for
        it, where a read first would fail once another writer commits), then check `after`."""
        c.execute("UPDATE tracking SET notification_id = notification_id "
                  "WHERE application_name = ?", (application_name,))
        if after is None:
            return
        tracked = self._max_tracking_id(application_name, c) or 0
        if tracked != after:
            raise IntegrityError(f"the views moved to notification {tracked:,} from {after:,}")

    def _reached(self, db: Database) -> dict[Table, int]:
        """The last rowid of each existing derived table's source, before a batch is written."""
        return {
            table: db.execute(
                f'SELECT COALESCE(MAX(rowid), 0) FROM "{table.derived_from}"'
            ).fetchone()[0]
            for table in self.tables
            if table.derived_from is not None and db[table.name].exists()
        }

    def clear(self, application_name: str) -> None:
        """Drop every view table, SQL view and trigger, and forget the position: the next run
        starts from 0. The tables and SQL views come back as the code defines them, but for
        derived tables and late indexes, which the next `create_table` (the rebuild's last
        step, or the next opening of the file) creates; so does a tracking table defined
        otherwise than by the library (`_restore_tracking`)."""
        with self.datastore.transaction(commit=True) as c:
            db = wrap(c)
            c.execute("SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger')")
            for kind, name in c.fetchall():  # redefined or foreign: made anew from code
                c.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
            for table in self.tables:
                c.execute(f'DROP TABLE IF EXISTS "{table.name}"')
            for view in self.sql_views:  # a table in a SQL view's place would stay otherwise
                c.execute(f'DROP TABLE IF EXISTS "{view.name}"')
            for table in self.tables:
                if table.derive is None:
                    table.create(db, indexes=not table.index_late)
            for view in self.sql_views:
                c.execute(view.create_sql())
            self._restore_tracking(c)
            c.execute("DELETE FROM tracking WHERE application_name = ?", (application_name,))

    def _restore_tracking(self, c: SQLiteCursor) -> None:
        """Make the tracking table anew, with the library's migration record, if the file's is
        not the library's statement (a column redefined, say NOCASE) or carries an index (a
        partial UNIQUE one refuses the next tracking record): `in_place` would keep it for
        ever, and `rin verify` name it after every rebuild."""
        statements = self.construct_create_table_statements()
        c.execute("SELECT type, sql FROM sqlite_master WHERE tbl_name = 'tracking'")
        found = [tuple(row) for row in c.fetchall()]
        if found == [("table", statements[-1].replace(" IF NOT EXISTS", ""))]:
            return  # the library's table, and no index of anyone's on it
        c.execute("DROP TABLE IF EXISTS tracking")
        for statement in statements:
            c.execute(statement)
        self._insert_tracking(c, Tracking(self.table_migration_identifier, 1))

    def close(self) -> None:
        self.datastore.close()
