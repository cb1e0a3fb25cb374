"""Failures of the store, not refusals by a rule: a save that kept losing to other writers
(`WriteConflict`, refused like a rule so its line is reported), a store that failed, and a
save that failed for a fault of the ledger itself (`InternalFault`)."""

from __future__ import annotations

from collections.abc import Sequence

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

    Every line up to `last_committed_line` (None: no line of this call) has its result
    committed and reported (applied, duplicate, or rejected: a rejected line stores nothing,
    its result is final). A later line was not stored, unless `unknown` names it: the store
    failed with the commit and could not be read to tell (a line with an id is safe to resend:
    it comes back duplicate).
    """

    def __init__(self, message: str, last_committed_line: int | None,
                 unknown: tuple[int, int] | None = None) -> None:
        before = " before them" if unknown else ""  # lines whose commit is unknown
        committed = (
            f"line {last_committed_line} was the last committed{before}" if last_committed_line
            else f"no line{before} was committed"
        )
        super().__init__(f"the store failed: {message} ({committed})")
        self.last_committed_line = last_committed_line
        #: the first and last line whose commit is unknown (`CommitUnknown`), if any
        self.unknown = unknown

    @classmethod
    def of(cls, error: BaseException, last_committed_line: int | None) -> StoreError:
        """The store failure `error`, after `last_committed_line`."""
        unknown = error.lines if isinstance(error, CommitUnknown) else None
        return cls(str(error), last_committed_line, unknown)


class CommitUnknown(PersistenceError):
    """A save of lines `first`..`last` whose commit was sent and its answer lost, and the
    store could not then be read to tell whether it landed: they may or may not be stored."""

    def __init__(self, first: int, last: int, error: BaseException | str) -> None:
        lines = f"line {first} was" if first == last else f"lines {first}-{last} were"
        self.detail = " ".join(str(error).split())[:200]
        super().__init__(
            f"whether {lines} committed is unknown: the answer to the commit was lost and the "
            f"store could not be read to tell ({self.detail}); a line "
            "with an id is safe to send again (it comes back duplicate), a line without one "
            "is stored twice if it was committed: look for it first (`rin transactions`, "
            "`Ledger.log`)"
        )
        self.lines = (first, last)

    def renumbered(self, numbers: Sequence[int]) -> CommitUnknown:
        """The same, its lines numbered as `numbers` numbers the library's lines 1, 2, … (a
        file's line numbers, blank lines skipped)."""
        return CommitUnknown(numbers[self.lines[0] - 1], numbers[self.lines[1] - 1], self.detail)


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
