"""Session 7's attacks on a PostgreSQL store's locks (ledger/infrastructure/postgres_recorder.py,
writer_turn.py `PostgresTurn`): the store's lock timeout was the library's default, 0, which
PostgreSQL reads as "wait for ever", so a session holding the events table's lock or the
writers' turn (a stopped writer, a `psql` left in a transaction) hung every writer; and a
lock timeout, once set, was retried ten times by the library (2 s became 22 s). Now each waits
once, at most POSTGRES_LOCK_TIMEOUT (30 s, as SQLite's), and fails as a locked store (exit 3)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from uuid import uuid4

import pytest
from conftest import POSTGRES_URL
from store_access import app_of
from test_hostile_input import BASE

from ledger import Ledger
from ledger.application.store_failures import StoreError
from ledger.infrastructure.writer_turn import TurnTimeout

pytestmark = pytest.mark.skipif(not POSTGRES_URL, reason="needs RIN_TEST_POSTGRES_URL")
TIMEOUT = 1  # seconds: POSTGRES_LOCK_TIMEOUT of these tests


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    """A ledger on a schema of its own, holding one registration, with a 1 s lock timeout."""
    import psycopg

    assert POSTGRES_URL is not None
    schema = f"test_{uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    try:
        with Ledger(tmp_path, store=POSTGRES_URL, env={
                "POSTGRES_SCHEMA": schema, "POSTGRES_LOCK_TIMEOUT": str(TIMEOUT)}) as opened:
            assert opened.apply(BASE["register_party"]).status == "applied"
            yield opened
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")


def failure_while(ledger: Ledger, *held: str) -> tuple[BaseException | None, float]:
    """What a save raises while another session holds what `held` takes, and how long it
    waited (at most 15 s: on f919117 it waited for ever)."""
    import psycopg

    assert POSTGRES_URL is not None
    table = app_of(ledger).recorder.turn.name
    with psycopg.connect(POSTGRES_URL) as holder, ThreadPoolExecutor(1) as pool:
        for statement in held:
            holder.execute(statement.format(table=table), {"name": table})
        began = time.monotonic()
        saving = pool.submit(ledger.apply, {**BASE["register_party"], "party": "4002"})
        try:
            failure = saving.exception(timeout=15)
        finally:
            holder.rollback()
        return failure, time.monotonic() - began


def assert_locked(ledger: Ledger, failure: BaseException | None, waited: float) -> None:
    assert isinstance(failure, StoreError), failure
    assert "lock timeout" in str(failure) and failure.last_committed_line is None
    assert TIMEOUT <= waited < 3 * TIMEOUT + 2  # once: not ten times
    assert ledger.position() == 1  # nothing of the line was stored
    assert ledger.apply({**BASE["register_party"], "party": "4002"}).status == "applied"


def test_a_held_events_table_lock_fails_a_save_after_the_timeout(ledger: Ledger) -> None:
    failure, waited = failure_while(ledger, "LOCK TABLE {table} IN EXCLUSIVE MODE")
    assert_locked(ledger, failure, waited)


def test_a_writer_stopped_holding_the_turn_fails_a_save_after_the_timeout(
    ledger: Ledger,
) -> None:
    failure, waited = failure_while(ledger, "SELECT pg_advisory_xact_lock(hashtext(%(name)s))")
    assert_locked(ledger, failure, waited)


def test_taking_the_turn_waits_for_a_save_in_progress_only_up_to_the_timeout(
    ledger: Ledger,
) -> None:
    """The losing writer's exclusive turn, while a save that never ends holds its share."""
    import psycopg

    assert POSTGRES_URL is not None
    turn = app_of(ledger).recorder.turn
    with psycopg.connect(POSTGRES_URL) as holder:
        holder.execute("SELECT pg_advisory_xact_lock_shared(hashtext(%s))", (turn.name,))
        began = time.monotonic()
        with pytest.raises(TurnTimeout, match="writers' turn"), turn.exclusive():
            pytest.fail("took the turn while another writer's save held a share")
        assert time.monotonic() - began < 3 * TIMEOUT + 2
        holder.rollback()
    with turn.exclusive():  # free again; the pool's connection keeps no lock timeout of it
        assert ledger.apply({**BASE["register_party"], "party": "4003"}).status == "applied"
