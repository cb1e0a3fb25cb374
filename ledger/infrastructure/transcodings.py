"""How the ledger's events are stored: transcodings for dates and value objects, store settings.

Dates, Decimals and the value objects (`RinBlock`, `Holdings`, `FuelBook`) round-trip exactly:
a RinBlock is stored as its 38-character code plus its batch's generation date and fuel.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from eventsourcing.persistence import JSONTranscoder, Transcoding

from ledger.domain.fuel_book import FuelBook
from ledger.domain.holdings import Holdings
from ledger.domain.party_facts import (
    AppliedRetirement,
    DelayedFacts,
    PartyFacts,
    ReportedYear,
    UnblendedYear,
)
from ledger.domain.ranges import SerialSet
from ledger.domain.rin import BatchId, RinBlock, stored_block
from ledger.infrastructure.sqlite_recorder import TOPIC as RECORDER_TOPIC

DEFAULT_DATA = "./rin-data"
EVENTS_FILE = "events.sqlite"
# Aggregates kept in memory between commands; fast-forwarded from the store on each use, so
# another writer's events are never missed (about the number of parties in the market).
AGGREGATE_CACHE_MAXSIZE = "5000"
#: needs psycopg
POSTGRES_RECORDER_TOPIC = "ledger.infrastructure.postgres_recorder:LedgerPostgresRecorder"


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
    for transcoding in (DateAsISO(), RinBlockAsCode(), HoldingsAsRecords(), FuelBookAsRecords(),
                        *FACTS_TRANSCODINGS):
        transcoder.register(transcoding)


# --- Party facts (ledger/domain/party_facts.py): int-keyed maps as [key, value] pairs ---------

def pairs(mapping: dict[int, Any]) -> list[list[Any]]:
    """An int-keyed map as JSON can hold it: its keys would otherwise come back as strings."""
    return [[key, value] for key, value in mapping.items()]


def unpairs(data: list[list[Any]]) -> dict[int, Any]:
    return {int(key): value for key, value in data}


class PartyFactsAsRecords(Transcoding):
    """The facts a party's rules read, with every int key (years, D codes) kept an int."""

    type = PartyFacts
    name = "party_facts"

    def encode(self, obj: PartyFacts) -> dict[str, Any]:
        delayed = obj.delayed
        return {
            "batches": [[year, list(batches.values())] for year, batches in obj.batches.items()],
            "produced": pairs(obj.produced),
            "fuels": obj.fuels,
            "first_year": obj.first_year,
            "window": [[b.vintage, b.company, b.facility, b.batch, [list(i) for i in serials]]
                       for b, serials in delayed.window.items()],
            "delayed_retired": [list(row) for row in delayed.retired],
            "delayed_generated": pairs(delayed.generated),
            "delayed_on": sorted(delayed.generated_on),
            "replacement": obj.replacement,
            "reports": [[year, r.rvo, r.approach, r.bbd_2010_reduction, r.basis]
                        for year, r in obj.reports.items()],
            "applied": [[year, [[a.block, a.reason, a.category] for a in applied]]
                        for year, applied in obj.applied.items()],
            "unblended": [[year, pairs(u.own), pairs(u.counted)]
                          for year, u in obj.unblended.items()],
        }

    def decode(self, data: dict[str, Any]) -> PartyFacts:
        delayed = DelayedFacts(
            window={BatchId(int(v), c, f, b): SerialSet.of((s, e) for s, e in serials)
                    for v, c, f, b, serials in data["window"]},
            retired=[(on, int(vintage), int(n)) for on, vintage, n in data["delayed_retired"]],
            generated=unpairs(data["delayed_generated"]),
            generated_on=set(data["delayed_on"]),
        )
        return PartyFacts(
            batches={int(year): {b.key.batch: b for b in blocks}
                     for year, blocks in data["batches"]},
            produced=unpairs(data["produced"]),
            fuels=dict(data["fuels"]),
            first_year=dict(data["first_year"]),
            delayed=delayed,
            replacement=list(data["replacement"]),
            reports={int(year): ReportedYear(rvo, approach, bbd, basis)
                     for year, rvo, approach, bbd, basis in data["reports"]},
            applied={int(year): [AppliedRetirement(b, reason, category)
                                 for b, reason, category in applied]
                     for year, applied in data["applied"]},
            unblended={int(year): UnblendedYear(unpairs(own), unpairs(counted))
                       for year, own, counted in data["unblended"]},
        )


FACTS_TRANSCODINGS = (PartyFactsAsRecords(),)


#: a URL's options (`?sslmode=require`…) are not passed to the server: silently dropping one
#: would, for instance, connect without the TLS it asked for
UNSUPPORTED_OPTIONS = ("a PostgreSQL URL here is postgresql://user:password@host:port/database: "
                       "options after it (?sslmode=…) are not supported; set them in the "
                       "environment libpq reads (PGSSLMODE=require)")


def store_env(
    data: str | os.PathLike[str] | None = None, store: str | None = None
) -> dict[str, Any]:
    """Environment for the event store: a SQLite file under `data`, or a PostgreSQL URL."""
    store = store or os.environ.get("RIN_STORE")
    if store and store.startswith(("postgresql://", "postgres://")):
        url = urlparse(store)
        if url.query or url.fragment or url.params:
            raise ValueError(UNSUPPORTED_OPTIONS)
        return {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": url.path.lstrip("/") or "rin",
            "POSTGRES_HOST": url.hostname or "localhost",
            "POSTGRES_PORT": str(url.port or 5432),
            "POSTGRES_USER": unquote(url.username or "postgres"),
            "POSTGRES_PASSWORD": unquote(url.password or ""),
            "APPLICATION_RECORDER_TOPIC": POSTGRES_RECORDER_TOPIC,
            "AGGREGATE_CACHE_MAXSIZE": AGGREGATE_CACHE_MAXSIZE,
        }
    folder = Path(data or os.environ.get("RIN_DATA") or DEFAULT_DATA)
    folder.mkdir(parents=True, exist_ok=True)
    return {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(folder / EVENTS_FILE),
        "SQLITE_LOCK_TIMEOUT": "30",
        "APPLICATION_RECORDER_TOPIC": RECORDER_TOPIC,
        "AGGREGATE_CACHE_MAXSIZE": AGGREGATE_CACHE_MAXSIZE,
    }
