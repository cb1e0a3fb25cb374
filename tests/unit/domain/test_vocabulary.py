"""Roles (§80.1450) and fuel directions are enums whose values are the strings stored events
have always held: an event stored with plain strings still applies, to the same state."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from ledger.domain.party import Party
from ledger.domain.rin import BlockKey, RinBlock
from ledger.domain.vocabulary import FuelDirection, Role

ON = date(2024, 2, 20)


def test_stored_strings_are_unchanged() -> None:
    assert [r.value for r in Role] == [
        "producer", "importer", "foreign_producer", "obligated_party", "refiner", "exporter",
        "blender", "small_refiner", "rin_owner", "qap_auditor", "regulator", "broker"]
    assert [d.value for d in FuelDirection] == ["received", "delivered", "produced"]


def test_a_party_from_stored_strings_has_enum_roles_and_moves_fuel_by_direction() -> None:
    party = Party.register("1002", "P", ["producer", "obligated_party"], ["20011"])
    assert party.roles == [Role.PRODUCER, Role.OBLIGATED_PARTY]
    assert all(type(role) is Role for role in party.roles)
    key = BlockKey(1, 2024, "1002", "20011", "00001", 15, 4, ON, "biodiesel")
    party.trigger_event(Party.Assigned, effective_date=ON, client_id=None,
                        rins=[RinBlock(key, 1, 150)], volume=Decimal(100))
    # a FuelMoved as a stored v1/v2 event decodes it: `direction` the plain string
    for direction, volume in (("delivered", 40), ("received", 5), ("produced", 7)):
        party.trigger_event(Party.FuelMoved, effective_date=ON, client_id=None,
                            direction=direction, volume=Decimal(volume), counterparty=None,
                            ptd=None, facility=None)
    assert party.fuel.available(ON) == 100 - 40 + 5 + 7
    assert party.produced == {2024: Decimal(7)}  # only fuel produced counts (§80.1426(c)(2))
    assert FuelDirection("produced") is FuelDirection.PRODUCED
