"""Head rows: the ledger-wide chain head after each committed transaction, stored with it.

Each transaction that stores events also stores, in the SAME database transaction, one row of
`rin_heads`: its last notification id, the head there (`chain.fold` of every notification up to
it, so it equals `chain_head(app, id)`), and, when a key is configured, the key's fingerprint
and its Ed25519 signature of (id, head). Inserts are serialized by the store (SQLite's write
lock, taken by the events' INSERT before anything here is read; PostgreSQL's table lock), so
each row folds onto the previous one. A store whose last head is signed refuses, inside the
transaction, events from a writer without that key (`KeyRequired`). `verify` recomputes every
row, checks the signatures, and finds a deleted tail by the last row
(ledger/infrastructure/audit.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Notification, StoredEvent

from ledger.infrastructure.chain import GENESIS, fold, fold_stored
from ledger.infrastructure.command_table import CommandRow, fold_command
from ledger.infrastructure.signing import KeyRequired, Signer, StoreRefused

TABLE = "rin_heads"
COLUMNS = "(notification_id {id} PRIMARY KEY, hash TEXT NOT NULL, key TEXT, signature TEXT)"
CREATE_SQLITE = f"CREATE TABLE IF NOT EXISTS {TABLE} {COLUMNS.format(id='INTEGER')}"


def create_postgres(table: str) -> str:
    return f"CREATE TABLE IF NOT EXISTS {table} {COLUMNS.format(id='BIGINT')}"


@dataclass(frozen=True)
class Head:
    """The head after notification `notification_id`, signed or not."""

    notification_id: int
    hash: str
    key: str | None = None
    signature: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"notification_id": self.notification_id, "hash": self.hash}
        if self.signature is not None:
            out.update(key=self.key, signature=self.signature)
        return out


class StoreTruncated(StoreRefused):
    """New events got notification ids at or below the last head: the store lost its tail."""

    exit_code = 3

    def __init__(self, head: int, first: int) -> None:
        super().__init__(
            f"the store's last head is at notification {head:,} but new events got ids from "
            f"{first:,}: events after it were deleted; nothing written (run `rin verify`)"
        )


class BehindHeadFile(StoreRefused):
    """The store's last head is before the one `head.json` names: events after it were deleted
    with their head rows, or the events file emptied or restored from an older copy. A write
    would bury that under new heads (and overwrite head.json), so nothing is written."""

    exit_code = 3

    def __init__(self, kept: int, head: int) -> None:
        super().__init__(
            f"head.json names notification {kept:,} but the store's last head is at "
            f"{head:,}: events after it were deleted, or the store was replaced by an older "
            "copy; nothing written (run `rin verify`; if the older store is meant, delete "
            "head.json first)"
        )


#: runs one SQL statement with parameters and returns every row as a tuple
Query = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]


class HeadWriter:
    """Writes the head row of a transaction; remembers, per thread, the last one written."""

    def __init__(self, table: str = TABLE, marker: str = "?") -> None:
        self.signer: Signer | None = None
        self.table = table  # qualified by the schema on PostgreSQL
        self._marker = marker  # the driver's parameter marker: ? (sqlite3) or %s (psycopg)
        #: the notification head.json named when the store was opened (0: none): the store's
        #: heads may not end before it (ledger/infrastructure/head_file.py `heed_head_file`)
        self.floor = 0
        self._last = threading.local()

    @property
    def last(self) -> Head | None:
        """The head this thread's last transaction wrote (valid once it has committed)."""
        return getattr(self._last, "head", None)

    def admit(self, query: Query, last_stored_sql: str | None = None) -> None:
        """In the writing transaction, before `record`: refuse a writer without the key the
        store's heads are signed with (`KeyRequired`), and, given `last_stored_sql` (run before
        the insert), a store whose tail was deleted (its last head is past the last stored
        event: `StoreTruncated`). On PostgreSQL this must run before the insert: the library
        commits what was inserted even when a later hook raises."""
        rows = query(self.last_head_sql, ())
        stored = query(last_stored_sql, ()) if last_stored_sql is not None else None
        self.admit_rows(rows, None if stored is None else (
            int(stored[0][0]) if stored and stored[0][0] is not None else 0))

    @property
    def last_head_sql(self) -> str:
        """The statement selecting the last head row (none: an empty or release-1 store)."""
        return f"SELECT notification_id, hash, key FROM {self.table} " \
               "ORDER BY notification_id DESC LIMIT 1"

    def admit_rows(self, rows: Sequence[Sequence[Any]], last_stored: int | None) -> None:
        """`admit` given what it reads: the rows of `last_head_sql` and, if known, the last
        notification id stored before the insert (0: none), for a caller that sends those
        statements with others in one round trip (ledger/infrastructure/postgres_recorder.py)."""
        after, head, key = (int(rows[0][0]), str(rows[0][1]), rows[0][2]) if rows else (
            0, GENESIS, None)
        signer = self.signer
        if key is not None and (signer is None or signer.fingerprint != key):
            raise KeyRequired(str(key), signer.fingerprint if signer else None)
        if last_stored is not None and last_stored < after:
            raise StoreTruncated(after, last_stored + 1)
        if after < self.floor:
            raise BehindHeadFile(self.floor, after)
        self._last.base = (after, head)

    def record(self, query: Query, ids: Sequence[int], stored: Sequence[StoredEvent],
               gap: Callable[[int, int], list[Notification]],
               commands: Sequence[CommandRow] = ()) -> Head:
        """Fold this transaction's events, each followed by the command row at its id if any
        (ledger/infrastructure/command_table.py), onto the last head (read by `admit`, which
        must run first in the same transaction) and store the new head row.

        `gap(after, before)` returns notifications stored between the last head and this
        transaction's first (a store begun by release 1, which wrote no heads)."""
        after, head = self._last.base
        signer = self.signer
        if ids[0] <= after:
            raise StoreTruncated(after, ids[0])
        for missed in gap(after, ids[0]):
            head = fold(head, missed)
        rows = {row.notification_id: row for row in commands}
        for notification_id, event in zip(ids, stored, strict=True):
            head = fold_stored(head, notification_id, event)
            row = rows.get(notification_id)
            if row is not None:
                head = fold_command(head, notification_id, row.chain)
        last = ids[-1]
        new = Head(last, head, signer.fingerprint, signer.sign(last, head)) if signer else Head(
            last, head)
        m = self._marker
        query(f"INSERT INTO {self.table} (notification_id, hash, key, signature) "
              f"VALUES ({m}, {m}, {m}, {m})", (new.notification_id, new.hash, new.key,
                                              new.signature))
        self._last.head = new
        return new


def notification(row: Sequence[Any]) -> Notification:
    """A notification from a raw (id, originator_id, version, topic, state) row."""
    oid = row[1] if isinstance(row[1], UUID) else UUID(str(row[1]))
    state = row[4].encode() if isinstance(row[4], str) else bytes(row[4])
    return Notification(id=int(row[0]), originator_id=oid, originator_version=int(row[2]),
                        topic=str(row[3]), state=state)
