"""Equivalence values (§80.1415): a listed fuel's value or an approved alternative (b), any other
fuel's from its renewable content and energy (c)(1); RR is ten times the value (§80.1425(f)).
"""

from __future__ import annotations

from decimal import Decimal

from ledger.domain.fuels import APPROVED_EV, DEFAULT_EV, Fuel, other_fuel_ev, rr
from ledger.rules.catalogue import Rule
from ledger.rules.s1425_rin import RIN_RR

GEN_EV = Rule(
    "GEN-EV", "§80.1415(b)",
    "a listed fuel carries its §80.1415(b) equivalence value or an approved alternative",
)
GEN_EV_OTHER = Rule(
    "GEN-EV-OTHER", "§80.1415(c)(1)",
    "any other fuel's EV is (R / 0.972) × (EC / 77,000), to the nearest tenth",
)
RULES = (GEN_EV, GEN_EV_OTHER)


def equivalence_value(
    fuel: Fuel,
    given: Decimal | None,
    renewable_fraction: Decimal | None,
    energy_content: Decimal | None,
    field: str,
) -> Decimal:
    """The batch's EV: the §80.1415(b) value or an approved alternative, or for any other fuel the
    §80.1415(c)(1) formula; its RR fits two digits (§80.1425(f))."""
    if fuel is not Fuel.OTHER:
        ev = DEFAULT_EV[fuel] if given is None else given
        allowed = sorted(APPROVED_EV[fuel])
        GEN_EV.check(
            ev in allowed,
            f"{fuel} has equivalence value {' or '.join(map(str, allowed))}, not {ev}", field,
        )
        return Decimal(rr(ev)).scaleb(-1)
    if given is None:
        if renewable_fraction is None or energy_content is None:
            raise GEN_EV_OTHER.violation(
                "fuel 'other' needs its approved equivalence_value, or renewable_fraction and "
                "energy_content_btu_per_gal for EV = (R / 0.972) × (EC / 77,000)",
                field,
            )
        ev = other_fuel_ev(renewable_fraction, energy_content)
    else:
        GEN_EV_OTHER.check(
            (given * 10) % 1 == 0, f"an EV is rounded to the nearest tenth, got {given}", field
        )
        ev = given
    RIN_RR.check(
        1 <= rr(ev) <= 99, f"EV {ev} gives RR {rr(ev)}, outside 01-99 (RR = 10 × EV)", field
    )
    return Decimal(rr(ev)).scaleb(-1)
