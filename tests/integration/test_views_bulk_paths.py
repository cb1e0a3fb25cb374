"""The fast paths of the read side give exactly what the plain ones do: a from-scratch rebuild
(late indexes, the replay fed by its facts) the rows of small incremental batches, on a
simulated market with trades, a lock and a trade reversal (§80.1452(d), §80.1474(b)); a report
on a views file kept open sees each new event, a file replaced under it, and an index dropped
from it made again."""

from __future__ import annotations

import itertools
import os
from datetime import date
from pathlib import Path

from sqlite_utils import Database

from ledger import Ledger
from ledger.domain.party import Party
from ledger.simulation.market import generate_market
from projections import Views, project, rebuild
from projections.facts import Fact
from projections.invariants import dump
from projections.runner import TOPICS, views_path

LINES = 600


def market(ledger: Ledger) -> None:
    """The simulated market's first lines, projected in small batches as they come, then a
    batch locked and unlocked and a completed sell reversed."""
    lines = list(itertools.islice(generate_market(LINES, 1), LINES))
    for start in range(0, LINES, 150):
        for _ in ledger.apply_many(lines[start:start + 150]):
            pass
        project(ledger, batch_size=7)
    db = Database(views_path(ledger))
    code = db.execute("SELECT batch FROM holdings_history WHERE event = 'assigned' "
                      "ORDER BY notification_id DESC LIMIT 1").fetchone()[0]  # YYYYCCCCFFFFFBBBBB
    batch = {"vintage": int(code[:4]), "company": code[4:8], "facility": code[8:13],
             "batch": code[13:]}
    sells = db.execute("SELECT p.id, p.party FROM trade_postings AS p JOIN trade_closings AS c "
                       "ON c.id = p.id WHERE p.side = 'sell' AND c.status = 'completed' "
                       "ORDER BY p.notification_id DESC").fetchall()
    db.close()
    day = lines[-1]["date"]
    for line in ({"type": "lock", "date": day, "batch": batch, "reason": "feedstock"},
                 {"type": "unlock", "date": day, "batch": batch, "reason": "cleared"}):
        result = ledger.apply(line)
        assert result.status == "applied", (line, result.error)
    reversed_ = [ledger.apply({"type": "reverse", "id": f"R-{sell}", "date": day,
                               "party": party, "command": sell, "reason": "030"}).status
                 for sell, party in sells[:40]]
    assert "applied" in reversed_  # at least one trade went back
    project(ledger, batch_size=7)


def test_a_rebuild_gives_the_rows_of_small_incremental_batches(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "data")
    market(ledger)
    incremental = dump(views_path(ledger))
    assert incremental["trade_postings"] and incremental["batch_events"]
    assert any(row[4] == "trade_reversed_out" for row in incremental["holdings_history"])
    seen: list[Fact] = []
    fresh = tmp_path / "fresh.sqlite"
    rebuild(ledger, fresh, observe=seen.append)
    assert dump(fresh) == incremental
    # the facts the rebuild hands on are every Party event, once, in log order
    party_events = [logged.notification_id for logged in ledger.log.events(topics=TOPICS)
                    if isinstance(logged.event, Party.Event)]
    assert [fact.notification_id for fact in seen] == party_events
    assert ledger.apply({"type": "register_party", "party": "9999", "name": "Late",
                         "roles": ["blender"]}).status == "applied"
    assert Views(ledger).verify() == []


def test_a_report_on_the_open_views_file_sees_each_new_event(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    lines = list(itertools.islice(generate_market(80, 2), 80))
    for _ in ledger.apply_many(lines[:40]):
        pass
    views = Views(ledger)
    before = views.holdings()
    for _ in ledger.apply_many(lines[40:]):
        pass
    after = views.holdings()  # the same Views, its file kept open
    assert after != before
    assert after == Views(ledger, tmp_path / "other.sqlite").holdings()  # a fresh projection


def test_a_views_file_replaced_or_missing_an_index_is_read_anew(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    lines = list(itertools.islice(generate_market(90, 3), 90))
    for _ in ledger.apply_many(lines[:60]):
        pass
    views = Views(ledger)
    before = views.holdings()
    path = views_path(ledger)
    for suffix in ("", "-wal", "-shm"):  # deleted under the open connection
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    for _ in ledger.apply_many(lines[60:]):
        pass
    expected = Views(ledger, tmp_path / "other.sqlite").holdings()
    assert expected != before
    assert views.holdings() == expected  # the new file's rows, not the deleted one's
    assert os.path.exists(path)
    index = "idx_holdings_history_batch_serial_start"
    db = Database(path)
    db.execute(f'DROP INDEX "{index}"')
    db.close()
    assert views.holdings(as_of=date(2014, 6, 30)) == Views(
        ledger, tmp_path / "other.sqlite").holdings(as_of=date(2014, 6, 30))
    db = Database(path)
    assert index in {row[0] for row in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index'")}
    db.close()
