"""The eventsourcing application that stores Party and CommandRecord events."""

from __future__ import annotations

from typing import ClassVar

from eventsourcing.application import Application, ProcessingEvent
from eventsourcing.persistence import JSONTranscoder, Recording

from ledger.chain import ChainMapper
from ledger.party import Party
from ledger.persistence import register_transcodings


class LedgerApp(Application):
    """Event store, notification log and snapshots for the ledger's aggregates."""

    name = "RinLedger"
    snapshotting_intervals: ClassVar = {Party: 200}

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        super().register_transcodings(transcoder)
        register_transcodings(transcoder)

    def construct_mapper(self) -> ChainMapper:
        """Events are hash-chained per aggregate for tamper evidence (ledger/chain.py)."""
        return ChainMapper(self.construct_transcoder(), lambda: self.recorder)

    def _record(self, processing_event: ProcessingEvent) -> list[Recording]:
        """Record; if the save fails, the mapper forgets the chains of the events not stored."""
        try:
            return super()._record(processing_event)
        except Exception:
            self.mapper.forget(processing_event.events)  # type: ignore[attr-defined]
            raise

    def _take_snapshots(self, processing_event: ProcessingEvent) -> None:
        """Snapshot an aggregate whose last saved event is at its interval from memory.

        The library replays it from the store instead (about 40 ms for a busy party); the
        aggregate in hand is exactly what that replay would give, since it was just saved.
        Snapshots at earlier versions of the same save still go the library's way.
        """
        if self.snapshots is None:
            return
        for event in processing_event.events:
            aggregate = processing_event.aggregates.get(event.originator_id)
            interval = self.snapshotting_intervals.get(type(aggregate))
            if not interval or event.originator_version % interval:
                continue
            if aggregate.version == event.originator_version:  # type: ignore[union-attr]
                snapshot_class = getattr(type(aggregate), "Snapshot", type(self).snapshot_class)
                self.snapshots.put([snapshot_class.take(aggregate)])
            else:
                self.take_snapshot(event.originator_id, version=event.originator_version)
