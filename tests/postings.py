"""Every posting a party ever made, as it stands, read from its stored events (§80.1452): what
a Party's own state no longer keeps once a posting is completed, cancelled, denied or expired
(ledger/domain/trade_book.py keeps the pending ones only). The tests' view of a posting's end,
independent of the ledger's own lookups (ledger/application/originals.py)."""

from __future__ import annotations

from dataclasses import replace

from ledger import Ledger
from ledger.domain.party import Party
from ledger.domain.trade_book import Posting, Status


def postings(ledger: Ledger, party: str) -> dict[str, Posting]:
    """`party`'s postings in posting order, each with how its `TradeClosed` ended it, if one
    did."""
    found: dict[str, Posting] = {}
    for event in ledger.log.history(Party.create_id(party)):
        if isinstance(event, Party.TradePosted):
            found[event.client_id] = event.posting(party)
        elif isinstance(event, Party.TradeClosed):
            found[event.posting] = replace(
                found[event.posting], status=Status(event.status),
                closed_on=event.effective_date, closing_reason_code=event.reason_code,
                counterpart=event.counterpart)
    return found


def status(ledger: Ledger, party: str, posting: str) -> Status:
    """The status of `party`'s posting `posting` (KeyError if it made none so named)."""
    return postings(ledger, party)[posting].status
