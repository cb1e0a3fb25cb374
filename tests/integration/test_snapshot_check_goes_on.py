"""Issue 15, fifth round (docs/verify-memory.md): the snapshot check goes on from a snapshot it
found equal to the replay, as the ledger's load would, and checks a snapshot's seal against
the chain the walk just read (ledger/infrastructure/snapshot_check.py). Neither may hide an
edit: a later snapshot is still compared with the events, a changed seal is still named, and
the chain the walk hands over is the one the store holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from red_team.attacker import files
from test_verify_one_pass import edit_snapshot, store, verified

from ledger.domain.party import Party
from ledger.infrastructure import snapshot_check

__all__ = ["store"]  # the fixture, shared with test_verify_one_pass


@pytest.fixture(autouse=True)
def all_held(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every aggregate held replayed: the replay goes on from the snapshots found equal, never
    from an eviction's restore."""
    monkeypatch.setattr(snapshot_check, "LIVE", 256)


def test_the_replay_goes_on_from_each_snapshot_found_equal(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After 3001's snapshot at 5 compares equal, its aggregate is the one that snapshot
    restores (as a load from the store would give), and every later snapshot is equal too."""
    swapped: list[int] = []
    reached = snapshot_check.SnapshotCheck.reached

    def spied(check: Any, oid: Any, aggregate: Any, version: int) -> None:
        reached(check, oid, aggregate, version)
        held = check.live.get(oid.int)  # None after its last snapshot: dropped
        if oid == Party.create_id("3001") and held is not None and held is not aggregate:
            swapped.append(version)

    monkeypatch.setattr(snapshot_check.SnapshotCheck, "reached", spied)
    assert verified(store) == []
    assert {5, 60, 100, 150} <= set(swapped), swapped


def test_a_snapshot_after_one_the_replay_went_on_from_is_still_compared(store: Path) -> None:
    """3001 at 100 edited: 5 and 60 were found equal and gone on from; 100 is still named, and
    150 compares equal (the replay goes on from the events at 100, not the edited row)."""
    edit_snapshot(store, "3001", 100)
    assert verified(store) == ["stored_snapshots row of party 3001 at version 100: differs "
                               "from the replay of its events in roles: edited"]


def test_a_changed_seal_is_named_against_the_chain_the_walk_read(store: Path) -> None:
    """3001's snapshot at 60 sealed to another chain: its state is the replay's, and the seal
    checked against the chain of 3001's event 60 as the walk read it does not hold."""
    oid = Party.create_id("3001").hex
    with files(store) as db:
        raw = db.execute("SELECT state FROM stored_snapshots WHERE originator_id = ? AND "
                         "originator_version = 60", (oid,)).fetchone()[0]
        seal = orjson.loads(raw)["seal"]["chain"]
        db.execute("UPDATE stored_snapshots SET state = ? WHERE originator_id = ? AND "
                   "originator_version = 60", (raw.replace(seal.encode(), b"0" * 64), oid))
    problems = verified(store)
    assert len(problems) == 1 and problems[0].startswith(
        "stored_snapshots row of party 3001 at version 60: its seal does not hold"), problems


def test_the_chain_the_walk_hands_over_is_the_stored_one(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At every snapshot the chain from the walk is the chain the store holds for the event at
    that version (what the seal check read back before)."""
    handed: list[tuple[str | None, str]] = []
    compare = snapshot_check.compare

    def spied(app: Any, aggregate: Any, row: Any, chain: str | None = None) -> Any:
        handed.append((chain, app.mapper.chain_at(row.originator_id, row.originator_version)))
        return compare(app, aggregate, row, chain)

    monkeypatch.setattr(snapshot_check, "compare", spied)
    assert verified(store) == []
    assert len(handed) >= 7 and all(walk == stored for walk, stored in handed), handed
