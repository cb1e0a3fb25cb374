"""The command a `reverse` names, found as the ledger stored it (design.md "reverse").

A sell is found in its seller's postings (its completion may have come with a later buy); any
other command by its id's record, which names the events it stored: the first of them says what
the command was (a retirement, a fast-path transfer, a posting, something else) and holds the
exact ranges, date and reason the reversal sends back.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from ledger.application.unit_of_work import UnitOfWork
from ledger.domain.party import Party
from ledger.domain.reversals import Original, Reversible
from ledger.domain.trade_book import Posting, Side


def original(uow: UnitOfWork, party: Party, command: str) -> Original | None:
    """What `command` (an id) names, seen from `party`, the one reversing it; None if no command
    with that id was applied."""
    posting = party.trades.postings.get(command)
    if posting is not None and posting.side is Side.SELL:
        return of_sell(party, posting)
    record = uow.record_of(command)
    if record is None:
        return None
    events = [stored_event(uow, name) for name in record.events or ()]
    first = next((e for e in events if e is not None), None)
    if first is None:
        return Original(command, "command applied before commands recorded their events")
    return of_event(command, first)


def of_sell(seller: Party, posting: Posting) -> Original:
    return Original(
        posting.id, Reversible.SELL, seller.id, posting.terms.date, posting.rins,
        receiver=posting.partner, volume=posting.terms.volume, status=str(posting.status),
    )


def of_event(command: str, event: Any) -> Original:
    """The original from the first event its command stored."""
    if isinstance(event, Party.Retired):
        return Original(
            command, Reversible.RETIRE, event.originator_id, event.effective_date,
            tuple(event.rins), reason_code=event.reason_code, reason=event.reason,
            compliance_year=event.compliance_year, category=event.category,
        )
    if isinstance(event, Party.TransferredOut) and event.postings is None:
        return Original(
            command, Reversible.TRANSFER, event.originator_id, event.effective_date,
            tuple(event.rins), receiver=event.to_party, volume=event.volume,
        )
    if isinstance(event, Party.TradePosted):
        return Original(command, str(event.side), event.originator_id, event.effective_date)
    return Original(command, KINDS.get(type(event), type(event).__name__))


#: what the first event of other commands says they were
KINDS: dict[type[Any], str] = {
    Party.Registered: "register_party", Party.Generated: "generate", Party.Split: "split",
    Party.Separated: "separate", Party.FuelMoved: "transfer_fuel",
    Party.ObligationReported: "report_obligation", Party.TradeClosed: "cancel_trade or deny_trade",
    Party.TradeReversedOut: "reverse", Party.Unretired: "reverse",
}


def stored_event(uow: UnitOfWork, name: str) -> Any:
    """The event a command record names (`<aggregate id hex>:<version>`): one of this
    transaction's, or the store's."""
    hex_id, version = name.split(":")
    aggregate, number = UUID(hex_id), int(version)
    for event in uow.events:
        if event.originator_id == aggregate and event.originator_version == number:
            return event
    return next(iter(uow.app.events.get(aggregate, gt=number - 1, lte=number)), None)
