"""The BatchInvalidation aggregate: the regulator's findings that gallon-RINs of one batch are
invalid (§80.1431(a)), one `Invalidated` event per finding with the exact serial ranges.

One aggregate per batch identity (§80.1425(e)), so a batch can be invalidated in several parts
and a second finding over an already-invalid serial is refused by `invalidate`. The gallon-RINs
are invalid whatever their K: the ranges name serials of the batch, not a holder's block.
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from ledger.domain.ranges import SerialSet
from ledger.domain.rin import BatchId, RinBlock
from ledger.rules import s1431_invalid as inv

INVALIDATION_NAMESPACE = uuid5(NAMESPACE_URL, "https://rin-ledger/invalidation")


class BatchInvalidation(Aggregate):
    """Which gallon-RINs of one generated batch have been found invalid, and why (§80.1431)."""

    TOPIC = "rin_ledger:BatchInvalidation"

    @staticmethod
    @lru_cache(maxsize=8_192)
    def create_id(batch_id: BatchId) -> UUID:
        """Deterministic id: uuid5 of the batch identity YYYYCCCCFFFFFBBBBB (remembered: every
        transfer and retirement asks it of each block's batch)."""
        return uuid5(INVALIDATION_NAMESPACE, str(batch_id))

    class Event(Aggregate.Event):
        TOPIC = "rin_ledger:BatchInvalidation.Event"

    class Created(Event, Aggregate.Created):
        """The library's base creation event; invalidations are created by `Opened`."""

        TOPIC = "rin_ledger:BatchInvalidation.Created"

    class Opened(Aggregate.Created):
        """The first finding against a batch opened its record; `generated` is the whole batch."""

        TOPIC = "rin_ledger:BatchInvalidation.Opened"
        batch: str
        generated: RinBlock

    class Invalidated(Event):
        """Gallon-RINs of the batch found invalid for `reason` (a §80.1431(a) cause)."""

        TOPIC = "rin_ledger:BatchInvalidation.Invalidated"
        effective_date: date
        client_id: str | None
        rins: list[RinBlock]
        reason: str
        note: str | None

        def apply(self, record: BatchInvalidation) -> None:
            record.invalid = record.invalid.union(
                SerialSet.of((block.start, block.end) for block in self.rins)
            )

    def __init__(self, batch: str, generated: RinBlock) -> None:
        self.batch = batch
        self.generated = generated
        self.invalid = SerialSet()

    @classmethod
    def open(cls, generated: RinBlock) -> BatchInvalidation:
        """A new, empty record for the batch `generated` names."""
        batch_id = generated.key.batch_id
        return cls._create(
            cls.Opened, id=cls.create_id(batch_id), batch=str(batch_id), generated=generated
        )

    def invalid_in(self, block: RinBlock) -> int:
        """How many of `block`'s gallon-RINs are invalid."""
        return len(self.invalid.intersection(SerialSet(((block.start, block.end),))))

    def invalidate(
        self, start: int, end: int, on: date, reason: str, *, note: str | None,
        client_id: str | None,
    ) -> RinBlock:
        """The regulator's finding that serials `start`..`end` of the batch are invalid
        (§80.1431(a)); a serial already found invalid is not found so twice."""
        block = RinBlock(self.generated.key, start, end)
        inv.check_not_yet_invalid(self.batch, self.invalid_in(block), start, end)
        self.trigger_event(
            self.Invalidated, effective_date=on, client_id=client_id, rins=[block],
            reason=reason, note=note,
        )
        return block
