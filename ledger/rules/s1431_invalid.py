"""Invalid RINs (§80.1431) and their replacement (§80.1474): what may be found invalid, what an
invalid RIN may no longer do, and what a remedial retirement (EMTS 110) must be.

Decided from the text: §80.1431(b)(1) has a holder retire invalid RINs (EMTS 50, always
allowed); (b)(2) bars them from compliance, so they are refused for retirement reasons that apply
RINs to a compliance year; §80.1460(b)(2) forbids transferring an invalid RIN, so transfers are
refused. Separation is not refused: no paragraph forbids it, and it makes no RIN valid.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from ledger.domain.rin import BlockKey, RinBlock
from ledger.rules.catalogue import rule
from ledger.rules.s1407_obligations import Category
from ledger.rules.s1427_compliance import valid_for

#: §80.1431(a)'s causes, as the `invalidate` command names them (a RIN sold to two parties makes
#: both invalid).
Cause = Literal[
    "duplicate", "wrong_volume", "unstandardized_volume", "expired", "wrong_ev", "wrong_d_code",
    "improperly_generated", "sold_twice",
]

INVALID_GENERATED = rule(
    "INVALID-GENERATED", "§80.1431(a)",
    "only gallon-RINs that were generated can be found invalid: the batch exists and the "
    "serials lie within its generated range",
)
INVALID_ONCE = rule(
    "INVALID-ONCE", "§80.1431(a)",
    "a gallon-RIN already found invalid is not invalidated again; a batch may be invalidated "
    "in several disjoint parts",
)
INVALID_USE = rule(
    "INVALID-USE", "§80.1431(b)(2)",
    "invalid RINs cannot be used for compliance (retired for compliance, remedial compliance or "
    "as replacements), whatever the holder's good faith",
)
INVALID_TRANSFER = rule(
    "INVALID-TRANSFER", "§80.1460(b)(2)",
    "no person may transfer an invalid RIN; its holder retires it as an invalid RIN (EMTS 50, "
    "§80.1431(b)(1))",
)
REPLACE_NEEDED = rule(
    "REPLACE-NEEDED", "§80.1474(b)",
    "a remedial retirement (EMTS 110) replaces invalid RINs the party used for compliance in "
    "that year, at most as many as are not yet replaced",
)
REPLACE_D_CODE = rule(
    "REPLACE-D-CODE", "§80.1474(b)",
    "a replacement RIN's D code is valid for every RVO the invalid RINs it replaces were "
    "applied to (§80.1427(a)(2))",
)


def check_generated(
    batch: str, generated: RinBlock | None, named: BlockKey, start: int, end: int
) -> None:
    """The batch was `generated`, the code `named` carries its RR and D, and S..E lie within it."""
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
    INVALID_ONCE.check(
        already == 0,
        f"{already:,} of the serials {start:,}-{end:,} of batch {batch} are already invalid",
        "rin",
    )


def check_usable(invalid: int, code: str, reason: str) -> None:
    """Refuse a block with `invalid` invalid gallon-RINs for a retirement of `reason`."""
    INVALID_USE.check(
        invalid == 0,
        f"{invalid:,} gallon-RINs of {code} are invalid and cannot be retired for {reason}; "
        "retire them as invalid_rin",
        "rins",
    )


def check_transferable(invalid: int, code: str) -> None:
    INVALID_TRANSFER.check(
        invalid == 0,
        f"{invalid:,} gallon-RINs of {code} are invalid and cannot be transferred; "
        "retire them as invalid_rin",
        "rins",
    )


def check_replacement_needed(
    party: str, year: int | None, outstanding: int, quantity: int
) -> None:
    """`outstanding` = invalid gallon-RINs used for `year` − those already replaced."""
    REPLACE_NEEDED.check(
        year is not None,
        "a remedial_invalid retirement names the compliance year whose invalid RINs it replaces",
        "compliance_year",
    )
    REPLACE_NEEDED.check(
        quantity <= outstanding,
        f"party {party} has {outstanding:,} invalid gallon-RINs used for {year} left to replace, "
        f"not {quantity:,}",
        "rins",
    )


def replacement_d_codes(categories: Iterable[Category]) -> list[str]:
    """The D codes (D7 with its designation) valid for every one of `categories`."""
    needed = set(categories)
    options = [(d, None) for d in (3, 4, 5, 6)] + [(7, Category.CB), (7, Category.BBD)]
    return [
        f"D{d}" if designation is None else f"D{d}-{designation}"
        for d, designation in options
        if needed <= valid_for(d, designation)
    ]


def check_replacement_d_code(
    d_code: int, counts_toward: Iterable[Category], categories: Iterable[Category]
) -> None:
    """A replacement of `d_code` counting toward `counts_toward` covers every one of `categories`
    the invalid RINs were applied to."""
    needed, covered = set(categories), set(counts_toward)
    missing = [c.value for c in Category if c in needed and c not in covered]
    REPLACE_D_CODE.check(
        not missing,
        f"a D{d_code} RIN is not valid for {', '.join(missing)}, which the invalid RINs were "
        f"applied to; valid replacements: {', '.join(replacement_d_codes(needed))}",
        "rins",
    )
