"""The PostgreSQL recorder's own saving transaction (ledger/infrastructure/postgres_recorder.py):
events stored in the order given with their ids returned in that order, every refusal storing
nothing (no event, no head row) and leaving the connection usable, and concurrent writers
getting notification ids in commit order, so a reader tailing the log never passes an id that
is filled in later (the library's promise, kept by its table lock)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any
from uuid import UUID, uuid4

import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent

from ledger.infrastructure.chain import GENESIS, fold
from ledger.infrastructure.heads import StoreTruncated
from ledger.infrastructure.read_check import UNCHANGED
from tests.integration.test_read_check import drop, needs_postgres, postgres_recorder

pytestmark = needs_postgres
WRITERS = 8


@pytest.fixture
def recorder() -> Iterator[Any]:
    """The ledger's recorder on a new schema, on one connection (each save reuses it)."""
    schema = f"test_{uuid4().hex[:12]}"
    yield postgres_recorder(schema)
    drop(schema)


@pytest.fixture
def shared() -> Iterator[Any]:
    """The same with a connection for each writer thread (the datastore's pool would otherwise
    hand one connection to one thread at a time)."""
    schema = f"test_{uuid4().hex[:12]}"
    yield postgres_recorder(schema, pool_size=WRITERS + 1)
    drop(schema)


def event(originator: UUID, version: int, state: bytes = b'{"n":1}') -> StoredEvent:
    return StoredEvent(originator_id=originator, originator_version=version, topic="t",
                       state=state)


def heads(recorder: Any) -> list[tuple[int, str]]:
    with recorder.datastore.transaction(commit=False) as curs:
        curs.execute(f"SELECT notification_id, hash FROM {recorder.heads.table} "
                     "ORDER BY notification_id")
        return [(row["notification_id"], row["hash"]) for row in curs.fetchall()]


def log_head(recorder: Any, upto: int) -> str:
    """The ledger-wide chain over the stored log up to `upto`, recomputed from its rows."""
    head = GENESIS
    for n in recorder.select_notifications(None, upto + 1, stop=upto):
        head = fold(head, n)
    return head


def test_a_batch_is_stored_in_the_order_given_and_its_ids_come_back_in_that_order(
    recorder: Any
) -> None:
    a, b, c = uuid4(), uuid4(), uuid4()
    batch = [event(a, 1), event(b, 1), event(a, 2), event(c, 1), event(b, 2), event(a, 3)]
    first = recorder.insert_events(batch[:2])
    ids = recorder.insert_events(batch[2:])
    assert list(first) == [1, 2] and list(ids) == [3, 4, 5, 6]
    stored = recorder.select_notifications(None, 10)
    assert [(n.id, n.originator_id, n.originator_version) for n in stored] == [
        (i, e.originator_id, e.originator_version) for i, e in enumerate(batch, start=1)]
    # one head row per transaction, each the chain over the log up to it
    assert heads(recorder) == [(2, log_head(recorder, 2)), (6, log_head(recorder, 6))]


def test_every_refusal_stores_nothing_and_the_next_save_goes_on(recorder: Any) -> None:
    """Refused in Python (a read moved) or by the server (a version already stored): the
    transaction is rolled back, and the same connection (the pool has one) stores the next."""
    read, other = uuid4(), uuid4()
    recorder.insert_events([event(read, 1)])
    before = heads(recorder)
    with pytest.raises(IntegrityError):  # a read that moved (§80.1431(b) write skew)
        recorder.insert_events([event(other, 1)], **{UNCHANGED: {read: 0}})
    with pytest.raises(IntegrityError):  # a version already stored
        recorder.insert_events([event(other, 1), event(read, 1)])
    assert recorder.select_events(other) == []
    assert heads(recorder) == before and recorder.max_notification_id() == 1
    ids = recorder.insert_events([event(other, 1)], **{UNCHANGED: {read: 1}})
    assert len(ids) == 1 and heads(recorder)[-1] == (ids[0], log_head(recorder, ids[0]))


def test_a_read_check_of_more_ids_than_one_query_takes_checks_them_all(recorder: Any) -> None:
    """The versions read are checked 500 ids a statement; a moved one in a later chunk counts."""
    moved = uuid4()
    recorder.insert_events([event(moved, 1)])
    unchanged = {uuid4(): 0 for _ in range(1_200)}
    unchanged[moved] = 0  # last: in the third chunk
    with pytest.raises(IntegrityError, match=str(moved)):
        recorder.insert_events([event(uuid4(), 1)], **{UNCHANGED: unchanged})
    unchanged[moved] = 1
    assert recorder.insert_events([event(uuid4(), 1)], **{UNCHANGED: unchanged}) == [2]


def test_a_store_whose_tail_was_deleted_refuses_writes(recorder: Any) -> None:
    recorder.insert_events([event(uuid4(), 1), event(uuid4(), 1)])
    with recorder.datastore.transaction(commit=True) as curs:
        curs.execute(f'DELETE FROM "{recorder.datastore.schema}".stored_events '
                     "WHERE notification_id = 2")
    with pytest.raises(StoreTruncated):
        recorder.insert_events([event(uuid4(), 1)])
    assert recorder.max_notification_id() == 1


def test_events_stored_without_head_rows_are_folded_into_the_next_head(recorder: Any) -> None:
    """A store begun by release 1 has events and no head rows: the first head covers them."""
    recorder.insert_events([event(uuid4(), 1)])
    with recorder.datastore.transaction(commit=True) as curs:
        curs.execute(f"DELETE FROM {recorder.heads.table}")
    ids = recorder.insert_events([event(uuid4(), 1)])
    assert heads(recorder) == [(ids[0], log_head(recorder, ids[0]))]


def test_concurrent_writers_get_ids_in_commit_order(shared: Any) -> None:
    """Eight threads save batches at once while a reader tails the log: each batch's ids are
    consecutive, the reader sees every id (none filled in behind it), and each head row is
    the chain over the log up to it."""
    writers, saves, size = WRITERS, 15, 20
    recorder = shared
    results: list[list[int]] = []
    errors: list[BaseException] = []
    seen: list[int] = []
    done = threading.Event()

    def write() -> None:
        try:
            for _ in range(saves):
                originator = uuid4()
                results.append(list(recorder.insert_events(
                    [event(originator, v) for v in range(1, size + 1)])))
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    def read() -> None:
        last = 0
        while True:
            finished = done.is_set()
            page = recorder.select_notifications(last, 100, inclusive_of_start=False)
            seen.extend(n.id for n in page)
            last = page[-1].id if page else last
            if finished and not page:
                return

    reader = threading.Thread(target=read)
    reader.start()
    threads = [threading.Thread(target=write) for _ in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    reader.join()
    assert not errors
    assert all(ids == list(range(ids[0], ids[0] + size)) for ids in results)
    everything = sorted(i for ids in results for i in ids)
    assert everything == list(range(1, writers * saves * size + 1))
    assert seen == everything  # a reader following the log missed nothing
    rows = heads(recorder)
    assert [i for i, _ in rows] == sorted(ids[-1] for ids in results)
    head, position = GENESIS, 0
    for notification in recorder.select_notifications(None, len(everything) + 1):
        head, position = fold(head, notification), notification.id
        if rows and rows[0][0] == position:
            assert rows.pop(0)[1] == head
    assert rows == []
