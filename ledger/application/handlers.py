"""Command handlers: orchestrate one command across the aggregates it concerns.

Each handler loads the parties and invalidation records a command names, checks what only the
ledger as a whole knows (that a party is registered, what another aggregate holds), and calls
the aggregates' command methods, which check their own rules before triggering any event. A
refused command's events are discarded by the unit of work (ledger/application/unit_of_work.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import cache
from typing import Any

from ledger.application import batch_handlers as bh
from ledger.application import originals
from ledger.application.results import Result
from ledger.application.unit_of_work import UnitOfWork
from ledger.domain import commands as c
from ledger.domain.emts import TRADE_REASONS
from ledger.domain.errors import InputError, LedgerError
from ledger.domain.invalidation import BatchInvalidation
from ledger.domain.party import Party
from ledger.domain.reversals import Reversible
from ledger.domain.rin import parse_code
from ledger.domain.trade_book import BATCH_FIELDS, Posting, Side
from ledger.domain.vocabulary import FuelDirection
from ledger.infrastructure.command_records import event_name
from ledger.infrastructure.command_table import AppliedCommand
from ledger.rules import s1431_invalid as inv
from ledger.rules import s1452_reversals as rev
from ledger.rules import s1452_trades as trd
from ledger.rules import s1471_auditors as aud

__all__ = ["UnitOfWork", "digest", "handle"]

Handler = Callable[[UnitOfWork, Any], list[str]]


# Command fields added after release 1 (§80.1426(a)(2), (c)(4), (c)(7), (f)(4)(iv),
# §80.1429(b)(9)): left out of a digest while at their default, so a command applied before
# keeps its stored digest and is recognised as the same command when sent again.
LATER_FIELDS = frozenset({
    "renewable_fraction_method", "foreign_producer", "heating_oil", "end_user_affidavits",
    "basis", "compliance_level", "compliance_facility",
})
#: selector fields added in release 2 (§80.1471(e)): left out of a digest while unset, likewise
LATER_SELECTOR_FIELDS = frozenset({"qap"})


@cache
def later_defaults(model: type[c.Model]) -> tuple[tuple[tuple[str, Any], ...], bool]:
    """(each of the model's `LATER_FIELDS` with its default, whether it has `rins`): what
    `digest` looks at, read from the model's fields once per command type."""
    fields = model.model_fields
    later = tuple((name, fields[name].default) for name in sorted(LATER_FIELDS & fields.keys()))
    return later, "rins" in fields


def digest(command: c.Model) -> str:
    later_fields, has_rins = later_defaults(type(command))
    unset: dict[str, Any] = {
        name: True for name, default in later_fields if getattr(command, name) == default
    }
    rins = command.rins if has_rins else None  # type: ignore[attr-defined]
    if isinstance(rins, c.Model):
        later = {name for name in LATER_SELECTOR_FIELDS if getattr(rins, name, 0) is None}
        if later:
            unset["rins"] = later
    # the model's serializer itself: `model_dump_json`'s bytes, without its wrapper's
    # arguments handling and a decode then encode again
    dumped = type(command).__pydantic_serializer__.to_json(
        command, by_alias=True, exclude=unset or None)
    return hashlib.sha256(dumped).hexdigest()


def handle(uow: UnitOfWork, command: c.Model) -> Result:
    """Apply one validated command within `uow`; raise a `LedgerError` to refuse it.

    With `uow.optimistic`, a command id is looked up in the store only when the command is
    refused: a new id is the common case, and an id already stored makes the save fail, after
    which the caller applies the batch again one command at a time, looking every id up.
    The result's line is 0: the caller knows the line.
    """
    client_id: str | None = getattr(command, "id", None)
    if client_id is not None and (client_id in uow.records or not uow.optimistic):
        seen = uow.record_of(client_id)
        if seen is not None:
            return repeated(seen, command, uow)
    try:
        rins = HANDLERS[type(command)](uow, command)
    except LedgerError:
        uow.refused()
        seen = uow.record_of(client_id) if client_id is not None and uow.optimistic else None
        if seen is None:
            raise
        return repeated(seen, command, uow)
    produced = [event_name(event.originator_id, event.originator_version)
                for aggregate in uow.touched.values() for event in aggregate.pending_events]
    if client_id is not None and not produced:  # `expire_trades` may find nothing to expire
        seen = uow.record_of(client_id) if uow.optimistic else None
        return repeated(seen, command, uow) if seen is not None else Result(0, "applied")
    if client_id is not None:
        uow.applied(client_id, digest(command), produced)
    generated = isinstance(command, c.Generate)
    return Result(0, "applied", rin=rins[0] if generated and rins else None, rins=rins)


def repeated(seen: AppliedCommand, command: c.Model, uow: UnitOfWork) -> Result:
    """A command whose id was applied before: a no-op if it is the same command; else refused,
    naming the command applied under that id (ledger/application/originals.py)."""
    if seen.digest != digest(command):
        raise InputError(f"already used by a different command: {originals.applied_as(uow, seen)}",
                         "id")
    return Result(0, "duplicate")


def register_party(uow: UnitOfWork, cmd: c.RegisterParty) -> list[str]:
    uow.adopt(Party.register(
        cmd.party, cmd.name, cmd.roles, sorted(set(cmd.facilities)), cmd.id,
        registered=uow.party(cmd.party) is not None,
    ))
    return []


def generate(uow: UnitOfWork, cmd: c.Generate) -> list[str]:
    party = uow.registered(cmd.party, "party")
    source = (
        uow.party(cmd.foreign_producer)
        if cmd.generate_rins and cmd.foreign_producer is not None else None
    )
    blocks = party.generate(cmd, source.role_words if source is not None else None)
    return [block.code for block in blocks]


def transfer(uow: UnitOfWork, cmd: c.Transfer) -> list[str]:
    seller = uow.registered(cmd.from_, "from")
    buyer = uow.registered(cmd.to, "to")
    reason_code = TRADE_REASONS[cmd.reason]
    aud.check_receiver(cmd.to, buyer.role_words, "to")
    blocks = seller.transfer_out(
        cmd.to, cmd.rins, cmd.date, uow.invalid_in, volume=cmd.volume, ptd=cmd.ptd,
        price=cmd.price, reason_code=reason_code, client_id=cmd.id, gate=uow.gate(buyer),
    )
    buyer.receive(cmd.from_, blocks, cmd.date, volume=cmd.volume, ptd=cmd.ptd, price=cmd.price,
                  reason_code=reason_code, client_id=cmd.id)
    return []


def transfer_fuel(uow: UnitOfWork, cmd: c.TransferFuel) -> list[str]:
    seller = uow.registered(cmd.from_, "from")
    buyer = uow.registered(cmd.to, "to")
    seller.move_fuel(FuelDirection.DELIVERED, cmd.to, cmd.volume, cmd.date, ptd=cmd.ptd,
                     client_id=cmd.id)
    buyer.move_fuel(FuelDirection.RECEIVED, cmd.from_, cmd.volume, cmd.date, ptd=cmd.ptd,
                    client_id=cmd.id)
    return []


def separate(uow: UnitOfWork, cmd: c.Separate) -> list[str]:
    uow.registered(cmd.party, "party").separate(cmd, uow.invalid_in, uow.gate())
    return []


def retire(uow: UnitOfWork, cmd: c.Retire) -> list[str]:
    uow.registered(cmd.party, "party").retire(cmd, uow.invalid_in, uow.gate())
    return []


def split(uow: UnitOfWork, cmd: c.Split) -> list[str]:
    return [d.code for d in uow.registered(cmd.party, "party").split(cmd, uow.gate())]


def report_obligation(uow: UnitOfWork, cmd: c.ReportObligation) -> list[str]:
    uow.registered(cmd.party, "party").report_obligation(cmd)
    return []


def invalidate(uow: UnitOfWork, cmd: c.Invalidate) -> list[str]:
    """The regulator's finding that gallon-RINs S..E of a batch are invalid (§80.1431(a)): of a
    batch its generator's party generated, checked here as the two are separate aggregates."""
    base, start, end = parse_code(cmd.rin, "rin")
    batch_id = base.batch_id
    record = uow.invalidation(batch_id)
    generated = record.generated if record is not None else uow.generated_block(batch_id)
    inv.check_generated(str(batch_id), generated, base, start, end)
    assert generated is not None
    if record is None:
        record = BatchInvalidation.open(generated)
        uow.adopt(record)
    block = record.invalidate(start, end, cmd.date, cmd.reason, note=cmd.note, client_id=cmd.id)
    return [block.code]


# -- EMTS trades (§80.1452): postings on each side's Party, completed when two agree ----------

def sell(uow: UnitOfWork, cmd: c.Sell) -> list[str]:
    """Post a sell, reserving its exact ranges; complete it with the buy it names in `match`
    (which must agree), else with the oldest pending buy of the partner that agrees."""
    seller = uow.registered(cmd.party, "party")
    buyer = uow.registered(cmd.to, "to")
    buy = answered(uow, buyer, cmd.match, Side.SELL, cmd.party)
    aud.check_receiver(cmd.to, buyer.role_words, "to")
    gate = uow.gate(buyer)
    posting = seller.post_sell(cmd, uow.invalid_in, narrowed=narrowed(cmd.rins, buy), gate=gate)
    keys = [b.key for b in posting.rins]
    if buy is not None:
        trd.check_agree(posting.terms, keys, buy.terms, posting.id, buy.id, "match")
    else:
        buy = next((b for b in buyer.candidates(Side.BUY, cmd.party)
                    if not trd.differences(posting.terms, keys, b.terms)), None)
    buyer.offered(posting)
    if buy is not None:
        buyer.accept(buy, posting, seller.deliver(posting, buy, uow.invalid_in, gate))
    return []


def buy(uow: UnitOfWork, cmd: c.Buy) -> list[str]:
    """Post a buy; complete it with the sell it names in `match` (which must agree), else with
    the oldest pending sell of the partner that agrees."""
    buyer = uow.registered(cmd.party, "party")
    seller = uow.registered(cmd.from_, "from")
    sold = answered(uow, seller, cmd.match, Side.BUY, cmd.party)
    aud.check_receiver(cmd.party, buyer.role_words, "party")
    posting = buyer.post_buy(cmd)
    if sold is not None:
        trd.check_agree(sold.terms, [b.key for b in sold.rins], posting.terms, sold.id,
                        posting.id, "match")
    else:
        sold = next((s for s in seller.candidates(Side.SELL, cmd.party)
                     if not trd.differences(s.terms, [b.key for b in s.rins], posting.terms)),
                    None)
    seller.offered(posting)
    if sold is not None:
        buyer.accept(posting, sold,
                     seller.deliver(sold, posting, uow.invalid_in, uow.gate(buyer)))
    return []


def answered(uow: UnitOfWork, partner: Party, match: str | None, side: Side, poster: str
             ) -> Posting | None:
    """The partner's pending posting `match` names (§80.1452(c)(6)), if it names one."""
    if match is None:
        return None
    return trd.check_match(originals.posting(uow, partner, match), match, side, poster,
                           partner.party_id)


def narrowed(rins: c.RinSelector, buy: Posting | None) -> c.RinSelector | None:
    """A sell's pick by attributes narrowed to the generator's batch the buy it answers names,
    where the sell names none of its own (design.md: `company`/`facility`/`batch`)."""
    if buy is None or not isinstance(rins, c.ByAttributes):
        return None
    narrowing = {name: getattr(buy.terms, name) for name in BATCH_FIELDS
                 if getattr(rins, name) is None and getattr(buy.terms, name) is not None}
    if rins.qap is None and buy.terms.qap is not None:  # the QAP status the buy asks
        narrowing["qap"] = buy.terms.qap
    return rins.model_copy(update=narrowing) if narrowing else None


def cancel_trade(uow: UnitOfWork, cmd: c.CancelTrade) -> list[str]:
    """The poster cancels its posting; one no longer pending is read from the log."""
    party = uow.registered(cmd.party, "party")
    party.cancel(cmd, closed_posting(uow, party, cmd.trade))
    return []


def deny_trade(uow: UnitOfWork, cmd: c.DenyTrade) -> list[str]:
    """The partner denies a posting made to it: closed at its poster, found by the offer its
    command stored at the partner."""
    poster_id = originals.offered(uow, uow.registered(cmd.party, "party"), cmd.trade)
    poster = uow.party(poster_id) if poster_id is not None else None
    if poster is None:
        trd.check_deny(None, cmd.trade, cmd.party)
        return []
    poster.deny(cmd, closed_posting(uow, poster, cmd.trade))
    return []


def closed_posting(uow: UnitOfWork, poster: Party, posting_id: str) -> Posting | None:
    """`poster`'s posting `posting_id` as it ended, when it is not pending (read from the log)."""
    if posting_id in poster.trades.open:
        return None
    return originals.posting(uow, poster, posting_id)


def expire_trades(uow: UnitOfWork, cmd: c.ExpireTrades) -> list[str]:
    """Every posting pending more than the window of business days on `cmd.date` expires."""
    for party in uow.posting_parties(cmd.date):
        party.expire(cmd.date, uow.trade_window, cmd.id)
    return []


def reverse(uow: UnitOfWork, cmd: c.Reverse) -> list[str]:
    """A remedial, compensating fact (§80.1452(d)): a retirement's exact ranges held again by
    the retirer, or a trade's sent back from the buyer to the party that gave them."""
    party = uow.registered(cmd.party, "party")
    found = rev.check_original(originals.original(uow, party, cmd.command), cmd.command)
    if found.kind == Reversible.RETIRE:
        return [b.code for b in party.unretire(cmd, found, uow.gate())]
    code = party.check_reversal(found, cmd)
    assert found.receiver is not None
    buyer = uow.registered(found.receiver, "command")
    blocks = buyer.give_back(found, cmd.party, cmd.date, uow.invalid_in, code, cmd.id,
                             uow.gate())
    party.take_back(found, found.receiver, cmd.date, code, cmd.id)
    return [b.code for b in blocks]


HANDLERS: dict[type[c.Model], Handler] = {
    c.RegisterParty: register_party,
    c.Generate: generate,
    c.Transfer: transfer,
    c.TransferFuel: transfer_fuel,
    c.Separate: separate,
    c.Retire: retire,
    c.Split: split,
    c.ReportObligation: report_obligation,
    c.Invalidate: invalidate,
    c.Sell: sell,
    c.Buy: buy,
    c.CancelTrade: cancel_trade,
    c.DenyTrade: deny_trade,
    c.ExpireTrades: expire_trades,
    c.Reverse: reverse,
    c.Lock: bh.lock,
    c.Unlock: bh.unlock,
    c.VerifyBatch: bh.verify_batch,
    c.BlockGenerator: bh.block_generator,
    c.UnblockGenerator: bh.unblock_generator,
}
