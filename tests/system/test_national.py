"""`scripts/national.py` makes, ingests, rebuilds and verifies a market and prints one JSON
object of its figures, consistent with each other and with the market it made (no timing is
asserted: the machine is shared)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import orjson

from ledger.infrastructure.command_records import CommandRecord
from ledger.simulation.market import emts_transactions, national_market

ROOT = Path(__file__).resolve().parents[2]
PHASES = {"make", "ingest", "rebuild", "verify"}


def test_a_trial_run_prints_the_figures_of_every_phase(tmp_path: Path) -> None:
    """At scale 0.005 (2,400 × 0.005 = 12 parties asked; six producers, the fewest, register
    14) for one year: every line applied, the store verified in a child of its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    data = tmp_path / "store"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "national.py"), "--years", "1", "--scale",
         "0.005", "--seed", "4", "--data", str(data)],
        capture_output=True, env=env, check=False, timeout=900)
    assert done.returncode == 0, done.stderr.decode()[-2_000:]
    figures = orjson.loads(done.stdout)
    market = list(national_market(4, years=1, parties=12))
    kinds = Counter(line["type"] for line in market)
    assert figures["lines"] == len(market)
    assert figures["parties"] == kinds["register_party"] == 14
    assert figures["emts_transactions"] == sum(map(emts_transactions, market))
    assert figures["years"] == 1
    assert figures["rejected"] == 0
    assert figures["command_records"] == figures["lines"]  # one per line applied
    assert figures["domain_events"] > figures["lines"]
    with sqlite3.connect(data / "events.sqlite") as db:  # the log's domain events, counted
        stored = db.execute("SELECT COUNT(*) FROM stored_events WHERE topic != ?",
                            (CommandRecord.Applied.TOPIC,)).fetchone()[0]
    assert figures["domain_events"] == stored  # command rows out of the log are not among them
    assert figures["domain_events"] + figures["command_records_in_log"] == figures["events"]
    assert figures["rebuilt_position"] == figures["events"]
    assert figures["verify_exit"] == 0
    assert set(figures["phases"]) == PHASES
    for name, phase in figures["phases"].items():
        assert phase["exit"] == 0, name
        assert phase["peak_mb"] > 0 and phase["cpu_s"] > 0, name
        assert phase["wall_s"] > 0, name
    assert figures["store_bytes"] >= (data / "events.sqlite").stat().st_size
    assert 0 < figures["store_bytes"] < figures["data_bytes"]
    assert figures["views_bytes"] > 0


def test_a_store_that_fails_is_said_in_one_line_not_a_traceback(tmp_path: Path) -> None:
    """The national run's disk filled once mid-ingest and its phase died with a traceback; a
    failing store is now one line naming the phase and the store's failure, exit 3 as `rin`
    exits for a store fault (design.md "Exit codes"), and the run stops there."""
    data = tmp_path / "store"
    data.mkdir()
    (data / "events.sqlite").write_bytes(b"not a database " * 400)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "national.py"), "--phase", "rebuild", "--data",
         str(data)], capture_output=True, env=env, check=False, timeout=120)
    said = done.stderr.decode()
    assert done.returncode == 3, said
    assert said.startswith("national.py: the rebuild phase: the store failed: "), said
    assert "Traceback" not in said
    assert done.stdout == b""
