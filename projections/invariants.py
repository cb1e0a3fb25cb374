"""`verify`: replay every event from the notification log and check the ledger's invariants.

Conservation per batch (held by all parties + retired = the generated range, no overlap), K only
1 → 2, reservations held and never reserved twice nor moved while pending (§80.1452), no
negative holding or fuel volume on any date, and a from-scratch rebuild into a temporary file
equal to the incremental views. Returns the broken invariants; empty = all hold.
"""

from __future__ import annotations

import os
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from ledger.application.ledger import Ledger
from ledger.domain.party import Party
from ledger.domain.ranges import RangeError, SerialSet
from ledger.domain.rin import RinBlock
from projections.facts import Fact, batch_of
from projections.holdings import changes
from projections.quarterly import fuel_change
from projections.runner import TABLES, TOPICS, project, rebuild, views_path


def facts(ledger: Ledger, stop: int) -> list[Fact]:
    """Every Party event up to notification `stop`, in log order, with its party's id."""
    owners: dict[Any, str] = {}
    out: list[Fact] = []
    for logged in ledger.log.events(stop=stop, topics=TOPICS):
        event = logged.event
        if type(event) is Party.Registered:
            owners[event.originator_id] = event.party_id
        owner = owners.get(event.originator_id)
        if owner is not None:
            out.append(Fact.of(logged.notification_id, owner, event))
    return out


@dataclass
class Reservation:
    """Serials a sell reserved from `start` until `end` (ISO dates; None while pending)."""

    posting: str
    serials: SerialSet
    start: str
    end: str | None = None

    def after(self, day: str) -> bool:
        """Whether the reservation covers some day from `day` on (a completed sell's life is
        empty: it ended the day it began)."""
        return self.end is None or (self.end > day and self.end > self.start)


class Replay:
    """Serial sets per batch (generated, retired, K=2 ever) and per holder, in log order."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.generated: dict[str, SerialSet] = {}
        self.retired: dict[str, SerialSet] = defaultdict(SerialSet)
        self.separated: dict[str, SerialSet] = defaultdict(SerialSet)
        self.held: dict[tuple[str, str, int], SerialSet] = defaultdict(SerialSet)
        #: sells' reservations (§80.1452) per (holder, batch, K), each with its life
        self.reserved: dict[tuple[str, str, int], list[Reservation]] = defaultdict(list)
        #: the pending sells' reservations, by posting id
        self.sells: dict[str, list[Reservation]] = {}

    def run(self, fact: Fact) -> None:
        where = f"notification {fact.notification_id} ({fact.kind}, party {fact.party})"
        if fact.kind == "generated":
            block = fact.event.rin
            self.generated[batch_of(block)] = SerialSet(((block.start, block.end),))
        if fact.kind in ("trade_posted", "trade_closed"):
            self.reservation(fact, where)
        for block, code, k, gallon_rins in changes(fact):
            batch, serials = batch_of(block), SerialSet(((block.start, block.end),))
            slot = (fact.party, batch, k)
            if gallon_rins < 0 and (by := self.reserving(slot, serials, fact.effective_date
                                                         or "")):
                self.problems.append(f"{where}: {code} left on {fact.effective_date} while "
                                     f"reserved by sell {', '.join(by)}")
            try:
                if gallon_rins > 0:
                    if k == 1 and self.separated[batch].overlaps(serials):
                        self.problems.append(f"{where}: {code} goes back from K=2 to K=1")
                    self.held[slot] = self.held[slot].union(serials)
                else:
                    self.held[slot] = self.held[slot].subtract(serials)
            except RangeError as exc:
                self.problems.append(f"{where}: {code}: {exc}")
        if fact.kind == "separated":
            for block in fact.blocks:
                if block.key.k != 1:
                    self.problems.append(f"{where}: {block.code} separated with K={block.key.k}")
                batch = batch_of(block)
                self.separated[batch] = SerialSet.of([*self.separated[batch], (block.start,
                                                                               block.end)])
        if fact.kind in ("retired", "unretired"):  # an unretirement (a reversal) takes back
            for block in fact.blocks:
                batch, serials = batch_of(block), SerialSet(((block.start, block.end),))
                try:
                    self.retired[batch] = (self.retired[batch].union(serials)
                                           if fact.kind == "retired"
                                           else self.retired[batch].subtract(serials))
                except RangeError as exc:
                    self.problems.append(f"{where}: {block.code} {fact.kind} twice or never "
                                         f"retired: {exc}")

    def reservation(self, fact: Fact, where: str) -> None:
        """A sell reserves ranges its poster holds that no other sell reserves on any day of its
        life; a closing ends that life on its date (§80.1452)."""
        event = fact.event
        if fact.kind == "trade_closed":
            for reservation in self.sells.pop(event.posting, ()):
                reservation.end = fact.effective_date or ""
            return
        day = fact.effective_date or ""
        made = []
        for block, code in zip(fact.blocks, fact.codes, strict=True):
            slot = (fact.party, batch_of(block), block.key.k)
            serials = SerialSet(((block.start, block.end),))
            if not self.held[slot].issuperset(serials):
                self.problems.append(f"{where}: {code} reserved but not held")
            if others := self.reserving(slot, serials, day):
                self.problems.append(f"{where}: {code} reserved twice (also by "
                                     f"{', '.join(others)})")
            made.append(Reservation(event.client_id, serials, day))
            self.reserved[slot].append(made[-1])
        if made:
            self.sells[event.client_id] = made

    def reserving(self, slot: tuple[str, str, int], serials: SerialSet, day: str) -> list[str]:
        """The sells whose reservation of `serials` lasts past the start of `day`."""
        return [r.posting for r in self.reserved.get(slot, ()) if r.after(day)
                and r.serials.overlaps(serials)]

    def conservation(self) -> list[str]:
        """Per batch: every holder's serials and the retired ones partition the generated range."""
        problems = []
        pieces: dict[str, list[SerialSet]] = defaultdict(list)
        for (_, batch, _), serials in self.held.items():
            pieces[batch].append(serials)
        for batch in sorted(set(self.generated) | set(pieces) | set(self.retired)):
            parts = [*pieces[batch], self.retired[batch]]
            count = sum(len(p) for p in parts)
            union = SerialSet.of(i for p in parts for i in p)
            expected = self.generated.get(batch, SerialSet())
            if union != expected or count != len(expected):
                problems.append(
                    f"batch {batch}: held + retired is {count:,} gallon-RINs over "
                    f"{union.describe()}, generated {expected.describe()}"
                )
        return problems


Points = dict[int, int]  # serial → change of a count from that serial on


def dated_checks(all_facts: list[Fact]) -> list[str]:
    """On no date is a party's holding of a serial or its fuel negative or a serial held
    twice, and what sells reserve that day is held (each serial reserved once) and owned (K=1
    fuel), by effective date (§80.1452: a reservation lasts from its sell's date to its end)."""
    problems: list[str] = []
    serials: dict[tuple[str, str], dict[str, tuple[Points, Points]]] = defaultdict(
        lambda: defaultdict(lambda: (defaultdict(int), defaultdict(int))))
    fuel: dict[str, dict[str, list[Decimal]]] = defaultdict(
        lambda: defaultdict(lambda: [Decimal(0), Decimal(0)]))
    for fact in all_facts:
        for block, code, _, gallon_rins in changes(fact):
            sign = 1 if gallon_rins > 0 else -1
            held, _ = serials[(fact.party, code[:22])][fact.effective_date or ""]
            held[block.start] += sign
            held[block.end + 1] -= sign
        change = fuel_change(fact)
        if change is not None:
            fuel[fact.party][fact.effective_date or ""][0] += change
    for party, blocks, volume, start, end in reservation_lives(all_facts):
        if end is not None and end <= start:
            continue  # completed on its own date: never held back
        for block in blocks:
            by_date = serials[(party, block.code[:22])]
            for day, sign in ((start, 1), (end, -1)):
                if day is not None:
                    by_date[day][1][block.start] += sign
                    by_date[day][1][block.end + 1] -= sign
        if volume:
            fuel[party][start][1] += volume
            if end is not None:
                fuel[party][end][1] -= volume
    for (party, prefix), by_date in sorted(serials.items()):
        if problem := serial_problem(by_date):
            problems.append(f"party {party} {problem.format(prefix=prefix)}")
    for party, fuel_by_date in sorted(fuel.items()):
        balance = reserved = Decimal(0)
        for day in sorted(fuel_by_date):
            balance += fuel_by_date[day][0]
            reserved += fuel_by_date[day][1]
            if balance < 0:
                problems.append(f"party {party} owns {balance:,} gallons of fuel on {day}")
                break
            if reserved > balance:
                problems.append(f"party {party} has {reserved:,} gallons of fuel reserved by "
                                f"sells on {day}, owning {balance:,}")
                break
    return problems


def serial_problem(by_date: dict[str, tuple[Points, Points]]) -> str | None:
    """The first day one holder's serials of one block key are held negatively or twice, or
    reserved twice or without being held; None if there is none."""
    held: Points = defaultdict(int)
    reserved: Points = defaultdict(int)
    for day in sorted(by_date):
        for running, points in zip((held, reserved), by_date[day], strict=True):
            for point, delta in points.items():
                running[point] += delta
        h = r = 0
        for point in sorted(held.keys() | reserved.keys()):
            h, r = h + held.get(point, 0), r + reserved.get(point, 0)
            if h < 0 or h > 1:
                return f"holds {{prefix}}… negatively or twice on {day}"
            if r < 0 or r > 1 or r > h:
                return f"has {{prefix}}… reserved twice or not held on {day}"
    return None


Life = tuple[str, list[RinBlock], Decimal | None, str, str | None]


def reservation_lives(all_facts: list[Fact]) -> list[Life]:
    """(seller, reserved blocks, K=1 fuel, first day, day it ended or None) of every sell."""
    lives: dict[str, list[Any]] = {}
    for fact in all_facts:
        event = fact.event
        if fact.kind == "trade_posted" and event.side == "sell":
            lives[event.client_id] = [fact.party, fact.blocks, event.volume,
                                      fact.effective_date, None]
        elif fact.kind == "trade_closed" and event.posting in lives:
            lives[event.posting][4] = fact.effective_date
    return [(party, blocks, volume, start, end) for party, blocks, volume, start, end
            in lives.values()]


def dump(path: str | os.PathLike[str]) -> dict[str, list[tuple[Any, ...]]]:
    """Every view table's rows in primary-key order."""
    db = Database(os.fspath(path))
    try:
        return {
            t.name: [tuple(r.values()) for r in db.query(
                f'SELECT * FROM "{t.name}" ORDER BY {t.order_by()}')]
            for t in TABLES
        }
    finally:
        db.close()


def compare_with_rebuild(ledger: Ledger, path: Path, stop: int) -> list[str]:
    """The incremental views equal a from-scratch rebuild (to the same position) table by table."""
    with tempfile.TemporaryDirectory() as folder:
        fresh = Path(folder) / "views.sqlite"
        rebuild(ledger, fresh, stop=stop)
        theirs = dump(fresh)
    ours = dump(path)
    problems = []
    for name, rows in ours.items():
        if rows != theirs[name]:
            extra = len(set(rows) - set(theirs[name]))
            missing = len(set(theirs[name]) - set(rows))
            problems.append(
                f"view {name} differs from a rebuild: {extra:,} rows not in the rebuild, "
                f"{missing:,} rows missing"
            )
    return problems


def verify(ledger: Ledger, path: str | os.PathLike[str] | None = None) -> list[str]:
    """Every broken invariant, one message each; an empty list means all hold."""
    path = Path(path or views_path(ledger))
    stop = project(ledger, path)
    all_facts = facts(ledger, stop)
    replay = Replay()
    for fact in all_facts:
        replay.run(fact)
    return [
        *replay.problems, *replay.conservation(), *dated_checks(all_facts),
        *compare_with_rebuild(ledger, path, stop),
    ]
