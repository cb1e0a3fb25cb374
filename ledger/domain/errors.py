"""Refusals of a command: each names its citation, the field and the numbers (the store's own
failures are the application's, ledger/application/store_failures.py)."""

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
