"""Errors the ledger raises: every refusal names its citation, the field and the numbers."""

from __future__ import annotations


class LedgerError(Exception):
    """A command the ledger refuses; nothing is stored when one is raised."""

    def __init__(self, citation: str, message: str, field: str | None = None) -> None:
        super().__init__(f"{citation}: {message}")
        self.citation = citation
        self.message = message
        self.field = field


class InputError(LedgerError):
    """Malformed input (bad JSON, wrong type, unknown field): cites the transaction-file format."""

    CITATION = "format"

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(self.CITATION, f"{field}: {message}" if field else message, field)


class RuleViolation(LedgerError):
    """A command that breaks a rule of 40 CFR 80 Subpart M; carries the rule from the catalogue."""

    def __init__(self, rule_id: str, citation: str, message: str, field: str | None) -> None:
        super().__init__(citation, message, field)
        self.rule_id = rule_id


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


class StoreError(Exception):
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
