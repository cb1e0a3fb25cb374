"""Registration (§80.1450): who may hold RINs and who may generate them, and where."""

from __future__ import annotations

from ledger.rules.catalogue import rule

ROLES = frozenset({
    "producer", "importer", "foreign_producer", "obligated_party", "refiner", "exporter",
    "blender", "small_refiner", "rin_owner",
})

REG_ROLES = rule("REG-ROLES", "§80.1450", "a party registers with known roles")
REG_DUPLICATE = rule("REG-DUPLICATE", "§80.1450", "a company id is registered once")
REG_UNREGISTERED = rule(
    "REG-UNREGISTERED", "§80.1428(b)(2)", "only a party registered under §80.1450 may own RINs"
)
REG_GENERATOR = rule(
    "REG-GENERATOR", "§80.1450(b)",
    "only a registered producer or importer generates RINs, and only at its registered facility",
)


def check_roles(roles: list[str]) -> None:
    unknown = sorted(set(roles) - ROLES)
    REG_ROLES.check(
        not unknown, f"unknown role(s) {', '.join(unknown)}; known: {', '.join(sorted(ROLES))}",
        "roles",
    )


def check_new(party: str, exists: bool) -> None:
    REG_DUPLICATE.check(not exists, f"party {party} is already registered", "party")


def check_registered(party: str, exists: bool, field: str) -> None:
    """Only a registered party owns RINs (§80.1428(b)(2))."""
    REG_UNREGISTERED.check(exists, f"party {party} is not registered", field)


def check_generator(party: str, roles: list[str], facilities: list[str], facility: str) -> None:
    """§80.1425(c)-(d): CCCC and FFFFF are the registration numbers of generator and facility.

    Generating takes both registrations (§80.1425(d), §80.1426(a)(1)(iii)).
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
