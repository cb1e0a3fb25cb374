"""`verify`'s checks of the command rows (ledger/infrastructure/command_table.py), made in its
walk of the log (ledger/infrastructure/audit.py).

Each row must directly follow exactly the events it names (its notification id is the last of
them, and none of them belongs to the command before), link to the row before it (`previous`,
`chain`), and have a client id no other row has; a row at a notification the store does not hold
points at deleted events or was re-pointed. Its chain is folded into the running head after its
notification, as the writer folded it, so the head rows find what the row checks cannot (the
last rows deleted). Every problem names the row by its notification id and client id.

The table itself must be as the ledger made it (`schema_problem`: a dropped UNIQUE key lets an id
apply twice, a trigger rewrites rows), and a store keeps one kind of record: rows in a store
holding `CommandRecord` events (or such an event in a store holding rows) were injected, and
would make the writer look its ids up in the wrong place.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.persistence import Notification

from ledger.infrastructure.command_records import CommandRecord, event_name
from ledger.infrastructure.command_table import (
    GENESIS,
    TABLE,
    CommandRow,
    Folding,
    fold_command,
    link,
    reader,
    schema_problem,
    stored_rows,
    table_of,
)

WINDOW = 256  # the most events one command stores, and more
SHOWN = 5


def label(row: CommandRow) -> str:
    return (f"{TABLE} row at notification {row.notification_id:,} "
            f"(command {row.client_id!r})")


class CommandAudit:
    """The command rows, checked notification by notification in id order."""

    def __init__(self, app: Application[UUID], end: int) -> None:
        self.app = app
        self.end = end
        self.problems: list[str] = []
        problem = schema_problem(reader(app.recorder), table_of(app.recorder))
        if problem:
            self.problems.append(problem)
        rows = stored_rows(app.recorder, end)
        self.rows = Folding(self.readable(rows) if problem else rows)
        #: (notification id, event name, topic) of the latest notifications
        self.recent: deque[tuple[int, str, str]] = deque(maxlen=WINDOW)
        self.last_command = 0  # the notification of the last command row or record seen
        self.last_row: CommandRow | None = None
        self.first: int | None = None  # the first row's notification id
        self.first_record: int | None = None  # the first CommandRecord event's notification id

    def readable(self, rows: Iterator[CommandRow]) -> Iterator[CommandRow]:
        """The rows of an altered table, as far as they can be read (a dropped column)."""
        try:
            yield from rows
        except Exception as error:
            self.problems.append(f"{table_of(self.app.recorder)}: its rows cannot be read "
                                 f"({error}): not checked")

    def step(self, note: Notification, running: str, name: str | None = None) -> str:
        """Check the row at this notification, if any; return the head with it folded in.
        `name`: the notification's event name (`event_name`), if worked out already."""
        rows = self.rows
        if rows.pending is not None and rows.pending.notification_id < note.id:
            for stray in rows.passed(note.id):
                self.problems.append(f"{label(stray)}: that notification is not stored: its "
                                     "events deleted, or the row re-pointed or forged")
                self.check_link(stray)
        self.recent.append((note.id, name or event_name(note.originator_id,
                                                        note.originator_version), note.topic))
        if note.topic == CommandRecord.Applied.TOPIC:
            self.last_command = note.id
            if self.first_record is None:
                self.first_record = note.id
        if rows.pending is None or rows.pending.notification_id != note.id:
            return running  # no row at this notification (the next is further on)
        row = rows.at(note.id)
        if row is None:
            return running
        self.check_link(row)
        self.check_events(row)
        self.last_command = row.notification_id
        return fold_command(running, row.notification_id, row.chain)

    def check_link(self, row: CommandRow) -> None:
        """The row follows the row before it: `previous` names it, `chain` extends its chain."""
        if self.first is None:
            self.first = row.notification_id
        before = self.last_row
        at, chain = (before.notification_id, before.chain) if before else (0, GENESIS)
        self.last_row = row
        if row.previous != at:
            self.problems.append(
                f"{label(row)}: says the row before it is at notification {row.previous:,}, "
                f"but that is at {at:,}: a row between deleted, or one inserted")
        elif row.chain != link(chain, row.notification_id, row.client_id, row.digest,
                               row.events, row.previous):
            self.problems.append(f"{label(row)}: its chain does not hold: edited or forged")

    def check_events(self, row: CommandRow) -> None:
        """The row names some events, exactly those stored just before it, after the last
        command's."""
        named = row.events
        if not (named and all([isinstance(n, str) for n in named])):
            self.problems.append(f"{label(row)}: its list of events is malformed: edited")
            return
        span = self.latest(len(named))
        if span is None or [name for _, name, _ in span] != named or span[0][0] <= (
                self.last_command) or CommandRecord.Applied.TOPIC in [t for *_, t in span]:
            self.problems.append(
                f"{label(row)}: the events it names ({', '.join(named[:3])}"
                f"{'…' if len(named) > 3 else ''}) are not the ones stored just before it: "
                "forged, re-pointed, or its events deleted or moved")

    def latest(self, count: int) -> list[tuple[int, str, str]] | None:
        """The last `count` notifications seen, oldest first (None if fewer were kept): read
        from the deque's end, not copied whole."""
        recent = self.recent
        if count > len(recent):
            return None
        return [recent[at] for at in range(-count, 0)] if count else list(recent)

    def after_last(self) -> list[str]:
        """What the walk cannot see: rows past the last notification that point at nothing
        stored, client ids held by more than one row, and both kinds of record in one store."""
        for row in self.rows.passed(self.end + 1):  # a store whose last events were deleted
            self.problems.append(f"{label(row)}: that notification is not stored: deleted")
        if self.first is not None and self.first_record is not None:
            self.problems.append(
                f"the store holds both kinds of command record, {TABLE} rows (the first at "
                f"notification {self.first:,}) and CommandRecord events (the first at "
                f"notification {self.first_record:,}), but keeps one kind: the rows injected "
                "into a store of the format before issue 15 (its ids would apply again), or "
                "the events into one of the table's")
        query = reader(self.app.recorder)
        recorder: Any = self.app.recorder
        sqlite = not hasattr(recorder.datastore, "schema")
        events = recorder.events_table_name if sqlite else (
            f'"{recorder.datastore.schema}"."{recorder.events_table_name}"')
        column = "rowid" if sqlite else "notification_id"
        table = table_of(recorder)
        try:
            past = query(f"SELECT c.notification_id, c.client_id FROM {table} c WHERE "
                         f"c.notification_id > ? AND NOT EXISTS (SELECT 1 FROM {events} e "
                         f"WHERE e.{column} = c.notification_id) ORDER BY 1 LIMIT ?",
                         (self.end, SHOWN))
            twice = query(f"SELECT client_id, COUNT(*) FROM {table} GROUP BY client_id "
                          "HAVING COUNT(*) > 1 ORDER BY 1 LIMIT ?", (SHOWN,))
        except Exception:  # no such table: a store that never had rows
            return self.problems
        for at, client_id in past:
            self.problems.append(
                f"{table} row at notification {int(at):,} (command {client_id!r}): past the last "
                f"stored notification ({self.end:,}): forged, or its events deleted")
        for client_id, rows in twice:
            self.problems.append(f"{table}: {int(rows)} rows of command {client_id!r}: "
                                 "inserted (a client id is applied once)")
        return self.problems
