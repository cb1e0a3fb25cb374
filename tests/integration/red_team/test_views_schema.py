"""The views file's definitions and the file itself, as an attacker with write access edits them
(session 15's attack pass on the views comparison).

Every row of a table can compare equal with its rebuild while reports print wrong figures: two
columns' names swapped (`rin compliance` showed `applied` as the deficit), a column made REAL
(`rin holdings --blocks` crashed on `100000.0`), NOCASE (`--status completed` missed a trade),
a table in the `lineage` SQL view's place (hid a party from `rin trace`, and `project --rebuild`
kept it), or an index swapped for another's b-tree. `verify` said all held; an added column
made it exit 3 blaming the store, and a FIFO for views.sqlite made it hang. Now each is named,
exit 1, before anything is projected.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import orjson
import pytest

from red_team.attacker import build, rin, verify
from red_team.test_read_side import deadline

REDEFINED = "is not the ledger's definition: redefined"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    build(tmp_path)
    assert rin(tmp_path, "project", "-q").exit_code == 0
    return tmp_path


def run(data: Path, script: str) -> None:
    db = sqlite3.connect(data / "views.sqlite")
    db.executescript(script)
    db.commit()
    db.close()


def redefine(data: Path, table: str, old: str, new: str, suffix: str = "") -> None:
    """Make `table` again with `old` replaced by `new` in its SQL (and `suffix` after it),
    the same rows in the same rowids, and its indexes as they were."""
    db = sqlite3.connect(data / "views.sqlite")
    sql = db.execute("SELECT sql FROM sqlite_master WHERE type='table' AND name=?",
                     (table,)).fetchone()[0]
    assert old in sql, sql
    indexes = [row[0] for row in db.execute(
        "SELECT sql FROM sqlite_master WHERE type='index' AND tbl_name=? AND sql IS NOT NULL",
        (table,))]
    columns = [f'"{row[1]}"' for row in db.execute(f'PRAGMA table_info("{table}")')]
    names = ", ".join(columns if suffix else ["rowid", *columns])  # no rowid WITHOUT ROWID
    db.executescript(
        f'ALTER TABLE "{table}" RENAME TO "old {table}";'
        f"{sql.replace(old, new)}{suffix};"
        f'INSERT INTO "{table}" ({names}) SELECT {names} FROM "old {table}" ORDER BY rowid;'
        f'DROP TABLE "old {table}";' + "".join(f"{index};" for index in indexes))
    db.commit()
    db.close()


def holdings(data: Path) -> list[dict[str, object]]:
    result = rin(data, "holdings", "--json")
    assert result.exit_code == 0, result.output
    return list(orjson.loads(result.stdout))


def named(data: Path, *words: str) -> str:
    with deadline(120):
        out = verify(data)
    assert out.exit_code == 1, out.output
    assert "Traceback" not in out.output
    for word in words:
        assert word in out.output, out.output
    return str(out.output)


def restored(data: Path) -> None:
    assert rin(data, "project", "--rebuild", "-q").exit_code == 0
    assert verify(data).exit_code == 0


def test_two_columns_names_swapped_are_named_and_rebuild_restores_them(data: Path) -> None:
    before = holdings(data)
    for table in ("holdings_history", "holdings_monthly"):
        run(data, f'ALTER TABLE {table} RENAME COLUMN d_code TO "x";'
                  f"ALTER TABLE {table} RENAME COLUMN vintage TO d_code;"
                  f'ALTER TABLE {table} RENAME COLUMN "x" TO vintage;')
    assert holdings(data) != before  # what the attack achieves in a report
    named(data, f"table holdings_history {REDEFINED}", f"table holdings_monthly {REDEFINED}")
    restored(data)
    assert holdings(data) == before


@pytest.mark.parametrize("table, old, new", [
    ("holdings_history", '"gallon_rins" INTEGER', '"gallon_rins" REAL'),
    ("trade_closings", '"status" TEXT', '"status" TEXT COLLATE NOCASE'),
])
def test_a_column_retyped_or_recollated_is_named(data: Path, table: str, old: str,
                                                 new: str) -> None:
    redefine(data, table, old, new)
    named(data, f"table {table} {REDEFINED}")
    restored(data)


@pytest.mark.parametrize("script", [
    "ALTER TABLE compliance ADD COLUMN note TEXT",
    "ALTER TABLE compliance ADD COLUMN twice INTEGER GENERATED ALWAYS AS (deficit * 2) VIRTUAL",
    "ALTER TABLE compliance DROP COLUMN deficit",
])
def test_a_column_added_or_dropped_is_named_not_blamed_on_the_store(data: Path,
                                                                   script: str) -> None:
    """The copies' columns then differ in number: the comparison's UNION failed, exit 3."""
    run(data, script)
    named(data, f"table compliance {REDEFINED}")
    restored(data)


TRACKING = ("CREATE TABLE tracking (application_name TEXT{}, notification_id INTEGER, "
            "PRIMARY KEY (application_name)) WITHOUT ROWID")


@pytest.mark.parametrize("script, words", [
    ("ALTER TABLE tracking RENAME TO t; " + TRACKING.format(" COLLATE NOCASE")
     + "; INSERT INTO tracking SELECT * FROM t; DROP TABLE t",
     "table tracking is not the ledger's definition: redefined"),
    ("ALTER TABLE tracking RENAME TO t; CREATE VIEW tracking AS SELECT * FROM t",
     "tracking is a SQL view where the ledger's is a table: replaced"),
])
def test_a_tracking_table_redefined_is_named_and_rebuild_makes_it_anew(
        data: Path, script: str, words: str) -> None:
    """`project --rebuild` kept a redefined tracking table, so verify named it again after the
    rebuild it advised (session 15); the library's migration record must come back with it."""
    run(data, script)
    named(data, words)
    restored(data)
    db = sqlite3.connect(data / "views.sqlite")
    assert db.execute("SELECT sql FROM sqlite_master WHERE name='tracking'").fetchall() == [
        (TRACKING.format(""),)]
    assert db.execute("SELECT notification_id FROM tracking WHERE application_name = "
                      "'__migration__'").fetchall() == [(1,)]
    db.close()
    assert rin(data, "project", "-q").exit_code == 0 and verify(data).exit_code == 0


def test_a_table_made_without_rowid_is_named(data: Path) -> None:
    db = sqlite3.connect(data / "views.sqlite")
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name='parties'").fetchone()[0]
    db.close()
    assert "PRIMARY KEY" in sql.upper()  # WITHOUT ROWID needs one
    redefine(data, "parties", sql, sql, " WITHOUT ROWID")
    named(data, f"table parties {REDEFINED}")
    restored(data)


def test_a_table_in_a_sql_views_place_is_named_and_rebuild_replaces_it(data: Path) -> None:
    run(data, "CREATE TABLE lineage_t AS SELECT * FROM lineage WHERE party <> '3002';"
              "DROP VIEW lineage; ALTER TABLE lineage_t RENAME TO lineage;")
    named(data, "lineage is a table where the ledger's is a SQL view: replaced")
    restored(data)
    db = sqlite3.connect(data / "views.sqlite")
    assert db.execute("SELECT type FROM sqlite_master WHERE name='lineage'").fetchall() == [
        ("view",)]
    db.close()


def test_an_index_added_to_a_ledger_table_is_named(data: Path) -> None:
    run(data, "CREATE UNIQUE INDEX mine ON parties(name)")
    named(data, "index mine is not one of the ledger's: added")
    restored(data)


def test_an_index_swapped_for_another_b_tree_is_named(data: Path) -> None:
    """An index whose b-tree is another's (the schema's root page edited): a report reading
    the index sees the other's rows, while every table compares equal with its rebuild."""
    db = sqlite3.connect(data / "views.sqlite")
    name, root = db.execute(
        "SELECT name, rootpage FROM sqlite_master WHERE type='index' AND "
        "tbl_name='holdings_history' AND sql LIKE '%gallon_rins%' ORDER BY name LIMIT 1").fetchone()
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name=?", (name,)).fetchone()[0]
    db.executescript(  # a copy of the table with one row changed, and its index in the same form
        "CREATE TABLE shadow AS SELECT * FROM holdings_history;"
        "UPDATE shadow SET gallon_rins = gallon_rins + 7 WHERE rowid = 1;"
        + sql.replace(f'"{name}"', "shadow_index").replace('"holdings_history"', "shadow")
        + ";")
    shadow = db.execute("SELECT rootpage FROM sqlite_master WHERE name='shadow_index'"
                        ).fetchone()[0]
    db.execute("PRAGMA writable_schema = ON")
    db.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = ?", (shadow, name))
    db.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = 'shadow_index'", (root,))
    db.commit()
    db.close()
    named(data, "SQLite's integrity check fails", "index")


def test_the_largest_rowid_in_a_derived_tables_source_is_named(data: Path) -> None:
    """With rowid 2**63-1 taken, SQLite gives new rows random lower rowids, and the monthly
    holdings (grown from rows past the last rowid seen) would miss them."""
    run(data, "UPDATE holdings_history SET rowid = 9223372036854775807 "
              "WHERE rowid = (SELECT MAX(rowid) FROM holdings_history)")
    named(data, "holdings_history holds rowid 9,223,372,036,854,775,807")
    restored(data)


def test_a_utf16_views_file_is_named(data: Path) -> None:
    path = data / "views.sqlite"
    source = sqlite3.connect(path)
    dump = list(source.iterdump())
    source.close()
    path.unlink()
    for leftover in data.glob("views.sqlite-*"):
        if leftover.name.endswith(("-wal", "-shm")):
            leftover.unlink()
    copy = sqlite3.connect(path)
    copy.execute("PRAGMA encoding = 'UTF-16le'")
    copy.executescript("\n".join(dump))
    copy.close()
    named(data, "its text is UTF-16le, where the ledger writes UTF-8", "move it aside")


@pytest.mark.parametrize("make", ["fifo", "directory", "not sqlite"])
def test_a_views_path_that_is_no_views_file_is_named_without_hanging(data: Path,
                                                                     make: str) -> None:
    path = data / "views.sqlite"
    path.unlink()
    if make == "fifo":
        os.mkfifo(path)
        words = ("not a regular file",)
    elif make == "directory":
        path.mkdir()
        words = ("not a regular file",)
    else:
        path.write_bytes(b"not a database " * 100)
        words = ("cannot be read",)
    named(data, *words, "move it aside: rin project then makes the views anew")
    if make == "directory":
        path.rmdir()
    else:
        path.unlink()
    assert rin(data, "project", "-q").exit_code == 0  # what the message says to do
    assert verify(data).exit_code == 0
