"""EMTS reason codes for separation and retirement (reference.md §5), and the ledger's words.

A command may name a reason by the ledger's word (`blending`), by the EMTS code (20) or by the
code as text ("20"). The code lists come from third-party copies of EMTS's lists, not from the
regulation, so an unknown reason is refused under the paragraph that limits the reasons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from ledger.rules.catalogue import Rule, rule

EMTS_SEPARATION_REASON = rule(
    "EMTS-SEPARATION-REASON",
    "§80.1429(b)",
    "a RIN is separated only under one of §80.1429(b)(1)-(b)(10), named by a known word or "
    "EMTS separation reason code",
)
# The excerpts hold no list of retirement reasons. §80.1434(a) (eCFR: "A RIN must be retired in
# any of the following cases") is the paragraph that does, so an unknown reason is refused under
# it; §80.1427(a)(1) is cited only for the compliance reason itself.
EMTS_RETIREMENT_REASON = rule(
    "EMTS-RETIREMENT-REASON",
    "§80.1434(a)",
    "a RIN is retired only for a listed reason, named by a known word or EMTS retirement "
    "reason code",
)


@dataclass(frozen=True)
class SeparationReason:
    """Why a RIN was separated: EMTS code (None where EMTS has none of its own), the ledger's word,
    a human name and the §80.1429(b) paragraph (or §80.1426(g) for delayed RINs) it rests on."""

    code: int | None
    word: str
    name: str
    paragraph: str


@dataclass(frozen=True)
class RetirementReason:
    """Why a RIN was retired: EMTS code, the ledger's word, a human name, and the paragraph it
    rests on where reference.md or the excerpts name one (None otherwise)."""

    code: int
    word: str
    name: str
    paragraph: str | None


# Listed in code order; where two words share a code, the first is what that code names.
SEPARATION_REASONS: tuple[SeparationReason, ...] = (
    SeparationReason(10, "obligated_party", "obligated party receives fuel", "§80.1429(b)(1)"),
    SeparationReason(20, "blending", "blending into transportation fuel", "§80.1429(b)(2)"),
    SeparationReason(
        30,
        "neat_use",
        "designated as transportation fuel without blending",
        "§80.1429(b)(4)",
    ),
    # Biogas and electricity are separated when designated and used as transportation fuel
    # without blending, which is what EMTS code 30 describes; reference.md gives them no code of
    # their own, so they share 30 and code 30 alone reads as `neat_use`.
    SeparationReason(
        30,
        "biogas_electricity",
        "biogas or electricity designated and used as transportation fuel",
        "§80.1429(b)(5)",
    ),
    # Upstream delegation, heating oil / jet fuel use and non-road use (EMTS 40, 60, 70) are
    # separations on blending; EMTS does not say which paragraph, the ledger reads (b)(2).
    SeparationReason(
        40, "upstream_delegation", "upstream delegation for blending", "§80.1429(b)(2)"
    ),
    SeparationReason(50, "export", "export", "§80.1429(b)(3)"),
    SeparationReason(60, "heating_oil_jet", "use as heating oil or jet fuel", "§80.1429(b)(2)"),
    SeparationReason(70, "nonroad", "use in non-road engines", "§80.1429(b)(2)"),
    SeparationReason(
        80,
        "designated_heating_oil_jet",
        "designated as heating oil or jet fuel without blending",
        "§80.1429(b)(4)",
    ),
    SeparationReason(90, "delayed", "delayed RINs", "§80.1426(g)"),
    # No EMTS code in reference.md: a small refiner's or a replacement separation is reported
    # under the code of what was done with the fuel, which the word alone does not tell.
    SeparationReason(
        None, "small_refiner", "small refiner or small refinery separation", "§80.1429(b)(8)"
    ),
    SeparationReason(None, "replacement", "separation to replace invalid RINs", "§80.1429(b)(10)"),
)

RETIREMENT_REASONS: tuple[RetirementReason, ...] = (
    RetirementReason(10, "spill", "reported spill", None),
    RetirementReason(20, "contaminated", "contaminated or spoiled fuel", None),
    RetirementReason(30, "import_correction", "import volume correction", None),
    RetirementReason(40, "ocean_vessel", "used in an ocean-going vessel", None),
    RetirementReason(50, "invalid_rin", "invalid RIN", "§80.1431"),
    RetirementReason(60, "volume_error", "volume error correction", None),
    RetirementReason(70, "enforcement", "enforcement obligation", None),
    RetirementReason(80, "compliance", "demonstrate annual compliance", "§80.1427(a)(1)"),
    RetirementReason(90, "non_qualifying_use", "non-qualifying use", None),
    RetirementReason(100, "delayed_rin", "delayed-RIN retirement", "§80.1426(g)(5)"),
    RetirementReason(110, "remedial_invalid", "remedial retirement", "§80.1431(c)"),
    RetirementReason(120, "remedial_compliance", "remedial, retire for compliance", None),
)

#: EMTS buy/sell reason codes for a trade (reference.md §5); deny (050) and cancel (060) are
#: outcomes of a submission in EMTS, not reasons a recorded transfer can carry.
TRADE_REASONS: dict[str, int] = {
    "standard": 10,
    "remedial_partner": 30,
    "remedial_duplicate": 80,
    "tolling": 110,
    "intra_company": 120,
}

_Reason = TypeVar("_Reason", SeparationReason, RetirementReason)


def separation_reason(value: str | int) -> SeparationReason:
    """The separation reason named by a word, an EMTS code, or the code as text (§80.1429(b)).

    No assigned RIN is separated but under §80.1429 (§80.1428(a)(2)).
    """
    return _lookup(SEPARATION_REASONS, value, EMTS_SEPARATION_REASON, "separation")


def retirement_reason(value: str | int) -> RetirementReason:
    """The retirement reason named by a word, an EMTS code, or the code as text (§80.1434(a))."""
    return _lookup(RETIREMENT_REASONS, value, EMTS_RETIREMENT_REASON, "retirement")


def _lookup(reasons: tuple[_Reason, ...], value: str | int, violated: Rule, kind: str) -> _Reason:
    """The first reason whose word or code is `value`; else `violated`, listing the known words."""
    code = _as_code(value)
    for reason in reasons:
        if reason.word == value or (code is not None and reason.code == code):
            return reason
    words = ", ".join(reason.word for reason in reasons)
    raise violated.violation(f"unknown {kind} reason {value!r}; known: {words}", "reason")


def _as_code(value: str | int) -> int | None:
    """An EMTS code given as an int or as digits ("20", "020"); None for a word."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if value.isascii() and value.isdigit() else None
