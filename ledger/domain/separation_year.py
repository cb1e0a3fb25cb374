"""What a party's §80.1429(b)(7) and (b)(9) limits for a year are computed from, read from its
own history: the RVOs in force including any deficit carried in (§80.1407(a), §80.1427(b)), the
basis its report states, and the gallon-RINs it has already separated that each limit counts.

Read from the party's events when an obligated party separates on (b)(1) or (b)(10), so that no
stored state or snapshot changes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ledger.domain.party import Party
from ledger.domain.rin import RinBlock
from ledger.rules.s1407_obligations import Category
from ledger.rules.s1427_compliance import Retirement, YearReport, chain_positions
from ledger.rules.s1429_separation import UNBLENDED

#: retirements applied to a year's RVOs: compliance, and replacements of invalid RINs retired
#: for compliance (EMTS 110, §80.1474(b)); the same the compliance positions count
APPLIED_REASONS = frozenset({"compliance", "remedial_invalid"})


@dataclass(frozen=True)
class SeparationYear:
    """One party's year as the separation limits see it."""

    rvo: dict[str, int] | None  # None: no report for the year and no deficit carried in
    basis: list[str] | None  # what the year's report says its RVO arises from
    own: dict[int, int]  # (b)(7): own RINs separated on (b)(1)/(b)(10), per D code
    counted: dict[int, int]  # (b)(9): every separation on (b)(1)/(b)(10), per D code


def separation_year(
    events: Iterable[Any], party: str, year: int, invalid_in: Callable[[RinBlock], int]
) -> SeparationYear:
    """`party`'s `year` from its events, oldest first; `invalid_in` counts a retired block's
    gallon-RINs found invalid, which are not applied to any RVO (§80.1431(b)(2))."""
    reports: dict[int, YearReport] = {}
    basis: list[str] | None = None
    retired: dict[int, list[Retirement]] = defaultdict(list)
    own: dict[int, int] = defaultdict(int)
    counted: dict[int, int] = defaultdict(int)
    for event in events:
        if isinstance(event, Party.ObligationReported):  # the latest report for a year wins
            reports[event.year] = YearReport(
                {Category(c): n for c, n in event.rvo.items()}, event.approach,
                event.bbd_2010_reduction,
            )
            if event.year == year:
                basis = event.basis
        elif (
            isinstance(event, Party.Retired) and event.reason in APPLIED_REASONS
            and event.compliance_year is not None and event.compliance_year < year
        ):
            retired[event.compliance_year].extend(
                Retirement(b.key.d_code, b.key.vintage, b.gallon_rins - invalid_in(b),
                           event.category)
                for b in event.rins
            )
        elif (
            isinstance(event, Party.Separated) and event.paragraph in UNBLENDED
            and event.effective_date.year == year
        ):
            for b in event.rins:
                counted[b.key.d_code] += b.gallon_rins
                if b.key.company == party:
                    own[b.key.d_code] += b.gallon_rins
    positions = chain_positions(party, reports, retired, last=year).get(year)
    carried = positions is not None and any(p.deficit_carried_in for p in positions.values())
    rvo = (
        {str(c): p.rvo for c, p in positions.items()}
        if positions is not None and (year in reports or carried) else None
    )
    return SeparationYear(rvo, basis, dict(own), dict(counted))
