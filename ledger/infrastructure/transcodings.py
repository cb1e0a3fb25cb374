"""How the ledger's events are stored: transcodings for dates and value objects.

Dates, Decimals and the value objects (`RinBlock`, `Holdings`, `FuelBook`) round-trip exactly:
a RinBlock is stored as its 38-character code plus its batch's generation date and fuel.
"""

from __future__ import annotations

from datetime import date

from eventsourcing.persistence import JSONTranscoder, Transcoding

from ledger.domain.fuel_book import FuelBook
from ledger.domain.holdings import Holdings
from ledger.domain.rin import RinBlock, stored_block


class DateAsISO(Transcoding):
    type = date
    name = "date_iso"

    def encode(self, obj: date) -> str:
        return obj.isoformat()

    def decode(self, data: str) -> date:
        return date.fromisoformat(data)


class RinBlockAsCode(Transcoding):
    """A block as [38-character code, generation date, fuel]."""

    type = RinBlock
    name = "rin"

    def encode(self, obj: RinBlock) -> list[str]:
        return [obj.code, obj.key.generated.isoformat(), obj.key.fuel]

    def decode(self, data: list[str]) -> RinBlock:
        code, generated, fuel = data
        return stored_block(code, generated, fuel)


class HoldingsAsRecords(Transcoding):
    type = Holdings
    name = "holdings"

    def encode(self, obj: Holdings) -> list[list[object]]:
        return obj.to_records()

    def decode(self, data: list[list[object]]) -> Holdings:
        return Holdings.from_records(data)


class FuelBookAsRecords(Transcoding):
    type = FuelBook
    name = "fuel_book"

    def encode(self, obj: FuelBook) -> list[list[str]]:
        return obj.to_records()

    def decode(self, data: list[list[str]]) -> FuelBook:
        return FuelBook.from_records(data)


def register_transcodings(transcoder: JSONTranscoder) -> None:
    for transcoding in (DateAsISO(), RinBlockAsCode(), HoldingsAsRecords(), FuelBookAsRecords()):
        transcoder.register(transcoding)
