"""A party's holdings: which gallon-RINs it owns, and since when.

Per block key (K and the batch's attributes) and per acquisition date, a `SerialSet`. The
acquisition date is what makes "no holding negative on any date" checkable: a party may move a
gallon-RIN only on or after the date it acquired it, so every gallon-RIN's chain of owners runs
forward in time and each gallon-RIN has exactly one owner on every date after its generation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from datetime import date
from typing import Any

from ledger.ranges import SerialSet
from ledger.rin import BlockKey, RinBlock, stored_key


class Holdings:
    """Gallon-RINs held by one party, by block key and acquisition date."""

    def __init__(self) -> None:
        self._sets: dict[BlockKey, dict[date, SerialSet]] = {}
        # (D code, vintage, K) → the keys held with them, so FIFO picks need not scan every key
        self._index: dict[tuple[int, int, int], set[BlockKey]] = defaultdict(set)

    def __deepcopy__(self, memo: dict[int, Any]) -> Holdings:
        """Keys and serial sets are immutable: copy only the mappings (the repository copies
        every aggregate it hands out)."""
        copy = Holdings()
        copy._sets = {key: dict(by_date) for key, by_date in self._sets.items()}
        copy._index = defaultdict(set, {slot: set(keys) for slot, keys in self._index.items()})
        return copy

    def add(self, block: RinBlock, on: date) -> None:
        """Take `block` into the holdings as acquired on `on`."""
        if block.key not in self._sets:
            self._index[index_slot(block.key)].add(block.key)
        by_date = self._sets.setdefault(block.key, {})
        incoming = SerialSet(((block.start, block.end),))
        for held in by_date.values():
            if held.overlaps(incoming):
                raise ValueError(f"{block.code} overlaps gallon-RINs already held")
        by_date[on] = by_date.get(on, SerialSet()).union(incoming)

    def remove(self, block: RinBlock, on: date) -> None:
        """Give up `block`, all of it held and acquired on or before `on`."""
        by_date = self._sets.get(block.key, {})
        outgoing = SerialSet(((block.start, block.end),))
        if len(self.available(block.key, on).intersection(outgoing)) != len(outgoing):
            raise ValueError(f"{block.code} is not held on {on.isoformat()}")
        for acquired in list(by_date):
            held = by_date[acquired]
            part = held.intersection(outgoing)
            if part:
                rest = held.subtract(part)
                if rest:
                    by_date[acquired] = rest
                else:
                    del by_date[acquired]
        if not by_date:
            del self._sets[block.key]
            self._index[index_slot(block.key)].discard(block.key)

    def available(self, key: BlockKey, on: date) -> SerialSet:
        """The serials of `key` held now that were acquired on or before `on`."""
        out = SerialSet()
        for acquired, held in self._sets.get(key, {}).items():
            if acquired <= on:
                out = out.union(held)
        return out

    def held_gallon_rins(self, block: RinBlock, on: date) -> int:
        """How many of `block`'s gallon-RINs may be moved on `on`."""
        whole = SerialSet(((block.start, block.end),))
        return len(self.available(block.key, on).intersection(whole))

    def key_for(self, code_key: BlockKey) -> BlockKey | None:
        """The held key with the same 22-character prefix as a parsed code's key, if any."""
        return next((key for key in self._sets if key.prefix == code_key.prefix), None)

    def blocks(self) -> Iterator[RinBlock]:
        """Every held block, one per contiguous run of serials, in FIFO order."""
        for key in sorted(self._sets, key=fifo_order):
            merged = SerialSet.of(
                interval for held in self._sets[key].values() for interval in held
            )
            for start, end in merged:
                yield RinBlock(key, start, end)

    def totals(self) -> dict[tuple[int, int, int], int]:
        """Gallon-RINs held per (D code, vintage, K)."""
        out: dict[tuple[int, int, int], int] = defaultdict(int)
        for key, by_date in self._sets.items():
            out[(key.d_code, key.vintage, key.k)] += sum(len(s) for s in by_date.values())
        return dict(out)

    def assigned_gallon_rins(self) -> int:
        """Σ assigned (K=1) gallon-RINs owned now (§80.1428(a)(5))."""
        return sum(
            len(s) for key, by_date in self._sets.items() if key.k == 1 for s in by_date.values()
        )

    def pick_fifo(
        self,
        on: date,
        quantity: int,
        *,
        d_code: int,
        vintage: int,
        k: int,
        company: str | None = None,
        facility: str | None = None,
        batch: str | None = None,
    ) -> list[RinBlock]:
        """Choose `quantity` gallon-RINs first-in-first-out among those movable on `on`.

        Oldest vintage, then earliest generation, then lowest serial (EMTS picks FIFO too).
        Returns fewer than asked when not enough are held; the caller refuses then.
        """
        candidates = [
            key
            for key in self._index.get((d_code, vintage, k), ())
            if (company is None or key.company == company)
            and (facility is None or key.facility == facility)
            and (batch is None or key.batch == batch)
        ]
        chosen: list[RinBlock] = []
        need = quantity
        for key in sorted(candidates, key=fifo_order):
            if not need:
                break
            free = self.available(key, on)
            taken, _ = free.take_lowest(min(need, len(free)))
            need -= len(taken)
            chosen.extend(RinBlock(key, start, end) for start, end in taken)
        return chosen

    def to_records(self) -> list[list[object]]:
        """A JSON-able form for snapshots: [prefix, generated, fuel, acquired, intervals]."""
        return [
            [key.prefix, key.generated.isoformat(), key.fuel, acquired.isoformat(),
             [list(i) for i in held]]
            for key, by_date in self._sets.items()
            for acquired, held in by_date.items()
        ]

    @classmethod
    def from_records(cls, records: list[list[object]]) -> Holdings:
        holdings = cls()
        for prefix, generated, fuel, acquired, intervals in records:
            key = stored_key(str(prefix), str(generated), str(fuel))
            holdings._sets.setdefault(key, {})[date.fromisoformat(str(acquired))] = SerialSet(
                tuple((int(s), int(e)) for s, e in intervals)  # type: ignore[attr-defined]
            )
            holdings._index[index_slot(key)].add(key)
        return holdings


def index_slot(key: BlockKey) -> tuple[int, int, int]:
    """What a FIFO pick by attributes names first: (D code, vintage, K)."""
    return (key.d_code, key.vintage, key.k)


def fifo_order(key: BlockKey) -> tuple[int, date, str, str, str, int]:
    """Oldest vintage, then earliest generation, then batch identity, then K."""
    return (key.vintage, key.generated, key.company, key.facility, key.batch, key.k)
