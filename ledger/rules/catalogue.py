"""The rule catalogue: every rule the ledger enforces, with its citation and enforcing module.

Each rules module declares its rules with `rule(...)` and raises them with `Rule.violation`;
`docs/rules.md` is generated from this registry and a test keeps the two equal.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from ledger.domain.errors import RuleViolation


@dataclass(frozen=True)
class Rule:
    """One enforceable rule of the regulation, e.g. `§80.1428(a)(4)`."""

    id: str
    citation: str
    summary: str
    module: str

    def violation(self, message: str, field: str | None = None) -> RuleViolation:
        """The error to raise when a command breaks this rule."""
        return RuleViolation(self.id, self.citation, message, field)

    def check(self, ok: bool, message: str, field: str | None = None) -> None:
        """Raise this rule's violation unless `ok`."""
        if not ok:
            raise self.violation(message, field)


RULES: dict[str, Rule] = {}


def rule(rule_id: str, citation: str, summary: str) -> Rule:
    """Declare a rule in the calling module and register it in the catalogue."""
    if rule_id in RULES:
        raise ValueError(f"rule {rule_id} declared twice")
    module = sys._getframe(1).f_globals["__name__"]
    declared = Rule(rule_id, citation, summary, module)
    RULES[rule_id] = declared
    return declared


def all_rules() -> list[Rule]:
    """Every declared rule, importing every rules module first, sorted by citation then id."""
    from importlib import import_module

    from ledger.rules import RULE_MODULES

    for name in RULE_MODULES:
        import_module(name)
    return sorted(RULES.values(), key=lambda r: (r.citation, r.id))
