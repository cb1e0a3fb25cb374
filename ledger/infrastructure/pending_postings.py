"""The pending EMTS postings (§80.1452) by date, as of a position in the log, for `expire_trades`.

Expiry asks "which postings are still pending, more than the window of business days old?".
Reading every `TradePosted` ever stored to answer it costs the whole trading history on each
call; this index reads the log's postings and closings once, then only the notifications
stored since, and keeps just the pending ones by date, so an expiry reads the parties with a
stale posting and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date
from typing import Any
from uuid import UUID

from eventsourcing.persistence import ApplicationRecorder, Notification

from ledger.domain.party import Party
from ledger.infrastructure.notification_pages import notifications

TOPICS = (Party.TradePosted.TOPIC, Party.TradeClosed.TOPIC)


class PendingPostings:
    """The pending postings up to `position`: posting id → (its party's aggregate id, date)."""

    def __init__(self, recorder: ApplicationRecorder,
                 decode: Callable[[Notification], Any]) -> None:
        self.recorder = recorder
        self.decode = decode
        self.pending: dict[str, tuple[UUID, date]] = {}
        self.position = 0

    def up_to(self, position: int) -> PendingPostings:
        """Read the postings and closings stored after the last position read, up to
        `position`."""
        if self.position < position:
            for notification in notifications(self.recorder, self.position, stop=position,
                                              topics=TOPICS):
                self.note(self.decode(notification))
            self.position = position
        return self

    def note(self, event: Any) -> None:
        if isinstance(event, Party.TradePosted):
            self.pending[event.client_id] = (event.originator_id, event.effective_date)
        elif isinstance(event, Party.TradeClosed):
            self.pending.pop(event.posting, None)

    def posted_by(self, stale: Callable[[date], bool]) -> Iterator[UUID]:
        """The parties (aggregate ids, each once) with a pending posting whose date is `stale`."""
        return iter(dict.fromkeys(party for party, on in self.pending.values() if stale(on)))
