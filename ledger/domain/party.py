"""The Party aggregate: one registered party's RINs and renewable fuel, as a stream of facts.

Every change is an event carrying its effective date (the transaction date the regulation cares
about), the recorded time (`timestamp`), the client's command id, and exact serial ranges.
Each command method checks every rule the party can judge (ledger/rules) and only then triggers
its events; the `apply` bodies only change state, so replaying old history never re-judges it.
The facts the rules read from the past are kept in `facts` (ledger/domain/party_facts.py).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal
from functools import lru_cache, partial
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from ledger.domain import commands as c
from ledger.domain.batch_gate import OPEN, Gate
from ledger.domain.business_days import business_days_after
from ledger.domain.daughters import add_cut, cut
from ledger.domain.emts import TRADE_REASONS
from ledger.domain.errors import InputError
from ledger.domain.fuel_book import FuelBook
from ledger.domain.holdings import Holdings
from ledger.domain.party_facts import (
    AppliedRetirement,
    PartyFacts,
    ReportedYear,
    UnblendedYear,
)
from ledger.domain.ranges import SerialSet
from ledger.domain.reversals import Original
from ledger.domain.rin import BlockKey, RinBlock, parse_code
from ledger.domain.trade_book import Posting, Side, Status, Terms, TradeBook, free_fuel
from ledger.domain.vocabulary import FuelDirection, Role
from ledger.rules import s1427_compliance as cmp
from ledger.rules import s1428_rins as r1428
from ledger.rules import s1429_separation as sep
from ledger.rules import s1431_invalid as inv
from ledger.rules import s1450_registration as reg
from ledger.rules import s1451_compliance_level as lvl
from ledger.rules import s1452_blocked as blk
from ledger.rules import s1452_reversals as rev
from ledger.rules import s1452_trades as trd
from ledger.rules import s1460_prohibited as prh
from ledger.rules import s1471_auditors as aud
from ledger.rules import s1474_replacement as rpl
from ledger.rules.s1407_obligations import Category, compute_rvo, validate_rvo
from ledger.rules.s1425_rin import check_batch_unique
from ledger.rules.s1426 import delayed as dl
from ledger.rules.s1426 import eligibility as elig
from ledger.rules.s1426 import generation as gen
from ledger.rules.s1434_retirement import retirement_reason

STANDARD_TRADE = 10  # EMTS buy/sell reason 010, standard trade
ALL_HELD = 10**15  # a quantity no party holds: a pick of everything held
PARTY_NAMESPACE = uuid5(NAMESPACE_URL, "https://rin-ledger/party")
#: how many of a block's gallon-RINs have been found invalid (§80.1431): the invalidation
#: records are other aggregates, so the application passes this in
InvalidIn = Callable[[RinBlock], int]


class Party(Aggregate):
    """A registered party (§80.1450) and everything it owns."""

    TOPIC = "rin_ledger:Party"
    #: 3: `facts` (what the rules read from the past) and years as int keys. A snapshot of an
    #: older version cannot hold the facts, so the snapshot store replays past it
    #: (ledger/infrastructure/snapshot_seal.py); `upcast_v2_v3` serves the audit's comparison.
    #: 4: `trades`, the party's EMTS postings and the offers made to it (§80.1452).
    #: 5: `blocked`, the generators on the party's EMTS blocked list (§80.1452(d)).
    #: 6: `trades` keeps the pending postings and the released sells' reservation lives only.
    #: 7: each year of `facts.applied` and each slot of `holdings` stored as one string (the
    #: same state, read faster).
    class_version = 7
    #: the oldest version whose snapshots load as this one's (ledger/infrastructure/
    #: snapshot_seal.py `loads_as_current`): a v6 state differs from v7 only in how its store
    #: lays out `facts.applied` and `holdings`, which the transcodings read either way
    snapshots_load_from = 6

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A release-1 snapshot's state: it still counted obligated-party separations, which
        the §80.1429(b)(7) limit now reads from the party's history instead, and kept no
        daughters' first serials (§80.1428(d)), which release 1 never recorded."""
        state.pop("separated_as_obligated", None)
        state.setdefault("split_cuts", {})

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        """A v2 state's per-year maps, from which only a replay builds `facts`: dropped, as
        such a snapshot is never loaded to decide a command (it is replayed past)."""
        for name in ("batches_used", "produced", "obligations"):
            state.pop(name, None)

    @staticmethod
    def upcast_v3_v4(state: dict[str, Any]) -> None:
        """A v3 state predates EMTS postings: its party had none (§80.1452)."""
        state["trades"] = TradeBook()

    @staticmethod
    def upcast_v4_v5(state: dict[str, Any]) -> None:
        """A v4 state predates the blocked list: its party blocked no generator (§80.1452(d))."""
        state["blocked"] = []

    @staticmethod
    def upcast_v5_v6(state: dict[str, Any]) -> None:
        """A v5 state's trade book held every posting ever made and every offer; its layout is
        decoded into the bounded v6 book (`TradeBook.of_history`) by its transcoding
        (ledger/infrastructure/transcodings.py), so the state is already as v6 holds it."""

    @staticmethod
    def upcast_v6_v7(state: dict[str, Any]) -> None:
        """A v6 state held each year of `facts.applied` and each slot of `holdings` as a list
        of records; the transcodings (ledger/infrastructure/transcodings.py `year_records`,
        `slot_records`) read those as they read v7's strings, into the same retirements
        (§80.1427) and holdings, so the state is already as v7 holds it."""

    @staticmethod
    @lru_cache(maxsize=16_384)
    def create_id(party_id: str) -> UUID:
        """Deterministic id: a party id can be registered once (uuid5 of the company id;
        remembered, as every command asks it)."""
        return uuid5(PARTY_NAMESPACE, party_id)

    class Event(Aggregate.Event):
        TOPIC = "rin_ledger:Party.Event"

    class Created(Event, Aggregate.Created):
        """The library's base creation event; parties are created by `Registered`."""

        TOPIC = "rin_ledger:Party.Created"

    class Registered(Aggregate.Created):
        """A party registered with its company id, name, roles and facilities."""

        TOPIC = "rin_ledger:Party.Registered"
        party_id: str
        name: str
        roles: list[Role]
        facilities: list[str]
        client_id: str | None

    class Generated(Event):
        """A batch's gallon-RINs came into being (§80.1426): how many, and how computed.

        Version 2 added `renewable_fraction_method`, the ASTM D6866 method (B, C) or `approved`
        by which R of partially renewable fuel was measured (§80.1426(f)(4)(iv)); v1 events
        recorded none. Version 3 added `production_date`, the production date EMTS records:
        07/01/2010 or 01/01/2011 for delayed RINs (§80.1426(g)(10)(i)-(ii)), else
        `production_start`, which stays the first day the fuel was actually produced.
        """

        TOPIC = "rin_ledger:Party.Generated"
        class_version = 3
        effective_date: date
        client_id: str | None
        rin: RinBlock
        fuel: str
        d_code: int
        equivalence_value: Decimal
        standardized_volume: Decimal
        paragraph: str
        formula: str
        production_start: date | None
        production_end: date | None
        details: dict[str, Any]
        renewable_fraction_method: str | None
        production_date: date | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["renewable_fraction_method"] = None

        @staticmethod
        def upcast_v2_v3(state: dict[str, Any]) -> None:
            """Derived from what was stored: the batch number and production start
            (§80.1426(g)(10))."""
            state["production_date"] = dl.emts_production_date(
                state["rin"].key.batch, state["production_start"]
            )

        def apply(self, party: Party) -> None:
            key, facts = self.rin.key, party.facts
            facts.batches.setdefault(key.vintage, {})[key.batch] = self.rin
            facts.produce(key.vintage, self.standardized_volume)
            facts.fuels.setdefault(self.fuel, self.effective_date)
            facts.fuels[self.fuel] = min(facts.fuels[self.fuel], self.effective_date)
            facts.first_gallon(key.facility, self.effective_date.year)
            if dl.is_original(self.paragraph, self.effective_date):
                facts.delayed.window.setdefault(key.batch_id, SerialSet())
            if gen.is_delayed(key.batch):
                generated = facts.delayed.generated
                generated[key.vintage] = generated.get(key.vintage, 0) + self.rin.gallon_rins
                facts.delayed.generated_on.add(self.effective_date)

    class Assigned(Event):
        """K=1 gallon-RINs bound to the volume of fuel they were generated for (§80.1426(e))."""

        TOPIC = "rin_ledger:Party.Assigned"
        effective_date: date
        client_id: str | None
        rins: list[RinBlock]
        volume: Decimal

        def apply(self, party: Party) -> None:
            for block in self.rins:
                party.holdings.add(block, self.effective_date)
            party.fuel.receive(self.volume, self.effective_date)

    class Transferred(Event):
        """What a trade's two sides share (§80.1428(a)(3)-(4)): exact ranges, fuel, PTD, price.

        Version 2 added `trade_reason_code` (EMTS buy/sell reason); v1 events were standard trades.
        Version 3 added `postings`, the ids of the sell and the buy a two-sided trade completed
        (§80.1452(c)); None for a fast-path `transfer` and for every earlier event.
        """

        TOPIC = "rin_ledger:Party.Transferred"
        class_version = 3
        effective_date: date
        client_id: str | None
        rins: list[RinBlock]
        volume: Decimal | None
        ptd: str | None
        price: Decimal | None
        trade_reason_code: int
        postings: list[str] | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["trade_reason_code"] = STANDARD_TRADE

        @staticmethod
        def upcast_v2_v3(state: dict[str, Any]) -> None:
            state["postings"] = None

    class TransferredOut(Transferred):
        """RINs (and, with K=1, their fuel) left this party for `to_party`."""

        TOPIC = "rin_ledger:Party.TransferredOut"
        to_party: str

        def apply(self, party: Party) -> None:
            window = party.facts.delayed.window
            for block in self.rins:
                party.holdings.remove(block, self.effective_date)
                sent = window.get(block.key.batch_id)
                if sent is not None:  # an (f)(6) batch of the delayed window (§80.1426(g)(5))
                    window[block.key.batch_id] = sent.union(SerialSet(((block.start, block.end),)))
            if self.volume:
                party.fuel.deliver(self.volume, self.effective_date)

    class TransferredIn(Transferred):
        """RINs (and, with K=1, their fuel) arrived from `from_party`."""

        TOPIC = "rin_ledger:Party.TransferredIn"
        from_party: str

        def apply(self, party: Party) -> None:
            for block in self.rins:
                party.holdings.add(block, self.effective_date)
            for before, after in zip(self.rins, self.rins[1:], strict=False):
                # the seller named daughters apart (§80.1428(d)): they stay apart here
                if before.key.batch_id == after.key.batch_id and before.end + 1 == after.start:
                    add_cut(party.split_cuts, str(after.key.batch_id), after.start)
            if self.volume:
                party.fuel.receive(self.volume, self.effective_date)

    class TradePosted(Event):
        """A sell or buy posted to EMTS (§80.1452(c)(6)); a sell's `rins` are the exact ranges it
        reserves on `effective_date`, a buy's none. `client_id` is the posting's id."""

        TOPIC = "rin_ledger:Party.TradePosted"
        #: 2 added `qap`, the QAP status a buy asks or a sell's RINs have (§80.1471(e)); None
        #: where it names none (every v1 posting)
        class_version = 2
        effective_date: date
        client_id: str
        side: Side
        partner: str
        d_code: int
        vintage: int
        k: int
        quantity: int
        volume: Decimal | None
        company: str | None
        facility: str | None
        batch: str | None
        rins: list[RinBlock]
        price: Decimal | None
        gallon_price: Decimal | None
        ptd: str | None
        broker: str | None
        reason_code: int
        match: str | None
        qap: str | None = None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["qap"] = None

        def apply(self, party: Party) -> None:
            party.trades.post(self.posting(party.party_id))

        def posting(self, poster: str) -> Posting:
            """The posting as `poster` posted it, pending."""
            terms = Terms(self.effective_date, self.d_code, self.vintage, self.k, self.quantity,
                          self.volume, self.company, self.facility, self.batch, qap=self.qap)
            return Posting(
                self.client_id, Side(self.side), poster, self.partner, terms,
                tuple(self.rins), self.price, self.gallon_price, self.ptd, self.broker,
                self.reason_code, self.match,
            )

    class TradeOffered(Event):
        """A posting by `poster` that names this party as partner: the party finds it through
        the posting's command record to deny or answer it (ledger/application/originals.py), so
        its state keeps nothing of it. `client_id` is the posting's id."""

        TOPIC = "rin_ledger:Party.TradeOffered"
        effective_date: date
        client_id: str
        poster: str

        def apply(self, party: Party) -> None:
            """Nothing to keep: the event itself is the partner's record of the offer."""

    class TradeClosed(Event):
        """A posting of this party ended: completed by `counterpart`, cancelled (EMTS 060),
        denied (EMTS 050) or expired; a sell's reservation is released (or moved, on
        completion). `client_id` is the id of the command that closed it, if it had one."""

        TOPIC = "rin_ledger:Party.TradeClosed"
        effective_date: date
        client_id: str | None
        posting: str
        status: Status
        reason_code: int | None
        counterpart: str | None

        def apply(self, party: Party) -> None:
            party.trades.close(self.posting, Status(self.status), self.effective_date)

    class Reversal(Event):
        """A compensating fact (EMTS remedial transaction, §80.1452(d)): the exact ranges of an
        earlier command `reverses` (its id) go back; the original stays as it was stored.
        `reason_code` is the EMTS code the reversal carries (§80.1452(c)(13))."""

        TOPIC = "rin_ledger:Party.Reversal"
        effective_date: date
        client_id: str | None
        rins: list[RinBlock]
        reverses: str
        reason_code: int

    class TradeReversedOut(Reversal):
        """The buyer of a trade `reverses` gave its exact ranges (and K=1 fuel) back to
        `to_party`, the party that gave them (EMTS remedial sell, 030 or 080)."""

        TOPIC = "rin_ledger:Party.TradeReversedOut"
        to_party: str
        volume: Decimal | None

        def apply(self, party: Party) -> None:
            for block in self.rins:
                party.holdings.remove(block, self.effective_date)
            if self.volume:
                party.fuel.deliver(self.volume, self.effective_date)

    class TradeReversedIn(Reversal):
        """The exact ranges (and K=1 fuel) this party gave in trade `reverses` came back from
        `from_party`; the trade counts as reversed here."""

        TOPIC = "rin_ledger:Party.TradeReversedIn"
        from_party: str
        volume: Decimal | None

        def apply(self, party: Party) -> None:
            window = party.facts.delayed.window
            for block in self.rins:
                party.holdings.add(block, self.effective_date)
                sent = window.get(block.key.batch_id)
                if sent is not None:  # no longer sold (§80.1426(g)(5))
                    back = sent.intersection(SerialSet(((block.start, block.end),)))
                    window[block.key.batch_id] = sent.subtract(back)
            if self.volume:
                party.fuel.receive(self.volume, self.effective_date)
            party.facts.reversed[self.reverses] = self.effective_date

    class Unretired(Reversal):
        """The exact ranges retired by `reverses` are held again (EMTS unretire): for compliance
        they no longer count toward `compliance_year` (§80.1427)."""

        TOPIC = "rin_ledger:Party.Unretired"
        reason: str
        compliance_year: int | None
        category: str | None

        def apply(self, party: Party) -> None:
            for block in self.rins:
                party.holdings.add(block, self.effective_date)
            facts = party.facts
            if self.reason == "delayed_rin":  # §80.1426(g)(5): no longer retired from this date
                facts.delayed.retired.extend(
                    (self.effective_date, b.key.vintage, -b.gallon_rins) for b in self.rins
                )
            year = self.compliance_year
            if self.reason in sep.APPLIED_REASONS and year is not None and year in facts.applied:
                back = set(self.rins)
                facts.applied[year] = [a for a in facts.applied[year] if a.block not in back]
            facts.reversed[self.reverses] = self.effective_date

    class FuelMoved(Event):
        """Renewable fuel received, delivered or produced without RINs.

        Version 2 added `facility`, where fuel produced without RINs was made: a new facility's
        calendar years count from its first gallon (§80.1426(c)(3)(i)); v1 events and moves
        between parties have none.
        """

        TOPIC = "rin_ledger:Party.FuelMoved"
        class_version = 2
        effective_date: date
        client_id: str | None
        direction: FuelDirection
        volume: Decimal
        counterparty: str | None
        ptd: str | None
        facility: str | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["facility"] = None

        def apply(self, party: Party) -> None:
            if self.direction == FuelDirection.DELIVERED:
                party.fuel.deliver(self.volume, self.effective_date)
            else:
                party.fuel.receive(self.volume, self.effective_date)
            if self.direction == FuelDirection.PRODUCED:
                party.facts.produce(self.effective_date.year, self.volume)
            if self.facility is not None:
                party.facts.first_gallon(self.facility, self.effective_date.year)

    class Split(Event):
        """A held batch-RIN divided into daughters that differ only in S and E (§80.1428(d))."""

        TOPIC = "rin_ledger:Party.Split"
        effective_date: date
        client_id: str | None
        parent: RinBlock
        daughters: list[RinBlock]

        def apply(self, party: Party) -> None:
            """No serial held changes; each daughter but the first starts a cut, so the
            daughters are held, shown and named apart from then on."""
            for daughter in self.daughters[1:]:
                add_cut(party.split_cuts, str(daughter.key.batch_id), daughter.start)

    class Separated(Event):
        """K=1 gallon-RINs separated from their fuel, becoming K=2 (§80.1429)."""

        TOPIC = "rin_ledger:Party.Separated"
        effective_date: date
        client_id: str | None
        rins: list[RinBlock]
        reason_code: int | None
        reason: str
        paragraph: str
        volume: Decimal | None
        blend_percent: Decimal | None
        fuel_used: Decimal

        def apply(self, party: Party) -> None:
            """K becomes 2 with the same serials (§80.1425(a)(2), §80.1429(c))."""
            separated = [RinBlock(b.key.with_k(2), b.start, b.end) for b in self.rins]
            for block, k2 in zip(self.rins, separated, strict=True):
                party.holdings.remove(block, self.effective_date)
                party.holdings.add(k2, self.effective_date)
            if self.fuel_used:
                party.fuel.deliver(self.fuel_used, self.effective_date)
            if self.reason == "replacement":  # §80.1429(b)(10)
                party.facts.replacement.extend(separated)
            if self.paragraph in sep.UNBLENDED:  # §80.1429(b)(7), (b)(9)
                year = party.facts.unblended.setdefault(self.effective_date.year, UnblendedYear())
                for b in self.rins:
                    d_code = b.key.d_code
                    year.counted[d_code] = year.counted.get(d_code, 0) + b.gallon_rins
                    if b.key.company == party.party_id:
                        year.own[d_code] = year.own.get(d_code, 0) + b.gallon_rins

    class Retired(Event):
        """Gallon-RINs retired, for compliance or another EMTS reason; they never move again."""

        TOPIC = "rin_ledger:Party.Retired"
        #: 2 added `compliance_level` and `compliance_facility`, the basis a compliance
        #: retirement is for (§80.1451(a)(1)(iii)-(iv)); v1 retirements stated none
        class_version = 2
        effective_date: date
        client_id: str | None
        rins: list[RinBlock]
        reason_code: int
        reason: str
        compliance_year: int | None
        category: str | None
        compliance_level: str | None = None
        compliance_facility: str | None = None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["compliance_level"] = None
            state["compliance_facility"] = None

        def apply(self, party: Party) -> None:
            for block in self.rins:
                party.holdings.remove(block, self.effective_date)
            facts = party.facts
            if self.reason == "delayed_rin":  # §80.1426(g)(5)
                facts.delayed.retired.extend(
                    (self.effective_date, b.key.vintage, b.gallon_rins) for b in self.rins
                )
            if self.reason in sep.APPLIED_REASONS and self.compliance_year is not None:
                facts.add_applied(self.compliance_year, [
                    AppliedRetirement(b, self.reason, self.category) for b in self.rins
                ])

    class GeneratorBlocked(Event):
        """`generator` went on the party's EMTS blocked list: it refuses that company's RINs
        (§80.1452(d))."""

        TOPIC = "rin_ledger:Party.GeneratorBlocked"
        effective_date: date
        client_id: str | None
        generator: str

        def apply(self, party: Party) -> None:
            party.blocked.append(self.generator)

    class GeneratorUnblocked(Event):
        """`generator` came off the party's blocked list (§80.1452(d))."""

        TOPIC = "rin_ledger:Party.GeneratorUnblocked"
        effective_date: date
        client_id: str | None
        generator: str

        def apply(self, party: Party) -> None:
            party.blocked.remove(self.generator)

    class ObligationReported(Event):
        """An obligated party's or exporter's RVOs for a year (§80.1407), given or computed.

        Version 2 added `basis`, what the RVO arises from (§80.1429(b)(9)); v1 reports stated none.
        """

        TOPIC = "rin_ledger:Party.ObligationReported"
        class_version = 2
        effective_date: date | None
        client_id: str | None
        year: int
        rvo: dict[str, int]
        source: str
        gasoline_volume: Decimal | None
        diesel_volume: Decimal | None
        approach: str | None
        bbd_2010_reduction: int
        basis: list[str] | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["basis"] = None

        def apply(self, party: Party) -> None:
            """The latest report for a year is the one in force."""
            party.facts.reports[self.year] = ReportedYear(
                dict(self.rvo), self.approach, self.bbd_2010_reduction, self.basis
            )

    def __init__(
        self, party_id: str, name: str, roles: list[Role], facilities: list[str],
        client_id: str | None,
    ) -> None:
        self.party_id = party_id
        self.name = name
        self.roles = [Role(role) for role in roles]
        self.facilities = list(facilities)
        self.holdings = Holdings()
        self.fuel = FuelBook()
        self.facts = PartyFacts()
        #: batch identity → first serials of the daughters this party knows (§80.1428(d))
        self.split_cuts: dict[str, list[int]] = {}
        self.trades = TradeBook()  # EMTS postings and offers (§80.1452)
        self.blocked: list[str] = []  # generators on its EMTS blocked list (§80.1452(d))

    @property
    def batches_used(self) -> dict[int, list[str]]:
        """Vintage → the batch numbers generated (§80.1425(e))."""
        return {year: list(batches) for year, batches in self.facts.batches.items()}

    @property
    def produced(self) -> dict[int, Decimal]:
        """Year → standardized gallons produced, with RINs or without (§80.1426(c)(2))."""
        return self.facts.produced

    @property
    def obligations(self) -> dict[int, dict[str, int]]:
        """Year → the RVOs of the report in force (§80.1407)."""
        return {year: report.rvo for year, report in self.facts.reports.items()}

    # -- registration (§80.1450) --------------------------------------------------------------

    @classmethod
    def register(
        cls, party_id: str, name: str, roles: list[str], facilities: list[str],
        client_id: str | None = None, *, registered: bool = False,
    ) -> Party:
        """A new party with known roles (§80.1450); `registered`: the id is taken already."""
        reg.check_roles(roles)
        aud.check_registration(roles)
        reg.check_new(party_id, registered)
        return cls._create(
            cls.Registered, id=cls.create_id(party_id), party_id=party_id, name=name,
            roles=[Role(role) for role in roles], facilities=list(facilities),
            client_id=client_id,
        )

    @property
    def role_words(self) -> list[str]:
        """The roles as the rules (ledger/rules) read them: plain strings."""
        return list(self.roles)

    # -- generation (§80.1426) ----------------------------------------------------------------

    def generate(self, cmd: c.Generate, source_roles: list[str] | None = None) -> list[RinBlock]:
        """Every gallon-RIN is generated K=1, assigned to the batch's volume at once
        (§80.1425(a)(1), §80.1426(e)(3)), with serials from 00000001 (§80.1426(d)(2)(i)) to
        V_RIN (§80.1426(d)(2)(ii)); `source_roles`: the foreign producer's registration
        (§80.1426(c)(4)-(c)(6)). Fuel made without RINs is `produce`d (§80.1426(c)(2)-(3))."""
        reg.check_generator(self.party_id, self.role_words, self.facilities, cmd.facility)
        if not cmd.generate_rins:
            self.produce(cmd)
            return []
        elig.check_import(cmd, self.role_words, source_roles)
        if elig.renewable_fuel_feedstocks(cmd):
            elig.check_feedstock_fuels(cmd, self.facts.fuels_by(cmd.date))
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
                self.delayed_history(cmd.date), vintage, sum(y.gallon_rins for y in yields),
                cmd.date,
            )
        used = list(self.facts.batches.get(vintage, {}))
        planned: list[tuple[gen.BatchYield, RinBlock]] = []
        for batch_yield in yields:
            batch = batch_number(cmd, batch_yield.d_code, len(yields))
            check_batch_unique(used, vintage, batch)
            used.append(batch)
            key = BlockKey(
                1, vintage, self.party_id, cmd.facility, batch, batch_yield.rr,
                batch_yield.d_code, cmd.date, str(cmd.fuel),  # the plain name, as stored
            )
            planned.append((batch_yield, RinBlock(key, 1, batch_yield.gallon_rins)))
        details = cmd.model_dump(mode="json", exclude_none=True, by_alias=True)
        for batch_yield, block in planned:
            self.trigger_event(
                self.Generated, effective_date=cmd.date, client_id=cmd.id, rin=block,
                fuel=str(cmd.fuel), d_code=batch_yield.d_code,
                equivalence_value=batch_yield.equivalence_value,
                standardized_volume=batch_yield.standardized_volume,
                paragraph=batch_yield.paragraph, formula=batch_yield.formula,
                production_start=cmd.production_start, production_end=cmd.production_end,
                details=details, renewable_fraction_method=cmd.renewable_fraction_method,
                production_date=dl.emts_production_date(block.key.batch, cmd.production_start),
            )
            self.trigger_event(
                self.Assigned, effective_date=cmd.date, client_id=cmd.id, rins=[block],
                volume=batch_yield.standardized_volume,
            )
            if delayed:  # §80.1426(g)(11): generated assigned, then separated at once
                reason = sep.separation_reason("delayed")
                self.trigger_event(
                    self.Separated, effective_date=cmd.date, client_id=cmd.id, rins=[block],
                    reason_code=reason.code, reason=reason.word, paragraph=reason.paragraph,
                    volume=None, blend_percent=None, fuel_used=Decimal(0),
                )
        return [block for _, block in planned]

    def produce(self, cmd: c.Generate) -> None:
        """§80.1426(c)(2)-(3): a small or new producer records its fuel without RINs."""
        if cmd.volume is None:
            raise InputError(
                "production without RINs is recorded in standardized gallons", "volume"
            )
        gen.check_new_producer(cmd.new_facility_year, elig.is_import(cmd, self.role_words))
        if cmd.new_facility_year is not None:
            gen.check_new_facility_year(
                cmd.new_facility_year, cmd.date.year, self.facts.first_year.get(cmd.facility)
            )
        gen.check_small_producer_exemption(
            self.facts.produced.get(cmd.date.year, Decimal(0)) + cmd.volume,
            cmd.new_facility_year,
        )
        self.trigger_event(
            self.FuelMoved, effective_date=cmd.date, client_id=cmd.id,
            direction=FuelDirection.PRODUCED, volume=cmd.volume, counterparty=None, ptd=None,
            facility=cmd.facility,
        )

    def delayed_history(self, by: date | None = None) -> dl.DelayedHistory:
        """The party's (f)(6) RINs sold, (g)(5) retirements (dated by `by`, if given) and
        delayed RINs (§80.1426(g))."""
        facts = self.facts.delayed
        history = dl.DelayedHistory(generated=dict(facts.generated),
                                    generated_on=set(facts.generated_on))
        for batch_id, serials in facts.window.items():
            if serials:
                vintage = batch_id.vintage
                history.original[vintage] = history.original.get(vintage, 0) + len(serials)
        for on, vintage, count in facts.retired:
            if by is None or on <= by:
                history.retired[vintage] = history.retired.get(vintage, 0) + count
        return history

    # -- what a command names (§80.1428) ------------------------------------------------------

    def select(self, selector: c.RinSelector, on: date, gate: Gate = OPEN) -> list[RinBlock]:
        """The exact blocks a selector names among what this party may move on `on` (FIFO),
        past `gate`: locks, the receiver's blocked list, the QAP status asked."""
        if isinstance(selector, c.ByCode):
            base, start, end = parse_code(selector.code, "rins.code")
            key = self.holdings.key_for(base)
            block = RinBlock(key or base, start, end)
            held = self.holdings.held_gallon_rins(block, on) if key else 0
            r1428.check_held(block.gallon_rins, held, selector.code, on.isoformat(), "rins.code")
            r1428.check_not_parent(block, self.split_cuts, "rins.code")
            trd.check_unreserved(selector.code, self.trades.reserving(block, on), "rins.code")
            gate.admit([block], on, "rins.code", selector.qap)
            return [block]
        reserved = partial(self.trades.reserved, on=on) if self.trades.has_sells else None
        blocks = self.pick(selector, on, gate.withholding(reserved, on, selector.qap))
        held = sum(b.gallon_rins for b in blocks)
        what = f"D{selector.d_code} vintage {selector.vintage} K={selector.k}"
        if held < selector.quantity and gate is not OPEN:
            everything = selector.model_copy(update={"quantity": ALL_HELD})
            gate.check_shortfall(self.pick(everything, on, reserved), on, selector.qap, what,
                                 selector.quantity, held, "rins.quantity")
        if held < selector.quantity and reserved is not None:
            everything = selector.model_copy(update={"quantity": ALL_HELD})
            owned = sum(b.gallon_rins for b in self.pick(everything, on, None))
            r1428.check_held(selector.quantity, owned, what, on.isoformat(), "rins.quantity")
            trd.check_unreserved_quantity(
                what, selector.quantity, held, owned - held, on.isoformat(), "rins.quantity"
            )
        r1428.check_held(selector.quantity, held, what, on.isoformat(), "rins.quantity")
        return blocks

    def pick(self, selector: c.ByAttributes, on: date,
             withheld: Callable[[BlockKey], SerialSet] | None) -> list[RinBlock]:
        """First-in-first-out among what is held on `on`, but `withheld`; daughters apart."""
        return cut(self.holdings.pick_fifo(
            on, selector.quantity, d_code=selector.d_code, vintage=selector.vintage,
            k=selector.k, company=selector.company, facility=selector.facility,
            batch=selector.batch, withheld=withheld,
        ), self.split_cuts)

    def replacement_rins(self, blocks: list[RinBlock]) -> list[RinBlock]:
        """The K=2 blocks separated under §80.1429(b)(10); only when `blocks` hold K=2 RINs
        this party generated, as only such RINs are separated so."""
        if not any(b.key.k == 2 and b.key.company == self.party_id for b in blocks):
            return []
        return self.facts.replacement

    # -- trades (§80.1428(a)) -----------------------------------------------------------------

    def transfer_out(
        self, to_party: str, selector: c.RinSelector, on: date, invalid_in: InvalidIn, *,
        volume: Decimal | None, ptd: str | None, price: Decimal | None, reason_code: int,
        client_id: str | None, gate: Gate = OPEN,
    ) -> list[RinBlock]:
        """Sell the RINs `selector` names (and, with K=1, their fuel) to `to_party`."""
        r1428.check_not_self(self.party_id, to_party)
        blocks = self.select(selector, on, gate)
        self.check_deliverable(blocks, on, invalid_in, volume)
        self.trigger_event(
            self.TransferredOut, effective_date=on, client_id=client_id, rins=blocks,
            volume=volume, ptd=ptd, price=price, trade_reason_code=reason_code,
            to_party=to_party, postings=None,
        )
        return blocks

    def check_deliverable(self, blocks: list[RinBlock], on: date, invalid_in: InvalidIn,
                          volume: Decimal | None, *, besides: str | None = None) -> None:
        """What every trade checks of the RINs it delivers (§80.1428(a), §80.1460(b)(2)): valid,
        not replacement RINs, K=1 with no more than 2.5 per gallon of fuel the party owns;
        `besides`: a sell whose own reserved fuel this delivery is."""
        for b in blocks:
            prh.check_transferable(invalid_in(b), b.code)
        sep.check_replacement_use(self.replacement_rins(blocks), blocks, "transferred")
        if blocks[0].key.k == 1:
            r1428.check_assigned_transfer(sum(b.gallon_rins for b in blocks), volume)
        if volume:
            self.check_fuel(volume, on, besides=besides)

    def receive(
        self, from_party: str, blocks: list[RinBlock], on: date, *, volume: Decimal | None,
        ptd: str | None, price: Decimal | None, reason_code: int, client_id: str | None,
        postings: list[str] | None = None,
    ) -> None:
        """The buyer's side of a trade `from_party` made: the same exact ranges."""
        self.trigger_event(
            self.TransferredIn, effective_date=on, client_id=client_id, rins=blocks,
            volume=volume, ptd=ptd, price=price, trade_reason_code=reason_code,
            from_party=from_party, postings=postings,
        )

    def check_fuel(self, volume: Decimal, on: date, *, besides: str | None = None) -> None:
        """The party owns `volume` gallons on `on` and later (§80.1428(a)), beyond what its
        sells but `besides` reserve on each of those days (§80.1452(d))."""
        owned = self.fuel.available(on)
        r1428.check_fuel_owned(volume, owned, self.party_id, on.isoformat())
        held = self.trades.fuel_reservations(on, besides=besides) if self.trades.has_sells else []
        if held:
            free = free_fuel(self.fuel.changes_after(on), self.fuel.balance(on), on, held)
            trd.check_unreserved_fuel(self.party_id, volume, free, owned - free, on.isoformat())

    # -- EMTS postings (§80.1452) -------------------------------------------------------------

    def post_sell(self, cmd: c.Sell, invalid_in: InvalidIn, *,
                  narrowed: c.RinSelector | None = None, gate: Gate = OPEN) -> Posting:
        """Post a sell: the exact ranges `cmd.rins` (or `narrowed`, the same pick narrowed to the
        batch a buy names) names on `cmd.date` are checked as a transfer's and reserved."""
        r1428.check_not_self(self.party_id, cmd.to)
        blocks = self.select(narrowed or cmd.rins, cmd.date, gate)
        self.check_deliverable(blocks, cmd.date, invalid_in, cmd.volume)
        key = blocks[0].key
        named = cmd.rins if isinstance(cmd.rins, c.ByAttributes) else key
        statuses = {gate.qap(b.key) for b in blocks}
        return self._post(cmd, Side.SELL, cmd.to, Terms(
            cmd.date, key.d_code, key.vintage, key.k, sum(b.gallon_rins for b in blocks),
            cmd.volume, named.company, named.facility, named.batch,
            qap=statuses.pop() if len(statuses) == 1 else None,
        ), blocks)

    def post_buy(self, cmd: c.Buy) -> Posting:
        """Post a buy: what the buyer asks for, by attributes (§80.1452(c)(3)-(c)(11))."""
        r1428.check_not_self(self.party_id, cmd.from_)
        rins = cmd.rins
        if rins.k == 1:
            r1428.check_assigned_transfer(rins.quantity, cmd.volume)
        return self._post(cmd, Side.BUY, cmd.from_, Terms(
            cmd.date, rins.d_code, rins.vintage, rins.k, rins.quantity, cmd.volume,
            rins.company, rins.facility, rins.batch, qap=rins.qap,
        ), [])

    def _post(self, cmd: c.Sell | c.Buy, side: Side, partner: str, terms: Terms,
              blocks: list[RinBlock]) -> Posting:
        self.trigger_event(
            self.TradePosted, effective_date=cmd.date, client_id=cmd.id, side=side,
            partner=partner, d_code=terms.d_code, vintage=terms.vintage, k=terms.k,
            quantity=terms.quantity, volume=terms.volume, company=terms.company,
            facility=terms.facility, batch=terms.batch, rins=blocks, price=cmd.price,
            gallon_price=cmd.gallon_price, ptd=cmd.ptd, broker=cmd.broker,
            reason_code=TRADE_REASONS[cmd.reason], match=cmd.match, qap=terms.qap,
        )
        return self.trades.open[cmd.id]

    def offered(self, posting: Posting) -> None:
        """Note `posting`, which names this party as partner (its EMTS inbox)."""
        self.trigger_event(self.TradeOffered, effective_date=posting.terms.date,
                           client_id=posting.id, poster=posting.party)

    def candidates(self, side: Side, partner: str) -> list[Posting]:
        """This party's pending postings of `side` naming `partner`, oldest first."""
        return [p for p in self.trades.pending() if p.side is side and p.partner == partner]

    def deliver(self, sell: Posting, buy: Posting, invalid_in: InvalidIn,
                gate: Gate = OPEN) -> list[RinBlock]:
        """Complete pending `sell` with `buy`: its reserved ranges (and K=1 fuel) leave for the
        buyer with every check a transfer makes (§80.1428(a), §80.1460(b)(2)), on its date,
        past `gate` (locks, the buyer's blocked list)."""
        blocks, on = list(sell.rins), sell.terms.date
        gate.admit(blocks, on, "rins")
        self.check_deliverable(blocks, on, invalid_in, sell.terms.volume, besides=sell.id)
        self.close(sell.id, Status.COMPLETED, on, None, client_id=buy.id, counterpart=buy.id)
        self.trigger_event(
            self.TransferredOut, effective_date=on, client_id=buy.id, rins=blocks,
            volume=sell.terms.volume, ptd=sell.ptd, price=sell.price,
            trade_reason_code=sell.reason_code, to_party=sell.partner,
            postings=[sell.id, buy.id],
        )
        return blocks

    def accept(self, buy: Posting, sell: Posting, blocks: list[RinBlock]) -> None:
        """Complete pending `buy` with `sell`: the exact ranges the seller delivered arrive."""
        self.close(buy.id, Status.COMPLETED, sell.terms.date, None, client_id=sell.id,
                   counterpart=sell.id)
        self.receive(sell.party, blocks, sell.terms.date, volume=sell.terms.volume,
                     ptd=buy.ptd or sell.ptd, price=buy.price, reason_code=buy.reason_code,
                     client_id=sell.id, postings=[sell.id, buy.id])

    def close(self, posting: str, status: Status, on: date, reason_code: int | None, *,
              client_id: str | None, counterpart: str | None = None) -> None:
        """End a pending posting of this party; a sell's reservation is released with it."""
        self.trigger_event(self.TradeClosed, effective_date=on, client_id=client_id,
                           posting=posting, status=status, reason_code=reason_code,
                           counterpart=counterpart)

    def cancel(self, cmd: c.CancelTrade, closed: Posting | None = None) -> None:
        """The poster withdraws its pending posting (EMTS 060, §80.1452(d)); `closed`: the
        posting as it ended, read from the log, when it is not pending here."""
        trd.check_cancel(self.trades.open.get(cmd.trade, closed), cmd.trade, self.party_id,
                         cmd.date)
        self.close(cmd.trade, Status.CANCELLED, cmd.date, trd.CANCEL_CODE, client_id=cmd.id)

    def deny(self, cmd: c.DenyTrade, closed: Posting | None = None) -> None:
        """The partner a posting of this party names refuses it (EMTS 050, §80.1452(d));
        `closed`: the posting as it ended, read from the log, when it is not pending here."""
        trd.check_deny(self.trades.open.get(cmd.trade, closed), cmd.trade, cmd.party, cmd.date)
        self.close(cmd.trade, Status.DENIED, cmd.date, trd.DENY_CODE, client_id=cmd.id)

    def expire(self, on: date, window: int, client_id: str | None) -> list[str]:
        """Expire every pending posting more than `window` business days old on `on`."""
        stale = [p.id for p in self.trades.pending()
                 if business_days_after(p.terms.date, on) > window]
        for posting in stale:
            self.close(posting, Status.EXPIRED, on, None, client_id=client_id)
        return stale

    # -- reversals (EMTS remedial transactions, §80.1452(d)) -----------------------------------

    def check_reversal(self, original: Original, cmd: c.Reverse) -> int:
        """What every reversal checks of the party that submits it: it retired or gave the RINs,
        has not reversed the command yet, dates it on or after the original, and gives the
        reason EMTS expects; returns that reason's code."""
        rev.check_party(original, original.giver == self.id, self.party_id)
        rev.check_completed(original)
        rev.check_once(self.facts.reversed.get(original.id), original.id)
        rev.check_date(cmd.date, original)
        return rev.reversal_code(original, cmd.reason)

    def unretire(self, cmd: c.Reverse, original: Original, gate: Gate = OPEN) -> list[RinBlock]:
        """A retirement reversed (EMTS unretire): its exact ranges are held again from
        `cmd.date`, carrying the retirement's own reason code, unless `gate` finds their batch
        locked on that date (§80.1474(b)(1))."""
        code = self.check_reversal(original, cmd)
        gate.admit(list(original.rins), cmd.date, "command")
        self.trigger_event(
            self.Unretired, effective_date=cmd.date, client_id=cmd.id, rins=list(original.rins),
            reverses=original.id, reason_code=code, reason=original.reason,
            compliance_year=original.compliance_year, category=original.category,
        )
        return list(original.rins)

    def give_back(self, original: Original, to_party: str, on: date, invalid_in: InvalidIn,
                  code: int, client_id: str | None, gate: Gate = OPEN) -> list[RinBlock]:
        """The buyer's side of a reversed trade: the exact ranges it received (and their K=1
        fuel) go back, refused unless it holds them all on `on`, free of its own reservations
        and of locks (`gate`, §80.1474(b)(1)), with what any transfer checks (§80.1428(a),
        §80.1460(b)(2))."""
        blocks = list(original.rins)
        gate.admit(blocks, on, "command")
        for b in blocks:
            r1428.check_held(b.gallon_rins, self.holdings.held_gallon_rins(b, on), b.code,
                             on.isoformat(), "command")
            trd.check_unreserved(b.code, self.trades.reserving(b, on), "command")
        self.check_deliverable(blocks, on, invalid_in, original.volume)
        self.trigger_event(
            self.TradeReversedOut, effective_date=on, client_id=client_id, rins=blocks,
            reverses=original.id, reason_code=code, to_party=to_party, volume=original.volume,
        )
        return blocks

    def take_back(self, original: Original, from_party: str, on: date, code: int,
                  client_id: str | None) -> None:
        """The giver's side of a reversed trade: its exact ranges (and fuel) are back."""
        self.trigger_event(
            self.TradeReversedIn, effective_date=on, client_id=client_id,
            rins=list(original.rins), reverses=original.id, reason_code=code,
            from_party=from_party, volume=original.volume,
        )

    def move_fuel(
        self, direction: FuelDirection, counterparty: str, volume: Decimal, on: date, *,
        ptd: str | None, client_id: str | None,
    ) -> None:
        """Fuel without RINs delivered to or received from `counterparty`; a party delivers
        only fuel it owns on `on` and later (§80.1428(a))."""
        if direction == FuelDirection.DELIVERED:
            r1428.check_not_self(self.party_id, counterparty)
            self.check_fuel(volume, on)
        self.trigger_event(
            self.FuelMoved, effective_date=on, client_id=client_id, direction=direction,
            volume=volume, counterparty=counterparty, ptd=ptd, facility=None,
        )

    # -- the EMTS blocked list (§80.1452(d)) ---------------------------------------------------

    def block_generator(self, cmd: c.BlockGenerator) -> None:
        """Refuse from now on the RINs `cmd.generator` generated (§80.1452(d))."""
        blk.check_block(self.party_id, cmd.generator, self.blocked)
        self.trigger_event(self.GeneratorBlocked, effective_date=cmd.date, client_id=cmd.id,
                           generator=cmd.generator)

    def unblock_generator(self, cmd: c.UnblockGenerator) -> None:
        """Accept again the RINs `cmd.generator` generated (§80.1452(d))."""
        blk.check_unblock(self.party_id, cmd.generator, self.blocked)
        self.trigger_event(self.GeneratorUnblocked, effective_date=cmd.date, client_id=cmd.id,
                           generator=cmd.generator)

    # -- splits, separations, retirements, reports --------------------------------------------

    def split(self, cmd: c.Split, gate: Gate = OPEN) -> list[RinBlock]:
        """Divide a held batch-RIN into daughters differing only in S and E (§80.1428(d))."""
        base, start, end = parse_code(cmd.rin, "rin")
        key = self.holdings.key_for(base)
        parent = RinBlock(key or base, start, end)
        held = self.holdings.held_gallon_rins(parent, cmd.date) if key else 0
        r1428.check_split(parent.gallon_rins, held, cmd.sizes, cmd.rin)
        r1428.check_not_parent(parent, self.split_cuts, "rin")
        trd.check_unreserved(cmd.rin, self.trades.reserving(parent, cmd.date), "rin")
        gate.admit([parent], cmd.date, "rin")
        daughters, first = [], start
        for size in cmd.sizes:
            daughters.append(RinBlock(parent.key, first, first + size - 1))
            first += size
        self.trigger_event(
            self.Split, effective_date=cmd.date, client_id=cmd.id, parent=parent,
            daughters=daughters,
        )
        return daughters

    def separate(self, cmd: c.Separate, invalid_in: InvalidIn, gate: Gate = OPEN) -> None:
        """Separate K=1 gallon-RINs from their fuel (§80.1429), within the (b)(7) and (b)(9)
        limits when an obligated party separates while the fuel is unblended."""
        reason = sep.separation_reason(cmd.reason)
        if isinstance(cmd.rins, c.ByAttributes) and cmd.rins.k == 2:
            sep.check_separation(
                reason, k=2, gallon_rins=0, volume=None, blend_percent=None, fuels=set(),
                roles=[],
            )
        blocks = self.select(cmd.rins, cmd.date, gate)
        fuels = {b.key.fuel for b in blocks}
        reason = sep.read_for_fuels(reason, cmd.reason, fuels)
        sep.check_separation(
            reason, k=blocks[0].key.k, gallon_rins=sum(b.gallon_rins for b in blocks),
            volume=cmd.volume, blend_percent=cmd.blend_percent, fuels=fuels,
            roles=self.role_words,
        )
        if cmd.volume is not None and reason.word in sep.NEEDS_VOLUME:
            self.check_fuel(cmd.volume, cmd.date)
        if reason.word == "replacement":
            for b in blocks:
                sep.check_replacement(b.key.company, self.party_id)
        if reason.paragraph in sep.UNBLENDED and Role.OBLIGATED_PARTY in self.roles:
            sep.check_separation_limits(
                self.facts, self.party_id, self.role_words, cmd.date.year, blocks, invalid_in
            )
        fuel_used = cmd.volume if cmd.volume is not None and reason.word in sep.FUEL_USING else 0
        self.trigger_event(
            self.Separated, effective_date=cmd.date, client_id=cmd.id, rins=blocks,
            reason_code=reason.code, reason=reason.word, paragraph=reason.paragraph,
            volume=cmd.volume, blend_percent=cmd.blend_percent, fuel_used=Decimal(fuel_used),
        )

    def retire(self, cmd: c.Retire, invalid_in: InvalidIn, gate: Gate = OPEN) -> None:
        """Retire gallon-RINs for compliance (§80.1427) or another EMTS reason."""
        reason = retirement_reason(cmd.reason)
        cmp.check_retirement_year(reason.word, cmd.compliance_year, cmd.category)
        lvl.check_compliance_level(self.party_id, reason.word, cmd.compliance_level,
                                   cmd.compliance_facility, self.facilities)
        if reason.word == "compliance":
            cmp.check_retirer(self.party_id, self.role_words)
        blocks = self.select(cmd.rins, cmd.date, gate)
        if reason.word != sep.REPLACEMENT_RETIREMENT:
            sep.check_replacement_use(
                self.replacement_rins(blocks), blocks, f"retired for {reason.word}"
            )
        if reason.word in cmp.YEAR_REASONS:  # §80.1431(b)(2): never for compliance
            for b in blocks:
                inv.check_usable(invalid_in(b), b.code, reason.word)
        if reason.word == "remedial_invalid":
            self.check_remedial(cmd, blocks, invalid_in)
        if reason.word == "delayed_rin":
            dl.check_retirement(self.delayed_history(), blocks)
        if reason.word == "compliance":
            assert cmd.compliance_year is not None
            for b in blocks:
                cmp.check_compliance_retirement(
                    b.key.k, b.key.vintage, b.key.d_code, cmd.compliance_year, cmd.category
                )
        self.trigger_event(
            self.Retired, effective_date=cmd.date, client_id=cmd.id, rins=blocks,
            reason_code=reason.code, reason=reason.word, compliance_year=cmd.compliance_year,
            category=cmd.category, compliance_level=cmd.compliance_level,
            compliance_facility=cmd.compliance_facility,
        )

    def check_remedial(self, cmd: c.Retire, blocks: list[RinBlock], invalid_in: InvalidIn
                       ) -> None:
        """A remedial retirement (EMTS 110, §80.1474(b)) replaces invalid RINs the party
        retired for `compliance_year`, no more than are not yet replaced, with RINs valid for
        that year and for every RVO the invalid ones were applied to."""
        year = cmd.compliance_year
        used = replaced = 0
        categories: set[Category] = set()
        for retired in self.facts.applied.get(year, []) if year is not None else []:
            b = retired.block
            if retired.reason == "remedial_invalid":
                replaced += b.gallon_rins
            elif invalid := invalid_in(b):
                used += invalid
                categories |= cmp.valid_for(b.key.d_code, retired.category)
        rpl.check_replacement_needed(
            self.party_id, year, used - replaced, sum(b.gallon_rins for b in blocks)
        )
        assert year is not None
        for b in blocks:
            cmp.check_compliance_retirement(
                b.key.k, b.key.vintage, b.key.d_code, year, cmd.category
            )
            rpl.check_replacement_d_code(
                b.key.d_code, cmp.valid_for(b.key.d_code, cmd.category), categories
            )

    def report_obligation(self, cmd: c.ReportObligation) -> None:
        """An obligated party's or exporter's RVOs for a year (§80.1407), given or computed."""
        cmp.check_retirer(self.party_id, self.role_words)
        cmp.check_bbd_2010_reduction(cmd.year, cmd.bbd_2010_reduction)
        if cmd.rvo is not None:
            rvo, source = validate_rvo(cmd.rvo), "given"
        else:
            rvo = compute_rvo(
                cmd.year, cmd.gasoline_volume or Decimal(0), cmd.diesel_volume or Decimal(0)
            )
            source = "computed"
        self.trigger_event(
            self.ObligationReported, effective_date=cmd.date, client_id=cmd.id, year=cmd.year,
            rvo={str(k): v for k, v in rvo.items()}, source=source,
            gasoline_volume=cmd.gasoline_volume, diesel_volume=cmd.diesel_volume,
            approach=cmd.approach, bbd_2010_reduction=cmd.bbd_2010_reduction, basis=cmd.basis,
        )


def batch_number(cmd: c.Generate, d_code: int, count: int) -> str:
    """One batch per D code (§80.1426(f)(3)(v)): `batches` names them when there are several."""
    if count == 1:
        return cmd.batch
    if not cmd.batches or d_code not in cmd.batches:
        raise InputError(
            f"this batch yields {count} D codes; give a batch number for D{d_code}", "batches"
        )
    return cmd.batches[d_code]
