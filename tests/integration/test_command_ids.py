"""Command record ids: derived from the client's command id so that consecutive ids sit
together in the store's primary-key index, and unique per command id."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from uuid import UUID, uuid5

from store_access import as_release_2

from ledger import Ledger
from ledger.infrastructure.command_records import COMMAND_NAMESPACE, CommandRecord

STORE_R1 = Path(__file__).parents[1] / "data" / "store_r1"


def test_consecutive_command_ids_share_their_first_eight_bytes() -> None:
    first, second = CommandRecord.create_id("tra-183120"), CommandRecord.create_id("tra-183121")
    assert first.bytes[:8] == second.bytes[:8] == b"tra-1831"
    assert first != second
    # ids further apart sort in the order of their first 8 bytes (the index's order)
    assert CommandRecord.create_id("tra-183199").hex < CommandRecord.create_id("tra-183200").hex
    assert CommandRecord.create_id("a").bytes[:8] == b"a\0\0\0\0\0\0\0"


def test_ids_with_the_same_first_eight_bytes_differ() -> None:
    ids = {CommandRecord.create_id(f"batch-2024-{n:06d}") for n in range(10_000)}
    assert len(ids) == 10_000


def test_a_store_of_release_2_names_records_by_ordered_ids(tmp_path: Path) -> None:
    """A store begun before issue 15 keeps its records as events, named by these ids."""
    with Ledger(tmp_path) as ledger:
        as_release_2(ledger)
        assert ledger.apply({"type": "register_party", "id": "reg-0001", "party": "1001",
                             "name": "P", "roles": ["blender"]}).status == "applied"
        record = next(ledger.log.events(topics=[CommandRecord.Applied.TOPIC])).event
        assert record.originator_id == CommandRecord.create_id("reg-0001")
        assert record.originator_id.bytes[:8] == b"reg-0001"
        assert record.originator_id != uuid5(COMMAND_NAMESPACE, "reg-0001")
    with Ledger(tmp_path) as again:  # a second opening finds the same record
        assert again.apply({"type": "register_party", "id": "reg-0001", "party": "1001",
                            "name": "P", "roles": ["blender"]}).status == "duplicate"


def test_release_one_named_every_record_by_the_same_scheme(tmp_path: Path) -> None:
    """The release-1 store of tests/data/store_r1 names every record by these ids (the first
    release's uuid5 stores: tests/test_upcasting.py), and a line it applied, sent again, is
    a duplicate, not applied twice."""
    rows = sqlite3.connect(STORE_R1 / "events.sqlite").execute(
        "SELECT originator_id, json_extract(state, '$.client_id') FROM stored_events "
        "WHERE topic = ?", (CommandRecord.Applied.TOPIC,)).fetchall()
    assert len(rows) > 200
    assert all(UUID(oid) == CommandRecord.create_id(client_id) for oid, client_id in rows)
    shutil.copytree(STORE_R1, tmp_path / "r1")
    with Ledger(tmp_path / "r1") as ledger:
        before = ledger.position()
        resent = {"type": "transfer", "id": "fx-0000", "date": "2024-03-01", "from": "2001",
                  "to": "3001", "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 10}}
        assert ledger.apply(resent).status == "duplicate"
        assert ledger.position() == before
