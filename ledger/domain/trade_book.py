"""A party's EMTS postings: its own sells and buys, and those that name it as partner.

In EMTS a trade is two submissions (§80.1452(c)(6): RIN sell, RIN buy) that complete only when
they agree; until then a sell's exact ranges (and, for assigned RINs, its fuel volume) are
reserved at the seller: still owned, never spendable. Each side's postings live on its own
Party aggregate, and the partner keeps an offer naming the poster, so a party can find, deny
or answer what was posted to it without reading any other party's history.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal
from enum import StrEnum

from ledger.domain.ranges import SerialSet
from ledger.domain.rin import BlockKey, RinBlock

ZERO = Decimal(0)


class Side(StrEnum):
    SELL = "sell"
    BUY = "buy"

    @property
    def other(self) -> Side:
        return Side.BUY if self is Side.SELL else Side.SELL


class Status(StrEnum):
    """A posting's life: pending until completed, cancelled, denied or expired."""

    PENDING = "pending"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    DENIED = "denied"
    EXPIRED = "expired"


@dataclass(frozen=True)
class Terms:
    """What two postings must agree on (design.md "Matching"): the RINs' D code, vintage, K,
    quantity, transfer date, fuel volume (K=1) and the batch where a side names one."""

    date: date
    d_code: int
    vintage: int
    k: int
    quantity: int
    volume: Decimal | None
    company: str | None = None
    facility: str | None = None
    batch: str | None = None
    qap: str | None = None  # a buy's QAP status asked, a sell's RINs' status (§80.1471(e))


BATCH_FIELDS = ("company", "facility", "batch")


@dataclass(frozen=True)
class Posting:
    """One sell or buy as posted, with its status; `rins` are a sell's reserved (then moved)
    ranges, none for a buy; `counterpart` the posting that completed it."""

    id: str
    side: Side
    party: str
    partner: str
    terms: Terms
    rins: tuple[RinBlock, ...]
    price: Decimal | None
    gallon_price: Decimal | None
    ptd: str | None
    broker: str | None
    reason_code: int
    match: str | None
    status: Status = Status.PENDING
    closed_on: date | None = None
    closing_reason_code: int | None = None
    counterpart: str | None = None

    @property
    def pending(self) -> bool:
        return self.status is Status.PENDING

    @property
    def reserving(self) -> bool:
        """A pending sell holds its ranges and fuel back from every other use."""
        return self.pending and self.side is Side.SELL


class TradeBook:
    """A party's own postings (in posting order) and the offers posted to it (id → poster)."""

    def __init__(self, postings: dict[str, Posting] | None = None,
                 offers: dict[str, str] | None = None) -> None:
        self.postings: dict[str, Posting] = dict(postings or {})
        self.offers: dict[str, str] = dict(offers or {})
        #: the pending postings' ids, oldest first: what most questions are about
        self.open: dict[str, None] = {i: None for i, p in self.postings.items() if p.pending}

    def post(self, posting: Posting) -> None:
        self.postings[posting.id] = posting
        self.open[posting.id] = None

    def close(self, posting_id: str, status: Status, on: date, reason_code: int | None,
              counterpart: str | None) -> None:
        self.postings[posting_id] = replace(
            self.postings[posting_id], status=status, closed_on=on,
            closing_reason_code=reason_code, counterpart=counterpart,
        )
        self.open.pop(posting_id, None)

    def pending(self) -> Iterator[Posting]:
        """Pending postings, oldest first."""
        return (self.postings[i] for i in self.open)

    def reservations(self) -> Iterator[Posting]:
        return (p for p in self.pending() if p.side is Side.SELL)

    def reserved(self, key: BlockKey, *, besides: str | None = None) -> SerialSet:
        """The serials of `key` reserved by pending sells (but the one named `besides`)."""
        return SerialSet.of(
            (b.start, b.end) for p in self.reservations() if p.id != besides
            for b in p.rins if b.key == key
        )

    def reserving(self, block: RinBlock) -> list[str]:
        """The ids of the pending sells that reserve any of `block`'s gallon-RINs."""
        whole = SerialSet(((block.start, block.end),))
        return [p.id for p in self.reservations()
                if any(b.key == block.key and SerialSet(((b.start, b.end),)).overlaps(whole)
                       for b in p.rins)]

    def reserved_volume(self, *, besides: str | None = None) -> Decimal:
        """Gallons of fuel that pending K=1 sells hold back (design.md: reserved with them)."""
        return sum((p.terms.volume or ZERO for p in self.reservations() if p.id != besides),
                   ZERO)
