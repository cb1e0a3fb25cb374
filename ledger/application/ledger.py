"""`Ledger`: the library API — open a store, apply commands singly or in batches, ask questions."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from datetime import date
from pathlib import Path
from typing import Any
from uuid import UUID

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError, PersistenceError, Recording

from ledger.application import arguments
from ledger.application.api_errors import UnknownParty
from ledger.application.command_input import CommandInput, parse_command
from ledger.application.event_log import EventLog, LoggedEvent
from ledger.application.follow import follow
from ledger.application.handlers import handle
from ledger.application.held_blocks import block_rows
from ledger.application.positions import Positions
from ledger.application.results import Result as Result  # re-exported: `ledger.Result`
from ledger.application.results import rejected
from ledger.application.rows import HeldBlock, Holding
from ledger.application.store_failures import (
    CommitUnknown,
    InternalFault,
    StoreError,
    WriteConflict,
)
from ledger.application.unit_of_work import UnitOfWork
from ledger.domain.batch_status import BatchStatus
from ledger.domain.errors import LedgerError
from ledger.domain.party import Party
from ledger.domain.rin import BatchId
from ledger.infrastructure.audit import Follower, audit, stored_heads
from ledger.infrastructure.batch_status_index import BatchStatusIndex
from ledger.infrastructure.chain import chain_head
from ledger.infrastructure.event_store import open_app
from ledger.infrastructure.head_file import KeySource, heed_head_file, keep_head, use_key
from ledger.infrastructure.heads import Head
from ledger.infrastructure.invalidation_index import InvalidationIndex
from ledger.infrastructure.retry import RETRY
from ledger.infrastructure.save_outcome import Outcome
from ledger.infrastructure.settings import store_env, store_folder
from ledger.infrastructure.settings import trade_window as trade_window_setting
from ledger.infrastructure.signing import KeyProblem, StoreRefused
from ledger.infrastructure.writer_turn import turn_of

CACHE_SIZE = 20_000  # aggregates kept in memory between commands (a party is a few KB)
#: how a failing store shows itself: the library's errors (it wraps sqlite3's and psycopg's
#: in most places), sqlite3's where it does not, and the operating system's (disk, files)
logger = logging.getLogger(__name__)

STORE_FAILURES = (PersistenceError, sqlite3.Error, OSError)

#: a failed save that is the store's, or its refusal (a key required, a truncated store)
SAVE_REFUSALS = (*STORE_FAILURES, StoreRefused, KeyProblem)


class HistoryUnreplayable(PersistenceError):
    """A command's aggregates could not be loaded or replayed: the store holds events the
    ledger cannot read back (edited outside it), or the ledger itself is at fault."""


def unreplayable(error: Exception) -> Exception:
    """What to raise for an error that is neither a refusal nor a store failure: a store
    failure naming it (exit 3 on the command line, never a traceback)."""
    if isinstance(error, STORE_FAILURES):
        return error
    return HistoryUnreplayable(
        "a command's aggregates could not be replayed: the stored history may have been "
        f"changed outside the ledger; run `rin verify` ({type(error).__name__}: "
        f"{str(error)[:80]})"
    )




class Ledger:
    """The RIN ledger over one event store (a SQLite file by default, PostgreSQL by URL).

    Threads may share one Ledger: each call holds its lock (one batch at a time for
    `apply_many`), so its writes and in-memory caches are used by one thread at a time and
    threads sharing it write one after another. For writers in parallel, open one Ledger per
    thread or process: the store's version check arbitrates between them.
    """

    def __init__(
        self, data: str | os.PathLike[str] | None = None, *, store: str | None = None,
        env: dict[str, str] | None = None, key: KeySource = None,
        trade_window: int | None = None,
    ) -> None:
        """`key`: the Ed25519 private key (a PEM file or a key) that signs each transaction's
        head (ledger/infrastructure/heads.py); a store once signed refuses writes without it.
        `trade_window`: business days a posting waits before it expires (default 10)."""
        self._trade_window = trade_window_setting(trade_window, env)
        try:
            self._app = open_app({**store_env(data, store), **(env or {})})
            self.signer = use_key(self._app, key)
            heed_head_file(self._app)  # a store behind its head.json writes nothing
        except STORE_FAILURES as error:
            raise StoreError(str(error), None) from error
        self._lock = threading.RLock()  # held by every call (see the class docstring)
        #: conflicts met and retried: saves refused by the store's version check (another
        #: writer first, or a batch with an id already applied) and reads torn by another writer
        self.retries = 0
        #: The caches, each of something different: (1) the repository's (the library's LRU,
        #: AGGREGATE_CACHE_MAXSIZE in ledger/infrastructure/settings.py) keeps aggregates and
        #: fast-forwards them from the store on each load; (2) this one says which of those same
        #: objects (no copies) this ledger saved last, valid while the store's last notification
        #: id is `_cached_at` (nobody else has written since), so they are used without that
        #: store read; (3) `_opened` below, the batches found invalid; (4) the chain mapper's
        #: last chain per aggregate (ledger/infrastructure/chain.py).
        self._cache: dict[UUID, Any] = {}
        self._cached_at: int | None = None
        #: the batches found invalid (§80.1431), read from the log once and then only what is
        #: new: the one cache of that question (ledger/infrastructure/invalidation_index.py)
        self._opened = InvalidationIndex(self._app.recorder)
        #: the same for the batches with a QAP status or lock (§80.1471(e), §80.1474(b)(1))
        self._statuses = BatchStatusIndex(self._app.recorder)
        #: the read port over the notification log (ledger/application/event_log.py)
        self.log = EventLog(self._app)

    def _cache_for(self, position: int) -> dict[UUID, Any]:
        """The in-memory aggregates, emptied if anything was stored since they were saved."""
        if position != self._cached_at:
            self._forget()
            self._cached_at = position
        return self._cache

    def _forget(self, uow: UnitOfWork | None = None) -> None:
        """Drop the in-memory aggregates: a command or save failed, or another writer saved.

        The repository's cache holds the same objects (loaded without a copy, so each aggregate
        is in memory once); those of a failed `uow` may carry events never stored, so they go
        too. The others are as last saved, and the repository fast-forwards them on next use.
        """
        self._cache.clear()
        self._cached_at = None
        cache = self._app.repository.cache
        if uow is not None and cache is not None:
            for aggregate in uow.aggregates():
                with suppress(KeyError):
                    cache.get(aggregate.id, evict=True)

    def _warm(self, read: list[UUID]) -> None:
        """Before a retry's reads begin, load again what the attempt before read, and bring the
        indexes up to now: a writer that lost to another then reads in its window (from its
        first read to its save) one cache hit per aggregate, not a replay from the store, so
        that it does not keep losing to a writer whose reads are all in memory."""
        if not read:
            return
        with suppress(Exception):  # a failure here is met, and judged, by the attempt itself
            now = self.position()
            self._opened.up_to(now)
            self._statuses.up_to(now)
            for aggregate_id in read:
                self._app.repository.get(aggregate_id, deepcopy_from_cache=False)

    @contextmanager
    def _interruptible(self) -> Iterator[None]:
        """A line stopped by KeyboardInterrupt or SystemExit (a REPL, a service that catches
        them and goes on) leaves nothing of its own in memory: its aggregates had taken
        versions never stored, and the next line was stored after a gap (helper-69)."""
        try:
            yield
        except Exception:
            raise
        except BaseException:
            self._drop_memory()
            raise

    def _drop_memory(self) -> None:
        """Forget everything kept in memory between commands (this ledger's aggregates, the
        repository's, the indexes of opened records), so the next attempt reads the store alone:
        a command that fails on consistent reads is retried so before the stored history is
        suspected, in case memory, not the store, held what could not be replayed."""
        self._forget()
        cache = self._app.repository.cache
        if cache is not None:
            for aggregate_id in list(cache.cache):
                with suppress(KeyError):
                    cache.get(aggregate_id, evict=True)
        self._opened = InvalidationIndex(self._app.recorder)
        self._statuses = BatchStatusIndex(self._app.recorder)
        self._app.forget_pending()

    def _saved(self, uow: UnitOfWork, recordings: list[Recording[UUID]], position: int) -> None:
        """After a commit: keep the saved aggregates in memory if this save came straight after
        `position`. The lines are committed, so a failure here must not report them failed:
        memory is dropped instead and read again from the store."""
        try:
            self._keep(uow, recordings, position)
        except Exception as error:
            logger.warning("memory dropped after a committed save (%s): read from the store",
                           error)
            self._drop_memory()

    def _keep(self, uow: UnitOfWork, recordings: list[Recording[UUID]], position: int) -> None:
        if not recordings:
            return
        keep_head(self._app)
        ids = [recording.notification.id for recording in recordings]
        if ids != list(range(position + 1, position + 1 + len(ids))):
            self._forget()  # another writer's events are interleaved: reload from the store
            return
        if len(self._cache) > CACHE_SIZE:
            self._cache.clear()
        for aggregate in uow.reusable():  # command records are never loaded again
            self._cache[aggregate.id] = aggregate
        self._cached_at = ids[-1]
        self._opened.saved(uow.events, position, ids[-1])
        self._statuses.saved(uow.events, position, ids[-1])

    def close(self) -> None:
        with self._lock:
            self._app.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def apply(self, command: CommandInput, line: int = 1) -> Result:
        """Validate and apply one command atomically; a refusal stores nothing.

        Raises `StoreError` if the store fails (then nothing of the line was stored).
        """
        try:
            with self._lock, self._interruptible():
                return self._apply(command, line)
        except STORE_FAILURES as error:
            raise StoreError.of(error, None) from error

    def _apply(self, command: CommandInput, line: int) -> Result:
        try:
            parsed = parse_command(command)
        except LedgerError as error:
            return rejected(line, error)
        fresh = False  # whether this line was already tried again on a fresh load
        read: list[UUID] = []  # the aggregates the attempt before read
        with ExitStack() as turn:  # the writers' turn, once taken, until the line is done
            for attempt in RETRY.tries():
                if attempt == RETRY.exclusive_after:  # lost that often: this try cannot
                    turn.enter_context(turn_of(self._app.recorder))
                self._warm(read)
                position = self.position()
                uow = UnitOfWork(  # the command id is looked up only if the first save fails
                    self._app, optimistic=attempt == 0, cache=self._cache_for(position),
                    opened=self._opened.up_to(position), trade_window=self._trade_window,
                    statuses_opened=self._statuses.up_to(position),
                )
                try:
                    outcome = handle(uow, parsed)
                except Exception as error:
                    read = uow.read_ids()
                    self._forget(uow)
                    # Another writer saved while this command read its aggregates: what it read may
                    # be torn (one aggregate before that save, another after), so read again; a
                    # line torn on every attempt lost to other writers, it was not tampered with.
                    if self.position() != position:
                        if RETRY.last(attempt):
                            return rejected(line, WriteConflict(RETRY.attempts))
                        self.retries += 1
                        RETRY.pause(attempt)
                        continue
                    if isinstance(error, LedgerError):
                        return rejected(line, error)
                    if not fresh and not RETRY.last(attempt):  # the reads were consistent:
                        # rule out anything kept in memory before suspecting the store
                        fresh = True
                        self._drop_memory()
                        continue
                    raise unreplayable(error) from error
                result = Result(line, outcome.status, rin=outcome.rin, rins=outcome.rins)
                try:
                    recordings = self._save(uow)
                except IntegrityError:
                    read = uow.read_ids()
                    if self._landed(uow, line, line):
                        return result
                    self.retries += 1
                    RETRY.pause(attempt)
                    continue  # another writer got there first: reload, re-check, retry
                except Exception as error:
                    if self._landed(uow, line, line):
                        return result
                    if isinstance(error, SAVE_REFUSALS):
                        raise
                    raise InternalFault(error) from error  # not the store's: the ledger's fault
                self._saved(uow, recordings, position)
                return result
            return rejected(line, WriteConflict(RETRY.attempts))

    def apply_many(
        self, commands: Iterable[CommandInput], *, batch_size: int = 200, first_line: int = 1
    ) -> Iterator[Result]:
        """Apply commands in order, each atomic, saving up to `batch_size` per transaction.

        Results are yielded once their transaction is committed. If a batch's save conflicts
        with another writer, that batch is applied again one command at a time. If the store
        fails, every line committed before is yielded first, then `StoreError` names the last
        (so does KeyboardInterrupt: the lines committed are yielded, then it is raised). A
        caller that stops iterating early has up to `batch_size` lines committed whose results
        it did not take: a batch commits before its first result is yielded.
        """
        batch: list[tuple[int, CommandInput]] = []
        last: int | None = None  # the last line whose result was yielded
        for number, command in enumerate(commands, start=first_line):
            batch.append((number, command))
            if len(batch) >= batch_size:
                for result in self._committed(batch, last):
                    last = result.line
                    yield result
                batch = []
        yield from self._committed(batch, last)

    def _committed(
        self, batch: list[tuple[int, CommandInput]], last: int | None
    ) -> Iterator[Result]:
        """The results of `batch`, every one committed; if anything fails part-way, those
        committed before the failure are still yielded, then the failure is raised."""
        done: list[Result] = []
        try:
            with self._lock, self._interruptible():
                self._apply_batch(batch, done)
        except Exception as error:
            yield from done
            if isinstance(error, STORE_FAILURES):
                raise StoreError.of(error, done[-1].line if done else last) from error
            raise
        except KeyboardInterrupt:  # the lines committed before it are reported all the same
            yield from done
            raise
        yield from done

    def _apply_batch(self, batch: list[tuple[int, CommandInput]], done: list[Result]) -> None:
        """Apply `batch` in one transaction, appending each line's result to `done` once it is
        committed; on a conflict, one line at a time (each appended as it commits)."""
        if not batch:
            return
        position = self.position()
        uow = UnitOfWork(
            self._app, optimistic=True, cache=self._cache_for(position),
            opened=self._opened.up_to(position), trade_window=self._trade_window,
            statuses_opened=self._statuses.up_to(position),
        )
        results = []
        for number, command in batch:
            try:
                outcome = handle(uow, parse_command(command))
                uow.collect()
            except Exception as error:
                torn = self.position() != position  # a read torn by another writer's save
                if torn or not isinstance(error, LedgerError):
                    # one line at a time, each read again (and a failure on a fresh load)
                    # before anything is called unreplayable
                    self._forget(uow)
                    self.retries += torn
                    self._one_at_a_time(batch, done)
                    return
                results.append(rejected(number, error))
                continue
            results.append(Result(number, outcome.status, rin=outcome.rin, rins=outcome.rins))
        lines = batch[0][0], batch[-1][0]
        try:
            recordings = self._save(uow)
        except IntegrityError:
            if not self._landed(uow, *lines):
                self.retries += 1
                self._one_at_a_time(batch, done)
                return
        except Exception as error:
            if not self._landed(uow, *lines):
                if isinstance(error, SAVE_REFUSALS):
                    raise
                raise InternalFault(error) from error  # not the store's: the ledger's fault
        else:
            self._saved(uow, recordings, position)
        done.extend(results)

    def _save(self, uow: UnitOfWork) -> list[Recording[UUID]]:
        """Save `uow`, its outcome unknown to no one: whatever fails before the store is
        reached leaves it `NOT_STORED`, not the last save's (`_landed`)."""
        self._app.begin_save()
        return uow.save()

    def _landed(self, uow: UnitOfWork, first: int, last_line: int) -> bool:
        """After a failed save of lines `first`..`last_line`: whether the store committed it all
        the same (the failure came after the commit, as when a connection drops before its
        answer). The recorder knows, unless the answer to a sent commit was lost
        (ledger/infrastructure/save_outcome.py); then, the transaction being all or nothing,
        its last event, stored with the same timestamp, answers, and if the store cannot be
        read `CommitUnknown` says so: neither answer is safe (retrying could store the lines
        twice, "not stored" could make the caller send them again). The in-memory aggregates
        are dropped either way: the store is the reference."""
        self._forget(uow)
        outcome = self._app.save_outcome()
        if outcome is not Outcome.UNKNOWN or not uow.events:
            return outcome is Outcome.STORED
        last = uow.events[-1]
        try:
            stored = self._app.read_back(last.originator_id, last.originator_version)
            return bool(stored) and getattr(
                self._app.mapper.to_domain_event(stored[0]), "timestamp", None) == last.timestamp
        except Exception as error:
            raise CommitUnknown(first, last_line, error) from error

    def _one_at_a_time(self, batch: list[tuple[int, CommandInput]], done: list[Result]) -> None:
        for number, command in batch:
            done.append(self._apply(command, number))

    def position(self) -> int:
        """The last notification id stored: it moves whenever any writer saves."""
        return self.log.position()

    @property
    def folder(self) -> Path:
        """The data folder: the SQLite store's, or for PostgreSQL the configured one (the read
        models, head.json and keys live there)."""
        return store_folder(self._app.env)

    def head(self, upto: int | None = None) -> dict[str, Any]:
        """The ledger-wide chain head over the log up to notification `upto` (all of it)."""
        with self._lock:
            return chain_head(self._app, upto)

    def stored_heads(self) -> Iterator[Head]:
        """The head rows stored with each transaction, in notification id order."""
        return stored_heads(self._app)

    def audit(self, public_key: Ed25519PublicKey | None = None,
              exported: dict[str, Any] | None = None, follower: Follower | None = None
              ) -> list[str]:
        """Every stored fact that does not hold (chains, heads, signatures under `public_key`,
        an `exported` head, command records, snapshots), each located; [] if all hold. The
        walk hands `follower` its decoded events (`rin verify`'s rebuild, in the same pass)."""
        with self._lock:
            return audit(self._app, public_key, exported, follower)

    def party(self, party_id: str) -> Party:
        """The party's aggregate as it stands now; `UnknownParty` if it is not registered."""
        name = arguments.party_id(party_id)
        try:
            with self._lock:  # a write in progress may be changing the repository's copy
                return self._app.repository.get(Party.create_id(name))
        except AggregateNotFoundError:
            raise UnknownParty(name) from None
        except STORE_FAILURES as error:
            raise StoreError(str(error), None) from error

    def at(self, known_at: int | dict[str, Any]) -> Positions:
        """Every party's positions as the ledger knew them at notification `known_at` (or a
        head from `head()`), read from the event store alone: nothing is written."""
        return Positions(self._app, self.log, arguments.log_position(known_at, self.position()),
                         self._lock)

    def batch_status(self, batch_id: BatchId) -> BatchStatus | None:
        """A batch's QAP status and locks as they stand now, or None if it has neither."""
        try:
            with self._lock:
                status: BatchStatus = self._app.repository.get(BatchStatus.create_id(batch_id))
                return status
        except AggregateNotFoundError:
            return None
        except STORE_FAILURES as error:
            raise StoreError(str(error), None) from error

    def snapshot(self) -> Positions:
        """`at` the last notification now: reads across parties at one committed state, while
        writers go on storing."""
        return self.at(self.position())

    def holdings(self, party_id: str, as_of: date | str | None = None,
                 known_at: int | dict[str, Any] | None = None) -> list[Holding]:
        """What a party holds now (or on `as_of`, as known at notification `known_at`):
        gallon-RINs per D code, vintage and K."""
        if as_of is None and known_at is None:
            party = self.party(party_id)
            return [Holding(party.party_id, d, v, k, n)
                    for (d, v, k), n in sorted(party.holdings.totals().items()) if n]
        return self._read(known_at).holdings(arguments.party_id(party_id), as_of)

    def blocks(self, party_id: str, as_of: date | str | None = None,
               known_at: int | dict[str, Any] | None = None) -> list[HeldBlock]:
        """One row per held block with its 38-character code; daughters apart (§80.1428(d)), with
        `reserved`, `qap` and `locked` (ledger/application/held_blocks.py)."""
        if as_of is None and known_at is None:
            return block_rows(self.party(party_id), self.batch_status)
        return self._read(known_at).blocks(arguments.party_id(party_id), as_of)

    def _read(self, known_at: int | dict[str, Any] | None) -> Positions:
        try:
            return self.snapshot() if known_at is None else self.at(known_at)
        except STORE_FAILURES as error:
            raise StoreError(str(error), None) from error

    def follow(self, after: int = 0, *, timeout: float | None = None, interval: float = 0.1
               ) -> Iterator[LoggedEvent]:
        """Each domain event after notification `after` in log order, then each new one as any
        writer stores it (polled every `interval` s); ends after `timeout` s with nothing new
        (None: never). Resume after the last `notification_id` handled."""
        return follow(self.log, after, timeout=timeout, interval=interval)
