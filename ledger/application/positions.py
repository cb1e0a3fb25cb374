"""`Positions`: what every party held, read at one notification-log position and writing
nothing (no read model is made or touched).

Each party is loaded at the version it had at that position (ledger/infrastructure/versions.py),
so a reader sees one committed state across all parties — a transfer's two sides together —
whatever writers store meanwhile. A position on an earlier date replays the party's holding
events effective by then, in the order they were stored: a party can move a gallon-RIN only on
or after the date it acquired it (§80.1428(a)(1)), so those events alone are a consistent past.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from datetime import date
from typing import Any
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.utils import get_topic

from ledger.application.api_errors import UnknownParty
from ledger.application.arguments import as_of_date, party_id
from ledger.application.event_log import EventLog
from ledger.application.held_blocks import block_rows
from ledger.application.rows import HeldBlock, Holding
from ledger.domain.batch_status import BatchStatus
from ledger.domain.party import Party
from ledger.domain.rin import BatchId
from ledger.infrastructure.versions import versions_at

#: the events that change what a party holds, its fuel (which a K=1 move carries) or where its
#: blocks are cut (§80.1428(d)); the others (trade postings, obligations) hold no RINs
HOLDING_EVENTS = (
    Party.Assigned, Party.TransferredIn, Party.TransferredOut, Party.Separated, Party.Retired,
    Party.Split, Party.FuelMoved, Party.TradeReversedOut, Party.TradeReversedIn, Party.Unretired,
)

REGISTERED = [get_topic(Party.Registered)]


def on_date(events: Iterable[Any], day: date) -> Party:
    """A party as it stood on `day`: its registration, then each holding event effective by
    `day`, in stored order (a throwaway copy, never saved)."""
    stream = iter(events)
    party: Party = next(stream).mutate(None)  # Party.Registered creates the party
    for event in stream:
        if isinstance(event, HOLDING_EVENTS) and event.effective_date <= day:
            event.apply(party)
    return party


class Positions:
    """Every party's holdings at notification `position`, on any date (§80.1428(a)(5) asks
    them at quarter ends). Made by `Ledger.at(position)` or `Ledger.snapshot()`."""

    def __init__(self, app: Application[UUID], log: EventLog, position: int,
                 lock: threading.RLock) -> None:
        self._app = app
        self._log = log
        self._lock = lock
        #: the notification id every answer is read at
        self.position = position

    def parties(self) -> list[str]:
        """The company ids registered at this position, in order."""
        with self._lock:
            return sorted(
                logged.event.party_id  # type: ignore[attr-defined]
                for logged in self._log.events(0, stop=self.position, topics=REGISTERED)
            )

    def party(self, party: str, as_of: date | str | None = None) -> Party:
        """The party's aggregate at this position (on `as_of`: a copy holding only what it held
        that day); `UnknownParty` if it was not registered by then."""
        return self._loaded([party_id(party)], as_of_date(as_of))[0]

    def holdings(self, party: str | None = None, as_of: date | str | None = None
                 ) -> list[Holding]:
        """Gallon-RINs held per party, D code, vintage and K (all parties if `party` is None)."""
        return [
            Holding(p.party_id, d, v, k, n)
            for p in self._parties(party, as_of)
            for (d, v, k), n in sorted(p.holdings.totals().items()) if n
        ]

    def blocks(self, party: str | None = None, as_of: date | str | None = None
               ) -> list[HeldBlock]:
        """One row per held block with its 38-character code; daughters apart (§80.1428(d)),
        with `reserved`, `qap` and `locked` as they stood at this position (with `as_of`:
        whether a sell's or a lock's life covers that day, docs/locks.md)."""
        day = as_of_date(as_of)
        held = self._parties(party, as_of)
        if day is None:
            return [row for p in held for row in block_rows(p, self.status)]
        books = self._loaded([p.party_id for p in held], None)  # trade books: reservation lives
        return [row for p, book in zip(held, books, strict=True)
                for row in block_rows(p, self.status, day, book.trades)]

    def status(self, batch_id: BatchId) -> BatchStatus | None:
        """A batch's QAP status and locks at this position, or None if it had neither."""
        aggregate = BatchStatus.create_id(batch_id)
        with self._lock:
            version = versions_at(self._app.recorder, [aggregate], self.position).get(aggregate)
            if version is None:
                return None
            status: BatchStatus = self._app.repository.get(aggregate, version=version)
            return status

    def _parties(self, party: str | None, as_of: date | str | None) -> list[Party]:
        day = as_of_date(as_of)
        names = self.parties() if party is None else [party_id(party)]
        return self._loaded(names, day)

    def _loaded(self, names: list[str], day: date | None) -> list[Party]:
        ids = {name: Party.create_id(name) for name in names}
        with self._lock:
            versions = versions_at(self._app.recorder, list(ids.values()), self.position)
            return [self._load(name, ids[name], versions, day) for name in names]

    def _load(self, name: str, aggregate: UUID, versions: dict[UUID, int], day: date | None
              ) -> Party:
        version = versions.get(aggregate)
        if version is None:
            raise UnknownParty(name)
        if day is None:
            loaded: Party = self._app.repository.get(aggregate, version=version)
            return loaded
        return on_date(self._events(aggregate, version), day)

    def _events(self, aggregate: UUID, version: int) -> Iterator[Any]:
        return iter(self._app.events.get(aggregate, lte=version))
