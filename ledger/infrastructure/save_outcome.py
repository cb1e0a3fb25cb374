"""What a save that raised left in the store, as its recorder knows it.

A line is reported `applied` once, by the writer that stored it. When a save raises, the
ledger must tell a save that committed and then failed (its answer lost, or an error after the
commit) from one the store refused. Reading the store back cannot tell them apart when another
writer stored the same line in the same microsecond: its events are byte for byte the ones this
writer would have stored (two writers racing on one line did so, each then reporting it
applied). So the recorder says what it knows: a refusal, or any failure before the commit was
sent, stored nothing; a save whose insert returned is stored; only a commit sent and its answer
lost (PostgreSQL, a dropped connection) is unknown, and only then is the store read back.
"""

from __future__ import annotations

from enum import Enum
from typing import Protocol, runtime_checkable
from uuid import UUID

from eventsourcing.persistence import StoredEvent


class Outcome(Enum):
    """What the last save left in the store."""

    NOT_STORED = "not stored"  # refused, or failed before its commit was sent
    STORED = "stored"  # the insert committed: whatever failed came after
    UNKNOWN = "unknown"  # its commit was sent and the answer lost


class Outcomes:
    """A recorder's record of its last save's outcome (`outcome`), set by its `insert_events`
    and reset by the application before each save maps its events."""

    outcome = Outcome.NOT_STORED


@runtime_checkable
class SettledReads(Protocol):
    """A recorder whose read back of a save waits for every commit still under way
    (PostgreSQL's; SQLite knows each save's outcome once its commit returns, never reads back)."""

    def stored_at(self, originator_id: UUID, version: int) -> list[StoredEvent]:
        """The aggregate's stored event at `version` ([] if none)."""
