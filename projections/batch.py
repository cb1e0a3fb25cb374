"""The rows one batch of events adds to the read models, written in a single transaction."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlite_utils import Database

from projections.schema import Table

Row = tuple[Any, ...]


class Batch:
    """Rows to insert per table, amounts to add per keyed row, and what the finisher must
    recompute: parties whose compliance positions changed, batches found (more) invalid."""

    def __init__(self) -> None:
        self.rows: dict[Table, list[Row]] = defaultdict(list)
        self.counters: dict[Table, dict[Row, list[int]]] = defaultdict(dict)
        self.compliance_parties: set[str] = set()
        self.invalidated: set[str] = set()
        #: batches locked or unlocked (§80.1474(b)(1)): their retirers' positions change too
        self.locks_changed: set[str] = set()

    def add(self, table: Table, row: Row) -> None:
        """Queue one row, its values in the table's column order."""
        self.rows[table].append(row)

    def bump(self, table: Table, key: Row, amounts: Row) -> None:
        """Add `amounts` (the table's non-key columns, in order) to the row with primary key
        `key`, which starts at zero."""
        slots = self.counters[table]
        slot = slots.get(key)
        if slot is None:
            slots[key] = list(amounts)
        else:
            for index, amount in enumerate(amounts):
                slot[index] += amount

    def write(self, db: Database) -> None:
        """Insert every row and add every counter with one prepared statement per table, inside
        the caller's transaction.

        sqlite-utils' `insert_all` inspects every value of every row (it was half of a rebuild's
        time); the views' rows hold only text, integers and None, so they go to SQLite as they are.
        """
        for table, rows in self.rows.items():
            db.conn.executemany(table.insert_sql(), rows)
        for table, slots in self.counters.items():
            db.conn.executemany(
                table.add_sql(), [(*key, *amounts) for key, amounts in slots.items()]
            )
