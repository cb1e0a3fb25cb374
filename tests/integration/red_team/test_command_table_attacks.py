"""Red team on `rin_commands`, the attacks tests/integration/red_team/test_command_table.py
does not make: edits that keep the JSON valid, swapped ids, a row copied under a new id, a gap
in the log, the table dropped or its schema altered, a trigger, a row forged ahead of the log,
and the two kinds of record mixed in one store. Each is named by `verify` (exit 1) or shown
harmless; a store that refuses a save for a reason other than another writer is a store fault
(exit 3, design.md), never "gave up after 30 conflicts".

The market (red_team/attacker.py): lines without ids store notifications 1-10; the 210 transfers
t-0000 … t-0209 store 2 events each, so the row of t-n is at notification 12 + 2n and names the
events at 11 + 2n and 12 + 2n; the last is 430.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from uuid import uuid4

import orjson
import pytest
from conftest import POSTGRES_URL, Store

from ledger.application.ledger import Ledger
from ledger.application.store_failures import StoreError
from ledger.infrastructure.command_records import CommandRecord
from ledger.infrastructure.command_table import link
from red_team.attacker import MARKET, build, files, make_key, rin, verify
from red_team.rewrite import rewrite_history
from tests.integration.test_read_check import drop, needs_postgres

DATA = Path(__file__).parents[2] / "data"
NEXT = {"type": "transfer", "id": "t-next", "date": "2024-03-08", "from": "2001", "to": "3001",
        "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 10}}
T_0005 = next(line for line in MARKET if line.get("id") == "t-0005")


def names(db: sqlite3.Connection, *rowids: int) -> list[str]:
    """How a row names the events at these notification ids."""
    marks = ",".join("?" * len(rowids))
    return [f"{oid}:{version}" for oid, version in db.execute(
        f"SELECT originator_id, originator_version FROM stored_events WHERE rowid IN ({marks}) "
        "ORDER BY rowid", rowids)]


def events_of(db: sqlite3.Connection, client_id: str) -> list[str]:
    return list(orjson.loads(db.execute("SELECT events FROM rin_commands WHERE client_id = ?",
                                        (client_id,)).fetchone()[0]))


def apply_file(data: Path, *lines: dict[str, object]) -> tuple[int, str]:
    path = data / "lines.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    out = rin(data, "apply", str(path))
    return out.exit_code, out.output


def stored_count(data: Path) -> tuple[int, int]:
    with files(data) as db:
        return (db.execute("SELECT COUNT(*) FROM stored_events").fetchone()[0],
                db.execute("SELECT COUNT(*) FROM rin_commands").fetchone()[0])


def test_events_json_reformatted_is_harmless(data: Path) -> None:
    """The same list written with other whitespace: the chain is over the parsed list, so
    verify holds, and the row still makes t-0005 a duplicate and a changed t-0005 rejected."""
    with files(data) as db:
        db.execute("UPDATE rin_commands SET events = ? WHERE client_id = 't-0005'",
                   (orjson.dumps(events_of(db, "t-0005"), option=orjson.OPT_INDENT_2).decode(),))
    assert verify(data).exit_code == 0
    with Ledger(data) as ledger:
        assert ledger.apply(T_0005).status == "duplicate"
        refused = ledger.apply({**T_0005, "date": "2024-03-02"})
    assert refused.status == "rejected"
    assert refused.error is not None and "already used by a different command" in refused.error


def test_events_json_edited_to_other_valid_json_is_named(data: Path) -> None:
    """One event dropped from the list: still a JSON list of names, but not the one chained."""
    with files(data) as db:
        db.execute("UPDATE rin_commands SET events = ? WHERE client_id = 't-0005'",
                   (orjson.dumps(events_of(db, "t-0005")[1:]).decode(),))
    out = verify(data)
    assert out.exit_code == 1
    assert ("rin_commands row at notification 22 (command 't-0005'): its chain does not hold"
            in out.output)


def test_two_rows_client_ids_swapped_are_named(data: Path) -> None:
    """t-0005 and t-0006 swap ids (UNIQUE allows it in three steps): each row's chain fails."""
    with files(data) as db:
        db.execute("UPDATE rin_commands SET client_id = 'x' WHERE client_id = 't-0005'")
        db.execute("UPDATE rin_commands SET client_id = 't-0005' WHERE client_id = 't-0006'")
        db.execute("UPDATE rin_commands SET client_id = 't-0006' WHERE client_id = 'x'")
    out = verify(data)
    assert out.exit_code == 1
    for at, client_id in ((22, "t-0006"), (24, "t-0005")):
        assert (f"rin_commands row at notification {at} (command {client_id!r}): its chain "
                "does not hold") in out.output


def test_a_row_copied_under_a_new_id_is_named_even_with_every_chain_recomputed(
        data: Path) -> None:
    """t-0005's row copied to notification 21 as 't-dup', every chain and head recomputed: the
    events it names are t-0005's, and t-0005's row no longer follows its own events alone."""
    with files(data) as db:
        _, _, dig, events, _, _ = db.execute(
            "SELECT * FROM rin_commands WHERE client_id = 't-0005'").fetchone()
        db.execute("INSERT INTO rin_commands VALUES (21, 't-dup', ?, ?, 0, '')", (dig, events))
    rewrite_history(data)
    out = verify(data)
    assert out.exit_code == 1
    assert ("rin_commands row at notification 21 (command 't-dup'): the events it names"
            in out.output)
    assert ("rin_commands row at notification 22 (command 't-0005'): the events it names"
            in out.output)


def test_a_row_for_a_line_not_applied_with_every_chain_recomputed_needs_the_key(
        tmp_path: Path) -> None:
    """A row for a line not applied (say one rejected, to be corrected and re-sent), claiming
    the events of a line without an id (notifications 9-10), every row chain and head
    recomputed: it is a row like any other, so only the key tells (docs/command-records.md
    states this limit). Harm without the key: the corrected line is a silent duplicate."""
    key = make_key(tmp_path)
    data = tmp_path / "data"
    build(data, key)
    inject_row(data, 10, "t-next")
    with files(data) as db:
        db.execute("UPDATE rin_commands SET events = ? WHERE notification_id = 10",
                   (orjson.dumps(names(db, 9, 10)).decode(),))
    rewrite_history(data)
    assert verify(data).exit_code == 0
    out = verify(data, "--public-key", f"{key}.pub")
    assert out.exit_code == 1 and "signature does not hold" in out.output


def test_a_gap_in_the_notification_ids_is_named(data: Path) -> None:
    with files(data) as db:
        db.execute("UPDATE stored_events SET rowid = 1430 WHERE rowid = 430")
    out = verify(data)
    assert out.exit_code == 1
    assert "notifications 430-1,429 missing from stored_events: deleted" in out.output
    assert ("rin_commands row at notification 430 (command 't-0209'): that notification is not "
            "stored") in out.output


def test_the_table_dropped_is_found_by_the_heads(data: Path) -> None:
    """Every row deleted at once: the first open makes the table again, empty, so t-0005 would
    apply again; the head rows no longer equal the fold, and verify says so."""
    with files(data) as db:
        db.execute("DROP TABLE rin_commands")
    out = verify(data)
    assert out.exit_code == 1
    assert "rin_heads row at notification 396: stored head" in out.output
    assert "head.json at notification 430" in out.output


def drop_column(db: sqlite3.Connection) -> None:
    db.execute("ALTER TABLE rin_commands DROP COLUMN chain")


def add_column(db: sqlite3.Connection) -> None:
    db.execute("ALTER TABLE rin_commands ADD COLUMN note TEXT")


def drop_unique(db: sqlite3.Connection) -> None:
    db.executescript(
        "ALTER TABLE rin_commands RENAME TO old; CREATE TABLE rin_commands "
        "(notification_id INTEGER PRIMARY KEY, client_id TEXT NOT NULL, digest TEXT NOT NULL, "
        "events TEXT NOT NULL, previous INTEGER NOT NULL, chain TEXT NOT NULL); "
        "INSERT INTO rin_commands SELECT * FROM old; DROP TABLE old")


def trigger_on_rows(db: sqlite3.Connection) -> None:
    db.execute("CREATE TRIGGER blank AFTER INSERT ON rin_commands BEGIN UPDATE rin_commands "
               "SET digest = '' WHERE notification_id = new.notification_id; END")


def trigger_on_events(db: sqlite3.Connection) -> None:
    db.execute("CREATE TRIGGER refuse BEFORE INSERT ON stored_events BEGIN "
               "SELECT RAISE(ABORT, 'no more events'); END")


@pytest.mark.parametrize(("alter", "named", "refused"), [
    (drop_column, "rin_commands: its schema is not the ledger's", "rin_commands: its schema"),
    (add_column, "rin_commands: its schema is not the ledger's", "rin_commands: its schema"),
    (drop_unique, "rin_commands: its schema is not the ledger's", "rin_commands: its schema"),
    (trigger_on_rows, "the store has triggers the ledger did not make (blank on rin_commands)",
     "the store has triggers the ledger did not make (blank on rin_commands)"),
    (trigger_on_events,
     "the store has triggers the ledger did not make (refuse on stored_events)",
     "stored_events refused the transaction's events: no more events; not another writer"),
], ids=["column dropped", "column added", "UNIQUE dropped", "trigger on rows",
        "trigger on events"])
def test_an_altered_schema_is_named_and_refused(
        data: Path, alter: Callable[[sqlite3.Connection], None], named: str,
        refused: str) -> None:
    """Before: a column added, UNIQUE dropped or a trigger passed verify, and with UNIQUE
    dropped t-0005 re-sent with other content applied twice. Now verify names the change and
    a writer refuses to store anything (exit 3, a store fault), naming it."""
    with files(data) as db:
        alter(db)
    out = verify(data)
    assert out.exit_code == 1 and named in out.output
    before = stored_count(data)
    code, output = apply_file(data, NEXT, {**T_0005, "date": "2024-03-02"})
    assert code == 3 and refused in output and "last line committed: none" in output
    assert "Traceback" not in output
    assert stored_count(data) == before


def test_a_row_forged_ahead_of_the_log_is_a_store_fault_not_a_conflict(data: Path) -> None:
    """A row at notification 432, where the next line (2 events) puts its own: that row cannot be
    stored. Before: 30 retries, then `concurrency: gave up after 30 conflicts` (exit 1, "send it
    again", which fails the same way). Now: the real cause, exit 3, at once."""
    with files(data) as db:
        db.execute("INSERT INTO rin_commands VALUES (432, 'zz', 'd', '[]', 430, 'c')")
    before = stored_count(data)
    started = time.process_time()
    code, output = apply_file(data, NEXT)
    assert code == 3
    assert ("rin_commands refused the row of command 't-next': UNIQUE constraint failed: "
            "rin_commands.notification_id; not another writer: nothing was stored") in output
    assert "conflicts" not in output
    assert time.process_time() - started < 5  # one attempt, not 30 with pauses
    assert stored_count(data) == before
    with Ledger(data) as ledger, pytest.raises(StoreError, match="refused the row"):
        ledger.apply(NEXT)
    out = verify(data)
    assert out.exit_code == 1
    assert "rin_commands row at notification 432 (command 'zz'): past the last stored" \
        in out.output


def test_a_real_duplicate_is_still_a_duplicate(data: Path) -> None:
    """The refusal the UNIQUE key exists for stays a conflict: the line comes back duplicate."""
    code, output = apply_file(data, T_0005)
    assert code == 0 and "0 applied, 1 duplicate" in output


def inject_row(data: Path, at: int, client_id: str) -> None:
    with files(data) as db:
        named = names(db, at)
        db.execute("INSERT INTO rin_commands VALUES (?, ?, 'dd', ?, 0, ?)",
                   (at, client_id, orjson.dumps(named).decode(),
                    link("", at, client_id, "dd", named, 0)))


@pytest.mark.parametrize("store", ["store_r1", "store_r2", "store_r3"])
def test_rows_injected_into_a_store_of_record_events_are_named(store: str,
                                                               tmp_path: Path) -> None:
    """A row (chained, naming the first event, every head recomputed) in a store whose records
    are `CommandRecord` events flips it to the table's format: its applied ids are no longer
    found (they would apply again). Before: verify held on r2 and r3. Now it names both kinds."""
    data = tmp_path / store
    shutil.copytree(DATA / store, data)
    with Ledger(data):
        pass  # any open creates the (empty) table, as this release does
    with files(data) as db:
        first = db.execute("SELECT rowid, CAST(state AS TEXT) FROM stored_events WHERE topic = ?"
                           " ORDER BY rowid LIMIT 1", (CommandRecord.Applied.TOPIC,)).fetchone()
    inject_row(data, 1, "zzz")
    rewrite_history(data)
    out = verify(data)
    assert out.exit_code == 1
    assert ("the store holds both kinds of command record, rin_commands rows (the first at "
            f"notification 1) and CommandRecord events (the first at notification {first[0]})"
            ) in out.output
    with Ledger(data) as ledger:  # what the injection achieves: an applied id not found
        assert ledger._app.stored_command(orjson.loads(first[1])["client_id"]) is None


def test_a_record_event_injected_into_a_store_of_rows_is_named(data: Path) -> None:
    """A `CommandRecord` event for t-next naming the last two events, chained, heads
    recomputed: a store of rows holds no such event."""
    with files(data) as db:
        state = {"timestamp": {"_type_": "datetime_iso", "_data_": "2026-12-01T16:00:00+00:00"},
                 "originator_topic": CommandRecord.TOPIC, "client_id": "t-next",
                 "digest": "ab", "events": names(db, 429, 430), "class_version": 2}
        db.execute("INSERT INTO stored_events VALUES (?, 1, ?, ?)",
                   (CommandRecord.create_id("t-next").hex, CommandRecord.Applied.TOPIC,
                    orjson.dumps(state)))
    rewrite_history(data)
    out = verify(data)
    assert out.exit_code == 1
    assert ("the store holds both kinds of command record, rin_commands rows (the first at "
            "notification 12) and CommandRecord events (the first at notification 431)"
            ) in out.output


@pytest.mark.parametrize("alter", [
    "ALTER TABLE {t} DROP CONSTRAINT rin_commands_client_id_key",
    "ALTER TABLE {t} ADD COLUMN note TEXT",
    "CREATE TRIGGER blank BEFORE INSERT ON {t} FOR EACH ROW EXECUTE FUNCTION {s}.blank()",
], ids=["UNIQUE dropped", "column added", "trigger"])
@needs_postgres
def test_an_altered_table_on_postgresql_is_named_and_refused(tmp_path: Path, alter: str) -> None:
    """The same checks on PostgreSQL, read from its catalogue (information_schema, pg_index)."""
    import psycopg

    assert POSTGRES_URL is not None
    schema = f"test_{uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    try:
        altered(Store(tmp_path, POSTGRES_URL, {"POSTGRES_SCHEMA": schema}), alter)
    finally:
        drop(schema)


def altered(store: Store, alter: str) -> None:
    import psycopg

    assert store.url is not None
    schema = store.env["POSTGRES_SCHEMA"]
    with store.ledger() as ledger:
        assert all(r.status == "applied" for r in ledger.apply_many(MARKET[:8]))
    table = f'"{schema}".rin_commands'
    with psycopg.connect(store.url, autocommit=True) as connection:
        connection.execute(f"CREATE FUNCTION {schema}.blank() RETURNS trigger LANGUAGE plpgsql "
                           "AS $$ BEGIN NEW.digest := ''; RETURN NEW; END $$")
        connection.execute(alter.format(t=table, s=schema))
        before = connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
    with store.ledger() as ledger:
        problems = ledger.audit()
        with pytest.raises(StoreError, match="the ledger"):
            ledger.apply(NEXT)
    assert any("rin_commands" in p and ("schema is not the ledger's" in p or "triggers" in p)
               for p in problems), problems
    with psycopg.connect(store.url, autocommit=True) as connection:
        assert connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone() == before


@needs_postgres
def test_rows_forged_ahead_of_the_log_on_postgresql_are_a_store_fault(tmp_path: Path) -> None:
    """Rows at the next 7 notification ids. Before: each attempt's rows collided, were retried
    as conflicts, and the line landed past them (events at 19-20, with 7 rows and so 6 retries,
    as measured) or gave up after 30; now the first collision is a store fault, named."""
    import psycopg

    assert POSTGRES_URL is not None
    schema = f"test_{uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    try:
        store = Store(tmp_path, POSTGRES_URL, {"POSTGRES_SCHEMA": schema})
        with store.ledger() as ledger:
            assert all(r.status == "applied" for r in ledger.apply_many(MARKET[:8]))
            last = ledger.position()
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            for k in range(1, 8):
                connection.execute(f"INSERT INTO {schema}.rin_commands VALUES "
                                   "(%s, %s, 'd', '[]', 0, 'c')", (last + k, f"zz{k}"))
        with store.ledger() as ledger:
            with pytest.raises(StoreError, match="rin_commands refused the transaction's "
                                                 "command rows: duplicate key value"):
                ledger.apply(NEXT)
            assert ledger.position() == last
    finally:
        drop(schema)
