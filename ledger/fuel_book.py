"""A party's renewable fuel inventory by effective date, never negative on any date.

Fuel owned, standardized to 60 °F, is what the quarter-end check sets against assigned RINs
(§80.1428(a)(5)) and what assigned RINs must move with (§80.1428(a)(3)-(4)).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

ZERO = Decimal(0)


class FuelBook:
    """Dated changes of one party's renewable fuel volume, in standardized gallons."""

    def __init__(self) -> None:
        self._deltas: dict[date, Decimal] = {}

    def balance(self, on: date) -> Decimal:
        """Gallons owned at the end of `on`."""
        return sum((v for d, v in self._deltas.items() if d <= on), ZERO)

    def available(self, on: date) -> Decimal:
        """The most that may leave on `on` without any later date going negative."""
        later = sorted(d for d in self._deltas if d > on)
        lowest = running = self.balance(on)
        for d in later:
            running += self._deltas[d]
            lowest = min(lowest, running)
        return lowest

    def receive(self, volume: Decimal, on: date) -> None:
        self._deltas[on] = self._deltas.get(on, ZERO) + volume

    def deliver(self, volume: Decimal, on: date) -> None:
        """Remove `volume`; the caller has checked `available(on)` first."""
        if volume > self.available(on):
            raise ValueError(f"{volume} gallons is more than owned on {on.isoformat()}")
        self._deltas[on] = self._deltas.get(on, ZERO) - volume

    def to_records(self) -> list[list[str]]:
        return [[d.isoformat(), str(v)] for d, v in sorted(self._deltas.items())]

    @classmethod
    def from_records(cls, records: list[list[str]]) -> FuelBook:
        book = cls()
        book._deltas = {date.fromisoformat(d): Decimal(v) for d, v in records}
        return book
