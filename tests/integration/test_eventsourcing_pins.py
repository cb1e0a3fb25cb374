"""Pins on eventsourcing 9.5.6: the version itself, and each behaviour of it the ledger relies
on beyond the documented API (ledger/infrastructure/eventsourcing_adapter.py) or in a way a
release could change (the public calls `LedgerApp.save_in_order` and `Ledger._forget` make).
Each test fails if that behaviour changes, before the ledger silently breaks."""

from __future__ import annotations

import inspect
import tomllib
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from eventsourcing.application import Cache, LRUCache
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import (
    DatetimeAsISO,
    EventStore,
    IntegrityError,
    JSONTranscoder,
    Mapper,
    StoredEvent,
    Tracking,
    UUIDAsHex,
)
from eventsourcing.sqlite import (
    SQLiteApplicationRecorder,
    SQLiteConnectionPool,
    SQLiteCursor,
    SQLiteDatastore,
    SQLiteTrackingRecorder,
)

from ledger.infrastructure.command_table import COMMANDS
from ledger.infrastructure.eventsourcing_adapter import (
    ConnectionPragmas,
    SQLiteSaveHook,
    TrackingInTransaction,
)
from ledger.infrastructure.read_check import UNCHANGED

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_eventsourcing_is_9_5_6_installed_and_pinned() -> None:
    assert version("eventsourcing") == "9.5.6"
    dependencies = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    assert "eventsourcing==9.5.6" in dependencies


def event(n: int = 1) -> StoredEvent:
    return StoredEvent(originator_id=uuid4(), originator_version=n, topic="t", state=b"{}")


class Probe(SQLiteSaveHook, SQLiteApplicationRecorder):
    """Records what the hook was given; inserts through the library's own statement."""

    seen: list[Any]
    rows_seen: list[Any]
    refuse = False

    def insert_in_transaction(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], unchanged: Any,
        commands: Sequence[Any] = (), snapshots: Any = None,
    ) -> Sequence[int] | None:
        self.seen.append(unchanged)
        self.rows_seen.append(list(commands))
        ids = SQLiteApplicationRecorder._insert_events(self, c, stored_events)
        if self.refuse:
            raise IntegrityError("refused inside the transaction")
        return [i + 1000 for i in ids or []]


def probe(tmp_path: Path) -> Probe:
    recorder = Probe(SQLiteDatastore(str(tmp_path / "pins.sqlite")))
    recorder.create_table()
    recorder.seen = []
    recorder.rows_seen = []
    return recorder


def test_sqlite_insert_events_hands_the_hook_its_kwargs_and_returns_its_ids(
    tmp_path: Path
) -> None:
    recorder = probe(tmp_path)
    ids = recorder.insert_events([event(), event()], **{UNCHANGED: {"x": 1}, COMMANDS: ["r"]})
    assert recorder.seen == [{"x": 1}]  # the read check's versions reach the hook
    assert recorder.rows_seen == [["r"]]  # and the transaction's command rows
    assert ids == [1001, 1002]  # what the hook returns is what insert_events returns
    assert recorder.max_notification_id() == 2


def test_sqlite_a_hook_that_raises_rolls_the_events_back(tmp_path: Path) -> None:
    recorder = probe(tmp_path)
    recorder.insert_events([event()])
    recorder.refuse = True
    with pytest.raises(IntegrityError):
        recorder.insert_events([event(), event()])
    assert recorder.max_notification_id() == 1  # the hook ran inside the write transaction


def test_sqlite_hook_signature() -> None:
    assert list(inspect.signature(SQLiteApplicationRecorder._insert_events).parameters) == [
        "self", "c", "stored_events", "_"]


def test_postgres_recorder_statements_the_ledger_reuses() -> None:
    """ledger/infrastructure/postgres_recorder.py writes its own saving transaction with the
    library's public statements: the lock timeout and the EXCLUSIVE table lock that serializes
    writers (ids issued in commit order), the last notification id, and the events table with
    its bigserial notification id that its INSERT fills."""
    postgres = pytest.importorskip("eventsourcing.postgres")
    source = inspect.getsource(postgres.PostgresApplicationRecorder.__init__)
    lock = source.index("self.lock_table_statements = [")
    assert source.index('"SET LOCAL lock_timeout', lock) < source.index(
        '"LOCK TABLE {0}.{1} IN EXCLUSIVE MODE"', lock)
    assert '"SELECT MAX(notification_id) FROM {schema}.{table}"' in source
    assert '"notification_id bigserial, "' in source
    assert 'self.channel_name = self.events_table_name.replace(".", "_")' in source


class Fake:
    """A recorder that keeps what `insert_events` was called with."""

    def __init__(self) -> None:
        self.kwargs: dict[str, Any] = {}

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> list[int]:
        self.kwargs = kwargs
        return list(range(1, len(stored_events) + 1))


def test_event_store_put_passes_keywords_to_the_recorder() -> None:
    """`save_in_order` hands the read check's versions to the recorder this way."""
    class Thing(Aggregate):
        pass

    transcoder = JSONTranscoder()
    for transcoding in (UUIDAsHex(), DatetimeAsISO()):
        transcoder.register(transcoding)
    fake = Fake()
    store: EventStore[Any] = EventStore(Mapper(transcoder), fake)  # type: ignore[arg-type]
    thing = Thing()
    recordings = store.put(thing.collect_events(), **{UNCHANGED: {"a": 3}})
    assert fake.kwargs == {UNCHANGED: {"a": 3}}
    assert [r.notification.id for r in recordings] == [1]


@pytest.mark.parametrize("cache", [Cache(), LRUCache(maxsize=10)])
def test_cache_get_with_evict_removes_the_entry(cache: Cache[str, object]) -> None:
    """`Ledger._forget` drops a failed unit's aggregates from the repository's cache so."""
    value = object()
    cache.put("a", value)
    assert cache.get("a", evict=True) is value
    with pytest.raises(KeyError):
        cache.get("a")
    with pytest.raises(KeyError):
        cache.get("a", evict=True)


class PragmaPool(ConnectionPragmas, SQLiteConnectionPool):
    PRAGMAS = ("user_version = 7",)


def test_sqlite_pool_makes_every_connection_by_create_connection(tmp_path: Path) -> None:
    """The views' PRAGMAs hold on each connection of the pool (projections/tracking.py)."""
    datastore = SQLiteDatastore(str(tmp_path / "v.sqlite"))
    datastore.pool = PragmaPool(db_name=str(tmp_path / "v.sqlite"))
    with datastore.transaction(commit=False) as c:
        c.execute("PRAGMA user_version")
        assert c.fetchone()[0] == 7
    assert inspect.signature(SQLiteConnectionPool._create_connection).parameters.keys() == {"self"}


class Tracker(TrackingInTransaction, SQLiteTrackingRecorder):
    pass


def test_sqlite_tracking_is_written_on_the_callers_transaction(tmp_path: Path) -> None:
    """`_insert_tracking(c, tracking)` writes on the caller's cursor: the record commits with the
    caller's rows, goes with a rollback, and a position not above the last is refused."""
    recorder = Tracker(SQLiteDatastore(str(tmp_path / "t.sqlite")))
    recorder.create_table()
    with recorder.datastore.transaction(commit=True) as c:
        recorder.insert_tracking_in(c, Tracking("app", 5))
    assert recorder.max_tracking_id("app") == 5
    with pytest.raises(RuntimeError), recorder.datastore.transaction(commit=True) as c:
        recorder.insert_tracking_in(c, Tracking("app", 9))
        raise RuntimeError("the caller's rows failed")
    assert recorder.max_tracking_id("app") == 5
    with pytest.raises(IntegrityError), recorder.datastore.transaction(commit=True) as c:
        recorder.insert_tracking_in(c, Tracking("app", 5))
    assert recorder.max_tracking_id("app") == 5
