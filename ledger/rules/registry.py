"""The rule catalogue: every section module's `RULES`, gathered once, with where each is enforced.

Built from the section modules imported here, not from a list of names; a test fails when a
`Rule` declared anywhere under `ledger` is missing here, when two share an id, or when a rule's
citation names another section than its module's. (Not in `ledger/rules/__init__.py`: domain
value objects import their section's rules, and the other sections import those value objects.)
"""

from __future__ import annotations

from types import MappingProxyType, ModuleType

from ledger.rules import (
    s1405_standards,
    s1407_obligations,
    s1415_equivalence,
    s1425_rin,
    s1427_compliance,
    s1428_rins,
    s1429_separation,
    s1431_invalid,
    s1434_retirement,
    s1450_registration,
    s1451_compliance_level,
    s1452_blocked,
    s1452_reversals,
    s1452_trades,
    s1460_prohibited,
    s1471_auditors,
    s1474_locks,
    s1474_replacement,
)
from ledger.rules.catalogue import Rule
from ledger.rules.s1426 import delayed, eligibility, generation

SECTION_MODULES: tuple[ModuleType, ...] = (
    s1405_standards, s1407_obligations, s1415_equivalence, s1425_rin, generation, eligibility,
    delayed, s1427_compliance, s1428_rins, s1429_separation, s1431_invalid, s1434_retirement,
    s1450_registration, s1452_trades, s1460_prohibited, s1474_replacement,
    s1452_reversals,
    s1451_compliance_level, s1452_blocked, s1471_auditors, s1474_locks,
)


def _gather() -> tuple[dict[str, Rule], dict[str, str]]:
    """(rule id → rule, rule id → dotted name of the module declaring it); refuses a repeated id."""
    rules: dict[str, Rule] = {}
    modules: dict[str, str] = {}
    for module in SECTION_MODULES:
        declared: tuple[Rule, ...] = module.RULES
        for rule in declared:
            if rule.id in rules:
                raise ValueError(
                    f"rule {rule.id} declared in {modules[rule.id]} and {module.__name__}"
                )
            rules[rule.id], modules[rule.id] = rule, module.__name__
    return rules, modules


_RULES, _MODULES = _gather()
#: every rule by id
RULES = MappingProxyType(_RULES)


def all_rules() -> list[Rule]:
    """Every rule, sorted by citation then id."""
    return sorted(RULES.values(), key=lambda r: (r.citation, r.id))


def enforced_in(rule: Rule) -> str:
    """The dotted name of the section module that declares and enforces `rule`."""
    return _MODULES[rule.id]
