"""The regulation's rules, one module per section of 40 CFR 80 Subpart M.

Importing this package's modules registers every rule in the catalogue (`all_rules`).
"""

RULE_MODULES = (
    "ledger.domain.rin",
    "ledger.domain.emts",
    "ledger.domain.daughters",
    "ledger.rules.s1407_obligations",
    "ledger.rules.s1426_generation",
    "ledger.rules.s1426_delayed",
    "ledger.rules.s1426_eligibility",
    "ledger.rules.s1427_compliance",
    "ledger.rules.s1427_retirement",
    "ledger.rules.s1428_rins",
    "ledger.rules.s1429_replacement",
    "ledger.rules.s1429_separation",
    "ledger.rules.s1431_invalid",
    "ledger.rules.s1450_registration",
)
