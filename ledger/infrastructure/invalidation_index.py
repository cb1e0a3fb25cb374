"""Which batches have an invalidation record (§80.1431), as of a position in the log.

Every transfer and compliance retirement asks of each block's batch "was any of it found
invalid?"; almost always the answer is no. Reading the log's `Opened` events once, then only the
notifications stored since, answers that from memory instead of one store read per batch.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Self
from uuid import UUID

from eventsourcing.persistence import ApplicationRecorder

from ledger.domain.invalidation import BatchInvalidation
from ledger.infrastructure.notification_pages import notifications


class InvalidationIndex:
    """The ids of the `BatchInvalidation` records opened up to `position` in the log."""

    #: the event that opens a record of the kind this index follows
    OPENED: type[Any] = BatchInvalidation.Opened

    def __init__(self, recorder: ApplicationRecorder) -> None:
        self.recorder = recorder
        self.records: set[UUID] = set()
        self.position = 0

    def up_to(self, position: int) -> Self:
        """Read the records opened after the last position read, up to `position`."""
        if self.position < position:
            self.records.update(UUID(str(n.originator_id)) for n in notifications(
                self.recorder, self.position, stop=position,
                topics=[self.OPENED.TOPIC]))
            self.position = position
        return self

    def saved(self, events: Iterable[Any], after: int, last: int) -> None:
        """Note this ledger's own save of `events`, stored right after position `after` up to
        `last`: no need to read back what it just wrote."""
        if self.position == after:
            self.records.update(
                e.originator_id for e in events if isinstance(e, self.OPENED)
            )
            self.position = last

    def opened(self, record_id: UUID) -> bool:
        """Whether the record `record_id` was opened by the position read."""
        return record_id in self.records
