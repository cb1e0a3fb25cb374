"""Failures of the store, not refusals by a rule: a save that kept losing to other writers
(`WriteConflict`, refused like a rule so its line is reported) and a store that failed."""

from __future__ import annotations

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
