"""Command handlers: check every rule that applies, then record the facts on the aggregates.

A `UnitOfWork` caches the aggregates one or more commands touch; nothing is triggered on an
aggregate until every check of a command has passed, so a refused command leaves no event.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import Recording

from ledger.application.idempotency import CommandRecord, event_name
from ledger.domain import commands as c
from ledger.domain.daughters import check_not_parent, cut
from ledger.domain.emts import TRADE_REASONS, retirement_reason, separation_reason
from ledger.domain.errors import InputError, LedgerError
from ledger.domain.invalidation import BatchInvalidation
from ledger.domain.party import Party
from ledger.domain.rin import BatchId, BlockKey, RinBlock, check_batch_unique, parse_code
from ledger.domain.separation_year import separation_year
from ledger.infrastructure.event_store import LedgerApp
from ledger.infrastructure.invalidation_index import InvalidationIndex
from ledger.rules import s1426_delayed as dl
from ledger.rules import s1426_eligibility as elig
from ledger.rules import s1426_generation as gen
from ledger.rules import s1427_compliance as cmp
from ledger.rules import s1427_retirement as ret
from ledger.rules import s1428_rins as r1428
from ledger.rules import s1429_replacement as rpl
from ledger.rules import s1429_separation as sep
from ledger.rules import s1431_invalid as inv
from ledger.rules import s1450_registration as reg
from ledger.rules.s1407_obligations import Category, compute_rvo, validate_rvo


@dataclass
class Outcome:
    """What applying one command did: `applied` or `duplicate`, and the RIN codes generated."""

    status: str
    rins: list[str] = field(default_factory=list)
    generated: bool = False

    @property
    def rin(self) -> str | None:
        """The generated batch-RIN's code (the first, when one batch yields several D codes)."""
        return self.rins[0] if self.generated and self.rins else None


class UnitOfWork:
    """The aggregates loaded and changed by the commands of one transaction."""

    def __init__(
        self, app: LedgerApp, *, optimistic: bool = False, cache: dict[UUID, Any] | None = None,
        opened: InvalidationIndex | None = None,
    ) -> None:
        self.app = app
        self.optimistic = optimistic
        # A ledger passing its cache also drops from the repository's cache what a failed unit
        # changed, so this unit may use the repository's objects without a copy.
        self.copy = cache is None
        self.cache = cache if cache is not None else {}
        if opened is None:
            opened = InvalidationIndex(app.recorder).up_to(app.recorder.max_notification_id() or 0)
        self.opened = opened
        self.parties: dict[str, Party | None] = {}
        self.records: dict[str, CommandRecord] = {}
        self.invalidations: dict[BatchId, BatchInvalidation | None] = {}
        self.events: list[Any] = []
        self.touched: dict[UUID, Any] = {}  # aggregates the current command has used
        #: the version of each party and invalidation record read (0: absent), which the save
        #: checks for those it does not change: a decision rests on them too (§80.1431(b))
        self.read: dict[UUID, int] = {}

    def touch(self, aggregate: Any) -> Any:
        """Note that the current command used `aggregate` (only those can have new events)."""
        if aggregate is not None:
            self.touched[aggregate.id] = aggregate
        return aggregate

    def refused(self) -> None:
        """Forget what a refused command used: it recorded nothing, and the next command's
        events must be collected in the order that command records them, not in the order a
        refused line first used their aggregates (issue 9, attack 9)."""
        self.touched.clear()

    def party(self, party_id: str) -> Party | None:
        if party_id not in self.parties:
            party_key = Party.create_id(party_id)
            try:
                self.parties[party_id] = self.load(party_key)
            except AggregateNotFoundError:
                self.parties[party_id] = None
            self.note_read(party_key, self.parties[party_id])
        return self.touch(self.parties[party_id])

    def note_read(self, aggregate_id: UUID, aggregate: Any) -> None:
        """Remember the version this unit read `aggregate_id` at (0: absent) for the save."""
        self.read[aggregate_id] = aggregate.version if aggregate is not None else 0

    def load(self, aggregate_id: UUID) -> Any:
        """An aggregate as last saved: the ledger's in-memory copy if it has one, else the store's.

        The ledger hands over a cache only while nothing but its own saves has been stored since
        it was filled, and drops it after any failed command or save.
        """
        cached = self.cache.get(aggregate_id)
        if cached is not None:
            return cached
        return self.app.repository.get(aggregate_id, deepcopy_from_cache=self.copy)

    def registered(self, party_id: str, field_name: str) -> Party:
        party = self.party(party_id)
        reg.check_registered(party_id, party is not None, field_name)
        assert party is not None
        return party

    def invalidation(self, batch_id: BatchId) -> BatchInvalidation | None:
        """The batch's invalidation record (§80.1431), or None if none of it was found invalid."""
        if batch_id not in self.invalidations:
            # Most batches have none: the index of opened records answers that from memory.
            record_id = BatchInvalidation.create_id(batch_id)
            self.invalidations[batch_id] = (
                self.load(record_id) if self.opened.opened(record_id) else None
            )
            self.note_read(record_id, self.invalidations[batch_id])
        return self.touch(self.invalidations[batch_id])

    def invalid_in(self, block: RinBlock) -> int:
        """How many of `block`'s gallon-RINs have been found invalid."""
        record = self.invalidation(block.key.batch_id)
        return record.invalid_in(block) if record is not None else 0

    def history(self, party: Party) -> Iterator[Any]:
        """The party's events, oldest first: those stored, then those this transaction holds."""
        yield from self.app.repository.event_store.get(party.id)
        yield from (event for event in self.events if event.originator_id == party.id)

    def generated_block(self, batch_id: BatchId) -> RinBlock | None:
        """The whole batch-RIN as generated (serials 1..N), or None if no such batch exists."""
        party = self.party(batch_id.company)
        if party is None or batch_id.batch not in party.batches_used.get(str(batch_id.vintage), []):
            return None
        for event in self.history(party):
            if isinstance(event, Party.Generated) and event.rin.key.batch_id == batch_id:
                return event.rin
        return None

    def record_of(self, client_id: str) -> CommandRecord | None:
        if client_id in self.records:
            return self.records[client_id]
        try:
            return self.app.repository.get(self.app.record_id(client_id))
        except AggregateNotFoundError:
            return None

    def reusable(self) -> list[Any]:
        """The aggregates later commands may load again: parties and invalidation records."""
        return [
            *(p for p in self.parties.values() if p is not None),
            *(r for r in self.invalidations.values() if r is not None),
        ]

    def aggregates(self) -> list[Any]:
        return [*self.reusable(), *self.records.values()]

    def collect(self) -> None:
        """Move the events of the command just handled into the transaction, in command order.

        Saving aggregates one after another would group a batch's events by aggregate; the
        notification log must instead follow the commands, so that a gallon-RIN's generation
        always precedes its transfer for everyone who follows the log.
        """
        for aggregate in self.touched.values():
            self.events.extend(aggregate.collect_events())
        self.touched.clear()

    def save(self) -> list[Recording]:
        """Store every event of the transaction, in command order, atomically."""
        self.collect()
        changed = {event.originator_id for event in self.events}
        unchanged = {i: v for i, v in self.read.items() if i not in changed}
        return self.app.save_in_order(self.events, self.aggregates(), unchanged)


# Command fields added after release 1 (§80.1426(a)(2), (c)(4), (c)(7), (f)(4)(iv),
# §80.1429(b)(9)): left out of a digest while at their default, so a command applied before
# keeps its stored digest and is recognised as the same command when sent again.
LATER_FIELDS = frozenset({
    "renewable_fraction_method", "foreign_producer", "heating_oil", "end_user_affidavits",
    "basis",
})


def digest(command: c.Model) -> str:
    fields = type(command).model_fields
    unset = {
        name for name in LATER_FIELDS & fields.keys()
        if getattr(command, name) == fields[name].default
    }
    dumped = command.model_dump_json(by_alias=True, exclude=unset or None)
    return hashlib.sha256(dumped.encode()).hexdigest()


def handle(uow: UnitOfWork, command: Any) -> Outcome:
    """Apply one validated command within `uow`; raise a `LedgerError` to refuse it.

    With `uow.optimistic`, a command id is looked up in the store only when the command is
    refused: a new id is the common case, and an id already stored makes the save fail, after
    which the caller applies the batch again one command at a time, looking every id up.
    """
    if command.id is not None and (command.id in uow.records or not uow.optimistic):
        seen = uow.record_of(command.id)
        if seen is not None:
            return repeated(seen, command)
    try:
        rins = HANDLERS[type(command)](uow, command)
    except LedgerError:
        uow.refused()
        seen = uow.record_of(command.id) if command.id is not None and uow.optimistic else None
        if seen is None:
            raise
        return repeated(seen, command)
    if command.id is not None:
        produced = [event_name(event.originator_id, event.originator_version)
                    for aggregate in uow.touched.values() for event in aggregate.pending_events]
        uow.records[command.id] = uow.touch(
            CommandRecord.applied(command.id, digest(command), produced, uow.app.record_id)
        )
    return Outcome("applied", rins, generated=isinstance(command, c.Generate))


def repeated(seen: CommandRecord, command: Any) -> Outcome:
    """A command whose id was applied before: a no-op if it is the same command."""
    if seen.digest != digest(command):
        raise InputError("already used by a different command", "id")
    return Outcome("duplicate")


def register_party(uow: UnitOfWork, cmd: c.RegisterParty) -> list[str]:
    reg.check_roles(cmd.roles)
    reg.check_new(cmd.party, uow.party(cmd.party) is not None)
    uow.parties[cmd.party] = uow.touch(Party.register(
        cmd.party, cmd.name, cmd.roles, sorted(set(cmd.facilities)), cmd.id
    ))
    return []


def generate(uow: UnitOfWork, cmd: c.Generate) -> list[str]:
    """Every gallon-RIN is generated K=1, assigned to the batch's volume at once (§80.1425(a)(1),
    §80.1426(e)(3)), with serials from 00000001 (§80.1426(d)(2)(i)) to V_RIN (§80.1426(d)(2)(ii)).
    """
    party = uow.registered(cmd.party, "party")
    reg.check_generator(cmd.party, party.roles, party.facilities, cmd.facility)
    if not cmd.generate_rins:
        return produce_without_rins(uow, party, cmd)
    check_eligible(uow, party, cmd)
    yields = gen.compute_generation(cmd)
    delayed = gen.is_delayed(cmd.batch)
    vintage = (
        gen.check_delayed(
            cmd.batch, cmd.production_start, cmd.date, cmd.pathway_effective_date,
            cmd.production_end,
        )
        if delayed else cmd.date.year
    )
    if delayed:
        dl.check_generation(
            delayed_history(uow, party, cmd.date), vintage, sum(y.gallon_rins for y in yields),
            cmd.date,
        )
    used = list(party.batches_used.get(str(vintage), []))
    planned: list[tuple[gen.BatchYield, RinBlock]] = []
    for batch_yield in yields:
        batch = batch_number(cmd, batch_yield.d_code, len(yields))
        check_batch_unique(used, vintage, batch)
        used.append(batch)
        key = BlockKey(
            1, vintage, cmd.party, cmd.facility, batch, batch_yield.rr, batch_yield.d_code,
            cmd.date, str(cmd.fuel),  # the plain name, as a replay from the store reads it
        )
        planned.append((batch_yield, RinBlock(key, 1, batch_yield.gallon_rins)))
    for batch_yield, block in planned:
        party.record(
            Party.Generated, effective_date=cmd.date, client_id=cmd.id, rin=block,
            fuel=str(cmd.fuel), d_code=batch_yield.d_code,
            equivalence_value=batch_yield.equivalence_value,
            standardized_volume=batch_yield.standardized_volume,
            paragraph=batch_yield.paragraph, formula=batch_yield.formula,
            production_start=cmd.production_start, production_end=cmd.production_end,
            details=cmd.model_dump(mode="json", exclude_none=True, by_alias=True),
            renewable_fraction_method=cmd.renewable_fraction_method,
            production_date=dl.emts_production_date(block.key.batch, cmd.production_start),
        )
        party.record(
            Party.Assigned, effective_date=cmd.date, client_id=cmd.id, rins=[block],
            volume=batch_yield.standardized_volume,
        )
        if delayed:  # §80.1426(g)(11): generated assigned, then separated at once
            reason = separation_reason("delayed")
            party.record(
                Party.Separated, effective_date=cmd.date, client_id=cmd.id, rins=[block],
                reason_code=reason.code, reason=reason.word, paragraph=reason.paragraph,
                volume=None, blend_percent=None, fuel_used=Decimal(0),
            )
    return [block.code for _, block in planned]


def check_eligible(uow: UnitOfWork, party: Party, cmd: c.Generate) -> None:
    """§80.1426(c)(4)-(c)(6) from the ledger's facts: the foreign producer's registration and
    the fuels this party has generated RINs for."""
    source = uow.party(cmd.foreign_producer) if cmd.foreign_producer is not None else None
    elig.check_import(cmd, party.roles, source.roles if source is not None else None)
    if elig.renewable_fuel_feedstocks(cmd):
        fuels = {
            event.fuel for event in uow.history(party)
            if isinstance(event, Party.Generated) and event.effective_date <= cmd.date
        }
        elig.check_feedstock_fuels(cmd, fuels)


def delayed_history(uow: UnitOfWork, party: Party, by: date | None = None) -> dl.DelayedHistory:
    """The party's (f)(6) RINs sold, (g)(5) retirements (dated by `by`, if given) and delayed
    RINs (§80.1426(g))."""
    f6: list[RinBlock] = []
    sent: list[RinBlock] = []
    retired: list[tuple[date, RinBlock]] = []
    delayed: list[tuple[date, RinBlock]] = []
    for event in uow.history(party):
        if isinstance(event, Party.Generated):
            if dl.is_original(event.paragraph, event.effective_date):
                f6.append(event.rin)
            if gen.is_delayed(event.rin.key.batch):
                delayed.append((event.effective_date, event.rin))
        elif isinstance(event, Party.TransferredOut):
            sent.extend(event.rins)
        elif isinstance(event, Party.Retired) and event.reason == "delayed_rin":
            retired.extend((event.effective_date, block) for block in event.rins)
    return dl.read_history(f6, sent, retired, delayed, by)


def batch_number(cmd: c.Generate, d_code: int, count: int) -> str:
    """One batch per D code (§80.1426(f)(3)(v)): `batches` names them when there are several."""
    if count == 1:
        return cmd.batch
    if not cmd.batches or d_code not in cmd.batches:
        raise InputError(
            f"this batch yields {count} D codes; give a batch number for D{d_code}", "batches"
        )
    return cmd.batches[d_code]


def produce_without_rins(uow: UnitOfWork, party: Party, cmd: c.Generate) -> list[str]:
    """§80.1426(c)(2)-(3): a small or new producer records its fuel without generating RINs."""
    if cmd.volume is None:
        raise InputError("production without RINs is recorded in standardized gallons", "volume")
    gen.check_new_producer(cmd.new_facility_year, elig.is_import(cmd, party.roles))
    if cmd.new_facility_year is not None:
        gen.check_new_facility_year(
            cmd.new_facility_year, cmd.date.year, first_year(uow, party, cmd.facility)
        )
    year = str(cmd.date.year)
    gen.check_small_producer_exemption(
        party.produced.get(year, Decimal(0)) + cmd.volume, cmd.new_facility_year
    )
    party.record(
        Party.FuelMoved, effective_date=cmd.date, client_id=cmd.id, direction="produced",
        volume=cmd.volume, counterparty=None, ptd=None, facility=cmd.facility,
    )
    return []


def first_year(uow: UnitOfWork, party: Party, facility: str) -> int | None:
    """The year the facility produced its first gallon the ledger knows of, with RINs or
    without (§80.1426(c)(3)(i)); None if it has produced none."""
    years = [
        event.effective_date.year for event in uow.history(party)
        if (isinstance(event, Party.Generated) and event.rin.key.facility == facility)
        or (isinstance(event, Party.FuelMoved) and event.facility == facility)
    ]
    return min(years, default=None)


def resolve(party: Party, selector: c.RinSelector, on: date) -> list[RinBlock]:
    """The exact blocks a selector names among what `party` may move on `on` (FIFO)."""
    if isinstance(selector, c.ByCode):
        base, start, end = parse_code(selector.code, "rins.code")
        key = party.holdings.key_for(base)
        block = RinBlock(key or base, start, end)
        held = party.holdings.held_gallon_rins(block, on) if key else 0
        r1428.check_held(block.gallon_rins, held, selector.code, on.isoformat(), "rins.code")
        check_not_parent(block, party.split_cuts, "rins.code")
        return [block]
    blocks = cut(party.holdings.pick_fifo(
        on, selector.quantity, d_code=selector.d_code, vintage=selector.vintage, k=selector.k,
        company=selector.company, facility=selector.facility, batch=selector.batch,
    ), party.split_cuts)
    held = sum(b.gallon_rins for b in blocks)
    what = f"D{selector.d_code} vintage {selector.vintage} K={selector.k}"
    r1428.check_held(selector.quantity, held, what, on.isoformat(), "rins.quantity")
    return blocks


def transfer(uow: UnitOfWork, cmd: c.Transfer) -> list[str]:
    seller = uow.registered(cmd.from_, "from")
    buyer = uow.registered(cmd.to, "to")
    r1428.check_not_self(cmd.from_, cmd.to)
    blocks = resolve(seller, cmd.rins, cmd.date)
    for b in blocks:
        inv.check_transferable(uow.invalid_in(b), b.code)
    rpl.check_replacement_use(replacement_rins(uow, seller, blocks), blocks, "transferred")
    count = sum(b.gallon_rins for b in blocks)
    if blocks[0].key.k == 1:
        r1428.check_assigned_transfer(count, cmd.volume)
    if cmd.volume:
        r1428.check_fuel_owned(
            cmd.volume, seller.fuel.available(cmd.date), cmd.from_, cmd.date.isoformat()
        )
    common = dict(effective_date=cmd.date, client_id=cmd.id, rins=blocks, volume=cmd.volume,
                  ptd=cmd.ptd, price=cmd.price, trade_reason_code=TRADE_REASONS[cmd.reason])
    seller.record(Party.TransferredOut, to_party=cmd.to, **common)
    buyer.record(Party.TransferredIn, from_party=cmd.from_, **common)
    return []


def transfer_fuel(uow: UnitOfWork, cmd: c.TransferFuel) -> list[str]:
    seller = uow.registered(cmd.from_, "from")
    buyer = uow.registered(cmd.to, "to")
    r1428.check_not_self(cmd.from_, cmd.to)
    r1428.check_fuel_owned(
        cmd.volume, seller.fuel.available(cmd.date), cmd.from_, cmd.date.isoformat()
    )
    common = dict(effective_date=cmd.date, client_id=cmd.id, volume=cmd.volume, ptd=cmd.ptd,
                  facility=None)
    seller.record(Party.FuelMoved, direction="delivered", counterparty=cmd.to, **common)
    buyer.record(Party.FuelMoved, direction="received", counterparty=cmd.from_, **common)
    return []


def separate(uow: UnitOfWork, cmd: c.Separate) -> list[str]:
    party = uow.registered(cmd.party, "party")
    reason = separation_reason(cmd.reason)
    selector_k = cmd.rins.k if isinstance(cmd.rins, c.ByAttributes) else None
    if selector_k == 2:
        sep.check_separation(
            reason, k=2, gallon_rins=0, volume=None, blend_percent=None, fuels=set(), roles=[]
        )
    blocks = resolve(party, cmd.rins, cmd.date)
    count = sum(b.gallon_rins for b in blocks)
    fuels = {b.key.fuel for b in blocks}
    reason = sep.read_for_fuels(reason, cmd.reason, fuels)
    sep.check_separation(
        reason, k=blocks[0].key.k, gallon_rins=count, volume=cmd.volume,
        blend_percent=cmd.blend_percent, fuels=fuels, roles=party.roles,
    )
    if cmd.volume is not None and reason.word in sep.NEEDS_VOLUME:
        r1428.check_fuel_owned(
            cmd.volume, party.fuel.available(cmd.date), cmd.party, cmd.date.isoformat()
        )
    if reason.word == "replacement":
        for b in blocks:
            sep.check_replacement(b.key.company, cmd.party)
    if reason.paragraph in sep.UNBLENDED and "obligated_party" in party.roles:
        check_separation_limits(uow, party, cmd.date.year, blocks)
    fuel_used = cmd.volume if cmd.volume is not None and reason.word in sep.FUEL_USING else 0
    party.record(
        Party.Separated, effective_date=cmd.date, client_id=cmd.id, rins=blocks,
        reason_code=reason.code, reason=reason.word, paragraph=reason.paragraph,
        volume=cmd.volume, blend_percent=cmd.blend_percent, fuel_used=Decimal(fuel_used),
    )
    return []


def check_separation_limits(uow: UnitOfWork, party: Party, year: int, blocks: list[RinBlock]
                            ) -> None:
    """§80.1429(b)(7) on the RINs the party generated itself, then (b)(9) on all, if it is a
    (b)(9) party; each per D code against the year's RVOs including the deficit carried in.

    The limits of §80.1429(b)(7) and §80.1429(b)(9).
    """
    facts = separation_year(uow.history(party), party.party_id, year, uow.invalid_in)
    own: dict[int, int] = {}
    every: dict[int, int] = {}
    for b in blocks:
        every[b.key.d_code] = every.get(b.key.d_code, 0) + b.gallon_rins
        if b.key.company == party.party_id:
            own[b.key.d_code] = own.get(b.key.d_code, 0) + b.gallon_rins
    limits = [(sep.SEP_OBLIGATED_CAP, own, facts.own)]
    if sep.is_b9_party(party.roles, facts.basis):
        limits.append((sep.SEP_IMPORTER_CAP, every, facts.counted))
    for capped, separating, already in limits:
        for d_code, gallon_rins in sorted(separating.items()):
            sep.check_limit(
                capped, d_code=d_code, year=year, gallon_rins=gallon_rins,
                already=already.get(d_code, 0), rvo=facts.rvo,
            )


def retire(uow: UnitOfWork, cmd: c.Retire) -> list[str]:
    party = uow.registered(cmd.party, "party")
    reason = retirement_reason(cmd.reason)
    ret.check_retirement_year(reason.word, cmd.compliance_year, cmd.category)
    if reason.word == "compliance":
        ret.check_retirer(cmd.party, party.roles)
    blocks = resolve(party, cmd.rins, cmd.date)
    if reason.word != rpl.REPLACEMENT_RETIREMENT:
        rpl.check_replacement_use(
            replacement_rins(uow, party, blocks), blocks, f"retired for {reason.word}"
        )
    if reason.word in ret.YEAR_REASONS:  # §80.1431(b)(2): never for compliance
        for b in blocks:
            inv.check_usable(uow.invalid_in(b), b.code, reason.word)
    if reason.word == "remedial_invalid":
        check_replacement(uow, party, cmd, blocks)
    if reason.word == "delayed_rin":
        dl.check_retirement(delayed_history(uow, party), blocks)
    if reason.word == "compliance":
        assert cmd.compliance_year is not None
        for b in blocks:
            cmp.check_compliance_retirement(
                b.key.k, b.key.vintage, b.key.d_code, cmd.compliance_year, cmd.category
            )
    party.record(
        Party.Retired, effective_date=cmd.date, client_id=cmd.id, rins=blocks,
        reason_code=reason.code, reason=reason.word, compliance_year=cmd.compliance_year,
        category=cmd.category,
    )
    return []


def replacement_rins(uow: UnitOfWork, party: Party, blocks: list[RinBlock]) -> list[RinBlock]:
    """The K=2 blocks the party separated under §80.1429(b)(10), read from its history; only
    when `blocks` hold K=2 RINs it generated, as only such RINs are separated so."""
    if not any(b.key.k == 2 and b.key.company == party.party_id for b in blocks):
        return []
    return [
        RinBlock(block.key.with_k(2), block.start, block.end)
        for event in uow.history(party)
        if isinstance(event, Party.Separated) and event.reason == "replacement"
        for block in event.rins
    ]


def check_replacement(uow: UnitOfWork, party: Party, cmd: c.Retire, blocks: list[RinBlock]) -> None:
    """A remedial retirement (EMTS 110, §80.1474(b)) replaces invalid RINs the party retired for
    `compliance_year`, no more than are not yet replaced, with RINs valid for that year and for
    every RVO the invalid ones were applied to. Reads the party's retirements from its history."""
    year = cmd.compliance_year
    used = replaced = 0
    categories: set[Category] = set()
    for event in uow.history(party):
        if not isinstance(event, Party.Retired) or year is None or event.compliance_year != year:
            continue
        if event.reason == "remedial_invalid":
            replaced += sum(b.gallon_rins for b in event.rins)
        elif event.reason == "compliance":
            for b in event.rins:
                if invalid := uow.invalid_in(b):
                    used += invalid
                    categories |= cmp.valid_for(b.key.d_code, event.category)
    inv.check_replacement_needed(
        cmd.party, year, used - replaced, sum(b.gallon_rins for b in blocks)
    )
    assert year is not None
    for b in blocks:
        cmp.check_compliance_retirement(b.key.k, b.key.vintage, b.key.d_code, year, cmd.category)
        inv.check_replacement_d_code(
            b.key.d_code, cmp.valid_for(b.key.d_code, cmd.category), categories
        )


def split(uow: UnitOfWork, cmd: c.Split) -> list[str]:
    party = uow.registered(cmd.party, "party")
    base, start, end = parse_code(cmd.rin, "rin")
    key = party.holdings.key_for(base)
    parent = RinBlock(key or base, start, end)
    held = party.holdings.held_gallon_rins(parent, cmd.date) if key else 0
    r1428.check_split(parent.gallon_rins, held, cmd.sizes, cmd.rin)
    check_not_parent(parent, party.split_cuts, "rin")
    daughters, first = [], start
    for size in cmd.sizes:
        daughters.append(RinBlock(parent.key, first, first + size - 1))
        first += size
    party.record(
        Party.Split, effective_date=cmd.date, client_id=cmd.id, parent=parent, daughters=daughters
    )
    return [d.code for d in daughters]


def report_obligation(uow: UnitOfWork, cmd: c.ReportObligation) -> list[str]:
    party = uow.registered(cmd.party, "party")
    ret.check_retirer(cmd.party, party.roles)
    cmp.check_bbd_2010_reduction(cmd.year, cmd.bbd_2010_reduction)
    if cmd.rvo is not None:
        rvo, source = validate_rvo(cmd.rvo), "given"
    else:
        rvo = compute_rvo(
            cmd.year, cmd.gasoline_volume or Decimal(0), cmd.diesel_volume or Decimal(0)
        )
        source = "computed"
    party.record(
        Party.ObligationReported, effective_date=cmd.date, client_id=cmd.id, year=cmd.year,
        rvo={str(k): v for k, v in rvo.items()}, source=source,
        gasoline_volume=cmd.gasoline_volume, diesel_volume=cmd.diesel_volume,
        approach=cmd.approach, bbd_2010_reduction=cmd.bbd_2010_reduction, basis=cmd.basis,
    )
    return []


def invalidate(uow: UnitOfWork, cmd: c.Invalidate) -> list[str]:
    """Record the regulator's finding that gallon-RINs S..E of a batch are invalid (§80.1431(a))."""
    base, start, end = parse_code(cmd.rin, "rin")
    batch_id = base.batch_id
    record = uow.invalidation(batch_id)
    generated = record.generated if record is not None else uow.generated_block(batch_id)
    inv.check_generated(str(batch_id), generated, base, start, end)
    assert generated is not None
    block = RinBlock(generated.key, start, end)
    inv.check_not_yet_invalid(
        str(batch_id), record.invalid_in(block) if record is not None else 0, start, end
    )
    if record is None:
        record = uow.invalidations[batch_id] = uow.touch(BatchInvalidation.open(generated))
    record.record(
        effective_date=cmd.date, client_id=cmd.id, rins=[block], reason=cmd.reason, note=cmd.note
    )
    return [block.code]


HANDLERS: dict[type, Any] = {
    c.RegisterParty: register_party,
    c.Generate: generate,
    c.Transfer: transfer,
    c.TransferFuel: transfer_fuel,
    c.Separate: separate,
    c.Retire: retire,
    c.Split: split,
    c.ReportObligation: report_obligation,
    c.Invalidate: invalidate,
}
