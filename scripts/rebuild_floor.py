"""The SQL floor of a rebuild: the CPU of writing a views file's own rows with bare executemany.

A rebuild reads and decodes every event (bench.py's `raw_read`), runs the projectors, and writes
their rows. This replays only the last part: every row of a rebuilt views file, grouped by the
1,000-notification batch a rebuild writes it in, inserted with one prepared statement per table
and one transaction per batch into a fresh file of the rebuild's schema (the late indexes built
at the end), with no Python between. What is left of a rebuild's CPU above raw read + this floor
is the projectors' own. docs/rebuild.md has the figures.

Usage: PYTHONPATH=$PWD python scripts/rebuild_floor.py VIEWS_FILE [--batch 1000] [--journal wal]
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
from sqlite_utils import Database

from projections.runner import TABLES
from projections.schema import Table

#: the rebuild's own journal (WAL, `synchronous = NORMAL`, projections/tracking.py), or none
JOURNALS = {"wal": ("journal_mode = WAL", "synchronous = NORMAL"),
            "off": ("journal_mode = OFF", "synchronous = OFF")}


def batches(source: sqlite3.Connection, size: int) -> dict[int, dict[Table, list[Any]]]:
    """Every written table's rows (not the derived tables, which SQL computes, nor the
    compliance positions, which the finisher recomputes) by the batch of `size` notifications
    a rebuild writes them in."""
    out: dict[int, dict[Table, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for table in TABLES:
        if table.derive is not None or table.name == "compliance":
            continue
        names = list(table.columns)
        at = names.index("notification_id") if "notification_id" in names else None
        quoted = ", ".join(f'"{name}"' for name in names)
        for row in source.execute(f'SELECT {quoted} FROM "{table.name}"'):
            out[0 if at is None else (row[at] - 1) // size][table].append(row)
    return out


def floor(views: Path, size: int, journal: str) -> dict[str, Any]:
    """CPU seconds of inserting the rows of `views` (and of its late indexes) into a fresh
    file made with the same statements."""
    source = sqlite3.connect(views)
    late = {table.name for table in TABLES if table.index_late}
    derived = {table.name for table in TABLES if table.derive is not None}
    schema = [sql for sql, name, table in source.execute(
        "SELECT sql, name, tbl_name FROM sqlite_master WHERE sql IS NOT NULL "
        "AND type IN ('table', 'index')")
        if table not in derived and not (name.startswith("idx_") and table in late)]
    grouped = batches(source, size)
    events = source.execute("SELECT MAX(notification_id) FROM tracking "
                            "WHERE application_name != '__migration__'").fetchone()[0]
    source.close()
    rows = sum(len(r) for batch in grouped.values() for r in batch.values())
    with tempfile.TemporaryDirectory() as folder:
        target = sqlite3.connect(Path(folder) / "floor.sqlite", isolation_level=None)
        for pragma in JOURNALS[journal]:
            target.execute(f"PRAGMA {pragma}")
        for sql in schema:
            target.execute(sql)
        started = time.process_time()
        for number in sorted(grouped):
            target.execute("BEGIN")
            for table, table_rows in grouped[number].items():
                target.executemany(table.insert_sql(), table_rows)
            target.execute("COMMIT")
        inserts = time.process_time() - started
        started = time.process_time()
        for table in TABLES:
            if table.index_late:
                table.create_indexes(_database(target))
        indexes = time.process_time() - started
        target.close()
    return {"events": events, "rows": rows, "rows_per_event": round(rows / events, 2),
            "insert_cpu_s": round(inserts, 3),
            "insert_cpu_us_per_row": round(1e6 * inserts / rows, 2),
            "late_index_cpu_s": round(indexes, 3),
            "floor_cpu_us_per_event": round(1e6 * (inserts + indexes) / events, 2),
            "journal": journal, "batch": size}


def _database(connection: sqlite3.Connection) -> Database:
    """A sqlite-utils Database on `connection`, for `Table.create_indexes`."""
    return Database(connection)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("views", type=Path)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--journal", choices=sorted(JOURNALS), default="wal")
    args = parser.parse_args(argv)
    print(orjson.dumps(floor(args.views, args.batch, args.journal)).decode())


if __name__ == "__main__":
    main()
