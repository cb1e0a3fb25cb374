"""The Party aggregate: one registered party's RINs and renewable fuel, as a stream of facts.

Every change is an event carrying its effective date (the transaction date the regulation cares
about), the recorded time (`timestamp`), the client's command id, and exact serial ranges.
Guards live in the services that call the `record_*` methods; the `apply` bodies only change
state, so replaying old history never re-judges it.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from functools import lru_cache
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from ledger.domain.daughters import add_cut
from ledger.domain.fuel_book import FuelBook
from ledger.domain.holdings import Holdings
from ledger.domain.rin import RinBlock
from ledger.rules.s1426.delayed import emts_production_date

STANDARD_TRADE = 10  # EMTS buy/sell reason 010, standard trade
PARTY_NAMESPACE = uuid5(NAMESPACE_URL, "https://rin-ledger/party")


class Party(Aggregate):
    """A registered party (§80.1450) and everything it owns."""

    TOPIC = "rin_ledger:Party"
    class_version = 2

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A release-1 snapshot's state: it still counted obligated-party separations, which
        the §80.1429(b)(7) limit now reads from the party's history instead, and kept no
        daughters' first serials (§80.1428(d)), which release 1 never recorded."""
        state.pop("separated_as_obligated", None)
        state.setdefault("split_cuts", {})

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
        roles: list[str]
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
            state["production_date"] = emts_production_date(
                state["rin"].key.batch, state["production_start"]
            )

        def apply(self, party: Party) -> None:
            year = str(self.rin.key.vintage)
            party.batches_used.setdefault(year, []).append(self.rin.key.batch)
            party.produced[year] = party.produced.get(year, Decimal(0)) + self.standardized_volume

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
        """

        TOPIC = "rin_ledger:Party.Transferred"
        class_version = 2
        effective_date: date
        client_id: str | None
        rins: list[RinBlock]
        volume: Decimal | None
        ptd: str | None
        price: Decimal | None
        trade_reason_code: int

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["trade_reason_code"] = STANDARD_TRADE

    class TransferredOut(Transferred):
        """RINs (and, with K=1, their fuel) left this party for `to_party`."""

        TOPIC = "rin_ledger:Party.TransferredOut"
        to_party: str

        def apply(self, party: Party) -> None:
            for block in self.rins:
                party.holdings.remove(block, self.effective_date)
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
        direction: str
        volume: Decimal
        counterparty: str | None
        ptd: str | None
        facility: str | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["facility"] = None

        def apply(self, party: Party) -> None:
            if self.direction == "delivered":
                party.fuel.deliver(self.volume, self.effective_date)
            else:
                party.fuel.receive(self.volume, self.effective_date)
            if self.direction == "produced":
                year = str(self.effective_date.year)
                party.produced[year] = party.produced.get(year, Decimal(0)) + self.volume

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
            for block in self.rins:
                party.holdings.remove(block, self.effective_date)
                party.holdings.add(
                    RinBlock(block.key.with_k(2), block.start, block.end), self.effective_date
                )
            if self.fuel_used:
                party.fuel.deliver(self.fuel_used, self.effective_date)

    class Retired(Event):
        """Gallon-RINs retired, for compliance or another EMTS reason; they never move again."""

        TOPIC = "rin_ledger:Party.Retired"
        effective_date: date
        client_id: str | None
        rins: list[RinBlock]
        reason_code: int
        reason: str
        compliance_year: int | None
        category: str | None

        def apply(self, party: Party) -> None:
            for block in self.rins:
                party.holdings.remove(block, self.effective_date)

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
            party.obligations[str(self.year)] = dict(self.rvo)

    def __init__(
        self, party_id: str, name: str, roles: list[str], facilities: list[str],
        client_id: str | None,
    ) -> None:
        self.party_id = party_id
        self.name = name
        self.roles = list(roles)
        self.facilities = list(facilities)
        self.holdings = Holdings()
        self.fuel = FuelBook()
        self.batches_used: dict[str, list[str]] = {}
        self.produced: dict[str, Decimal] = {}
        self.obligations: dict[str, dict[str, int]] = {}
        #: batch identity → first serials of the daughters this party knows (§80.1428(d))
        self.split_cuts: dict[str, list[int]] = {}

    @classmethod
    def register(
        cls, party_id: str, name: str, roles: list[str], facilities: list[str],
        client_id: str | None = None,
    ) -> Party:
        return cls._create(
            cls.Registered, id=cls.create_id(party_id), party_id=party_id, name=name,
            roles=list(roles), facilities=list(facilities), client_id=client_id,
        )

    def has_role(self, *roles: str) -> bool:
        return any(role in self.roles for role in roles)

    def record(self, event_class: type[Party.Event], **fields: Any) -> None:
        """Record one fact; the caller has already checked every rule that applies."""
        self.trigger_event(event_class, **fields)
