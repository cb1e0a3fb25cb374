"""What a party's §80.1429(b)(7) and (b)(9) limits for a year are computed from, read from the
facts its events keep (ledger/domain/party_facts.py): the RVOs in force including any deficit
carried in (§80.1407(a), §80.1427(b)), the basis its report states, and the gallon-RINs it has
already separated that each limit counts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from ledger.domain.party_facts import PartyFacts
from ledger.domain.rin import RinBlock
from ledger.rules import s1429_separation as sep
from ledger.rules.s1407_obligations import Category
from ledger.rules.s1427_compliance import Retirement, YearReport, chain_positions

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
    facts: PartyFacts, party: str, year: int, invalid_in: Callable[[RinBlock], int]
) -> SeparationYear:
    """`party`'s `year` from its facts; `invalid_in` counts a retired block's gallon-RINs found
    invalid, which are not applied to any RVO (§80.1431(b)(2))."""
    reports = {
        y: YearReport({Category(c): n for c, n in r.rvo.items()}, r.approach,
                      r.bbd_2010_reduction)
        for y, r in facts.reports.items()
    }
    retired: dict[int, list[Retirement]] = defaultdict(list)
    for compliance_year, applied in facts.applied.items():
        if compliance_year < year:
            retired[compliance_year].extend(
                Retirement(a.block.key.d_code, a.block.key.vintage,
                           a.block.gallon_rins - invalid_in(a.block), a.category)
                for a in applied
            )
    positions = chain_positions(party, reports, retired, last=year).get(year)
    carried = positions is not None and any(p.deficit_carried_in for p in positions.values())
    rvo = (
        {str(c): p.rvo for c, p in positions.items()}
        if positions is not None and (year in reports or carried) else None
    )
    report = facts.reports.get(year)
    separated = facts.unblended.get(year)
    return SeparationYear(
        rvo, report.basis if report is not None else None,
        dict(separated.own) if separated else {}, dict(separated.counted) if separated else {},
    )


def check_separation_limits(
    facts: PartyFacts, party: str, roles: list[str], year: int, blocks: list[RinBlock],
    invalid_in: Callable[[RinBlock], int],
) -> None:
    """§80.1429(b)(7) on the RINs the party generated itself, then (b)(9) on all, if it is a
    (b)(9) party; each per D code against the year's RVOs including the deficit carried in.

    The limits of §80.1429(b)(7) and §80.1429(b)(9).
    """
    known = separation_year(facts, party, year, invalid_in)
    own: dict[int, int] = {}
    every: dict[int, int] = {}
    for b in blocks:
        every[b.key.d_code] = every.get(b.key.d_code, 0) + b.gallon_rins
        if b.key.company == party:
            own[b.key.d_code] = own.get(b.key.d_code, 0) + b.gallon_rins
    limits = [(sep.SEP_OBLIGATED_CAP, own, known.own)]
    if sep.is_b9_party(roles, known.basis):
        limits.append((sep.SEP_IMPORTER_CAP, every, known.counted))
    for capped, separating, already in limits:
        for d_code, gallon_rins in sorted(separating.items()):
            sep.check_limit(
                capped, d_code=d_code, year=year, gallon_rins=gallon_rins,
                already=already.get(d_code, 0), rvo=known.rvo,
            )
