"""The views file as helper-67 attacked it after session 16's first fixes: a link to the event
store (which `rin project --rebuild`, as verify advised, emptied), a name in another case
("LINEAGE" is `lineage` to SQLite), REAL values under an INTEGER column's unchanged text, a
trigger or index named so that `LIKE 'sqlite_stat%'` hid it, an index on tracking, a directory
beside the file, a dangling link, a '%' in the data folder's name. Each is named by verify
(exit 1), a report never shows a traceback, and what verify advises restores a clean file."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import orjson
import pytest
from click.testing import Result

from red_team.attacker import build, rin, verify
from red_team.test_views_schema import REDEFINED, holdings, named, restored, run


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    build(folder)
    assert rin(folder, "project", "-q").exit_code == 0
    return folder


@pytest.mark.parametrize("link", [os.symlink, os.link])
def test_a_views_file_linked_to_the_event_store_is_named_and_never_written(
        data: Path, link: object) -> None:
    before = holdings(data)
    (data / "views.sqlite").unlink()
    link(data / "events.sqlite", data / "views.sqlite")  # type: ignore[operator]
    # a symbolic link is named as the event store; a hard link as the events file's second name
    said = ("holds the event store's table stored_events" if link is os.symlink
            else "events.sqlite: a second name (hard link)")
    for command in (("verify",), ("project", "--rebuild", "-q")):
        refused = rin(data, *command)
        assert refused.exit_code in (1, 3) and said in refused.output, refused.output
        assert "Traceback" not in refused.output
    (data / "views.sqlite").unlink()  # what the message asks: the store is as it was
    assert verify(data).exit_code == 0
    assert holdings(data) == before


@pytest.mark.parametrize("script, words", [
    ("CREATE TABLE l AS SELECT * FROM lineage WHERE party <> '3001'; DROP VIEW lineage; "
     'ALTER TABLE l RENAME TO "LINEAGE"',
     "LINEAGE is a table where the ledger's is a SQL view: replaced"),
    ('ALTER TABLE compliance RENAME TO c; CREATE TABLE "COMPLIANCE" AS SELECT * FROM c; '
     "DROP TABLE c", f"table COMPLIANCE {REDEFINED}"),
])
def test_a_name_in_another_case_is_the_same_name_to_sqlite(data: Path, script: str,
                                                            words: str) -> None:
    before = rin(data, "trace", "--batch", "1001-20001-00001", "--json").output
    run(data, script)
    named(data, words)
    assert rin(data, "holdings").exit_code == 0  # no "table already exists", exit 3
    restored(data)
    assert rin(data, "trace", "--batch", "1001-20001-00001", "--json").output == before


def test_real_values_under_an_integer_columns_unchanged_text_are_named(data: Path) -> None:
    db = sqlite3.connect(data / "views.sqlite")
    (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name='holdings_history'").fetchone()
    db.execute("PRAGMA writable_schema = ON")  # no affinity for one UPDATE, then the text back
    columns = ("gallon_rins", "serial_start", "serial_end")
    untyped = sql
    for column in columns:
        assert f'"{column}" INTEGER' in sql
        untyped = untyped.replace(f'"{column}" INTEGER', f'"{column}" BLOB')
    db.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'holdings_history'", (untyped,))
    db.commit()
    db.close()
    db = sqlite3.connect(data / "views.sqlite")
    db.execute("UPDATE holdings_history SET " + ", ".join(
        f"{column} = CAST({column} AS REAL)" for column in columns))
    db.execute("PRAGMA writable_schema = ON")
    db.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'holdings_history'", (sql,))
    db.commit()
    db.close()
    db = sqlite3.connect(data / "views.sqlite")
    assert db.execute("SELECT DISTINCT typeof(gallon_rins) FROM holdings_history").fetchall() \
        == [("real",)] and db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()
    named(data, "view holdings_history differs from a rebuild")
    blocks = rin(data, "holdings", "--blocks")
    assert blocks.exit_code == 3 and "holds a value the ledger never writes" in blocks.output
    assert blocks.exception is None or isinstance(blocks.exception, SystemExit)
    restored(data)
    assert rin(data, "holdings", "--blocks").exit_code == 0


@pytest.mark.parametrize("script, words", [
    ("CREATE TRIGGER sqliteXstat_doubler AFTER INSERT ON holdings_history BEGIN "
     "UPDATE holdings_history SET gallon_rins = gallon_rins * 2 WHERE rowid = NEW.rowid; END",
     "trigger sqliteXstat_doubler is not one of the ledger's: added"),
    ("CREATE UNIQUE INDEX sqliteXstat_t ON tracking((1)) WHERE notification_id > 430 OR "
     "application_name = '__migration__'", "index sqliteXstat_t is not one of the ledger's"),
    ("CREATE INDEX evil_t ON tracking(notification_id)", "index evil_t is not one of the"),
])
def test_an_object_named_like_sqlites_own_or_on_tracking_is_named_and_rebuild_drops_it(
        data: Path, script: str, words: str) -> None:
    run(data, script)
    named(data, words)
    restored(data)  # verify passes after the rebuild: nothing of it is left
    db = sqlite3.connect(data / "views.sqlite")
    assert db.execute("SELECT name FROM sqlite_master WHERE name GLOB '*X*' OR name = "
                      "'evil_t'").fetchall() == []
    db.close()


@pytest.mark.parametrize("suffix", ["-shm", "-wal"])
def test_a_directory_beside_the_views_file_is_named(data: Path, suffix: str) -> None:
    (data / f"views.sqlite{suffix}").unlink(missing_ok=True)
    (data / f"views.sqlite{suffix}").mkdir()
    named(data, f"views.sqlite{suffix}: not a regular file (remove it: SQLite makes it anew)")
    (data / f"views.sqlite{suffix}").rmdir()
    assert verify(data).exit_code == 0


def test_a_dangling_link_in_the_views_files_place_is_named(data: Path) -> None:
    (data / "views.sqlite").unlink()
    (data / "views.sqlite").symlink_to("/nonexistent/folder/v.sqlite")
    named(data, "a symbolic link to /nonexistent/folder/v.sqlite, which does not exist")


def test_a_percent_sign_in_the_folder_checks_the_views_file_itself(tmp_path: Path) -> None:
    # `file:/…/pct%41/views.sqlite` is /…/pctA/views.sqlite to SQLite: a clean decoy there
    # passed the definitions of an edited file
    data, decoy = tmp_path / "pct%41", tmp_path / "pctA"
    build(data)
    assert rin(data, "project", "-q").exit_code == 0
    build(decoy)
    assert rin(decoy, "project", "-q").exit_code == 0
    run(data, 'ALTER TABLE compliance RENAME COLUMN applied TO "x";'
              "ALTER TABLE compliance RENAME COLUMN deficit TO applied;"
              'ALTER TABLE compliance RENAME COLUMN "x" TO deficit;')
    named(data, f"table compliance {REDEFINED}")
    restored(data)
    assert orjson.loads(rin(data, "holdings", "--json").stdout) == orjson.loads(
        rin(decoy, "holdings", "--json").stdout)


#: what a refusal of a linked file says: the link itself, or, for a hard link of the events
#: file, the events file's second name (whichever the command meets first)
LINKED = ("a link to another file, which SQLite would overwrite",
          "where the ledger keeps a lock file of its own",
          "events.sqlite: a second name (hard link) of a database file")


def refused_as_linked(result: Result, name: str) -> None:
    """`result` refused the store or the views, naming `name` or the events file's second
    name, without a traceback and before anything was written."""
    assert result.exit_code in (1, 3), result.output
    assert "Traceback" not in result.output
    assert any(words in result.output for words in LINKED), result.output
    assert name in result.output or "events.sqlite: a second name" in result.output


@pytest.mark.parametrize("suffix", ["-shm", "-wal", "-journal"])
@pytest.mark.parametrize("link", [os.link, os.symlink])
def test_a_file_beside_the_views_linked_to_the_event_store_is_named_and_never_opened(
        data: Path, suffix: str, link: object) -> None:
    # helper-68: events.sqlite hard-linked as views.sqlite-shm was truncated and rewritten
    # with SQLite's shared-memory index by verify's first read of the views file
    events = data / "events.sqlite"
    before = events.read_bytes()
    sibling = data / f"views.sqlite{suffix}"
    sibling.unlink(missing_ok=True)
    link(events, sibling)  # type: ignore[operator]
    for command in ("verify", "holdings"):
        refused_as_linked(rin(data, command), f"views.sqlite{suffix}")
    assert events.read_bytes() == before
    sibling.unlink()
    assert verify(data).exit_code == 0


def test_a_trigger_renamed_as_sqlites_own_statistics_table_is_named(data: Path) -> None:
    db = sqlite3.connect(data / "views.sqlite")
    db.execute("CREATE TRIGGER t AFTER INSERT ON holdings_history BEGIN UPDATE holdings_history "
               "SET gallon_rins = gallon_rins * 2 WHERE rowid = NEW.rowid; END")
    db.commit()
    (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name = 't'").fetchone()
    (version,) = db.execute("PRAGMA schema_version").fetchone()
    db.execute("PRAGMA writable_schema = ON")
    db.execute("UPDATE sqlite_master SET name = 'sqlite_stat1', sql = ? WHERE name = 't'",
               (sql.replace("TRIGGER t ", "TRIGGER sqlite_stat1 "),))
    db.execute(f"PRAGMA schema_version = {version + 1}")
    db.commit()
    db.close()
    named(data, "trigger sqlite_stat1 is not one of the ledger's: added")
    restored(data)


def test_a_views_file_given_as_a_file_uri_is_refused(data: Path) -> None:
    # SQLite opened the URI while every check of the file looked at a path that did not exist
    given = rin(data, "--views", f"file:{data / 'views.sqlite'}", "verify")
    assert given.exit_code == 2 and "not a file: URI" in given.output


def test_a_views_file_that_is_another_programs_database_is_never_emptied(data: Path) -> None:
    # a link to any SQLite file with tables and no tracking: the views, finding no layout of
    # theirs, emptied it before projecting
    mine = data.parent / "mine.db"
    db = sqlite3.connect(mine)
    db.execute("CREATE TABLE precious (x)")
    db.execute("INSERT INTO precious VALUES (42)")
    db.commit()
    db.close()
    (data / "views.sqlite").unlink()
    (data / "views.sqlite").symlink_to(mine)
    named(data, "is another program's database (tables, and no tracking of the ledger's alone)")
    for command in (("holdings",), ("project", "--rebuild", "-q")):
        refused = rin(data, *command)
        assert refused.exit_code == 3 and "another program's database" in refused.output
    db = sqlite3.connect(mine)
    assert db.execute("SELECT * FROM precious").fetchall() == [(42,)]
    db.close()


@pytest.mark.parametrize("suffix", ["-shm", "-wal", "-journal"])
def test_a_file_beside_the_event_store_linked_to_another_file_is_refused(
        tmp_path: Path, suffix: str) -> None:
    # helper-70: another ledger's events.sqlite hard-linked as this one's events.sqlite-shm
    # was rewritten by `rin verify` here (an outside file by `rin apply`)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    build(ours)
    build(theirs)
    target = theirs / "events.sqlite"
    before = target.read_bytes()
    sibling = ours / f"events.sqlite{suffix}"
    sibling.unlink(missing_ok=True)
    os.link(target, sibling)
    for command in (("verify",), ("holdings",), ("apply", "-")):
        refused = rin(ours, *command)
        assert refused.exit_code == 3, refused.output
        assert "a link to another file, which SQLite would overwrite" in refused.output
    assert target.read_bytes() == before


def test_views_linked_into_a_folder_whose_siblings_are_links_are_refused(
        data: Path, tmp_path: Path) -> None:
    # SQLite names the -shm after the link's target: the check must too
    other = tmp_path / "other"
    other.mkdir()
    (data / "views.sqlite").rename(other / "views.sqlite")
    (data / "views.sqlite").symlink_to(other / "views.sqlite")
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"x" * 40_000)
    os.link(outside, other / "views.sqlite-shm")
    named(data, "views.sqlite-shm: a link to another file, which SQLite would overwrite")
    assert rin(data, "holdings").exit_code == 3
    assert outside.read_bytes() == b"x" * 40_000


def test_another_eventsourcing_projections_file_is_never_emptied(data: Path,
                                                                 tmp_path: Path) -> None:
    # it has the library's own tracking table, with its application's position in it
    from eventsourcing.persistence import Tracking
    from eventsourcing.sqlite import SQLiteDatastore, SQLiteTrackingRecorder

    app = tmp_path / "app.db"
    db = sqlite3.connect(app)
    db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT)")
    db.execute("INSERT INTO orders VALUES (1, 'widget')")
    db.commit()
    db.close()
    recorder = SQLiteTrackingRecorder(SQLiteDatastore(str(app)))
    recorder.create_table()
    recorder.insert_tracking(Tracking("OrdersProjection", 42))
    recorder.datastore.close()
    before = app.read_bytes()
    given = rin(data, "--views", str(app), "verify")
    assert given.exit_code == 1 and "is another program's database" in given.output
    assert rin(data, "--views", str(app), "holdings").exit_code == 3
    assert app.read_bytes() == before


@pytest.mark.parametrize("lock", ["events.sqlite-turn", "views.sqlite-setup"])
@pytest.mark.parametrize("link", [os.symlink, os.link])
def test_a_lock_file_of_the_ledgers_that_is_a_link_is_refused(
        data: Path, lock: str, link: object) -> None:
    # helper-70: events.sqlite-turn linked to events.sqlite took the writers' turn on the
    # events file, and closing it dropped SQLite's own locks: committed lines were lost
    sale = data.parent / "sale.jsonl"
    sale.write_text('{"type": "transfer", "id": "t-new", "date": "2024-03-02", "from": "2001", '
                    '"to": "3001", "rins": {"d_code": 6, "vintage": 2024, "k": 2, '
                    '"quantity": 10}}\n')
    (data / lock).unlink(missing_ok=True)
    link(data / "events.sqlite", data / lock)  # type: ignore[operator]
    before = (data / "events.sqlite").read_bytes()
    commands = [("apply", str(sale))] if lock.endswith("-turn") else [
        ("holdings",), ("project", "--rebuild", "-q")]
    for command in commands:
        refused_as_linked(rin(data, *command), lock)
    assert (data / "events.sqlite").read_bytes() == before


def test_a_virtual_table_in_a_ledger_tables_place_is_named_with_advice_that_works(
        data: Path) -> None:
    # "rin project --rebuild restores it" was advised, and the rebuild failed: "virtual tables
    # may not be indexed" (the file is opened, and its indexes made, before it is cleared)
    run(data, 'ALTER TABLE parties RENAME TO p; CREATE VIRTUAL TABLE parties USING fts5('
              'party, name, roles, facilities, originator, notification_id); DROP TABLE p')
    named(data, "table parties is not the ledger's definition: redefined (move it aside")
    (data / "views.sqlite").rename(data.parent / "aside.sqlite")  # what the message asks
    assert rin(data, "project", "-q").exit_code == 0 and verify(data).exit_code == 0
