"""A v6 store (tests/data/store_r4) taken on by Party v7: its v6 snapshot still loads, the next
snapshot is v7's (each retired year one string, §80.1427), and both verify against the replay
of the events."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from store_access import app_of
from typer.testing import CliRunner

from ledger import Ledger
from ledger.cli.main import app
from ledger.domain.party import Party

DATA = Path(__file__).resolve().parent.parent / "data" / "store_r4"
RETIRE_ONE = 180  # 3001 is at version 222: one gallon-RIN a command takes it past 400


@pytest.fixture
def store(tmp_path: Path) -> Path:
    shutil.copytree(DATA, tmp_path / "r4")
    return tmp_path / "r4"


def snapshots(store: Path) -> dict[int, Any]:
    """3001's stored snapshots: version → state."""
    with sqlite3.connect(store / "events.sqlite") as db:
        rows = db.execute("SELECT originator_id, originator_version, state "
                          "FROM stored_snapshots").fetchall()
    oid = Party.create_id("3001")
    return {version: orjson.loads(state)["state"] for originator, version, state in rows
            if str(originator).replace("-", "") == oid.hex}


def retirements() -> list[dict[str, Any]]:
    return [{"type": "retire", "id": f"one-{n}", "date": "2025-02-03", "party": "3001",
             "reason": "compliance", "compliance_year": 2024,
             "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 1}}
            for n in range(RETIRE_ONE)]


def test_the_next_snapshot_is_v7s_and_both_verify(store: Path) -> None:
    with Ledger(store) as ledger:
        results = list(ledger.apply_many(iter(retirements()), batch_size=RETIRE_ONE))
        assert {r.status for r in results} == {"applied"}
        assert ledger.audit() == []
    stored = snapshots(store)
    assert sorted(stored) == [200, 402]
    assert stored[200]["class_version"] == 6
    assert isinstance(dict(stored[200]["facts"]["_data_"]["applied"])[2024], list)
    assert stored[402]["class_version"] == 7
    year = dict(stored[402]["facts"]["_data_"]["applied"])[2024]
    assert isinstance(year, str) and year.count(";") == 220 + RETIRE_ONE - 1
    with Ledger(store) as again:
        [snapshot] = app_of(again).snapshots.get(Party.create_id("3001"), desc=True, limit=1)  # type: ignore[union-attr]
        assert snapshot.originator_version == 402  # loaded, not replayed past
        facts = again.party("3001").facts
        assert sum(a.block.gallon_rins for a in facts.applied[2024]) == 220 * 25 + RETIRE_ONE
    verified = CliRunner().invoke(app, ["--data", str(store), "verify"])
    assert verified.exit_code == 0, verified.output


def test_a_v7_snapshot_edited_in_its_year_string_fails_verify(store: Path) -> None:
    """The year's string is the stored fact: one retirement's reason changed is found."""
    with Ledger(store) as ledger:
        list(ledger.apply_many(iter(retirements()), batch_size=RETIRE_ONE))
    with sqlite3.connect(store / "events.sqlite") as db:
        (state,) = db.execute("SELECT state FROM stored_snapshots WHERE originator_version = "
                              "402").fetchone()
        edited = state.replace(b"|compliance|", b"|remedial_invalid|", 1)
        assert edited != state
        db.execute("UPDATE stored_snapshots SET state = ? WHERE originator_version = 402",
                   (edited,))
    verified = CliRunner().invoke(app, ["--data", str(store), "verify"])
    assert verified.exit_code != 0
    assert "version 402" in verified.output
