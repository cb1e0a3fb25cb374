"""Replacing invalid RINs (§80.1474): a remedial retirement (EMTS 110) replaces invalid RINs a
party used for compliance, as many as are not yet replaced, with RINs valid for every RVO the
invalid ones were applied to.
"""

from __future__ import annotations

from collections.abc import Iterable

from ledger.rules.catalogue import Rule
from ledger.rules.s1407_obligations import Category
from ledger.rules.s1427_compliance import valid_for

REPLACE_NEEDED = Rule(
    "REPLACE-NEEDED", "§80.1474(b)",
    "a remedial retirement (EMTS 110) replaces invalid RINs the party used for compliance in "
    "that year, at most as many as are not yet replaced",
)
REPLACE_D_CODE = Rule(
    "REPLACE-D-CODE", "§80.1474(b)",
    "a replacement RIN's D code is valid for every RVO the invalid RINs it replaces were "
    "applied to (§80.1427(a)(2))",
)
RULES = (REPLACE_NEEDED, REPLACE_D_CODE)


def check_replacement_needed(
    party: str, year: int | None, outstanding: int, quantity: int
) -> None:
    """A remedial retirement replaces at most the invalid RINs used for `year` and not yet
    replaced (§80.1474(b)): `outstanding` = invalid gallon-RINs used for `year` − those replaced."""
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
    the invalid RINs were applied to (§80.1474(b), §80.1427(a)(2))."""
    needed, covered = set(categories), set(counts_toward)
    missing = [c.value for c in Category if c in needed and c not in covered]
    REPLACE_D_CODE.check(
        not missing,
        f"a D{d_code} RIN is not valid for {', '.join(missing)}, which the invalid RINs were "
        f"applied to; valid replacements: {', '.join(replacement_d_codes(needed))}",
        "rins",
    )
