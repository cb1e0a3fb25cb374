"""Read-model table declarations: name, description, typed and described columns, keys.

One `Table` per read-model table; it creates itself with sqlite-utils and describes itself for
Datasette's metadata, so the schema and its documentation cannot drift apart. A large table's
indexes can wait for the end of a from-scratch rebuild: building an index once from all its rows
is cheaper than growing it row by row, batch after batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlite_utils import Database


@dataclass(frozen=True, eq=False)
class Table:
    """One read-model table: its columns as name → (SQLite type, description).

    Compared and hashed by identity, so a batch can key its rows by the table they go to.
    """

    name: str
    description: str
    columns: dict[str, tuple[type, str]]
    pk: tuple[str, ...]
    indexes: tuple[tuple[str, ...], ...] = field(default=())
    #: a from-scratch rebuild creates `indexes` after its last batch (no query during the
    #: rebuild reads this table)
    index_late: bool = False
    #: for a table computed from the rows of another, declared before it: that table's name,
    #: and the SELECT of the rows its rows with rowid > ? add (summed into existing keys). Each
    #: batch adds what its new rows add; a rebuild drops the table and computes it from all rows
    #: at its end (or, killed before, the next opening of the file does).
    derived_from: str | None = None
    derive: str | None = None

    def create(self, db: Database, *, indexes: bool = True) -> None:
        """Create the table (a derived one computed from its source) and, if `indexes`, its
        indexes, whichever do not exist yet."""
        if not db[self.name].exists():
            db[self.name].create(  # type: ignore[union-attr]
                {name: kind for name, (kind, _) in self.columns.items()},
                pk=self.pk if len(self.pk) > 1 else self.pk[0],
            )
            if self.derive is not None:
                db.execute(self.derive_sql(), [0])
        if indexes:
            self.create_indexes(db)

    def create_indexes(self, db: Database) -> None:
        """Create the table's indexes that do not exist yet."""
        for columns, name in zip(self.indexes, self.index_names(), strict=True):
            db[self.name].create_index(  # type: ignore[union-attr]
                columns, index_name=name, if_not_exists=True)

    def index_names(self) -> list[str]:
        """Each index's name, as sqlite-utils names it by default: idx_<table>_<columns>."""
        return [f"idx_{self.name}_{'_'.join(columns)}" for columns in self.indexes]

    def insert_sql(self) -> str:
        """One prepared INSERT taking a row as a tuple in column order."""
        names = ", ".join(f'"{column}"' for column in self.columns)
        marks = ", ".join("?" for _ in self.columns)
        return f'INSERT INTO "{self.name}" ({names}) VALUES ({marks})'

    def add_sql(self) -> str:
        """One prepared upsert taking (key…, amounts…) in column order: a new key's row is
        inserted, an existing one has the amounts added to its other columns."""
        return f"{self.insert_sql()} {self.on_conflict_add()}"

    def derive_sql(self) -> str:
        """The upsert adding to a derived table what its source's rows with rowid > ? add."""
        return f'INSERT INTO "{self.name}" {self.derive} {self.on_conflict_add()}'

    def on_conflict_add(self) -> str:
        """The upsert clause adding a new row's non-key columns to the existing row's."""
        counters = [column for column in self.columns if column not in self.pk]
        conflict = ", ".join(f'"{column}"' for column in self.pk)
        # the existing row named by its table: PostgreSQL finds a bare name ambiguous
        updates = ", ".join(f'"{c}" = "{self.name}"."{c}" + excluded."{c}"' for c in counters)
        return f"ON CONFLICT ({conflict}) DO UPDATE SET {updates}"

    def order_by(self) -> str:
        """The primary key as an ORDER BY list: a stable order for dumps and comparisons."""
        return ", ".join(f'"{column}"' for column in self.pk)

    def metadata(self) -> dict[str, Any]:
        """Datasette metadata for this table: description and column descriptions."""
        return {
            "description": self.description,
            "columns": {name: text for name, (_, text) in self.columns.items()},
        }


@dataclass(frozen=True)
class View:
    """One SQL view over the tables: name, description, described columns and its SELECT."""

    name: str
    description: str
    columns: dict[str, str]
    select: str

    def create_sql(self) -> str:
        """The statement creating the view if it does not exist yet."""
        return f'CREATE VIEW IF NOT EXISTS "{self.name}" AS {self.select}'

    def metadata(self) -> dict[str, Any]:
        """Datasette metadata for this view: description and column descriptions."""
        return {"description": f"SQL view: {self.description}", "columns": dict(self.columns)}
