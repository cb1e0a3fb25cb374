"""Fairness between writer processes on one store: a writer whose save keeps losing to
another's takes the writers' turn, so its next attempt cannot lose.

A save reads its aggregates outside the saving transaction and is refused if another writer
saved them in between (ledger/infrastructure/read_check.py); under a sustained stream of saves
by another process the same writer can lose again and again (session 5: up to ~440 tries).
Every save holds a shared `flock` on the store's file while it inserts; the losing writer
takes it exclusively before it reads, so no other save can commit until its own has: what it
reads is what its save checks against. `flock` and SQLite's own (POSIX `fcntl`) locks are
separate on Linux, so this lock never blocks SQLite's readers or its locking. PostgreSQL does
the same with an advisory lock (`PostgresTurn`).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any


class WriterTurn:
    """The writers' turn on the file at `path` (a SQLite store); `None`: an in-memory store,
    which one process alone can write, so there is no turn to take."""

    def __init__(self, path: str | None) -> None:
        self._path = path
        self._exclusive = False  # this writer holds the turn: its own save takes no share

    @contextmanager
    def _locked(self, operation: int) -> Iterator[None]:
        if self._path is None:
            yield
            return
        fd = os.open(self._path, os.O_RDONLY)
        try:
            fcntl.flock(fd, operation)
            yield
        finally:
            os.close(fd)  # closing the last descriptor of the open file releases its flock

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
    and saves (its own save does not take the share)."""

    SHARE = "SELECT pg_advisory_xact_lock_shared(hashtext(%s))"

    def __init__(self, datastore: Any, table: str) -> None:
        self._datastore = datastore
        self.name = table  # the lock's name: the schema-qualified events table
        self.held = False  # this writer holds the turn: its own save takes no share

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._datastore.get_connection() as connection:  # in autocommit mode
            connection.execute("SELECT pg_advisory_lock(hashtext(%s))", (self.name,))
            self.held = True
            try:
                yield
            finally:
                self.held = False
                connection.execute("SELECT pg_advisory_unlock(hashtext(%s))", (self.name,))


def turn_of(recorder: object) -> AbstractContextManager[None]:
    """`recorder`'s whole writers' turn, or nothing to take if its store has none (an
    in-memory store, another recorder)."""
    turn = getattr(recorder, "turn", None)
    return turn.exclusive() if isinstance(turn, WriterTurn | PostgresTurn) else nullcontext()
