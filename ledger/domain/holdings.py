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

from ledger.domain.ranges import SerialSet
from ledger.domain.rin import BlockKey, RinBlock, stored_key

Slot = tuple[int, int, int]  # (D code, vintage, K)
Record = list[object]  # [prefix, generated, fuel, acquired, intervals]: one key, one date


class Holdings:
    """Gallon-RINs held by one party, by block key and acquisition date.

    Grouped by slot (D code, vintage, K), which is what a FIFO pick names and what one command
    touches. A snapshot stores each slot's records apart; loading keeps them as stored until a
    slot is first used, and saving re-encodes only the slots changed since (a large holder's
    snapshot is mostly slots no recent command touched).
    """

    def __init__(self) -> None:
        self._sets: dict[BlockKey, dict[date, SerialSet]] = {}
        # slot → the keys held with it, so FIFO picks need not scan every key
        self._index: dict[Slot, set[BlockKey]] = defaultdict(set)
        # slot → its records as stored: not yet decoded, or decoded and unchanged since
        self._stored: dict[Slot, list[Record]] = {}
        self._decoded: set[Slot] = set()

    def __deepcopy__(self, memo: dict[int, Any]) -> Holdings:
        """Keys, serial sets and stored records are never changed in place: copy only the
        mappings (the repository copies every aggregate it hands out)."""
        copy = Holdings()
        copy._sets = {key: dict(by_date) for key, by_date in self._sets.items()}
        copy._index = defaultdict(set, {slot: set(keys) for slot, keys in self._index.items()})
        copy._stored = dict(self._stored)
        copy._decoded = set(self._decoded)
        return copy

    def _slot(self, slot: Slot, *, changing: bool = False) -> set[BlockKey]:
        """The keys of `slot`, decoding its stored records first if need be; `changing` drops
        its stored form, which no longer matches."""
        if slot not in self._decoded:
            self._decoded.add(slot)
            for prefix, generated, fuel, acquired, intervals in self._stored.get(slot, ()):
                key = stored_key(str(prefix), str(generated), str(fuel))
                self._sets.setdefault(key, {})[date.fromisoformat(str(acquired))] = SerialSet(
                    tuple(map(tuple, intervals))  # type: ignore[call-overload]
                )
                self._index[slot].add(key)
        if changing:
            self._stored.pop(slot, None)
        return self._index[slot]

    def _by_date(self, key: BlockKey) -> dict[date, SerialSet]:
        self._slot(index_slot(key))
        return self._sets.get(key, {})

    def _all(self) -> dict[BlockKey, dict[date, SerialSet]]:
        for slot in list(self._stored):
            self._slot(slot)
        return self._sets

    def add(self, block: RinBlock, on: date) -> None:
        """Take `block` into the holdings as acquired on `on`."""
        self._slot(index_slot(block.key), changing=True).add(block.key)
        by_date = self._sets.setdefault(block.key, {})
        incoming = SerialSet(((block.start, block.end),))
        for held in by_date.values():
            if held.overlaps(incoming):
                raise ValueError(f"{block.code} overlaps gallon-RINs already held")
        by_date[on] = by_date.get(on, SerialSet()).union(incoming)

    def remove(self, block: RinBlock, on: date) -> None:
        """Give up `block`, all of it held and acquired on or before `on`."""
        by_date = self._by_date(block.key)
        outgoing = SerialSet(((block.start, block.end),))
        parts = []  # (acquired, held there, the part of `block` held there)
        for acquired, held in by_date.items():
            part = held.intersection(outgoing)
            if part:
                if acquired > on:
                    break
                parts.append((acquired, held, part))
        if sum(len(part) for _, _, part in parts) != block.gallon_rins:
            raise ValueError(f"{block.code} is not held on {on.isoformat()}")
        keys = self._slot(index_slot(block.key), changing=True)
        for acquired, held, part in parts:
            rest = held.subtract(part)
            if rest:
                by_date[acquired] = rest
            else:
                del by_date[acquired]
        if not by_date:
            del self._sets[block.key]
            keys.discard(block.key)

    def available(self, key: BlockKey, on: date) -> SerialSet:
        """The serials of `key` held now that were acquired on or before `on`."""
        out = SerialSet()
        for acquired, held in self._by_date(key).items():
            if acquired <= on:
                out = out.union(held)
        return out

    def held_gallon_rins(self, block: RinBlock, on: date) -> int:
        """How many of `block`'s gallon-RINs may be moved on `on`."""
        whole = SerialSet(((block.start, block.end),))
        return len(self.available(block.key, on).intersection(whole))

    def key_for(self, code_key: BlockKey) -> BlockKey | None:
        """The held key with the same 22-character prefix as a parsed code's key, if any."""
        keys = self._slot(index_slot(code_key))
        return next((key for key in keys if key.prefix == code_key.prefix), None)

    def blocks(self) -> Iterator[RinBlock]:
        """Every held block, one per contiguous run of serials, in FIFO order."""
        sets = self._all()
        for key in sorted(sets, key=fifo_order):
            merged = SerialSet.of(interval for held in sets[key].values() for interval in held)
            for start, end in merged:
                yield RinBlock(key, start, end)

    def totals(self) -> dict[tuple[int, int, int], int]:
        """Gallon-RINs held per (D code, vintage, K)."""
        out: dict[tuple[int, int, int], int] = defaultdict(int)
        for key, by_date in self._all().items():
            out[(key.d_code, key.vintage, key.k)] += sum(len(s) for s in by_date.values())
        return dict(out)

    def assigned_gallon_rins(self) -> int:
        """Σ assigned (K=1) gallon-RINs owned now (§80.1428(a)(5))."""
        return sum(
            len(s) for key, by_date in self._all().items() if key.k == 1
            for s in by_date.values()
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
            for key in self._slot((d_code, vintage, k))
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
        """A JSON-able form for snapshots: [[D code, vintage, K, [record, …]], …], a record being
        [prefix, generated, fuel, acquired, intervals]; unchanged slots are not re-encoded."""
        for slot in self._decoded - self._stored.keys():
            self._stored[slot] = [
                [key.prefix, key.generated.isoformat(), key.fuel, acquired.isoformat(),
                 [list(i) for i in held]]
                for key in sorted(self._index[slot], key=fifo_order)
                for acquired, held in sorted(self._sets[key].items())
            ]
        return [[*slot, self._stored[slot]] for slot in sorted(self._stored) if self._stored[slot]]

    @classmethod
    def from_records(cls, data: list[list[object]]) -> Holdings:
        """Holdings from `to_records` output; also reads the first format, a flat list of
        records, which snapshots stored before slots were introduced still hold."""
        holdings = cls()
        if data and isinstance(data[0][0], str):  # the first format: decode it all now
            for record in data:
                key = stored_key(str(record[0]), str(record[1]), str(record[2]))
                holdings._stored.setdefault(index_slot(key), []).append(record)
            holdings._all()
            holdings._stored.clear()
            return holdings
        for d_code, vintage, k, records in data:
            holdings._stored[(int(d_code), int(vintage), int(k))] = records  # type: ignore[arg-type,call-overload,assignment]
        return holdings


def index_slot(key: BlockKey) -> Slot:
    """What a FIFO pick by attributes names first: (D code, vintage, K)."""
    return (key.d_code, key.vintage, key.k)


def fifo_order(key: BlockKey) -> tuple[int, date, str, str, str, int]:
    """Oldest vintage, then earliest generation, then batch identity, then K."""
    return (key.vintage, key.generated, key.company, key.facility, key.batch, key.k)
