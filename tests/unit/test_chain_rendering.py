"""The chain mapper's pre-rendered timestamps and dates are byte for byte what the library's own
transcoder and the stdlib's canonical JSON give (ledger/infrastructure/chain.py
`ChainMapper._sorted_default`): hard values included, a timestamp on a whole second (no
fraction), one microsecond past, the last microsecond of a year, zones other than UTC."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
from eventsourcing.persistence import (
    Notification,
    StoredEvent,
)
from hypothesis import given
from hypothesis import strategies as st

from ledger.domain.party import Party
from ledger.domain.rin import BlockKey, RinBlock
from ledger.infrastructure import chain
from ledger.infrastructure.chain import (
    ChainedStoredEvent,
    ChainMapper,
    canonical,
    fold,
    fold_stored,
)
from tests.transcoder import ledger_transcoder

BLOCK = RinBlock(BlockKey(1, 2024, "1001", "20001", "00001", 10, 6, date(2024, 1, 2), "ethanol"),
                 1, 500)



def library_canonical(state: dict[str, Any]) -> bytes:
    """The canonical bytes by the library's own transcoder and the stdlib alone: its JSON,
    parsed, then sorted and compact (what `canonical` promises to equal)."""
    value = json.loads(ledger_transcoder().encode(state))
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def mapper() -> ChainMapper:
    """A chain mapper whose aggregates have no stored events (a chain at version 0)."""
    return ChainMapper(ledger_transcoder(), lambda: NoEvents())  # type: ignore[arg-type,return-value]


class NoEvents:
    def select_events(self, *args: Any, **kwargs: Any) -> list[Any]:
        return []


def state(timestamp: datetime, on: date) -> dict[str, Any]:
    return {"timestamp": timestamp, "effective_date": on, "rins": [BLOCK], "price": Decimal("1.5"),
            "production_start": on - timedelta(days=3), "z": {"on": on, "at": [timestamp]}}


HARD = [
    datetime(2026, 1, 1, tzinfo=UTC),  # a whole second: isoformat writes no fraction
    datetime(2026, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
    datetime(2026, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 500_000, tzinfo=UTC),
    datetime(2026, 6, 1, 12, 0, tzinfo=timezone(timedelta(hours=5, minutes=30))),
    datetime(2026, 6, 1, 12, 0, 0, 10, tzinfo=timezone(timedelta(hours=-3, seconds=15))),
    datetime(2026, 6, 1, 12, 0),  # naive
]


@pytest.mark.parametrize("timestamp", HARD, ids=str)
def test_hard_timestamps_render_as_the_library_writes_them(timestamp: datetime) -> None:
    chained = mapper()
    for on in (date(2024, 1, 2), date(2024, 1, 2), date(1, 1, 4), date(9999, 12, 31)):
        value = state(timestamp, on)
        assert canonical(value, chained._sorted_default) == library_canonical(value)


@given(st.datetimes(timezones=st.just(UTC)), st.dates(min_value=date(1, 1, 4)))
def test_any_utc_timestamp_and_date_render_as_the_library_writes_them(
        timestamp: datetime, on: date) -> None:
    value = state(timestamp, on)
    assert canonical(value, mapper()._sorted_default) == library_canonical(value)


def test_the_memory_of_dates_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chain, "DATES_REMEMBERED", 10)
    chained = mapper()
    days = [date(2024, 1, 1) + timedelta(days=n) for n in range(25)]
    for on in days:
        assert canonical({"on": on}, chained._sorted_default) == library_canonical({"on": on})
        assert len(chained._dates) <= 10
    assert canonical({"on": days[0]}, chained._sorted_default) == library_canonical(
        {"on": days[0]})


def test_a_stored_event_folds_into_the_head_as_its_notification_does() -> None:
    """`fold_stored` of an event the mapper just made (its header rendered from the id string the
    chain hashed) and of a plain stored event gives `fold` of the notification it becomes."""
    chained = mapper()
    event = Party.TradeOffered(originator_id=Party.create_id("1001"), originator_version=3,
                               timestamp=HARD[0], effective_date=date(2024, 1, 2),
                               client_id="S1", poster="2001")
    stored = chained.to_stored_event(event)
    assert isinstance(stored, ChainedStoredEvent) and stored.key
    plain = StoredEvent(originator_id=stored.originator_id, originator_version=3,
                        topic=stored.topic, state=stored.state)
    for made in (stored, plain):
        note = Notification(id=41, originator_id=made.originator_id, originator_version=3,
                            topic=made.topic, state=made.state)
        assert fold_stored("ab" * 32, 41, made) == fold("ab" * 32, note)
