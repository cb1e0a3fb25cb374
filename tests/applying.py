"""Applying lines in tests: every one applied, or one refused with nothing stored."""

from __future__ import annotations

from typing import Any

from ledger import Ledger


def ok(ledger: Ledger, *commands: dict[str, Any]) -> None:
    """Each command is applied, in turn."""
    for cmd in commands:
        result = ledger.apply(cmd)
        assert result.status == "applied", (cmd, result)


def refused(ledger: Ledger, cmd: dict[str, Any], rule: str | None = None) -> Any:
    """The line is refused (by `rule` when given) with a message, and stores nothing
    (design.md: a rejection changes nothing)."""
    before = ledger.position()
    result = ledger.apply(cmd)
    assert result.status == "rejected", (cmd, result)
    if rule is not None:
        assert result.rule == rule, result
    assert result.error, result
    assert ledger.position() == before
    return result
