"""The repository, replaying events without a runtime-protocol check per event.

The library's default projector (`eventsourcing.application.project_aggregate`) asserts
`isinstance(event, CanMutateProtocol)` for every event it replays: a `typing` runtime-protocol
check that collects the protocol's attributes each time, about a third of the CPU of loading the
busiest party of a 30k-event store (cProfile, issue 15). Every event the ledger stores is an
`Aggregate` event with `mutate`, so the check can never fail here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from uuid import UUID

from eventsourcing.application import Repository


def project_events(aggregate: Any, domain_events: Iterable[Any]) -> Any:
    """Each event's `mutate` in turn: the library's `project_aggregate` less its assert."""
    for event in domain_events:
        aggregate = event.mutate(aggregate)
    return aggregate


class LedgerRepository(Repository[UUID]):
    """`Repository` whose `get` replays with `project_events` unless told otherwise."""

    def get(self, aggregate_id: UUID, *, version: int | None = None,
            projector_func: Any = project_events, fastforward_skipping: bool = False,
            deepcopy_from_cache: bool = True) -> Any:
        return super().get(aggregate_id, version=version, projector_func=projector_func,
                           fastforward_skipping=fastforward_skipping,
                           deepcopy_from_cache=deepcopy_from_cache)

    @classmethod
    def like(cls, library: Repository[UUID]) -> LedgerRepository:
        """This repository with the settings (and cache) of the library's own."""
        repository = cls(event_store=library.event_store, snapshot_store=library.snapshot_store,
                         fastforward=library.fastforward,
                         fastforward_skipping=library.fastforward_skipping,
                         deepcopy_from_cache=library.deepcopy_from_cache)
        repository.cache = library.cache
        return repository
