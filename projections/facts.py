"""A `Fact`: one Party event from the notification log, with its position and its party's id.

Party events other than `Registered` do not carry the party's company id, so the follower maps
each aggregate id to the id its `Registered` event gave. What every view reads of an event (its
kind, ISO date, blocks and their codes, counterparty) is worked out once, when the fact is made;
what depends only on the event's class is worked out once per class, when this module loads.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

from ledger.domain.batch_status import BatchStatus
from ledger.domain.invalidation import BatchInvalidation
from ledger.domain.party import Party
from ledger.domain.rin import RinBlock

#: where the batch identity YYYYCCCCFFFFFBBBBB (§80.1425(e)) sits in a 38-character code
BATCH = slice(1, 19)
#: the field naming an event's blocks, where it is not `rins`
BLOCK_FIELDS = {"generated": "rin", "split": "daughters"}
COUNTERPARTY_FIELDS = ("to_party", "from_party", "counterparty")
#: the word the views use for each event class the log holds: each view's KINDS names the kinds
#: it takes, and the journal and histories store it in their `event` column. Written out, not
#: derived from class names, so a renamed class keeps its rows and a new class without a kind
#: fails tests/test_view_kinds.py (and `Fact.of`) instead of being silently left out.
EVENT_KINDS: dict[type[Any], str] = {
    Party.Registered: "registered",
    Party.Generated: "generated",
    Party.Assigned: "assigned",
    Party.TransferredOut: "transferred_out",
    Party.TransferredIn: "transferred_in",
    Party.FuelMoved: "fuel_moved",
    Party.Split: "split",
    Party.Separated: "separated",
    Party.Retired: "retired",
    Party.ObligationReported: "obligation_reported",
    Party.TradePosted: "trade_posted",
    Party.TradeOffered: "trade_offered",
    Party.TradeClosed: "trade_closed",
    Party.TradeReversedOut: "trade_reversed_out",
    Party.TradeReversedIn: "trade_reversed_in",
    Party.Unretired: "unretired",
    BatchInvalidation.Opened: "opened",
    BatchInvalidation.Invalidated: "invalidated",
    Party.GeneratorBlocked: "generator_blocked",
    Party.GeneratorUnblocked: "generator_unblocked",
    BatchStatus.Opened: "status_opened",
    BatchStatus.Verified: "verified",
    BatchStatus.Locked: "locked",
    BatchStatus.Unlocked: "unlocked",
}


class Shape(NamedTuple):
    """What an event class says about its events: kind, and which fields hold what."""

    kind: str
    dated: bool
    blocks: str | None
    counterparty: str | None


class Fact(NamedTuple):
    """One domain event at notification `notification_id`, owned by party `party`."""

    notification_id: int
    party: str
    kind: str
    event: Any
    #: the event's effective date as ISO text (an obligation report may have none)
    effective_date: str | None
    #: the exact blocks the event names (a split's daughters, a generation's batch)
    blocks: list[RinBlock]
    #: each block's 38-character code
    codes: list[str]
    counterparty: str | None

    @classmethod
    def of(cls, notification_id: int, party: str, event: Any) -> Fact:
        """The fact of `event`, its per-event values computed once for every view."""
        shape = SHAPES.get(type(event))
        if shape is None:
            raise LookupError(f"{type(event).__qualname__} has no view kind: add it to "
                              "projections/facts.py EVENT_KINDS")
        day = event.effective_date if shape.dated else None
        blocks = blocks_of(event, shape.blocks)
        other = getattr(event, shape.counterparty) if shape.counterparty else None
        return cls(
            notification_id, party, shape.kind, event, day.isoformat() if day else None,
            blocks, [block.code for block in blocks], str(other) if other else None,
        )


def shape_of(event_class: type[Any], kind: str) -> Shape:
    """The kind of an event class and the fields its events carry dates, blocks and the other
    party in."""
    fields = {field.name for field in dataclasses.fields(event_class)}
    blocks = BLOCK_FIELDS.get(kind, "rins")
    return Shape(
        kind, "effective_date" in fields, blocks if blocks in fields else None,
        next((name for name in COUNTERPARTY_FIELDS if name in fields), None),
    )


#: each event class's shape, worked out once (a class never changes)
SHAPES = {event_class: shape_of(event_class, kind) for event_class, kind in EVENT_KINDS.items()}


def blocks_of(event: Any, field: str | None) -> list[RinBlock]:
    """The blocks in the event's `field`: one block, a list of them, or none."""
    value = getattr(event, field) if field else None
    if isinstance(value, RinBlock):
        return [value]
    return list(value or ())


def batch_of(block: RinBlock) -> str:
    """The batch identity YYYYCCCCFFFFFBBBBB (§80.1425(e)): the same for K=1 and K=2."""
    return str(block.key.batch_id)
