"""A party's EMTS postings: its own sells and buys, and those that name it as partner.

In EMTS a trade is two submissions (§80.1452(c)(6): RIN sell, RIN buy) that complete only when
they agree; until then a sell's exact ranges (and, for assigned RINs, its fuel volume) are
reserved at the seller: still owned, never spendable. Each side's postings live on its own
Party aggregate, and the partner keeps an offer naming the poster, so a party can find, deny
or answer what was posted to it without reading any other party's history.
"""

from __future__ import annotations

from bisect import bisect_right, insort
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
    """A party's own postings (in posting order) and the offers posted to it (id → poster).

    A sell reserves its ranges (and K=1 fuel) for its life, from its date until the date it
    completes or is released (design.md: "No command dated within a reservation's life may use
    its ranges"); a pending sell's life has no end yet. Sells are indexed by block key, and the
    K=1 sells that were released by the date they closed, so that a check at any date reads
    only the sells whose life may reach it.
    """

    def __init__(self, postings: dict[str, Posting] | None = None,
                 offers: dict[str, str] | None = None) -> None:
        self.postings: dict[str, Posting] = {}
        self.offers: dict[str, str] = dict(offers or {})
        #: the pending postings' ids, oldest first: what most questions are about
        self.open: dict[str, None] = {}
        #: block key → the ids of the sells (but the completed) that reserved serials of it
        self.sells_by_key: dict[BlockKey, list[str]] = {}
        #: (closing date, id) of the released sells that reserved fuel, in date order
        self.fuel_released: list[tuple[date, str]] = []
        for posting in (postings or {}).values():
            self.post(posting)
            if not posting.pending:
                self._closed(posting)

    def post(self, posting: Posting) -> None:
        self.postings[posting.id] = posting
        if posting.pending:
            self.open[posting.id] = None
        if posting.side is Side.SELL:
            for key in dict.fromkeys(b.key for b in posting.rins):
                self.sells_by_key.setdefault(key, []).append(posting.id)

    def close(self, posting_id: str, status: Status, on: date, reason_code: int | None,
              counterpart: str | None) -> None:
        closed = replace(
            self.postings[posting_id], status=status, closed_on=on,
            closing_reason_code=reason_code, counterpart=counterpart,
        )
        self.postings[posting_id] = closed
        self.open.pop(posting_id, None)
        self._closed(closed)

    def _closed(self, posting: Posting) -> None:
        """Index a sell's end: a completed sell's life is empty (its ranges left on its own
        date), so it is dropped from the index; a released one stays, with its last day."""
        if posting.side is not Side.SELL:
            return
        if posting.status is Status.COMPLETED:
            for key in dict.fromkeys(b.key for b in posting.rins):
                ids = self.sells_by_key[key]
                ids.remove(posting.id)
                if not ids:
                    del self.sells_by_key[key]
        elif posting.terms.volume and posting.closed_on:
            insort(self.fuel_released, (posting.closed_on, posting.id))

    def pending(self) -> Iterator[Posting]:
        """Pending postings, oldest first."""
        return (self.postings[i] for i in self.open)

    def reservations(self) -> Iterator[Posting]:
        """The pending sells: what is reserved from now on."""
        return (p for p in self.pending() if p.side is Side.SELL)

    @property
    def has_sells(self) -> bool:
        """Whether any sell but a completed one reserved anything here (else no check need
        look)."""
        return bool(self.sells_by_key)

    def reserving_after(self, key: BlockKey, on: date | None) -> Iterator[Posting]:
        """The sells of `key` whose reservation lasts past the start of `on` (None: pending)."""
        for posting_id in self.sells_by_key.get(key, ()):
            posting = self.postings[posting_id]
            if reserves_after(posting, on):
                yield posting

    def reserved(self, key: BlockKey, on: date | None = None, *, besides: str | None = None
                 ) -> SerialSet:
        """The serials of `key` reserved on `on` or any later date (None: by the pending sells),
        but by the sell named `besides`."""
        return SerialSet.of(
            (b.start, b.end) for p in self.reserving_after(key, on) if p.id != besides
            for b in p.rins if b.key == key
        )

    def reserved_on(self, key: BlockKey, on: date) -> SerialSet:
        """The serials of `key` reserved on the day `on`: by the sells whose life (their date
        until the day they closed) covers it."""
        return SerialSet.of(
            (b.start, b.end) for p in self.reserving_after(key, on) if p.terms.date <= on
            for b in p.rins if b.key == key
        )

    def reserving(self, block: RinBlock, on: date | None = None) -> list[Posting]:
        """The sells that reserve any of `block`'s gallon-RINs on `on` or any later date (None:
        the pending ones)."""
        whole = SerialSet(((block.start, block.end),))
        return [p for p in self.reserving_after(block.key, on)
                if any(b.key == block.key and SerialSet(((b.start, b.end),)).overlaps(whole)
                       for b in p.rins)]

    def reserved_volume(self, *, besides: str | None = None) -> Decimal:
        """Gallons of fuel that pending K=1 sells hold back (design.md: reserved with them)."""
        return sum((p.terms.volume or ZERO for p in self.reservations() if p.id != besides),
                   ZERO)

    def fuel_reservations(self, on: date, *, besides: str | None = None) -> list[FuelHeld]:
        """(first day, day released or None, gallons) of every K=1 sell but `besides` whose
        fuel is reserved on `on` or a later date."""
        first_later = bisect_right(self.fuel_released, (on, "\uffff"))
        released = (self.postings[i] for _, i in self.fuel_released[first_later:])
        return [(p.terms.date, p.closed_on, p.terms.volume)
                for p in (*released, *self.reservations())
                if p.id != besides and p.terms.volume and reserves_after(p, on)]


#: fuel a sell holds back: its first day, the day it was released (None: still pending), gallons
FuelHeld = tuple[date, date | None, Decimal]


def reserves_after(posting: Posting, on: date | None) -> bool:
    """Whether a sell's reservation covers some day from `on` on (None: whether it is
    pending). Its life runs from its date to the day it closed; a completed sell's ranges left
    on its own date, so its life is empty."""
    if posting.side is not Side.SELL:
        return False
    if posting.pending:
        return True
    end = posting.closed_on
    assert end is not None
    return on is not None and end > on and end > posting.terms.date


def free_fuel(changes_after: Iterator[tuple[date, Decimal]], balance: Decimal, on: date,
              held: list[FuelHeld]) -> Decimal:
    """The most fuel that may leave on `on` so that on no day from `on` on the balance falls
    below what sells reserve that day (§80.1452(d)): `balance` is the fuel owned at the end of
    `on`, `changes_after` the later dated changes, `held` the reservations."""
    steps: dict[date, Decimal] = {}
    for start, end, volume in held:
        if end is not None and end <= max(start, on):
            continue  # over before `on`, or never held (completed on its own date)
        start = max(start, on)
        steps[start] = steps.get(start, ZERO) - volume
        if end is not None:  # released: free again from that day
            steps[end] = steps.get(end, ZERO) + volume
    for day, delta in changes_after:
        steps[day] = steps.get(day, ZERO) + delta
    running = balance + steps.pop(on, ZERO)
    lowest = running
    for day in sorted(steps):
        running += steps[day]
        lowest = min(lowest, running)
    return lowest
