"""Read-model table declarations: name, description, typed and described columns, keys.

One `Table` per read-model table; it creates itself with sqlite-utils and describes itself for
Datasette's metadata, so the schema and its documentation cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlite_utils import Database


@dataclass(frozen=True)
class Table:
    """One read-model table: its columns as name → (SQLite type, description)."""

    name: str
    description: str
    columns: dict[str, tuple[type, str]]
    pk: tuple[str, ...]
    indexes: tuple[tuple[str, ...], ...] = field(default=())

    def create(self, db: Database) -> None:
        """Create the table and its indexes if they do not exist yet."""
        db[self.name].create(  # type: ignore[union-attr]
            {name: kind for name, (kind, _) in self.columns.items()},
            pk=self.pk if len(self.pk) > 1 else self.pk[0],
            if_not_exists=True,
        )
        for columns in self.indexes:
            db[self.name].create_index(columns, if_not_exists=True)  # type: ignore[union-attr]

    def order_by(self) -> str:
        """The primary key as an ORDER BY list: a stable order for dumps and comparisons."""
        return ", ".join(f'"{column}"' for column in self.pk)

    def metadata(self) -> dict[str, Any]:
        """Datasette metadata for this table: description and column descriptions."""
        return {
            "description": self.description,
            "columns": {name: text for name, (_, text) in self.columns.items()},
        }
