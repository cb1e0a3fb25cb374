"""A snapshot is stored in its events' own transaction (ledger/infrastructure/snapshot_in_save.py):
one commit, so the events and their snapshot are stored together or not at all; a snapshot that
cannot be stored still never costs the command its events; its state, rendered by orjson, holds
the same JSON values as the library's own mapping."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from conftest import POSTGRES_URL, Store
from eventsourcing.domain import Snapshot
from eventsourcing.persistence import Mapper
from eventsourcing.sqlite import SQLiteConnection
from store_access import app_of
from test_concurrency import PRODUCER, generate, party

import ledger.infrastructure.sqlite_recorder as sqlite_recorder
from ledger import Ledger
from ledger.application.store_failures import StoreError
from ledger.domain.party import Party
from ledger.infrastructure.event_store import LedgerApp
from ledger.infrastructure.snapshot_seal import split

#: the producer's snapshot interval (an even number of events)
INTERVAL = LedgerApp.snapshotting_intervals[Party]
#: 1 registration + (INTERVAL/2 − 1) × (Generated, Assigned) = INTERVAL − 1 events: the next
#: generate stores versions INTERVAL and INTERVAL + 1 of the producer, crossing the interval
PAIRS = INTERVAL // 2 - 1
BEFORE = [party(PRODUCER, "Producer", ["producer"], ("10011",)),
          *(generate(b, 100) for b in range(1, PAIRS + 1))]
CROSSING = generate(PAIRS + 1, 100)


def snapshot_versions(ledger: Ledger) -> list[int]:
    snapshots = app_of(ledger).snapshots
    assert snapshots is not None
    return [s.originator_version
            for s in snapshots.recorder.select_events(Party.create_id(PRODUCER))]


def break_snapshot_table(ledger: Ledger, store: Store, how: str = "ABORT") -> None:
    """Make the database refuse every insert into the snapshot table: a trigger raising
    (SQLite's RAISE(ABORT) fails the statement, RAISE(ROLLBACK) the whole transaction; on
    PostgreSQL an exception fails the statement)."""
    app = app_of(ledger)
    assert app.snapshots is not None
    table = app.snapshots.recorder.events_table_name  # type: ignore[attr-defined]
    if store.url is None:
        with sqlite3.connect(app.env["SQLITE_DBNAME"]) as db:
            db.execute(f"CREATE TRIGGER refuse BEFORE INSERT ON {table} BEGIN "
                       f"SELECT RAISE({how}, 'database or disk is full (injected)'); END")
        return
    import psycopg

    schema = store.env["POSTGRES_SCHEMA"]
    with psycopg.connect(POSTGRES_URL or "", autocommit=True) as db:
        db.execute(f"CREATE FUNCTION {schema}.refuse() RETURNS trigger AS $$ BEGIN "
                   "RAISE EXCEPTION 'disk full (injected)'; END $$ LANGUAGE plpgsql")
        db.execute(f"CREATE TRIGGER refuse BEFORE INSERT ON {schema}.{table} "
                   f"FOR EACH ROW EXECUTE FUNCTION {schema}.refuse()")


def only_the_trigger(problems: list[str]) -> bool:
    """Whether verify found nothing but the refusing trigger itself (not the ledger's)."""
    return len(problems) == 1 and "triggers the ledger did not make" in problems[0]


def test_a_single_command_crossing_the_interval_stores_its_snapshot_in_one_commit(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Ledger(tmp_path) as ledger:
        list(ledger.apply_many(BEFORE))
        assert snapshot_versions(ledger) == []
        commits = 0
        real = SQLiteConnection.commit

        def counted(self: SQLiteConnection) -> None:
            nonlocal commits
            commits += 1
            real(self)
        monkeypatch.setattr(SQLiteConnection, "commit", counted)
        assert ledger.apply(CROSSING).status == "applied"
        monkeypatch.undo()
        assert commits == 1  # was 2: the events', then the snapshot's
        assert snapshot_versions(ledger) == [INTERVAL + 1]
        assert ledger.audit() == []  # the snapshot equals the replay and its seal holds


def test_a_snapshot_and_its_events_roll_back_together(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The store fails after the snapshot row is inserted, before the commit: nothing stays.
    seen: list[int] = []

    def then_fail(insert: Callable[..., None]) -> Callable[..., None]:
        def step(cursor: Any, due: Any, stored: Any) -> None:
            insert(cursor, due, stored)
            seen.append(len(due.taken))
            raise sqlite3.OperationalError("disk I/O error (injected after the snapshot)")
        return step

    with store.ledger() as ledger:
        list(ledger.apply_many(BEFORE))
        position = ledger.position()
        if store.url is None:
            monkeypatch.setattr(sqlite_recorder, "insert_snapshots",
                                then_fail(sqlite_recorder.insert_snapshots))
        else:
            import ledger.infrastructure.postgres_recorder as postgres_recorder
            monkeypatch.setattr(postgres_recorder, "insert_snapshots",
                                then_fail(postgres_recorder.insert_snapshots))
        with pytest.raises(StoreError):
            ledger.apply(CROSSING)
        monkeypatch.undo()
        assert seen and seen[0] == 1  # the snapshot was in the transaction
        assert ledger.position() == position
        assert snapshot_versions(ledger) == []
        assert ledger.apply(CROSSING).status == "applied"  # and it is stored again, whole
        assert snapshot_versions(ledger) == [INTERVAL + 1]
        assert ledger.audit() == []


def test_a_refused_snapshot_keeps_its_events(store: Store) -> None:
    with store.ledger() as ledger:
        list(ledger.apply_many(BEFORE))
        break_snapshot_table(ledger, store)
        assert ledger.apply(CROSSING).status == "applied"
        assert app_of(ledger).snapshots_failed == 1
        assert snapshot_versions(ledger) == []
        assert ledger.party(PRODUCER).version == INTERVAL + 1
    with store.ledger() as ledger:  # a fresh load replays the events the command stored
        assert ledger.party(PRODUCER).version == INTERVAL + 1
        assert ledger.holdings(PRODUCER)[0]["gallon_rins"] == (PAIRS + 1) * 100  # every batch
        assert only_the_trigger(ledger.audit())


def test_a_snapshot_that_rolls_back_the_transaction_is_saved_again_without_it(
    tmp_path: Any
) -> None:
    # SQLite rolls the whole transaction back on some errors (a full disk): the events are then
    # stored again, in a transaction of their own, and the command stands.
    store = Store(tmp_path)
    with store.ledger() as ledger:
        list(ledger.apply_many(BEFORE))
        position = ledger.position()
        break_snapshot_table(ledger, store, "ROLLBACK")
        assert ledger.apply(CROSSING).status == "applied"
        assert app_of(ledger).snapshots_failed == 1
        assert ledger.position() == position + 2
        assert snapshot_versions(ledger) == []
        assert [h.notification_id for h in ledger.stored_heads()][-1] == position + 2
        assert only_the_trigger(ledger.audit())


def taken(aggregate: Any) -> Any:
    """The snapshot the ledger takes of `aggregate` (its class's own, if it has one)."""
    return getattr(type(aggregate), "Snapshot", Snapshot).take(aggregate)


def library_json(mapper: Mapper[Any], snapshot: Any) -> Any:
    return orjson.loads(Mapper.to_stored_event(mapper, snapshot).state)


def test_a_snapshot_holds_the_values_the_library_would_store(tmp_path: Any) -> None:
    with Ledger(tmp_path) as ledger:
        list(ledger.apply_many([*BEFORE, CROSSING]))
        app = app_of(ledger)
        snapshot = taken(ledger.party(PRODUCER))
        stored = app.mapper.sealed_snapshot(snapshot, "c" * 64)  # type: ignore[attr-defined]
        body, seal = split(stored.state)
        assert seal["chain"] == "c" * 64
        assert orjson.loads(body) == library_json(app.mapper, snapshot)
        restored = app.mapper.to_domain_event(stored).mutate(None)  # type: ignore[attr-defined]
        assert orjson.loads(app.mapper.transcoder.encode(taken(restored).state)) == \
            orjson.loads(app.mapper.transcoder.encode(snapshot.state))


def test_a_value_orjson_refuses_is_mapped_by_the_library(tmp_path: Any) -> None:
    with Ledger(tmp_path) as ledger:
        list(ledger.apply_many(BEFORE[:1]))
        app = app_of(ledger)
        snapshot = taken(ledger.party(PRODUCER))
        vars(snapshot)["state"] = {**snapshot.state, "by_year": {2024: 1}}  # an int key
        body, _ = split(app.mapper.sealed_snapshot(snapshot, "").state)  # type: ignore[attr-defined]
        assert orjson.loads(body) == library_json(app.mapper, snapshot)
        assert orjson.loads(body)["state"]["by_year"] == {"2024": 1}
