"""Ingest speed-ups must not change a stored byte (docs/ingest-floor.md, "Fifth round").

The same lines, with the same event timestamps, must store the same rows in every table (events,
snapshots, command rows, heads) as the reference code did: the digests below were computed by
`f919117` (main before the fifth round) with `python tests/integration/test_stored_bytes.py`
run from that tree (PYTHONPATH=<that tree>), and a change to how the ledger renders, chains,
seals or records an event that alters any byte of any row fails here. Event timestamps are the
one input that is not the lines: they are fixed here, on a clock that also lands on whole
seconds (a timestamp whose microseconds are 0 renders without a fraction)."""

from __future__ import annotations

import hashlib
import sqlite3
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import eventsourcing.domain

from ledger import Ledger
from ledger.simulation.market import generate_market

LINES, SEED = 700, 1
TABLES = ("stored_events", "stored_snapshots", "rin_commands", "rin_heads")
#: by f919117's code (see the module docstring)
REFERENCE = {
    "stored_events": "5cbd9ffed463f22e349173c2d49d45dfb1a3b42cfb5d0256c8f6b50d91664030",
    "stored_snapshots": "4bfffd64f4fcabb2ddc209ca489e31f09fbbb2eb3c1037f829d320739482ebdf",
    "rin_commands": "bf22dadefb7de6428e7f7fb825b1d817359889940ea173204515038cdbe60280",
    "rin_heads": "9f61e9c570c7e359e2654e38da0eae1adb1820f71938a70df4ef7d28faf6ae7c",
}


def clock() -> Iterator[datetime]:
    """Fixed timestamps 0.25 s apart from 2026-01-01 UTC: every fourth on a whole second."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    step = 0
    while True:
        yield start + timedelta(microseconds=250_000 * step)
        step += 1


def table_digests(folder: Path) -> dict[str, str]:
    """SHA-256 of each table's rows, in key order, every column's exact value and type."""
    with sqlite3.connect(folder / "events.sqlite") as db:
        out = {}
        for table in TABLES:
            order = "originator_id, originator_version" if table.startswith("stored") else (
                "notification_id")
            digest = hashlib.sha256()
            for row in db.execute(f"SELECT * FROM {table} ORDER BY {order}"):
                digest.update(repr(row).encode())
            out[table] = digest.hexdigest()
    db.close()
    return out


def build(folder: Path, patch: Any) -> dict[str, str]:
    """A store of the market's lines, each event stamped by `clock`, and its tables' digests."""
    ticks = clock()
    patch(eventsourcing.domain, "datetime_now_with_tzinfo", lambda: next(ticks))
    ledger = Ledger(folder)
    results = list(ledger.apply_many(generate_market(LINES, SEED), batch_size=200))
    ledger.close()
    assert sum(r.status == "applied" for r in results) > LINES // 2
    return table_digests(folder)


def test_the_same_lines_store_the_same_bytes(tmp_path: Path, monkeypatch: Any) -> None:
    digests = build(tmp_path / "d", monkeypatch.setattr)
    assert digests == REFERENCE


def test_a_changed_byte_is_seen(tmp_path: Path, monkeypatch: Any) -> None:
    """The check can fail: one byte of one stored state changed changes its table's digest."""
    digests = build(tmp_path / "d", monkeypatch.setattr)
    with sqlite3.connect(tmp_path / "d" / "events.sqlite") as db:
        db.execute("UPDATE stored_events SET state = CAST(state || ' ' AS BLOB) WHERE rowid = 7")
    db.close()
    changed = table_digests(tmp_path / "d")
    assert changed["stored_events"] != digests["stored_events"]
    assert {t: changed[t] for t in TABLES[1:]} == {t: digests[t] for t in TABLES[1:]}


def test_every_table_has_rows(tmp_path: Path, monkeypatch: Any) -> None:
    """The reference covers each kind of row: snapshots were due, commands and heads stored."""
    build(tmp_path / "d", monkeypatch.setattr)
    with sqlite3.connect(tmp_path / "d" / "events.sqlite") as db:
        counts = {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                  for t in TABLES}
    db.close()
    assert all(counts.values()), counts


if __name__ == "__main__":  # print the digests of the code on sys.path (the reference's)
    import tempfile

    def setattr_(target: Any, name: str, value: Any) -> None:
        setattr(target, name, value)

    with tempfile.TemporaryDirectory() as tmp:
        for table, digest in build(Path(tmp) / "d", setattr_).items():
            print(f'    "{table}": "{digest}",', file=sys.stdout)
