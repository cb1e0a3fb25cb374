"""Issue 9, item 5 (attack 5): the read side.

Redefining the SQL view `lineage` in views.sqlite hid a party from `rin trace`, undetected;
editing or deleting the tracking row made every report and `verify` loop forever. Now `verify`
checks the views' SQL definitions and tracking before anything is projected and names what
changed; a report meeting an out-of-step tracking row rebuilds the views instead of looping;
`rin project --rebuild` restores a redefined view.
"""

from __future__ import annotations

import signal
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest

from ledger.application.ledger import Ledger
from projections.lineage import LINEAGE
from red_team.attacker import build, rin, verify


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging: the attack used to make reports loop forever."""
    def expire(*_: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    build(tmp_path)
    assert rin(tmp_path, "project", "-q").exit_code == 0
    return tmp_path


def views(data: Path, sql: str, params: tuple[object, ...] = ()) -> None:
    db = sqlite3.connect(data / "views.sqlite")
    db.execute(sql, params)
    db.commit()
    db.close()


def batch_code(data: Path) -> str:
    with Ledger(data) as ledger:
        return str(ledger.blocks("3001")[0]["rin"])  # came from 1001 through 2001


def parties_traced(data: Path) -> set[str]:
    result = rin(data, "trace", batch_code(data), "--json")
    assert result.exit_code == 0, result.output
    return {row["party"] for row in orjson.loads(result.stdout)}


def test_a_redefined_lineage_view_is_named_and_rebuild_restores_it(data: Path) -> None:
    assert "3001" in parties_traced(data)
    views(data, "DROP VIEW lineage")
    views(data, f'CREATE VIEW "lineage" AS SELECT * FROM ({LINEAGE.select}) '
                "WHERE party != '3001'")
    assert "3001" not in parties_traced(data)  # what the attack achieves in a report
    out = verify(data)
    assert out.exit_code == 1
    assert "SQL view lineage is not the ledger's definition: redefined" in out.output
    assert rin(data, "project", "--rebuild", "-q").exit_code == 0
    assert "3001" in parties_traced(data)
    assert verify(data).exit_code == 0


def test_a_trigger_added_to_the_views_is_named(data: Path) -> None:
    views(data, "CREATE TRIGGER hide AFTER INSERT ON journal BEGIN DELETE FROM journal; END")
    out = verify(data)
    assert out.exit_code == 1 and "trigger hide is not one of the ledger's" in out.output


@pytest.mark.parametrize("edit, named", [
    ("DELETE FROM tracking", "tracking has no row for RinLedger"),
    ("UPDATE tracking SET notification_id = 5", "but tracking says 5: edited"),
    ("UPDATE tracking SET notification_id = 10000000", "past the store's last"),
])
def test_an_edited_or_deleted_tracking_row_is_named_and_reports_recover(
        data: Path, edit: str, named: str) -> None:
    expected = rin(data, "holdings", "--json").stdout
    views(data, edit)
    with deadline(120):
        out = verify(data)
    assert out.exit_code == 1 and named in out.output, out.output
    with deadline(120):
        again = rin(data, "holdings", "--json")
    assert again.exit_code == 0 and again.stdout == expected
    with deadline(120):
        assert verify(data).exit_code == 0


def test_an_edited_table_row_is_named(data: Path) -> None:
    views(data, "UPDATE holdings_history SET gallon_rins = gallon_rins + 1 WHERE rowid = 3")
    out = verify(data)
    assert out.exit_code == 1
    assert "view holdings_history differs from a rebuild" in out.output
