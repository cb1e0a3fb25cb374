"""`verify`'s replay of serials keeps in memory only the batches touched lately: the others are
parked in its scratch file, whole (generated, retired and K=2 serials, and each holder's), and
come back when an event touches them again; conservation is checked for each at the end as for
those in memory. RINs stay in circulation until retired, so without this the replay grew with
every batch the log ever generated (docs/verify-memory.md "Seventh round")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import orjson
from sqlite_utils import Database

from ledger.domain.ranges import SerialSet


class Parked(NamedTuple):
    """One batch's serials: generated, retired, separated (K=2 ever), and per (holder, K)."""

    generated: SerialSet | None
    retired: SerialSet | None
    separated: SerialSet | None
    held: dict[tuple[str, int], SerialSet]


def dumped(serials: SerialSet | None) -> list[list[int]] | None:
    """Serials as JSON: their intervals (None stays None: the batch has none of that kind)."""
    return None if serials is None else [list(i) for i in serials.intervals]


def loaded(intervals: list[list[int]] | None) -> SerialSet | None:
    """`dumped`'s inverse."""
    return None if intervals is None else SerialSet(tuple((a, b) for a, b in intervals))


class ParkedBatches:
    """The parked batches, in a table of the replay's scratch file."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.execute("CREATE TABLE parked_batches (batch TEXT PRIMARY KEY, serials BLOB)")

    def park(self, batch: str, parked: Parked) -> None:
        held = [[holder, k, dumped(serials)] for (holder, k), serials in parked.held.items()]
        self.db.execute("INSERT OR REPLACE INTO parked_batches VALUES (?, ?)", [batch, orjson.dumps(
            [dumped(parked.generated), dumped(parked.retired), dumped(parked.separated), held])])

    def unpark(self, batch: str) -> Parked | None:
        """The batch's serials, if it was parked (no longer)."""
        row = self.db.execute("SELECT serials FROM parked_batches WHERE batch = ?",
                              [batch]).fetchone()
        if row is None:
            return None
        self.db.execute("DELETE FROM parked_batches WHERE batch = ?", [batch])
        return self.read(row[0])

    @staticmethod
    def read(stored: bytes) -> Parked:
        generated, retired, separated, held = orjson.loads(stored)
        return Parked(loaded(generated), loaded(retired), loaded(separated),
                      {(holder, k): loaded(serials) or SerialSet()
                       for holder, k, serials in held})

    def every(self) -> Iterator[tuple[str, Parked]]:
        """Every parked batch, read as it goes (memory holds one)."""
        for batch, stored in self.db.execute("SELECT batch, serials FROM parked_batches "
                                             "ORDER BY batch"):
            yield batch, self.read(stored)
