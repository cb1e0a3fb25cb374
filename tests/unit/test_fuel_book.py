"""The fuel book's answers, stored and read back or not, are what a plain dated list gives."""

from __future__ import annotations

from copy import deepcopy
from datetime import date, timedelta
from decimal import Decimal

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.domain.fuel_book import FuelBook
from ledger.infrastructure.transcodings import FuelBookAsRecords

RECENT = 64  # a span of days; the steps below touch several times as many dates
FUEL_BOOK = FuelBookAsRecords()

START = date(2014, 1, 1)
days = st.integers(0, 4 * RECENT)
volumes = st.decimals(min_value=Decimal("0.001"), max_value=Decimal(10_000), places=3)
# 200+ changes over 256 days: most queries and deliveries are back-dated before later changes
steps = st.lists(
    st.tuples(st.booleans(), days, volumes, days, st.booleans()), min_size=200, max_size=300
)


class Plain:
    """The reference: every dated change in a dict, sums taken afresh."""

    def __init__(self) -> None:
        self.deltas: dict[date, Decimal] = {}

    def balance(self, on: date) -> Decimal:
        return sum((v for d, v in self.deltas.items() if d <= on), Decimal(0))

    def available(self, on: date) -> Decimal:
        lowest = running = self.balance(on)
        for d in sorted(d for d in self.deltas if d > on):
            running += self.deltas[d]
            lowest = min(lowest, running)
        return lowest


@settings(max_examples=60, deadline=None)
@given(steps)
def test_answers_equal_a_plain_dated_list(
    ops: list[tuple[bool, int, Decimal, int, bool]],
) -> None:
    book, plain = FuelBook(), Plain()
    for receiving, day, volume, asked, snapshot in ops:
        on = START + timedelta(days=day)
        if receiving:
            book.receive(volume, on)
            plain.deltas[on] = plain.deltas.get(on, Decimal(0)) + volume
        else:
            volume = min(volume, plain.available(on))
            if volume > 0:
                book.deliver(volume, on)
                plain.deltas[on] = plain.deltas.get(on, Decimal(0)) - volume
        if snapshot:  # stored and read back, as a snapshot would be
            book = FUEL_BOOK.decode(orjson.loads(orjson.dumps(FUEL_BOOK.encode(book))))
        query = START + timedelta(days=asked)
        assert book.available(query) == plain.available(query)
        assert book.balance(query) == plain.balance(query)
    # a day whose changes net to zero changes no balance, and is not kept (it would grow the
    # book with history, ledger/domain/fuel_book.py)
    assert FUEL_BOOK.encode(book) == [
        [d.isoformat(), str(v)] for d, v in sorted(plain.deltas.items()) if v != 0
    ]


def test_a_back_dated_delivery_checks_every_later_date() -> None:
    book = FuelBook()
    for n in range(3 * RECENT):  # 1,000 gallons received on each of 192 days
        book.receive(Decimal(1_000), START + timedelta(days=n))
    # on day 10 the book held 11 × 1,000 gallons; nothing later goes below that
    assert book.available(START + timedelta(days=10)) == Decimal(11_000)
    book.deliver(Decimal(11_000), START + timedelta(days=10))
    assert book.balance(START + timedelta(days=10)) == 0
    assert book.balance(START + timedelta(days=3 * RECENT)) == Decimal(3 * RECENT * 1_000 - 11_000)


def test_a_copy_changes_apart_from_its_original() -> None:
    book = FuelBook()
    book.receive(Decimal(1_000), START)
    copied = deepcopy(book)
    copied.deliver(Decimal(400), START + timedelta(days=1))
    book.receive(Decimal(5), START + timedelta(days=2))
    assert list(book.changes()) == [(START, Decimal(1_000)), (START + timedelta(days=2), 5)]
    assert copied.balance(START + timedelta(days=9)) == Decimal(600)
