"""Checks of the read models' file that a rebuild comparison cannot make: the definition of
every table, index and SQL view (a redefined `lineage` would hide a party from `rin trace`;
two columns' names swapped, a column made REAL or NOCASE, or a table in place of a SQL view
change what reports print while every row compares equal), objects nobody created (a trigger
would rewrite rows as they are projected), the file itself (a UTF-16 file, a FIFO), and the
tracking position (deleted, edited back, or past the store's end). Run before the views are
brought up to date, which would otherwise act on what was changed. `rin project --rebuild`
repairs what they find in a views file it can open.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from functools import cache
from pathlib import Path

from ledger.application.ledger import Ledger
from projections.runner import TABLES, open_views
from projections.tracking import refusal

REPAIR = "(rin project --rebuild restores it)"
#: for a file SQLite cannot open as the ledger's (a rebuild writes into the file it finds)
REPLACE = "(move it aside: rin project then makes the views anew)"
#: SQLite's own statistics and sequence tables (ANALYZE, AUTOINCREMENT), which change no row a
#: query returns; their names, as SQLite makes them (no one else may name an object sqlite_…)
OWN_TABLES = ("sqlite_stat1", "sqlite_stat2", "sqlite_stat3", "sqlite_stat4", "sqlite_sequence")
#: every object SQLite lists, but its own tables: by exact name and type, as a LIKE pattern
#: hid `sqliteXstat_…` (`_` matches any character, and LIKE ignores case) and a trigger renamed
#: `sqlite_stat1` through writable_schema passed as SQLite's own table
SCHEMA = ("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE NOT (type = 'table' "
          f"AND name IN ({', '.join(repr(name) for name in OWN_TABLES)}))")

#: SQLite's largest rowid: once a table holds it, new rows get random lower ones
MAX_ROWID = 2**63 - 1
#: problems `PRAGMA integrity_check` names, at most (it stops there)
DAMAGE = 3
KINDS = {"view": "SQL view"}


@cache
def expected_schema() -> dict[tuple[str, str], tuple[str, str | None]]:
    """Every table, index and SQL view of a views file as the ledger's own set-up stores them,
    (type, name) → (its table, its SQL): made once in a scratch file by the same code."""
    with tempfile.TemporaryDirectory() as folder:
        recorder = open_views(Path(folder) / "views.sqlite")
        try:
            recorder.create_table()
        finally:
            recorder.close()
        scratch = sqlite3.connect(Path(folder) / "views.sqlite")
        try:
            return {(kind, name): (table, sql)
                    for kind, name, table, sql in scratch.execute(SCHEMA)}
        finally:
            scratch.close()


def check_read_side(ledger: Ledger, path: str | os.PathLike[str]) -> list[str]:
    """What is wrong with the views file (the file itself, its integrity, definitions, rowids and
    tracking); [] if nothing (or no file)."""
    path = Path(path)
    if path.is_symlink() and not path.exists():  # every writer would fail to create it
        return [f"{path}: a symbolic link to {os.readlink(path)}, which does not exist (remove "
                "the link: rin project then makes the views anew)"]
    if path.exists() and not path.is_file():  # opening a FIFO would wait for a writer forever
        return [f"{path}: not a regular file {REPLACE}"]
    refused = refusal(path)  # before anything opens it: SQLite writes what a link names
    if refused is not None:
        return [refused]
    if not path.exists():
        return []
    try:
        # the path quoted as a URI: a '%', '?' or '#' in it named another file
        db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
        try:
            encoding = db.execute("PRAGMA encoding").fetchone()[0]
            if encoding != "UTF-8":  # the rebuild's file, attached to it, could not be compared
                return [f"{path}: its text is {encoding}, where the ledger writes UTF-8 {REPLACE}"]
            damage = [row[0] for row in db.execute(f"PRAGMA integrity_check({DAMAGE:d})")]
            if damage != ["ok"]:  # an index that disagrees with its table misleads a report
                return [f"{path}: SQLite's integrity check fails ({'; '.join(damage)}): its "
                        f"b-trees were edited or damaged {REPLACE}"]
            return definitions(db, path) + rowids(db, path) + tracking(db, path, ledger)
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        return [f"{path}: cannot be read ({exc}) {REPLACE}"]


def definitions(db: sqlite3.Connection, path: Path) -> list[str]:
    """Each object the file holds under a name the ledger uses is defined as the ledger defines
    it (columns, their types, collations and order, constraints, `WITHOUT ROWID`, an index's
    columns); an added SQL view, trigger, or index on one of the ledger's tables is named. A
    table nothing reads is harmless; one the ledger defines and the file lacks is made again
    by the next projection (and its rows compared then)."""
    # SQLite's names ignore case: "LINEAGE" is `lineage` to every query
    expected = {(kind, name.lower()): found for (kind, name), found in expected_schema().items()}
    kind_of = {name: kind for kind, name in expected}
    ours = {table.lower() for table, _ in expected.values()}
    problems = []
    for kind, name, table, sql in sorted(db.execute(SCHEMA)):
        wanted = expected.get((kind, name.lower()))
        what = f"{KINDS.get(kind, kind)} {name}"
        if wanted == (table, sql):
            continue
        if wanted is not None:  # a virtual table cannot be indexed: the rebuild's open fails
            hint = REPLACE if (sql or "").upper().startswith("CREATE VIRTUAL") else REPAIR
            problems.append(f"{path}: {what} is not the ledger's definition: redefined {hint}")
        elif name.lower() in kind_of:
            theirs = kind_of[name.lower()]
            problems.append(f"{path}: {name} is a {KINDS.get(kind, kind)} where the ledger's is "
                            f"a {KINDS.get(theirs, theirs)}: replaced {REPAIR}")
        elif kind in ("view", "trigger") or (kind == "index" and table.lower() in ours):
            problems.append(f"{path}: {what} is not one of the ledger's: added {REPAIR}")
    return problems


def rowids(db: sqlite3.Connection, path: Path) -> list[str]:
    """No table a derived table grows from holds SQLite's largest rowid: its next rows would
    then get random lower rowids, which the derivation (rows past the last rowid seen) skips."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    sources = sorted({t.derived_from for t in TABLES if t.derived_from in tables})
    return [f"{path}: {source} holds rowid {MAX_ROWID:,}, SQLite's largest, which no row "
            f"projected gets: edited {REPAIR}" for source in sources if db.execute(
                f'SELECT MAX(rowid) FROM "{source}"').fetchone()[0] == MAX_ROWID]


def tracking(db: sqlite3.Connection, path: Path, ledger: Ledger) -> list[str]:
    """The tracked position exists if anything is projected, is within the store, and no
    projected row lies past it."""
    name = ledger.log.name
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "tracking" not in tables:
        return [f"{path}: the tracking table is missing {REPAIR}"]
    position = db.execute("SELECT MAX(notification_id) FROM tracking WHERE application_name = ?",
                          (name,)).fetchone()[0]
    last = {t.name: db.execute(f'SELECT MAX(notification_id) FROM "{t.name}"').fetchone()[0] or 0
            for t in TABLES if t.name in tables and "notification_id" in t.columns}
    edited = sorted(table for table, value in last.items() if not isinstance(value, int))
    if edited:  # plain SQL can store any value in a column; MAX then returns the odd one
        return [f"{path}: {table} holds notification id {last[table]!r}, not a whole number: "
                f"edited {REPAIR}" for table in edited]
    projected = max(last.values(), default=0)
    end = ledger.position()
    if position is None:
        return [f"{path}: tracking has no row for {name}, yet rows up to notification "
                f"{projected:,} are projected: deleted {REPAIR}"] if projected else []
    if not isinstance(position, int):
        return [f"{path}: tracking says {position!r}, not a whole notification id: edited "
                f"{REPAIR}"]
    problems = []
    if position > end:
        problems.append(f"{path}: tracking is at notification {position:,}, past the store's "
                        f"last ({end:,}): edited, or the store lost its tail {REPAIR}")
    if projected > position:
        problems.append(f"{path}: rows up to notification {projected:,} are projected, but "
                        f"tracking says {position:,}: edited {REPAIR}")
    return problems
