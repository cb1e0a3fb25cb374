"""Issue 9, item 6 (attack 11, its stored-state part, and 12): `verify` on a corrupted store.

NaN in a stored state used to hash like `null` (so the chain held) and then crash `verify`;
an integer of 2^76 crashed `verify --head`; a malformed database file ended in a traceback.
Now each is named with where it is (aggregate, version, notification id) and exits 1, or
exits 3 when the store cannot be read at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from ledger.domain.party import Party
from red_team.attacker import build, files, rin, verify


@pytest.fixture
def data(tmp_path: Path) -> Path:
    build(tmp_path)
    return tmp_path


def edit_registration(data: Path, party: str, change: bytes) -> None:
    """Replace the party's registration state's `"party_id":"P"` with `change`."""
    with files(data) as db:
        oid = Party.create_id(party).hex
        (state,) = db.execute("SELECT state FROM stored_events WHERE originator_id = ? AND "
                              "originator_version = 1", (oid,)).fetchone()
        edited = bytes(state).replace(f'"party_id":"{party}"'.encode(), change)
        assert edited != bytes(state)
        db.execute("UPDATE stored_events SET state = ? WHERE originator_id = ? AND "
                   "originator_version = 1", (edited, oid))


def test_a_null_turned_nan_is_named_not_hashed_like_null(data: Path) -> None:
    with files(data) as db:  # the generation's state holds a null; make it NaN
        rowid, state = db.execute("SELECT rowid, state FROM stored_events WHERE topic LIKE "
                                  "'%Generated' LIMIT 1").fetchone()
        assert b":null" in bytes(state)
        db.execute("UPDATE stored_events SET state = ? WHERE rowid = ?",
                   (bytes(state).replace(b":null", b":NaN", 1), rowid))
    out = verify(data)
    assert out.exit_code == 1, out.output
    assert f"(notification {rowid:,}): stored state is not JSON" in out.output
    assert rin(data, "verify", "--head").exit_code == 0


def test_a_huge_integer_is_named_and_head_still_prints(data: Path) -> None:
    edit_registration(data, "2001", f'"party_id":{2**76}'.encode())
    head = rin(data, "verify", "--head")
    assert head.exit_code == 0, head.output
    assert orjson.loads(head.stdout)["notification_id"] > 0
    out = verify(data)
    assert out.exit_code == 1
    assert "version 1 (notification 2): stored state holds a value the ledger never writes" \
        in out.output


def test_non_json_bytes_are_named(data: Path) -> None:
    with files(data) as db:
        db.execute("UPDATE stored_events SET state = ? WHERE rowid = 3", (b"\xff\xfe\x00junk",))
    out = verify(data)
    assert out.exit_code == 1
    assert "version 1 (notification 3): stored state is not JSON" in out.output


def test_a_malformed_database_file_exits_3(data: Path) -> None:
    for suffix in ("-wal", "-shm"):
        (data / f"events.sqlite{suffix}").unlink(missing_ok=True)
    (data / "events.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x13" * 4096)
    out = verify(data)
    assert out.exit_code == 3, out.output
    assert "store failed: the store's file is not a valid database" in out.output
    assert "Traceback" not in out.output


def test_a_forged_state_that_does_not_decode_is_a_problem_not_a_crash(data: Path) -> None:
    """Valid JSON, every chain and head recomputed (no key), but a block the ledger could never
    have written: the replay's failure is reported, exit 1, no traceback."""
    from red_team.rewrite import rewrite_history

    def broke(value: Any) -> bool:
        """Put "bad" first in the data of the value's first stored block, if it holds one."""
        if isinstance(value, dict):
            if value.get("_type_") == "rin" and isinstance(value.get("_data_"), list):
                value["_data_"].insert(0, "bad")
                return True
            return any(broke(item) for item in value.values())
        return isinstance(value, list) and any(broke(item) for item in value)

    def break_block(state: bytes) -> bytes | None:  # either key order (docs/chain-format.md)
        value = orjson.loads(state)
        return orjson.dumps(value) if broke(value) else None

    rewrite_history(data, break_block)
    out = verify(data)
    assert out.exit_code == 1, out.output
    assert isinstance(out.exception, SystemExit)  # not a crash
    assert "replaying the events failed: MapperDeserialisationError" in out.output
    assert "rin_ledger:Party.Generated" in out.output
