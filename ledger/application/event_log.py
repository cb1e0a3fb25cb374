"""`EventLog`: the read port over the ledger's notification log, for whoever follows it (the
read side in `projections`, reports, tests): decoded domain events with their notification
ids, the current position, and the name a follower's tracking records use. Readers get no
recorder, mapper or environment: the write side's storage stays behind this port.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.domain import DomainEventProtocol

from ledger.infrastructure.notification_pages import PAGE, pages


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    """One domain event as the log holds it: its notification id (its place in the log, the
    ledger's knowledge time) and the event."""

    notification_id: int
    event: DomainEventProtocol[UUID]


class EventLog:
    """Read-only access to one ledger's notification log."""

    def __init__(self, app: Application[UUID]) -> None:
        self._recorder = app.recorder
        self._decode = app.mapper.to_domain_event
        self._events = app.events
        #: the application name a follower's tracking records are kept under
        self.name = app.name

    def position(self) -> int:
        """The last notification id stored: it moves whenever any writer saves."""
        return self._recorder.max_notification_id() or 0

    def pages(
        self, after: int = 0, *, stop: int | None = None, topics: Sequence[str] = (),
        size: int = PAGE,
    ) -> Iterator[list[LoggedEvent]]:
        """Decoded pages of the log after `after` up to `stop` (see
        ledger/infrastructure/notification_pages.py: the last page is the first shorter than
        `size`, perhaps empty)."""
        decode = self._decode
        for page in pages(self._recorder, after, stop=stop, topics=topics, size=size):
            yield [LoggedEvent(n.id, decode(n)) for n in page]

    def events(
        self, after: int = 0, *, stop: int | None = None, topics: Sequence[str] = (),
    ) -> Iterator[LoggedEvent]:
        """The events of `pages`, one by one."""
        for page in self.pages(after, stop=stop, topics=topics):
            yield from page

    def history(self, aggregate_id: UUID) -> list[Any]:
        """Every stored event of one aggregate, in version order."""
        return list(self._events.get(aggregate_id))
