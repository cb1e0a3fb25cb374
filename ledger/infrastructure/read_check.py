"""Optimistic concurrency for what a command only reads (issue 9, attack 7: write skew).

A transfer or a compliance retirement reads its batches' invalidation records (§80.1431(b))
without changing them; a finding stored by another writer between that read and the save
would let the transfer be stored after the finding. The store's own check (one row per
aggregate id and version) covers only aggregates that get new events, so a unit of work also
hands its save the version of every aggregate it read and left unchanged (0: absent), and the
recorder compares them with the store inside the saving transaction, once it holds the
writers' lock, refusing the save as a conflict (the library's `IntegrityError`) if one moved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from uuid import UUID

from eventsourcing.persistence import IntegrityError

#: the keyword under which a save passes {aggregate id: version read} to the recorder
UNCHANGED = "unchanged"
IDS_PER_QUERY = 500


def check_unchanged(
    unchanged: Mapping[UUID, int] | None, latest: Callable[[list[UUID]], dict[UUID, int]]
) -> None:
    """Raise `IntegrityError` if an aggregate read at version v (0: absent) is not at v now;
    `latest` gives the stored version of each of up to `IDS_PER_QUERY` ids that has any."""
    if not unchanged:
        return
    ids = list(unchanged)
    for first in range(0, len(ids), IDS_PER_QUERY):
        chunk = ids[first:first + IDS_PER_QUERY]
        stored = latest(chunk)
        moved = [i for i in chunk if stored.get(i, 0) != unchanged[i]]
        if moved:
            raise IntegrityError(
                f"{len(moved)} aggregate(s) read by this save changed since: {moved[0]} was at "
                f"version {unchanged[moved[0]]}, now {stored.get(moved[0], 0)}"
            )
