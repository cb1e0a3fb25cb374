"""Old stored events (schema v1, written by the first release) still load, via upcasters."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any
from uuid import uuid5

from ledger import Ledger
from ledger.domain.party import Party
from ledger.infrastructure.command_records import COMMAND_NAMESPACE, CommandRecord

V1_EVENTS = Path(__file__).parents[1] / "data" / "events_v1.json"
SAMPLE = Path(__file__).parents[1] / "data" / "sample.jsonl"  # what release 1 applied to make them


def load_v1_store(folder: Path) -> Ledger:
    """A store whose rows are exactly what release 1 wrote for examples/sample.jsonl."""
    ledger = Ledger(folder)
    db = sqlite3.connect(folder / "events.sqlite")
    with db:
        for row in json.loads(V1_EVENTS.read_text()):
            db.execute(
                "INSERT INTO stored_events VALUES (?,?,?,?)",
                (row["originator_id"], row["originator_version"], row["topic"],
                 row["state"].encode()),
            )
    db.close()
    return ledger


def append_event(folder: Path, party_rows: list[dict[str, Any]], topic: str,
                 state: dict[str, Any]) -> None:
    """Store one hand-made event of an older schema after the last of `party_rows` (one party's
    rows of V1_EVENTS), as that release would have."""
    db = sqlite3.connect(folder / "events.sqlite")
    with db:
        db.execute("INSERT INTO stored_events VALUES (?,?,?,?)", (
            party_rows[0]["originator_id"],
            max(r["originator_version"] for r in party_rows) + 1, topic,
            json.dumps(state).encode()))
    db.close()


def test_v1_transfers_upcast_to_standard_trades(tmp_path: Path) -> None:
    ledger = load_v1_store(tmp_path)
    stored = list(ledger.log.history(Party.create_id("2001")))
    transfers = [e for e in stored if isinstance(e, Party.TransferredIn | Party.TransferredOut)]
    # 2001 bought from 1001 and 1002 and sold twice to 3001 (sample lines 8, 9, 12, 13)
    assert len(transfers) == 4
    assert all(e.trade_reason_code == 10 for e in transfers)  # EMTS 010 standard trade


def test_v1_history_replays_to_the_same_holdings_and_accepts_new_commands(tmp_path: Path) -> None:
    ledger = load_v1_store(tmp_path)
    # 3001 bought 100,000 D6 and 60,000 D4 K=2, retired 60,000 D4 and 90,000 D6
    assert ledger.holdings("3001") == [
        {"party": "3001", "d_code": 6, "vintage": 2024, "k": 2, "gallon_rins": 10_000}
    ]
    result = ledger.apply({
        "type": "transfer", "id": "after-upgrade", "date": "2025-04-01", "from": "3001",
        "to": "2001", "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 4_000},
        "reason": "intra_company",
    })
    assert result.status == "applied", result.error
    latest = list(ledger.log.history(Party.create_id("2001")))[-1]
    assert isinstance(latest, Party.TransferredIn) and latest.trade_reason_code == 120


def test_a_first_release_store_keeps_naming_command_records_by_uuid5(tmp_path: Path) -> None:
    """Release 1 named command records uuid5(command id); a store it began keeps that scheme,
    so a command applied then is still recognised, and new records are found the same way."""
    ledger = load_v1_store(tmp_path)
    first_line = next(
        json.loads(line) for line in SAMPLE.read_text().splitlines() if '"id"' in line
    )
    assert ledger.apply(first_line).status == "duplicate"
    new = {"type": "register_party", "id": "after-upgrade-2", "party": "4001",
           "name": "New Blender", "roles": ["blender"]}
    assert ledger.apply(new).status == "applied"
    records = list(ledger.log.events(topics=[CommandRecord.Applied.TOPIC]))
    assert records[-1].event.originator_id == uuid5(COMMAND_NAMESPACE, "after-upgrade-2")
    assert ledger.apply(new).status == "duplicate"


def test_v1_obligation_reports_upcast_to_no_stated_basis(tmp_path: Path) -> None:
    """ObligationReported v2 added `basis` (§80.1429(b)(9)); a v1 report stated none, so the
    (b)(9) test falls back on the party's registered roles."""
    ledger = load_v1_store(tmp_path)
    stored = list(ledger.log.history(Party.create_id("3001")))
    reports = [e for e in stored if isinstance(e, Party.ObligationReported)]
    # sample line 14: 3001's 2024 RVO from 900,000 + 300,000 gal; RF 12.50 % = 150,000
    assert [(e.year, e.rvo["RF"], e.basis) for e in reports] == [(2024, 150_000, None)]


def test_a_release_1_obligation_report_sent_again_is_still_a_duplicate(tmp_path: Path) -> None:
    """Adding `basis` to report_obligation must not change the digest of a report without it."""
    ledger = load_v1_store(tmp_path)
    line = SAMPLE.read_text().splitlines()[13]  # sample line 14, o-3001-2024
    assert '"report_obligation"' in line
    assert ledger.apply(line).status == "duplicate"
