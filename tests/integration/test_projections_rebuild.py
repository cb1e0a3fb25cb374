"""Exactly once: incremental runs, a rebuild and a run killed midway all give the same tables;
`verify` passes on good data and fails on tampered views or corrupt events."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

from projections_helpers import apply_all, sample_commands
from sqlite_utils import Database
from store_access import app_of

from ledger import Ledger
from ledger.domain.party import Party
from projections import Views, project, rebuild, verify
from projections.invariants import dump
from projections.runner import follow, open_views


def many_transfers(count: int) -> list[dict[str, Any]]:
    """A producer, two blenders, and `count` one-RIN sales of separated D6 from 2001 to 2002:
    2 events each."""
    return [
        {"type": "register_party", "party": "1001", "name": "P", "roles": ["producer"],
         "facilities": ["20001"]},
        {"type": "register_party", "party": "2001", "name": "B1", "roles": ["blender"]},
        {"type": "register_party", "party": "2002", "name": "B2", "roles": ["blender"]},
        {"type": "generate", "date": "2024-01-10", "party": "1001", "facility": "20001",
         "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 100000},
        {"type": "transfer", "date": "2024-01-11", "from": "1001", "to": "2001",
         "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 100000}, "volume": 100000},
        {"type": "separate", "date": "2024-01-12", "party": "2001", "reason": "blending",
         "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 100000}, "volume": 100000},
        *({"type": "transfer", "date": "2024-02-01", "from": "2001", "to": "2002",
           "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 1}}
          for _ in range(count)),
    ]


def apply_fast(ledger: Ledger, commands: list[dict[str, Any]]) -> None:
    assert all(r.status == "applied" for r in ledger.apply_many(commands))


def test_rebuild_after_incremental_runs_is_identical(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    commands = sample_commands()
    for chunk in (commands[:6], commands[6:11], commands[11:]):
        apply_all(ledger, chunk)
        project(ledger, batch_size=3)  # several small batches per run
    incremental = dump(tmp_path / "views.sqlite")
    rebuild(ledger)
    assert dump(tmp_path / "views.sqlite") == incremental
    fresh = tmp_path / "fresh.sqlite"
    project(ledger, fresh)
    assert dump(fresh) == incremental
    assert sum(len(rows) for rows in incremental.values()) > 50


def test_project_is_a_no_op_when_up_to_date(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    apply_all(ledger, sample_commands())
    first = project(ledger)
    before = dump(tmp_path / "views.sqlite")
    assert project(ledger) == first
    assert dump(tmp_path / "views.sqlite") == before


def tracked(path: Path) -> int:
    try:
        with sqlite3.connect(path, timeout=5) as conn:
            row = conn.execute(
                "SELECT notification_id FROM tracking WHERE application_name = 'RinLedger'"
            ).fetchone()
    except sqlite3.Error:
        return 0
    return row[0] if row else 0


def test_killed_projection_resumes_without_loss_or_duplicates(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    apply_fast(ledger, many_transfers(1500))
    total = ledger.position()
    assert total > 3000
    views = tmp_path / "views.sqlite"
    env = {**os.environ, "RIN_DATA": str(tmp_path)}
    child = subprocess.Popen(
        [sys.executable, "-c", "from ledger.cli.main import main; main()", "project", "--quiet",
         "--batch-size", "1"], env=env,
    )
    deadline = time.monotonic() + 60
    while tracked(views) < 200 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.wait()
    reached = tracked(views)
    assert 0 < reached < total, "the run was not killed midway"
    assert project(ledger) == total
    fresh = tmp_path / "fresh.sqlite"
    project(ledger, fresh)
    assert dump(views) == dump(fresh)
    # 1,500 one-RIN sales: 2002 holds exactly 1,500 (no sale lost, none counted twice).
    assert Views(ledger).holdings(party="2002") == [
        {"party": "2002", "d_code": 6, "vintage": 2024, "k": 2, "gallon_rins": 1500}]


def test_verify_passes_on_good_data(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    apply_all(ledger, sample_commands())
    assert verify(ledger) == []


def test_verify_fails_when_a_view_is_tampered_with(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    apply_all(ledger, sample_commands())
    project(ledger)
    db = Database(tmp_path / "views.sqlite")
    db.execute("UPDATE holdings_history SET gallon_rins = gallon_rins + 1 WHERE seq = 0 "
               "AND notification_id = (SELECT MIN(notification_id) FROM holdings_history)")
    db.conn.commit()
    db.close()
    problems = verify(ledger)
    assert problems and all("holdings_history" in p for p in problems
                            if not p.startswith("§80.1451(c)(2)"))
    # the holdings no longer add up with the flows: the activity identity breaks too
    assert any(p.startswith("§80.1451(c)(2): party 1001 2024 Q") for p in problems)


def test_verify_fails_on_duplicated_gallon_rins(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    apply_all(ledger, sample_commands())
    # Corrupt data: record, past every check, 1001's D6 serials 1-10 (held by 3001 as K=2)
    # as also assigned (K=1) to 2001.
    block = next(b for b in ledger.party("3001").holdings.blocks())  # a D6 K=2 block
    stray = type(block)(block.key.with_k(1), 1, 10)
    party = ledger.party("2001")
    party.trigger_event(Party.Assigned, effective_date=date(2024, 12, 1), client_id=None,
                        rins=[stray], volume=Decimal(4))
    app_of(ledger).save(party)
    problems = verify(ledger)
    assert any("batch 20241001200010000" in p and "generated" in p for p in problems), problems
    assert any("K=2 to K=1" in p for p in problems), problems
    # The views agree with a rebuild: the corruption is in the events, caught by the replay.
    assert not any("differs from a rebuild" in p for p in problems)


def test_verify_cli_exit_codes(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    apply_all(ledger, sample_commands())
    env = {**os.environ, "RIN_DATA": str(tmp_path)}
    command = [sys.executable, "-c", "from ledger.cli.main import main; main()", "verify"]
    assert subprocess.run(command, env=env, capture_output=True).returncode == 0
    db = Database(tmp_path / "views.sqlite")
    db.execute("DELETE FROM lineage_blocks WHERE seq = 0 AND notification_id = "
               "(SELECT MAX(notification_id) FROM lineage_blocks)")
    db.conn.commit()
    db.close()
    broken = subprocess.run(command, env=env, capture_output=True, text=True)
    assert broken.returncode == 1
    assert "view lineage_blocks differs from a rebuild" in broken.stdout


def names(path: Path, kind: str) -> set[str]:
    """The names of the file's tables or indexes (not SQLite's own)."""
    db = Database(path)
    try:
        return {row["name"] for row in db.query(
            "SELECT name FROM sqlite_master WHERE type = ? AND sql IS NOT NULL", [kind])}
    finally:
        db.close()


def test_an_interrupted_rebuild_is_completed_by_the_next_run(tmp_path: Path) -> None:
    """A rebuild leaves out holdings_monthly and the large tables' indexes until its end; killed
    before it, the next opening of the file adds them from the rows projected so far."""
    ledger = Ledger(tmp_path)
    apply_all(ledger, sample_commands())
    views = tmp_path / "views.sqlite"
    rebuild(ledger)
    tables, indexes = names(views, "table"), names(views, "index")
    recorder = open_views(views)
    recorder.clear(ledger.log.name)
    follow(ledger, recorder, 3, None, 20)  # killed after notification 20
    recorder.close()
    assert tables - names(views, "table") == {"holdings_monthly"}
    assert "idx_journal_recorded" in indexes - names(views, "index")
    project(ledger)
    assert (names(views, "table"), names(views, "index")) == (tables, indexes)
    fresh = tmp_path / "fresh.sqlite"
    rebuild(ledger, fresh)
    assert dump(views) == dump(fresh)


def test_views_of_an_older_layout_are_projected_anew(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    apply_all(ledger, sample_commands())
    views = tmp_path / "views.sqlite"
    project(ledger)
    expected = dump(views)
    db = Database(views)  # what an older release left: another table, layout 0
    db.execute("CREATE TABLE lineage_v0 (notification_id INTEGER)")
    db.execute("DELETE FROM journal")
    db.execute("PRAGMA user_version = 0")
    db.conn.commit()
    db.close()
    assert project(ledger) == ledger.position()
    assert dump(views) == expected
    assert "lineage_v0" not in names(views, "table")
