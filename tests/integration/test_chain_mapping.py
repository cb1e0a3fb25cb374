"""The hash-chained mapper renders each event in one pass: the same values and the same chain as
the library's own mapping followed by the chain always gave (the form every stored chain was
computed over), stored canonically (format 2, docs/chain-format.md)."""

from __future__ import annotations

import typing
from pathlib import Path
from uuid import UUID

import orjson
import pytest
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import Mapper, StoredEvent
from store_access import app_of

from ledger import Ledger
from ledger.domain.invalidation import BatchInvalidation
from ledger.domain.party import Party
from ledger.infrastructure.chain import CHAIN_KEY, ChainMapper, canonical, link
from ledger.infrastructure.command_records import CommandRecord
from ledger.simulation import generate_market


def two_pass(mapper: ChainMapper, event: typing.Any, previous: str) -> StoredEvent:
    """The mapping as first released: the library's `Mapper`, then the chain over the JSON."""
    stored = Mapper.to_stored_event(mapper, event)
    state = orjson.loads(stored.state)
    state[CHAIN_KEY] = link(previous, stored.originator_id, stored.originator_version,
                            stored.topic, state)
    return StoredEvent(originator_id=stored.originator_id,
                       originator_version=stored.originator_version, topic=stored.topic,
                       state=orjson.dumps(state))


def test_every_event_of_a_market_maps_to_the_same_values_and_chain(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        lines = list(generate_market(3_000, seed=5))
        assert all(r.status == "applied" for r in ledger.apply_many(lines))
        notes = app_of(ledger).recorder.select_notifications(1, 100_000)
        mapper = app_of(ledger).mapper
        assert isinstance(mapper, ChainMapper)
        chains: dict[UUID, str] = {}
        topics = set()
        for note in notes:
            event = mapper.to_domain_event(note)
            previous = chains.get(note.originator_id, "")
            assert mapper.to_stored_event(event).state == note.state
            first_release = two_pass(mapper, event, previous).state
            assert orjson.loads(first_release) == orjson.loads(note.state), note.topic
            assert canonical(orjson.loads(first_release)) == note.state, note.topic
            chains[note.originator_id] = orjson.loads(note.state)[CHAIN_KEY]
            topics.add(note.topic)
    # every kind of event the market makes was compared (a new store keeps its command records
    # in rin_commands, not as events: ledger/infrastructure/command_table.py)
    assert {t.rsplit(".", 1)[1] for t in topics} >= {
        "Registered", "Generated", "Assigned", "TransferredOut", "TransferredIn", "FuelMoved",
        "Split", "Separated", "Retired", "ObligationReported", "TradePosted", "TradeOffered",
        "TradeClosed",
    }


@pytest.mark.parametrize("aggregate", [Party, CommandRecord, BatchInvalidation])
def test_no_event_field_is_a_uuid(aggregate: type[Aggregate]) -> None:
    """orjson writes a UUID as a plain string where the transcoder writes {"_type_": …}: the
    one-pass mapping holds only while no event carries one."""
    for member in vars(aggregate).values():
        if isinstance(member, type) and issubclass(member, Aggregate.Event):
            hints = typing.get_type_hints(member)
            own = {k: v for k, v in hints.items() if not k.startswith("originator_")}
            assert UUID not in own.values(), member.__qualname__
            assert not any("UUID" in str(v) for v in own.values()), member.__qualname__
