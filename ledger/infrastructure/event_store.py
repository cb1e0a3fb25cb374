"""The eventsourcing application that stores Party and CommandRecord events."""

from __future__ import annotations

import logging
from typing import Any, ClassVar
from uuid import UUID

from eventsourcing.application import Application, ProcessingEvent
from eventsourcing.persistence import EventStore, JSONTranscoder, Recording

from ledger.application.idempotency import CommandRecord
from ledger.domain.party import Party
from ledger.infrastructure.read_check import UNCHANGED
from ledger.infrastructure.snapshot_seal import SealedSnapshots, SealingMapper
from ledger.infrastructure.transcodings import register_transcodings

logger = logging.getLogger(__name__)


class LedgerApp(Application):
    """Event store, notification log and snapshots for the ledger's aggregates."""

    name = "RinLedger"
    snapshotting_intervals: ClassVar = {Party: 200}
    snapshots_failed = 0  # snapshot writes that failed after their events committed

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        super().register_transcodings(transcoder)
        register_transcodings(transcoder)

    def construct_mapper(self) -> SealingMapper:
        """Events are hash-chained per aggregate for tamper evidence
        (ledger/infrastructure/chain.py), and snapshots sealed to that chain
        (ledger/infrastructure/snapshot_seal.py)."""
        return SealingMapper(
            self.construct_transcoder(), lambda: self.recorder,
            final_topics=(CommandRecord.Applied.TOPIC,),
        )

    def construct_snapshot_store(self) -> EventStore[Any]:
        """Only snapshots whose seal holds are loaded; the others are replayed past."""
        return SealedSnapshots(super().construct_snapshot_store(), self.mapper)  # type: ignore[arg-type]

    def _record(self, processing_event: ProcessingEvent) -> list[Recording]:
        """Record; if the save fails, the mapper forgets the chains of the events not stored."""
        try:
            return super()._record(processing_event)
        except Exception:
            self.mapper.forget(processing_event.events)  # type: ignore[attr-defined]
            raise

    def save_in_order(
        self, events: list[Any], aggregates: list[Any], unchanged: dict[UUID, int]
    ) -> list[Recording]:
        """Save `events` in this order in one transaction (`save` would group them by aggregate
        and check each object against the library's runtime protocols, which costs more than
        storing it); `aggregates` are those the events came from, for snapshots; the save
        fails as a conflict unless each aggregate of `unchanged` is still at the version
        given (ledger/infrastructure/read_check.py)."""
        processing_event: ProcessingEvent = ProcessingEvent()
        processing_event.saved_kwargs[UNCHANGED] = unchanged
        processing_event.events.extend(events)
        processing_event.aggregates.update((aggregate.id, aggregate) for aggregate in aggregates)
        recordings = self._record(processing_event)
        try:
            self._take_snapshots(processing_event)
        except Exception as error:  # a cache: the events are committed, the command stands
            self.snapshots_failed += 1
            logger.warning("snapshot not stored (%s): its aggregate replays without it", error)
        self._notify(recordings)
        return recordings

    def _take_snapshots(self, processing_event: ProcessingEvent) -> None:
        """Snapshot, from memory, each aggregate whose save crossed a multiple of its interval.

        The snapshot is taken at the aggregate's version after the save (a snapshot is a cache
        of state at any version); the aggregate in hand is exactly what a replay of the store
        would give, since it was just saved, so nothing is read back (the library replays).
        """
        if self.snapshots is None:
            return
        crossed: dict[Any, Any] = {}
        for event in processing_event.events:
            aggregate = processing_event.aggregates.get(event.originator_id)
            interval = self.snapshotting_intervals.get(type(aggregate))  # type: ignore[arg-type]
            if interval and event.originator_version % interval == 0:
                crossed[event.originator_id] = aggregate
        snapshots = [
            getattr(type(aggregate), "Snapshot", type(self).snapshot_class).take(aggregate)  # type: ignore[union-attr]
            for aggregate in crossed.values()
        ]
        if snapshots:
            self.snapshots.put(snapshots)  # one transaction for all of this save's snapshots
