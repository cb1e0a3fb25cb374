"""Shared test material: a small market several modules start from (producer, blender, refiner,
one batch), and the helpers that apply commands which must be applied."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ledger import Ledger, Result


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
