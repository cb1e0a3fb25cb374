"""The ledger's fixed words: registration roles (§80.1450) and the directions fuel moves in.

`StrEnum`s, so a stored event keeps the plain string it always had ("obligated_party",
"delivered") and decodes to the member equal to it.
"""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """What a party registers as (§80.1450); a party may hold several roles."""

    PRODUCER = "producer"
    IMPORTER = "importer"
    FOREIGN_PRODUCER = "foreign_producer"
    OBLIGATED_PARTY = "obligated_party"
    REFINER = "refiner"
    EXPORTER = "exporter"
    BLENDER = "blender"
    SMALL_REFINER = "small_refiner"
    RIN_OWNER = "rin_owner"
    QAP_AUDITOR = "qap_auditor"  # independent third-party auditor (§80.1471)
    REGULATOR = "regulator"  # the EPA: locks and invalidates (§80.1474(b)(1), §80.1431)
    BROKER = "broker"  # a broker or agent arranging trades (§80.1454(a)(3)(ii))


class FuelDirection(StrEnum):
    """How renewable fuel entered or left a party's book (§80.1428(a), §80.1426(c)(2)-(3))."""

    RECEIVED = "received"
    DELIVERED = "delivered"
    PRODUCED = "produced"  # made without RINs, by a small or new producer
