"""Shared test material: a small market several modules start from (producer, blender, refiner,
one batch), and the helpers that apply commands which must be applied."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ledger import Ledger, Result

#: a producer with one facility, a blender and an obligated party (§80.1450 registrations)
REGISTRATIONS: list[dict[str, Any]] = [
    {"type": "register_party", "party": "1001", "name": "Prairie", "roles": ["producer"],
     "facilities": ["20001"]},
    {"type": "register_party", "party": "2001", "name": "Gulf", "roles": ["blender"]},
    {"type": "register_party", "party": "3001", "name": "Lakeside",
     "roles": ["obligated_party"]},
]


def three_party_market(separated: int) -> list[dict[str, Any]]:
    """One ethanol batch of 100,000 standardized gallons × EV 1.0 = 100,000 D6 gallon-RINs
    (§80.1415); 40,000 sold to the blender with 16,000 gallons (2.5 per gallon); `separated` of
    them separated on blending `separated` / 2.5 gallons; 10,000 separated RINs sold on."""
    return [
        {"type": "register_party", "party": "1001", "name": "Producer", "roles": ["producer"],
         "facilities": ["20001"]},
        {"type": "register_party", "party": "2001", "name": "Blender", "roles": ["blender"]},
        {"type": "register_party", "party": "3001", "name": "Refiner",
         "roles": ["obligated_party"]},
        {"type": "generate", "date": "2024-01-31", "party": "1001", "facility": "20001",
         "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": "100000"},
        {"type": "transfer", "date": "2024-02-01", "from": "1001", "to": "2001",
         "volume": "16000", "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 40000}},
        {"type": "separate", "date": "2024-02-02", "party": "2001", "reason": "blending",
         "volume": str(separated * 2 // 5),
         "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": separated}},
        {"type": "transfer", "date": "2024-02-03", "from": "2001", "to": "3001",
         "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 10000}},
    ]


def ok(ledger: Ledger, **cmd: Any) -> Result:
    """Apply one command that must be applied (the refusal's message otherwise)."""
    result = ledger.apply(cmd)
    assert result.status == "applied", result.error
    return result


def register_all(ledger: Ledger, parties: Iterable[tuple[str, list[str], list[str]]]) -> None:
    """Register each (party, roles, facilities), named "Party <id>"."""
    for party, roles, facilities in parties:
        ok(ledger, type="register_party", party=party, name=f"Party {party}", roles=roles,
           facilities=facilities)


def activity_market() -> list[dict[str, Any]]:
    """Four parties over 2023 Q4 to 2024 Q2, for reports computed by hand (tests of §80.1451):
    ethanol (EV 1.0, §80.1415) so gallon-RINs = standardized gallons; assigned RINs move with
    2.5 per gallon; serials leave lowest first. Party 1001 produces, 2001 blends, 3001 is an
    obligated party, 4001 a RIN owner; a regulator finds serials 1-500 of batch 00001 invalid."""
    k1_23 = {"d_code": 6, "vintage": 2023, "k": 1}
    k2_23 = {"d_code": 6, "vintage": 2023, "k": 2}
    k1_24 = {"d_code": 6, "vintage": 2024, "k": 1}
    k2_24 = {"d_code": 6, "vintage": 2024, "k": 2}
    return [
        {"type": "register_party", "party": "1001", "name": "Producer", "roles": ["producer"],
         "facilities": ["20001"]},
        {"type": "register_party", "party": "2001", "name": "Blender", "roles": ["blender"]},
        {"type": "register_party", "party": "3001", "name": "Refiner",
         "roles": ["obligated_party"]},
        {"type": "register_party", "party": "4001", "name": "Trader", "roles": ["rin_owner"]},
        # A: 10,000 gallon-RINs, serials 1-10,000, vintage 2023
        {"type": "generate", "id": "gen-1", "date": "2023-11-10", "party": "1001",
         "facility": "20001", "batch": "00001", "fuel": "ethanol", "d_code": 6,
         "volume": "10000"},
        # B: serials 1-5,000 to the blender with 2,000 gallons
        {"type": "transfer", "id": "t-b", "date": "2023-11-20", "from": "1001", "to": "2001",
         "rins": {**k1_23, "quantity": 5000}, "volume": "2000"},
        # C: serials 1-4,000 separated on blending 1,600 gallons
        {"type": "separate", "id": "s-c", "date": "2023-12-05", "party": "2001",
         "reason": "blending", "rins": {**k1_23, "quantity": 4000}, "volume": "1600"},
        # D: separated serials 1-3,000 to the refiner
        {"type": "transfer", "id": "t-d", "date": "2023-12-10", "from": "2001", "to": "3001",
         "rins": {**k2_23, "quantity": 3000}},
        # E: 8,000 gallon-RINs of vintage 2024
        {"type": "generate", "id": "gen-2", "date": "2024-01-15", "party": "1001",
         "facility": "20001", "batch": "00002", "fuel": "ethanol", "d_code": 6,
         "volume": "8000"},
        # F: serials 1-4,000 of 2024 to the blender with 1,600 gallons
        {"type": "transfer", "id": "t-f", "date": "2024-02-01", "from": "1001", "to": "2001",
         "rins": {**k1_24, "quantity": 4000}, "volume": "1600"},
        # G, H: the blender's last 1,000 assigned 2023 RINs and 2,000 of 2024 separated
        {"type": "separate", "id": "s-g", "date": "2024-02-10", "party": "2001",
         "reason": "blending", "rins": {**k1_23, "quantity": 1000}, "volume": "400"},
        {"type": "separate", "id": "s-h", "date": "2024-02-10", "party": "2001",
         "reason": "blending", "rins": {**k1_24, "quantity": 2000}, "volume": "800"},
        # I: separated 2024 serials 1-1,500 to the refiner, fast path, at 1.10
        {"type": "transfer", "id": "t-i", "date": "2024-03-01", "from": "2001", "to": "3001",
         "rins": {**k2_24, "quantity": 1500}, "price": "1.10"},
        # J: a two-sided trade: separated 2023 serials 3,001-3,500 to the trader
        {"type": "sell", "id": "s-1", "date": "2024-03-15", "party": "2001", "to": "4001",
         "rins": {**k2_23, "quantity": 500}, "price": "0.90", "broker": "5001"},
        {"type": "buy", "id": "b-1", "date": "2024-03-15", "party": "4001", "from": "2001",
         "rins": {**k2_23, "quantity": 500}, "gallon_price": "2.25"},
        # K, L: the refiner's 2024 RF obligation; 2023 serials 1-2,000 retired for it
        {"type": "report_obligation", "id": "o-k", "party": "3001", "year": 2024,
         "date": "2024-03-01", "rvo": {"CB": 0, "BBD": 0, "AB": 0, "RF": 5000}},
        {"type": "retire", "id": "r-l", "date": "2024-03-20", "party": "3001",
         "reason": "compliance", "compliance_year": 2024, "rins": {**k2_23, "quantity": 2000}},
        # M: serials 1-500 of batch 00001 found invalid (all retired by the refiner in L)
        {"type": "invalidate", "id": "inv-m", "date": "2024-04-10", "reason": "duplicate",
         "rin": "12023100120001000011060000000100000500"},
        # N: 2024 serials 1-1,000 retired for 2024
        {"type": "retire", "id": "r-n", "date": "2024-05-01", "party": "3001",
         "reason": "compliance", "compliance_year": 2024, "rins": {**k2_24, "quantity": 1000}},
        # O: assigned 2024 serials 2,001-3,000 to the refiner with 400 gallons
        {"type": "transfer", "id": "t-o", "date": "2024-06-01", "from": "2001", "to": "3001",
         "rins": {**k1_24, "quantity": 1000}, "volume": "400"},
    ]
