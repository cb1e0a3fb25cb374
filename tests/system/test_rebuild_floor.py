"""`scripts/rebuild_floor.py` writes again exactly the rows a rebuild wrote (every table but the
derived ones and the recomputed compliance positions), batch by batch, and prints its CPU per
row and per event (no timing is asserted: the machine is shared)."""

from __future__ import annotations

import itertools
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson

from ledger import Ledger
from ledger.simulation.market import generate_market
from projections import rebuild
from projections.runner import TABLES

ROOT = Path(__file__).resolve().parents[2]


def test_the_floor_writes_every_row_the_rebuild_wrote(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "data")
    for _ in ledger.apply_many(list(itertools.islice(generate_market(300, 1), 300))):
        pass
    views = tmp_path / "views.sqlite"
    position = rebuild(ledger, views)
    ledger.close()
    db = sqlite3.connect(views)
    written = sum(db.execute(f'SELECT COUNT(*) FROM "{table.name}"').fetchone()[0]
                  for table in TABLES if table.derive is None and table.name != "compliance")
    db.close()
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "rebuild_floor.py"), str(views), "--batch", "50"],
        capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False,
        timeout=600)
    assert done.returncode == 0, done.stderr.decode()[-2_000:]
    figures = orjson.loads(done.stdout)
    assert figures["events"] == position > 0
    assert figures["rows"] == written > position  # more than a row an event (journal and more)
    assert figures["rows_per_event"] == round(written / position, 2)
    assert figures["insert_cpu_s"] > 0 and figures["batch"] == 50
