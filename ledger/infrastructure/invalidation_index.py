"""Which batches have an invalidation record (§80.1431), as of a position in the log.

Every transfer and compliance retirement asks of each block's batch "was any of it found
invalid?"; almost always the answer is no. Reading the log's `Opened` events once, then only the
notifications stored since, answers that from memory instead of one store read per batch. A
SQLite store finds those rare events by a partial index, not by reading its whole log (issue
15: 0.76 s and, for `BatchStatusIndex`, 0.32 s of a first command on a 1M-event store).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, Self, runtime_checkable
from uuid import UUID

from eventsourcing.persistence import ApplicationRecorder

from ledger.domain.batch_status import BatchStatus
from ledger.domain.invalidation import BatchInvalidation
from ledger.infrastructure.notification_pages import notifications

#: the events that open the records the indexes follow: rare in any log, so a SQLite store
#: keeps a partial index of them (ledger/infrastructure/sqlite_recorder.py)
OPENING = (BatchInvalidation.Opened.TOPIC, BatchStatus.Opened.TOPIC)


@runtime_checkable
class FindsOpened(Protocol):
    """A recorder that finds the events of a rare `OPENING` topic without reading the log."""

    def opened(self, topic: str, after: int, stop: int) -> list[UUID]:
        """The aggregate ids of the `topic` events stored after `after` up to `stop`."""


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
            if isinstance(self.recorder, FindsOpened):
                self.records.update(self.recorder.opened(self.OPENED.TOPIC, self.position,
                                                         position))
            else:
                self.records.update(UUID(str(n.originator_id)) for n in notifications(
                    self.recorder, self.position, stop=position, topics=[self.OPENED.TOPIC]))
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
