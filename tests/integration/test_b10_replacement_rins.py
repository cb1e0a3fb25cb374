"""§80.1429(b)(10): RINs a producer separates to replace invalid RINs are only retired for that
replacement (§80.1474): a transfer of them, or a retirement for another reason, is refused.

Each test failed on the code before this change (the line was applied)."""

from __future__ import annotations

from test_ledger_rules import ETHANOL, ledger, ok, refused, retire, rins, separate

from ledger import Ledger

__all__ = ["ledger"]  # the fixture, used by name

RULE, CITATION = "SEP-REPLACEMENT-ONLY", "§80.1429(b)(10)"
# 1001's E0001 (10,000 D6 gallon-RINs): serials 1-4,000 separated under (b)(10) (FIFO), then
# 4,001-5,000 for blending; K becomes 2 with the same serials
RESERVED = "2" + ETHANOL[1:22] + "00000001" "00004000"
BLENDED = "2" + ETHANOL[1:22] + "00004001" "00005000"
TAIL = (" were separated under (b)(10) to replace invalid RINs; they are retired for that "
        "replacement (reason remedial_invalid, §80.1474), not ")


def b10_and_blended(ledger: Ledger) -> None:
    ok(ledger, **separate("1001", "replacement", rins(6, 1, 4_000)))
    # blending: 1,000 RINs ≤ 2.5 × 1,000 gal of the 10,000 gal 1001 made (§80.1429(b)(2))
    ok(ledger, **separate("1001", "blending", rins(6, 1, 1_000), volume=1_000))


def test_b10_rins_are_not_transferred(ledger: Ledger) -> None:
    b10_and_blended(ledger)
    cmd = {"type": "transfer", "date": "2024-03-01", "from": "1001", "to": "2001"}
    refused(ledger, {**cmd, "rins": {"code": RESERVED}}, RULE, CITATION, "rins",
            f"{RESERVED}: serials 1-4,000 of batch E0001{TAIL}transferred")
    # FIFO picks the oldest K=2 serials, 1-1,000: part of the (b)(10) range
    refused(ledger, {**cmd, "rins": rins(6, 2, 1_000)}, RULE, CITATION, "rins",
            f"{RESERVED[:30]}00001000: serials 1-1,000 of batch E0001{TAIL}transferred")
    # the blending separation's 1,000 are free to move
    ok(ledger, **cmd, rins={"code": BLENDED})


def test_b10_rins_are_retired_only_to_replace_invalid_rins(ledger: Ledger) -> None:
    b10_and_blended(ledger)
    part = RESERVED[:22] + "00003001" "00004000"
    refused(ledger, retire("1001", "contaminated", {"code": part}), RULE, CITATION, "rins",
            f"{part}: serials 3,001-4,000 of batch E0001{TAIL}retired for contaminated")
    # a replacement retirement passes this rule; 1001 has no invalid RINs used to replace
    refused(ledger, retire("1001", "remedial_invalid", {"code": part}, compliance_year=2024),
            "REPLACE-NEEDED", "§80.1474(b)", "rins",
            "party 1001 has 0 invalid gallon-RINs used for 2024 left to replace, not 1,000")
    ok(ledger, **retire("1001", "contaminated", {"code": BLENDED}))
