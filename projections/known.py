"""What the ledger has recorded, to tell a report on a name it never saw (a party never
registered, a batch never generated, a year no event is dated in) from one with nothing to
show: the first is a mistake to name, the second an empty report."""

from __future__ import annotations

import os
from pathlib import Path

from sqlite_utils import Database

from projections.journal import JOURNAL
from projections.lineage import BLOCKS
from projections.parties import PARTIES


def unknown(path: str | os.PathLike[str], party: str | None = None, year: int | None = None,
            batch: str | None = None, d_code: int | None = None) -> list[str]:
    """Each of `party` (4-digit id), `year`, `batch` (YYYYCCCCFFFFFBBBBB) and `d_code` the
    read models at `path` have never recorded, said in a sentence."""
    db = Database(Path(path))
    try:
        found = []
        if party is not None and not db.execute(
                f"SELECT 1 FROM {PARTIES.name} WHERE party = ?", [party]).fetchone():
            found.append(f"party {party} is not registered in this ledger (§80.1450)")
        if year is not None and (problem := unknown_year(db, year)):
            found.append(problem)
        if batch is not None and not db.execute(
                f"SELECT 1 FROM {BLOCKS.name} WHERE batch = ? AND event = 'generated'",
                [batch]).fetchone():
            found.append(f"no RIN of batch {batch} was generated in this ledger")
        if d_code is not None and not db.execute(
                f"SELECT 1 FROM {JOURNAL.name} WHERE event = 'generated' AND d_code = ?",
                [d_code]).fetchone():
            found.append(f"no RIN of D code {d_code} was generated in this ledger")
        return found
    finally:
        db.close()


def unknown_year(db: Database, year: int) -> str | None:
    """Why `year` is outside the years the ledger's events are dated in (None if inside)."""
    first, last = db.execute(
        f"SELECT min(substr(effective_date, 1, 4)), max(substr(effective_date, 1, 4)) "
        f"FROM {JOURNAL.name} WHERE effective_date != ''").fetchone()
    if first is None:
        return f"no event in this ledger is dated, so none in {year}"
    if not int(first) <= year <= int(last):
        return f"no event is dated in {year}: this ledger's events are dated {first} to {last}"
    return None
