"""Red team, held-out attacks of issue 9's kinds that the other red-team modules do not try.

Each test performs one attack that succeeded on the code as it landed (a traceback, a wrong
exit code) and asserts it is now detected or refused, naming the issue item it belongs to.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from red_team.attacker import build, files, rin, verify


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("held-out")
    build(data)
    return data


@pytest.fixture
def store(built: Path, tmp_path: Path) -> Path:
    """A fresh copy of the built store for one attack."""
    copy = tmp_path / "data"
    copy.mkdir()
    for name in ("events.sqlite", "head.json"):
        (copy / name).write_bytes((built / name).read_bytes())
    return copy


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
    ("rin_heads", "UPDATE rin_heads SET signature = X'00' WHERE notification_id = 640",
     "notification 640"),
])
def test_a_value_of_the_wrong_sql_type_is_named_not_a_crash(store: Path, table: str, sql: str,
                                                             where: str) -> None:
    with files(store) as db:
        db.execute(sql)
    result = verify(store)
    assert result.exit_code == 1, result.output
    assert f"{table} rows at" in result.output and where in result.output, result.output
    assert "type the ledger never writes" in result.output
