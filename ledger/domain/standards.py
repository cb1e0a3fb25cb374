"""The percentage standards of §80.1405, loaded from `ledger/data/standards.json`.

The table is data so that a new rulemaking is a one-line edit; this module only reads it into
exact `Decimal` per cent values, adding any supplemental standard to its base.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any

# year → {category ("CB", "BBD", "AB", "RF") → per cent of GV + DV, or None where no standard is
# in force for that category in that year (cellulosic in 2011 and 2012)}
StandardsTable = Mapping[int, Mapping[str, Decimal | None]]


@cache
def load_standards() -> StandardsTable:
    """The §80.1405 standards, year → category → per cent; read once, immutable."""
    raw = json.loads(resources.files("ledger.data").joinpath("standards.json").read_text("utf-8"))
    return MappingProxyType({int(year): _row(year, row) for year, row in raw["years"].items()})


def _row(year: str, row: dict[str, Any]) -> Mapping[str, Decimal | None]:
    """One year's standards. A supplemental standard (the 2022 and 2023 +0.14 % renewable fuel
    standard) is recorded apart from its base in the JSON and summed here into one figure."""
    supplemental: dict[str, str] = row.get("supplemental", {})
    base = {category: value for category, value in row.items() if category != "supplemental"}
    unknown = set(supplemental) - set(base)
    if unknown:
        raise ValueError(f"standards.json {year}: supplemental for unknown {sorted(unknown)}")
    percents: dict[str, Decimal | None] = {}
    for category, value in base.items():
        if value is None:
            if category in supplemental:
                raise ValueError(f"standards.json {year}: supplemental {category} with no base")
            percents[category] = None
        else:
            percents[category] = Decimal(str(value)) + Decimal(str(supplemental.get(category, "0")))
    return MappingProxyType(percents)
