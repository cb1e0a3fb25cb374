"""EMTS reason codes for separation, retirement and trade (reference.md §5), and the ledger's
words for them.

A command may name a reason by the ledger's word (`blending`), by the EMTS code (20) or by the
code as text ("20"). The code lists come from third-party copies of EMTS's lists, not from the
regulation; the rules that refuse an unknown reason are in `ledger.rules.s1429_separation`
(§80.1429(b)) and `ledger.rules.s1434_retirement` (§80.1434(a)).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar


class SeparationWord(StrEnum):
    """The ledger's word for a separation reason, as commands name it and events store it."""

    OBLIGATED_PARTY = "obligated_party"
    BLENDING = "blending"
    NEAT_USE = "neat_use"
    BIOGAS_ELECTRICITY = "biogas_electricity"
    UPSTREAM_DELEGATION = "upstream_delegation"
    EXPORT = "export"
    HEATING_OIL_JET = "heating_oil_jet"
    NONROAD = "nonroad"
    DESIGNATED_HEATING_OIL_JET = "designated_heating_oil_jet"
    DELAYED = "delayed"
    SMALL_REFINER = "small_refiner"
    REPLACEMENT = "replacement"


class RetirementWord(StrEnum):
    """The ledger's word for a retirement reason, as commands name it and events store it."""

    SPILL = "spill"
    CONTAMINATED = "contaminated"
    IMPORT_CORRECTION = "import_correction"
    OCEAN_VESSEL = "ocean_vessel"
    INVALID_RIN = "invalid_rin"
    VOLUME_ERROR = "volume_error"
    ENFORCEMENT = "enforcement"
    COMPLIANCE = "compliance"
    NON_QUALIFYING_USE = "non_qualifying_use"
    DELAYED_RIN = "delayed_rin"
    REMEDIAL_INVALID = "remedial_invalid"
    REMEDIAL_COMPLIANCE = "remedial_compliance"


class TradeReason(StrEnum):
    """EMTS buy/sell reasons a recorded transfer carries (reference.md §5); deny (050) and cancel
    (060) are outcomes of a submission in EMTS, not reasons a recorded transfer can carry."""

    STANDARD = "standard"
    REMEDIAL_PARTNER = "remedial_partner"
    REMEDIAL_DUPLICATE = "remedial_duplicate"
    TOLLING = "tolling"
    INTRA_COMPANY = "intra_company"


#: EMTS buy/sell reason code of each trade reason (reference.md §5)
TRADE_REASONS: dict[TradeReason, int] = {
    TradeReason.STANDARD: 10,
    TradeReason.REMEDIAL_PARTNER: 30,
    TradeReason.REMEDIAL_DUPLICATE: 80,
    TradeReason.TOLLING: 110,
    TradeReason.INTRA_COMPANY: 120,
}


@dataclass(frozen=True)
class SeparationReason:
    """Why a RIN was separated: EMTS code (None where EMTS has none of its own), the ledger's word,
    a human name and the §80.1429(b) paragraph (or §80.1426(g) for delayed RINs) it rests on."""

    code: int | None
    word: SeparationWord
    name: str
    paragraph: str


@dataclass(frozen=True)
class RetirementReason:
    """Why a RIN was retired: EMTS code, the ledger's word, a human name, and the paragraph it
    rests on where reference.md or the excerpts name one (None otherwise)."""

    code: int
    word: RetirementWord
    name: str
    paragraph: str | None


# Listed in code order; where two words share a code, the first is what that code names.
SEPARATION_REASONS: tuple[SeparationReason, ...] = (
    SeparationReason(
        10, SeparationWord.OBLIGATED_PARTY,
        "obligated party receives fuel",
        "§80.1429(b)(1)",
    ),
    SeparationReason(
        20, SeparationWord.BLENDING,
        "blending into transportation fuel",
        "§80.1429(b)(2)",
    ),
    SeparationReason(
        30,
        SeparationWord.NEAT_USE,
        "designated as transportation fuel without blending",
        "§80.1429(b)(4)",
    ),
    # Biogas and electricity are separated when designated and used as transportation fuel
    # without blending, which is what EMTS code 30 describes; reference.md gives them no code of
    # their own, so they share 30 and code 30 alone reads as `neat_use`.
    SeparationReason(
        30,
        SeparationWord.BIOGAS_ELECTRICITY,
        "biogas or electricity designated and used as transportation fuel",
        "§80.1429(b)(5)",
    ),
    # Upstream delegation, heating oil / jet fuel use and non-road use (EMTS 40, 60, 70) are
    # separations on blending; EMTS does not say which paragraph, the ledger reads (b)(2).
    SeparationReason(
        40, SeparationWord.UPSTREAM_DELEGATION, "upstream delegation for blending",
        "§80.1429(b)(2)",
    ),
    SeparationReason(50, SeparationWord.EXPORT, "export", "§80.1429(b)(3)"),
    SeparationReason(
        60, SeparationWord.HEATING_OIL_JET,
        "use as heating oil or jet fuel",
        "§80.1429(b)(2)",
    ),
    SeparationReason(70, SeparationWord.NONROAD, "use in non-road engines", "§80.1429(b)(2)"),
    SeparationReason(
        80,
        SeparationWord.DESIGNATED_HEATING_OIL_JET,
        "designated as heating oil or jet fuel without blending",
        "§80.1429(b)(4)",
    ),
    SeparationReason(90, SeparationWord.DELAYED, "delayed RINs", "§80.1426(g)"),
    # No EMTS code in reference.md: a small refiner's or a replacement separation is reported
    # under the code of what was done with the fuel, which the word alone does not tell.
    SeparationReason(
        None, SeparationWord.SMALL_REFINER,
        "small refiner or small refinery separation", "§80.1429(b)(8)"
    ),
    SeparationReason(
        None, SeparationWord.REPLACEMENT,
        "separation to replace invalid RINs",
        "§80.1429(b)(10)",
    ),
)

RETIREMENT_REASONS: tuple[RetirementReason, ...] = (
    RetirementReason(10, RetirementWord.SPILL, "reported spill", None),
    RetirementReason(20, RetirementWord.CONTAMINATED, "contaminated or spoiled fuel", None),
    RetirementReason(30, RetirementWord.IMPORT_CORRECTION, "import volume correction", None),
    RetirementReason(40, RetirementWord.OCEAN_VESSEL, "used in an ocean-going vessel", None),
    RetirementReason(50, RetirementWord.INVALID_RIN, "invalid RIN", "§80.1431"),
    RetirementReason(60, RetirementWord.VOLUME_ERROR, "volume error correction", None),
    RetirementReason(70, RetirementWord.ENFORCEMENT, "enforcement obligation", None),
    RetirementReason(
        80, RetirementWord.COMPLIANCE,
        "demonstrate annual compliance",
        "§80.1427(a)(1)",
    ),
    RetirementReason(90, RetirementWord.NON_QUALIFYING_USE, "non-qualifying use", None),
    RetirementReason(100, RetirementWord.DELAYED_RIN, "delayed-RIN retirement", "§80.1426(g)(5)"),
    RetirementReason(110, RetirementWord.REMEDIAL_INVALID, "remedial retirement", "§80.1431(c)"),
    RetirementReason(
        120, RetirementWord.REMEDIAL_COMPLIANCE,
        "remedial, retire for compliance",
        None,
    ),
)

_Reason = TypeVar("_Reason", SeparationReason, RetirementReason)


def find_reason(reasons: tuple[_Reason, ...], value: str | int) -> _Reason | None:
    """The first reason whose word or EMTS code is `value` (a word, a code, or the code as text:
    "20", "020"); None when no reason is named so."""
    code = _as_code(value)
    for reason in reasons:
        if reason.word == value or (code is not None and reason.code == code):
            return reason
    return None


def unknown(kind: str, value: str | int, reasons: tuple[_Reason, ...]) -> str:
    """What to say of a `kind` reason (separation, retirement) that names none of `reasons`."""
    return f"unknown {kind} reason {value!r}; known: {', '.join(r.word for r in reasons)}"


def _as_code(value: str | int) -> int | None:
    """An EMTS code given as an int or as digits ("20", "020"); None for a word."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if value.isascii() and value.isdigit() else None
