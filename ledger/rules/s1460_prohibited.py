"""Prohibited acts (§80.1460): what no person may do with a RIN.

Of the prohibitions the ledger can see, one: transferring an invalid RIN (§80.1460(b)(2)).
"""

from __future__ import annotations

from ledger.rules.catalogue import Rule

INVALID_TRANSFER = Rule(
    "INVALID-TRANSFER", "§80.1460(b)(2)",
    "no person may transfer an invalid RIN; its holder retires it as an invalid RIN (EMTS 50, "
    "§80.1431(b)(1))",
)
RULES = (INVALID_TRANSFER,)


def check_transferable(invalid: int, code: str) -> None:
    """No person transfers an invalid RIN (§80.1460(b)(2)): refuse a block with `invalid` invalid
    gallon-RINs."""
    INVALID_TRANSFER.check(
        invalid == 0,
        f"{invalid:,} gallon-RINs of {code} are invalid and cannot be transferred; "
        "retire them as invalid_rin",
        "rins",
    )
