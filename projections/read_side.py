"""Checks of the read models' file that a rebuild comparison cannot make: the SQL VIEW
definitions (a redefined `lineage` would hide a party from `rin trace`), objects nobody created
(a trigger would rewrite rows as they are projected), and the tracking position (deleted,
edited back, or past the store's end). Run before the views are brought up to date, which
would otherwise act on what was changed. `rin project --rebuild` repairs what they find.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ledger.application.ledger import Ledger
from projections.runner import SQL_VIEWS, TABLES

REPAIR = "(rin project --rebuild restores it)"


def expected_definitions() -> dict[str, str]:
    """Each SQL view's definition as SQLite stores it, made in a scratch database."""
    scratch = sqlite3.connect(":memory:")
    try:
        for view in SQL_VIEWS:
            scratch.execute(view.create_sql())
        return dict(scratch.execute("SELECT name, sql FROM sqlite_master WHERE type = 'view'"))
    finally:
        scratch.close()


def check_read_side(ledger: Ledger, path: str | os.PathLike[str]) -> list[str]:
    """What is wrong with the views file's definitions and tracking; [] if nothing (or no file)."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return definitions(db, path) + tracking(db, path, ledger)
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        return [f"{path}: cannot be read ({exc}) {REPAIR}"]


def definitions(db: sqlite3.Connection, path: Path) -> list[str]:
    problems = []
    stored = {(kind, name): sql for kind, name, sql in db.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")}
    for name, sql in expected_definitions().items():
        found = stored.get(("view", name))
        if found is not None and found != sql:
            problems.append(f"{path}: SQL view {name} is not the ledger's definition: "
                            f"redefined {REPAIR}")
    for (kind, name), _ in sorted(stored.items()):  # a table no report reads is harmless
        if kind == "trigger" or (kind == "view" and name not in expected_definitions()):
            problems.append(f"{path}: {kind} {name} is not one of the ledger's: added {REPAIR}")
    return problems


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
