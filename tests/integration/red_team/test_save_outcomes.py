"""What a save that failed left in the store decides what its lines are reported as
(ledger/infrastructure/save_outcome.py), on both stores. helper-66's attacks on the first
version: a commit answered and then a pool error that is no connection error was called "not
stored" (PostgreSQL), so was a line whose in-memory bookkeeping or writers' turn release failed
after its commit; a commit whose answer was lost and could not be read back was retried, so an
id-less line was stored twice; a commit SQLite refused was read back and "found" another
writer's identical events. Each line is reported as what the store holds, or, when that cannot
be known, named as unknown, never retried."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import eventsourcing.domain
import pytest
from conftest import Store, postgres_store
from eventsourcing.persistence import DatabaseError, IntegrityError, OperationalError
from eventsourcing.sqlite import SQLiteConnection
from store_access import app_of
from test_read_check import needs_postgres

from ledger import Ledger
from ledger.application.store_failures import StoreError
from ledger.domain.party import Party
from ledger.infrastructure import writer_turn
from ledger.infrastructure.retry import Retry
from red_team.test_exactly_once import BUYER, PRODUCER, sale, setup, stored_sales


def fail_after_commit(monkeypatch: pytest.MonkeyPatch, ledger: Ledger, store: Store,
                      error: Exception) -> dict[str, bool]:
    """Make the pool raise `error` once, as it takes back the connection of the next save
    (after its commit); the dict says whether it fired."""
    recorder = app_of(ledger).recorder
    pool = recorder.datastore.pool  # type: ignore[attr-defined]
    name = "putconn" if store.url else "put_connection"
    real_put, real_insert = getattr(pool, name), recorder.insert_events
    fault = {"armed": False, "fired": False}

    def put(*args: Any, **kwargs: Any) -> Any:
        real_put(*args, **kwargs)
        if fault["armed"] and not fault["fired"]:  # the first handed back in the save
            fault["fired"] = True
            raise error

    def insert(*args: Any, **kwargs: Any) -> Any:
        fault["armed"] = True
        return real_insert(*args, **kwargs)
    monkeypatch.setattr(pool, name, put)
    monkeypatch.setattr(recorder, "insert_events", insert)
    return fault


def read_back_fails(monkeypatch: pytest.MonkeyPatch, ledger: Ledger) -> None:
    def select(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("read-back failed (injected)")
    monkeypatch.setattr(app_of(ledger), "read_back", select)


@pytest.mark.parametrize("error", [
    OperationalError("connection lost after COMMIT (injected)"),
    DatabaseError("server closed the cursor (injected, after COMMIT)"),
    RuntimeError("pool bookkeeping failed (injected, after COMMIT)"),
])
@pytest.mark.parametrize("batch", [1, 3])
def test_a_save_failing_after_its_commit_reports_its_lines_applied_once(
        store: Store, monkeypatch: pytest.MonkeyPatch, error: Exception, batch: int) -> None:
    # PostgreSQL's lost answer (a connection error) is tried again by the library, which
    # conflicts with the first try: read back, the lines are found stored. Any other error
    # came after an answered commit: stored, without reading back.
    with store.ledger() as ledger:
        list(ledger.apply_many(setup()))
        fault = fail_after_commit(monkeypatch, ledger, store, error)
        results = list(ledger.apply_many([sale() for _ in range(batch)], batch_size=batch,
                                         first_line=5))
        monkeypatch.undo()
        assert fault["fired"]
        assert [(r.line, r.status) for r in results] == [
            (5 + n, "applied") for n in range(batch)]
        assert stored_sales(ledger) == 1 + batch  # the first sale and these, once
        assert ledger.holdings(BUYER)[0]["gallon_rins"] == 10 * (1 + batch)
        assert ledger.audit() == []


@pytest.mark.parametrize("batch", [1, 3])
def test_a_lost_answer_that_cannot_be_read_back_is_named_unknown_and_not_retried(
        store: Store, monkeypatch: pytest.MonkeyPatch, batch: int) -> None:
    with store.ledger() as ledger:
        list(ledger.apply_many(setup()))
        fault_after = fail_after_commit(
            monkeypatch, ledger, store, OperationalError("connection lost after COMMIT"))
        read_back_fails(monkeypatch, ledger)
        reported, failure = [], None
        try:
            reported = list(ledger.apply_many([sale() for _ in range(batch)],
                                              batch_size=batch, first_line=5))
        except StoreError as raised:
            failure = raised
        monkeypatch.undo()
        assert fault_after["fired"]
        assert stored_sales(ledger) == 1 + batch  # stored once, never tried again
        if not store.url:  # SQLite knows its commit returned: no read-back, reported applied
            assert [r.status for r in reported] == ["applied"] * batch and failure is None
            return
        lines = "line 5 was" if batch == 1 else "lines 5-7 were"
        assert reported == [] and failure is not None
        assert failure.unknown == (5, 4 + batch) and failure.last_committed_line is None
        assert f"whether {lines} committed is unknown" in str(failure)
        assert "(no line before them was committed)" in str(failure)


def test_a_commit_sqlite_refuses_is_not_taken_for_another_writers_identical_save(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The loser's COMMIT fails (the disk is full: SQLite rolls back, nothing stored) while the
    # winner stores the same line with the same events (fixed timestamps). The outcome was
    # already "unknown" before the commit, so the loser read back, found the winner's events
    # and said applied; now a commit that raised stored nothing: the store's failure.
    with Ledger(tmp_path) as winner, Ledger(tmp_path) as loser:
        list(winner.apply_many(setup()))
        now = datetime(2026, 12, 4, 3, 0, tzinfo=UTC)
        monkeypatch.setattr(eventsourcing.domain, "datetime_now_with_tzinfo", lambda: now)
        line, won = {**sale(), "id": "race"}, []
        real_insert, real_commit = app_of(loser).recorder.insert_events, SQLiteConnection.commit
        armed = [False]

        def insert(*args: Any, **kwargs: Any) -> Any:
            armed[0] = True
            return real_insert(*args, **kwargs)

        def commit(self: SQLiteConnection) -> None:
            if not armed[0]:
                return real_commit(self)
            armed[0] = False
            self._sqlite_conn.rollback()  # what SQLite does when a COMMIT fails so
            won.append(winner.apply(line))  # the other writer, in the same microsecond
            raise sqlite3.OperationalError("database or disk is full (injected at COMMIT)")
        monkeypatch.setattr(app_of(loser).recorder, "insert_events", insert)
        monkeypatch.setattr(SQLiteConnection, "commit", commit)
        with pytest.raises(StoreError, match="disk is full"):
            loser.apply(line)
        monkeypatch.undo()
        assert [r.status for r in won] == ["applied"]
        assert loser.apply(line).status == "duplicate"
        assert stored_sales(loser) == 2


def test_a_failure_of_the_bookkeeping_after_a_commit_reports_the_lines_applied(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    with store.ledger() as ledger:
        list(ledger.apply_many(setup()))

        def saved(*args: Any, **kwargs: Any) -> None:
            raise OSError(28, "No space left on device (injected)")
        monkeypatch.setattr(ledger._statuses, "saved", saved)  # in-memory index, after commit
        results = list(ledger.apply_many([sale() for _ in range(3)], batch_size=3,
                                         first_line=5))
        monkeypatch.undo()
        assert [r.status for r in results] == ["applied"] * 3
        assert ledger.apply(sale(), line=8).status == "applied"  # memory read again
        assert stored_sales(ledger) == 5 and ledger.audit() == []


@contextmanager
def losing_three_times(monkeypatch: pytest.MonkeyPatch, ledger: Ledger) -> Iterator[None]:
    """The next three saves lose to another writer: the line then takes the writers' turn."""
    recorder = app_of(ledger).recorder
    real, lost = recorder.insert_events, [0]

    def insert(*args: Any, **kwargs: Any) -> Any:
        if lost[0] < 3:
            lost[0] += 1
            raise IntegrityError("another writer saved first (injected)")
        return real(*args, **kwargs)
    monkeypatch.setattr(Retry, "pause", lambda self, attempt: None)
    monkeypatch.setattr(recorder, "insert_events", insert)
    yield
    assert lost[0] == 3


def test_a_writers_turn_whose_release_fails_keeps_the_line_reported_applied(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    with store.ledger() as ledger:
        list(ledger.apply_many(setup()))
        turn = app_of(ledger).recorder.turn  # type: ignore[attr-defined]
        if store.url:  # the advisory unlock fails on the turn's own connection
            datastore = turn._datastore

            class Connection:
                def __init__(self, real: Any) -> None:
                    self.real = real

                def execute(self, sql: str, *args: Any) -> Any:
                    if "advisory_unlock" in sql:
                        raise OperationalError("server closed the connection (injected)")
                    return self.real.execute(sql, *args)

                def close(self) -> None:
                    self.real.close()

            class Datastore:
                lock_timeout = datastore.lock_timeout

                @contextmanager
                def get_connection(self) -> Iterator[Connection]:
                    with datastore.get_connection() as real:
                        yield Connection(real)
            monkeypatch.setattr(turn, "_datastore", Datastore())
        else:  # closing the turn file's descriptor reports an error
            real_close = writer_turn.os.close

            def close(fd: int) -> None:
                real_close(fd)
                raise OSError(5, "Input/output error (injected)")
            monkeypatch.setattr(writer_turn.os, "close", close)
        with losing_three_times(monkeypatch, ledger):
            result = ledger.apply(sale(), line=5)
        monkeypatch.undo()
        assert result.status == "applied"
        assert stored_sales(ledger) == 2
        assert ledger.apply(sale(), line=6).status == "applied"  # the turn was released


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[Store]:
    with postgres_store(tmp_path) as made:
        yield made


@needs_postgres
def test_a_postgresql_read_back_waits_for_a_commit_still_under_way(postgres: Store) -> None:
    # helper-69: a commit's answer lost while the server was still making it durable; the
    # library's next try timed out on the table lock, the read-back found nothing and called
    # the line not stored, then the first commit landed. The read-back now waits for every save
    # holding the table lock: here one stopped between its inserts and its COMMIT.
    with postgres.ledger() as writer, postgres.ledger() as reader:
        list(writer.apply_many(setup()))
        version = writer.party(PRODUCER).version + 1  # the sale's event on the producer
        recorder = app_of(writer).recorder
        real = recorder.insert_in_transaction  # type: ignore[attr-defined]
        locked, release = threading.Event(), threading.Event()

        def insert(*args: Any, **kwargs: Any) -> Any:
            ids = real(*args, **kwargs)  # inserted under the table lock, not yet committed
            locked.set()
            release.wait(60)
            return ids
        recorder.insert_in_transaction = insert  # type: ignore[attr-defined]
        saving = threading.Thread(target=writer.apply, args=(sale(), 5))
        saving.start()
        assert locked.wait(60)
        found: list[Any] = []
        reading = threading.Thread(target=lambda: found.extend(
            app_of(reader).read_back(Party.create_id(PRODUCER), version)))
        reading.start()
        reading.join(0.5)  # a read that does not wait has returned [] by now
        release.set()
        saving.join(60)
        reading.join(60)
        assert [event.originator_version for event in found] == [version]


@pytest.mark.parametrize("batch", [1, 3])
def test_a_save_stopped_by_keyboard_interrupt_leaves_nothing_of_its_line_in_memory(
        store: Store, monkeypatch: pytest.MonkeyPatch, batch: int) -> None:
    # helper-69: a REPL or a service that catches the interrupt and goes on with the same
    # Ledger; the aggregates kept the versions of the line never stored, so the next line was
    # stored after a gap (versions 5, 6 missing) that no ledger could replay again.
    with store.ledger() as ledger:
        list(ledger.apply_many(setup()))
        recorder = app_of(ledger).recorder
        real = recorder.insert_events

        def insert(*args: Any, **kwargs: Any) -> Any:
            raise KeyboardInterrupt
        monkeypatch.setattr(recorder, "insert_events", insert)
        with pytest.raises(KeyboardInterrupt):
            list(ledger.apply_many([sale() for _ in range(batch)], batch_size=batch))
        monkeypatch.setattr(recorder, "insert_events", real)
        assert ledger.apply(sale(), line=9).status == "applied"
        assert ledger.audit() == []
    with store.ledger() as again:  # replays from the store alone
        assert again.holdings(BUYER)[0]["gallon_rins"] == 20
        assert again.apply(sale()).status == "applied"
