"""The Ledger's write-side guarantees: atomic commands, idempotent ids, one transaction per
transfer, exact round trips through the SQLite store, snapshots, batches and FIFO selection."""

from __future__ import annotations

import inspect
import sqlite3
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.domain import Aggregate
from eventsourcing.utils import resolve_topic
from store_access import app_of, stored

from ledger import Holding, Ledger
from ledger.domain.holdings import Holdings, fifo_order
from ledger.domain.party import Party
from ledger.domain.rin import BlockKey, RinBlock
from ledger.infrastructure.command_records import CommandRecord
from ledger.infrastructure.settings import EVENTS_FILE

REGISTER = [
    {"type": "register_party", "party": "1001", "name": "Prairie", "roles": ["producer"],
     "facilities": ["20001"]},
    {"type": "register_party", "party": "2001", "name": "Gulf", "roles": ["blender"]},
    {"type": "register_party", "party": "3001", "name": "Lakeside", "roles": ["obligated_party"]},
]


def ethanol(batch: str, volume: int, on: str = "2024-01-31", **extra: Any) -> dict[str, Any]:
    return {"type": "generate", "date": on, "party": "1001", "facility": "20001",
            "batch": batch, "fuel": "ethanol", "d_code": 6, "volume": volume, **extra}


def transfer(
    seller: str, buyer: str, rins: dict[str, Any], on: str, **extra: Any
) -> dict[str, Any]:
    return {"type": "transfer", "date": on, "from": seller, "to": buyer, "rins": rins, **extra}


def d6(k: int, quantity: int, vintage: int = 2024) -> dict[str, int]:
    return {"d_code": 6, "vintage": vintage, "k": k, "quantity": quantity}


def applied(ledger: Ledger, *commands: dict[str, Any]) -> None:
    for cmd in commands:
        result = ledger.apply(cmd)
        assert result.status == "applied", result.error


def events(ledger: Ledger, party: str) -> list[Any]:
    return list(ledger.log.history(Party.create_id(party)))


def notifications(ledger: Ledger, after: int) -> list[Any]:
    return stored(ledger, after)


def last(ledger: Ledger) -> int:
    return ledger.position() or 0


@pytest.fixture
def ledger(tmp_path: Path) -> Any:
    with Ledger(tmp_path) as book:
        applied(book, *REGISTER, ethanol("00001", 10_000))
        yield book


# --- atomicity and idempotency ------------------------------------------------------------------

def test_a_rejected_command_stores_nothing(ledger: Ledger) -> None:
    before = last(ledger)
    # passes the seller's checks, then fails on the buyer: neither side is stored
    bad = transfer("1001", "9999", d6(1, 100), "2024-02-05", volume=100, id="t-bad")
    assert ledger.apply(bad).status == "rejected"
    # 3,000 with 1,000 gallons: both parties loaded, the 2.5 rule refuses
    assert ledger.apply(transfer("1001", "2001", d6(1, 3_000), "2024-02-05", volume=1_000,
                                 id="t-bad2")).status == "rejected"
    assert last(ledger) == before
    # the rejected ids were not consumed: the same id can be used by a good command
    applied(ledger, transfer("1001", "2001", d6(1, 100), "2024-02-05", volume=100, id="t-bad"))


def test_a_rejected_line_in_a_batch_leaves_the_others_applied(ledger: Ledger) -> None:
    before = last(ledger)
    results = list(ledger.apply_many([
        transfer("1001", "2001", d6(1, 1_000), "2024-02-05", volume=1_000),
        transfer("1001", "2001", d6(1, 3_000), "2024-02-05", volume=1_000),  # rejected
        transfer("1001", "2001", d6(1, 2_000), "2024-02-06", volume=2_000),
    ]))
    assert [r.status for r in results] == ["applied", "rejected", "applied"]
    assert [r.line for r in results] == [1, 2, 3]
    # two transfers × (out + in) = 4 events; nothing of the rejected one
    assert len(notifications(ledger, before)) == 4
    assert ledger.party("2001").holdings.totals() == {(6, 2024, 1): 3_000}  # 1,000 + 2,000


def test_same_id_twice_is_a_duplicate_and_stores_nothing(ledger: Ledger) -> None:
    cmd = transfer("1001", "2001", d6(1, 1_000), "2024-02-05", volume=1_000, id="t-1")
    assert ledger.apply(cmd).status == "applied"
    before = last(ledger)
    assert ledger.apply(cmd).status == "duplicate"
    assert [r.status for r in ledger.apply_many([cmd, cmd])] == ["duplicate", "duplicate"]
    assert last(ledger) == before
    assert ledger.party("2001").holdings.totals() == {(6, 2024, 1): 1_000}


def test_same_id_with_different_content_is_rejected(ledger: Ledger) -> None:
    cmd = transfer("1001", "2001", d6(1, 1_000), "2024-02-05", volume=1_000, id="t-1")
    applied(ledger, cmd)
    before = last(ledger)
    result = ledger.apply({**cmd, "volume": 2_000})
    assert result.status == "rejected"
    assert result.field == "id"
    assert result.error == ("format: id: already used by a different command: t-1 was applied "
                            "before as a transfer of 2024-02-05")
    assert last(ledger) == before


def test_duplicate_ids_within_one_batch(ledger: Ledger) -> None:
    cmd = ethanol("00002", 500, id="g-2")
    results = list(ledger.apply_many([cmd, cmd, {**cmd, "volume": 600}]))
    assert [r.status for r in results] == ["applied", "duplicate", "rejected"]
    assert ledger.party("1001").holdings.totals() == {(6, 2024, 1): 10_500}  # 10,000 + 500


def test_a_transfer_saves_seller_and_buyer_in_one_transaction(ledger: Ledger) -> None:
    before = last(ledger)
    applied(ledger, transfer("1001", "2001", d6(1, 1_000), "2024-02-05", volume=1_000,
                             id="t-9", price="0.62", ptd="PTD-1"))
    saved = notifications(ledger, before)
    topics = [n.topic for n in saved]
    assert sorted(topics) == sorted([
        "rin_ledger:Party.TransferredOut", "rin_ledger:Party.TransferredIn",
    ])  # its command id is a row of rin_commands, stored in the same transaction
    ids = [n.id for n in saved]
    assert ids == list(range(before + 1, before + 3)), "consecutive notification ids"
    out, into = (events(ledger, p)[-1] for p in ("1001", "2001"))
    assert isinstance(out, Party.TransferredOut) and isinstance(into, Party.TransferredIn)
    assert (out.to_party, into.from_party) == ("2001", "1001")
    assert out.rins == into.rins
    assert out.client_id == into.client_id == "t-9"


# --- the store round-trips value objects exactly -------------------------------------------------

def test_events_round_trip_through_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Ledger(tmp_path) as book:
        written: list[Any] = []
        save = app_of(book).save_in_order

        def keep(*args: Any, **kwargs: Any) -> Any:
            recordings = save(*args, **kwargs)
            written.extend(r.domain_event for r in recordings)
            return recordings

        monkeypatch.setattr(app_of(book), "save_in_order", keep)
        applied(
            book, *REGISTER,
            # 250,000 gal at 68 °F: 250,000 × (−0.0006301 × 68 + 1.0378) = 248,738.3 gal
            {"type": "generate", "id": "g-1", "date": "2024-01-31", "party": "1001",
             "facility": "20001", "batch": "00001", "fuel": "ethanol", "d_code": 6,
             "measured_volume": 250_000, "temperature_f": 68,
             "production_start": "2024-01-01", "production_end": "2024-01-31"},
            transfer("1001", "2001", d6(1, 1_000), "2024-02-05", volume="400.125",
                     price="0.6275", id="t-1"),
        )
    assert len(written) == 3 + 2 + 2  # registrations; generated, assigned; out, in (each
    # command id is a row of rin_commands, not an event: ledger/infrastructure/command_table.py)
    with Ledger(tmp_path) as again:
        logged = [e.event for e in again.log.events()]
        read = {p: events(again, p) for p in ("1001", "2001")}
    assert len(logged) == len(written)
    for original, copy in zip(written, logged, strict=True):
        assert type(copy) is type(original)
        for name, value in original.__dict__.items():
            assert copy.__dict__[name] == value, name
            assert type(copy.__dict__[name]) is type(value), name

    generated = next(e for e in read["1001"] if isinstance(e, Party.Generated))
    assert type(generated.effective_date) is date and generated.effective_date == date(2024, 1, 31)
    assert generated.production_start == date(2024, 1, 1)
    # 250,000 × 0.9949532 = 248,738.3 exactly in Decimal
    assert generated.standardized_volume == Decimal("248738.3")
    assert isinstance(generated.equivalence_value, Decimal)
    key = BlockKey(1, 2024, "1001", "20001", "00001", 10, 6, date(2024, 1, 31), "ethanol")
    assert generated.rin == RinBlock(key, 1, 248_738)  # round(248,738.3 × 1.0) = 248,738
    moved = next(e for e in read["2001"] if isinstance(e, Party.TransferredIn))
    assert moved.rins == [RinBlock(key, 1, 1_000)]
    assert moved.volume == Decimal("400.125") and moved.price == Decimal("0.6275")
    assert type(moved.effective_date) is date


def party_state(party: Party) -> dict[str, Any]:
    return {
        "version": party.version, "holdings": list(map(str, party.holdings.blocks())),
        "fuel": list(party.fuel.changes()), "batches": party.batches_used,
        "produced": party.produced, "obligations": party.obligations,
        "roles": party.roles,
    }


def test_snapshots_are_taken_and_equal_a_full_replay(tmp_path: Path) -> None:
    with Ledger(tmp_path) as book:
        applied(book, *REGISTER)
        # 1 registration + 110 generations × (generated + assigned) = 221 events > 200
        results = list(book.apply_many(ethanol(f"{n:05d}", 10 + n) for n in range(1, 111)))
        assert {r.status for r in results} == {"applied"}
        applied(book, transfer("1001", "2001", d6(1, 500), "2024-02-05", volume=500))
    rows = sqlite3.connect(tmp_path / EVENTS_FILE).execute(
        "SELECT originator_id, originator_version FROM stored_snapshots"
    ).fetchall()
    # the save that took 1001 past version 200 snapshotted it, at that save's last version
    versions = [v for o, v in rows if UUID(str(o)).hex == Party.create_id("1001").hex]
    assert versions and min(versions) >= 200
    with Ledger(tmp_path) as fresh:
        loaded = fresh.party("1001")
        replayed: Party | None = None
        for event in fresh.log.history(Party.create_id("1001")):
            replayed = event.mutate(replayed)
        assert replayed is not None
        assert party_state(loaded) == party_state(replayed)
        assert loaded.version == 222  # 221 + the transfer out
        # Σ (10 + n) for n = 1..110 = 1,100 + 6,105 = 7,205; less 500 transferred = 6,705
        assert loaded.holdings.totals() == {(6, 2024, 1): 6_705}


def test_apply_many_equals_apply_one_by_one(tmp_path: Path) -> None:
    commands = [
        *REGISTER, ethanol("00001", 10_000), ethanol("00002", 5_000, on="2024-02-29"),
        transfer("1001", "2001", d6(1, 12_000), "2024-03-01", volume=12_000),
        transfer("1001", "2001", d6(1, 99_000), "2024-03-01", volume=99_000),  # rejected
        {"type": "separate", "date": "2024-03-02", "party": "2001", "reason": "blending",
         "rins": d6(1, 12_000), "volume": 12_000},
        transfer("2001", "3001", d6(2, 7_000), "2024-03-03", id="t-7"),
        transfer("2001", "3001", d6(2, 7_000), "2024-03-03", id="t-7"),  # duplicate
        transfer("2001", "3001", d6(2, 1_000), "2024-03-02"),
    ]
    with Ledger(tmp_path / "one") as one, Ledger(tmp_path / "many") as many:
        singly = [one.apply(cmd, line).status for line, cmd in enumerate(commands, 1)]
        batched = [r.status for r in many.apply_many(commands, batch_size=4)]
        assert singly == batched
        assert batched.count("rejected") == 1 and batched.count("duplicate") == 1
        for party in ("1001", "2001", "3001"):
            assert one.blocks(party) == many.blocks(party)
            assert list(one.party(party).fuel.changes()) == list(many.party(party).fuel.changes())
        # 3001 holds 7,000 + 1,000 = 8,000 K=2; 2001 keeps 12,000 − 8,000 = 4,000
        assert many.holdings("3001") == [
            Holding(party="3001", d_code=6, vintage=2024, k=2, gallon_rins=8_000)
        ]
        assert many.party("2001").holdings.totals() == {(6, 2024, 2): 4_000}


# --- FIFO ---------------------------------------------------------------------------------------

def test_fifo_earliest_generation_first_then_lowest_serial(tmp_path: Path) -> None:
    with Ledger(tmp_path) as book:
        applied(
            book, *REGISTER,
            ethanol("Z0001", 1_000, on="2024-01-31"),  # generated first, highest batch number
            ethanol("A0001", 1_000, on="2024-02-29"),
        )
        applied(book, transfer("1001", "2001", d6(1, 1_500), "2024-03-05", volume=1_500))
        out = events(book, "1001")[-1]
        z = BlockKey(1, 2024, "1001", "20001", "Z0001", 10, 6, date(2024, 1, 31), "ethanol")
        a = BlockKey(1, 2024, "1001", "20001", "A0001", 10, 6, date(2024, 2, 29), "ethanol")
        # all 1,000 of Z0001, then the lowest 500 of A0001 (1,000 + 500 = 1,500)
        assert out.rins == [RinBlock(z, 1, 1_000), RinBlock(a, 1, 500)]


def test_fifo_lowest_serial_even_if_acquired_later(tmp_path: Path) -> None:
    with Ledger(tmp_path) as book:
        applied(book, *REGISTER, ethanol("00001", 10_000))
        prefix = "12024100120001000011060"[:22]
        split = book.apply({"type": "split", "date": "2024-02-01", "party": "1001",
                            "rin": f"{prefix}0000000100010000",
                            "sizes": [2_000, 2_000, 2_000, 4_000]})
        low, _, middle, _ = split.rins  # 1-2,000 and 4,001-6,000
        applied(
            book,
            transfer("1001", "2001", {"code": middle}, "2024-02-05", volume=2_000),
            transfer("1001", "2001", {"code": low}, "2024-02-06", volume=2_000),
            transfer("2001", "3001", d6(1, 2_500), "2024-02-07", volume=2_500),
        )
        key = events(book, "1001")[-1].rins[0].key
        # lowest serials first: 1-2,000 (arrived 6 Feb) then 4,001-4,500 (2,000 + 500 = 2,500)
        assert events(book, "2001")[-1].rins == [RinBlock(key, 1, 2_000),
                                                 RinBlock(key, 4_001, 4_500)]
        assert events(book, "3001")[-1].rins == [RinBlock(key, 1, 2_000),
                                                 RinBlock(key, 4_001, 4_500)]
        # only what had arrived by the date counts: on 5 Feb only 4,001-6,000 was there
        applied(book, transfer("2001", "3001", d6(1, 100), "2024-02-05", volume=100))
        assert events(book, "2001")[-1].rins == [RinBlock(key, 4_501, 4_600)]


def test_fifo_order_puts_the_oldest_vintage_first() -> None:
    """A selector names one vintage; across vintages (blocks listing) the oldest comes first."""
    old = BlockKey(2, 2023, "1001", "20001", "Z0001", 10, 6, date(2023, 12, 31), "ethanol")
    new = BlockKey(2, 2024, "1001", "20001", "A0001", 10, 6, date(2024, 1, 1), "ethanol")
    early = BlockKey(2, 2024, "1001", "20001", "B0001", 10, 6, date(2023, 12, 30), "ethanol")
    assert sorted([new, old, early], key=fifo_order) == [old, early, new]
    holdings = Holdings()
    for key in (new, old, early):
        holdings.add(RinBlock(key, 1, 10), date(2024, 2, 1))
    assert [b.key for b in holdings.blocks()] == [old, early, new]


# --- explicit topics ---------------------------------------------------------------------------

def event_classes(aggregate: type) -> list[type]:
    """The aggregate's own event classes (the library's `Snapshot` class keeps its own topic)."""
    return [
        member for _, member in inspect.getmembers(aggregate, inspect.isclass)
        if issubclass(member, Aggregate.Event) and member.__module__ == aggregate.__module__
    ]


@pytest.mark.parametrize("aggregate", [Party, CommandRecord])
def test_every_event_class_has_an_explicit_topic(aggregate: type[Aggregate]) -> None:
    classes = event_classes(aggregate)
    assert len(classes) >= 3, "found the event classes"
    for cls in [aggregate, *classes]:
        topic = getattr(cls, "TOPIC", None)
        assert isinstance(topic, str) and topic.startswith("rin_ledger:"), cls.__qualname__
    # the library's own `Created` only inherits its topic from `Event`; every class the ledger
    # records has a topic of its own that resolves back to it
    recorded = [cls for cls in classes if cls.__name__ not in ("Created", "Event")]
    for cls in recorded:
        assert resolve_topic(cls.TOPIC) in cls.__mro__[:2], cls.__qualname__
    assert len({cls.TOPIC for cls in recorded}) == len(recorded)


def test_stored_topics_are_the_explicit_ones(ledger: Ledger) -> None:
    applied(ledger, transfer("1001", "2001", d6(1, 100), "2024-02-05", volume=100, id="x"))
    assert all(n.topic.startswith("rin_ledger:") for n in notifications(ledger, 0))
