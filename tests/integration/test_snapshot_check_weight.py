"""Issue 15, seventh round (docs/verify-memory.md): the snapshot check holds aggregates replayed
up to a weight (`HELD_BYTES`, each weighed by its last snapshot's bytes and `OVERHEAD`) rather
than a count of 256, which a store of 711 parties overran at a quarter of its events; and it
reads each aggregate's next snapshot versions `AHEAD` at a time, not one query a snapshot.
Neither changes what is checked: every snapshot is still compared, and an edited one named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_verify_one_pass import SNAPSHOTS, edit_snapshot, store, verified, verified_restoring

from ledger.infrastructure import snapshot_check

__all__ = ["store"]  # the fixture, shared with test_verify_one_pass


def test_within_the_weight_no_aggregate_is_replayed_from_the_store_again(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both parties fit `HELD_BYTES`: neither is restored from the store (version 1 makes an
    aggregate from its first event), and every snapshot compares equal."""
    monkeypatch.setattr(snapshot_check, "LIVE", 4_096)
    monkeypatch.setattr(snapshot_check, "HELD_BYTES", 32 << 20)
    problems, restored = verified_restoring(store)
    assert problems == []
    assert [call for call in restored if call[1] > 1] == []


def test_past_the_weight_the_one_unused_longest_is_dropped_and_still_checked(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Room for one aggregate's weight only (the count allowing many): the parties taking
    turns are dropped and restored at their snapshots, as with one held by count, and an
    edited snapshot after a drop is still named."""
    monkeypatch.setattr(snapshot_check, "LIVE", 4_096)
    monkeypatch.setattr(snapshot_check, "HELD_BYTES", snapshot_check.OVERHEAD)
    problems, restored = verified_restoring(store)
    assert problems == []
    again = [call for call in restored if call[1] > 1]
    assert again and len(again) == len(set(again))
    edit_snapshot(store, "3001", 100)
    assert verified(store) == ["stored_snapshots row of party 3001 at version 100: differs "
                               "from the replay of its events in roles: edited"]


def test_snapshot_versions_are_read_ahead_not_one_query_each(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With `AHEAD` = 2, a party's next snapshot versions are read two at a time: the queries
    for them are about half its snapshots (before, one query a snapshot)."""
    monkeypatch.setattr(snapshot_check, "AHEAD", 2)
    asked: list[str] = []
    init = snapshot_check.SnapshotCheck.__init__

    def counting(check: Any, app: Any, query: Any, chains: Any = None) -> None:
        def counted(sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
            asked.append(sql)
            return query(sql, params)  # type: ignore[no-any-return]
        init(check, app, counted, chains)

    monkeypatch.setattr(snapshot_check.SnapshotCheck, "__init__", counting)
    assert verified(store) == []
    versions = sum(len(v) + 1 for v in SNAPSHOTS.values())  # and the ledger's own, one each
    reads = [sql for sql in asked if "originator_version >" in sql]
    assert 0 < len(reads) <= versions // 2 + len(SNAPSHOTS)
