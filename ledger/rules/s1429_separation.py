"""Separating RINs from fuel (§80.1429): only under one of (b)(1)-(b)(10), each with its conditions.

Separation turns K=1 into K=2 (§80.1429(c)). Volumes are the fuel blended, exported or used;
for those reasons that fuel leaves the party's unblended renewable inventory.
"""

from __future__ import annotations

from decimal import Decimal

from ledger.emts import SeparationReason
from ledger.rules.catalogue import rule
from ledger.rules.s1428_rins import MAX_PER_GALLON

SEP_ASSIGNED_ONLY = rule(
    "SEP-ASSIGNED-ONLY", "§80.1429(c)", "only assigned (K=1) RINs are separated; K goes 1 → 2"
)
SEP_VOLUME = rule(
    "SEP-VOLUME", "§80.1429(b)",
    "a separation on owning, blending, export or use names the volume of fuel it rests on",
)
SEP_OBLIGATED = rule(
    "SEP-OBLIGATED", "§80.1429(b)(1)", "only an obligated party separates as obligated party"
)
SEP_BLEND_PER_GALLON = rule(
    "SEP-BLEND-PER-GALLON", "§80.1429(b)(2)", "at most 2.5 RINs per gallon of blended fuel"
)
SEP_EXPORT_PER_GALLON = rule(
    "SEP-EXPORT-PER-GALLON", "§80.1429(b)(3)", "at most 2.5 RINs per gallon of exported fuel"
)
SEP_BIOGAS = rule(
    "SEP-BIOGAS", "§80.1429(b)(5)",
    "the biogas/electricity reason applies only to RINs generated for biogas or electricity",
)
SEP_BIODIESEL_80 = rule(
    "SEP-BIODIESEL-80", "§80.1429(b)(6)",
    "biodiesel RINs separate on blending only at 80 volume per cent biodiesel or less",
)
SEP_OBLIGATED_CAP = rule(
    "SEP-OBLIGATED-CAP", "§80.1429(b)(7)",
    "an obligated party separating RINs it generated for unblended fuel stays within its "
    "per-D-code annual limit from its RVOs",
)
SEP_IMPORTER_CAP = rule(
    "SEP-IMPORTER-CAP", "§80.1429(b)(9)",
    "an obligated importer (no refinery) separating as obligated party stays within the "
    "per-D-code annual limit from its RVOs",
)
SEP_SMALL_REFINER = rule(
    "SEP-SMALL-REFINER", "§80.1429(b)(8)",
    "the small-refiner reason is for registered small refiners that are not otherwise obligated",
)
SEP_REPLACEMENT = rule(
    "SEP-REPLACEMENT", "§80.1429(b)(10)",
    "a producer separates for replacement only RINs it generated itself",
)

#: reasons whose fuel leaves the party's unblended renewable inventory
FUEL_USING = frozenset({
    "blending", "upstream_delegation", "export", "neat_use", "heating_oil_jet", "nonroad",
    "designated_heating_oil_jet", "biogas_electricity", "small_refiner",
})
NEEDS_VOLUME = FUEL_USING | {"obligated_party"}


def cap_for(d_code: int, rvo: dict[str, int]) -> int:
    """§80.1429(b)(7)(i)-(v) and (b)(9)(i)-(v): the annual limit per D code from the RVOs.

    The same limits serve §80.1429(b)(9).
    """
    cb, bbd, ab, rf = (rvo.get(c, 0) for c in ("CB", "BBD", "AB", "RF"))
    return {3: cb, 4: bbd, 7: max(bbd, cb), 5: ab - cb - bbd, 6: rf - ab}[d_code]


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
    """The conditions of the one (b) paragraph the reason rests on.

    By reason: the volume §80.1429(b); obligated party §80.1429(b)(1); blending at most 2.5 a gallon
    §80.1429(b)(2), which also limits neat use §80.1429(b)(4) and small refiners §80.1429(b)(8);
    export §80.1429(b)(3); biogas or electricity §80.1429(b)(5); biodiesel at 80 % or less
    §80.1429(b)(6), not for obligated parties (§80.1429(b)(6)(i)) nor neat use (§80.1429(b)(6)(ii));
    K=1 only, becoming 2 (§80.1429(c)).
    """
    SEP_ASSIGNED_ONLY.check(k == 1, f"these RINs have K={k}; only K=1 RINs are separated", "rins")
    word = reason.word
    if word in NEEDS_VOLUME:
        SEP_VOLUME.check(
            volume is not None, f"separation for {word} needs the volume of fuel", "volume"
        )
    if word == "obligated_party":
        SEP_OBLIGATED.check(
            "obligated_party" in roles,
            f"the party is registered as {', '.join(roles)}, not as an obligated party",
            "reason",
        )
    per_gallon = {"export": SEP_EXPORT_PER_GALLON}.get(word, SEP_BLEND_PER_GALLON)
    if word in FUEL_USING and word not in ("biogas_electricity",):
        assert volume is not None
        per_gallon.check(
            gallon_rins <= MAX_PER_GALLON * volume,
            f"{gallon_rins:,} gallon-RINs separated for {volume:,} gallons is more than "
            "2.5 per gallon",
            "volume",
        )
    if word == "biogas_electricity":
        SEP_BIOGAS.check(
            fuels <= {"biogas", "electricity"},
            f"these RINs were generated for {', '.join(sorted(fuels))}", "rins",
        )
    if word in ("blending", "upstream_delegation") and "biodiesel" in fuels and (
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
    if word == "small_refiner":
        SEP_SMALL_REFINER.check(
            "small_refiner" in roles and "obligated_party" not in roles,
            f"the party is registered as {', '.join(roles)}", "reason",
        )


def check_obligated_cap(
    *, generated_by_self: bool, roles: list[str], d_code: int, year: int, gallon_rins: int,
    already: int, rvo: dict[str, int] | None,
) -> None:
    """(b)(7) for RINs the obligated party generated itself; (b)(9) for obligated importers.

    The limits of §80.1429(b)(7) and §80.1429(b)(9).
    """
    if generated_by_self:
        capped = SEP_OBLIGATED_CAP
    elif "importer" in roles and "refiner" not in roles:
        capped = SEP_IMPORTER_CAP
    else:
        return
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
