"""Session 7's attacks on `head.json` (ledger/infrastructure/head_file.py), a 512-byte record
written in place: the writer followed a symbolic link and overwrote the file it named (any
512-byte file the ledger's user may write), a FIFO in its place hung every commit for ever
(after the commit: its result never reported) and hung `verify`, and a link to /dev/zero made
`verify` read for ever, filling the memory. `"notification_id": true` was read as head 1.
Now the writer replaces anything that is not a regular file, by rename, and verify names it
without following or reading it (design.md "Trust contract": verify names every tampering)."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
from test_hostile_input import BASE

from ledger import Ledger
from ledger.infrastructure.head_file import HEAD_FILE, LONGEST, RECORD
from red_team.attacker import verify
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
