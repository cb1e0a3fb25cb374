"""The attest's roll-forward (§80.1464(a)(3)(ii), (b)(3)(ii), (c)(2)(ii)): a party's quarters
recomputed from the notification log itself, not from any read model, so that comparing them
with the RIN Activity Report (projections/activity.py) tests the report.

Every event of the party up to the chosen notification is read from the log and turned into
dated changes per (K, vintage) and dated flows by the events' own fields; the regulator's
findings (§80.1431(a)) give the invalid serials. Deliberately written apart from the read
models' projectors: an auditor's recomputation that shared their code would check nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ledger.application.ledger import Ledger
from ledger.domain.invalidation import BatchInvalidation
from ledger.domain.party import Party
from ledger.domain.ranges import SerialSet
from ledger.domain.rin import RinBlock
from projections.activity import QuarterActivity, quarter_days
from projections.runner import TOPICS

Change = tuple[str, int, int, int]  # (ISO date, K, vintage, signed gallon-RINs)
#: the events that move RINs (and K=1 fuel) between two parties: trades and their reversals
TRADES = (Party.TransferredIn, Party.TransferredOut, Party.TradeReversedIn,
          Party.TradeReversedOut)


@dataclass
class PartyLog:
    """What the log says of one party: dated holding changes, dated flows, retired blocks,
    dated fuel changes; and every invalid serial per batch."""

    changes: list[Change] = field(default_factory=list)
    flows: list[tuple[str, str, int, int, int]] = field(default_factory=list)
    retired: list[tuple[str, RinBlock]] = field(default_factory=list)
    fuel: list[tuple[str, Decimal]] = field(default_factory=list)
    invalid: dict[str, SerialSet] = field(default_factory=dict)

    def move(self, day: str, kind: str | None, blocks: list[RinBlock], sign: int) -> None:
        for block in blocks:
            key = block.key
            self.changes.append((day, key.k, key.vintage, sign * block.gallon_rins))
            if kind is not None:
                self.flows.append((day, kind, key.k, key.vintage, block.gallon_rins))

    def read(self, event: Any) -> None:
        """One event of the party, by its class and fields."""
        day = event.effective_date.isoformat() if getattr(event, "effective_date", None) else ""
        if isinstance(event, Party.Generated):
            self.flows.append((day, "generated", 1, event.rin.key.vintage, event.rin.gallon_rins))
        elif isinstance(event, Party.Assigned):
            self.move(day, None, event.rins, 1)
            self.fuel.append((day, event.volume))
        elif isinstance(event, TRADES):  # a reversed trade: a remedial buy or sell (§80.1452(d))
            sign = 1 if isinstance(event, Party.TransferredIn | Party.TradeReversedIn) else -1
            self.move(day, "purchased" if sign > 0 else "sold", event.rins, sign)
            self.fuel.append((day, sign * (event.volume or Decimal(0))))
        elif isinstance(event, Party.Separated):
            self.move(day, "separated", event.rins, -1)
            self.move(day, None, [RinBlock(b.key.with_k(2), b.start, b.end) for b in event.rins],
                      1)
            self.fuel.append((day, -event.fuel_used))
        elif isinstance(event, Party.Retired):
            self.move(day, "retired", event.rins, -1)
            self.retired.extend((day, block) for block in event.rins)
        elif isinstance(event, Party.Unretired):  # EMTS unretire: held again, reinstated
            self.move(day, "reinstated", event.rins, 1)
        elif isinstance(event, Party.FuelMoved):
            delivered = event.direction == "delivered"
            self.fuel.append((day, -event.volume if delivered else event.volume))

    def quarters(self, party: str, year: int) -> list[QuarterActivity]:
        """The four quarters of `year` from what was read."""
        days = [day.isoformat() for day in quarter_days(year)]
        out = []
        for q in range(1, 5):
            first, last = days[q - 1], days[q]
            quarter = QuarterActivity(party, year, q)
            for day, k, vintage, delta in self.changes:
                if day <= first:
                    quarter.start[(k, vintage)] += delta
                if day <= last:
                    quarter.end[(k, vintage)] += delta
            for day, kind, k, vintage, n in self.flows:
                if first < day <= last:
                    quarter.flows[(kind, k, vintage)] += n
            for day, block in self.retired:
                if first < day <= last:
                    bad = self.invalid.get(str(block.key.batch_id), SerialSet())
                    quarter.invalid[(block.key.k, block.key.vintage)] += len(
                        bad.intersection(SerialSet(((block.start, block.end),))))
            quarter.fuel_end = sum((v for day, v in self.fuel if day <= last), Decimal(0))
            out.append(quarter)
        return out


def recompute(ledger: Ledger, party: str, year: int, stop: int) -> list[QuarterActivity]:
    """The party's four quarters of `year` from the log up to notification `stop`."""
    aggregate = Party.create_id(party)
    found = PartyLog()
    for logged in ledger.log.events(stop=stop, topics=TOPICS):
        event = logged.event
        if isinstance(event, BatchInvalidation.Invalidated):
            for block in event.rins:
                batch = str(block.key.batch_id)
                found.invalid[batch] = found.invalid.get(batch, SerialSet()).union(
                    SerialSet(((block.start, block.end),)))
        elif event.originator_id == aggregate:
            found.read(event)
    return found.quarters(party, year)
