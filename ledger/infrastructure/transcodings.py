"""How the ledger's events are stored: transcodings for dates and value objects.

Dates, Decimals and the value objects (`RinBlock`, `Holdings`, `FuelBook`) round-trip exactly:
a RinBlock is stored as its 38-character code plus its batch's generation date and fuel;
Holdings as records grouped by slot, each slot decoded only when first read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping
from copy import deepcopy
from datetime import date
from decimal import Decimal
from functools import lru_cache
from typing import Any, TypeVar

from eventsourcing.persistence import JSONTranscoder, Transcoding

from ledger.domain.fuel_book import FuelBook
from ledger.domain.holdings import Holdings, Slot, SlotHoldings, fifo_order
from ledger.domain.party_facts import (
    AppliedRetirement,
    DelayedFacts,
    PartyFacts,
    ReportedYear,
    RetiredYears,
    UnblendedYear,
)
from ledger.domain.ranges import SerialSet
from ledger.domain.rin import BatchId, BlockKey, RinBlock, parse_code
from ledger.domain.trade_book import Posting, Reservation, Side, Status, Terms, TradeBook
from ledger.rules.s1425_rin import check_serials


class DateAsISO(Transcoding):
    type = date
    name = "date_iso"

    def encode(self, obj: date) -> str:
        return obj.isoformat()

    def decode(self, data: str) -> date:
        return date.fromisoformat(data)


K = TypeVar("K")
V = TypeVar("V")
KEYS_REMEMBERED = 8_192  # block keys decoded from the store, most recently used
#: one stored holding: [22-character prefix, generated, fuel, acquired, [[start, end], …]]
Record = list[Any]
#: a slot as stored: one string (Party v7), or a list of records (Party v6, and a v7 slot with
#: a field the separators could not tell apart)
StoredSlot = str | list[Record]
#: Party v7 stores a list of records as one string: its records joined by `RECORDS`, each
#: one's fields by `FIELDS` (`packed_slot`, `packed_year`)
RECORDS, FIELDS = ";", "|"


def packable(words: list[Any]) -> bool:
    """Whether these fields read back the same joined by `FIELDS`: non-empty strings without
    a separator."""
    return all(isinstance(word, str) and word and RECORDS not in word and FIELDS not in word
               for word in words)


@lru_cache(maxsize=KEYS_REMEMBERED)
def stored_key(prefix: str, generated: str, fuel: str) -> BlockKey:
    """The key of a stored block from its code's 22-character prefix and its provenance.

    Checked like any code the first time (§80.1425), then remembered: a batch's blocks recur in
    many events and snapshots, and reading the store back should not re-check the same fields
    every time. The batches traded at any one time are a few thousand, so a bounded memory of
    them keeps the hits and keeps memory flat however long the history.
    """
    base, _, _ = parse_code(f"{prefix}0000000100000001")
    return BlockKey(
        base.k, base.vintage, base.company, base.facility, base.batch, base.rr, base.d_code,
        date.fromisoformat(generated), fuel,
    )


def stored_block(code: str, generated: str, fuel: str) -> RinBlock:
    """A stored block from its 38-character code and provenance (see `stored_key`)."""
    start, end = int(code[22:30]), int(code[30:38])
    check_serials(start, end)
    return RinBlock(stored_key(code[:22], generated, fuel), start, end)


class RinBlockAsCode(Transcoding):
    """A block as [38-character code, generation date, fuel]."""

    type = RinBlock
    name = "rin"

    def encode(self, obj: RinBlock) -> list[str]:
        return block_record(obj)

    def decode(self, data: list[str]) -> RinBlock:
        return block_of(data)


class StoredSlots(MutableMapping[Slot, SlotHoldings]):
    """Holdings' slots as last stored: each kept as its stored records until first read, and
    saved again as stored while unchanged. A busy party's snapshot then loads at the cost of
    the slots a command touches, and saves at the cost of those it changed."""

    def __init__(self, records: dict[Slot, StoredSlot],
                 decoded: dict[Slot, SlotHoldings] | None = None) -> None:
        self._records = records  # not yet decoded, or decoded and not replaced since
        self._decoded: dict[Slot, SlotHoldings] = {} if decoded is None else decoded

    def __copy__(self) -> StoredSlots:
        copy = StoredSlots(dict(self._records))
        copy._decoded = dict(self._decoded)
        return copy

    def __getitem__(self, slot: Slot) -> SlotHoldings:
        held = self._decoded.get(slot)
        if held is None:
            held = self._decoded[slot] = decode_slot(self._records[slot])
        return held

    def __setitem__(self, slot: Slot, holdings: SlotHoldings) -> None:
        self._records.pop(slot, None)  # no longer what was stored
        self._decoded[slot] = holdings

    def __delitem__(self, slot: Slot) -> None:
        if self._records.pop(slot, None) is None:
            del self._decoded[slot]
        else:
            self._decoded.pop(slot, None)

    def __iter__(self) -> Iterator[Slot]:
        return iter(self._decoded.keys() | self._records.keys())

    def __len__(self) -> int:
        return len(self._decoded.keys() | self._records.keys())

    def __contains__(self, slot: object) -> bool:
        return slot in self._records or slot in self._decoded

    def stored(self, slot: Slot) -> StoredSlot | None:
        """`slot`'s records as loaded or last stored, if it was not replaced since."""
        return self._records.get(slot)

    def keep(self, slot: Slot, stored_slot: StoredSlot) -> None:
        """`slot`'s records as just stored, saved as they are until the slot is replaced."""
        self._records[slot] = stored_slot


def packed_slot(records: list[Record]) -> StoredSlot:
    """A slot's records as one string, "prefix|generated|fuel|acquired|start-end,…" joined by
    ";" (JSON reads a string at a scan's cost: the busiest obligated party's 480 holding
    records were 0.5 of the 0.7 ms its v7 snapshot took to decode); else the list it is."""
    if not all(packable(record[:4]) for record in records):
        return records
    return RECORDS.join(
        FIELDS.join((*record[:4], ",".join(f"{start}-{end}" for start, end in record[4])))
        for record in records)


def slot_records(stored_slot: StoredSlot) -> list[Record]:
    """A stored slot's records, in either layout."""
    if not isinstance(stored_slot, str):
        return stored_slot
    return [[prefix, generated, fuel, acquired,
             [[int(start), int(end)] for start, end in (
                 interval.split("-") for interval in intervals.split(","))]]
            for prefix, generated, fuel, acquired, intervals in (
                record.split(FIELDS) for record in stored_slot.split(RECORDS) if record)]


def decode_slot(stored_slot: StoredSlot) -> SlotHoldings:
    """One slot's holdings from its stored records."""
    held: SlotHoldings = {}
    for prefix, generated, fuel, acquired, intervals in slot_records(stored_slot):
        key = stored_key(prefix, generated, fuel)
        held.setdefault(key, {})[date.fromisoformat(acquired)] = SerialSet(
            tuple((start, end) for start, end in intervals)
        )
    return held


def encode_slot(held: Mapping[BlockKey, Mapping[date, SerialSet]]) -> list[Record]:
    """One slot's stored records, in FIFO then acquisition order."""
    return [
        [key.prefix, key.generated.isoformat(), key.fuel, acquired.isoformat(),
         [list(interval) for interval in serials]]
        for key in sorted(held, key=fifo_order)
        for acquired, serials in sorted(held[key].items())
    ]


class HoldingsAsRecords(Transcoding):
    """Holdings as [[D code, vintage, K, [record, …]], …] in slot order; a slot loaded from a
    snapshot or stored by an earlier one and not changed since is saved as it was, without
    re-encoding: a party kept in memory across a bulk ingest re-encoded every slot at every
    snapshot, a cost that grew with its history (issue 15: 4.9 → 24.1 µs an event of bulk
    ingest, CPU, from the first 300k events of the bench's market to its 950k-1.1M)."""

    type = Holdings
    name = "holdings"

    def encode(self, obj: Holdings) -> list[list[Any]]:
        slots = obj.slots
        if not isinstance(slots, StoredSlots):  # a party made in memory: every slot decoded
            slots = StoredSlots({}, {slot: {key: dict(by_date) for key, by_date in held.items()}
                                     for slot, held in slots.items()})
        obj.kept_in(slots)  # each slot copied before its next change, which drops its records
        out = []
        for slot in sorted(slots):
            records = slots.stored(slot)
            if records is None or not isinstance(records, str):  # a v6 slot: as v7 has it
                records = packed_slot(encode_slot(slots[slot]) if records is None else records)
                slots.keep(slot, records)
            if records:
                out.append([*slot, records])
        return out

    def decode(self, data: list[list[Any]]) -> Holdings:
        return Holdings(StoredSlots({
            (int(d_code), int(vintage), int(k)): records for d_code, vintage, k, records in data
        }))


class FuelBookAsRecords(Transcoding):
    """A fuel book as [[ISO date, "delta"], …] in date order."""

    type = FuelBook
    name = "fuel_book"

    def encode(self, obj: FuelBook) -> list[list[str]]:
        return [[on.isoformat(), str(delta)] for on, delta in obj.changes()]

    def decode(self, data: list[list[str]]) -> FuelBook:
        return FuelBook((date.fromisoformat(on), Decimal(delta)) for on, delta in data)


class TradeBookAsRecords(Transcoding):
    """A party's trade book as plain JSON lists (§80.1452): its pending postings, then its
    sells' reservation lives in posting order, a pending sell's as its id (its posting says the
    rest), a released one's as a record; no value inside is a transcoded object, so loading
    calls no JSON object hook per posting. The v5 layout (every posting ever made, with its end,
    and the offers) still decodes, into the same bounded book."""

    type = TradeBook
    name = "trade_book"

    def encode(self, obj: TradeBook) -> dict[str, Any]:
        return {"open": [posting_record(p) for p in obj.pending()],
                "lives": [life.id if life.pending else life_record(life)
                          for life in obj.lives.values()]}

    def decode(self, data: dict[str, Any]) -> TradeBook:
        if "postings" in data:  # Party v5: every posting, and the offers
            return TradeBook.of_history(v5_posting(record) for record in data["postings"])
        pending = {record[0]: posting_of(record) for record in data["open"]}
        return TradeBook(pending.values(), (
            Reservation.of(pending[life]) if isinstance(life, str) else life_of(life)
            for life in data["lives"]))


def optional_decimal(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def decimal_of(value: str | None) -> Decimal | None:
    return None if value is None else Decimal(value)


def posting_record(p: Posting) -> list[Any]:
    """A pending posting as [id, side, party, partner, [terms…], [block…], price, gallon
    price, PTD, broker, reason code, match]."""
    t = p.terms
    return [p.id, str(p.side), p.party, p.partner,
            [t.date.isoformat(), t.d_code, t.vintage, t.k, t.quantity,
             optional_decimal(t.volume), t.company, t.facility, t.batch, t.qap],
            [block_record(b) for b in p.rins], optional_decimal(p.price),
            optional_decimal(p.gallon_price), p.ptd, p.broker, p.reason_code, p.match]


def posting_of(record: list[Any]) -> Posting:
    (posting_id, side, party, partner, terms, rins, price, gallon_price, ptd, broker,
     reason_code, match) = record
    on, d_code, vintage, k, quantity, volume, company, facility, batch, qap = terms
    return Posting(
        posting_id, Side(side), party, partner,
        Terms(date.fromisoformat(on), d_code, vintage, k, quantity, decimal_of(volume),
              company, facility, batch, qap),
        tuple(block_of(b) for b in rins), decimal_of(price), decimal_of(gallon_price), ptd,
        broker, reason_code, match,
    )


def life_record(life: Reservation) -> list[Any]:
    """A released sell's life as [id, status, first day, day released, volume, [block…]]."""
    assert life.end is not None
    return [life.id, str(life.status), life.start.isoformat(), life.end.isoformat(),
            optional_decimal(life.volume), [block_record(b) for b in life.rins]]


def life_of(record: list[Any]) -> Reservation:
    posting_id, status, start, end, volume, rins = record
    return Reservation(posting_id, date.fromisoformat(start),
                       tuple(block_of(b) for b in rins), decimal_of(volume), Status(status),
                       date.fromisoformat(end))


def v5_posting(record: list[Any]) -> Posting:
    """A posting of a Party v5 snapshot (its dates, Decimals and blocks already decoded)."""
    (posting_id, side, party, partner, terms, rins, price, gallon_price, ptd, broker,
     reason_code, match, status, closed_on, closing_code, counterpart) = record
    return Posting(
        posting_id, Side(side), party, partner, Terms(**terms), tuple(rins), price,
        gallon_price, ptd, broker, reason_code, match, Status(status), closed_on,
        closing_code, counterpart,
    )


def register_transcodings(transcoder: JSONTranscoder) -> None:
    for transcoding in (DateAsISO(), RinBlockAsCode(), HoldingsAsRecords(), FuelBookAsRecords(),
                        TradeBookAsRecords(), *FACTS_TRANSCODINGS):
        transcoder.register(transcoding)


# --- Party facts (ledger/domain/party_facts.py): int-keyed maps as [key, value] pairs ---------

def pairs(mapping: dict[int, Any]) -> list[list[Any]]:
    """An int-keyed map as JSON can hold it: its keys would otherwise come back as strings."""
    return [[key, value] for key, value in mapping.items()]


def unpairs(data: list[list[Any]]) -> dict[int, Any]:
    return {int(key): value for key, value in data}


class Undecoded(MutableMapping[K, V]):
    """A mapping read from a snapshot whose values stay as stored until first read, and are
    stored again as read while unread: a long-lived party's snapshot holds every batch it ever
    generated and every block it retired for compliance, and a command reads one year of them.
    Its stored values are plain JSON (no transcoded objects), so loading decodes nothing."""

    def __init__(self, records: dict[K, Any], decode: Callable[[Any], V],
                 encode: Callable[[V], Any]) -> None:
        self._records = records  # every key; the stored value of those not yet read
        self._decoded: dict[K, V] = {}
        self._decode, self._encode = decode, encode

    def __getitem__(self, key: K) -> V:
        if key not in self._decoded:
            self._decoded[key] = self._decode(self._records[key])
        return self._decoded[key]

    def __setitem__(self, key: K, value: V) -> None:
        self._records[key] = None
        self._decoded[key] = value

    def __delitem__(self, key: K) -> None:
        del self._records[key]
        self._decoded.pop(key, None)

    def __iter__(self) -> Iterator[K]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def records(self) -> dict[K, Any]:
        """Every value as stored: those read are encoded again (they may have changed)."""
        return {key: self._encode(self._decoded[key]) if key in self._decoded else raw
                for key, raw in self._records.items()}

    def __deepcopy__(self, memo: dict[int, Any]) -> Undecoded[K, V]:
        """A copy: the values read are copied, the stored ones shared (never changed)."""
        copy = type(self)(dict(self._records), self._decode, self._encode)
        copy._decoded = deepcopy(self._decoded, memo)
        return copy


def stored(mapping: Mapping[K, V], encode: Callable[[V], Any]) -> dict[K, Any]:
    """A mapping's values as stored, read or not."""
    if isinstance(mapping, Undecoded):
        return mapping.records()
    return {key: encode(value) for key, value in mapping.items()}


def block_record(block: RinBlock) -> list[str]:
    return [block.code, block.key.generated.isoformat(), block.key.fuel]


def block_of(record: list[str]) -> RinBlock:
    return stored_block(*record)


def batches_record(batches: Mapping[str, RinBlock]) -> dict[str, list[str]]:
    return stored(batches, block_record)


def batches_of(records: dict[str, list[str]]) -> MutableMapping[str, RinBlock]:
    return Undecoded(records, block_of, block_record)


# --- A retired year as one string (Party v7) -----------------------------------------------
#: a year as stored: one string (Party v7), or a list of records (Party v6, and a v7 year with
#: a field the separators could not tell apart)
StoredYear = str | list[list[Any]]


def packed_year(records: list[list[Any]]) -> StoredYear:
    """A year's records as one string: JSON reads a string at the cost of a scan, where a list
    of records costs a list and five strings each (the bench's busiest obligated party retires
    600 blocks a year, 80 % of its snapshot's bytes). A year with a field that holds a
    separator (no word of the vocabulary does) is kept as the list it is."""
    if not all(packable(r[:4] if r[4] is None else r) for r in records):
        return records
    return RECORDS.join(FIELDS.join((*r[:4], r[4] or "")) for r in records)


def year_records(stored_year: StoredYear) -> list[list[Any]]:
    """A stored year's records, in either layout; no block is decoded."""
    if not isinstance(stored_year, str):
        return stored_year
    return [[code, generated, fuel, reason, category or None]
            for code, generated, fuel, reason, category in (
                record.split(FIELDS) for record in stored_year.split(RECORDS) if record)]


def year_with(stored_year: StoredYear | None, records: list[list[Any]]) -> StoredYear:
    """`stored_year` with `records` after its own, still undecoded."""
    added = packed_year(records)
    if isinstance(stored_year, str) and isinstance(added, str):
        return f"{stored_year}{RECORDS}{added}" if stored_year and added else stored_year or added
    return packed_year([*year_records(stored_year or []), *records])


def applied_record(applied: list[AppliedRetirement]) -> list[list[Any]]:
    return [[*block_record(a.block), a.reason, a.category] for a in applied]


def applied_of(stored_year: StoredYear) -> list[AppliedRetirement]:
    return [AppliedRetirement(stored_block(code, generated, fuel), reason, category)
            for code, generated, fuel, reason, category in year_records(stored_year)]


def applied_stored(applied: list[AppliedRetirement]) -> StoredYear:
    return packed_year(applied_record(applied))


class UndecodedYears(Undecoded[int, list[AppliedRetirement]], RetiredYears):
    """`applied` as stored: a retirement added to a year not yet read is stored after the
    year's earlier blocks, still undecoded. A busy obligated party retires hundreds of blocks a
    year, at about 9 µs of CPU each to decode (parse and check the code): replaying one
    retirement, or snapshotting, would otherwise decode, then encode again, its whole year."""

    def add(self, year: int, retirements: list[AppliedRetirement]) -> None:
        if year in self._decoded:
            self._decoded[year].extend(retirements)
        else:  # a new value: the stored one may be shared with copies (`__deepcopy__`)
            self._records[year] = year_with(self._records.get(year), applied_record(retirements))

    def settled(self) -> dict[int, Any]:
        """Every year as stored, those read left stored again (decoded anew when next read): a
        snapshot every 50 events would otherwise encode each read year's every block again."""
        for year, retirements in self._decoded.items():
            self._records[year] = self._encode(retirements)
        self._decoded.clear()
        for year, stored_year in self._records.items():  # a v6 snapshot's years: as v7 has them
            if not isinstance(stored_year, str):
                self._records[year] = packed_year(stored_year)
        return dict(self._records)


def settled_years(facts: PartyFacts) -> dict[int, Any]:
    """`facts.applied` as stored, and from now on kept so (`UndecodedYears`): a party made in
    memory holds its years decoded, and the bench's busiest obligated party took 95 ms of CPU
    (cProfile) to snapshot them, the slowest of its 1,000 single commands."""
    if not isinstance(facts.applied, UndecodedYears):
        facts.applied = UndecodedYears(
            {year: applied_stored(a) for year, a in facts.applied.items()}, applied_of,
            applied_stored)
    return facts.applied.settled()


class PartyFactsAsRecords(Transcoding):
    """The facts a party's rules read, with every int key (years, D codes) kept an int."""

    type = PartyFacts
    name = "party_facts"

    def encode(self, obj: PartyFacts) -> dict[str, Any]:
        delayed = obj.delayed
        return {
            "batches": [[year, batches_record(batches)] for year, batches in obj.batches.items()],
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
            "applied": pairs(settled_years(obj)),
            "unblended": [[year, pairs(u.own), pairs(u.counted)]
                          for year, u in obj.unblended.items()],
            "reversed": obj.reversed,
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
            batches={int(year): batches_of(records) for year, records in data["batches"]},
            produced=unpairs(data["produced"]),
            fuels=dict(data["fuels"]),
            first_year=dict(data["first_year"]),
            delayed=delayed,
            replacement=list(data["replacement"]),
            reports={int(year): ReportedYear(rvo, approach, bbd, basis)
                     for year, rvo, approach, bbd, basis in data["reports"]},
            applied=UndecodedYears(unpairs(data["applied"]), applied_of, applied_stored),
            unblended={int(year): UnblendedYear(unpairs(own), unpairs(counted))
                       for year, own, counted in data["unblended"]},
            # a snapshot taken before reversals existed reversed nothing (§80.1452(d))
            reversed=dict(data.get("reversed", {})),
        )


FACTS_TRANSCODINGS = (PartyFactsAsRecords(),)
