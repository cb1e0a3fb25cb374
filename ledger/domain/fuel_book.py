"""A party's renewable fuel inventory by effective date, never negative on any date.

Fuel owned, standardized to 60 °F, is what the quarter-end check sets against assigned RINs
(§80.1428(a)(5)) and what assigned RINs must move with (§80.1428(a)(3)-(4)). Every dated change
is kept: a back-dated delivery is checked against every later date. A date whose changes net to
zero is not: it changes no balance, and a party that receives and delivers the same gallons on
one day (assigned RINs traded through) would otherwise keep one entry per such day forever.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Iterable, Iterator
from datetime import date
from decimal import Decimal
from typing import Any

ZERO = Decimal(0)


class FuelBook:
    """Dated changes of one party's renewable fuel volume, in standardized gallons."""

    def __init__(self, changes: Iterable[tuple[date, Decimal]] = ()) -> None:
        self._deltas: dict[date, Decimal] = {}
        for on, delta in changes:
            self._deltas[on] = self._deltas.get(on, ZERO) + delta
        self._deltas = {on: delta for on, delta in self._deltas.items() if delta}
        self._dates = sorted(self._deltas)  # most look-ups are of the end
        self._total = sum(self._deltas.values(), ZERO)  # the balance on and after the last date

    def __deepcopy__(self, memo: dict[int, Any]) -> FuelBook:
        """Dates and Decimals are immutable: a copy needs new containers only."""
        copy = FuelBook()
        copy._deltas, copy._dates, copy._total = dict(self._deltas), list(self._dates), self._total
        return copy

    def changes(self) -> Iterator[tuple[date, Decimal]]:
        """Every dated change, in date order."""
        return ((on, self._deltas[on]) for on in self._dates)

    def changes_after(self, on: date) -> Iterator[tuple[date, Decimal]]:
        """The dated changes after `on`, in date order."""
        return ((d, self._deltas[d]) for d in self._dates[bisect_right(self._dates, on):])

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
        net = self._deltas.get(on, ZERO) + delta
        self._total += delta
        if net:
            self._deltas[on] = net
        else:  # nets to nothing that day
            del self._deltas[on]
            self._dates.remove(on)
