"""Issue 15: verify's replay keeps in memory only the batches in circulation. A batch wholly
retired and held by no one moves to a scratch table (projections/invariants.py
`ClosedBatches`); conservation held for it then, and an event that changes it later (here a
receipt of its retired serials, forged by hand as no rule allows) brings it back, so the
conservation check still names the batch at the end."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from sqlite_utils import Database

from ledger.domain.commands import validate_command
from ledger.domain.party import Party
from projections.facts import Fact
from projections.invariants import ClosedBatches, Replay

GENERATE = {"type": "generate", "id": "g1", "date": "2024-01-02", "party": "1001",
            "facility": "20001", "batch": "00001", "fuel": "ethanol", "d_code": 6,
            "volume": 1_000}


def replayed(tmp_path: Path, forge_receipt: bool) -> Replay:
    """1001 generates a batch and retires all of it; with `forge_receipt`, 2001 is then
    recorded receiving 100 of those retired serials."""
    producer = Party.register("1001", "Prairie", ["producer"], ["20001"])
    blocks = producer.generate(validate_command(GENERATE))
    producer.trigger_event(
        Party.Retired, effective_date=date(2024, 2, 1), client_id="r1", rins=blocks,
        reason_code=20, reason="spill", compliance_year=None, category=None,
        compliance_level=None, compliance_facility=None)
    facts = [Fact.of(n, "1001", e) for n, e in enumerate(producer.collect_events(), 1)]
    if forge_receipt:
        blender = Party.register("2001", "Gulf", ["blender"], [])
        first = blocks[0]
        forged = type(first)(first.key, first.start, first.start + 99)
        blender.trigger_event(
            Party.TransferredIn, effective_date=date(2024, 3, 1), client_id=None,
            rins=[forged], volume=None, ptd=None, price=None, trade_reason_code=10,
            from_party="1001", postings=None)
        facts += [Fact.of(n, "2001", e) for n, e in enumerate(blender.collect_events(), 100)]
    replay = Replay(ClosedBatches(Database(tmp_path / "scratch.sqlite")))
    for fact in facts:
        replay.run(fact)
    return replay


def test_a_wholly_retired_batch_leaves_memory_and_conservation_still_holds(
        tmp_path: Path) -> None:
    replay = replayed(tmp_path, forge_receipt=False)
    assert replay.generated == {} and replay.retired == {} and replay.held == {}
    rows = list(replay.closed.db.query("SELECT batch FROM closed_batches"))  # type: ignore[union-attr]
    assert len(rows) == 1
    assert replay.problems == [] and replay.conservation() == []


def test_a_receipt_of_a_closed_batch_reopens_it_and_conservation_names_it(
        tmp_path: Path) -> None:
    replay = replayed(tmp_path, forge_receipt=True)
    (batch,) = replay.generated  # back in memory: 1,000 generated, retired, 100 held again
    assert len(replay.generated[batch]) == 1_000 and len(replay.retired[batch]) == 1_000
    problems = replay.conservation()
    assert len(problems) == 1
    assert problems[0].startswith(f"batch {batch}: held + retired is 1,100 gallon-RINs"), problems
    assert list(replay.closed.db.query("SELECT batch FROM closed_batches")) == []  # type: ignore[union-attr]
