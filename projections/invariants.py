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
from collections.abc import Iterator
from decimal import Decimal
from itertools import accumulate, groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from ledger.application.ledger import Ledger
from ledger.domain.party import Party
from ledger.domain.ranges import RangeError, SerialSet
from projections.facts import Fact, batch_of
from projections.holdings import changes
from projections.quarterly import fuel_change
from projections.runner import TABLES, TOPICS, project, rebuild, views_path


def facts(ledger: Ledger, stop: int) -> Iterator[Fact]:
    """Every Party event up to notification `stop`, in log order, with its party's id, read
    page by page (verify's memory does not grow with the log's length)."""
    owners: dict[Any, str] = {}
    for logged in ledger.log.events(stop=stop, topics=TOPICS):
        event = logged.event
        if type(event) is Party.Registered:
            owners[event.originator_id] = event.party_id
        owner = owners.get(event.originator_id)
        if owner is not None:
            yield Fact.of(logged.notification_id, owner, event)


class Replay:
    """Serial sets per batch (generated, retired, K=2 ever) and per holder, in log order."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.generated: dict[str, SerialSet] = {}
        self.retired: dict[str, SerialSet] = defaultdict(SerialSet)
        self.separated: dict[str, SerialSet] = defaultdict(SerialSet)
        self.held: dict[tuple[str, str, int], SerialSet] = defaultdict(SerialSet)
        #: pending sells' reservations (§80.1452): posting id → (holder, batch, K) → serials
        self.reserved: dict[str, dict[tuple[str, str, int], SerialSet]] = {}

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
            if gallon_rins < 0 and self.reserving(slot, serials):
                self.problems.append(f"{where}: {code} left while reserved by pending sell "
                                     f"{', '.join(self.reserving(slot, serials))}")
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
        if fact.kind == "retired":
            for block in fact.blocks:
                batch = batch_of(block)
                try:
                    self.retired[batch] = self.retired[batch].union(
                        SerialSet(((block.start, block.end),)))
                except RangeError as exc:
                    self.problems.append(f"{where}: {block.code} retired twice: {exc}")

    def reservation(self, fact: Fact, where: str) -> None:
        """A sell reserves ranges its poster holds that no other pending sell reserves; a
        closing releases them (§80.1452)."""
        event = fact.event
        if fact.kind == "trade_closed":
            self.reserved.pop(event.posting, None)
            return
        ranges: dict[tuple[str, str, int], SerialSet] = defaultdict(SerialSet)
        for block, code in zip(fact.blocks, fact.codes, strict=True):
            slot = (fact.party, batch_of(block), block.key.k)
            serials = SerialSet(((block.start, block.end),))
            if not self.held[slot].issuperset(serials):
                self.problems.append(f"{where}: {code} reserved but not held")
            if self.reserving(slot, serials):
                self.problems.append(f"{where}: {code} reserved twice (also by "
                                     f"{', '.join(self.reserving(slot, serials))})")
            ranges[slot] = SerialSet.of([*ranges[slot], (block.start, block.end)])
        if ranges:
            self.reserved[event.client_id] = dict(ranges)

    def reserving(self, slot: tuple[str, str, int], serials: SerialSet) -> list[str]:
        return [posting for posting, ranges in self.reserved.items()
                if slot in ranges and ranges[slot].overlaps(serials)]

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


class DatedChecks:
    """No party's holding (per serial) or fuel volume is negative at the end of any date: the
    changes are written fact by fact (`add`) to a file of their own, as serial-boundary counts
    and signed volumes, and checked at the end party by party in date order, so memory holds
    one party's boundaries at a time however long the log."""

    FLUSH = 10_000  # rows buffered between writes

    def __init__(self, path: Path) -> None:
        self.db = Database(os.fspath(path))
        self.db.execute("CREATE TABLE serials (party TEXT, prefix TEXT, day TEXT, point INT, "
                        "delta INT)")
        self.db.execute("CREATE TABLE fuel (party TEXT, day TEXT, change TEXT)")
        self.serials: list[tuple[str, str, str, int, int]] = []
        self.fuel: list[tuple[str, str, str]] = []

    def add(self, fact: Fact) -> None:
        day = fact.effective_date or ""
        for block, code, _, gallon_rins in changes(fact):
            sign = 1 if gallon_rins > 0 else -1
            self.serials += ((fact.party, code[:22], day, block.start, sign),
                             (fact.party, code[:22], day, block.end + 1, -sign))
        change = fuel_change(fact)
        if change is not None:
            self.fuel.append((fact.party, day, str(change)))
        if len(self.serials) + len(self.fuel) >= self.FLUSH:
            self.flush()

    def flush(self) -> None:
        self.db.conn.executemany("INSERT INTO serials VALUES (?, ?, ?, ?, ?)", self.serials)
        self.db.conn.executemany("INSERT INTO fuel VALUES (?, ?, ?)", self.fuel)
        self.serials, self.fuel = [], []

    def problems(self) -> list[str]:
        self.flush()
        try:
            return [*self.holding_problems(), *self.fuel_problems()]
        finally:
            self.db.close()

    def holding_problems(self) -> list[str]:
        problems: list[str] = []
        rows = self.db.execute("SELECT party, prefix, day, point, delta FROM serials "
                               "ORDER BY party, prefix, day")
        for (party, prefix), by_party in groupby(rows, key=itemgetter(0, 1)):
            running: dict[int, int] = defaultdict(int)
            for day, on_day in groupby(by_party, key=itemgetter(2)):
                for *_, point, delta in on_day:
                    running[point] += delta
                counts = list(accumulate(running[p] for p in sorted(running)))
                if counts and (min(counts) < 0 or max(counts) > 1):
                    problems.append(
                        f"party {party} holds {prefix}… negatively or twice on {day}"
                    )
                    break
        return problems

    def fuel_problems(self) -> list[str]:
        problems: list[str] = []
        rows = self.db.execute("SELECT party, day, change FROM fuel ORDER BY party, day")
        for party, by_party in groupby(rows, key=itemgetter(0)):
            balance = Decimal(0)
            for day, on_day in groupby(by_party, key=itemgetter(1)):
                balance += sum((Decimal(change) for *_, change in on_day), Decimal(0))
                if balance < 0:
                    problems.append(f"party {party} owns {balance:,} gallons of fuel on {day}")
                    break
        return problems


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
    """The incremental views equal a from-scratch rebuild (to the same position) table by
    table, compared by SQLite itself over the two files (`EXCEPT` both ways, and the row
    counts) rather than with every row of both copies in memory."""
    with tempfile.TemporaryDirectory() as folder:
        fresh = Path(folder) / "views.sqlite"
        rebuild(ledger, fresh, stop=stop)
        db = Database(os.fspath(path))
        try:
            db.execute("ATTACH DATABASE ? AS fresh", [os.fspath(fresh)])
            problems = [problem for t in TABLES if (problem := table_difference(db, t.name))]
            db.execute("DETACH DATABASE fresh")
        finally:
            db.close()
    return problems


def table_difference(db: Database, name: str) -> str | None:
    """How view `name` differs from its rebuild in the attached `fresh` database, if it does."""
    def count(sql: str) -> int:
        return int(db.execute(f"SELECT COUNT(*) FROM ({sql})").fetchone()[0])

    ours, theirs = f'SELECT * FROM main."{name}"', f'SELECT * FROM fresh."{name}"'
    extra, missing = count(f"{ours} EXCEPT {theirs}"), count(f"{theirs} EXCEPT {ours}")
    if extra or missing or count(ours) != count(theirs):
        return (f"view {name} differs from a rebuild: {extra:,} rows not in the rebuild, "
                f"{missing:,} rows missing")
    return None


def verify(ledger: Ledger, path: str | os.PathLike[str] | None = None) -> list[str]:
    """Every broken invariant, one message each; an empty list means all hold. One pass over
    the log: each fact is replayed and its dated changes gathered, then dropped."""
    path = Path(path or views_path(ledger))
    stop = project(ledger, path)
    with tempfile.TemporaryDirectory() as folder:
        replay, dated = Replay(), DatedChecks(Path(folder) / "dated.sqlite")
        for fact in facts(ledger, stop):
            replay.run(fact)
            dated.add(fact)
        dated_problems = dated.problems()
    return [
        *replay.problems, *replay.conservation(), *dated_problems,
        *compare_with_rebuild(ledger, path, stop),
    ]
