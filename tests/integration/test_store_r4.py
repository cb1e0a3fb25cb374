"""tests/data/store_r4, written by main at cf50358 (tests/data/make_store_r4.py): Party v6 with
a snapshot every 200 events, 3001's at version 200 holding 198 blocks it retired for 2024 as
stored records (§80.1427). This code loads that snapshot as it is, replays the 22 retirements
after it without decoding the year's stored blocks, and judges and stores new ones on top."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from store_access import app_of
from typer.testing import CliRunner

from ledger import Ledger
from ledger.cli.main import app
from ledger.domain.party import Party
from ledger.infrastructure import transcodings

DATA = Path(__file__).resolve().parent.parent / "data" / "store_r4"
RETIRED = 220 * 25  # FIFO: serials 1-5,500 of the batch, 25 a retirement; 5,501-6,000 held
IN_SNAPSHOT = 198 * 25


@pytest.fixture
def store(tmp_path: Path) -> Path:
    shutil.copytree(DATA, tmp_path / "r4")
    return tmp_path / "r4"


def replayed_facts(ledger: Ledger, party: str) -> Any:
    whole: Any = None
    for event in ledger.log.history(Party.create_id(party)):
        whole = event.mutate(whole)
    return whole.facts


def test_a_v6_snapshot_is_loaded_and_its_stored_year_stays_undecoded(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: list[str] = []
    real = transcodings.stored_block
    monkeypatch.setattr(transcodings, "stored_block",
                        lambda *record: decoded.append(record[0]) or real(*record))
    with Ledger(store) as ledger:
        oid = Party.create_id("3001")
        [snapshot] = app_of(ledger).snapshots.get(oid, desc=True, limit=1)  # type: ignore[union-attr]
        assert snapshot.originator_version == 200  # the v6 snapshot is current: used
        party = ledger.party("3001")
        assert party.version == 222
        # the blocks of the 22 events replayed were decoded, none of the 198 retirements the
        # snapshot holds (serials 1-4,950)
        assert decoded and all(int(code[22:30]) > IN_SNAPSHOT for code in decoded)
        blocks = party.facts.applied[2024]
        assert [(a.block.start, a.block.end) for a in blocks] == [
            (n * 25 + 1, n * 25 + 25) for n in range(220)]
        assert party.facts == replayed_facts(ledger, "3001")


def test_a_retirement_after_the_v6_snapshot_is_stored_and_verifies(store: Path) -> None:
    with Ledger(store) as ledger:
        result = ledger.apply({"type": "retire", "id": "r-new", "date": "2025-02-02",
                               "party": "3001", "reason": "compliance",
                               "compliance_year": 2024,
                               "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 500}})
        assert result.status == "applied", result.error
        # 223 events: the save crossed an interval, so a snapshot of this code's was stored
        assert ledger.party("3001").version == 223
        assert ledger.audit() == []
    with Ledger(store) as again:
        facts = again.party("3001").facts
        assert sum(a.block.gallon_rins for a in facts.applied[2024]) == RETIRED + 500
        assert facts == replayed_facts(again, "3001")
    verified = CliRunner().invoke(app, ["--data", str(store), "verify"])
    assert verified.exit_code == 0, verified.output
