"""Renewable fuels and their equivalence values (§80.1415); RR = 10 × EV in the RIN code.

EV is how many gallon-RINs one standardized gallon earns (§80.1415(a)(2)). Biogas and
electricity are counted in gallon equivalents: 77,000 Btu (LHV) of CNG/LNG (§80.1415(b)(5))
or 22.6 kWh (§80.1415(b)(6)) is one gallon with EV 1.0. Every rounding in the ledger is to the
nearest unit, halves up (`round_half_up`).
"""

from __future__ import annotations

import math
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction


class Fuel(StrEnum):
    """The fuel names a `generate` command may carry."""

    ETHANOL = "ethanol"
    BIODIESEL = "biodiesel"
    RENEWABLE_DIESEL = "renewable_diesel"
    BUTANOL = "butanol"
    BIOGAS = "biogas"
    ELECTRICITY = "electricity"
    OTHER = "other"


BTU_PER_GALLON = Decimal(77_000)
"""Btu (lower heating value) of CNG/LNG from biogas that make one gallon, §80.1415(b)(5)."""

KWH_PER_GALLON = Decimal("22.6")
"""kWh of renewable electricity that make one gallon, §80.1415(b)(6)."""

DEFAULT_EV: dict[Fuel, Decimal] = {
    Fuel.ETHANOL: Decimal("1.0"),  # (b)(1) denatured ethanol
    Fuel.BIODIESEL: Decimal("1.5"),  # (b)(2) mono-alkyl ester
    Fuel.BUTANOL: Decimal("1.3"),  # (b)(3)
    Fuel.RENEWABLE_DIESEL: Decimal("1.7"),  # (b)(4) non-ester, LHV >= 123,500 Btu/gal
    Fuel.BIOGAS: Decimal("1.0"),  # (b)(5) per 77,000 Btu
    Fuel.ELECTRICITY: Decimal("1.0"),  # (b)(6) per 22.6 kWh
}
"""The §80.1415(b) value of each listed fuel; `other` has none and needs an applied-for EV."""

APPROVED_EV: dict[Fuel, frozenset[Decimal]] = {
    fuel: frozenset({ev}) for fuel, ev in DEFAULT_EV.items()
} | {
    # Renewable diesel below 123,500 Btu/gal LHV, EMTS fuel codes 041/042 (reference.md §2).
    Fuel.RENEWABLE_DIESEL: frozenset({Decimal("1.7"), Decimal("1.6"), Decimal("1.5")}),
}
"""Every EV a listed fuel may carry: its (b) value or an approved alternative (§80.1415(b)(7))."""

_OTHER_FUEL_DIVISOR = Fraction("0.972") * 77_000


def round_half_up(value: Fraction) -> int:
    """`value` to the nearest integer, halves up (for the non-negative values the ledger rounds)."""
    return math.floor(value + Fraction(1, 2))


def other_fuel_ev(renewable_fraction: Decimal, energy_content_btu_per_gal: Decimal) -> Decimal:
    """EV = (R / 0.972) × (EC / 77,000) to the nearest tenth (§80.1415(c)(1)).

    R is the renewable fraction of the fuel's energy, EC its lower heating value in Btu/gal.
    """
    exact = Fraction(renewable_fraction) * Fraction(energy_content_btu_per_gal)
    return Decimal(round_half_up(exact / _OTHER_FUEL_DIVISOR * 10)).scaleb(-1)


def rr(ev: Decimal) -> int:
    """The RIN code's RR field, 10 × EV (§80.1425(f)); EV must be a whole number of tenths."""
    tenths = ev * 10
    if tenths != tenths.to_integral_value():
        raise ValueError(f"an equivalence value is given in tenths, got {ev}")
    return int(tenths)
