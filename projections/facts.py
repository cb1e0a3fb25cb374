"""A `Fact`: one Party event from the notification log, with its position and its party's id.

Party events other than `Registered` do not carry the party's company id, so the follower maps
each aggregate id to the id its `Registered` event gave.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from ledger.rin import RinBlock

COMMAND_TOPIC = "rin_ledger:CommandRecord"


@dataclass(frozen=True)
class Fact:
    """One domain event at notification `notification_id`, owned by party `party`."""

    notification_id: int
    party: str
    kind: str
    event: Any

    @property
    def effective_date(self) -> str | None:
        """The event's effective date as ISO text (an obligation report may have none)."""
        value: date | None = getattr(self.event, "effective_date", None)
        return value.isoformat() if value else None

    @property
    def blocks(self) -> list[RinBlock]:
        """The exact blocks the event names (a split's daughters, a generation's batch)."""
        if self.kind == "generated":
            return [self.event.rin]
        if self.kind == "split":
            return list(self.event.daughters)
        return list(getattr(self.event, "rins", []) or [])

    @property
    def counterparty(self) -> str | None:
        for name in ("to_party", "from_party", "counterparty"):
            value = getattr(self.event, name, None)
            if value:
                return str(value)
        return None


def kind_of(event: Any) -> str:
    """`TransferredOut` → `transferred_out`: the event's type as a snake-case word."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(event).__name__).lower()


def batch_of(block: RinBlock) -> str:
    """The batch identity YYYYCCCCFFFFFBBBBB (§80.1425(e)): the same for K=1 and K=2."""
    return str(block.key.batch_id)
