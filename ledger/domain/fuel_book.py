"""A party's renewable fuel inventory by effective date, never negative on any date.

Fuel owned, standardized to 60 °F, is what the quarter-end check sets against assigned RINs
(§80.1428(a)(5)) and what assigned RINs must move with (§80.1428(a)(3)-(4)).

Every dated change is kept (a back-dated delivery is checked against every later date), but
only the latest `RECENT` dates as objects: older ones are packed into bytes, with their sum,
and unpacked only by a question about a date that old. A party's memory then grows by a few
bytes a trading day, not a few hundred.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from datetime import date
from decimal import Decimal
from typing import Any

import orjson

ZERO = Decimal(0)
RECENT = 64  # dates kept unpacked; packed RECENT at a time once twice as many are


class FuelBook:
    """Dated changes of one party's renewable fuel volume, in standardized gallons."""

    def __init__(self) -> None:
        self._deltas: dict[date, Decimal] = {}
        self._dates: list[date] = []  # the keys of _deltas, sorted: most look-ups are of the end
        self._total = ZERO  # Σ of every delta, the balance on and after the last date
        self._packed: list[bytes] = []  # older changes, [[ordinal, "delta"], …] in date order
        self._packed_last = 0  # ordinal of the last packed date (0: none)
        self._packed_total = ZERO  # Σ of the packed deltas

    def __deepcopy__(self, memo: dict[int, Any]) -> FuelBook:
        copy = FuelBook()
        copy._deltas, copy._dates, copy._total = dict(self._deltas), list(self._dates), self._total
        copy._packed, copy._packed_last = list(self._packed), self._packed_last
        copy._packed_total = self._packed_total
        return copy

    def balance(self, on: date) -> Decimal:
        """Gallons owned at the end of `on`."""
        self._unpack_for(on)
        first_later = bisect_right(self._dates, on)
        if first_later == len(self._dates):
            return self._total
        return sum((self._deltas[d] for d in self._dates[:first_later]), self._packed_total)

    def available(self, on: date) -> Decimal:
        """The most that may leave on `on` without any later date going negative."""
        self._unpack_for(on)
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
        self._unpack_for(on)
        if on not in self._deltas:
            insort(self._dates, on)
        self._deltas[on] = self._deltas.get(on, ZERO) + delta
        self._total += delta
        if len(self._dates) >= 2 * RECENT:
            self._pack(self._dates[:RECENT])

    def _pack(self, dates: list[date]) -> None:
        """Move the changes of `dates`, the earliest unpacked ones, into the packed part."""
        self._packed.append(packed([[d.toordinal(), str(self._deltas[d])] for d in dates]))
        for d in dates:
            self._packed_total += self._deltas.pop(d)
        self._packed_last = dates[-1].toordinal()
        del self._dates[:len(dates)]

    def _unpack_for(self, on: date) -> None:
        """Unpack every packed change if `on` is not after the last packed date."""
        if not self._packed or on.toordinal() > self._packed_last:
            return
        older = {date.fromordinal(o): Decimal(v) for o, v in self._packed_records()}
        self._deltas = older | self._deltas
        self._dates = sorted(older) + self._dates
        self._packed, self._packed_last, self._packed_total = [], 0, ZERO

    def _packed_records(self) -> list[list[Any]]:
        return [record for chunk in self._packed for record in orjson.loads(chunk)]

    def to_records(self) -> list[list[str]]:
        packed = [[date.fromordinal(o).isoformat(), v] for o, v in self._packed_records()]
        return packed + [[d.isoformat(), str(self._deltas[d])] for d in self._dates]

    @classmethod
    def from_records(cls, records: list[list[str]]) -> FuelBook:
        """A book from `to_records` output (one record a date); all but the latest `RECENT`
        dates are packed again straight from the records."""
        book = cls()
        records = sorted(records)  # ISO dates sort as dates
        older = records[:-RECENT] if len(records) >= 2 * RECENT else []
        if older:
            pairs = [[date.fromisoformat(d).toordinal(), v] for d, v in older]
            book._packed = [packed(pairs)]
            book._packed_last = date.fromisoformat(older[-1][0]).toordinal()
            book._packed_total = sum((Decimal(v) for _, v in older), ZERO)
        book._deltas = {date.fromisoformat(d): Decimal(v) for d, v in records[len(older):]}
        book._dates = sorted(book._deltas)
        book._total = sum(book._deltas.values(), book._packed_total)
        return book


def packed(records: list[list[Any]]) -> bytes:
    """The records as JSON bytes of their own size (orjson's result keeps a 16 KB buffer)."""
    return memoryview(orjson.dumps(records)).tobytes()
