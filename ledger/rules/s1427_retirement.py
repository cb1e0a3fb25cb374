"""Who retires for compliance and for which year (§80.1427(a)(1), (c)(1))."""

from __future__ import annotations

from ledger.rules.catalogue import rule

RETIRE_YEAR = rule(
    "RETIRE-YEAR", "§80.1427(a)(1)",
    "a compliance retirement names the compliance year it is applied to; other reasons do not",
)
RETIRE_OBLIGATED = rule(
    "RETIRE-OBLIGATED", "§80.1427(a)(1)",
    "only an obligated party (or an exporter for its ERVOs, (c)(1)) retires RINs for compliance",
)

#: reasons that apply RINs to a compliance year (80 compliance, 110/120 remedial)
YEAR_REASONS = frozenset({"compliance", "remedial_invalid", "remedial_compliance"})


def check_retirement_year(reason: str, compliance_year: int | None, category: str | None) -> None:
    if reason == "compliance":
        RETIRE_YEAR.check(
            compliance_year is not None, "retirement for compliance needs compliance_year",
            "compliance_year",
        )
    elif reason not in YEAR_REASONS:
        RETIRE_YEAR.check(
            compliance_year is None and category is None,
            f"a retirement for {reason} takes no compliance_year or category",
            "compliance_year" if compliance_year is not None else "category",
        )


def check_retirer(party: str, roles: list[str]) -> None:
    """Compliance retirements meet an obligated party's RVOs (§80.1427(a)(1)) or an exporter's ERVOs
    (§80.1427(c)(1)).
    """
    RETIRE_OBLIGATED.check(
        bool({"obligated_party", "exporter"} & set(roles)),
        f"party {party} is registered as {', '.join(roles)}, not as an obligated party or exporter",
        "party",
    )
