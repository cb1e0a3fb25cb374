"""The eventsourcing application that stores Party and CommandRecord events."""

from __future__ import annotations

from typing import ClassVar

from eventsourcing.application import Application
from eventsourcing.persistence import JSONTranscoder

from ledger.party import Party
from ledger.persistence import register_transcodings


class LedgerApp(Application):
    """Event store, notification log and snapshots for the ledger's aggregates."""

    name = "RinLedger"
    snapshotting_intervals: ClassVar = {Party: 200}

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        super().register_transcodings(transcoder)
        register_transcodings(transcoder)
