"""The PostgreSQL save function (ledger/infrastructure/postgres_function.py): a refused save uses
no notification id, so ids stay gapless for readers and `verify`; two writers racing for the
same aggregates and command ids lose nothing and leave no gap; a store made before the function
gets it when opened."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import psycopg
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from eventsourcing.persistence import IntegrityError

from ledger.infrastructure.chain import GENESIS, fold
from ledger.infrastructure.command_table import COMMANDS, Applied, fold_command
from ledger.infrastructure.heads import StoreTruncated
from ledger.infrastructure.postgres_function import NAME
from ledger.infrastructure.signing import KeyRequired, Signer
from tests.integration.test_postgres_recorder import event, heads, log_head
from tests.integration.test_read_check import POSTGRES_URL, drop, needs_postgres, postgres_recorder

pytestmark = needs_postgres


@pytest.fixture
def schema() -> Iterator[str]:
    name = f"test_{uuid4().hex[:12]}"
    yield name
    drop(name)


def command(client_id: str, events: int = 1) -> Applied:
    """A command row for a save whose last `events` events are the command's."""
    return Applied(client_id, "digest", [f"x:{n}" for n in range(events)])


def ids_stored(recorder: Any) -> list[int]:
    return [n.id for n in recorder.select_notifications(None, 10_000)]


def test_each_refusal_uses_no_notification_id(schema: str) -> None:
    """A read that moved, a version stored, a command id stored, a writer without the store's
    key: each refused, and the next save gets the id right after the last."""
    recorder = postgres_recorder(schema)
    read = uuid4()
    assert recorder.insert_events([event(read, 1)], **{COMMANDS: [command("c1")]}) == [1]
    with pytest.raises(IntegrityError, match=str(read)):
        recorder.insert_events([event(uuid4(), 1)], unchanged={read: 0})
    with pytest.raises(IntegrityError, match="already stored"):
        recorder.insert_events([event(uuid4(), 1), event(read, 1)])
    with pytest.raises(IntegrityError, match="'c1' already applied"):
        recorder.insert_events([event(uuid4(), 1)], **{COMMANDS: [command("c1")]})
    assert recorder.insert_events([event(uuid4(), 1)]) == [2]
    recorder.heads.signer = Signer(Ed25519PrivateKey.generate())
    assert recorder.insert_events([event(uuid4(), 1)]) == [3]  # signed from here on
    recorder.heads.signer = Signer(Ed25519PrivateKey.generate())  # another key
    with pytest.raises(KeyRequired):
        recorder.insert_events([event(uuid4(), 1)])
    recorder.heads.signer = None
    with pytest.raises(KeyRequired):
        recorder.insert_events([event(uuid4(), 1)])
    assert ids_stored(recorder) == [1, 2, 3]
    assert last_drawn(schema) == 3  # nothing refused drew an id from the sequence


def test_a_store_whose_tail_was_deleted_is_refused_without_drawing_an_id(schema: str) -> None:
    recorder = postgres_recorder(schema)
    recorder.insert_events([event(uuid4(), 1), event(uuid4(), 1)])
    with recorder.datastore.transaction(commit=True) as curs:
        curs.execute(f'DELETE FROM "{schema}".stored_events WHERE notification_id = 2')
    with pytest.raises(StoreTruncated):
        recorder.insert_events([event(uuid4(), 1)])
    assert ids_stored(recorder) == [1] and last_drawn(schema) == 2


def last_drawn(schema: str) -> int:
    """The last notification id the store's sequence handed out."""
    with psycopg.connect(POSTGRES_URL or "", autocommit=True) as conn:
        row = conn.execute(
            f'SELECT last_value FROM "{schema}".stored_events_notification_id_seq').fetchone()
    assert row is not None
    return int(row[0])


def test_two_writers_racing_for_the_same_aggregates_lose_nothing_and_leave_no_gap(
    schema: str
) -> None:
    """Two threads, each on its own connection, save the same 40 aggregates' first three
    versions (each with a command id of its own, so the loser is refused by the versions), and
    40 saves of their own: each contested save is won by
    exactly one, every won save is stored whole, the ids are 1..N with no gap, and each head
    row is the chain over the log up to it."""
    recorder = postgres_recorder(schema, pool_size=3)
    contested = [uuid4() for _ in range(40)]
    won: dict[str, list[tuple[Any, list[int]]]] = {"a": [], "b": []}
    lost: dict[str, int] = {"a": 0, "b": 0}
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def write(name: str) -> None:
        try:
            start.wait()
            for n, aggregate in enumerate(contested):
                contested_save = [event(aggregate, v) for v in (1, 2, 3)]
                own = [event(uuid4(), 1), event(uuid4(), 1)]
                for batch, client_id in ((contested_save, f"{name}-c{n}"), (own, f"{name}-{n}")):
                    try:
                        ids = recorder.insert_events(batch, **{COMMANDS: [
                            command(client_id, len(batch))]})
                    except IntegrityError:
                        lost[name] += 1
                        continue
                    won[name].append((batch, list(ids)))
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=write, args=(name,)) for name in won]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    saves = won["a"] + won["b"]
    assert len(saves) == 40 + 80 and lost["a"] + lost["b"] == 40  # each contested save once
    stored = recorder.select_notifications(None, 10_000)
    assert [n.id for n in stored] == list(range(1, 3 * 40 + 2 * 80 + 1))  # gapless
    by_id = {n.id: (n.originator_id, n.originator_version) for n in stored}
    for batch, ids in saves:  # every won save stored whole, at its ids
        assert ids == list(range(ids[0], ids[0] + len(batch)))
        assert [by_id[i] for i in ids] == [(e.originator_id, e.originator_version)
                                           for e in batch]
    with recorder.datastore.transaction(commit=False) as curs:
        curs.execute(f'SELECT count(*) AS n FROM "{schema}".rin_commands')
        assert curs.fetchone()["n"] == 40 + 80  # one row per won save
    rows = heads(recorder)
    assert [i for i, _ in rows] == sorted(ids[-1] for _, ids in saves)
    assert rows == list(zip([i for i, _ in rows], heads_over_log(recorder, schema, rows),
                            strict=True))


def heads_over_log(recorder: Any, schema: str, rows: list[tuple[int, str]]) -> list[str]:
    """The ledger-wide head at each of `rows`' ids, recomputed from the stored notifications
    and command rows (each command row folded right after its notification)."""
    with recorder.datastore.transaction(commit=False) as curs:
        curs.execute(f'SELECT notification_id, chain FROM "{schema}".rin_commands')
        chains = {row["notification_id"]: row["chain"] for row in curs.fetchall()}
    at = {i for i, _ in rows}
    head, out = GENESIS, []
    for notification in recorder.select_notifications(None, 10_000):
        head = fold(head, notification)
        if notification.id in chains:
            head = fold_command(head, notification.id, chains[notification.id])
        if notification.id in at:
            out.append(head)
    return out


def test_a_store_made_before_the_function_gets_it_when_opened(schema: str) -> None:
    """A store whose schema has the tables but not the function (as every store made before
    it): opening it creates the function, and saves go on after its events."""
    recorder = postgres_recorder(schema)
    recorder.insert_events([event(uuid4(), 1), event(uuid4(), 1)])
    with psycopg.connect(POSTGRES_URL or "", autocommit=True) as conn:
        conn.execute(f'DROP FUNCTION "{schema}".{NAME}')
    with pytest.raises(Exception, match=NAME):  # the old store, as it was: no function
        recorder.insert_events([event(uuid4(), 1)])
    reopened = postgres_recorder(schema)  # the set-up an application runs when it starts
    assert reopened.insert_events([event(uuid4(), 1)]) == [3]
    assert heads(reopened)[-1] == (3, log_head(reopened, 3))
