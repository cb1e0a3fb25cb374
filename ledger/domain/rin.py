"""RIN identity (§80.1425): the 38-character batch-RIN code KYYYYCCCCFFFFFBBBBBRRDSSSSSSSSEEEEEEEE.

A `RinBlock` is one contiguous range of gallon-RINs of one batch with one K; it formats to and
parses from the regulation's code, and carries its batch's provenance (generation date, fuel)
so that a holder can pick first-in-first-out and apply fuel-specific rules without a look-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date

from ledger.rules.s1425_rin import check_code


@dataclass(frozen=True, slots=True, order=True)
class BatchId:
    """A batch's identity, unique per producer or importer per year (§80.1425(e)). Its hash
    is computed once, when it is made: every lock, QAP status and invalidation look-up of a
    block's batch (several a FIFO pick) hashes it, and a key's batch identity is made once."""

    vintage: int
    company: str
    facility: str
    batch: str
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.vintage, self.company, self.facility,
                                                self.batch)))

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return f"{self.vintage}{self.company}{self.facility}{self.batch}"


@dataclass(frozen=True, slots=True)
class BlockKey:
    """Everything about a block but its serials: what holdings are grouped by.

    Its code prefix, batch identity and hash are derived once, when the key is made: a key is
    made once per batch and K (and remembered when read from the store), but every rule that
    names a block, every holdings look-up and every stored event asks them again."""

    k: int
    vintage: int
    company: str
    facility: str
    batch: str
    rr: int
    d_code: int
    generated: date
    fuel: str
    #: the first 22 characters of the code: K, YYYY, CCCC, FFFFF, BBBBB, RR, D
    prefix: str = field(init=False, repr=False, compare=False)
    #: the batch's identity (§80.1425(e)) and its 18 characters YYYYCCCCFFFFFBBBBB
    batch_id: BatchId = field(init=False, repr=False, compare=False)
    batch_name: str = field(init=False, repr=False, compare=False)
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        batch_id = BatchId(self.vintage, self.company, self.facility, self.batch)
        object.__setattr__(self, "prefix", f"{self.k}{self.vintage:04d}{self.company}"
                                           f"{self.facility}{self.batch}{self.rr:02d}{self.d_code}")
        object.__setattr__(self, "batch_id", batch_id)
        object.__setattr__(self, "batch_name", str(batch_id))
        object.__setattr__(self, "_hash", hash((
            self.k, self.vintage, self.company, self.facility, self.batch, self.rr, self.d_code,
            self.generated, self.fuel)))

    def __hash__(self) -> int:
        return self._hash

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

    Raises the §80.1425 rule of the first field that is wrong (`ledger.rules.s1425_rin`).
    """
    check_code(code, field)
    key = BlockKey(
        int(code[0]), int(code[1:5]), code[5:9], code[9:14], code[14:19], int(code[19:21]),
        int(code[21]), date.min, "",
    )
    return key, int(code[22:30]), int(code[30:38])


def format_code(
    k: int, vintage: int, company: str, facility: str, batch: str, rr: int, d_code: int,
    start: int, end: int,
) -> str:
    """Format the 38-character batch-RIN code from its fields (§80.1425)."""
    key = BlockKey(k, vintage, company, facility, batch, rr, d_code, date.min, "")
    code = key.block(start, end).code
    parse_code(code)
    return code
