"""The basis a compliance retirement is for (§80.1451(a)(1)(iii)-(iv)): a domestic refiner
complies on a corporate (aggregate) or a facility-by-facility basis, and names the EPA facility
registration number when it complies by facility. EMTS carries both on a retirement for
compliance (ComplianceLevelCode, ComplianceFacilityIdentifier; reference.md §8).
"""

from __future__ import annotations

from ledger.rules.catalogue import Rule

FACILITY = "facility"
AGGREGATE = "aggregate"

RETIRE_LEVEL = Rule(
    "RETIRE-LEVEL", "§80.1451(a)(1)(iii)-(iv)",
    "`compliance_level` (facility or aggregate) is given only on a retirement for compliance; "
    "`facility` needs `compliance_facility`, one of the retiring party's registered facilities; "
    "`aggregate` takes none",
)
RULES = (RETIRE_LEVEL,)


def check_compliance_level(party: str, reason: str, level: str | None, facility: str | None,
                           facilities: list[str]) -> None:
    """§80.1451(a)(1)(iii)-(iv): the basis, and the facility when it is facility-by-facility."""
    if level is None and facility is None:
        return
    RETIRE_LEVEL.check(
        reason == "compliance",
        f"a retirement for {reason} is for no compliance basis; compliance_level and "
        "compliance_facility go with reason compliance",
        "compliance_level" if level is not None else "compliance_facility",
    )
    RETIRE_LEVEL.check(
        level is not None, "compliance_facility is given only with compliance_level facility",
        "compliance_level",
    )
    if level == AGGREGATE:
        RETIRE_LEVEL.check(
            facility is None, "a corporate (aggregate) basis names no compliance_facility",
            "compliance_facility",
        )
        return
    RETIRE_LEVEL.check(
        facility is not None,
        "complying facility-by-facility needs the EPA facility registration number",
        "compliance_facility",
    )
    RETIRE_LEVEL.check(
        facility in facilities,
        f"facility {facility} is not registered to party {party} "
        f"(registered: {', '.join(facilities) or 'none'})", "compliance_facility",
    )
