"""RINs separated to replace invalid RINs (§80.1429(b)(10)) are held for that replacement only.

A producer may separate RINs it generated only "if those RINs are retired to replace invalid
RINs" under §80.1474: such RINs are never transferred, nor retired for another reason.
"""

from __future__ import annotations

from ledger.domain.rin import RinBlock
from ledger.rules.catalogue import rule

SEP_REPLACEMENT_ONLY = rule(
    "SEP-REPLACEMENT-ONLY", "§80.1429(b)(10)",
    "RINs separated under (b)(10) are only retired to replace invalid RINs (§80.1474, EMTS "
    "reason 110): they are never transferred, nor retired for another reason",
)
#: the retirement reason that replaces invalid RINs (§80.1474(b))
REPLACEMENT_RETIREMENT = "remedial_invalid"


def check_replacement_use(reserved: list[RinBlock], blocks: list[RinBlock], use: str) -> None:
    """§80.1429(b)(10): refuse `use` (a transfer, or a retirement for another reason) of any
    serial of `blocks` that the party separated under (b)(10) (`reserved`)."""
    for block in blocks:
        for held in reserved:
            low, high = max(block.start, held.start), min(block.end, held.end)
            SEP_REPLACEMENT_ONLY.check(
                held.key.batch_id != block.key.batch_id or low > high,
                f"{block.code}: serials {low:,}-{high:,} of batch {block.key.batch} were "
                f"separated under (b)(10) to replace invalid RINs; they are retired for that "
                f"replacement (reason {REPLACEMENT_RETIREMENT}, §80.1474), not {use}",
                "rins",
            )
