"""Command record ids: derived from the client's command id so that consecutive ids sit
together in the store's primary-key index, and unique per command id."""

from __future__ import annotations

from pathlib import Path
from uuid import uuid5

from ledger import Ledger
from ledger.application.idempotency import COMMAND_NAMESPACE, CommandRecord


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


def test_a_new_store_names_records_by_ordered_ids(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        assert ledger.apply({"type": "register_party", "id": "reg-0001", "party": "1001",
                             "name": "P", "roles": ["blender"]}).status == "applied"
        record = ledger.app.recorder.select_notifications(
            1, 10, topics=[CommandRecord.Applied.TOPIC]
        )[0]
        assert record.originator_id == CommandRecord.create_id("reg-0001")
        assert record.originator_id != uuid5(COMMAND_NAMESPACE, "reg-0001")
    with Ledger(tmp_path) as again:  # a second opening finds the same scheme
        assert again.apply({"type": "register_party", "id": "reg-0001", "party": "1001",
                            "name": "P", "roles": ["blender"]}).status == "duplicate"
