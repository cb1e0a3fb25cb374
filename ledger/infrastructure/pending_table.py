"""The pending EMTS postings (§80.1452(c)) as rows of `rin_pending`, written in the transaction
that stores the events posting and closing them.

`expire_trades` asks which postings are still pending. A ledger opened on a store read every
posting and closing ever stored to answer it the first time (ledger/infrastructure/
pending_postings.py): 3.4 s of CPU on a 1M-event store, which grows with the history, for a
set of 39 postings. The table holds that set, so a ledger opened on any history reads only it.
It is a copy of what the log says, kept by the ledger's own saves: `verify` compares it with
the postings and closings of the log; a store begun before the table has it filled from its log
when a writer of this release first opens it (`from_log`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.persistence import StoredEvent

from ledger.domain.party import Party

TABLE = "rin_pending"
POSTED, CLOSED = Party.TradePosted.TOPIC, Party.TradeClosed.TOPIC
TOPICS = (POSTED, CLOSED)
CREATE_SQLITE = (f"CREATE TABLE IF NOT EXISTS {TABLE} (posting TEXT PRIMARY KEY, "
                 "originator_id TEXT NOT NULL, effective_date TEXT NOT NULL)")
#: one pending posting: its id (the `sell`'s or `buy`'s command id), its party's aggregate id
#: as 32 hex digits, its effective date as ISO text
Row = tuple[str, str, str]
#: a read-only query on the store: (SQL with `?` markers, parameters) → rows
Query = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]
#: a statement on the save's transaction: (SQL, parameters)
Execute = Callable[[str, Sequence[Any]], Any]
CHUNK = 500  # rows an INSERT: 1,500 parameters


def create_postgres(table: str) -> str:
    return (f"CREATE TABLE IF NOT EXISTS {table} (posting text PRIMARY KEY, "
            "originator_id text NOT NULL, effective_date text NOT NULL)")


def change(topic: str, originator_id: UUID | str, state: dict[str, Any]
           ) -> tuple[str, Row | None] | None:
    """What one stored event does to the pending postings: (posting id, its row) for a
    posting, (posting id, None) for a closing, None for any other event. Its fields are read
    from the stored state, as the event's transcoder writes them (its date a `date_iso`)."""
    if topic == POSTED:
        hex_id = originator_id.hex if isinstance(originator_id, UUID) else str(originator_id)
        posting = str(state["client_id"])
        return posting, (posting, hex_id, str(state["effective_date"]["_data_"]))
    if topic == CLOSED:
        return str(state["posting"]), None
    return None


def net(changes: Iterable[tuple[str, Row | None] | None]) -> tuple[list[Row], list[str]]:
    """The rows to insert and the posting ids to delete for `changes` made in this order."""
    posted: dict[str, Row] = {}
    closed: list[str] = []
    for made in changes:
        if made is None:
            continue
        posting, row = made
        if row is not None:
            posted[posting] = row
        elif posted.pop(posting, None) is None:
            closed.append(posting)
    return list(posted.values()), closed


def saved(stored_events: Sequence[StoredEvent]) -> tuple[list[Row], list[str]]:
    """What a save of `stored_events` inserts into and deletes from the table."""
    return net(change(e.topic, e.originator_id, orjson.loads(e.state))
               for e in stored_events if e.topic in TOPICS)


def insert_sqlite(execute: Execute, rows: Sequence[Row]) -> None:
    """`rows` into the table of a SQLite store, `CHUNK` a statement."""
    for first in range(0, len(rows), CHUNK):
        chunk = rows[first:first + CHUNK]
        execute(f"INSERT INTO {TABLE} (posting, originator_id, effective_date) VALUES "
                f"{','.join(['(?,?,?)'] * len(chunk))}", [field for row in chunk for field in row])


def write_sqlite(execute: Execute, stored_events: Sequence[StoredEvent]) -> None:
    """Keep a SQLite store's table in step with a save, on the save's transaction: the
    postings it makes inserted, those it closes deleted."""
    rows, closed = saved(stored_events)
    insert_sqlite(execute, rows)
    if closed:
        execute(f"DELETE FROM {TABLE} WHERE posting IN ({','.join('?' * len(closed))})", closed)


def from_log(query: Query, events: str, id_column: str) -> list[Row]:
    """The postings pending after every event of the log (`events`, ids in `id_column`): what
    a store begun before the table fills it with when a writer of this release first opens it
    (one pass, once in the store's life)."""
    rows = query(f"SELECT originator_id, topic, state FROM {events} WHERE topic IN (?, ?) "
                 f"ORDER BY {id_column}", TOPICS)
    posted, _ = net(change(topic, originator_id, orjson.loads(state))
                    for originator_id, topic, state in rows)
    return posted


def read(query: Query, events: str, id_column: str, table: str = TABLE
         ) -> tuple[int, list[Row]]:
    """(the log's last notification id, the table's rows) read by one statement, so from one
    state of the store however many writers commit meanwhile."""
    rows = query(f"SELECT m.last, p.posting, p.originator_id, p.effective_date FROM "
                 f"(SELECT coalesce(max({id_column}), 0) AS last FROM {events}) AS m "
                 f"LEFT JOIN {table} AS p ON 1 = 1", ())
    return int(rows[0][0]), [(str(posting), str(hex_id), str(on))
                             for _, posting, hex_id, on in rows if posting is not None]


class PendingAudit:
    """`verify`'s check of the table: the rows read as of notification `at` against the
    pending postings the walk of the log derives up to there. `expire_trades` reads the table
    for the parties to expire, whose own postings then decide (§80.1452(c)): a row missing or
    dated later lets a stale posting escape expiry; a row added or dated earlier only sends
    expiry to a party with nothing stale."""

    SHOWN = 5

    def __init__(self, at: int, rows: list[Row]) -> None:
        self.at = at
        self.rows = {row[0]: row for row in rows}
        self.derived: dict[str, Row] = {}

    def step(self, notification_id: int, topic: str, originator_id: UUID | str,
             state: dict[str, Any]) -> None:
        """One event of the walk, its state parsed."""
        if notification_id > self.at or topic not in TOPICS:
            return
        try:
            made = change(topic, originator_id, state)
        except (KeyError, TypeError):  # not a posting's fields: the chain check names it
            return
        if made is not None:
            posting, row = made
            if row is None:
                self.derived.pop(posting, None)
            else:
                self.derived[posting] = row

    def problems(self) -> list[str]:
        """What differs, each posting named (the first `SHOWN` of each kind)."""
        missing = [p for p in self.derived if self.rows.get(p) != self.derived[p]]
        extra = [p for p in self.rows if p not in self.derived]
        found = []
        for postings, what in ((missing, "pending in the log but missing or altered there"),
                               (extra, "there but not pending in the log")):
            if postings:
                more = (f" and {len(postings) - self.SHOWN:,} more"
                        if len(postings) > self.SHOWN else "")
                found.append(f"{TABLE} at notification {self.at:,}: postings "
                             f"{', '.join(map(repr, postings[:self.SHOWN]))}{more} {what} "
                             "(§80.1452(c): expire_trades reads the table; dropped, it is "
                             "filled anew from the log when a ledger next opens the store)")
        return found
