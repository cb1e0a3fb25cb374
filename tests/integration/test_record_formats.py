"""Both formats of command records (ledger/infrastructure/command_table.py): stores whose
records are `CommandRecord` events (tests/data/store_r1 by release 1, store_r2 by the code
before issue 11, store_r3 by main c7bdf5a, the last before issue 15) still load, make a re-sent
line a `duplicate`, reverse a command by its id and verify, and keep writing records as events;
a new store writes only rows of `rin_commands`, with the same answers."""

from __future__ import annotations

import importlib.util
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ledger import Ledger
from ledger.cli.main import app

DATA = Path(__file__).resolve().parents[1] / "data"
RECORD = "rin_ledger:CommandRecord.Applied"


def sale(client_id: str, date: str, quantity: int = 10) -> dict[str, Any]:
    return {"type": "transfer", "id": client_id, "date": date, "from": "2001", "to": "3001",
            "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": quantity}}


#: store → a line it applied (make_store_r2.py, make_store_r3.py; store_r1's fx-0000 …)
RESENT = {
    "store_r1": sale("fx-0000", "2024-03-01"),
    "store_r2": sale("r2-0000", "2024-03-01"),
    "store_r3": sale("t2", "2024-01-06", 4_000),
}

#: how the refusal of a changed RESENT line names the line applied (release 1 named no events)
EARLIER = {
    "store_r1": "fx-0000 was applied before, with other content",
    "store_r2": "r2-0000 was applied before as a transfer of 2024-03-01",
    "store_r3": "t2 was applied before as a transfer of 2024-01-06",
}


def counts(data: Path) -> tuple[int, int]:
    """(CommandRecord events, rin_commands rows) in the store."""
    db = sqlite3.connect(data / "events.sqlite")
    try:
        events = db.execute("SELECT COUNT(*) FROM stored_events WHERE topic = ?",
                            (RECORD,)).fetchone()[0]
        rows = db.execute("SELECT COUNT(*) FROM rin_commands").fetchone()[0]
    finally:
        db.close()
    return events, rows


def verify(data: Path) -> int:
    result = CliRunner().invoke(app, ["--data", str(data), "verify"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code


@pytest.mark.parametrize("fixture", sorted(RESENT))
def test_a_store_with_record_events_keeps_them(fixture: str, tmp_path: Path) -> None:
    data = tmp_path / fixture
    shutil.copytree(DATA / fixture, data)
    assert verify(data) == 0
    with Ledger(data) as ledger:
        before, records = ledger.position(), counts(data)[0]
        assert records > 0
        assert ledger.apply(RESENT[fixture]).status == "duplicate"
        changed = {**RESENT[fixture], "date": "2024-03-09"}
        assert ledger.apply(changed).error == ("format: id: already used by a different command: "
                                               f"{EARLIER[fixture]}")
        assert ledger.position() == before
        fresh = sale("fresh-1", "2024-03-09")
        assert ledger.apply(fresh).status == "applied"
        assert ledger.apply(fresh).status == "duplicate"
        # two events of the sale and its record event, in the format the store began with
        assert ledger.position() == before + 3
    assert counts(data) == (records + 1, 0)
    assert verify(data) == 0


def test_a_store_by_main_before_issue_15_reverses_by_id(tmp_path: Path) -> None:
    """store_r3: 3001 retired 4,000 K=2 (r1) and holds 1,000 K=1 (make_store_r3.py); reversing
    r1, found through its record event, holds the 4,000 again (§80.1452(d), unretire)."""
    data = tmp_path / "r3"
    shutil.copytree(DATA / "store_r3", data)
    with Ledger(data) as ledger:
        result = ledger.apply({"type": "reverse", "id": "R1", "date": "2025-02-10",
                               "party": "3001", "command": "r1", "reason": "compliance"})
        assert result.status == "applied", result.error
        held = {(r["k"], r["gallon_rins"]) for r in ledger.holdings("3001")}
    assert held == {(1, 1_000), (2, 4_000)}
    assert counts(data) == (8, 0)
    assert verify(data) == 0


def test_a_new_store_writes_only_rows(tmp_path: Path) -> None:
    """The store_r3 market from scratch: the same answers, 7 rows and no record event."""
    spec = importlib.util.spec_from_file_location("make_store_r3", DATA / "make_store_r3.py")
    assert spec is not None and spec.loader is not None
    made = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(made)
    with Ledger(tmp_path) as ledger:
        assert all(r.status == "applied" for r in ledger.apply_many(made.COMMANDS))
        assert ledger.apply(RESENT["store_r3"]).status == "duplicate"
        result = ledger.apply({"type": "reverse", "id": "R1", "date": "2025-02-10",
                               "party": "3001", "command": "r1", "reason": "compliance"})
        assert result.status == "applied", result.error
        held = {(r["k"], r["gallon_rins"]) for r in ledger.holdings("3001")}
    assert held == {(1, 1_000), (2, 4_000)}
    assert counts(tmp_path) == (0, 8)  # g1, t0, sep1, S1, B1, t2, r1, R1
    assert verify(tmp_path) == 0
