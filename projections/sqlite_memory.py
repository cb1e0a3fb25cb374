"""SQLite's memory on the connections `rin verify` and the views open, bounded whatever the log's
length and whatever SQLite build is installed (docs/verify-memory.md "Fifth round: memory").

- `cache_size`: each file's page cache holds at most 2,000 KiB (SQLite's usual default, pinned
  here so that a build or a setting with a larger one cannot make it grow with the files).
- `temp_store = FILE`: the temporary b-trees of a `UNION` (the views against their rebuild),
  of a sort (`ORDER BY`, `GROUP BY`, `CREATE INDEX` at a rebuild's end) spill to a temporary
  file beyond that cache. Kept in memory (a build compiled with `SQLITE_TEMP_STORE=2` or `3`, or
  `PRAGMA temp_store = MEMORY`) they hold the whole compared table: measured at 35 MB for the
  views of 223,144 events, 140 bytes an event, against 6.2 MB flat on disk.
"""

from __future__ import annotations

import sqlite3

#: KiB (negative: SQLite's unit for a size rather than a page count) of one file's page cache
CACHE_KIB = 2_000
#: the pragmas, on every connection `bound` is given and on the views file's
#: (projections/tracking.py `PRAGMAS`)
PRAGMAS = (f"cache_size = -{CACHE_KIB:d}", "temp_store = FILE")


def bound(connection: sqlite3.Connection, *schemas: str) -> sqlite3.Connection:
    """Set `PRAGMAS` on `connection`, and the page cache of each attached database in
    `schemas` (an attached file has a cache of its own, at SQLite's default size)."""
    for pragma in PRAGMAS:
        connection.execute(f"PRAGMA {pragma}")
    for schema in schemas:
        connection.execute(f'PRAGMA "{schema}".cache_size = -{CACHE_KIB:d}')
    return connection
