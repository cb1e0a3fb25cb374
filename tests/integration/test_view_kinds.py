"""View kinds are written out per event class (projections/facts.py EVENT_KINDS), not derived
from class names: every event class the log can hold has one, every kind a view takes is one
of them, and renaming a class changes no row."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.domain import DomainEvent

from ledger import Ledger
from ledger.domain.batch_status import BatchStatus
from ledger.domain.invalidation import BatchInvalidation
from ledger.domain.party import Party
from ledger.simulation import small_market
from projections import rebuild
from projections.facts import EVENT_KINDS, Fact
from projections.invariants import dump
from projections.runner import VIEW_MODULES

#: event classes no command records: bases of the others, and the library's creation events
#: (a party is created by `Registered`, an invalidation record by `Opened`)
NEVER_RECORDED = {
    Party.Event, Party.Created, Party.Transferred, Party.Reversal, BatchInvalidation.Event,
    BatchInvalidation.Created, BatchStatus.Event, BatchStatus.Created,
}
#: a finding against the demo's first ethanol batch (§80.1431(a)), so the log holds both
#: BatchInvalidation events as well as every Party event
FINDING = {"type": "invalidate", "id": "inv-1", "date": "2024-12-01", "reason": "duplicate",
           "rin": "12024100120001000011060000000100001000"}
#: a two-sided trade (§80.1452): 3001 sells 10 separated D6 to 3002, which buys them
TRADE = [{"type": "sell", "id": "sell-1", "date": "2024-12-31", "party": "3001", "to": "3002",
          "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 10}},
         {"type": "buy", "id": "buy-1", "date": "2024-12-31", "party": "3002", "from": "3001",
          "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 10}}]
#: reversals (§80.1452(d)): that trade sent back, and a retirement of 3001's unretired
REVERSALS = [{"type": "reverse", "id": "rev-1", "date": "2024-12-31", "party": "3001",
              "command": "sell-1", "reason": "030"},
             {"type": "retire", "id": "ret-1", "date": "2024-12-31", "party": "3001",
              "reason": "spill", "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 10}},
             {"type": "reverse", "id": "rev-2", "date": "2024-12-31", "party": "3001",
              "command": "ret-1", "reason": "spill"}]
#: a QAP auditor verifies the demo's first ethanol batch (§80.1471(e)), which is then locked and
#: unlocked (§80.1474(b)(1)); a party blocks and unblocks a generator (§80.1452(d))
BATCH = {"company": "1001", "facility": "20001", "batch": "00001", "vintage": 2024}
STATUS = [
    {"type": "register_party", "id": "reg-9001", "party": "9001", "name": "Auditor",
     "roles": ["qap_auditor"]},
    {"type": "verify_batch", "date": "2024-12-31", "party": "9001", "batch": BATCH, "qap": "Q"},
    {"type": "lock", "date": "2024-12-31", "batch": BATCH, "reason": "review"},
    {"type": "unlock", "date": "2024-12-31", "batch": BATCH},
    {"type": "block_generator", "date": "2024-12-31", "party": "3002", "generator": "1003"},
    {"type": "unblock_generator", "date": "2024-12-31", "party": "3002", "generator": "1003"},
]


def event_classes(aggregate: type[Any]) -> set[type[Any]]:
    """Every domain event class an aggregate defines."""
    return {member for member in vars(aggregate).values()
            if isinstance(member, type) and issubclass(member, DomainEvent)}


def test_every_event_class_of_party_and_batch_invalidation_has_a_kind() -> None:
    classes = event_classes(Party) | event_classes(BatchInvalidation) | event_classes(BatchStatus)
    assert classes >= NEVER_RECORDED
    assert set(EVENT_KINDS) == classes - NEVER_RECORDED
    assert len(set(EVENT_KINDS.values())) == len(EVENT_KINDS)  # one class per kind


def test_a_market_records_only_classes_with_a_kind(tmp_path: Path) -> None:
    """The classes left out above are indeed never in the log: a whole market, a split and a
    finding record only classes that have a kind, and every one of those."""
    with Ledger(tmp_path) as ledger:
        results = list(ledger.apply_many([*small_market(), FINDING, *TRADE, *REVERSALS,
                                          *STATUS]))
        assert {r.status for r in results} == {"applied"}, [r.error for r in results][-1]
        recorded = {type(logged.event) for logged in ledger.log.events()}
    assert set(EVENT_KINDS) <= recorded
    assert not recorded & NEVER_RECORDED


def test_every_kind_a_view_takes_is_an_event_kind() -> None:
    """A misspelt kind in a view's KINDS would leave its rows out without an error."""
    kinds = set(EVENT_KINDS.values())
    for module in VIEW_MODULES:
        assert module.KINDS is None or set(module.KINDS) <= kinds, module.__name__


def test_an_event_class_without_a_kind_is_an_error_not_a_dropped_row() -> None:
    class Unlisted(Party.Event):
        pass

    with pytest.raises(LookupError, match="Unlisted has no view kind"):
        Fact.of(1, "1001", Unlisted(originator_id=Party.create_id("1001"),
                                    originator_version=2, timestamp=Party.Event.create_timestamp()))


@contextmanager
def renamed(event_class: type[Any], name: str) -> Iterator[None]:
    """The class under another name, as a refactoring would leave it (its TOPIC unchanged)."""
    old = event_class.__name__, event_class.__qualname__
    event_class.__name__, event_class.__qualname__ = name, f"Party.{name}"
    try:
        yield
    finally:
        event_class.__name__, event_class.__qualname__ = old


def test_renaming_an_event_class_changes_no_view_row(tmp_path: Path) -> None:
    """With kinds derived from class names, `TransferredOut` renamed would have become the
    kind `rins_sent` and its holdings, quarterly and PTD rows would have vanished."""
    with Ledger(tmp_path / "store") as ledger:
        assert {r.status for r in ledger.apply_many(small_market())} == {"applied"}
        rebuild(ledger, tmp_path / "before.sqlite")
        with renamed(Party.TransferredOut, "RinsSent"), renamed(Party.Separated, "KSeparated"):
            rebuild(ledger, tmp_path / "after.sqlite")
    before, after = dump(tmp_path / "before.sqlite"), dump(tmp_path / "after.sqlite")
    assert before["holdings_history"] and before["transfer_documents"]
    assert after == before
