"""Failures of the store, not refusals by a rule: a save that kept losing to other writers
(`WriteConflict`, refused like a rule so its line is reported), a store that failed, and a
save that failed for a fault of the ledger itself (`InternalFault`)."""

from __future__ import annotations

from eventsourcing.persistence import PersistenceError

from ledger.application.api_errors import LibraryError
from ledger.domain.errors import LedgerError


class WriteConflict(LedgerError):
    """A line refused because other writers kept saving first: every attempt read aggregates
    that another writer changed before this one could save. Nothing of the line was stored."""

    CITATION = "concurrency"

    def __init__(self, conflicts: int) -> None:
        super().__init__(
            self.CITATION,
            f"gave up after {conflicts} conflicts with other writers; nothing of this line was "
            "stored, send it again",
        )


class StoreError(LibraryError):
    """The store failed (disk full, locked, read-only, server down, unreadable): not a refusal.

    Every line up to `last_committed_line` (None: no line of this call) was committed and its
    result reported. A later line was not stored, unless the store failed with the commit and
    could not be read to tell (a line with an id is safe to resend: it comes back duplicate).
    """

    def __init__(self, message: str, last_committed_line: int | None) -> None:
        committed = (
            f"line {last_committed_line} was the last committed" if last_committed_line
            else "no line was committed"
        )
        super().__init__(f"the store failed: {message} ({committed})")
        self.last_committed_line = last_committed_line


class InternalFault(PersistenceError):
    """A save that failed with an error that is neither the store's nor a conflict (a value the
    store cannot encode, an error in the ledger's own code inside the saving transaction): a
    fault of the ledger, not of the input or the store. Nothing of the line was stored (the
    transaction rolled back); it is reported like a failed store (exit 3), in its own words,
    never as a traceback (design.md "Exit codes")."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(
            f"internal error, not the input's or the store's: saving failed with "
            f"{type(error).__name__}: {' '.join(str(error).split())[:200]}; nothing of the line "
            "was stored; please report it"
        )
