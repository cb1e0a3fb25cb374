"""Red team, held-out attacks of issue 9's kinds that the other red-team modules do not try.

Each test performs one attack that succeeded on the code as it landed (a traceback, a wrong
exit code) and asserts it is now detected or refused, naming the issue item it belongs to.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from ledger.cli.main import app
from ledger.domain.party import Party
from ledger.infrastructure.settings import store_env
from red_team.attacker import build, files, rin, verify
from red_team.rewrite import rewrite_history


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("held-out")
    build(data)
    return data


@pytest.fixture(scope="module")
def built_r2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The market in a store of release 2's format (command records as events)."""
    data = tmp_path_factory.mktemp("held-out-r2")
    build(data, record_events=True)
    return data


def copy_of(built: Path, copy: Path) -> Path:
    copy.mkdir()
    for name in ("events.sqlite", "head.json"):
        (copy / name).write_bytes((built / name).read_bytes())
    return copy


@pytest.fixture
def store(built: Path, tmp_path: Path) -> Path:
    """A fresh copy of the built store for one attack."""
    return copy_of(built, tmp_path / "data")


@pytest.fixture
def store_r2(built_r2: Path, tmp_path: Path) -> Path:
    """A fresh copy of the store of release 2's format for one attack."""
    return copy_of(built_r2, tmp_path / "data")


# ---- issue 9 attack 12 / item 7: bad report arguments exit 2, naming the option ----------

@pytest.mark.parametrize("known_at", ["9999-12-31T23:59:59.999999-23:59",
                                      "0001-01-01T00:00:00+23:59"])
def test_a_known_at_time_outside_utc_exits_2_naming_the_option(store: Path,
                                                               known_at: str) -> None:
    result = rin(store, "holdings", "--known-at", known_at)
    assert result.exit_code == 2, result.output
    assert "--known-at" in result.output and "Traceback" not in result.output


def test_a_known_at_id_beyond_any_integer_the_store_holds_means_everything_known(
        store: Path) -> None:
    """2^64 is past every notification (SQLite's INTEGER holds at most 2^63 − 1): the whole
    log is known, as with the last id (the market's 3001 holds 10,000 + 210 × 10)."""
    huge = rin(store, "holdings", "--party", "3001", "--known-at", str(2**64), "--json")
    assert huge.exit_code == 0, huge.output
    assert '"gallon_rins":12100' in huge.stdout.replace(" ", "")


# ---- issue 9 item 1: verify names a row plain SQL gave a type the ledger never writes ------

@pytest.mark.parametrize(("table", "sql", "where"), [
    ("stored_events", "UPDATE stored_events SET state = NULL WHERE rowid = 6", "notification 6"),
    ("stored_events", "UPDATE stored_events SET originator_version = 'x' WHERE rowid = 7",
     "notification 7"),
    ("stored_events", "UPDATE stored_events SET originator_id = 'zz' WHERE rowid = 8",
     "notification 8"),
    ("stored_snapshots", "UPDATE stored_snapshots SET originator_version = 'abc'", "'abc'"),
    ("stored_snapshots", "UPDATE stored_snapshots SET originator_id = 'zz'", "'zz'"),
    # the last head: 10 events of the 7 lines without ids, then 210 transfers of 2 events each
    ("rin_heads", "UPDATE rin_heads SET signature = X'00' WHERE notification_id = 430",
     "notification 430"),
])
def test_a_value_of_the_wrong_sql_type_is_named_not_a_crash(store: Path, table: str, sql: str,
                                                             where: str) -> None:
    with files(store) as db:
        db.execute(sql)
    result = verify(store)
    assert result.exit_code == 1, result.output
    assert f"{table} rows at" in result.output and where in result.output, result.output
    assert "type the ledger never writes" in result.output


# ---- issue 9 attack 5 / item 1: the read side's tracking holding a value of another type ---

def views(data: Path, sql: str) -> None:
    db = sqlite3.connect(data / "views.sqlite")
    db.execute(sql)
    db.commit()
    db.close()


@pytest.mark.parametrize(("sql", "named"), [
    ("UPDATE tracking SET notification_id = 'abc' WHERE application_name = 'RinLedger'",
     "tracking says 'abc'"),
    ("UPDATE tracking SET notification_id = 1.5 WHERE application_name = 'RinLedger'",
     "tracking says 1.5"),
    ("UPDATE holdings_history SET notification_id = 'abc' WHERE rowid = 5",
     "holdings_history holds notification id 'abc'"),
])
def test_a_notification_id_that_is_no_number_in_the_views_is_named(store: Path, sql: str,
                                                                   named: str) -> None:
    assert rin(store, "project", "-q").exit_code == 0
    views(store, sql)
    result = verify(store)
    assert result.exit_code == 1, result.output
    assert named in result.output and "edited" in result.output, result.output


def test_a_report_meeting_a_tracking_row_that_is_no_number_rebuilds(store: Path) -> None:
    """The market's holdings, counted by hand: 1001 keeps 60,000 of its 100,000 (K=1); 2001
    separated 40,000 and sold 10,000 + 210 × 10; 3001 holds those 12,100."""
    assert rin(store, "project", "-q").exit_code == 0
    views(store, "UPDATE tracking SET notification_id = 'abc' WHERE application_name = "
                 "'RinLedger'")
    result = rin(store, "holdings", "--json")
    assert result.exit_code == 0, result.output
    held = {(row["party"], row["k"]): row["gallon_rins"] for row in orjson.loads(result.stdout)}
    assert held == {("1001", 1): 60_000, ("2001", 2): 27_900, ("3001", 2): 12_100}
    assert verify(store).exit_code == 0


# ---- issue 9 attack 4 / item 1: every head row deleted (a release-1 store has none) --------

def test_deleting_every_head_row_is_named_by_head_json(store: Path) -> None:
    with files(store) as db:
        db.execute("DELETE FROM rin_heads")
    result = verify(store)
    assert result.exit_code == 1, result.output
    assert "rin_heads has no rows, yet head.json is kept" in result.output


@pytest.mark.parametrize(("kind", "first"), [("store", 12), ("store_r2", 13)])
def test_a_tail_deleted_with_every_head_row_and_head_json_is_named_by_the_records(
        kind: str, first: int, request: pytest.FixtureRequest) -> None:
    """With views.sqlite, head.json and every head row gone, the command records that name
    their events (only release 2 and later write them) still say the store kept heads: the
    first is that of t-0000, after the 10 events of the 7 lines without ids and its own 2
    (a row at notification 12; release 2's record event after them, 13)."""
    store: Path = request.getfixturevalue(kind)
    with files(store) as db:
        db.execute("DELETE FROM stored_events WHERE rowid > 400")
        db.execute("DROP TABLE rin_heads")
    (store / "head.json").unlink()
    result = verify(store)
    assert result.exit_code == 1, result.output
    assert (f"rin_heads has no rows, yet the command record at notification {first} names its "
            "events") in result.output


# ---- issue 9 attack 3 / item 1: command records rewritten with every link recomputed -------

def record_of(client_id: str, change: Callable[[dict[str, Any]], None]) -> Callable[
        [bytes], bytes | None]:
    """A `rewrite_history` change editing the command record of `client_id`."""
    def edit(state: bytes) -> bytes | None:
        record = orjson.loads(state)
        if record.get("client_id") != client_id or "events" not in record:
            return None
        change(record)
        return orjson.dumps(record)
    return edit


@pytest.mark.parametrize("change", [lambda r: r.pop("events"),
                                    lambda r: r.__setitem__("events", None)],
                         ids=["events-removed", "events-null"])
def test_a_record_in_release_1_form_after_one_naming_its_events_is_forged(
        store_r2: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Release 1 wrote no event names; a store whose records name them never went back."""
    rewrite_history(store_r2, record_of("t-0005", change))
    result = verify(store_r2)
    assert result.exit_code == 1, result.output
    assert "command record 't-0005'" in result.output and "names no events" in result.output


def test_a_record_whose_client_id_was_renamed_is_named(store_r2: Path) -> None:
    """The record is found by the id its client id gives, so a renamed one still makes the
    real `t-0005` line a duplicate, and `t-9999` looks applied: verify names the mismatch."""
    rewrite_history(store_r2, record_of("t-0005", lambda r: r.__setitem__("client_id",
                                                                         "t-9999")))
    result = verify(store_r2)
    assert result.exit_code == 1, result.output
    assert "command record 't-9999'" in result.output
    assert "its id is not the one its client id gives" in result.output


# ---- issue 9 attack 12 / item 7: a PostgreSQL URL's options are refused, not dropped -------

@pytest.mark.parametrize("options", ["?sslmode=require", "?sslmode=verify-full&sslrootcert=ca",
                                     "#x"])
def test_a_store_url_with_options_it_would_drop_exits_2(tmp_path: Path, options: str) -> None:
    """`sslmode=require` used to be dropped silently: the ledger connected without TLS."""
    url = f"postgresql://rin:rin@127.0.0.1:1/rin{options}"
    result = CliRunner().invoke(app, ["--data", str(tmp_path), "--store", url, "verify"])
    assert result.exit_code == 2, result.output
    assert "--store" in result.output and "PGSSLMODE" in result.output
    with pytest.raises(ValueError, match="not supported"):
        store_env(tmp_path, url)


# ---- issue 9 attack 12 / item 7: an exported head no store could hold is a bad argument ----

@pytest.mark.parametrize("notification_id", [-5, 2**63])
def test_an_exported_head_at_an_impossible_notification_exits_2(
        store: Path, tmp_path: Path, notification_id: int) -> None:
    """Was exit 1, "past the last stored notification: the store was truncated", for −5."""
    head = tmp_path / "head.json"
    head.write_bytes(orjson.dumps({"notification_id": notification_id, "hash": "00"}))
    result = verify(store, "--against", str(head))
    assert result.exit_code == 2, result.output
    assert "--against" in result.output and "truncated" not in result.output


def test_a_snapshot_whose_version_is_text_is_not_used_to_decide_a_command(store: Path) -> None:
    """Issue 9 item 1: the seal check compared the text version with a number and crashed the
    command; such a snapshot is skipped (the party is replayed) and verify names it."""
    with files(store) as db:
        db.execute("UPDATE stored_snapshots SET originator_version = 'abc'")
    line = store / "sale.jsonl"
    line.write_bytes(orjson.dumps({"type": "transfer", "date": "2024-03-05", "from": "2001",
                                   "to": "3001", "rins": {"d_code": 6, "vintage": 2024, "k": 2,
                                                          "quantity": 27_901}}) + b"\n")
    result = rin(store, "apply", str(line), "--json")
    assert result.exit_code == 1, result.output  # 2001 holds 27,900 K=2 (counted above)
    assert "27,900 held" in result.output, result.output
    assert "stored_snapshots rows at" in verify(store).output


@pytest.mark.parametrize("sql", [
    "DELETE FROM stored_events WHERE originator_id = ? AND originator_version = 3",
    "UPDATE stored_events SET state = X'7b7d' WHERE originator_id = ? AND originator_version = 3",
    "UPDATE stored_events SET topic = 'rin_ledger:Nope.Evil' WHERE originator_id = ? "
    "AND originator_version = 3",
])
def test_a_party_whose_history_cannot_be_replayed_is_a_store_failure(store: Path,
                                                                    sql: str) -> None:
    """Issue 9 item 7 (attack 12): a command on a party whose stored events were deleted or
    edited outside the ledger exits 3 naming the cause and `rin verify`, not a traceback."""
    seller = Party.create_id("2001").hex
    with files(store) as db:
        db.execute("DELETE FROM stored_snapshots WHERE originator_id = ?", (seller,))
        db.execute(sql, (seller,))
    line = store / "sale.jsonl"
    line.write_bytes(orjson.dumps({"type": "transfer", "id": "after-edit", "date": "2024-03-05",
                                   "from": "2001", "to": "3001", "rins": {
                                       "d_code": 6, "vintage": 2024, "k": 2, "quantity": 10}})
                     + b"\n")
    result = rin(store, "apply", str(line))
    assert result.exit_code == 3, result.output
    assert "could not be replayed" in result.output and "rin verify" in result.output
    assert "last line committed: none" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
