"""Invalid RINs (§80.1431): what may be found invalid, and what an invalid RIN may no longer do.

Decided from the text: §80.1431(b)(1) has a holder retire invalid RINs (EMTS 50, always
allowed); (b)(2) bars them from compliance, so they are refused for retirement reasons that apply
RINs to a compliance year. Transferring one is refused under §80.1460(b)(2) (`s1460_prohibited`),
and its replacement is §80.1474 (`s1474_replacement`). Separation is not refused: no paragraph
forbids it, and it makes no RIN valid.
"""

from __future__ import annotations

from typing import Literal

from ledger.domain.rin import BlockKey, RinBlock
from ledger.rules.catalogue import Rule

#: §80.1431(a)'s causes, as the `invalidate` command names them (a RIN sold to two parties makes
#: both invalid).
Cause = Literal[
    "duplicate", "wrong_volume", "unstandardized_volume", "expired", "wrong_ev", "wrong_d_code",
    "improperly_generated", "sold_twice",
]

INVALID_GENERATED = Rule(
    "INVALID-GENERATED", "§80.1431(a)",
    "only gallon-RINs that were generated can be found invalid: the batch exists and the "
    "serials lie within its generated range",
)
INVALID_ONCE = Rule(
    "INVALID-ONCE", "§80.1431(a)",
    "a gallon-RIN already found invalid is not invalidated again; a batch may be invalidated "
    "in several disjoint parts",
)
INVALID_USE = Rule(
    "INVALID-USE", "§80.1431(b)(2)",
    "invalid RINs cannot be used for compliance (retired for compliance, remedial compliance or "
    "as replacements), whatever the holder's good faith",
)
RULES = (INVALID_GENERATED, INVALID_ONCE, INVALID_USE)


def check_generated(
    batch: str, generated: RinBlock | None, named: BlockKey, start: int, end: int
) -> None:
    """Only generated gallon-RINs are found invalid (§80.1431(a)): the batch was `generated`, the
    code `named` carries its RR and D, and S..E lie within it."""
    INVALID_GENERATED.check(generated is not None, f"batch {batch} was never generated", "rin")
    assert generated is not None
    have, want = (named.rr, named.d_code), (generated.key.rr, generated.key.d_code)
    INVALID_GENERATED.check(
        have == want,
        f"batch {batch} was generated with RR {want[0]:02d} and D{want[1]}, not RR {have[0]:02d} "
        f"and D{have[1]}",
        "rin",
    )
    INVALID_GENERATED.check(
        generated.start <= start and end <= generated.end,
        f"serials {start:,}-{end:,} are outside the {generated.gallon_rins:,} gallon-RINs "
        f"batch {batch} was generated with ({generated.start:,}-{generated.end:,})",
        "rin",
    )


def check_not_yet_invalid(batch: str, already: int, start: int, end: int) -> None:
    """A gallon-RIN already found invalid is not found invalid again (§80.1431(a))."""
    INVALID_ONCE.check(
        already == 0,
        f"{already:,} of the serials {start:,}-{end:,} of batch {batch} are already invalid",
        "rin",
    )


def check_usable(invalid: int, code: str, reason: str) -> None:
    """Refuse a block with `invalid` invalid gallon-RINs for a retirement of `reason`, one that
    applies RINs to a compliance year (§80.1431(b)(2))."""
    INVALID_USE.check(
        invalid == 0,
        f"{invalid:,} gallon-RINs of {code} are invalid and cannot be retired for {reason}; "
        "retire them as invalid_rin",
        "rins",
    )
