"""Issue 15: `rin verify` reads the log once (ledger/infrastructure/audit.py `Audit.run`,
projections/verify_pass.py). Each page of notifications is checked (chains, heads, command
rows), each event decoded once, and the decoded event feeds the snapshot check (its aggregate
mutated forward, compared at each snapshot's version, ledger/infrastructure/snapshot_check.py)
and the rebuild with the invariants beside it. Pages of 7 notifications, so pages are crossed;
at most one aggregate held replayed, so the others are restored from their last snapshot found
equal to the replay."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from red_team.attacker import build, files
from store_access import app_of

from ledger.application.ledger import Ledger
from ledger.domain.party import Party
from ledger.infrastructure import audit, snapshot_check
from ledger.infrastructure.command_records import CommandRecord
from projections import Views, verify_pass

SNAPSHOTS = {"2001": (5, 50, 120), "3001": (5, 60, 100, 150)}


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The red team's market, parties 2001 and 3001 snapshotted at SNAPSHOTS too (interleaved
    in the log), read 7 notifications a page, one aggregate held replayed at a time."""
    build(tmp_path)
    with Ledger(tmp_path) as ledger:
        app = app_of(ledger)
        for party, versions in SNAPSHOTS.items():
            for version in versions:
                app.take_snapshot(Party.create_id(party), version=version)
        Views(ledger).project()
    monkeypatch.setattr(audit, "PAGE", 7)
    monkeypatch.setattr(snapshot_check, "LIVE", 1)
    yield tmp_path


def verified(data: Path) -> list[str]:
    with Ledger(data) as ledger:
        return Views(ledger).verify_all()


def verified_restoring(data: Path) -> tuple[list[str], list[tuple[str, int]]]:
    """verify's problems, and each (party, version) the snapshot check restored an aggregate
    at (`SnapshotCheck.replayed`), in order."""
    restored: list[tuple[str, int]] = []
    replayed = snapshot_check.SnapshotCheck.replayed
    party_of = {Party.create_id(party): party for party in SNAPSHOTS}

    def counting(check: Any, oid: Any, version: int) -> Any:
        restored.append((party_of.get(oid, str(oid)), version))
        return replayed(check, oid, version)

    snapshot_check.SnapshotCheck.replayed = counting  # type: ignore[method-assign]
    try:
        return verified(data), restored
    finally:
        snapshot_check.SnapshotCheck.replayed = replayed  # type: ignore[method-assign]


def test_aggregates_dropped_for_room_are_restored_and_still_verify_clean(store: Path) -> None:
    """With one aggregate held, 2001 and 3001 alternate in the log: each is dropped and
    restored from its last snapshot found equal (or replayed from its first event), and
    every snapshot still compares equal."""
    problems, restored = verified_restoring(store)
    assert problems == []
    assert [v for _, v in restored if v > 1], "no aggregate was restored"


def test_an_aggregate_dropped_for_room_is_replayed_only_when_a_snapshot_comes(
        store: Path) -> None:
    """With one aggregate held, 2001 and 3001 take turns in the log. A dropped aggregate's
    events are passed over and it is restored and replayed from the store only at a stored
    snapshot's version (SNAPSHOTS and the ledger's own at 197 and 195), once each: not at
    every event, which replayed up to a snapshot interval's events each time in a store with
    more parties than `LIVE` (22 % of verify's time at 1,000,000 events). Version 1 reads
    nothing: the aggregate is made by its first event."""
    problems, restored = verified_restoring(store)
    assert problems == []
    with files(store) as db:
        snapshots = [(party, row[0]) for party in SNAPSHOTS for row in db.execute(
            "SELECT originator_version FROM stored_snapshots WHERE originator_id = ?",
            (Party.create_id(party).hex,))]
    assert sorted(snapshots) == [("2001", 5), ("2001", 50), ("2001", 120), ("2001", 197),
                                 ("3001", 5), ("3001", 60), ("3001", 100), ("3001", 150),
                                 ("3001", 195)]
    again = [call for call in restored if call[1] > 1]
    assert again and set(again) <= set(snapshots) and len(again) == len(set(again))


def test_each_event_is_decoded_once_for_every_check(store: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The chains, the snapshot check, the rebuild and the invariants: one decoding each
    (before the one pass, a snapshotted party's events were decoded twice)."""
    monkeypatch.setattr(snapshot_check, "LIVE", 256)
    with Ledger(store) as ledger:
        app = app_of(ledger)
        decode = app.mapper.to_domain_event
        decoded: Counter[tuple[Any, int]] = Counter()

        def counted(stored: Any) -> Any:
            if not stored.topic.endswith("Snapshot"):
                decoded[(stored.originator_id, stored.originator_version)] += 1
            return decode(stored)

        app.mapper.to_domain_event = counted  # type: ignore[method-assign]
        assert Views(ledger).verify_all() == []
        events = ledger.position()
    assert len(decoded) == events and max(decoded.values()) == 1


def edit_snapshot(data: Path, party: str, version: int) -> None:
    with files(data) as db:
        raw = db.execute("SELECT state FROM stored_snapshots WHERE originator_id = ? AND "
                         "originator_version = ?", (Party.create_id(party).hex, version)
                         ).fetchone()[0]
        state = orjson.loads(raw)
        state["state"]["roles"] = sorted({*state["state"]["roles"], "producer"})
        db.execute("UPDATE stored_snapshots SET state = ? WHERE originator_id = ? AND "
                   "originator_version = ?",
                   (orjson.dumps(state), Party.create_id(party).hex, version))


def test_a_snapshot_that_differs_is_named_at_its_version_and_the_next_still_checked(
        store: Path) -> None:
    """3001 at 60 edited: named; the replay goes on from the events (not the edited row), so
    100 and 150 are found equal."""
    edit_snapshot(store, "3001", 60)
    problems = verified(store)
    assert problems == ["stored_snapshots row of party 3001 at version 60: differs from the "
                        "replay of its events in roles: edited"]


def test_an_edited_snapshot_is_not_restored_from_after_an_eviction(store: Path) -> None:
    """2001 at 50 edited: with one aggregate held, 2001 is dropped and restored often; it is
    restored from its snapshot at 5 (the last found equal), never from the edited 50, so the
    snapshot at 120 still compares equal and only 50 is named."""
    edit_snapshot(store, "2001", 50)
    assert verified(store) == ["stored_snapshots row of party 2001 at version 50: differs "
                               "from the replay of its events in roles: edited"]


def test_a_tampered_event_is_named_in_the_walk_and_nothing_after_it_is_replayed(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with files(store) as db:
        at, raw = db.execute("SELECT rowid, state FROM stored_events WHERE topic LIKE "
                             "'%TransferredIn' ORDER BY rowid LIMIT 1 OFFSET 100").fetchone()
        db.execute("UPDATE stored_events SET state = ? WHERE rowid = ?",
                   (raw.replace(b'"quantity":10', b'"quantity":11') if b'"quantity":10' in raw
                    else raw.replace(b"10", b"11", 1), at))
    handed: list[int] = []
    page = verify_pass.VerifyPass.page

    def spied(follower: Any, events: list[tuple[int, Any]], last: int) -> None:
        handed.append(last)
        page(follower, events, last)

    monkeypatch.setattr(verify_pass.VerifyPass, "page", spied)
    problems = verified(store)
    assert any(f"(notification {at:,}): chain mismatch" in p for p in problems), problems
    assert not any(p.startswith(("batch ", "view ", "replaying")) for p in problems), problems
    assert handed and max(handed) < at  # pages before it were replayed, none from its own on


def test_the_walk_keeps_no_link_per_command_record_and_a_forged_follower_is_named(
        tmp_path: Path) -> None:
    """In a store of release 2's format each command is an aggregate of one event: the walk
    keeps no link for it (memory would grow by one per command), and a second event forged
    onto one is still named as that command's, by the link read back from the store."""
    build(tmp_path, record_events=True)
    with Ledger(tmp_path) as ledger:
        walk = audit.Audit(app_of(ledger), None, None)
        assert walk.run() == []
        kept = set(walk.links.last)
    with files(tmp_path) as db:
        records = db.execute("SELECT COUNT(*) FROM stored_events WHERE topic = ?",
                             (CommandRecord.Applied.TOPIC,)).fetchone()[0]
        aggregates = db.execute("SELECT COUNT(DISTINCT originator_id) FROM stored_events"
                                ).fetchone()[0]
        assert records > 200 and len(kept) == aggregates - records
        oid, state = db.execute("SELECT originator_id, state FROM stored_events WHERE topic = ? "
                                "ORDER BY rowid LIMIT 1 OFFSET 5",
                                (CommandRecord.Applied.TOPIC,)).fetchone()
        db.execute("INSERT INTO stored_events VALUES (?, 2, ?, ?)",
                   (oid, CommandRecord.Applied.TOPIC, state))
        at = db.execute("SELECT MAX(rowid) FROM stored_events").fetchone()[0]
        client_id = orjson.loads(state)["client_id"]
    with Ledger(tmp_path) as ledger:
        problems = ledger.audit()
    assert (f"command {client_id} version 2 (notification {at:,}): chain mismatch: stored "
            "bytes changed, reordered or inserted") in problems, problems
