"""RIN identity (§80.1425): the rules of the 38-character batch-RIN code
KYYYYCCCCFFFFFBBBBBRRDSSSSSSSSEEEEEEEE, field by field, and of batch numbers.

`ledger.domain.rin` parses codes into value objects; it calls `check_code` here first.
"""

from __future__ import annotations

import re

from ledger.rules.catalogue import Rule

MAX_SERIAL = 99_999_999  # SSSSSSSS and EEEEEEEE are 8 digits (§80.1425(h)-(i))
D_CODES = (3, 4, 5, 6, 7)  # §80.1425(g)

RIN_FORMAT = Rule(
    "RIN-FORMAT", "§80.1425",
    "a batch-RIN code is 38 characters in the order KYYYYCCCCFFFFFBBBBBRRDSSSSSSSSEEEEEEEE",
)
RIN_K = Rule("RIN-K", "§80.1425(a)", "K is 1 (assigned) or 2 (separated)")
RIN_YEAR = Rule("RIN-YEAR", "§80.1425(b)", "YYYY is the calendar year the RIN was generated")
RIN_COMPANY = Rule(
    "RIN-COMPANY", "§80.1425(c)",
    "CCCC is the 4-digit registration number of the producer or importer",
)
RIN_FACILITY = Rule(
    "RIN-FACILITY", "§80.1425(d)", "FFFFF is the 5-digit registration number of the facility"
)
RIN_BATCH = Rule("RIN-BATCH", "§80.1425(e)", "BBBBB is a 5-character batch number")
RIN_BATCH_UNIQUE = Rule(
    "RIN-BATCH-UNIQUE", "§80.1425(e)",
    "no two batches of a producer or importer have the same BBBBB in a calendar year",
)
RIN_RR = Rule("RIN-RR", "§80.1425(f)", "RR is 10 times the equivalence value, two digits")
RIN_D = Rule("RIN-D", "§80.1425(g)", "D is 3, 4, 5, 6 or 7")
RIN_SERIALS = Rule(
    "RIN-SERIALS", "§80.1425(h)-(i)", "SSSSSSSS and EEEEEEEE are 8-digit serials with 1 <= S <= E"
)
RULES = (
    RIN_FORMAT, RIN_K, RIN_YEAR, RIN_COMPANY, RIN_FACILITY, RIN_BATCH, RIN_BATCH_UNIQUE, RIN_RR,
    RIN_D, RIN_SERIALS,
)

_BATCH_RE = re.compile(r"[0-9A-Z]{5}")


def check_code(code: object, field: str = "rin") -> None:
    """Refuse a batch-RIN code under the §80.1425 rule of its first wrong field.

    Its length and characters §80.1425; K §80.1425(a), YYYY §80.1425(b), CCCC §80.1425(c), FFFFF
    §80.1425(d), BBBBB §80.1425(e), RR §80.1425(f), D §80.1425(g), SSSSSSSS §80.1425(h) and
    EEEEEEEE §80.1425(i).
    """
    if not isinstance(code, str) or len(code) != 38:
        got = len(code) if isinstance(code, str) else type(code).__name__
        raise RIN_FORMAT.violation(f"a batch-RIN is 38 characters, got {got}", field)
    RIN_FORMAT.check(code.isascii(), "a batch-RIN has ASCII digits and capitals only", field)
    k, yyyy, cccc, fffff = code[0], code[1:5], code[5:9], code[9:14]
    bbbbb, rr, d, ssss, eeee = code[14:19], code[19:21], code[21], code[22:30], code[30:38]
    RIN_K.check(k in ("1", "2"), f"K must be 1 or 2, got {k!r}", f"{field}.K")
    RIN_YEAR.check(
        yyyy.isdigit() and 2008 <= int(yyyy) <= 2099,
        f"YYYY must be a year 2008-2099, got {yyyy!r}",
        f"{field}.YYYY",
    )
    RIN_COMPANY.check(cccc.isdigit(), f"CCCC must be 4 digits, got {cccc!r}", f"{field}.CCCC")
    RIN_FACILITY.check(
        fffff.isdigit(), f"FFFFF must be 5 digits, got {fffff!r}", f"{field}.FFFFF"
    )
    RIN_BATCH.check(
        bool(_BATCH_RE.fullmatch(bbbbb)),
        f"BBBBB must be 5 digits or capital letters, got {bbbbb!r}",
        f"{field}.BBBBB",
    )
    RIN_RR.check(rr.isdigit() and int(rr) >= 1, f"RR must be 01-99, got {rr!r}", f"{field}.RR")
    RIN_D.check(d.isdigit() and int(d) in D_CODES, f"D must be 3-7, got {d!r}", f"{field}.D")
    RIN_SERIALS.check(
        ssss.isdigit(), f"SSSSSSSS must be 8 digits, got {ssss!r}", f"{field}.SSSSSSSS"
    )
    RIN_SERIALS.check(
        eeee.isdigit(), f"EEEEEEEE must be 8 digits, got {eeee!r}", f"{field}.EEEEEEEE"
    )
    check_serials(int(ssss), int(eeee), field)


def check_serials(start: int, end: int, field: str = "rin") -> None:
    """SSSSSSSS is at least 1 and EEEEEEEE not before it (§80.1425(h)-(i))."""
    RIN_SERIALS.check(start >= 1, "SSSSSSSS must be at least 00000001", f"{field}.SSSSSSSS")
    RIN_SERIALS.check(
        end >= start,
        f"EEEEEEEE {end:,} is before SSSSSSSS {start:,}",
        f"{field}.EEEEEEEE",
    )


def check_batch_unique(used: list[str], vintage: int, batch: str) -> None:
    """No two batches of a producer or importer share BBBBB in a calendar year (§80.1425(e))."""
    RIN_BATCH_UNIQUE.check(
        batch not in used, f"batch {batch} was already used in {vintage}", "batch"
    )
