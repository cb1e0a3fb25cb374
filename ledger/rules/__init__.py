"""The regulation's rules, one section of 40 CFR 80 Subpart M each, where the citation says.

A section's rules live in `s<NNNN>_<topic>.py` (§80.1428 → `s1428_rins.py`); a section too big
for one file is a package `s<NNNN>/` of topic modules (§80.1426 → `s1426/generation.py`,
`s1426/delayed.py`, `s1426/eligibility.py`). Each module declares its rules as `Rule` constants
and lists them in `RULES`; `ledger.rules.registry` gathers them into the catalogue.
"""
