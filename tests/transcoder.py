"""The transcoder `LedgerApp` makes (the library's transcodings, then the ledger's), for tests
that encode states or events without a store."""

from __future__ import annotations

from eventsourcing.persistence import DatetimeAsISO, DecimalAsStr, JSONTranscoder, UUIDAsHex

from ledger.infrastructure.transcodings import register_transcodings


def ledger_transcoder() -> JSONTranscoder:
    """A fresh transcoder with every transcoding a store's mapper has."""
    made = JSONTranscoder()
    for transcoding in (UUIDAsHex(), DecimalAsStr(), DatetimeAsISO()):
        made.register(transcoding)
    register_transcodings(made)
    return made
