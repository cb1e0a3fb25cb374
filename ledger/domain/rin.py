"""RIN identity (§80.1425): the 38-character batch-RIN code KYYYYCCCCFFFFFBBBBBRRDSSSSSSSSEEEEEEEE.

A `RinBlock` is one contiguous range of gallon-RINs of one batch with one K; it formats to and
parses from the regulation's code, and carries its batch's provenance (generation date, fuel)
so that a holder can pick first-in-first-out and apply fuel-specific rules without a look-up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date
from functools import lru_cache

from ledger.rules.catalogue import rule

MAX_SERIAL = 99_999_999
D_CODES = (3, 4, 5, 6, 7)
KEYS_REMEMBERED = 8_192  # block keys decoded from the store, most recently used

RIN_FORMAT = rule(
    "RIN-FORMAT", "§80.1425",
    "a batch-RIN code is 38 characters in the order KYYYYCCCCFFFFFBBBBBRRDSSSSSSSSEEEEEEEE",
)
RIN_K = rule("RIN-K", "§80.1425(a)", "K is 1 (assigned) or 2 (separated)")
RIN_YEAR = rule("RIN-YEAR", "§80.1425(b)", "YYYY is the calendar year the RIN was generated")
RIN_COMPANY = rule(
    "RIN-COMPANY", "§80.1425(c)",
    "CCCC is the 4-digit registration number of the producer or importer",
)
RIN_FACILITY = rule(
    "RIN-FACILITY", "§80.1425(d)", "FFFFF is the 5-digit registration number of the facility"
)
RIN_BATCH = rule("RIN-BATCH", "§80.1425(e)", "BBBBB is a 5-character batch number")
RIN_RR = rule("RIN-RR", "§80.1425(f)", "RR is 10 times the equivalence value, two digits")
RIN_D = rule("RIN-D", "§80.1425(g)", "D is 3, 4, 5, 6 or 7")
RIN_SERIALS = rule(
    "RIN-SERIALS", "§80.1425(h)-(i)", "SSSSSSSS and EEEEEEEE are 8-digit serials with 1 <= S <= E"
)

_BATCH_RE = re.compile(r"[0-9A-Z]{5}")


@dataclass(frozen=True, slots=True, order=True)
class BatchId:
    """A batch's identity, unique per producer or importer per year (§80.1425(e))."""

    vintage: int
    company: str
    facility: str
    batch: str

    def __str__(self) -> str:
        return f"{self.vintage}{self.company}{self.facility}{self.batch}"


@dataclass(frozen=True, slots=True)
class BlockKey:
    """Everything about a block but its serials: what holdings are grouped by."""

    k: int
    vintage: int
    company: str
    facility: str
    batch: str
    rr: int
    d_code: int
    generated: date
    fuel: str

    @property
    def batch_id(self) -> BatchId:
        return BatchId(self.vintage, self.company, self.facility, self.batch)

    @property
    def prefix(self) -> str:
        """The first 22 characters of the code: K, YYYY, CCCC, FFFFF, BBBBB, RR, D."""
        return (
            f"{self.k}{self.vintage:04d}{self.company}{self.facility}{self.batch}"
            f"{self.rr:02d}{self.d_code}"
        )

    def block(self, start: int, end: int) -> RinBlock:
        return RinBlock(self, start, end)

    def with_k(self, k: int) -> BlockKey:
        return replace(self, k=k)


@dataclass(frozen=True, slots=True)
class RinBlock:
    """A batch-RIN: gallon-RINs `start`..`end` (inclusive) of one batch with one K."""

    key: BlockKey
    start: int
    end: int

    @property
    def gallon_rins(self) -> int:
        """RINNUM = EEEEEEEE − SSSSSSSS + 1 (§80.1427(a)(9))."""
        return self.end - self.start + 1

    @property
    def code(self) -> str:
        return f"{self.key.prefix}{self.start:08d}{self.end:08d}"

    def __str__(self) -> str:
        return self.code


def parse_code(code: str, field: str = "rin") -> tuple[BlockKey, int, int]:
    """Parse a 38-character batch-RIN; the key's provenance (generated, fuel) is left blank.

    Raises the §80.1425 rule of the first field that is wrong.

    The fields: K §80.1425(a), YYYY §80.1425(b), CCCC §80.1425(c), FFFFF §80.1425(d), BBBBB
    §80.1425(e), RR §80.1425(f), D §80.1425(g), SSSSSSSS §80.1425(h) and EEEEEEEE §80.1425(i).
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
    start, end = int(ssss), int(eeee)
    RIN_SERIALS.check(start >= 1, "SSSSSSSS must be at least 00000001", f"{field}.SSSSSSSS")
    RIN_SERIALS.check(
        end >= start,
        f"EEEEEEEE {end:,} is before SSSSSSSS {start:,}",
        f"{field}.EEEEEEEE",
    )
    key = BlockKey(int(k), int(yyyy), cccc, fffff, bbbbb, int(rr), int(d), date.min, "")
    return key, start, end


def format_code(
    k: int, vintage: int, company: str, facility: str, batch: str, rr: int, d_code: int,
    start: int, end: int,
) -> str:
    """Format the 38-character batch-RIN code from its fields (§80.1425)."""
    key = BlockKey(k, vintage, company, facility, batch, rr, d_code, date.min, "")
    code = key.block(start, end).code
    parse_code(code)
    return code


RIN_BATCH_UNIQUE = rule(
    "RIN-BATCH-UNIQUE", "§80.1425(e)",
    "no two batches of a producer or importer have the same BBBBB in a calendar year",
)


def check_batch_unique(used: list[str], vintage: int, batch: str) -> None:
    """No two batches of a producer or importer share BBBBB in a calendar year (§80.1425(e))."""
    RIN_BATCH_UNIQUE.check(
        batch not in used, f"batch {batch} was already used in {vintage}", "batch"
    )


@lru_cache(maxsize=KEYS_REMEMBERED)
def stored_key(prefix: str, generated: str, fuel: str) -> BlockKey:
    """The key of a stored block from its code's 22-character prefix and its provenance.

    Checked like any code the first time, then remembered: a batch's blocks recur in many events
    and snapshots, and reading the store back should not re-check the same fields every time.
    The batches traded at any one time are a few thousand, so a bounded memory of them keeps
    the hits and keeps memory flat however long the history.
    """
    base, _, _ = parse_code(f"{prefix}0000000100000001")
    return BlockKey(
        base.k, base.vintage, base.company, base.facility, base.batch, base.rr, base.d_code,
        date.fromisoformat(generated), fuel,
    )


def stored_block(code: str, generated: str, fuel: str) -> RinBlock:
    """A stored block from its 38-character code and provenance (see `stored_key`)."""
    start, end = int(code[22:30]), int(code[30:38])
    RIN_SERIALS.check(1 <= start <= end, f"serials {code[22:]} are not 1 <= S <= E", "rin")
    return RinBlock(stored_key(code[:22], generated, fuel), start, end)
