"""The unit of work: the aggregates one or more commands of a transaction load and change.

A refused command stores nothing, and this is enforced here, not left to each method: when a
command is refused, every aggregate it used that has events pending is discarded (its events
dropped, the object forgotten by every cache) and reloaded as it was before that command, so a
later save of the transaction can never store what the refused command triggered.
"""

from __future__ import annotations

from contextlib import suppress
from datetime import date
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import Recording

from ledger.domain.batch_gate import Gate
from ledger.domain.batch_status import BatchStatus
from ledger.domain.business_days import business_days_after
from ledger.domain.invalidation import BatchInvalidation
from ledger.domain.party import Party
from ledger.domain.rin import BatchId, RinBlock
from ledger.infrastructure.batch_status_index import BatchStatusIndex
from ledger.infrastructure.command_records import CommandRecord
from ledger.infrastructure.command_table import Applied, AppliedCommand
from ledger.infrastructure.event_store import LedgerApp
from ledger.infrastructure.invalidation_index import InvalidationIndex
from ledger.infrastructure.settings import TRADE_WINDOW
from ledger.rules import s1428_rins as r1428


class UnitOfWork:
    """The aggregates loaded and changed by the commands of one transaction."""

    def __init__(
        self, app: LedgerApp, *, optimistic: bool = False, cache: dict[UUID, Any] | None = None,
        opened: InvalidationIndex | None = None, trade_window: int = TRADE_WINDOW,
        statuses_opened: BatchStatusIndex | None = None,
    ) -> None:
        self.app = app
        #: business days a posting may wait before `expire_trades` ends it (§80.1452(c))
        self.trade_window = trade_window
        self.optimistic = optimistic
        # A ledger passing its cache also drops from the repository's cache what a failed unit
        # changed, so this unit may use the repository's objects without a copy.
        self.copy = cache is None
        self.cache = cache if cache is not None else {}
        if opened is None:
            opened = InvalidationIndex(app.recorder).up_to(app.recorder.max_notification_id() or 0)
        self.opened = opened
        if statuses_opened is None:
            statuses_opened = BatchStatusIndex(app.recorder).up_to(
                app.recorder.max_notification_id() or 0)
        #: which batches have a QAP status or lock record (§80.1471(e), §80.1474(b)(1))
        self.statuses_opened = statuses_opened
        self.statuses: dict[BatchId, BatchStatus | None] = {}
        self.parties: dict[str, Party | None] = {}
        self.records: dict[str, CommandRecord | Applied] = {}
        #: the rows of `rin_commands` this transaction stores, each placed after its last event
        self.rows: list[Applied] = []
        self.unplaced: list[Applied] = []  # those of the command just handled
        self.invalidations: dict[BatchId, BatchInvalidation | None] = {}
        self.events: list[Any] = []
        self.touched: dict[UUID, Any] = {}  # aggregates the current command has used
        #: the version of each party and invalidation record read (0: absent), which the save
        #: checks for those it does not change: a decision rests on them too (§80.1431(b))
        self.read: dict[UUID, int] = {}

    def touch(self, aggregate: Any) -> Any:
        """Note that the current command used `aggregate` (only those can have new events)."""
        if aggregate is not None:
            self.touched[aggregate.id] = aggregate
        return aggregate

    def refused(self) -> None:
        """The current command was refused: discard what it triggered, on every aggregate it
        used, and forget what it used, so that the next command's events are collected in
        the order that command records them (issue 9, attack 9)."""
        for aggregate in self.touched.values():
            if aggregate.pending_events:
                self.discard(aggregate)
        self.touched.clear()

    def discard(self, aggregate: Any) -> None:
        """Drop `aggregate`'s pending events and put in its place the aggregate as it was
        before the current command: as read, plus the events of this transaction's earlier
        commands (or None, if it did not exist)."""
        aggregate.collect_events()
        self.cache.pop(aggregate.id, None)
        cache = self.app.repository.cache
        if cache is not None:
            with suppress(KeyError):
                cache.get(aggregate.id, evict=True)
        fresh: Any = None
        if self.read.get(aggregate.id):
            fresh = self.app.repository.get(aggregate.id, version=self.read[aggregate.id])
        for event in self.events:
            if event.originator_id == aggregate.id:
                fresh = event.mutate(fresh)
        if isinstance(aggregate, Party):
            self.parties[aggregate.party_id] = fresh
        elif isinstance(aggregate, BatchInvalidation):
            self.invalidations[aggregate.generated.key.batch_id] = fresh
        elif isinstance(aggregate, BatchStatus):
            self.statuses[aggregate.generated.key.batch_id] = fresh

    def party(self, party_id: str) -> Party | None:
        if party_id not in self.parties:
            party_key = Party.create_id(party_id)
            try:
                self.parties[party_id] = self.load(party_key)
            except AggregateNotFoundError:
                self.parties[party_id] = None
            self.note_read(party_key, self.parties[party_id])
        party: Party | None = self.touch(self.parties[party_id])
        return party

    def note_read(self, aggregate_id: UUID, aggregate: Any) -> None:
        """Remember the version this unit read `aggregate_id` at (0: absent) for the save."""
        self.read[aggregate_id] = aggregate.version if aggregate is not None else 0

    def read_ids(self) -> list[UUID]:
        """The ids of the aggregates this unit found stored (to load again for a retry)."""
        return [aggregate_id for aggregate_id, version in self.read.items() if version]

    def load(self, aggregate_id: UUID) -> Any:
        """An aggregate as last saved: the ledger's in-memory copy if it has one, else the store's.

        The ledger hands over a cache only while nothing but its own saves has been stored since
        it was filled, and drops it after any failed command or save.
        """
        cached = self.cache.get(aggregate_id)
        if cached is not None:
            return cached
        return self.app.repository.get(aggregate_id, deepcopy_from_cache=self.copy)

    def posting_parties(self, on: date | None = None) -> list[Party]:
        """Every party with a posting pending more than the window of business days on `on`
        (any pending posting, without `on`): those the store's index of pending postings names
        (ledger/infrastructure/pending_postings.py), read up to now, and those this transaction
        made post (not in the log yet). Costs the pending postings, not every posting ever."""
        def stale(posted: date) -> bool:
            return on is None or business_days_after(posted, on) > self.trade_window

        index = self.app.pending_postings.up_to(self.app.recorder.max_notification_id() or 0)
        found = dict.fromkeys(index.posted_by(stale))
        found.update((p.id, None) for p in self.parties.values() if p is not None and p.trades.open)
        parties = []
        for party_key in sorted(found):
            known = next((p for p in self.parties.values() if p is not None and p.id == party_key),
                         None)
            party = known or self.party(self.load(party_key).party_id)
            parties.append(self.touch(party))
        return parties

    def registered(self, party_id: str, field_name: str) -> Party:
        """The party, which must be registered to own RINs (§80.1428(b)(2))."""
        party = self.party(party_id)
        r1428.check_registered(party_id, party is not None, field_name)
        assert party is not None
        return party

    def adopt(self, aggregate: Party | BatchInvalidation | BatchStatus) -> None:
        """A new aggregate the current command created."""
        if isinstance(aggregate, Party):
            self.parties[aggregate.party_id] = aggregate
        elif isinstance(aggregate, BatchStatus):
            self.statuses[aggregate.generated.key.batch_id] = aggregate
        else:
            self.invalidations[aggregate.generated.key.batch_id] = aggregate
        self.touch(aggregate)

    def invalidation(self, batch_id: BatchId) -> BatchInvalidation | None:
        """The batch's invalidation record (§80.1431), or None if none of it was found invalid."""
        if batch_id not in self.invalidations:
            # Most batches have none: the index of opened records answers that from memory.
            record_id = BatchInvalidation.create_id(batch_id)
            self.invalidations[batch_id] = (
                self.load(record_id) if self.opened.opened(record_id) else None
            )
            self.note_read(record_id, self.invalidations[batch_id])
        record: BatchInvalidation | None = self.touch(self.invalidations[batch_id])
        return record

    def invalid_in(self, block: RinBlock) -> int:
        """How many of `block`'s gallon-RINs have been found invalid."""
        record = self.invalidation(block.key.batch_id)
        return record.invalid_in(block) if record is not None else 0

    def batch_status(self, batch_id: BatchId) -> BatchStatus | None:
        """The batch's QAP status and locks (ledger/domain/batch_status.py), or None if it was
        never verified nor locked."""
        if batch_id not in self.statuses:
            record_id = BatchStatus.create_id(batch_id)
            self.statuses[batch_id] = (
                self.load(record_id) if self.statuses_opened.opened(record_id) else None
            )
            self.note_read(record_id, self.statuses[batch_id])
        status: BatchStatus | None = self.touch(self.statuses[batch_id])
        return status

    def gate(self, receiver: Party | None = None) -> Gate:
        """What this command's RINs pass besides their holder's book: their batches' locks and
        QAP status, and `receiver`'s blocked list (§80.1452(d))."""
        if receiver is None:
            return Gate(self.batch_status)
        return Gate(self.batch_status, receiver.party_id, tuple(receiver.blocked))

    def generated_block(self, batch_id: BatchId) -> RinBlock | None:
        """The whole batch-RIN as generated (serials 1..N), or None if no such batch exists."""
        party = self.party(batch_id.company)
        return party.facts.generated_block(batch_id) if party is not None else None

    def record_of(self, client_id: str) -> AppliedCommand | None:
        """The record of the command with this client id (`.client_id`, `.digest`, `.events`):
        made in this transaction, or stored in either format; None if none was applied."""
        if client_id in self.records:
            return self.records[client_id]
        return self.app.stored_command(client_id)

    def applied(self, client_id: str, digest: str, events: list[str]) -> None:
        """Record that the command just handled, with this client id and content digest,
        stored `events`: a row of `rin_commands`, or, in a store that keeps them as events, a
        `CommandRecord` (ledger/infrastructure/command_table.py)."""
        if self.app.records_in_table():
            record = Applied(client_id, digest, events)
            self.records[client_id] = record
            self.unplaced.append(record)
        else:
            self.records[client_id] = self.touch(
                CommandRecord.applied(client_id, digest, events, self.app.record_id))

    def reusable(self) -> list[Any]:
        """The aggregates later commands may load again: parties and invalidation records."""
        return [
            *(p for p in self.parties.values() if p is not None),
            *(r for r in self.invalidations.values() if r is not None),
            *(r for r in self.statuses.values() if r is not None),
        ]

    def aggregates(self) -> list[Any]:
        records = (r for r in self.records.values() if isinstance(r, CommandRecord))
        return [*self.reusable(), *records]

    def collect(self) -> None:
        """Move the events of the command just handled into the transaction, in command order.

        Saving aggregates one after another would group a batch's events by aggregate; the
        notification log must instead follow the commands, so that a gallon-RIN's generation
        always precedes its transfer for everyone who follows the log.
        """
        for aggregate in self.touched.values():
            self.events.extend(aggregate.collect_events())
        self.touched.clear()
        last = len(self.events) - 1
        self.rows.extend(Applied(row.client_id, row.digest, row.events, last)
                         for row in self.unplaced)
        self.unplaced.clear()

    def save(self) -> list[Recording[UUID]]:
        """Store every event of the transaction, in command order, atomically."""
        self.collect()
        changed = {event.originator_id for event in self.events}
        unchanged = {i: v for i, v in self.read.items() if i not in changed}
        return self.app.save_in_order(self.events, self.aggregates(), unchanged, self.rows)
