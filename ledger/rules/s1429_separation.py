"""Separating RINs from fuel (§80.1429): only under one of (b)(1)-(b)(10), each with its conditions.

Separation turns K=1 into K=2 (§80.1429(c)). Volumes are the fuel blended, exported or used;
for those reasons that fuel leaves the party's unblended renewable inventory. Checks follow the
paragraph a reason rests on, not its word or code, and each refusal cites that paragraph. The
ledger cannot see designation and use ((b)(4), (b)(5)) or small refinery exemptions ((b)(8)(i)):
the reason named and the `small_refiner` role stand for them. The reason itself must name one of
the paragraphs (`separation_reason`), and RINs separated under (b)(10) are kept for replacing
invalid RINs (`check_replacement_use`). The (b)(7) and (b)(9) limits are computed from the
facts a party's events keep (`separation_year`, `check_separation_limits`): the RVOs in force
including any deficit carried in (§80.1407(a), §80.1427(b)), the basis its report states, and
the gallon-RINs it has already separated that each limit counts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from ledger.domain.emts import (
    SEPARATION_REASONS,
    RetirementWord,
    SeparationReason,
    SeparationWord,
    find_reason,
    unknown,
)
from ledger.domain.party_facts import PartyFacts
from ledger.domain.rin import RinBlock
from ledger.rules.catalogue import Rule
from ledger.rules.s1407_obligations import Category
from ledger.rules.s1427_compliance import Retirement, YearReport, chain_positions
from ledger.rules.s1428_rins import MAX_PER_GALLON

EMTS_SEPARATION_REASON = Rule(
    "EMTS-SEPARATION-REASON",
    "§80.1429(b)",
    "a RIN is separated only under one of §80.1429(b)(1)-(b)(10), named by a known word or "
    "EMTS separation reason code",
)
SEP_ASSIGNED_ONLY = Rule(
    "SEP-ASSIGNED-ONLY", "§80.1429(c)", "only assigned (K=1) RINs are separated; K goes 1 → 2"
)
SEP_OBLIGATED = Rule(
    "SEP-OBLIGATED", "§80.1429(b)(1)", "only an obligated party separates as obligated party"
)
SEP_BLEND_PER_GALLON = Rule(
    "SEP-BLEND-PER-GALLON", "§80.1429(b)(2)",
    "a separation on blending names the volume blended; at most 2.5 RINs per gallon of it",
)
SEP_EXPORT_PER_GALLON = Rule(
    "SEP-EXPORT-PER-GALLON", "§80.1429(b)(3)",
    "a separation on export names the volume exported; at most 2.5 RINs per gallon of it",
)
SEP_BIOGAS = Rule(
    "SEP-BIOGAS", "§80.1429(b)(5)",
    "the biogas/electricity reason applies only to RINs generated for biogas or electricity, "
    "and names the volume designated and used",
)
SEP_BIODIESEL_80 = Rule(
    "SEP-BIODIESEL-80", "§80.1429(b)(6)",
    "biodiesel RINs separate on blending only at 80 volume per cent biodiesel or less",
)
SEP_OBLIGATED_CAP = Rule(
    "SEP-OBLIGATED-CAP", "§80.1429(b)(7)",
    "an obligated party separating RINs it generated itself for fuel it has not blended "
    "((b)(1), (b)(10)) stays within its per-D-code annual limit from its RVOs, deficit included",
)
SEP_IMPORTER_CAP = Rule(
    "SEP-IMPORTER-CAP", "§80.1429(b)(9)",
    "a party whose RVO arises solely from importing, adding blendstocks or §80.1408 keeps its "
    "separations other than under (b)(2)-(5) and (b)(8) within the per-D-code annual limit",
)
SEP_SMALL_REFINER = Rule(
    "SEP-SMALL-REFINER", "§80.1429(b)(8)",
    "a small refiner that is not otherwise obligated separates only RINs of fuel it blends or "
    "uses; the small-refiner reason is for such parties only",
)
SEP_OBLIGATED_PER_GALLON = Rule(
    "SEP-OBLIGATED-PER-GALLON", "§80.1429(b)(1)",
    "an obligated party separates only RINs assigned to the volume it owns, which it names: at "
    "most 2.5 per gallon of it (§80.1428(a)(4))",
)
SEP_NEAT_PER_GALLON = Rule(
    "SEP-NEAT-PER-GALLON", "§80.1429(b)(4)",
    "RINs separated for neat fuel designated and used as such are those assigned to the volume "
    "named: at most 2.5 per gallon",
)
SEP_SMALL_REFINER_PER_GALLON = Rule(
    "SEP-SMALL-REFINER-PER-GALLON", "§80.1429(b)(8)",
    "a small refiner separates only RINs assigned to the volume it blends or uses, which it "
    "names: at most 2.5 per gallon",
)
SEP_REPLACEMENT = Rule(
    "SEP-REPLACEMENT", "§80.1429(b)(10)",
    "a producer separates for replacement only RINs it generated itself",
)
SEP_REPLACEMENT_ONLY = Rule(
    "SEP-REPLACEMENT-ONLY", "§80.1429(b)(10)",
    "RINs separated under (b)(10) are only retired to replace invalid RINs (§80.1474, EMTS "
    "reason 110): they are never transferred, nor retired for another reason",
)
RULES = (
    EMTS_SEPARATION_REASON, SEP_ASSIGNED_ONLY, SEP_OBLIGATED, SEP_BLEND_PER_GALLON,
    SEP_EXPORT_PER_GALLON, SEP_BIOGAS, SEP_BIODIESEL_80, SEP_OBLIGATED_CAP, SEP_IMPORTER_CAP,
    SEP_SMALL_REFINER, SEP_OBLIGATED_PER_GALLON, SEP_NEAT_PER_GALLON,
    SEP_SMALL_REFINER_PER_GALLON, SEP_REPLACEMENT, SEP_REPLACEMENT_ONLY,
)
#: the retirement reason that replaces invalid RINs (§80.1474(b))
REPLACEMENT_RETIREMENT = RetirementWord.REMEDIAL_INVALID

#: reasons whose fuel leaves the party's unblended renewable inventory
FUEL_USING = frozenset({
    SeparationWord.BLENDING, SeparationWord.UPSTREAM_DELEGATION, SeparationWord.EXPORT,
    SeparationWord.NEAT_USE, SeparationWord.HEATING_OIL_JET, SeparationWord.NONROAD,
    SeparationWord.DESIGNATED_HEATING_OIL_JET, SeparationWord.BIOGAS_ELECTRICITY,
    SeparationWord.SMALL_REFINER,
})
NEEDS_VOLUME = FUEL_USING | {SeparationWord.OBLIGATED_PARTY}

B1, B2, B4, B5, B8, B10 = (f"§80.1429(b)({n})" for n in (1, 2, 4, 5, 8, 10))
#: the rule bounding the gallon-RINs by the volume named, per paragraph: (b)(2) and (b)(3) say
#: 2.5 per gallon; (b)(1), (b)(4) and (b)(8) separate the RINs assigned to the volume, and at most
#: 2.5 are assigned per gallon (§80.1428(a)(4)). (b)(5) biogas and electricity are not in gallons.
PER_GALLON = {
    B1: SEP_OBLIGATED_PER_GALLON, B2: SEP_BLEND_PER_GALLON, "§80.1429(b)(3)": SEP_EXPORT_PER_GALLON,
    B4: SEP_NEAT_PER_GALLON, B8: SEP_SMALL_REFINER_PER_GALLON,
}
#: the rule refusing a separation without the volume it rests on, per paragraph
VOLUME_RULES = {**PER_GALLON, B5: SEP_BIOGAS}
#: (b)(8): blending ((b)(2)) or use ((b)(4), (b)(5)), and its own reason
SMALL_REFINER_PARAGRAPHS = frozenset({B2, B4, B5, B8})
#: separations of RINs for fuel the party keeps unblended: those (b)(7) limits for own RINs,
#: and those (b)(9) does not except ((b)(2)-(5) and (b)(8) are excepted)
UNBLENDED = frozenset({B1, B10})
#: the fuels of §80.1426(f) RINs that (b)(5) separates
BIOGAS_FUELS = frozenset({"biogas", "electricity"})


def separation_reason(value: str | int) -> SeparationReason:
    """The separation reason named by a word, an EMTS code, or the code as text; refused unless
    it is one of §80.1429(b)(1)-(b)(10) or delayed RINs (§80.1429(b)).

    No assigned RIN is separated but under §80.1429 (§80.1428(a)(2)).
    """
    return EMTS_SEPARATION_REASON.require(
        find_reason(SEPARATION_REASONS, value),
        unknown("separation", value, SEPARATION_REASONS),
        "reason",
    )


def read_for_fuels(reason: SeparationReason, given: object, fuels: set[str]) -> SeparationReason:
    """EMTS code 30 (designated and used without blending) names both (b)(4) and (b)(5); given as
    a code for RINs generated for biogas or electricity only, it rests on (b)(5)."""
    if reason.code == 30 and given != reason.word and fuels and fuels <= BIOGAS_FUELS:
        return next(r for r in SEPARATION_REASONS if r.paragraph == B5)
    return reason


def cap_for(d_code: int, rvo: dict[str, int]) -> int:
    """§80.1429(b)(7)(i)-(v) and (b)(9)(i)-(v): the annual limit per D code from the RVOs. Where
    the (iv) or (v) difference is negative (RVO_AB < RVO_CB + RVO_BBD) no RIN of that D code may be
    separated, so the limit is 0 and no error reports a negative number of gallon-RINs."""
    cb, bbd, ab, rf = (rvo.get(c, 0) for c in ("CB", "BBD", "AB", "RF"))
    return max(0, {3: cb, 4: bbd, 7: max(bbd, cb), 5: ab - cb - bbd, 6: rf - ab}[d_code])


def check_separation(
    reason: SeparationReason,
    *,
    k: int,
    gallon_rins: int,
    volume: Decimal | None,
    blend_percent: Decimal | None,
    fuels: set[str],
    roles: list[str],
) -> None:
    """The conditions of the one (b) paragraph the reason rests on, by paragraph, so that a word
    and an EMTS code naming the same paragraph meet the same checks.

    By paragraph: the volume §80.1429(b); blending at most 2.5 a gallon §80.1429(b)(2); export
    §80.1429(b)(3); neat use §80.1429(b)(4); biogas or electricity §80.1429(b)(5); biodiesel at 80 %
    or less §80.1429(b)(6), not for obligated parties (§80.1429(b)(6)(i)) nor neat use
    (§80.1429(b)(6)(ii)); small refiners §80.1429(b)(8), whatever the year (§80.1429(b)(8)(i)
    exemptions are not recorded); K=1 only, becoming 2 (§80.1429(c)).
    """
    word, paragraph = reason.word, reason.paragraph
    EMTS_SEPARATION_REASON.check(
        paragraph.startswith("§80.1429(b)"),
        f"{reason.name} (EMTS {reason.code}) are separated only as they are generated "
        f"({paragraph}); a separation rests on one of §80.1429(b)(1)-(b)(10)",
        "reason",
    )
    SEP_ASSIGNED_ONLY.check(k == 1, f"these RINs have K={k}; only K=1 RINs are separated", "rins")
    if paragraph in VOLUME_RULES:
        check_volume_named(VOLUME_RULES[paragraph], word, volume)
    if paragraph == B1:
        SEP_OBLIGATED.check(
            "obligated_party" in roles,
            f"the party is registered as {', '.join(roles)}, not as an obligated party",
            "reason",
        )
    if "small_refiner" in roles and "obligated_party" not in roles:
        SEP_SMALL_REFINER.check(
            paragraph in SMALL_REFINER_PARAGRAPHS,
            "a small refiner separates only RINs of fuel it blends or uses as transportation "
            f"fuel, heating oil or jet fuel, not for {word}",
            "reason",
        )
    per_gallon = PER_GALLON.get(paragraph)
    if per_gallon is not None and volume is not None:
        check_per_gallon(per_gallon, gallon_rins, volume)
    if paragraph == B5:
        SEP_BIOGAS.check(
            fuels <= BIOGAS_FUELS,
            f"these RINs were generated for {', '.join(sorted(fuels))}", "rins",
        )
    if paragraph == B2 and "biodiesel" in fuels and (
        "obligated_party" not in roles  # (b)(6)(i): not for biodiesel owned by obligated parties
    ):
        SEP_BIODIESEL_80.check(
            blend_percent is not None,
            "biodiesel RINs separated on blending need blend_percent", "blend_percent",
        )
        assert blend_percent is not None
        SEP_BIODIESEL_80.check(
            blend_percent <= 80,
            f"biodiesel blended at {blend_percent}% is above 80 volume per cent", "blend_percent",
        )
    if word == SeparationWord.SMALL_REFINER:
        SEP_SMALL_REFINER.check(
            "small_refiner" in roles and "obligated_party" not in roles,
            f"the party is registered as {', '.join(roles)}", "reason",
        )


def check_volume_named(violated: Rule, word: str, volume: Decimal | None) -> None:
    """The volume of fuel owned, blended, exported or used that the separation rests on, under the
    paragraph's rule (`VOLUME_RULES`: §80.1429(b)(1)-(b)(5), §80.1429(b)(8))."""
    violated.check(volume is not None, f"separation for {word} needs the volume of fuel", "volume")


def check_per_gallon(violated: Rule, gallon_rins: int, volume: Decimal) -> None:
    """At most 2.5 gallon-RINs separated per gallon of the volume named, under `violated`: the
    paragraph's rule (`PER_GALLON`: §80.1429(b)(1)-(b)(4), §80.1429(b)(8); §80.1428(a)(4))."""
    violated.check(
        gallon_rins <= MAX_PER_GALLON * volume,
        f"{gallon_rins:,} gallon-RINs separated for {volume:,} gallons is more than 2.5 per gallon",
        "volume",
    )


def is_b9_party(roles: list[str], basis: list[str] | None) -> bool:
    """Whether the party's non-export RVO arises solely from importing gasoline or diesel, adding
    blendstocks, or §80.1408 (§80.1429(b)(9)). The ledger cannot see where a party's gasoline
    and diesel came from, so the year's obligation report states it (`basis`); where it does not,
    an obligated party registered as importer or blender and not as refiner is taken as one."""
    if basis:
        return "refining" not in basis
    return (
        "obligated_party" in roles and "refiner" not in roles
        and bool({"importer", "blender"} & set(roles))
    )


def check_limit(
    capped: Rule, *, d_code: int, year: int, gallon_rins: int, already: int,
    rvo: dict[str, int] | None,
) -> None:
    """§80.1429(b)(7) or §80.1429(b)(9): `already` + `gallon_rins` of `d_code` separated in
    `year` within the limit from `rvo`, the year's RVOs including any deficit carried in
    (§80.1407(a))."""
    capped.check(
        rvo is not None, f"no RVO reported for {year}, so the D{d_code} limit is 0", "reason"
    )
    assert rvo is not None
    limit = cap_for(d_code, rvo)
    capped.check(
        already + gallon_rins <= limit,
        f"{already:,} + {gallon_rins:,} D{d_code} gallon-RINs separated in {year} exceeds the "
        f"limit of {limit:,}",
        "rins",
    )


def check_replacement(generator: str, party: str) -> None:
    """A producer separates for replacement only RINs it generated (§80.1429(b)(10))."""
    SEP_REPLACEMENT.check(
        generator == party, f"these RINs were generated by {generator}, not by {party}", "rins"
    )


def check_replacement_use(reserved: list[RinBlock], blocks: list[RinBlock], use: str) -> None:
    """§80.1429(b)(10): refuse `use` (a transfer, or a retirement for another reason) of any
    serial of `blocks` that the party separated under (b)(10) (`reserved`)."""
    for block in blocks:
        for held in reserved:
            low, high = max(block.start, held.start), min(block.end, held.end)
            SEP_REPLACEMENT_ONLY.check(
                held.key.batch_id != block.key.batch_id or low > high,
                f"{block.code}: serials {low:,}-{high:,} of batch {block.key.batch} were "
                f"separated under (b)(10) to replace invalid RINs; they are retired for that "
                f"replacement (reason {REPLACEMENT_RETIREMENT}, §80.1474), not {use}",
                "rins",
            )


#: retirements applied to a year's RVOs: compliance, and replacements of invalid RINs retired
#: for compliance (EMTS 110, §80.1474(b)); the same the compliance positions count
APPLIED_REASONS = (RetirementWord.COMPLIANCE, REPLACEMENT_RETIREMENT)


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
    limits = [(SEP_OBLIGATED_CAP, own, known.own)]
    if is_b9_party(roles, known.basis):
        limits.append((SEP_IMPORTER_CAP, every, known.counted))
    for capped, separating, already in limits:
        for d_code, gallon_rins in sorted(separating.items()):
            check_limit(
                capped, d_code=d_code, year=year, gallon_rins=gallon_rins,
                already=already.get(d_code, 0), rvo=known.rvo,
            )
