"""The pending EMTS postings (§80.1452) by date, as of a position in the log, for `expire_trades`.

Expiry asks "which postings are still pending, more than the window of business days old?".
Reading every `TradePosted` ever stored to answer it costs the whole trading history on each
call; this index reads the store's table of the pending postings once (ledger/infrastructure/
pending_table.py: the few pending, not every posting ever made), then only the notifications
stored since, and keeps just the pending ones by date, so an expiry reads the parties with a
stale posting and nothing else. It reads the three fields it needs straight from each stored
state, without making the whole event (its ranges, amounts and prices): the full decoding of
every posting was 5 % of bulk-ingest CPU. A save of the ledger's own that follows what the index
has read is noted from its events (`saved`), not read back from the store (2.6 % of bulk-ingest
CPU went to reading them back).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import date
from typing import Any, Protocol, runtime_checkable
from uuid import UUID

import orjson
from eventsourcing.persistence import ApplicationRecorder

from ledger.domain.party import Party
from ledger.infrastructure import pending_table
from ledger.infrastructure.notification_pages import notifications
from ledger.infrastructure.pending_table import TOPICS
from ledger.infrastructure.store_refusals import StoreRefused


def pending_of(posting: str, hex_id: str, on: str) -> tuple[UUID, date]:
    """A row of the table as the index keeps it; `StoreRefused` naming the row if it is not one
    the ledger writes (an aggregate id of 32 hex digits, an ISO date): an expiry must not run
    on an index that silently lacks it."""
    try:
        return UUID(hex=hex_id), date.fromisoformat(on)
    except ValueError as error:
        raise StoreRefused(
            f"{pending_table.TABLE} row {posting!r} ({hex_id!r}, {on!r}) is not a posting the "
            "ledger writes: altered (dropped, the table is filled anew from the log)"
        ) from error


@runtime_checkable
class KeepsPending(Protocol):
    """A recorder whose store keeps the pending postings' table (both of the ledger's)."""

    def pending_postings(self) -> tuple[int, list[pending_table.Row]]:
        """(the last notification id, the table's rows) as of one commit."""


class PendingPostings:
    """The pending postings up to `position`: posting id → (its party's aggregate id, date)."""

    def __init__(self, recorder: ApplicationRecorder) -> None:
        self.recorder = recorder
        self.pending: dict[str, tuple[UUID, date]] = {}
        self.position = 0

    def up_to(self, position: int) -> PendingPostings:
        """Read the postings and closings stored after the last position read, up to
        `position`; the first time, the store's table of them (as of its last commit) first."""
        if self.position == 0 < position and isinstance(self.recorder, KeepsPending):
            at, rows = self.recorder.pending_postings()
            self.pending = {posting: pending_of(posting, hex_id, on)
                            for posting, hex_id, on in rows}
            self.position = at  # only once every row is read: else the table is read again
        if self.position < position:
            for notification in notifications(self.recorder, self.position, stop=position,
                                              topics=TOPICS):
                made = pending_table.change(notification.topic, notification.originator_id,
                                            orjson.loads(notification.state))
                if made is None:
                    continue
                posting, row = made
                if row is None:
                    self.pending.pop(posting, None)
                else:
                    self.pending[posting] = pending_of(*row)
            self.position = position
        return self

    def saved(self, events: Sequence[Any], ids: Sequence[int]) -> None:
        """Note this ledger's own save of `events`, stored as notifications `ids` (one each, in
        one transaction), when the index has read up to the notification just before them: the
        log then holds nothing between, and the postings and closings are those events'."""
        if not ids or self.position != ids[0] - 1 or ids[-1] - ids[0] + 1 != len(ids):
            return  # something else may have been stored in between: read it on `up_to`
        for event in events:
            if isinstance(event, Party.TradePosted):
                self.pending[event.client_id] = (event.originator_id, event.effective_date)
            elif isinstance(event, Party.TradeClosed):
                self.pending.pop(event.posting, None)
        self.position = ids[-1]

    def posted_by(self, stale: Callable[[date], bool]) -> Iterator[UUID]:
        """The parties (aggregate ids, each once) with a pending posting whose date is `stale`."""
        return iter(dict.fromkeys(party for party, on in self.pending.values() if stale(on)))
