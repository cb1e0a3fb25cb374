"""Session 7's attacks on the writers' turn (ledger/infrastructure/writer_turn.py): a writer
that holds the turn and stops (SIGSTOP, a debugger, a machine that swaps) made every other
writer wait for it forever, past the store's lock timeout, where a held SQLite lock ends in
exit 3 after the timeout (design.md "Exit codes": "locked past the timeout"). A file system
whose `flock` fails refused every save, though SQLite's own lock works there."""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest
from eventsourcing.persistence import PersistenceError
from store_access import app_of
from test_hostile_input import BASE

from ledger import Ledger
from ledger.application.store_failures import StoreError
from ledger.infrastructure import writer_turn
from ledger.infrastructure.writer_turn import TurnTimeout, WriterTurn, turn_path
from red_team.test_failures import assert_store_failed, one_line, rin, started_store


@contextmanager
def turn_held(data: Path, operation: int = fcntl.LOCK_EX) -> Iterator[None]:
    """The writers' turn on `data`'s store held as a stopped writer holds it."""
    fd = os.open(turn_path(str(data / "events.sqlite")), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, operation)
        yield
    finally:
        os.close(fd)


def party(number: str) -> dict[str, object]:
    return {**BASE["register_party"], "party": number}


def test_a_held_turn_fails_a_save_after_the_lock_timeout_not_never(tmp_path: Path) -> None:
    data = started_store(tmp_path)
    with Ledger(data) as ledger:
        app_of(ledger).recorder.turn.timeout = 0.5
        with turn_held(data), ThreadPoolExecutor(1) as pool:
            saving = pool.submit(ledger.apply, party("4002"))
            failure = saving.exception(timeout=10)  # f919117: still waiting, for ever
        assert isinstance(failure, StoreError), failure
        assert "database is locked: another writer held the writers' turn" in str(failure)
        assert failure.last_committed_line is None
        assert ledger.position() == 1  # nothing of the line was stored
        assert ledger.apply(party("4002")).status == "applied"  # the turn released: it saves


def test_the_cli_exits_3_naming_the_lock_when_a_stopped_writer_holds_the_turn(
    tmp_path: Path,
) -> None:
    """With a 1 s lock timeout (tests/.../test_failures.py's `rin`) the apply ends in seconds;
    on f919117 it waited for the holder for ever (here: subprocess.run's timeout)."""
    data = started_store(tmp_path)
    with turn_held(data):
        began = time.monotonic()
        done = rin("--data", str(data), "apply", str(one_line(tmp_path, "4002")))
        waited = time.monotonic() - began
    assert_store_failed(done, "the store is locked by another process")
    assert "writers' turn" in done.stderr and "last line committed: none" in done.stderr
    assert waited < 60
    with Ledger(data) as ledger:
        assert ledger.position() == 1


def test_the_turn_taken_exclusively_waits_for_shares_only_up_to_the_timeout(
    tmp_path: Path,
) -> None:
    """A losing writer waits for the saves in progress; one that never ends (a stopped writer
    inside its save) fails it as a locked store after the timeout, and leaves no turn held."""
    data = started_store(tmp_path)
    turn = WriterTurn(str(data / "events.sqlite"), timeout=0.3)
    with turn_held(data, fcntl.LOCK_SH), pytest.raises(TurnTimeout), turn.exclusive():
        pytest.fail("took the turn while another writer's save held a share")
    assert isinstance(TurnTimeout("x", 1), PersistenceError)  # a store failure: exit 3
    with turn.exclusive(), turn.saving():  # the share released: the turn is free, and this
        pass  # writer's own save takes no share of it


@pytest.mark.parametrize("code", [errno.ENOLCK, errno.EOPNOTSUPP])
def test_a_file_system_without_flock_still_saves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    """NFS without a lock daemon says ENOLCK, some FUSE file systems EOPNOTSUPP: SQLite's own
    lock still serializes writers, so the line is applied (without the turn's fairness)."""
    data = started_store(tmp_path)

    def no_flock(fd: int, operation: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(writer_turn.fcntl, "flock", no_flock)
    with Ledger(data) as ledger:
        assert ledger.apply(party("4002")).status == "applied"
        with app_of(ledger).recorder.turn.exclusive():  # the turn, lost to it, is no lock
            assert ledger.apply(party("4003")).status == "applied"
        assert ledger.position() == 3


def test_a_flock_failing_otherwise_is_a_store_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = started_store(tmp_path)

    def broken(fd: int, operation: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(writer_turn.fcntl, "flock", broken)
    with Ledger(data) as ledger:
        with pytest.raises(StoreError, match="Input/output error"):
            ledger.apply(party("4002"))
        assert ledger.position() == 1


WRITER = """
import os, sys, subprocess
import orjson
from ledger import Ledger
data, lines = sys.argv[1], [orjson.loads(t) for t in open(sys.argv[2], "rb")]
ledger = Ledger(data)
assert {r.status for r in ledger.apply_many(lines[:3])} == {"applied"}
subprocess.run([sys.executable, "-c", sys.argv[3], data], check=True)  # a reader comes and goes
assert {r.status for r in ledger.apply_many(lines[3:6])} == {"applied"}
print(ledger.position(), flush=True)
os._exit(0)  # the writer dies with the store open (SIGKILL, a power cut): no close, no checkpoint
"""
READER = ("import sqlite3, sys; connection = sqlite3.connect(sys.argv[1] + '/events.sqlite'); "
          "connection.execute('SELECT count(*) FROM stored_events').fetchone(); connection.close()")


def test_a_reader_that_comes_and_goes_costs_no_commit_of_a_writer_that_dies(
        tmp_path: Path) -> None:
    """The turn was taken on the events file itself, and closing it dropped the SHARED lock of
    the writer's WAL connection: a reader process closing its connection then took the store
    for unused, checkpointed and deleted the WAL, and the writer's next commits went into the
    deleted WAL, unseen by others and lost when the writer died (measured on f919117: position
    8 reported, 3 found). Every commit a writer reported is in the store for the next process."""
    data = tmp_path / "store"
    sample = Path(__file__).resolve().parents[2] / "data" / "sample.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).resolve().parents[3]), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", WRITER, str(data), str(sample), READER],
                          capture_output=True, text=True, env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stderr[-2_000:]
    reported = int(done.stdout.split()[-1])
    assert reported == 3 + 5  # 3 registrations; a registration and two generations of 2 events
    with Ledger(data) as next_process:
        assert next_process.position() == reported
