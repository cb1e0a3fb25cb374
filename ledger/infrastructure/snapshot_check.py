"""`verify`'s snapshot check, made in its one walk of the log (ledger/infrastructure/audit.py):
each stored snapshot equals the replay of its aggregate's events up to its version.

The walk hands over each event of an aggregate that has a snapshot still ahead of it, decoded
once; the aggregate is mutated forward and compared with each stored snapshot as its version
is reached, and dropped after its last one. The aggregates held replayed are at most `LIVE`, and
weigh at most `HELD_BYTES` (each weighed by its last stored snapshot's bytes and `OVERHEAD`, the
measured size of its Python objects beyond them): the one unused longest is dropped, and its
events are passed over until its next snapshot's version comes; it is then restored from its
last snapshot found equal to the replay (so equal to the replay at that version) and replayed
from the store from there. Memory is bounded however many parties a store has and however long
its log, and an event is replayed at most twice however many take turns. Each aggregate's next
snapshot versions are read `AHEAD` at a time, not one query a snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.application import Application
from eventsourcing.domain import Snapshot

from ledger.infrastructure.chain import SEAL_KEY
from ledger.infrastructure.snapshot_seal import is_current, seal_problem

PAGE = 1_000
LIVE = 4_096  # aggregates held replayed at once, at most
#: what the aggregates held replayed may weigh, at most: 32 MiB by `weight`. A 1,000,000-event
#: store's 711 parties weigh about 33 MB so (docs/verify-memory.md "Seventh round"); with 256
#: held, a quarter of the events were read and decoded again from the store
HELD_BYTES = 32 << 20
#: an aggregate's Python objects beyond its snapshot's JSON bytes (measured: 8-27 KB)
OVERHEAD = 32 << 10
AHEAD = 32  # snapshot versions of one aggregate read at once

Query = Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]
Chains = Callable[[UUID, int], str | None]


class SnapshotCheck:
    """The snapshots of every aggregate, checked as the walk reaches their versions."""

    def __init__(self, app: Application[UUID], query: Query, chains: Chains | None = None
                 ) -> None:
        """`chains`: the chain of an aggregate's event at a version, if the walk knows it."""
        self.app = app
        self.query = query
        self.chains: Chains = chains or (lambda oid, version: None)
        self.problems: list[str] = []
        self.sqlite = "SQLITE_DBNAME" in app.env
        #: each aggregate (its id's 128-bit integer: hashing a UUID runs Python code) → the
        #: version of its next stored snapshot not yet reached
        self.next: dict[int, int] = {}
        #: aggregate → the version of its last snapshot found equal to the replay (0: none)
        self.equal: dict[int, int] = {}
        self.live: dict[int, Any] = {}  # replayed aggregates, the one unused longest first
        self.weights: dict[int, int] = {}  # each held one's `weight`
        self.held = 0  # their sum
        #: aggregate → its next stored snapshot versions after `next`'s, read `AHEAD` at once
        self.ahead: dict[int, list[int]] = {}
        self.names: dict[int, str] = {}
        self.table = ""
        if app.snapshots is None:
            return
        table = app.snapshots.recorder.events_table_name  # type: ignore[attr-defined]
        schema = getattr(app.recorder.datastore, "schema", None)  # type: ignore[attr-defined]
        self.table = table
        self.qualified = f'"{schema}"."{table}"' if schema and not self.sqlite else table
        for oid_value, first in query(f"SELECT originator_id, MIN(originator_version) FROM "
                                      f"{self.qualified} GROUP BY originator_id", ()):
            oid = oid_value if isinstance(oid_value, UUID) else UUID(str(oid_value))
            self.next[oid.int] = int(first)

    def wants(self, oid: UUID) -> bool:
        """Whether the aggregate has a stored snapshot not yet reached (its events then count)."""
        return oid.int in self.next

    def name(self, oid: UUID) -> str:
        return self.names.get(oid.int, f"aggregate {oid}")

    def step(self, event: Any) -> None:
        """Mutate the event's aggregate forward; compare at a snapshot's version."""
        oid, version = event.originator_id, event.originator_version
        key, live = oid.int, self.live
        held = live.pop(key, None)  # put back last: the one unused longest stays first
        if held is None and version > 1 and self.next[key] > version:
            return  # dropped for room: replayed from the store when its snapshot comes
        if held is not None:
            self.held -= self.weights[key]
        try:
            aggregate = event.mutate(held if held is not None else self.replayed(oid, version))
        except Exception as exc:
            self.cannot_replay(oid, exc)
            return
        live[key] = aggregate
        self.held += self.weights.setdefault(key, OVERHEAD)
        if self.next[key] <= version:
            self.reached(oid, aggregate, version)
        while live and (len(live) > LIVE or self.held > HELD_BYTES):
            self.drop(next(iter(live)))

    def weigh(self, key: int, weight: int) -> None:
        """An aggregate's weight from now on: `weight` bytes."""
        if key in self.live:
            self.held += weight - self.weights[key]
        self.weights[key] = weight

    def drop(self, key: int) -> None:
        """No longer hold an aggregate replayed (its weight is kept for when it is again)."""
        if self.live.pop(key, None) is not None:
            self.held -= self.weights[key]

    def reached(self, oid: UUID, aggregate: Any, version: int) -> None:
        """Compare at a snapshot of this version; name those at versions passed over. One found
        equal is what the replay goes on from, as the ledger's load would (its unchanged
        slots are then not encoded again at the next snapshot)."""
        key = oid.int
        if hasattr(aggregate, "party_id"):
            self.names[key] = f"party {aggregate.party_id}"
        while key in self.next and self.next[key] < version:  # a snapshot no event has
            self.orphan(oid, self.next[key])
            self.advance(oid, self.next[key])
        if self.next.get(key) != version:
            return
        row = self.app.snapshots.recorder.select_events(  # type: ignore[union-attr]
            oid, gt=version - 1, lte=version, limit=1)[0]
        problem, restored = compare(self.app, aggregate, row, self.chains(oid, version))
        if problem:
            self.problems.append(f"{self.table} row of {self.name(oid)} at version "
                                 f"{version:,}: {problem}")
        else:
            self.equal[key] = version
            if restored is not None and key in self.live:
                self.live[key] = restored
        self.weigh(key, len(row.state) + OVERHEAD)
        self.advance(oid, version)

    def replayed(self, oid: UUID, version: int) -> Any:
        """The aggregate just before `version` when it is not held: none before its first
        event, else (dropped for room) restored from its last snapshot found equal and
        replayed from the store up to there."""
        restored: Any = None
        since = self.equal.get(oid.int, 0)
        if since:
            row = self.app.snapshots.recorder.select_events(  # type: ignore[union-attr]
                oid, gt=since - 1, lte=since, limit=1)[0]
            snapshot = self.app.mapper.to_domain_event(row)
            if is_current(snapshot):  # an older class's is replayed past, as the ledger does
                restored = snapshot.mutate(None)  # type: ignore[attr-defined]
            else:
                since = 0
        if not since and version == 1:
            return None
        for stored in paged(self.app.recorder.select_events, oid, since, version - 1):
            restored = self.app.mapper.to_domain_event(stored).mutate(restored)  # type: ignore[attr-defined]
        return restored

    def advance(self, oid: UUID, reached: int) -> None:
        """Move to the aggregate's next snapshot after `reached`; past the last one, drop it."""
        ahead = self.ahead.get(oid.int)
        if not ahead:
            param: Any = oid.hex if self.sqlite else oid
            ahead = self.ahead[oid.int] = [int(v) for v, in self.query(
                f"SELECT originator_version FROM {self.qualified} WHERE originator_id = ? AND "
                f"originator_version > ? ORDER BY originator_version LIMIT {AHEAD:d}",
                (param, reached))][::-1]  # the next one last, for `pop`
        if ahead:
            self.next[oid.int] = ahead.pop()
            return
        self.forget(oid)

    def forget(self, oid: UUID) -> None:
        key = oid.int
        self.next.pop(key, None)
        self.drop(key)
        self.weights.pop(key, None)
        self.equal.pop(key, None)
        self.ahead.pop(key, None)

    def orphan(self, oid: UUID, version: int) -> None:
        self.problems.append(f"{self.table} row of {self.name(oid)} at version {version:,}: the "
                             "aggregate has no event at that version: inserted, or its events "
                             "deleted")

    def cannot_replay(self, oid: UUID, exc: Exception) -> None:
        self.problems.append(f"{self.name(oid)}: its events cannot be replayed "
                             f"({type(exc).__name__}: {exc})")
        self.forget(oid)

    def after_last(self) -> list[str]:
        """The snapshots the walk did not reach: past the aggregate's last stored event (one
        at a version a writer stored after the walk's end is no problem)."""
        for key in list(self.next):
            oid = UUID(int=key)
            last = self.app.recorder.select_events(oid, desc=True, limit=1)
            stored = last[0].originator_version if last else 0
            while key in self.next:
                version = self.next[key]
                if version > stored:
                    self.orphan(oid, version)
                self.advance(oid, version)
        return self.problems


def paged(select: Any, oid: UUID, after: int, upto: int | None) -> Iterator[Any]:
    """One aggregate's stored rows (events or snapshots) in version order after `after` up to
    `upto`, read `PAGE` at a time: memory holds a page, however many events it has."""
    while True:
        rows = select(oid, gt=after, lte=upto, limit=PAGE)
        yield from rows
        if len(rows) < PAGE:
            return
        after = rows[-1].originator_version


def compare(app: Application[UUID], aggregate: Any, row: Any, chain: str | None = None
            ) -> tuple[str | None, Any]:
    """What differs between a stored snapshot and the replayed aggregate, if anything; and the
    aggregate the snapshot restores if it is of its class's current version (else None).
    `chain`: that of the aggregate's event at the snapshot's version, if known (else read)."""
    try:
        stored = orjson.loads(row.state)
        stored_state = stored["state"]
    except (ValueError, TypeError, KeyError):
        return "stored state is not a snapshot's JSON", None
    taken = Snapshot.take(aggregate)
    replayed = orjson.loads(app.mapper.transcoder.encode(taken.state))
    if stored.get("topic") != taken.topic:
        return "names another aggregate class", None
    try:  # as the ledger would load it: upcast to the aggregate's current class version
        snapshot = app.mapper.to_domain_event(row)
        current = is_current(snapshot)
        restored = snapshot.mutate(None)  # type: ignore[attr-defined]
        if not current:  # what the upcast state holds; a current one is compared as stored
            stored_state = orjson.loads(
                app.mapper.transcoder.encode(Snapshot.take(restored).state))
    except Exception as exc:
        return f"cannot be loaded ({type(exc).__name__}: {exc})", None
    if not current and isinstance(stored_state, dict):  # an older class's: what it holds
        replayed = {k: v for k, v in replayed.items() if k in stored_state}
    if not isinstance(stored_state, dict) or stored_state != replayed:
        keys = sorted(k for k in set(replayed) | set(stored_state if isinstance(
            stored_state, dict) else {}) if not isinstance(stored_state, dict) or
            stored_state.get(k) != replayed.get(k))
        return f"differs from the replay of its events in {', '.join(keys)}: edited", None
    if SEAL_KEY in stored:
        if chain is None:
            chain = app.mapper.chain_at(  # type: ignore[attr-defined]
                row.originator_id, row.originator_version)
        problem = seal_problem(row, chain, None)
        if problem:
            return f"its seal does not hold ({problem}): edited", None
    return None, restored if current else None
