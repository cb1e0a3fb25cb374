"""A party's renewable fuel inventory by effective date, never negative on any date.

Fuel owned, standardized to 60 °F, is what the quarter-end check sets against assigned RINs
(§80.1428(a)(5)) and what assigned RINs must move with (§80.1428(a)(3)-(4)).
"""

from __future__ import annotations

from bisect import bisect_right, insort
from datetime import date
from decimal import Decimal
from typing import Any

ZERO = Decimal(0)


class FuelBook:
    """Dated changes of one party's renewable fuel volume, in standardized gallons."""

    def __init__(self) -> None:
        self._deltas: dict[date, Decimal] = {}
        self._dates: list[date] = []  # the keys of _deltas, sorted: most look-ups are of the end
        self._total = ZERO  # Σ of every delta, the balance on and after the last date

    def __deepcopy__(self, memo: dict[int, Any]) -> FuelBook:
        copy = FuelBook()
        copy._deltas, copy._dates, copy._total = dict(self._deltas), list(self._dates), self._total
        return copy

    def balance(self, on: date) -> Decimal:
        """Gallons owned at the end of `on`."""
        first_later = bisect_right(self._dates, on)
        if first_later == len(self._dates):
            return self._total
        return sum((self._deltas[d] for d in self._dates[:first_later]), ZERO)

    def available(self, on: date) -> Decimal:
        """The most that may leave on `on` without any later date going negative."""
        later = self._dates[bisect_right(self._dates, on):]
        lowest = running = self.balance(on)
        for d in later:
            running += self._deltas[d]
            lowest = min(lowest, running)
        return lowest

    def receive(self, volume: Decimal, on: date) -> None:
        self._change(on, volume)

    def deliver(self, volume: Decimal, on: date) -> None:
        """Remove `volume`; the caller has checked `available(on)` first."""
        if volume > self.available(on):
            raise ValueError(f"{volume} gallons is more than owned on {on.isoformat()}")
        self._change(on, -volume)

    def _change(self, on: date, delta: Decimal) -> None:
        if on not in self._deltas:
            insort(self._dates, on)
        self._deltas[on] = self._deltas.get(on, ZERO) + delta
        self._total += delta

    def to_records(self) -> list[list[str]]:
        return [[d.isoformat(), str(v)] for d, v in sorted(self._deltas.items())]

    @classmethod
    def from_records(cls, records: list[list[str]]) -> FuelBook:
        book = cls()
        book._deltas = {date.fromisoformat(d): Decimal(v) for d, v in records}
        book._dates = sorted(book._deltas)
        book._total = sum(book._deltas.values(), ZERO)
        return book
