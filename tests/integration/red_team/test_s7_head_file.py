"""Session 7's attacks on `head.json` (ledger/infrastructure/head_file.py), a 512-byte record
written in place: the writer followed a symbolic link and overwrote the file it named (any
512-byte file the ledger's user may write), a FIFO in its place hung every commit for ever
(after the commit: its result never reported) and hung `verify`, and a link to /dev/zero made
`verify` read for ever, filling the memory. `"notification_id": true` was read as head 1.
Now the writer replaces anything that is not a regular file, by rename, and verify names it
without following or reading it (design.md "Trust contract": verify names every tampering).
And a write to a store whose tail was deleted under its head.json erased the one record of
the loss; now it is refused (ledger/infrastructure/heads.py `BehindHeadFile`)."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest
from test_hostile_input import BASE

from ledger import Ledger
from ledger.infrastructure.head_file import HEAD_FILE, LONGEST, RECORD
from ledger.infrastructure.heads import BehindHeadFile
from red_team.attacker import files, verify
from red_team.test_failures import CLI, ROOT

LINE = {**BASE["register_party"], "party": "4801"}


def verify_within(data: Path, seconds: float = 60) -> subprocess.CompletedProcess[str]:
    """`rin verify` in a subprocess that must end within `seconds` (f919117: never)."""
    return subprocess.run([sys.executable, "-c", CLI, "--data", str(data), "verify"],
                          cwd=ROOT, capture_output=True, text=True, timeout=seconds)


def apply_within(data: Path, seconds: float = 60) -> str:
    """One new line applied by the library, which must return within `seconds`."""
    with Ledger(data) as ledger, ThreadPoolExecutor(1) as pool:
        return pool.submit(ledger.apply, LINE).result(timeout=seconds).status


def test_a_symlinked_head_file_is_named_and_its_target_never_written(
    data: Path, tmp_path: Path
) -> None:
    target = tmp_path / "someone-elses.conf"  # 512 bytes: the size the writer writes in place
    target.write_bytes(b"#" * RECORD)
    real = data / HEAD_FILE
    real.unlink()
    real.symlink_to(target)
    found = verify(data)
    assert found.exit_code == 1 and "head.json is a symbolic link" in found.output, found.output
    assert apply_within(data) == "applied"
    assert target.read_bytes() == b"#" * RECORD  # f919117: the head written over it
    assert not real.is_symlink() and len(real.read_bytes()) == RECORD
    head = orjson.loads(real.read_bytes())
    with Ledger(data) as ledger:
        assert head["notification_id"] == ledger.position()
    assert verify(data).exit_code == 0


def test_a_fifo_in_place_of_the_head_file_hangs_neither_apply_nor_verify(data: Path) -> None:
    real = data / HEAD_FILE
    real.unlink()
    os.mkfifo(real)
    done = verify_within(data)
    assert done.returncode == 1 and "head.json is not a regular file" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert apply_within(data) == "applied"  # f919117: blocked opening the FIFO, after commit
    assert real.is_file() and len(real.read_bytes()) == RECORD
    assert verify_within(data).returncode == 0


def test_a_head_file_linked_to_an_endless_device_is_not_read(data: Path) -> None:
    real = data / HEAD_FILE
    real.unlink()
    real.symlink_to("/dev/zero")
    done = verify_within(data)
    assert done.returncode == 1 and "head.json is a symbolic link" in done.stdout + done.stderr


def test_a_head_file_longer_than_any_head_is_named_unread(data: Path) -> None:
    (data / HEAD_FILE).write_bytes(b" " * (LONGEST + 1))
    found = verify(data)
    assert found.exit_code == 1 and "head.json is longer than a head" in found.output


def test_a_boolean_notification_id_is_not_a_head(data: Path) -> None:
    """JSON `true` is not the integer 1 (design.md: a boolean is never a number)."""
    (data / HEAD_FILE).write_bytes(orjson.dumps({"notification_id": True, "hash": "0" * 64}))
    found = verify(data)
    assert found.exit_code == 1 and "head.json is not a head" in found.output, found.output


def delete_last_transaction(data: Path) -> int:
    """Delete the events of the last committed transaction and its head row, as an attacker
    with SQL would; return the last notification id left."""
    with files(data) as db:
        (last_but_one,) = db.execute("SELECT notification_id FROM rin_heads ORDER BY "
                                     "notification_id DESC LIMIT 1 OFFSET 1").fetchone()
        db.execute("DELETE FROM stored_events WHERE rowid > ?", (last_but_one,))
        db.execute("DELETE FROM rin_heads WHERE notification_id > ?", (last_but_one,))
        db.execute("DELETE FROM rin_commands WHERE notification_id > ?", (last_but_one,))
    return int(last_but_one)


def test_a_write_after_a_deleted_tail_is_refused_while_head_json_names_it(data: Path) -> None:
    """The tail was found by verify only until the next write: that write got the next ids,
    stored a head over the shortened log and overwrote head.json, and verify then passed
    (f919117). Now the write is refused (exit 3) and head.json keeps naming what was lost."""
    kept = (data / HEAD_FILE).read_bytes()
    left = delete_last_transaction(data)
    line = data.parent / "line.jsonl"
    line.write_text(orjson.dumps(LINE).decode() + "\n")
    done = subprocess.run([sys.executable, "-c", CLI, "--data", str(data), "apply", str(line)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done
    assert f"the store's last head is at {left:,}" in done.stderr
    assert "nothing written" in done.stderr and "Traceback" not in done.stderr
    assert (data / HEAD_FILE).read_bytes() == kept
    with Ledger(data) as ledger:
        assert ledger.position() == left
    assert verify(data).exit_code == 1


def test_an_emptied_events_file_under_its_head_json_takes_no_new_history(data: Path) -> None:
    (data / "events.sqlite").write_bytes(b"")
    with Ledger(data) as ledger:
        with pytest.raises(BehindHeadFile, match=r"head\.json names notification 4"):
            ledger.apply(LINE)
        assert ledger.position() == 0
    found = verify(data)
    assert found.exit_code == 1 and "the store was truncated" in found.output


def test_an_older_store_meant_is_written_once_head_json_is_deleted(data: Path) -> None:
    """The way out the message names: deleting head.json accepts the shorter store."""
    left = delete_last_transaction(data)
    (data / HEAD_FILE).unlink()
    assert apply_within(data) == "applied"
    with Ledger(data) as ledger:
        assert ledger.position() > left
