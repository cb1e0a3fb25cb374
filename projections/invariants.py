"""`verify`: replay every event from the notification log and check the ledger's invariants.

Conservation per batch (held by all parties + retired = the generated range, no overlap), K only
1 → 2, reservations held and never reserved twice nor moved while pending (§80.1452), no locked
RIN moved while locked (§80.1474(b)(1), projections/lock_invariants.py), no
negative holding or fuel volume on any date, and a from-scratch rebuild into a temporary file
equal to the incremental views. Returns the broken invariants; empty = all hold.
"""

from __future__ import annotations

import os
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

import orjson
from sqlite_utils import Database

from ledger.application.ledger import Ledger
from ledger.domain.ranges import RangeError, SerialSet
from projections import activity_check, sqlite_memory
from projections.facts import Fact, batch_of
from projections.holdings import Change, changes
from projections.lock_invariants import LockReplay
from projections.parked_batches import Parked, ParkedBatches
from projections.quarterly import fuel_change
from projections.runner import TABLES, Observer, project, rebuild, views_path
from projections.schema import Table


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


Slot = tuple[str, str, int]  # (holder, batch, K)
EMPTY = SerialSet()


def where(fact: Fact) -> str:
    """How a problem names the fact it found (worked out only when there is one)."""
    return f"notification {fact.notification_id} ({fact.kind}, party {fact.party})"


class ClosedBatches:
    """Batches wholly retired and held by no one, kept in a scratch file instead of memory:
    conservation held for each when it closed, and a later event on one (an unretirement, a
    forged receipt) opens it again. So the replay holds the batches still in circulation, not
    every batch the log ever generated."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.execute("CREATE TABLE closed_batches (batch TEXT PRIMARY KEY, generated TEXT, "
                   "separated TEXT)")

    def close(self, batch: str, generated: SerialSet, separated: SerialSet) -> None:
        self.db.execute("INSERT OR REPLACE INTO closed_batches VALUES (?, ?, ?)",
                        [batch, orjson.dumps(generated.intervals).decode(),
                         orjson.dumps(separated.intervals).decode()])

    def reopen(self, batch: str) -> tuple[SerialSet, SerialSet] | None:
        """The batch's generated and separated serials, if it was closed (no longer)."""
        row = self.db.execute("SELECT generated, separated FROM closed_batches WHERE batch = ?",
                              [batch]).fetchone()
        if row is None:
            return None
        self.db.execute("DELETE FROM closed_batches WHERE batch = ?", [batch])
        return tuple(SerialSet(tuple(map(tuple, orjson.loads(v))))  # type: ignore[return-value]
                     for v in row)


#: batches the replay holds in memory, the ones touched last; the others are parked
BATCHES_HELD = 4_096


class Replay:
    """Serial sets per batch (generated, retired, K=2 ever) and per holder, in log order. A
    batch wholly retired and held by no one is moved to `closed` (a scratch file), one not
    touched among the last `BATCHES_HELD` is parked there (projections/parked_batches.py), a
    holder's emptied slot and a sell's reservation that ended the day it began are dropped:
    memory follows the batches touched lately, not the length of the log."""

    def __init__(self, closed: ClosedBatches | None = None) -> None:
        """`closed`: where closed and parked batches go; None keeps every batch in memory."""
        self.problems: list[str] = []
        self.closed = closed
        self.parked = ParkedBatches(closed.db) if closed is not None else None
        self.generated: dict[str, SerialSet] = {}
        self.retired: dict[str, SerialSet] = {}
        self.separated: dict[str, SerialSet] = {}
        self.held: dict[Slot, SerialSet] = {}
        #: each batch's (holder, K) slots that hold some serials
        self.slots: dict[str, set[tuple[str, int]]] = {}
        #: the batches in memory, the one touched longest ago first
        self.recent: dict[str, None] = {}
        #: sells' reservations (§80.1452) per (holder, batch, K), each with its life
        self.reserved: dict[Slot, list[Reservation]] = defaultdict(list)
        #: the pending sells' reservations, by posting id
        self.sells: dict[str, list[tuple[Slot, Reservation]]] = {}

    def run(self, fact: Fact, changed: list[Change] | None = None) -> None:
        """Replay one fact; `changed`: its holdings changes (`changes(fact)`), if worked out."""
        touched = {batch_of(block) for block in fact.blocks}
        # each looked up: a set minus `generated.keys()` iterates every key of the dict
        for batch in [batch for batch in touched if batch not in self.generated]:
            self.open(batch)
        if fact.kind == "generated":
            block = fact.event.rin
            self.generated[batch_of(block)] = SerialSet(((block.start, block.end),))
        if fact.kind in ("trade_posted", "trade_closed"):
            self.reservation(fact)
        for block, code, k, gallon_rins in changes(fact) if changed is None else changed:
            batch, serials = batch_of(block), SerialSet(((block.start, block.end),))
            if batch not in touched:
                touched.add(batch)
                self.open(batch)
            slot = (fact.party, batch, k)
            if gallon_rins < 0 and (by := self.reserving(slot, serials, fact.effective_date
                                                         or "")):
                self.problems.append(f"{where(fact)}: {code} left on {fact.effective_date} "
                                     f"while reserved by sell {', '.join(by)}")
            try:
                if gallon_rins > 0:
                    if k == 1 and self.separated.get(batch, EMPTY).overlaps(serials):
                        self.problems.append(f"{where(fact)}: {code} goes back from K=2 to K=1")
                    self.hold(slot, self.held.get(slot, EMPTY).union(serials))
                else:
                    self.hold(slot, self.held.get(slot, EMPTY).subtract(serials))
            except RangeError as exc:
                self.problems.append(f"{where(fact)}: {code}: {exc}")
        if fact.kind == "separated":
            for block in fact.blocks:
                if block.key.k != 1:
                    self.problems.append(f"{where(fact)}: {block.code} separated with "
                                         f"K={block.key.k}")
                batch = batch_of(block)
                self.separated[batch] = SerialSet.of([*self.separated.get(batch, EMPTY),
                                                      (block.start, block.end)])
        if fact.kind in ("retired", "unretired"):  # an unretirement (a reversal) takes back
            for block in fact.blocks:
                batch, serials = batch_of(block), SerialSet(((block.start, block.end),))
                retired = self.retired.get(batch, EMPTY)
                try:
                    self.retired[batch] = (retired.union(serials) if fact.kind == "retired"
                                           else retired.subtract(serials))
                except RangeError as exc:
                    self.problems.append(f"{where(fact)}: {block.code} {fact.kind} twice or never "
                                         f"retired: {exc}")
        for batch in touched:
            self.close_if_done(batch)
            self.recent.pop(batch, None)
            self.recent[batch] = None
        while self.parked is not None and len(self.recent) > BATCHES_HELD:
            self.park(self.parked, next(iter(self.recent)))

    def hold(self, slot: Slot, serials: SerialSet) -> None:
        """Set a holder's serials of one batch and K; an emptied slot is dropped."""
        holder, batch, k = slot
        if serials:
            self.held[slot] = serials
            self.slots.setdefault(batch, set()).add((holder, k))
        elif slot in self.held:
            del self.held[slot]
            self.slots[batch].discard((holder, k))

    def open(self, batch: str) -> None:
        """Bring a closed or parked batch back into memory before an event changes it."""
        found = self.closed.reopen(batch) if self.closed else None
        if found is not None:
            self.generated[batch], self.retired[batch] = found[0], found[0]
            if found[1]:
                self.separated[batch] = found[1]
        parked = self.parked.unpark(batch) if self.parked else None
        if parked is not None:
            for name, serials in zip(("generated", "retired", "separated"), parked[:3],
                                     strict=True):
                if serials is not None:
                    getattr(self, name)[batch] = serials
            for (holder, k), serials in parked.held.items():
                self.hold((holder, batch, k), serials)

    def park(self, into: ParkedBatches, batch: str) -> None:
        """Move a batch not touched lately to the scratch file, whole."""
        del self.recent[batch]
        slots = self.slots.pop(batch, set())
        held = {(holder, k): self.held.pop((holder, batch, k)) for holder, k in slots}
        parked = Parked(self.generated.pop(batch, None), self.retired.pop(batch, None),
                        self.separated.pop(batch, None), held)
        if parked.generated or parked.retired or parked.separated or held:
            into.park(batch, parked)

    def close_if_done(self, batch: str) -> None:
        """A batch wholly retired that no one holds satisfies conservation now and needs no
        memory until an event changes it again."""
        generated = self.generated.get(batch)
        if (self.closed is None or generated is None or self.slots.get(batch)
                or self.retired.get(batch) != generated):
            return
        self.closed.close(batch, generated, self.separated.pop(batch, EMPTY))
        del self.generated[batch], self.retired[batch]
        self.slots.pop(batch, None)

    def reservation(self, fact: Fact) -> None:
        """A sell reserves ranges its poster holds that no other sell reserves on any day of its
        life; a closing ends that life on its date (§80.1452)."""
        event = fact.event
        if fact.kind == "trade_closed":
            for slot, reservation in self.sells.pop(event.posting, ()):
                reservation.end = fact.effective_date or ""
                if not reservation.after(""):  # ended the day it began: never covers a day
                    self.unreserve(slot, reservation)
            return
        day = fact.effective_date or ""
        made = []
        for block, code in zip(fact.blocks, fact.codes, strict=True):
            slot = (fact.party, batch_of(block), block.key.k)
            serials = SerialSet(((block.start, block.end),))
            if not self.held.get(slot, EMPTY).issuperset(serials):
                self.problems.append(f"{where(fact)}: {code} reserved but not held")
            if others := self.reserving(slot, serials, day):
                self.problems.append(f"{where(fact)}: {code} reserved twice (also by "
                                     f"{', '.join(others)})")
            made.append((slot, Reservation(event.client_id, serials, day)))
            self.reserved[slot].append(made[-1][1])
        if made:
            self.sells[event.client_id] = made

    def unreserve(self, slot: Slot, reservation: Reservation) -> None:
        lives = self.reserved.get(slot, [])
        lives[:] = [r for r in lives if r is not reservation]
        if not lives:
            self.reserved.pop(slot, None)

    def reserving(self, slot: Slot, serials: SerialSet, day: str) -> list[str]:
        """The sells whose reservation of `serials` lasts past the start of `day`."""
        return [r.posting for r in self.reserved.get(slot, ()) if r.after(day)
                and r.serials.overlaps(serials)]

    def conservation(self) -> list[str]:
        """Per batch in memory or parked: every holder's serials and the retired ones partition
        the generated range (a closed batch did when it closed, and nothing changed it since)."""
        problems = []
        pieces: dict[str, list[SerialSet]] = defaultdict(list)
        for (_, batch, _), serials in self.held.items():
            pieces[batch].append(serials)
        for batch in set(self.generated) | set(pieces) | set(self.retired):
            problems += unconserved(batch, pieces[batch], self.retired.get(batch),
                                    self.generated.get(batch))
        for batch, parked in self.parked.every() if self.parked else ():
            problems += unconserved(batch, list(parked.held.values()), parked.retired,
                                    parked.generated)
        return sorted(problems)


def unconserved(batch: str, held: list[SerialSet], retired: SerialSet | None,
                generated: SerialSet | None) -> list[str]:
    """How the holders' and retired serials of one batch fail to partition its generated
    range, if they do."""
    parts = [*held, retired or EMPTY]
    count = sum(len(p) for p in parts)
    union = SerialSet.of(i for p in parts for i in p)
    expected = generated or SerialSet()
    if union != expected or count != len(expected):
        return [f"batch {batch}: held + retired is {count:,} gallon-RINs over "
                f"{union.describe()}, generated {expected.describe()}"]
    return []


Points = dict[int, int]  # serial → change of a count from that serial on


class DatedChecks:
    """On no date is a party's holding of a serial or its fuel negative or a serial held
    twice, and what sells reserve that day is held (each serial reserved once) and owned (K=1
    fuel), by effective date (§80.1452: a reservation lasts from its sell's date to its end).
    The changes are written fact by fact (`add`) to a file of their own, as serial-boundary
    counts and signed volumes, and checked at the end party by party in date order, so memory
    holds one party's boundaries at a time however long the log (and each sell's life)."""

    FLUSH = 10_000  # rows buffered between writes
    HELD, RESERVED = 0, 1  # what a row counts

    def __init__(self, path: Path) -> None:
        self.db = Database(os.fspath(path))
        sqlite_memory.bound(self.db.conn)  # its sorts by party and day spill to disk
        self.db.execute("CREATE TABLE serials (party TEXT, prefix TEXT, day TEXT, point INT, "
                        "delta INT, kind INT)")
        self.db.execute("CREATE TABLE fuel (party TEXT, day TEXT, change TEXT, kind INT)")
        # each sell's life, kept in the file too: a sell posted at notification `posted` (a
        # posting id posted again starts a new life), its blocks, and every closing of it
        self.db.execute("CREATE TABLE lives (posting TEXT PRIMARY KEY, posted INT, party TEXT, "
                        "volume TEXT, start TEXT)")
        self.db.execute("CREATE TABLE life_blocks (posted INT, prefix TEXT, first INT, "
                        "last INT)")
        self.db.execute("CREATE TABLE closings (posting TEXT, closed INT, day TEXT)")
        self.serials: list[tuple[str, str, str, int, int, int]] = []
        self.fuel: list[tuple[str, str, str, int]] = []
        self.lives: list[tuple[str, int, str, str | None, str]] = []
        self.life_blocks: list[tuple[int, str, int, int]] = []
        self.closings: list[tuple[str, int, str | None]] = []

    def add(self, fact: Fact, changed: list[Change] | None = None) -> None:
        """Write down one fact's dated changes; `changed` as `Replay.run` takes it."""
        day = fact.effective_date or ""
        for block, code, _, gallon_rins in changes(fact) if changed is None else changed:
            self.count(fact.party, block.start, block.end, code[:22], day,
                       1 if gallon_rins > 0 else -1, self.HELD)
        change = fuel_change(fact)
        if change is not None:
            self.fuel.append((fact.party, day, str(change), self.HELD))
        event = fact.event
        if fact.kind == "trade_posted" and event.side == "sell":
            self.lives.append((event.client_id, fact.notification_id, fact.party,
                               str(event.volume) if event.volume else None, day))
            self.life_blocks += ((fact.notification_id, b.code[:22], b.start, b.end)
                                 for b in fact.blocks)
        elif fact.kind == "trade_closed":
            self.closings.append((event.posting, fact.notification_id, fact.effective_date))
        if len(self.serials) + len(self.fuel) + len(self.life_blocks) >= self.FLUSH:
            self.flush()

    def count(self, party: str, first: int, last: int, prefix: str, day: str, sign: int,
              kind: int) -> None:
        self.serials += ((party, prefix, day, first, sign, kind),
                         (party, prefix, day, last + 1, -sign, kind))

    def reserve(self) -> None:
        """Each sell's reserved serials and fuel, counted from its first day to the day its
        last closing after its posting ended it (none: still pending)."""
        self.db.execute("CREATE INDEX closed ON closings (posting, closed)")
        self.db.execute("CREATE INDEX blocks ON life_blocks (posted)")
        rows = self.db.execute(
            "SELECT posted, party, volume, start, (SELECT day FROM closings AS c WHERE "
            "c.posting = l.posting AND c.closed > l.posted ORDER BY c.closed DESC LIMIT 1) "
            "FROM lives AS l ORDER BY posted")
        for posted, party, volume, start, end in rows:  # read as it goes: memory stays flat
            if end is not None and end <= start:
                continue  # completed on its own date: never held back
            for prefix, first, last in self.db.execute(
                    "SELECT prefix, first, last FROM life_blocks WHERE posted = ?", [posted]):
                for day, sign in ((start, 1), (end, -1)):
                    if day is not None:
                        self.count(party, first, last, prefix, day, sign, self.RESERVED)
            if volume:
                self.fuel.append((party, start, volume, self.RESERVED))
                if end is not None:
                    self.fuel.append((party, end, str(-Decimal(volume)), self.RESERVED))
            if len(self.serials) + len(self.fuel) >= self.FLUSH:
                self.flush()

    def flush(self) -> None:
        self.db.conn.executemany("INSERT INTO serials VALUES (?, ?, ?, ?, ?, ?)", self.serials)
        self.db.conn.executemany("INSERT INTO fuel VALUES (?, ?, ?, ?)", self.fuel)
        self.db.conn.executemany("INSERT OR REPLACE INTO lives VALUES (?, ?, ?, ?, ?)",
                                 self.lives)
        self.db.conn.executemany("INSERT INTO life_blocks VALUES (?, ?, ?, ?)", self.life_blocks)
        self.db.conn.executemany("INSERT INTO closings VALUES (?, ?, ?)", self.closings)
        self.serials, self.fuel, self.lives, self.life_blocks, self.closings = [], [], [], [], []

    def problems(self) -> list[str]:
        self.flush()
        self.reserve()
        self.flush()
        try:
            return [*self.holding_problems(), *self.fuel_problems()]
        finally:
            self.db.close()

    def holding_problems(self) -> list[str]:
        problems: list[str] = []
        rows = self.db.execute("SELECT party, prefix, day, point, delta, kind FROM serials "
                               "ORDER BY party, prefix, day")
        for (party, prefix), by_party in groupby(rows, key=itemgetter(0, 1)):
            by_date = {day: [(point, delta, kind) for *_, point, delta, kind in on_day]
                       for day, on_day in groupby(by_party, key=itemgetter(2))}
            if problem := serial_problem(by_date):
                problems.append(f"party {party} {problem.format(prefix=prefix)}")
        return problems

    def fuel_problems(self) -> list[str]:
        problems: list[str] = []
        rows = self.db.execute("SELECT party, day, change, kind FROM fuel ORDER BY party, day")
        for party, by_party in groupby(rows, key=itemgetter(0)):
            balance = reserved = Decimal(0)
            for day, on_day in groupby(by_party, key=itemgetter(1)):
                for *_, change, kind in on_day:
                    if kind == self.HELD:
                        balance += Decimal(change)
                    else:
                        reserved += Decimal(change)
                if balance < 0:
                    problems.append(f"party {party} owns {balance:,} gallons of fuel on {day}")
                    break
                if reserved > balance:
                    problems.append(f"party {party} has {reserved:,} gallons of fuel reserved "
                                    f"by sells on {day}, owning {balance:,}")
                    break
        return problems


def serial_problem(by_date: dict[str, list[tuple[int, int, int]]]) -> str | None:
    """The first day one holder's serials of one block key are held negatively or twice, or
    reserved twice or without being held; None if there is none. Each day's changes are
    (serial, change from it on, kind: held 0 or reserved 1)."""
    held: Points = defaultdict(int)
    reserved: Points = defaultdict(int)
    for day in sorted(by_date):
        for point, delta, kind in by_date[day]:
            (reserved if kind else held)[point] += delta
        h = r = 0
        for point in sorted(held.keys() | reserved.keys()):
            h, r = h + held.get(point, 0), r + reserved.get(point, 0)
            if h < 0 or h > 1:
                return f"holds {{prefix}}… negatively or twice on {day}"
            if r < 0 or r > 1 or r > h:
                return f"has {{prefix}}… reserved twice or not held on {day}"
    return None



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


def compare_with_rebuild(ledger: Ledger, path: Path, stop: int,
                         observe: Observer | None = None) -> list[str]:
    """The incremental views equal a from-scratch rebuild (to the same position) table by
    table (`table_differences`). `observe` gets each Party event's fact as the rebuild decodes
    it."""
    with tempfile.TemporaryDirectory() as folder:
        fresh = Path(folder) / "views.sqlite"
        rebuild(ledger, fresh, stop=stop, observe=observe)
        return table_differences(path, fresh)


def table_differences(path: Path, fresh: Path) -> list[str]:
    """How the views at `path` differ from their rebuild at `fresh`, compared by SQLite itself
    over the two files rather than with every row of both copies in memory."""
    db = Database(os.fspath(path))
    try:
        db.execute("ATTACH DATABASE ? AS fresh", [os.fspath(fresh)])
        sqlite_memory.bound(db.conn, "fresh")  # the UNIONs' temporary b-trees on disk
        problems = [problem for t in TABLES if (problem := table_difference(db, t))]
        db.execute("DETACH DATABASE fresh")
    finally:
        db.close()
    return problems


def table_difference(db: Database, table: Table) -> str | None:
    """How `table` differs from its rebuild in the attached `fresh` database, if it does.

    One `UNION` and the two row counts prove the copies equal: the union's distinct rows
    number as many as each copy's rows only if neither copy repeats a row and each holds the
    other's (half the work of `EXCEPT` both ways). Only copies that differ are counted row by
    row, as multisets, so a row repeated in one copy counts too. Each row carries which of its
    integers are REAL (`classes`): SQLite finds 100000.0 equal to 100000, which a report prints
    otherwise (or fails to format)."""
    name = table.name

    def count(sql: str) -> int:
        return int(db.execute(f"SELECT COUNT(*) FROM ({sql})").fetchone()[0])

    columns = ", ".join(f'"{column}"' for column in table.columns)
    columns = f"{columns}, {classes(table)}"
    rows = count(f'SELECT 1 FROM main."{name}"')
    if count(f'SELECT 1 FROM fresh."{name}"') == rows == count(
            f'SELECT {columns} FROM main."{name}" UNION SELECT {columns} FROM fresh."{name}"'):
        return None
    side = '"rin verify side"'
    extra, missing = db.execute(
        f"SELECT TOTAL(MAX(d, 0)), TOTAL(MAX(-d, 0)) FROM (SELECT SUM({side}) AS d FROM "
        f'(SELECT {columns}, 1 AS {side} FROM main."{name}" UNION ALL '
        f'SELECT {columns}, -1 FROM fresh."{name}") GROUP BY {columns})').fetchone()
    if not extra and not missing:  # the same rows, repeated alike in both copies
        return None
    return (f"view {name} differs from a rebuild: {int(extra):,} rows not in the rebuild, "
            f"{int(missing):,} rows missing")


def classes(table: Table) -> str:
    """An integer with a bit per INTEGER column of `table`, set where a row's value there is
    REAL: the one storage class SQLite finds equal to another (100000.0 = 100000), for the
    comparison to tell them apart. A TEXT column needs none: text never equals a number."""
    numeric = [column for column, (kind, _) in table.columns.items() if kind is int]
    return " + ".join(f"""(typeof("{column}") = 'real') * {1 << place}"""
                      for place, column in enumerate(numeric)) or "0"


class InvariantChecks:
    """What `verify` checks of each Party event's fact as a rebuild decodes it (locks, the
    replay's conservation, the dated checks in a scratch file in `folder`), then at the end."""

    def __init__(self, folder: Path, locks: LockReplay | None = None) -> None:
        self.locks = locks or LockReplay()
        self.dated = DatedChecks(folder / "dated.sqlite")
        self.replay = Replay(ClosedBatches(self.dated.db))

    def check(self, fact: Fact) -> None:
        changed = changes(fact)  # worked out once for the three
        self.locks.check(fact, changed)
        self.replay.run(fact, changed)
        self.dated.add(fact, changed)

    def problems(self, differences: list[str], path: Path) -> list[str]:
        """Every broken invariant, with the views' `differences` from their rebuild."""
        conservation = self.replay.conservation()  # before the dated checks close the file
        dated_problems = self.dated.problems()
        return [
            *self.replay.problems, *self.locks.problems, *conservation,
            *dated_problems, *differences, *activity_check.problems(path),
        ]


def verify(ledger: Ledger, path: str | os.PathLike[str] | None = None) -> list[str]:
    """Every broken invariant, one message each; an empty list means all hold. One pass over
    the log, the rebuild's: each fact it decodes is replayed and its dated changes gathered,
    then dropped (`rin verify` feeds the same checks from its audit's walk instead,
    projections/verify_pass.py)."""
    path = Path(path or views_path(ledger))
    stop = project(ledger, path)
    with tempfile.TemporaryDirectory() as folder:
        checks = InvariantChecks(Path(folder), LockReplay.of(ledger, stop))
        differences = compare_with_rebuild(ledger, path, stop, observe=checks.check)
        return checks.problems(differences, path)
