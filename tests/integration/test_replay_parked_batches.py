"""Issue 15, seventh round: verify's replay holds in memory only the `BATCHES_HELD` batches
touched last (projections/invariants.py, projections/parked_batches.py). RINs stay in
circulation until retired, so the replay grew with every batch the log ever generated. A batch
not touched lately is parked whole in the scratch file; an event touching it brings it back,
and conservation is checked at the end for parked batches as for those in memory."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

from ledger.domain.commands import validate_command
from ledger.domain.party import Party
from projections import invariants
from projections.facts import Fact
from projections.invariants import ClosedBatches, Replay


def generate(producer: Party, batch: str) -> Any:
    return producer.generate(validate_command({
        "type": "generate", "id": f"g{batch}", "date": "2024-01-02", "party": "1001",
        "facility": "20001", "batch": batch, "fuel": "ethanol", "d_code": 6, "volume": 1_000}))


def forged_receipt(blender: Party, block: Any) -> None:
    """2001 recorded receiving 100 serials 1001 still holds, as no rule allows."""
    blender.trigger_event(
        Party.TransferredIn, effective_date=date(2024, 3, 1), client_id=None,
        rins=[type(block)(block.key, block.start, block.start + 99)], volume=None, ptd=None,
        price=None, trade_reason_code=10, from_party="1001", postings=None)


def replay_of(tmp_path: Path, *steps: str) -> tuple[Replay, str]:
    """Replay 1001 generating batch 00001, then each step: "forge" (2001 receives 100 of its
    serials) or "other" (1001 generates batch 00002); and the first batch's identity."""
    producer = Party.register("1001", "Prairie", ["producer"], ["20001"])
    blender = Party.register("2001", "Gulf", ["blender"], [])
    (first,) = generate(producer, "00001")
    replay = Replay(ClosedBatches(Database(tmp_path / "scratch.sqlite")))
    facts = [Fact.of(n, "1001", e) for n, e in enumerate(producer.collect_events(), 1)]
    facts += [Fact.of(n, "2001", e) for n, e in enumerate(blender.collect_events(), 10)]
    for number, step in enumerate(steps, 100):
        if step == "forge":
            forged_receipt(blender, first)
            facts += [Fact.of(number, "2001", e) for e in blender.collect_events()]
        else:
            generate(producer, "00002")
            facts += [Fact.of(number, "1001", e) for e in producer.collect_events()]
    for fact in facts:
        replay.run(fact)
    return replay, str(first.key.batch_id)


def parked(replay: Replay) -> list[str]:
    return [row["batch"] for row in replay.closed.db.query(  # type: ignore[union-attr]
        "SELECT batch FROM parked_batches")]


@pytest.fixture(autouse=True)
def one_held(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(invariants, "BATCHES_HELD", 1)


def test_a_batch_not_touched_lately_leaves_memory_and_conservation_still_holds(
        tmp_path: Path) -> None:
    replay, batch = replay_of(tmp_path, "other")
    assert batch not in replay.generated and parked(replay) == [batch]
    assert not any(slot[1] == batch for slot in replay.held)
    assert replay.problems == [] and replay.conservation() == []


def test_an_event_touching_a_parked_batch_brings_it_back_and_it_is_still_checked(
        tmp_path: Path) -> None:
    """Parked, then 100 of its serials forged into 2001's hands: back in memory whole (1001
    still holds all 1,000), and conservation names it."""
    replay, batch = replay_of(tmp_path, "other", "forge")
    assert len(replay.generated[batch]) == 1_000 and parked(replay) != [batch]
    assert len(replay.held[("1001", batch, 1)]) == 1_000
    (problem,) = [p for p in replay.conservation() if batch in p]
    assert problem.startswith(f"batch {batch}: held + retired is 1,100 gallon-RINs"), problem


def test_a_parked_batch_that_breaks_conservation_is_named_at_the_end(tmp_path: Path) -> None:
    """Forged, then parked: conservation reads it from the scratch file and names it."""
    replay, batch = replay_of(tmp_path, "forge", "other")
    assert parked(replay) == [batch]
    assert [p[:60] for p in replay.conservation()] == [
        f"batch {batch}: held + retired is 1,100 gallon-RINs"[:60]]
