"""Registration (§80.1450): who registers with which roles, and who may generate RINs, where.

That only a registered party owns RINs is §80.1428(b)(2), in `s1428_rins`.
"""

from __future__ import annotations

from ledger.rules.catalogue import Rule

ROLES = frozenset({
    "producer", "importer", "foreign_producer", "obligated_party", "refiner", "exporter",
    "blender", "small_refiner", "rin_owner",
    "qap_auditor", "regulator", "broker",  # release 2 (design.md "New roles")
})

REG_ROLES = Rule("REG-ROLES", "§80.1450", "a party registers with known roles")
REG_DUPLICATE = Rule("REG-DUPLICATE", "§80.1450", "a company id is registered once")
REG_GENERATOR = Rule(
    "REG-GENERATOR", "§80.1450(b)",
    "only a registered producer or importer generates RINs, and only at its registered facility",
)
RULES = (REG_ROLES, REG_DUPLICATE, REG_GENERATOR)


def check_roles(roles: list[str]) -> None:
    """A party registers with roles the ledger knows (§80.1450)."""
    unknown = sorted(set(roles) - ROLES)
    REG_ROLES.check(
        not unknown, f"unknown role(s) {', '.join(unknown)}; known: {', '.join(sorted(ROLES))}",
        "roles",
    )


def check_new(party: str, exists: bool) -> None:
    """A company id is registered once (§80.1450)."""
    REG_DUPLICATE.check(not exists, f"party {party} is already registered", "party")


def check_generator(party: str, roles: list[str], facilities: list[str], facility: str) -> None:
    """§80.1425(c)-(d): CCCC and FFFFF are the registration numbers of generator and facility.

    Generating takes both registrations (§80.1450(b), §80.1425(d), §80.1426(a)(1)(iii)).
    """
    REG_GENERATOR.check(
        bool({"producer", "importer"} & set(roles)),
        f"party {party} is registered as {', '.join(roles)}, not as a producer or importer",
        "party",
    )
    REG_GENERATOR.check(
        facility in facilities,
        f"facility {facility} is not registered to party {party} "
        f"(registered: {', '.join(facilities) or 'none'})",
        "facility",
    )
