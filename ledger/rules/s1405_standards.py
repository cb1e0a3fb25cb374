"""The percentage standards (§80.1405): an obligation is computed only for a year that has them.

The table itself is data, read by `ledger.domain.standards`.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from ledger.domain.standards import load_standards
from ledger.rules.catalogue import Rule

OBL_STANDARD_YEAR = Rule(
    "OBL-STANDARD-YEAR",
    "§80.1405",
    "an RVO is computed only for a year that has percentage standards",
)
RULES = (OBL_STANDARD_YEAR,)


def standards_for(year: int) -> Mapping[str, Decimal | None]:
    """Year `year`'s percentage standards by category; refused for a year §80.1405 sets none."""
    standards = load_standards().get(year)
    if standards is None:
        first, last = min(load_standards()), max(load_standards())
        raise OBL_STANDARD_YEAR.violation(
            f"no percentage standards for {year}; the table covers {first}-{last}", "year"
        )
    return standards
