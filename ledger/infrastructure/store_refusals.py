"""A save the store refused for a reason that is not another writer (a constraint or trigger
the ledger did not make, a row forged ahead of the log): a store fault, exit 3 (design.md), named,
and never retried as a conflict; the library's `IntegrityError` means a conflict everywhere else."""

from __future__ import annotations

from eventsourcing.persistence import DataError


class StoreRefused(DataError):
    """The store refused a save, not because another writer saved first: nothing was stored."""


def is_integrity(error: BaseException) -> bool:
    """Whether `error` is a driver's or the library's `IntegrityError` (sqlite3, psycopg)."""
    return any(kind.__name__ == "IntegrityError" for kind in type(error).__mro__)
