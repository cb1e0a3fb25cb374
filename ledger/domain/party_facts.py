"""What the rules read from a party's past, kept up to date by its events' `apply`.

Compact on purpose (a busy party has 100,000 events): per-year counters and the few blocks a
rule names, not every block ever sent. Years are `int` keys; turning them into JSON is the
transcoder's job (ledger/infrastructure/transcodings.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from ledger.domain.ranges import SerialSet
from ledger.domain.rin import BatchId, RinBlock


@dataclass
class DelayedFacts:
    """Delayed RINs (§80.1426(g)): the party's own (f)(6) batches of the window with the serials
    it transferred away, its (g)(5) retirements, and the delayed RINs it generated."""

    window: dict[BatchId, SerialSet] = field(default_factory=dict)
    retired: list[tuple[date, int, int]] = field(default_factory=list)  # (date, vintage, RINs)
    generated: dict[int, int] = field(default_factory=dict)  # vintage → gallon-RINs
    generated_on: set[date] = field(default_factory=set)


@dataclass(frozen=True)
class ReportedYear:
    """The latest obligation report for a year (§80.1407): RVOs, approach, 2010 BBD reduction
    (§80.1427(a)(7)(i)) and the basis it states (§80.1429(b)(9))."""

    rvo: dict[str, int]
    approach: str | None
    bbd_2010_reduction: int
    basis: list[str] | None


@dataclass(frozen=True)
class AppliedRetirement:
    """Gallon-RINs retired for a compliance year and applied to its RVOs: for compliance, or
    to replace invalid RINs retired for it (EMTS 110, §80.1474(b))."""

    block: RinBlock
    reason: str
    category: str | None


class RetiredYears(MutableMapping[int, list[AppliedRetirement]], ABC):
    """Compliance year → the retirements applied to it, which takes a new retirement without
    reading the year's earlier ones: a store's years (ledger/infrastructure/transcodings.py)
    keep those undecoded, so replaying or deciding a retirement costs what it adds, not the
    party's history of retirements for the year (§80.1427, §80.1474(b))."""

    @abstractmethod
    def add(self, year: int, retirements: list[AppliedRetirement]) -> None:
        """`retirements` applied to `year` after those already applied to it."""


@dataclass
class UnblendedYear:
    """A year's separations while the fuel is unblended (§80.1429(b)(1), (b)(10)), per D code:
    of RINs the party generated itself ((b)(7)) and of all ((b)(9))."""

    own: dict[int, int] = field(default_factory=dict)
    counted: dict[int, int] = field(default_factory=dict)


@dataclass
class PartyFacts:
    """Everything a rule reads from the party's history, beyond its holdings and fuel."""

    #: vintage → batch number → the batch-RIN as generated (§80.1425(e), §80.1431(a)); a
    #: mapping, so that a store may hand over its batches undecoded until one is read
    batches: dict[int, MutableMapping[str, RinBlock]] = field(default_factory=dict)
    #: standardized gallons produced per year, with RINs or without (§80.1426(c)(2))
    produced: dict[int, Decimal] = field(default_factory=dict)
    #: fuel → the first day RINs were generated for it (§80.1426(c)(4)-(c)(6))
    fuels: dict[str, date] = field(default_factory=dict)
    #: facility → the year of its first gallon (§80.1426(c)(3)(i))
    first_year: dict[str, int] = field(default_factory=dict)
    delayed: DelayedFacts = field(default_factory=DelayedFacts)
    #: K=2 blocks separated under §80.1429(b)(10), retired only as replacements (§80.1474)
    replacement: list[RinBlock] = field(default_factory=list)
    reports: dict[int, ReportedYear] = field(default_factory=dict)
    #: compliance year → what was retired and applied to it (§80.1427, §80.1474(b)); a mapping,
    #: so that a store may hand over the years undecoded until one is read
    applied: MutableMapping[int, list[AppliedRetirement]] = field(default_factory=dict)
    #: year → separations while unblended (§80.1429(b)(7), (b)(9))
    unblended: dict[int, UnblendedYear] = field(default_factory=dict)
    #: command id → the date it was reversed (EMTS unretire, remedial trade; §80.1452(d)): the
    #: retirements and the trades this party gave RINs in that a reversal compensated
    reversed: dict[str, date] = field(default_factory=dict)

    def fuels_by(self, on: date) -> set[str]:
        """The fuels RINs were generated for on or before `on`."""
        return {fuel for fuel, first in self.fuels.items() if first <= on}

    def generated_block(self, batch_id: BatchId) -> RinBlock | None:
        """The whole batch-RIN as generated (serials 1..N), or None if no such batch."""
        return self.batches.get(batch_id.vintage, {}).get(batch_id.batch)

    def add_applied(self, year: int, retirements: list[AppliedRetirement]) -> None:
        """Retirements applied to `year`'s RVOs (§80.1427, §80.1474(b)), added unread to
        years loaded from a store."""
        if isinstance(self.applied, RetiredYears):
            self.applied.add(year, retirements)
        else:
            self.applied.setdefault(year, []).extend(retirements)

    def produce(self, year: int, volume: Decimal) -> None:
        self.produced[year] = self.produced.get(year, Decimal(0)) + volume

    def first_gallon(self, facility: str, year: int) -> None:
        self.first_year[facility] = min(year, self.first_year.get(facility, year))
