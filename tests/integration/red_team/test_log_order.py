"""Issue 9, attack 9 (log order): in a batch, a refused line must not reorder the events of the
command after it. A transfer's TransferredOut precedes its TransferredIn in the log, so a
`holdings --known-at` query between any two notifications never counts the same gallon-RINs
twice (§80.1428(a): a RIN has one owner at a time)."""

from __future__ import annotations

from typing import Any

from conftest import Store
from store_access import app_of
from test_concurrency import code, generate, party, transfer

from ledger.domain.party import Party
from ledger.infrastructure.command_records import CommandRecord
from ledger.infrastructure.command_table import stored_rows
from projections import Views

BUYER, OTHER = "2001", "2002"


def lines() -> list[dict[str, Any]]:
    """The producer's 1,000 gallon-RINs sold twice, each sale right after a refused line that
    used the buyer first (a retirement of RINs the buyer does not hold)."""
    refused = {"type": "retire", "date": "2024-01-11", "party": BUYER, "reason": "spill",
               "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 5_000}}
    return [
        party("1001", "Producer", ["producer"], ("10011",)),
        party(BUYER, "Buyer", ["blender"]), party(OTHER, "Other", ["blender"]),
        generate(1, 1_000),
        refused,
        transfer("t-1", "1001", BUYER, {"code": code(1, 1, 600)}, 240, "2024-01-11"),
        {**refused, "party": OTHER},
        transfer("t-2", BUYER, OTHER, {"code": code(1, 1, 600)}, 240, "2024-01-12"),
    ]


def test_a_refused_line_does_not_reorder_the_next_commands_events(store: Store) -> None:
    with store.ledger() as ledger:
        results = list(ledger.apply_many(lines(), batch_size=50))  # one batch
        assert [r.status for r in results] == ["applied"] * 4 + ["rejected", "applied"] * 2
        logged = list(ledger.log.events())
        moves = [(type(e).__name__, e.client_id) for e in (n.event for n in logged)
                 if isinstance(e, (Party.TransferredOut, Party.TransferredIn))]
        assert moves == [("TransferredOut", "t-1"), ("TransferredIn", "t-1"),
                         ("TransferredOut", "t-2"), ("TransferredIn", "t-2")]
        views = Views(ledger)
        views.project()
        assigned_at = next(n.notification_id for n in logged
                           if isinstance(n.event, Party.Assigned))
        # each command with an id is complete at its record: a row at its last event's
        # notification (a record event, in a store of release 2's format)
        complete = {row.notification_id for row in stored_rows(app_of(ledger).recorder)}
        assert len(complete) == 6  # 3 registrations, the generation, t-1, t-2
        for note in logged:
            # 1,000 gallon-RINs exist once assigned, whoever holds them: never more at any
            # notification, and exactly that once each command is complete (its record)
            at = note.notification_id
            total = sum(r["gallon_rins"] for r in views.holdings(known_at=at))
            assert total <= 1_000, f"known at notification {at}: {total} gallon-RINs"
            if at >= assigned_at and (at in complete or isinstance(note.event,
                                                                   CommandRecord.Applied)):
                assert total == 1_000, f"known at notification {at}: {total}"
