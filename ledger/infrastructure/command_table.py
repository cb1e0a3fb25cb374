"""Command records in their own table, `rin_commands` (the store format since issue 15).

Each applied command with a client id makes one row: the client id (UNIQUE, so a second save of
the same id fails and rolls its whole transaction back), the content digest, the events the
command stored (`"<aggregate id hex>:<version>"`, in log order) and the notification id of the
last of them. The rows are written in the transaction of their events, one multi-row INSERT,
without the event machinery the `CommandRecord` aggregate needed (a quarter of all stored rows,
mapped and chained like domain events).

Tamper evidence (what `rin verify` checks, ledger/infrastructure/command_audit.py): every row
carries `previous` (the notification id of the row before it) and `chain`, sha256 over the row
before's chain and this row's canonical bytes, so an edited or inserted row, or one deleted
before another, is named; and the ledger-wide head folds each row's chain right after its
notification (`fold_command`), so the head rows, their signatures, `head.json` and exported heads
cover the rows as they cover events: deleting the last rows changes the head.

A store holding `CommandRecord` events (release 1 and 2, ledger/infrastructure/command_records.py)
keeps writing them: `in_table` reads which kind of store it is, once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from ledger.infrastructure.store_refusals import StoreRefused, is_integrity

TABLE = "rin_commands"
#: the keyword `insert_events` passes this transaction's rows under
COMMANDS = "rin_commands"
COLUMNS = ("(notification_id {id} PRIMARY KEY, client_id TEXT NOT NULL UNIQUE, "
           "digest TEXT NOT NULL, events TEXT NOT NULL, previous {id} NOT NULL, "
           "chain TEXT NOT NULL)")
CREATE_SQLITE = f"CREATE TABLE IF NOT EXISTS {TABLE} {COLUMNS.format(id='INTEGER')}"
FIELDS = "notification_id, client_id, digest, events, previous, chain"
ROWS_PER_STATEMENT = 500  # 6 parameters a row; SQLite allows 32,766 a statement
GENESIS = ""
PAGE = 1_000

#: runs one SQL statement with parameters and returns every row as a tuple
Query = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]


def create_postgres(table: str) -> str:
    return f"CREATE TABLE IF NOT EXISTS {table} {COLUMNS.format(id='BIGINT')}"


#: the table as PostgreSQL describes what `create_postgres` made: (column, type, nullable)
POSTGRES_COLUMNS = [("notification_id", "bigint", "NO"), ("client_id", "text", "NO"),
                    ("digest", "text", "NO"), ("events", "text", "NO"),
                    ("previous", "bigint", "NO"), ("chain", "text", "NO")]


def schema_problem(query: Query, table: str = TABLE) -> str | None:
    """What differs between `table` as stored and as the ledger creates it (columns, their
    constraints, the UNIQUE client id), or a trigger on any table of the store (the ledger makes
    none), or None; `table` is qualified by its schema on PostgreSQL. A dropped UNIQUE key would
    let one id apply twice, a trigger rewrite or refuse rows as they are stored; the writer
    refuses such a store and `verify` names it."""
    if "." not in table:  # SQLite
        found = query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type = "
                      "'trigger' OR (type = 'table' AND name = ?)", (table,))
        made = [sql for kind, _, _, sql in found if kind == "table"]
        triggers = [f"{name} on {on}" for kind, name, on, _ in found if kind == "trigger"]
        expected = CREATE_SQLITE.replace(" IF NOT EXISTS", "")
        if made and made[0] != expected:
            return (f"{table}: its schema is not the ledger's ({made[0]!r}, not {expected!r}): "
                    "altered")
    else:
        schema, name = (part.strip('"') for part in table.split(".", 1))
        columns = query("SELECT column_name, data_type, is_nullable FROM "
                        "information_schema.columns WHERE table_schema = ? AND table_name = ? "
                        "ORDER BY ordinal_position", (schema, name))
        unique = query("SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN "
                       "pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON "
                       "a.attrelid = c.oid AND a.attnum = i.indkey[0] WHERE n.nspname = ? AND "
                       "c.relname = ? AND i.indisunique AND i.indnkeyatts = 1 AND "
                       "i.indpred IS NULL AND a.attname = 'client_id'", (schema, name))
        triggers = [f"{t[0]} on {t[1]}" for t in query(
            "SELECT DISTINCT trigger_name, event_object_table FROM information_schema.triggers "
            "WHERE event_object_schema = ?", (schema,))]
        got = [tuple(str(v) for v in column) for column in columns]
        if columns and (got != POSTGRES_COLUMNS or not unique):
            return (f"{table}: its schema is not the ledger's (columns {got}"
                    f"{'' if unique else ', client_id not UNIQUE'}): altered")
    if triggers:
        return f"the store has triggers the ledger did not make ({', '.join(triggers)}): added"
    return None


class AppliedCommand(Protocol):
    """A command record in either format: a row, one made in this transaction, or a
    `CommandRecord` aggregate (`events` None: release 1 did not name them)."""

    @property
    def client_id(self) -> str: ...

    @property
    def digest(self) -> str: ...

    @property
    def events(self) -> list[str] | None: ...


@dataclass(frozen=True)
class Applied:
    """A command record made in a unit of work, before its save: `last` is the index, in the
    transaction's events, of the command's last event."""

    client_id: str
    digest: str
    events: list[str]
    last: int = -1


@dataclass(frozen=True)
class CommandRow:
    """A stored row of `rin_commands`."""

    notification_id: int
    client_id: str
    digest: str
    events: list[str]
    previous: int
    chain: str


def link(previous_chain: str, notification_id: int, client_id: str, digest: str,
         events: Sequence[str], previous: int) -> str:
    """A row's chain: sha256(the row before's chain + canonical JSON of this row's fields)."""
    body = orjson.dumps([notification_id, client_id, digest, list(events), previous])
    return hashlib.sha256(previous_chain.encode() + body).hexdigest()


def fold_command(head: str, notification_id: int, chain: str) -> str:
    """One step of the ledger-wide head for a command row, folded right after notification
    `notification_id` (ledger/infrastructure/chain.py `fold` folds each notification; the
    header here starts with a string, a notification's with its id, so the two never match)."""
    header = orjson.dumps(["command", notification_id])
    return hashlib.sha256(head.encode() + header + chain.encode()).hexdigest()


class CommandWriter:
    """Writes a transaction's rows in it: refuses ids already stored, then one INSERT."""

    def __init__(self, table: str = TABLE, marker: str = "?") -> None:
        self.table = table  # qualified by the schema on PostgreSQL
        self._marker = marker  # the driver's parameter marker: ? (sqlite3) or %s (psycopg)
        self._schema_checked = False  # once a process: the table is the one the ledger made

    def check_schema(self, query: Query) -> None:
        """Raise `StoreRefused` if the table is not as the ledger creates it (`schema_problem`),
        checked at this writer's first save: an id must never be stored twice unnoticed."""
        if self._schema_checked:
            return
        marker = self._marker
        problem = schema_problem(lambda sql, params: query(sql.replace("?", marker), params),
                                 self.table)
        if problem:
            raise StoreRefused(f"{problem}; nothing was stored (run `rin verify`)")
        self._schema_checked = True

    def insert(self, query: Query, ids: Sequence[int],
               commands: Sequence[Applied]) -> list[CommandRow]:
        """Store one row per command (each at the notification id of its last event), chained
        onto the last stored row; return them."""
        if not commands:
            return []
        self.check_schema(query)
        rows = self.chained(query(self.last_row_sql, ()), ids, commands)
        m = self._marker
        for first in range(0, len(rows), ROWS_PER_STATEMENT):
            chunk = rows[first:first + ROWS_PER_STATEMENT]
            params: list[Any] = []
            for row in chunk:
                params += (row.notification_id, row.client_id, row.digest,
                           orjson.dumps(row.events).decode(), row.previous, row.chain)
            values = ",".join([f"({m},{m},{m},{m},{m},{m})"] * len(chunk))
            try:
                query(f"INSERT INTO {self.table} ({FIELDS}) VALUES {values}", params)
            except Exception as error:
                refused = self.refusal(query, chunk, error)
                if refused is error:
                    raise
                raise refused from error
        return rows

    @property
    def last_row_sql(self) -> str:
        """The statement selecting the last stored row's notification id and chain."""
        return f"SELECT notification_id, chain FROM {self.table} " \
               "ORDER BY notification_id DESC LIMIT 1"

    @staticmethod
    def chained(last: Sequence[Sequence[Any]], ids: Sequence[int],
                commands: Sequence[Applied]) -> list[CommandRow]:
        """The rows of `commands`, each at the notification id of its last event, chained onto
        `last` (the rows of `last_row_sql`: none, or the last stored row)."""
        previous, chain = (int(last[0][0]), str(last[0][1])) if last else (0, GENESIS)
        rows = []
        for applied in commands:
            at = ids[applied.last]
            chain = link(chain, at, applied.client_id, applied.digest, applied.events, previous)
            rows.append(CommandRow(at, applied.client_id, applied.digest, applied.events,
                                   previous, chain))
            previous = at
        return rows

    def refusal(self, query: Query, chunk: Sequence[CommandRow], error: Exception) -> Exception:
        """What a refused INSERT of `chunk` means: a conflict (`error` itself) if one of its
        client ids is stored, another writer's; else the store's fault (`StoreRefused` for a
        refusal by a constraint or trigger, named, so it is not retried as a conflict)."""
        if not is_integrity(error):
            return error  # the disk, the connection …: already a store failure
        if self._marker == "?":  # SQLite (PostgreSQL refused stored ids before the insert)
            ids = [row.client_id for row in chunk]
            if query(f"SELECT client_id FROM {self.table} WHERE client_id IN "
                     f"({','.join('?' * len(ids))})", ids):
                return error
        return StoreRefused(f"{self.table} refused the row of command {chunk[0].client_id!r}"
                            f"{f' (and {len(chunk) - 1} more)' if len(chunk) > 1 else ''}: "
                            f"{error}; not another writer: nothing was stored")


def refused_at_commit(error: Exception) -> Exception:
    """A PostgreSQL save's error, raised at its COMMIT (the rows go with it): `StoreRefused`
    if the rows were refused, since a stored id was refused before the insert (under the table
    lock, ledger/infrastructure/postgres_function.py), so it is no other writer (a row forged
    ahead of the log); else `error` itself (a version conflict on the events stays a conflict)."""
    cause = error if hasattr(error, "diag") else error.__cause__
    table = getattr(getattr(cause, "diag", None), "table_name", None)
    if table != TABLE or not is_integrity(error):
        return error
    return StoreRefused(f"{TABLE} refused the transaction's command rows: {cause}; not another "
                        "writer: nothing was stored")


def reader(recorder: Any) -> Query:
    """A `Query` on the store, each statement in a read-only transaction of its own."""
    sqlite = not hasattr(recorder.datastore, "schema")

    def query(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with recorder.datastore.transaction(commit=False) as c:
            c.execute(sql if sqlite else sql.replace("?", "%s"), params)
            return [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in c.fetchall()]
    return query


def table_of(recorder: Any) -> str:
    return str(getattr(getattr(recorder, "commands", None), "table", TABLE))


def row_of(raw: Sequence[Any]) -> CommandRow:
    """A row as read; `events` is [] unless it holds a JSON list (audit names such rows)."""
    try:
        events = orjson.loads(raw[3])
    except (orjson.JSONDecodeError, TypeError):
        events = None
    return CommandRow(int(raw[0]), str(raw[1]), str(raw[2]),
                      events if isinstance(events, list) else [], int(raw[4]), str(raw[5]))


def stored_row(recorder: Any, client_id: str) -> CommandRow | None:
    """The stored row of `client_id`, if its command was applied."""
    found = reader(recorder)(f"SELECT {FIELDS} FROM {table_of(recorder)} WHERE client_id = ?",
                             (client_id,))
    return row_of(found[0]) if found else None


def exists(recorder: Any) -> bool:
    """Whether the store has the table (a store opened without creating tables has not)."""
    table = table_of(recorder)
    if "." not in table:
        return bool(reader(recorder)("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                     "name = ?", (table,)))
    return reader(recorder)("SELECT to_regclass(?)", (table,))[0][0] is not None


def has_rows(recorder: Any) -> bool:
    """Whether the store holds any command row (False if it has no such table)."""
    return exists(recorder) and bool(
        reader(recorder)(f"SELECT 1 FROM {table_of(recorder)} LIMIT 1", ()))


def stored_rows(recorder: Any, upto: int | None = None) -> Iterator[CommandRow]:
    """Every row (at notification ids up to `upto`) in notification id order, page by page;
    none if the table is missing (a table that cannot be read is a store failure)."""
    after = -1
    query = reader(recorder)
    limit = "" if upto is None else f" AND notification_id <= {int(upto)}"
    if not exists(recorder):
        return
    while True:
        rows = query(f"SELECT {FIELDS} FROM {table_of(recorder)} WHERE notification_id > ?"
                     f"{limit} ORDER BY notification_id LIMIT ?", (after, PAGE))
        yield from (row_of(row) for row in rows)
        if len(rows) < PAGE:
            return
        after = int(rows[-1][0])


def count(recorder: Any) -> int:
    """How many command rows the store holds."""
    if not exists(recorder):
        return 0
    return int(reader(recorder)(f"SELECT COUNT(*) FROM {table_of(recorder)}", ())[0][0])


class Folding:
    """The command rows merged into a walk of the log in notification id order: `after(note_id,
    head)` is the head once the row at that notification (if any) is folded in."""

    def __init__(self, rows: Iterator[CommandRow]) -> None:
        self._rows = rows
        self.pending: CommandRow | None = next(rows, None)

    def passed(self, notification_id: int) -> Iterator[CommandRow]:
        """Rows at ids below `notification_id` not yet seen: they point at no stored event."""
        while self.pending is not None and self.pending.notification_id < notification_id:
            yield self.pending
            self.pending = next(self._rows, None)

    def at(self, notification_id: int) -> CommandRow | None:
        """The row at `notification_id`, consumed, if there is one."""
        row = self.pending
        if row is not None and row.notification_id < notification_id:
            for _ in self.passed(notification_id):
                pass
            row = self.pending
        if row is None or row.notification_id != notification_id:
            return None
        self.pending = next(self._rows, None)
        return row

    def after(self, notification_id: int, head: str) -> str:
        row = self.at(notification_id)
        return head if row is None else fold_command(head, row.notification_id, row.chain)
