"""A rule of the regulation: its id, its citation and what it says, and the error it raises.

Each section module declares its rules as `Rule(...)` constants, lists them in its `RULES`
tuple and raises them with `Rule.violation` or `Rule.check`; `ledger.rules.registry` gathers
every section's `RULES`, and `docs/rules.md` is generated from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeVar

from ledger.domain.errors import RuleViolation

_SECTION = re.compile(r"§(80\.\d{4})")
_Found = TypeVar("_Found")


@dataclass(frozen=True)
class Rule:
    """One enforceable rule of the regulation, e.g. `§80.1428(a)(4)`."""

    id: str
    citation: str
    summary: str

    @property
    def section(self) -> str:
        """The CFR section the citation names first: `§80.1428(a)(4)` → `80.1428`."""
        found = _SECTION.match(self.citation)
        if found is None:
            raise ValueError(f"rule {self.id}: citation {self.citation!r} names no section")
        return found.group(1)

    def violation(self, message: str, field: str | None = None) -> RuleViolation:
        """The error to raise when a command breaks this rule."""
        return RuleViolation(self.id, self.citation, message, field)

    def check(self, ok: bool, message: str, field: str | None = None) -> None:
        """Raise this rule's violation unless `ok`."""
        if not ok:
            raise self.violation(message, field)

    def require(self, found: _Found | None, message: str, field: str | None = None) -> _Found:
        """`found`, or this rule's violation when nothing was found (None)."""
        if found is None:
            raise self.violation(message, field)
        return found
