"""Fairness between writer processes on one store: a writer whose save keeps losing to
another's takes the writers' turn, so its next attempt cannot lose.

A save reads its aggregates outside the saving transaction and is refused if another writer
saved them in between (ledger/infrastructure/read_check.py); under a sustained stream of saves
by another process the same writer can lose again and again (session 5: up to ~440 tries).
Every save holds a shared `flock` on the store's turn file (`turn_path`: the events file's
name + `-turn`) while it inserts; the losing writer takes it exclusively before it reads, so no
other save can commit until its own has: what it reads is what its save checks against.
PostgreSQL does the same with an advisory lock (`PostgresTurn`).

The turn is never taken on the events file itself: closing any descriptor of a file drops
every POSIX lock the process holds on it, SQLite's too ("How To Corrupt An SQLite Database
File" §2.2). A turn on the events file dropped the SHARED lock that each of the process's WAL
connections holds, so another process closing its last connection took the store for unused,
checkpointed and deleted the WAL while this one still wrote into it: commits a fresh process
could not see, lost if the writer then died (session 7;
tests/integration/red_team/test_s7_writer_turn.py).

No writer waits for the turn longer than the store's lock timeout (a writer stopped while it
holds the turn must not hang the others forever): past it the save fails as a locked store does
(`TurnTimeout`, exit 3). A file system without `flock` leaves the turn out (`NO_FLOCK`): saves
still go on, arbitrated by SQLite's lock and the version check, only without the fairness.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from typing import Any

from ledger.infrastructure.sqlite_files import open_lock_file
from ledger.infrastructure.store_refusals import LockTimeout, lock_timed_out

#: seconds a writer waits for the turn when the store names no lock timeout (SQLite's default)
DEFAULT_TIMEOUT = 5.0
#: the longest pause between two tries for a turn another writer holds (seconds)
LONGEST_PAUSE = 0.005
#: what `flock` says on a file system that does not lock files (some network and FUSE ones)
NO_FLOCK = frozenset({errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL})
#: what opening the turn file says in a folder this process cannot write: it cannot save there
#: either, and SQLite's own refusal says so better than the turn would
NO_TURN_FILE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})


def turn_path(events_file: str) -> str:
    """The file whose `flock` is the writers' turn of the SQLite store in `events_file`."""
    return f"{events_file}-turn"


class TurnTimeout(LockTimeout):
    """Another writer held the writers' turn past the store's lock timeout: nothing was saved."""

    def __init__(self, where: str, timeout: float) -> None:
        super().__init__(
            f"database is locked: another writer held the writers' turn on {where} for more "
            f"than {timeout:g} s (the lock timeout); nothing of the line was stored"
        )


def flock_within(fd: int, operation: int, timeout: float, where: str) -> bool:
    """Take `flock(fd, operation)`, waiting at most `timeout` seconds (`TurnTimeout` past it);
    False if the file system cannot lock files at all."""
    deadline, pause = None, 0.0001
    while True:
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        except OSError as error:
            if error.errno in NO_FLOCK:
                return False
            raise
        now = time.monotonic()
        deadline = now + timeout if deadline is None else deadline
        if now >= deadline:
            raise TurnTimeout(where, timeout)
        time.sleep(pause)
        pause = min(pause * 2, LONGEST_PAUSE)


def open_turn_file(path: str) -> int | None:
    """A descriptor of the turn file at `path`, made if missing; None in a folder this process
    cannot write (`NO_TURN_FILE`)."""
    try:
        return open_lock_file(path)
    except OSError as error:
        if error.errno in NO_TURN_FILE:
            return None
        raise


class WriterTurn:
    """The writers' turn of the SQLite store at `path` (taken on its `turn_path`); `None`: an
    in-memory store, which one process alone can write, so there is no turn to take."""

    def __init__(self, path: str | None, timeout: float | None = None) -> None:
        self._path = None if path is None else turn_path(path)
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout  # seconds
        self._exclusive = False  # this writer holds the turn: its own save takes no share

    @contextmanager
    def _locked(self, operation: int) -> Iterator[None]:
        if self._path is None:
            yield
            return
        fd = open_turn_file(self._path)
        if fd is None:
            yield
            return
        try:
            flock_within(fd, operation, self.timeout, self._path)
            yield
        finally:  # releases the flock (Linux frees the descriptor even when close reports an
            with suppress(OSError):  # error): a save committed inside stays reported
                os.close(fd)  # the turn file holds no lock of SQLite's

    @contextmanager
    def saving(self) -> Iterator[None]:
        """Around every save's transaction: a share of the turn, waiting while a writer
        holds it exclusively (not when this writer holds it itself)."""
        if self._exclusive:
            yield
            return
        with self._locked(fcntl.LOCK_SH):
            yield

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """The whole turn, once every save in progress has ended, for a read and its save."""
        with self._locked(fcntl.LOCK_EX):
            self._exclusive = True
            try:
                yield
            finally:
                self._exclusive = False


class PostgresTurn:
    """The same turn on PostgreSQL, an advisory lock named after the events table: every save
    takes it shared inside its transaction (`SHARE`, sent with the table lock, released at
    commit); the losing writer holds it exclusively on a connection of its own while it reads
    and saves (its own save does not take the share). Both wait at most the store's lock
    timeout (POSTGRES_LOCK_TIMEOUT, ledger/infrastructure/settings.py)."""

    SHARE = "SELECT pg_advisory_xact_lock_shared(hashtext(%s))"

    def __init__(self, datastore: Any, table: str) -> None:
        self._datastore = datastore
        self.name = table  # the lock's name: the schema-qualified events table
        self.held = False  # this writer holds the turn: its own save takes no share

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """The turn on a pooled connection of its own (autocommit) while the body runs. Once
        the body is done its release never raises, so a save committed inside stays reported:
        if the unlock fails the connection is closed, and the session's end releases it."""
        done = False
        try:
            with self._datastore.get_connection() as connection:
                self._lock(connection)
                self.held = True
                try:
                    yield
                    done = True
                finally:
                    self.held = False
                    try:
                        connection.execute("SELECT pg_advisory_unlock(hashtext(%s))",
                                           (self.name,))
                    except Exception:
                        with suppress(Exception):
                            connection.close()
        except Exception:
            if not done:
                raise

    def _lock(self, connection: Any) -> None:
        """Wait for the turn at most the store's lock timeout, then leave the connection's
        `lock_timeout` as it was."""
        timeout = f"{int(self._datastore.lock_timeout)}s"  # as every save waits: not for ever
        connection.execute("SELECT set_config('lock_timeout', %s, false)", (timeout,))
        try:
            connection.execute("SELECT pg_advisory_lock(hashtext(%s))", (self.name,))
        except Exception as error:
            if lock_timed_out(error):
                raise TurnTimeout(self.name, self._datastore.lock_timeout) from error
            raise
        finally:
            connection.execute("RESET lock_timeout")  # the pool's connection as it was


def turn_of(recorder: object) -> AbstractContextManager[None]:
    """`recorder`'s whole writers' turn, or nothing to take if its store has none (an
    in-memory store, another recorder)."""
    turn = getattr(recorder, "turn", None)
    return turn.exclusive() if isinstance(turn, WriterTurn | PostgresTurn) else nullcontext()
