"""Compliance with the four RVOs by retired RINs (§80.1427), and deficit carryover (§80.1427(b)).

Two halves: the checks made when a RIN is retired for compliance (who retires, for which year,
K=2, vintage, D7 designation), which refuse; and the year-end position per obligation, which
reports and never refuses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from decimal import ROUND_FLOOR, Decimal
from enum import StrEnum

from ledger.domain.emts import RetirementWord
from ledger.rules.catalogue import Rule
from ledger.rules.s1407_obligations import Category
from ledger.rules.s1425_rin import D_CODES, RIN_D

CMP_K2 = Rule(
    "CMP-K2",
    "§80.1427(a)(8)",
    "only separated RINs (K=2) may be retired for compliance",
)
CMP_VINTAGE = Rule(
    "CMP-VINTAGE",
    "§80.1427(a)(6)(i)",
    "a RIN counts only for the compliance year it was generated in or the next (2008 and 2009 "
    "D4 RINs also for 2010 biomass-based diesel, (a)(7)); older RINs are expired (§80.1428(c))",
)
CMP_D7_DESIGNATION = Rule(
    "CMP-D7-DESIGNATION",
    "§80.1427(a)(3)(ii)",
    "a D7 RIN retired for compliance is designated to CB or BBD, never both; "
    "no other D code takes a designation",
)
CMP_BBD_2010_REDUCTION = Rule(
    "CMP-BBD-2010-REDUCTION",
    "§80.1427(a)(7)(i)",
    "only RVO_BBD,2010 may be reduced by the 2008 and 2009 RINs used for 2009; a report for "
    "another year takes no such reduction",
)

RETIRE_YEAR = Rule(
    "RETIRE-YEAR", "§80.1427(a)(1)",
    "a compliance retirement names the compliance year it is applied to; other reasons do not",
)
RETIRE_OBLIGATED = Rule(
    "RETIRE-OBLIGATED", "§80.1427(a)(1)",
    "only an obligated party (or an exporter for its ERVOs, (c)(1)) retires RINs for compliance",
)
RULES = (
    CMP_K2, CMP_VINTAGE, CMP_D7_DESIGNATION, CMP_BBD_2010_REDUCTION, RETIRE_YEAR,
    RETIRE_OBLIGATED,
)

# §80.1427(a)(2)(i)-(iv): the D codes valid for each RVO.
_VALID_D_CODES: dict[Category, frozenset[int]] = {
    Category.CB: frozenset({3, 7}),
    Category.BBD: frozenset({4, 7}),
    Category.AB: frozenset({3, 4, 5, 7}),
    Category.RF: frozenset({3, 4, 5, 6, 7}),
}
# §80.1427(a)(7): 2008 and 2009 RINs count toward the 2010 biomass-based diesel RVO. Those were
# RFS1 RINs with D code 2 and RR 15, 16 or 17; this ledger admits only D codes 3-7, so it accepts
# them as D4 RINs and as nothing else.
_BBD_2010 = 2010
_BBD_2010_EARLY_VINTAGES = (2008, 2009)
_BBD_2010_EARLY_D_CODE = 4
_PRIOR_YEAR_SHARE = Decimal("0.20")  # §80.1427(a)(5), (a)(7)(iii) and (c)(3)
_BBD_2010_2008_SHARE = Decimal("0.087")  # §80.1427(a)(7)(iii)
_BBD_2010_CARRY_SHARE = Decimal("0.57")  # §80.1427(b)(1)(iii)


class Status(StrEnum):
    """A compliance position's outcome for one RVO and year."""

    COMPLIANT = "compliant"
    DEFICIT_CARRIED = "deficit_carried"  # a deficit §80.1427(b)(1) allows into year i + 1
    VIOLATION = "violation"


def valid_for(d_code: int, designated: str | None) -> frozenset[Category]:
    """The RVOs a RIN of `d_code` is valid for (§80.1427(a)(2)); a D7 RIN counts toward the one of
    CB or BBD it is `designated` to, never both (§80.1427(a)(3)(ii)).

    A RIN counts toward every RVO it is valid for (§80.1427(a)(3)(i)).
    """
    RIN_D.check(d_code in D_CODES, f"D must be 3-7, got {d_code}", "d_code")
    if d_code == 7:
        CMP_D7_DESIGNATION.check(
            designated in (Category.CB, Category.BBD),
            f"a D7 RIN must be designated to CB or BBD, got {designated!r}",
            "category",
        )
    else:
        CMP_D7_DESIGNATION.check(
            designated is None,
            f"only D7 RINs take a CB/BBD designation; this is a D{d_code} RIN "
            f"designated {designated!r}",
            "category",
        )
    valid = {category for category, codes in _VALID_D_CODES.items() if d_code in codes}
    if d_code == 7:
        valid.discard(Category.BBD if designated == Category.CB else Category.CB)
    return frozenset(valid)


def check_compliance_retirement(
    k: int, vintage: int, d_code: int, compliance_year: int, category: str | None
) -> None:
    """Refuse a RIN that may not be retired for `compliance_year`: K must be 2 (§80.1427(a)(8)),
    the D7 designation must hold (§80.1427(a)(3)(ii)) and the vintage must be i or i−1
    (§80.1427(a)(6)(i)), or 2008-2009 for a D4 RIN retired for 2010 (§80.1427(a)(7)).

    The 2010 biomass-based diesel equation admits 2008 and 2009 RINs (§80.1427(a)(7)(ii)).
    """
    CMP_K2.check(k == 2, f"K is {k}; only separated RINs (K=2) are retired for compliance", "k")
    valid_for(d_code, category)
    CMP_VINTAGE.check(
        vintage <= compliance_year,
        f"a {vintage} RIN cannot count for compliance year {compliance_year}, before it was made",
        "vintage",
    )
    early_bbd = (
        compliance_year == _BBD_2010
        and vintage in _BBD_2010_EARLY_VINTAGES
        and d_code == _BBD_2010_EARLY_D_CODE
    )
    CMP_VINTAGE.check(
        vintage >= compliance_year - 1 or early_bbd,
        f"a {vintage} RIN is expired for compliance year {compliance_year} (§80.1428(c)); "
        f"only {compliance_year - 1} and {compliance_year} RINs count",
        "vintage",
    )


def check_bbd_2010_reduction(year: int, reduction: int) -> None:
    """§80.1427(a)(7)(i) reduces the 2010 biomass-based diesel RVO only: a reduction stated for
    another year is refused rather than silently left out of its positions."""
    CMP_BBD_2010_REDUCTION.check(
        reduction == 0 or year == _BBD_2010,
        f"bbd_2010_reduction of {reduction:,} is for RVO_BBD,2010 only, not the {year} RVO",
        "bbd_2010_reduction",
    )


#: reasons that apply RINs to a compliance year (80 compliance, 110/120 remedial)
YEAR_REASONS = frozenset({
    RetirementWord.COMPLIANCE, RetirementWord.REMEDIAL_INVALID, RetirementWord.REMEDIAL_COMPLIANCE,
})


def check_retirement_year(reason: str, compliance_year: int | None, category: str | None) -> None:
    """A compliance retirement names the year it is applied to, and a retirement for a reason
    that applies RINs to no year names none (§80.1427(a)(1))."""
    if reason == RetirementWord.COMPLIANCE:
        RETIRE_YEAR.check(
            compliance_year is not None, "retirement for compliance needs compliance_year",
            "compliance_year",
        )
    elif reason not in YEAR_REASONS:
        RETIRE_YEAR.check(
            compliance_year is None and category is None,
            f"a retirement for {reason} takes no compliance_year or category",
            "compliance_year" if compliance_year is not None else "category",
        )


def check_retirer(party: str, roles: list[str]) -> None:
    """Compliance retirements meet an obligated party's RVOs (§80.1427(a)(1)) or an exporter's ERVOs
    (§80.1427(c)(1)).
    """
    RETIRE_OBLIGATED.check(
        bool({"obligated_party", "exporter"} & set(roles)),
        f"party {party} is registered as {', '.join(roles)}, not as an obligated party or exporter",
        "party",
    )


@dataclass(frozen=True)
class Retirement:
    """Gallon-RINs retired for one compliance year, as counted in its positions. Constructing one
    checks the D code and D7 designation, so positions never meet an invalid one."""

    d_code: int
    vintage: int
    gallon_rins: int
    category: str | None

    def __post_init__(self) -> None:
        valid_for(self.d_code, self.category)

    @property
    def counts_toward(self) -> frozenset[Category]:
        """The RVOs these gallon-RINs are valid for (§80.1427(a)(2), (a)(3))."""
        return valid_for(self.d_code, self.category)


@dataclass(frozen=True)
class YearReport:
    """The obligation report in force for a year: its RVOs before any carried deficit
    (§80.1407(a)), the compliance approach ((b)(1)(iv)) and the (a)(7)(i) 2010 BBD reduction."""

    rvo: Mapping[Category, int]
    approach: str | None = None
    bbd_2010_reduction: int = 0


@dataclass(frozen=True)
class CompliancePosition:
    """One party's position on one RVO for one year, the report of `rin compliance`."""

    party: str
    year: int
    category: str
    rvo: int  # including any deficit carried in
    deficit_carried_in: int
    current_year_rins: int
    prior_year_rins: int  # retired
    prior_year_applied: int  # after the 20 % cap
    applied: int
    deficit: int
    status: str


def compliance_positions(
    party: str,
    year: int,
    base_rvo: dict[Category, int],
    retirements: list[Retirement],
    previous: dict[Category, CompliancePosition] | None,
    approach: str | None = None,
    previous_approach: str | None = None,
    bbd_2010_reduction: int = 0,
    carry: bool = True,
) -> dict[Category, CompliancePosition]:
    """Year i's position on each RVO (§80.1427(a)(1), deficits (b)); a report, never a refusal.

    `base_rvo` is `STD × (GV + DV)` (§80.1407); a deficit the `previous` year carried is added.
    `retirements` are those made for year i. Exporters' ERVOs (§80.1427(c)) use this same
    function: (c)(2) applies (a)(2), (3), (6) and (8), and the (c)(3) 20 % prior-year cap is the
    (a)(5) computation. `bbd_2010_reduction` is the (a)(7)(i) reduction of RVO_BBD,2010.
    `carry` is False for an exporter's ERVOs: (c)(2) does not apply (b), whose
    carryover (b)(1) is an obligated party's, and §80.1430(f) wants each ERVO met within 30 days
    of the export, so an ERVO shortfall is a violation and nothing is carried.

    Exporters: the ERVOs of §80.1427(c)(1), the checks §80.1427(c)(2) applies, the 20 % cap of
    §80.1427(c)(3).
    """
    changed_approach = (
        approach is not None and previous_approach is not None and approach != previous_approach
    )
    earlier = previous or {}
    positions = {
        category: _position(
            party,
            year,
            category,
            base_rvo.get(category, 0),
            [r for r in retirements if category in r.counts_toward],
            earlier.get(category),
            changed_approach,
            bbd_2010_reduction,
        )
        for category in Category
    }
    if carry:
        return positions
    return {
        category: replace(p, status=Status.VIOLATION) if p.status == Status.DEFICIT_CARRIED else p
        for category, p in positions.items()
    }


def carries_deficits(roles: Iterable[str]) -> bool:
    """Whether a party's shortfall may be carried as a deficit (§80.1427(b)(1)): an obligated
    party's may; an exporter's that is not also an obligated party is an ERVO shortfall
    (§80.1427(c)(2), §80.1430(f)). A party with both roles reports one set of RVOs, which the
    ledger treats as an obligated party's."""
    return "obligated_party" in roles


def chain_positions(
    party: str,
    reports: Mapping[int, YearReport],
    retired: Mapping[int, list[Retirement]],
    last: int | None = None,
    carry: bool = True,
) -> dict[int, dict[Category, CompliancePosition]]:
    """Each year's positions from the first reported year to `last` (default: the last year with
    a report or a retirement, and the year after it if that year carries a deficit into it),
    each year's carried deficit part of the next year's RVO (§80.1407(a), §80.1427(b)). A year
    without a report has base RVOs of 0: under §80.1427(b)(1)(ii) a party that carries D_i into
    year i + 1 must meet RVO_i+1, which includes D_i, whether or not it reports year i + 1.
    `carry` is `carries_deficits` of the party's roles."""
    if not reports:
        return {}
    end = max([*reports, *retired]) if last is None else last
    out: dict[int, dict[Category, CompliancePosition]] = {}
    previous: dict[Category, CompliancePosition] | None = None
    previous_approach: str | None = None
    year = min(reports)
    while year <= end:
        report = reports.get(year, YearReport({}))
        previous = out[year] = compliance_positions(
            party, year, dict(report.rvo), retired.get(year, []), previous, report.approach,
            previous_approach, report.bbd_2010_reduction, carry,
        )
        previous_approach = report.approach or previous_approach
        if last is None and year == end and any(
            p.status == Status.DEFICIT_CARRIED for p in previous.values()
        ):
            end += 1
        year += 1
    return out


def _position(
    party: str,
    year: int,
    category: Category,
    base: int,
    valid: list[Retirement],
    previous: CompliancePosition | None,
    changed_approach: bool,
    bbd_2010_reduction: int,
) -> CompliancePosition:
    """One RVO's position from the retirements valid for it.

    For 2010 BBD, 2008 RINs count up to 8.7 % and 2008 + 2009 RINs up to 20 % (§80.1427(a)(7)(iii)).
    """
    # §80.1407(a) adds D_i−1 only when the previous year carried it (§80.1427(b)(1)).
    carried_in = (
        previous.deficit
        if previous is not None and previous.status == Status.DEFICIT_CARRIED
        else 0
    )
    bbd_2010 = year == _BBD_2010 and category == Category.BBD
    # §80.1427(a)(7)(i): RVO_BBD,2010 may be reduced; a reduction larger than it leaves 0.
    reduction = min(base, max(0, bbd_2010_reduction)) if bbd_2010 else 0
    rvo = base - reduction + carried_in

    def retired(vintage: int) -> int:
        return sum(r.gallon_rins for r in valid if r.vintage == vintage)

    # Only vintages i and i−1 (and 2008 for 2010 BBD) are summed: older RINs are expired
    # (§80.1428(c)) and never count, even if one slipped past retirement.
    current = retired(year)
    if bbd_2010:
        # §80.1427(a)(7)(ii)-(iii): 2008 ≤ 0.087 × RVO and 2008 + 2009 ≤ 0.20 × RVO.
        in_2008, in_2009 = (retired(vintage) for vintage in _BBD_2010_EARLY_VINTAGES)
        prior = in_2008 + in_2009
        prior_applied = min(
            min(in_2008, _floor_share(_BBD_2010_2008_SHARE, rvo)) + in_2009,
            _floor_share(_PRIOR_YEAR_SHARE, rvo),
        )
    else:
        prior = retired(year - 1)
        prior_applied = min(prior, _floor_share(_PRIOR_YEAR_SHARE, rvo))  # §80.1427(a)(5)
    # §80.1427(a)(1): Σ_i + Σ_i−1 = RVO_i, so no more than the RVO is applied: the prior-year
    # RINs counted (at most 20 % of it, so never more than it), then current-year RINs up to the
    # rest. The excess retired for year i counts for no other year ((a)(6)(ii)), so
    # D_i = RVO_i − applied (§80.1427(b)(2)) is never negative.
    applied = prior_applied + min(current, rvo - prior_applied)
    deficit = rvo - applied
    return CompliancePosition(
        party=party,
        year=year,
        category=category,
        rvo=rvo,
        deficit_carried_in=carried_in,
        current_year_rins=current,
        prior_year_rins=prior,
        prior_year_applied=prior_applied,
        applied=applied,
        deficit=deficit,
        status=_status(deficit, carried_in, changed_approach, bbd_2010, rvo + reduction),
    )


def _status(
    deficit: int, carried_in: int, changed_approach: bool, bbd_2010: bool, unadjusted_rvo: int
) -> Status:
    """Whether year i complies, carries its deficit under §80.1427(b)(1), or is in violation.

    A deficit is carried only if none was carried in (§80.1427(b)(1)(i)), year i + 1 then meets its
    RVO (§80.1427(b)(1)(ii)), the 2010 BBD deficit is at most 57 % (§80.1427(b)(1)(iii)), and the
    approach stays the same (§80.1427(b)(1)(iv)).
    """
    if carried_in and changed_approach:
        # (b)(1)(iv) binds the year a deficit is carried into: only then are both approaches
        # known. A deficit carried in under a changed approach was not allowed to be carried, so
        # the year is a violation even if it meets its own RVO.
        return Status.VIOLATION
    if deficit == 0:
        return Status.COMPLIANT
    if carried_in:
        return Status.VIOLATION  # (b)(1)(i)-(ii): no deficit two years running
    if bbd_2010 and deficit > _BBD_2010_CARRY_SHARE * unadjusted_rvo:
        return Status.VIOLATION  # (b)(1)(iii): at most 57 % of RVO_BBD,2010 before (a)(7)(i)
    return Status.DEFICIT_CARRIED


def _floor_share(share: Decimal, rvo: int) -> int:
    """`share × rvo` rounded down to whole gallon-RINs: a cap never rounds up past its share."""
    return int((share * rvo).to_integral_value(rounding=ROUND_FLOOR))
