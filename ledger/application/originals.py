"""Earlier commands found as the ledger stored them: the command a `reverse` names (design.md
"reverse"), and a posting that is no longer pending (§80.1452).

A command is found by its id's record, which names the events it stored: the first of them says
what the command was (a retirement, a fast-path transfer, a posting, something else) and holds the
exact ranges, date and reason the reversal sends back. A posting's id is its command's id, so a
posting that ended is read the same way, with the `TradeClosed` its poster stored later: a
Party keeps only its pending postings, and this (rare) path is what a refusal naming a closed
posting, or the reversal of a completed sell, costs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from uuid import UUID

from ledger.application.unit_of_work import UnitOfWork
from ledger.domain.batch_status import BatchStatus
from ledger.domain.invalidation import BatchInvalidation
from ledger.domain.party import Party
from ledger.domain.reversals import Original, Reversible
from ledger.domain.trade_book import Posting, Side, Status
from ledger.infrastructure.command_table import AppliedCommand

#: events read at a time from a poster's stream while looking for a posting's end
PAGE = 64


def original(uow: UnitOfWork, party: Party, command: str) -> Original | None:
    """What `command` (an id) names, seen from `party`, the one reversing it; None if no command
    with that id was applied."""
    posting = party.trades.open.get(command)
    if posting is not None and posting.side is Side.SELL:
        return of_sell(party, posting)
    record = uow.record_of(command)
    if record is None:
        return None
    posting = ended(uow, party, record)
    if posting is not None and posting.side is Side.SELL:
        return of_sell(party, posting)
    first = first_event(uow, record)
    if first is None:
        return Original(command, "command applied before commands recorded their events")
    return of_event(command, first)


def first_event(uow: UnitOfWork, record: AppliedCommand) -> Any:
    """The first event `record`'s command stored that says what it did (a batch's record
    opened by its first lock, verification or invalidation says nothing); None if the record
    names none (release 1)."""
    events = [e for e in (stored_event(uow, name) for name in record.events or ()) if e]
    return next((e for e in events if type(e) not in OPENINGS), events[0] if events else None)


def applied_as(uow: UnitOfWork, record: AppliedCommand) -> str:
    """The command applied under `record`'s id, for a line that reuses the id with other
    content: its type and effective date, as its first event says."""
    first = first_event(uow, record)
    if first is None:
        return f"{record.client_id} was applied before, with other content"
    kind = of_event(record.client_id, first).kind
    on = getattr(first, "effective_date", None)
    return f"{record.client_id} was applied before as a {kind}{f' of {on}' if on else ''}"


def posting(uow: UnitOfWork, poster: Party, posting_id: str) -> Posting | None:
    """`poster`'s posting `posting_id` as it stands: pending in its book, else as it was posted
    and ended, read from the log; None if `poster` posted none with that id."""
    pending = poster.trades.open.get(posting_id)
    if pending is not None:
        return pending
    record = uow.record_of(posting_id)
    return ended(uow, poster, record) if record is not None else None


def ended(uow: UnitOfWork, poster: Party, record: AppliedCommand) -> Posting | None:
    """The posting `record`'s command made at `poster`, as it ended (its `TradeClosed`); None if
    that command posted nothing there, or the posting is still pending."""
    posted = first_event_at(uow, record, poster.id)
    if not isinstance(posted, Party.TradePosted):
        return None
    closed = closing(uow, poster, posted.client_id, posted.originator_version)
    if closed is None:
        return None
    return replace(posted.posting(poster.party_id), status=Status(closed.status),
                   closed_on=closed.effective_date, closing_reason_code=closed.reason_code,
                   counterpart=closed.counterpart)


def offered(uow: UnitOfWork, partner: Party, posting_id: str) -> str | None:
    """The poster of the posting `posting_id` made to `partner`, named by the `TradeOffered`
    the posting's command stored at `partner` (its EMTS inbox); None if none names it."""
    record = uow.record_of(posting_id)
    offer = first_event_at(uow, record, partner.id) if record is not None else None
    return offer.poster if isinstance(offer, Party.TradeOffered) else None


def first_event_at(uow: UnitOfWork, record: AppliedCommand, aggregate: UUID) -> Any:
    """The first event `record`'s command stored at `aggregate`, if any."""
    prefix = f"{aggregate.hex}:"
    name = next((n for n in record.events or () if n.startswith(prefix)), None)
    return stored_event(uow, name) if name is not None else None


def closing(uow: UnitOfWork, poster: Party, posting_id: str, posted_at: int) -> Any:
    """The `TradeClosed` that ended `poster`'s posting `posting_id` (posted at version
    `posted_at`): among this transaction's events, else the store's after the posting, read a
    page at a time (a posting ends within days, so the first page nearly always holds it)."""
    def ends(event: Any) -> bool:
        return (isinstance(event, Party.TradeClosed) and event.posting == posting_id
                and event.originator_id == poster.id)

    found = next((e for e in (*uow.events, *poster.pending_events) if ends(e)), None)
    after = posted_at
    while found is None:
        events = list(uow.app.events.get(poster.id, gt=after, lte=after + PAGE))
        if not events:
            return None
        found = next((e for e in events if ends(e)), None)
        after += PAGE
    return found


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
    if isinstance(event, Party.TradeClosed):
        return Original(command, CLOSINGS[Status(event.status)])
    return Original(command, KINDS.get(type(event), "command"))


#: what the first event of other commands says they were: the command's `type` word, for
#: every event a command stores first (tests/integration/red_team/test_closed_posting_attacks.py
#: checks that each domain event class is here or handled above)
KINDS: dict[type[Any], str] = {
    Party.Registered: "register_party", Party.Generated: "generate", Party.Assigned: "generate",
    Party.Split: "split", Party.Separated: "separate", Party.FuelMoved: "transfer_fuel",
    Party.TransferredOut: "buy", Party.TransferredIn: "transfer",
    Party.TradeOffered: "sell or buy", Party.ObligationReported: "report_obligation",
    Party.TradeReversedOut: "reverse", Party.TradeReversedIn: "reverse",
    Party.Unretired: "reverse", Party.GeneratorBlocked: "block_generator",
    Party.GeneratorUnblocked: "unblock_generator",
    BatchInvalidation.Opened: "invalidate", BatchInvalidation.Invalidated: "invalidate",
    BatchStatus.Opened: "lock, unlock or verify_batch", BatchStatus.Verified: "verify_batch",
    BatchStatus.Locked: "lock", BatchStatus.Unlocked: "unlock",
}
#: the command a `TradeClosed` first says it was, by the status it gave (§80.1452(d))
CLOSINGS = {Status.CANCELLED: "cancel_trade", Status.DENIED: "deny_trade",
            Status.EXPIRED: "expire_trades", Status.COMPLETED: "buy"}
#: events that open a batch's record, stored before what the command did to it
OPENINGS = (BatchInvalidation.Opened, BatchStatus.Opened)


def stored_event(uow: UnitOfWork, name: str) -> Any:
    """The event a command record names (`<aggregate id hex>:<version>`): one of this
    transaction's, or the store's."""
    hex_id, version = name.split(":")
    aggregate, number = UUID(hex_id), int(version)
    for event in uow.events:
        if event.originator_id == aggregate and event.originator_version == number:
            return event
    return next(iter(uow.app.events.get(aggregate, gt=number - 1, lte=number)), None)
