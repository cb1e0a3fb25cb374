"""Serial ranges: sets of inclusive gallon-RIN serial intervals within one batch.

The split rule, documented once for the whole ledger: taking N gallon-RINs from a set takes the
lowest serials first (`take_lowest`), so the part moved keeps the low serials and the part left
keeps the high ones. Events record the exact resulting ranges, so replay never re-selects.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

Interval = tuple[int, int]


class RangeError(ValueError):
    """An operation that would create or destroy gallon-RINs (overlap, or not held)."""


@dataclass(frozen=True, slots=True)
class SerialSet:
    """An immutable set of serials stored as sorted, disjoint, non-adjacent inclusive intervals."""

    intervals: tuple[Interval, ...] = ()

    @classmethod
    def of(cls, intervals: Iterable[Interval]) -> SerialSet:
        """Normalise any intervals (may overlap or touch) into a set."""
        result: list[list[int]] = []
        for start, end in sorted(intervals):
            if start > end:
                raise RangeError(f"empty interval {start}-{end}")
            if result and start <= result[-1][1] + 1:
                result[-1][1] = max(result[-1][1], end)
            else:
                result.append([start, end])
        return cls(tuple((s, e) for s, e in result))

    def __iter__(self) -> Iterator[Interval]:
        return iter(self.intervals)

    def __bool__(self) -> bool:
        return bool(self.intervals)

    def __len__(self) -> int:
        """The number of serials (gallon-RINs) in the set."""
        return sum(e - s + 1 for s, e in self.intervals)

    def __contains__(self, serial: object) -> bool:
        return isinstance(serial, int) and any(s <= serial <= e for s, e in self.intervals)

    def overlaps(self, other: SerialSet) -> bool:
        return bool(self.intersection(other))

    def issuperset(self, other: SerialSet) -> bool:
        return len(self.intersection(other)) == len(other)

    def intersection(self, other: SerialSet) -> SerialSet:
        out: list[Interval] = []
        i = j = 0
        a, b = self.intervals, other.intervals
        while i < len(a) and j < len(b):
            start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
            if start <= end:
                out.append((start, end))
            if a[i][1] < b[j][1]:
                i += 1
            else:
                j += 1
        return SerialSet(tuple(out))

    def union(self, other: SerialSet) -> SerialSet:
        """Merge two disjoint sets; overlapping serials would duplicate gallon-RINs."""
        if self.overlaps(other):
            raise RangeError(f"serials {self.intersection(other).describe()} are already present")
        return SerialSet.of(self.intervals + other.intervals)

    def subtract(self, other: SerialSet) -> SerialSet:
        """Remove `other`, which must be wholly inside this set."""
        if not self.issuperset(other):
            missing = len(other) - len(self.intersection(other))
            raise RangeError(f"{missing:,} of the serials {other.describe()} are not in the set")
        return self.difference(other)

    def difference(self, other: SerialSet) -> SerialSet:
        """The serials of this set not in `other` (which may hold serials this set lacks)."""
        out: list[Interval] = []
        j = 0
        b = other.intervals
        for start, end in self.intervals:
            cur = start
            while j < len(b) and b[j][1] < cur:
                j += 1
            k = j
            while k < len(b) and b[k][0] <= end:
                if b[k][0] > cur:
                    out.append((cur, b[k][0] - 1))
                cur = max(cur, b[k][1] + 1)
                k += 1
            if cur <= end:
                out.append((cur, end))
        return SerialSet(tuple(out))

    def take_lowest(self, count: int) -> tuple[SerialSet, SerialSet]:
        """Split into (the lowest `count` serials, the rest): the ledger's one split rule."""
        if count < 0 or count > len(self):
            raise RangeError(f"cannot take {count:,} from a set of {len(self):,}")
        taken: list[Interval] = []
        need = count
        i = 0
        rest = list(self.intervals)
        while need:
            start, end = rest[i]
            size = end - start + 1
            if size <= need:
                taken.append((start, end))
                need -= size
                i += 1
            else:
                taken.append((start, start + need - 1))
                rest[i] = (start + need, end)
                need = 0
        return SerialSet(tuple(taken)), SerialSet(tuple(rest[i:]))

    def split_sizes(self, sizes: Iterable[int]) -> list[SerialSet]:
        """Cut into consecutive pieces of the given sizes, lowest first; sizes must sum to len."""
        sizes = list(sizes)
        if any(size <= 0 for size in sizes) or sum(sizes) != len(self):
            raise RangeError(f"sizes {sizes} do not partition {len(self):,} serials")
        pieces, rest = [], self
        for size in sizes:
            piece, rest = rest.take_lowest(size)
            pieces.append(piece)
        return pieces

    def describe(self) -> str:
        return ", ".join(f"{s:08d}-{e:08d}" for s, e in self.intervals) or "(none)"
