"""The eventsourcing application that stores the ledger's events (and, in stores begun before
issue 15, CommandRecord events; since then command records are rows of their own table)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar
from uuid import UUID

import orjson
from eventsourcing.application import AggregateNotFoundError, Application, Repository
from eventsourcing.persistence import (
    ApplicationRecorder,
    EventStore,
    InternalError,
    JSONTranscoder,
    Recording,
    StoredEvent,
)

from ledger.domain.party import Party
from ledger.infrastructure.collector import tune_collector
from ledger.infrastructure.command_records import CommandRecord, RecordIds, record_ids_of
from ledger.infrastructure.command_table import COMMANDS, Applied, CommandRow, has_rows, stored_row
from ledger.infrastructure.pending_postings import PendingPostings
from ledger.infrastructure.postgres_setup import setup_lock
from ledger.infrastructure.read_check import UNCHANGED
from ledger.infrastructure.repository import LedgerRepository
from ledger.infrastructure.retry import RETRY
from ledger.infrastructure.save_outcome import Outcome, Outcomes, SettledReads
from ledger.infrastructure.settings import APPLICATION
from ledger.infrastructure.snapshot_in_save import SNAPSHOTS, DueSnapshots, SnapshotsLostTheSave
from ledger.infrastructure.snapshot_seal import SealedSnapshots, SealingMapper
from ledger.infrastructure.sqlite_files import refuse_database_problem
from ledger.infrastructure.transcodings import register_transcodings

logger = logging.getLogger(__name__)


class LedgerApp(Application[UUID]):
    """Event store, notification log and snapshots for the ledger's aggregates."""

    name = APPLICATION
    snapshotting_intervals: ClassVar = {Party: 60}
    snapshots_failed = 0  # snapshots not stored with their events (a cache: events kept)

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        tune_collector()  # ledger/infrastructure/collector.py
        super().__init__(env=env)
        self._record_ids: RecordIds | None = None
        self._in_table: bool | None = None
        #: the pending EMTS postings, read from the store's table once, then only what is new
        self.pending_postings = PendingPostings(self.recorder)

    def record_id(self, client_id: str) -> UUID:
        """The id of the command record of `client_id` by this store's scheme, a property of
        its format (ledger/infrastructure/command_records.py) read from the store once, at first
        use."""
        if self._record_ids is None:
            self._record_ids = record_ids_of(*first_record(self.recorder))
        return self._record_ids(client_id)

    def records_in_table(self) -> bool:
        """Whether this store keeps its command records as rows of `rin_commands`
        (ledger/infrastructure/command_table.py) rather than as `CommandRecord` events: a
        property of its format, read once, at first use. A store holding a row, or holding no
        `CommandRecord` event, is of the table's format; one holding such events (made before
        issue 15) keeps writing them, so each store has one kind of record."""
        if self._in_table is None:
            self._in_table = has_rows(self.recorder) or first_record(self.recorder)[0] is None
        return self._in_table

    def stored_command(self, client_id: str) -> CommandRow | CommandRecord | None:
        """The record of the command with this client id, in either format; None if no
        command with that id was applied."""
        if self.records_in_table():
            return stored_row(self.recorder, client_id)
        try:
            record: CommandRecord = self.repository.get(self.record_id(client_id))
        except AggregateNotFoundError:
            return None
        return record

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        super().register_transcodings(transcoder)
        register_transcodings(transcoder)

    def construct_mapper(self) -> SealingMapper:
        """Events are hash-chained per aggregate for tamper evidence
        (ledger/infrastructure/chain.py), and snapshots sealed to that chain
        (ledger/infrastructure/snapshot_seal.py)."""
        return SealingMapper(
            self.construct_transcoder(), lambda: self.recorder,
            final_topics=(CommandRecord.Applied.TOPIC,),
        )

    def construct_repository(self) -> Repository[UUID]:
        """The library's repository, replaying without a protocol check per event
        (ledger/infrastructure/repository.py)."""
        return LedgerRepository.like(super().construct_repository())

    def construct_snapshot_store(self) -> EventStore[Any]:
        """Only snapshots whose seal holds are loaded; the others are replayed past."""
        return SealedSnapshots(super().construct_snapshot_store(), self.mapper)  # type: ignore[arg-type]

    def save_in_order(
        self, events: list[Any], aggregates: list[Any], unchanged: dict[UUID, int],
        commands: list[Applied] | None = None,
    ) -> list[Recording[UUID]]:
        """Save `events` in this order in one transaction; `aggregates` are those the events
        came from, for the repository's cache and snapshots; the save fails as a conflict unless
        each aggregate of `unchanged` is still at the version given
        (ledger/infrastructure/read_check.py). Built on the public `EventStore.put`, `Cache.put`
        and snapshot store rather than `Application.save`, which groups events by aggregate,
        checks each object against the library's runtime protocols (costlier than storing it)
        and snapshots by replaying the aggregate from the store. `commands`: the rows of
        `rin_commands` stored in the same transaction; so are the snapshots due
        (ledger/infrastructure/snapshot_in_save.py)."""
        self.begin_save()
        due = self.due_snapshots(events, aggregates)
        try:
            recordings = self._put(events, unchanged, commands, due)
        except SnapshotsLostTheSave as error:  # nothing stored: again, without the snapshots
            self.snapshot_failed(error)
            recordings = self._put(events, unchanged, commands, None)
        else:
            if due is not None and due.failure is not None:
                self.snapshot_failed(due.failure)
        self.pending_postings.saved(events, [r.notification.id for r in recordings])
        cache = self.repository.cache
        if cache is not None and not self.repository.fastforward:
            for aggregate in aggregates:
                cache.put(aggregate.id, aggregate)
        return recordings

    def begin_save(self) -> None:
        """Nothing of the save about to be made is stored yet (`save_outcome`)."""
        if isinstance(self.recorder, Outcomes):
            self.recorder.outcome = Outcome.NOT_STORED

    def save_outcome(self) -> Outcome:
        """What the last save, if it raised, left in the store, as the recorder knows it
        (ledger/infrastructure/save_outcome.py)."""
        return self.recorder.outcome if isinstance(self.recorder, Outcomes) else Outcome.UNKNOWN

    def read_back(self, originator_id: UUID, version: int) -> list[StoredEvent]:
        """The aggregate's stored event at `version`, once no other save is committing: what a
        save whose outcome is unknown is checked against."""
        if isinstance(self.recorder, SettledReads):
            return self.recorder.stored_at(originator_id, version)
        return list(self.recorder.select_events(originator_id, gt=version - 1, lte=version))

    def _put(self, events: list[Any], unchanged: dict[UUID, int],
             commands: list[Applied] | None, due: DueSnapshots | None) -> list[Recording[UUID]]:
        try:
            return self.events.put(events, **{UNCHANGED: unchanged, COMMANDS: commands or [],
                                              SNAPSHOTS: due})
        except BaseException:  # the mapper forgets the chains of the events not stored
            self.mapper.forget(events)  # type: ignore[attr-defined]
            raise

    def forget_pending(self) -> None:
        """Read the pending postings from the store again at the next expiry."""
        self.pending_postings = PendingPostings(self.recorder)

    def snapshot_failed(self, error: Exception) -> None:
        """A snapshot was not stored: a cache, so the events were and the command stands."""
        self.snapshots_failed += 1
        logger.warning("snapshot not stored (%s): its aggregate replays without it", error)

    def due_snapshots(self, events: list[Any], aggregates: list[Any]) -> DueSnapshots | None:
        """The snapshot, from memory, of each aggregate whose save crosses a multiple of its
        interval, to be stored with the events (None: none is due, or taking one failed).

        The snapshot is taken at the aggregate's version after the save (a snapshot is a cache
        of state at any version); the aggregate in hand is exactly what a replay of the store
        would give once the events are stored, so nothing is read back (the library replays).
        """
        if self.snapshots is None:
            return None
        by_id = {aggregate.id: aggregate for aggregate in aggregates}
        crossed: dict[Any, Any] = {}
        for event in events:
            aggregate = by_id.get(event.originator_id)
            interval = self.snapshotting_intervals.get(type(aggregate))  # type: ignore[arg-type]
            if interval and event.originator_version % interval == 0:
                crossed[event.originator_id] = aggregate
        if not crossed:
            return None
        try:
            taken = [
                getattr(type(aggregate), "Snapshot", type(self).snapshot_class).take(aggregate)  # type: ignore[union-attr]
                for aggregate in crossed.values()
            ]
        except Exception as error:  # a cache: the events are saved without it
            self.snapshot_failed(error)
            return None
        return DueSnapshots(taken, self.mapper, snapshot_table(self.snapshots.recorder))


def snapshot_table(recorder: Any) -> str:
    """The snapshot recorder's table, qualified by its schema on PostgreSQL."""
    schema = getattr(recorder.datastore, "schema", None)
    return f'"{schema}"."{recorder.events_table_name}"' if schema else recorder.events_table_name


def first_record(recorder: ApplicationRecorder) -> tuple[str | None, UUID | None]:
    """The client id and id of the store's first command record (None, None: it has none)."""
    first = recorder.select_notifications(None, 1, topics=[CommandRecord.Applied.TOPIC])
    if not first:
        return None, None
    return str(orjson.loads(first[0].state)["client_id"]), UUID(str(first[0].originator_id))


def open_app(env: dict[str, Any]) -> LedgerApp:
    """The application on its store, its tables created by one process at a time
    (ledger/infrastructure/postgres_setup.py). PostgreSQL refuses a `CREATE OR REPLACE FUNCTION` of
    the library's table set-up run by two processes at once ("tuple concurrently updated"), which a
    process not taking the lock (an older release) can still cause: retry."""
    dbname = env.get("SQLITE_DBNAME", ":memory:")
    if env.get("PERSISTENCE_MODULE") != "eventsourcing.postgres" and not (
            dbname == ":memory:" or dbname.startswith("file:")):
        refuse_database_problem(dbname)  # before SQLite writes through a link, or replays
    attempt = 0
    while True:
        try:
            with setup_lock(LedgerApp.name, env):
                return LedgerApp(env=env)
        except InternalError as error:
            if "concurrently updated" not in str(error) or RETRY.last(attempt):
                raise
            RETRY.pause(attempt)
            attempt += 1
