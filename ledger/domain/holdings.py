"""A party's holdings: which gallon-RINs it owns, and since when.

Per block key (K and the batch's attributes) and per acquisition date, a `SerialSet`. The
acquisition date is what makes "no holding negative on any date" checkable: a party may move a
gallon-RIN only on or after the date it acquired it, so every gallon-RIN's chain of owners runs
forward in time and each gallon-RIN has exactly one owner on every date after its generation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from copy import copy
from datetime import date
from typing import Any

from ledger.domain.ranges import SerialSet
from ledger.domain.rin import BlockKey, RinBlock

Slot = tuple[int, int, int]  # (D code, vintage, K)
SlotHoldings = dict[BlockKey, dict[date, SerialSet]]  # one slot: key → acquired → serials


class Holdings:
    """Gallon-RINs held by one party, by slot (D code, vintage, K), block key and acquisition date.

    A slot is what a FIFO pick names and what one command touches. Slots are shared with the
    copies the repository hands out until one of them changes a slot, which copies it first
    (copy-on-write), so copying a large holder costs one mapping, not all its serial sets.
    `slots` may be any mapping: storage may give one that builds a slot only when it is read.
    """

    def __init__(self, slots: MutableMapping[Slot, SlotHoldings] | None = None) -> None:
        self._slots: MutableMapping[Slot, SlotHoldings] = {} if slots is None else slots
        self._own: set[Slot] = set()  # slots copied by this object since it was last copied

    def __deepcopy__(self, memo: dict[int, Any]) -> Holdings:
        """A copy sharing every slot: from now on each side copies a slot before changing it."""
        self._own.clear()
        return Holdings(copy(self._slots))

    def kept_in(self, slots: MutableMapping[Slot, SlotHoldings]) -> None:
        """Hold the same slots in `slots`, a mapping storage gives that remembers each slot as
        it last stored it: from now on every slot is copied before it changes (`_changing`), so
        the mapping is told of each change (`__setitem__`) and never keeps a stale stored form."""
        self._slots = slots
        self._own.clear()

    @property
    def slots(self) -> Mapping[Slot, Mapping[BlockKey, Mapping[date, SerialSet]]]:
        """Every slot's holdings, read-only: key → acquisition date → serials."""
        return self._slots

    def _held(self, slot: Slot) -> SlotHoldings:
        return self._slots.get(slot) or {}

    def _changing(self, slot: Slot) -> SlotHoldings:
        """`slot`'s holdings to change in place: this object's own copy."""
        if slot not in self._own:
            self._slots[slot] = {key: dict(by_date) for key, by_date in self._held(slot).items()}
            self._own.add(slot)
        return self._slots[slot]

    def add(self, block: RinBlock, on: date) -> None:
        """Take `block` into the holdings as acquired on `on`."""
        incoming = SerialSet(((block.start, block.end),))
        for held in self._held(index_slot(block.key)).get(block.key, {}).values():
            if held.overlaps(incoming):
                raise ValueError(f"{block.code} overlaps gallon-RINs already held")
        by_date = self._changing(index_slot(block.key)).setdefault(block.key, {})
        by_date[on] = by_date.get(on, SerialSet()).union(incoming)

    def remove(self, block: RinBlock, on: date) -> None:
        """Give up `block`, all of it held and acquired on or before `on`."""
        slot = index_slot(block.key)
        outgoing = SerialSet(((block.start, block.end),))
        parts = []  # (acquired, the part of `block` held there)
        for acquired, held in self._held(slot).get(block.key, {}).items():
            part = held.intersection(outgoing)
            if part:
                if acquired > on:
                    break
                parts.append((acquired, part))
        if sum(len(part) for _, part in parts) != block.gallon_rins:
            raise ValueError(f"{block.code} is not held on {on.isoformat()}")
        keys = self._changing(slot)
        by_date = keys[block.key]
        for acquired, part in parts:
            rest = by_date[acquired].subtract(part)
            if rest:
                by_date[acquired] = rest
            else:
                del by_date[acquired]
        if not by_date:
            del keys[block.key]
        if not keys:
            del self._slots[slot]
            self._own.discard(slot)

    def available(self, key: BlockKey, on: date) -> SerialSet:
        """The serials of `key` held now that were acquired on or before `on`."""
        out = SerialSet()
        for acquired, held in self._held(index_slot(key)).get(key, {}).items():
            if acquired <= on:
                out = out.union(held)
        return out

    def held_gallon_rins(self, block: RinBlock, on: date) -> int:
        """How many of `block`'s gallon-RINs may be moved on `on`."""
        whole = SerialSet(((block.start, block.end),))
        return len(self.available(block.key, on).intersection(whole))

    def key_for(self, code_key: BlockKey) -> BlockKey | None:
        """The held key with the same 22-character prefix as a parsed code's key, if any."""
        keys = self._held(index_slot(code_key))
        return next((key for key in keys if key.prefix == code_key.prefix), None)

    def _all(self) -> Iterator[tuple[BlockKey, dict[date, SerialSet]]]:
        for keys in self._slots.values():
            yield from keys.items()

    def blocks(self) -> Iterator[RinBlock]:
        """Every held block, one per contiguous run of serials, in FIFO order."""
        for key, by_date in sorted(self._all(), key=lambda item: fifo_order(item[0])):
            merged = SerialSet.of(interval for held in by_date.values() for interval in held)
            for start, end in merged:
                yield RinBlock(key, start, end)

    def totals(self) -> dict[tuple[int, int, int], int]:
        """Gallon-RINs held per (D code, vintage, K)."""
        out: dict[tuple[int, int, int], int] = defaultdict(int)
        for key, by_date in self._all():
            out[(key.d_code, key.vintage, key.k)] += sum(len(s) for s in by_date.values())
        return dict(out)

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
        withheld: Callable[[BlockKey], SerialSet] | None = None,
    ) -> list[RinBlock]:
        """Choose `quantity` gallon-RINs first-in-first-out among those movable on `on`, but
        those `withheld` (reserved by pending sells, §80.1452(d)).

        Oldest vintage, then earliest generation, then lowest serial (EMTS picks FIFO too).
        Returns fewer than asked when not enough are held; the caller refuses then.
        """
        candidates = [
            key
            for key in self._held((d_code, vintage, k))
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
            if withheld is not None:  # only what is held on `on` is withheld from it
                free = free.difference(withheld(key))
            taken, _ = free.take_lowest(min(need, len(free)))
            need -= len(taken)
            chosen.extend(RinBlock(key, start, end) for start, end in taken)
        return chosen


def index_slot(key: BlockKey) -> Slot:
    """What a FIFO pick by attributes names first: (D code, vintage, K)."""
    return (key.d_code, key.vintage, key.k)


def fifo_order(key: BlockKey) -> tuple[int, date, str, str, str, int]:
    """Oldest vintage, then earliest generation, then batch identity, then K."""
    return (key.vintage, key.generated, key.company, key.facility, key.batch, key.k)
