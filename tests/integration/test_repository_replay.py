"""The ledger's repository replays with `project_events` (no runtime-protocol check per event):
every party of a market loads, at every version asked, exactly as the library's own projector
replays it (ledger/infrastructure/repository.py)."""

from __future__ import annotations

from pathlib import Path

import orjson
from eventsourcing.application import project_aggregate
from eventsourcing.domain import Snapshot
from store_access import app_of

from ledger import Ledger
from ledger.domain.party import Party
from ledger.infrastructure.repository import LedgerRepository, project_events
from ledger.simulation import generate_market


def state(app: object, party: Party) -> object:
    return orjson.loads(app.mapper.transcoder.encode(Snapshot.take(party).state))  # type: ignore[attr-defined]


def test_every_party_loads_as_the_library_replays_it(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        assert all(r.status == "applied" for r in ledger.apply_many(generate_market(1_500, 3)))
        app = app_of(ledger)
        assert isinstance(app.repository, LedgerRepository)
        app.repository.cache = None
        registered = app.recorder.select_notifications(
            1, 10_000, topics=[Party.Registered.TOPIC])
        assert registered
        for note in registered:
            ours = app.repository.get(note.originator_id)
            theirs = app.repository.get(note.originator_id, projector_func=project_aggregate)
            assert ours.version == theirs.version and state(app, ours) == state(app, theirs)
            middle = max(1, ours.version // 2)
            assert state(app, app.repository.get(note.originator_id, version=middle)) == state(
                app, app.repository.get(note.originator_id, version=middle,
                                        projector_func=project_aggregate))


def test_project_events_applies_each_event_in_turn() -> None:
    calls: list[int] = []

    class Event:
        def __init__(self, n: int) -> None:
            self.n = n

        def mutate(self, aggregate: list[int] | None) -> list[int]:
            calls.append(self.n)
            return [*(aggregate or []), self.n]

    assert project_events(None, [Event(1), Event(2), Event(3)]) == [1, 2, 3]
    assert calls == [1, 2, 3]
    assert project_events([0], []) == [0]
