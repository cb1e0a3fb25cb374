"""The pending EMTS postings' table (ledger/infrastructure/pending_table.py, §80.1452(c)): every
save keeps it as the log says, a ledger opened on the store reads it instead of every posting
ever made (issue 15: 3.4 s of CPU on a 1M-event store, growing with the history), a store begun
before it has it filled from its log, and `verify` names a row missing, added or altered.

The oracle is the parties' own domain events read through the ledger's port (`TradePosted`
opens a posting, `TradeClosed` ends it), not the stored JSON the table is written from."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from itertools import islice
from pathlib import Path
from typing import Any

import pytest
from conftest import Store
from store_access import app_of

from ledger import Ledger
from ledger.application.store_failures import StoreError
from ledger.domain.party import Party
from ledger.infrastructure.pending_table import TABLE, TOPICS
from ledger.simulation.market import generate_market

#: a market with EMTS postings (80 % of trades), cancellations, denials and expiries
MARKET = list(generate_market(2_400, seed=7))
PARTIES = [line["party"] for line in MARKET if line["type"] == "register_party"]
Pending = dict[str, tuple[str, date]]


def pending_in_log(ledger: Ledger) -> Pending:
    """posting id → (its party's aggregate id as hex, its effective date), for every posting
    the parties' events leave open."""
    found: Pending = {}
    for party in PARTIES:
        for event in ledger.log.history(Party.create_id(party)):
            if isinstance(event, Party.TradePosted):
                found[event.client_id] = (event.originator_id.hex, event.effective_date)
            elif isinstance(event, Party.TradeClosed):
                found.pop(event.posting, None)
    return found


def table(ledger: Ledger) -> Pending:
    """The table's rows, as the recorder reads them for a ledger opened on the store."""
    _, rows = app_of(ledger).recorder.pending_postings()  # type: ignore[attr-defined]
    return {posting: (hex_id, date.fromisoformat(on)) for posting, hex_id, on in rows}


@contextmanager
def raw_sql(store: Store) -> Iterator[Any]:
    """A connection to the store's own database, as someone with write access has."""
    if store.url is None:
        import sqlite3

        db = sqlite3.connect(store.data / "events.sqlite")
        try:
            yield db
            db.commit()
        finally:
            db.close()
        return
    import psycopg

    with psycopg.connect(store.url, autocommit=True) as db:
        db.execute(f"SET search_path TO {store.env['POSTGRES_SCHEMA']}")
        yield db


def test_every_save_keeps_the_table_as_the_log_says(store: Store) -> None:
    """Batches of 7 lines (a posting and its closing often in one save) and lines one at a
    time: after each, the table holds exactly the postings the log leaves open."""
    seen_open = 0
    with store.ledger() as ledger:
        lines = iter(MARKET)
        while chunk := list(islice(lines, 300)):
            for result in ledger.apply_many(chunk[:-20], batch_size=7):
                assert result.status != "rejected", result
            for line in chunk[-20:]:
                assert ledger.apply(line).status != "rejected"
            expected = pending_in_log(ledger)
            assert table(ledger) == expected
            seen_open = max(seen_open, len(expected))
        seen_closed = sum(len(page) for page in ledger.log.pages(
            0, topics=[Party.TradeClosed.TOPIC]))
    assert seen_open >= 2 and seen_closed >= 100  # the market really posts and closes


def test_a_ledger_opened_on_the_store_reads_the_table_not_every_posting(store: Store) -> None:
    """A new ledger's first `expire_trades` reads the table and no posting or closing from the
    log, and expires every posting of the table more than 10 business days old (§80.1452(c))."""
    with store.ledger() as ledger:
        for _ in ledger.apply_many(MARKET):
            pass
        before = pending_in_log(ledger)
    assert before
    latest = max(on for _, on in before.values())
    with store.ledger() as ledger:
        recorder = app_of(ledger).recorder
        read: list[tuple[int | None, tuple[str, ...]]] = []
        select = recorder.select_notifications

        def spied(start: int | None, limit: int, *args: Any, **kwargs: Any) -> Any:
            read.append((start, tuple(kwargs.get("topics", ()))))
            return select(start, limit, *args, **kwargs)

        recorder.select_notifications = spied  # type: ignore[method-assign]
        day = date(latest.year + 1, 1, 31)
        assert ledger.apply({"type": "expire_trades", "id": "exp-late",
                             "date": day.isoformat()}).status == "applied"
        assert not [r for r in read if set(r[1]) & set(TOPICS)]
        assert pending_in_log(ledger) == {} == table(ledger)


def test_a_store_begun_before_the_table_has_it_filled_from_its_log(store: Store) -> None:
    """A store whose writers kept no table (the store format before issue 15's table): the
    first ledger opened on it fills the table from the log, in the set-up transaction."""
    with store.ledger() as ledger:
        for _ in ledger.apply_many(MARKET[:1_500]):
            pass
        expected = pending_in_log(ledger)
    assert expected
    with raw_sql(store) as db:
        db.execute(f"DROP TABLE {TABLE}")
    with store.ledger() as ledger:
        assert table(ledger) == expected
        assert ledger.audit() == []


@pytest.mark.parametrize("tamper, named", [
    (f"DELETE FROM {TABLE} WHERE posting = (SELECT min(posting) FROM {TABLE})",
     "pending in the log but missing or altered there"),
    (f"UPDATE {TABLE} SET effective_date = '2000-01-03' "
     f"WHERE posting = (SELECT min(posting) FROM {TABLE})",
     "pending in the log but missing or altered there"),
    (f"INSERT INTO {TABLE} SELECT 'forged', originator_id, effective_date FROM {TABLE} "
     "LIMIT 1", "'forged' there but not pending in the log"),
])
def test_verify_names_a_row_missing_added_or_altered(store: Store, tamper: str,
                                                      named: str) -> None:
    """A missing row lets a stale posting escape expiry; an added or altered one expires a
    posting early or one never made: `verify` names the posting and the paragraph."""
    with store.ledger() as ledger:
        for _ in ledger.apply_many(MARKET[:1_500]):
            pass
        assert ledger.audit() == []
    with raw_sql(store) as db:
        db.execute(tamper)
    with store.ledger() as ledger:
        problems = ledger.audit()
    assert len(problems) == 1, problems
    assert named in problems[0] and "§80.1452(c)" in problems[0] and TABLE in problems[0]


def test_an_empty_store_reads_an_empty_table(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        assert table(ledger) == {}
        assert app_of(ledger).recorder.pending_postings() == (0, [])  # type: ignore[attr-defined]


@pytest.mark.parametrize("column, value", [("originator_id", "zz"),
                                           ("effective_date", "not a date")])
def test_a_row_the_ledger_never_writes_stops_the_expiry(store: Store, column: str,
                                                        value: str) -> None:
    """A row that is no posting (an id that is no aggregate's, a date that is no date) is a
    store fault naming the row, the expiry stores nothing, and again on the next try: the
    index is not left empty and read as if no posting were pending (helper-1 found
    `expire_trades` then expired 9 of 104 stale postings, exit 0)."""
    with store.ledger() as ledger:
        for _ in ledger.apply_many(MARKET[:1_500]):
            pass
        expected = pending_in_log(ledger)
        end = ledger.position()
    assert expected
    victim = min(expected)
    with raw_sql(store) as db:
        db.execute(f"UPDATE {TABLE} SET {column} = '{value}' WHERE posting = '{victim}'")
    line = {"type": "expire_trades", "id": "exp-late", "date": "2030-01-31"}
    with store.ledger() as ledger:
        for _ in range(2):
            with pytest.raises(StoreError, match=f"{TABLE} row '{victim}'"):
                ledger.apply(line)
        assert ledger.position() == end
        assert any(victim in problem for problem in ledger.audit())
