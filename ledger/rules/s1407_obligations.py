"""Renewable volume obligations (§80.1407) from the percentage standards of §80.1405.

`RVO_X,i = STD_X,i × (GV_i + DV_i) + D_X,i−1`. This module computes the first term only; the
deficit carried in, D_X,i−1, is added by the compliance positions (`s1427_compliance`), which
the §80.1429(b)(7) and (b)(9) separation limits also read
(`ledger.rules.s1429_separation.separation_year`).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum

from ledger.rules.catalogue import Rule
from ledger.rules.s1405_standards import standards_for

OBL_VOLUME = Rule(
    "OBL-VOLUME",
    "§80.1407(a)",
    "the non-renewable gasoline and diesel volumes GV and DV are finite and not negative",
)
OBL_RVO_CATEGORY = Rule(
    "OBL-RVO-CATEGORY",
    "§80.1407(a)",
    "an RVO is given only for the four obligations CB, BBD, AB and RF",
)
OBL_RVO_VALUE = Rule(
    "OBL-RVO-VALUE",
    "§80.1407(a)",
    "each RVO is a whole, non-negative number of gallon-RINs",
)
RULES = (OBL_VOLUME, OBL_RVO_CATEGORY, OBL_RVO_VALUE)

_PERCENT = Decimal(100)


class Category(StrEnum):
    """The four renewable volume obligations of §80.1407(a)."""

    CB = "CB"  # cellulosic biofuel
    BBD = "BBD"  # biomass-based diesel
    AB = "AB"  # advanced biofuel
    RF = "RF"  # renewable fuel


def compute_rvo(year: int, gasoline_volume: Decimal, diesel_volume: Decimal) -> dict[Category, int]:
    """The four RVOs of year i, `STD_X,i / 100 × (GV_i + DV_i)` in gallon-RINs (§80.1407(a)).

    Rounded to the nearest whole gallon-RIN, halves up (ROUND_HALF_UP): the regulation counts
    whole gallon-RINs and gives no rounding rule. A category with no standard in force (CB in
    2011 and 2012) has an RVO of 0. The deficit carried in is not added here.
    """
    standards = standards_for(year)
    for field, volume in (("gasoline_volume", gasoline_volume), ("diesel_volume", diesel_volume)):
        OBL_VOLUME.check(
            volume.is_finite() and volume >= 0,
            f"{field} is {volume:,} gallons; it must be 0 or more",
            field,
        )
    total = gasoline_volume + diesel_volume
    rvo: dict[Category, int] = {}
    for category in Category:
        percent = standards[category]
        exact = Decimal(0) if percent is None else percent / _PERCENT * total
        rvo[category] = int(exact.to_integral_value(rounding=ROUND_HALF_UP))
    return rvo


def validate_rvo(rvo: Mapping[str, object]) -> dict[Category, int]:
    """An RVO given directly, checked: keys only CB/BBD/AB/RF (a missing key means 0), values
    non-negative whole gallon-RINs (§80.1407(a))."""
    unknown = sorted(str(key) for key in set(rvo) - set(Category))
    OBL_RVO_CATEGORY.check(
        not unknown, f"unknown RVO categories {unknown}; use CB, BBD, AB, RF", "rvo"
    )
    validated: dict[Category, int] = {}
    for category in Category:
        value = rvo.get(category, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise OBL_RVO_VALUE.violation(
                f"RVO {category} is {value!r}; it must be a whole number of gallon-RINs, 0 or more",
                f"rvo.{category}",
            )
        validated[category] = value
    return validated
