"""Retiring RINs (§80.1434): a RIN is retired only in one of the listed cases.

The excerpts hold no list of retirement reasons; §80.1434(a) (eCFR: "A RIN must be retired in
any of the following cases") is the paragraph that does, so an unknown reason is refused under
it, and §80.1427(a)(1) is cited only for the compliance reason itself.
"""

from __future__ import annotations

from ledger.domain.emts import RETIREMENT_REASONS, RetirementReason, find_reason, unknown
from ledger.rules.catalogue import Rule

EMTS_RETIREMENT_REASON = Rule(
    "EMTS-RETIREMENT-REASON",
    "§80.1434(a)",
    "a RIN is retired only for a listed reason, named by a known word or EMTS retirement "
    "reason code",
)
RULES = (EMTS_RETIREMENT_REASON,)


def retirement_reason(value: str | int) -> RetirementReason:
    """The retirement reason named by a word, an EMTS code, or the code as text; refused unless
    it is one of the listed cases (§80.1434(a))."""
    return EMTS_RETIREMENT_REASON.require(
        find_reason(RETIREMENT_REASONS, value),
        unknown("retirement", value, RETIREMENT_REASONS),
        "reason",
    )
