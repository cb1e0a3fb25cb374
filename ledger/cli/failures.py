"""Store failures as a user sees them (design.md "Exit codes"): exit 3 and what failed, never a
traceback. Disk full, a lock held past the timeout, a read-only file or folder, a server that
does not answer and a file that is not a database are failures of the store, not of the input.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from eventsourcing.persistence import PersistenceError
from rich.console import Console

from ledger.application.store_failures import CommitUnknown, InternalFault, StoreError
from ledger.infrastructure.sqlite_files import LinkedFile
from projections.tracking import NotAViewsFile

STORE_FAILED = 3

STORE_ERRORS: tuple[type[BaseException], ...] = (
    StoreError, PersistenceError, sqlite3.Error, OSError,
)
try:  # the PostgreSQL driver is optional (extra `postgresql`)
    from psycopg import Error as PostgresError

    STORE_ERRORS += (PostgresError,)
except ImportError:  # pragma: no cover - without the extra there is no PostgreSQL store
    pass

_KINDS = (  # (words of the driver's message, what a user should read)
    (("disk is full", "no space left"), "the disk is full"),
    (("database is locked", "lock timeout", "could not obtain lock"),
     "the store is locked by another process beyond the lock timeout"),
    (("readonly", "read-only", "permission denied", "operation not permitted"),
     "the store is read-only"),
    (("not a database", "malformed", "file is encrypted"),
     "the store's file is not a valid database"),
    (("unable to open",), "the store's file cannot be opened or created"),
    (("connection", "connect", "server closed", "could not translate host"),
     "the database server cannot be reached"),
)


def store_failure(error: BaseException) -> str:
    """One line saying what failed in the store, from the driver's own message (a
    `StoreError`'s cause: the line it names is numbered by the library, not by the file)."""
    if isinstance(error, StoreError) and error.__cause__ is not None:
        error = error.__cause__
    if isinstance(error, InternalFault):  # the ledger's fault: its own words, not the store's
        return str(error)
    if isinstance(error, CommitUnknown | NotAViewsFile | LinkedFile):  # whole: what to do next
        return f"store failed: {error}"
    detail = " ".join(str(error).split())[:200] or type(error).__name__
    lowered = detail.lower()
    kind = next((what for words, what in _KINDS if any(w in lowered for w in words)), None)
    return f"store failed: {kind} ({detail})" if kind else f"store failed: {detail}"


def print_failure(console: Console, message: str) -> None:
    console.print(message, markup=False, highlight=False, soft_wrap=True)


@contextmanager
def store_failures_exit(console: Console, note: str = "") -> Iterator[None]:
    """Turn a store failure raised inside into its message (and `note`) on stderr, exit 3."""
    try:
        yield
    except STORE_ERRORS as error:
        print_failure(console, store_failure(error) + note)
        raise typer.Exit(STORE_FAILED) from None
