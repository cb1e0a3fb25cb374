"""`audit`: check every fact the write side stores, in one pass over the notification log.

- Each aggregate's hash chain (ledger/infrastructure/chain.py): an edited, deleted, reordered or
  inserted event.
- The notification sequence: on SQLite, where ids have no gaps but deleted rows, a missing id.
- The head rows (ledger/infrastructure/heads.py): each equals the fold of the log up to it; the
  last one is at the last notification (events after it were added outside the ledger; a head
  past the end means a deleted tail); with a public key, every head since signing began carries
  that key's valid signature, and the last head is signed.
- `head.json` (ledger/infrastructure/head_file.py) and an exported head: the store still holds
  them.
- Command records: each directly follows exactly the events it names
  (ledger/infrastructure/command_records.py); the rows of `rin_commands` also link to the row
  before them and are folded into the head (ledger/infrastructure/command_audit.py).
- The pending postings' table (ledger/infrastructure/pending_table.py): as of the commit it
  was read at, the postings the log leaves pending, no more, no fewer, each as posted; and the
  store's index of the events that open a lock, status or invalidation record: the records
  the log opens.
- Snapshots: each equals the replay of its aggregate's events up to its version
  (ledger/infrastructure/snapshot_check.py), mutated forward from the events the walk decodes.

The walk reads the log once, a page at a time; each event is decoded at most once, for the
snapshot check and for a `Follower` (`verify`'s rebuild and invariants, in projections), which
gets each page's events while nothing found so far is wrong. Every problem names where it is
(aggregate, version, notification id, table and row).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator
from typing import Any, Protocol
from uuid import UUID

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from eventsourcing.application import Application
from eventsourcing.persistence import Notification

from ledger.infrastructure.chain import (
    CHAIN_KEY,
    GENESIS,
    Links,
    Named,
    ReadState,
    aggregate_name,
    fold,
)
from ledger.infrastructure.chain_walk import read_once
from ledger.infrastructure.command_audit import CommandAudit
from ledger.infrastructure.command_records import CommandRecord, event_name
from ledger.infrastructure.event_store import LedgerApp
from ledger.infrastructure.head_file import read_head_file
from ledger.infrastructure.heads import TABLE as HEADS_TABLE
from ledger.infrastructure.heads import Head
from ledger.infrastructure.invalidation_index import OPENING, FindsOpened
from ledger.infrastructure.notification_pages import pages
from ledger.infrastructure.pending_postings import KeepsPending
from ledger.infrastructure.pending_table import PendingAudit
from ledger.infrastructure.row_types import malformed_rows
from ledger.infrastructure.signing import fingerprint, signature_holds
from ledger.infrastructure.snapshot_check import SnapshotCheck

PAGE = 1_000


def query(app: Application[UUID], sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of one read-only SQL statement on the event store (SQLite or PostgreSQL)."""
    sqlite = "SQLITE_DBNAME" in app.env
    with app.recorder.datastore.transaction(commit=False) as c:  # type: ignore[attr-defined]
        c.execute(sql if sqlite else sql.replace("?", "%s"), params)
        return [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in c.fetchall()]


def heads_table(app: Application[UUID]) -> str:
    return str(getattr(getattr(app.recorder, "heads", None), "table", HEADS_TABLE))


def bounds(app: Application[UUID]) -> tuple[int, int]:
    """(last notification id, last head row id) read in one transaction: what is committed
    after it (by writers running while verify does) is left out, consistently."""
    sqlite = "SQLITE_DBNAME" in app.env
    recorder: Any = app.recorder
    events = recorder.events_table_name if sqlite else (
        f'"{recorder.datastore.schema}"."{recorder.events_table_name}"')
    column = "rowid" if sqlite else "notification_id"
    with recorder.datastore.transaction(commit=False) as c:
        c.execute(f"SELECT MAX({column}) AS n FROM {events}")
        end = first_value(c.fetchone())
        try:
            c.execute(f"SELECT MAX(notification_id) AS n FROM {heads_table(app)}")
            last_head = first_value(c.fetchone())
        except Exception:  # a store begun before heads existed has no table
            last_head = 0
    return end, last_head


def first_value(row: Any) -> int:
    value = (list(row.values()) if isinstance(row, dict) else list(row))[0] if row else None
    return int(value or 0)


def stored_heads(app: Application[UUID], upto: int | None = None) -> Iterator[Head]:
    """Every head row (up to `upto`) in notification id order, page by page (none if the
    table is missing)."""
    after = -1
    table = heads_table(app)
    limit = "" if upto is None else f" AND notification_id <= {int(upto)}"
    while True:
        try:
            rows = query(app, f"SELECT notification_id, hash, key, signature FROM {table} "
                              f"WHERE notification_id > ?{limit} ORDER BY notification_id "
                              "LIMIT ?", (after, PAGE))
        except Exception:
            return
        for row in rows:
            yield Head(int(row[0]), str(row[1]), row[2], row[3])
        if len(rows) < PAGE:
            return
        after = int(rows[-1][0])


class Follower(Protocol):
    """What else reads the walk's decoded events: told the log's end first, then given each
    page's events of `topics` as (notification id, event) and the page's last notification id
    (the end, for the last page); told if an event cannot be decoded (it then gets no more)."""

    @property
    def topics(self) -> Collection[str]: ...

    def begin(self, end: int) -> None: ...

    def page(self, events: list[tuple[int, Any]], last: int) -> None: ...

    def failed(self, notification_id: int, error: Exception) -> None: ...


class Audit:
    """One pass over the log; `problems` lists what is wrong, each located."""

    def __init__(self, app: LedgerApp, public_key: Ed25519PublicKey | None,
                 exported: dict[str, Any] | None) -> None:
        self.app = app
        self.public_key = public_key
        self.problems: list[str] = []
        self.links = Links()
        self.running = GENESIS
        self.last_id = 0
        kept = read_head_file(app)  # before the bounds: a writer commits, then writes it
        #: the pending postings' table as of a commit at or before the bounds' end
        self.pending = (PendingAudit(*app.recorder.pending_postings())
                        if isinstance(app.recorder, KeepsPending) else None)
        #: the aggregates whose records the walk sees opened, by topic (`OPENING`)
        self.opened: dict[str, set[UUID]] = {topic: set() for topic in OPENING}
        self.end, heads_end = bounds(app)
        self.heads = stored_heads(app, heads_end)
        self.commands = CommandAudit(app, self.end)
        self.head: Head | None = next(self.heads, None)
        self.due: float = math.inf  # `set_due`
        #: heads kept elsewhere: notification id → (label, head)
        self.kept: dict[int, list[tuple[str, dict[str, Any]]]] = {}
        self.first_head = self.head.notification_id if self.head else None
        self.last_head: Head | None = None
        self.signed_from: int | None = None  # the first and last heads with a valid signature
        self.signed_upto: int | None = None
        self.set_due()
        self.sqlite = "SQLITE_DBNAME" in app.env
        #: what only this release writes, so its store must have head rows: head.json, and
        #: the first command record naming its events
        self.head_file = kept is not None
        self.naming_record: int | None = None
        if exported is not None:
            self.keep("the exported head", exported)
        if isinstance(kept, str):
            self.problems.append(kept)
        elif kept is not None:
            self.keep("head.json", kept)

    def keep(self, label: str, head: dict[str, Any]) -> None:
        self.kept.setdefault(int(head["notification_id"]), []).append((label, head))
        self.set_due()

    def set_due(self) -> None:
        """`due`: the lowest notification id a head row or a kept head is at (before it,
        `heads_before` and `check_heads_at` have nothing to do)."""
        due = min(self.kept, default=math.inf)
        self.due = due if self.head is None else min(due, self.head.notification_id)

    def run(self, follower: Follower | None = None) -> list[str]:
        """Every problem found; `follower` gets the decoded events while there is none."""
        self.check_heads_at(0)  # a head kept of the empty log: the genesis hash
        snapshots = SnapshotCheck(self.app, lambda sql, params: query(self.app, sql, params),
                                  self.chain_of)
        if follower is not None:
            follower.begin(self.end)
        following = follower is not None
        topics = follower.topics if follower is not None else ()
        for page in pages(self.app.recorder, stop=self.end, size=PAGE):
            decoded: list[tuple[int, Any]] = []
            for note in page:
                self.step(note)
                following = following and not (
                    self.problems or self.commands.problems or snapshots.problems)
                oid = note.originator_id
                wanted = isinstance(oid, UUID) and snapshots.wants(oid)
                read = following and note.topic in topics
                if not (wanted or read):
                    continue
                try:
                    event = self.app.mapper.to_domain_event(note)
                except Exception as error:  # a state that links and parses, yet is no event
                    if wanted and isinstance(oid, UUID):
                        snapshots.cannot_replay(oid, error)
                    if read and follower is not None:
                        follower.failed(note.id, error)
                        following = False
                    continue
                if wanted:
                    snapshots.step(event)
                if read:
                    decoded.append((note.id, event))
            if following and follower is not None:
                follower.page(decoded, page[-1].id if len(page) == PAGE else self.end)
        self.after_last()
        if self.pending is not None:
            self.problems.extend(self.pending.problems())
        self.problems.extend(self.opened_problems())
        self.problems.extend(self.commands.after_last())
        self.problems.extend(snapshots.after_last())
        return self.problems

    def opened_problems(self) -> list[str]:
        """Where the store's own finding of the rare `Opened` events (a SQLite store's partial
        index, ledger/infrastructure/invalidation_index.py) differs from the walk: an index
        whose definition was rewritten without its rows hides a lock or an invalidation from
        every command (§80.1474(b)(1), §80.1431)."""
        recorder = self.app.recorder
        if not isinstance(recorder, FindsOpened):
            return []
        problems = []
        for topic, walked in self.opened.items():
            found = set(recorder.opened(topic, 0, self.end))
            if found != walked:
                problems.append(
                    f"the store's index of {topic} events finds {len(found):,} records where "
                    f"the log holds {len(walked):,} (missing: "
                    f"{', '.join(sorted(str(i) for i in walked - found)[:5]) or 'none'}): "
                    "commands read it to find locks and invalidations; rebuild it with "
                    "REINDEX rin_opened")
        return problems

    def step(self, note: Notification) -> None:
        if self.sqlite and note.id != self.last_id + 1:
            gap = (f"notification {self.last_id + 1:,}" if note.id == self.last_id + 2
                   else f"notifications {self.last_id + 1:,}-{note.id - 1:,}")
            self.problems.append(f"{gap} missing from stored_events: deleted")
        if self.due <= note.id:
            self.heads_before(note.id)
        read = read_once(note)  # parsed and rendered once, for the head and the link
        named = self.links.named(note.originator_id)  # its id rendered once, for both too
        self.running = fold(self.running, note, body=read.body, key=named.key)
        self.last_id = note.id
        name = self.check_event(note, read, named)
        self.running = self.commands.step(note, self.running, name)
        if self.due <= note.id:
            self.check_heads_at(note.id)

    def chain_of(self, oid: UUID, version: int) -> str | None:
        """The stored chain of the aggregate's event at `version`, if that is the last one the
        walk read (a snapshot's seal is checked against it without reading it back)."""
        last = self.links.last.get(str(oid))
        return last[1] if last is not None and last[0] == version else None

    def check_event(self, note: Notification, read: ReadState | None = None,
                    named: Named | None = None) -> str:
        """Check the event's link (and a command record's events); its event name."""
        named = named or self.links.named(note.originator_id)
        if note.originator_version > 1 and named.key not in self.links.last:
            self.recall_record(note)
        state, problem = self.links.step(note, read, named)
        if problem:
            self.problems.append(problem)
        if self.pending is not None and state is not None:
            self.pending.step(note.id, note.topic, note.originator_id, state)
        if note.topic in self.opened and isinstance(note.originator_id, UUID):
            self.opened[note.topic].add(note.originator_id)
        if note.topic == CommandRecord.Applied.TOPIC:
            # a command record's aggregate has this one event: its link is not kept (in a
            # store of release 2's format a quarter of the log is such records)
            self.links.forget(note.originator_id, named.key)
            if state is not None:
                self.check_record(note, state)
        return (event_name(note.originator_id, note.originator_version) if named.hex is None
                else f"{named.hex}:{note.originator_version}")

    def recall_record(self, note: Notification) -> None:
        """A later event of an aggregate whose link was not kept: if the stored event before it
        is a command record's, its link (and name) as the walk saw it, read back."""
        before = self.app.recorder.select_events(note.originator_id,
                                                 lte=note.originator_version - 1, desc=True,
                                                 limit=1)
        if not before or before[0].topic != CommandRecord.Applied.TOPIC:
            return
        try:
            state = orjson.loads(before[0].state)
        except ValueError:
            return
        if isinstance(state, dict):
            oid = str(note.originator_id)
            self.links.last[oid] = (before[0].originator_version,
                                    str(state.get(CHAIN_KEY, GENESIS)))
            self.links.names[oid] = aggregate_name(oid, state)

    def check_record(self, note: Notification, state: dict[str, Any]) -> None:
        """A command record directly follows the events it names, and names some."""
        client_id = state.get("client_id")
        label = f"command record {client_id!r} (notification {note.id:,})"
        if not isinstance(client_id, str) or note.originator_id != self.app.record_id(client_id):
            self.problems.append(f"{label}: its id is not the one its client id gives: edited "
                                 "(the real id's line would be a duplicate)")
        named = state.get("events")
        if named is None:
            if self.first_head is not None and note.id > self.first_head:
                self.problems.append(f"{label}: names no events, yet was stored after this "
                                     "store began keeping heads: forged")
            elif self.naming_record is not None:
                self.problems.append(f"{label}: names no events, yet the record at notification "
                                     f"{self.naming_record:,} before it does: forged")
            return
        if self.naming_record is None:
            self.naming_record = note.id
        if not (isinstance(named, list) and named and all(isinstance(n, str) for n in named)):
            self.problems.append(f"{label}: its list of events is malformed: forged or edited")
            return
        before = self.commands.latest(len(named))  # the notifications before this one
        if before is None or [name for _, name, _ in before] != named or any(
                topic == CommandRecord.Applied.TOPIC for *_, topic in before):
            self.problems.append(
                f"{label}: the events it names ({', '.join(named[:3])}"
                f"{'…' if len(named) > 3 else ''}) are not the ones stored just before it: "
                "forged, or its events deleted or moved")

    def heads_before(self, notification_id: int) -> None:
        """Head rows (and kept heads) at ids below this notification name deleted events."""
        while self.head is not None and self.head.notification_id < notification_id:
            if self.head.notification_id > self.last_id:
                self.problems.append(
                    f"{HEADS_TABLE} row at notification {self.head.notification_id:,}: "
                    "that notification is missing: deleted")
            self.next_head()
        for kept_id in [k for k in self.kept if self.last_id < k < notification_id]:
            for label, _ in self.kept.pop(kept_id):
                self.problems.append(f"{label} is at notification {kept_id:,}, which the "
                                     "store no longer holds: deleted")
        self.set_due()

    def check_heads_at(self, notification_id: int) -> None:
        if self.head is not None and self.head.notification_id == notification_id:
            head = self.head
            if head.hash != self.running:
                self.problems.append(
                    f"{HEADS_TABLE} row at notification {notification_id:,}: stored head "
                    f"{head.hash[:16]}…, recomputed {self.running[:16]}…: history up to it "
                    "changed, or the head row was edited")
            self.check_signature(head)
            self.last_head = head
            self.next_head()
        found = self.kept.pop(notification_id, [])
        if found:
            self.set_due()
        for label, kept in found:
            if kept["hash"] != self.running:
                self.problems.append(
                    f"{label} at notification {notification_id:,} was {kept['hash']}, "
                    f"recomputed {self.running}: history up to that point changed")
            if self.public_key is not None and kept.get("signature") is not None and not (
                    signature_holds(self.public_key, kept)):
                self.problems.append(f"{label}: its signature does not hold under "
                                     f"{fingerprint(self.public_key)}")

    def check_signature(self, head: Head) -> None:
        if self.public_key is None:
            return
        where_ = f"{HEADS_TABLE} row at notification {head.notification_id:,}"
        if head.signature is None:
            if self.signed_from is not None:
                self.problems.append(f"{where_}: not signed, after signing began at "
                                     f"notification {self.signed_from:,}: written without the key")
            return
        if not signature_holds(self.public_key, head.to_dict()):
            self.problems.append(f"{where_}: signature does not hold under "
                                 f"{fingerprint(self.public_key)}: forged or edited")
        else:
            self.signed_upto = head.notification_id
            if self.signed_from is None:
                self.signed_from = head.notification_id

    def next_head(self) -> None:
        self.head = next(self.heads, None)
        self.set_due()

    def after_last(self) -> None:
        """What the end of the log says: a deleted tail, or events no head covers."""
        while self.head is not None:
            self.problems.append(
                f"{HEADS_TABLE} row at notification {self.head.notification_id:,} is past the "
                f"last stored notification ({self.last_id:,}): the tail was deleted")
            self.next_head()
        for kept_id, kept in sorted(self.kept.items()):
            for label, _ in kept:
                self.problems.append(
                    f"{label} is at notification {kept_id:,}, past the last stored "
                    f"notification ({self.last_id:,}): the store was truncated")
        naming = self.naming_record or self.commands.first
        if self.first_head is None and self.last_id and (self.head_file or naming):
            why = ("head.json is kept" if self.head_file else
                   f"the command record at notification {naming:,} names its events")
            self.problems.append(f"{HEADS_TABLE} has no rows, yet {why}, as only a writer that "
                                 "stores head rows does: every head row was deleted")
        covered = self.last_head.notification_id if self.last_head else 0
        if self.first_head is not None and self.last_id > covered:
            self.problems.append(
                f"notifications {covered + 1:,}-{self.last_id:,} are covered by no head row: "
                "stored outside the ledger")
        if self.public_key is not None:
            if self.signed_upto is None:
                self.problems.append(
                    f"no head signed by {fingerprint(self.public_key)} covers the store: "
                    "nothing it holds is proven")
            elif self.signed_upto < self.last_id:
                self.problems.append(
                    f"notifications {self.signed_upto + 1:,}-{self.last_id:,} are covered by no "
                    "signed head: added without the key")


def audit(app: LedgerApp, public_key: Ed25519PublicKey | None = None,
          exported: dict[str, Any] | None = None, follower: Follower | None = None) -> list[str]:
    """Every stored fact that does not hold, each located; an empty list means all hold.
    `follower` is handed the walk's decoded events (`Audit.run`)."""
    return malformed_rows(app, heads_table(app), query) or Audit(
        app, public_key, exported).run(follower)
