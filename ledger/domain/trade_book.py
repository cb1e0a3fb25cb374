"""A party's EMTS postings: its own sells and buys, and those that name it as partner.

In EMTS a trade is two submissions (§80.1452(c)(6): RIN sell, RIN buy) that complete only when
they agree; until then a sell's exact ranges (and, for assigned RINs, its fuel volume) are
reserved at the seller: still owned, never spendable. Each side's postings live on its own
Party aggregate while they are pending; the partner's `TradeOffered` event names the poster, so a
party finds, denies or answers what was posted to it through the posting's command record
(ledger/application/originals.py) without reading any other party's history.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Iterable, Iterator
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


@dataclass(frozen=True)
class Reservation:
    """A sell's reservation (§80.1452(d)): its exact ranges and K=1 fuel `volume`, held from its
    date `start` until `end`, the day it was released (None: still pending); `status` how it
    ended. All that the rules read of a sell once it is cancelled, denied or expired."""

    id: str
    start: date
    rins: tuple[RinBlock, ...]
    volume: Decimal | None
    status: Status = Status.PENDING
    end: date | None = None

    @classmethod
    def of(cls, posting: Posting) -> Reservation:
        """A pending sell's reservation."""
        return cls(posting.id, posting.terms.date, posting.rins, posting.terms.volume)

    @property
    def pending(self) -> bool:
        return self.end is None


class TradeBook:
    """A party's pending postings (in posting order) and the reservation lives its rules read.

    A sell reserves its ranges (and K=1 fuel) for its life, from its date until the date it
    completes or is released (design.md: "No command dated within a reservation's life may use
    its ranges"); a pending sell's life has no end yet, a completed sell's is empty (its ranges
    left on its own date), and so is that of a sell released on its own date. Only the pending
    postings and the released sells' non-empty lives are kept: what a closed posting was is in
    the log (ledger/application/originals.py), so the book is bounded by what is open, not by
    the party's history. Lives are indexed by block key, and the K=1 released ones by the date
    they closed, so that a check at any date reads only the sells whose life may reach it.
    """

    def __init__(self, pending: Iterable[Posting] = (),
                 lives: Iterable[Reservation] = ()) -> None:
        """`pending`: the pending postings; `lives`: every sell's reservation kept, pending or
        released, in posting order (a pending sell's life is its posting's)."""
        #: the pending postings, oldest first: what most questions are about
        self.open: dict[str, Posting] = {posting.id: posting for posting in pending}
        #: the pending sells' and released sells' non-empty reservations, in posting order
        self.lives: dict[str, Reservation] = {}
        #: block key → the ids of the `lives` that reserved serials of it, in posting order
        self.sells_by_key: dict[BlockKey, list[str]] = {}
        #: (closing date, id) of the released sells that reserved fuel, in date order
        self.fuel_released: list[tuple[date, str]] = []
        for life in lives:
            self._live(life)

    @classmethod
    def of_history(cls, postings: Iterable[Posting]) -> TradeBook:
        """The book that `postings` (every posting a party made, in posting order, each as it
        stands) leave: a Party v5 state kept them all."""
        book = cls()
        for posting in postings:
            book.post(replace(posting, status=Status.PENDING, closed_on=None,
                              closing_reason_code=None, counterpart=None))
            if not posting.pending:
                assert posting.closed_on is not None
                book.close(posting.id, posting.status, posting.closed_on)
        return book

    def post(self, posting: Posting) -> None:
        self.open[posting.id] = posting
        if posting.side is Side.SELL:
            self._live(Reservation.of(posting))

    def close(self, posting_id: str, status: Status, on: date) -> None:
        """End a pending posting: a sell's life ends `on`, and stays in its place (posting
        order) unless it is empty (completed, or released on its own date)."""
        posting = self.open.pop(posting_id)
        if posting.side is not Side.SELL:
            return
        life = self.lives[posting_id]
        if status is not Status.COMPLETED and on > life.start:
            self.lives[posting_id] = released = replace(life, status=status, end=on)
            if released.volume:
                insort(self.fuel_released, (on, posting_id))
            return
        del self.lives[posting_id]
        for key in dict.fromkeys(b.key for b in life.rins):
            ids = self.sells_by_key[key]
            ids.remove(posting_id)
            if not ids:
                del self.sells_by_key[key]

    def _live(self, life: Reservation) -> None:
        self.lives[life.id] = life
        for key in dict.fromkeys(b.key for b in life.rins):
            self.sells_by_key.setdefault(key, []).append(life.id)
        if life.end is not None and life.volume:
            insort(self.fuel_released, (life.end, life.id))

    def pending(self) -> Iterator[Posting]:
        """Pending postings, oldest first."""
        return iter(self.open.values())

    def reservations(self) -> Iterator[Posting]:
        """The pending sells: what is reserved from now on."""
        return (p for p in self.pending() if p.side is Side.SELL)

    @property
    def has_sells(self) -> bool:
        """Whether any sell's reservation has a life here (else no check need look)."""
        return bool(self.sells_by_key)

    def reserving_after(self, key: BlockKey, on: date | None) -> Iterator[Reservation]:
        """The sells of `key` whose reservation lasts past the start of `on` (None: pending)."""
        for posting_id in self.sells_by_key.get(key, ()):
            life = self.lives[posting_id]
            if reserves_after(life, on):
                yield life

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
            (b.start, b.end) for p in self.reserving_after(key, on) if p.start <= on
            for b in p.rins if b.key == key
        )

    def reserving(self, block: RinBlock, on: date | None = None) -> list[Reservation]:
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
        released = (self.lives[i] for _, i in self.fuel_released[first_later:])
        pending = (self.lives[p.id] for p in self.reservations())
        return [(p.start, p.end, p.volume) for p in (*released, *pending)
                if p.id != besides and p.volume and reserves_after(p, on)]


#: fuel a sell holds back: its first day, the day it was released (None: still pending), gallons
FuelHeld = tuple[date, date | None, Decimal]


def reserves_after(life: Reservation, on: date | None) -> bool:
    """Whether a sell's reservation covers some day from `on` on (None: whether it is
    pending). Its life runs from its date to the day it was released."""
    if life.end is None:
        return True
    return on is not None and life.end > on and life.end > life.start


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
