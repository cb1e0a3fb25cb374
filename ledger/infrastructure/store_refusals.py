"""A save the store refused for a reason that is not another writer (a constraint or trigger
the ledger did not make, a row forged ahead of the log): a store fault, exit 3 (design.md), named,
and never retried as a conflict; the library's `IntegrityError` means a conflict everywhere else."""

from __future__ import annotations

from eventsourcing.persistence import DataError, PersistenceError


class StoreRefused(DataError):
    """The store refused a save, not because another writer saved first: nothing was stored."""


def is_integrity(error: BaseException) -> bool:
    """Whether `error` is a driver's or the library's `IntegrityError` (sqlite3, psycopg)."""
    return any(kind.__name__ == "IntegrityError" for kind in type(error).__mro__)


#: PostgreSQL's SQLSTATE for a lock not granted within `lock_timeout`
LOCK_NOT_AVAILABLE = "55P03"


class LockTimeout(PersistenceError):
    """Another process held a lock of the store past its lock timeout (exit 3, design.md: "locked
    past the timeout"); nothing was stored. Not retried: each try would wait the timeout again
    (the library retries its `OperationalError` ten times: 30 s became 5 minutes)."""


def lock_timed_out(error: BaseException) -> bool:
    """Whether `error`, or the driver's error it wraps, is PostgreSQL's lock timeout."""
    return LOCK_NOT_AVAILABLE in (getattr(error, "sqlstate", None),
                                  getattr(error.__cause__, "sqlstate", None))
