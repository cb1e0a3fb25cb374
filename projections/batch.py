"""The rows one batch of events adds to the read models, written in a single transaction."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlite_utils import Database


class Batch:
    """Rows to insert per table, counters to add per keyed row, parties whose positions changed."""

    def __init__(self) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.counters: dict[str, dict[tuple[tuple[str, Any], ...], dict[str, int]]] = (
            defaultdict(dict)
        )
        self.compliance_parties: set[str] = set()

    def add(self, table: str, row: dict[str, Any]) -> None:
        self.rows[table].append(row)

    def bump(self, table: str, key: dict[str, Any], **amounts: int) -> None:
        """Add `amounts` to the row of `table` with primary key `key` (created at zero)."""
        slot = self.counters[table].setdefault(tuple(key.items()), {})
        for column, amount in amounts.items():
            slot[column] = slot.get(column, 0) + amount

    def write(self, db: Database) -> None:
        """Insert every row and add every counter, inside the caller's transaction."""
        for table, rows in self.rows.items():
            insert_rows(db, table, rows)
        for table, slots in self.counters.items():
            for key, amounts in slots.items():
                columns = [name for name, _ in key] + list(amounts)
                names = ", ".join(f'"{c}"' for c in columns)
                marks = ", ".join("?" for _ in columns)
                conflict = ", ".join(f'"{name}"' for name, _ in key)
                updates = ", ".join(f'"{c}" = "{c}" + excluded."{c}"' for c in amounts)
                db.execute(
                    f'INSERT INTO "{table}" ({names}) VALUES ({marks}) '
                    f"ON CONFLICT ({conflict}) DO UPDATE SET {updates}",
                    [value for _, value in key] + list(amounts.values()),
                )


def insert_rows(db: Database, table: str, rows: list[dict[str, Any]]) -> None:
    """Insert rows with one prepared statement per shape of row.

    sqlite-utils' `insert_all` inspects every value of every row (it was half of a rebuild's
    time); the views' rows hold only text, integers and None, so they go to SQLite as they are.
    """
    shapes: dict[tuple[str, ...], list[tuple[Any, ...]]] = defaultdict(list)
    for row in rows:
        shapes[tuple(row)].append(tuple(row.values()))
    for columns, values in shapes.items():
        names = ", ".join(f'"{column}"' for column in columns)
        marks = ", ".join("?" for _ in columns)
        db.conn.executemany(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', values)
