"""Issue 15: `rin verify` holds a page of an aggregate, not all of it. The snapshot check takes
a party's events from the audit's walk of the log, read a page at a time
(ledger/infrastructure/audit.py `PAGE`), and reads each snapshot row when its version is
reached (ledger/infrastructure/snapshot_check.py); with a page of 3 rows, a store with
snapshots spread over several pages still verifies clean, and an edited or inserted snapshot
on a later page is still named."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from red_team.attacker import build, files
from store_access import app_of

from ledger.application.ledger import Ledger
from ledger.domain.party import Party
from ledger.infrastructure import audit

VERSIONS = (5, 6, 7, 8, 100)  # with the ledger's own after 100: two pages of 3 snapshots or more


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The red team's market with party 3001 snapshotted at VERSIONS too, read 3 rows a page."""
    build(tmp_path)
    with Ledger(tmp_path) as ledger:
        app = app_of(ledger)
        for version in VERSIONS:
            app.take_snapshot(Party.create_id("3001"), version=version)
    monkeypatch.setattr(audit, "PAGE", 3)
    yield tmp_path


def snapshot_versions(data: Path) -> list[int]:
    with files(data) as db:
        return [v for (v,) in db.execute(
            "SELECT originator_version FROM stored_snapshots WHERE originator_id = ? ORDER BY 1",
            (Party.create_id("3001").hex,))]


def test_snapshots_over_several_pages_verify_clean_reading_a_page_at_a_time(store: Path) -> None:
    versions = snapshot_versions(store)
    assert versions[:5] == list(VERSIONS) and len(versions) > 5 and versions[5] > 100
    largest: list[int] = []
    with Ledger(store) as ledger:
        app = app_of(ledger)
        select = app.recorder.select_events

        def counted(*args: Any, **kwargs: Any) -> Any:
            rows = select(*args, **kwargs)
            largest.append(len(rows))
            return rows

        app.recorder.select_events = counted  # type: ignore[method-assign]
        assert ledger.audit() == []
    # never a whole aggregate (over 100 events) at once; since the fifth round none at all
    # (a seal's chain is the one the walk read, not read back from the store)
    assert max(largest, default=0) <= 3


def test_an_edited_snapshot_on_a_later_page_is_named(store: Path) -> None:
    with files(store) as db:
        raw = db.execute("SELECT state FROM stored_snapshots WHERE originator_id = ? AND "
                         "originator_version = 100", (Party.create_id("3001").hex,)).fetchone()[0]
        state = orjson.loads(raw)
        state["state"]["roles"] = sorted({*state["state"]["roles"], "producer"})
        db.execute("UPDATE stored_snapshots SET state = ? WHERE originator_id = ? AND "
                   "originator_version = 100", (orjson.dumps(state), Party.create_id("3001").hex))
    with Ledger(store) as ledger:
        problems = ledger.audit()
    assert len(problems) == 1, problems
    assert problems[0].startswith("stored_snapshots row of party 3001 at version 100: differs "
                                  "from the replay of its events in roles")


def test_a_snapshot_between_and_past_the_events_is_named_in_version_order(store: Path) -> None:
    with files(store) as db:
        row = db.execute("SELECT * FROM stored_snapshots WHERE originator_id = ? AND "
                         "originator_version = 8", (Party.create_id("3001").hex,)).fetchone()
        for version in (900, 901):
            db.execute("INSERT INTO stored_snapshots VALUES (?, ?, ?, ?)",
                       (row[0], version, row[2], row[3]))
    with Ledger(store) as ledger:
        problems = ledger.audit()
    assert problems == [f"stored_snapshots row of party 3001 at version {v}: the aggregate has "
                        "no event at that version: inserted, or its events deleted"
                        for v in (900, 901)]


def test_an_event_deleted_on_an_early_page_stops_the_replay_and_is_named(store: Path) -> None:
    with files(store) as db:
        db.execute("DELETE FROM stored_events WHERE originator_id = ? AND originator_version = 7",
                   (Party.create_id("3001").hex,))
    with Ledger(store) as ledger:
        problems = ledger.audit()
    assert "party 3001: its events cannot be replayed (OriginatorVersionError: (8, 7))" in (
        problems)

